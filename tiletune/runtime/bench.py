"""Benchmark methods: how long one launch of a candidate takes, in milliseconds.

Every method is a function ``bench(fn, *, warmup=None, rep=None) -> float``
returning the median time of ``fn()`` in ms (lower is better):

========== ===================================================================
method     what it measures
========== ===================================================================
event      ``triton.testing.do_bench``: device events around each call, L2
           flushed before each, median.  The default on a device.
cudagraph  ``triton.testing.do_bench_cudagraph``: calls replayed from a CUDA
           graph, for kernels short enough that launch overhead matters.
profiler   ``torch.profiler``: the sum of the device kernel durations of one
           call (every kernel it launches), median over repetitions.
npu        ``torch_npu.profiler``: as ``profiler``, on Ascend NPUs (torch_npu
           imported lazily; a clear error when it is missing).
wall       ``time.perf_counter`` around the call, with a device synchronize.
           The default under ``TRITON_INTERPRET=1`` (do_bench needs a driver).
========== ===================================================================

:func:`bench_counts` is ``wall`` with call counts instead of ms budgets
(the function tuner's ``warmup``/``rep``); both take ``before=``, run ahead
of every call outside the timed region (restoring arguments).

:func:`resolve_method` picks one from ``bench_method=``, then
``TRITON_BENCH_METHOD``, then the default above.  :func:`retime_interleaved`
re-measures the leading candidates in turns (A B C A B C ...) so that drift
of the machine falls on all of them alike.
"""

from __future__ import annotations

import os
import statistics
import time
from typing import Any, Callable, Dict, Optional, Sequence

from tiletune.errors import TuningError

from .env import env_on

__all__ = [
    "METHODS",
    "interpreting",
    "resolve_method",
    "effective_method",
    "get_bench",
    "bench_event",
    "bench_cudagraph",
    "eager_call_ms",
    "bench_profiler",
    "bench_npu",
    "bench_wall",
    "bench_counts",
    "call_user_do_bench",
    "retime_interleaved",
    "short_kernel_bench",
    "graph_rep_ms",
    "ShortKernelScreen",
    "clock",
    "set_clock",
    "VirtualClock",
]

BenchFn = Callable[..., float]


# ---------------------------------------------------------------- the clock

_clock: Callable[[], float] = time.perf_counter


def clock() -> float:
    """Seconds on the clock every wall-clock measurement reads (``time.perf_counter`` unless
    :func:`set_clock` installed another): the wall methods, the function tuner's counts and its
    per-config timeout, and the contextual tuner's launch timer."""
    return _clock()


def set_clock(new: Optional[Callable[[], float]]) -> Callable[[], float]:
    """Install ``new`` as the measuring clock (None: ``time.perf_counter``); returns the previous one.

    For tests and reproducible experiments: with a :class:`VirtualClock` that
    the measured code advances, timing-driven decisions (winners, rank
    agreement, timeouts) no longer depend on how busy the machine is.
    """
    global _clock
    previous = _clock
    _clock = time.perf_counter if new is None else new
    return previous


class VirtualClock:
    """A clock that stands still until :meth:`advance` moves it: deterministic "wall" times.

    Install with :func:`set_clock`; code under measurement calls
    ``advance(ms)`` where it would take that long (a hook in place of a sleep).
    """

    def __init__(self) -> None:
        self.seconds = 0.0

    def __call__(self) -> float:
        return self.seconds

    def advance(self, ms: float) -> None:
        """Move the clock ``ms`` milliseconds on."""
        self.seconds += float(ms) / 1e3


def interpreting() -> bool:
    """True when kernels run in Triton's interpreter (``TRITON_INTERPRET=1``)."""
    try:
        from triton import knobs

        return bool(knobs.runtime.interpret)
    except Exception:  # older Triton without knobs
        return env_on("TRITON_INTERPRET")


# ---------------------------------------------------------------- helpers


