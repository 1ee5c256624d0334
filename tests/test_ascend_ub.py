"""The Ascend UB planner (tiletune/synthesis/constraints/ascend_ub.py), one rule at a time, on real kernels.

Each test evaluates :func:`ub_bytes` on a fixture, a liger-kernel ``_ascend``
kernel or a labelled-set kernel and checks the bytes the rule predicts.
"""

import pytest

from tests.corpus import library_root
from tests.fixture_problems import fixture_problem
from tiletune.analysis import analyze_file, analyze_source
from tiletune.analysis.expr import const
from tiletune.synthesis import check_config, synthesize
from tiletune.synthesis.constraints.ascend import RETRY_ENV
from tiletune.synthesis.constraints.ascend_ub import ub_bytes

KERNELS = "tests/data/ascend_truth_kernels.py"
F32 = {"inp": "fp32", "fill_mask": "int32", "out": "fp32"}


def _ub(spec, dtypes, env, copies=1):
    e = ub_bytes(spec, dtypes, const(copies))
    assert e is not None, spec.name
    return e.evaluate(env)


def test_index_and_mask_tiles_take_no_buffer():
    """masked_fill one block: fill mask (int32 -> int1) and the kept values; offsets and masks are metadata."""
    spec = analyze_file(KERNELS).kernel("masked_fill_one_block")
    b = 32768
    # the int32 mask load holds its int1 cast in place (1-D narrowing), the fp32 values load beside it, and
    # the store under `~fill & in_range` (a mask from loaded data) reads its fp32 destination back into UB
    # (Triton-Ascend's discrete-mask-access-conversion); offsets and `offs < N` take no buffer
    assert _ub(spec, F32, {"BLOCK_SIZE": b}) == 4 * b + 4 * b + 4 * b + b
    assert spec.footprint.live_bytes.evaluate({"BLOCK_SIZE": b, "esize_fill_mask": 4, "esize_inp": 4}) > 4 * b + 4 * b + b


def test_elementwise_results_reuse_a_dying_operand():
    """vector_add: z = x + y takes x's buffer (same width, last use): two tiles, not three."""
    spec, shapes, dtypes, _ = fixture_problem("vector_add", {"n_elements": 1 << 20})
    assert _ub(spec, dtypes, {"BLOCK_SIZE": 1024}) == 2 * 4 * 1024


def test_loop_copies_are_multibuffered_and_accumulators_share_their_iter_arg():
    """sum_axis: the loop's load is doubled with multibuffer; acc += ... stays one [BLOCK_M] buffer."""
    spec, shapes, dtypes, _ = fixture_problem("sum_axis", {"M": 8192, "N": 8192})
    env = {"BLOCK_M": 16, "BLOCK_N": 1024}
    one, two = _ub(spec, dtypes, env, 1), _ub(spec, dtypes, env, 2)
    assert two - one == 4 * 16 * 1024  # one more copy of the fp32 [16, 1024] load, nothing else
    assert one == 4 * 16 * 1024 + 2 * 4 * 16  # the tile, the accumulator and its reduced row


def test_matmul_cube_tiles_stay_out_of_ub():
    """Operands go GM->L1, the accumulator stays in L0C and leaves through the fixpipe (cast + store)."""
    spec, shapes, dtypes, _ = fixture_problem("matmul", {"M": 4096, "N": 4096, "K": 4096})
    assert _ub(spec, dtypes, {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64}) == 0


def test_a_dot_result_read_by_a_vector_op_is_counted(tmp_path):
    src = '''
import triton
import triton.language as tl

@triton.jit
def mm_relu_scale(a_ptr, b_ptr, c_ptr, s_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    s = tl.load(s_ptr + rn)
    out = acc * s[None, :]
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], out)
'''
    path = tmp_path / "mm_scale.py"
    path.write_text(src)
    spec = analyze_file(str(path)).kernel("mm_relu_scale")
    dt = {"a_ptr": "fp16", "b_ptr": "fp16", "c_ptr": "fp32", "s_ptr": "fp32"}
    bm, bn = 128, 128
    # the accumulator copied into UB for `acc * s` (in place), and the scale row; operands stay in L1
    assert _ub(spec, dt, {"BM": bm, "BN": bn, "BK": 64}) == 4 * bm * bn + 4 * bn


