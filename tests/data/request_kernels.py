"""Kernels for the synthesis request's guards (tests/test_synthesis_request.py), written for tiletune's tests.

* ``scale_kernel``: its tile size has a default that is a module constant, so tuning leaves it alone
  and only the caller can say its value (the signature's text is no literal).
* ``block_sum_kernel``: each program writes the sum of its ``BLOCK`` elements into ``out[pid]``, so
  ``BLOCK`` carries meaning (the output depends on it).
"""

import triton
import triton.language as tl

DEFAULT_BLOCK = 128


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr = DEFAULT_BLOCK):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


@triton.jit
def block_sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + pid, tl.sum(x, axis=0))
