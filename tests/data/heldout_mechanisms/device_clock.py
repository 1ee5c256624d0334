"""A kernel that records, per program, its duration on the global timer, the multiprocessor it ran on and the
launch's warp count (triton.language.extra.cuda), beside its tiled work."""
import triton
import triton.language as tl
from triton.language.extra.cuda import smid


@triton.jit
def timed_scale_kernel(x_ptr, out_ptr, prof_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    start = tl.extra.cuda.globaltimer()
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x * 2, mask=offs < n)
    tl.extra.cuda.gdc_launch_dependents()
    tl.store(prof_ptr + 3 * pid, tl.extra.cuda.globaltimer() - start)
    tl.store(prof_ptr + 3 * pid + 1, smid())
    tl.store(prof_ptr + 3 * pid + 2, tl.extra.cuda.num_warps())
