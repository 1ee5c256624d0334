"""Ascend search domains: tile sizes the way Triton-Ascend users pick them.

Triton-Ascend's ``tl.arange`` takes any extent (``triton/triton_patch/
language/semantic.py`` l.61-75: only ``end > start`` and ``<=
TRITON_MAX_TENSOR_NUMEL`` are checked), so a tile size need not be a power of
two (nor a block shape: its ``validate_block_shape``,
``triton/language/_utils.py`` l.34-43, checks only the element count).  Its
own tile generator (``triton/runtime/tile_generator.py``,
``TileGenerator.descend_one_axis``) sizes a *split* axis -- a block that
multiplies ``tl.program_id`` -- so that the program count approaches the
vector-core count: ``cdiv(length, num_vector_core)`` (l.172), halving from
there.  tiletune keeps the powers of two and adds, for every parallel
parameter with a runtime bound, the blocks that give ``k`` programs per core
(``k`` = 1, 2, 4): ``cdiv(bound, k x cores)``, and the same rounded up to a
32-byte multiple of the narrowest element type, so that the cost model can
weigh the padding of the unaligned one.  Cores are vector cores, or cube
cores for kernels with ``tl.dot`` (whose dot dimensions are then rounded to
the cube fractal).
"""

from __future__ import annotations

from ..analysis.model import KernelSpec, Param, Role
from .model import Target

__all__ = ["split_values", "program_cores"]

#: Programs per core the split sizes aim at.
WAVES = (1, 2, 4)


def program_cores(spec: KernelSpec, target: Target) -> int:
    """Cores one program runs on: cube cores for ``tl.dot`` kernels, vector cores otherwise."""
    if spec.dots:
        return target.cores
    return target.vector_cores or target.cores


def split_values(spec: KernelSpec, p: Param, bound: int, target: Target, lo: int, hi: int, min_esize: int) -> list[int]:
    """Non-power-of-two block sizes for a parallel parameter ``p`` bounded by ``bound`` (sorted)."""
    if p.role != Role.PARALLEL or bound <= 0:
        return []
    cores = program_cores(spec, target)
    step = target.fractal if (p.min_value or 1) > 1 else 1  # dot dimensions: multiples of the fractal
    align = max(1, target.ub_align_bytes // max(1, min_esize))
    out = set()
    for k in WAVES:
        v = -(-bound // (k * cores))
        for w in (v, -(-v // align) * align):
            w = -(-w // step) * step
            if lo <= w <= hi:
                out.add(w)
    return sorted(out)
