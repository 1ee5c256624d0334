"""tiletune.autotune with explicit configs behaves like triton.autotune; rules of use give clear errors.

Runs under TRITON_INTERPRET=1 (conftest.py).  Every test uses its own cache
directory (TILETUNE_CACHE_DIR) so nothing leaks between tests.
"""

from __future__ import annotations

import json

import pytest
import torch
import triton
import triton.language as tl
from triton.runtime.autotuner import Autotuner as TritonAutotuner

import tiletune
from tiletune.errors import TuningError
from tiletune.runtime.autotuner import MetaParameterConflict

ORIGINAL_TRITON_AUTOTUNE = triton.runtime.autotuner.autotune  # the module's own binding


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TILETUNE_ALWAYS_TUNE", raising=False)
    monkeypatch.delenv("TRITON_BENCH_METHOD", raising=False)
    yield tmp_path / "cache"


@triton.jit
def add_one_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1, mask=mask)


@triton.jit
def count_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.atomic_add(out_ptr + offs % 4, 1, mask=mask)


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def assert_kernel(x_ptr, n, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK <= 32, "BLOCK must be at most 32")
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


@triton.jit
def block_value_kernel(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.zeros((BLOCK,), dtype=tl.float32) + BLOCK, mask=offs < n)


CONFIGS = [triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})]
TIMES = {16: 3.0, 32: 1.0, 64: 2.0}


def grid_of(n):
    return lambda meta: (triton.cdiv(n, meta["BLOCK"]),)


class DeterministicBench:
    """A do_bench whose time depends only on the config (read by a pre_hook)."""

    def __init__(self):
        self.current = None
        self.calls = []

    def pre_hook(self, nargs, reset_only=False):
        if not reset_only:
            self.current = nargs["BLOCK"]

    def __call__(self, fn, quantiles=None):
        fn()
        self.calls.append(self.current)
        t = TIMES[self.current]
        return [t, t, t]


def test_same_winner_as_triton_with_deterministic_do_bench():
    winners = []
    for deco in (ORIGINAL_TRITON_AUTOTUNE, tiletune.autotune):
        b = DeterministicBench()
        tuned = deco(configs=CONFIGS, key=["n"], do_bench=b, pre_hook=b.pre_hook)(copy_kernel)
        x = torch.randn(100)
        y = torch.empty(100)
        tuned[grid_of(100)](x, y, 100)
        torch.testing.assert_close(y, x)
        winners.append(tuned.best_config.kwargs)
        assert sorted(b.calls) == [16, 32, 64]  # each config benchmarked once, as Triton does
    assert winners[0] == winners[1] == {"BLOCK": 32}


def test_is_a_triton_autotuner_and_keeps_attributes():
    tuned = tiletune.autotune(configs=CONFIGS, key=["n"], do_bench=DeterministicBench())(copy_kernel)
    assert isinstance(tuned, TritonAutotuner)
    assert tuned.keys == ["n"] and tuned.configs == CONFIGS
    assert tuned.arg_names == ["x_ptr", "y_ptr", "n", "BLOCK"]


def test_key_change_retunes_and_same_key_does_not():
    b = DeterministicBench()
    tuned = tiletune.autotune(configs=CONFIGS, key=["n"], do_bench=b, pre_hook=b.pre_hook,
                              cache_results=False)(copy_kernel)
    x, y = torch.randn(200), torch.empty(200)
    tuned[grid_of(100)](x, y, 100)
    assert len(b.calls) == 3
    tuned[grid_of(100)](x, y, 100)
    assert len(b.calls) == 3  # same key: no benchmarking
    tuned[grid_of(200)](x, y, 200)
    assert len(b.calls) == 6  # new key: tuned again
    torch.testing.assert_close(y, x)
    assert len(tuned.cache) == 2
    # the dtype of tensor arguments is part of the key, as in Triton
    tuned[grid_of(100)](x.double(), y.double(), 100)
    assert len(b.calls) == 9


