"""A dropout-style kernel that draws 128 random bits per counter with ``tl.philox`` and turns
them into four uniform floats (four output blocks per program)."""
import triton
import triton.language as tl


@triton.jit
def keep_mask_kernel(out_ptr, n, p, seed, offset, BLOCK: tl.constexpr):
    counters = (offset + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)).to(tl.uint32)
    zero = counters * 0
    r0, r1, r2, r3 = tl.philox(seed, counters, zero, zero, zero)
    base = tl.program_id(0) * BLOCK * 4 + tl.arange(0, BLOCK)
    tl.store(out_ptr + base, tl.uint_to_uniform_float(r0) > p, mask=base < n)
    tl.store(out_ptr + BLOCK + base, tl.uint_to_uniform_float(r1) > p, mask=base + BLOCK < n)
    u, v = tl.pair_uniform_to_normal(tl.uint_to_uniform_float(r2), tl.uint_to_uniform_float(r3))
    tl.store(out_ptr + 2 * BLOCK + base, u > p, mask=base + 2 * BLOCK < n)
    tl.store(out_ptr + 3 * BLOCK + base, v > p, mask=base + 3 * BLOCK < n)


@triton.jit
def two_halves_count_kernel(a_ptr, b_ptr, out_ptr, threshold, BLOCK: tl.constexpr):
    # tl.cat joins two 1-D tiles end to end (the order may change: only a reduction reads it)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    both = tl.cat(tl.load(a_ptr + offs), tl.load(b_ptr + offs), can_reorder=True)
    tl.store(out_ptr + tl.program_id(0), tl.sum((both > threshold).to(tl.int32), axis=0))
