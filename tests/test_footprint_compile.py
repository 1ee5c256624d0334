"""The shared-memory model against the compiler, for every fixture.

Each fixture is compiled for sm_90 on the CPU (one worker process for all
jobs) at a few tilings x num_stages 1-4, and ``footprint.shared_bytes`` is
compared with ``metadata.shared``.  The cases and the error statistics come
from ``bench/footprint_error.py`` (run it to write
``bench/results/footprint_error.{json,md}``); run this test with ``-s`` to
see the distribution.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("_footprint_error", ROOT / "bench" / "footprint_error.py")
footprint_error = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = footprint_error  # dataclasses look their module up there
_spec.loader.exec_module(footprint_error)

#: Bounds on |predicted - actual| / max(actual, 1 KiB); see bench/results/footprint_error.md.
#: Dot kernels are modelled exactly at num_warps 4; the rest use little shared
#: memory, and what the model misses there (layout conversions that depend on
#: whether runtime strides are multiples of 16, e.g. layer_norm at N=1151) is
#: a few KiB at most.
MEDIAN_REL = 0.01
P90_REL = 0.05
DOT_MAX_REL = 0.02
OTHER_MAX_ABS = 4096


@pytest.fixture(scope="module")
def cases():
    return footprint_error.run()


def test_every_case_compiles_and_is_predicted(cases):
    broken = [c for c in cases if c.predicted is None or c.actual is None]
    assert not broken, [(c.fixture, c.config, c.num_stages, c.error) for c in broken]


def test_shared_bytes_error_distribution(cases):
    print()
    print(footprint_error.report(cases, 0))
    summary = footprint_error.summarize(cases)
    overall, dots = summary["all"], summary["dot_kernels"]
    worst = sorted((c for c in cases if c.rel_error is not None), key=lambda c: -c.rel_error)[:5]
    detail = [(c.fixture, c.config, c.num_stages, c.predicted, c.actual) for c in worst]
    assert overall["median_rel"] <= MEDIAN_REL, detail
    assert overall["p90_rel"] <= P90_REL, detail
    assert dots["max_rel"] <= DOT_MAX_REL, detail
    assert summary["other_kernels"]["max_abs"] <= OTHER_MAX_ABS, detail
