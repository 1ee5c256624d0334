"""Kernels for tests/test_hardening.py (issue 26), read by the analysis from this file.

``copy_even`` has a tuned ``BLOCK`` and a defaulted non-tiling constexpr
``EVEN`` that drops the masks: a cache entry that switches ``EVEN`` on
writes past the end of an output whose length is not a multiple of BLOCK.
``scatter_add`` adds ``x`` into a 2-D output through its strides: launched on
an expanded (stride-0) or self-overlapping output, several elements share
memory.
"""

import triton
import triton.language as tl


@triton.jit
def copy_even(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr = False):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2)
    else:
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


@triton.jit
def scatter_add(x_ptr, out_ptr, n, cols, stride_r, stride_c, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    where = (offs // cols) * stride_r + (offs % cols) * stride_c
    tl.atomic_add(out_ptr + where, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def variant_copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr, VARIANT: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if VARIANT == 0:  # this variant fails when launched (a range that is not a power of two)
        offs = offs + tl.sum(tl.arange(0, 3), axis=0) * 0
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


@triton.jit
def unrolled_copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr, UNROLL: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.static_assert(UNROLL > 0)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


@triton.heuristics({"SCALE": lambda args: 2})
@triton.autotune(configs=[triton.Config({"BLOCK": 32, "UNROLL": 1})], key=["n"])
@triton.jit
def library_tuned_copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr, UNROLL: tl.constexpr, SCALE: tl.constexpr):
    """A library's kernel as its module exports it: its own heuristics around its own autotuner around the
    jit function (fla-core's pattern); a user tunes the jit function itself (``library_tuned_copy.fn.fn``)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.static_assert(UNROLL > 0)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * SCALE, mask=mask)
