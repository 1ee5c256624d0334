"""The on-chip footprint model: :class:`~tiletune.analysis.model.Footprint`.

All four figures are expressions over tiling parameters, ``esize_<ptr>`` and
``num_stages``.

``live_bytes``
    Peak bytes of named tiles live at once (:mod:`.liveness`): each tile
    variable counts ``elements * element size`` from its definition to its
    last use (to the loop's end when it is carried around a loop), tiles of
    pointers are not counted, loads inside loops count ``num_stages`` times.
    Unknown element types count 4 bytes.

``dot_operand_bytes`` / ``accumulator_bytes``
    One stage of ``tl.dot`` operand tiles (each distinct operand once) and
    the dot results/accumulators.

``shared_bytes``
    NVIDIA shared memory as Triton 3.6 allocates it (see :func:`shared_bytes`
    for the rules and the sm_90 compiles they were fitted to;
    ``bench/results/footprint_error.md`` for the fit).  What depends on the
    chip stays a symbol the target binds in synthesis: ``num_warps`` and
    ``wgmma`` (1 where the compiler has wgmma, sm_90 and later).
"""

from __future__ import annotations

from typing import Optional

from .expr import NUM_STAGES, NUM_WARPS, WGMMA, Expr, const, emax, emin, sym, total
from .model import Footprint, KernelSpec
from .shapes import Trace
from .values import collect, dtype_size, shape_bytes

__all__ = ["compute_footprint", "shared_bytes"]


def compute_footprint(spec: KernelSpec, trace: Trace) -> Footprint:
    """The footprint of the kernel whose body produced ``trace``."""
    operands: dict[str, Expr] = {}
    accs: dict[str, Expr] = {}
    for d in trace.dots:
        for v in (d.a, d.b):
            b = shape_bytes(v.shape, v.dtype)
            if b is not None:
                operands.setdefault(v.node or f"{d.node}:{id(v)}", b)
        if d.m is not None and d.n is not None:
            key = d.acc.node if d.acc is not None and d.acc.node is not None else d.node
            batch = const(1)
            if d.a.shape is not None and len(d.a.shape) > 2:
                for x in d.a.shape[:-2]:
                    batch = batch * x
            accs.setdefault(key, batch * d.m * d.n * dtype_size(d.out_dtype))
    return Footprint(
        live_bytes=trace.live.peak(),
        shared_bytes=shared_bytes(trace),
        dot_operand_bytes=total(operands.values()),
        accumulator_bytes=total(accs.values()),
    )


#: Scratch kinds that go through shared memory in full (a layout conversion of the whole tile).
_FULL_SCRATCH = ("trans", "gather", "sort")
#: The mbarrier a TMA load waits on.
TMA_BARRIER_BYTES = 8
_MMA_V3_DTYPES = {"fp16", "bf16", "fp32", "int8", "uint8", "fp8e4nv", "fp8e5"}


