"""Symbolic shape and dtype propagation over a kernel body.

:class:`Interpreter` walks the statements of a ``@triton.jit`` function once,
in source order (loop bodies once, both branches of an ``if``), computing a
:class:`~tiletune.analysis.values.Val` for every expression.  As it goes it
records, in a :class:`Trace`:

* the evidence the classifier (:mod:`.classify`) needs: which constexprs size
  tiles and how (``tl.arange`` extents, ``tl.zeros``/``tl.full`` shapes,
  block shapes, reshape shapes, loop steps), which are multiplied by a
  ``tl.program_id``-derived value, which masks compare tile offsets against
  which runtime arguments, which loop bounds go with which steps;
* every memory access, ``tl.dot``, reduction / scan / transpose (the
  shared-memory scratch candidates), ``tl.static_assert``;
* the dataflow graph (:mod:`networkx`) and the live ranges of named tiles.

Nothing here raises on unfamiliar code: a construct it does not understand
gives an unknown value and a note.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

import libcst as cst
import networkx as nx

from .expr import NUM_STAGES, Expr, cdiv, const, emax, emin, sym
from .liveness import LiveRanges
from .model import KernelSpec, Shape, Span, shape_to_json
from .values import (
    NONE,
    TL_DTYPES,
    UNKNOWN,
    Val,
    align_dims,
    broadcast_shapes,
    is_float,
    promote,
    shape_bytes,
)

__all__ = ["GAP_KINDS", "Interpreter", "Trace", "AccessRec", "DotRec", "ScratchRec", "LoopRec", "node_text"]

EMPTY: frozenset = frozenset()

#: What :meth:`Interpreter.gap` records: the ways the analysis can be incomplete.
GAP_KINDS = ("unknown op", "unknown access shape", "unknown dot extent", "unresolved helper")

#: Internal symbol of ``tl.program_id(axis)`` (never leaves this module: see :func:`public_expr`).
PID_PREFIX = "__pid_"


def public_expr(e: Optional[Expr]) -> Optional[Expr]:
    """``e`` if it mentions no program id, else None."""
    if e is None or any(s.startswith(PID_PREFIX) for s in e.symbols()):
        return None
    return e


# --------------------------------------------------------------------------
# trace records
# --------------------------------------------------------------------------
@dataclass
class AccessRec:
    """A load/store/atomic as the interpreter saw it."""

    node: str
    kind: str
    span: Span
    pointer: Optional[str]
    shape: Shape
    dtype: Optional[str]
    in_loop: bool
    trips: Optional[Expr]
    contiguous_dim: Optional[int]
    block_ptr: bool
    loop: Optional[int] = None  # index into Trace.loops of the innermost loop
    feeds_dot: bool = False
    value_dtype: Optional[str] = None  # dtype of the stored value / loaded result
    scalar: bool = False


@dataclass
class DotRec:
    """A ``tl.dot`` as the interpreter saw it."""

    node: str
    span: Span
    a: Val
    b: Val
    acc: Optional[Val]
    m: Optional[Expr]
    n: Optional[Expr]
    k: Optional[Expr]
    out_dtype: Optional[str]
    in_loop: bool
    trips: Optional[Expr]
    loop: Optional[int] = None


@dataclass
class ScratchRec:
    """An operation that may need shared-memory scratch (reduce, scan, trans, ...)."""

    kind: str  # "reduce", "scan", "trans", "reshape", "join", "split", "histogram", "gather", "sort",
    # "broadcast" (a loaded 1-D tile expanded to 2-D), "store_acc" (a dot result stored), "store_reduced"
    node: str
    shape: Shape  # input shape (the stored value's for store_*)
    dtype: Optional[str]
    axis: Optional[int]
    line: int
    in_loop: bool
    rows: Optional[Expr] = None  # store_acc: the dot's M


@dataclass
class LoopRec:
    """A ``for``/``while`` loop."""

    line: int
    trips: Optional[Expr]  # of this loop alone
    total_trips: Optional[Expr]  # product with the enclosing loops
    parent: Optional[int]
    num_stages: Optional[Expr] = None  # tl.range(..., num_stages=...)


@dataclass
class Trace:
    """What :class:`Interpreter` found (see the module docstring)."""

    tile_uses: dict[str, list[str]] = field(default_factory=dict)  # constexpr -> reasons it sizes a tile
    pow2: set[str] = field(default_factory=set)
    reduction_steps: list[tuple[str, frozenset, int, str]] = field(default_factory=list)  # (param, bound params, line, how)
    grid_strides: list[tuple[str, int]] = field(default_factory=list)
    pid_mults: list[tuple[str, frozenset, int]] = field(default_factory=list)  # (param, axes, line)
    binds: list[tuple[frozenset, frozenset, int, str]] = field(default_factory=list)  # (tile params, other params, line, text)
    pointer_uses: dict[str, str] = field(default_factory=dict)  # param -> first reason
    dot_dims: dict[str, int] = field(default_factory=dict)  # param -> line
    accesses: list[AccessRec] = field(default_factory=list)
    dots: list[DotRec] = field(default_factory=list)
    scratch: list[ScratchRec] = field(default_factory=list)
    loops: list[LoopRec] = field(default_factory=list)
    static_asserts: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    gaps: list[tuple[str, str]] = field(default_factory=list)  # (kind, "line N: text"): where the analysis gave up
    graph: nx.DiGraph = field(default_factory=nx.DiGraph)
    live: LiveRanges = field(default_factory=LiveRanges)


# --------------------------------------------------------------------------
# cheap source text for labels and messages
# --------------------------------------------------------------------------
_BINOP_TEXT = {
    cst.Add: "+",
    cst.Subtract: "-",
    cst.Multiply: "*",
    cst.Divide: "/",
    cst.FloorDivide: "//",
    cst.Modulo: "%",
    cst.Power: "**",
    cst.BitAnd: "&",
    cst.BitOr: "|",
    cst.BitXor: "^",
    cst.LeftShift: "<<",
    cst.RightShift: ">>",
    cst.MatrixMultiply: "@",
}
_CMP_TEXT = {
    cst.LessThan: "<",
    cst.LessThanEqual: "<=",
    cst.GreaterThan: ">",
    cst.GreaterThanEqual: ">=",
    cst.Equal: "==",
    cst.NotEqual: "!=",
    cst.Is: "is",
    cst.IsNot: "is not",
    cst.In: "in",
    cst.NotIn: "not in",
}
_EMPTY_MODULE = cst.Module(body=[])


def node_text(node: cst.CSTNode, limit: int = 60) -> str:
    """Source text of an expression, rebuilt cheaply and shortened to ``limit`` characters."""
    text = _text(node, 4)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


def _text(node: cst.CSTNode, depth: int) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, (cst.Integer, cst.Float)):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_text(node.value, depth)}.{node.attr.value}"
    if depth <= 0:
        return "..."
    if isinstance(node, cst.Call):
        args = ", ".join(
            (f"{a.keyword.value}=" if a.keyword else "") + _text(a.value, depth - 1) for a in node.args
        )
        return f"{_text(node.func, depth)}({args})"
    if isinstance(node, cst.BinaryOperation):
        op = _BINOP_TEXT.get(type(node.operator), "?")
        return f"{_text(node.left, depth - 1)} {op} {_text(node.right, depth - 1)}"
    if isinstance(node, cst.Comparison):
        out = _text(node.left, depth - 1)
        for c in node.comparisons:
            out += f" {_CMP_TEXT.get(type(c.operator), '?')} {_text(c.comparator, depth - 1)}"
        return out
    if isinstance(node, cst.Subscript):
        parts = []
        for el in node.slice:
            s = el.slice
            if isinstance(s, cst.Index):
                parts.append(_text(s.value, depth - 1))
            else:
                parts.append(":")
        return f"{_text(node.value, depth)}[{', '.join(parts)}]"
    if isinstance(node, (cst.Tuple, cst.List)):
        inner = ", ".join(_text(e.value, depth - 1) for e in node.elements)
        return f"({inner})" if isinstance(node, cst.Tuple) else f"[{inner}]"
    if isinstance(node, cst.UnaryOperation):
        op = {cst.Minus: "-", cst.Plus: "+", cst.BitInvert: "~", cst.Not: "not "}.get(type(node.operator), "")
        return op + _text(node.expression, depth - 1)
    if isinstance(node, cst.BooleanOperation):
        op = "and" if isinstance(node.operator, cst.And) else "or"
        return f"{_text(node.left, depth - 1)} {op} {_text(node.right, depth - 1)}"
    if isinstance(node, cst.SimpleString):
        return node.value
    try:
        return _EMPTY_MODULE.code_for_node(node)
    except Exception:  # pragma: no cover - defensive
        return type(node).__name__


def dotted_name(node: cst.CSTNode) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def _root_name(node: cst.CSTNode) -> Optional[str]:
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


# --------------------------------------------------------------------------
# operation tables
# --------------------------------------------------------------------------
_TL_ROOTS = {"tl", "triton", "language", "libdevice", "math", "tle", "core"}

#: Positional parameter names of the tl functions handled here.
SIGS: dict[str, tuple[str, ...]] = {
    "arange": ("start", "end"),
    "zeros": ("shape", "dtype"),
    "full": ("shape", "value", "dtype"),
    "zeros_like": ("input", "dtype"),
    "load": ("pointer", "mask", "other", "boundary_check", "padding_option", "cache_modifier", "eviction_policy", "volatile"),
    "store": ("pointer", "value", "mask", "boundary_check", "cache_modifier", "eviction_policy"),
    "atomic_cas": ("pointer", "cmp", "val", "sem", "scope"),
    "dot": ("input", "other", "acc", "input_precision", "allow_tf32", "max_num_imprecise_acc", "out_dtype"),
    "sum": ("input", "axis", "keep_dims", "dtype"),
    "max": ("input", "axis", "return_indices", "return_indices_tie_break_left", "keep_dims"),
    "min": ("input", "axis", "return_indices", "return_indices_tie_break_left", "keep_dims"),
    "argmax": ("input", "axis", "tie_break_left", "keep_dims"),
    "argmin": ("input", "axis", "tie_break_left", "keep_dims"),
    "xor_sum": ("input", "axis", "keep_dims"),
    "reduce": ("input", "axis", "combine_fn", "keep_dims"),
    "reduce_or": ("input", "axis", "keep_dims"),
    "cumsum": ("input", "axis", "reverse"),
    "cumprod": ("input", "axis", "reverse"),
    "associative_scan": ("input", "axis", "combine_fn", "reverse"),
    "where": ("condition", "x", "y"),
    "maximum": ("x", "y", "propagate_nan"),
    "minimum": ("x", "y", "propagate_nan"),
    "clamp": ("x", "min", "max", "propagate_nan"),
    "expand_dims": ("input", "axis"),
    "join": ("a", "b"),
    "split": ("a",),
    "interleave": ("a", "b"),
    "ravel": ("x", "can_reorder"),
    "flip": ("x", "dim"),
    "sort": ("x", "dim", "descending"),
    "gather": ("src", "index", "axis"),
    "histogram": ("input", "num_bins", "mask"),
    "broadcast": ("input", "other"),
    "make_block_ptr": ("base", "shape", "strides", "offsets", "block_shape", "order"),
    "advance": ("base", "offsets"),
    "make_tensor_descriptor": ("base", "shape", "strides", "block_shape"),
    "program_id": ("axis",),
    "num_programs": ("axis",),
    "cdiv": ("x", "div"),
    "cast": ("input", "dtype", "fp_downcast_rounding", "bitcast"),
    "to": ("input", "dtype", "fp_downcast_rounding", "bitcast"),
    "multiple_of": ("input", "values"),
    "max_contiguous": ("input", "values"),
    "max_constancy": ("input", "values"),
    "static_assert": ("cond", "msg"),
    "rand": ("seed", "offset"),
    "randn": ("seed", "offset"),
    "randint": ("seed", "offset"),
    "randint4x": ("seed", "offset"),
    "inline_asm_elementwise": ("asm", "constraints", "args", "dtype", "is_pure", "pack"),
    "fma": ("x", "y", "z"),
    "umulhi": ("x", "y"),
    "fdiv": ("x", "y", "ieee_rounding"),
    "div_rn": ("x", "y"),
    "softmax": ("x", "ieee_rounding"),
}
for _a in ("atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor", "atomic_xchg"):
    SIGS[_a] = ("pointer", "val", "mask", "sem", "scope")

_VARARG_SHAPE_OPS = {"reshape", "view", "broadcast_to", "trans", "permute"}

_PASS_THROUGH = {"multiple_of", "max_contiguous", "max_constancy", "constexpr"}
_NO_VALUE = {
    "device_assert",
    "static_print",
    "device_print",
    "debug_barrier",
    "assume",
    "print",
    "static_assert",
}
_REDUCTIONS = {"sum", "max", "min", "argmax", "argmin", "xor_sum", "reduce", "reduce_or"}
_SCANS = {"cumsum", "cumprod", "associative_scan"}
_BOOL_MATH = {"isnan", "isinf", "signbit", "isfinited", "finitef", "isfinite"}
_INT_KEEP_MATH = {"abs", "floor", "ceil", "trunc", "round", "rint", "umulhi"}

#: tl functions that are elementwise on their (tile) arguments.
ELEMENTWISE = {
    "exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sqrt", "sqrt_rn", "rsqrt", "sin", "cos", "tan",
    "tanh", "sinh", "cosh", "asin", "acos", "atan", "atan2", "asinh", "acosh", "atanh", "abs", "sigmoid",
    "erf", "erfc", "floor", "ceil", "trunc", "round", "rint", "nearbyint", "pow", "fmod", "copysign",
    "fast_expf", "fast_exp", "fast_logf", "fast_dividef", "fast_tanhf", "fast_powf", "fma", "umulhi",
    "fdiv", "div_rn", "cbrt", "hypot", "isnan", "isinf", "signbit", "maximum", "minimum", "clamp", "softmax",
    "exp10", "rcp", "rcp_rn", "fmax", "fmin", "llrint", "neg", "square",
}


def _is_one(e: Optional[Expr]) -> bool:
    return e is not None and e.is_const and e.value == 1


# --------------------------------------------------------------------------
# the interpreter
# --------------------------------------------------------------------------
class Interpreter:
    """Abstract interpretation of one kernel body (see the module docstring).

    ``helpers`` optionally maps names of other ``@triton.jit`` functions of
    the module to their definitions; calls to them are then followed
    (inlined, one level of the call stack at a time).
    """

    MAX_INLINE_DEPTH = 4

    def __init__(
        self,
        spec: KernelSpec,
        positions: Mapping[cst.CSTNode, Any],
        module_constants: Mapping[str, int],
        helpers: Optional[Mapping[str, cst.FunctionDef]] = None,
    ) -> None:
        self.spec = spec
        self.positions = positions
        self.module_constants = module_constants
        self.helpers = helpers or {}
        self.trace = Trace()
        self.graph = self.trace.graph
        self.live = self.trace.live
        self.params = {p.name: p for p in spec.params}
        self.constexprs = {p.name for p in spec.params if p.constexpr}
        self.env: dict[str, Val] = {}
        self.loop_stack: list[int] = []  # indices into trace.loops
        self._counter = 0
        self._stmt_temps: dict[str, Expr] = {}
        self._inline_depth = 0
        self._return: Optional[list[Val]] = None
        self._note_set: set[str] = set()
        self._gap_set: set[tuple[str, str]] = set()

    # ----- public -----------------------------------------------------------
    def run(self, func: cst.FunctionDef) -> Trace:
        """Interpret ``func``'s body and return the trace."""
        for p in self.spec.params:
            node_id = f"param:{p.name}"
            self.graph.add_node(node_id, kind="param", label=p.name, shape=[], dtype=None, line=p.span.line)
            v = Val(
                shape=(),
                expr=sym(p.name) if p.name.isidentifier() else None,
                node=node_id,
                weak=True,
                params=frozenset((p.name,)),
                ptrs=EMPTY if p.constexpr else frozenset((p.name,)),
            )
            self.env[p.name] = v
        self.block(func.body)
        return self.trace

    # ----- helpers ---------------------------------------------------------
    def line(self, node: cst.CSTNode) -> int:
        r = self.positions.get(node)
        return r.start.line if r is not None else 0

    def span(self, node: cst.CSTNode) -> Span:
        r = self.positions.get(node)
        if r is None:
            return Span(0, 0, 0, 0)
        return Span(r.start.line, r.start.column, r.end.line, r.end.column)

    def note(self, node: cst.CSTNode, text: str) -> None:
        msg = f"line {self.line(node)}: {text}"
        if msg not in self._note_set:
            self._note_set.add(msg)
            self.trace.notes.append(msg)

    def gap(self, node: cst.CSTNode, kind: str, text: str) -> None:
        """Record that the analysis gave up at ``node``: a note, and ``(kind, note)`` in ``trace.gaps``.

        ``kind`` is one of :data:`GAP_KINDS`; the front end turns the gaps into
        :attr:`KernelSpec.incomplete`.  Every place that gives up calls this.
        """
        if kind not in GAP_KINDS:
            raise ValueError(f"gap kind {kind!r} is not one of {GAP_KINDS}")
        msg = f"line {self.line(node)}: {text}"
        self.note(node, text)
        if (kind, msg) not in self._gap_set:
            self._gap_set.add((kind, msg))
            self.trace.gaps.append((kind, msg))

    def add_node(self, kind: str, cst_node: cst.CSTNode, shape: Shape, dtype: Optional[str], inputs: Iterable[Val]) -> str:
        self._counter += 1
        nid = f"n{self._counter}"
        self.graph.add_node(
            nid,
            kind=kind,
            label=node_text(cst_node),
            shape=shape_to_json(shape),
            dtype=dtype,
            line=self.line(cst_node),
        )
        for v in inputs:
            if v is not None and v.node is not None:
                self.graph.add_edge(v.node, nid)
            elif v is not None and v.kind == "tuple":
                for it in v.items:
                    if it.node is not None:
                        self.graph.add_edge(it.node, nid)
        return nid

    def tile_use(self, param: str, reason: str) -> None:
        self.trace.tile_uses.setdefault(param, [])
        if reason not in self.trace.tile_uses[param]:
            self.trace.tile_uses[param].append(reason)

    def constexpr_syms(self, v: Val) -> list[str]:
        """Constexpr parameters an integer value mentions (by its expression, else its taint)."""
        names = v.expr.symbols() if v.expr is not None else v.params
        return sorted(n for n in names if n in self.constexprs)

    def in_loop(self) -> bool:
        return bool(self.loop_stack)

    def total_trips(self) -> Optional[Expr]:
        if not self.loop_stack:
            return const(1)
        return self.trace.loops[self.loop_stack[-1]].total_trips

    def choose_pointer(self, v: Val) -> Optional[str]:
        cands = [n for n in v.ptrs if n in self.params and n not in self.constexprs]
        if not cands:
            return None
        known = [n for n in cands if n in self.trace.pointer_uses]
        ptrish = [n for n in cands if "ptr" in n.lower()]
        pool = known or ptrish or cands
        return min(pool, key=lambda n: self.params[n].index)

    def mark_pointer(self, name: Optional[str], reason: str) -> None:
        if name is not None and name not in self.trace.pointer_uses:
            self.trace.pointer_uses[name] = reason

    # ----- statements ------------------------------------------------------
    def block(self, body: Any) -> None:
        stmts = body.body if isinstance(body, (cst.IndentedBlock, cst.SimpleStatementSuite)) else body
        for stmt in stmts:
            self.statement(stmt)

    def statement(self, stmt: cst.CSTNode) -> None:
        try:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    self.simple(small)
            elif isinstance(stmt, cst.If):
                self.if_stmt(stmt)
            elif isinstance(stmt, cst.For):
                self.for_stmt(stmt)
            elif isinstance(stmt, cst.While):
                self.while_stmt(stmt)
            elif isinstance(stmt, cst.With):
                self.block(stmt.body)
            elif isinstance(stmt, cst.Try):
                self.block(stmt.body)
            elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                pass
            elif isinstance(stmt, (cst.IndentedBlock, cst.SimpleStatementSuite)):
                self.block(stmt)
        except RecursionError:
            self.gap(stmt, "unknown op", "statement too deeply nested to analyse")
        except Exception as exc:  # never let one statement sink the kernel
            self.gap(stmt, "unknown op", f"analysis error ({type(exc).__name__}: {exc})")

    def simple(self, small: cst.CSTNode) -> None:
        self.live.tick()
        self._stmt_temps = {}
        if isinstance(small, cst.Assign):
            v = self.ev(small.value)
            for t in small.targets:
                self.assign(t.target, v)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self.assign(small.target, self.ev(small.value))
        elif isinstance(small, cst.AugAssign):
            self.aug_assign(small)
        elif isinstance(small, cst.Expr):
            self.ev(small.value)
        elif isinstance(small, cst.Return):
            if small.value is not None:
                v = self.ev(small.value)
                if self._return is not None:
                    self._return.append(v)
        elif isinstance(small, cst.Assert):
            self.ev(small.test)
        for nbytes in self._stmt_temps.values():
            self.live.temp(nbytes)
        self._stmt_temps = {}

    def _live_bytes(self, v: Val) -> Optional[Expr]:
        if v.kind != "value" or not v.shape or v.pointer:
            return None
        b = shape_bytes(v.shape, v.dtype)
        if b is None:
            return None
        if v.node is not None and self.in_loop() and self.graph.nodes[v.node].get("kind") == "load":
            b = b * sym(NUM_STAGES)
        return b

    def assign(self, target: cst.CSTNode, v: Val, augmented: bool = False) -> None:
        if isinstance(target, cst.Name):
            self.env[target.value] = v
            if v.node is not None:
                self._stmt_temps.pop(v.node, None)
            self.live.define(target.value, self._live_bytes(v), augmented)
        elif isinstance(target, (cst.Tuple, cst.List)):
            elems = [e.value for e in target.elements]
            if v.kind == "tuple" and len(v.items) == len(elems):
                for t, it in zip(elems, v.items):
                    self.assign(t, it)
            else:
                for t in elems:
                    if isinstance(t, cst.StarredElement):
                        t = t.value
                    self.assign(t, UNKNOWN)
        else:
            # attribute / subscript targets: evaluate for side effects only
            pass

    def aug_assign(self, node: cst.AugAssign) -> None:
        rhs = self.ev(node.value)
        if isinstance(node.target, cst.Name):
            name = node.target.value
            self.live.use(name)
            cur = self.env.get(name, UNKNOWN)
            op = type(node.operator).__name__.replace("Assign", "")
            # ``acc += tl.dot(a, b)`` accumulates in place: the dot result is the accumulator
            if rhs.node is not None and self.graph.nodes[rhs.node].get("kind") == "dot":
                self._stmt_temps.pop(rhs.node, None)
            v = self.binop(_AUG_OPS.get(op, "?"), cur, rhs, node)
            self.assign(node.target, v, augmented=True)
        else:
            self.ev(node.target)

    def if_stmt(self, node: cst.If) -> None:
        self.ev(node.test)
        before = dict(self.env)
        snap = self.live.snapshot()
        self.block(node.body)
        after_body = self.env
        body_snap = self.live.snapshot()
        self.env = dict(before)
        self.live.restore(snap)
        orelse = node.orelse
        if isinstance(orelse, cst.If):
            self.if_stmt(orelse)
        elif isinstance(orelse, cst.Else):
            self.block(orelse.body)
        self.live.merge(body_snap)
        self.env = join_envs(after_body, self.env)

    def while_stmt(self, node: cst.While) -> None:
        self.live.tick()
        self.ev(node.test)
        self._push_loop(node, None)
        try:
            self.block(node.body)
        finally:
            self._pop_loop()

    def _push_loop(self, node: cst.CSTNode, trips: Optional[Expr], num_stages: Optional[Expr] = None) -> None:
        outer = self.total_trips()
        total_ = None if (trips is None or outer is None) else outer * trips
        parent = self.loop_stack[-1] if self.loop_stack else None
        self.trace.loops.append(LoopRec(self.line(node), trips, total_, parent, num_stages))
        self.loop_stack.append(len(self.trace.loops) - 1)
        self.live.enter_loop()

    def _pop_loop(self) -> None:
        self.loop_stack.pop()
        self.live.exit_loop()

    def for_stmt(self, node: cst.For) -> None:
        self.live.tick()
        it = node.iter
        trips: Optional[Expr] = None
        stages: Optional[Expr] = None
        target_val = UNKNOWN
        q = dotted_name(it.func) if isinstance(it, cst.Call) else None
        if q is not None and q.split(".")[-1] in ("range", "static_range") and (q == "range" or _root_name(it.func) in _TL_ROOTS):
            pos = [self.ev(a.value) for a in it.args if a.keyword is None and not a.star]
            kws = {a.keyword.value: self.ev(a.value) for a in it.args if a.keyword is not None}
            if "num_stages" in kws:
                stages = kws["num_stages"].expr
            zero, one = Val(expr=const(0), weak=True), Val(expr=const(1), weak=True)
            if len(pos) == 1:
                start, end, step = zero, pos[0], one
            elif len(pos) >= 2:
                start, end = pos[0], pos[1]
                step = pos[2] if len(pos) > 2 else one
            else:
                start, end, step = zero, UNKNOWN, one
            if start.expr is not None and end.expr is not None and step.expr is not None:
                # a start that depends on the program id counts from 0: the largest trip count
                first = start.expr.substitute({s: 0 for s in start.expr.symbols() if s.startswith(PID_PREFIX)})
                trips = public_expr(cdiv(end.expr - first, step.expr))
            self._loop_evidence(node, start, end, step)
            target_val = Val(
                shape=(),
                dtype="int32",
                params=start.params | end.params | step.params,
                pids=start.pids | step.pids,
            )
        else:
            iv = self.ev(it)
            if iv.kind == "tuple" and iv.items:
                target_val = iv.items[0]
                trips = const(len(iv.items))
            else:
                self.gap(it, "unknown op", f"loop over {node_text(it)} not understood")
        self._push_loop(node, trips, stages)
        try:
            self.assign(node.target, target_val)
            self.block(node.body)
        finally:
            self._pop_loop()
        if node.orelse is not None:
            self.block(node.orelse.body)

    def _loop_evidence(self, node: cst.For, start: Val, end: Val, step: Val) -> None:
        """Loop steps and trip-count divisors are reduction-axis candidates.

        A step that is a single constexpr (``range(0, K, BLOCK_K)``) sizes a tile by
        itself, unless the loop starts at a program-id-derived value (a grid-stride
        loop: its step, like ``NUM_SMS``, is not a tile size).  Constexprs in a
        product step (``BLOCK_K * SPLIT_K``) or in the divisor of the trip count
        (``range(0, tl.cdiv(K, BLOCK_K))``) only give a role to parameters that
        size tiles elsewhere.
        """
        line = self.line(node)
        grid_stride = bool(start.pids)
        bound_params = end.params
        step_syms = self.constexpr_syms(step)
        for p in step_syms:
            if grid_stride:
                self.trace.grid_strides.append((p, line))
            if len(step_syms) == 1 and not grid_stride:
                self.tile_use(p, f"loop step at line {line}")
            self.trace.reduction_steps.append((p, bound_params, line, "loop step"))
        e = end.expr
        if e is not None and e.op in ("cdiv", "floordiv") and not grid_stride:
            for p in sorted(e.args[1].symbols()):
                if p in self.constexprs:
                    self.trace.reduction_steps.append((p, bound_params, line, "trip-count divisor"))

    # ----- expressions -----------------------------------------------------
    def ev(self, node: cst.CSTNode) -> Val:
        fn = self._dispatch.get(type(node))
        if fn is None:
            self.gap(node, "unknown op", f"expression {node_text(node)} not understood")
            return UNKNOWN
        return fn(self, node)

    def ev_name(self, node: cst.Name) -> Val:
        name = node.value
        v = self.env.get(name)
        if v is not None:
            self.live.use(name)
            return v
        if name in self.module_constants:
            c = self.module_constants[name]
            if isinstance(c, bool) or not isinstance(c, int):
                return Val(shape=(), weak=True, literal=c)
            return Val(shape=(), expr=const(c), dtype="int32", weak=True, literal=c)
        if name == "True" or name == "False":
            return Val(shape=(), expr=const(int(name == "True")), dtype="int1", weak=True, literal=name == "True")
        if name == "None":
            return NONE
        # a module global (a float constant, a helper function, ...)
        return Val(shape=(), weak=True)

    def ev_integer(self, node: cst.Integer) -> Val:
        try:
            value = int(node.value, 0)
        except ValueError:
            value = int(node.value.replace("_", ""))
        return Val(shape=(), expr=const(value), dtype="int32", weak=True, literal=value)

    def ev_float(self, node: cst.Float) -> Val:
        try:
            value = float(node.value)
        except ValueError:
            value = None
        return Val(shape=(), dtype="fp32", weak=True, literal=value)

    def ev_string(self, node: cst.CSTNode) -> Val:
        value = node.evaluated_value if isinstance(node, cst.SimpleString) else None
        return Val(kind="other", shape=None, literal=value)

    def ev_tuple(self, node: cst.CSTNode) -> Val:
        items = []
        for el in node.elements:
            if isinstance(el, cst.StarredElement):
                inner = self.ev(el.value)
                if inner.kind == "tuple":
                    items.extend(inner.items)
                else:
                    return Val(kind="tuple", shape=None)
            else:
                items.append(self.ev(el.value))
        return Val(kind="tuple", shape=None, items=tuple(items))

    def ev_paren(self, node: cst.CSTNode) -> Val:  # pragma: no cover - libcst keeps parens on nodes
        return self.ev(node.value)

    def ev_ellipsis(self, node: cst.CSTNode) -> Val:
        return Val(kind="other", shape=None, literal=Ellipsis)

    def ev_ifexp(self, node: cst.IfExp) -> Val:
        self.ev(node.test)
        return join_vals(self.ev(node.body), self.ev(node.orelse))

    def ev_unary(self, node: cst.UnaryOperation) -> Val:
        v = self.ev(node.expression)
        if v.kind != "value":
            return UNKNOWN
        if isinstance(node.operator, cst.Minus):
            lit = -v.literal if isinstance(v.literal, (int, float)) and not isinstance(v.literal, bool) else None
            return v.with_(expr=None if v.expr is None else const(-1) * v.expr, ptrs=EMPTY, unit=EMPTY, literal=lit)
        if isinstance(node.operator, cst.Plus):
            return v
        if isinstance(node.operator, cst.Not):
            return v.with_(expr=None, dtype="int1", ptrs=EMPTY, literal=None)
        return v.with_(expr=None, ptrs=EMPTY, unit=EMPTY, literal=None)

    def ev_boolop(self, node: cst.BooleanOperation) -> Val:
        a, b = self.ev(node.left), self.ev(node.right)
        shape = broadcast_shapes([a.shape, b.shape]) if a.kind == b.kind == "value" else None
        return Val(shape=shape, dtype="int1", params=a.params | b.params, pids=a.pids | b.pids)

    def ev_binop(self, node: cst.BinaryOperation) -> Val:
        a = self.ev(node.left)
        b = self.ev(node.right)
        return self.binop(_BINOP_TEXT.get(type(node.operator), "?"), a, b, node)

    def binop(self, op: str, a: Val, b: Val, node: cst.CSTNode) -> Val:
        if a.kind == "tuple" and b.kind == "tuple" and op == "+":
            return Val(kind="tuple", shape=None, items=a.items + b.items)
        if a.kind != "value" or b.kind != "value":
            if a.kind in ("blockptr", "desc") or b.kind in ("blockptr", "desc"):
                self.gap(node, "unknown op", f"arithmetic on a block pointer: {node_text(node)}")
            return UNKNOWN.with_(params=a.params | b.params)
        shape = broadcast_shapes([a.shape, b.shape])
        rank = len(shape) if shape is not None else 0
        ua = align_dims(a.unit, len(a.shape or ()), rank)
        ub = align_dims(b.unit, len(b.shape or ()), rank)
        va = align_dims(a.varying, len(a.shape or ()), rank)
        vb = align_dims(b.varying, len(b.shape or ()), rank)
        varying = va | vb
        expr = None
        unit: frozenset = EMPTY
        ptrs: frozenset = EMPTY
        pointer = False
        dtype = promote(a, b)
        ea, eb = a.expr, b.expr
        if op == "+":
            unit = ua | ub
            ptrs = a.ptrs | b.ptrs
            pointer = a.pointer or b.pointer
            if ea is not None and eb is not None:
                expr = ea + eb
        elif op == "-":
            unit = ua | ub
            ptrs = a.ptrs
            pointer = a.pointer and not b.pointer
            if ea is not None and eb is not None:
                expr = ea - eb
        elif op == "*":
            if a.shape == () and _is_one(a.expr):
                unit = ub
            elif b.shape == () and _is_one(b.expr):
                unit = ua
            if ea is not None and eb is not None:
                expr = ea * eb
            self._pid_mult(a, b, node)
            self._pid_mult(b, a, node)
        elif op == "//":
            if ea is not None and eb is not None:
                expr = ea // eb
        elif op == "%":
            unit = ua
            self._bind(a, b, node)
        elif op == "<<":
            if ea is not None and eb is not None and eb.is_const and 0 <= eb.value < 63:
                expr = ea * (1 << eb.value)
        elif op == "/":
            if dtype is None or not is_float(dtype):
                dtype = "fp32" if (a.dtype or b.dtype) is not None else None
        lit = None
        if isinstance(a.literal, (int, float)) and isinstance(b.literal, (int, float)):
            lit = _fold(op, a.literal, b.literal)
        out = Val(
            shape=shape,
            dtype=dtype,
            expr=expr,
            weak=a.weak and b.weak,
            params=a.params | b.params,
            tiles=a.tiles | b.tiles,
            pids=a.pids | b.pids,
            ptrs=ptrs,
            unit=unit,
            varying=varying,
            loads=a.loads | b.loads,
            accs=a.accs | b.accs,
            reduced=(a.reduced and a.shape == shape) or (b.reduced and b.shape == shape),
            pointer=pointer,
            literal=lit,
        )
        if a.node is not None or b.node is not None or (shape is not None and shape != ()):
            out = out.with_(node=self.add_node("elementwise", node, shape, dtype, (a, b)))
        return out

    def _pid_mult(self, a: Val, b: Val, node: cst.CSTNode) -> None:
        """``pid * BLOCK``: ``a`` derives from program_id, ``b`` is a constexpr scalar."""
        if a.pids and not b.pids and a.shape == () and b.shape == ():
            for p in self.constexpr_syms(b):
                self.trace.pid_mults.append((p, a.pids, self.line(node)))

    def _bind(self, a: Val, b: Val, node: cst.CSTNode) -> None:
        """A comparison / modulo of tile offsets ``a`` against a bound ``b``."""
        if a.tiles and not b.tiles and b.params:
            self.trace.binds.append((a.tiles, b.params, self.line(node), node_text(node)))

    def ev_compare(self, node: cst.Comparison) -> Val:
        left = self.ev(node.left)
        out: Optional[Val] = None
        for c in node.comparisons:
            right = self.ev(c.comparator)
            if left.kind == "value" and right.kind == "value":
                self._bind(left, right, node)
                self._bind(right, left, node)
                shape = broadcast_shapes([left.shape, right.shape])
                v = Val(
                    shape=shape,
                    dtype="int1",
                    params=left.params | right.params,
                    tiles=left.tiles | right.tiles,
                    pids=left.pids | right.pids,
                    loads=left.loads | right.loads,
                )
                if left.node is not None or right.node is not None or shape:
                    v = v.with_(node=self.add_node("elementwise", node, shape, "int1", (left, right)))
            else:
                v = Val(shape=(), dtype="int1")
            out = v if out is None else self.binop("&", out, v, node)
            left = right
        return out if out is not None else UNKNOWN

    def ev_subscript(self, node: cst.Subscript) -> Val:
        base = self.ev(node.value)
        idx = []
        for el in node.slice:
            s = el.slice
            if isinstance(s, cst.Index):
                idx.append(self.ev(s.value))
            else:
                for part in (s.lower, s.upper, s.step):
                    if part is not None:
                        self.ev(part)
                idx.append(Val(kind="slice", shape=None))
        if base.kind == "tuple":
            if len(idx) == 1 and idx[0].kind == "value" and isinstance(idx[0].literal, int):
                i = idx[0].literal
                if -len(base.items) <= i < len(base.items):
                    return base.items[i]
            if len(idx) == 1 and idx[0].kind == "slice" and isinstance(node.slice[0].slice, cst.Slice):
                s = node.slice[0].slice
                lo = self._int_literal(s.lower)
                hi = self._int_literal(s.upper)
                return Val(kind="tuple", shape=None, items=base.items[lo:hi])
            self.gap(node, "unknown op", f"tuple subscript {node_text(node)} not understood")
            return UNKNOWN
        if base.kind != "value":
            return UNKNOWN
        if base.shape is None:
            return UNKNOWN.with_(params=base.params, tiles=base.tiles, pids=base.pids, ptrs=base.ptrs, loads=base.loads)
        if base.shape == () and base.node is not None and base.node.startswith("param:") and any(i.kind in ("none", "slice") for i in idx):
            self.gap(node, "unknown access shape", f"parameter {base.node[6:]} is indexed as a tile (a helper called with tiles?); its shape is unknown")
            return UNKNOWN.with_(params=base.params, ptrs=base.ptrs)
        new_shape: list[Expr] = []
        dim_map: dict[int, int] = {}
        src = 0
        n_real = sum(1 for i in idx if not (i.kind == "none" or i.literal is Ellipsis))
        for i in idx:
            if i.kind == "none":
                new_shape.append(const(1))
            elif i.literal is Ellipsis:
                for _ in range(len(base.shape) - n_real):
                    dim_map[src] = len(new_shape)
                    new_shape.append(base.shape[src])
                    src += 1
            elif i.kind == "slice":
                if src >= len(base.shape):
                    self.gap(node, "unknown op", f"too many indices in {node_text(node)}")
                    return UNKNOWN
                dim_map[src] = len(new_shape)
                new_shape.append(base.shape[src])
                src += 1
            else:
                src += 1  # integer index drops the dimension
        while src < len(base.shape):
            dim_map[src] = len(new_shape)
            new_shape.append(base.shape[src])
            src += 1
        shape = tuple(new_shape)
        if base.loads and len(base.shape) == 1 and len(shape) > 1 and base.node is not None:
            self.trace.scratch.append(ScratchRec("broadcast", base.node, base.shape, base.dtype, None, self.line(node), self.in_loop()))
        out = base.with_(
            shape=shape,
            unit=frozenset(dim_map[d] for d in base.unit if d in dim_map),
            varying=frozenset(dim_map[d] for d in base.varying if d in dim_map),
            expr=base.expr if not shape else None,
        )
        if base.node is not None:
            out = out.with_(node=self.add_node("other", node, shape, base.dtype, (base,)))
        return out

    def _int_literal(self, node: Optional[cst.CSTNode]) -> Optional[int]:
        if node is None:
            return None
        v = self.ev(node)
        return v.literal if isinstance(v.literal, int) else None

    def ev_attribute(self, node: cst.Attribute) -> Val:
        root = _root_name(node)
        attr = node.attr.value
        if root is not None and root not in self.env:
            q = dotted_name(node)
            if attr in TL_DTYPES and _root_name(node) in _TL_ROOTS:
                return Val(kind="dtype", shape=None, dtype=TL_DTYPES[attr])
            return Val(shape=(), weak=True, literal=None, kind="other") if q else UNKNOWN
        base = self.ev(node.value)
        if attr == "T":
            return self.permute(base, None, node)
        if attr == "dtype":
            if base.kind == "value" and base.shape == () and base.ptrs and base.dtype is None:
                p = self.choose_pointer(base)
                if p is not None:
                    self.mark_pointer(p, f"{node_text(node)} at line {self.line(node)}")
                    return Val(kind="dtype", shape=None, dtype=f"ptr:{p}")
            if base.kind == "value" and base.pointer:
                p = self.choose_pointer(base)
                return Val(kind="dtype", shape=None, dtype=f"ptr:{p}" if p else None)
            return Val(kind="dtype", shape=None, dtype=base.dtype)
        if attr == "element_ty" and base.kind == "dtype":
            d = base.dtype
            return Val(kind="dtype", shape=None, dtype=f"elem:{d[4:]}" if d and d.startswith("ptr:") else None)
        if attr == "shape" and base.kind == "value" and base.shape is not None:
            return Val(kind="tuple", shape=None, items=tuple(Val(shape=(), expr=d, weak=True, dtype="int32") for d in base.shape))
        if attr in ("primitive_bitwidth", "itemsize"):
            return Val(shape=(), weak=True)
        return Val(kind="other", shape=None)

    def ev_call(self, node: cst.Call) -> Val:
        func = node.func
        if isinstance(func, cst.Attribute):
            root = _root_name(func)
            if root is not None and root in self.env or root is None:
                recv = self.ev(func.value)
                return self.method(recv, func.attr.value, node)
        q = dotted_name(func)
        if q is None:
            self._eval_args(node)
            self.gap(node, "unknown op", f"call {node_text(node)} not understood")
            return UNKNOWN
        parts = q.split(".")
        name = parts[-1]
        if len(parts) == 1:
            return self.bare_call(name, node)
        if parts[0] in _TL_ROOTS or "libdevice" in parts:
            return self.tl_call(name, node, parts)
        if q in self.helpers and self._inline_depth < self.MAX_INLINE_DEPTH:  # module.helper(...)
            return self.inline(self.helpers[q], node)
        self._eval_args(node)
        self.gap(node, "unresolved helper", f"call to {q} not followed (result unknown)")
        return UNKNOWN

    # ----- call plumbing ---------------------------------------------------
    def _eval_args(self, node: cst.Call, recv: Optional[Val] = None) -> tuple[list[Val], dict[str, Val]]:
        pos: list[Val] = [recv] if recv is not None else []
        kws: dict[str, Val] = {}
        for a in node.args:
            v = self.ev(a.value)
            if a.keyword is not None:
                kws[a.keyword.value] = v
            elif a.star == "*" and v.kind == "tuple":
                pos.extend(v.items)
            else:
                pos.append(v)
        return pos, kws

    @staticmethod
    def _bind_args(name: str, pos: list[Val], kws: dict[str, Val]) -> dict[str, Val]:
        sig = SIGS.get(name, ())
        out = dict(kws)
        for pname, v in zip(sig, pos):
            out.setdefault(pname, v)
        return out

    def method(self, recv: Val, name: str, node: cst.Call) -> Val:
        pos, kws = self._eval_args(node, recv)
        if recv.kind == "desc":
            return self.descriptor_op(recv, name, pos, kws, node)
        if name in ("load", "store") and recv.kind == "value" and recv.shape == () and recv.node is not None and recv.node.startswith("param:"):
            # a host-side tensor descriptor passed as an argument: block shape not in the source
            self.gap(node, "unknown access shape", f"{recv.node[6:]}.{name}: tensor descriptor built on the host, block shape unknown")
            desc = Val(kind="desc", shape=None, block_shape=None, base=recv.node[6:], node=recv.node)
            return self.descriptor_op(desc, name, pos, kws, node)
        if recv.kind not in ("value",):
            if recv.kind == "tuple" and name in ("index", "count"):
                return Val(shape=(), weak=True)
            self.gap(node, "unknown op", f"method {name} on a {recv.kind} not understood")
            return UNKNOWN
        if name in ("to", "cast"):
            return self.op_cast(self._bind_args("to", pos, kws), node)
        return self.apply(name, pos, kws, node)

    def bare_call(self, name: str, node: cst.Call) -> Val:
        if name in ("min", "max"):
            pos, _ = self._eval_args(node)
            return self.minmax_scalar(name, pos, node)
        if name in ("int", "float", "abs", "bool"):
            pos, _ = self._eval_args(node)
            if not pos:
                return UNKNOWN
            v = pos[0]
            if name == "float":
                lit = v.literal if isinstance(v.literal, (int, float)) else None
                if isinstance(v.literal, str):
                    try:
                        lit = float(v.literal)
                    except ValueError:
                        lit = None
                return Val(shape=v.shape if v.kind == "value" else (), dtype="fp32", weak=v.weak or v.kind != "value", literal=lit, node=v.node if v.kind == "value" else None)
            if name == "abs":
                return v.with_(expr=None)
            return v
        if name == "len":
            pos, _ = self._eval_args(node)
            if pos and pos[0].kind == "tuple":
                n = len(pos[0].items)
                return Val(shape=(), expr=const(n), weak=True, dtype="int32", literal=n)
            return Val(shape=(), weak=True)
        if name in ("print", "isinstance", "hasattr", "getattr"):
            self._eval_args(node)
            return Val(kind="other", shape=None)
        if name in ("range",):
            self._eval_args(node)
            return Val(kind="other", shape=None)
        if name in self.helpers and self._inline_depth < self.MAX_INLINE_DEPTH:
            return self.inline(self.helpers[name], node)
        if name in ELEMENTWISE:  # e.g. ``from triton.language.extra.libdevice import tanh``
            return self.tl_call(name, node, [name])
        pos, kws = self._eval_args(node)
        self.gap(node, "unresolved helper", f"call to helper {name}() not followed (result unknown)")
        return UNKNOWN

    def inline(self, fdef: cst.FunctionDef, node: cst.Call) -> Val:
        """Follow a call to another jit function: bind its parameters, interpret its body."""
        pos, kws = self._eval_args(node)
        saved_env, saved_ret = self.env, self._return
        env: dict[str, Val] = {}
        n_positional = len(fdef.params.params)
        params = list(fdef.params.params) + list(fdef.params.kwonly_params)
        for i, p in enumerate(params):
            pname = p.name.value
            if i < len(pos) and i < n_positional:
                env[pname] = pos[i]
            elif pname in kws:
                env[pname] = kws[pname]
            elif p.default is not None:
                self.env = env
                env[pname] = self.ev(p.default)
            else:
                env[pname] = UNKNOWN
        self.env = env
        self._return = []
        self._inline_depth += 1
        try:
            self.block(fdef.body)
            rets = self._return
        finally:
            self._inline_depth -= 1
            self.env, self._return = saved_env, saved_ret
        if not rets:
            return NONE
        out = rets[0]
        for r in rets[1:]:
            out = join_vals(out, r)
        return out

    def tl_call(self, name: str, node: cst.Call, parts: Sequence[str]) -> Val:
        if name == "static_assert":
            if node.args:
                self.trace.static_asserts.append(node_text(node.args[0].value, limit=200))
            self._eval_args(node)
            return NONE
        if name in _NO_VALUE:
            self._eval_args(node)
            return NONE
        if name in TL_DTYPES and name not in ELEMENTWISE:
            self._eval_args(node)
            return Val(kind="dtype", shape=None, dtype=TL_DTYPES[name])
        if name == "pointer_type":
            self._eval_args(node)
            return Val(kind="dtype", shape=None, dtype=None)
        pos, kws = self._eval_args(node)
        mathy = "libdevice" in parts or "math" in parts
        if mathy and name not in ELEMENTWISE and name not in SIGS:
            return self.elementwise(name, pos, node)
        return self.apply(name, pos, kws, node)

    # ----- tl operations ---------------------------------------------------
    def apply(self, name: str, pos: list[Val], kws: dict[str, Val], node: cst.Call) -> Val:
        handler = _HANDLERS.get(name)
        if handler is not None:
            return handler(self, self._bind_args(name, pos, kws), pos, kws, node)
        if name in _PASS_THROUGH:
            return pos[0] if pos else UNKNOWN
        if name in _REDUCTIONS:
            return self.op_reduce(name, self._bind_args(name, pos, kws), node)
        if name in _SCANS:
            return self.op_scan(name, self._bind_args(name, pos, kws), node)
        if name in _VARARG_SHAPE_OPS:
            return self.shape_op(name, pos, kws, node)
        if name in ELEMENTWISE:
            return self.elementwise(name, pos, node)
        if name.startswith("atomic_"):
            return self.op_store(self._bind_args(name, pos, kws), node, kind="atomic")
        self.gap(node, "unknown op", f"tl.{name} not understood (result unknown)")
        return UNKNOWN

    def elementwise(self, name: str, args: list[Val], node: cst.Call) -> Val:
        vals = [a for a in args if a.kind == "value"]
        if not vals:
            return UNKNOWN
        shape = broadcast_shapes([v.shape for v in vals])
        dtype = vals[0].dtype
        weak = vals[0].weak
        for v in vals[1:]:
            dtype = promote(Val(dtype=dtype, weak=weak), v)
            weak = weak and v.weak
        if name in _BOOL_MATH:
            dtype = "int1"
        elif dtype is not None and not is_float(dtype) and name not in _INT_KEEP_MATH and name not in ("maximum", "minimum", "clamp"):
            dtype = "fp32"
        rank = len(shape) if shape is not None else 0
        out = Val(
            shape=shape,
            dtype=dtype,
            weak=weak,
            params=frozenset().union(*(v.params for v in vals)),
            pids=frozenset().union(*(v.pids for v in vals)),
            tiles=frozenset().union(*(v.tiles for v in vals)) if name in ("maximum", "minimum", "clamp") else EMPTY,
            loads=frozenset().union(*(v.loads for v in vals)),
            accs=frozenset().union(*(v.accs for v in vals)),
            reduced=any(v.reduced and v.shape == shape for v in vals),
            varying=frozenset().union(*(align_dims(v.varying, len(v.shape or ()), rank) for v in vals)),
        )
        if name in ("maximum", "minimum") and shape == () and all(v.expr is not None for v in vals[:2]) and len(vals) >= 2:
            out = out.with_(expr=(emax if name == "maximum" else emin)(vals[0].expr, vals[1].expr))
        if any(v.node is not None for v in vals) or shape:
            out = out.with_(node=self.add_node("elementwise", node, shape, dtype, vals))
        return out

    def minmax_scalar(self, name: str, pos: list[Val], node: cst.Call) -> Val:
        vals = [v for v in pos if v.kind == "value"]
        if not vals:
            return UNKNOWN
        if len(pos) == 1 and pos[0].kind == "tuple":
            vals = list(pos[0].items)
        exprs = [v.expr for v in vals]
        expr = None
        if all(e is not None for e in exprs) and exprs:
            expr = (emin if name == "min" else emax)(*exprs)
        lits = [v.literal for v in vals]
        lit = None
        if all(isinstance(x, (int, float)) for x in lits) and lits:
            lit = min(lits) if name == "min" else max(lits)
        return Val(
            shape=broadcast_shapes([v.shape for v in vals]),
            expr=expr,
            dtype=vals[0].dtype,
            weak=all(v.weak for v in vals),
            params=frozenset().union(*(v.params for v in vals)),
            pids=frozenset().union(*(v.pids for v in vals)),
            literal=lit,
        )

    def shape_arg(self, v: Optional[Val]) -> Optional[tuple[Expr, ...]]:
        """A shape argument: a tuple/list of integers, or a single integer."""
        if v is None:
            return None
        if v.kind == "tuple":
            dims = [it.expr for it in v.items]
            return None if any(d is None for d in dims) else tuple(dims)
        if v.kind == "value" and v.shape == () and v.expr is not None:
            return (v.expr,)
        return None

    def _shape_evidence(self, shape: Optional[tuple[Expr, ...]], what: str, line: int) -> None:
        if shape is None:
            return
        for d in shape:
            for p in sorted(d.symbols()):
                if p in self.constexprs:
                    self.tile_use(p, f"{what} at line {line}")
            if d.op == "sym" and d.args[0] in self.constexprs:
                self.trace.pow2.add(d.args[0])  # every tile dimension is a power of two

    def op_arange(self, a: dict, pos, kws, node: cst.Call) -> Val:
        start = a.get("start", UNKNOWN)
        end = a.get("end", UNKNOWN)
        line = self.line(node)
        cparams = set(self.constexpr_syms(end)) | set(self.constexpr_syms(start))
        for p in sorted(cparams):
            self.tile_use(p, f"tl.arange extent at line {line}")
            self.trace.pow2.add(p)
        if start.expr is None or end.expr is None:
            self.gap(node, "unknown access shape", f"tl.arange bounds in {node_text(node)} not understood")
            shape = None
        else:
            shape = (end.expr - start.expr,)
        nid = self.add_node("arange", node, shape, "int32", (start, end))
        return Val(
            shape=shape,
            dtype="int32",
            node=nid,
            params=start.params | end.params,
            tiles=frozenset(cparams),
            unit=frozenset((0,)),
            varying=frozenset((0,)),
        )

    def _dtype_arg(self, v: Optional[Val], default: Optional[str]) -> Optional[str]:
        if v is None or v.kind == "none":
            return default
        if v.kind == "dtype":
            return v.dtype
        return None

    def op_zeros(self, a: dict, pos, kws, node: cst.Call, what: str = "tl.zeros") -> Val:
        shape = self.shape_arg(a.get("shape"))
        line = self.line(node)
        self._shape_evidence(shape, f"{what} shape", line)
        if shape is None:
            self.gap(node, "unknown access shape", f"shape of {node_text(node)} not understood")
        dtype = self._dtype_arg(a.get("dtype"), "fp32")
        nid = self.add_node("alloc", node, shape, dtype, [v for v in a.values() if v is not None])
        return Val(shape=shape, dtype=dtype, node=nid)

    def op_full(self, a: dict, pos, kws, node: cst.Call) -> Val:
        value = a.get("value")
        out = self.op_zeros(a, pos, kws, node, what="tl.full")
        if a.get("dtype") is None and value is not None:
            out = out.with_(dtype=value.dtype)
        return out

    def op_zeros_like(self, a: dict, pos, kws, node: cst.Call) -> Val:
        x = a.get("input", UNKNOWN)
        dtype = self._dtype_arg(a.get("dtype"), x.dtype)
        nid = self.add_node("alloc", node, x.shape, dtype, (x,))
        return Val(shape=x.shape, dtype=dtype, node=nid)

    def _access_common(self, p: Val, node: cst.Call):
        """(pointer param, shape, block_ptr, contiguous_dim, order) of an address operand."""
        if p.kind in ("blockptr", "desc"):
            shape = p.block_shape
            cdim = None
            if shape is not None and shape:
                cdim = len(shape) - 1
                if p.order and isinstance(p.order[0], int) and 0 <= p.order[0] < len(shape):
                    cdim = p.order[0]
            return p.base, shape, True, cdim
        if p.kind != "value":
            return None, None, False, None
        ptr = self.choose_pointer(p)
        shape = p.shape
        cdim = None
        if shape:
            unit = sorted(d for d in p.unit if d < len(shape))
            cdim = unit[-1] if unit else len(shape) - 1
        return ptr, shape, False, cdim

    def _record_access(self, kind: str, nid: str, node: cst.Call, ptr, shape, block_ptr, cdim, value_dtype) -> AccessRec:
        loop = self.loop_stack[-1] if self.loop_stack else None
        rec = AccessRec(
            node=nid,
            kind=kind,
            span=self.span(node),
            pointer=ptr,
            shape=shape,
            dtype=f"elem:{ptr}" if ptr else None,
            in_loop=self.in_loop(),
            trips=self.total_trips(),
            contiguous_dim=cdim,
            block_ptr=block_ptr,
            loop=loop,
            value_dtype=value_dtype,
            scalar=shape == (),
        )
        self.trace.accesses.append(rec)
        if ptr is not None:
            self.mark_pointer(ptr, f"{kind} address at line {self.line(node)}")
        return rec

    def op_load(self, a: dict, pos, kws, node: cst.Call) -> Val:
        p = a.get("pointer", UNKNOWN)
        ptr, shape, block_ptr, cdim = self._access_common(p, node)
        if ptr is None:
            self.gap(node, "unknown access shape", f"pointer of {node_text(node)} not traced to a parameter")
        dtype = f"elem:{ptr}" if ptr else None
        inputs = [v for v in (p, a.get("mask"), a.get("other")) if v is not None]
        nid = self.add_node("load", node, shape, dtype, inputs)
        self._record_access("load", nid, node, ptr, shape, block_ptr, cdim, dtype)
        v = Val(shape=shape, dtype=dtype, node=nid, loads=frozenset((nid,)), direct=frozenset((nid,)))
        if shape:
            b = shape_bytes(shape, dtype)
            if b is not None:
                self._stmt_temps[nid] = b * sym(NUM_STAGES) if self.in_loop() else b
        return v

    def op_store(self, a: dict, pos, kws, node: cst.Call, kind: str = "store") -> Val:
        p = a.get("pointer", UNKNOWN)
        value = a.get("value", a.get("val", UNKNOWN))
        ptr, shape, block_ptr, cdim = self._access_common(p, node)
        if not block_ptr and value.kind == "value" and value.shape is not None and shape is not None:
            shape = broadcast_shapes([shape, value.shape])
            if shape and cdim is None:
                cdim = len(shape) - 1
        if ptr is None:
            self.gap(node, "unknown access shape", f"pointer of {node_text(node)} not traced to a parameter")
        inputs = [v for v in (p, value, a.get("mask"), a.get("cmp")) if v is not None]
        dtype = f"elem:{ptr}" if ptr else value.dtype
        nid = self.add_node(kind, node, shape, dtype, inputs)
        self._record_access(kind, nid, node, ptr, shape, block_ptr, cdim, value.dtype)
        if value.kind == "value" and value.shape:
            if value.accs and kind == "atomic":
                # (a plain store is done from the dot's layout; an atomic converts it)
                rows = next((d.m for d in self.trace.dots if d.node in value.accs and d.m is not None), None)
                self.trace.scratch.append(ScratchRec("store_acc", nid, value.shape, value.dtype, None, self.line(node), self.in_loop(), rows))
            elif value.reduced:
                self.trace.scratch.append(ScratchRec("store_reduced", nid, value.shape, value.dtype, None, self.line(node), self.in_loop()))
        if kind == "atomic":
            return Val(shape=shape, dtype=dtype, node=nid)
        return NONE

    def op_dot(self, a: dict, pos, kws, node: cst.Call) -> Val:
        x, y = a.get("input", UNKNOWN), a.get("other", UNKNOWN)
        acc = a.get("acc")
        if acc is not None and acc.kind == "none":
            acc = None
        m = n = k = None
        shape = None
        if x.shape and y.shape and len(x.shape) >= 2 and len(y.shape) >= 2:
            m, k, n = x.shape[-2], x.shape[-1], y.shape[-1]
            shape = tuple(x.shape[:-1]) + (n,)
        else:
            self.gap(node, "unknown dot extent", f"operand shapes of {node_text(node)} unknown")
        out_dtype = self._dtype_arg(a.get("out_dtype"), None)
        if acc is not None and acc.dtype is not None:
            dtype = acc.dtype
        elif out_dtype is not None:
            dtype = out_dtype
        elif x.dtype in ("int8", "uint8") or y.dtype in ("int8", "uint8"):
            dtype = "int32"
        else:
            dtype = "fp32"
        line = self.line(node)
        for d in (m, n, k):
            if d is not None and d.op == "sym" and d.args[0] in self.constexprs:
                self.trace.dot_dims.setdefault(d.args[0], line)
        inputs = [v for v in (x, y, acc) if v is not None]
        nid = self.add_node("dot", node, shape, dtype, inputs)
        loop = self.loop_stack[-1] if self.loop_stack else None
        self.trace.dots.append(
            DotRec(nid, self.span(node), x, y, acc, m, n, k, dtype, self.in_loop(), self.total_trips(), loop)
        )
        fed = x.loads | y.loads
        for rec in self.trace.accesses:
            if rec.node in fed:
                rec.feeds_dot = True
        if shape:
            b = shape_bytes(shape, dtype)
            if b is not None and acc is None:
                self._stmt_temps[nid] = b
        return Val(shape=shape, dtype=dtype, node=nid, accs=frozenset((nid,)) | (acc.accs if acc is not None else EMPTY))

    def op_reduce(self, name: str, a: dict, node: cst.Call) -> Val:
        x = a.get("input", UNKNOWN)
        axis_v = a.get("axis")
        keep = a.get("keep_dims")
        keep_dims = bool(keep is not None and keep.literal)
        if x.kind == "tuple":
            xs = list(x.items)
        else:
            xs = [x]
        outs = []
        axis = None
        for xv in xs:
            shape = xv.shape
            if shape is not None:
                if axis_v is None or axis_v.kind == "none":
                    shape = tuple(const(1) for _ in shape) if keep_dims else ()
                elif isinstance(axis_v.literal, int) and shape:
                    axis = axis_v.literal % len(shape)
                    shape = tuple(const(1) if (i == axis and keep_dims) else d for i, d in enumerate(shape) if i != axis or keep_dims)
                else:
                    shape = None
            dtype = xv.dtype
            if name in ("argmax", "argmin"):
                dtype = "int32"
            elif name == "sum" and dtype in ("int1", "int8", "uint8", "int16", "uint16"):
                dtype = "int32"
            if name == "sum" and a.get("dtype") is not None:
                dtype = self._dtype_arg(a.get("dtype"), dtype)
            outs.append((shape, dtype))
        first_shape, first_dtype = outs[0]
        nid = self.add_node("reduce", node, first_shape, first_dtype, xs)
        self.trace.scratch.append(ScratchRec("reduce", nid, x.shape if x.kind == "value" else xs[0].shape, first_dtype, axis, self.line(node), self.in_loop()))
        vals = tuple(Val(shape=s, dtype=d, node=nid, reduced=True) for s, d in outs)
        ri = a.get("return_indices")
        if name in ("max", "min") and ri is not None and ri.literal:
            return Val(kind="tuple", shape=None, items=(vals[0], Val(shape=vals[0].shape, dtype="int32", node=nid)))
        if x.kind == "tuple":
            return Val(kind="tuple", shape=None, items=vals)
        return vals[0]

    def op_scan(self, name: str, a: dict, node: cst.Call) -> Val:
        x = a.get("input", UNKNOWN)
        axis_v = a.get("axis")
        xs = list(x.items) if x.kind == "tuple" else [x]
        nid = self.add_node("scan", node, xs[0].shape, xs[0].dtype, xs)
        axis = axis_v.literal if axis_v is not None and isinstance(axis_v.literal, int) else None
        self.trace.scratch.append(ScratchRec("scan", nid, xs[0].shape, xs[0].dtype, axis, self.line(node), self.in_loop()))
        vals = tuple(Val(shape=v.shape, dtype=v.dtype, node=nid) for v in xs)
        return Val(kind="tuple", shape=None, items=vals) if x.kind == "tuple" else vals[0]

    def op_where(self, a: dict, pos, kws, node: cst.Call) -> Val:
        c, x, y = a.get("condition", UNKNOWN), a.get("x", UNKNOWN), a.get("y", UNKNOWN)
        vals = [v for v in (c, x, y) if v.kind == "value"]
        shape = broadcast_shapes([v.shape for v in vals]) if len(vals) == 3 else None
        dtype = promote(x, y) if x.kind == y.kind == "value" else None
        rank = len(shape) if shape is not None else 0
        out = Val(
            shape=shape,
            dtype=dtype,
            weak=x.weak and y.weak,
            params=c.params | x.params | y.params,
            pids=x.pids | y.pids,
            tiles=x.tiles | y.tiles,
            ptrs=x.ptrs | y.ptrs,
            pointer=x.pointer or y.pointer,
            loads=x.loads | y.loads,
            accs=x.accs | y.accs,
            reduced=(x.reduced and x.shape == shape) or (y.reduced and y.shape == shape),
            unit=align_dims(x.unit, len(x.shape or ()), rank) | align_dims(y.unit, len(y.shape or ()), rank),
            varying=frozenset().union(*(align_dims(v.varying, len(v.shape or ()), rank) for v in vals)),
        )
        return out.with_(node=self.add_node("elementwise", node, shape, dtype, vals))

    def op_cast(self, a: dict, node: cst.Call) -> Val:
        x = a.get("input", UNKNOWN)
        dt = a.get("dtype")
        if x.kind != "value":
            return UNKNOWN
        target = dt.dtype if dt is not None and dt.kind == "dtype" else None
        if target is not None and target.startswith("ptr:"):
            out = x.with_(dtype=None, pointer=True, weak=False, literal=None, direct=EMPTY)
        else:
            out = x.with_(dtype=target, weak=False, literal=None, direct=EMPTY)
        if x.node is not None or x.shape:
            out = out.with_(node=self.add_node("elementwise", node, x.shape, out.dtype, (x,)))
        return out

    def op_program_id(self, a: dict, pos, kws, node: cst.Call) -> Val:
        ax = a.get("axis")
        axis = ax.literal if ax is not None and isinstance(ax.literal, int) else 0
        return Val(shape=(), dtype="int32", pids=frozenset((axis,)), expr=sym(f"{PID_PREFIX}{axis}"))

    def op_num_programs(self, a: dict, pos, kws, node: cst.Call) -> Val:
        return Val(shape=(), dtype="int32")

    def op_cdiv(self, a: dict, pos, kws, node: cst.Call) -> Val:
        x, d = a.get("x", UNKNOWN), a.get("div", UNKNOWN)
        expr = cdiv(x.expr, d.expr) if x.expr is not None and d.expr is not None else None
        shape = broadcast_shapes([x.shape, d.shape]) if x.kind == d.kind == "value" else None
        return Val(shape=shape, expr=expr, dtype=x.dtype or "int32", weak=x.weak and d.weak, params=x.params | d.params, pids=x.pids | d.pids, tiles=x.tiles)

    def op_make_block_ptr(self, a: dict, pos, kws, node: cst.Call) -> Val:
        base = a.get("base", UNKNOWN)
        ptr = self.choose_pointer(base) if base.kind == "value" else base.base
        line = self.line(node)
        block_shape = self.shape_arg(a.get("block_shape"))
        self._shape_evidence(block_shape, "make_block_ptr block_shape", line)
        if block_shape is None:
            self.gap(node, "unknown access shape", "block_shape of tl.make_block_ptr not understood")
        order_v = a.get("order")
        order = None
        if order_v is not None and order_v.kind == "tuple":
            order = tuple(it.literal for it in order_v.items)
        shape_v = a.get("shape")
        if block_shape is not None and shape_v is not None and shape_v.kind == "tuple" and len(shape_v.items) == len(block_shape):
            for d, full in zip(block_shape, shape_v.items):
                tiles = frozenset(s for s in d.symbols() if s in self.constexprs)
                if tiles and full.params:
                    self.trace.binds.append((tiles, full.params, line, f"block_shape {d} within shape {full.expr if full.expr is not None else '?'}"))
        if ptr is not None:
            self.mark_pointer(ptr, f"tl.make_block_ptr base at line {line}")
        inputs = [v for v in a.values() if v is not None and v.kind == "value"]
        nid = self.add_node("other", node, block_shape, f"elem:{ptr}" if ptr else None, inputs)
        offs = a.get("offsets")
        pids = frozenset().union(*(it.pids for it in offs.items)) if offs is not None and offs.kind == "tuple" else EMPTY
        return Val(kind="blockptr", shape=None, block_shape=block_shape, order=order, base=ptr, node=nid, pids=pids, params=base.params)

    def op_make_tensor_descriptor(self, a: dict, pos, kws, node: cst.Call) -> Val:
        v = self.op_make_block_ptr(a, pos, kws, node)
        return v.with_(kind="desc", order=None)

    def descriptor_op(self, desc: Val, name: str, pos: list[Val], kws: dict, node: cst.Call) -> Val:
        if name == "load":
            return self.op_load({"pointer": desc}, pos, kws, node)
        if name == "store":
            value = pos[2] if len(pos) > 2 else kws.get("value", UNKNOWN)
            return self.op_store({"pointer": desc, "value": value}, pos, kws, node)
        if name.startswith("atomic_"):
            value = pos[2] if len(pos) > 2 else kws.get("value", UNKNOWN)
            return self.op_store({"pointer": desc, "value": value}, pos, kws, node, kind="atomic")
        self.gap(node, "unknown op", f"tensor descriptor method {name} not understood")
        return UNKNOWN

    def op_advance(self, a: dict, pos, kws, node: cst.Call) -> Val:
        base = a.get("base", UNKNOWN)
        if base.kind != "blockptr":
            self.gap(node, "unknown op", "tl.advance of something that is not a block pointer")
            return UNKNOWN
        nid = self.add_node("other", node, base.block_shape, f"elem:{base.base}" if base.base else None, [base, a.get("offsets", UNKNOWN)])
        return base.with_(node=nid)

    def permute(self, x: Val, dims: Optional[Sequence[int]], node: cst.CSTNode) -> Val:
        if x.kind != "value" or x.shape is None:
            return UNKNOWN
        rank = len(x.shape)
        if dims is None or not dims:
            dims = list(range(rank))[::-1] if rank <= 2 else list(range(rank - 2)) + [rank - 1, rank - 2]
        if sorted(dims) != list(range(rank)):
            self.gap(node, "unknown op", f"permutation {list(dims)} of a rank-{rank} tile")
            return UNKNOWN
        shape = tuple(x.shape[d] for d in dims)
        inv = {d: i for i, d in enumerate(dims)}
        nid = self.add_node("other", node, shape, x.dtype, (x,))
        self.trace.scratch.append(ScratchRec("trans", nid, x.shape, x.dtype, None, self.line(node), self.in_loop()))
        return x.with_(
            shape=shape,
            node=nid,
            unit=frozenset(inv[d] for d in x.unit if d in inv),
            varying=frozenset(inv[d] for d in x.varying if d in inv),
        )

    def shape_op(self, name: str, pos: list[Val], kws: dict, node: cst.Call) -> Val:
        x = pos[0] if pos else kws.get("input", UNKNOWN)
        rest = pos[1:]
        if name in ("trans", "permute"):
            if len(rest) == 1 and rest[0].kind == "tuple":
                rest = list(rest[0].items)
            dims = [r.literal for r in rest]
            if "dims" in kws and kws["dims"].kind == "tuple":
                dims = [r.literal for r in kws["dims"].items]
            if any(not isinstance(d, int) for d in dims):
                self.gap(node, "unknown op", f"dims of {node_text(node)} not understood")
                return UNKNOWN
            return self.permute(x, dims, node)
        if len(rest) == 1:
            shape = self.shape_arg(rest[0])
        elif rest:
            shape = self.shape_arg(Val(kind="tuple", shape=None, items=tuple(rest)))
        else:
            shape = self.shape_arg(kws.get("shape"))
        what = {"reshape": "reshape shape", "view": "view shape", "broadcast_to": "tl.broadcast_to shape"}[name]
        self._shape_evidence(shape, what, self.line(node))
        if shape is None or x.kind != "value":
            self.gap(node, "unknown access shape", f"shape of {node_text(node)} not understood")
            return UNKNOWN
        nid = self.add_node("other", node, shape, x.dtype, (x,))
        if name != "broadcast_to":
            self.trace.scratch.append(ScratchRec("reshape", nid, x.shape, x.dtype, None, self.line(node), self.in_loop()))
        return Val(
            shape=shape,
            dtype=x.dtype,
            node=nid,
            loads=x.loads,
            direct=x.direct,
            accs=x.accs,
            params=x.params,
            tiles=x.tiles if name == "broadcast_to" else EMPTY,
        )

    def op_expand_dims(self, a: dict, pos, kws, node: cst.Call) -> Val:
        x = a.get("input", UNKNOWN)
        ax = a.get("axis")
        if x.kind != "value" or x.shape is None or ax is None:
            return UNKNOWN
        axes = [it.literal for it in ax.items] if ax.kind == "tuple" else [ax.literal]
        if any(not isinstance(i, int) for i in axes):
            return UNKNOWN
        shape = list(x.shape)
        new_rank = len(shape) + len(axes)
        axes = sorted(i % new_rank for i in axes)
        mapping = list(range(len(shape)))
        for i in axes:
            shape.insert(i, const(1))
            mapping = [m + 1 if m >= i else m for m in mapping]
        nid = self.add_node("other", node, tuple(shape), x.dtype, (x,))
        return x.with_(
            shape=tuple(shape),
            node=nid,
            unit=frozenset(mapping[d] for d in x.unit if d < len(mapping)),
            varying=frozenset(mapping[d] for d in x.varying if d < len(mapping)),
        )

    def op_join(self, a: dict, pos, kws, node: cst.Call) -> Val:
        x, y = a.get("a", UNKNOWN), a.get("b", UNKNOWN)
        shape = broadcast_shapes([x.shape, y.shape]) if x.kind == y.kind == "value" else None
        shape = None if shape is None else shape + (const(2),)
        dtype = promote(x, y)
        nid = self.add_node("other", node, shape, dtype, (x, y))
        self.trace.scratch.append(ScratchRec("join", nid, shape, dtype, None, self.line(node), self.in_loop()))
        return Val(shape=shape, dtype=dtype, node=nid, loads=x.loads | y.loads)

    def op_interleave(self, a: dict, pos, kws, node: cst.Call) -> Val:
        x, y = a.get("a", UNKNOWN), a.get("b", UNKNOWN)
        shape = broadcast_shapes([x.shape, y.shape]) if x.kind == y.kind == "value" else None
        if shape:
            shape = shape[:-1] + (shape[-1] * 2,)
        dtype = promote(x, y)
        nid = self.add_node("other", node, shape, dtype, (x, y))
        return Val(shape=shape, dtype=dtype, node=nid, loads=x.loads | y.loads)

    def op_split(self, a: dict, pos, kws, node: cst.Call) -> Val:
        x = a.get("a", UNKNOWN)
        shape = x.shape[:-1] if x.kind == "value" and x.shape else None
        nid = self.add_node("other", node, shape, x.dtype, (x,))
        self.trace.scratch.append(ScratchRec("split", nid, x.shape, x.dtype, None, self.line(node), self.in_loop()))
        half = Val(shape=shape, dtype=x.dtype, node=nid, loads=x.loads)
        return Val(kind="tuple", shape=None, items=(half, half))

    def op_ravel(self, a: dict, pos, kws, node: cst.Call) -> Val:
        x = a.get("x", UNKNOWN)
        shape = None
        if x.kind == "value" and x.shape is not None:
            n = const(1)
            for d in x.shape:
                n = n * d
            shape = (n,)
        nid = self.add_node("other", node, shape, x.dtype, (x,))
        return Val(shape=shape, dtype=x.dtype, node=nid, loads=x.loads)

    def op_same_shape(self, a: dict, pos, kws, node: cst.Call) -> Val:
        x = pos[0] if pos else UNKNOWN
        if x.kind != "value":
            return UNKNOWN
        nid = self.add_node("other", node, x.shape, x.dtype, (x,))
        return Val(shape=x.shape, dtype=x.dtype, node=nid, loads=x.loads)

    def op_gather(self, a: dict, pos, kws, node: cst.Call) -> Val:
        src, idx = a.get("src", UNKNOWN), a.get("index", UNKNOWN)
        nid = self.add_node("other", node, idx.shape, src.dtype, (src, idx))
        self.trace.scratch.append(ScratchRec("gather", nid, src.shape, src.dtype, None, self.line(node), self.in_loop()))
        return Val(shape=idx.shape, dtype=src.dtype, node=nid)

    def op_histogram(self, a: dict, pos, kws, node: cst.Call) -> Val:
        x = a.get("input", UNKNOWN)
        bins = a.get("num_bins", UNKNOWN)
        shape = (bins.expr,) if bins.expr is not None else None
        self._shape_evidence(shape, "tl.histogram bins", self.line(node))
        nid = self.add_node("reduce", node, shape, "int32", (x, bins))
        self.trace.scratch.append(ScratchRec("histogram", nid, shape, "int32", None, self.line(node), self.in_loop()))
        return Val(shape=shape, dtype="int32", node=nid)

    def op_broadcast(self, a: dict, pos, kws, node: cst.Call) -> Val:
        x, y = a.get("input", UNKNOWN), a.get("other", UNKNOWN)
        shape = broadcast_shapes([x.shape, y.shape]) if x.kind == y.kind == "value" else None
        return Val(kind="tuple", shape=None, items=(x.with_(shape=shape), y.with_(shape=shape)))

    def op_random(self, a: dict, pos, kws, node: cst.Call) -> Val:
        off = a.get("offset", UNKNOWN)
        shape = off.shape if off.kind == "value" else None
        name = dotted_name(node.func) or ""
        dtype = "int32" if "randint" in name else "fp32"
        nid = self.add_node("elementwise", node, shape, dtype, (off,))
        v = Val(shape=shape, dtype=dtype, node=nid)
        if name.endswith("randint4x"):
            return Val(kind="tuple", shape=None, items=(v, v, v, v))
        return v

    def op_inline_asm(self, a: dict, pos, kws, node: cst.Call) -> Val:
        args = a.get("args", UNKNOWN)
        vals = list(args.items) if args.kind == "tuple" else [args]
        vals = [v for v in vals if v.kind == "value"]
        shape = broadcast_shapes([v.shape for v in vals]) if vals else None
        dt = a.get("dtype")
        dtype = dt.dtype if dt is not None and dt.kind == "dtype" else None
        nid = self.add_node("elementwise", node, shape, dtype, vals)
        return Val(shape=shape, dtype=dtype, node=nid, loads=frozenset().union(*(v.loads for v in vals)) if vals else EMPTY)

    def op_cast_fn(self, a: dict, pos, kws, node: cst.Call) -> Val:
        return self.op_cast(a, node)

    def op_range(self, a: dict, pos, kws, node: cst.Call) -> Val:
        return Val(kind="other", shape=None)


