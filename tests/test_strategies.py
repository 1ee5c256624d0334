"""Search strategies (runtime/strategies.py): one interface (a benchmark function and a budget in, the best
config and facts out), registered by name and chosen by ``SearchPolicy.strategy``.  Clocks and timings are
injected; the kernel-level test runs a real kernel under the interpreter."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl

import tiletune
from tiletune.runtime import bench
from tiletune.runtime.search import Point, SearchPolicy
from tiletune.runtime.strategies import (Budget, Space, StrategyResult, get_strategy, register_strategy,
                                         run_strategy, strategy_names)
from tests.search_helpers import bowl

POLICY = SearchPolicy("t", 1, 1, seeds=1, max_compiles=10_000, max_seconds=1e9)


def _bench_of(time_of, log):
    def benchmark(points):
        log.extend(points)
        return [time_of(p) for p in points]
    return benchmark


def test_the_descent_strategy_walks_from_a_far_seed_to_the_bowls_floor():
    time_of = bowl({"BM": 16, "BN": 128, "w": 4})
    log: list = []
    start = Point.of({"BM": 256, "BN": 8}, 32, 3)
    r = run_strategy("descent", _bench_of(time_of, log), Budget(POLICY), Space(tiling=["BM", "BN"]),
                     {start: time_of(start)})
    assert (r.best.values(), r.best.num_warps) == ({"BM": 16, "BN": 128}, 4) and r.best_ms == pytest.approx(1.0)
    assert r.stopped == "converged" and r.measured == len(log) > 0


def test_the_screen_strategy_measures_the_ranked_points_in_order_until_the_budget_ends():
    """0.1 s a measured point on an injected clock, 0.35 s budget, rounds of 2: two rounds fit (the third
    starts after 0.4 s), in the model's order; the infeasible point is never measured."""
    now = [0.0]
    ranked = [Point.of({"BM": m}, 4, 1) for m in (64, 32, 16, 8, 4, 2, 1)]
    bad = ranked[2]
    log: list = []

    def benchmark(points):
        now[0] += 0.1 * len(points)
        log.extend(points)
        return [float(p.values()["BM"]) for p in points]

    budget = Budget(POLICY, seconds=0.35, clock=lambda: now[0], started=0.0, compile_workers=2)
    r = run_strategy("screen", benchmark, budget, Space(ranked=ranked, feasible=lambda p: p != bad))
    assert log == [ranked[0], ranked[1], ranked[3], ranked[4]]
    assert r.stopped == "budget" and r.rejected == 1 and r.best == ranked[4] and r.best_ms == 4.0


def test_an_unknown_strategy_is_refused_naming_the_registered_ones():
    with pytest.raises(ValueError, match="'descent'.*'screen'"):
        get_strategy("annealing")
    with pytest.raises(ValueError, match="not a search strategy"):
        tiletune.autotune(configs=[], key=["n"], search=SearchPolicy("x", 1, 1, strategy="annealing"))(_double)


@triton.jit
def _double(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


def test_the_kernel_tuner_runs_the_strategy_its_policy_names(monkeypatch):
    """A strategy registered by name and named by the policy is the one the kernel tuner runs after the
    first batch: it gets the tuner's benchmark, its budget and the model's space, and its facts are the
    search's."""
    calls: list = []

    def first_only(benchmark, budget, space, measured):
        calls.append((budget.policy.name, len(space.ranked), dict(measured)))
        best = min((t, p.signature(), p) for p, t in measured.items() if t is not None)
        return StrategyResult(dict(measured), best[2], best[0], [], 0, 0, "first batch only")

    register_strategy("first-only", first_only)
    assert "first-only" in strategy_names()
    monkeypatch.setattr(bench, "_clock", bench.VirtualClock())
    policy = SearchPolicy("mine", first_min=2, first_max=2, strategy="first-only")
    tuned = tiletune.autotune(configs=[], key=["n"], search=policy, cache_results=False)(_double)
    x = torch.randn(300)
    y = torch.empty_like(x)
    tuned[lambda meta: (triton.cdiv(300, meta["BLOCK"]),)](x, y, 300)
    torch.testing.assert_close(y, x * 2)
    assert len(calls) == 1 and calls[0][0] == "mine" and len(calls[0][2]) >= 1
    assert tuned.search_facts["descent_stopped"] == "first batch only"


def test_search_names_a_registered_strategy_and_the_default_modes_budget_holds(monkeypatch):
    """``search="screen"``: the default mode's first batch, then the screen strategy (no moves)."""
    from tiletune.runtime.search import SEARCH_MODES, resolve_search

    policy = resolve_search("screen")
    assert policy.strategy == "screen" and policy.first_max == SEARCH_MODES["default"].first_max
    with pytest.raises(ValueError, match="'default'.*'descent'.*'screen'"):
        resolve_search("annealing")
    with pytest.raises(ValueError, match="is a search mode"):
        register_strategy("fast", lambda *a: None)
    monkeypatch.setattr(bench, "_clock", bench.VirtualClock())
    monkeypatch.setenv("TILETUNE_SEARCH", "screen")  # under the interpreter, an explicit choice is needed
    tuned = tiletune.autotune(configs=[], key=["n"], cache_results=False)(_double)
    x = torch.randn(300)
    y = torch.empty_like(x)
    tuned[lambda meta: (triton.cdiv(300, meta["BLOCK"]),)](x, y, 300)
    torch.testing.assert_close(y, x * 2)
    facts = tuned.search_facts
    assert facts["search"] == "screen" and facts.get("descent_moves", 0) == 0
    assert facts["descent_stopped"] in ("done", "budget")
