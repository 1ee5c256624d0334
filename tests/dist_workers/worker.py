"""One rank of a real torch.distributed (gloo) job, for tests/test_distributed.py.

Usage: ``python worker.py SCENARIO RANK WORLD INIT_FILE OUT_DIR [JSON_OPTIONS]``.
Joins the group through ``file://INIT_FILE``, runs ``SCENARIO`` and writes
``OUT_DIR/rank<RANK>.json`` with what it saw.  An exception is written there
too (``{"error": type, "message": ...}``) and the process exits 0, so the
test can assert on every rank's outcome.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

from tiletune.runtime import distributed as dd  # noqa: E402
from tiletune.runtime.bench import VirtualClock, set_clock  # noqa: E402
from tiletune.tune import autotune  # noqa: E402

CLOCK = VirtualClock()
set_clock(CLOCK)

RANK = int(sys.argv[2])
OPTS = json.loads(sys.argv[6]) if len(sys.argv) > 6 else {}
CALLS: list = []  # config value of every call of the tuned function, in order


# ---------------------------------------------------------------- the tuned function (its source is hashed)


STEP: dict = {}  # the options of the step being run (OPTS updated by the step's own)


def sleepy(x, *, c):
    """Takes ``STEP["ms"][rank][c]`` (or ``STEP["ms"][c]``) ms and returns x + c; raises per ``raise_on``."""
    CALLS.append(c)
    if c in STEP.get("raise_on", {}).get(str(RANK), []):
        raise RuntimeError(f"config c={c} cannot run on rank {RANK}")
    table = STEP["ms"]
    row = table[RANK] if isinstance(table[0], list) else table
    CLOCK.advance(row[c])  # deterministic: the measurements read this virtual clock
    return (x + c).tolist()


def _cache_dir(opts):
    return opts["cache_dirs"][RANK] if "cache_dirs" in opts else opts["cache_dir"]


def _tuned(opts):
    n = len(opts["ms"][0]) if isinstance(opts["ms"][0], list) else len(opts["ms"])
    return autotune(
        [{"c": i} for i in range(n)],
        key_fn=lambda x: x,
        warmup=opts.get("warmup", 1),
        rep=opts.get("rep", 2),
        name="worker.sleepy",
        shard=opts.get("shard", False),
        cache_dir=_cache_dir(opts),
    )(sleepy)


def _make_stale(directory):
    """Give every entry of the cache file in ``directory`` an old torch version."""
    (path,) = Path(directory, "function").glob("worker.sleepy-*.json")
    doc = json.loads(path.read_text())
    for entry in doc["entries"].values():
        entry["fingerprint"] = {**entry["fingerprint"], "torch": "0.0.1-old"}
    path.write_text(json.dumps(doc))


def _run_step(opts, pg):
    f = _tuned(opts)  # a fresh tuner: nothing in memory, as in a new process
    calls = []
    for _ in range(opts.get("calls", 1)):
        CALLS.clear()
        result = f(torch.zeros(2), autotune_pg=pg)
        calls.append({"result": result, "trials": CALLS[:-1], "best": dict(next(iter(f.best_configs.values())))})
    return {"calls": calls}


# ---------------------------------------------------------------- scenarios


def scenario_tune(pg):
    """Run ``OPTS["steps"]`` (default: one step) one after the other, each with a fresh tuner.

    A step's keys override OPTS; ``env`` is set for the step only;
    ``stale_rank0`` makes rank 0's cache entries stale first.  A step that
    raises records ``{"error", "message"}`` and the next step still runs.
    """
    out = []
    for step in OPTS.get("steps", [{}]):
        STEP.clear()
        STEP.update({**OPTS, **step})
        if STEP.get("stale_rank0") and RANK == 0:
            _make_stale(STEP["cache_dirs"][0])
        dist.barrier(group=pg)
        with mock.patch.dict(os.environ, STEP.get("env", {})):  # set for the step, restored after
            try:
                out.append(_run_step(STEP, pg))
            except Exception as exc:
                out.append({"error": type(exc).__name__, "message": str(exc)})
    return {"steps": out}


def scenario_primitives(pg):
    """Every primitive with rank-dependent inputs."""
    rank, world = dist.get_rank(pg), dist.get_world_size(pg)
    out = {"rank": dd.group_rank(pg), "world": dd.group_size(pg), "active": dd.is_active(pg)}
    # rank r is fastest on candidate r; candidate 3 failed on rank 1 only (None), 4 is nan on rank 0
    local = [10.0 + (0 if i == rank else 5) for i in range(world)] + [
        None if rank == 1 else 1.0,
        float("nan") if rank == 0 else 2.0,
        3.0 + rank,
    ]
    out["combined"] = dd.combine_timings(local, pg)
    out["winner"] = dd.pick_winner(out["combined"])
    out["shard"] = dd.shard_indices(7, pg)
    out["gathered"] = dd.gather_sharded({i: float(i * 10 + rank) for i in out["shard"]}, 7, pg)
    out["broadcast"] = dd.broadcast_choice({"from": rank, "config": {"BLOCK": 64 * (rank + 1)}}, pg, src=world - 1)
    out["all"] = dd.all_gather_json({"rank": rank, "t": [rank, None]}, pg)
    dd.check_consistent({"key": [1, 2]}, pg)  # equal everywhere: passes
    errors = {}
    for name, thunk in {
        "inconsistent": lambda: dd.check_consistent({"key": rank}, pg, what="key"),
        "lengths": lambda: dd.combine_timings([1.0] * (2 + rank), pg),
        "not_json": lambda: dd.all_gather_json(object() if rank == 1 else 1, pg),
        "all_failed": lambda: dd.agree_on_best(
            2, lambda i: 1 / 0 if i == rank else float("inf"), pg, labels=["a", "b"]
        ),
    }.items():
        try:
            thunk()
            errors[name] = None
        except Exception as exc:
            errors[name] = {"type": type(exc).__name__, "message": str(exc)}
    out["errors"] = errors
    out["cached"] = {
        "all_hit": dd.agree_on_cached(10 + rank, pg, problem=["k", [1, 2]]),  # rank 0's choice wins
        "one_miss": dd.agree_on_cached(None if rank == 1 else 3, pg, problem=["k"]),
    }
    for name, thunk in {
        "cached_disagree": lambda: dd.agree_on_cached(1, pg, problem=["k", rank], what="autotune of f"),
        "cached_refused": lambda: dd.agree_on_cached(1, pg, refused="stale here" if rank == 1 else None),
    }.items():
        try:
            thunk()
            errors[name] = None
        except Exception as exc:
            errors[name] = {"type": type(exc).__name__, "message": str(exc)}

    def bench(i):
        if i == 0 and rank == 1:
            raise RuntimeError("candidate 0 raises on rank 1")
        return [1.0, 3.0, 2.0][i] * (rank + 1)

    a = dd.agree_on_best(3, bench, pg, labels=["c0", "c1", "c2"])
    out["agree"] = {"index": a.index, "times": a.times, "local_errors": {str(k): v for k, v in a.local_errors.items()}}

    def bench_fatal(i):
        if i == 1 and rank == world - 1:
            raise KeyError("launch is broken")
        return 1.0

    try:
        dd.agree_on_best(3, bench_fatal, pg, fatal=(KeyError,), what="autotune of k")
        out["fatal"] = None
    except Exception as exc:
        out["fatal"] = {"type": type(exc).__name__, "message": str(exc)}
    s = dd.agree_on_best(5, lambda i: float(5 - i), pg, shard=True)
    out["agree_shard"] = {"index": s.index, "times": s.times, "timed": s.timed}
    return out


def scenario_primitives_and_subgroup(pg):
    """The primitives on ``pg`` (every rank), then on the subgroup of global ranks 1 and 2."""
    sub = dist.new_group([1, 2])  # every rank must create it
    out = {"world": scenario_primitives(pg)}
    if RANK in (1, 2):
        out["sub"] = scenario_primitives(sub)
    dist.barrier(group=pg)
    return out


SCENARIOS = {"tune": scenario_tune, "primitives": scenario_primitives_and_subgroup}


if __name__ == "__main__":
    from rank import run_rank

    run_rank(SCENARIOS)
