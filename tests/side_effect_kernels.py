"""Kernels that write into their inputs, for tests/test_reliability.py (side effects safe by default).

Each is a plain ``@triton.jit`` kernel; the tests wrap them in
``tiletune.autotune(configs=[])`` with no hooks and compare with one untuned
launch.  The in-place kernel is ``fixtures/scale_inplace.py``; the
``atomic_add`` accumulator is ``fixtures/histogram.py`` and :func:`sum_into`.
"""

import triton
import triton.language as tl


@triton.jit
def sum_into(x_ptr, total_ptr, n, BLOCK: tl.constexpr):
    """total[0] += sum(x): an atomic_add accumulator (every launch adds again)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(total_ptr, tl.sum(x, axis=0))


@triton.jit
def running_max(x_ptr, best_ptr, n, BLOCK: tl.constexpr):
    """best[i % 4] = max(best[i % 4], x[i]): idempotent, repeating it changes nothing."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.atomic_max(best_ptr + offs % 4, x, mask=mask)


@triton.jit
def add_one(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = x + 1: in place when the caller passes the same tensor twice."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1.0, mask=mask)


@triton.jit
def copy_fixed(x_ptr, out_ptr, n, BLOCK: tl.constexpr = 128):
    """out = x with a default BLOCK: configs=[] has nothing to tune."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def double_and_track(x_ptr, seen_ptr, n, BLOCK: tl.constexpr):
    """x *= 2 in place, and seen[0] = max(seen[0], max of the new x): seen shows whether every launch
    started from the caller's x (restored after each benchmarked launch) or from a drifted one."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(x_ptr + offs, mask=mask, other=0.0) * 2.0
    tl.store(x_ptr + offs, y, mask=mask)
    tl.atomic_max(seen_ptr, tl.max(y, axis=0))
