"""Benchmark methods: selection, the wall clock under the interpreter, interleaved re-timing, user do_bench."""

from __future__ import annotations

import importlib.util

import pytest
import torch
import triton
import triton.language as tl

import tiletune
from tiletune.errors import TuningError
from tiletune.runtime import bench


@pytest.fixture(autouse=True)
def _env(tmp_path, monkeypatch):
    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TRITON_BENCH_METHOD", raising=False)


def test_interpreter_default_is_wall():
    assert bench.interpreting()
    assert bench.resolve_method(None) == "wall"


def test_method_from_argument_and_env(monkeypatch):
    assert bench.resolve_method("cudagraph") == "cudagraph"
    assert bench.resolve_method("PROFILER") == "profiler"
    monkeypatch.setenv("TRITON_BENCH_METHOD", "event")
    assert bench.resolve_method(None) == "event"
    assert bench.resolve_method("wall") == "wall"  # the argument wins over the environment
    monkeypatch.setenv("TRITON_BENCH_METHOD", "default")
    assert bench.resolve_method(None) == "wall"


def test_unknown_method_names_the_known_ones():
    with pytest.raises(TuningError, match="event, cudagraph, profiler, npu, wall"):
        bench.resolve_method("stopwatch")


def test_device_methods_fall_back_to_wall_under_the_interpreter():
    for method in ("event", "cudagraph", "profiler"):
        used, note = bench.effective_method(method)
        assert used == "wall" and method in note
    assert bench.effective_method("wall") == ("wall", None)


@pytest.mark.skipif(importlib.util.find_spec("torch_npu") is not None, reason="torch_npu is installed")
def test_npu_without_torch_npu_is_a_clear_error():
    with pytest.raises(TuningError, match="torch_npu"):
        bench.effective_method("npu")
    with pytest.raises(TuningError, match="torch_npu"):
        bench.bench_npu(lambda: None)


def test_wall_measures_the_call():
    """Each call 'takes' 2 ms on a VirtualClock: an estimating call, then as many as fit in the 10 ms
    budget, whatever the machine's speed (a real sleep overshot the budget under load: 1 call only)."""
    calls = []
    clock = bench.VirtualClock()

    def fn():
        calls.append(1)
        clock.advance(2.0)

    previous = bench.set_clock(clock)
    try:
        ms = bench.bench_wall(fn, warmup=0, rep=10)
    finally:
        bench.set_clock(previous)
    assert ms == 2.0
    assert len(calls) == 1 + 5  # the estimating call, then 10 ms / 2 ms timed calls


def test_wall_without_budget_uses_the_estimating_call():
    calls = []
    ms = bench.bench_wall(lambda: calls.append(1), warmup=0, rep=0)
    assert ms >= 0 and len(calls) == 1
    calls.clear()
    bench.bench_wall(lambda: calls.append(1))  # interpreter defaults: one call
    assert len(calls) == 1


def test_get_bench_binds_the_budgets():
    b = bench.get_bench("wall", warmup=0, rep=0)
    assert b.method == "wall"
    assert b(lambda: None) >= 0


def test_user_do_bench_forms():
    assert bench.call_user_do_bench(lambda fn, quantiles: [2.0, 1.0, 3.0], lambda: None) == 2.0
    assert bench.call_user_do_bench(lambda fn, quantiles: 1.5, lambda: None) == 1.5
    assert bench.call_user_do_bench(lambda fn: 4.0, lambda: None) == 4.0  # no quantiles keyword


def test_retime_interleaved_runs_in_turns_and_takes_the_median():
    order = []
    times = {"A": iter([5.0, 1.0]), "B": iter([2.0, 2.0]), "C": iter([3.0, 9.0])}
    current = {}

    def fake_bench(fn):
        name = fn()
        order.append(name)
        return next(times[name])

    calls = {k: (lambda k=k: k) for k in "ABC"}
    out = bench.retime_interleaved(calls, fake_bench, {"A": 1.0, "B": 2.0, "C": 3.0}, rounds=2)
    assert order == ["A", "B", "C", "A", "B", "C"]
    assert out == {"A": 1.0, "B": 2.0, "C": 3.0}
    del current