def _synchronize() -> None:
    """Wait for the device, if one is in use (nothing to wait for under the interpreter).

    CUDA is synchronised only once torch has initialised it: a process that
    never touched the GPU has no GPU work to wait for, and is not made to
    initialise CUDA here.
    """
    if interpreting():
        return
    try:
        import torch
    except ImportError:  # pragma: no cover
        return
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()
        return
    npu = getattr(torch, "npu", None)
    if npu is not None:
        try:
            if npu.is_available():
                npu.synchronize()
        except Exception:
            pass


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def _reps(estimate_ms: float, budget_ms: float, cap: int = 1000) -> int:
    if estimate_ms <= 0:
        return cap
    return max(1, min(cap, int(budget_ms / estimate_ms)))


# ---------------------------------------------------------------- methods


def _timed_calls(fn: Callable[[], Any], n: int, before: Optional[Callable[[], Any]]) -> list:
    """Wall times (ms, device synchronised) of ``n`` calls; ``before()`` runs ahead of each, untimed."""
    times = []
    for _ in range(n):
        if before is not None:
            before()
            _synchronize()
        t0 = clock()
        fn()
        _synchronize()
        times.append((clock() - t0) * 1e3)
    return times


def _untimed_calls(fn: Callable[[], Any], n: int, before: Optional[Callable[[], Any]]) -> None:
    for _ in range(n):
        if before is not None:
            before()
        fn()
    if n:
        _synchronize()


def bench_wall(fn: Callable[[], Any], *, warmup: Optional[float] = None, rep: Optional[float] = None,
               before: Optional[Callable[[], Any]] = None) -> float:
    """Median wall time (perf_counter, device synchronised) of ``fn()`` in ms.

    ``warmup``/``rep`` are time budgets in ms as in ``do_bench``: the first
    call estimates the time, then as many calls as fit in ``warmup`` and
    ``rep`` run (the timed ones are the median's samples).  When ``rep`` has
    no room for even one more call, the estimating call is the measurement.
    Defaults: 25 ms / 100 ms; under the interpreter 0 / 0 (one call per
    measurement: an interpreted launch takes tens of ms or more, and its time
    only ranks candidates for the tests).  ``before()`` runs ahead of every
    call, outside the timed region.
    """
    interp = interpreting()
    warmup = (0.0 if interp else 25.0) if warmup is None else float(warmup)
    rep = (0.0 if interp else 100.0) if rep is None else float(rep)
    _synchronize()
    (estimate,) = _timed_calls(fn, 1, before)
    _untimed_calls(fn, _fit(estimate, warmup, cap=100), before)
    n_rep = _fit(estimate, rep, cap=1000)
    if n_rep == 0:
        return estimate
    return _median(_timed_calls(fn, n_rep, before))


def bench_counts(fn: Callable[[], Any], warmup: int, rep: int, *, before: Optional[Callable[[], Any]] = None) -> float:
    """Median wall time (ms, device synchronised) of ``rep`` timed calls after ``warmup`` untimed ones.

    The function tuner's measurement (counts, not ms budgets); at least one
    timed call.  ``before()`` runs ahead of every call, outside the timed region.
    """
    _untimed_calls(fn, max(0, int(warmup)), before)
    _synchronize()
    return _median(_timed_calls(fn, max(1, int(rep)), before))


def _fit(estimate_ms: float, budget_ms: float, cap: int) -> int:
    """How many calls of ``estimate_ms`` fit in ``budget_ms`` (0 for no budget), at most ``cap``."""
    if budget_ms <= 0:
        return 0
    if estimate_ms <= 0:
        return cap
    return min(cap, int(budget_ms / estimate_ms))


def bench_event(fn: Callable[[], Any], *, warmup: Optional[float] = None, rep: Optional[float] = None) -> float:
    """``triton.testing.do_bench`` (device events, L2 flush), median in ms."""
    import triton.testing

    return float(
        triton.testing.do_bench(fn, warmup=25 if warmup is None else warmup, rep=100 if rep is None else rep,
                                return_mode="median")
    )


