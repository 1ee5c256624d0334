"""What the search tests share: a synthetic timing landscape."""

from __future__ import annotations

import math

from tiletune.runtime.search import Point


def bowl(best: dict, floor: float = 1.0):
    """A time (ms) that grows with the log2 distance of each value from ``best``."""

    def time_of(p: Point) -> float:
        v = p.values()
        d = sum(abs(math.log2(v[k]) - math.log2(best[k])) for k in best if k != "w")
        if p.num_warps is not None:
            d += abs(math.log2(p.num_warps) - math.log2(best.get("w", p.num_warps)))
        return floor * (1.0 + 0.25 * d)

    return time_of
