"""One rank of a real torch.distributed (gloo) job tuning Triton kernels under the interpreter.

For tests/test_dist_autotune.py (``tune``: the kernel autotuner with ``pg=``)
and tests/test_contextual.py (``contextual``: ``contextual_autotune(is_dist=True)``).

Usage: ``python kernel_worker.py SCENARIO RANK WORLD INIT_FILE OUT_DIR [JSON_OPTIONS]``.
Writes ``OUT_DIR/rank<RANK>.json``; an exception is recorded there
(``{"error", "message", "traceback"}``) and the process still exits 0.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from unittest import mock

os.environ.setdefault("TRITON_INTERPRET", "1")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import tiletune  # noqa: E402
from tiletune.errors import TuningError  # noqa: E402
from tiletune.runtime.bench import VirtualClock, set_clock  # noqa: E402
from tiletune.runtime.search import SearchPolicy  # noqa: E402
from tiletune.runtime.tuning_log import read_tuning_log  # noqa: E402

# Timing-driven steps are deterministic: measurements read a virtual clock that the hooks advance by
# their step's "sleep_ms" (instead of sleeping), so a busy machine cannot change a winner.
CLOCK = VirtualClock()
set_clock(CLOCK)

RANK = int(sys.argv[2])
OPTS = json.loads(sys.argv[6]) if len(sys.argv) > 6 else {}


# ---------------------------------------------------------------- kernels (their source is hashed for the cache)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


# ---------------------------------------------------------------- the tuned kernel, per step


class Probe:
    """Hooks that see each benchmarked launch: which BLOCK_SIZE, rank-dependent sleeps and times."""

    def __init__(self, step: dict):
        self.step = step
        self.current = None
        self.launches: list = []  # BLOCK_SIZE of every benchmarked launch (the pre_hook sees them)
        self.benched: list = []  # BLOCK_SIZE of every do_bench call

    def _mine(self, table_name: str):
        table = self.step.get(table_name)
        if table is None:
            return None
        return table.get(str(RANK), table.get("all"))

    def pre_hook(self, nargs, reset_only=False):
        if reset_only:
            return
        block = nargs["BLOCK_SIZE"]
        self.current = block
        self.launches.append(block)
        sleeps = self._mine("sleep_ms")
        if sleeps:
            CLOCK.advance(sleeps.get(str(block), 0))

    def do_bench(self, fn, quantiles=None):
        fn()
        block = self.current
        self.benched.append(block)
        if block in self.step.get("fatal_on", {}).get(str(RANK), []):
            raise TuningError(f"the benchmark is broken on rank {RANK}")
        t = float(self._mine("bench_ms")[str(block)])
        return [t, t, t]


def raising_hook(block):
    """A Config.pre_hook that raises on the ranks listed in the step's ``raise_on`` for this BLOCK_SIZE."""

    def hook(nargs):
        if block in STEP.get("raise_on", {}).get(str(RANK), []):
            raise RuntimeError(f"BLOCK_SIZE={block} cannot run on rank {RANK}")

    return hook


STEP: dict = {}


def make_kernel(step: dict, pg, probe: Probe):
    if step["configs"] == "synth":
        configs = []
    else:
        configs = [triton.Config({"BLOCK_SIZE": b}, pre_hook=raising_hook(b) if step.get("raise_on") else None)
                   for b in step["configs"]]
    kw = {}
    if step.get("bench_ms"):
        kw["do_bench"] = probe.do_bench
    if step.get("prune_by_rank"):
        kw["prune_configs_by"] = {"early_config_prune": lambda cs, nargs, **k: list(cs)[: 2 + RANK]}
    if "verify" in step:  # the agreement check adds one launch per candidate (tests/test_agreement.py)
        kw["verify"] = step["verify"]
    if step.get("search"):  # a SearchPolicy's fields: the measured search's descent runs
        kw["search"] = SearchPolicy(**{"name": "step", **step["search"]})
    return tiletune.autotune(configs=configs, key=["n_elements"], pre_hook=probe.pre_hook, target="h100",
                             top_k=step.get("top_k"), pg=pg if not step.get("no_pg") else None,
                             shard=step.get("shard", False), **kw)(add_kernel)