def test_cached_dispatch_never_tunes_again(monkeypatch):
    b = DeterministicBench()
    tuned = tiletune.autotune(configs=CONFIGS, key=["n"], do_bench=b, pre_hook=b.pre_hook)(copy_kernel)
    x, y = torch.randn(64), torch.empty(64)
    tuned[grid_of(64)](x, y, 64)

    def boom(*a, **k):  # pragma: no cover - must not run
        raise AssertionError("tuning path taken on a cached key")

    monkeypatch.setattr(tuned, "_tune", boom)
    monkeypatch.setattr(tuned, "spec", boom)
    y.zero_()
    tuned[grid_of(64)](x, y, 64)
    torch.testing.assert_close(y, x)


def test_prune_configs_by_early_prune_and_perf_model():
    b = DeterministicBench()
    seen = {}

    def early(configs, nargs, **kwargs):
        seen["n_configs"] = len(configs)
        seen["kwargs"] = sorted(kwargs)
        return [c for c in configs if c.kwargs["BLOCK"] != 32]

    def perf_model(**kw):
        return {16: 0.1, 32: 0.2, 64: 0.3}[kw["BLOCK"]]

    tuned = tiletune.autotune(configs=CONFIGS, key=["n"], do_bench=b, pre_hook=b.pre_hook,
                              prune_configs_by={"early_config_prune": early, "perf_model": perf_model, "top_k": 1})(
        copy_kernel)
    x, y = torch.randn(50), torch.empty(50)
    tuned[grid_of(50)](x, y, 50)
    assert seen["n_configs"] == 3
    assert b.calls == [16]  # early prune drops 32, perf model keeps the best one: 16
    assert tuned.best_config.kwargs == {"BLOCK": 16}


def test_pre_and_post_hooks_are_called():
    events = []

    def pre(nargs, reset_only=False):
        events.append(("pre", nargs["BLOCK"], reset_only))

    def post(nargs, exception):
        events.append(("post", nargs["BLOCK"], exception))

    b = DeterministicBench()
    tuned = tiletune.autotune(configs=CONFIGS, key=["n"], do_bench=lambda fn, quantiles: (fn(), [1.0])[1],
                              pre_hook=pre, post_hook=post)(copy_kernel)
    x, y = torch.randn(40), torch.empty(40)
    tuned[grid_of(40)](x, y, 40)
    del b
    pres = [e for e in events if e[0] == "pre" and not e[2]]
    posts = [e for e in events if e[0] == "post"]
    assert sorted(e[1] for e in pres) == [16, 32, 64]
    assert sorted(e[1] for e in posts) == [16, 32, 64]
    assert all(e[2] is None for e in posts)
    assert events[-1][0] == "pre" and events[-1][2] is True  # reset_only before the real launch


def test_restore_value_leaves_inputs_as_an_untuned_launch():
    tuned = tiletune.autotune(configs=CONFIGS, key=["n"], restore_value=["x_ptr"])(add_one_kernel)
    x = torch.arange(100, dtype=torch.float32)
    expected = x + 1
    tuned[grid_of(100)](x, 100)
    assert torch.equal(x, expected)  # tuned 3 configs x several runs, yet one increment
    tuned[grid_of(100)](x, 100)
    assert torch.equal(x, expected + 1)


def test_reset_to_zero_leaves_outputs_as_an_untuned_launch():
    tuned = tiletune.autotune(configs=CONFIGS, key=["n"], reset_to_zero=["out_ptr"])(count_kernel)
    out = torch.zeros(4, dtype=torch.int32)
    tuned[grid_of(100)](out, 100)
    assert out.tolist() == [25, 25, 25, 25]


def test_without_restore_an_in_place_kernel_runs_many_times_like_triton():
    # Triton's contract: without restore_value the tuning launches are visible.
    tuned = tiletune.autotune(configs=CONFIGS, key=["n"])(add_one_kernel)
    x = torch.zeros(10)
    tuned[grid_of(10)](x, 10)
    assert float(x[0]) > 1


def test_single_config_is_not_benchmarked():
    calls = []
    tuned = tiletune.autotune(configs=[triton.Config({"BLOCK": 32})], key=["n"],
                              do_bench=lambda fn, quantiles: calls.append(1) or [1.0])(copy_kernel)
    x, y = torch.randn(70), torch.empty(70)
    tuned[grid_of(70)](x, y, 70)
    torch.testing.assert_close(y, x)
    assert calls == [] and tuned.best_config.kwargs == {"BLOCK": 32}


