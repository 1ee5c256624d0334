"""A butterfly exchange over a 1-D tile: each step views the tile as [groups, 2, 2**level] (a shape
computed from the tile's own size and an unrolled level), swaps the two halves, and views it back."""
import triton
import triton.language as tl


@triton.jit
def _swap_halves(x, level: tl.constexpr):
    groups: tl.constexpr = x.numel >> (level + 1)
    view: tl.constexpr = [groups, 2, 2 ** level]
    y = tl.reshape(x, view)
    sel = tl.arange(0, 2)[None, :, None]
    lo = tl.broadcast_to(tl.sum(y * (1 - sel), 1)[:, None, :], view)
    hi = tl.broadcast_to(tl.sum(y * sel, 1)[:, None, :], view)
    return tl.reshape(tl.where(sel == 0, hi, lo), x.shape)


@triton.jit
def butterfly_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    levels: tl.constexpr = tl.standard._log2(BLOCK)
    for level in tl.static_range(levels):
        x = _swap_halves(x, level)
    tl.store(y_ptr + offs, x, mask=offs < n)


@triton.jit
def butterfly_store_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    # the [groups, 2, 2**level] view itself is stored: its shape decides the access, so it stays unknown
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    levels: tl.constexpr = tl.standard._log2(BLOCK)
    for level in tl.static_range(levels):
        groups: tl.constexpr = x.numel >> (level + 1)
        view: tl.constexpr = [groups, 2, 2 ** level]
        tl.store(y_ptr + tl.reshape(offs, view), tl.reshape(x, view))


@triton.jit
def _sum_difference_stage(x, BLOCK: tl.constexpr, STRIDE: tl.constexpr):
    groups: tl.constexpr = BLOCK // (2 * STRIDE)
    y = tl.permute(tl.reshape(x, (groups, 2, STRIDE)), (0, 2, 1))
    a, b = tl.split(y)
    y = tl.permute(tl.join(a + b, a - b), (0, 2, 1))
    return tl.reshape(y, (BLOCK,))


@triton.jit
def walsh_kernel(x_ptr, y_ptr, stride_row, BLOCK: tl.constexpr, LOG_N: tl.constexpr):
    # the stride of each stage comes from an unrolled level and the LOG_N constexpr: a view factor only
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_row + cols)
    for level in tl.static_range(LOG_N):
        x = _sum_difference_stage(x, BLOCK, 1 << (LOG_N - 1 - level))
    tl.store(y_ptr + row * stride_row + cols, x)
