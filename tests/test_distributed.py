"""Agreement and sharding across real torch.distributed (gloo) processes.

Each test starts 2-3 processes running ``tests/dist_workers/worker.py``; each
rank writes what it saw to ``rank<r>.json``.  A rank that does not finish in
time means a hang, and fails the test.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tiletune.errors import TuningError
from tiletune.runtime import distributed as dd
from tiletune.runtime.cache import environment_fingerprint, read_cache_file
from tests.dist_workers import launch

ROOT = Path(__file__).resolve().parent.parent
WORKER = ROOT / "tests" / "dist_workers" / "worker.py"
TIMEOUT_S = 300  # a hang detector: generous, so a saturated machine never reaches it


def run_ranks(tmp_path: Path, scenario: str, world: int, opts: dict, tag: str = "run") -> list:
    """Run ``world`` ranks of ``scenario``; return each rank's JSON (fails on a hang or a crash)."""
    return launch.run_ranks(WORKER, tmp_path, scenario, world, opts, tag=tag, timeout=TIMEOUT_S)


def no_error(results: list) -> list:
    for r, res in enumerate(results):
        assert "error" not in res, f"rank {r}: {res.get('traceback')}"
    return results


def cache_entries(directory: Path) -> dict:
    files = list((directory / "function").glob("worker.sleepy-*.json"))
    assert len(files) == 1, files
    data, reason = read_cache_file(files[0])
    assert reason is None
    return data["entries"]


# ---------------------------------------------------------------- primitives, no group


def test_primitives_without_a_group_are_local():
    assert not dd.is_active(None)
    assert dd.group_rank(None) == 0 and dd.group_size(None) == 1
    assert dd.combine_timings([1.0, None, math.inf, math.nan, 2.0], None) == [1.0, None, None, None, 2.0]
    assert dd.pick_winner([3.0, 1.0, None, 1.0]) == 1  # tie: lowest index
    assert dd.shard_indices(4, None) == [0, 1, 2, 3]
    assert dd.gather_sharded({0: 1.0, 2: None}, 3, None) == [1.0, None, None]
    assert dd.broadcast_choice({"a": (1, 2)}, None) == {"a": (1, 2)}
    assert dd.all_gather_json([1], None) == [[1]]
    assert dd.agree_on_cached((1, 2), None, problem="p") == (1, 2)
    assert dd.agree_on_cached(None, None) is None
    dd.check_consistent(object(), None)
    dd.barrier(None)
    with pytest.raises(TuningError, match="a, b"):
        dd.pick_winner([None, math.inf], labels=["a", "b"])
    with pytest.raises(TypeError):
        dd.all_gather_json(object(), None)


def test_agree_on_best_without_a_group():
    a = dd.agree_on_best(3, lambda i: [2.0, 1.0, 3.0][i])
    assert (a.index, a.times, a.timed, a.world_size) == (1, [2.0, 1.0, 3.0], [0, 1, 2], 1)

    def bench(i):
        raise ValueError(f"bad {i}")

    with pytest.raises(TuningError) as err:
        dd.agree_on_best(2, bench, labels=["x", "y"], what="autotune of f")
    assert "x: ValueError: bad 0" in str(err.value) and "y: ValueError: bad 1" in str(err.value)


# ---------------------------------------------------------------- primitives, real group


def test_primitives_across_ranks(tmp_path):
    res = no_error(run_ranks(tmp_path, "primitives", 3, {}))
    check_primitives([x["world"] for x in res], 3)
    assert "sub" not in res[0]
    check_primitives([res[1]["sub"], res[2]["sub"]], 2)  # group ranks 0, 1 are global ranks 1, 2