_AUG_OPS = {
    "Add": "+",
    "Subtract": "-",
    "Multiply": "*",
    "Divide": "/",
    "FloorDivide": "//",
    "Modulo": "%",
    "Power": "**",
    "BitAnd": "&",
    "BitOr": "|",
    "BitXor": "^",
    "LeftShift": "<<",
    "RightShift": ">>",
    "MatrixMultiply": "@",
}


def _fold(op: str, a, b):
    try:
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/":
            return a / b
        if op == "//":
            return a // b
        if op == "%":
            return a % b
    except (ZeroDivisionError, TypeError, OverflowError):
        return None
    return None


def join_vals(a: Val, b: Val) -> Val:
    """The value of a variable after two control-flow paths that set it to ``a`` and ``b``."""
    if a is b:
        return a
    if a.kind != b.kind:
        if a.kind == "none":
            return b
        if b.kind == "none":
            return a
        return UNKNOWN
    if a.kind == "tuple":
        if len(a.items) != len(b.items):
            return UNKNOWN
        return a.with_(items=tuple(join_vals(x, y) for x, y in zip(a.items, b.items)))
    if a.kind != "value":
        return a
    if a.shape == b.shape:
        shape = a.shape
    elif a.shape is None or b.shape is None:
        shape = None
    else:
        shape = broadcast_shapes([a.shape, b.shape])
    if a.dtype == b.dtype:
        dtype = a.dtype
    else:
        dtype = promote(a, b)
    return a.with_(
        shape=shape,
        dtype=dtype,
        expr=_join_expr(a.expr, b.expr),
        params=a.params | b.params,
        tiles=a.tiles | b.tiles,
        pids=a.pids | b.pids,
        ptrs=a.ptrs | b.ptrs,
        loads=a.loads | b.loads,
        direct=a.direct | b.direct,
        accs=a.accs | b.accs,
        reduced=a.reduced or b.reduced,
        unit=a.unit & b.unit if a.shape == b.shape else EMPTY,
        varying=a.varying | b.varying if a.shape == b.shape else EMPTY,
        literal=a.literal if a.literal == b.literal else None,
    )