def test_a_short_leader_is_retimed_from_cuda_graphs_only_under_the_default_event_timing():
    """Under GRAPH_BELOW_MS one event pair around one call is within a few timer resolutions of the kernel:
    the leaders are re-timed by graph replay (without the screening's first sample, another regime)."""
    short = bench.short_kernel_bench("event", bench.GRAPH_BELOW_MS / 4)
    assert short is not None and short.method == "cudagraph"
    assert bench.short_kernel_bench("event", bench.GRAPH_BELOW_MS * 2) is None  # long enough for events
    assert bench.short_kernel_bench("wall", 0.001) is None  # the interpreter's, a user's or another method
    assert bench.short_kernel_bench("profiler", 0.001) is None
    assert bench.short_kernel_bench("event", None) is None
    # without a first sample, a candidate's median is over the new ones alone
    times = {"A": iter([5.0, 1.0, 1.0]), "B": iter([2.0, 2.0, 4.0])}
    out = bench.retime_interleaved({k: (lambda k=k: k) for k in "AB"}, lambda fn: next(times[fn()]), {}, rounds=3)
    assert out == {"A": 1.0, "B": 2.0}


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


CONFIGS = [triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})]


def _launch(tuned, n=64):
    x, y = torch.randn(n), torch.empty(n)
    tuned[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n)
    torch.testing.assert_close(y, x)


def test_user_do_bench_wins_over_bench_method(monkeypatch):
    monkeypatch.setenv("TRITON_BENCH_METHOD", "wall")
    calls = []

    def do_bench(fn, quantiles):
        fn()
        calls.append(1)
        return [float(len(calls))]

    def wall_must_not_run(*a, **k):  # pragma: no cover
        raise AssertionError("wall used although do_bench was given")

    monkeypatch.setitem(bench.METHODS, "wall", wall_must_not_run)
    tuned = tiletune.autotune(configs=CONFIGS, key=["n"], do_bench=do_bench, bench_method="wall")(_copy)
    _launch(tuned)
    assert len(calls) == 3  # once per config, no re-timing: the user's benchmark decides
    assert tuned.best_config.kwargs == {"BLOCK": 16}


def test_leading_candidates_are_retimed_interleaved(monkeypatch, capsys):
    seen = []

    def fake_wall(fn, *, warmup=None, rep=None):
        fn()
        seen.append(current["block"])
        return {16: 3.0, 32: 1.0, 64: 2.0}[current["block"]] + 0.01 * len(seen)

    current = {}

    def pre(nargs, reset_only=False):
        if not reset_only:
            current["block"] = nargs["BLOCK"]

    monkeypatch.setitem(bench.METHODS, "wall", fake_wall)
    tuned = tiletune.autotune(configs=CONFIGS, key=["n"], pre_hook=pre, verbose=True)(_copy)
    _launch(tuned)
    # first pass in order, then the three best (32, 64, 16) interleaved (one round under the interpreter)
    assert seen == [16, 32, 64, 32, 64, 16]
    assert tuned.best_config.kwargs == {"BLOCK": 32}
    out = capsys.readouterr().out
    assert out.count("re-timed") == 3


def test_candidates_the_screening_cannot_separate_from_the_best_are_retimed_too(monkeypatch):
    """Six configs screened at 1.00, 1.02, 1.03, 1.05, 1.07 and 1.30: the leading three are re-timed, and
    the 4th and 5th (within 8% of the best); the 6th is not.  In the re-timing the 5th is fastest: it wins."""
    blocks = [2, 4, 8, 16, 32, 64]
    screen = dict(zip(blocks, [1.00, 1.02, 1.03, 1.05, 1.07, 1.30]))
    seen, current = [], {}

    def fake_wall(fn, *, warmup=None, rep=None):
        fn()
        b = current["block"]
        seen.append(b)
        return screen[b] if seen.count(b) == 1 else (0.9 if b == 32 else screen[b])

    def pre(nargs, reset_only=False):
        if not reset_only:
            current["block"] = nargs["BLOCK"]

    monkeypatch.setitem(bench.METHODS, "wall", fake_wall)
    configs = [triton.Config({"BLOCK": b}) for b in blocks]
    tuned = tiletune.autotune(configs=configs, key=["n"], pre_hook=pre)(_copy)
    _launch(tuned)
    assert seen == blocks + [2, 4, 8, 16, 32]  # one interleaved round under the interpreter
    assert tuned.best_config.kwargs == {"BLOCK": 32}


