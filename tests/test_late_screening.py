"""A cold first tune times what it compiled: the H100 profile of matmul M=96,N=5000,K=4096 replayed.

The first batch of that cold first tune (bench/results/h100_mid, main at
ab243fa) compiled 6 candidates in 6 children and timed 2: the model's first
candidate was the batch's slowest compile (0.64 s) and was awaited while the
other 5 sat compiled; the deadline (2.434 s) came during that wait.  Here the
same batch is replayed through ``_Trial._bench`` on a virtual clock: each
compile finishes when it finished on the H100, a candidate's agreement check
costs what it cost there (0.173 s the first, with the snapshot, 0.112 s the
others), a screening 0.020 s and a short late screening 0.004 s (the short
re-timing took 0.032 s for 8 calls).  The outputs are real tensors checked by
the real agreement check; only the clock and the compile queue are injected.
"""

from __future__ import annotations

from concurrent.futures import TimeoutError as FuturesTimeout

import pytest
import torch
import triton

from tiletune.runtime import bench
from tiletune.runtime.measure import _Trial
from tiletune.runtime.measure_stage import MeasureStage
from tiletune.runtime.report import TuningReport
from tiletune.runtime.screening import OVER_SHARE, retime_rounds

#: The H100 profile (seconds from the first tune's start): the first batch's compiles, in the model's order,
#: end at these times; the deadline; the checks, a screening, a short screening.
COMPILE_ENDS = [2.625, 2.480, 2.478, 2.607, 2.384, 2.500]
BATCH_START = 2.030  # the first compile wait began (after synthesis and the compiler's warm-up, 0.77 s)
WARM_UP = 0.772
DEADLINE = 2.434
CHECKS = [0.173, 0.112]
SCREEN, LATE = 0.020, 0.004


class _Done:
    """A compile's future that is done once the virtual clock reaches ``end``."""

    def __init__(self, clock, end):
        self.clock, self.end = clock, end

    def done(self):
        return self.clock() >= self.end - 1e-12


class ReplayQueue:
    """The compile queue of the replayed batch: candidate ``i`` compiled at ``ends[i]`` on ``clock``."""

    def __init__(self, clock, ends):
        self.clock = clock
        self.futures = {i: _Done(clock, end) for i, end in enumerate(ends)}
        self.failures: dict = {}
        self.stage_s: dict = {}
        self.waits: list = []

    def wait(self, i, timeout=None):
        end = self.futures[i].end
        now = self.clock()
        if timeout is not None and now + timeout < end:
            self.clock.advance(timeout * 1e3)
            raise FuturesTimeout()
        self.clock.advance(max(0.0, end - now) * 1e3)
        self.waits.append(i)
        return None

    def mark(self):
        return 0

    def contended_since(self, mark):
        return False

    def compile_seconds(self):
        return None


def _replay(shift: float):
    """Replay the first batch with every compile (and the batch's start) ``shift`` seconds earlier; the trial,
    the ranks timed (late ones included) and the clock at the batch's end."""
    clock = bench.VirtualClock()
    previous = bench.set_clock(clock)
    x, y = torch.arange(8.0), torch.zeros(8)
    checks = iter(CHECKS + CHECKS[-1:] * 10)

    def kernel_call(args, kwargs, config, grab=None):
        def call():
            if grab is not None:  # the agreement check: a first launch, its outputs recorded and compared
                clock.advance(next(checks) * 1e3)
            y.copy_(x * 2)
            if grab is not None:
                grab()
        return call

    def screen(fn, ms):
        fn()
        clock.advance(ms * 1e3)
        return 1.0

    try:
        stage = MeasureStage("matmul", None, kernel_call, lambda bound: ["y"], lambda nargs: None, ["x", "y"])

        class Problem:
            bound = {"x": x, "y": y}
            report = TuningReport("matmul", "replay", {"key": [96, 5000, 4096]})

        trial = _Trial(stage, (), {}, Problem(), None, bench=lambda fn: screen(fn, SCREEN))
        trial.late_bench = lambda fn: screen(fn, LATE)
        assert trial.check == "agree"
        for m in range(len(COMPILE_ENDS)):
            trial.add(triton.Config({"BLOCK_SIZE_M": 16 * (m + 1)}))
        trial.started, trial.deadline = 0.0, DEADLINE
        clock.advance((BATCH_START - shift) * 1e3)
        queue = ReplayQueue(clock, [end - shift for end in COMPILE_ENDS])
        got = trial._bench(list(range(len(COMPILE_ENDS))), queue, first=True, verify=True)
        return trial, [i for i, ms in got.items() if ms is not None], clock()
    finally:
        bench.set_clock(previous)


