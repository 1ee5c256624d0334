"""Explanations never crash on the dev corpus (liger-kernel, torchao, gemlite: tests/corpus.py SWEEP_LIBRARIES).

Every kernel with tiling parameters is synthesised on three Ascend and an NVIDIA
target at a few realistic sizes (every runtime size the model needs set to
the same value: 1000, 4096, 131072); every infeasible result is explained
(``synthesize`` raises ``InfeasibleError`` carrying ``explain_infeasible``'s
text).  Missing sizes or dtypes (``SynthesisError``) and analysis errors are
not what this test is about; any other exception is a crash.  Before the
constraint names were made unique per model, one pointer accessed with two
tile shapes (branches, split loads) made Z3 raise "named assertion defined
twice" here.  Run with ``-s`` to see the counts.
"""

from __future__ import annotations

import pytest

from tests.corpus import SWEEP_LIBRARIES as LIBRARIES, library_files
from tiletune.errors import AnalysisError, InfeasibleError, SynthesisError
from tiletune.synthesis import required_shapes, synthesize
from tiletune.synthesis.cli import default_dtypes

pytestmark = pytest.mark.slow

SIZES = (1000, 4096, 131072)
TARGETS = ("ascend910b3", "ascend910_95", "ascend310p", "h100")


def _kernels(corpus_analyses):
    for lib in LIBRARIES:
        for path in library_files(lib):
            try:
                module = corpus_analyses.analyse(path)  # analyze_file, shared with the other corpus tests
            except Exception:  # noqa: BLE001 - the analysis has its own corpus tests
                continue
            for spec in module.kernels:
                if spec.tiling_params:
                    yield lib, path, spec


def test_explain_never_crashes_on_the_corpus(corpus_analyses):
    if not any(library_files(lib) for lib in LIBRARIES):
        pytest.skip("dev corpus not fetched (bench/fetch_corpus.sh)")
    crashes, explained, feasible, skipped = [], 0, 0, 0
    for lib, path, spec in _kernels(corpus_analyses):
        try:
            dtypes = default_dtypes(spec)
            names = required_shapes(spec)
        except Exception as exc:  # noqa: BLE001
            crashes.append(f"{path}:{spec.name}: {type(exc).__name__}: {exc}")
            continue
        for size in SIZES:
            shapes = {n: size for n in names}
            for target in TARGETS:
                try:
                    synthesize(spec, shapes, dtypes, target, top_k=4)
                    feasible += 1
                except InfeasibleError as exc:
                    assert exc.explanation, f"{path}:{spec.name}: empty explanation"
                    explained += 1
                except (SynthesisError, AnalysisError):
                    skipped += 1
                except Exception as exc:  # noqa: BLE001 - a crash
                    crashes.append(f"{path}:{spec.name} {target} size={size}: {type(exc).__name__}: {exc}")
    print(f"\ncorpus explain: {explained} infeasible results explained, {feasible} feasible, "
          f"{skipped} skipped (missing sizes/dtypes), {len(crashes)} crashes")
    assert explained > 0
    assert crashes == []
