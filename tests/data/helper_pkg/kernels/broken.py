import triton
import triton.language as tl

from ..missing_module import vanished_helper
from .cycle_a import ping


@triton.jit
def lost_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, vanished_helper(x), mask=offs < n)


@triton.jit
def cycle_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, ping(x), mask=offs < n)
