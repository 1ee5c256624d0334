"""A process that tuned exits promptly: nothing it started is left running once it is done, and it does not
keep every module it parsed.

Real subprocesses (not timed): one tunes a kernel with ``configs=[]`` under
the interpreter, one compiles candidates for sm_90 in a compile session's
forked children.  Each reports its live threads and child processes after the
work; all must be gone, and the process must exit by itself with status 0.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WORKER = ROOT / "tests" / "prompt_exit_worker.py"


def _run(mode: str, tmp_path: Path, interpret: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.update(TILETUNE_CACHE_DIR=str(tmp_path / "tt"), TRITON_CACHE_DIR=str(tmp_path / "triton"),
               PYTHONPATH=str(ROOT))
    if interpret:
        env["TRITON_INTERPRET"] = "1"
    done = subprocess.run([sys.executable, str(WORKER), mode], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_after_a_tune_no_thread_or_child_is_left(tmp_path):
    report = _run("tune", tmp_path, interpret=True)
    assert "BLOCK_SIZE" in report["did"]
    assert report["threads"] == [] and report["mp_children"] == [] and report["os_children"] == [], report


@pytest.mark.slow
def test_after_child_compiles_no_child_or_pool_thread_is_left(tmp_path):
    report = _run("compile", tmp_path, interpret=False)
    did = json.loads(report["did"])
    assert did["compiled"] == ["a", "b"] and did["children"] >= 1
    assert report["threads"] == [] and report["mp_children"] == [] and report["os_children"] == [], report


def test_parsed_modules_kept_stay_bounded(tmp_path):
    """The resolver keeps at most MAX_CACHED_MODULES parsed modules, the most recently used: a process that
    reads many files (the suite over the corpus, a lint, the LSP) no longer keeps millions of objects for the
    interpreter's shutdown to walk (that made pytest linger 45-75 s after its summary)."""
    from tiletune.analysis import resolver

    bound = resolver.MAX_CACHED_MODULES
    paths = []
    for i in range(bound + 20):
        path = tmp_path / f"m{i}.py"
        path.write_text(f"import triton\n\n\n@triton.jit\ndef k{i}(x_ptr):\n    pass\n")
        paths.append(str(path))
    first = resolver.load_module(paths[0])
    for p in paths[1:]:
        resolver.load_module(p)
        resolver.load_module(paths[0])  # used again and again: stays
    assert len(resolver._CACHE) <= bound
    assert resolver.load_module(paths[0]) is first  # the recently used module is still the cached one
    assert resolver.cached_index(paths[1]) is None  # the least recently used were dropped
