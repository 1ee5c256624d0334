"""Building a :class:`~.core.Model`: the rules every target shares, then the target family's.

:func:`build_model` walks the kernel once:

* domains of the searched variables (implicit in the enumeration, explicit for Z3);
* each memory access: its cost term and Triton's largest tensor; the family
  module adds its access rules (NVIDIA: vector width preference);
* each ``tl.dot``: its cost term and Triton's largest tensor; the family
  module adds the matrix-unit rules (Ascend: cube fractals, L0A/L0B);
* the footprint capacities, from the family module (NVIDIA: shared memory,
  registers, warps; Ascend: UB with multibuffer, L1, L0C);
* ``tl.static_assert`` conditions and the program count.

The per-family rules live in :mod:`.nvidia` and :mod:`.ascend`, one module
per target family.
"""

from __future__ import annotations

from typing import Optional

from ...analysis.classify import DOT_MIN
from ...analysis.expr import ALIGN16_PREFIX, Expr, cdiv, const, emax, emin, product, sym
from ...analysis.model import DTYPE_BYTES, KernelSpec, Role
from ...errors import SynthesisError
from ..space import Space, resolve_dtype
from .conditions import parse_condition
from .core import PIPELINED_SHARED, AccessTerm, Constraint, DotTerm, Model
from .preds import Pred, Term, TermLike, pred_str
from .programs import programs, trips

__all__ = ["build_model", "Builder", "esize", "bound_tile"]

_DOMAIN_KINDS = ("lo", "hi", "pow2", "domain")


class Builder:
    """Collects constraints for one space: unique names, no duplicate predicates."""

    def __init__(self, space: Space, strict: bool):
        self.space = space
        self.spec: KernelSpec = space.spec
        self.target = space.target
        self.names = set(space.var_names)
        self.strict = strict
        self.constraints: list[Constraint] = []
        self.notes: list[str] = []
        self._seen: set[str] = set()
        self._taken: dict[str, int] = {}

    def add(self, c: Constraint) -> None:
        """Add ``c`` unless the same predicate is already there; its name is made unique."""
        key = pred_str(c.pred)
        if key in self._seen and c.kind not in _DOMAIN_KINDS:
            return
        self._seen.add(key)
        unknown = {s for s in c.symbols if s not in self.names}
        if unknown:
            if self.strict:
                raise SynthesisError(
                    f"kernel {self.spec.name!r}: constraint {c.text!r} needs {', '.join(sorted(unknown))}; "
                    "pass them in shapes= (runtime sizes) or fixed= (constexpr values)"
                )
            return
        # one pointer accessed with two tile shapes (branches, split loads) gives two
        # constraints of one name: Z3 refuses a tracking name defined twice
        count = self._taken.get(c.name, 0) + 1
        self._taken[c.name] = count
        if count > 1:
            c.name = f"{c.name}#{count}"
        self.constraints.append(c)

    def bind(self, e: Optional[Expr]) -> Optional[Expr]:
        """``e`` specialised with the space's constants (None when it stays unknown, non-strict)."""
        if e is None:
            return None
        b = self.space.bind(e)
        if self.space.unknown_symbols(b):
            return None if not self.strict else b
        return b

    def value(self, name: str) -> Expr:
        """A tiling parameter as a term: its variable, or its fixed value (1 if unknown)."""
        return sym(name) if name in self.names else const(int(self.space.fixed.get(name, 1)))


def esize(dt: Optional[str]) -> int:
    """Bytes per element of a resolved dtype (4 when unknown)."""
    return DTYPE_BYTES.get(dt or "fp32", 4)


def bound_tile(space: Space, e: Expr) -> Optional[tuple[str, int]]:
    """(param, bound value) when ``e`` is a single tiling parameter with a known bound."""
    if e.op == "sym" and e.args[0] in space.bound_values:
        return e.args[0], space.bound_values[e.args[0]]
    return None


