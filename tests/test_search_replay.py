"""A cold first tune replayed with injected compile and run times (H100 block_ptr_matmul's profile, 2026-11-26).

On the H100 block_ptr_matmul's first batch of 8 compiled for 1-3.6 s a config (big tiles with K=128), its
first tune took 7.28 s against the hand list's 5.14 s: the budget was priced at the batch's median compile
and grew to the 8 s cap.  Here the compiles run on the virtual clock (``VirtualCompiles`` stands in for the
compile queue: each job 'compiles' for an injected time from when its batch is handed over, and waiting for
it moves the clock), measurements take injected milliseconds, and the kernel runs under the interpreter, so
the replay is exact whatever the machine does.
"""

from __future__ import annotations

from concurrent.futures import TimeoutError as FuturesTimeout
from contextlib import contextmanager
from dataclasses import replace

import pytest

import tiletune
from tiletune.runtime import bench
from tiletune.runtime import measure as measure_mod
from tiletune.runtime.search import SearchPolicy, time_budget, with_first_round
from tests.test_search import Injected, launch, scale2d_kernel


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(tmp_path / "cache"))


class _Future:
    def __init__(self, queue: "VirtualCompiles", k):
        self.queue, self.k = queue, k

    def done(self) -> bool:
        return self.queue.clock() >= self.queue.done_at[self.k]


