"""The kernel autotuner across real torch.distributed (gloo) processes: every rank ends with one config.

Each test starts 2 processes running ``tests/dist_workers/kernel_worker.py``
(kernels under TRITON_INTERPRET=1); each rank writes what it saw.  A rank that
does not finish in time is a hang and fails the test.  Rank-dependent timings
come from sleeps in a pre_hook (wall-clock benchmark, re-timing included) or
from a rank-dependent ``do_bench``.
"""

from __future__ import annotations

import math
from pathlib import Path

from tiletune.runtime.cache import environment_fingerprint, read_cache_file

from tests.dist_workers.launch import HANG_S, run_ranks

WORKER = Path(__file__).resolve().parent / "dist_workers" / "kernel_worker.py"
BLOCKS = [64, 128, 256, 512]


def steps(results: list) -> list:
    """Per step, every rank's outcome (fails on a rank-level crash)."""
    for r, res in enumerate(results):
        assert "error" not in res, f"rank {r}: {res.get('traceback')}"
    return [list(step) for step in zip(*(r["steps"] for r in results))]


def run(tmp_path, opts, tag="run", world=2):
    return steps(run_ranks(WORKER, tmp_path, "tune", world, opts, tag=tag, timeout=HANG_S))


def cache_entries(directory: Path) -> dict:
    files = list((directory / "kernel").glob("add_kernel-*.json"))
    assert len(files) == 1, files
    data, reason = read_cache_file(files[0])
    assert reason is None
    return data["entries"]


def local_favourite(log: dict) -> int:
    """The BLOCK_SIZE this rank alone measured fastest (first measurement, before agreement)."""
    cands = [c for c in log["candidates"] if c.get("ms") is not None]
    return min(cands, key=lambda c: c["ms"])["config"]["kwargs"]["BLOCK_SIZE"]


def test_explicit_configs_ranks_with_different_timings_agree(tmp_path):
    # rank 0 alone would pick 64, rank 1 alone 128; the slowest rank's times make 512 the winner
    sleeps = {"0": {"64": 5, "128": 100, "256": 100, "512": 50}, "1": {"64": 100, "128": 5, "256": 100, "512": 50}}
    bench = {"0": {"64": 1, "128": 9, "256": 9, "512": 5}, "1": {"64": 9, "128": 1, "256": 9, "512": 5}}
    opts = {
        "configs": BLOCKS, "n": 512,
        "steps": [
            {"sleep_ms": sleeps, "cache_dir": str(tmp_path / "wall")},  # wall clock + interleaved re-timing
            # no pg=, but TILETUNE_DIST=1: the default group (rank-dependent do_bench)
            {"bench_ms": bench, "no_pg": True, "env": {"TILETUNE_DIST": "1"}, "cache_dir": str(tmp_path / "env")},
            # without a group each rank keeps its own favourite (own cache directories: sharing one would
            # let the rank that finishes first hand its winner to the other through the cache)
            {"bench_ms": bench, "no_pg": True, "cache_dirs": [str(tmp_path / "alone0"), str(tmp_path / "alone1")]},
        ],
    }
    wall, env, alone = run(tmp_path, opts)
    for r, x in enumerate(wall):
        call = x["calls"][0]
        assert call["best"] == 512 and call["correct"]
        assert local_favourite(x["log"]) == BLOCKS[r]  # each rank's own measurements differ
        assert x["log"]["world_size"] == 2 and x["log"]["rank"] == r and x["log"]["sharded"] is False
        assert sorted(set(call["launches"])) == BLOCKS  # every rank timed every config
    (entry,) = cache_entries(tmp_path / "wall").values()
    assert entry["config"]["kwargs"] == {"BLOCK_SIZE": 512} and entry["world_size"] == 2
    assert [x["calls"][0]["best"] for x in env] == [512, 512]
    assert [x["calls"][0]["best"] for x in alone] == [64, 128]


def test_synthesized_configs_agree_and_a_rank_dependent_candidate_list_is_an_error(tmp_path):
    bench = {"0": {"4": 1, "8": 9, "16": 9, "32": 5}, "1": {"4": 9, "8": 1, "16": 9, "32": 5}}
    opts = {
        "configs": "synth", "top_k": 4, "n": 256, "bench_ms": bench,
        "steps": [
            {"cache_dir": str(tmp_path / "a")},
            # rank r keeps 2 + r of the synthesized candidates: an error on every rank, no hang
            {"cache_dir": str(tmp_path / "b"), "prune_by_rank": True},
        ],
    }
    tuned, pruned = run(tmp_path, opts)
    for r, x in enumerate(tuned):
        call = x["calls"][0]
        assert call["best"] == 32 and call["correct"]
        assert sorted(call["benched"]) == [4, 8, 16, 32]
        assert local_favourite(x["log"]) == [4, 8][r]
    configs = [[c["config"] for c in x["log"]["candidates"]] for x in tuned]
    assert configs[0] == configs[1]  # the same synthesized list on every rank
    (entry,) = cache_entries(tmp_path / "a").values()
    assert entry["config"]["kwargs"] == {"BLOCK_SIZE": 32}
    for x in pruned:
        assert x["error"] == "TuningError"
        assert "disagree on the candidate list of kernel 'add_kernel'" in x["message"]