def eager_call_ms(fn: Callable[[], Any], calls: int = 5) -> float:
    """The ms of one call of ``fn`` launched eagerly: ``calls`` back to back between two CUDA events, the
    estimate ``do_bench`` and ``do_bench_cudagraph`` size their loops and graphs by."""
    import torch

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / calls


def bench_cudagraph(fn: Callable[[], Any], *, warmup: Optional[float] = None, rep: Optional[float] = None) -> float:
    """``triton.testing.do_bench_cudagraph`` (CUDA graph replay), median in ms."""
    import triton.testing

    return float(triton.testing.do_bench_cudagraph(fn, rep=100 if rep is None else rep, return_mode="median"))


def _flush_buffer():
    import torch

    return torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")


def bench_profiler(fn: Callable[[], Any], *, warmup: Optional[float] = None, rep: Optional[float] = None) -> float:
    """Device time of one call from ``torch.profiler``, median over repetitions, in ms.

    Before each repetition the L2 cache is flushed by one marker kernel (a
    ``bitwise_not_`` over a 256 MiB buffer); the device activities (kernels,
    copies, fills) recorded between two markers belong to one repetition and
    its time is the sum of their durations: a call that launches several
    kernels (hooks included, as with ``event``) counts all of them, launch
    overhead and idle gaps count nothing.
    """
    import torch
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    if not torch.cuda.is_available():
        raise TuningError("bench_method='profiler' needs a CUDA device; use 'wall' on the CPU")
    warmup = 25.0 if warmup is None else float(warmup)
    rep = 100.0 if rep is None else float(rep)
    flush = _flush_buffer()
    # estimate with events, as do_bench does
    fn()
    torch.cuda.synchronize()
    estimate = eager_call_ms(fn)
    for _ in range(_reps(estimate, warmup, cap=100)):
        fn()
    n_rep = _reps(estimate, rep, cap=100)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "Profiler clears events at the end of each cycle"
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(n_rep):
                flush.bitwise_not_()
                fn()
            torch.cuda.synchronize()
        events = prof.events()
    device = [e for e in events if getattr(e, "device_type", None) == DeviceType.CUDA]
    device.sort(key=lambda e: e.time_range.start)
    per_rep: list = []
    for e in device:
        if "bitwise_not" in str(e.name):
            per_rep.append(0.0)
        elif per_rep:
            per_rep[-1] += float(e.time_range.end - e.time_range.start)
    times = [us / 1e3 for us in per_rep if us > 0]
    if not times:
        raise TuningError("bench_method='profiler': the profiler recorded no device kernels for the launch")
    return _median(times)


def bench_npu(fn: Callable[[], Any], *, warmup: Optional[float] = None, rep: Optional[float] = None) -> float:
    """Kernel time on an Ascend NPU from ``torch_npu.profiler``, median over repetitions, in ms.

    Each repetition is one profiler step; its time is the sum of the
    ``Duration(us)`` of the step's rows in ``kernel_details.csv``.
    """
    try:
        import torch
        import torch_npu  # noqa: F401  (registers torch.npu)
    except ImportError as exc:
        raise TuningError(
            "bench_method='npu' needs torch_npu (Ascend's PyTorch adapter), which is not importable "
            f"({exc}); install torch_npu or choose another bench_method (event, cudagraph, profiler, wall)"
        ) from None
    import csv
    import tempfile
    from pathlib import Path

    warmup = 25.0 if warmup is None else float(warmup)
    rep = 100.0 if rep is None else float(rep)
    fn()
    torch.npu.synchronize()
    t0 = time.perf_counter()
    for _ in range(5):
        fn()
    torch.npu.synchronize()
    estimate = (time.perf_counter() - t0) * 1e3 / 5
    for _ in range(_reps(estimate, warmup, cap=100)):
        fn()
    n_rep = _reps(estimate, rep, cap=100)
    prof_mod = torch_npu.profiler
    with tempfile.TemporaryDirectory(prefix="tiletune-npu-") as out:
        experimental = prof_mod._ExperimentalConfig(
            aic_metrics=prof_mod.AiCMetrics.PipeUtilization,
            profiler_level=prof_mod.ProfilerLevel.Level1,
        )
        with prof_mod.profile(
            activities=[prof_mod.ProfilerActivity.NPU],
            schedule=prof_mod.schedule(wait=0, warmup=0, active=n_rep, repeat=1, skip_first=0),
            on_trace_ready=prof_mod.tensorboard_trace_handler(out),
            experimental_config=experimental,
        ) as prof:
            for _ in range(n_rep):
                fn()
                torch.npu.synchronize()
                prof.step()
        per_step: Dict[str, float] = {}
        for path in Path(out).rglob("kernel_details.csv"):
            with open(path, newline="", encoding="utf-8") as f:
                for row in csv.DictReader(f):
                    step = row.get("Step Id", "0")
                    try:
                        per_step[step] = per_step.get(step, 0.0) + float(row.get("Duration(us)", 0.0))
                    except ValueError:
                        continue
    if not per_step:
        raise TuningError("bench_method='npu': torch_npu.profiler wrote no kernel_details.csv rows")
    return _median([v / 1e3 for v in per_step.values()])


