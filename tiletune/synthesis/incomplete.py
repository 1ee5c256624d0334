"""Configs that stay safe where the analysis is incomplete.

When the body analysis could not follow part of a kernel
(:attr:`KernelSpec.incomplete`: an unresolved helper, an unknown op, an
access or dot whose tile shape is unknown), the feasibility model does not
see every tile, so a config it accepts may still break the kernel.  These
guards drop, whatever the unknown parts turn out to be:

* a config where any two tiling values multiply past Triton's element limit
  (an unknown tile may be any 2-D tile of them, ``tl.zeros([BK, BV])``);
* a tiling value under 16, when the kernel may hold a ``tl.dot`` the model
  cannot see (an unknown dot extent, a helper or op not followed): a dot
  operand dimension must be at least 16;
* a config whose unknown tiles, each assumed as large as the largest such
  2-D tile, would not fit the chip's on-chip memory next to the known ones
  (shared memory per block on NVIDIA, the Unified Buffer on Ascend).

They are deliberately coarse: the answer for an incomplete kernel is a safe
subset, never a guess presented as the model's verdict.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any, Callable, Mapping, Sequence

from ..analysis.model import KernelSpec
from .families import family_of
from .model import Target

__all__ = ["unknown_guards", "may_hide_dot"]

_DOT_MIN = 16


def may_hide_dot(spec: KernelSpec) -> bool:
    """True when a ``tl.dot`` could sit in a part of the kernel the analysis did not follow."""
    return any(r.split(":", 1)[0] in ("unknown dot extent", "unresolved helper", "unknown op") for r in spec.incomplete)


def _unknown_tiles(spec: KernelSpec) -> int:
    return sum(1 for r in spec.incomplete if r.startswith(("unknown access shape", "unresolved helper", "unknown op"))) or 1


def unknown_guards(
    spec: KernelSpec, target: Target, tiling: Sequence[str], fixed: Mapping[str, Any]
) -> list[Callable[[dict], bool]]:
    """Prune predicates (True = drop the config) for an incomplete ``spec``; ``[]`` when complete.

    ``tiling`` names the tiled constexprs searched, ``fixed`` the values of
    the ones left alone.
    """
    if spec.complete:
        return []
    names = list(tiling) + [n for n in fixed if n not in tiling]
    numel_cap = target.max_tensor_numel
    min_tile = _DOT_MIN if may_hide_dot(spec) else 1
    capacity = family_of(target).scratch_capacity(target)
    n_unknown = _unknown_tiles(spec)

    def values(cfg: Mapping[str, Any]) -> list[int]:
        out = []
        for n in names:
            v = cfg.get(n, fixed.get(n))
            if isinstance(v, int) and not isinstance(v, bool):
                out.append(v)
        return out

    def largest_pair(vals: list[int]) -> int:
        if len(vals) < 2:
            return max(vals, default=1)
        return max(a * b for a, b in combinations(vals, 2))

    def too_large(cfg: dict) -> bool:
        return largest_pair(values(cfg)) > numel_cap

    def too_small(cfg: dict) -> bool:
        return any(cfg.get(n, _DOT_MIN) < min_tile for n in tiling if isinstance(cfg.get(n), int))

    def over_capacity(cfg: dict) -> bool:
        if not capacity:
            return False
        # 4 bytes per element: the widest common element type of a tile (fp32 accumulators).
        return n_unknown * largest_pair(values(cfg)) * 4 > capacity

    guards = [too_large, over_capacity]
    if min_tile > 1:
        guards.append(too_small)
    return guards
