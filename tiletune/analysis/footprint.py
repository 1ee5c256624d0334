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

from .expr import ALIGN16_PREFIX, NUM_STAGES, NUM_WARPS, WGMMA, Expr, align16_symbol, const, emax, emin, sym, total
from .model import Footprint, KernelSpec
from .shapes import Trace
from .values import collect, dtype_size, shape_bytes

__all__ = ["compute_footprint", "shared_bytes", "pipelined", "assume_aligned", "unstaged_bytes"]


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
        unstaged_bytes=unstaged_bytes(trace),
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


def pipelined(acc, operand_of_v3: Optional[Expr] = None, k_dim: Optional[int] = None) -> Expr:
    """1 when Triton 3.6's pipeliner turns load ``acc`` (a ``tl.dot`` operand in a loop) into an async copy, else 0.

    Triton's rule (lib/Dialect/TritonGPU/Transforms/Pipeliner/AssignLatencies.cpp, ``isPipeliningBeneficial``):

    * ``canBeConvertedToAsyncLoad`` (Pipeliner/PipeliningUtility.cpp): the load's vector is
      ``min(AxisInfo contiguity of the address, getMaskAlignment(mask))`` elements along its contiguous
      dimension, and it is pipelined only when ``vector x element bits >= 32`` (cp.async copies 4, 8 or 16
      bytes).  AxisInfo (lib/Analysis/AxisInfo.cpp, ``ModuleAxisInfoAnalysis::getContiguity/getAlignment``)
      caps the contiguity by the address's divisibility: a row stride, or a mask bound / ``% N`` along the
      contiguous dimension, that is not specialised ``tt.divisibility=16`` (the launch's integer is not a
      multiple of 16) divides it down to 1 element.  So an fp16/bf16/8-bit load with such a stride is not
      pipelined; a 32-bit one still is (1 x 32 bits).  The integers that decide it are the trace's
      ``align_params`` (:func:`tiletune.analysis.ops.memory._align_params`), each bound by synthesis to the
      symbol ``align16_<param>`` (0 when the launch's value is known not to be a multiple of 16, 1 when it
      is or is unknown: an unknown keeps the pipelined count, which never under-counts).
    * the copy into the dot's shared layout must move >= 4 contiguous bytes (``getCopyVecBytes``): a wgmma
      operand of 8-bit type must be K-major in shared memory (wgmma transposes only 16-bit operands), so an
      8-bit operand loaded with its contiguous dimension other than K (``k_dim``) copies 1 byte at a time and
      is not pipelined when the dot is a wgmma (``operand_of_v3``).
    * a tensor-descriptor (TMA) load is always pipelined.
    """
    if acc.descriptor:
        return const(1)
    esize = dtype_size(acc.dtype)
    aligned: Expr = const(1)
    for p in sorted(acc.align_params):
        aligned = aligned * sym(align16_symbol(p))
    out = emax(aligned, emin(1, esize // 4))  # unaligned: 1 element; pipelined only if it is 32 bits wide
    if operand_of_v3 is not None and k_dim is not None and acc.contiguous_dim is not None \
            and acc.contiguous_dim != k_dim:
        eight_bit = 1 - emin(1, esize // 2)
        out = out * (1 - operand_of_v3 * eight_bit)
    return out


def assume_aligned(expr: Expr) -> dict[str, int]:
    """``align16_<param>`` = 1 for every such symbol of ``expr``: every launch integer a multiple of 16 (what
    synthesis assumes when the launch's integers are unknown; :mod:`tiletune.synthesis.alignment`)."""
    return {s: 1 for s in expr.symbols() if s.startswith(ALIGN16_PREFIX)}


def unstaged_bytes(trace: Trace) -> Expr:
    """Bytes per loop iteration of the ``tl.dot`` operand loads Triton does not pipeline (:func:`pipelined` is
    0): their latency is paid every iteration whatever ``num_stages`` is (the cost model's term)."""
    loads = {a.node: a for a in trace.accesses if a.kind == "load"}
    out: dict[tuple, Expr] = {}
    for d in trace.dots:
        v3 = mma_v3(d)
        for which, v in (("a", d.a), ("b", d.b)):
            alts: list[Expr] = []
            for ln in sorted(v.direct):
                acc = loads.get(ln)
                b = shape_bytes(acc.shape, acc.dtype) if acc is not None else None
                if b is None or not (acc.in_loop and d.in_loop and acc.loop == d.loop):
                    continue
                k_dim = (1 if which == "a" else 0) if acc.shape is not None and len(acc.shape) == 2 and v.node in loads else None
                piped = pipelined(acc, v3, k_dim)
                if piped != const(1):
                    alts.append(b * (1 - piped))
            if alts:
                out.setdefault(tuple(sorted(v.direct)), emax(*alts) if len(alts) > 1 else alts[0])
    return collect(total(out.values())) if out else const(0)


def shared_bytes(trace: Trace) -> Expr:
    """Shared memory bytes as Triton 3.6 allocates them (fitted on sm_90; ``wgmma``, ``num_warps`` symbolic).

    Fitted to ``triton.compile`` of the fixtures (``bench/footprint_error.py``):

    * ``tl.dot`` operands loaded inside a loop are staged in shared memory
      ``num_stages`` deep when the dot is a wgmma (:func:`mma_v3`) and
      ``num_stages - 1`` deep when it is an mma.sync
      (Pipeliner/WGMMAPipeline.cpp keeps the wgmma's operands one stage
      longer); at ``num_stages=1`` nothing is pipelined and each dot holds
      only its own operands, so the loop needs the largest dot's operands;
    * an operand load the pipeliner leaves alone (:func:`pipelined` is 0:
      an unaligned fp16 row stride, an 8-bit wgmma operand not K-major) is
      converted to the dot's layout through ONE shared buffer (the
      ``local_alloc`` of the loaded tile), whatever ``num_stages`` is;
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
    staged: dict[tuple, Expr] = {}
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
                # several direct loads of one operand are alternatives (an ``if``/``else`` joined): one is live
                staged_alts: list[Expr] = []
                tile_alts: list[Expr] = []
                for ln in sorted(v.direct):
                    acc = loads.get(ln)
                    if acc is None:
                        continue
                    b = shape_bytes(acc.shape, acc.dtype)
                    if b is None:
                        continue
                    if acc.in_loop and d.in_loop and acc.loop == d.loop:
                        k_dim = None
                        if acc.shape is not None and len(acc.shape) == 2 and v.node in loads:
                            k_dim = 1 if which == "a" else 0  # the operand is the loaded tile itself
                        piped = pipelined(acc, v3, k_dim)
                        buffers = _stage_multiplier(v3) if piped == const(1) else 1 + piped * (_stage_multiplier(v3) - 1)
                        staged_alts.append(b * buffers)
                        tile_alts.append(b)
                    else:
                        invariant.setdefault(ln, b)
                if staged_alts:
                    staged.setdefault(tuple(sorted(v.direct)), emax(*staged_alts) if len(staged_alts) > 1 else staged_alts[0])
                    this_dot.append(emax(*tile_alts) if len(tile_alts) > 1 else tile_alts[0])
            else:
                b = shape_bytes(v.shape, v.dtype)
                if b is not None:
                    computed.setdefault(v.node or f"{d.node}:{which}", b * (1 - v3) if which == "a" else b)
        if this_dot:
            per_dot.append(total(this_dot))
    loop_part = emax(total(staged.values()), *per_dot) if per_dot else const(0)
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