METHODS: Dict[str, BenchFn] = {
    "event": bench_event,
    "cudagraph": bench_cudagraph,
    "profiler": bench_profiler,
    "npu": bench_npu,
    "wall": bench_wall,
}

_ALIASES = {"default": None, "do_bench": "event", "cuda_graph": "cudagraph", "torch_profiler": "profiler"}


def resolve_method(method: Optional[str] = None, *, use_cuda_graph: bool = False) -> str:
    """The benchmark method to use: ``method``, else ``TRITON_BENCH_METHOD``, else the default.

    The default is ``"wall"`` under ``TRITON_INTERPRET=1`` and ``"event"``
    otherwise (``"cudagraph"`` when ``use_cuda_graph`` is set, as in Triton).
    Raises :class:`TuningError` naming the known methods for an unknown one.
    """
    chosen = method
    if chosen is None:
        env = os.environ.get("TRITON_BENCH_METHOD", "").strip().lower()
        chosen = env or None
    if chosen is not None:
        chosen = str(chosen).strip().lower()
        chosen = _ALIASES.get(chosen, chosen)
    if chosen is None:
        if interpreting():
            return "wall"
        return "cudagraph" if use_cuda_graph else "event"
    if chosen not in METHODS:
        raise TuningError(
            f"unknown bench_method {method!r} (or TRITON_BENCH_METHOD); choose one of {', '.join(METHODS)}"
        )
    return chosen


def effective_method(method: str) -> tuple[str, Optional[str]]:
    """The method that will really run, and a note when it differs from ``method``.

    Under the interpreter there is no driver: ``event``, ``cudagraph`` and
    ``profiler`` fall back to ``wall``.  ``npu`` is checked here: a clear
    :class:`TuningError` when torch_npu cannot be imported.
    """
    if method == "npu":
        try:
            import torch_npu  # noqa: F401
        except ImportError as exc:
            raise TuningError(
                "bench_method='npu' needs torch_npu (Ascend's PyTorch adapter), which is not importable "
                f"({exc}); install torch_npu or choose another bench_method (event, cudagraph, profiler, wall)"
            ) from None
        return method, None
    if interpreting() and method in ("event", "cudagraph", "profiler"):
        return "wall", f"bench_method {method!r} needs a device driver; using 'wall' under TRITON_INTERPRET=1"
    return method, None


def get_bench(method: str, *, warmup: Optional[float] = None, rep: Optional[float] = None) -> Callable[[Callable], float]:
    """A one-argument benchmark ``bench(fn) -> ms`` for ``method`` with the given budgets."""
    impl = METHODS[method]

    def bench(fn: Callable[[], Any]) -> float:
        return impl(fn, warmup=warmup, rep=rep)

    bench.method = method  # type: ignore[attr-defined]
    return bench


