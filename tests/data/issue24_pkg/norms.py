"""Kernels whose tile extents are derived: ``triton.next_power_of_2`` of a constexpr size, and a
``tl.dot`` extent that is a tiling parameter divided by a constant factor."""
import triton
import triton.language as tl


@triton.jit
def rms_rows_kernel(x_ptr, y_ptr, n_rows, K: tl.constexpr, BLOCK_R: tl.constexpr):
    BK: tl.constexpr = triton.next_power_of_2(K)
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.arange(0, BK)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < K)
    x = tl.load(x_ptr + rows[:, None] * K + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    rms = tl.sqrt(tl.sum(x * x, axis=1) / K + 1e-6)
    tl.store(y_ptr + rows[:, None] * K + cols[None, :], x / rms[:, None], mask=mask)


@triton.jit
def half_block_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M1: tl.constexpr, BLOCK_N: tl.constexpr,
                             BLOCK_K: tl.constexpr, FACTOR: tl.constexpr):
    BLOCK_M: tl.constexpr = BLOCK_M1 // FACTOR
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        rk = k + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def half_block_matmul(a, b, c):
    M, K = a.shape
    _, N = b.shape
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M1"] // 4), triton.cdiv(N, meta["BLOCK_N"]))
    half_block_matmul_kernel[grid](a, b, c, M, N, K, FACTOR=4)
