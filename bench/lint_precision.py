"""Precision of the lint on real kernel libraries, judged by reading the code.

Lints liger-kernel, torchao and gemlite (the dev corpus: ``bench/fetch_corpus.sh``
fetches them, ``tests/corpus.py`` finds them), samples up to ``--per-rule``
findings per rule with a fixed seed, and joins each sampled finding with its
label in ``bench/results/lint_labels.json`` (``{"key": {"label": "tp"|"fp",
"reason": "one line"}}``, written by a person who read the code; the key is
``library-relative-path:line:code:kernel:param``).  Writes the precision per
rule to ``bench/results/lint_precision.md`` and prints it; also times the
whole-library lint (wall and CPU seconds, with the load average, since other
work on the machine slows the wall time).

Goal: precision >= 95% for every rule with >= 10 findings.  Exit status 1
when a sampled finding has no label (label it, do not drop it) or a rule
with >= 10 findings misses the goal.

Usage: python bench/lint_precision.py [--seed 13] [--per-rule 60] [--jobs N]
       [--extra DIR ...] [--no-write]
``--extra`` lints more libraries (code the labels do not cover) and lists
their findings unlabelled, for a look at code the rules were not written on.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from corpus import corpus_dir, library_root  # noqa: E402

#: The libraries the hand labels cover (fla-core and unsloth, added to the corpus later, are
#: linted with ``--extra`` and listed unscored until someone labels their findings).
LIBRARIES = ("liger_kernel", "torchao", "gemlite")

from tiletune.lint import all_rules  # noqa: E402
from tiletune.lint.runner import iter_lint_paths, iter_python_files  # noqa: E402

LABELS = ROOT / "bench" / "results" / "lint_labels.json"
REPORT = ROOT / "bench" / "results" / "lint_precision.md"
GOAL, MIN_FINDINGS = 0.95, 10


def finding_key(d, base: Path) -> str:
    """Stable identity of a finding: path relative to the corpus, line, code, kernel, parameter."""
    try:
        rel = Path(d.path).resolve().relative_to(base.resolve())
    except ValueError:
        rel = Path(d.path)
    return f"{rel.as_posix()}:{d.line}:{d.code}:{d.kernel or '-'}:{d.param or '-'}"


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def lint_timed(roots: list[str], jobs: int | None) -> tuple[list, float, float, int]:
    """(diagnostics, wall s, CPU s, files) of one whole lint of ``roots``."""
    import tiletune.analysis  # noqa: F401  (imports are not what we time)

    c0, t0 = _cpu(), time.perf_counter()
    diags, files = [], 0
    for _, found in iter_lint_paths(roots, jobs=jobs):
        files += 1
        diags.extend(found)
    return diags, time.perf_counter() - t0, _cpu() - c0, files


def _history(stored: dict) -> list[str]:
    """The labelled findings of the lint before issue 13 and those found (and
    fixed in the rules) while building it, per rule."""
    out: list[str] = []
    for section, title in (
        ("previous_lint", "The lint before issue 13 (commit 8f8b713), same corpus, every finding labelled"),
        ("found_while_building", "False positives found while building this lint (each fixed in the rule or the analysis)"),
        ("held_out", "Held out: a sample of the findings on FlagGems 5.0.2 (52 TT001 findings, 8 sampled with seed 1)"),
    ):
        entries = stored.get(section) or {}
        if not entries:
            continue
        per: dict[str, list[str]] = defaultdict(list)
        for key, lab in entries.items():
            per[key.split(":")[-3]].append(lab["label"])
        summary = ", ".join(
            f"{code}: {labs.count('tp')}/{len(labs)} true ({labs.count('tp') / len(labs):.0%})" for code, labs in sorted(per.items())
        )
        out += ["", f"## {title}", "", summary, "", "| finding | label | reason |", "|---|---|---|"]
        out += [f"| `{k}` | {v['label']} | {v['reason']} |" for k, v in entries.items()]
    return out


def main() -> int:
    """Run the benchmark; print and write the report."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--per-rule", type=int, default=60)
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--extra", action="append", default=[], metavar="DIR", help="more library roots (findings listed, not scored)")
    ap.add_argument("--no-write", action="store_true", help="print only; leave the report file alone")
    args = ap.parse_args()

    roots = [library_root(lib) for lib in LIBRARIES]
    if any(r is None for r in roots):
        print("dev corpus missing: run bench/fetch_corpus.sh", file=sys.stderr)
        return 2
    base = corpus_dir()
    diags, wall, cpu, n_files = lint_timed([str(r) for r in roots], args.jobs)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    stored = json.loads(LABELS.read_text()) if LABELS.exists() else {}
    labels = stored.get("findings", {})

    by_rule: dict[str, list] = defaultdict(list)
    for d in diags:
        by_rule[d.code].append(d)
    rng = random.Random(args.seed)
    rows, details, missing = [], [], []
    goal_missed = []
    for r in all_rules():
        found = sorted(by_rule.get(r.code, []), key=lambda d: finding_key(d, base))
        sample = sorted(rng.sample(found, min(args.per_rule, len(found))), key=lambda d: finding_key(d, base))
        tp = fp = 0
        for d in sample:
            key = finding_key(d, base)
            lab = labels.get(key)
            if lab is None:
                missing.append(key)
                details.append(f"| `{key}` | **unlabelled** | {d.message} |")
                continue
            tp += lab["label"] == "tp"
            fp += lab["label"] == "fp"
            details.append(f"| `{key}` | {lab['label']} | {lab['reason']} |")
        judged = tp + fp
        precision = tp / judged if judged else None
        scored = len(found) >= MIN_FINDINGS
        if scored and (precision is None or precision < GOAL):
            goal_missed.append(r.code)
        rows.append(
            f"| {r.code} | {len(found)} | {len(sample)} | {tp} | {fp} | "
            f"{'-' if precision is None else f'{precision:.0%}'} | "
            f"{('met' if precision is not None and precision >= GOAL else 'MISSED') if scored else 'n/a (< 10 findings)'} |"
        )

    extra_lines = []
    for root in args.extra:
        ed, ew, ec, ef = lint_timed([root], args.jobs)
        extra_lines.append(f"\n### {root} ({ef} files, {ew:.1f} s wall, {ec:.1f} s CPU): {len(ed)} findings\n")
        extra_lines.extend(f"- `{d.format_text()}`" for d in ed)

    n_py = sum(1 for r in roots for _ in iter_python_files([str(r)]))
    history = _history(stored)
    report = "\n".join(
        [
            "# Lint precision on the dev corpus",
            "",
            "Produced by `python bench/lint_precision.py` (seed "
            f"{args.seed}, up to {args.per_rule} findings per rule). Labels: `bench/results/lint_labels.json`, "
            "each judged by reading the kernel and its launches.",
            "",
            f"Corpus: {', '.join(LIBRARIES)} ({n_py} Python files). Machine: {platform.machine()}, "
            f"{os.cpu_count()} CPUs, Python {platform.python_version()}.",
            "",
            f"Whole-corpus lint: **{wall:.1f} s wall**, {cpu:.1f} s CPU (all processes), load average "
            f"{load:.1f} when it ran (the machine is shared: wall time grows with the load; CPU / cores is the "
            "idle-machine estimate). Goal: < 10 s wall on the 2-core machine.",
            "",
            "| rule | findings | sampled | true | false | precision | goal (>= 95% with >= 10 findings) |",
            "|---|---:|---:|---:|---:|---:|---|",
            *rows,
            "",
            "## Sampled findings",
            "",
            "| finding | label | reason |",
            "|---|---|---|",
            *(details or ["| (none) | | |"]),
            *history,
            *(["", "## Other libraries (not scored)"] + extra_lines if extra_lines else []),
            "",
        ]
    )
    print(report)
    if not args.no_write:
        REPORT.write_text(report)
    if missing:
        print(f"{len(missing)} sampled findings have no label in {LABELS}:", *missing, sep="\n  ", file=sys.stderr)
    if goal_missed:
        print(f"precision goal missed: {', '.join(goal_missed)}", file=sys.stderr)
    return 1 if missing or goal_missed else 0


if __name__ == "__main__":
    sys.exit(main())