def test_sharded_tuning_splits_candidates_and_all_ranks_adopt_one_winner(tmp_path):
    opts = {
        "configs": BLOCKS, "n": 512, "shard": True,
        "steps": [
            {"bench_ms": {"all": {"64": 4, "128": 3, "256": 1, "512": 2}}, "cache_dir": str(tmp_path / "a")},
            # wall clock: each rank times its share, then re-times the leading three
            {"sleep_ms": {"all": {"64": 120, "128": 90, "256": 5, "512": 50}}, "cache_dir": str(tmp_path / "b")},
        ],
    }
    benched, wall = run(tmp_path, opts)
    shares = [[64, 256], [128, 512]]  # round robin over the candidate list
    for r, x in enumerate(benched):
        call = x["calls"][0]
        assert call["benched"] == shares[r]  # only its share (a user do_bench: no re-timing)
        assert call["best"] == 256 and call["correct"]
        assert x["log"]["timed_here"] == [f"BLOCK_SIZE={b}, num_warps=4, num_stages=3" for b in shares[r]]
        assert x["log"]["sharded"] is True
    (entry,) = cache_entries(tmp_path / "a").values()
    assert entry["config"]["kwargs"] == {"BLOCK_SIZE": 256} and entry["sharded"] is True
    assert sorted(entry["timings_ms"].values()) == [1.0, 2.0, 3.0, 4.0]  # every rank's share gathered
    for r, x in enumerate(wall):
        call = x["calls"][0]
        assert call["launches"][:2] == shares[r]  # its share first, then the re-timed leaders
        assert sorted(call["launches"][2:]) == [128, 256, 512]
        assert call["best"] == 256 and call["correct"]
    (entry,) = cache_entries(tmp_path / "b").values()
    assert entry["config"]["kwargs"] == {"BLOCK_SIZE": 256} and entry["sharded"] is True


def test_candidate_failing_on_one_rank_fails_for_all_without_a_hang(tmp_path):
    bench = {"all": {"64": 4, "128": 1, "256": 2, "512": 3}}
    opts = {
        "configs": BLOCKS, "n": 512, "bench_ms": bench,
        "steps": [
            {"raise_on": {"1": [128]}, "cache_dir": str(tmp_path / "a")},  # 128 would win, but raises on rank 1
            {"raise_on": {"0": [64, 256], "1": [128, 512]}, "cache_dir": str(tmp_path / "b")},  # every one fails
            {"fatal_on": {"1": [256]}, "cache_dir": str(tmp_path / "c")},  # a broken benchmark on rank 1
        ],
    }
    one, every, fatal = run(tmp_path, opts)
    for x in one:
        assert x["calls"][0]["best"] == 256 and x["calls"][0]["correct"]
    assert any("cannot run on rank 1" in (c.get("dropped") or "") for c in one[1]["log"]["candidates"])
    assert any("failed on another rank" in (c.get("dropped") or "") for c in one[0]["log"]["candidates"])
    for x in every:
        assert x["error"] == "TuningError" and "every candidate config failed" in x["message"]
        assert "BLOCK_SIZE=128 cannot run on rank 1" in x["message"]
        assert "BLOCK_SIZE=64 cannot run on rank 0" in x["message"]
    assert fatal[1] == {"error": "TuningError", "message": "the benchmark is broken on rank 1"}
    assert fatal[0]["error"] == "TuningError" and "stopped because rank 1 failed" in fatal[0]["message"]