def call_user_do_bench(do_bench: Callable, fn: Callable[[], Any]) -> float:
    """Call a user ``do_bench(fn, quantiles=...)`` as Triton does; its first value is the time in ms."""
    try:
        result = do_bench(fn, quantiles=(0.5, 0.2, 0.8))
    except TypeError as exc:
        if "quantiles" not in str(exc):
            raise
        result = do_bench(fn)
    if isinstance(result, (list, tuple)):
        result = result[0]
    return float(result)


#: A re-timing whose leader the screening put under this many ms replays CUDA graphs (:func:`short_kernel_bench`).
GRAPH_BELOW_MS = 0.02
#: Replay budget of one graph timing, ms, at least (:func:`graph_rep_ms` lengthens it for the shortest kernels).
GRAPH_REP_MS = 1.0
#: A graph timing is as fine as the kernel time its replay holds.  ``do_bench_cudagraph`` sizes its graph as
#: ``rep`` over the time of an eager call, and an eager call of a kernel of a few us is tens of us of launch
#: (H200, 2026-11-29, ``python bench/graph_resolution.py``: 37-57 us): at ``rep`` 1 ms transpose M=1000,N=33
#: (1.3 us) was replayed 18 calls at a time, 23 us of kernel time, and read 10% of run-to-run spread, its own
#: pick 1.048 of the best; at 5 ms, 88 calls (0.11 ms of kernel time), 4.5% and 1.000.  layer_norm
#: M=1000,N=777 (4.2 us) held 0.11 ms at 1 ms: 0.7%.  So a graph's replay holds about GRAPH_SPAN_MS of
#: kernel time, the replay budget between GRAPH_REP_MS and GRAPH_REP_MAX_MS; the eager call's time is measured
#: on the search's own call (:meth:`ShortKernelScreen._read_longer`), EAGER_CALL_MS where it cannot be.
GRAPH_SPAN_MS = 0.125
EAGER_CALL_MS = 0.05
GRAPH_REP_MAX_MS = 5.0
#: A first event screening under this many ms is followed by a graph timing that decides whether a search's
#: kernel is short (:class:`ShortKernelScreen`); far above GRAPH_BELOW_MS, as a fresh process's first event
#: timing can read 80x the kernel (int8_gemv at 2.5 us read 199 us on an H200).
SHORT_PROBE_BELOW_MS = 1.0


def graph_rep_ms(kernel_ms: Optional[float], eager_ms: Optional[float] = None) -> float:
    """The replay budget (``do_bench_cudagraph``'s ``rep``) of a graph timing of a kernel of about ``kernel_ms``
    whose eager call takes ``eager_ms`` (default :data:`EAGER_CALL_MS`): one whose graph holds
    :data:`GRAPH_SPAN_MS` of kernel time (see there); :data:`GRAPH_REP_MS` when the kernel's time is unknown."""
    if not kernel_ms or kernel_ms <= 0:
        return GRAPH_REP_MS
    eager = eager_ms if eager_ms and eager_ms > 0 else EAGER_CALL_MS
    return min(GRAPH_REP_MAX_MS, max(GRAPH_REP_MS, GRAPH_SPAN_MS * eager / kernel_ms))


