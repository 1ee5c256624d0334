"""The launcher built beside the first compiles (tiletune.runtime.launcher_prebuild) is the one a launch
of any config would build: Triton keys its disk cache by the generated source, so that source must not
depend on what only the compile knows (constexpr values, the compiled metadata)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tiletune.runtime.launcher_prebuild import prepare_launcher_build

ROOT = Path(__file__).resolve().parent.parent

nvidia_driver = pytest.importorskip("triton.backends.nvidia.driver")
if not hasattr(nvidia_driver, "make_launcher"):  # Triton 3.7+: one generic launcher, nothing built per kernel
    pytest.skip("this Triton builds no launcher per signature", allow_module_level=True)


def test_the_prebuilt_launcher_source_is_what_every_compiled_config_launches_with(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.update(TRITON_CACHE_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, str(ROOT / "tests" / "launcher_source_worker.py")],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout) == {"same_source": {"256w4": True, "1024w8": True, "64w1": True}}


def test_no_launcher_is_built_for_a_device_this_process_does_not_launch_on():
    """On a host without that GPU (CI) the first launch keeps building it, as without the prebuild; a
    signature with tensor descriptors is never prebuilt (its launcher depends on the compiled kernel)."""
    import torch
    from triton.backends.compiler import GPUTarget

    from tiletune.runtime.compile_workers import CompileSpec

    def spec(signature):
        return CompileSpec(None, signature, {}, {}, {"num_warps": 4}, GPUTarget("cuda", 90, 32))

    assert prepare_launcher_build(spec({"x_ptr": "*fp32", "desc": "tensordesc<fp16[64, 64]>"})) is False
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    assert prepare_launcher_build(spec({"x_ptr": "*fp32", "n": "i32"})) is False
