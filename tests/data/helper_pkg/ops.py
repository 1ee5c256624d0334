"""Host code in another module launches the kernels (as libraries do)."""
import triton

from .kernels.matmul import matmul_kernel
from .kernels import matmul as mm


def matmul(a, b, c, block_size_k):
    M, K = a.shape
    _, N = b.shape
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                        c.stride(1), BLOCK_K=block_size_k)


def rows(x, y, config):
    n_rows, n_cols = x.shape
    grid = (triton.cdiv(n_rows, 4) * triton.cdiv(n_cols, config["BLOCK_N"]),)
    mm.rows_kernel[grid](x, y, n_rows, n_cols, BLOCK_N=config["BLOCK_N"])
