"""Jit functions that other jit functions call with values only jit code holds: a tensor descriptor and a block
pointer made in the kernel, a tile. A function the module also launches stays a kernel; one called with
scalars and pointers alone could be launched, and stays a kernel too."""
import triton
import triton.language as tl


@triton.jit
def _row_block_sum(x_desc, acc_block, row, N, BLOCK_N: tl.constexpr):
    acc = tl.load(acc_block)
    for n in range(0, N, BLOCK_N):
        acc += x_desc.load([row, n])
    return acc


@triton.jit
def _scaled(tile, scale_ptr):
    return tile * tl.load(scale_ptr)


@triton.jit
def _copy_rows(x_ptr, out_ptr, N, BLOCK_N: tl.constexpr):
    offs = tl.program_id(0) * N + tl.arange(0, BLOCK_N)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < N), mask=offs < N)


@triton.jit
def _copy_launched(x_ptr, out_ptr, N, BLOCK_N: tl.constexpr):
    offs = tl.program_id(0) * N + tl.arange(0, BLOCK_N)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < N), mask=offs < N)


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, scale_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0) * BLOCK_M
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    out_block = tl.make_block_ptr(out_ptr, shape=(M, BLOCK_N), strides=(BLOCK_N, 1), offsets=(row, 0),
                                  block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    acc = _row_block_sum(x_desc, out_block, row, N, BLOCK_N)
    tl.store(out_block, _scaled(acc, scale_ptr))
    _copy_rows(x_ptr, out_ptr, N, BLOCK_N)
    _copy_launched(x_ptr, out_ptr, N, BLOCK_N)


def copy(x, out, n):
    _copy_launched[(x.shape[0],)](x, out, n, BLOCK_N=128)
