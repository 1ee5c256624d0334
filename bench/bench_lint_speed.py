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

Goal (issue 28): a 400-file library in <= 10 s on 2 idle cores.  That a speed change leaves
the lint's output byte-identical is checked by ``bench/check_lint_identity.py``.

``--stages LIB`` instead lints one library cold in this process, with no
workers, and prints where its CPU seconds go, stage by stage (each stage's own
time, without the timed stages inside it): libcst's parse, positions, the body
interpreter, the meaning reader, ...
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


#: (module, attribute, class or None, label): the stages ``--stages`` times, each without the stages inside it.
_STAGES = [
    ("libcst._parser.entrypoints", "_parse", None, "libcst parse (native)"),
    ("tiletune.analysis.positions", "python_tree", None, "Python's own parse"),
    ("tiletune.analysis.positions", "nested_deeper_than", None, "depth checks"),
    ("tiletune.analysis.positions", "_compute", "LazyPositions", "positions: codegen"),
    ("tiletune.analysis.positions", "_statement_of", "LazyPositions", "positions: finding a statement"),
    ("tiletune.analysis.positions", "_whole", "LazyPositions", "positions: whole module"),
    ("tiletune.analysis.frontend", "_analyze_module", None, "front end (rest)"),
    ("tiletune.analysis.frontend", "find_kernels", None, "finding kernels"),
    ("tiletune.analysis.frontend", "fill_declaration", None, "declarations"),
    ("tiletune.analysis.frontend", "launches_by_kernel", None, "launches"),
    ("tiletune.analysis.frontend", "_project_launches", None, "launches elsewhere in the package"),
    ("tiletune.analysis.frontend", "resolve_helpers", None, "resolver"),
    ("tiletune.analysis.body", "find_meaning", None, "meaning reader"),
    ("tiletune.analysis.body", "compute_footprint", None, "footprint"),
    ("tiletune.analysis.frontend", "_analyze_kernel_body", None, "body interpreter (rest)"),
    ("tiletune.lint.registry", "_lint_source", None, "lint (rest: rules, context)"),
    ("tiletune.lint.registry", "might_have_kernels", None, "prefilter"),
    ("tiletune.lint.registry", "read_python_source", None, "reading files"),
]


def _stages(path: Path) -> None:
    """Lint ``path`` cold in this process (no workers) and print each stage's own CPU seconds."""
    import importlib

    sys.path.insert(0, str(ROOT))
    own: dict[str, float] = {}
    inner: list[float] = []  # per open stage: the time of the timed stages inside it

    def timed(fn, label):
        def run(*a, **kw):
            t0 = time.process_time()
            inner.append(0.0)
            try:
                return fn(*a, **kw)
            finally:
                spent = time.process_time() - t0
                own[label] = own.get(label, 0.0) + spent - inner.pop()
                if inner:
                    inner[-1] += spent
        return run

    t0 = time.process_time()
    from tiletune.lint.runner import iter_lint_paths
    for module, attr, cls, label in _STAGES:
        owner = importlib.import_module(module)
        owner = getattr(owner, cls) if cls else owner
        setattr(owner, attr, timed(getattr(owner, attr), label))
    imports = time.process_time() - t0
    t0 = time.process_time()
    found = sum(len(d) for _, d in iter_lint_paths([str(path)], jobs=1))
    total = time.process_time() - t0
    print(f"{path.name}: cold lint in one process, {total:.2f} CPU s, {found} findings (imports before: {imports:.2f} s)")
    for label, spent in sorted(own.items(), key=lambda kv: -kv[1]):
        print(f"  {label:<36} {spent:7.2f}")
    print(f"  {'not inside a timed stage':<36} {total - sum(own.values()):7.2f}")


def main() -> int:
    """Print the cold/warm table for the chosen libraries."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--libs", default=None, help="comma-separated names under .corpus/ (default: all)")
    ap.add_argument("--jobs", type=int, default=None, help="lint processes (default: the lint's own)")
    ap.add_argument("--stages", default=None, metavar="LIB", help="where one library's cold lint spends its CPU seconds")
    args = ap.parse_args()
    corpus = ROOT / ".corpus"
    if args.stages:
        _stages(corpus / args.stages)
        return 0
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
