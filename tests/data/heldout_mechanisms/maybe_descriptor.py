"""A kernel whose host passes either a tensor descriptor (shaped by a config pre-hook) or a plain pointer, and a
helper that makes a descriptor only for the pointer (``isinstance(x, tl.tensor_descriptor)``, decided by Triton
at compile time); a second kernel whose two sides disagree on the block shape."""
import triton
import triton.language as tl


def _shape_descriptors(nargs):
    nargs["x_desc"].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_N"]]


@triton.jit
def _as_descriptor(desc_or_ptr, shape, strides, block_shape):
    if isinstance(desc_or_ptr, tl.tensor_descriptor):
        return desc_or_ptr
    else:
        return tl.make_tensor_descriptor(desc_or_ptr, shape, strides, block_shape)


@triton.autotune(configs=[triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, pre_hook=_shape_descriptors)], key=["M"])
@triton.jit
def scale_rows_kernel(x_desc, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    x_desc = _as_descriptor(x_desc, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    x = x_desc.load([tl.program_id(0) * BLOCK_M, 0])
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    tl.store(out_ptr + offs_m[:, None] * N + offs_n[None, :], x * 2)


@triton.autotune(configs=[triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, pre_hook=_shape_descriptors)], key=["M"])
@triton.jit
def transposed_rows_kernel(x_desc, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    if not isinstance(x_desc, tl.tensor_descriptor):
        x_desc = tl.make_tensor_descriptor(x_desc, shape=[N, M], strides=[M, 1], block_shape=[BLOCK_N, BLOCK_M])
    x = x_desc.load([0, tl.program_id(0) * BLOCK_M])
    tl.store(out_ptr + tl.arange(0, BLOCK_N)[:, None] * M + tl.arange(0, BLOCK_M)[None, :], x)


@triton.jit
def flipped_block_kernel(x_ptr, out_ptr, M, N, TRANSPOSED: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    if TRANSPOSED:
        block = tl.make_block_ptr(x_ptr, (N, M), (M, 1), (0, tl.program_id(0) * BLOCK_M), (BLOCK_N, BLOCK_M), (1, 0))
    else:
        block = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (tl.program_id(0) * BLOCK_M, 0), (BLOCK_M, BLOCK_N), (1, 0))
    x = tl.load(block, boundary_check=(0, 1))
    tl.store(out_ptr + tl.program_id(0) * BLOCK_M * BLOCK_N + tl.arange(0, BLOCK_M * BLOCK_N), tl.reshape(x, (BLOCK_M * BLOCK_N,)))
