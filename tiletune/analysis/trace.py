"""What the body interpreter (:mod:`.shapes`) records: the :class:`Trace` and its records."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import networkx as nx

from .expr import Expr
from .liveness import LiveRanges
from .model import Shape, Span
from .values import Val

__all__ = ["GAP_KINDS", "PID_PREFIX", "offset_anchors", "AccessRec", "DotRec", "ScratchRec", "LoopRec", "Trace", "public_expr"]

EMPTY: frozenset = frozenset()

GAP_KINDS = ("unknown op", "unknown access shape", "unknown dot extent", "unresolved helper")


PID_PREFIX = "__pid_"


def public_expr(e: Optional[Expr]) -> Optional[Expr]:
    """``e`` if it mentions no program id, else None."""
    if e is None or any(s.startswith(PID_PREFIX) for s in e.symbols()):
        return None
    return e


def offset_anchors(offset: Expr, tiles: frozenset) -> frozenset:
    """Names that position a tile (own extents ``tiles``) at scalar offset ``offset``.

    Each additive term of ``offset`` counts: one without a program id by all
    its symbols (``seq_len - BW``: ``seq_len``); one with a program id by its
    factors that have none (``i_t * BT`` positions a ``BC`` sub-chunk: ``BT``),
    unless a factor is the tile's own extent (``pid_m * BLOCK_M``, ``pid *
    UNROLL * BLOCK_M``: the tile steps through its own grid).  The tile's own
    extents never count.
    """
    terms = list(offset.args) if offset.op == "add" else list(offset.args) if offset.op == "sub" else [offset]
    out: set = set()
    for term in terms:
        syms = term.symbols()
        if not any(s.startswith(PID_PREFIX) for s in syms):
            out |= syms
            continue
        factors = term.args if term.op == "mul" else ()
        if any(f.op == "sym" and f.args[0] in tiles for f in factors):
            continue
        for f in factors:
            fs = f.symbols()
            if not any(s.startswith(PID_PREFIX) for s in fs):
                out |= fs
    return frozenset(s for s in out if s not in tiles)


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
    descriptor: bool = False  # through a tensor descriptor (TMA: staged in shared memory)
    # integer parameters whose divisibility by 16 decides the load's vector width (row strides, the mask's bound
    # along the contiguous dimension): footprint.py's pipelining rule
    align_params: frozenset = frozenset()


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
    # (tile params, other params, line, text, how): how is "compare" (a mask), "modulo" (offsets wrapped
    # with ``%``: weaker, an index may be taken modulo anything) or "block shape" (a block pointer's shape)
    binds: list[tuple[frozenset, frozenset, int, str, str]] = field(default_factory=list)
    loop_bounds: list[tuple[str, int]] = field(default_factory=list)  # (constexpr R of ``for r in range(R)``, line)
    loop_mults: list[tuple[str, int]] = field(default_factory=list)  # (constexpr multiplying a loop variable, line)
    pointer_uses: dict[str, str] = field(default_factory=dict)  # param -> first reason
    dot_dims: dict[str, int] = field(default_factory=dict)  # param -> line
    tile_params: set[str] = field(default_factory=set)  # params the body uses as tiles (a device function's)
    # id of a helper's FunctionDef -> its parameters a call passes a value only jit code holds (a tile, a block
    # pointer, a tensor descriptor made in the kernel): the helper is a device function, whoever else calls it
    device_calls: dict[int, set[str]] = field(default_factory=dict)
    accesses: list[AccessRec] = field(default_factory=list)
    dots: list[DotRec] = field(default_factory=list)
    scratch: list[ScratchRec] = field(default_factory=list)
    loops: list[LoopRec] = field(default_factory=list)
    static_asserts: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    gaps: list[tuple[str, str]] = field(default_factory=list)  # (kind, "line N: text"): where the analysis gave up
    graph: nx.DiGraph = field(default_factory=nx.DiGraph)
    live: LiveRanges = field(default_factory=LiveRanges)