def build_model(space: Space, *, strict: bool = True) -> Model:
    """Constraints and cost terms for a :class:`Space`.

    With ``strict=False`` (check_config) a constraint that mentions an
    unknown symbol is dropped instead of raising.
    """
    b = Builder(space, strict)
    family = space.family.constraint_rules()
    _domains(b)
    access_terms, tile_numels = _accesses(b, family)
    dot_terms = _dots(b, family, tile_numels)
    foot = _footprint(b)
    family.capacity_rules(b, foot, dot_terms, tile_numels)
    foot.pop(PIPELINED_SHARED, None)
    _static_asserts(b)
    count, source = programs(space, b.notes)
    return Model(
        space=space,
        constraints=b.constraints,
        programs=count,
        programs_source=source,
        accesses=access_terms,
        dots=dot_terms,
        footprint=foot,
        max_tile_numel=emax(*tile_numels) if tile_numels else const(1),
        notes=b.notes,
    )


def _domains(b: Builder) -> None:
    for v in b.space.vars:
        if not v.numeric:
            continue
        x = sym(v.name)
        if v.kind == "tile" and v.pow2:
            b.add(Constraint(f"pow2:{v.name}", "pow2", Pred.isin(x, [1 << i for i in range(21)]), v.pow2_why, implicit=True))
        if v.kind == "tile" and v.lo is not None:
            b.add(Constraint(f"lo:{v.name}", "lo", Pred.ge(x, const(v.lo)), v.lo_why or f"{v.name} >= {v.lo}", implicit=True))
            b.add(Constraint(f"hi:{v.name}", "hi", Pred.le(x, const(v.hi)), v.hi_why or f"{v.name} <= {v.hi}", implicit=True))
        if not (v.kind == "tile" and v.pow2):
            b.add(Constraint(f"domain:{v.name}", "domain", Pred.isin(x, v.codes), v.describe(), implicit=True))


def _accesses(b: Builder, family) -> tuple[list[AccessTerm], list[Expr]]:
    space, spec, t = b.space, b.spec, b.target
    terms: list[AccessTerm] = []
    numels: list[Expr] = []
    for a in spec.accesses:
        if not a.shape or any(d is None for d in a.shape):
            continue
        dims = [space.bind(d) for d in a.shape]
        if any(space.unknown_symbols(d) for d in dims):
            b.notes.append(f"access {a.node} ({a.pointer}) has a shape with unknown sizes; left out")
            continue
        numel = product(dims)
        numels.append(numel)
        dt = resolve_dtype(a.dtype, space.dtypes)
        if a.pointer and a.pointer in space.dtypes:
            dt = space.dtypes[a.pointer]
        es = esize(dt)
        clipped = []
        for raw, d in zip(a.shape, dims):
            bt = bound_tile(space, raw)
            clipped.append(emin(d, bt[1]) if bt else d)
        n_trips = trips(space, a.trips, a.in_loop, a.shape, b.notes, f"access of {a.pointer or a.node}")
        cd = a.contiguous_dim
        if cd is None and dims:
            cd = len(dims) - 1
        contig = clipped[cd] * es if cd is not None and 0 <= cd < len(dims) else None
        terms.append(AccessTerm(a.kind, a.pointer, product(clipped) * es, n_trips, bool(a.in_loop), contig, _reuse(b, a)))
        who = a.pointer or a.node
        if numel.symbols() & b.names or (numel.is_const and numel.value > t.max_tensor_numel):
            b.add(
                Constraint.within(
                    f"numel:{who}", "numel", numel, t.max_tensor_numel,
                    f"tile of {who} has {numel} <= {t.max_tensor_numel} elements (Triton's largest tensor)",
                    f"tile of {who}", unit="elements",
                )
            )
        if cd is not None and 0 <= cd < len(dims) and dims[cd].symbols() & b.names and dt is not None:
            family.access_rules(b, a, dims[cd], es, bound_tile(space, a.shape[cd]))
    return terms, numels


def _reuse(b: Builder, a) -> Expr:
    """Programs that load the same tile: a load no parallel parameter sizes is shared along that axis."""
    if a.kind != "load":
        return const(1)
    shared_by = []
    for p in b.spec.tiling_params:
        if p.role != Role.PARALLEL or p.name not in b.space.bound_values:
            continue
        if any(p.name in d.symbols() for d in a.shape):
            continue
        shared_by.append(cdiv(b.space.bound_values[p.name], b.value(p.name)))
    return product(shared_by) if shared_by else const(1)


