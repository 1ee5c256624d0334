"""Static signals of tile parameters that may carry meaning: analyze, synth-configs and the lint.

The kernels are real source: tests/data/meaning_kernels.py (the four patterns), the bundled
fixtures (free tiles: no signal), small kernels in patterns that must not be flagged, and the dev
corpus (slow).
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tiletune.analysis import analyze_file, analyze_source
from tiletune.lint.registry import lint_source

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "meaning_kernels.py"
CORPUS = ROOT / ".corpus"


def _env():
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def test_the_four_patterns_are_found_with_their_reason():
    module = analyze_file(DATA)
    meaning = {k.name: k.meaning for k in module.kernels}
    assert list(meaning["group_scaled_matmul_kernel"]) == ["BLOCK_K"]
    assert "k_start // group_k" in meaning["group_scaled_matmul_kernel"]["BLOCK_K"][0]
    assert list(meaning["stepped_scale_matmul_kernel"]) == ["BLOCK_K"]
    assert "s_ptrs += stride_ask" in meaning["stepped_scale_matmul_kernel"]["BLOCK_K"][0]
    assert list(meaning["routed_matmul_kernel"]) == ["BLOCK_M"]
    assert "block_expert_ptr + pid_m" in meaning["routed_matmul_kernel"]["BLOCK_M"][0]
    assert list(meaning["block_partial_sum_kernel"]) == ["BLOCK"]


def test_no_fixture_kernel_is_flagged():
    for path in sorted((ROOT / "fixtures").glob("*.py")):
        for k in analyze_file(path).kernels:
            assert k.meaning == {}, f"{path.name}:{k.name}: {k.meaning}"


_FREE = '''
import triton
import triton.language as tl


@triton.jit
def persistent_mm(a_ptr, c_ptr, M, N, NUM_SMS, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_tiles = tl.cdiv(M, BLOCK_M) * num_pid_n
    for tile_id in range(tl.program_id(0), num_tiles, NUM_SMS):
        pid_m = tile_id // num_pid_n
        pid_n = tile_id % num_pid_n
        batch = tile_id // M
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        x = tl.load(a_ptr + batch + rm[:, None] * N + rn[None, :])
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], x)


@triton.jit
def rows_per_program(x_ptr, y_ptr, mean_ptr, n_rows, n_cols, stride, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    row0 = tl.program_id(0) * ROWS
    x_ptr += row0 * stride
    for r in range(ROWS):
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0)
        tl.store(mean_ptr + row0 + r, tl.sum(x, axis=0) / n_cols)
        tl.store(y_ptr + (row0 + r) * stride + cols, x, mask=cols < n_cols)
        x_ptr += stride


@triton.jit
def per_element_groups(x_ptr, s_ptr, y_ptr, n, group, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    s = tl.load(s_ptr + offs // group, mask=offs < n)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * s, mask=offs < n)
'''


def test_free_tiles_in_persistent_row_loop_and_per_element_group_patterns_are_not_flagged():
    module = analyze_source(_FREE, "free.py")
    assert {k.name: k.meaning for k in module.kernels} == {
        "persistent_mm": {}, "rows_per_program": {}, "per_element_groups": {}}


def _synth(*extra):
    return subprocess.run(
        [sys.executable, "-m", "tiletune.synthesis.cli", str(DATA), "--kernel", "group_scaled_matmul_kernel",
         "--shape", "M=4096", "--shape", "N=4096", "--shape", "K=4096", "--shape", "group_k=128",
         "--target", "h100", *extra],
        capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=300)


def test_synth_configs_refuses_a_meaning_parameter_until_fixed_or_hinted():
    refused = _synth()
    assert refused.returncode == 2
    assert "BLOCK_K may carry meaning" in refused.stderr
    assert "--fixed BLOCK_K=<value>" in refused.stderr and "--hint BLOCK_K=" in refused.stderr
    hinted = _synth("--hint", "BLOCK_K=32,64,128", "--top-k", "4")
    assert hinted.returncode == 0, hinted.stderr
    assert "'BLOCK_K': 256" not in hinted.stdout and "'BLOCK_K'" in hinted.stdout
    fixed = _synth("--fixed", "BLOCK_K=64", "--top-k", "2")
    assert fixed.returncode == 0, fixed.stderr
    assert "BLOCK_K" not in fixed.stdout


def test_analyze_says_may_carry_meaning():
    out = subprocess.run([sys.executable, "-m", "tiletune.cli", "analyze", str(DATA), "--kernel",
                          "routed_matmul_kernel"], capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "may carry meaning: BLOCK_M" in out.stdout


def test_lint_flags_the_routed_kernel_under_configs_empty_and_not_with_block_m_at_launch():
    body = textwrap.dedent(DATA.read_text().split("@triton.jit\ndef routed_matmul_kernel", 1)[1].split("\n\n\n")[0])
    src = ("import tiletune\nimport triton\nimport triton.language as tl\n\n\n"
           "@tiletune.autotune(configs=[], key=['N', 'K'])\n@triton.jit\ndef routed_matmul_kernel" + body + "\n")
    found = [d for d in lint_source(src, "routed.py") if d.code == "TT010"]
    assert [(d.kernel, d.param) for d in found] == [("routed_matmul_kernel", "BLOCK_M")]
    launched = src + ("\n\ndef run(a, w, c, rows, experts, padded, M, N, K):\n"
                      "    routed_matmul_kernel[lambda meta: (1,)](a, w, c, rows, experts, padded, M, N, K, 1, 1, 1, 1, 1, "
                      "1, 1, BLOCK_M=16)\n")
    assert [d for d in lint_source(launched, "routed.py") if d.code == "TT010"] == []


@pytest.mark.slow
def test_dev_corpus_block_scaled_and_group_quantized_kernels_are_flagged():
    if not CORPUS.exists():
        pytest.skip("dev corpus not fetched (bash bench/fetch_corpus.sh)")
    fp8 = analyze_file(CORPUS / "torchao/torchao/kernel/blockwise_quantization.py").kernel("blockwise_fp8_gemm_kernel")
    assert "BLOCK_SIZE_K" in fp8.meaning
    gem = analyze_file(CORPUS / "gemlite/gemlite-0.6.0.post2/gemlite/triton_kernels/gemm_kernels.py")
    assert "BLOCK_SIZE_K" in gem.kernel("gemm_INT_kernel").meaning