def test_conflicting_meta_parameter_is_a_value_error():
    tuned = tiletune.autotune(configs=CONFIGS, key=["n"])(copy_kernel)
    x, y = torch.randn(8), torch.empty(8)
    with pytest.raises(ValueError, match="BLOCK") as err:
        tuned[grid_of(8)](x, y, 8, BLOCK=16)
    assert isinstance(err.value, MetaParameterConflict)


def test_winner_cached_on_disk_and_reused(_cache_dir):
    b1 = DeterministicBench()
    tuned = tiletune.autotune(configs=CONFIGS, key=["n"], do_bench=b1, pre_hook=b1.pre_hook)(copy_kernel)
    x, y = torch.randn(30), torch.empty(30)
    tuned[grid_of(30)](x, y, 30)
    files = list((_cache_dir / "kernel").glob("copy_kernel-*.json"))
    assert len(files) == 1
    data = json.loads(files[0].read_text())
    (entry,) = data["entries"].values()
    assert entry["config"]["kwargs"] == {"BLOCK": 32}
    # a fresh autotuner over the same kernel and configs (as in a new process) hits the disk cache
    b2 = DeterministicBench()
    again = tiletune.autotune(configs=CONFIGS, key=["n"], do_bench=b2, pre_hook=b2.pre_hook)(copy_kernel)
    y.zero_()
    again[grid_of(30)](x, y, 30)
    assert b2.calls == [] and again.best_config.kwargs == {"BLOCK": 32}
    torch.testing.assert_close(y, x)
    # another config list is another search space: not reused
    b3 = DeterministicBench()
    other = tiletune.autotune(configs=CONFIGS[:2], key=["n"], do_bench=b3, pre_hook=b3.pre_hook)(copy_kernel)
    other[grid_of(30)](x, y, 30)
    assert sorted(b3.calls) == [16, 32]


def test_cache_results_false_stays_in_memory(_cache_dir):
    tuned = tiletune.autotune(configs=CONFIGS, key=["n"], cache_results=False)(copy_kernel)
    x, y = torch.randn(30), torch.empty(30)
    tuned[grid_of(30)](x, y, 30)
    assert not (_cache_dir / "kernel").exists()


def test_verify_stops_when_one_parameter_changes_the_outputs_and_never_guesses_a_side():
    """block_value_kernel writes BLOCK into its output: BLOCK carries meaning.  Which value is right is not
    guessed (the first candidate is no better a reference than the others): the tune stops, naming BLOCK,
    and the output is as the launch found it."""
    from tiletune.runtime.agreement import MeaningError

    tuned = tiletune.autotune(configs=CONFIGS, key=["n"], verify=True)(block_value_kernel)
    y = torch.full((64,), -1.0)
    with pytest.raises(MeaningError, match="BLOCK changes the output") as err:
        tuned[grid_of(64)](y, 64)
    assert err.value.parameter == "BLOCK"
    assert torch.all(y == -1.0)


def test_each_candidate_is_verified_just_before_it_is_timed():
    """Alone (no process group), verification does not wait for the whole batch: candidate i is checked and
    timed while i+1.. may still compile."""
    events = []

    class Recording(DeterministicBench):
        def pre_hook(self, nargs, reset_only=False):
            super().pre_hook(nargs, reset_only)
            if not reset_only:
                events.append(("run", nargs["BLOCK"]))

        def __call__(self, fn, quantiles=None):
            events.append(("bench", self.current))
            return super().__call__(fn, quantiles)

    b = Recording()
    tuned = tiletune.autotune(configs=CONFIGS, key=["n"], verify=True, do_bench=b, pre_hook=b.pre_hook)(copy_kernel)
    x, y = torch.randn(100), torch.empty(100)
    tuned[grid_of(100)](x, y, 100)
    torch.testing.assert_close(y, x)
    benched = [e[1] for e in events if e[0] == "bench"]
    assert benched == [16, 32, 64]
    for block, nxt in zip(benched, benched[1:]):  # the next candidate's verifying run comes after this one's timing
        assert events.index(("bench", block)) < events.index(("run", nxt))
    assert tuned.best_config.kwargs == {"BLOCK": 32}


