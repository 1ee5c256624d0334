"""Device functions called with tiles, and a kernel over host tensor descriptors whose block
shape is passed positionally through an aliased import and local variables."""
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor as _TD


@triton.jit
def _gather_rows(x_ptr, rows, cols, n_rows, n_cols):
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    return tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=0.0)


@triton.jit
def _flatten(t):
    return tl.reshape(t, [t.numel])


@triton.jit
def _square(b):
    return tl.dot(b, b)


@triton.jit
def gather_kernel(x_ptr, y_ptr, n_rows, n_cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.arange(0, BLOCK_C)
    flat = _flatten(_gather_rows(x_ptr, rows, cols, n_rows, n_cols))
    tl.store(y_ptr + tl.program_id(0) * BLOCK_R * BLOCK_C + tl.arange(0, BLOCK_R * BLOCK_C), flat)


@triton.jit
def desc_copy_kernel(in_desc, out_desc, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    tile = in_desc.load([pid_m * BLOCK_M, pid_n * BLOCK_N])
    out_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], tile)


def desc_copy(x, y):
    M, N = x.shape
    block_m = 64
    block_n = 128
    in_desc = _TD.from_tensor(x, [block_m, block_n])
    out_desc = _TD.from_tensor(y, [block_m, block_n])
    desc_copy_kernel[(triton.cdiv(M, block_m), triton.cdiv(N, block_n))](in_desc, out_desc, BLOCK_M=block_m,
                                                                          BLOCK_N=block_n)
