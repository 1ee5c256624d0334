"""Which ``tl.dot`` operand loads Triton pipelines, and the shared memory that follows (issue 25).

Triton 3.6 turns a load into a multi-buffered async copy only when AxisInfo proves a vector of at least 32
bits along its contiguous dimension: a row stride or a mask bound that is not a multiple of 16 leaves an fp16
load one element wide, and the load is then staged through ONE shared buffer whatever ``num_stages`` is
(``tiletune.analysis.footprint.pipelined``).  The compile-only test checks the model's count against
``triton.compile(..., target=GPUTarget("cuda", 90, 32))`` at odd strides (no GPU).
"""

from __future__ import annotations

import pytest

import fixtures
from fixture_problems import kernel_spec, synthesis_inputs
from tiletune.analysis.expr import NUM_STAGES, NUM_WARPS, WGMMA
from tiletune.runtime.offline_compile import CompileJob, compile_in_subprocess
from tiletune.synthesis.alignment import alignment_params, alignment_shapes, bind_alignment


def _model_shared(name: str, shape: dict, tiles: dict, num_warps: int, num_stages: int) -> int:
    """The model's shared bytes for fixture ``name`` at ``shape`` and one config, as synthesis binds it."""
    fx = fixtures.load(name)
    _, spec = kernel_spec(fx)
    desc, shapes, dtypes, _ = synthesis_inputs(fx, spec, shape)
    sb = spec.footprint.shared_bytes
    env, _ = bind_alignment(alignment_params([sb]), alignment_shapes(spec, shapes), spec.name)
    env.update({f"esize_{p}": {"fp16": 2, "fp32": 4}[dt] for p, dt in dtypes.items()})
    env.update(shapes)
    env.update(tiles)
    env.update({NUM_WARPS: num_warps, NUM_STAGES: num_stages, WGMMA: 1})
    return sb.evaluate(env)


def test_the_trace_names_the_integers_that_align_each_operand_load():
    _, spec = kernel_spec(fixtures.load("matmul"))
    sb = spec.footprint.shared_bytes
    names = set(alignment_params([sb]))
    # A (M x K, K contiguous): its row stride and the K mask; B (K x N, N contiguous): its row stride and N
    assert {"stride_am", "K", "stride_bk", "N"} <= names
    assert "M" not in names  # a bound along a dimension that is not contiguous does not decide the vector


def test_an_odd_row_stride_stages_the_operand_once():
    tiles = {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 64}
    # N = 5000: B's row stride and its N bound are not multiples of 16 -> B one buffer (64x64 fp16 = 8192 B);
    # A (K = 4096) stays pipelined: mma.sync at M = 32, num_stages - 1 = 4 buffers of 32x64 fp16
    assert _model_shared("matmul", {"M": 96, "N": 5000, "K": 4096}, tiles, 4, 5) == 4 * 4096 + 8192
    # aligned sizes: both operands 4 buffers deep
    assert _model_shared("matmul", {"M": 96, "N": 5120, "K": 4096}, tiles, 4, 5) == 4 * (4096 + 8192)


def test_unknown_integers_keep_the_pipelined_count():
    env, notes = bind_alignment(["stride_am", "K", "N"], {"K": 1500, "N": 4096}, "k")
    assert env == {"align16_stride_am": 1, "align16_K": 0, "align16_N": 1}
    assert notes and "K=1500" in notes[0] and "'k'" in notes[0]


#: (fixture, shape, tiles, num_warps, num_stages): odd strides, wgmma and mma.sync, one operand or both
ODD_CASES = [
    ("matmul", {"M": 96, "N": 5000, "K": 4096}, {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 64}, 4, 5),
    ("matmul", {"M": 96, "N": 5000, "K": 4096}, {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 64}, 4, 4),
    ("block_ptr_matmul", {"M": 200, "N": 3000, "K": 1500}, {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64}, 4, 4),
]


