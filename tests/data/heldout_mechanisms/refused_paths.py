"""A kernel with two ways to read its input, chosen by a constexpr flag, where the names of the way not taken
stay None (Triton's front end refuses that path, so only the other compiles)."""
import triton
import triton.language as tl


@triton.jit
def copy_either_way_kernel(x_ptr, out_ptr, M, N, USE_DESC: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    x_block = None
    out_desc = None
    if USE_DESC:
        x = x_desc.load([tl.program_id(0) * BLOCK_M, 0])
    else:
        x = tl.load(x_block)
        x_block = tl.advance(x_block, (0, BLOCK_N))
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    if USE_DESC:
        tl.store(out_ptr + offs_m[:, None] * N + offs_n[None, :], x)
    else:
        out_desc.store([0, 0], x)
