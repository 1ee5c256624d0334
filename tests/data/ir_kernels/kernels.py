"""Small kernels in the patterns of issue 24 (helpers across modules, a dot, a static_assert)."""
import tiletune
import triton
import triton.language as tl

import importlib

from .helpers import exp, tile_offsets

# looked up at import time: the static reader cannot follow it (the kernel reads incomplete); Triton can
checked_arange = importlib.import_module(__package__ + ".helpers").checked_arange


@triton.jit
def tiled_exp_kernel(x_ptr, y_ptr, n, BT: tl.constexpr, BS: tl.constexpr):
    offs = tile_offsets(tl.program_id(0), BT, BS)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, exp(x), mask=mask)


@triton.jit
def small_dot_kernel(a_ptr, b_ptr, c_ptr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a = tl.load(a_ptr + rm[:, None] * BLOCK_K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BLOCK_N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * BLOCK_N + rn[None, :], tl.dot(a, b))


@triton.jit
def looped_sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, CHUNK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, 4096, CHUNK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + tl.program_id(0), tl.sum(acc))


@tiletune.autotune(configs=[], key=["n"], cache_results=False)
@triton.jit
def capped_copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + checked_arange(BLOCK)  # a helper's static_assert: Triton refuses BLOCK > 16
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


# looked up at import time too: the static reader cannot see the [BT, BS] tile it makes
outer_offsets = importlib.import_module(__package__ + ".helpers").outer_offsets


@tiletune.autotune(configs=[], key=["n"], cache_results=False)
@triton.jit
def hidden_tile_kernel(x_ptr, y_ptr, n, BT: tl.constexpr, BS: tl.constexpr):
    rows = tl.program_id(0) * BT + tl.arange(0, BT)
    cols = tl.arange(0, BS)
    offs = outer_offsets(rows, cols, BS)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask, other=0.0), mask=mask)


@tiletune.autotune(configs=[], key=["n"], cache_results=False)
@triton.jit
def shape_capped_copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    # a complete static reading that cannot evaluate this assert (a tile's shape): Triton refuses BLOCK > 64
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.static_assert(x.shape[0] <= 64, "a tile of at most 64 elements")
    tl.store(y_ptr + offs, x, mask=mask)


@tiletune.autotune(configs=[], key=["n"], cache_results=False)
@triton.jit
def tiny_tile_copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    # Triton refuses every tile synthesis proposes here (none under 4 elements)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.static_assert(x.shape[0] <= 2, "a tile of at most 2 elements")
    tl.store(y_ptr + offs, x, mask=mask)
