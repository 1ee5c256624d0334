"""Ascend cost terms the shared cost model (:mod:`.cost`) multiplies in.

:func:`alignment_factor`: Triton-Ascend moves data between global memory and
the Unified Buffer in 32-byte blocks (Ascend C general restrictions: UB
accesses are 32-byte aligned), so a tile whose contiguous run is not a
multiple of 32 B moves its run rounded UP to one.  The factor is the bytes
moved after that rounding over the bytes the tile holds, summed over the
kernel's accesses (weighted by their trip counts): 1.0 for aligned tiles,
e.g. 1.0003 for BLOCK=2461 fp32 (9844 B -> 9856 B), 16.0 for a 1-element
fp16 store per row.  It is a preference, never a rejection.

:func:`overflow_risk_factor`: a config whose estimated UB (the full plan,
``footprint["ub_estimate"]``) exceeds the UB while its certain tiles fit
(constraints/ascend.py ``RULES["ub.certain"]``) is kept but ranked lower:
its time is multiplied by :data:`OVERFLOW_RISK`, so any config that fits on
both counts and is not several times slower ranks above it.
"""

from __future__ import annotations

import numpy as np

from .constraints import Model, evaluate
from .constraints.ascend import UB_ESTIMATE

__all__ = ["alignment_factor", "overflow_risk_factor", "OVERFLOW_RISK"]

#: Time factor of a config that may overflow the UB (estimate over, certain within).
OVERFLOW_RISK = 4.0


def _arr(e, env: dict, n: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(evaluate(e, env), dtype=np.float64), (n,))


def alignment_factor(model: Model, env: dict, n: int) -> np.ndarray:
    """Bytes moved with each contiguous run rounded up to ``ub_align_bytes``, over the bytes held."""
    align = float(model.target.ub_align_bytes or 32)
    held = np.zeros(n)
    moved = np.zeros(n)
    for at in model.accesses:
        if at.contiguous_bytes is None:
            continue
        b = _arr(at.bytes, env, n) * np.maximum(_arr(at.trips, env, n), 1.0)
        c = np.maximum(_arr(at.contiguous_bytes, env, n), 1.0)
        held += b
        moved += b * (np.ceil(c / align) * align) / c
    return np.where(held > 0, moved / np.maximum(held, 1.0), 1.0)


def overflow_risk_factor(model: Model, env: dict, n: int) -> np.ndarray:
    """:data:`OVERFLOW_RISK` where the estimated UB bytes exceed the target's UB, else 1.0."""
    ub = model.target.ub_bytes
    if not ub or UB_ESTIMATE not in model.footprint:
        return np.ones(n)
    return np.where(_arr(model.footprint[UB_ESTIMATE], env, n) > ub, OVERFLOW_RISK, 1.0)
