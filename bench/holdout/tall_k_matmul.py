"""Held-out kernel: a non-square matmul with a long K, C = A @ B, fp16 in, fp32 accumulation, fp32 out.

B is given as (N, K) (a transposed weight).  Grouped 1-D program order (GROUP_M rows of tiles share
B's columns in L2; GROUP_M = 8 is passed at launch).  Written for the held-out part of the cold bench.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def tall_k_matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bn, stride_bk, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * num_n
    group = pid // per_group
    first_m = group * GROUP_M
    rows_in_group = min(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % rows_in_group
    pid_n = (pid % per_group) // rows_in_group
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rn[None, :] * stride_bn + rk[:, None] * stride_bk
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(rn[None, :] < N) & (rk[:, None] < k_left), other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


KERNEL = tall_k_matmul_kernel
KEY = ["M", "N", "K"]
TILING = ["BLOCK_M", "BLOCK_N", "BLOCK_K"]
SHAPES = [{"M": 20, "N": 36, "K": 70}, {"M": 9, "N": 16, "K": 33}]
BENCH_SHAPES = [{"M": 1024, "N": 384, "K": 14336}]
EXAMPLE_CONFIG = {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16}
HAND_CONFIGS = [
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}, num_warps=8, num_stages=3),
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 256, "BLOCK_K": 32}, num_warps=4, num_stages=4),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32}, num_warps=4, num_stages=4),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, num_stages=4),
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32}, num_warps=4, num_stages=4),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 32, "BLOCK_K": 32}, num_warps=4, num_stages=4),
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 32, "BLOCK_K": 32}, num_warps=2, num_stages=5),
]
RESTORE_VALUE: list = []
RESET_TO_ZERO: list = []
TOLERANCE = {"atol": 3e-2, "rtol": 3e-2}


def make_args(shape, device="cpu", dtype=None):
    m, n, k = shape["M"], shape["N"], shape["K"]
    a = (torch.randn(m, k, device=device) / k ** 0.5).to(torch.float16)
    b = torch.randn(n, k, device=device).to(torch.float16)
    c = torch.empty(m, n, device=device, dtype=torch.float32)
    return {"a_ptr": a, "b_ptr": b, "c_ptr": c, "M": m, "N": n, "K": k,
            "stride_am": a.stride(0), "stride_ak": a.stride(1), "stride_bn": b.stride(0),
            "stride_bk": b.stride(1), "stride_cm": c.stride(0), "stride_cn": c.stride(1), "GROUP_M": 8}


def launch(kernel, args, **meta):
    grid = lambda meta: (triton.cdiv(args["M"], meta["BLOCK_M"]) * triton.cdiv(args["N"], meta["BLOCK_N"]),)  # noqa: E731
    kernel[grid](**args, **meta)


def reference(args):
    return [args["a_ptr"].float() @ args["b_ptr"].float().T]


def outputs(args):
    return [args["c_ptr"]]
