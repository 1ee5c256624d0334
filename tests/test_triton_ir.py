"""The oracle (issue 24): the live kernel lowered through Triton's front end, read from its IR.

Lowering needs real JITFunctions, and this process runs the interpreter (conftest.py), so the
in-process checks run in tests/ir_oracle_worker.py without TRITON_INTERPRET; the child-process path
(the one an interpreted kernel takes) is exercised here directly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tiletune.runtime.triton_ir import LoweringError, lower_facts_in_subprocess, read_ir

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


@pytest.fixture(scope="module")
def worker_out():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, str(HERE / "ir_oracle_worker.py")], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_helpers_across_modules_give_the_tile_shapes(worker_out):
    # a one-line helper and a helper choosing a branch on `BS: tl.constexpr = None`, in another module
    got = {k: v["memory"] for k, v in worker_out["tiled_exp"].items()}
    assert got == {
        "16x32": [["load", [16, 32], "fp16"], ["store", [16, 32], "fp16"]],
        "32x32": [["load", [32, 32], "fp16"], ["store", [32, 32], "fp16"]],
        "16x64": [["load", [16, 64], "fp16"], ["store", [16, 64], "fp16"]],
    }
    assert worker_out["tiled_exp_tiling"] == ["BS", "BT"]


def test_dot_extents_and_a_dot_under_16_is_refused(worker_out):
    assert worker_out["dot"] == [64, 32, 16, "fp16"]
    refused = worker_out["dot_refused"]
    assert list(refused) == ["1"] and "K >= 16" in refused["1"]


def test_tile_parameters_and_trip_count_parameters_are_told_apart(worker_out):
    assert worker_out["looped"] == {"tiling": ["BLOCK"], "trip": ["CHUNK"]}


def test_a_probe_is_lowered_once_per_process_and_again_when_the_kernel_changes(worker_out):
    # the candidates screen, the tiling probes and later keys share their lowerings; an edited source is
    # another kernel (Triton's cache_key), lowered anew
    assert worker_out["memo"] == {"same": True, "other_probe": True, "edited_source": True}


def test_a_refusal_carries_tritons_message(worker_out):
    assert worker_out["bad_signature"] and "small_dot_kernel" in worker_out["bad_signature"]


def test_child_process_lowers_an_interpreted_kernel_by_name():
    sys.path.insert(0, str(HERE / "data"))
    try:
        probe = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BT": "constexpr",
                               "BS": "constexpr"}, "constexprs": {"BT": 8, "BS": 16}}
        bad = {"signature": probe["signature"], "constexprs": {"BT": 8, "BS": 3}}
        facts, refused = lower_facts_in_subprocess("ir_kernels.kernels", "tiled_exp_kernel", [probe, bad])
    finally:
        sys.path.remove(str(HERE / "data"))
    assert [(m.kind, m.shape, m.dtype) for m in facts.memory] == [("load", (8, 16), "fp32"), ("store", (8, 16), "fp32")]
    assert isinstance(refused, LoweringError) and "power of 2" in str(refused)


def test_child_process_names_a_kernel_it_cannot_import():
    with pytest.raises(LoweringError, match="cannot import no_such_module.k"):
        lower_facts_in_subprocess("no_such_module", "k", [])


def test_read_ir_reads_block_pointers_descriptors_atomics_and_scalars():
    text = """
    %c32_i32 = arith.constant 32 : i32
    %s = arith.bitcast %c32_i32 : i32 to i32
    %0 = tt.load %p : !tt.ptr<tensor<64x32xbf16>>
    %1 = tt.descriptor_load %d[%a, %b] : !tt.tensordesc<tensor<128x64xf16>> -> tensor<128x64xf16>
    %2 = tt.atomic_rmw fadd, acq_rel, gpu, %q, %v, %m : (tensor<256x!tt.ptr<f32>>, tensor<256xf32>, tensor<256xi1>) -> tensor<256xf32>
    %3 = tt.load %r : !tt.ptr<i32>
    tt.store %p2, %v2 : tensor<8x16x!tt.ptr<f16>>
    %4 = scf.for %k = %z to %n step %s iter_args(%a0 = %i) -> (tensor<2x2xf32>)  : i32 {
    %5 = tt.dot %x, %y, %acc, inputPrecision = tf32 : tensor<2x16x32xf16> * tensor<2x32x64xf16> -> tensor<2x16x64xf32>
    """
    facts = read_ir(text)
    assert [(m.kind, m.shape, m.dtype) for m in facts.memory] == [
        ("load", (64, 32), "bf16"), ("load", (128, 64), "fp16"), ("atomic", (256,), "fp32"),
        ("load", (), "int32"), ("store", (8, 16), "fp16")]
    assert [(d.m, d.n, d.k) for d in facts.dots] == [(16, 64, 32)]
    assert [(lp.lower, lp.upper, lp.step) for lp in facts.loops] == [(None, None, 32)]
    # register tiles count as tiles too (the loop-carried 2x2 accumulator is never loaded or stored)
    assert (2, 2) in facts.tensor_shapes and (2, 16, 32) in facts.tensor_shapes


def _synth(args, cwd):
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "tiletune.synthesis.cli", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)


def test_synth_configs_import_finds_what_the_static_reader_missed_and_drops_refusals():
    proc = _synth(["ir_kernels/kernels.py", "--kernel", "capped_copy_kernel", "--shape", "n=4096", "--target", "h100",
                   "--import"], HERE / "data")
    assert proc.returncode == 0, proc.stderr
    assert "Triton's IR shows BLOCK sizing tiles" in proc.stderr
    assert "BLOCK is at most 16" in proc.stderr
    configs = [line for line in proc.stdout.splitlines() if "triton.Config" in line]
    assert configs and all("'BLOCK': 16" in line for line in configs)


def test_synth_configs_never_imports_without_the_flag(tmp_path):
    marker = tmp_path / "imported"
    kernel = tmp_path / "k.py"
    kernel.write_text(
        "import pathlib\nimport triton\nimport triton.language as tl\n"
        f"pathlib.Path({str(marker)!r}).write_text('yes')\n\n\n"
        "@triton.jit\ndef k(x_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)\n")
    proc = _synth([str(kernel), "--shape", "n=4096", "--target", "h100"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists()
    proc = _synth([str(kernel), "--shape", "n=4096", "--target", "h100", "--import"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert marker.read_text() == "yes"


def test_synth_configs_import_names_a_file_that_does_not_import(tmp_path):
    kernel = tmp_path / "broken.py"
    kernel.write_text(
        "import triton\nimport triton.language as tl\nimport no_such_dependency\n\n\n"
        "@triton.jit\ndef k(x_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n    tl.store(x_ptr + offs, tl.load(x_ptr + offs))\n")
    proc = _synth([str(kernel), "--shape", "n=4096", "--target", "h100", "--import"], tmp_path)
    assert proc.returncode == 2
    assert "importing" in proc.stderr and "no_such_dependency" in proc.stderr and "drop --import" in proc.stderr


def test_loop_signature_orders_runtime_and_constant_bounds():
    # a loop with a runtime bound next to constant ones (a grid-stride loop beside a tile loop): sorting
    # None against ints raised TypeError, and the oracle's reading of such a kernel failed as a whole
    from tiletune.runtime.triton_ir import IRFacts, LoopBounds

    facts = IRFacts(loops=[LoopBounds(0, 4096, 32), LoopBounds(None, None, 64), LoopBounds(0, None, 1)])
    other = IRFacts(loops=[LoopBounds(0, 4096, 32), LoopBounds(None, None, 128), LoopBounds(0, None, 1)])
    assert facts.loop_signature() != other.loop_signature()
    assert facts.loop_signature() == IRFacts(loops=list(reversed(facts.loops))).loop_signature()


_INCOMPLETE = '''
import triton
import triton.language as tl
{imports}

@triton.jit
def offsets(x, N: tl.constexpr):
    return {body}

@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + {call}
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))
'''


@pytest.mark.parametrize("case", ["not found", "run time", "not modelled"])
def test_the_incomplete_warning_names_what_is_unknown_and_the_fix_that_applies(case):
    # "make the helpers importable" only where a helper was not found; a followed helper or an op the
    # static reader does not model is read from Triton's IR at the first tuning
    from tiletune.analysis.frontend import analyze_source
    from tiletune.runtime.candidates import incomplete_message

    text = _INCOMPLETE.format(
        imports={"not found": "from .gone_helpers import gone",
                 "run time": "import importlib\nlate = importlib.import_module('pkg.helpers').late"}.get(case, ""),
        body="tl.full(x.shape, 0, tl.int32) + tl.arange(0, N)" if case == "not modelled" else "tl.arange(0, N)",
        call={"not found": "gone(BLOCK)", "run time": "late(BLOCK)"}.get(case, "offsets(n, BLOCK)"))
    spec = analyze_source(text, "/tmp/pkg/k.py").kernel("k")
    assert spec.incomplete
    on, off = incomplete_message("k", spec, True), incomplete_message("k", spec, False)
    assert "analysis of kernel 'k' is incomplete" in on
    if case == "not found":
        assert "make them importable" in on and "gone" in on
    else:
        assert "importable" not in on and "importable" not in off
        assert "Triton's IR is read at the first tuning" in on and "TILETUNE_IR_ORACLE=1" in off
        assert ("with no def or import it can follow" if case == "run time" else "does not model") in on
