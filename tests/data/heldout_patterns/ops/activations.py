"""Activation kernels that use the re-exported math helpers of the package."""
import triton
import triton.language as tl

from . import exp, math_shim


@triton.jit
def softplus_cube_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    soft = tl.log(1.0 + exp(x))
    tl.store(y_ptr + offs, math_shim.pow(soft, 3.0), mask=offs < n)
