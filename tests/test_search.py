"""The measured search (runtime/search.py) and the decision path every tuner shares (runtime/decision.py).

Timings are injected: the benchmark method is replaced by a function of the
config a launch used (recorded by a pre_hook), so nothing depends on the
machine.  Kernels run under TRITON_INTERPRET=1 (conftest.py).
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
import torch
import triton
import triton.language as tl

import tiletune
from tiletune.runtime import bench, decision
from tiletune.tune import autotune as tune_function
from tiletune.runtime.descent import Descent
from tiletune.runtime.search import (
    SEARCH_MODES,
    Point,
    SearchPolicy,
    first_batch_size,
    neighbours,
    resolve_search,
)
from tests.search_helpers import bowl


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(tmp_path / "cache"))
    for var in ("TILETUNE_ALWAYS_TUNE", "TRITON_BENCH_METHOD", "TILETUNE_SEARCH", "TILETUNE_VERSION_CHECK"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)


# ----------------------------------------------------------------------------- pure search logic


def run_descent(start: Point, time_of, policy: SearchPolicy, feasible=lambda p: True, clock=None, tiling=("BM", "BN")):
    measured: list = []

    def measure(points):
        measured.extend(points)
        return [time_of(p) for p in points]

    kw = {} if clock is None else {"clock": clock, "started": 0.0}
    d = Descent(measure, feasible, policy, list(tiling), **kw)
    return d.run({start: time_of(start)}), measured


def test_descent_walks_from_the_model_pick_to_a_far_optimum():
    time_of = bowl({"BM": 16, "BN": 256, "w": 8})
    start = Point.of({"BM": 128, "BN": 32}, 2, 3)
    result, measured = run_descent(start, time_of, SearchPolicy("t", 1, 1, max_compiles=500, max_seconds=1e9))
    best = min((t, p.signature(), p) for p, t in result.times.items() if t is not None)[2]
    assert best.values() == {"BM": 16, "BN": 256} and best.num_warps == 8
    assert result.stopped == "converged" and result.moves
    assert len(measured) == len(set(measured))  # memoised: nothing measured twice


def test_descent_never_measures_what_the_model_rejects():
    time_of = bowl({"BM": 256, "BN": 256})
    start = Point.of({"BM": 32, "BN": 32}, 4, 3)

    def feasible(p):  # a capacity limit: at most 64*128 elements per tile
        v = p.values()
        return v["BM"] * v["BN"] <= 64 * 128

    result, measured = run_descent(start, time_of, SearchPolicy("t", 1, 1, max_compiles=500, max_seconds=1e9), feasible)
    assert measured and all(feasible(p) for p in measured)
    assert result.rejected > 0
    best = min((t, p.signature(), p) for p, t in result.times.items() if t is not None)[2]
    assert best.values()["BM"] * best.values()["BN"] == 64 * 128  # on the limit, as close as allowed


def test_descent_stops_at_the_compile_budget():
    time_of = bowl({"BM": 1, "BN": 4096})
    start = Point.of({"BM": 256, "BN": 1}, 4, 3)
    result, measured = run_descent(start, time_of, SearchPolicy("t", 1, 1, max_compiles=5, max_seconds=1e9))
    assert len(measured) <= 5 and result.stopped == "budget"


def test_descent_stops_at_the_time_budget():
    now = [0.0]

    def clock():
        now[0] += 1.0  # every look at the clock costs a second
        return now[0]

    time_of = bowl({"BM": 1, "BN": 4096})
    start = Point.of({"BM": 256, "BN": 1}, 4, 3)
    result, measured = run_descent(start, time_of, SearchPolicy("t", 1, 1, max_compiles=10_000, max_seconds=3.0),
                                   clock=clock)
    assert result.stopped == "budget"
    assert len(measured) < 40


def test_descent_stops_when_no_move_gains_more_than_one_percent():
    flat = lambda p: 1.0 - 0.001 * p.values()["BM"] / 1024  # noqa: E731  (gains far below 1%)
    start = Point.of({"BM": 64, "BN": 64}, 4, 3)
    result, _ = run_descent(start, flat, SearchPolicy("t", 1, 1, max_compiles=500, max_seconds=1e9))
    assert result.moves == [] and result.stopped == "converged"


def test_neighbours_are_single_and_tile_warps_moves_within_bounds():
    p = Point.of({"BM": 1, "BN": 64, "GROUP": 8}, 32, 1)
    got = neighbours(p, ["BM", "BN"], {"GROUP": [1, 8]})
    sigs = {(q.values()["BM"], q.values()["BN"], q.values()["GROUP"], q.num_warps, q.num_stages) for q in got}
    assert sigs == {(2, 64, 8, 32, 1), (1, 128, 8, 32, 1), (1, 32, 8, 32, 1), (1, 64, 1, 32, 1),
                    (1, 64, 8, 16, 1), (1, 64, 8, 32, 2),
                    (1, 32, 8, 16, 1),  # BN and num_warps halved together; x2 would need 64 warps, BM/2 is 0
                    (1, 32, 8, 32, 2)}  # BN halved at twice the stages; x2 at half of 1 stage is no move
    far = set(neighbours(p, ["BM", "BN"], {"GROUP": [1, 8]}, far_warps=True)) - set(got)
    assert far == {Point(p.kwargs, 8, 1)}  # num_warps /4 (x4 would be 128 warps)
    assert all(q.num_warps is None for q in neighbours(Point.of({"BM": 4}, None, None), ["BM"],
                                                         launch_options=False))
    # nothing to pipeline (synthesis' stage domain is [1]): no stage moves
    assert all(q.num_stages == 1 for q in neighbours(Point.of({"BM": 4}, 4, 1), ["BM"], stages=[1]))


def test_first_batch_is_small_where_the_model_is_decisive_and_larger_where_not():
    policy = SEARCH_MODES["default"]
    decisive = [1.0, 2.0, 2.5, 3.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 9.5, 9.9, 10.0]
    undecided = [1.0, 1.01, 1.02, 1.03, 1.05, 1.05, 1.06, 1.08, 1.1, 1.1, 1.12, 1.13, 1.14, 1.2]
    assert first_batch_size(decisive, policy) == policy.first_min
    assert first_batch_size(undecided, policy) == policy.first_max
    assert first_batch_size([None, None, None], policy) == 3
    assert first_batch_size([], policy) == 0


def test_search_modes_from_argument_and_environment(monkeypatch):
    assert resolve_search("fast").name == "fast"
    monkeypatch.setenv("TILETUNE_SEARCH", "exhaustive")
    assert resolve_search().name == "exhaustive" and not resolve_search().descent
    assert resolve_search("default").name == "default"
    wide = resolve_search("default", breadth=2.0)
    assert wide.first_max == 2 * SEARCH_MODES["default"].first_max and wide.seeds > SEARCH_MODES["default"].seeds
    with pytest.raises(ValueError, match="not a search mode.*'fast'"):
        resolve_search("thorough")
    monkeypatch.setenv("TILETUNE_SEARCH", "nope")
    with pytest.raises(ValueError, match="TILETUNE_SEARCH"):
        resolve_search()


# ----------------------------------------------------------------------------- the autotuner's search, end to end


@triton.jit
def scale2d_kernel(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    offs = rm[:, None] * N + rn[None, :]
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


#: The default search without its time budget: what a test of the descent's moves uses, so that the wall time
#: the interpreter takes on a loaded machine (over the default's 8 s) cannot stop the descent it checks.
UNTIMED_DEFAULT = replace(SEARCH_MODES["default"], name="untimed", max_seconds=1e9)


class Injected:
    """The 'wall' benchmark replaced by a time that depends only on the config a launch used."""

    def __init__(self, monkeypatch, best):
        self.best = best
        self.current: dict = {}
        self.timed: list = []
        self.launches = 0
        if not isinstance(bench._clock, bench.VirtualClock):
            # The search's time budget reads the measuring clock: on a stopped clock only the injected times
            # and the compile budget decide, however busy the machine is (under load a real 8 s budget ran out
            # before the descent reached the winner).
            monkeypatch.setattr(bench, "_clock", bench.VirtualClock())

        def fake_wall(fn, *, warmup=None, rep=None):
            fn()
            cfg = (self.current["BLOCK_M"], self.current["BLOCK_N"])
            self.timed.append(cfg)
            d = sum(abs(math.log2(v) - math.log2(b)) for v, b in zip(cfg, self.best))
            return 1.0 + 0.3 * d

        monkeypatch.setitem(bench.METHODS, "wall", fake_wall)

    def pre_hook(self, nargs, reset_only=False):
        if not reset_only:
            self.launches += 1
            self.current = {k: nargs[k] for k in ("BLOCK_M", "BLOCK_N")}


def launch(tuned, m=16, n=1024):
    # the injected bests (BLOCK_M up to 16, BLOCK_N up to 1024) lie inside the domain, which ends at the next
    # power of two of each extent (a larger tile is dominated: the search never proposes it)
    x = torch.randn(m, n)
    y = torch.empty_like(x)
    tuned[lambda meta: (triton.cdiv(m, meta["BLOCK_M"]), triton.cdiv(n, meta["BLOCK_N"]))](x, y, m, n)
    torch.testing.assert_close(y, x * 2)


def test_autotune_descent_finds_a_winner_far_from_the_models_pick(monkeypatch):
    inj = Injected(monkeypatch, best=(2, 256))
    tuned = tiletune.autotune(configs=[], key=["M", "N"], top_k=1, search=UNTIMED_DEFAULT,
                              pre_hook=inj.pre_hook)(scale2d_kernel)
    launch(tuned)
    first = inj.timed[0]
    assert first != (2, 256)  # the model's pick is elsewhere ...
    assert (tuned.best_config.kwargs["BLOCK_M"], tuned.best_config.kwargs["BLOCK_N"]) == (2, 256)  # ... found
    assert tuned._synthesis.point_costs  # every feasible point's cost, the order of the descent's moves


def test_autotune_descent_respects_the_compile_budget(monkeypatch):
    inj = Injected(monkeypatch, best=(1, 1024))
    policy = SearchPolicy("tiny", first_min=1, first_max=1, max_compiles=3, max_seconds=1e9)
    tuned = tiletune.autotune(configs=[], key=["M", "N"], top_k=1, search=policy,
                              pre_hook=inj.pre_hook)(scale2d_kernel)
    launch(tuned)
    distinct = set(inj.timed)
    assert len(distinct) <= 1 + 3  # the first batch, then at most three by the descent
    batches = tuned.search_facts["batches"]  # what each batch measured and took: the first, then each round
    assert batches[0]["configs"] == 1 and sum(b["configs"] for b in batches) == tuned.search_facts["measured"]
    assert all(b["seconds"] >= 0 for b in batches)


def test_hand_configs_are_measured_as_given(monkeypatch):
    inj = Injected(monkeypatch, best=(2, 256))
    configs = [triton.Config({"BLOCK_M": 16, "BLOCK_N": 16}), triton.Config({"BLOCK_M": 32, "BLOCK_N": 32})]
    tuned = tiletune.autotune(configs=configs, key=["M", "N"], search="default", pre_hook=inj.pre_hook)(scale2d_kernel)
    launch(tuned)
    assert set(inj.timed) == {(16, 16), (32, 32)}


def test_interpreter_without_a_search_mode_measures_the_ranked_list_once(monkeypatch):
    inj = Injected(monkeypatch, best=(1, 1024))
    tuned = tiletune.autotune(configs=[], key=["M", "N"], top_k=2, pre_hook=inj.pre_hook)(scale2d_kernel)
    launch(tuned)
    assert len(set(inj.timed)) <= 2


# ----------------------------------------------------------------------------- one decision path for three tuners


def test_the_three_tuners_share_one_decision_path(monkeypatch):
    seen: list = []
    real_decide, real_lookup = decision.decide, decision.lookup

    def spy(d, match, tune, **kw):
        seen.append(("decide", d.what))
        return real_decide(d, match, tune, **kw)

    def spy_lookup(d, match):
        seen.append(("lookup", d.what))
        return real_lookup(d, match)

    monkeypatch.setattr(decision, "decide", spy)
    monkeypatch.setattr(decision, "lookup", spy_lookup)
    inj = Injected(monkeypatch, best=(16, 16))
    configs = [triton.Config({"BLOCK_M": 16, "BLOCK_N": 16}), triton.Config({"BLOCK_M": 32, "BLOCK_N": 32})]

    kernel = tiletune.autotune(configs=configs, key=["M", "N"], pre_hook=inj.pre_hook)(scale2d_kernel)
    launch(kernel)

    @tune_function(config_space=[{"k": 1}, {"k": 2}], key_fn=lambda x: x.shape, warmup=1, rep=1)
    def fn(x, *, k):
        return x * k

    fn(torch.ones(4))

    other = tiletune.autotune(configs=configs, key=["M", "N"], pre_hook=inj.pre_hook)(scale2d_kernel)

    @tiletune.contextual_autotune(n_repeat=1, n_warmup=0)
    def ctx(m, n):
        launch(other, m, n)

    ctx(8, 8)
    # each tuner calls decide once for its key, and decide does the cache lookup (with the kernel's cache for the
    # contextual tuner's kernel, under the context's name)
    whats = ["kernel 'scale2d_kernel'", "autotune of test_search.test_the_three_tuners_share_one_decision_path."
             "<locals>.fn", "contextual tuning of test_search.test_the_three_tuners_share_one_decision_path."
             "<locals>.ctx (kernel 'scale2d_kernel')"]
    assert seen == [(stage, w) for w in whats for stage in ("decide", "lookup")]


def _tuned_run(tuner, inj, calls):
    """A first launch of ``scale2d_kernel`` under the kernel, function or contextual tuner (``calls`` collects the
    function tuner's runs); call it to tune or hit the cache."""
    configs = [triton.Config({"BLOCK_M": 16, "BLOCK_N": 16}), triton.Config({"BLOCK_M": 32, "BLOCK_N": 32})]
    if tuner == "function":
        @tune_function(config_space=[{"k": 1}, {"k": 2}], key_fn=lambda x: x.shape, warmup=1, rep=1)
        def fn(x, *, k):
            calls.append(k)
            return x * k

        return lambda: fn(torch.ones(4))
    kern = tiletune.autotune(configs=configs, key=["M", "N"], pre_hook=inj.pre_hook)(scale2d_kernel)
    if tuner == "kernel":
        return lambda: launch(kern)

    @tiletune.contextual_autotune(n_repeat=1, n_warmup=0)
    def ctx():
        launch(kern)

    return ctx


def _cache_entries(tmp_path):
    """``(path, data)`` of every cache file under ``tmp_path/cache`` that holds entries."""
    from tiletune.runtime.cache import read_cache_file

    out = []
    for path in (tmp_path / "cache").rglob("*.json"):
        data, _ = read_cache_file(path)
        if data and "entries" in data:
            out.append((path, data))
    return out


@pytest.mark.parametrize("tuner", ["kernel", "function", "contextual"])
def test_a_cache_entry_without_a_config_is_retuned_by_every_tuner(tuner, monkeypatch, tmp_path):
    """validate_cached (stage 3) is the one check: an unusable entry means a new tuning, in all three."""
    inj = Injected(monkeypatch, best=(16, 16))
    import json

    _tuned_run(tuner, inj, [])()
    assert _cache_entries(tmp_path)
    for path, data in _cache_entries(tmp_path):  # break every entry: keep the key, drop the config
        for entry in data["entries"].values():
            entry.pop("config", None)
        path.write_text(json.dumps(data))
    run2 = _tuned_run(tuner, inj, [])
    with pytest.warns(UserWarning, match="unusable"):  # validate_cached says so, the same way for all three
        run2()
    stored = [e for _, data in _cache_entries(tmp_path) for e in data["entries"].values()]
    assert all("config" in e for e in stored)  # tuned and stored again


@pytest.mark.parametrize("tuner", ["kernel", "function", "contextual"])
def test_an_entry_tuned_under_other_versions_is_refused_or_retuned_alike_by_every_tuner(tuner, monkeypatch, tmp_path):
    """Stage 4 (version policy) lives in decision.decide: strict mode refuses the stale entry, the default
    re-tunes it and replaces the entry, the same way for the kernel, function and contextual tuners."""
    import json

    from tiletune.runtime.cache import StaleCacheEntryError

    inj = Injected(monkeypatch, best=(16, 16))
    calls: list = []

    _tuned_run(tuner, inj, calls)()
    assert _cache_entries(tmp_path)
    for path, data in _cache_entries(tmp_path):  # as if tuned under another torch
        for entry in data["entries"].values():
            entry["fingerprint"] = {**entry["fingerprint"], "torch": "0.0.1-old"}
        path.write_text(json.dumps(data))
    monkeypatch.setenv("TILETUNE_VERSION_CHECK", "strict")
    with pytest.raises(StaleCacheEntryError, match="0.0.1-old"):
        _tuned_run(tuner, inj, calls)()
    monkeypatch.delenv("TILETUNE_VERSION_CHECK")
    launches, n_calls = inj.launches, len(calls)
    again = _tuned_run(tuner, inj, calls)
    again()  # the default policy: re-tuned (every candidate ran again, not one launch), and the entry replaced
    if tuner == "kernel":
        assert inj.launches > launches + 1
    elif tuner == "function":
        assert len(calls) > n_calls + 1
    else:
        assert again.last_runs > 1  # tuning runs of the function, then the final call
    stored = [e for _, data in _cache_entries(tmp_path) for e in data["entries"].values()]
    assert all(e["fingerprint"]["torch"] != "0.0.1-old" for e in stored)


# ----------------------------------------------------------------------------- the wave-quantisation term


def test_memory_wave_factor_tail_and_few_programs():
    import math

    import numpy as np

    from tiletune.synthesis.cost import BW_SATURATION, memory_wave_factor

    c = 132.0
    got = memory_wave_factor(np.array([132.0, 264.0, 10.0, 64.0, 86.0, 145.2, 1321.0]), c)
    assert got[0] == 1.0 and got[1] == 1.0  # whole waves
    # below one wave: the few-program bandwidth saturates smoothly with the busy cores' share
    f = lambda x: (1 - math.exp(-BW_SATURATION * x)) / (1 - math.exp(-BW_SATURATION))  # noqa: E731
    assert got[2] == pytest.approx(1 / f(10 / c))
    assert 1 < got[2] < c / 10  # 10 SMs pull more than their fair share, less than all
    assert 1 / got[3] == pytest.approx(0.76, abs=0.03)  # H100: 64 busy SMs reached ~0.76 of the copy bandwidth
    assert 1.05 < got[4] < 1.2  # 86 of 132 SMs do not reach the full bandwidth (int8_gemv N=11008 measured 1.19)
    assert 1.2 < got[5] < 1.35  # a tail after one wave costs less than a whole wave (1.82)
    assert 1.0 < got[6] < 1.05  # one program after ten waves costs little


def _tuned_on_a_virtual_clock(monkeypatch, measure_ms: float, before_ms: float = 0.0):
    """A 3.5 s budget on a VirtualClock: each measurement 'takes' ``measure_ms``, and ``before_ms`` pass
    before the search (in the kernel's protection, set up by the first tune ahead of the search)."""
    from tiletune.runtime import protect

    clock = bench.VirtualClock()
    previous = bench.set_clock(clock)
    try:
        inj = Injected(monkeypatch, best=(1, 1024))
        real = bench.METHODS["wall"]
        real_protection = protect.kernel_protection

        def slow_wall(fn, *, warmup=None, rep=None):
            clock.advance(measure_ms)
            return real(fn, warmup=warmup, rep=rep)

        def slow_protection(*a, **k):
            clock.advance(before_ms)
            return real_protection(*a, **k)

        monkeypatch.setitem(bench.METHODS, "wall", slow_wall)
        monkeypatch.setattr(protect, "kernel_protection", slow_protection)
        policy = SearchPolicy("timed", first_min=1, first_max=1, max_compiles=1000, max_seconds=3.5)
        tuned = tiletune.autotune(configs=[], key=["M", "N"], top_k=1, search=policy,
                                  pre_hook=inj.pre_hook)(scale2d_kernel)
        launch(tuned)
    finally:
        bench.set_clock(previous)
    return tuned


def test_autotune_descent_stops_at_the_time_budget_on_the_measuring_clock(monkeypatch):
    """Each measured config 'takes' 1 s on a VirtualClock; a 3.5 s budget stops the descent early."""
    tuned = _tuned_on_a_virtual_clock(monkeypatch, measure_ms=1000.0)
    assert tuned.search_facts["descent_stopped"] == "budget"
    assert tuned.search_facts["descent_measured"] < 20


def test_the_time_budget_counts_what_the_first_tune_spent_before_the_search(monkeypatch):
    """Binding, analysis and the cache lookup are part of the first tune the user waits for: 3 s spent there
    (injected on the measuring clock) leave a 3.5 s budget room for the first batch only."""
    facts = _tuned_on_a_virtual_clock(monkeypatch, measure_ms=100.0, before_ms=3000.0).search_facts
    assert facts["seconds"]["before"] == pytest.approx(3.0)
    assert facts["descent_stopped"] == "budget"
    assert facts["descent_measured"] <= 4  # 0.5 s left at 0.1 s a measurement (and re-timing kept back)


# ----------------------------------------------------------------------------- target names, one resolver


def test_target_aliases_share_cache_entries(monkeypatch):
    inj = Injected(monkeypatch, best=(16, 16))
    configs = [triton.Config({"BLOCK_M": 16, "BLOCK_N": 16}), triton.Config({"BLOCK_M": 32, "BLOCK_N": 32})]
    first = tiletune.autotune(configs=configs, key=["M", "N"], target="h100", pre_hook=inj.pre_hook)(scale2d_kernel)
    launch(first)
    tuned_launches = inj.launches
    again = tiletune.autotune(configs=configs, key=["M", "N"], target="SM90", pre_hook=inj.pre_hook)(scale2d_kernel)
    launch(again)
    assert inj.launches == tuned_launches  # a cache hit: "SM90" is h100's alias
    from tiletune.runtime.targets import target_name

    assert target_name("sm90") == target_name("H100") == "h100"


def test_screening_uses_short_budgets_unless_the_user_chose_them(monkeypatch):
    from tiletune.runtime import measure

    seen = []
    monkeypatch.setitem(bench.METHODS, "wall", lambda fn, *, warmup=None, rep=None: seen.append((warmup, rep)) or 1.0)
    monkeypatch.setattr(bench, "interpreting", lambda: False)
    full = bench.get_bench("wall")
    default = tiletune.autotune(configs=[], key=["M", "N"])(scale2d_kernel).measure_stage()
    default.method_used = "wall"
    default._screen_fn(full)(lambda: None)
    assert seen[-1] == (measure.SCREEN_WARMUP_MS, measure.SCREEN_REP_MS)
    chosen = tiletune.autotune(configs=[], key=["M", "N"], warmup=3, rep=7)(scale2d_kernel).measure_stage()
    chosen.method_used = "wall"
    assert chosen._screen_fn(full) is full


def test_candidates_timed_while_others_compiled_are_timed_again_and_keep_the_lower_time(monkeypatch):
    """_Trial._rescreen: contention can only add time, so the second (quiet) time replaces a higher first one."""
    from tiletune.runtime.measure import _Trial

    inj = Injected(monkeypatch, best=(16, 16))
    configs = [triton.Config({"BLOCK_M": b, "BLOCK_N": b}) for b in (16, 32, 64)]
    tuned = tiletune.autotune(configs=configs, key=["M", "N"], pre_hook=inj.pre_hook)(scale2d_kernel)
    m, n = 8, 8
    x, y = torch.randn(m, n), torch.empty(m, n)
    grid = lambda meta: (triton.cdiv(m, meta["BLOCK_M"]), triton.cdiv(n, meta["BLOCK_N"]))  # noqa: E731
    args, kwargs = (x, y, m, n), {"grid": grid, "warmup": False}
    problem = tuned._problem(args, kwargs)
    trial = _Trial(tuned, args, kwargs, problem, None, lambda fn: (fn(), 1.0)[1])
    for c in configs:
        trial.add(c)
    # first times as if taken under contention: 16 looked slow (2.4 vs the quiet 1.0), 64 far too slow to matter
    trial.timings = {0: 2.4, 1: 1.9, 2: 9.0}
    trial.contended = {0, 1, 2}
    got = trial._rescreen({0: 2.4, 1: 1.9, 2: 9.0})
    assert got[0] == 1.0 and got[1] == 1.0, trial.failures  # within 1.5x of the best known (1.9): timed again, lower kept
    assert got[2] == 9.0  # far slower: not timed again


def test_a_gaining_move_is_repeated_one_step_at_a_time_down_a_long_valley():
    from tiletune.runtime.descent import diverse_seeds
    from tiletune.runtime.search import repeat_move

    assert repeat_move(Point.of({"B": 128}, 16, 3), Point.of({"B": 64}, 16, 3)).values() == {"B": 32}
    assert repeat_move(Point.of({"B": 4}, 16, 3), Point.of({"B": 4}, 8, 3)).num_warps == 4
    assert repeat_move(Point.of({"B": 4}, 32, 3), Point.of({"B": 4}, 8, 3)).num_warps == 2  # /4 again
    assert repeat_move(Point.of({"B": 4}, 1, 3), Point.of({"B": 4}, 4, 3)).num_warps == 16  # x4 again
    assert repeat_move(Point.of({"B": 4}, 16, 2), Point.of({"B": 4}, 16, 1)) is None  # no stage 0
    # num_warps 32 -> 1 and a tile 128 -> 2 (H100 int8_gemv's winner was that far from the model's pick)
    time_of = bowl({"BM": 2, "BN": 128, "w": 1})
    start = Point.of({"BM": 128, "BN": 128}, 32, 3)
    # 50 compiles: in this bowl the seed's num_warps /4 ties with its paired move, and taking it costs one
    # neighbourhood more than the paired walk
    result, measured = run_descent(start, time_of, SearchPolicy("t", 1, 1, seeds=1, max_compiles=50, max_seconds=1e9))
    best = min((t, p.signature(), p) for p, t in result.times.items() if t is not None)[2]
    assert best.values()["BM"] == 2 and best.num_warps == 1
    assert len(measured) <= 50
    # seeds: the second comes from another tile when one was measured
    a, b, c = Point.of({"B": 64}, 4, 3), Point.of({"B": 64}, 4, 4), Point.of({"B": 16}, 4, 3)
    assert diverse_seeds([a, b, c], 2) == [a, c]
    assert diverse_seeds([a, b], 2) == [a, b]


def test_descent_with_verify_compares_every_batch_with_the_first_reference(monkeypatch):
    inj = Injected(monkeypatch, best=(4, 128))
    tuned = tiletune.autotune(configs=[], key=["M", "N"], top_k=1, search=UNTIMED_DEFAULT, verify=True,
                              pre_hook=inj.pre_hook)(scale2d_kernel)
    launch(tuned)  # asserts y == 2 x after tuning
    assert (tuned.best_config.kwargs["BLOCK_M"], tuned.best_config.kwargs["BLOCK_N"]) == (4, 128)
    assert tuned.search_facts["descent_measured"] > 0


def test_paired_tile_and_warps_moves_reach_a_corner_that_single_moves_stop_short_of():
    """int8_gemv N=11008 on the H100: from BLOCK_N=32 on 32 warps the winner was BLOCK_N=2 on 2 warps.

    Here time depends on the work per thread (tile / warps) and, less, on the
    warps: halving the tile alone leaves idle warps (slower), halving the
    warps alone doubles the work per thread (slower), so single moves stop at
    the start; the paired move keeps the work per thread and gains.
    """
    from tiletune.runtime.search import repeat_move

    def time_of(p: Point) -> float:
        per_thread = p.values()["BN"] * 1024 / (p.num_warps * 32)
        return abs(math.log2(per_thread / 32)) + 0.1 * math.log2(p.num_warps) + 1.0

    start = Point.of({"BN": 32}, 32, 1)
    single_only = {p: time_of(p) for p in neighbours(start, ["BN"]) if p.kwargs == start.kwargs or
                   p.num_warps == start.num_warps}
    assert min(single_only.values()) >= time_of(start)  # no single move gains
    result, measured = run_descent(start, time_of, SearchPolicy("t", 1, 1, seeds=1, max_compiles=60, max_seconds=1e9),
                                   tiling=("BN",))
    best = min((t, p.signature(), p) for p, t in result.times.items() if t is not None)[2]
    assert best.values() == {"BN": 1} and best.num_warps == 1
    assert repeat_move(Point.of({"B": 8}, 8, 3), Point.of({"B": 4}, 4, 3)) == Point.of({"B": 2}, 2, 3)
    assert repeat_move(Point.of({"B": 8}, 8, 3), Point.of({"B": 4}, 16, 3)) is None  # not one direction


def test_tile_against_stages_move_reaches_a_deeper_pipeline_that_single_moves_cannot():
    """matmul M=512,N=4096,K=11008 on the H100: from BLOCK_K=128 at 3 stages (shared memory full) the
    winner was BLOCK_K=64 at 5 stages.

    Here time falls with the bytes in flight (BK x stages) and, less, with a
    shallower tile; shared memory holds at most BK x stages = 384.  Adding a
    stage does not fit, halving BK alone halves the bytes in flight, so single
    moves stop at the start; BK/2 at twice the stages keeps the bytes in
    flight and gains.
    """
    def time_of(p: Point) -> float:
        in_flight = p.values()["BK"] * p.num_stages
        return 1000.0 / in_flight + 0.001 * p.values()["BK"]

    def fits(p: Point) -> bool:
        return p.values()["BK"] * p.num_stages <= 384

    stages = tuple(range(1, 6))
    start = Point.of({"BK": 128}, 4, 3)
    single = [p for p in neighbours(start, ["BK"], stages=stages)
              if (p.kwargs == start.kwargs or p.num_stages == start.num_stages) and fits(p)]
    assert single and min(map(time_of, single)) >= time_of(start)  # no single move gains
    assert Point.of({"BK": 64}, 4, 5) in neighbours(start, ["BK"], stages=stages)  # 3 x 2 = 6, clipped to 5
    assert Point.of({"BK": 256}, 4, 1) in neighbours(start, ["BK"], stages=stages)
    assert all(p.num_stages == 3 or p.kwargs == start.kwargs or p.num_warps != 4
               for p in neighbours(start, ["BK"], stages=(3,)))  # nothing to pipeline: no stage pairs
    measured: list = []

    def measure(points):
        measured.extend(points)
        return [time_of(p) for p in points]

    d = Descent(measure, fits, SearchPolicy("t", 1, 1, seeds=1, max_compiles=60, max_seconds=1e9), ["BK"],
                stages=range(1, 8))
    result = d.run({start: time_of(start)})
    best = min((t, p.signature(), p) for p, t in result.times.items() if t is not None)[2]
    assert best.values()["BK"] < 128 and best.values()["BK"] * best.num_stages == 384
    assert time_of(best) < time_of(start)
    assert not [p for p in measured if not fits(p)]  # the model's rejects are never measured


def test_time_budget_is_priced_in_hand_lists_of_this_kernels_compile_time():
    from tiletune.runtime.search import HAND_LIST_CONFIGS, STOCK_BENCH_S, time_budget

    default, fast = SEARCH_MODES["default"], SEARCH_MODES["fast"]
    # issue 25: a cold first tune within 0.7 of the hand list (fast: half of that)
    assert time_budget(default, 0.2) == pytest.approx(0.7 * HAND_LIST_CONFIGS * (0.2 + STOCK_BENCH_S))
    assert time_budget(fast, 0.2) == pytest.approx(0.35 * HAND_LIST_CONFIGS * (0.2 + STOCK_BENCH_S))
    assert time_budget(default, 100.0) == default.max_seconds  # capped
    assert time_budget(default, None) == default.max_seconds  # nothing compiled: the cap alone
    assert time_budget(SEARCH_MODES["exhaustive"], 0.2) == math.inf


def test_once_per_process_set_up_is_added_to_the_hand_lists_it_is_priced_in():
    """A first tune in a fresh process spends seconds on the driver and the compiler's warm-up; a hand list
    tuned first would pay them too, so they widen the budget (within max_seconds)."""
    from tiletune.runtime.search import HAND_LIST_CONFIGS, STOCK_BENCH_S, time_budget

    default = SEARCH_MODES["default"]
    assert time_budget(default, 0.2, 0.9) == pytest.approx(0.7 * HAND_LIST_CONFIGS * (0.2 + STOCK_BENCH_S) + 0.9)
    assert time_budget(default, 1.0, 5.0) == default.max_seconds


def test_a_round_that_would_overrun_the_budget_is_not_started():
    """Each point costs 0.1 s on the clock plus 0.5 s of compile latency per round; 3 s budget, 0.5 s reserve."""
    now = [0.0]

    def measure(points):
        now[0] += 0.5 + 0.1 * len(points)
        return [bowl({"BM": 1, "BN": 4096})(p) for p in points]

    start = Point.of({"BM": 256, "BN": 1}, 4, 3)
    d = Descent(measure, lambda p: True, SearchPolicy("t", 1, 1, max_compiles=10_000, max_seconds=1e9),
                ["BM", "BN"], clock=lambda: now[0], started=0.0, seconds=3.0, reserve_s=0.5, compile_s=0.5,
                point_s=0.1)
    result = d.run({start: 1.0e9})
    assert result.stopped == "budget" and result.measured > 0
    assert now[0] <= 3.0 - 0.5  # no round ran past budget minus reserve (the first one priced by point_s)


def test_only_candidates_timed_while_others_compiled_are_timed_again(monkeypatch):
    from tiletune.runtime.measure import _Trial

    inj = Injected(monkeypatch, best=(16, 16))
    configs = [triton.Config({"BLOCK_M": b, "BLOCK_N": b}) for b in (16, 32)]
    tuned = tiletune.autotune(configs=configs, key=["M", "N"], pre_hook=inj.pre_hook)(scale2d_kernel)
    m, n = 8, 8
    x, y = torch.randn(m, n), torch.empty(m, n)
    grid = lambda meta: (triton.cdiv(m, meta["BLOCK_M"]), triton.cdiv(n, meta["BLOCK_N"]))  # noqa: E731
    args, kwargs = (x, y, m, n), {"grid": grid, "warmup": False}
    trial = _Trial(tuned, args, kwargs, tuned._problem(args, kwargs), None, lambda fn: (fn(), 1.0)[1])
    for c in configs:
        trial.add(c)
    trial.timings = {0: 2.4, 1: 1.9}
    trial.contended = {0}  # 1 was timed once every compile had finished: its time stands
    got = trial._rescreen({0: 2.4, 1: 1.9})
    assert got == {0: 1.0, 1: 1.9}


def test_launches_are_contended_only_while_compile_work_runs_in_this_process():
    """parallel_compile: a pool thread's compile overlapping a timing marks it contended; a quiet one does not."""
    import threading

    from tiletune.runtime.parallel_compile import CompileQueue, _TimedPool

    queue = CompileQueue()
    started, release = threading.Event(), threading.Event()
    with _TimedPool(queue, max_workers=1) as pool:
        quiet = queue.mark()
        assert not queue.contended_since(quiet)
        fut = pool.submit(lambda: (started.set(), release.wait()))  # compile work runs until released
        assert started.wait(60)
        during = queue.mark()
        assert during[0] == 1
        release.set()
        fut.result()
    assert queue.contended_since(quiet)  # work started after the mark
    assert queue.contended_since(during)  # work was running at the mark
    assert not queue.contended_since(queue.mark())  # nothing ran since


def test_first_batch_takes_distinct_tilings_before_stage_variants():
    from tiletune.runtime.search import first_batch

    # ranked: A s2, A s3, B, B s3, C, D -> the batch of 3 is A, B, C; stage variants fill only what is left
    tilings = ["A", "A", "B", "B", "C", "D"]
    assert first_batch(tilings, 3) == [0, 2, 4]
    assert first_batch(tilings, 5) == [0, 1, 2, 4, 5]
    assert first_batch(tilings, 6) == [0, 1, 2, 3, 4, 5]
    assert first_batch(["A", "A"], 2) == [0, 1]


def test_a_compile_is_priced_by_its_thread_cpu_plus_its_child_processes():
    """parallel_compile: the price ignores waiting (GIL, cores) but counts ptxas-like child processes."""
    import subprocess
    import sys

    from tiletune.runtime.parallel_compile import CompileQueue, _TimedPool

    queue = CompileQueue()
    assert queue.compile_seconds() is None  # nothing compiled (cached binaries, the interpreter)
    job = lambda: subprocess.run([sys.executable, "-c", "sum(range(5_000_000))"], check=True)  # noqa: E731
    with _TimedPool(queue, max_workers=2) as pool:
        futures = [pool.submit(job) for _ in range(2)]
    assert all(f.exception() is None for f in futures)
    assert len(queue.durations) == 2
    assert queue.compile_seconds() > max(queue.durations)  # the child's CPU is counted, not only the thread's


# ----------------------------------------------------------------------------- the deadline holds


def _on_a_virtual_clock(monkeypatch, measure_ms: float, late_ms: float = None, **autotune_kw):
    """Tune scale2d_kernel where each measurement 'takes' ``measure_ms`` on a VirtualClock (a late, short
    screening past the deadline ``late_ms``, default the same)."""
    from tiletune.runtime.measure import LATE_REP_MS

    clock = bench.VirtualClock()
    previous = bench.set_clock(clock)
    try:
        inj = Injected(monkeypatch, best=(1, 1024))
        real = bench.METHODS["wall"]

        def slow_wall(fn, *, warmup=None, rep=None):
            short = late_ms is not None and rep == LATE_REP_MS
            clock.advance(late_ms if short else measure_ms)
            return real(fn, warmup=warmup, rep=rep)

        monkeypatch.setitem(bench.METHODS, "wall", slow_wall)
        tuned = tiletune.autotune(key=["M", "N"], pre_hook=inj.pre_hook, **autotune_kw)(scale2d_kernel)
        launch(tuned)
    finally:
        bench.set_clock(previous)
    return tuned, inj


def test_a_first_batch_stops_at_the_deadline_and_abandons_the_rest(monkeypatch):
    """A first batch of 8 at 0.4 s a measurement against a 3 s budget (re-timing kept back): the candidates
    the deadline leaves no room for are abandoned, not failed, and the whole search ends within 10% of it."""
    policy = SearchPolicy("timed", first_min=8, first_max=8, max_compiles=1000, max_seconds=3.0)
    tuned, inj = _on_a_virtual_clock(monkeypatch, 400.0, configs=[], search=policy)
    facts = tuned.search_facts
    assert facts["abandoned"] >= 1
    assert facts["deadline_s"] == pytest.approx(3.0)
    assert tuned.bench_time <= 1.1 * 3.0
    assert len(tuned.configs_timings) + facts["abandoned"] >= facts["first_batch"]
    assert "budget" in facts.get("descent_stopped", "budget")
    chosen = (tuned.best_config.kwargs["BLOCK_M"], tuned.best_config.kwargs["BLOCK_N"])
    assert chosen in set(inj.timed)  # the winner was measured


def test_candidates_compiled_when_the_deadline_comes_are_timed_short_not_abandoned(monkeypatch):
    """The deadline comes after 2 of a first batch of 8 (0.4 s a screening, 3 s budget, re-timing kept back),
    but nothing is left to compile (the interpreter): the other 6 are timed with the short late screening
    (10 ms each) instead of abandoned, and the search still ends within OVER_SHARE (10%) over its budget.
    Before the fix, 6 were abandoned and the winner was one of the first 2."""
    from tiletune.runtime.screening import OVER_SHARE

    policy = SearchPolicy("timed", first_min=8, first_max=8, max_compiles=1000, max_seconds=3.0)
    tuned, inj = _on_a_virtual_clock(monkeypatch, 400.0, late_ms=10.0, configs=[], search=policy)
    facts = tuned.search_facts
    assert facts["abandoned"] == 0
    assert facts["late_timed"] >= 1
    assert facts["late_timed"] * 0.010 <= OVER_SHARE * 3.0 + 1e-9
    assert len(tuned.configs_timings) >= facts["first_batch"]
    assert tuned.bench_time <= (1 + OVER_SHARE) * 3.0


def test_a_re_timing_that_would_end_past_the_deadline_takes_the_short_screening(monkeypatch):
    """0.5 s a screening, 4 re-timing rounds, a 3 s budget: the re-timing's reserve (5 x 4 x 0.5 s) puts the
    deadline before the first timing; the other 7 of the batch are timed late (10 ms each), and re-timing the
    three leaders 4 times at 0.5 s would end near 6.6 s, so they are re-timed with the short screening and the
    search still ends within 10% of its budget."""
    monkeypatch.setenv("TILETUNE_RETIME_ROUNDS", "4")
    policy = SearchPolicy("timed", first_min=8, first_max=8, max_compiles=1000, max_seconds=3.0)
    tuned, _ = _on_a_virtual_clock(monkeypatch, 500.0, late_ms=10.0, configs=[], search=policy)
    facts = tuned.search_facts
    assert facts["late_timed"] == facts["first_batch"] - 1 and facts["abandoned"] == 0
    assert facts["retime_short"] is True
    assert tuned.bench_time <= 1.1 * 3.0


def test_a_search_well_inside_its_deadline_re_times_at_the_screenings_pace(monkeypatch):
    policy = SearchPolicy("timed", first_min=4, first_max=4, descent=False, max_compiles=1000, max_seconds=30.0)
    tuned, _ = _on_a_virtual_clock(monkeypatch, 100.0, late_ms=10.0, configs=[], search=policy)
    facts = tuned.search_facts
    assert facts["late_timed"] == 0 and facts["retime_short"] is False


def test_a_late_screening_dearer_than_the_late_share_abandons_the_rest(monkeypatch):
    """A late screening costs as much as a full one here (0.4 s, over OVER_SHARE of a 3 s budget): after the
    first late timing shows it, the rest are abandoned."""
    policy = SearchPolicy("timed", first_min=8, first_max=8, max_compiles=1000, max_seconds=3.0)
    tuned, _ = _on_a_virtual_clock(monkeypatch, 400.0, late_ms=400.0, configs=[], search=policy)
    facts = tuned.search_facts
    assert facts["late_timed"] <= 1
    assert facts["abandoned"] >= 1


def test_a_hand_list_is_measured_whole_past_the_search_budget(monkeypatch):
    """The author's list is what they asked for: 4 configs at 2 s each, against a 3 s search budget, are all
    timed (the deadline is the synthesized search's)."""
    hand = [triton.Config({"BLOCK_M": m, "BLOCK_N": n}) for m, n in ((1, 64), (2, 64), (4, 64), (8, 64))]
    policy = SearchPolicy("timed", first_min=1, first_max=1, max_compiles=1000, max_seconds=3.0)
    tuned, inj = _on_a_virtual_clock(monkeypatch, 2000.0, configs=hand, search=policy)
    assert tuned.search_facts["abandoned"] == 0
    assert len(tuned.configs_timings) == 4


def test_the_first_batch_narrows_its_deadline_to_the_budget_once_a_compile_is_priced():
    from tiletune.runtime.measure import _Trial
    from tiletune.runtime.parallel_compile import CompileQueue, _TimedPool

    tuned = tiletune.autotune(configs=[], key=["M", "N"])(scale2d_kernel)
    trial = _Trial(tuned, (), {}, None, None, bench=lambda fn: 1.0)
    trial.deadline = 100.0
    trial.budget_of = (10.0, lambda compile_s, setup_s: 5 * (compile_s + 0.125) + setup_s)
    queue = CompileQueue()
    trial.narrow_deadline(queue)
    assert trial.deadline == 100.0  # nothing compiled yet: max_seconds holds
    with _TimedPool(queue, max_workers=1) as pool:  # one compile job ran: its CPU seconds price a compile
        pool.submit(lambda: sum(range(200_000))).result()
    price = queue.compile_seconds()
    trial.narrow_deadline(queue)
    assert price is not None and trial.deadline == pytest.approx(10.0 + 5 * (price + 0.125))
    trial.compile_s, trial.deadline = 0.5, 100.0  # a later batch: the descent's own deadline is kept
    trial.narrow_deadline(queue)
    assert trial.deadline == 100.0


def test_past_the_deadline_only_a_finished_compile_is_timed_and_only_within_the_over_share():
    """Past the deadline a candidate is timed only when its compile finished and it (priced at the dearest
    check so far plus a short screening) and the short re-timing after it end within OVER_SHARE of the budget."""
    from concurrent.futures import Future

    from tiletune.runtime.measure import _Trial
    from tiletune.runtime.parallel_compile import CompileQueue
    from tiletune.runtime.screening import OVER_SHARE

    tuned = tiletune.autotune(configs=[], key=["M", "N"])(scale2d_kernel)
    trial = _Trial(tuned, (), {}, None, None, bench=lambda fn: 1.0)
    clock = bench.VirtualClock()
    previous = bench.set_clock(clock)
    try:
        trial.started, trial.deadline = 0.0, 10.0
        clock.advance(10_000.0)  # at the deadline
        queue = CompileQueue()
        running, finished = Future(), Future()
        finished.set_result(None)
        queue.futures.update({0: running, 1: finished})
        assert not trial.may_time_late(0, queue)  # still compiling: abandoned, never awaited
        assert trial.may_time_late(1, queue)
        assert trial.may_time_late(2, queue)  # nothing to compile (cached, or the interpreter)
        trial.late_bench_s = [0.01]
        retime = trial.late_retime_s()
        trial.pre_s = [OVER_SHARE * 10.0 - 0.01 - retime - 1e-9]  # one more ends at the limit
        assert trial.may_time_late(1, queue)
        trial.pre_s.append(trial.pre_s[0] + 1e-3)  # a dearer check: one more would pass the limit
        assert not trial.may_time_late(1, queue)
    finally:
        bench.set_clock(previous)


def test_the_first_batch_takes_the_fewest_stages_where_the_model_cannot_tell_them_apart():
    from tiletune.runtime.search import COMPILE_TIE, first_batch

    tilings = ["A", "A", "A", "B", "B"]
    stages = [6, 3, 1, 4, 2]
    costs = [1.0, 1.0 + COMPILE_TIE / 2, 1.5, 2.0, 2.0 * (1 + 3 * COMPILE_TIE)]
    # A: stage 3 is within the tie of stage 6, stage 1 is not; B: stage 2 is not within the tie of stage 4
    assert first_batch(tilings, 2, costs=costs, stages=stages) == [1, 3]
    assert first_batch(tilings, 2) == [0, 3]  # without costs: the best-ranked variant


def test_the_search_budget_stays_priced_at_the_first_compile_when_the_batch_compiled_dearer():
    """block_ptr_matmul on the H100: its first compile took 1 s, the first batch's median 1.6 s (big tiles with
    K=128 compile for seconds).  Priced at the median, the descent's budget (5 x 1.7 s + set-up, capped at
    8 s) outgrew the deadline the first batch ran under and the first tune took 1.4x the hand list.  The
    budget stays priced at the first compile, and the deadline only ever narrows.  (Fails before the fix:
    the descent priced its budget at the batch's median.)"""
    from tiletune.runtime.measure import _Trial
    from tiletune.runtime.search import time_budget

    class Priced:  # a compile queue whose compiles so far cost ``price`` seconds each
        def __init__(self, price):
            self.price, self.stage_s = price, {"warm_compiler": 0.4}

        def compile_seconds(self):
            return self.price

    default = SEARCH_MODES["default"]
    tuned = tiletune.autotune(configs=[], key=["M", "N"])(scale2d_kernel)
    trial = _Trial(tuned, (), {}, None, None, bench=lambda fn: 1.0)
    trial.deadline = 10.0 + default.max_seconds
    trial.budget_of = (10.0, lambda c, setup: time_budget(default, c, setup))
    trial.narrow_deadline(Priced(1.0))  # the first compile of the batch finished
    first = time_budget(default, 1.0, 0.4)
    assert trial.price_s == 1.0 and trial.deadline == pytest.approx(10.0 + first)
    trial.narrow_deadline(Priced(3.6))  # a slower one of the same batch does not reprice it
    assert trial.deadline == pytest.approx(10.0 + first)
    trial.compile_s, trial.setup_s = 1.6, 0.4  # the batch's median, once every compile finished
    assert trial.search_seconds(default) == pytest.approx(first)
    assert first < time_budget(default, 1.6, 0.4) < default.max_seconds


def test_a_refused_first_batch_slot_goes_to_the_next_ranked_tiling_not_met_before_its_variants():
    from tiletune.runtime.search import refill

    tilings = ["a", "a", "b", "c", "b", "d"]  # candidate i's tiling, best ranked first
    assert refill(tilings, {0, 2}, 2) == [3, 5]  # c and d before a's and b's other variants
    assert refill(tilings, {0, 2, 3, 5}, 3) == [1, 4]  # then the variants, in rank order
    assert refill(tilings, set(range(6)), 2) == []
