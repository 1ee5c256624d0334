"""The first tune's fixed cost on the CPU: what ``configs=[]`` does before its first compile, stage by stage.

For every pair of the cold bench (``bench/cold_pairs.py``: fixtures, dev-corpus library kernels, held-out
kernels) at its shape, a fresh interpreter (no ``TRITON_INTERPRET``, target ``h100``, no GPU needed):

* ``import``: ``import tiletune`` and its autotuner module, after torch and triton (a user program has them);
* ``decorate``: ``tiletune.autotune(configs=[], ...)(kernel)`` on the decorating thread (since round 8 it starts
  the import of what the tuning runs, the source analysis with libcst and networkx and the synthesis, in a
  background thread);
* ``ahead``: that background import's CPU after the decoration returned (waited for before the first launch, as
  the time a program spends on its tensors before it launches; 0 where the decoration imported it all);
* ``total``: the first launch's setup: keying the launch on the alignment the analysis reads (``Autotuner.run``'s
  first step) and the candidates stage (``Autotuner.tuning_problem``: binding, analysis, synthesis request,
  synthesis, Triton IR reading, grid rules), the ``setup`` + ``synthesis`` spans of the cold bench's timeline;

and, inside ``total``, the inclusive CPU seconds of its parts (functions wrapped with a clock, calls counted):
``analysis`` (the live kernel's source analysis), ``request`` (tunability, guards), ``space``, ``model``
(constraint model build), ``enumerate``, ``cost`` (cost table + ranking), ``point_costs``, ``candidates``
(the ranked points as configs), ``ir_refused`` / ``ir_read`` / ``ir_tiles`` (Triton front-end lowerings by
the IR oracle; ``lowerings`` counts them), ``grid`` (the grid rules) and ``z3`` (seconds importing z3, 0 when
it is not imported).  ``other`` is ``total`` less the top-level parts.  ``analyses`` counts the kernel's source
analyses in ``total`` (one per distinct specialisation that changes the reading).

    python bench/fixed_cost.py                        # every pair, median of 3 fresh processes each
    python bench/fixed_cost.py --pairs 0,7 --runs 5   # some pairs
    python bench/fixed_cost.py --out bench/results/fixed_cost_after.json
    mkdir /tmp/base && git archive d5a5712 tiletune | tar -x -C /tmp/base     # the base commit's tiletune
    python bench/fixed_cost.py --compare /tmp/base --out fixed_cost.json      # before/after, runs interleaved
    python bench/fixed_cost.py --record tests/data/first_candidates.json   # the ranked lists (tests compare)
    python bench/fixed_cost.py --fork-ahead --pairs 0,7   # the stage beside the compile children forked ahead

``faults`` counts the stage's minor page faults (copy-on-write copies of pages shared with forked children).

Every column is CPU seconds of the child process (``time.process_time``), median over ``--runs`` processes.
Prints a table (median CPU seconds per stage) and writes ``--out`` (JSON) when given.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

ROOT = Path(__file__).resolve().parent.parent
for _p in (ROOT, ROOT / "bench", ROOT / "tests"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))
#: ``--compare DIR``: a child of the "before" side imports tiletune from DIR (a checkout of the base commit).
_FROM = os.environ.get("FIXED_COST_TILETUNE")
if _FROM:
    sys.path.insert(0, _FROM)

def _clock() -> float:
    """The clock every part is read on: this process's CPU seconds (the machine is shared; wall time would
    count the other processes' load)."""
    return time.process_time()


#: ``--fork-ahead``: each child forks its compile children before the candidates stage (FIXED_COST_FORK_AHEAD=1).
FORK_AHEAD = False

