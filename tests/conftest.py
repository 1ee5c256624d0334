"""Test setup: kernels run on the CPU through Triton's interpreter.

TRITON_INTERPRET must be set before triton is imported, so it is set here.
Interpreted runs patch triton.language for the whole process, so tests that
compile for a GPU target do so in a subprocess (tiletune.runtime.offline_compile).
"""

import os
import sys
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))



import pytest  # noqa: E402  (after TRITON_INTERPRET is set)


@pytest.fixture(scope="session")
def corpus_analyses():
    """The dev corpus's files analysed once per session (tests/corpus.py: CorpusAnalyses)."""
    from corpus import CorpusAnalyses

    memo = CorpusAnalyses()
    yield memo
    memo.clear()
