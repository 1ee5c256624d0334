"""Triton's IR tile shapes in the footprint the run-time synthesis uses (issue 24).

Where the static reading has loads or stores without a known shape (a helper it
could not follow, an op it does not model), its footprint leaves those tiles
out.  At the first tuning the kernel is lowered (:mod:`tiletune.runtime.ir_oracle`)
at a base config and with each tuned tiling parameter doubled; every memory
op's dimensions are fitted to the parameters that scale them
(:func:`fit_tiles`: a dimension that doubles with ``BLOCK`` is
``BLOCK * c``), and the bytes of those tiles bound the footprint from below
(:func:`with_ir_footprint`: ``live_bytes`` becomes the larger of the static
figure and the IR's tiles).  The IR wins; verbose mode says so.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from tiletune.analysis.expr import Expr, const, emax, product, sym, total
from tiletune.analysis.model import DTYPE_BYTES

from .triton_ir import IRFacts, LoweringError

__all__ = ["FittedTile", "fit_tiles", "tiles_bytes", "read_tiles", "with_ir_footprint"]


@dataclass(frozen=True)
class FittedTile:
    """One load/store/atomic of the IR: ``kind``, ``dims`` as expressions over the tiling parameters, ``dtype``."""

    kind: str
    dims: Tuple[Expr, ...]
    dtype: str


def _fit_dim(base: int, scaled_by: Sequence[Tuple[str, int]]) -> Expr:
    """``base`` (its value at the base config) as an expression over the parameters that scale it."""
    if not scaled_by:
        return const(base)
    at_base = 1
    for _, v in scaled_by:
        at_base *= v
    syms = product(sym(n) for n, _ in scaled_by)
    if base % at_base == 0:
        return syms * const(base // at_base) if base != at_base else syms
    if at_base % base == 0:
        return syms // const(at_base // base)
    return const(base)  # not a product of the parameters: the base value


def fit_tiles(base: IRFacts, moved: Sequence[Tuple[str, int, IRFacts]]) -> List[FittedTile]:
    """The base config's memory ops with each dimension fitted to the parameters whose doubling doubles
    it; ``moved`` holds ``(name, value at base, facts with the value doubled)``.  A probe whose IR holds
    a different number of memory ops (an unrolled loop changed) says nothing about the others."""
    out: List[FittedTile] = []
    for i, op in enumerate(base.memory):
        dims = []
        for d, size in enumerate(op.shape):
            scaled = []
            for name, value, facts in moved:
                if len(facts.memory) != len(base.memory) or len(facts.memory[i].shape) != len(op.shape):
                    continue
                if facts.memory[i].shape[d] == 2 * size:
                    scaled.append((name, value))
            dims.append(_fit_dim(size, scaled))
        out.append(FittedTile(op.kind, tuple(dims), op.dtype))
    return out


def tiles_bytes(tiles: Sequence[FittedTile]) -> Expr:
    """Bytes of the distinct tiles (a scalar counts one element; an unknown dtype 4 bytes)."""
    seen = set()
    parts = []
    for t in tiles:
        key = (t.kind, t.dims, t.dtype)
        if key in seen:
            continue
        seen.add(key)
        parts.append(product(t.dims) * const(DTYPE_BYTES.get(t.dtype, 4)))
    return total(parts)


def read_tiles(obj: Any, bound: Mapping[str, Any], base_values: Mapping[str, Any],
               names: Sequence[str]) -> Optional[List[FittedTile]]:
    """Lower ``obj`` at ``base_values`` and with each of ``names`` doubled; the fitted memory tiles, or
    None when Triton refuses the base config."""
    from . import ir_oracle

    probes = [ir_oracle.signature_of(obj, bound, base_values)]
    moved_names = []
    for n in names:
        v = base_values.get(n)
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            moved_names.append((n, v))
            probes.append(ir_oracle.signature_of(obj, bound, {**base_values, n: 2 * v}))
    results = ir_oracle.lower_many(obj, probes)
    if isinstance(results[0], LoweringError):
        return None
    moved = [(n, v, r) for (n, v), r in zip(moved_names, results[1:]) if not isinstance(r, LoweringError)]
    return fit_tiles(results[0], moved)


def with_ir_footprint(spec: Any, tiles: Sequence[FittedTile]) -> Tuple[Any, Optional[str]]:
    """A copy of ``spec`` whose ``live_bytes`` is at least the IR tiles' bytes, and the verbose note;
    ``spec`` itself and None when the static reading has every access shape or nothing was read."""
    unknown = [a for a in spec.accesses if a.shape is None]
    if not unknown or not tiles or spec.footprint is None:
        return spec, None
    ir_bytes = tiles_bytes(tiles)
    footprint = dataclasses.replace(spec.footprint, live_bytes=emax(spec.footprint.live_bytes, ir_bytes))
    shapes = sorted({f"{t.kind} [{', '.join(str(d) for d in t.dims)}] {t.dtype}" for t in tiles})
    note = (f"Triton's IR gives the shapes of the tiles the static reading lacks ({len(unknown)} access(es) without "
            f"a shape): {'; '.join(shapes[:6])}{' ...' if len(shapes) > 6 else ''}; the footprint counts "
            f"{ir_bytes} bytes for them (the IR wins)")
    return dataclasses.replace(spec, footprint=footprint), note


def tile_values(names: Sequence[str], fixed: Mapping[str, Any], value: int = 32) -> Dict[str, Any]:
    """The base config :func:`read_tiles` lowers at: ``value`` for each tuned name, the fixed values as given."""
    return {**dict(fixed), **{n: value for n in names if n not in fixed}}
