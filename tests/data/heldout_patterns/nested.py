"""A radix-histogram step whose helpers call each other five deep (kernel -> step -> bins -> digit
-> key), as multi-pass top-k kernels are written."""
import triton
import triton.language as tl


@triton.jit
def _sortable_key(x):
    bits = x.to(tl.uint32, bitcast=True)
    negative = (bits & 0x80000000) != 0
    return tl.where(negative, ~bits, bits | 0x80000000)


@triton.jit
def _digit(x, SHIFT: tl.constexpr):
    return (_sortable_key(x) >> SHIFT) & 0xFF


@triton.jit
def _count_digits(x, mask, hist_ptr, SHIFT: tl.constexpr):
    tl.atomic_add(hist_ptr + _digit(x, SHIFT), 1, mask=mask)


@triton.jit
def _histogram_pass(x_ptr, hist_ptr, row, n_cols, BLOCK: tl.constexpr, SHIFT: tl.constexpr):
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        _count_digits(x, cols < n_cols, hist_ptr + row * 256, SHIFT)


@triton.jit
def _two_passes(x_ptr, hist_ptr, row, n_cols, BLOCK: tl.constexpr):
    _histogram_pass(x_ptr, hist_ptr, row, n_cols, BLOCK, 24)
    _histogram_pass(x_ptr, hist_ptr + 256 * tl.num_programs(0), row, n_cols, BLOCK, 16)


@triton.jit
def radix_histogram_kernel(x_ptr, hist_ptr, n_cols, BLOCK: tl.constexpr):
    _two_passes(x_ptr, hist_ptr, tl.program_id(0), n_cols, BLOCK)
