"""Real kernel libraries read right (slow): the goals of bench/corpus.py, asserted.

liger-kernel, torchao and gemlite (``bash bench/fetch_corpus.sh``) are read by
the analyser, never imported.  Per library: >= 98% of kernels with tiling
parameters analysed complete; tiling recall vs the library's own autotune
configs >= 98%; no helper imported from inside the library left unread; no
synth-configs top-1 with a tile over Triton's element limit or a dot operand
under 16; no tuned parameter that a launch in the library fixes or the
kernel's autotune key lists.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from corpus import LIBRARIES, library_root

pytestmark = pytest.mark.slow

_BENCH = Path(__file__).resolve().parent.parent / "bench" / "corpus.py"
_spec = importlib.util.spec_from_file_location("_bench_corpus", _BENCH)
bench_corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_corpus)


@pytest.mark.parametrize("package", LIBRARIES)
def test_library_read_right(package):
    if library_root(package) is None:
        pytest.skip(f"{package} not fetched: run bash bench/fetch_corpus.sh")
    row = bench_corpus.measure_library(package)
    d = row["details"]
    assert row["errors"] == 0, d["errors"]
    assert row["with_tiling"] > 20
    assert row["complete_pct"] >= 98.0, d["incomplete"]
    assert row["config_names"] > 0 and row["recall_pct"] >= 98.0, d["recall_misses"]
    assert row["helpers_unread"] == 0, d["helpers_unread"]
    assert row["top1_checked"] > 20 and row["top1_bad"] == 0, d["top1_bad"]
    assert row["tuned_but_fixed"] == 0, d["tuned_but_fixed"]
