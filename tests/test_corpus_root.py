"""bench/corpus.py on a library outside the dev corpus (``--root DIR --library NAME``), run as a
process over tests/data/heldout_patterns (a small package of kernels in held-out libraries' patterns)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_bench_measures_a_library_under_another_root(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, str(ROOT / "bench" / "corpus.py"), "--root", str(ROOT / "tests"), "--library",
           "heldout_patterns", "--no-synth", "--out", str(tmp_path), "--stem", "held", "--title", "Held out",
           "--note", "Patterns, not libraries."]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    row = json.loads((tmp_path / "held.json").read_text())["rows"][0]
    assert row["library"] == "heldout_patterns" and row["errors"] == 0
    assert row["with_tiling"] >= 10 and row["helpers_unread"] == 0
    # the deliberately unreadable kernels: a store through a view of unknown shape, heuristics from a registry
    assert sorted(w.split(":")[-1] for w, _ in row["details"]["incomplete"]) == ["butterfly_store_kernel",
                                                                                 "row_softmax_kernel"]
    assert row["tuned_but_fixed"] == 0  # the rotary kernel's launch (lazy import) fixes BLOCK; tiletune agrees
    text = (tmp_path / "held.md").read_text()
    assert text.startswith("# Held out\n") and "Patterns, not libraries." in text and "| heldout_patterns |" in text


def test_bench_names_the_missing_library(tmp_path):
    cmd = [sys.executable, str(ROOT / "bench" / "corpus.py"), "--root", str(tmp_path), "--library", "nothing_here",
           "--out", str(tmp_path)]
    done = subprocess.run(cmd, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 and "nothing_here" in done.stderr and "--root" in done.stderr
