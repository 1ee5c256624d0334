"""The README's first command: examples/quickstart.py tunes a bundled kernel with configs=[] and says why,
then synth-configs prints configs for it (real processes, as a new user runs them)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_quickstart_tunes_and_explains_its_choice(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), TILETUNE_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("TRITON_INTERPRET", None)  # the example sets it itself when there is no GPU
    env.pop("TILETUNE_TARGET", None)
    done = subprocess.run([sys.executable, "examples/quickstart.py"], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "result matches torch; chosen config: BLOCK_M:" in out
    assert "chosen: [" in out and "<- winner" in out and "margin:" in out
    assert (tmp_path / "cache" / "kernel").is_dir()
    again = subprocess.run([sys.executable, "examples/quickstart.py"], capture_output=True, text=True, env=env,
                           cwd=ROOT, timeout=600)
    assert again.returncode == 0 and "chosen config:" in again.stdout  # the second run reuses the cache


def test_synth_configs_on_the_quickstart_prints_configs():
    done = subprocess.run([sys.executable, "-m", "tiletune.cli", "synth-configs", "examples/quickstart.py",
                           "--shape", "M=4096", "--shape", "N=4096", "--shape", "K=4096", "--target", "h100"],
                          capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)), cwd=ROOT,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    scope: dict = {}
    exec("import triton\n" + done.stdout, scope)
    assert len(scope["configs"]) == 16 and all("BLOCK_K" in c.kwargs for c in scope["configs"])
