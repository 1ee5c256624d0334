"""Lint all of liger-kernel (installed with ``pip install --no-deps
liger-kernel``; its kernels are data to read, never imported) and print the
wall time and every finding grouped by code.

Usage: python bench/bench_lint_liger.py [--jobs N] [--repeat R] [--path DIR] [--json OUT]

Goal: < 5 s wall on the 2-core development machine.  TT004 and TT006 must
report nothing on liger-kernel (its decorator stacks and autotune argument
names are all legal): the script exits 1 if they do.  TT000 (a file the
analysis could not read) is listed too, as a coverage signal.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tiletune.lint.prefilter import might_have_kernels as _might_have_kernels  # noqa: E402
from tiletune.lint.runner import iter_python_files, lint_paths  # noqa: E402

MUST_BE_SILENT = ("TT004", "TT006")


def liger_dir() -> Path:
    """Where liger_kernel is installed (found without importing it)."""
    spec = importlib.util.find_spec("liger_kernel")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("liger-kernel is not installed: pip install --no-deps liger-kernel")
    return Path(list(spec.submodule_search_locations)[0])


def _cpu_seconds() -> float:
    """User + system CPU seconds of this process and its finished children (the lint workers)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def main() -> int:
    """Run the benchmark, print the table and the findings."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=None, help="processes (default: CPU count)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs (the median is reported)")
    parser.add_argument("--path", default=None, help="liger_kernel directory (default: the installed one)")
    parser.add_argument("--json", default=None, help="also write the results to this JSON file")
    parser.add_argument(
        "--per-file",
        type=int,
        default=0,
        metavar="N",
        help="also time each file alone (best of --repeat, in this process), print the N slowest and the sum: "
        "an estimate of the serial time on an idle machine",
    )
    args = parser.parse_args()

    root = Path(args.path) if args.path else liger_dir()
    files = list(iter_python_files([str(root)]))
    lines = 0
    candidates = 0
    for f in files:
        text = Path(f).read_text(encoding="utf-8", errors="replace")
        lines += text.count("\n")
        candidates += _might_have_kernels(text)

    import tiletune.analysis  # noqa: F401  (imports are not what we time)

    times = []
    cpu = []
    diags = []
    for _ in range(max(1, args.repeat)):
        c0 = _cpu_seconds()
        t0 = time.perf_counter()
        diags = lint_paths([str(root)], jobs=args.jobs)
        times.append(time.perf_counter() - t0)
        cpu.append(_cpu_seconds() - c0)
    median = statistics.median(times)
    cpu_median = statistics.median(cpu)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")

    by_code: dict[str, list] = defaultdict(list)
    for d in diags:
        by_code[d.code].append(d)

    jobs = args.jobs if args.jobs is not None else (os.cpu_count() or 1)
    print(f"liger-kernel at {root}")
    print(f"{len(files)} Python files, {lines} lines; {candidates} files with possible kernels analysed")
    print(f"machine: {platform.machine()} {os.cpu_count()} CPUs, Python {platform.python_version()}, jobs={jobs}")
    print()
    print("| runs | median wall s | min s | max s | CPU s (all processes) | load avg | goal |")
    print("|---:|---:|---:|---:|---:|---:|---|")
    print(
        f"| {len(times)} | {median:.2f} | {min(times):.2f} | {max(times):.2f} | {cpu_median:.2f} | {load:.1f} "
        f"| < 5 s wall: {'met' if median < 5 else 'NOT met'} |"
    )
    if load > (os.cpu_count() or 1):
        print(f"(the machine was busy: load {load:.1f} on {os.cpu_count()} CPUs; wall times are inflated)")
    print()
    print("| code | findings |")
    print("|---|---:|")
    for code in sorted(by_code):
        print(f"| {code} | {len(by_code[code])} |")
    if not by_code:
        print("| (none) | 0 |")
    for code in sorted(by_code):
        print(f"\n## {code} ({len(by_code[code])})")
        for d in by_code[code]:
            rel = os.path.relpath(d.path, root.parent)
            print(f"{rel}:{d.line}:{d.column + 1}: {d.code} {d.message}")

    if args.per_file:
        from tiletune.lint.registry import lint_file

        best: list[tuple[float, str]] = []
        for f in files:
            runs = []
            for _ in range(max(1, args.repeat)):
                t0 = time.perf_counter()
                lint_file(f)
                runs.append(time.perf_counter() - t0)
            best.append((min(runs), f))
        best.sort(reverse=True)
        total = sum(t for t, _ in best)
        print(f"\n## per file (best of {max(1, args.repeat)}): sum {total:.2f} s serial, "
              f"~{total / max(1, jobs):.2f} s over {jobs} idle CPUs")
        print("| s | file |")
        print("|---:|---|")
        for t, f in best[: args.per_file]:
            print(f"| {t:.3f} | {os.path.relpath(f, root.parent)} |")

    bad = {c: len(by_code[c]) for c in MUST_BE_SILENT if by_code.get(c)}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "files": len(files),
                    "lines": lines,
                    "analysed": candidates,
                    "jobs": jobs,
                    "times_s": times,
                    "median_s": median,
                    "cpu_s": cpu,
                    "load_avg": load,
                    "findings": {c: [d.to_dict() for d in v] for c, v in sorted(by_code.items())},
                },
                f,
                indent=2,
            )
    if bad:
        print(f"\nFALSE POSITIVES: {bad} (these codes must report nothing on liger-kernel)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
