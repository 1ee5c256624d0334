"""Synthesis speed: model build + enumeration + ranking per kernel and shape.

Runs :func:`tiletune.synthesis.synthesize` for every fixture at its three
``BENCH_SHAPES`` on one target (default h100; ``--target`` to change), after
analysing each kernel once (analysis time is not counted), and prints a
table: kernel, shape, feasible count, median milliseconds over ``--repeat``
runs.  Target: under 250 ms median per kernel and shape.

    python bench/bench_synthesis.py [--target h100] [--repeat 7] [--top-k 16]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import fixtures  # noqa: E402
from tiletune.synthesis import synthesize  # noqa: E402
from tests.fixture_problems import fixture_problem  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="h100")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--top-k", type=int, default=16)
    ap.add_argument("--goal-ms", type=float, default=250.0)
    args = ap.parse_args(argv)
    cache: dict = {}
    rows = []
    # warm up imports (z3, numpy) outside the timings
    spec, shapes, dtypes, fixed = fixture_problem("vector_add", fixtures.load("vector_add").BENCH_SHAPES[0], cache)
    synthesize(spec, shapes, dtypes, args.target, fixed=fixed)
    for name in fixtures.NAMES:
        fx = fixtures.load(name)
        for shape in fx.BENCH_SHAPES:
            spec, shapes, dtypes, fixed = fixture_problem(name, shape, cache)
            times = []
            result = None
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                result = synthesize(spec, shapes, dtypes, args.target, fixed=fixed, top_k=args.top_k)
                times.append((time.perf_counter() - t0) * 1e3)
            best = result.candidates[0]
            rows.append((spec.name, ",".join(f"{k}={v}" for k, v in shape.items()), result.feasible_count, statistics.median(times), best))
    w = max(len(r[0]) for r in rows)
    s = max(len(r[1]) for r in rows)
    print(f"target {args.target}, median of {args.repeat} runs, top_k={args.top_k}")
    print(f"{'kernel':<{w}}  {'shape':<{s}}  {'feasible':>8}  {'ms':>7}  best")
    for kernel, shape, count, ms, best in rows:
        opts = f" w{best.num_warps} s{best.num_stages}" if best.num_warps is not None else f" {best.extra}"
        print(f"{kernel:<{w}}  {shape:<{s}}  {count:>8}  {ms:>7.1f}  {best.kwargs}{opts}")
    meds = [r[3] for r in rows]
    worst = max(meds)
    print(f"median over all: {statistics.median(meds):.1f} ms; worst: {worst:.1f} ms; goal < {args.goal_ms:.0f} ms: "
          + ("met" if worst < args.goal_ms else "NOT met"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