@pytest.fixture(autouse=True)
def _four_rounds(monkeypatch):
    monkeypatch.setenv("TILETUNE_RETIME_ROUNDS", "4")  # as on the GPU (one round under the interpreter)


def test_the_m96_profile_with_the_warm_up_overlapped_times_all_six_within_ten_percent():
    """The compiler's warm-up run during synthesis (compile_workers.start_warm_up): the 6 compiles end
    0.77 s earlier.  Every one is timed, those past the deadline with the short screening, and the batch plus
    the short re-timing of the leaders ends within OVER_SHARE over the budget.  Before the fix (the model's
    first candidate awaited first; late ones priced at a screening, within 5% of the budget) 4 were timed."""
    trial, timed, end = _replay(WARM_UP)
    assert sorted(timed) == list(range(6))
    assert trial.abandoned == [] and len(trial.late) >= 1
    assert retime_rounds() == 4
    assert trial.retime_overruns(5, retime_rounds())  # past the deadline: the leaders are re-timed short
    retime = 5 * retime_rounds() * LATE
    assert end + retime <= DEADLINE * (1 + OVER_SHARE) + 1e-9


def test_the_m96_profile_as_measured_times_what_compiled_before_the_limit_and_awaits_nothing_past_it():
    """As measured on the H100 (warm-up inside the batch), one compile had finished by the deadline: it is
    timed as soon as it is ready instead of after the model's first candidate (still compiling, 0.64 s); the
    compiles still running at the deadline are abandoned, and the batch ends within OVER_SHARE."""
    trial, timed, end = _replay(0.0)
    assert 4 in timed  # the first compile to finish (2.384 s), timed at once
    assert 0 not in timed and 0 in trial.abandoned  # the slowest compile (2.625 s) is not awaited
    assert len(timed) + len(trial.abandoned) == 6
    assert end <= DEADLINE * (1 + OVER_SHARE) + 1e-9


def test_a_late_candidate_is_priced_by_its_check_not_by_a_screening():
    """Past the deadline with the check at 0.112-0.173 s: a late candidate costs the dearest check after the
    first (the first pays the snapshot the check keeps as its reference, once) plus a short screening, so the
    late ones stop where the next would pass the limit."""
    trial, timed, end = _replay(WARM_UP)
    assert trial.late_cost_s() == pytest.approx(CHECKS[1] + LATE)
    assert max(trial.pre_s) == pytest.approx(max(CHECKS))
    assert trial.late_s == pytest.approx(sum(p for p in trial.pre_s[-len(trial.late):]) + LATE * len(trial.late))


def test_the_first_candidates_one_time_check_does_not_price_the_late_ones_out():
    """The compiles 0.3 s earlier: two are timed before the deadline.  Priced at the first check (0.173 s, the
    snapshot included) the next late one did not fit and four were abandoned; priced at the others' check
    (0.112 s) one more is timed, and the batch still ends within OVER_SHARE over the budget."""
    trial, timed, end = _replay(0.3)
    assert len(timed) == 3 and len(trial.abandoned) == 3
    assert trial.late_cost_s() == pytest.approx(CHECKS[1] + LATE)
    assert end <= DEADLINE * (1 + OVER_SHARE) + 1e-9