@pytest.mark.slow
def test_odd_strides_shared_bytes_match_the_compiler():
    jobs, expected = [], []
    for name, shape, tiles, warps, stages in ODD_CASES:
        fx = fixtures.load(name)
        _, spec = kernel_spec(fx)
        desc, _, _, _ = synthesis_inputs(fx, spec, shape)
        kname = getattr(fx.KERNEL, "__name__", None) or fx.KERNEL.fn.__name__
        jobs.append(CompileJob(file=fx.__file__, kernel=kname, args=desc, constexprs=dict(tiles),
                               num_warps=warps, num_stages=stages))
        expected.append(_model_shared(name, shape, tiles, warps, stages))
    results = compile_in_subprocess(jobs, workers=2)
    got = [r.shared for r in results]
    assert all(r.ok for r in results), [r.error for r in results]
    assert got == expected, list(zip(ODD_CASES, got, expected))


def _inline(body: str, params: str):
    import textwrap

    from tiletune.analysis import analyze_source

    src = ("import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(" + params + "):\n"
           + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n")
    return analyze_source(src, "k.py").kernels[0]


_WRAPPED = """
rn = tl.program_id(0) * BN + tl.arange(0, BN)
rk = tl.arange(0, BK)
{offs}
a = tl.load(a_ptr + tl.arange(0, BM)[:, None] * stride_a + rk[None, :])
acc = tl.zeros((BM, BN), dtype=tl.float32)
for k in range(0, K, BK):
    b = tl.load(b_ptr + rk[:, None] * stride_b + rbn[None, :])
    acc += tl.dot(a, b)
tl.store(c_ptr + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :], acc)
"""
_WRAPPED_PARAMS = "a_ptr, b_ptr, c_ptr, N, K, stride_a, stride_b, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr"


def test_a_modulo_on_the_contiguous_index_decides_unless_hinted():
    plain = _inline(_WRAPPED.format(offs="rbn = rn % N"), _WRAPPED_PARAMS)
    hinted = _inline(_WRAPPED.format(offs="rbn = tl.max_contiguous(tl.multiple_of(rn % N, BN), BN)"), _WRAPPED_PARAMS)
    # B's contiguous index wrapped with % N: N's divisibility decides (AxisInfo's rem), the hints restore it
    assert "N" in alignment_params([plain.footprint.shared_bytes])
    assert "N" not in alignment_params([hinted.footprint.shared_bytes])
    assert "stride_b" in alignment_params([hinted.footprint.shared_bytes])
    # a stride times 16 is 16-divisible whatever the stride (AxisInfo multiplies divisibilities)
    scaled = _inline(_WRAPPED.format(offs="rbn = tl.multiple_of(rn % N, BN)").replace("* stride_b", "* (stride_b * 16)"),
                     _WRAPPED_PARAMS)
    assert "stride_b" not in alignment_params([scaled.footprint.shared_bytes])


def test_a_32_bit_operand_is_pipelined_even_unaligned():
    spec = _inline(_WRAPPED.format(offs="rbn = rn % N"), _WRAPPED_PARAMS)
    sb = spec.footprint.shared_bytes
    env = {"BM": 64, "BN": 64, "BK": 32, NUM_WARPS: 4, NUM_STAGES: 4, WGMMA: 1, "esize_a_ptr": 2, "esize_c_ptr": 4,
           "align16_N": 0, "align16_stride_b": 0, "align16_stride_a": 0}
    # fp16 B, N odd: one 32x64 buffer beside A (loaded before the loop: held once)
    assert sb.evaluate({**env, "esize_b_ptr": 2}) == 64 * 32 * 2 + 32 * 64 * 2
    # fp32 B: a 1-element vector is 32 bits, cp.async still copies it: num_stages (wgmma) buffers
    assert sb.evaluate({**env, "esize_b_ptr": 4, "esize_a_ptr": 4}) == 64 * 32 * 4 + 4 * 32 * 64 * 4


@pytest.mark.slow
def test_fp32_operands_with_an_odd_stride_are_still_multi_buffered_by_the_compiler():
    import torch

    from tiletune.runtime.offline_compile import describe_args

    fx = fixtures.load("matmul")
    _, spec = kernel_spec(fx)
    sb = spec.footprint.shared_bytes
    jobs, expected = [], []
    for bm, bn, bk in ((64, 64, 32), (32, 64, 32)):  # wgmma (tf32) and mma.sync
        desc = describe_args(fx.make_args({"M": 96, "N": 5000, "K": 4096}, device="meta", dtype=torch.float32))
        tiles = {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk}
        jobs.append(CompileJob(file=fx.__file__, kernel="matmul_kernel", args=desc, constexprs=tiles, num_warps=4,
                               num_stages=4))
        ints = {k: v for k, v in desc.items() if isinstance(v, int) and not isinstance(v, bool)}
        env, _ = bind_alignment(alignment_params([sb]), alignment_shapes(spec, ints), spec.name)
        env.update({**ints, **tiles, NUM_WARPS: 4, NUM_STAGES: 4, WGMMA: 1,
                    "esize_a_ptr": 4, "esize_b_ptr": 4, "esize_c_ptr": 4})
        expected.append(sb.evaluate(env))
    got = [r.shared for r in compile_in_subprocess(jobs, workers=2)]
    # N = 5000 is odd, but a 1-element fp32 vector is 32 bits: cp.async copies it, both operands are staged
    assert got == expected == [4 * (64 * 32 + 32 * 64) * 4, 3 * (32 * 32 + 32 * 64) * 4]


def test_a_launch_whose_strides_align_otherwise_is_tuned_apart(tmp_path, monkeypatch):
    """The same ``key`` with a row stride of other alignment: one pipelining decides shared memory for the
    other no longer (a winner of one shared buffer may need num_stages of them), so it is tuned again, as
    Triton compiles it again; each launch computes the product."""
    import torch

    import tiletune

    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(tmp_path))
    fx = fixtures.load("matmul")
    tuned = tiletune.autotune(configs=[], key=fx.KEY, target="h100", top_k=2)(fx.KERNEL)
    shape = {"M": 32, "N": 32, "K": 32}
    aligned = fx.make_args(shape)
    fx.launch(tuned, aligned)
    wide = torch.randn(32, 40, dtype=torch.float16)
    odd = fx.make_args(shape)
    odd["a_ptr"] = wide[:, :32]
    odd["stride_am"], odd["stride_ak"] = odd["a_ptr"].stride()
    assert odd["stride_am"] == 40  # not a multiple of 16: A's rows are not 16-byte aligned
    fx.launch(tuned, odd)
    assert len(tuned._fast) == 2
    for args in (aligned, odd):
        torch.testing.assert_close(args["c_ptr"].float(), fx.reference(args)[0], **fx.TOLERANCE)


