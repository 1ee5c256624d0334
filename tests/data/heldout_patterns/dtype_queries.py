"""Kernels that ask questions of their element type at compile time: dtype predicates
(``is_floating()``, ``is_int()``), a ``@triton.constexpr_function`` choosing an accumulator type,
a scalar fill helper over ``dtype.value``, ``ptr.type.element_ty`` and ``tl.dtype(f"uint{bits}")``."""
import triton
import triton.language as tl


@triton.constexpr_function
def accumulator_type(dtype):
    if dtype.is_fp16() or dtype.is_bf16():
        return tl.float32
    if dtype.is_int():
        return tl.int64
    return dtype


@triton.jit
def _lowest(dtype):
    d = dtype.value
    if d.is_floating():
        neg_inf: tl.constexpr = float("-inf")
        return neg_inf
    width: tl.constexpr = d.int_bitwidth
    smallest: tl.constexpr = -1 * 2 ** (width - 1)
    return smallest


@triton.jit
def rowmax_sum_kernel(x_ptr, max_ptr, sum_ptr, n_rows, n_cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    dtype = x_ptr.type.element_ty
    acc_type: tl.constexpr = accumulator_type(dtype)
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    best = tl.full((BLOCK_R, BLOCK_C), _lowest(dtype), dtype=dtype)
    total = tl.zeros((BLOCK_R,), dtype=acc_type)
    for start in range(0, n_cols, BLOCK_C):
        cols = start + tl.arange(0, BLOCK_C)
        mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
        x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=_lowest(dtype))
        best = tl.maximum(best, x)
        total += tl.sum(tl.where(mask, x, 0).to(acc_type), axis=1)
    tl.store(max_ptr + rows, tl.max(best, axis=1), mask=rows < n_rows)
    if dtype.is_floating():
        tl.store(sum_ptr + rows, total.to(tl.float32), mask=rows < n_rows)
    else:
        tl.store(sum_ptr + rows, total, mask=rows < n_rows)


@triton.jit
def radix_digit_kernel(x_ptr, digit_ptr, n, shift, BLOCK: tl.constexpr, RADIX_BITS: tl.constexpr):
    bits: tl.constexpr = x_ptr.dtype.element_ty.primitive_bitwidth
    key_type = tl.dtype(f"uint{bits}")
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    keys = tl.load(x_ptr + offs, mask=offs < n).to(key_type, bitcast=True)
    digit = (keys >> shift) & ((1 << RADIX_BITS) - 1)
    tl.store(digit_ptr + offs, digit.to(tl.int32), mask=offs < n)
