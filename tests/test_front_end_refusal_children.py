"""A compile child reports a candidate Triton's front end refuses, and this process then compiles nothing.

A real kernel (a ``tl.static_assert`` on a tile's shape) compiled for sm_90 in forked children without a GPU
(``tests/front_end_refusal_worker.py``): the child's compile stops in Triton's front end and says so with
Triton's message; the compile thread that waits for the child raises
:class:`~tiletune.runtime.compile_workers.FrontEndRefusal` instead of lowering the kernel again under the GIL,
and the compile queue records the refusal (the measure stage drops the candidate, unmeasured, and measures
the next ranked one: tests/test_front_end_refusal.py).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_child_reports_a_front_end_refusal_and_the_thread_compiles_nothing(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.update(TRITON_CACHE_DIR=str(tmp_path / "triton-cache"), PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, str(ROOT / "tests" / "front_end_refusal_worker.py")],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout)
    assert got["child"]["accepted"] == {"compiled": True, "refusal": None}
    refusal = got["child"]["refused"]["refusal"]
    assert not got["child"]["refused"]["compiled"] and "a tile of at most 256 elements" in refusal
    assert got["ran"] == ["accepted"]  # the refused job never reached Triton in this process
    assert got["raised"] == {"accepted": None, "refused": "FrontEndRefusal"}
    assert got["reasons"]["accepted"] is None and "a tile of at most 256 elements" in got["reasons"]["refused"]
    assert got["refused"] == {"refused": refusal}  # the message the measure stage drops the candidate with