#: The parts timed inside the candidates stage: (label, module, attribute); nested parts count inclusive.
PARTS = [
    ("analysis", "tiletune.runtime.live_kernel", "analyze_live"),
    ("request", "tiletune.synthesis.request", "synthesis_request"),
    ("synthesize", "tiletune.synthesis.request", "synthesize"),
    ("space", "tiletune.synthesis.pipeline", "build_space"),
    ("model", "tiletune.synthesis.pipeline", "build_model"),
    ("enumerate", "tiletune.synthesis.pipeline", "enumerate_feasible"),
    ("cost", "tiletune.synthesis.pipeline", "cost_table"),
    ("rank", "tiletune.synthesis.pipeline", "rank"),
    ("point_costs", "tiletune.synthesis.pipeline", "_point_costs"),
    ("candidates", "tiletune.synthesis.pipeline", "_make_candidate"),
    ("ir_refused", "tiletune.runtime.ir_oracle", "refused_configs"),
    ("ir_read", "tiletune.runtime.ir_oracle", "read_kernel"),
    ("ir_tiles", "tiletune.runtime.ir_footprint", "read_tiles"),
    ("lowerings", "tiletune.runtime.ir_oracle", "lower_facts"),
    ("grid", "tiletune.runtime.candidates", "CandidatesStage._check_grid"),
]
#: The parts that do not nest in one another (``other`` = ``total`` less these).
TOP = ("analysis", "request", "synthesize", "ir_refused", "ir_read", "ir_tiles", "grid")
COLUMNS = ("import", "decorate", "ahead", "total", "analysis", "request", "synthesize", "space", "model", "enumerate", "cost", "rank",
           "point_costs", "candidates", "ir_refused", "ir_read", "ir_tiles", "grid", "z3", "other", "lowerings",
           "faults", "analyses")


#: Columns that count (printed as integers): Triton front-end lowerings, minor page faults of the stage.
COUNTS = ("lowerings", "faults", "analyses")


def _wrap(seconds: Dict[str, float], calls: Dict[str, int], label: str, fn: Callable) -> Callable:
    def timed(*a, **kw):
        t0 = _clock()
        try:
            return fn(*a, **kw)
        finally:
            seconds[label] = seconds.get(label, 0.0) + _clock() - t0
            calls[label] = calls.get(label, 0) + 1
    return timed


class _Capture:
    """Stands for the tuned kernel in ``problem.launch``: records the launch's arguments instead of running."""

    def __init__(self):
        self.args: tuple = ()
        self.kwargs: Dict[str, Any] = {}

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self.args, self.kwargs = args, {**kwargs, "grid": grid, "warmup": False}
        return launch


def launch_of(pair: dict) -> tuple:
    """``(problem, captured launch)`` of a pair: its fixture/library problem and the arguments its first launch
    passes (CPU tensors at the pair's shape)."""
    import cold_pairs

    problem = cold_pairs.load(pair)
    args = problem.make_args(pair["shape"], device="cpu")
    capture = _Capture()
    problem.launch(capture, args)
    return problem, capture


def tuned_kernel(problem: Any) -> Any:
    """``tiletune.autotune(configs=[], target="h100")`` over the problem's kernel, as the cold bench builds it."""
    import tiletune

    return tiletune.autotune(configs=[], target="h100", key=problem.KEY, restore_value=problem.RESTORE_VALUE or None,
                             reset_to_zero=problem.RESET_TO_ZERO or None)(problem.KERNEL)


def first_candidates(tuned: Any, capture: _Capture) -> dict:
    """The candidates stage of the first launch: ``ranked`` (each config's text, in order), ``feasible`` (the
    synthesis's feasible count), ``refused`` (candidates Triton's front end refused) and ``distinct`` (the
    distinct tilings its screen lowered), from its report."""
    import re

    # the first launch keys itself on the alignment the analysis reads (Autotuner.run), then tunes
    from tiletune.synthesis.alignment import spec_alignment_params

    tuned._binder.key_alignment(spec_alignment_params(tuned.spec()))
    problem, configs = tuned.tuning_problem(capture.args, capture.kwargs)
    notes = problem.report.notes
    def number(pattern: str) -> Any:
        found = [int(m.group(1)) for n in notes for m in [re.search(pattern, n)] if m]
        return found[0] if found else None

    return {"ranked": [str(c) for c in configs], "feasible": number(r"candidate\(s\) of (\d+) feasible"),
            "refused": sum(1 for n in notes if "Triton refuses it" in n),
            "distinct": number(r"front end lowered (\d+) distinct tiling")}