def test_cache_reuse_without_benchmarking(tmp_path):
    bench = {"0": {"64": 1, "128": 9, "256": 9, "512": 5}, "1": {"64": 9, "128": 1, "256": 9, "512": 5}}
    cache = str(tmp_path / "cache")
    opts = {
        "configs": BLOCKS, "n": 512, "bench_ms": bench,
        "steps": [
            {"cache_dir": cache, "calls": 2},  # tunes; the second call is a memory hit
            {"cache_dir": cache},  # a fresh tuner: a disk hit on every rank, nothing benchmarked
            {"cache_dirs": [cache, str(tmp_path / "empty")]},  # rank 1 misses: every rank tunes
        ],
    }
    first, hit, mixed = run(tmp_path, opts)
    for x in first:
        assert sorted(x["calls"][0]["benched"]) == BLOCKS and x["calls"][1]["benched"] == []
        assert x["calls"][0]["best"] == x["calls"][1]["best"] == 512
    for x in hit:
        assert x["calls"][0]["benched"] == [] and x["calls"][0]["launches"] == []
        assert x["calls"][0]["best"] == 512 and x["calls"][0]["correct"]
        assert x["log"]["status"] == "cache hit"
    for x in mixed:
        assert sorted(x["calls"][0]["benched"]) == BLOCKS and x["calls"][0]["best"] == 512


def test_version_change_retunes_or_refuses_on_every_rank(tmp_path):
    bench = {"all": {"64": 4, "128": 1, "256": 2, "512": 3}}
    opts = {
        "configs": BLOCKS, "n": 512, "bench_ms": bench,
        "cache_dirs": [str(tmp_path / "c0"), str(tmp_path / "c1")],
        "steps": [
            {},
            # only rank 0's entry is stale; strict mode refuses it on every rank
            {"stale_rank0": True, "env": {"TILETUNE_VERSION_CHECK": "strict"}},
            {},  # default mode: every rank re-tunes
        ],
    }
    tuned, strict, default = run(tmp_path, opts)
    assert [x.get("error") for x in strict] == ["StaleCacheEntryError"] * 2
    assert "torch '0.0.1-old'" in strict[0]["message"] and "(rank 0)" in strict[1]["message"]
    for x in default:
        assert sorted(x["calls"][0]["benched"]) == BLOCKS and x["calls"][0]["best"] == 128
    (entry,) = cache_entries(tmp_path / "c0").values()
    assert entry["fingerprint"]["torch"] == environment_fingerprint()["torch"]


def test_descent_ranks_with_different_budgets_measure_the_same_partial_round(tmp_path):
    """The measured search's descent under a group: rank 1 (slow launches on the virtual clock) can afford
    one point of the first round, rank 0 both; every rank measures the one point, and all agree.

    Budget 0.23 s; a launch takes 10 ms on rank 0, 30 ms on rank 1; the re-timing reserve is 5 launches.
    After the first batch (one launch) rank 0 has 0.23 - 0.05 - 0.01 = 0.17 s (two points: 0.02 s),
    rank 1 0.23 - 0.15 - 0.03 = 0.05 s (one point: 0.03 s; two: 0.06 s)."""
    blocks = [2 ** i for i in range(17)]
    bench = {"all": {str(b): 1.0 + abs(math.log2(b) - 9) for b in blocks}}  # 512 is fastest
    sleeps = {"0": {str(b): 10 for b in blocks}, "1": {str(b): 30 for b in blocks}}
    opts = {
        "configs": "synth", "top_k": 1, "n": 4096, "bench_ms": bench, "sleep_ms": sleeps,
        "search": {"first_min": 1, "first_max": 1, "seeds": 1, "max_compiles": 100, "max_seconds": 0.23},
        "verify": False,  # the arithmetic above counts one launch per point; the check would add one each
        "steps": [{"cache_dir": str(tmp_path / "a")}],
    }
    (ranks,) = run(tmp_path, opts)
    facts = [x["calls"][0]["search"] for x in ranks]
    assert [f["descent_stopped"] for f in facts] == ["budget", "budget"]
    assert [f["descent_measured"] for f in facts] == [1, 1]  # the least of the two ranks' rounds
    benched = [x["calls"][0]["benched"] for x in ranks]
    assert benched[0] == benched[1] and len(benched[0]) == 2  # the model's pick, then the one move
    assert ranks[0]["calls"][0]["best"] == ranks[1]["calls"][0]["best"]
    assert all(x["calls"][0]["correct"] for x in ranks)


def test_a_parameter_that_carries_meaning_stops_every_rank_with_the_error(tmp_path):
    """configs=[] over a per-program partial sum under a real gloo group: the agreement check's error reaches
    every rank (none hangs), names BLOCK_SIZE, and the output is left as the launch found it; with shard=True
    too (each rank checks its share)."""
    for shard in (False, True):
        ranks = run_ranks(WORKER, tmp_path, "meaning", 2, {"shard": shard}, tag=f"meaning-{shard}", timeout=HANG_S)
        assert [r["error"] for r in ranks] == ["MeaningError", "MeaningError"], ranks
        assert all("BLOCK_SIZE changes the output" in r["message"] for r in ranks)
        assert all(r["untouched"] for r in ranks)
