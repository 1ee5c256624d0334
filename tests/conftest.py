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


def pytest_unconfigure(config):
    """Let the test process exit promptly once the summary is printed.

    A session keeps millions of objects alive (parsed corpus modules, libcst
    position metadata, Z3 models, Triton's interpreter state); the
    interpreter's shutdown then walks all of them in several garbage
    collections, which kept pytest busy for 45-75 s after its summary.
    Collect once now (finalizers of real garbage run), then freeze what is
    left: shutdown's collections skip frozen objects, and they are freed as
    their modules are torn down.  Children and pool threads are never the
    cause: every CompileSession and thread pool is closed where it is used
    (tests/test_prompt_exit.py checks a tune leaves none behind).
    """
    import gc

    gc.collect()
    gc.freeze()