def test_retime_rounds_from_the_environment(monkeypatch):
    seen = []
    current = {}

    def fake_wall(fn, *, warmup=None, rep=None):
        fn()
        seen.append(current["block"])
        return {16: 3.0, 32: 1.0, 64: 2.0}[current["block"]]

    def pre(nargs, reset_only=False):
        if not reset_only:
            current["block"] = nargs["BLOCK"]

    monkeypatch.setitem(bench.METHODS, "wall", fake_wall)
    monkeypatch.setenv("TILETUNE_RETIME_ROUNDS", "2")
    tuned = tiletune.autotune(configs=CONFIGS, key=["n"], pre_hook=pre)(_copy)
    _launch(tuned)
    assert seen == [16, 32, 64, 32, 64, 16, 32, 64, 16]


def test_bench_method_argument_is_used(monkeypatch):
    used = []

    def fake_wall(fn, *, warmup=None, rep=None):
        fn()
        used.append((warmup, rep))
        return 1.0

    monkeypatch.setitem(bench.METHODS, "wall", fake_wall)
    tuned = tiletune.autotune(configs=CONFIGS, key=["n"], bench_method="wall", warmup=3, rep=7)(_copy)
    _launch(tuned)
    assert used and all(u == (3, 7) for u in used)


def test_failing_benchmark_method_choice_is_reported_before_launching():
    tuned = tiletune.autotune(configs=CONFIGS, key=["n"], bench_method="nonsense")(_copy)
    with pytest.raises(TuningError, match="unknown bench_method"):
        _launch(tuned)


def test_before_hook_runs_ahead_of_every_call_outside_the_timed_region():
    """On a VirtualClock the hook "takes" 20 ms and the call 1 ms: only the call's time is measured
    (exactly, whatever the machine's load)."""
    events = []
    clock = bench.VirtualClock()

    def before():
        events.append("before")
        clock.advance(20)  # would dominate the time if it were timed

    def fn():
        events.append("call")
        clock.advance(1)

    previous = bench.set_clock(clock)
    try:
        ms = bench.bench_counts(fn, 2, 3, before=before)
        assert events == ["before", "call"] * 5 and ms == pytest.approx(1.0)
        events.clear()
        ms = bench.bench_wall(fn, warmup=0, rep=0, before=before)
        assert events == ["before", "call"] and ms == pytest.approx(1.0)
    finally:
        bench.set_clock(previous)


def test_a_short_kernels_leaders_are_chosen_from_one_graph_timing_of_every_close_candidate():
    """The screening of a short kernel cannot rank candidates closer than its noise: every candidate within
    GRAPH_RESCREEN_GAP of the fastest is timed once from a CUDA graph (here an injected timing, as no GPU is
    here), and the leaders re-timed afterwards are the graph's fastest, not the screening's."""
    from types import SimpleNamespace

    from tiletune.runtime.measure_stage import MeasureStage
    from tiletune.runtime.screening import GRAPH_RESCREEN_GAP, graph_rescreen_set

    screened = {0: 4.5, 1: 4.6, 2: 4.7, 3: 4.8, 4: 5.4, 5: 4.5 * (1 + GRAPH_RESCREEN_GAP) * 1.05}
    order = sorted(screened, key=lambda i: (screened[i], i))
    assert graph_rescreen_set(order, screened) == [0, 1, 2, 3, 4]  # 5 is past the gap: never graph-timed
    graphed = {0: 4.6, 1: 4.7, 2: 4.55, 3: 4.9, 4: 4.1, 5: 1.0}
    timed = []

    def graph(fn):
        i = fn()
        timed.append(i)
        return graphed[i]

    trial = SimpleNamespace(calls={i: (lambda i=i: i) for i in screened})
    top, first = MeasureStage._graph_leaders(trial, graph_rescreen_set(order, screened), order, screened, graph, None)
    assert sorted(timed) == [0, 1, 2, 3, 4]
    assert top == [4, 2, 0]  # the graph's three fastest (the screening's fifth first); none other within 8%
    assert first == {i: graphed[i] for i in top}
    # a candidate whose graph timing fails keeps its screening time and is not a leader by the graph
    graphed[4] = float("inf")
    timed.clear()
    top, first = MeasureStage._graph_leaders(trial, graph_rescreen_set(order, screened), order, screened, graph, None)
    assert 4 not in top and top[0] == 2