def short_kernel_bench(method: str, leader_ms: Optional[float],
                       rep_ms: Optional[float] = None) -> Optional[Callable[[Callable], float]]:
    """The re-timing benchmark for a short kernel, or None.

    When the default ``event`` timing put the screening's best under
    :data:`GRAPH_BELOW_MS`, one event pair around one call is within a few
    resolutions of the device timer (the H100 bench read 5-7% of noise on 5 us
    kernels and picked among them by it): the leaders are then re-timed by
    replaying a CUDA graph of back-to-back calls (``cudagraph``; the inputs stay
    in L2, as a short kernel's do inside a program), each graph sized by
    ``rep_ms`` (the screening's, :attr:`ShortKernelScreen.rep_ms`, where it
    replayed graphs: one regime), else by the leader's time
    (:func:`graph_rep_ms`).  A call that cannot be captured keeps the event
    timing.
    """
    if method != "event" or leader_ms is None or not 0 < leader_ms < GRAPH_BELOW_MS:
        return None
    rep = rep_ms if rep_ms else graph_rep_ms(leader_ms)

    def bench(fn: Callable[[], Any]) -> float:
        try:
            return bench_cudagraph(fn, rep=rep)
        except Exception:  # noqa: BLE001 - a hook that cannot be captured: time it as the screening did
            _synchronize()
            return bench_event(fn)

    bench.method = "cudagraph"  # type: ignore[attr-defined]
    return bench


