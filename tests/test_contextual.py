"""tiletune.contextual_autotune: kernels tuned in the context of the function that launches them.

Kernels run under TRITON_INTERPRET=1 (conftest.py).  Timings that decide a
winner come from virtual time that Config.pre_hooks add (run by every launch,
in context too) to the measuring clock (``tiletune.runtime.bench.VirtualClock``),
so the expected winners do not depend on the machine or how busy it is.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import triton
import triton.language as tl
from triton.runtime.autotuner import Autotuner as TritonAutotuner

import fixtures
import tiletune
from tiletune.errors import TuningError
from tiletune.runtime.autotuner import LAUNCH_CONTEXT
from tiletune.runtime.bench import VirtualClock, set_clock
from tiletune.runtime.tuning_log import read_tuning_log

from tests.dist_workers.launch import HANG_S, run_ranks

VA = fixtures.load("vector_add")
SM = fixtures.load("softmax")
TRITON_RUN = TritonAutotuner.run
WORKER = Path(__file__).resolve().parent / "dist_workers" / "kernel_worker.py"


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TILETUNE_ALWAYS_TUNE", raising=False)
    monkeypatch.delenv("TRITON_BENCH_METHOD", raising=False)
    monkeypatch.chdir(tmp_path)  # ./.autotune_logs goes here
    previous = set_clock(CLOCK)
    yield
    set_clock(previous)
    assert TritonAutotuner.run is TRITON_RUN  # the wrapper never outlives a tuning
    assert LAUNCH_CONTEXT.get() is None


CLOCK = VirtualClock()  # the measuring clock during every test here


class Recorder:
    """Config.pre_hooks that record which config each launch used, take a given (virtual) time, or raise."""

    def __init__(self, sleeps=None, fail=()):
        self.sleeps = sleeps or {}  # (tag, value) -> ms
        self.fail = set(fail)
        self.seen: list = []  # (tag, value) of every launch

    def hook(self, value, tag):
        def pre_hook(nargs):
            self.seen.append((tag, value))
            if value in self.fail:
                raise RuntimeError(f"config {value} cannot run")
            CLOCK.advance(self.sleeps.get((tag, value), 0))

        return pre_hook

    def configs(self, name, values, tag=""):
        return [triton.Config({name: v}, pre_hook=self.hook(v, tag)) for v in values]

    def launched(self, tag=""):
        return [v for t, v in self.seen if t == tag]


@triton.autotune(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})], key=["n"])
@triton.jit
def scale_inplace_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2, mask=m)


def make_function(add, soft, scale=None, **deco):
    @tiletune.contextual_autotune(**{"n_repeat": 2, "n_warmup": 1, **deco})
    def step(x, y, rows):
        n = x.numel()
        s = torch.empty_like(x)
        add[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, s, n)
        p = torch.empty_like(rows)
        soft[lambda meta: (rows.shape[0],)](p, rows, rows.stride(0), p.stride(0), rows.shape[1])
        if scale is not None:
            scale[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, n)  # in place on the caller's x
        return s, p

    return step


def inputs():
    torch.manual_seed(0)
    return torch.randn(300), torch.randn(300), torch.randn(4, 50)


def test_two_tiletune_kernels_settle_in_context_and_results_are_right():
    rec = Recorder(sleeps={("add", 32): 40, ("add", 64): 2, ("add", 128): 40, ("soft", 64): 40, ("soft", 128): 2})
    add = tiletune.autotune(configs=rec.configs("BLOCK_SIZE", [32, 64, 128], "add"), key=["n_elements"])(VA.KERNEL)
    soft = tiletune.autotune(configs=rec.configs("BLOCK_SIZE", [64, 128], "soft"), key=["n_cols"])(SM.KERNEL)
    step = make_function(add, soft)
    x, y, rows = inputs()
    x0, y0, rows0 = x.clone(), y.clone(), rows.clone()
    s, p = step(x, y, rows)
    torch.testing.assert_close(s, x0 + y0)
    torch.testing.assert_close(p, torch.softmax(rows0, dim=1))
    assert torch.equal(x, x0) and torch.equal(y, y0) and torch.equal(rows, rows0)
    # 3 steps (the add kernel has 3 candidates), 1 untimed + 2 timed runs each, then the final call
    assert step.last_runs == 3 * 3 + 1
    # step s launches candidate s mod n of each kernel, in step with each other; the final call the winners
    assert rec.launched("add") == [32] * 3 + [64] * 3 + [128] * 3 + [64]
    assert rec.launched("soft") == [64] * 3 + [128] * 3 + [64] * 3 + [128]
    assert add.best_config.kwargs == {"BLOCK_SIZE": 64} and soft.best_config.kwargs == {"BLOCK_SIZE": 128}
    # the per-rank log: one line per candidate per kernel (timed samples), the winners marked
    lines = [json.loads(line) for line in Path(".autotune_logs/rank-0.jsonl").read_text().splitlines()]
    assert sorted((r["kernel"], r["config"]["kwargs"]["BLOCK_SIZE"], r["samples"], r["winner"]) for r in lines) == [
        ("add_kernel", 32, 2, False), ("add_kernel", 64, 2, True), ("add_kernel", 128, 2, False),
        ("softmax_kernel", 64, 4, False), ("softmax_kernel", 128, 2, True)]
    # the second call tunes nothing: one run
    s2, _ = step(x, y, rows)
    assert step.last_runs == 1 and torch.equal(s2, s)


def test_synthesized_candidates_and_winners_go_into_the_kernels_caches():
    add = tiletune.autotune(configs=[], key=["n_elements"], top_k=3, target="h100")(VA.KERNEL)
    soft = tiletune.autotune(configs=[], key=["n_cols"], top_k=2, target="h100")(SM.KERNEL)
    x, y, rows = inputs()
    s, p = make_function(add, soft)(x, y, rows)
    torch.testing.assert_close(s, x + y)
    torch.testing.assert_close(p, torch.softmax(rows, dim=1))
    lines = [json.loads(line) for line in Path(".autotune_logs/rank-0.jsonl").read_text().splitlines()]
    own = [r["config"]["kwargs"] for r in lines if r["kernel"] == "add_kernel"]
    assert len(own) == 3 and add.best_config.kwargs in own  # settled on one of its own synthesized candidates
    (soft_line,) = [r for r in lines if r["kernel"] == "softmax_kernel"]
    assert soft_line["status"] == "single config" and soft_line["config"]["kwargs"] == soft.best_config.kwargs
    best = add.best_config
    # in memory: a launch outside the context goes straight to the winner
    assert list(add._fast.values())[0][0] is best
    # on disk: a fresh autotuner of the same kernel hits the cache without benchmarking
    again = tiletune.autotune(configs=[], key=["n_elements"], top_k=3, target="h100")(VA.KERNEL)
    out = torch.empty_like(x)
    again[lambda meta: (triton.cdiv(300, meta["BLOCK_SIZE"]),)](x, y, out, 300)
    assert again.best_config.kwargs == best.kwargs and torch.equal(out, x + y)
    log = read_tuning_log(next(Path(tiletune.runtime.cache.cache_dir(), "logs").glob("add_kernel-*.jsonl")))
    assert [r["status"] for r in log] == ["tuned (contextual)", "cache hit"]
    assert log[0]["contextual"] is True and log[0]["method"] == "contextual"


def test_triton_autotune_kernel_inside_and_in_place_arguments_restored():
    add = tiletune.autotune(configs=[triton.Config({"BLOCK_SIZE": 64}), triton.Config({"BLOCK_SIZE": 128})],
                            key=["n_elements"])(VA.KERNEL)
    soft = tiletune.autotune(configs=[triton.Config({"BLOCK_SIZE": 64})], key=["n_cols"])(SM.KERNEL)
    step = make_function(add, soft, scale=scale_inplace_kernel)
    x, y, rows = inputs()
    x0 = x.clone()
    s, _ = step(x, y, rows)
    torch.testing.assert_close(s, x0 + y)
    assert torch.equal(x, x0 * 2)  # doubled once, as by one call, not once per run
    assert scale_inplace_kernel.best_config.kwargs["BLOCK"] in (32, 64)
    assert (300, "torch.float32") in scale_inplace_kernel.cache
    kernels = {json.loads(line)["kernel"] for line in Path(".autotune_logs/rank-0.jsonl").read_text().splitlines()}
    assert kernels == {"add_kernel", "softmax_kernel", "scale_inplace_kernel"}  # the single config: logged too


def test_a_failing_candidate_is_skipped_and_all_failing_is_an_error():
    rec = Recorder(fail={64})
    add = tiletune.autotune(configs=rec.configs("BLOCK_SIZE", [32, 64, 128]), key=["n_elements"])(VA.KERNEL)
    soft = tiletune.autotune(configs=[triton.Config({"BLOCK_SIZE": 64})], key=["n_cols"])(SM.KERNEL)
    x, y, rows = inputs()
    s, _ = make_function(add, soft)(x, y, rows)
    torch.testing.assert_close(s, x + y)
    assert add.best_config.kwargs["BLOCK_SIZE"] in (32, 128)
    lines = [json.loads(line) for line in Path(".autotune_logs/rank-0.jsonl").read_text().splitlines()]
    (bad,) = [r for r in lines if r["kernel"] == "add_kernel" and r["config"]["kwargs"] == {"BLOCK_SIZE": 64}]
    assert "config 64 cannot run" in bad["error"] and bad["time_ms"] is None

    rec = Recorder(fail={32, 64})
    add = tiletune.autotune(configs=rec.configs("BLOCK_SIZE", [32, 64]), key=["n_elements"])(VA.KERNEL)
    with pytest.raises(TuningError, match=r"add_kernel.*every candidate failed.*config 32 cannot run"):
        make_function(add, soft)(x, y, rows)


def test_nothing_to_tune_runs_once():
    calls = []

    @tiletune.contextual_autotune()
    def plain(x):
        calls.append(1)
        return x + 1

    assert torch.equal(plain(torch.zeros(3)), torch.ones(3))
    assert calls == [1] and plain.last_runs == 1


def test_ranks_settle_on_the_same_configs(tmp_path):
    # rank 0 alone would pick 32, rank 1 alone 64; the slowest rank's medians make 128 the winner
    sleeps = {"0": {"32": 2, "64": 90, "128": 45}, "1": {"32": 90, "64": 2, "128": 45}}
    opts = {"cache_dir": str(tmp_path / "cache"), "sleep_ms": sleeps}
    results = run_ranks(WORKER, tmp_path, "contextual", 2, opts, timeout=HANG_S, cwd=tmp_path)
    for r, res in enumerate(results):
        assert "error" not in res, f"rank {r}: {res.get('traceback')}"
        assert res["add"] == 128 and res["correct"]
        assert res["log_files"] == ["rank-0.jsonl", "rank-1.jsonl"]
        mine = {(line["kernel"], line["config"]["kwargs"].get("BLOCK_SIZE")): line for line in res["log"]}
        local = {b: mine[("add_kernel", b)]["local_ms"] for b in (32, 64, 128)}
        assert min(local, key=local.get) == [32, 64][r]  # each rank's own favourite differs
        assert all(line["world_size"] == 2 and line["rank"] == r for line in res["log"])
    assert results[0]["double"] == results[1]["double"] and results[0]["soft"] == results[1]["soft"]


def test_ranks_agree_on_a_cached_result_through_the_one_decision_path(tmp_path):
    """The contextual tuner decides each kernel's key as the kernel tuner does (runtime/decision.decide): rank 0's
    cached winner on every rank when all hit, every rank tunes when any misses, a stale entry refused everywhere."""
    sleeps = {"0": {"32": 2, "64": 90, "128": 45}, "1": {"32": 90, "64": 2, "128": 45}}
    own = [str(tmp_path / "c0"), str(tmp_path / "c1")]
    opts = {"sleep_ms": sleeps, "steps": [
        {"cache_dirs": own, "is_dist": False},  # each rank alone caches its own favourite: 32 on 0, 64 on 1
        {"cache_dirs": own},  # every rank hits, with different entries: rank 0's, on every rank, no tuning run
        {"cache_dirs": [own[0], str(tmp_path / "empty")]},  # rank 1 misses: every rank tunes, slowest medians
        {"cache_dirs": own, "stale_rank0": True, "env": {"TILETUNE_VERSION_CHECK": "strict"}},
    ]}
    results = run_ranks(WORKER, tmp_path, "contextual_cache", 2, opts, timeout=HANG_S, cwd=tmp_path)
    for r, res in enumerate(results):
        assert "error" not in res, f"rank {r}: {res.get('traceback')}"
    alone, hit, miss, strict = zip(*[res["steps"] for res in results])
    assert [x["add"] for x in alone] == [32, 64] and all(x["runs"] > 1 and x["correct"] for x in alone)
    assert [x["add"] for x in hit] == [32, 32] and all(x["runs"] == 1 and x["correct"] for x in hit)
    assert [x["add"] for x in miss] == [128, 128] and all(x["runs"] > 1 and x["correct"] for x in miss)
    assert [x.get("error") for x in strict] == ["StaleCacheEntryError"] * 2
    assert "0.0.1-old" in strict[0]["message"] and "(rank 0)" in strict[1]["message"]