def child(index: int) -> dict:
    """One pair's first candidates stage in this (fresh) process: seconds per part, the ranked list."""
    import importlib

    import torch  # noqa: F401  (the user's program has these before tiletune)
    import triton  # noqa: F401

    t0 = _clock()
    import tiletune
    import tiletune.runtime.autotuner  # noqa: F401  (what tiletune.autotune loads)
    t_import = _clock() - t0

    import cold_pairs

    pair = cold_pairs.GPU_PAIRS[index]
    problem, capture = launch_of(pair)
    z3_before = "z3" in sys.modules
    t0 = _clock()
    tuned = tuned_kernel(problem)  # imports what a configs=[] tuning runs (the analysis, the synthesis)
    t_decorate = _clock() - t0
    t0 = _clock()
    try:  # the background import the decoration started (round 8 on), before the first launch
        from tiletune.runtime.wrapping import wait_tuning_modules
    except ImportError:
        wait_tuning_modules = None
    if wait_tuning_modules is not None:
        wait_tuning_modules()
    t_ahead = _clock() - t0
    seconds: Dict[str, float] = {}
    calls: Dict[str, int] = {}
    for label, module, attr in PARTS:  # after the decoration: its imports are its own
        owner: Any = importlib.import_module(module)
        *path, name = attr.split(".")
        for part in path:
            owner = getattr(owner, part)
        if label == "lowerings":  # counted where the oracle calls it
            setattr(owner, name, _wrap({}, calls, label, getattr(owner, name)))
            continue
        setattr(owner, name, _wrap(seconds, calls, label, getattr(owner, name)))
    session = None
    if os.environ.get("FIXED_COST_FORK_AHEAD") == "1":  # as a first tune starts: its compile children forked
        from triton.backends.compiler import GPUTarget
        from tiletune.runtime.compile_workers import CompileSession

        session = CompileSession()
        session.fork_ahead([problem.KERNEL], GPUTarget("cuda", 90, 32))
    faults0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    t0 = _clock()
    z3_t = 0.0
    if not z3_before:
        # z3's import, when the stage asks for it, shows as the time of its first import
        import builtins

        real_import = builtins.__import__

        def tracking(name, *a, **kw):
            nonlocal z3_t
            if name == "z3" and "z3" not in sys.modules:
                t = _clock()
                try:
                    return real_import(name, *a, **kw)
                finally:
                    z3_t += _clock() - t
            return real_import(name, *a, **kw)
        builtins.__import__ = tracking
    try:
        got = first_candidates(tuned, capture)
    finally:
        if not z3_before:
            builtins.__import__ = real_import
    total = _clock() - t0
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults0
    if session is not None:
        session.close()
    out = {"faults": faults, "pair": index, "kernel": pair["kernel"], "source": pair["source"], "shape": pair["shape"],
           "import": t_import, "decorate": t_decorate, "ahead": t_ahead, "total": total, "z3": z3_t, "calls": calls,
           "tiletune": str(Path(tiletune.__file__).resolve().parent), **got}
    out.update({label: seconds.get(label, 0.0) for label, _, _ in PARTS if label != "lowerings"})
    out["lowerings"] = calls.get("lowerings", 0)
    out["analyses"] = calls.get("analysis", 0)
    out["other"] = total - sum(seconds.get(k, 0.0) for k in TOP)
    return out


def pair_name(pair: dict) -> str:
    """A pair's name in the recorded lists: ``kernel (source) k=v,...``."""
    return f"{pair['kernel']} ({pair['source']}) " + ",".join(f"{k}={v}" for k, v in pair["shape"].items())


def record(indexes: List[int]) -> dict:
    """``{pair name: first_candidates(...)}`` for the pairs, in this process (no timing)."""
    import cold_pairs

    out = {}
    for i in indexes:
        pair = cold_pairs.GPU_PAIRS[i]
        if pair["source"] not in ("fixture", "holdout") and not cold_pairs.load(pair).path.exists():
            continue  # a library kernel needs its library's files (fetch_corpus.sh, fetch_holdout_corpus.sh)
        problem, capture = launch_of(pair)
        got = first_candidates(tuned_kernel(problem), capture)
        out[pair_name(pair)] = {"ranked": got["ranked"], "feasible": got["feasible"]}
    return out


def _env() -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


def run_child(index: int, tiletune_from: str = "") -> dict:
    """One fresh process for one pair (its tiletune from ``tiletune_from`` when given, else this checkout)."""
    env = _env()
    if FORK_AHEAD:
        env["FIXED_COST_FORK_AHEAD"] = "1"
    if tiletune_from:
        env["FIXED_COST_TILETUNE"] = tiletune_from
    proc = subprocess.run([sys.executable, __file__, "--child", str(index)], capture_output=True, text=True,
                          env=env, cwd=ROOT)
    if proc.returncode != 0:
        raise SystemExit(f"pair {index}: the child failed:\n{proc.stderr[-3000:]}")
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    if not tiletune_from and not got["tiletune"].startswith(str(ROOT)) or \
            tiletune_from and not got["tiletune"].startswith(tiletune_from):
        raise SystemExit(f"pair {index}: the child imported tiletune from {got['tiletune']}")
    return got