def _dots(b: Builder, family, tile_numels: list[Expr]) -> list[DotTerm]:
    space, t = b.space, b.target
    out: list[DotTerm] = []
    for i, d in enumerate(b.spec.dots):
        m, n, k = (b.bind(x) if x is not None else None for x in (d.m, d.n, d.k))
        if m is None or n is None or k is None or any(space.unknown_symbols(x) for x in (m, n, k)):
            b.notes.append(f"tl.dot {d.node} has unknown extents; left out of the cost and capacity model")
            continue
        adt = resolve_dtype(d.a_dtype, space.dtypes, "fp16") or "fp16"
        bdt = resolve_dtype(d.b_dtype, space.dtypes, adt) or adt
        n_trips = trips(space, d.trips, d.in_loop, (d.m, d.n, d.k), b.notes, f"tl.dot {d.node}")
        out.append(DotTerm(const(2) * m * n * k, n_trips, adt, bool(d.in_loop), m, m * n))
        tile_numels.append(m * n)
        for label, ne in (("A", m * k), ("B", k * n), ("C", m * n)):
            if ne.symbols() & b.names:
                b.add(
                    Constraint.within(
                        f"numel:dot{i}.{label}", "numel", ne, t.max_tensor_numel,
                        f"tl.dot {label} tile {ne} <= {t.max_tensor_numel} elements (Triton's largest tensor)",
                        f"tl.dot {label} tile", unit="elements",
                    )
                )
        for label, dim in (("m", m), ("n", n), ("k", k)):
            # an extent derived from a tiling parameter (``BLOCK_M1 // FACTOR``) gets no domain
            # minimum from the analysis: bound it here, or a candidate makes a dot Triton refuses
            if dim.symbols() & b.names and dim.op != "sym":
                b.add(
                    Constraint(
                        f"dotmin:dot{i}.{label}", "fractal", Pred.ge(dim, const(DOT_MIN)),
                        f"tl.dot {label} = {dim} >= {DOT_MIN} (Triton refuses a smaller dot)", label="tl.dot extent",
                    )
                )
        family.dot_rules(b, i, m, n, k, adt, bdt)
    return out


def _footprint(b: Builder) -> dict[str, Expr]:
    fp = b.spec.footprint
    foot: dict[str, Expr] = {}
    if fp is None:
        if b.strict:
            b.notes.append("the analysis gave no footprint; capacity constraints are left out")
        return foot
    for key in ("live_bytes", "shared_bytes", "dot_operand_bytes", "accumulator_bytes", "unstaged_bytes"):
        if key == "unstaged_bytes" and fp.unstaged_bytes.is_const:
            continue  # every operand load pipelined: no term
        e = b.bind(getattr(fp, key))
        if e is not None:
            foot[key] = e
    aligned = {s: 1 for s in fp.shared_bytes.symbols() if s.startswith(ALIGN16_PREFIX)}
    if aligned and "shared_bytes" in foot:  # the figure as if every load were pipelined (the register estimate)
        e = b.bind(fp.shared_bytes.substitute(aligned))
        if e is not None:
            foot[PIPELINED_SHARED] = e
    return foot


def _static_asserts(b: Builder) -> None:
    space = b.space
    known = lambda n: n in b.names or n in space.env  # noqa: E731
    for i, text in enumerate(b.spec.static_asserts):
        pred, why = parse_condition(text, known)
        if pred is None:
            b.notes.append(f"tl.static_assert({text}) not modelled: {why}")
            continue
        b.add(Constraint(f"assert:{i}", "assert", _bind_pred(pred, space), f"tl.static_assert({text})"))


def _bind_pred(p: Pred, space: Space) -> Pred:
    if p.op == "bool":
        return p
    if p.op == "cmp":
        c, x, y = p.args
        return Pred("cmp", (c, _bind_term(x, space), _bind_term(y, space)))
    return Pred(p.op, tuple(_bind_pred(a, space) for a in p.args))


def _bind_term(t: TermLike, space: Space) -> TermLike:
    if isinstance(t, Expr):
        return space.bind(t)
    return Term(t.op, tuple(_bind_term(a, space) if isinstance(a, (Expr, Term)) else a for a in t.args))
