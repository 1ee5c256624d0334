"""A kernel with an indexing bug only large tiles reach, for bench/fault_isolation.py (GPU only).

``wild_copy`` at BLOCK >= FAULT_FROM (512) adds 2**40 elements to its addresses: an
illegal memory access on a GPU, the failure class of fla-core's
``chunk_fwd_kernel_o`` at BK=64, BV=32 (a config that fits every limit and
faults anyway).  Never launch it under the interpreter: on the CPU the same
address is a segmentation fault of the process.
"""

import triton
import triton.language as tl

#: Tiles of this many elements and more fault (512: the pool for 2**20 elements also holds safe ones).
FAULT_FROM = tl.constexpr(512)


@triton.jit
def wild_copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    where = offs.to(tl.int64)
    if BLOCK >= FAULT_FROM:  # the bug: only tiles of FAULT_FROM and more reach it
        where = where + (1 << 40)
    tl.store(out_ptr + where, tl.load(x_ptr + where, mask=mask) * 2, mask=mask)