def run_pair(index: int, runs: int) -> List[dict]:
    """``runs`` fresh processes for one pair."""
    return [run_child(index) for _ in range(runs)]


def median_row(runs: List[dict]) -> dict:
    """The median of each column over the runs (the ranked list and counts of the first run)."""
    row = {k: runs[0][k] for k in ("pair", "kernel", "source", "shape", "ranked", "feasible", "refused", "distinct", "calls")}
    for col in COLUMNS:
        row[col] = statistics.median(r[col] for r in runs)
    row["same_ranked"] = all(r["ranked"] == runs[0]["ranked"] for r in runs)
    return row


def table(rows: List[dict]) -> str:
    """A markdown table of the rows (seconds; ``lowerings`` a count)."""
    head = "| pair | " + " | ".join(COLUMNS) + " |"
    lines = [head, "|" + "---|" * (len(COLUMNS) + 1)]
    for r in rows:
        shape = ",".join(f"{k}={v}" for k, v in r["shape"].items())
        cells = [f"{r[c]:.0f}" if c in COUNTS else f"{r[c]:.3f}" for c in COLUMNS]
        lines.append(f"| {r['pair']} {r['kernel']} {shape} | " + " | ".join(cells) + " |")
    if rows:
        cells = [f"{sum(r[c] for r in rows):.0f}" if c in COUNTS else f"{sum(r[c] for r in rows):.3f}"
                 for c in COLUMNS]
        lines.append("| **sum** | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    """Run the bench (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--pairs", default="", help="comma-separated pair indexes of cold_pairs.GPU_PAIRS (default all)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default="", help="write the rows as JSON here")
    ap.add_argument("--compare", default="", help="a checkout of the base commit: time its tiletune (before) and "
                    "this checkout's (after), runs interleaved")
    ap.add_argument("--fork-ahead", action="store_true", help="fork the compile children before the candidates "
                    "stage, as a first tune does (CompileSession.fork_ahead, sm_90): the stage then runs beside them")
    ap.add_argument("--record", default="", help="write each pair's ranked candidates and feasible count (JSON) "
                    "here, computed in this process, and time nothing")
    args = ap.parse_args(argv)
    global FORK_AHEAD
    FORK_AHEAD = args.fork_ahead
    if args.child is not None:
        print(json.dumps(child(args.child)))
        return 0
    import cold_pairs

    indexes = [int(i) for i in args.pairs.split(",") if i] or list(range(len(cold_pairs.GPU_PAIRS)))
    if args.record:
        if os.environ.get("TRITON_INTERPRET") == "1":
            raise SystemExit("fixed_cost.py --record: unset TRITON_INTERPRET (the candidates are the GPU's)")
        Path(args.record).write_text(json.dumps(record(indexes), indent=1) + "\n")
        return 0
    if args.compare:
        return compare(indexes, args.runs, str(Path(args.compare).resolve()), args.out)
    rows = []
    for i in indexes:
        rows.append(median_row(run_pair(i, args.runs)))
        print(f"pair {i} {rows[-1]['kernel']}: total {rows[-1]['total']:.3f} s", file=sys.stderr)
    print(table(rows))
    if args.out:
        Path(args.out).write_text(json.dumps({"runs": args.runs, "rows": rows}, indent=1) + "\n")
    return 0


def compare(indexes: List[int], runs: int, before_dir: str, out: str) -> int:
    """Before (tiletune from ``before_dir``) and after (this checkout), their runs interleaved pair by pair
    (the machine's load falls on both alike); both tables and the change of each column's sum."""
    before, after = [], []
    for i in indexes:
        b, a = [], []
        for _ in range(runs):
            b.append(run_child(i, before_dir))
            a.append(run_child(i))
        before.append(median_row(b))
        after.append(median_row(a))
        print(f"pair {i} {after[-1]['kernel']}: total {before[-1]['total']:.3f} -> {after[-1]['total']:.3f} s",
              file=sys.stderr)
    print(f"## before (tiletune from {before_dir})\n\n{table(before)}\n\n## after (this checkout)\n\n{table(after)}\n")
    print("| column | before (sum) | after (sum) |\n|---|---|---|")
    for col in COLUMNS:
        print(f"| {col} | {sum(r[col] for r in before):.3f} | {sum(r[col] for r in after):.3f} |")
    if out:
        Path(out).write_text(json.dumps({"runs": runs, "before_from": before_dir, "before": before, "after": after},
                                        indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