def _make_stale(directory):
    """Give every entry of the kernel's cache file in ``directory`` an old torch version."""
    (path,) = Path(directory, "kernel").glob("add_kernel-*.json")
    doc = json.loads(path.read_text())
    for entry in doc["entries"].values():
        entry["fingerprint"] = {**entry["fingerprint"], "torch": "0.0.1-old"}
    path.write_text(json.dumps(doc))


def warm_interpreter() -> None:
    """One untuned launch, so that the interpreter's first-launch cost falls on no candidate's time."""
    x = torch.zeros(64)
    add_kernel[(1,)](x, x, torch.empty(64), 64, BLOCK_SIZE=64)


def run_step(step: dict, pg) -> dict:
    probe = Probe(step)
    kernel = make_kernel(step, pg, probe)
    n = step.get("n", 256)
    calls = []
    for _ in range(step.get("calls", 1)):
        probe.launches.clear()
        probe.benched.clear()
        torch.manual_seed(0)
        x, y = torch.randn(n), torch.randn(n)
        out = torch.empty(n)
        kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, n)
        calls.append({
            "best": kernel.best_config.kwargs["BLOCK_SIZE"],
            "correct": bool(torch.equal(out, x + y)),
            "launches": list(probe.launches),
            "benched": list(probe.benched),
            "search": dict(kernel.search_facts),
        })
    logs = list(Path(os.environ["TILETUNE_CACHE_DIR"], "logs").glob("add_kernel-*.jsonl"))
    records = [rec for rec in (read_tuning_log(logs[0]) if logs else []) if rec.get("pid") == os.getpid()]
    return {"calls": calls, "log": records[-1] if records else None}  # this process's last record


def scenario_tune(pg):
    """Run ``OPTS["steps"]`` one after the other, each with a fresh autotuner (nothing in memory).

    A step's keys override OPTS; ``cache_dirs`` (one per rank) or ``cache_dir``
    sets TILETUNE_CACHE_DIR; ``env`` is set for the step only; ``stale_rank0``
    makes rank 0's entries stale first.  A step that raises records
    ``{"error", "message"}`` and the next step still runs.
    """
    warm_interpreter()
    out = []
    for step in OPTS.get("steps", [{}]):
        STEP.clear()
        STEP.update({**OPTS, **step})
        with _step_environment(STEP, pg):
            try:
                out.append(run_step(STEP, pg))
            except Exception as exc:
                out.append({"error": type(exc).__name__, "message": str(exc)})
    return {"steps": out}


@contextlib.contextmanager
def _step_environment(step, pg):
    """A step's environment, set for the step only once every rank got there: its ``env``, TILETUNE_CACHE_DIR
    from ``cache_dirs`` (one per rank) or ``cache_dir``, and with ``stale_rank0`` rank 0's entries made stale."""
    env = dict(step.get("env", {}))
    env["TILETUNE_CACHE_DIR"] = step["cache_dirs"][RANK] if "cache_dirs" in step else step["cache_dir"]
    if step.get("stale_rank0") and RANK == 0:
        _make_stale(env["TILETUNE_CACHE_DIR"])
    dist.barrier(group=pg)
    with mock.patch.dict(os.environ, env):  # set for the step, restored after
        yield


# ---------------------------------------------------------------- contextual tuning across ranks