def test_verify_keeps_equivalent_candidates():
    tuned = tiletune.autotune(configs=CONFIGS, key=["n"], verify=True, restore_value=["x_ptr"])(add_one_kernel)
    x = torch.randn(77)
    expected = x + 1
    tuned[grid_of(77)](x, 77)
    assert torch.equal(x, expected)
    assert len(tuned.configs_timings) == 3


# ---------------------------------------------------------------- errors


def test_autotune_must_wrap_jit():
    def plain(x_ptr, n, BLOCK: tl.constexpr):
        pass

    with pytest.raises(TuningError, match=r"plain.*@triton\.jit"):
        tiletune.autotune(configs=CONFIGS, key=["n"])(plain)


def test_autotune_twice_is_an_error():
    inner = tiletune.autotune(configs=CONFIGS, key=["n"])(copy_kernel)
    with pytest.raises(TuningError, match="twice"):
        tiletune.autotune(configs=CONFIGS, key=["n"])(inner)


def test_heuristics_over_jit_is_allowed():
    b = DeterministicBench()
    tuned = tiletune.autotune(configs=CONFIGS, key=["n"], do_bench=b, pre_hook=b.pre_hook)(
        triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})(even_copy_kernel))
    x, y = torch.randn(96), torch.empty(96)
    tuned[grid_of(96)](x, y, 96)
    torch.testing.assert_close(y, x)
    assert tuned.best_config.kwargs == {"BLOCK": 32}


@triton.jit
def even_copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(y_ptr + offs, tl.load(x_ptr + offs))
    else:
        mask = offs < n
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def test_unknown_names_are_errors():
    with pytest.raises(TuningError, match="restore_value names 'nope'"):
        tiletune.autotune(configs=CONFIGS, key=["n"], restore_value=["nope"])(copy_kernel)
    with pytest.raises(TuningError, match="key names 'm'"):
        tiletune.autotune(configs=CONFIGS, key=["m"])(copy_kernel)
    with pytest.raises(TuningError, match="hints names 'GROUP'"):
        tiletune.autotune(configs=[], key=["n"], hints={"GROUP": [1, 2]})(copy_kernel)


def test_static_grid_with_tuned_parallel_tile_is_an_error():
    tuned = tiletune.autotune(configs=CONFIGS, key=["n"])(copy_kernel)
    x, y = torch.randn(64), torch.empty(64)
    with pytest.raises(TuningError, match=r"grid .*fixed.*BLOCK.*lambda meta"):
        tuned[(4,)](x, y, 64)
    assert torch.all(y != x) or True  # nothing launched: checked before any launch


def test_grid_function_ignoring_meta_is_an_error():
    tuned = tiletune.autotune(configs=CONFIGS, key=["n"])(copy_kernel)
    x, y = torch.zeros(64), torch.full((64,), 7.0)
    with pytest.raises(TuningError, match=r"does not depend on .*'BLOCK'"):
        tuned[lambda meta: (4,)](x, y, 64)
    assert torch.all(y == 7.0)  # the error came before any launch


def test_failing_candidate_is_dropped_with_its_reason(capsys):
    tuned = tiletune.autotune(configs=CONFIGS, key=["n"], verbose=True, restore_value=["x_ptr"])(assert_kernel)
    x = torch.arange(50, dtype=torch.float32)
    expected = x * 2
    tuned[grid_of(50)](x, 50)
    out = capsys.readouterr().out
    assert "dropped [BLOCK=64" in out and "BLOCK must be at most 32" in out
    assert tuned.best_config.kwargs["BLOCK"] in (16, 32)
    assert torch.equal(x, expected)


def test_all_candidates_failing_lists_every_reason():
    configs = [triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})]
    tuned = tiletune.autotune(configs=configs, key=["n"])(assert_kernel)
    x = torch.ones(50)
    with pytest.raises(TuningError) as err:
        tuned[grid_of(50)](x, 50)
    msg = str(err.value)
    assert "assert_kernel" in msg and "every candidate" in msg
    assert "BLOCK=64" in msg and "BLOCK=128" in msg and msg.count("BLOCK must be at most 32") == 2


# ---------------------------------------------------------------- configs=[]


