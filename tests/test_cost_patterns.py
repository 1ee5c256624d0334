"""The cost model's NVIDIA patterns (synthesis/cost.py) on the matmul fixture: the pipeline is capped by the
loop's trips, and warps above and below the ideal are priced apart."""

from __future__ import annotations

import pytest

import fixtures
from tiletune.analysis import analyze_kernel
from tiletune.runtime.binding import synthesis_shapes, tensor_dtypes
from tiletune.synthesis import cost, required_shapes, synthesize


def _terms(shape, **fixed_space):
    fx = fixtures.load("matmul")
    spec = analyze_kernel(fx.KERNEL)
    args = fx.make_args(shape, device="meta")
    shapes = synthesis_shapes(spec.name, required_shapes(spec), args)
    dtypes = tensor_dtypes(list(fx.KERNEL.arg_names), args)
    res = synthesize(spec, shapes, dtypes, "h100", top_k=10**6)
    return {(tuple(sorted(c.kwargs.items())), c.num_warps, c.num_stages): c.cost_terms for c in res.candidates}


def _key(m, n, k, w, s):
    return (tuple(sorted({"BLOCK_SIZE_M": m, "BLOCK_SIZE_N": n, "BLOCK_SIZE_K": k}.items())), w, s)


def test_stages_beyond_the_loops_trips_buy_nothing_and_a_long_loop_gains_from_each():
    short = _terms({"M": 512, "N": 512, "K": 128})  # BLOCK_SIZE_K=32: 4 trips, 3 iterations ahead at most
    f = {s: short[_key(64, 64, 32, 4, s)]["stage_factor"] for s in (1, 2, 3, 4, 5)}
    assert f[1] > f[2] > f[3] > f[4]
    assert f[5] == pytest.approx(f[4])  # a 5th stage: nothing left of the loop to fetch ahead
    long = _terms({"M": 512, "N": 512, "K": 4096})  # 128 trips
    g = {s: long[_key(64, 64, 32, 4, s)]["stage_factor"] for s in (4, 5)}
    assert g[5] < g[4]


def test_warps_above_the_ideal_are_priced_by_warp_over_and_below_by_warp_under(monkeypatch):
    shape = {"M": 4096, "N": 4096, "K": 4096}
    over, under = _key(64, 64, 64, 16, 3), _key(64, 64, 64, 2, 3)  # a 64x64 accumulator: 4 warps (a warpgroup)
    base = _terms(shape)
    monkeypatch.setattr(cost, "WARP_OVER", cost.WARP_OVER * 2)
    more = _terms(shape)
    assert more[over]["warp_factor"] - 1 == pytest.approx(2 * (base[over]["warp_factor"] - 1))
    assert more[under]["warp_factor"] == pytest.approx(base[under]["warp_factor"])
