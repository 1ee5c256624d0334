"""Small Triton kernels in the patterns of shipped Ascend kernels, for the UB model's rules.

Written for tiletune's tests (tests/test_ascend_ub.py); analysed, never imported or run.
Each kernel shows one pattern the Ascend UB count must read the way the compiler does.
"""

import triton
import triton.language as tl


def scaled_pow(x, p):
    """A plain Python function, not a jit helper: the analysis does not follow a kernel's call to it."""
    return x


@triton.jit
def row_max_named_acc(inp, out, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Row max with the accumulator's type named first: fp32 for bf16 input, else the input's type."""
    dtype = inp.type.element_ty
    acc_type = tl.float32 if dtype is tl.bfloat16 else dtype
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]
    acc = tl.full([BLOCK_M, BLOCK_N], value=float("-inf"), dtype=acc_type)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)[None, :]
        x = tl.load(inp + rows * N + cols, mask=(rows < M) & (cols < N), other=float("-inf"))
        acc = tl.maximum(acc, x)
    best = tl.max(acc, axis=1)[:, None]
    tl.store(out + rows, best, mask=rows < M)


@triton.jit
def row_pow_helper(x_ptr, y_ptr, M, N, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """Rows through a helper the analysis cannot follow: its UB plan is unknown."""
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
    cols = tl.arange(0, BLOCK_C)[None, :]
    mask = (rows < M) & (cols < N)
    x = tl.load(x_ptr + rows * N + cols, mask=mask).to(tl.float32)
    y = scaled_pow(x, 2.0) * x + x
    tl.store(y_ptr + rows * N + cols, y, mask=mask)



@triton.jit
def squared_deviation_twice(x_ptr, y_ptr, mean, N, BLOCK: tl.constexpr):
    """``(x - mean) * (x - mean)``: the deviation written twice, as variance code often does."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < N, other=0.0)
    tl.store(y_ptr + offs, (x - mean) * (x - mean), mask=offs < N)


@triton.jit
def squared_deviation_once(x_ptr, y_ptr, mean, N, BLOCK: tl.constexpr):
    """The same with the deviation named once."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < N, other=0.0)
    d = x - mean
    tl.store(y_ptr + offs, d * d, mask=offs < N)



@triton.jit
def row_max_bf16_upcast(inp, out, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Row max that widens bf16 input to fp32 first: for other inputs Triton drops that side."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    vals = tl.load(inp + rows[:, None] * N + cols[None, :], mask=mask, other=0.0)
    if vals.dtype == tl.bfloat16:
        vals = vals.to(tl.float32)
    tl.store(out + rows, tl.max(vals, axis=1), mask=rows < M)


@triton.jit
def two_pass_row_grad(v_ptr, w_ptr, g_ptr, n_ptr, dv_ptr, M, N, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """Two passes over a row block, as weight-norm backward does: per-row scales loaded and
    computed before the first pass are used only in the second, so they live through the first;
    the first pass keeps an fp32 accumulator beside both of its loads."""
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
    row_mask = rows < M
    g = tl.load(g_ptr + rows, mask=row_mask).to(tl.float32)
    inv = 1 / tl.load(n_ptr + rows, mask=row_mask).to(tl.float32)
    inv3 = inv * inv * inv
    acc = tl.zeros([BLOCK_R, BLOCK_C], dtype=tl.float32)
    for start in range(0, N, BLOCK_C):
        cols = start + tl.arange(0, BLOCK_C)[None, :]
        mask = row_mask & (cols < N)
        v = tl.load(v_ptr + rows * N + cols, mask=mask).to(tl.float32)
        w = tl.load(w_ptr + rows * N + cols, mask=mask).to(tl.float32)
        acc += v * w
    vw = tl.sum(acc, 1)[:, None]
    for start in range(0, N, BLOCK_C):
        cols = start + tl.arange(0, BLOCK_C)[None, :]
        mask = row_mask & (cols < N)
        v = tl.load(v_ptr + rows * N + cols, mask=mask).to(tl.float32)
        w = tl.load(w_ptr + rows * N + cols, mask=mask).to(tl.float32)
        tl.store(dv_ptr + rows * N + cols, g * (w * inv - v * inv3 * vw), mask=mask)


@triton.jit
def scale_rows_by_norm(x_ptr, s_ptr, n_ptr, out_ptr, M, N, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """Rows scaled by a per-row factor and divided by an fp32 per-row norm: for 16-bit ``x`` the
    division widens the product implicitly (the pattern of a weight-norm forward's second pass)."""
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
    s = tl.load(s_ptr + rows, mask=rows < M)
    nrm = tl.load(n_ptr + rows, mask=rows < M).to(tl.float32)
    for start in range(0, N, BLOCK_C):
        cols = start + tl.arange(0, BLOCK_C)[None, :]
        x = tl.load(x_ptr + rows * N + cols, mask=(rows < M) & (cols < N))
        y = x * s / nrm
        tl.store(out_ptr + rows * N + cols, y, mask=(rows < M) & (cols < N))


@triton.jit
def row_sq_norm_cast(x_ptr, n_ptr, M, N, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """Per-row sum of squares with an explicit upcast inside the loop, beside an fp32 accumulator
    carried through it (the pattern of FlagGems' Ascend weight-norm forward first pass)."""
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
    acc = tl.zeros([BLOCK_R, BLOCK_C], dtype=tl.float32)
    for start in range(0, N, BLOCK_C):
        cols = start + tl.arange(0, BLOCK_C)[None, :]
        x = tl.load(x_ptr + rows * N + cols, mask=(rows < M) & (cols < N)).to(tl.float32)
        acc += x * x
    tl.store(n_ptr + rows, tl.sqrt(tl.sum(acc, 1))[:, None], mask=rows < M)


@triton.jit
def rows_store_or_add(x_ptr, y_ptr, M, N, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr, SPLIT: tl.constexpr):
    """Store a row block, or add it into the output when the work is split (``SPLIT`` > 1): the
    pattern of FlagGems' Ascend mm ``if SPLIT_K == 1: tl.store(...) else: tl.atomic_add(...)``,
    decided by the config at compile time."""
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
    cols = tl.arange(0, BLOCK_C)[None, :]
    mask = (rows < M) & (cols < N)
    x = tl.load(x_ptr + rows * N + cols, mask=mask)
    if SPLIT == 1:
        tl.store(y_ptr + rows * N + cols, x * 2, mask=mask)
    else:
        y = tl.load(y_ptr + rows * N + cols, mask=mask)
        tl.store(y_ptr + rows * N + cols, x + y, mask=mask)


@triton.jit
def dot_even_or_masked(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       BLOCK_K: tl.constexpr, EVEN_K: tl.constexpr):
    """A K-loop matmul whose operand loads are written twice, unmasked when K divides evenly and
    masked otherwise (FlagGems' Ascend mm pattern): either way the loads feed only ``tl.dot``."""
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        if EVEN_K:
            a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
            b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        else:
            a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(k + rk)[None, :] < K, other=0.0)
            b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=(k + rk)[:, None] < K, other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def copy_where_flagged(x_ptr, flag_ptr, out_ptr, N, BLOCK: tl.constexpr):
    """Copy ``x`` where a loaded flag is set: the store's mask is computed from loaded data (a discrete
    mask), which Triton-Ascend lowers to a read of the whole destination tile, a select and a store."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < N
    flagged = tl.load(flag_ptr + offs, mask=inside, other=0) != 0
    x = tl.load(x_ptr + offs, mask=inside, other=0.0)
    tl.store(out_ptr + offs, x, mask=flagged & inside)


@triton.jit
def copy_from_start(x_ptr, out_ptr, N, START, BLOCK: tl.constexpr):
    """The same copy under a mask of indices only (a rectangle: stored through the mask, nothing read back)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < N, other=0.0)
    tl.store(out_ptr + offs, x, mask=(offs >= START) & (offs < N))


@triton.jit
def rows_clamp_where_positive(x_ptr, out_ptr, M, N, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """Rows in a loop, each block stored only where the loaded value is positive (2-D, mask from data)."""
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
    for start in range(0, N, BLOCK_C):
        cols = start + tl.arange(0, BLOCK_C)[None, :]
        inside = (rows < M) & (cols < N)
        x = tl.load(x_ptr + rows * N + cols, mask=inside, other=0.0)
        tl.store(out_ptr + rows * N + cols, tl.minimum(x, 1.0), mask=inside & (x > 0))