def _recorded(times, log, name):
    """A benchmark that returns the next of ``times[fn()]`` and logs ``(name, fn())``."""
    def bench_fn(fn):
        k = fn()
        log.append((name, k))
        return next(times[k])
    return bench_fn


def test_a_short_kernel_is_screened_from_cuda_graphs_once_the_first_graph_timing_says_so():
    """The first candidate is timed from a CUDA graph after its event screening; under GRAPH_BELOW_MS the graph
    decides (a fresh process's first event timing read 199 us for a 2.5 us kernel), and every candidate of
    the search is timed from a graph alone (the regime its final re-timing and the cold bench's reference
    use)."""
    log = []
    event = _recorded({"A": iter([0.199])}, log, "event")  # an inflated first event timing
    graph = _recorded({"A": iter([0.004]), "B": iter([0.005])}, log, "graph")
    screen = bench.ShortKernelScreen(allowed=True)
    timed = screen.wrap(event, graph=graph)
    assert screen.short is None
    assert timed(lambda: "A") == 0.004
    assert screen.short is True
    assert timed(lambda: "B") == 0.005
    assert log == [("event", "A"), ("graph", "A"), ("graph", "B")]
    # a second wrap (the late screening) follows the same decision
    late = screen.wrap(event, graph=_recorded({"C": iter([0.003])}, log, "late graph"))
    assert late(lambda: "C") == 0.003 and log[-1] == ("late graph", "C")


def test_a_long_kernel_or_a_users_benchmark_keeps_the_event_screening():
    """A first graph timing over GRAPH_BELOW_MS: that candidate and every later one are timed by the event
    screening, whatever a later one reads (one regime per search)."""
    log = []
    long_first = bench.ShortKernelScreen(allowed=True)
    timed = long_first.wrap(_recorded({"A": iter([0.6, 0.5]), "B": iter([0.01])}, log, "event"),
                            graph=_recorded({"A": iter([0.45])}, log, "graph"))
    assert timed(lambda: "A") == 0.5 and long_first.short is False  # the second event reading, after the warm-ups
    assert timed(lambda: "B") == 0.01
    assert log == [("event", "A"), ("graph", "A"), ("event", "A"), ("event", "B")]
    log.clear()
    very_long = bench.ShortKernelScreen(allowed=True)  # a first reading over SHORT_PROBE_BELOW_MS: no graph at all
    timed = very_long.wrap(_recorded({"A": iter([bench.SHORT_PROBE_BELOW_MS * 5])}, log, "event"),
                           graph=_recorded({}, log, "graph"))
    assert timed(lambda: "A") == bench.SHORT_PROBE_BELOW_MS * 5 and very_long.short is False
    assert log == [("event", "A")]
    log.clear()
    off = bench.ShortKernelScreen(allowed=False)
    timed = off.wrap(_recorded({"A": iter([0.001])}, log, "event"), graph=_recorded({}, log, "graph"))
    assert timed(lambda: "A") == 0.001 and log == [("event", "A")]