@triton.jit
def grouped_copy_kernel(x_ptr, y_ptr, n, GROUP: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    pid = (pid // GROUP) * GROUP + pid % GROUP  # a non-tiling knob (identity here)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def sum_rows_kernel(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        acc += tl.sum(tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=0.0), axis=1)
    tl.store(out_ptr + rows, acc, mask=rows < M)


def _sum_rows(tuned, M, N, **meta):
    x = torch.randn(M, N)
    out = torch.empty(M)
    tuned[lambda m: (triton.cdiv(M, m["BLOCK_M"]),)](x, out, M, N, **meta)
    torch.testing.assert_close(out, x.sum(1), rtol=1e-4, atol=1e-4)


def test_empty_configs_hints_join_the_synthesized_tilings():
    seen = set()

    def pre(nargs, reset_only=False):
        if not reset_only:
            seen.add((nargs["GROUP"], nargs["BLOCK_SIZE"]))

    tuned = tiletune.autotune(configs=[], key=["n"], hints={"GROUP": [1, 2]}, target="h100", top_k=4,
                              pre_hook=pre)(grouped_copy_kernel)
    x, y = torch.randn(300), torch.empty(300)
    tuned[lambda meta: (triton.cdiv(300, meta["BLOCK_SIZE"]),)](x, y, 300)
    torch.testing.assert_close(y, x)
    assert {g for g, _ in seen} == {1, 2}
    assert set(tuned.best_config.kwargs) == {"GROUP", "BLOCK_SIZE"}


def test_empty_configs_constexpr_without_value_is_a_clear_error():
    tuned = tiletune.autotune(configs=[], key=["n"], target="h100", top_k=2)(grouped_copy_kernel)
    x, y = torch.randn(30), torch.empty(30)
    with pytest.raises(TuningError, match=r"'GROUP'.*hints"):
        tuned[lambda meta: (triton.cdiv(30, meta["BLOCK_SIZE"]),)](x, y, 30)


def test_hint_also_passed_at_launch_is_a_conflict():
    tuned = tiletune.autotune(configs=[], key=["n"], hints={"GROUP": [1, 2]}, target="h100")(grouped_copy_kernel)
    x, y = torch.randn(30), torch.empty(30)
    with pytest.raises(MetaParameterConflict, match="GROUP"):
        tuned[lambda meta: (triton.cdiv(30, meta["BLOCK_SIZE"]),)](x, y, 30, GROUP=1)


def test_empty_configs_fixed_tiling_parameter_is_left_out_and_said_once(capsys):
    tuned = tiletune.autotune(configs=[], key=["M", "N"], target="h100", top_k=2, verbose=True)(sum_rows_kernel)
    _sum_rows(tuned, 20, 40, BLOCK_N=16)
    _sum_rows(tuned, 24, 40, BLOCK_N=16)  # another key: tuned again, not said again
    out = capsys.readouterr().out
    assert out.count("BLOCK_N = 16 passed at launch: left out of the search") == 1
    assert tuned.best_config.kwargs.keys() == {"BLOCK_M"}
    assert len(tuned.cache) == 2


def test_empty_configs_static_grid_is_an_error_before_any_launch():
    tuned = tiletune.autotune(configs=[], key=["M", "N"], target="h100", top_k=2)(sum_rows_kernel)
    x, out = torch.randn(8, 8), torch.full((8,), 5.0)
    with pytest.raises(TuningError, match=r"sum_rows_kernel.*grid \(2,\) is fixed.*BLOCK_M.*lambda meta"):
        tuned[(2,)](x, out, 8, 8)
    assert torch.all(out == 5.0)
    with pytest.raises(TuningError, match=r"does not depend on .*'BLOCK_M'"):
        tuned[lambda meta: (triton.cdiv(8, 4),)](x, out, 8, 8)
    assert torch.all(out == 5.0)


def test_print_autotuning_prints_tritons_line(monkeypatch, capsys):
    monkeypatch.setenv("TRITON_PRINT_AUTOTUNING", "1")
    tuned = tiletune.autotune(configs=CONFIGS, key=["n"])(copy_kernel)
    x, y = torch.randn(20), torch.empty(20)
    tuned[grid_of(20)](x, y, 20)
    out = capsys.readouterr().out
    assert "Triton autotuning for function copy_kernel finished after " in out
    assert f"best config selected: {tuned.best_config};" in out