def check_primitives(res: list, world: int) -> None:
    """Assertions on every group rank's ``scenario_primitives`` output."""
    for r, x in enumerate(res):
        assert (x["rank"], x["world"], x["active"]) == (r, world, True)
    # combined: max over ranks, failure anywhere -> None; identical on every rank
    expected = [15.0] * world + [None, None, 3.0 + world - 1]
    assert all(x["combined"] == expected for x in res)
    assert all(x["winner"] == world + 2 for x in res)
    # sharding: round robin, disjoint, complete; gathered identical everywhere
    shards = [x["shard"] for x in res]
    assert sorted(i for s in shards for i in s) == list(range(7))
    assert shards[0] == list(range(0, 7, world))
    gathered = [float(i * 10 + (i % world)) for i in range(7)]
    assert all(x["gathered"] == gathered for x in res)
    assert all(x["broadcast"] == {"from": world - 1, "config": {"BLOCK": 64 * world}} for x in res)
    assert all(x["all"] == [{"rank": r, "t": [r, None]} for r in range(world)] for x in res)
    # errors raised identically on every rank, no hang
    for x in res:
        e = x["errors"]
        assert e["inconsistent"]["type"] == "TuningError" and "disagree" in e["inconsistent"]["message"]
        assert e["lengths"]["type"] == "TuningError"
        assert e["not_json"]["type"] == "TypeError" and "[1]" in e["not_json"]["message"]
        msg = e["all_failed"]["message"]
        assert e["all_failed"]["type"] == "TuningError"
        assert "rank 0: ZeroDivisionError" in msg and "rank 1: ZeroDivisionError" in msg
    # reuse a cached winner or tune: one decision for all ranks
    assert all(x["cached"] == {"all_hit": 10, "one_miss": None} for x in res)
    for x in res:
        e = x["errors"]
        assert e["cached_disagree"]["type"] == "TuningError" and "autotune of f" in e["cached_disagree"]["message"]
        assert e["cached_refused"] == {"type": "StaleCacheEntryError", "message": "stale here (rank 1)"}
    # candidate 0 raises on rank 1 only: excluded everywhere; c2 beats c1 (slowest rank's times)
    for x in res:
        assert x["agree"]["index"] == 2
        assert x["agree"]["times"] == [None, 3.0 * world, 2.0 * world]
    assert "candidate 0 raises on rank 1" in res[1]["agree"]["local_errors"]["0"]
    # a fatal error on the last rank stops tuning everywhere: re-raised there, TuningError elsewhere
    for x in res[:-1]:
        assert x["fatal"]["type"] == "TuningError"
        assert f"rank {world - 1} failed: KeyError" in x["fatal"]["message"]
    assert res[-1]["fatal"] == {"type": "KeyError", "message": "'launch is broken'"}
    for x in res:
        assert x["agree_shard"]["index"] == 4 and x["agree_shard"]["times"] == [5.0, 4.0, 3.0, 2.0, 1.0]
    assert sorted(i for x in res for i in x["agree_shard"]["timed"]) == list(range(5))


# ---------------------------------------------------------------- the function tuner across ranks


def steps(results: list) -> list:
    """Per step, the list of every rank's outcome."""
    per_rank = [r["steps"] for r in no_error(results)]
    return [list(step) for step in zip(*per_rank)]


def test_ranks_with_different_timings_agree(tmp_path):
    # rank r alone would pick config r; the slowest rank's time makes config 3 the winner
    ms = [[3 if c == r else 18 for c in range(3)] + [10] for r in range(3)]
    (step,) = steps(run_ranks(tmp_path, "tune", 3, {"ms": ms, "cache_dir": str(tmp_path / "cache")}))
    for x in step:
        call = x["calls"][0]
        assert call["best"] == {"c": 3}
        assert call["result"] == [3.0, 3.0]
        assert sorted(set(call["trials"])) == [0, 1, 2, 3]  # every rank timed every config
    logs = list((tmp_path / "cache" / "logs").glob("worker.sleepy-*.jsonl"))
    records = [json.loads(line) for line in logs[0].read_text().splitlines()]
    assert sorted(rec["rank"] for rec in records) == [0, 1, 2]
    for rec in records:
        local = rec["local_ms"]
        assert min(range(4), key=lambda i: local[i]) == rec["rank"]  # each rank's own favourite differs
        assert rec["winner"] == {"c": 3}
    key = '{"key":["tensor",[2],"torch.float32",[1],"cpu"],"world_size":3}'
    assert cache_entries(tmp_path / "cache")[key]["config"] == {"c": 3}


def test_sharded_tuning_splits_configs_and_agrees(tmp_path):
    ms = [2 + 5 * abs(c - 5) for c in range(7)]  # config 5 is fastest
    cache = tmp_path / "cache"
    (step,) = steps(run_ranks(tmp_path, "tune", 3, {"ms": ms, "shard": True, "cache_dir": str(cache)}))
    timed = [set(x["calls"][0]["trials"]) for x in step]
    assert sorted(c for t in timed for c in t) == list(range(7))  # each config on exactly one rank
    for r, t in enumerate(timed):
        assert t == set(range(r, 7, 3))
        assert len(step[r]["calls"][0]["trials"]) == 3 * len(t)  # warmup 1 + rep 2 per config of its share
    assert all(x["calls"][0]["best"] == {"c": 5} for x in step)
    (entry,) = cache_entries(cache).values()
    assert entry["config"] == {"c": 5} and entry["sharded"] is True and entry["world_size"] == 3
    assert all(t["ms"] is not None for t in entry["timings_ms"])