def mma_v3(d) -> Expr:
    """1 when Triton 3.6 lowers the dot to wgmma (MMAv3), 0 when to mma.sync (MMAv2).

    wgmma needs a target that has it (the symbol ``wgmma``, bound by the
    target's family), a 2-D dot whose M is a multiple of 64 (one warp group
    of 4 warps covers 64 rows) and operand types it supports; for
    power-of-two M that is ``wgmma * min(1, M // 64)``.
    """
    if d.m is None or d.a.shape is None or len(d.a.shape) != 2:
        return const(0)
    for dt in (d.a.dtype, d.b.dtype):
        if dt is not None and not dt.startswith("elem:") and dt not in _MMA_V3_DTYPES:
            return const(0)
    return sym(WGMMA) * emin(1, d.m // 64)


def _stage_multiplier(v3: Expr) -> Expr:
    """Buffers per pipelined operand: ``num_stages - 1`` (MMAv2) or ``num_stages`` (MMAv3), 0 at 1 stage."""
    s = sym(NUM_STAGES)
    return (s - 1) + v3 * emin(1, s - 1)


def shared_bytes(trace: Trace) -> Expr:
    """Shared memory bytes as Triton 3.6 allocates them (fitted on sm_90; ``wgmma``, ``num_warps`` symbolic).

    Fitted to ``triton.compile`` of the fixtures (``bench/footprint_error.py``):

    * ``tl.dot`` operands loaded inside a loop are staged in shared memory
      ``num_stages`` deep when the dot is a wgmma (:func:`mma_v3`) and
      ``num_stages - 1`` deep when it is an mma.sync; at ``num_stages=1``
      nothing is pipelined and each dot holds only its own operands, so the
      loop needs the largest dot's operands;
    * operands loaded outside the loop (flash attention's Q) are held once;
    * an operand computed in registers (flash attention's P) goes through
      shared memory unless it is wgmma's A operand;
    * loads not feeding a dot are not pipelined (no shared memory);
    * a tensor-descriptor (TMA) access stages its whole block in shared
      memory: a load not feeding a dot its block plus an 8-byte barrier, a
      store its block (fitted out of loops; a dot operand is counted above);
    * scratch, not live together with the loop's buffers, the largest of:
      a transpose of a whole tile; a dot result atomically added (a layout
      conversion of at most 64 rows at a time; a plain ``tl.store`` writes
      from the dot's layout); a reduced tile stored; a loaded 1-D tile broadcast to 2-D; ``tl.histogram`` bins
      (int32); a full reduction to a scalar (one partial per warp).
    """
    loads = {a.node: a for a in trace.accesses if a.kind == "load"}
    operand_nodes = set()
    pipelined: dict[str, Expr] = {}
    per_dot: list[Expr] = []
    invariant: dict[str, Expr] = {}
    computed: dict[str, Expr] = {}
    for d in trace.dots:
        v3 = mma_v3(d)
        this_dot: list[Expr] = []
        for which, v in (("a", d.a), ("b", d.b)):
            if v.node is not None:
                operand_nodes.add(v.node)
            if v.direct:
                for ln in sorted(v.direct):
                    acc = loads.get(ln)
                    if acc is None:
                        continue
                    b = shape_bytes(acc.shape, acc.dtype)
                    if b is None:
                        continue
                    if acc.in_loop and d.in_loop and acc.loop == d.loop:
                        pipelined.setdefault(ln, b * _stage_multiplier(v3))
                        this_dot.append(b)
                    else:
                        invariant.setdefault(ln, b)
            else:
                b = shape_bytes(v.shape, v.dtype)
                if b is not None:
                    computed.setdefault(v.node or f"{d.node}:{which}", b * (1 - v3) if which == "a" else b)
        if this_dot:
            per_dot.append(total(this_dot))
    loop_part = emax(total(pipelined.values()), *per_dot) if per_dot else const(0)
    dot_part = collect(total(invariant.values()) + total(computed.values()) + loop_part)

    scratch: list[Expr] = []
    for a in trace.accesses:
        if a.descriptor and not (a.kind == "load" and a.feeds_dot):
            b = shape_bytes(a.shape, a.dtype)
            if b is not None:
                b = b + TMA_BARRIER_BYTES if a.kind == "load" else b
                if b not in scratch:
                    scratch.append(b)
    for sc in trace.scratch:
        b = _scratch_bytes(sc, operand_nodes)
        if b is not None and b not in scratch:
            scratch.append(b)
    if not scratch:
        return dot_part
    if dot_part == const(0):
        return emax(*scratch)
    return emax(dot_part, *scratch)


def _scratch_bytes(sc, operand_nodes: set) -> Optional[Expr]:
    if sc.shape is None:
        return None
    if sc.kind in _FULL_SCRATCH:
        if sc.node in operand_nodes:
            return None  # a transposed dot operand is read from shared memory as it is
        return shape_bytes(sc.shape, sc.dtype)
    if sc.kind in ("histogram", "broadcast", "store_reduced"):
        return shape_bytes(sc.shape, sc.dtype)
    if sc.kind == "store_acc":
        if len(sc.shape) == 2 and sc.rows is not None:
            return emin(sc.rows, 64) * sc.shape[1] * dtype_size(sc.dtype)
        return shape_bytes(sc.shape, sc.dtype)
    if sc.kind == "reduce" and len(sc.shape) == 1:
        return sym(NUM_WARPS) * dtype_size(sc.dtype)  # one partial per warp
    return None
