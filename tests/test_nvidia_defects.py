"""Known Triton defects (synthesis/constraints/nvidia_defects.py): configs=[] never proposes them on the
targets and versions they apply to; a user's own config is not reported for them."""

import pytest

from tiletune.analysis import analyze_source
from tiletune.synthesis import check_config, synthesize
from tiletune.synthesis.constraints.nvidia_defects import triton_version
from tiletune.synthesis.enumerate import enumerate_feasible
from tiletune.synthesis.pipeline import build

# Chunked attention's output (three tl.dot, M = BT = 64): Triton 3.6 on an H100 computed it wrongly at
# 4 warps with BV = 16 or 32 (and died of an illegal memory access in a tune), never at 8 warps.
THREE_DOTS = '''
import triton
import triton.language as tl

@triton.jit
def attn_out(q_ptr, k_ptr, v_ptr, h_ptr, o_ptr, T, K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr,
             BK: tl.constexpr, BV: tl.constexpr):
    i_v = tl.program_id(0)
    i_t = tl.program_id(1)
    rt = i_t * BT + tl.arange(0, BT)
    rv = i_v * BV + tl.arange(0, BV)
    acc_o = tl.zeros((BT, BV), dtype=tl.float32)
    acc_a = tl.zeros((BT, BT), dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        q = tl.load(q_ptr + rt[:, None] * K + rk[None, :], mask=rt[:, None] < T, other=0.0)
        kt = tl.load(k_ptr + rt[None, :] * K + rk[:, None], mask=rt[None, :] < T, other=0.0)
        h = tl.load(h_ptr + rk[:, None] * V + rv[None, :])
        acc_o += tl.dot(q, h)
        acc_a += tl.dot(q, kt)
    v = tl.load(v_ptr + rt[:, None] * V + rv[None, :], mask=rt[:, None] < T, other=0.0)
    o = acc_o + tl.dot(acc_a.to(v.dtype), v)
    tl.store(o_ptr + rt[:, None] * V + rv[None, :], o, mask=rt[:, None] < T)
'''

ONE_DOT = '''
import triton
import triton.language as tl

@triton.jit
def mm(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=rm[:, None] < M, other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=rn[None, :] < N, other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))
'''

DT3 = {"q_ptr": "fp16", "k_ptr": "fp16", "v_ptr": "fp16", "h_ptr": "fp16", "o_ptr": "fp32"}
SHAPES3 = {"T": 4096, "K": 128, "V": 128}
applies = pytest.mark.skipif(triton_version() is None or triton_version() < (3, 6),
                             reason="the defect is reported from Triton 3.6 on")


def _points(source, name, shapes, dtypes, target, fixed=None):
    spec = analyze_source(source).kernel(name)
    model = build(spec, shapes, dtypes, target, fixed=fixed)
    table = enumerate_feasible(model)
    env = table.env()
    names = [v.name for v in model.space.vars]
    return spec, model, {tuple(int(env[n][i]) for n in names) for i in range(table.n)}, names


@applies
def test_multi_dot_kernel_never_gets_narrow_wgmma_at_4_warps_on_h100():
    spec, model, points, names = _points(THREE_DOTS, "attn_out", SHAPES3, DT3, "h100", fixed={"BT": 64})
    assert any(c.name.startswith("defect:narrow_wgmma") for c in model.constraints)
    at = {n: i for i, n in enumerate(names)}
    narrow_w4 = [p for p in points if p[at["BV"]] < 64 and p[at["num_warps"]] == 4]
    assert narrow_w4 == []
    # the same tiles stay at other warp counts, and wide tiles stay at 4 warps
    assert any(p[at["BV"]] == 32 and p[at["num_warps"]] == 8 for p in points)
    assert any(p[at["BV"]] == 64 and p[at["num_warps"]] == 4 for p in points)
    res = synthesize(spec, SHAPES3, DT3, "h100", fixed={"BT": 64})
    assert all(c.kwargs["BV"] >= 64 or c.num_warps != 4 for c in res.candidates)
    # a user's own config in the region is not reported (the region is wider than the configs that fail)
    assert check_config(spec, {"BK": 64, "BV": 32}, 4, 2, {**SHAPES3, "BT": 64}, DT3, "h100") == []
    # ... but the measured search's moves stay out of it: the descent stepped into it on the H100 (an illegal
    # memory access killed a first tune whose first batch was clean)
    (why,) = check_config(spec, {"BK": 64, "BV": 32}, 4, 2, {**SHAPES3, "BT": 64}, DT3, "h100", proposed=True)
    assert "triton-lang/triton#11366" in why
    from tiletune.runtime.candidates import SynthesisContext

    ctx = SynthesisContext(spec, dict(SHAPES3), dict(DT3), {"BT": 64}, "h100", ["BK", "BV"])
    assert not ctx.feasible({"BK": 64, "BV": 32}, 4, 2)
    assert ctx.feasible({"BK": 64, "BV": 32}, 8, 2) and ctx.feasible({"BK": 64, "BV": 64}, 4, 2)


@applies
def test_defect_is_scoped_to_multi_dot_kernels_and_sm90():
    _, model, points, names = _points(ONE_DOT, "mm", {"M": 4096, "N": 4096, "K": 4096},
                                      {"a_ptr": "fp16", "b_ptr": "fp16", "c_ptr": "fp32"}, "h100")
    assert not any(c.name.startswith("defect:") for c in model.constraints)
    at = {n: i for i, n in enumerate(names)}
    assert any(p[at["BLOCK_N"]] == 32 and p[at["num_warps"]] == 4 and p[at["BLOCK_M"]] >= 64 for p in points)
    _, model, points, names = _points(THREE_DOTS, "attn_out", SHAPES3, DT3, "a100", fixed={"BT": 64})
    assert not any(c.name.startswith("defect:") for c in model.constraints)  # sm_80 has no wgmma
