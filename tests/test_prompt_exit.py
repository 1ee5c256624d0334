"""A process that tuned exits promptly: nothing it started is left running once it is done.

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


def test_the_test_session_freezes_what_it_keeps_before_shutdown(tmp_path):
    """The suite's conftest hook: after the session, everything alive is frozen, so the
    interpreter's shutdown collections do not walk it."""
    (tmp_path / "conftest.py").write_text((ROOT / "tests" / "conftest.py").read_text())
    (tmp_path / "test_a.py").write_text("KEEP = [object() for _ in range(1000)]\n\n\ndef test_a():\n    assert KEEP\n")
    (tmp_path / "probe.py").write_text(
        "import atexit, gc, sys\n"
        "atexit.register(lambda: sys.stderr.write(f'frozen={gc.get_freeze_count()}\\n'))\n"
        "import pytest\nsys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', 'test_a.py']))\n")
    done = subprocess.run([sys.executable, "probe.py"], capture_output=True, text=True, cwd=tmp_path,
                          timeout=300, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stdout + done.stderr
    frozen = int(done.stderr.rsplit("frozen=", 1)[1].split()[0])
    assert frozen > 1000
