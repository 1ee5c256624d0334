"""The measure stage of the kernel autotuner, as a value: candidates in, winner, timings and facts out.

:class:`MeasureStage` is built from what it needs (the kernel's launch
builder and hooks, the bench settings, the user's verify/hints/shard/search
choices, the candidates stage's synthesis context and breadth, the warm
start's seeds); :meth:`MeasureStage.run` takes the candidate list (from
:mod:`~tiletune.runtime.candidates`) and returns a :class:`Measured`.  It
reads no tuner's attributes: :class:`tiletune.runtime.autotuner.Autotuner`
builds one per tuning.  The measuring itself (compile overlapped with
timing, verify, the deadline) is :class:`tiletune.runtime.measure._Trial`'s;
the search strategy is :mod:`~tiletune.runtime.strategies`'.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import triton

from tiletune.errors import TuningError

from . import bench as _bench
from . import distributed as _dd
from . import timeline as _timeline
from .agreement import probe_indices
from .measure import LATE_REP_MS, LATE_WARMUP_MS, RETIME_MAX, SCREEN_REP_MS, SCREEN_WARMUP_MS, _Trial, retime_set
from .measure import _retime_rounds
from .screening import graph_rescreen_set
from .report import TuningReport, config_str
from .search import Point, first_batch, first_batch_size, resolve_search, time_budget, whole_space_batch
from .strategies import Budget, Space, run_strategy

__all__ = ["BenchSettings", "MeasureStage", "Measured", "kernel_call"]

Config = triton.Config


def kernel_call(fn: Any, arg_names: Sequence[str], pre: Callable, post: Callable, args: tuple,
                kwargs: Dict[str, Any], config: Config, grab: Optional[Callable[[], None]] = None) -> Callable[[], None]:
    """One launch of ``config`` as a benchmark calls it: the config's pre_hook, ``pre``, the kernel,
    ``grab()`` (the agreement check's record of the outputs), ``post`` (also when the launch raises)."""
    current = dict(kwargs, **config.all_kwargs())
    full_nargs = {**dict(zip(arg_names, args)), **current}

    def call() -> None:
        if config.pre_hook:
            config.pre_hook(full_nargs)
        pre(full_nargs)
        try:
            fn.run(*args, **current)
        except Exception as e:
            try:
                post(full_nargs, exception=e)
            finally:
                raise
        if grab is not None:
            grab()
        post(full_nargs, exception=None)

    return call


def space_points(ctx: Any, interp: bool) -> List[Point]:
    """Every feasible config synthesis enumerated (``ctx``, a :class:`~.candidates.SynthesisContext`) as the
    search's points, cheapest modelled cost first: one a tiling under the interpreter, which has no
    ``num_warps`` or ``num_stages``."""
    return list(dict.fromkeys(Point(items, None if interp else w, None if interp else s)
                              for items, w, s in ctx.by_cost()))


@dataclass
class Measured:
    """What the measure stage returns for one key.

    ``winner``: the config picked; ``extra``: facts for the log and the
    cache entry (``search_facts``, and the group's under a process group);
    ``timings``: config -> ``[ms, ms, ms]`` of every config timed (Triton's
    ``configs_timings``); ``seconds``: the first tune's seconds on the
    measuring clock (Triton's ``bench_time``); ``facts``: what the search did.
    """

    winner: Config
    extra: Dict[str, Any]
    timings: Dict[Config, Any]
    seconds: float
    facts: Dict[str, Any]


@dataclass
class BenchSettings:
    """How candidates are timed: the user's ``do_bench``, ``warmup``/``rep`` (ms), ``bench_method`` and
    ``use_cuda_graph``, as given to the decorator."""

    do_bench: Optional[Callable] = None
    warmup: Optional[float] = None
    rep: Optional[float] = None
    method: Optional[str] = None
    use_cuda_graph: bool = False

    @property
    def user_chosen(self) -> bool:
        """True when the user chose how candidates are timed (a ``do_bench``, a method or budgets): tiletune then
        times every candidate that way, never from CUDA graphs of its own choosing."""
        return self.do_bench is not None or self.method is not None or self.warmup is not None or self.rep is not None

    def bench_fn(self, report: TuningReport) -> Tuple[Callable[[Callable], float], str]:
        """``(benchmark function, the method's name for the log)``; a fallback is noted in ``report``."""
        if self.do_bench is not None:
            user = self.do_bench
            return (lambda fn: _bench.call_user_do_bench(user, fn)), "user do_bench"
        method = _bench.resolve_method(self.method, use_cuda_graph=self.use_cuda_graph)
        method, note = _bench.effective_method(method)
        if note:
            report.note(note)
        return _bench.get_bench(method, warmup=self.warmup, rep=self.rep), method


@dataclass
class MeasureStage:
    """Measuring one key's candidates, from explicit inputs; :meth:`run` returns a :class:`Measured`.

    The kernel: ``kernel_name``, ``fn`` (its ``run(..., warmup=True)``
    compiles a candidate), ``kernel_call(args, kwargs, config, grab=None)``
    (one launch with the tuner's hooks, as a benchmark calls it),
    ``checked_names(bound)`` (the tensors the agreement check compares) and
    ``reset(full_nargs)`` (the reset hook run before the real launch).  The
    user's choices: ``bench`` settings, ``verify``, ``hints``, ``shard``,
    ``search``, ``top_k``.  From the candidates stage: ``synthesis`` (None
    for a hand list) and ``search_breadth``.  ``seeds(add)``: the warm
    start's ``(index, key)`` seeds, each added with ``add(config)``.
    ``method_used``: the benchmark method's name (set by :meth:`bench_fn`).
    """

    kernel_name: str
    fn: Any
    kernel_call: Callable[..., Callable[[], None]]
    checked_names: Callable[[Mapping[str, Any]], List[str]]
    reset: Callable[[Dict[str, Any]], Any]
    arg_names: Sequence[str]
    bench: BenchSettings = field(default_factory=BenchSettings)
    verify: Any = None
    hints: Mapping[str, List[Any]] = field(default_factory=dict)
    shard: bool = False
    search: Any = None
    top_k: Optional[int] = None
    synthesize_configs: bool = True
    synthesis: Any = None
    search_breadth: float = 1.0
    seeds: Callable[[Callable[[Config], int]], List[Tuple[int, list]]] = lambda add: []
    method_used: str = "none"

    # the names _Trial reads from the stage it measures for
    def _checked_names(self, bound: Mapping[str, Any]) -> List[str]:
        return self.checked_names(bound)

    def _kernel_call(self, args: tuple, kwargs: Dict[str, Any], config: Config,
                     grab: Optional[Callable[[], None]] = None) -> Callable[[], None]:
        return self.kernel_call(args, kwargs, config, grab=grab)

    def bench_fn(self, report: TuningReport) -> Callable[[Callable], float]:
        """The benchmark function of this key (:meth:`BenchSettings.bench_fn`); records :attr:`method_used`."""
        bench, self.method_used = self.bench.bench_fn(report)
        return bench

    def _all_failed(self, configs: List[Config], failures: Mapping[int, str],
                    remote: Optional[BaseException] = None) -> TuningError:
        lines = "\n".join(f"  [{config_str(configs[i])}]: {failures.get(i, 'failed on another rank')}"
                          for i in range(len(configs)))
        every_rank = f"\nas seen on every rank:\n{remote}" if remote is not None else ""
        return TuningError(
            f"kernel {self.kernel_name!r}: every candidate config failed ({len(configs)} tried):\n{lines}{every_rank}\n"
            "fix the kernel or the launch, or pass configs that compile and run"
        )

    def run(self, configs: List[Config], bench: Callable[[Callable], float], args: tuple, kwargs: Dict[str, Any],
            problem: Any, pg: Any, session: Any, times: Tuple[float, float, float]) -> Measured:
        """Measure ``configs`` (from the candidates stage, agreed over ``pg``) with ``bench``; the winner.

        ``session``: the search's :class:`~tiletune.runtime.compile_workers.CompileSession`;
        ``times``: ``(started, begun, candidates ready)`` on the measuring clock (binding, analysis and
        the cache lookup before the search count against its time budget, as they count in what the
        user waits).

        With an active group every decision below is taken identically on
        every rank: candidates dropped on any rank (compile, verify, run) are
        dropped on all, times are combined (or gathered from the shards), the
        descent stops on every rank when any rank's budget is spent, and the
        winner is picked from the agreed times.
        """
        t_start, t_begin, t_candidates = times
        report = problem.report
        _timeline.add("setup", "binding, analysis, cache lookup", t_start, t_begin)
        _timeline.add("synthesis", f"{len(configs)} candidate(s)", t_begin, t_candidates)
        policy = resolve_search(self.search, self.search_breadth)
        screen = self._short_kernel_screen(pg)
        trial = _Trial(self, args, kwargs, problem, pg, screen.wrap(self._screen_fn(bench)))
        # a late candidate's graph is as long as every other's (a shorter one reads every kernel slower)
        trial.late_bench = screen.wrap(self._screen_fn(bench, late=True))
        trial.short_screen = screen
        trial.started = t_start
        trial.session = session
        for c in configs:
            trial.add(c)
        synthesized = self.synthesize_configs and self.synthesis is not None
        if synthesized and policy.descent and math.isfinite(policy.max_seconds):  # a hand list: measured whole
            trial.deadline = t_start + policy.max_seconds  # the descent narrows it to the time budget
            trial.budget_of = (t_start, lambda c, setup: time_budget(policy, c, setup))
        if synthesized and self.top_k is None:
            trial.pool = [(tuple(sorted(c.kwargs.items())), c.num_warps) for c in configs]  # refills refusals
            costs = [self.synthesis.costs.get(config_str(c)) for c in configs]
            n_first = whole_space_batch(first_batch_size(costs, policy), len(configs),
                                        self.synthesis.space_size(not _bench.interpreting()),
                                        trial.compile_workers())
            batch = first_batch(trial.pool, n_first, costs=costs, stages=[c.num_stages for c in configs])
        else:  # top_k= or a hand list: measure what was asked for
            n_first = len(configs)
            batch = list(range(n_first))
        warm = self.seeds(trial.add) if synthesized and self.top_k is None else []
        if warm:  # the winners of the nearest cached keys first, then the model's picks, as many in all
            batch = [i for i, _ in warm] + [i for i in batch if i not in dict(warm)][:max(0, n_first - len(warm))]
        probes: List[int] = []
        if synthesized and trial.check != "off":  # every parameter the pool varies, seen at two values
            probes = probe_indices(trial.configs, batch)  # warm seeds included
            batch = batch + probes
            ctx = self.synthesis
            trial.feasible = lambda c: ctx.feasible(c.kwargs, c.num_warps, c.num_stages)
        facts: Dict[str, Any] = {"search": policy.name, "first_batch": n_first, "pool": len(configs),
                                 "check": trial.check, "check_probes": len(probes),
                                 "warm_start": [key for _, key in warm]}
        try:
            trial.measure(batch, first=True)
            t_first = _bench.clock()
            if synthesized and policy.descent and len(trial.timings) > 0:
                facts.update(self._descend(trial, policy, t_start, pg))
        except BaseException:
            if trial.snapshot is not None:  # the user's tensors as an untuned launch finds them
                trial.snapshot.restore()
            raise
        t_descent = _bench.clock()

        # re-time the leading few, interleaved, unless the user's do_bench decides; agree on the new times
        timings = trial.timings
        order = sorted(timings, key=lambda i: (timings[i], i))
        if self.bench.do_bench is None and len(order) > 1:
            top = retime_set(order, timings)
            rounds = _retime_rounds()
            short = trial.retime_overruns(len(top), rounds)  # then re-timed with the short screening
            graph = None if self.bench.user_chosen else _bench.short_kernel_bench(
                self.method_used, timings[order[0]], screen.rep_ms if screen.short else None)
            facts["retime_short"], facts["retime_graph"] = short, graph is not None
            first_times = {i: timings[i] for i in top}
            if graph is not None and not screen.short:  # event screening cannot rank them: one graph timing first
                wide = graph_rescreen_set(order, timings)
                facts["graph_rescreened"] = len(wide)
                top, first_times = self._graph_leaders(trial, wide, order, timings, graph, pg)
            with _timeline.span("retime", f"{len(top)} candidate(s)" + (" (short)" if short else "")):
                retimed = _bench.retime_interleaved({i: trial.calls[i] for i in top},
                                                    graph or (trial.late_bench if short else trial.bench),
                                                    first_times, rounds=rounds)
            agreed = _dd.combine_timings([retimed[i] for i in top], pg)
            for i, t in zip(top, agreed):
                report.candidate(trial.configs[i], retimed[i], stage="retimed_ms")
                if t is None:
                    trial.drop(i, "failed when re-timed")
                    del timings[i]
                else:
                    timings[i] = t
        if not timings:
            raise self._all_failed(trial.configs, trial.failures)
        ordered = sorted(timings)
        best = ordered[_dd.pick_winner([timings[i] for i in ordered], [config_str(trial.configs[i]) for i in ordered])]
        winner = trial.configs[best]

        # leave the user's tensors as an untuned launch would find them
        if trial.snapshot is not None:
            trial.snapshot.restore()
        full_nargs = {**dict(zip(self.arg_names, args)), **kwargs, **winner.all_kwargs()}
        self.reset(full_nargs)

        configs_timings = {trial.configs[i]: [t, t, t] for i, t in timings.items()}
        bench_time = _bench.clock() - t_start
        # where the time went (seconds on the measuring clock): binding and cache lookup, synthesis, first
        # batch, descent, re-timing
        facts["seconds"] = {"before": t_begin - t_start, "candidates": t_candidates - t_begin,
                            "first_batch": t_first - t_candidates,
                            "descent": t_descent - t_first, "retime": t_start + bench_time - t_descent}
        facts["measured"] = len(trial.timings) + len(trial.failures)
        facts["compiled_in"] = dict(trial.compiled)
        facts["batches"] = list(trial.batches)  # the first batch, then the descent's rounds
        facts["bench_call_s"] = trial.retime_cost_s(1, 1)  # median seconds of one screening measurement
        facts["screen_graph"] = bool(screen.short)  # a short kernel: screened from CUDA graphs
        if screen.short:  # how its graphs were sized (bench.graph_rep_ms)
            facts["graph_rep_ms"], facts["eager_call_ms"] = screen.rep_ms, screen.eager_ms
        facts["contended"] = len(trial.contended)  # timed while compile work ran in this process
        facts["refused"] = len(trial.refused)  # dropped unmeasured: Triton's front end refused them (children)
        facts["abandoned"] = len(trial.abandoned)  # not timed: the deadline came first (compiles not awaited)
        facts["late_timed"] = len(trial.late)  # compiled when the deadline came: timed short, not abandoned
        if trial.deadline is not None:
            facts["deadline_s"] = trial.deadline - t_start
        report.note(f"search {policy.name}: {facts['first_batch']} of {len(configs)} ranked candidate(s) measured "
                    f"first, {facts.get('descent_measured', 0)} more by the descent"
                    + (f" ({facts['descent_filled']} of them the model's next best, in idle compile slots)"
                       if facts.get("descent_filled") else "")
                    + f" ({facts.get('descent_stopped', 'no descent')})")
        _timeline.add("search", f"{len(configs)} candidate(s) in the pool", t_start, t_start + bench_time)
        extra: Dict[str, Any] = {"search_facts": facts}
        if trial.active:
            world_size, rank = trial.world
            extra.update({"world_size": world_size, "rank": rank, "sharded": trial.shard,
                          "timed_here": trial.timed_here})
        return Measured(winner, extra, configs_timings, bench_time, facts)

    @staticmethod
    def _graph_leaders(trial: "_Trial", wide: List[int], order: List[int], timings: Dict[int, float],
                       graph: Callable[[Callable], float], pg: Any) -> Tuple[List[int], Dict[int, float]]:
        """A short kernel's leaders to re-time, chosen from one CUDA-graph timing of each of ``wide``, the
        candidates the screening could not tell from the fastest (:func:`graph_rescreen_set` of ``order``),
        agreed over ``pg``; with those times as each leader's first sample.  A candidate whose graph timing
        failed is left to its screening time."""
        with _timeline.span("retime", f"{len(wide)} candidate(s) once from CUDA graphs"):
            once = _bench.retime_interleaved({i: trial.calls[i] for i in wide}, graph, {}, rounds=1)
        agreed = _dd.combine_timings([once[i] for i in wide], pg)
        graphed = {i: t for i, t in zip(wide, agreed) if t is not None}
        if not graphed:
            top = retime_set(order, timings)
            return top, {}
        ranked = sorted(graphed, key=lambda i: (graphed[i], i))
        top = retime_set(ranked, graphed)
        return top, {i: graphed[i] for i in top}

    def _short_kernel_screen(self, pg: Any) -> "_bench.ShortKernelScreen":
        """Whether this search may screen a short kernel from CUDA graphs (:class:`~.bench.ShortKernelScreen`):
        under the default ``event`` timing with tiletune's budgets, on a device, alone (a group's ranks time
        alike)."""
        allowed = (not self.bench.user_chosen and self.method_used == "event" and not _bench.interpreting()
                   and not _dd.is_active(pg))
        return _bench.ShortKernelScreen(allowed)

    def _screen_fn(self, bench: Callable[[Callable], float], late: bool = False) -> Callable[[Callable], float]:
        """The benchmark for screening: short budgets unless the user chose the benchmark or its budgets
        (or under the interpreter, where budgets mean nothing).  ``late``: the shorter screening of a
        compiled candidate timed past the deadline (LATE_WARMUP_MS, LATE_REP_MS; one call under the
        interpreter as well)."""
        s = self.bench
        user_set = s.do_bench is not None or s.warmup is not None or s.rep is not None
        if user_set or self.method_used not in _bench.METHODS:
            return bench
        if late:
            return _bench.get_bench(self.method_used, warmup=LATE_WARMUP_MS, rep=LATE_REP_MS)
        if _bench.interpreting():
            return bench
        return _bench.get_bench(self.method_used, warmup=SCREEN_WARMUP_MS, rep=SCREEN_REP_MS)

    def _descend(self, trial: _Trial, policy: Any, t_start: float, pg: Any) -> Dict[str, Any]:
        """Coordinate descent from the best measured configs (see :class:`~tiletune.runtime.descent.Descent`)."""
        ctx = self.synthesis
        interp = _bench.interpreting()

        def point(c: Config) -> Point:
            warps = None if interp else c.num_warps
            stages = None if interp else c.num_stages
            return Point.of(c.kwargs, warps, stages)

        def config(p: Point) -> Config:
            if p.num_warps is None:
                return Config(p.values())
            return Config(p.values(), num_warps=p.num_warps, num_stages=p.num_stages)

        def feasible(p: Point) -> bool:
            return ctx.feasible(p.values(), p.num_warps, p.num_stages)

        def measure(points: List[Point]) -> List[Optional[float]]:
            idx = [trial.add(config(p)) for p in points]
            got = trial.measure(idx, first=False)
            return [got.get(i, trial.timings.get(i)) for i in idx]

        def agree_round(k: int) -> int:  # every rank measures as many as the least of them affords
            return min(int(x) for x in _dd.all_gather_json(int(k), pg))

        def cost(p: Point) -> Optional[float]:
            return ctx.cost(p.values(), p.num_warps, p.num_stages)

        known = {point(trial.configs[i]): trial.timings.get(i) for i in range(len(trial.configs))
                 if i in trial.timings or i in trial.failures}
        from .search import MAX_STAGES, MIN_STAGES, WARPS

        seconds = trial.search_seconds(policy)
        reserve = trial.retime_cost_s(RETIME_MAX, _retime_rounds())
        compile_s = max(trial.compile_s or 0.0, trial.compile_latency_s or 0.0)
        point_s = trial.retime_cost_s(1, 1)
        workers = trial.compile_workers()
        price = trial.budget_price_s()
        ceiling = None  # how far the descent may grow the budget to hold its first round (Descent.ceiling_s)
        if policy.hand_lists_max is not None and price is not None:
            ceiling = time_budget(replace(policy, hand_lists=policy.hand_lists_max), price, trial.setup_s)
        trial.deadline = t_start + seconds  # a round the estimate let start stops here (Trial.left_s)

        def on_grow(grown: float) -> None:
            trial.deadline = t_start + grown
        by_cost = space_points(ctx, interp)  # the idle compile slots of a round take the next best (Descent's fill)
        space = Space(ranked=[point(c) for c in trial.configs], by_cost=by_cost, feasible=feasible, cost=cost,
                      tiling=ctx.tiling,
                      hints=dict(self.hints or {}), launch_options=not interp,
                      warps=ctx.domain("num_warps", WARPS),
                      stages=ctx.domain("num_stages", range(MIN_STAGES, MAX_STAGES + 1)))
        budget = Budget(policy, seconds=seconds, clock=_bench.clock, started=t_start, reserve_s=reserve,
                        compile_s=compile_s, point_s=point_s, compile_workers=workers,
                        agree_round=agree_round if _dd.is_active(pg) else None, ceiling_s=ceiling, on_grow=on_grow)
        result = run_strategy(policy.strategy, measure, budget, space, known)
        for a, b, ms in result.moves:
            trial.problem.report.note(f"descent: [{config_str(config(a))}] -> [{config_str(config(b))}] ({ms:.4f} ms)")
        return {"descent_measured": result.measured, "descent_filled": result.filled,
                "descent_rejected": result.rejected,
                "descent_moves": len(result.moves), "descent_stopped": result.stopped,
                "time_budget_s": seconds + result.grown_s, "budget_for_a_round_s": result.grown_s,
                "setup_s": trial.setup_s, "ceiling_s": ceiling, "reserve_s": reserve, "round_compile_s": compile_s,
                "compile_s": trial.compile_s, "price_s": trial.price_s, "compile_latency_s": trial.compile_latency_s}
