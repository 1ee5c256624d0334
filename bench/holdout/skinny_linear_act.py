"""Held-out kernel: a skinny linear layer with a bias + SiLU epilogue, out = silu(x @ w.T + b).

x is (M, K) with few rows (a decode-time batch), w is (N, K) as nn.Linear stores it, fp16 in, fp32
accumulation.  A 2-D grid over (M tiles, N tiles).  Written for the held-out part of the cold bench:
the cost model was not fitted on it.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def linear_bias_silu_kernel(
    x_ptr, w_ptr, b_ptr, out_ptr,
    M, N, K,
    stride_xm, stride_xk, stride_wn, stride_wk, stride_om, stride_on,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(x_ptr + rm[:, None] * stride_xm + kk[None, :] * stride_xk,
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(w_ptr + rn[None, :] * stride_wn + kk[:, None] * stride_wk,
                    mask=(rn[None, :] < N) & (kk[:, None] < K), other=0.0)
        acc = tl.dot(a, b, acc)
    bias = tl.load(b_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)
    acc = acc + bias[None, :]
    acc = acc * tl.sigmoid(acc)
    tl.store(out_ptr + rm[:, None] * stride_om + rn[None, :] * stride_on, acc.to(tl.float16),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


KERNEL = linear_bias_silu_kernel
KEY = ["M", "N", "K"]
TILING = ["BLOCK_M", "BLOCK_N", "BLOCK_K"]
SHAPES = [{"M": 5, "N": 40, "K": 48}, {"M": 17, "N": 33, "K": 20}]
BENCH_SHAPES = [{"M": 48, "N": 11008, "K": 4096}]
EXAMPLE_CONFIG = {"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 16}
# An author's list in the style of Triton's matmul tutorial, with small-M entries for decode.
HAND_CONFIGS = [
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}, num_warps=8, num_stages=3),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=8, num_stages=3),
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 256, "BLOCK_K": 32}, num_warps=4, num_stages=4),
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32}, num_warps=4, num_stages=4),
    triton.Config({"BLOCK_M": 32, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=4, num_stages=4),
    triton.Config({"BLOCK_M": 16, "BLOCK_N": 128, "BLOCK_K": 128}, num_warps=4, num_stages=4),
    triton.Config({"BLOCK_M": 16, "BLOCK_N": 64, "BLOCK_K": 256}, num_warps=4, num_stages=3),
]
RESTORE_VALUE: list = []
RESET_TO_ZERO: list = []
TOLERANCE = {"atol": 2e-2, "rtol": 2e-2}


def make_args(shape, device="cpu", dtype=None):
    m, n, k = shape["M"], shape["N"], shape["K"]
    x = (torch.randn(m, k, device=device) / k ** 0.5).half()
    w = torch.randn(n, k, device=device).half()
    b = torch.randn(n, device=device).half()
    out = torch.empty(m, n, device=device, dtype=torch.float16)
    return {"x_ptr": x, "w_ptr": w, "b_ptr": b, "out_ptr": out, "M": m, "N": n, "K": k,
            "stride_xm": x.stride(0), "stride_xk": x.stride(1), "stride_wn": w.stride(0),
            "stride_wk": w.stride(1), "stride_om": out.stride(0), "stride_on": out.stride(1)}


def launch(kernel, args, **meta):
    grid = lambda meta: (triton.cdiv(args["M"], meta["BLOCK_M"]), triton.cdiv(args["N"], meta["BLOCK_N"]))  # noqa: E731
    kernel[grid](**args, **meta)


def reference(args):
    y = args["x_ptr"].float() @ args["w_ptr"].float().T + args["b_ptr"].float()
    return [torch.nn.functional.silu(y)]


def outputs(args):
    return [args["out_ptr"]]