class ShortKernelScreen:
    """One search's decision whether its kernel is short, taken on the first candidate it times, and the
    screenings that follow it (:meth:`wrap`).

    A short kernel's final pick is made from CUDA-graph replay (:func:`short_kernel_bench`: back-to-back
    calls, inputs warm in L2), and the cold bench's reference times it that way too.  Its screening, a
    flushed event pair around each call, measured another regime: on the H200 (2026-11-29, cold first
    tunes) layer_norm M=1000,N=777 read a floor of 4.6 us for five configs and about 9 us for four others
    that CUDA graphs put at 4.6-5.2 us, and softmax's first candidate read 14.5 us against 2.65 us.  The
    descent then walked a landscape the final timing does not see, and the best config (256 on 4 warps,
    4.2 us) was never reached.  So the first candidate a search times is timed from a CUDA graph too; when
    that puts the kernel under :data:`GRAPH_BELOW_MS`, every screening of the search replays a CUDA graph, and
    otherwise the event screening times that candidate and every later one: one regime per search.  The
    graph decides, not the first event timing: that one is inflated in a fresh process (the same run read
    int8_gemv's first candidate at 199 us and fla-core's l2norm_fwd's at 25.6 us, kernels of 2.5 and 3.5 us).

    A first event screening of :data:`SHORT_PROBE_BELOW_MS` or more decides alone (long: no graph is timed,
    whose replays would cost seconds for a kernel of tens of ms); under it, the first candidate is timed by
    its event screening, then from a graph, and, when the kernel is not short, by its event screening again:
    the second reading, after the warm-ups, is its time.

    ``allowed`` False (the user chose the benchmark or its budgets, another method than ``event``, the
    interpreter, a process group whose ranks must time alike) keeps every screening as given.

    The deciding call takes up to three readings and returns one; the seconds of the others are kept in
    :attr:`probe_s` until :meth:`take_probe_s`, so that the search prices a screening by the reading it uses
    (on the H200 the deciding call of cross_entropy, a 40 us kernel, took 0.038-0.044 s where a screening
    takes about 0.012 s; priced at it, the re-timing's reserve alone outran the budget: no descent round ran).
    """

    def __init__(self, allowed: bool, graph_bench: Optional[Callable[..., float]] = None,
                 eager_bench: Optional[Callable[[Callable], float]] = None) -> None:
        #: None until the first timing decides; True: screened from CUDA graphs; False: as given.
        self.short: Optional[bool] = None if allowed else False
        #: seconds the deciding call spent on readings it did not return (see :meth:`take_probe_s`)
        self.probe_s = 0.0
        #: the replay budget of this search's graph timings: :data:`GRAPH_REP_MS` until the decision, then
        #: sized by the first candidate's time (:func:`graph_rep_ms`)
        self.rep_ms = GRAPH_REP_MS
        #: ms of one eager call of the first candidate, measured when its graph sizes the search's (else None)
        self.eager_ms: Optional[float] = None
        self._graph_bench = graph_bench or bench_cudagraph  # ``(fn, rep=ms) -> ms``; injectable for tests
        self._eager_bench = eager_bench or eager_call_ms  # ``(fn) -> ms``; injectable for tests

    def take_probe_s(self) -> float:
        """The deciding call's seconds beyond the reading it returned, once (0.0 afterwards and before)."""
        seconds, self.probe_s = self.probe_s, 0.0
        return seconds

    def wrap(self, screen: Callable[[Callable], float],
             graph: Optional[Callable[[Callable], float]] = None) -> Callable[[Callable], float]:
        """``screen`` (the event screening) under this decision; a short kernel's candidates are timed by
        ``graph`` instead (default: a CUDA graph replayed for :attr:`rep_ms`; a call that cannot be
        captured keeps ``screen``'s time).  When the decision lengthens :attr:`rep_ms`, the default graph
        times the first candidate again at it: readings of one search come from graphs of one length (a
        shorter graph reads every kernel slower by its replay's start, 0.33 us against 0.08 us for transpose)."""
        sized = graph is None
        if graph is None:
            def graph(fn: Callable[[], Any]) -> float:
                return self._graph_bench(fn, rep=self.rep_ms)

        def bench(fn: Callable[[], Any]) -> float:
            if self.short is None:
                return decide(fn)
            if not self.short:
                return screen(fn)
            try:
                return graph(fn)
            except Exception:  # noqa: BLE001 - a hook that cannot be captured: time it as the screening did
                _synchronize()
                return screen(fn)

        def decide(fn: Callable[[], Any]) -> float:
            started = clock()
            first = screen(fn)
            if not 0 < first < SHORT_PROBE_BELOW_MS:  # certainly long: no graph of it is ever timed
                self.short = False
                return first
            graphed = clock()
            try:
                ms = graph(fn)
            except Exception:  # noqa: BLE001 - a hook that cannot be captured: time it as the screening did
                _synchronize()
                self.short = False
            else:
                self.short = 0 < ms < GRAPH_BELOW_MS
                if self.short:
                    if sized:
                        ms, graphed = self._read_longer(graph, fn, ms, graphed)
                    self.probe_s = graphed - started  # the readings it does not return
                    return ms
            again = clock()
            ms = screen(fn)
            self.probe_s = again - started  # the first event reading and the graph
            return ms

        return bench

    def _read_longer(self, graph: Callable[[Callable], float], fn: Callable[[], Any], ms: float,
                     graphed: float) -> tuple:
        """Size the search's graphs by ``ms`` (the first candidate's reading) and by the time of one eager call
        of it, measured here on the search's own call path (``do_bench_cudagraph`` sizes a graph by that
        call's time, launch included), and, when that lengthens them, read the candidate again at the new
        length: ``(reading, when it began)``.  A longer graph that cannot be captured leaves the length as it
        was and the first reading."""
        shorter = self.rep_ms
        try:
            self.eager_ms = self._eager_bench(fn)
        except Exception:  # noqa: BLE001 - priced instead (EAGER_CALL_MS)
            _synchronize()
        longer = graph_rep_ms(ms, self.eager_ms)
        if longer <= shorter:
            return ms, graphed
        self.rep_ms = longer
        began = clock()
        try:
            return graph(fn), began
        except Exception:  # noqa: BLE001 - keep the length that was captured
            _synchronize()
            self.rep_ms = shorter
            return ms, graphed


def retime_interleaved(
    calls: Dict[Any, Callable[[], Any]],
    bench: Callable[[Callable], float],
    first: Dict[Any, float],
    rounds: int = 2,
) -> Dict[Any, float]:
    """Re-measure each of ``calls`` ``rounds`` times in turns (A B C A B C ...).

    Returns the median over the first measurement (``first``; a candidate
    missing from it has only the new ones) and the new ones, per candidate.  A candidate that fails on re-timing keeps ``inf``.
    """
    samples: Dict[Any, list] = {k: [first[k]] if k in first else [] for k in calls}
    for _ in range(max(0, rounds)):
        for k, call in calls.items():
            try:
                samples[k].append(bench(call))
            except Exception:
                samples[k].append(float("inf"))
    return {k: _median(v) for k, v in samples.items()}
