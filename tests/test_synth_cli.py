"""synth-configs: pasteable output, JSON, errors and exit codes."""

import json
from pathlib import Path

import pytest
import triton

from tiletune.synthesis.cli import main

ROOT = Path(__file__).resolve().parent.parent
MATMUL = str(ROOT / "fixtures" / "matmul.py")
SOFTMAX = str(ROOT / "fixtures" / "softmax.py")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_python_output_execs_to_configs(capsys):
    code, out, err = run(capsys, MATMUL, "--shape", "M=4096", "--shape", "N=4096", "--shape", "K=4096", "--target", "h100")
    assert code == 0
    ns = {"triton": triton}
    exec(out, ns)  # the printed text is meant to be pasted into a module
    configs = ns["configs"]
    assert len(configs) == 16
    assert all(isinstance(c, triton.Config) for c in configs)
    assert set(configs[0].kwargs) == {"BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K"}
    assert configs[0].num_warps in (1, 2, 4, 8, 16, 32)
    assert "assumed dtypes" in err and "a_ptr=fp16" in err and "c_ptr=fp32" in err


def test_json_output_and_options(capsys):
    code, out, err = run(
        capsys,
        MATMUL,
        "--shape",
        "M=512,N=4096,K=11008",
        "--dtype",
        "a_ptr=bf16",
        "--dtype",
        "b_ptr=bf16",
        "--dtype",
        "c_ptr=bf16",
        "--target",
        "h200",
        "--top-k",
        "5",
        "--hint",
        "GROUP_SIZE_M=1,8",
        "--format",
        "json",
    )
    assert code == 0
    data = json.loads(out)
    assert data["kernel"] == "matmul_kernel" and data["target"] == "h200"
    assert len(data["configs"]) == 5 and data["feasible_count"] > 0
    assert all(c["kwargs"]["GROUP_SIZE_M"] in (1, 8) for c in data["configs"])
    assert "assumed" not in err


def test_explain_shows_model_and_costs(capsys):
    code, out, _ = run(
        capsys, SOFTMAX, "--shape", "n_cols=781", "--target", "ascend910b2", "--explain"  # (no launch grid seen: n_rows unknown)
    )
    assert code == 0
    assert "# variables:" in out and "BLOCK_SIZE in {1024}" in out
    assert "# constraints:" in out and "UB" in out
    assert "feasible points" in out and "predicted" in out
    ns = {"triton": triton}
    exec(out, ns)
    assert ns["configs"][0].kwargs["BLOCK_SIZE"] == 1024
    assert "multibuffer" in ns["configs"][0].kwargs


def test_missing_shapes_exit_2(capsys):
    code, out, err = run(capsys, MATMUL, "--shape", "M=512", "--target", "h100")
    assert code == 2 and out == ""
    assert "matmul_kernel" in err and "N, K" in err and "--shape M=" in err


def test_infeasible_exit_1(capsys):
    code, out, err = run(capsys, SOFTMAX, "--shape", "n_cols=100000", "--target", "ascend910b2")
    assert code == 1 and out == ""
    assert "no tiling" in err and "UB" in err and "Closest point" in err


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["--shape", "M=512", "--target", "tpu"], "unknown target"),
        (["--shape", "M=x"], "not an integer"),
        (["--shape", "M"], "NAME=VALUE"),
        (["--kernel", "nope", "--shape", "M=1"], "nope"),
        (["--dtype", "a_ptr=fp13", "--shape", "M=1"], "unknown dtype"),
    ],
)
def test_usage_errors_exit_2(capsys, argv, needle):
    code, _, err = run(capsys, MATMUL, *argv)
    assert code == 2
    assert needle in err


def test_missing_file_and_bad_flag(capsys, tmp_path):
    code, _, err = run(capsys, str(tmp_path / "nothere.py"), "--target", "h100")
    assert code == 2 and "nothere.py" in err
    code, _, _ = run(capsys, MATMUL, "--bogus")
    assert code == 2


def test_several_kernels_need_kernel_flag(capsys, tmp_path):
    src = tmp_path / "two.py"
    src.write_text(
        "import triton\nimport triton.language as tl\n\n"
        "@triton.jit\ndef a(x_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)\n\n"
        "@triton.jit\ndef b(x_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)\n"
    )
    code, _, err = run(capsys, str(src), "--shape", "n=4096", "--target", "h100")
    assert code == 2 and "--kernel" in err and "a, b" in err
    code, out, _ = run(capsys, str(src), "--kernel", "b", "--shape", "n=4096", "--target", "h100", "--top-k", "3")
    assert code == 0
    ns = {"triton": triton}
    exec(out, ns)
    assert len(ns["configs"]) == 3


def test_shape_of_a_tiling_constexpr_is_fixed(capsys):
    fa = str(ROOT / "fixtures" / "flash_attention.py")
    code, out, err = run(capsys, fa, "--shape", "N_CTX=4096,HEAD_DIM=64", "--target", "h100", "--top-k", "4")
    assert code == 0
    assert "HEAD_DIM given with --shape: fixed" in err
    ns = {"triton": triton}
    exec(out, ns)
    assert all("HEAD_DIM" not in c.kwargs for c in ns["configs"])