def test_kernels_the_analysis_could_not_follow_keep_the_analysis_figure():
    src = '''
import triton
import triton.language as tl
from somewhere import helper

@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = helper(tl.load(x_ptr + offs, mask=offs < n))
    tl.store(x_ptr + offs, x, mask=offs < n)
'''
    spec = analyze_source(src).kernel("k")
    assert ub_bytes(spec, {"x_ptr": "fp32"}, const(1)) is None


def test_liger_geglu_forward_is_counted_below_the_live_set():
    root = library_root("liger_kernel")
    if root is None:
        pytest.skip("dev corpus not fetched (bench/fetch_corpus.sh)")
    spec = analyze_file(str(root / "ops/backends/_ascend/ops/geglu.py")).kernel("_geglu_forward_kernel_flat")
    dt = {"a_ptr": "bf16", "b_ptr": "bf16", "c_ptr": "bf16"}
    env = {"BLOCK_SIZE": 8192}
    planned = _ub(spec, dt, env, 2)
    live = spec.footprint.live_bytes.evaluate({**env, "esize_a_ptr": 2, "esize_b_ptr": 2, "num_stages": 2})
    assert planned < live
    # liger launches 8192 (its ub_manager: multiplier 4 x 2 B per element within 80% of the UB)
    assert check_config(spec, {"BLOCK_SIZE": 8192}, None, None, {"total_elements": 1 << 24}, dt, "ascend910b3") == []


def test_multibuffer_retry_switch(monkeypatch):
    """Default: one copy is the hard need (bishengir-compile retries without multibuffer); with the
    switch at 0 (an older compiler, CANN 8.5.0) the multibuffered copies are hard."""
    spec, shapes, dtypes, _ = fixture_problem("sum_axis", {"M": 8192, "N": 8192})
    kw = {"BLOCK_M": 32, "BLOCK_N": 1024}  # 128 KiB fp32 tile: fits once, not twice
    monkeypatch.setenv(RETRY_ENV, "0")
    assert check_config(spec, {**kw, "multibuffer": False}, None, None, shapes, dtypes, "ascend910b3") == []
    why = check_config(spec, {**kw, "multibuffer": True}, None, None, shapes, dtypes, "ascend910b3")
    assert len(why) == 1 and why[0].startswith("UB: needs")
    monkeypatch.delenv(RETRY_ENV)  # the same kernel and sizes in one process: the model is built again
    assert check_config(spec, {**kw, "multibuffer": True}, None, None, shapes, dtypes, "ascend910b3") == []
    monkeypatch.setenv(RETRY_ENV, "yes")
    with pytest.raises(ValueError, match="TILETUNE_ASCEND_MULTIBUFFER_RETRY='yes'"):
        check_config(spec, {**kw, "multibuffer": True}, None, None, shapes, dtypes, "ascend910b3")
    monkeypatch.delenv(RETRY_ENV)
    res = synthesize(spec, shapes, dtypes, "ascend910b3", hints={"BLOCK_M": [32], "BLOCK_N": [1024]})
    # the compiler would drop multibuffer here: the synthesis offers the tile without it
    assert {c.extra.get("multibuffer") for c in res.candidates} == {False}


def test_a_kernel_file_edited_between_syntheses_is_read_again(tmp_path):
    """The kernel's loops, ifs and bound names are read once per file version (every shape and target of a
    tune asks again) and read anew when the file changes: a cached reading never outlives its source."""
    import os

    from tiletune.synthesis.constraints.ascend_ub import _structure

    one_loop = '''
import triton
import triton.language as tl

@triton.jit
def rows(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    for start in range(0, N, BLOCK):
        tl.store(y_ptr + start + offs, tl.load(x_ptr + start + offs) * 2)
'''
    path = tmp_path / "rows.py"
    path.write_text(one_loop)
    spec = analyze_file(str(path)).kernel("rows")
    first = _structure(spec)
    assert _structure(spec) is first  # the same file version: read once
    assert len(first[0]) == 1
    path.write_text(one_loop.replace("    offs = tl.arange(0, BLOCK)\n",
                                     "    offs = tl.arange(0, BLOCK)\n    for _ in range(2):\n        pass\n"))
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert len(_structure(spec)[0]) == 2  # the edited file's two loops
