"""How long ``tiletune lint`` takes on the dev corpus's libraries, cold and warm.

Usage: python bench/bench_lint_speed.py [--libs fla-core,liger-kernel,...] [--jobs N]

For each library unpacked under ``.corpus/`` (``bash bench/fetch_corpus.sh``)
it runs ``tiletune lint`` as a user does (a fresh process, the console
script's module), twice on one fresh result cache: **cold** (every file
analysed, in parallel processes) and **warm** (nothing changed: every result
read back from the per-file cache).  It prints a table: files, findings, the
wall seconds of each run, the CPU seconds of the cold run (the lint and its
workers, user + system: what 2 idle cores share), and the machine's core
count and load average (wall timings on a loaded machine are not comparable).

Goal (issue 28): a 400-file library in <= 10 s on 2 idle cores.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(path: Path, cache: Path, jobs: int | None) -> tuple[float, float, int]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), TILETUNE_LINT_CACHE_DIR=str(cache))
    env.pop("TILETUNE_LINT_CACHE", None)
    cmd = [sys.executable, "-m", "tiletune.lint", str(path)] + (["-j", str(jobs)] if jobs else [])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)  # the lint and its workers
    if done.returncode not in (0, 1):
        raise SystemExit(f"tiletune lint {path} failed ({done.returncode}): {done.stderr[-2000:]}")
    return wall, cpu, sum(1 for line in done.stdout.splitlines() if ": TT" in line)


def main() -> int:
    """Print the cold/warm table for the chosen libraries."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--libs", default=None, help="comma-separated names under .corpus/ (default: all)")
    ap.add_argument("--jobs", type=int, default=None, help="lint processes (default: the lint's own)")
    args = ap.parse_args()
    corpus = ROOT / ".corpus"
    libs = args.libs.split(",") if args.libs else sorted(p.name for p in corpus.iterdir() if p.is_dir() and p.name != "dl")
    if not libs or not corpus.is_dir():
        raise SystemExit("no corpus: run bash bench/fetch_corpus.sh")
    print(f"cores: {os.cpu_count()}, load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'library':<14} {'files':>6} {'findings':>9} {'cold s':>8} {'cold cpu s':>11} {'warm s':>8}")
    for lib in libs:
        path = corpus / lib
        files = sum(1 for _ in path.rglob("*.py"))
        with tempfile.TemporaryDirectory(prefix="tiletune-lint-bench-") as cache:
            cold, cold_cpu, found = _run(path, Path(cache), args.jobs)
            warm, _, found_warm = _run(path, Path(cache), args.jobs)
        if found_warm != found:
            raise SystemExit(f"{lib}: the warm run found {found_warm} findings, the cold run {found}")
        print(f"{lib:<14} {files:>6} {found:>9} {cold:>8.2f} {cold_cpu:>11.2f} {warm:>8.2f}", flush=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
