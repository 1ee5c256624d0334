"""A rotary embedding kernel; its launcher (``ops/rotary.py``) imports it inside the launching function."""
import triton
import triton.language as tl


@triton.jit
def rotary_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, half, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    for start in range(0, half, BLOCK // 2):
        cols = start + tl.arange(0, BLOCK // 2)
        mask = cols < half
        a = tl.load(x_ptr + row * stride_row + cols, mask=mask)
        b = tl.load(x_ptr + row * stride_row + half + cols, mask=mask)
        c = tl.load(cos_ptr + cols, mask=mask)
        s = tl.load(sin_ptr + cols, mask=mask)
        tl.store(out_ptr + row * stride_row + cols, a * c - b * s, mask=mask)
        tl.store(out_ptr + row * stride_row + half + cols, a * s + b * c, mask=mask)
