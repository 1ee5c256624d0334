"""The analysis over a real corpus: every .py file of liger_kernel.

The files are the dev corpus's copy (tests/corpus.py) when it is fetched, else the installed package: CI
installs the same pinned release (0.8.5) for this test, and the corpus copy is the one the other corpus tests
analyse in the same session (the ``corpus_analyses`` fixture), so its analysis is shared instead of done twice.

Every file must analyse without an exception escaping, and the tiling
parameters must be found in at least 90% of the kernels that have a
constexpr named like ``*BLOCK*`` or used as a ``tl.arange`` extent.
Run with ``-s`` to see the counts.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from corpus import library_files

pytestmark = pytest.mark.slow


def _files() -> list[Path]:
    files = library_files("liger_kernel")
    if files:
        return files
    liger_kernel = pytest.importorskip("liger_kernel")
    root = Path(os.path.dirname(liger_kernel.__file__))
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def _candidate(spec) -> bool:
    return any(
        p.constexpr and ("BLOCK" in p.name.upper() or any("tl.arange extent" in u for u in p.uses))
        for p in spec.params
    )


def test_liger_corpus(corpus_analyses):
    files = _files()
    assert files, "liger_kernel has no .py files?"
    failures = []
    kernels = candidates = found = with_notes = 0
    roles: Counter = Counter()
    missing = []
    for path in files:
        try:
            module = corpus_analyses.analyse(path)
        except Exception as exc:  # noqa: BLE001 - collected and reported below
            failures.append(f"{path}: {type(exc).__name__}: {exc}")
            continue
        assert module is not None
        for spec in module.kernels:
            kernels += 1
            with_notes += bool(spec.notes)
            assert spec.footprint is not None, f"{path}:{spec.name}"
            bad = [n for n in spec.notes if n.startswith("internal:") or "analysis error" in n]
            assert not bad, (path, spec.name, bad)
            for p in spec.tiling_params:
                roles[p.role.value] += 1
            if _candidate(spec):
                candidates += 1
                if spec.tiling_params:
                    found += 1
                else:
                    missing.append(f"{path.name}:{spec.name}")
    print(
        f"\nliger_kernel: {len(files)} files, {kernels} kernels, {with_notes} with notes; "
        f"{found}/{candidates} kernels with BLOCK-like constexprs have tiling params; roles {dict(roles)}"
    )
    if missing:
        print("  no tiling params found in: " + ", ".join(missing))
    assert not failures, "\n".join(failures)
    assert kernels > 50
    assert found >= 0.9 * candidates
