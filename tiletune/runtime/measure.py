"""Measuring stage of the kernel autotuner: compile, verify, benchmark, search, pick the winner.

For one key: the candidate list (:mod:`~tiletune.runtime.candidates`) is
measured in batches.  A batch's candidates compile on a thread pool while
the ones already compiled are timed (:func:`~tiletune.runtime.parallel_compile.compiling`);
``verify=True`` drops candidates whose outputs differ from the first that
runs; with a process group every drop and time is agreed
(:mod:`~tiletune.runtime.distributed`).  The first batch is the model's
leading candidates (:func:`~tiletune.runtime.search.first_batch_size`);
then :class:`~tiletune.runtime.descent.Descent` measures its way from the
best measured configs (synthesized configs only: a hand list is measured as
given).  The leading three are re-timed interleaved before the winner is
picked.

:class:`_Trial` holds every config measured for one key; the measure stage
(:class:`tiletune.runtime.measure_stage.MeasureStage`) drives it.
"""

from __future__ import annotations

import time
import warnings
from concurrent.futures import TimeoutError as FuturesTimeout
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import triton

from tiletune.errors import TiletuneError, TiletuneWarning, TuningError

from . import bench as _bench
from . import distributed as _dd
from . import timeline as _timeline
from .deadline import OtherReady, await_compile, compiled, deadline_left, ready_first
from .decision import protect_side_effects
from .parallel_compile import compiling, describe_error, parallel_enabled
from .report import config_str
from .search import refill, time_budget
from .agreement import Checker, MeaningError, attribute, check_mode, hinted_values, meaning_message
from .side_effects import Snapshot
from .screening import (LATE_REP_MS, LATE_WARMUP_MS, OVER_SHARE, RESCREEN_FACTOR, RETIME_GAP, RETIME_MAX,  # noqa: F401
                        RETIME_ROUNDS, RETIME_TOP, SCREEN_REP_MS, SCREEN_WARMUP_MS, retime_set)
from .screening import retime_rounds as _retime_rounds

__all__ = ["RETIME_TOP", "RETIME_MAX", "RETIME_GAP", "RETIME_ROUNDS", "retime_set"]

Config = triton.Config

class _NoCompiles:
    """A compile queue with nothing pending (for timing after the batch compiled)."""

    futures: Dict[int, Any] = {}

    def wait(self, k: int, timeout: Optional[float] = None) -> Optional[str]:
        return None

    def mark(self) -> Tuple[int, int, bool, int]:
        return 0, 0, False, 0

    def contended_since(self, mark: Tuple[int, int, bool, int]) -> bool:
        return False


class _CompileFailed(Exception):
    """A candidate whose background compile failed (dropped as such, not as a run failure)."""


class _Refused(Exception):
    """A candidate Triton's front end refused in its compile child (never compiled further, never timed)."""


class _Dropped(Exception):
    """A candidate already dropped, with its reason, before it was timed (verification)."""


class _OverBudget(Exception):
    """A candidate not timed because the search's deadline came first (abandoned, not failed)."""