def test_a_graph_holds_about_the_same_kernel_time_whatever_the_kernels_length():
    """do_bench_cudagraph's graph holds ``rep`` over an eager call's time; an eager call of a 1.3 us kernel is
    about 50 us of launch, so at GRAPH_REP_MS its graph held 18 calls (H200: 10% spread).  The replay budget
    grows as the kernel shortens, between GRAPH_REP_MS and GRAPH_REP_MAX_MS."""
    assert bench.graph_rep_ms(None) == bench.GRAPH_REP_MS
    assert bench.graph_rep_ms(0.015) == bench.GRAPH_REP_MS  # a 15 us kernel: enough calls already
    transpose = bench.graph_rep_ms(0.0013)
    assert bench.GRAPH_REP_MS < transpose <= bench.GRAPH_REP_MAX_MS
    calls = transpose / bench.EAGER_CALL_MS  # the graph's calls at the priced eager call
    assert calls * 0.0013 == pytest.approx(bench.GRAPH_SPAN_MS)
    assert bench.graph_rep_ms(0.0001) == bench.GRAPH_REP_MAX_MS  # capped
    assert bench.graph_rep_ms(0.003) < transpose  # longer kernels, shorter replays


def _no_eager(fn):
    raise RuntimeError("no CUDA device")


def test_a_short_kernels_graphs_are_sized_at_the_decision_and_its_first_candidate_read_again():
    """The first candidate's graph reading (at GRAPH_REP_MS) sizes the search's graphs; that candidate is read
    again at the new size so that all of the search's readings come from graphs of one length, and the
    re-timing's graphs keep it."""
    reps, log = [], []

    def graph_bench(fn, rep):
        reps.append(rep)
        return {"A": 0.0013, "B": 0.0014}[fn()] + (0.0003 if rep == bench.GRAPH_REP_MS else 0.0)

    eager = []  # one eager call of the first candidate is measured: its launch sizes do_bench_cudagraph's graph
    screen = bench.ShortKernelScreen(allowed=True, graph_bench=graph_bench,
                                     eager_bench=lambda fn: eager.append(fn()) or 0.08)
    timed = screen.wrap(_recorded({"A": iter([0.2])}, log, "event"))
    assert timed(lambda: "A") == pytest.approx(0.0013)  # the reading at the search's length, not the first one
    sized = bench.graph_rep_ms(0.0013 + 0.0003, 0.08)  # the first reading and the measured eager call size it
    assert eager == ["A"] and screen.eager_ms == 0.08
    assert sized > bench.graph_rep_ms(0.0013 + 0.0003)  # a slower launch than priced: a longer replay
    assert screen.rep_ms == pytest.approx(sized) and reps == [bench.GRAPH_REP_MS, screen.rep_ms]
    assert timed(lambda: "B") == pytest.approx(0.0014) and reps[-1] == screen.rep_ms
    assert screen.take_probe_s() >= 0.0
    def capped(fn, rep):  # a longer graph cannot be captured: the first reading and length stay
        if rep > bench.GRAPH_REP_MS:
            raise RuntimeError("out of memory while capturing")
        return 0.0013
    cannot = bench.ShortKernelScreen(allowed=True, graph_bench=capped)
    assert cannot.wrap(_recorded({"A": iter([0.2])}, log, "event"))(lambda: "A") == 0.0013
    assert cannot.rep_ms == bench.GRAPH_REP_MS and cannot.short is True
    priced = bench.ShortKernelScreen(allowed=True, graph_bench=graph_bench, eager_bench=_no_eager)
    assert priced.wrap(_recorded({"A": iter([0.2])}, log, "event"))(lambda: "A") == pytest.approx(0.0013)
    assert priced.eager_ms is None and priced.rep_ms == pytest.approx(bench.graph_rep_ms(0.0016))  # priced
    fast_launch = bench.ShortKernelScreen(allowed=True, graph_bench=graph_bench, eager_bench=lambda fn: 0.002)
    reps.clear()  # an eager call of 2 us: 1 ms of replay holds enough calls already, no second reading
    assert fast_launch.wrap(_recorded({"A": iter([0.2])}, log, "event"))(lambda: "A") == pytest.approx(0.0016)
    assert reps == [bench.GRAPH_REP_MS] and fast_launch.rep_ms == bench.GRAPH_REP_MS
    long_enough = bench.ShortKernelScreen(allowed=True, graph_bench=lambda fn, rep: reps.append(rep) or 0.015)
    reps.clear()
    long_enough.wrap(_recorded({"A": iter([0.2])}, log, "event"))(lambda: "A")
    assert reps == [bench.GRAPH_REP_MS] and long_enough.rep_ms == bench.GRAPH_REP_MS  # no second reading


