"""The constraint model: what a tiling must satisfy to fit a target, as Z3 and as arrays.

Each :class:`Constraint` is one predicate over the search variables, with a
tracking name, a sentence in words and (for capacities) the needed and the
available amount.  The same predicate object is

* turned into Z3 (``assert_and_track`` under its name) by :meth:`Model.solver`,
  for unsatisfiable cores and for checking single points, and
* evaluated over NumPy arrays of candidate points by :mod:`.enumerate`, which
  enumerates the finite space completely.

So the enumeration and the Z3 model cannot disagree: they read one list.

Predicates are small trees (:class:`Pred`) over integer terms; a term is
either an analysis :class:`~tiletune.analysis.expr.Expr` or a :class:`Term`
(the same shape, plus ``mod``/``pow``/``neg`` for ``tl.static_assert``
conditions).  Static asserts are parsed from their source text with
:mod:`ast` -- never evaluated -- and kept only when every name in them is a
variable or a known constant.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

import numpy as np

from ..analysis.expr import Expr, cdiv, const, emax, emin, product, sym
from ..analysis.expr import term_to_z3 as to_z3  # also takes Terms (neg, mod, pow)
from ..analysis.model import KernelSpec, Role
from .space import MULTIBUFFER, NUM_WARPS, Space, resolve_dtype

__all__ = [
    "Term",
    "Pred",
    "Constraint",
    "Model",
    "build_model",
    "evaluate",
    "evaluate_pred",
    "parse_condition",
    "term_str",
]

# ----- terms and predicates --------------------------------------------------------


@dataclass(frozen=True)
class Term:
    """An integer term with the operations :class:`Expr` lacks (``mod``, ``pow``, ``neg``)."""

    op: str
    args: tuple


TermLike = Union[Expr, Term]


@dataclass(frozen=True)
class Pred:
    """A predicate: ``cmp`` (``args = (op, a, b)``), ``and``/``or``/``not`` or ``bool``."""

    op: str
    args: tuple

    # constructors
    @staticmethod
    def cmp(op: str, a: TermLike, b: TermLike) -> "Pred":
        return Pred("cmp", (op, a, b))

    @staticmethod
    def le(a: TermLike, b: TermLike) -> "Pred":
        return Pred("cmp", ("<=", a, b))

    @staticmethod
    def ge(a: TermLike, b: TermLike) -> "Pred":
        return Pred("cmp", (">=", a, b))

    @staticmethod
    def any_of(*ps: "Pred") -> "Pred":
        return ps[0] if len(ps) == 1 else Pred("or", tuple(ps))

    @staticmethod
    def all_of(*ps: "Pred") -> "Pred":
        return ps[0] if len(ps) == 1 else Pred("and", tuple(ps))

    @staticmethod
    def isin(a: TermLike, values: Iterable[int]) -> "Pred":
        return Pred.any_of(*[Pred.cmp("==", a, const(int(v))) for v in values])

    @staticmethod
    def multiple_of(a: TermLike, m: int) -> "Pred":
        return Pred.cmp("==", Term("mod", (a, const(int(m)))), const(0))


def term_symbols(t: TermLike) -> frozenset:
    """Symbol names of a term."""
    if isinstance(t, Expr):
        return t.symbols()
    out: set = set()
    for a in t.args:
        if isinstance(a, (Expr, Term)):
            out |= term_symbols(a)
    return frozenset(out)


def pred_symbols(p: Pred) -> frozenset:
    """Symbol names of a predicate."""
    if p.op == "bool":
        return frozenset()
    if p.op == "cmp":
        return term_symbols(p.args[1]) | term_symbols(p.args[2])
    out: set = set()
    for a in p.args:
        out |= pred_symbols(a)
    return frozenset(out)


def evaluate(t: TermLike, env: Mapping[str, Any]):
    """Evaluate a term over ints or NumPy integer arrays (broadcasting)."""
    op, args = t.op, t.args
    if op == "const":
        return args[0]
    if op == "sym":
        return env[args[0]]
    vals = [evaluate(a, env) for a in args]
    if op == "add":
        out = vals[0]
        for v in vals[1:]:
            out = out + v
        return out
    if op == "mul":
        out = vals[0]
        for v in vals[1:]:
            out = out * v
        return out
    if op == "max":
        out = vals[0]
        for v in vals[1:]:
            out = np.maximum(out, v)
        return out
    if op == "min":
        out = vals[0]
        for v in vals[1:]:
            out = np.minimum(out, v)
        return out
    if op == "neg":
        return -vals[0]
    a, b = vals
    if op == "sub":
        return a - b
    if op == "floordiv":
        return a // b
    if op == "cdiv":
        return -((-a) // b)
    if op == "mod":
        return a % b
    if op == "pow":
        return a**b
    raise ValueError(f"unknown term op {op!r}")


_CMP = {
    "<=": lambda a, b: a <= b,
    "<": lambda a, b: a < b,
    ">=": lambda a, b: a >= b,
    ">": lambda a, b: a > b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}


def evaluate_pred(p: Pred, env: Mapping[str, Any]):
    """Evaluate a predicate over ints or arrays (a bool or a bool array)."""
    op = p.op
    if op == "bool":
        return bool(p.args[0])
    if op == "cmp":
        c, a, b = p.args
        return _CMP[c](evaluate(a, env), evaluate(b, env))
    if op == "not":
        return np.logical_not(evaluate_pred(p.args[0], env))
    vals = [evaluate_pred(a, env) for a in p.args]
    out = vals[0]
    for v in vals[1:]:
        out = np.logical_and(out, v) if op == "and" else np.logical_or(out, v)
    return out


def pred_to_z3(p: Pred, env: Mapping[str, Any]):
    """A Z3 boolean for a predicate."""
    import z3

    op = p.op
    if op == "bool":
        return z3.BoolVal(bool(p.args[0]))
    if op == "cmp":
        c, a, b = p.args
        return _CMP[c](to_z3(a, env), to_z3(b, env))
    if op == "not":
        return z3.Not(pred_to_z3(p.args[0], env))
    vals = [pred_to_z3(a, env) for a in p.args]
    return z3.And(*vals) if op == "and" else z3.Or(*vals)


_TPREC = {"add": 1, "sub": 1, "mul": 2, "floordiv": 2, "mod": 2, "pow": 3, "neg": 3}


def term_str(t: TermLike, prec: int = 0) -> str:
    """Python-like text of a term."""
    if isinstance(t, Expr):
        text = str(t)
        return f"({text})" if prec and t.op in ("add", "sub") and prec > 1 else text
    op, args = t.op, t.args
    if op == "mod":
        text = f"{term_str(args[0], 2)} % {term_str(args[1], 3)}"
    elif op == "pow":
        text = f"{term_str(args[0], 4)} ** {term_str(args[1], 3)}"
    elif op == "neg":
        text = f"-{term_str(args[0], 3)}"
    else:
        text = str(Expr(op, args)) if op in ("const", "sym") else f"{op}({', '.join(term_str(a) for a in args)})"
    p = _TPREC.get(op, 4)
    return f"({text})" if p < prec else text


def pred_str(p: Pred) -> str:
    """Python-like text of a predicate."""
    if p.op == "bool":
        return str(bool(p.args[0]))
    if p.op == "cmp":
        c, a, b = p.args
        return f"{term_str(a)} {c} {term_str(b)}"
    if p.op == "not":
        return f"not ({pred_str(p.args[0])})"
    joiner = " and " if p.op == "and" else " or "
    return joiner.join(f"({pred_str(a)})" if a.op in ("and", "or") else pred_str(a) for a in p.args)


# ----- static_assert conditions -----------------------------------------------------


class _Unsupported(Exception):
    pass


def parse_condition(text: str, known: Callable[[str], bool]) -> tuple[Optional[Pred], str]:
    """Parse a ``tl.static_assert`` condition into a :class:`Pred` (never evaluated).

    ``known(name)`` says whether a name is a variable or a constant.  Returns
    ``(pred, "")`` or ``(None, reason)`` when the condition uses something
    outside integer arithmetic, comparisons and ``and``/``or``/``not``
    over known names.
    """
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        return None, f"not an expression ({exc.msg})"
    try:
        return _cond(tree.body, known), ""
    except _Unsupported as exc:
        return None, str(exc)


def _cond(node: ast.AST, known: Callable[[str], bool]) -> Pred:
    if isinstance(node, ast.BoolOp):
        parts = [_cond(v, known) for v in node.values]
        return Pred("and" if isinstance(node.op, ast.And) else "or", tuple(parts))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return Pred("not", (_cond(node.operand, known),))
    if isinstance(node, ast.Compare):
        parts = []
        left = node.left
        for op, right in zip(node.ops, node.comparators):
            if isinstance(op, (ast.In, ast.NotIn)):
                if not isinstance(right, (ast.Tuple, ast.List, ast.Set)):
                    raise _Unsupported("'in' needs a literal tuple, list or set")
                a = _term(left, known)
                p = Pred.any_of(*[Pred.cmp("==", a, _term(e, known)) for e in right.elts]) if right.elts else Pred("bool", (False,))
                parts.append(Pred("not", (p,)) if isinstance(op, ast.NotIn) else p)
            else:
                sym_op = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}.get(type(op))
                if sym_op is None:
                    raise _Unsupported(f"comparison {type(op).__name__} is not supported")
                parts.append(Pred.cmp(sym_op, _term(left, known), _term(right, known)))
            left = right
        return Pred.all_of(*parts)
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return Pred("bool", (node.value,))
    # a bare integer expression: true when non-zero
    return Pred.cmp("!=", _term(node, known), const(0))


def _term(node: ast.AST, known: Callable[[str], bool]) -> TermLike:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, bool)):
        return const(int(node.value))
    if isinstance(node, ast.Name):
        if not known(node.id):
            raise _Unsupported(f"name {node.id!r} has no known value")
        return sym(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return Term("neg", (_term(node.operand, known),))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd):
        return _term(node.operand, known)
    if isinstance(node, ast.BinOp):
        a, b = _term(node.left, known), _term(node.right, known)
        if isinstance(node.op, ast.Add):
            return Term("add", (a, b))
        if isinstance(node.op, ast.Sub):
            return Term("sub", (a, b))
        if isinstance(node.op, ast.Mult):
            return Term("mul", (a, b))
        if isinstance(node.op, ast.FloorDiv):
            return Term("floordiv", (a, b))
        if isinstance(node.op, ast.Mod):
            return Term("mod", (a, b))
        if isinstance(node.op, ast.Pow):
            if not (isinstance(b, Expr) and b.is_const and 0 <= b.value <= 64):
                raise _Unsupported("'**' needs a small constant exponent")
            return Term("pow", (a, b))
        if isinstance(node.op, ast.LShift) and isinstance(b, Expr) and b.is_const and 0 <= b.value < 63:
            return Term("mul", (a, const(1 << b.value)))
        if isinstance(node.op, ast.RShift) and isinstance(b, Expr) and b.is_const and 0 <= b.value < 63:
            return Term("floordiv", (a, const(1 << b.value)))
        raise _Unsupported(f"operator {type(node.op).__name__} is not supported")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("max", "min") and not node.keywords:
        args = [_term(a, known) for a in node.args]
        if len(args) < 2:
            raise _Unsupported("max/min need two or more arguments")
        return Term(node.func.id, tuple(args))
    if isinstance(node, ast.Call):
        fname = ast.unparse(node.func)
        if fname.endswith("cdiv") and len(node.args) == 2:
            return Term("cdiv", (_term(node.args[0], known), _term(node.args[1], known)))
    raise _Unsupported(f"unsupported construct {ast.unparse(node)[:40]!r}")


# ----- constraints ------------------------------------------------------------------


@dataclass
class Constraint:
    """One tracked requirement.

    ``kind``: ``lo``/``hi``/``pow2``/``domain`` (domains: implied by the
    enumeration's value lists), ``capacity`` (``need <= limit`` bytes),
    ``align``, ``fractal``, ``numel``, ``registers``, ``warps``, ``assert``.
    ``text`` states the rule; ``label`` names the resource for violation
    messages.  ``check`` says whether :func:`check_config` reports it (the
    register estimate and the warps heuristic are synthesis preferences, not
    hard limits).
    """

    name: str
    kind: str
    pred: Pred
    text: str
    label: str = ""
    need: Optional[TermLike] = None
    limit: Optional[TermLike] = None
    unit: str = "B"
    check: bool = True
    implicit: bool = False  # holds for every enumerated point (a domain bound)
    soft: bool = False  # a preference: relaxed when nothing satisfies it (see synthesize)
    symbols: frozenset = field(default_factory=frozenset)

    def __post_init__(self):
        if not self.symbols:
            self.symbols = pred_symbols(self.pred)

    @classmethod
    def within(
        cls, name: str, kind: str, need: TermLike, limit: Union[int, TermLike], text: str, label: str, **kw
    ) -> "Constraint":
        """A resource constraint ``need <= limit`` (``capacity`` in bytes, ``numel`` in elements...);
        an int ``limit`` is a constant."""
        limit = const(limit) if isinstance(limit, int) else limit
        return cls(name, kind, Pred.le(need, limit), text, label=label, need=need, limit=limit, **kw)

    def violation(self, env: Mapping[str, Any], target_name: str) -> str:
        """Words for a point that violates this constraint."""
        if self.need is not None and self.limit is not None:
            need = int(evaluate(self.need, env))
            limit = int(evaluate(self.limit, env))
            return f"{self.label}: needs {need} {self.unit} > {limit} {self.unit} on {target_name}"
        names = sorted(s for s in self.symbols)
        at = ", ".join(f"{n}={_fmt(env.get(n))}" for n in names if n in env)
        return f"{self.text}" + (f" (here {at})" if at else "")

    def excess(self, env: Mapping[str, Any]):
        """How much ``need`` exceeds ``limit`` (capacity constraints), as an array or int."""
        if self.need is None or self.limit is None:
            return None
        return evaluate(self.need, env) - evaluate(self.limit, env)


def _fmt(v: Any) -> str:
    if isinstance(v, (np.integer,)):
        return str(int(v))
    return str(v)


# ----- the model ----------------------------------------------------------------------


@dataclass
class AccessTerm:
    """Bytes of one memory access per execution and how often it runs per program."""

    kind: str
    pointer: Optional[str]
    bytes: Expr  # tile bytes (dims clipped to their bounds)
    trips: Expr
    in_loop: bool
    contiguous_bytes: Optional[Expr] = None  # bytes of the contiguous run (clipped dim x esize)
    reuse: Expr = field(default_factory=lambda: const(1))  # programs that load the same tile


@dataclass
class DotTerm:
    """Flops of one tl.dot per execution, its trips and input dtype."""

    flops: Expr
    trips: Expr
    dtype: str
    in_loop: bool
    m: Optional[Expr] = None
    mn: Optional[Expr] = None


@dataclass
class Model:
    """The constraint model of one synthesis problem, plus the terms the cost model reads."""

    space: Space
    constraints: list[Constraint]
    programs: Expr
    programs_source: str
    accesses: list[AccessTerm]
    dots: list[DotTerm]
    footprint: dict[str, Expr]
    max_tile_numel: Expr
    notes: list[str] = field(default_factory=list)

    @property
    def target(self):
        return self.space.target

    def constraint(self, name: str) -> Constraint:
        for c in self.constraints:
            if c.name == name:
                return c
        raise KeyError(name)

    def z3_vars(self) -> dict[str, Any]:
        """A Z3 integer per numeric variable."""
        import z3

        return {v.name: z3.Int(v.name) for v in self.space.vars if v.numeric}

    def solver(self, extra: Optional[Mapping[str, int]] = None, timeout_ms: int = 10000):
        """A Z3 solver with every constraint asserted under its tracking name.

        ``extra`` pins variables to values (tracked as ``pin:<name>``).
        Returns ``(solver, vars, tracks)`` where ``tracks`` maps each tracking
        Boolean's name to its :class:`Constraint` (or None for pins).
        """
        import z3

        s = z3.Solver()
        s.set("timeout", int(timeout_ms))
        s.set("core.minimize", True)
        zv = self.z3_vars()
        tracks: dict[str, Optional[Constraint]] = {}
        for c in self.constraints:
            if not c.symbols <= set(zv):
                continue  # mentions a non-numeric hint: enumeration-only
            b = z3.Bool(c.name)
            s.assert_and_track(pred_to_z3(c.pred, zv), b)
            tracks[c.name] = c
        for name, value in (extra or {}).items():
            if name in zv:
                b = z3.Bool(f"pin:{name}")
                s.assert_and_track(zv[name] == int(value), b)
                tracks[f"pin:{name}"] = None
        return s, zv, tracks

    def summary(self) -> list[str]:
        """The model in words: variables with domains, constants, constraints."""
        sp = self.space
        lines = [f"kernel {sp.spec.name} on {sp.target.name} ({sp.target.family})"]
        lines.append("variables:")
        for v in sp.vars:
            lines.append(f"  {v.describe()}")
        consts = {k: v for k, v in sp.env.items()}
        if consts:
            lines.append("constants: " + ", ".join(f"{k}={v}" for k, v in sorted(consts.items())))
        if sp.fixed:
            lines.append("fixed: " + ", ".join(f"{k}={v}" for k, v in sp.fixed.items()))
        lines.append(f"programs: {self.programs} ({self.programs_source})")
        lines.append("constraints:")
        for c in self.constraints:
            if c.kind in ("lo", "hi", "pow2", "domain"):
                continue
            lines.append(f"  [{c.name}] {c.text}")
        for n in sp.notes + self.notes:
            lines.append(f"note: {n}")
        return lines


def _numel(shape: Sequence[Expr]) -> Expr:
    return product(shape)


def _bound_tile(space: Space, e: Expr) -> Optional[tuple[str, int]]:
    """(param, bound value) when ``e`` is a single tiling parameter with a known bound."""
    if e.op == "sym" and e.args[0] in space.bound_values:
        return e.args[0], space.bound_values[e.args[0]]
    return None


def build_model(space: Space, *, strict: bool = True) -> Model:
    """Constraints and cost terms for a :class:`Space`.

    With ``strict=False`` (check_config) a constraint that mentions an
    unknown symbol is dropped instead of raising.
    """
    from ..errors import SynthesisError

    spec: KernelSpec = space.spec
    t = space.target
    names = set(space.var_names)
    cons: list[Constraint] = []
    notes: list[str] = []
    seen: set[str] = set()

    def add(c: Constraint) -> None:
        key = pred_str(c.pred)
        if key in seen and c.kind not in ("lo", "hi", "pow2", "domain"):
            return
        seen.add(key)
        unknown = {s for s in c.symbols if s not in names}
        if unknown:
            if strict:
                raise SynthesisError(
                    f"kernel {spec.name!r}: constraint {c.text!r} needs {', '.join(sorted(unknown))}; "
                    "pass them in shapes= (runtime sizes) or fixed= (constexpr values)"
                )
            return
        if not c.symbols:
            # a constant requirement: keep it (it may make the problem infeasible)
            pass
        cons.append(c)

    def bind(e: Optional[Expr]) -> Optional[Expr]:
        if e is None:
            return None
        b = space.bind(e)
        if space.unknown_symbols(b):
            return None if not strict else b
        return b

    # --- domains (implicit in the enumeration; explicit for Z3) ---
    for v in space.vars:
        if not v.numeric:
            continue
        x = sym(v.name)
        if v.kind == "tile" and v.pow2:
            add(Constraint(f"pow2:{v.name}", "pow2", Pred.isin(x, [1 << i for i in range(21)]), v.pow2_why, implicit=True))
            add(Constraint(f"lo:{v.name}", "lo", Pred.ge(x, const(v.lo)), v.lo_why or f"{v.name} >= {v.lo}", implicit=True))
            add(Constraint(f"hi:{v.name}", "hi", Pred.le(x, const(v.hi)), v.hi_why or f"{v.name} <= {v.hi}", implicit=True))
        else:
            add(Constraint(f"domain:{v.name}", "domain", Pred.isin(x, v.codes), v.describe(), implicit=True))

    # --- tile shapes, accesses, dots ---
    access_terms: list[AccessTerm] = []
    tile_numels: list[Expr] = []
    for a in spec.accesses:
        if not a.shape or any(d is None for d in a.shape):
            continue
        dims = [space.bind(d) for d in a.shape]
        if any(space.unknown_symbols(d) for d in dims):
            notes.append(f"access {a.node} ({a.pointer}) has a shape with unknown sizes; left out")
            continue
        numel = _numel(dims)
        tile_numels.append(numel)
        dt = resolve_dtype(a.dtype, space.dtypes)
        if a.pointer and a.pointer in space.dtypes:
            dt = space.dtypes[a.pointer]
        esize = _esize(dt)
        clipped = []
        for raw, d in zip(a.shape, dims):
            bt = _bound_tile(space, raw)
            clipped.append(emin(d, bt[1]) if bt else d)
        trips = _trips(space, a.trips, a.in_loop, a.shape, notes, f"access of {a.pointer or a.node}")
        cd = a.contiguous_dim
        if cd is None and dims:
            cd = len(dims) - 1
        contig = clipped[cd] * esize if cd is not None and 0 <= cd < len(dims) else None
        reuse = const(1)
        if a.kind == "load":
            # a tile whose shape no parallel parameter sizes is the same for every program along that axis
            shared_by = []
            for p in spec.tiling_params:
                if p.role != Role.PARALLEL or p.name not in space.bound_values:
                    continue
                if any(p.name in d.symbols() for d in a.shape):
                    continue
                value = sym(p.name) if p.name in names else const(int(space.fixed.get(p.name, 1)))
                shared_by.append(cdiv(space.bound_values[p.name], value))
            if shared_by:
                reuse = product(shared_by)
        access_terms.append(AccessTerm(a.kind, a.pointer, product(clipped) * esize, trips, bool(a.in_loop), contig, reuse))
        if numel.symbols() & names or (numel.is_const and numel.value > t.max_tensor_numel):
            add(
                Constraint.within(
                    f"numel:{a.pointer or a.node}",
                    "numel",
                    numel,
                    t.max_tensor_numel,
                    f"tile of {a.pointer or a.node} has {numel} <= {t.max_tensor_numel} elements (Triton's largest tensor)",
                    f"tile of {a.pointer or a.node}",
                    unit="elements",
                )
            )
        # alignment of the contiguous dimension.  On NVIDIA it is a preference (soft); when the
        # kernel streams its data through a loop, an access outside the loop (a per-program
        # store of BLOCK_M row sums, a scale vector loaded once) moves a negligible share of the
        # bytes: its width is left to the cost's transaction factor instead of removing narrow
        # parallel tiles (BLOCK_M = 1 row per program) that can be the fastest.
        minor = t.is_nvidia and not a.in_loop and any(x.in_loop and x.kind == "load" for x in spec.accesses)
        if cd is not None and 0 <= cd < len(dims) and dims[cd].symbols() & names and dt is not None and not minor:
            d = dims[cd]
            bt = _bound_tile(space, a.shape[cd])
            who = a.pointer or a.node
            if t.is_ascend:
                align = t.ub_align_bytes
                base = Pred.multiple_of(d * esize, align)
                text = f"{who}: contiguous tile dim {d} x {esize} B is a multiple of {align} B (UB alignment)"
            else:
                align = 16
                base = Pred.ge(d * esize, const(align))
                text = f"{who}: contiguous tile dim {d} x {esize} B >= {align} B (vectorised access)"
            if bt is not None:
                base = Pred.any_of(base, Pred.ge(d, const(bt[1])))
                text += f", unless it covers {bt[0]}'s whole extent ({bt[1]})"
            add(Constraint(f"align:{who}", "align", base, text, check=t.is_ascend, soft=not t.is_ascend))

    dot_terms: list[DotTerm] = []
    for i, d in enumerate(spec.dots):
        m, n, k = (bind(x) if x is not None else None for x in (d.m, d.n, d.k))
        if m is None or n is None or k is None or any(space.unknown_symbols(x) for x in (m, n, k)):
            notes.append(f"tl.dot {d.node} has unknown extents; left out of the cost and capacity model")
            continue
        adt = resolve_dtype(d.a_dtype, space.dtypes, "fp16") or "fp16"
        bdt = resolve_dtype(d.b_dtype, space.dtypes, adt) or adt
        trips = _trips(space, d.trips, d.in_loop, (d.m, d.n, d.k), notes, f"tl.dot {d.node}")
        dot_terms.append(DotTerm(const(2) * m * n * k, trips, adt, bool(d.in_loop), m, m * n))
        tile_numels.append(m * n)
        for label, ne in (("A", m * k), ("B", k * n), ("C", m * n)):
            if ne.symbols() & names:
                add(
                    Constraint.within(
                        f"numel:dot{i}.{label}",
                        "numel",
                        ne,
                        t.max_tensor_numel,
                        f"tl.dot {label} tile {ne} <= {t.max_tensor_numel} elements (Triton's largest tensor)",
                        f"tl.dot {label} tile",
                        unit="elements",
                    )
                )
        if t.is_ascend:
            ea, eb = _esize(adt), _esize(bdt)
            frac_k = t.fractal_k_int8 if adt in ("int8", "uint8") else t.fractal
            for label, dim, f in (("m", m, t.fractal), ("n", n, t.fractal), ("k", k, frac_k)):
                if dim.symbols() & names or (dim.is_const and dim.value % f):
                    add(
                        Constraint(
                            f"fractal:dot{i}.{label}",
                            "fractal",
                            Pred.multiple_of(dim, f),
                            f"tl.dot {label} = {dim} is a multiple of {f} (cube fractal {t.fractal}x{frac_k} for {adt})",
                        )
                    )
            for cname, label, need, cap in (
                ("l0a", "L0A", m * k * ea, t.l0a_bytes),
                ("l0b", "L0B", k * n * eb, t.l0b_bytes),
            ):
                if cap:
                    text = f"{label}: tl.dot operand {need} B <= {cap} B"
                    add(Constraint.within(f"{cname}:dot{i}", "capacity", need, cap, text, label))

    # --- footprint capacities ---
    fp = spec.footprint
    foot: dict[str, Expr] = {}
    if fp is not None:
        for key in ("live_bytes", "shared_bytes", "dot_operand_bytes", "accumulator_bytes"):
            e = bind(getattr(fp, key))
            if e is not None:
                foot[key] = e
    elif strict:
        notes.append("the analysis gave no footprint; capacity constraints are left out")
    if t.is_nvidia and "live_bytes" in foot:
        # Registers hold the live tiles except what is staged in shared memory
        # (pipelined tl.dot operands); never less than the accumulators.
        if dot_terms and "shared_bytes" in foot:
            foot["register_bytes"] = emax(foot["live_bytes"] - foot["shared_bytes"], foot.get("accumulator_bytes", const(0)))
        else:
            foot["register_bytes"] = foot["live_bytes"]

    if t.is_nvidia:
        if "shared_bytes" in foot and t.shared_bytes:
            need = foot["shared_bytes"]
            text = f"shared memory: {need} <= {t.shared_bytes} B per block"
            add(Constraint.within("shared", "capacity", need, t.shared_bytes, text, "shared memory"))
        if "register_bytes" in foot:
            need = foot["register_bytes"]
            per_thread = _reg_budget_bytes(t)
            warps = sym(NUM_WARPS) if NUM_WARPS in names else const(space.env.get(NUM_WARPS, 4))
            per_sm = ((t.registers_per_sm or 65536) - 1024) * 4  # less 1K registers for scalars
            limit = emin(warps * (t.warp_size * per_thread), per_sm)
            add(
                Constraint.within(
                    "registers",
                    "capacity",
                    need,
                    limit,
                    f"registers: live tiles {need} B <= min(num_warps x {t.warp_size} threads x {per_thread} B, {per_sm} B) "
                    f"({t.max_registers_per_thread} registers per thread, {t.registers_per_sm} per SM; "
                    "an estimate: spilling still runs, so it is relaxed when nothing else fits)",
                    "registers (estimate)",
                    check=False,
                    soft=True,
                )
            )
        if NUM_WARPS in names and tile_numels:
            biggest = emax(*tile_numels)
            add(
                Constraint(
                    "warps",
                    "warps",
                    Pred.any_of(Pred.le(sym(NUM_WARPS) * t.warp_size, biggest), Pred.cmp("==", sym(NUM_WARPS), const(1))),
                    f"num_warps x {t.warp_size} threads <= the largest tile ({biggest} elements): no idle threads",
                    check=False,
                    soft=True,
                )
            )
    else:
        has_dots = bool(dot_terms)

        def stages() -> Expr:
            """Copies of the cube operands in flight: 1 + multibuffer."""
            return const(1) + sym(MULTIBUFFER) if MULTIBUFFER in names else const(1 + int(space.env.get(MULTIBUFFER, 0)))

        if "live_bytes" in foot and t.ub_bytes:
            live = foot["live_bytes"]
            if has_dots and "dot_operand_bytes" in foot:
                vec = emax(live - foot["dot_operand_bytes"] * stages(), foot.get("accumulator_bytes", const(0)))
                text = f"UB: vector tiles (live minus cube operands) {vec} <= {t.ub_bytes} B per vector core"
            else:
                vec = live
                text = f"UB: live tiles {vec} <= {t.ub_bytes} B per vector core"
            add(Constraint.within("ub", "capacity", vec, t.ub_bytes, text, "UB"))
        if has_dots and "dot_operand_bytes" in foot and t.l1_bytes:
            need = foot["dot_operand_bytes"] * stages()
            text = f"L1: cube operand tiles {need} <= {t.l1_bytes} B per cube core"
            add(Constraint.within("l1", "capacity", need, t.l1_bytes, text, "L1"))
        if has_dots and "accumulator_bytes" in foot and t.l0c_bytes:
            need = foot["accumulator_bytes"]
            text = f"L0C: accumulators {need} <= {t.l0c_bytes} B per cube core"
            add(Constraint.within("l0c", "capacity", need, t.l0c_bytes, text, "L0C"))

    # --- static asserts ---
    known = lambda n: n in names or n in space.env  # noqa: E731
    for i, text in enumerate(spec.static_asserts):
        pred, why = parse_condition(text, known)
        if pred is None:
            notes.append(f"tl.static_assert({text}) not modelled: {why}")
            continue
        pred = _bind_pred(pred, space)
        add(Constraint(f"assert:{i}", "assert", pred, f"tl.static_assert({text})"))

    # --- programs ---
    programs, source = _programs(space, notes)

    return Model(
        space=space,
        constraints=cons,
        programs=programs,
        programs_source=source,
        accesses=access_terms,
        dots=dot_terms,
        footprint=foot,
        max_tile_numel=emax(*tile_numels) if tile_numels else const(1),
        notes=notes,
    )


def _trips(space: Space, trips: Optional[Expr], in_loop: bool, dims, notes: list[str], what: str) -> Expr:
    """Trip count of an access or dot; estimated when the analysis could not say.

    An unknown count inside a loop becomes ``cdiv(bound, P)`` for each
    reduction parameter ``P`` among the tile's dimensions (the loop walks
    ``P``'s extent in steps of ``P``), else 1.
    """
    if trips is not None:
        b = space.bind(trips)
        if not space.unknown_symbols(b):
            return b
    if not in_loop:
        return const(1)
    names = set(space.var_names)
    est = []
    for p in space.spec.tiling_params:
        if p.role != Role.REDUCTION or p.name not in space.bound_values:
            continue
        if any(d is not None and p.name in d.symbols() for d in dims):
            value = sym(p.name) if p.name in names else const(int(space.fixed.get(p.name, 1)))
            est.append(cdiv(space.bound_values[p.name], value))
    if est:
        e = product(est)
        notes.append(f"trip count of the {what} estimated as {e}")
        return e
    return const(1)


def _bind_pred(p: Pred, space: Space) -> Pred:
    if p.op == "bool":
        return p
    if p.op == "cmp":
        c, a, b = p.args
        return Pred("cmp", (c, _bind_term(a, space), _bind_term(b, space)))
    return Pred(p.op, tuple(_bind_pred(a, space) for a in p.args))


def _bind_term(t: TermLike, space: Space) -> TermLike:
    if isinstance(t, Expr):
        return space.bind(t)
    return Term(t.op, tuple(_bind_term(a, space) if isinstance(a, (Expr, Term)) else a for a in t.args))


def _esize(dt: Optional[str]) -> int:
    from ..analysis.model import DTYPE_BYTES

    return DTYPE_BYTES.get(dt or "fp32", 4)


def _reg_budget_bytes(t) -> int:
    """Bytes of tiles a thread may hold: all of its registers.

    The analysis' ``live_bytes`` already counts index and pointer tiles, so
    no margin is kept back for them.
    """
    return t.max_registers_per_thread * 4


def _programs(space: Space, notes: list[str]) -> tuple[Expr, str]:
    spec = space.spec
    names = set(space.var_names)
    for launch in spec.launches:
        if not launch.grid:
            continue
        dims = [space.bind(g) for g in launch.grid]
        if all(not (d.symbols() - names) for d in dims):
            return product(dims), f"launch grid {launch.grid_source}"
    parallel = [p for p in spec.tiling_params if p.role == Role.PARALLEL]
    terms = []
    axes_tiled = set()
    for p in parallel:
        bound = space.env.get(p.bound) if p.bound else None
        if bound is None:
            continue
        axes_tiled.add(p.axis)
        value = sym(p.name) if p.name in names else const(int(space.fixed.get(p.name, 1)))
        terms.append(cdiv(int(bound), value))
    axes = program_axes(spec)
    untiled = sorted(a for a in axes if a not in axes_tiled) if axes is not None else []
    cores = space.target.cores if space.target.is_nvidia else (space.target.vector_cores or space.target.cores)
    if terms and not untiled:
        return product(terms), "cdiv(bound, block) over the parallel tiling parameters"
    if terms:
        notes.append(
            f"grid axes {untiled} are not tiled by any parameter and their size is unknown; assumed to give "
            f"{cores} programs (one full wave) per tile"
        )
        return product(terms) * cores, f"cdiv(bound, block) over the parallel tiling parameters x {cores} (untiled axes {untiled})"
    notes.append("number of programs unknown (no usable launch grid, no parallel tiling parameter); assumed one full wave")
    return const(cores), "assumed one full wave"


_AXES_CACHE: dict[tuple, Optional[frozenset]] = {}


def program_axes(spec: KernelSpec) -> Optional[frozenset]:
    """The ``tl.program_id`` axes the kernel's source uses (None when the source cannot be read).

    The source is parsed with :mod:`ast`, never run.
    """
    if not spec.file:
        return None
    import os

    try:
        key = (spec.file, os.path.getmtime(spec.file), spec.name, spec.span.line)
    except OSError:
        return None
    if key in _AXES_CACHE:
        return _AXES_CACHE[key]
    result: Optional[frozenset] = None
    try:
        with open(spec.file, "rb") as fh:
            tree = ast.parse(fh.read())
        fn = None
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == spec.name:
                if fn is None or abs(node.lineno - spec.span.line) < abs(fn.lineno - spec.span.line):
                    fn = node
        if fn is not None:
            axes = set()
            for node in ast.walk(fn):
                if isinstance(node, ast.Call):
                    f = node.func
                    fname = f.attr if isinstance(f, ast.Attribute) else (f.id if isinstance(f, ast.Name) else "")
                    if fname != "program_id":
                        continue
                    arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "axis"), None)
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, int):
                        axes.add(arg.value)
                    elif arg is None:
                        axes.add(0)
            result = frozenset(axes)
    except (OSError, SyntaxError, ValueError):
        result = None
    _AXES_CACHE[key] = result
    return result
