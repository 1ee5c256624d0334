"""A tile size passed positionally at a launch is fixed, as Triton binds a call
(issue 24): the static verdict (launch sites in other modules too), the lint's
TT002 and the runtime's fixed-at-launch decision agree."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import triton
import triton.language as tl

import tiletune
from tiletune.analysis import analyze_file
from tiletune.analysis.tunability import tunability

PKG = Path(__file__).resolve().parent / "data" / "issue24_pkg"


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(tmp_path / "cache"))


@triton.jit
def col_sums_kernel(x_ptr, out_ptr, M, N, BLOCK_N: tl.constexpr, BLOCK_M: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for start in range(0, M, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        acc += tl.sum(tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=0.0), axis=0)
    tl.store(out_ptr + cols, acc, mask=cols < N)


def test_runtime_positional_tile_size_is_fixed_like_a_keyword():
    tuned = tiletune.autotune(configs=[], key=["M", "N"], target="h100", top_k=2)(col_sums_kernel)
    x = torch.randn(40, 24)
    out = torch.empty(24)
    tuned[lambda m: (triton.cdiv(24, m["BLOCK_N"]),)](x, out, 40, 24, 16)  # BLOCK_N=16, positionally
    torch.testing.assert_close(out, x.sum(0), rtol=1e-4, atol=1e-4)
    assert set(tuned.best_config.kwargs) == {"BLOCK_M"}


def test_launch_constants_bind_positionals_through_the_signature():
    tuned = tiletune.autotune(configs=[], key=["M", "N"], target="h100")(col_sums_kernel)
    fixed = tuned._launch_constants(("x", "out", 40, 24, 16), {"BLOCK_M": 8, "num_warps": 4})
    assert fixed == {"BLOCK_N": 16, "BLOCK_M": 8}


def test_static_positional_launch_in_another_module_fixes_the_parameter():
    spec = analyze_file(PKG / "kernels.py").kernel("scale_kernel")
    assert [p.name for p in spec.tiling_params] == ["BLOCK"]
    verdict = tunability(spec)
    assert verdict.tuned == ()
    assert verdict.fixed["BLOCK"].startswith("passed at launch") and "launch.py" in verdict.fixed["BLOCK"]
