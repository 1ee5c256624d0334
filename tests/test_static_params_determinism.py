"""The analysis of a kernel is the same whatever ``PYTHONHASHSEED`` the process runs under:
``KernelSpec.static_params`` (which launch constants the runtime must specialise on,
runtime/autotuner.py ``spec``) and the whole analysis JSON.

The kernel (tests/data/reassigned_params_kernel.py) moves pointer parameters with ``+=`` and then
binds ``tl.constexpr`` locals, so a parameter's first value dies while new values are made: the
interpreter once keyed parameters by ``id()`` of that value, and a new value given the dead one's
address was taken for the parameter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

KERNEL = Path(__file__).parent / "data" / "reassigned_params_kernel.py"
ROOT = Path(__file__).resolve().parents[1]

# The analysis, plain and specialised, as JSON on stdout.
_SCRIPT = """
import json, sys
from pathlib import Path
from tiletune.analysis import analyze_source
src = Path(sys.argv[1]).read_text()
out = {}
for label, constants in (("plain", None), ("varlen", {"IS_VARLEN": True, "USE_G": False})):
    module = analyze_source(src, sys.argv[1], constants=constants)
    out[label] = {
        "json": module.to_dict(),
        "static_params": {k.name: k.static_params for k in module.kernels},
    }
print(json.dumps(out, sort_keys=True))
"""

SEEDS = ("0", "1", "2", "3", "4")


def _analyse(seed: str) -> dict:
    env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(KERNEL)], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_analysis_is_the_same_under_every_hash_seed():
    runs = {seed: _analyse(seed) for seed in SEEDS}
    first = runs[SEEDS[0]]
    for seed, run in runs.items():
        assert run["plain"]["static_params"] == first["plain"]["static_params"], f"PYTHONHASHSEED={seed}"
        assert run["varlen"]["static_params"] == first["varlen"]["static_params"], f"PYTHONHASHSEED={seed}"
        assert run == first, f"analysis JSON differs under PYTHONHASHSEED={seed}"
    # Only parameters a compile-time test reads (``g is not None``), directly or through a local bound
    # from them: not ``scale`` (``... * scale`` is read by no test), nor ``dg``, moved by ``+=`` before
    # ``LN2: tl.constexpr = ...`` is bound, nor ``T``, rebound under ``IS_VARLEN``.
    assert first["plain"]["static_params"]["chunk_bwd_kernel"] == ["IS_VARLEN", "USE_G", "g"]
    assert first["varlen"]["static_params"]["chunk_bwd_kernel"] == ["IS_VARLEN", "USE_G", "g"]
