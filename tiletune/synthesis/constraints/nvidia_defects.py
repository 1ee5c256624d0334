"""Configs Triton compiles but runs wrongly: known compiler defects synthesis steers clear of.

Each rule names the Triton versions and targets it applies to, the reports it
comes from and what was measured here.  The rules are synthesis preferences
of a hard kind (``kind="defect"``): ``configs=[]`` never proposes a config inside a defect's
region (synthesis, and the measured search's moves through ``check_config(proposed=True)``), but :func:`~tiletune.synthesis.check.check_config` (and the TT009
lint) does not report a user's own config for it (``check=False``), because a
defect's region is drawn wider than the configs known to fail.
"""

from __future__ import annotations

from typing import Optional

from ...analysis.expr import Expr, const, sym
from ...analysis.model import DTYPE_BYTES
from ..space import NUM_WARPS
from .core import Constraint
from .preds import Pred

__all__ = ["defect_rules", "triton_version"]

#: Bytes in a row of a wgmma operand tile below which the multi-dot defect applies: 128 B is the widest
#: shared-memory swizzle; every miscompiled config measured had a dot whose N tile was narrower.
WGMMA_NARROW_BYTES = 128


def triton_version() -> Optional[tuple[int, int]]:
    """``(major, minor)`` of the installed Triton, None when it cannot be read."""
    try:
        import triton

        major, minor = triton.__version__.split(".")[:2]
        return int(major), int(minor)
    except Exception:  # no Triton, or a version string without numbers: no version-gated rule applies
        return None


def defect_rules(b, i: int, m: Expr, n: Expr, adt: str, bdt: str) -> None:
    """Rules for tl.dot ``i`` (``m`` x ``n``) from known Triton defects on the builder's target."""
    _multi_dot_narrow_wgmma(b, i, m, n, bdt)


def _multi_dot_narrow_wgmma(b, i: int, m: Expr, n: Expr, bdt: str) -> None:
    """Triton >= 3.6 on sm_90: in a kernel with more than one tl.dot, a wgmma dot whose N tile row is under
    128 B, at 4 warps, can read shared memory out of bounds (wrong results, or an illegal memory access
    that kills the process's CUDA context).

    Reports: triton-lang/triton#11366 (3.7.1, H20 sm_90: several tl.dot, BLOCK_D=32, num_warps=4,
    "Invalid __shared__ read"; 3.5.1 clean), #10573 (3.6.0 and later, attention backward with head dim 32),
    #10486 (probabilistic illegal access, several tl.dot, H100).  Measured on an H100 with Triton 3.6.0
    (``bench/holdout/chunk_attn_out.py``, three dots, M = 64; BK x BV x 4 warps x 1-4 stages): 11 of 64
    configs at 4 warps compute wrongly, all with BV (the N of two dots) = 16 or 32; none at 8 warps, none
    with BV >= 64; a first tune that timed two of them died of an illegal memory access.  Left open: which
    later Triton fixes it (no GPU run on a later version), so the rule holds from 3.6 on.
    """
    t = b.target
    if NUM_WARPS not in b.names or (t.arch or 0) != 90 or len(b.spec.dots) < 2:
        return
    version = triton_version()
    if version is None or version < (3, 6):
        return
    esize = DTYPE_BYTES.get(bdt)
    if esize is None:
        return
    w = sym(NUM_WARPS)
    narrow_ok = Pred.ge(n * esize, const(WGMMA_NARROW_BYTES))
    not_wgmma = Pred.le(m, const(63))  # below M = 64 Triton uses mma.sync
    other_warps = Pred.any_of(Pred.le(w, const(2)), Pred.ge(w, const(8)))
    text = (f"tl.dot {i}: N tile {n} x {esize} B >= {WGMMA_NARROW_BYTES} B at 4 warps in a kernel with "
            f"{len(b.spec.dots)} tl.dot (Triton >= 3.6 on sm_90 can read shared memory out of bounds there: "
            "triton-lang/triton#11366)")
    b.add(Constraint(f"defect:narrow_wgmma:dot{i}", "defect", Pred.any_of(narrow_ok, not_wgmma, other_warps), text,
                     label="a known Triton defect", check=False))
