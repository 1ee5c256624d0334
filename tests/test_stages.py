"""The autotuner's stages as values: each runs on its own, from explicit arguments, on a real kernel.

The candidates stage (runtime/candidates.py ``CandidatesStage``) and the
measure stage (runtime/measure_stage.py ``MeasureStage``) read no
autotuner's attributes: built here from the kernel alone, they give what the
autotuner gives.  Kernels run under TRITON_INTERPRET=1 (conftest.py);
timings are injected through the user's ``do_bench``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict

import pytest
import torch
import triton
import triton.language as tl

import tiletune
from tiletune.errors import TuningError
from tiletune.runtime import bench
from tiletune.runtime.binding import Binder, tensor_dtypes
from tiletune.runtime.candidates import CandidatesStage
from tiletune.runtime.compile_workers import CompileSession
from tiletune.runtime.live_kernel import analyze_live, live_source
from tiletune.runtime.measure_stage import BenchSettings, MeasureStage, kernel_call
from tiletune.runtime.report import TuningReport, config_str
from tiletune.runtime.targets import resolve_target


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(tmp_path / "cache"))
    for var in ("TILETUNE_ALWAYS_TUNE", "TRITON_BENCH_METHOD", "TILETUNE_SEARCH"):
        monkeypatch.delenv(var, raising=False)
    if not isinstance(bench._clock, bench.VirtualClock):  # the search's budget reads a stopped clock
        monkeypatch.setattr(bench, "_clock", bench.VirtualClock())


@triton.jit
def stage_scale_kernel(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    offs = rm[:, None] * N + rn[None, :]
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


ARG_NAMES = ["x_ptr", "y_ptr", "M", "N", "BLOCK_M", "BLOCK_N"]
M, N = 32, 64


def _grid(meta):
    return (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))


def _launch_args():
    x = torch.randn(M, N)
    return (x, torch.empty_like(x), M, N), {"grid": _grid, "warmup": False}


def _stage(**choices: Any) -> CandidatesStage:
    """The candidates stage built from the kernel alone: its analysis, its parameters, the target."""
    binder = Binder("stage_scale_kernel", ARG_NAMES, ["M", "N"], stage_scale_kernel.fn)
    source = live_source(stage_scale_kernel)
    return CandidatesStage(
        "stage_scale_kernel", stage_scale_kernel, ARG_NAMES, ["M", "N"], binder.constexpr, binder.defaults, [],
        spec=lambda constants=None: analyze_live(stage_scale_kernel, source, constants),
        spec_error=lambda: None, target=lambda: resolve_target("h100"), **choices)


def _run_stage(stage: CandidatesStage, args: tuple, kwargs: Dict[str, Any]):
    binder = Binder("stage_scale_kernel", ARG_NAMES, ["M", "N"], stage_scale_kernel.fn)
    bound = binder.bind(args, kwargs)
    stage.nargs = dict(zip(ARG_NAMES, args))
    report = TuningReport("stage_scale_kernel", "0" * 16, None)
    return stage.run(bound, kwargs, {}, tensor_dtypes(ARG_NAMES, bound), report)


def test_the_candidates_stage_on_its_own_gives_the_list_the_autotuner_tunes():
    args, kwargs = _launch_args()
    got = _run_stage(_stage(), args, kwargs)
    assert len(got.configs) > 1 and got.synthesis is not None
    assert any(n.startswith(f"synthesized {len(got.configs)} candidate(s)") for n in got.notes)
    assert set(got.synthesis.tiling) == {"BLOCK_M", "BLOCK_N"}
    assert all(got.synthesis.feasible(c.kwargs, c.num_warps, c.num_stages) for c in got.configs)

    tuned = tiletune.autotune(configs=[], key=["M", "N"], target="h100")(stage_scale_kernel)
    _, listed = tuned.tuning_problem(args, kwargs)
    assert [config_str(c) for c in listed] == [config_str(c) for c in got.configs]
    tuned[_grid](*args)  # the autotuner's own tuning draws from that pool
    assert tuned.search_facts["pool"] == len(got.configs)
    torch.testing.assert_close(args[1], args[0] * 2)


def test_the_candidates_stage_prunes_a_hand_list_as_triton_does_and_the_autotuner_times_exactly_that():
    hand = [triton.Config({"BLOCK_M": b, "BLOCK_N": 32}) for b in (8, 16, 32)]

    def keep_small(configs, nargs, **kwargs):
        return [c for c in configs if c.kwargs["BLOCK_M"] <= nargs["M"] // 2]

    args, kwargs = _launch_args()
    got = _run_stage(_stage(configs=hand, early_config_prune=keep_small), args, kwargs)
    assert [c.kwargs["BLOCK_M"] for c in got.configs] == [8, 16] and got.synthesis is None

    tuned = tiletune.autotune(configs=hand, key=["M", "N"], prune_configs_by={"early_config_prune": keep_small},
                              do_bench=lambda fn, **kw: (fn(), 1.0)[1])(stage_scale_kernel)
    tuned[_grid](*args)
    assert sorted(config_str(c) for c in tuned.configs_timings) == sorted(config_str(c) for c in got.configs)


def test_the_candidates_stage_names_the_kernel_when_its_analysis_failed():
    stage = _stage()
    stage.spec = lambda constants=None: None
    stage.spec_error = lambda: SyntaxError("bad kernel")
    args, kwargs = _launch_args()
    with pytest.raises(TuningError, match="stage_scale_kernel.*bad kernel.*configs="):
        _run_stage(stage, args, kwargs)


@dataclass
class _Problem:
    """What the measure stage needs of one key: the bound arguments and the report its notes go to."""

    bound: Dict[str, Any]
    report: TuningReport


def test_the_measure_stage_on_its_own_times_every_candidate_and_returns_the_fastest():
    hand = [triton.Config({"BLOCK_M": b, "BLOCK_N": 32}) for b in (8, 16, 32)]
    times = {8: 3.0, 16: 1.0, 32: 2.0}
    launched: list = []

    def pre(nargs):
        launched.append(nargs["BLOCK_M"])

    def do_bench(fn, **kw):  # the user's benchmark: one launch, then the injected time of what it launched
        fn()
        return times[launched[-1]]

    def call(args, kwargs, config, grab=None):
        return kernel_call(stage_scale_kernel, ARG_NAMES, pre, lambda nargs, exception=None: None,
                           args, kwargs, config, grab)

    resets: list = []
    stage = MeasureStage("stage_scale_kernel", stage_scale_kernel, call, lambda bound: ["y_ptr"], resets.append,
                         ARG_NAMES, bench=BenchSettings(do_bench=do_bench), synthesize_configs=False)
    args, kwargs = _launch_args()
    binder = Binder("stage_scale_kernel", ARG_NAMES, ["M", "N"], stage_scale_kernel.fn)
    problem = _Problem(binder.bind(args, kwargs), TuningReport("stage_scale_kernel", "0" * 16, None))
    report_bench = stage.bench_fn(problem.report)
    assert stage.method_used == "user do_bench"
    now = bench.clock()
    with CompileSession() as session:
        got = stage.run(hand, report_bench, args, kwargs, problem, None, session, (now, now, now))
    assert got.winner.kwargs["BLOCK_M"] == 16
    assert {c.kwargs["BLOCK_M"]: t[0] for c, t in got.timings.items()} == times
    assert got.facts["pool"] == 3 and got.facts["measured"] == 3
    assert resets and resets[-1]["BLOCK_M"] == 16  # the reset hook ran with the winner before the real launch
    torch.testing.assert_close(args[1], args[0] * 2)  # the candidates really ran
