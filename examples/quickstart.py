"""Quickstart: ``configs=[]`` tunes a matmul kernel, then says which config it chose and why.

Run it from the repository root::

    python examples/quickstart.py

On a machine with a CUDA GPU the kernel is tuned and timed on the GPU; without
one it runs on the CPU under Triton's interpreter (``TRITON_INTERPRET=1``, set
here before Triton is imported), where the timings only show the mechanics.
The winner is cached on disk (``tiletune cache list``); a second run reuses it.
Then try ``synth-configs examples/quickstart.py --shape M=4096 --shape N=4096
--shape K=4096 --target h100`` for configs to paste, with no device at all.
"""

import os

import torch

ON_GPU = torch.cuda.is_available()
if not ON_GPU:
    os.environ.setdefault("TRITON_INTERPRET", "1")  # must be set before triton is imported

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import tiletune  # noqa: E402
from tiletune.runtime.cache import cache_dir  # noqa: E402
from tiletune.runtime.explain import explain_cached  # noqa: E402


@tiletune.autotune(configs=[], key=["M", "N", "K"])
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """C = A @ B, one BLOCK_M x BLOCK_N tile of C per program, fp32 accumulation."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """A @ B through the tuned kernel (the grid reads the tile sizes from ``meta``)."""
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))  # noqa: E731
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1))
    return c


def main() -> None:
    """Tune one shape, check the result against torch, print the choice and why."""
    device = "cuda" if ON_GPU else "cpu"
    M, N, K = (2048, 2048, 2048) if ON_GPU else (128, 128, 64)
    where = torch.cuda.get_device_name() if ON_GPU else "the CPU, under TRITON_INTERPRET=1 (no GPU found)"
    print(f"tuning matmul_kernel for M={M}, N={N}, K={K} fp16 on {where} ...", flush=True)
    torch.manual_seed(0)
    a = torch.randn((M, K), device=device, dtype=torch.float16)
    b = torch.randn((K, N), device=device, dtype=torch.float16)
    c = matmul(a, b)
    torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=1e-2, atol=1e-1)
    print(f"result matches torch; chosen config: {matmul_kernel.best_config}\n")
    print("why (the same as `tiletune explain matmul_kernel`):")
    print(explain_cached("matmul_kernel", cache_dir()))


if __name__ == "__main__":
    main()