def test_a_call_that_cannot_be_captured_keeps_the_event_screening():
    log = []

    def no_capture(fn):
        log.append(("graph", fn()))
        raise RuntimeError("operation not permitted when stream is capturing")

    screen = bench.ShortKernelScreen(allowed=True)
    timed = screen.wrap(_recorded({"A": iter([0.0025, 0.002]), "B": iter([0.003])}, log, "event"), graph=no_capture)
    assert timed(lambda: "A") == 0.002 and screen.short is False
    assert timed(lambda: "B") == 0.003
    assert log == [("event", "A"), ("graph", "A"), ("event", "A"), ("event", "B")]


def test_the_deciding_calls_extra_readings_do_not_price_a_screening():
    """The deciding call returns one of its readings; the seconds of the others (kept in probe_s, taken once)
    come off that call's price, which prices every later screening of the search (Trial.bench_s)."""
    clock = bench.VirtualClock()
    previous = bench.set_clock(clock)

    def reading(values, seconds):  # a benchmark that reads ``values`` in turn, each taking ``seconds``
        it = iter(values)

        def timed(fn):
            fn()
            clock.advance(seconds * 1e3)
            return next(it)
        return timed

    try:
        long_kernel = bench.ShortKernelScreen(allowed=True)  # event 40 us, graph 39 us: not short, event again
        timed = long_kernel.wrap(reading([0.040, 0.038, 0.039], 0.010), graph=reading([0.039], 0.022))
        assert long_kernel.take_probe_s() == 0.0  # nothing decided yet
        start = clock()
        assert timed(lambda: None) == 0.038
        assert clock() - start == pytest.approx(0.042)  # the call took three readings ...
        assert long_kernel.take_probe_s() == pytest.approx(0.032)  # ... two of them the probe's
        assert long_kernel.take_probe_s() == 0.0  # taken once
        assert timed(lambda: None) == 0.039 and long_kernel.take_probe_s() == 0.0
        short_kernel = bench.ShortKernelScreen(allowed=True)  # graph 4 us: short; the event reading is the probe
        timed = short_kernel.wrap(reading([0.005], 0.010), graph=reading([0.004, 0.0041], 0.003))
        assert timed(lambda: None) == 0.004 and short_kernel.take_probe_s() == pytest.approx(0.010)
        assert timed(lambda: None) == 0.0041 and short_kernel.take_probe_s() == 0.0
    finally:
        bench.set_clock(previous)


def test_the_graph_screening_is_allowed_only_for_tiletunes_own_event_timing(monkeypatch):
    """A user's do_bench, method or budgets, another method, the interpreter: the screening stays as given."""
    from triton import knobs

    from tiletune.runtime.measure_stage import BenchSettings, MeasureStage

    def stage(settings, method):
        s = MeasureStage(kernel_name="k", fn=None, kernel_call=None, checked_names=None, reset=None, arg_names=(),
                         bench=settings)
        s.method_used = method
        return s

    monkeypatch.setattr(knobs.runtime, "interpret", False)
    assert stage(BenchSettings(), "event")._short_kernel_screen(None).short is None  # to be decided
    assert stage(BenchSettings(rep=50.0), "event")._short_kernel_screen(None).short is False
    assert stage(BenchSettings(method="event"), "event")._short_kernel_screen(None).short is False
    assert stage(BenchSettings(do_bench=lambda fn: 1.0), "user do_bench")._short_kernel_screen(None).short is False
    assert stage(BenchSettings(), "profiler")._short_kernel_screen(None).short is False
    monkeypatch.setattr(knobs.runtime, "interpret", True)
    assert stage(BenchSettings(), "event")._short_kernel_screen(None).short is False