class _Trial:
    """Every config measured for one key: times, drops, the verify reference; shared by all batches."""

    def __init__(self, tuner: Any, args: tuple, kwargs: Dict[str, Any], problem: Any, pg: Any, bench: Callable):
        self.tuner, self.args, self.kwargs, self.problem, self.pg, self.bench = tuner, args, kwargs, problem, pg, bench
        self.active = _dd.is_active(pg)
        self.shard = tuner.shard and self.active
        self.configs: List[Config] = []
        self.index: Dict[str, int] = {}
        self.failures: Dict[int, str] = {}
        self.refused: Dict[int, str] = {}  # dropped because Triton's front end refuses them (Triton's message)
        # the ranked pool's tilings ((kwargs items, num_warps) per candidate index): a first-batch candidate
        # Triton refuses is replaced by the next of them (:func:`~tiletune.runtime.search.refill`); empty: none
        self.pool: List[Any] = []
        self.timings: Dict[int, float] = {}
        self.calls: Dict[int, Callable[[], None]] = {}
        self.snapshot: Optional[Snapshot] = None
        self.reference: Optional[tuple] = None  # (index, record of its outputs): the reference group's
        synthesized = bool(tuner.synthesize_configs)
        self.check = check_mode(tuner.verify, synthesized, tuner.kernel_name)  # "off", "agree" or "full"
        self.checker = Checker(self.check, tuner.verify if isinstance(tuner.verify, Mapping) else None)
        self.feasible: Callable[[Any], bool] = lambda config: True  # the model's check for attribution runs
        self.timed_here: List[str] = []
        self.world = (None, None)
        self.contended: set = set()  # timed while compile work ran in this process
        self.compile_s: Optional[float] = None  # one compile's seconds, measured (the time budget's price)
        self.setup_s = 0.0  # the first batch's once-per-process set-up seconds (added to the time budget)
        self.compile_latency_s: Optional[float] = None  # the first batch's typical compile wave, wall seconds
        # the search's deadline on the measuring clock (None: none); past it, once something was timed, the
        # rest of a batch is abandoned: not timed, its compiles not awaited (:meth:`left_s`)
        self.deadline: Optional[float] = None
        self.started: Optional[float] = None  # when the first tune began on the measuring clock
        self.abandoned: List[int] = []
        self.late: List[int] = []  # timed past the deadline: compiled already, screened short
        self.late_s = 0.0  # seconds those late candidates took (launcher wait, check, short screening)
        self.late_bench_s: List[float] = []  # per late candidate: its short screening's seconds alone
        self.pre_s: List[float] = []  # per candidate timed: seconds from its compile done to its timing (check)
        self.late_bench: Callable = bench  # the short screening of late timings
        # the search's short-kernel decision (bench.ShortKernelScreen): its deciding call's extra readings are
        # taken off that call's seconds, which price every later screening (bench_s)
        self.short_screen: Any = None
        # (start, budget(compile_s, setup_s) -> seconds): the first batch narrows its deadline to the time
        # budget as soon as one of its compiles priced a compile (:meth:`narrow_deadline`)
        self.budget_of: Optional[Tuple[float, Callable[[float, float], float]]] = None
        # one compile's price for the budget: the first of the first batch to finish (:meth:`narrow_deadline`)
        self.price_s: Optional[float] = None
        self.bench_s: List[float] = []  # seconds per benchmark call, on the measuring clock
        self.compiled: Dict[str, Any] = {"children": 0, "threads": 0}  # where compiles ran, stage seconds
        self.session: Any = None  # the search's CompileSession (children kept between batches)
        self.batches: List[Dict[str, Any]] = []  # per batch: its size, wall seconds, its slowest child compile

    def left_s(self) -> Optional[float]:
        """Seconds left before :attr:`deadline`, the re-timing that follows kept back; None when there is
        no deadline, nothing was timed yet (a first tune returns a measured config), or under a process
        group (every rank must measure the same candidates)."""
        if self.deadline is None or self.active or not (self.bench_s or self.timings or self.late):
            return None
        reserve = self.retime_cost_s(RETIME_MAX, _retime_rounds())
        return self.deadline - _bench.clock() - reserve

    def may_time_late(self, i: int, queue: Any) -> bool:
        """Past the deadline: True when candidate ``i`` may still be timed (short): its compile has finished
        (nothing to await), and one more late candidate (:meth:`late_cost_s`) and the short re-timing that
        follows (:meth:`late_retime_s`) end within OVER_SHARE over the time budget (:meth:`over_limit`)."""
        if not compiled(queue, i) or self.deadline is None or self.started is None:
            return False
        return _bench.clock() + self.late_cost_s() + self.late_retime_s() <= self.over_limit()

    def over_limit(self) -> float:
        """The latest the first tune may end: its deadline plus OVER_SHARE of its time budget (needs both
        :attr:`deadline` and :attr:`started`)."""
        assert self.deadline is not None and self.started is not None
        return self.deadline + OVER_SHARE * max(0.0, self.deadline - self.started)

    def late_cost_s(self) -> float:
        """Seconds one more late candidate is expected to take, priced by what candidates cost on this tune:
        the dearest launcher wait and agreement check so far (:attr:`pre_s`), plus one short screening.  The
        first candidate timed pays what no later one pays again (the wait for the launcher's build, the
        snapshot the agreement check keeps as its reference), so once a second has been timed the first's
        price is left out."""
        later = self.pre_s[1:] or self.pre_s
        return max(later, default=0.0) + self._late_call_s()

    def late_retime_s(self) -> float:
        """Seconds the re-timing after late timings takes: RETIME_MAX candidates, every round, at the short
        screening's pace (a re-timing that would end past the deadline takes it: :meth:`retime_overruns`)."""
        return RETIME_MAX * _retime_rounds() * self._late_call_s(typical=True)

    def _late_call_s(self, typical: bool = False) -> float:
        """Seconds one short screening is expected to take: the longest so far (``typical``: the median),
        else a screening call scaled to the late budgets."""
        if self.late_bench_s:
            ordered = sorted(self.late_bench_s)
            return ordered[len(ordered) // 2] if typical else ordered[-1]
        return self.retime_cost_s(1, 1) * (LATE_WARMUP_MS + LATE_REP_MS) / (SCREEN_WARMUP_MS + SCREEN_REP_MS)

    def retime_overruns(self, n: int, rounds: int) -> bool:
        """True when re-timing ``n`` candidates ``rounds`` times at the screening's pace would end past the
        deadline (the deadline came while the batch compiled, or late timings used its reserve), or the
        deadline has passed: the re-timing then takes the short late screening.  False without a deadline
        or under a process group."""
        if self.deadline is None or self.active:
            return False
        now = _bench.clock()
        if now >= self.deadline:
            return True
        return bool(self.bench_s) and now + self.retime_cost_s(n, rounds) > self.deadline

    def narrow_deadline(self, queue: Any) -> None:
        """In the first batch, once a compile of it finished: the deadline becomes the search's time budget
        priced at that compile (what the descent would get), when that is sooner."""
        if self.budget_of is None or self.deadline is None or self.compile_s is not None:
            return
        price = getattr(queue, "compile_seconds", None)
        est = price() if price is not None else None
        if est is None:
            return
        stage = getattr(queue, "stage_s", {})
        start, budget = self.budget_of
        setup = stage.get("capture", 0.0) + stage.get("warm_compiler", 0.0)
        if self.price_s is None:
            self.price_s = est
        self.deadline = min(self.deadline, start + budget(self.price_s, setup))

    def budget_price_s(self) -> Optional[float]:
        """One compile's price in the search's time budget: the first compile that finished (:attr:`price_s`;
        big tiles' slower compiles do not widen it), else the median compile (None: nothing compiled)."""
        return self.price_s if self.price_s is not None else self.compile_s

    def search_seconds(self, policy: Any) -> float:
        """The search's time budget after the first batch, priced at :meth:`budget_price_s`, never past the
        first batch's deadline."""
        seconds = time_budget(policy, self.budget_price_s(), self.setup_s)
        if self.deadline is not None and self.budget_of is not None:
            seconds = min(seconds, self.deadline - self.budget_of[0])
        return seconds

    def add(self, config: Config) -> int:
        """The index of ``config`` (added when new)."""
        sig = config_str(config)
        if sig not in self.index:
            self.index[sig] = len(self.configs)
            self.configs.append(config)
        return self.index[sig]

    def drop(self, i: int, reason: str) -> None:
        if i not in self.failures:
            self.failures[i] = reason
            self.problem.report.dropped(self.configs[i], reason)

    def refuse(self, i: int, why: str) -> None:
        """Drop candidate ``i``, which Triton's front end refuses, and every candidate of the same tiling (its
        constexprs: Triton lowers them alike), none of them timed; said as the IR oracle's screen says it."""
        kwargs = self.configs[i].kwargs
        for j, c in enumerate(self.configs):
            if c.kwargs == kwargs and j not in self.failures and j not in self.timings:
                self.refused[j] = why
                self.problem.report.note(f"dropped {config_str(c)} before timing: Triton refuses it ({why})")
                self.drop(j, f"Triton refuses it ({why})")

    def _refill(self, batch: Sequence[int]) -> Dict[int, Optional[float]]:
        """After a first batch: its candidates Triton refused are replaced by the next ranked candidates of the
        pool (:func:`~tiletune.runtime.search.refill`), measured as a first batch in turn.  Raises the
        "every candidate refused" error when nothing was timed and the pool holds nothing Triton accepts."""
        refused = [i for i in batch if i in self.refused]
        if not refused or self.active:  # a group: ranks drop alike and refill nothing (shards differ)
            return {}
        taken = set(self.failures) | set(self.timings) | set(batch)
        more = refill(self.pool, taken, len(refused))
        if more:
            return self.measure(more, first=True)
        if not self.timings and set(self.failures) == set(self.refused):
            first = self.refused[min(self.refused)]
            raise TuningError(
                f"kernel {self.tuner.kernel_name!r}: Triton refuses every synthesized candidate (first: {first}); "
                "fix the kernel for these launch arguments or pass configs=[...]")
        return {}

    def _verify_agreed(self, alive: List[int], queue: Any) -> List[int]:
        """Verify each of ``alive`` (see :meth:`_verify_one`); the ones kept.  A MeaningError on any rank of
        the group is raised on every rank."""
        error: Optional[MeaningError] = None
        kept: List[int] = []
        try:
            kept = [i for i in alive if self._verify_one(i, queue)]
        except MeaningError as exc:
            error = exc
        if self.snapshot is not None:
            self.snapshot.restore()
        seen = _dd.all_gather_json(None if error is None else str(error), self.pg)
        if error is not None:
            raise error
        for r, message in enumerate(seen):
            if message is not None:
                raise MeaningError(f"{message} (found on rank {r} of the process group)")
        return kept

    def _verify_one(self, i: int, queue: Any) -> bool:
        """Run candidate ``i`` once from the snapshot and compare its outputs with the reference (the first
        candidate checked); False (and dropped, with the reason) when it fails to compile, run or agree.

        Raises :class:`~tiletune.runtime.agreement.MeaningError` when one
        parameter's value alone changes the outputs (see :meth:`_disagree`).
        """
        reason = queue.wait(i)
        if reason is not None and getattr(queue, "refused", {}).get(i) is not None:
            self.refuse(i, queue.refused[i])
            return False
        if reason is not None:
            self.drop(i, f"compile failed: {reason}")
            return False
        try:
            record = self._run_once(self.configs[i])
        except Exception as exc:
            self.drop(i, f"failed to run: {describe_error(exc)}")
            return False
        if self.reference is None:
            self.reference = (i, record)
            return True
        d = self.checker.differs(self.reference[1], record)
        if d is None:
            return True
        return self._disagree(i, record, d)

    def _take_snapshot(self) -> None:
        """The checked tensors (:meth:`Autotuner._checked_names`) and their snapshot, once per search."""
        if self.snapshot is None:
            bound = self.problem.bound
            self.names = self.tuner._checked_names(bound)
            self.snapshot = Snapshot({n: bound[n] for n in self.names})

    def _warm_checks(self) -> None:
        """While the first batch compiles: take the snapshot (the copies the checks restore from) and warm the
        checker on the checked tensors as they are (:meth:`Checker.warm_up`), so that the first checks do not
        load the device kernels they use.  Reads the tensors only; a failure here is left to the checks."""
        try:
            self._take_snapshot()
            self.checker.warm_up(self.snapshot.tensors)
        except Exception:  # noqa: BLE001 - the checks themselves report what is wrong
            pass

    def _run_once(self, config: Config) -> Any:
        """The record (:meth:`Checker.take`) of ``config``'s outputs after one launch from the snapshot."""
        t, bound = self.tuner, self.problem.bound
        self._take_snapshot()
        out: List[Any] = []
        self.snapshot.restore()
        t._kernel_call(self.args, self.kwargs, config,
                       grab=lambda: out.append(self.checker.take({n: bound[n] for n in self.names})))()
        return out[0]

    def _try_run(self, config: Config) -> Any:
        """:meth:`_run_once`, or None when the model rejects ``config`` or it fails to compile or run."""
        if not self.feasible(config):
            return None
        try:
            return self._run_once(config)
        except Exception:
            return None

    def _disagree(self, i: int, record: Any, d: Any) -> bool:
        """Candidate ``i`` computes something else than the reference: name the parameter that carries
        meaning (MeaningError: which side is right is not guessed), or drop ``i`` with a warning when no
        single parameter explains the difference."""
        t = self.tuner
        ref_i, ref_record = self.reference
        ref, other = self.configs[ref_i], self.configs[i]
        found = attribute(ref, other, self._try_run, self.checker.differs, ref_record, record)
        self.snapshot.restore()
        if found is not None:
            raise MeaningError(meaning_message(t.kernel_name, found, hinted_values(t.hints, found.name)),
                               found.name)
        why = f"outputs differ from [{config_str(ref)}]: {d.why}"
        warnings.warn(f"kernel {t.kernel_name!r}: candidate [{config_str(other)}] computes something else "
                      f"than [{config_str(ref)}] ({d.why}) and no single parameter explains it in every setting tried; it "
                      "was dropped. A config the compiler gets wrong does this, and so do races and reads of "
                      "uninitialised memory; verify=False turns this check off", TiletuneWarning, stacklevel=2)
        self.drop(i, why)
        return False

    def measure(self, batch: Sequence[int], *, first: bool) -> Dict[int, Optional[float]]:
        """Compile, verify and time ``batch`` (indices); agreed over the group.  Returns index -> ms or None.

        The first batch raises when every candidate fails (listing each
        reason); a later batch just reports its failures.
        """
        t, report = self.tuner, self.problem.report
        batch = [i for i in batch if i not in self.failures and i not in self.timings]
        if not batch:
            return {}
        warm_kwargs = dict(self.kwargs, warmup=True)
        full = self.check == "full"
        share_pos = _dd.shard_indices(len(batch), self.pg) if self.shard and not full else range(len(batch))
        jobs = {batch[j]: (lambda c=self.configs[batch[j]]: t.fn.run(*self.args, **warm_kwargs, **c.all_kwargs()))
                for j in share_pos}
        t0 = time.perf_counter()
        with compiling(jobs, session=self.session) as queue:
            alive = list(batch)
            verify = self.check != "off"
            if full and self.active:  # a group agrees on the verified set before anything is timed
                alive = self._verify_agreed(alive, queue)
            if self.active:  # dropped on any rank -> dropped on every rank (0.0 = kept, None = dropped)
                kept = _dd.combine_timings([0.0 if i in alive else None for i in batch], self.pg)
                for i, k in zip(batch, kept):
                    if k is None and i in alive:
                        self.drop(i, "dropped on another rank of the process group (compile or verify)")
                alive = [i for i, k in zip(batch, kept) if k is not None]
            if not alive:
                if first:
                    raise t._all_failed(self.configs, self.failures)
                return {i: None for i in batch}
            # alone, each candidate is verified just before it is timed: timing overlaps the later compiles
            abandoned_before, late_before = len(self.abandoned), len(self.late)
            result = self._bench(alive, queue, first, verify=verify and not (full and self.active))
            if len(self.abandoned) > abandoned_before:  # the batch's compiles still running: not awaited
                queue.abandon()
            over = len(self.abandoned) > abandoned_before or len(self.late) > late_before  # the deadline came
        # every compile of the batch has finished (the pool is shut down)
        if _timeline.recording() and queue.children is not None:
            for fut, res in queue.children._finished().items():
                _timeline.add("compile", "child", res[3], res[4])
        _timeline.add("batch", f"{'first' if first else 'descent'} batch of {len(batch)}", t0, time.perf_counter())
        children_wall = queue.children.wall_s() if queue.children is not None else None
        if self.compile_s is None:
            self.compile_s = queue.compile_seconds()
            self.compile_latency_s = queue.children.typical_wall_s() if queue.children is not None else None
            # once-per-process work the first batch did (the first capture binds the kernel and may start the
            # driver; the first fork warms the compiler): a hand list tuned first pays it too
            self.setup_s = queue.stage_s.get("capture", 0.0) + queue.stage_s.get("warm_compiler", 0.0)
        self.compiled["children"] += len(queue.child_durations)
        self.compiled["threads"] += len(queue.durations)
        stages = dict(queue.stage_s)
        if children_wall is not None:
            stages["children_wall"] = children_wall
            stages.update({f"children_{k}": v for k, v in queue.children.spans_s().items()})
        for name, sec in stages.items():  # summed over the batches
            self.compiled[f"{name}_s"] = self.compiled.get(f"{name}_s", 0.0) + sec
        # the same decision on every rank of a group (alive is agreed), from this rank's queue otherwise
        if self.active:
            overlapped = len(alive) > 1 and not _bench.interpreting() and parallel_enabled()
        else:
            overlapped = len(alive) > 1 and bool(queue.futures)
        if overlapped and not over:
            result = self._rescreen(result)
        seconds = time.perf_counter() - t0
        self._note_batch(len(batch), seconds, queue)
        if jobs:
            report.note(f"compiled and timed {len(alive)} candidate(s) in {seconds:.2f}s "
                        f"({len(jobs)} compiled in the background)")
        if first:
            result.update(self._refill(batch))
        return result

    def _note_batch(self, size: int, seconds: float, queue: Any) -> None:
        """Record a batch for ``search_facts["batches"]``: a round that ran past its price shows which compile
        it waited for."""
        row: Dict[str, Any] = {"configs": size, "seconds": seconds}
        slowest = queue.children.slowest() if queue.children is not None else None
        if slowest is not None:
            row["slowest_compile_s"] = slowest[1]
            row["slowest_compile"] = config_str(self.configs[slowest[0]])
        self.batches.append(row)

    def compile_workers(self) -> int:
        """How many compiles run side by side: the search's compile children, else the compile threads."""
        from .parallel_compile import max_workers

        size = getattr(self.session, "size", 0)
        return size if size else max_workers(64)

    def retime_cost_s(self, n: int, rounds: int) -> float:
        """Seconds that re-timing ``n`` candidates ``rounds`` times will take (median benchmark call)."""
        if not self.bench_s:
            return 0.0
        ordered = sorted(self.bench_s)
        return n * rounds * ordered[len(ordered) // 2]

    def _rescreen(self, result: Dict[int, Optional[float]]) -> Dict[int, Optional[float]]:
        """Time again, now that nothing compiles, the candidates timed while compile work ran (this
        process's threads or its compile children) that are within RESCREEN_FACTOR of the best known.

        Timing while compiles run can only add time (launches of a short
        kernel fall behind the GPU); each candidate keeps the lower of its
        two times.  The
        set is chosen from agreed times and the union of every rank's
        contended candidates, so every rank of a group picks the same.
        """
        known = [t for t in self.timings.values() if t is not None]
        if not known:
            return result
        best = min(known)
        contended = self.contended
        if self.active:  # contention is seen per rank: time again what any rank saw contended
            mine = sorted(i for i in result if i in self.contended)
            contended = {i for seen in _dd.all_gather_json(mine, self.pg) for i in seen}
        again = [i for i, ms in result.items()
                 if ms is not None and i in contended and ms <= RESCREEN_FACTOR * best]
        if not again:
            return result
        before = {i: result[i] for i in again}
        second = self._bench(again, _NoCompiles(), first=False)
        for i in again:
            ms = second.get(i)
            if ms is None:  # failed when timed again (dropped, with its reason, by _bench)
                self.timings.pop(i, None)
                result[i] = None
                continue
            ms = min(ms, before[i])
            self.timings[i] = ms
            result[i] = ms
        return result

    def _bench(self, alive: List[int], queue: Any, first: bool, verify: bool = False) -> Dict[int, Optional[float]]:
        """Time ``alive`` (after verifying each, with ``verify``); agreed over the group."""
        t, report = self.tuner, self.problem.report
        alive = list(alive)  # reordered as compiles finish (ready_first)
        with _timeline.span("prepare", f"{len(alive)} call(s)" + (", checks warmed" if verify and first else "")):
            for i in alive:
                self.calls[i] = t._kernel_call(self.args, self.kwargs, self.configs[i])
            labels = [f"[{config_str(self.configs[i])}]" for i in alive]
            report.start_progress(len(_dd.shard_indices(len(alive), self.pg)) if self.shard else len(alive))
            if verify and first:
                self._warm_checks()
        stopped: List[BaseException] = []

        def bench_one(j: int) -> float:
            if stopped:
                raise TuningError("not run: tuning stopped after an error")
            while True:
                if not self.active:  # alone: a compiled candidate is timed while the model's next one compiles
                    k = ready_first(queue, alive, j)
                    alive[j], alive[k], labels[j], labels[k] = alive[k], alive[j], labels[k], labels[j]
                i = alive[j]
                left = deadline_left(self, queue, alive, j)
                late = left is not None and left <= 0
                if late and not self.may_time_late(i, queue):
                    raise _OverBudget()
                ready = _bench.clock()
                try:
                    with _timeline.span("compile_wait", config_str(self.configs[i])):
                        # late: compiled, nothing to await
                        reason = queue.wait(i) if late else await_compile(self, i, queue, alive, j, first, left,
                                                                          switch=not self.active)
                    break
                except OtherReady:  # another finished compiling meanwhile: it is timed first
                    continue
                except FuturesTimeout:  # the deadline came while it compiled: abandoned, not awaited
                    raise _OverBudget() from None
            if not late:  # what follows the compile is priced (late candidates: their launcher wait too)
                ready = _bench.clock()
            if first:
                self.narrow_deadline(queue)
            if reason is not None:
                report.advance()
                refusal = getattr(queue, "refused", {}).get(i)
                raise _Refused(refusal) if refusal is not None else _CompileFailed(reason)
            if verify:
                try:
                    with _timeline.span("check", config_str(self.configs[i])):
                        kept = self._verify_one(i, queue)
                except MeaningError as exc:  # the tune stops: which side is right is not guessed
                    stopped.append(exc)
                    report.advance()
                    raise
                self.snapshot.restore()
                if not kept:  # dropped with its reason by _verify_one
                    report.advance()
                    raise _Dropped(self.failures[i])
            mark = queue.mark()
            t0 = _bench.clock()
            self.pre_s.append(t0 - ready)
            try:
                with _timeline.span("timing", ("late " if late else "") + config_str(self.configs[i])):
                    ms = (self.late_bench if late else self.bench)(self.calls[i])
                took = _bench.clock() - t0
                if self.short_screen is not None:
                    took = max(0.0, took - self.short_screen.take_probe_s())
                if late:
                    self.late.append(i)
                    self.late_s += _bench.clock() - ready
                    self.late_bench_s.append(took)
                else:
                    self.bench_s.append(took)
                if queue.contended_since(mark):
                    self.contended.add(i)
            except TiletuneError as exc:  # a broken benchmark or launch, not a bad candidate: stop
                stopped.append(exc)
                raise
            finally:
                report.advance()
            report.candidate(self.configs[i], ms)
            return ms

        def on_error(j: int, exc: BaseException) -> None:
            if isinstance(exc, _Dropped):
                return
            if isinstance(exc, _OverBudget):
                self.abandoned.append(alive[j])
                return
            if isinstance(exc, _Refused):
                self.refuse(alive[j], str(exc))
            elif isinstance(exc, _CompileFailed):
                self.drop(alive[j], f"compile failed: {exc}")
            else:
                self.drop(alive[j], f"failed to run: {describe_error(exc)}")

        all_failed: Optional[TuningError] = None
        agreement = None
        try:
            with protect_side_effects(f"kernel {t.kernel_name!r}", self.problem.bound):
                agreement = _dd.agree_on_best(len(alive), bench_one, self.pg, shard=self.shard, labels=labels,
                                              what=f"kernel {t.kernel_name!r}", on_error=on_error)
        except TuningError as exc:  # every candidate failed: raised identically on every rank
            all_failed = exc
        # tiletune errors stop tuning on every rank (fatal, as agree_on_best's fatal=): one exchange
        met = _dd.all_gather_json(f"{type(stopped[0]).__name__}: {stopped[0]}" if stopped else None, self.pg)
        if stopped:
            raise stopped[0]
        for r, m in enumerate(met):
            if m is not None:
                raise TuningError(f"kernel {t.kernel_name!r}: tuning stopped because rank {r} failed: {m}")
        if all_failed is not None:
            # measure() refills the batch (alone: a group's ranks see their shards' refusals only)
            refill_left = not self.active and self.pool and any(i in self.refused for i in alive)
            if first and not self.timings and not refill_left:
                raise t._all_failed(self.configs, self.failures, all_failed if self.active else None) from all_failed
            return {i: None for i in alive}
        assert agreement is not None
        out: Dict[int, Optional[float]] = {}
        abandoned = set(self.abandoned)
        for j, ms in enumerate(agreement.times):
            i = alive[j]
            if ms is None and i in abandoned:
                pass
            elif ms is None:
                self.drop(i, "failed on another rank of the process group")
            else:
                self.timings[i] = ms
            out[i] = ms
        self.world = (agreement.world_size, agreement.rank)
        self.timed_here.extend(config_str(self.configs[alive[j]]) for j in agreement.timed)
        return out
