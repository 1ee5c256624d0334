"""Start the ranks of a real torch.distributed (gloo) job and collect what each saw.

``run_ranks(worker, tmp_path, scenario, world, opts)`` runs ``world``
processes of ``python WORKER SCENARIO RANK WORLD INIT_FILE OUT_DIR OPTS_JSON``
(joined through ``file://INIT_FILE``), each writing ``OUT_DIR/rank<r>.json``.
A rank that does not finish in ``timeout`` seconds is a hang and fails the
test; so does a crash.  ``TILETUNE_*`` / ``TRITON_DIST_*`` variables of the
test process are not passed on.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: Seconds a rank may take before it counts as a hang: generous, so that a saturated machine (two CPU
#: burners on two cores) never reaches it; a real hang still fails the test.
HANG_S = 300.0


def run_ranks(worker: Path, tmp_path: Path, scenario: str, world: int, opts: dict, tag: str = "run",
              timeout: float = HANG_S, cwd: Optional[Path] = None) -> list:
    out = tmp_path / tag
    out.mkdir()
    init = tmp_path / f"{tag}.init"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TILETUNE_", "TRITON_DIST_"))}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["OMP_NUM_THREADS"] = "1"
    env["TRITON_INTERPRET"] = "1"
    procs = [
        subprocess.Popen(
            [sys.executable, str(worker), scenario, str(r), str(world), str(init), str(out), json.dumps(opts)],
            cwd=str(cwd or ROOT), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        for r in range(world)
    ]
    deadline = time.monotonic() + timeout
    logs = []
    try:
        for p in procs:
            try:
                logs.append(p.communicate(timeout=max(1.0, deadline - time.monotonic()))[0])
            except subprocess.TimeoutExpired:
                pytest.fail(f"{scenario}: a rank did not finish in {timeout} s (hang?)")
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    results = []
    for r, p in enumerate(procs):
        path = out / f"rank{r}.json"
        assert p.returncode == 0 and path.exists(), f"rank {r} crashed (rc={p.returncode}):\n{logs[r]}"
        results.append(json.loads(path.read_text()))
    return results