def test_the_key_the_model_and_the_offline_compile_read_one_specialisation_of_an_integer():
    """Triton compiles 1 as a constant and marks multiples of 16 divisible by 16: the tuning key, the model's
    align16_ symbols and the offline compile's attributes all say so through tiletune.specialization."""
    from tiletune.runtime.binding import Binder
    from tiletune.runtime.offline_compile import specialize

    fx = fixtures.load("matmul")
    names = list(fx.KERNEL.arg_names)
    binder = Binder("matmul_kernel", names, fx.KEY)
    binder.key_alignment(["stride_am"])
    args = fx.make_args({"M": 32, "N": 32, "K": 32})
    keys = {}
    for stride in (1, 32, 40):
        keys[stride] = binder.key((), dict(args, stride_am=stride))
    assert keys[1] == keys[32] != keys[40]
    env, _ = bind_alignment(["s1", "s32", "s40"], {"s1": 1, "s32": 32, "s40": 40}, "k")
    assert env == {"align16_s1": 1, "align16_s32": 1, "align16_s40": 0}
    sig, values, attrs = specialize([("a", False), ("b", False), ("c", False)], {"a": 1, "b": 32, "c": 40}, {})
    assert values == {"a": 1} and attrs == {(1,): [["tt.divisibility", 16]]} and sig["c"] == "i32"