class VirtualCompiles:
    """The compile queue of one batch on a virtual clock: job ``k`` compiles for ``seconds[k]`` from the moment
    the batch is handed over, ``workers`` side by side; :meth:`wait` moves the clock to its end (or by
    ``timeout`` and raises, as a real wait does)."""

    def __init__(self, clock: bench.VirtualClock, seconds: dict, workers: int):
        self.clock, self.seconds = clock, dict(seconds)
        free = [clock()] * workers
        self.done_at = {}
        for k, s in self.seconds.items():
            w = min(range(workers), key=lambda i: free[i])
            free[w] += s
            self.done_at[k] = free[w]
        self.futures = {k: _Future(self, k) for k in self.seconds}
        self.failures: dict = {}
        self.children = None
        self.stage_s: dict = {}
        self.durations: list = []
        self.child_durations: list = []
        self.abandoned = False

    def wait(self, k, timeout=None):
        now, end = self.clock(), self.done_at.get(k, self.clock())
        if timeout is not None and end > now + max(0.0, timeout):
            self.clock.advance(max(0.0, timeout) * 1e3)
            raise FuturesTimeout()
        if end > now:
            self.clock.advance((end - now) * 1e3)
        return None

    def compile_seconds(self):
        """As the real queue: the median seconds of the compiles finished so far (None: none)."""
        done = sorted(s for k, s in self.seconds.items() if self.done_at[k] <= self.clock())
        return done[len(done) // 2] if done else None

    def mark(self):
        return (0, 0, False, 0)

    def contended_since(self, mark) -> bool:
        return False

    def abandon(self) -> None:
        self.abandoned = True


def _replay(monkeypatch, compile_s, measure_ms: float = 12.0, workers: int = 16, **policy_kw):
    """Tune scale2d_kernel with ``configs=[]`` where each config compiles for ``compile_s(config)`` seconds and
    each screening takes ``measure_ms``; returns the tuner and every batch's queue."""
    clock = bench.VirtualClock()
    previous = bench.set_clock(clock)
    queues = []

    @contextmanager
    def virtual_compiling(jobs, *, parallel=None, session=None):
        # each job is ``lambda c=config: fn.run(...)``: its default is the config it compiles
        q = VirtualCompiles(clock, {k: compile_s(job.__defaults__[0]) for k, job in jobs.items()}, workers)
        queues.append(q)
        yield q

    monkeypatch.setattr(measure_mod, "compiling", virtual_compiling)
    try:
        inj = Injected(monkeypatch, best=(1, 1024))
        real = bench.METHODS["wall"]

        def timed_wall(fn, *, warmup=None, rep=None):
            clock.advance(measure_ms)
            return real(fn, warmup=warmup, rep=rep)

        monkeypatch.setitem(bench.METHODS, "wall", timed_wall)
        policy = SearchPolicy("replay", **{"first_min": 8, "first_max": 8, "max_compiles": 40, "max_seconds": 8.0,
                                           "hand_lists": 0.7, **policy_kw})
        tuned = tiletune.autotune(configs=[], key=["M", "N"], pre_hook=inj.pre_hook, search=policy)(scale2d_kernel)
        launch(tuned, m=32, n=64)  # the sizes these replays were written for: a pool of both compile speeds
    finally:
        bench.set_clock(previous)
    return tuned, inj, queues, policy


def test_slow_compiles_end_the_first_tune_within_the_budget_priced_at_the_first_compile(monkeypatch):
    """block_ptr's profile: the model's favourite tiles compile in 5 s, smaller ones in 1 s (the model ranks 1x16
    first here).  The budget is 0.7 hand lists priced at the first compile to finish (1 s); the first tune ends
    within 10% of it, the 5 s compiles still running at the deadline are abandoned (not awaited), the model's
    first candidate among them although nothing was timed yet, and the winner was timed.  Before the fix the
    first candidate was awaited (5 s), and the descent re-priced the budget at the batch's median compile."""
    def compile_s(config):
        return 5.0 if config.kwargs["BLOCK_M"] * config.kwargs["BLOCK_N"] >= 16 else 1.0

    tuned, inj, queues, policy = _replay(monkeypatch, compile_s)
    first = queues[0]
    kinds = {first.seconds[k] for k in first.seconds}
    assert kinds == {1.0, 5.0}, "the first batch must hold both kinds for this replay to mean anything"
    budget = time_budget(policy, 1.0)
    facts = tuned.search_facts
    assert facts["time_budget_s"] == pytest.approx(budget)
    assert tuned.bench_time <= 1.1 * budget
    assert facts["abandoned"] >= 1 and first.abandoned  # the 5 s compiles were not awaited
    chosen = (tuned.best_config.kwargs["BLOCK_M"], tuned.best_config.kwargs["BLOCK_N"])
    assert chosen in set(inj.timed)


def test_fast_compiles_leave_room_for_the_descent(monkeypatch):
    """The same search where every config compiles in 0.2 s: the budget (0.7 hand lists at 0.2 s) leaves room
    for descent rounds after the first batch, and the search still ends within 10% of it."""
    tuned, _, queues, policy = _replay(monkeypatch, lambda config: 0.2)
    facts = tuned.search_facts
    assert len(queues) >= 2 and facts["descent_measured"] >= 1
    assert tuned.bench_time <= 1.1 * time_budget(policy, 0.2)


@pytest.mark.parametrize("ceiling", [1.0, None])
def test_a_first_batch_that_leaves_no_room_for_a_round_buys_one_up_to_the_ceiling(monkeypatch, ceiling):
    """Every config compiles in 1 s and a screening takes 0.16 s: the first batch of 8 ends with 0.86 s of the
    0.7-hand-list budget left after the re-timing's reserve, short of a round (a compile wave and a point).
    With ``hand_lists_max`` the budget grows to hold one round of 8 (one wave), within 1.0 hand list, the
    descent measures, and the first tune ends within 10% of the grown budget; without it, no descent."""
    tuned, _, queues, policy = _replay(monkeypatch, lambda config: 1.0, measure_ms=160.0, hand_lists_max=ceiling)
    facts = tuned.search_facts
    if ceiling is None:
        assert facts["budget_for_a_round_s"] == 0 and facts["descent_measured"] == 0 and len(queues) == 1
        assert facts["time_budget_s"] == pytest.approx(time_budget(policy, 1.0))
        return
    assert facts["budget_for_a_round_s"] > 0 and facts["descent_measured"] >= 1 and len(queues) >= 2
    assert time_budget(policy, 1.0) < facts["time_budget_s"] <= time_budget(replace(policy, hand_lists=1.0), 1.0)
    assert tuned.bench_time <= 1.1 * facts["time_budget_s"]


def test_the_budget_grows_to_hold_one_round_only_where_the_round_no_longer_fits_and_the_ceiling_allows():
    # 2.0 s spent, 0.2 s kept for the re-timing, a round of 0.5 s: 2.7 s needed
    assert with_first_round(3.0, 2.0, 0.2, 0.5, ceiling=4.0) == 3.0  # it fits: the budget stays
    assert with_first_round(2.5, 2.0, 0.2, 0.5, ceiling=4.0) == pytest.approx(2.7)  # grown to hold it
    assert with_first_round(2.5, 2.0, 0.2, 0.5, ceiling=2.6) == 2.5  # past the ceiling: not bought at all