def _join_expr(a: Optional[Expr], b: Optional[Expr]) -> Optional[Expr]:
    """An integer set to ``a`` on one path and ``b`` on the other: their maximum.

    The maximum is what sizes and trip counts need (the larger tile, the longer
    loop); ``max(min(x, b), b)`` simplifies to ``b``.
    """
    if a is None or b is None:
        return None
    if a == b:
        return a
    if a.op == "min" and b in a.args:
        return b
    if b.op == "min" and a in b.args:
        return a
    return emax(a, b)


def join_envs(a: dict[str, Val], b: dict[str, Val]) -> dict[str, Val]:
    """Join the environments after the two branches of an ``if``."""
    out = dict(a)
    for k, v in b.items():
        cur = out.get(k)
        out[k] = v if cur is None else join_vals(cur, v)
    return out


def _h(method: str) -> Callable:
    return lambda self, a, pos, kws, node: getattr(self, method)(a, pos, kws, node)


_HANDLERS: dict[str, Callable] = {
    "arange": _h("op_arange"),
    "zeros": _h("op_zeros"),
    "full": _h("op_full"),
    "zeros_like": _h("op_zeros_like"),
    "load": _h("op_load"),
    "store": _h("op_store"),
    "atomic_cas": lambda self, a, pos, kws, node: self.op_store(a, pos, kws, node, kind="atomic"),
    "dot": _h("op_dot"),
    "where": _h("op_where"),
    "cast": lambda self, a, pos, kws, node: self.op_cast(a, node),
    "to": lambda self, a, pos, kws, node: self.op_cast(a, node),
    "program_id": _h("op_program_id"),
    "num_programs": _h("op_num_programs"),
    "cdiv": _h("op_cdiv"),
    "make_block_ptr": _h("op_make_block_ptr"),
    "make_tensor_descriptor": _h("op_make_tensor_descriptor"),
    "_experimental_make_tensor_descriptor": _h("op_make_tensor_descriptor"),
    "advance": _h("op_advance"),
    "expand_dims": _h("op_expand_dims"),
    "join": _h("op_join"),
    "interleave": _h("op_interleave"),
    "split": _h("op_split"),
    "ravel": _h("op_ravel"),
    "flip": _h("op_same_shape"),
    "sort": _h("op_same_shape"),
    "gather": _h("op_gather"),
    "histogram": _h("op_histogram"),
    "broadcast": _h("op_broadcast"),
    "rand": _h("op_random"),
    "randn": _h("op_random"),
    "randint": _h("op_random"),
    "randint4x": _h("op_random"),
    "inline_asm_elementwise": _h("op_inline_asm"),
}
for _n in ("atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor", "atomic_xchg"):
    _HANDLERS[_n] = lambda self, a, pos, kws, node: self.op_store(a, pos, kws, node, kind="atomic")

Interpreter._dispatch = {
    cst.Name: Interpreter.ev_name,
    cst.Integer: Interpreter.ev_integer,
    cst.Float: Interpreter.ev_float,
    cst.Imaginary: Interpreter.ev_float,
    cst.SimpleString: Interpreter.ev_string,
    cst.ConcatenatedString: Interpreter.ev_string,
    cst.FormattedString: Interpreter.ev_string,
    cst.Tuple: Interpreter.ev_tuple,
    cst.List: Interpreter.ev_tuple,
    cst.Ellipsis: Interpreter.ev_ellipsis,
    cst.IfExp: Interpreter.ev_ifexp,
    cst.UnaryOperation: Interpreter.ev_unary,
    cst.BooleanOperation: Interpreter.ev_boolop,
    cst.BinaryOperation: Interpreter.ev_binop,
    cst.Comparison: Interpreter.ev_compare,
    cst.Subscript: Interpreter.ev_subscript,
    cst.Attribute: Interpreter.ev_attribute,
    cst.Call: Interpreter.ev_call,
    cst.Lambda: lambda self, node: Val(kind="other", shape=None),
}
