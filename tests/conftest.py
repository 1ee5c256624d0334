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


_LAST_CORPUS_READER: list[str] = []  # node id of the last collected test that uses corpus_analyses


def pytest_collection_modifyitems(session, config, items):
    """Note the last test that reads the shared corpus analyses (see pytest_runtest_teardown)."""
    readers = [item.nodeid for item in items if "corpus_analyses" in getattr(item, "fixturenames", ())]
    _LAST_CORPUS_READER[:] = readers[-1:]


def pytest_runtest_teardown(item, nextitem):
    """Empty the shared corpus analyses once their last reader ran: every later test would otherwise run
    beside hundreds of thousands of analysis objects the collector keeps walking."""
    if _LAST_CORPUS_READER and item.nodeid == _LAST_CORPUS_READER[0]:
        memo = getattr(item, "funcargs", {}).get("corpus_analyses")
        if memo is not None:
            memo.clear()
