"""A kernel whose helper is looked up at import time (importlib): the analysis
cannot follow it statically, so it is incomplete; the kernel still runs."""
import importlib

import tiletune
import triton
import triton.language as tl

_helpers = importlib.import_module("helper_pkg.utils")
scale_rows = _helpers.scale_rows


@tiletune.autotune(configs=[], key=["n"])
@triton.jit
def scaled_copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, scale_rows(x, 3), mask=mask)


def scaled_copy(x, y):
    n = x.numel()
    scaled_copy_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n)
