"""Kernels that use the helpers of ``helpers.py``; launched in ``launch.py``."""
import functools

import triton
import triton.language as tl

from . import helpers
from .tuning import tuned_from_table
from .helpers import WIDE_HEURISTICS, exp, take, lowest_value, pick_block, split_program_id


@triton.jit
def softmax_rows_kernel(x_ptr, y_ptr, n_rows, n_cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    i_c, i_r = split_program_id(tl.cdiv(n_cols, BLOCK_C))
    rows = i_r * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = i_c * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask,
                other=lowest_value(x_ptr.dtype.element_ty))
    y = exp(x - tl.max(x, axis=1)[:, None])
    tl.store(y_ptr + rows[:, None] * n_cols + cols[None, :], y, mask=mask)


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


@triton.heuristics({"BLOCK_C": pick_block, "BLOCK_R": functools.partial(lambda args, k: k, k=4)})
@triton.jit
def rowsum_kernel(x_ptr, y_ptr, n_rows, n_cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_T: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.arange(0, BLOCK_C)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=0.0)
    t = tl.arange(0, BLOCK_T)
    tl.store(y_ptr + rows, tl.sum(x, axis=1) + tl.sum(t, axis=0), mask=rows < n_rows)


@triton.heuristics(WIDE_HEURISTICS)
@triton.jit
def masked_rowsum_kernel(x_ptr, y_ptr, n_rows, n_cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr,
                         EVEN_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.arange(0, BLOCK_C)
    if EVEN_N:
        x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :])
    else:
        x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=cols[None, :] < n_cols, other=0.0)
    tl.store(y_ptr + rows, tl.sum(x, axis=1), mask=rows < n_rows)


@triton.jit
def tanh_gate_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, x * helpers.fast_tanh(x), mask=offs < n)


@triton.autotune(configs=[triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 256})], key=["n"])
@triton.jit
def tuned_scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 3, mask=mask)


@tuned_from_table(["n"])
@triton.jit
def table_scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr = 256):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 4, mask=mask)


@triton.jit
def heads_scale_kernel(x_ptr, y_ptr, n_rows, n_cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    # three indices: Y is a computed value, never None, so the 3-D branch is the one Triton compiles
    i_c, i_r, i_h = split_program_id(tl.cdiv(n_cols, BLOCK_C), tl.cdiv(n_rows, BLOCK_R))
    rows = i_r * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = i_c * BLOCK_C + tl.arange(0, BLOCK_C)
    offs = i_h * n_rows * n_cols + rows[:, None] * n_cols + cols[None, :]
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


@triton.jit
def pick_columns_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr, USE_GATHER: tl.constexpr):
    # row by row, keep the diagonal's running sum; then square the tile on the matrix unit
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs[:, None] * BLOCK + offs[None, :])
    for i in range(1, BLOCK):
        if USE_GATHER:
            row = tl.sum(take(x, tl.full([1, BLOCK], i, dtype=tl.int32), axis=0), 0)
        else:
            row = tl.sum(tl.where((offs == i)[:, None], x, 0.0), 0)
        x = tl.where((offs == i)[:, None], row + tl.sum(row[:, None] * x, 0), x)
    tl.store(y_ptr + offs[:, None] * BLOCK + offs[None, :], tl.dot(x, x))


@triton.jit
def rows_copy_kernel(x_ptr, y_ptr, seq_len, n_cols, BLOCK_C: tl.constexpr):
    # Y is a kernel argument (a launch could pass None), but three names can only unpack the 3-D branch
    i_c, i_s, i_b = split_program_id(tl.cdiv(n_cols, BLOCK_C), seq_len)
    cols = i_c * BLOCK_C + tl.arange(0, BLOCK_C)
    base = (i_b * seq_len + i_s) * n_cols
    tl.store(y_ptr + base + cols, tl.load(x_ptr + base + cols, mask=cols < n_cols), mask=cols < n_cols)
