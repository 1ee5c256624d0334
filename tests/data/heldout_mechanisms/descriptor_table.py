"""Grouped kernels that read each group's matrices through a table of base addresses, cast to a pointer type
and wrapped in a tensor descriptor made in the kernel (a grouped GEMM's layout), or read plainly: the element
type is named (tl.float16), given as a constexpr parameter, or picked at compile time from a flag."""
import triton
import triton.language as tl


@triton.jit
def grouped_scale_fp16_kernel(table_ptr, rows_ptr, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    g = tl.program_id(1)
    rows = tl.load(rows_ptr + g)
    src = tl.load(table_ptr + 2 * g).to(tl.pointer_type(tl.float16))
    dst = tl.load(table_ptr + 2 * g + 1).to(tl.pointer_type(tl.float16))
    src_desc = tl.make_tensor_descriptor(src, shape=[rows, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    dst_desc = tl.make_tensor_descriptor(dst, shape=[rows, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    m = tl.program_id(0) * BLOCK_M
    for n in range(0, N, BLOCK_N):
        x = src_desc.load([m, n])
        dst_desc.store([m, n], x * 2)


@triton.jit
def grouped_scale_kernel(table_ptr, rows_ptr, N, dtype: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    g = tl.program_id(1)
    rows = tl.load(rows_ptr + g)
    src = tl.load(table_ptr + 2 * g).to(tl.pointer_type(dtype))
    dst = tl.load(table_ptr + 2 * g + 1).to(tl.pointer_type(dtype))
    src_desc = tl.make_tensor_descriptor(src, shape=[rows, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    dst_desc = tl.make_tensor_descriptor(dst, shape=[rows, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    m = tl.program_id(0) * BLOCK_M
    for n in range(0, N, BLOCK_N):
        x = src_desc.load([m, n])
        dst_desc.store([m, n], x * 2)


@triton.jit
def grouped_negate_kernel(table_ptr, sizes_ptr, n_groups, LOW_PRECISION: tl.constexpr, BLOCK: tl.constexpr):
    elem = tl.float8e4nv if LOW_PRECISION else tl.float16
    for g in range(n_groups):
        size = tl.load(sizes_ptr + g)
        base = tl.load(table_ptr + g).to(tl.pointer_type(elem))
        for start in range(tl.program_id(0) * BLOCK, size, tl.num_programs(0) * BLOCK):
            offs = start + tl.arange(0, BLOCK)
            x = tl.load(base + offs, mask=offs < size)
            tl.store(base + offs, -x, mask=offs < size)


@triton.jit
def grouped_unknown_address_kernel(table_ptr, n, BLOCK: tl.constexpr):
    # an integer loaded and used as an address without a cast: Triton refuses it, the reader has no pointer
    base = tl.load(table_ptr)
    offs = tl.arange(0, BLOCK)
    tl.store(base + offs, tl.zeros([BLOCK], dtype=tl.float32), mask=offs < n)
