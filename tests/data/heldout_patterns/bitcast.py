"""A kernel that flips the sign bit of floats through an integer view of the same width
(``tl.core.get_int_dtype`` picks the width from the loaded dtype)."""
import triton
import triton.language as tl


@triton.jit
def negate_bits_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n).to(tl.float32)
    int_type = tl.core.get_int_dtype(bitwidth=x.dtype.primitive_bitwidth, signed=True)
    bits = x.to(int_type, bitcast=True) ^ (1 << (x.dtype.primitive_bitwidth - 1))
    tl.store(y_ptr + offs, bits.to(x.dtype, bitcast=True), mask=offs < n)