def test_candidate_failing_on_one_rank_is_excluded_everywhere(tmp_path):
    opts = {
        "ms": [14, 2, 7],  # config 1 would win, but raises on rank 1
        "steps": [
            {"raise_on": {"1": [1]}, "cache_dir": str(tmp_path / "a")},
            # every config fails on some rank: TuningError on every rank, no hang
            {"raise_on": {"0": [0, 2], "1": [1]}, "cache_dir": str(tmp_path / "b")},
        ],
    }
    one, every = steps(run_ranks(tmp_path, "tune", 2, opts))
    assert all(x["calls"][0]["best"] == {"c": 2} for x in one)
    for x in every:
        assert x["error"] == "TuningError"
        assert "c=1 cannot run on rank 1" in x["message"] and "c=0 cannot run on rank 0" in x["message"]


def test_cache_reuse_in_process_and_in_new_processes(tmp_path):
    base = {"ms": [12, 2, 7], "cache_dir": str(tmp_path / "cache")}
    (first,) = steps(run_ranks(tmp_path, "tune", 2, {**base, "calls": 2}, tag="first"))
    for x in first:
        assert len(x["calls"][0]["trials"]) == 9 and x["calls"][1]["trials"] == []  # second call: memory
    opts = {
        **base,
        "steps": [
            {},  # new processes: a disk hit on every rank
            # rank 1 has no entry (its own empty directory): all ranks tune together, no hang
            {"cache_dirs": [str(tmp_path / "cache"), str(tmp_path / "empty")]},
        ],
    }
    hit, mixed = steps(run_ranks(tmp_path, "tune", 2, opts, tag="second"))
    for x in hit:
        assert x["calls"][0]["trials"] == [] and x["calls"][0]["best"] == {"c": 1}
    for x in mixed:
        assert len(x["calls"][0]["trials"]) == 9 and x["calls"][0]["best"] == {"c": 1}


def test_ranks_whose_cached_winners_differ_all_take_rank_0s(tmp_path):
    """The function tuner's cached-result agreement is the decision path's (decision.decide): when every rank
    hits but the entries differ (caches that diverged), every rank uses rank 0's winner without timing."""
    dirs = [str(tmp_path / "c0"), str(tmp_path / "c1")]
    (tuned,) = steps(run_ranks(tmp_path, "tune", 2, {"ms": [12, 2, 7], "cache_dirs": dirs}, tag="first"))
    assert all(x["calls"][0]["best"] == {"c": 1} for x in tuned)
    (path,) = (tmp_path / "c1" / "function").glob("worker.sleepy-*.json")
    doc = json.loads(path.read_text())
    for entry in doc["entries"].values():  # rank 1's cache now names another (valid) config
        entry["config"] = {"c": 2}
    path.write_text(json.dumps(doc))
    (hit,) = steps(run_ranks(tmp_path, "tune", 2, {"ms": [12, 2, 7], "cache_dirs": dirs}, tag="second"))
    for x in hit:
        assert x["calls"][0]["trials"] == [] and x["calls"][0]["best"] == {"c": 1}


def test_version_change_retunes_or_refuses_on_every_rank(tmp_path):
    opts = {
        "ms": [12, 2, 7],
        "cache_dirs": [str(tmp_path / "c0"), str(tmp_path / "c1")],
        "steps": [
            {},
            # only rank 0's entry is stale; strict mode refuses it on every rank
            {"stale_rank0": True, "env": {"TILETUNE_VERSION_CHECK": "strict"}},
            {},  # default mode: all ranks re-tune together
        ],
    }
    tuned, strict, default = steps(run_ranks(tmp_path, "tune", 2, opts))
    assert [x.get("error") for x in strict] == ["StaleCacheEntryError"] * 2
    assert "torch '0.0.1-old'" in strict[0]["message"] and "(rank 0)" in strict[1]["message"]
    for x in default:
        assert len(x["calls"][0]["trials"]) == 9 and x["calls"][0]["best"] == {"c": 1}
    (entry,) = cache_entries(tmp_path / "c0").values()
    assert entry["fingerprint"]["torch"] == environment_fingerprint()["torch"]
