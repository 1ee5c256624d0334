"""Held-out kernel: log-softmax over wide rows, BLOCK_M rows per program in one 2-D tile.

Each program loads a (BLOCK_M, BLOCK_N) tile (BLOCK_N >= N: the whole row at once), reduces along the
row twice (max, then sum of exp) and writes log-probabilities.  BLOCK_M is the rows-per-program knob.
Written for the held-out part of the cold bench.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def rows_log_softmax_kernel(
    x_ptr, y_ptr, M, N, stride_x, stride_y,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * stride_x + cols[None, :], mask=mask, other=-float("inf")).to(tl.float32)
    row_max = tl.max(x, axis=1)
    shifted = x - row_max[:, None]
    denom = tl.sum(tl.exp(shifted), axis=1)
    y = shifted - tl.log(denom)[:, None]
    tl.store(y_ptr + rows[:, None] * stride_y + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)


KERNEL = rows_log_softmax_kernel
KEY = ["M", "N"]
TILING = ["BLOCK_M", "BLOCK_N"]
SHAPES = [{"M": 7, "N": 100}, {"M": 3, "N": 9}]
BENCH_SHAPES = [{"M": 8192, "N": 6144}]
EXAMPLE_CONFIG = {"BLOCK_M": 2, "BLOCK_N": 128}
# An author's list: the row in one tile (BLOCK_N = next power of two of N, fixed per shape by the
# author's launcher), a few rows per program, a few warp counts.
HAND_CONFIGS = [
    triton.Config({"BLOCK_M": 1, "BLOCK_N": 8192}, num_warps=8),
    triton.Config({"BLOCK_M": 2, "BLOCK_N": 8192}, num_warps=8),
    triton.Config({"BLOCK_M": 4, "BLOCK_N": 8192}, num_warps=4),
    triton.Config({"BLOCK_M": 4, "BLOCK_N": 8192}, num_warps=16),
]
RESTORE_VALUE: list = []
RESET_TO_ZERO: list = []
TOLERANCE = {"atol": 1e-2, "rtol": 1e-2}


def make_args(shape, device="cpu", dtype=None):
    m, n = shape["M"], shape["N"]
    x = torch.randn(m, n, device=device, dtype=torch.float16)
    y = torch.empty(m, n, device=device, dtype=torch.float16)
    return {"x_ptr": x, "y_ptr": y, "M": m, "N": n, "stride_x": x.stride(0), "stride_y": y.stride(0)}


def launch(kernel, args, **meta):
    grid = lambda meta: (triton.cdiv(args["M"], meta["BLOCK_M"]),)  # noqa: E731
    kernel[grid](**args, **meta)


def reference(args):
    return [torch.log_softmax(args["x_ptr"].float(), dim=1)]


def outputs(args):
    return [args["y_ptr"]]