def scenario_contextual(pg):
    """Two tiletune kernels and one triton.autotune kernel in one function, tuned with is_dist=True.

    The vector add's configs carry a Config.pre_hook (run by every launch,
    in context too) that takes ``OPTS["sleep_ms"][rank][BLOCK_SIZE]`` ms on the virtual clock,
    so each rank alone would pick a different config.
    """
    import fixtures

    os.environ["TILETUNE_CACHE_DIR"] = OPTS["cache_dir"]
    sm = fixtures.load("softmax")
    sleeps = OPTS["sleep_ms"][str(RANK)]

    def sleeper(block):
        def hook(nargs):
            CLOCK.advance(sleeps.get(str(block), 0))
        return hook

    add = tiletune.autotune(configs=[triton.Config({"BLOCK_SIZE": b}, pre_hook=sleeper(b)) for b in (32, 64, 128)],
                            key=["n_elements"])(add_kernel)
    soft = tiletune.autotune(configs=[], key=["n_cols"], top_k=2, target="h100")(sm.KERNEL)

    @triton.autotune(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})], key=["n"])
    @triton.jit
    def double_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2, mask=m)

    @tiletune.contextual_autotune(is_dist=True, n_repeat=2, n_warmup=1)
    def step(x, y, rows):
        n = x.numel()
        s = torch.empty_like(x)
        add[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, s, n)
        d = torch.empty_like(x)
        double_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](s, d, n)
        p = torch.empty_like(rows)
        soft[lambda meta: (rows.shape[0],)](p, rows, rows.stride(0), p.stride(0), rows.shape[1])
        return d, p

    torch.manual_seed(0)
    x, y, rows = torch.randn(300), torch.randn(300), torch.randn(4, 50)
    d, p = step(x, y, rows)
    dist.barrier(group=pg)  # every rank has written its log before any rank lists them
    logs = sorted(p.name for p in Path(".autotune_logs").glob("*.jsonl"))
    mine = [json.loads(line) for line in Path(".autotune_logs", f"rank-{RANK}.jsonl").read_text().splitlines()]
    return {
        "add": add.best_config.kwargs["BLOCK_SIZE"],
        "double": double_kernel.best_config.kwargs["BLOCK"],
        "soft": soft.best_config.kwargs["BLOCK_SIZE"],
        "correct": bool(torch.allclose(d, 2 * (x + y)) and torch.allclose(p, torch.softmax(rows, 1))),
        "runs": step.last_runs,
        "log_files": logs,
        "log": mine,
    }


def scenario_contextual_cache(pg):
    """The contextual tuner's cached results across ranks, step by step (``OPTS["steps"]``), each step with a
    fresh kernel and function (nothing in memory): ``cache_dirs`` (one per rank), ``is_dist``, ``env`` and
    ``stale_rank0`` as in :func:`scenario_tune`.  The add kernel's configs take ``OPTS["sleep_ms"][rank]``
    on the virtual clock, so each rank alone caches its own favourite."""
    sleeps = OPTS["sleep_ms"][str(RANK)]

    def sleeper(block):
        def hook(nargs):
            CLOCK.advance(sleeps.get(str(block), 0))
        return hook

    out = []
    for step in OPTS["steps"]:
        with _step_environment(step, pg):
            configs = [triton.Config({"BLOCK_SIZE": b}, pre_hook=sleeper(b)) for b in (32, 64, 128)]
            add = tiletune.autotune(configs=configs, key=["n_elements"])(add_kernel)

            @tiletune.contextual_autotune(is_dist=step.get("is_dist", True), n_repeat=2, n_warmup=1)
            def run(x, y):
                s = torch.empty_like(x)
                add[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK_SIZE"]),)](x, y, s, x.numel())
                return s

            try:
                x, y = torch.randn(300), torch.randn(300)
                s = run(x, y)
                out.append({"add": add.best_config.kwargs["BLOCK_SIZE"], "runs": run.last_runs,
                            "correct": bool(torch.equal(s, x + y))})
            except Exception as exc:
                out.append({"error": type(exc).__name__, "message": str(exc)})
    return {"steps": out}


@triton.jit
def block_sum_kernel(x_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    """One partial sum per program: BLOCK_SIZE carries meaning (the agreement check must stop the tune)."""
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    tl.store(out_ptr + tl.program_id(0), tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0))


def scenario_meaning(pg):
    """configs=[] over block_sum_kernel with ``pg`` (and OPTS["shard"]): every rank must stop with the error
    naming BLOCK_SIZE, none may hang; out comes back untouched."""
    tuned = tiletune.autotune(configs=[], key=["n"], pg=pg, shard=OPTS.get("shard", False), target="h100")(
        block_sum_kernel)
    x, out = torch.randn(256), torch.full((256,), 5.0)
    try:
        tuned[lambda meta: (triton.cdiv(256, meta["BLOCK_SIZE"]),)](x, out, 256)
    except TuningError as exc:
        return {"error": type(exc).__name__, "message": str(exc), "untouched": bool((out == 5.0).all())}
    return {"error": None, "untouched": bool((out == 5.0).all())}


SCENARIOS = {"tune": scenario_tune, "contextual": scenario_contextual, "contextual_cache": scenario_contextual_cache,
             "meaning": scenario_meaning}


if __name__ == "__main__":
    from rank import run_rank

    run_rank(SCENARIOS)
