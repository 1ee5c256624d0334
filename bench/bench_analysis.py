"""Time the analysis of every fixture: parse + front end + body + footprint.

Usage: python bench/bench_analysis.py [--repeat 30]
Prints the median and p90 milliseconds per fixture file and writes
bench/results/analysis_speed.json and .md.  Goal: < 50 ms median per fixture.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tiletune.analysis import analyze_source  # noqa: E402


def main() -> int:
    """Run the benchmark and print a table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    texts = {
        path.stem: (path.read_text(), str(path))
        for path in sorted((ROOT / "fixtures").glob("*.py"))
        if not path.name.startswith("_")
    }
    kernels = {name: len(analyze_source(text, file).kernels) for name, (text, file) in texts.items()}  # warm up
    times: dict[str, list[float]] = {name: [] for name in texts}
    # Round-robin over the fixtures, so a slow spell of the machine is shared by all.
    for _ in range(args.repeat):
        for name, (text, file) in texts.items():
            t0 = time.perf_counter()
            analyze_source(text, file)
            times[name].append((time.perf_counter() - t0) * 1e3)
    rows = []
    for name, ts in times.items():
        ts.sort()
        rows.append(
            {
                "fixture": name,
                "kernels": kernels[name],
                "median_ms": round(statistics.median(ts), 2),
                "p90_ms": round(ts[int(0.9 * (len(ts) - 1))], 2),
            }
        )
    out = {"machine": platform.processor() or platform.machine(), "python": platform.python_version(), "rows": rows}
    results = ROOT / "bench" / "results"
    results.mkdir(parents=True, exist_ok=True)
    (results / "analysis_speed.json").write_text(json.dumps(out, indent=2) + "\n")
    lines = ["| fixture | kernels | median ms | p90 ms |", "|---|---|---|---|"]
    lines += [f"| {r['fixture']} | {r['kernels']} | {r['median_ms']} | {r['p90_ms']} |" for r in rows]
    worst = max(r["median_ms"] for r in rows) if rows else 0.0
    lines.append(f"\nworst median: {worst} ms (goal < 50 ms)")
    (results / "analysis_speed.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
