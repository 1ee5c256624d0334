"""Kernels whose tile parameters carry meaning: a value other than the one the data was built for
computes something else.  Written for tiletune's tests (issue: no silent wrong results); each is
in a pattern real libraries use, none copied from one.

* ``group_scaled_matmul``: C = (A * a_scale) @ (B * b_scale) where A has one scale per row and per
  group of ``group_k`` columns.  The kernel loads ONE scale per ``BLOCK_K`` step, so it is right
  only while ``BLOCK_K`` divides ``group_k``.
* ``routed_matmul``: rows of A routed to one of E weight matrices; the host sorts and pads the rows
  so that every ``BLOCK_M`` block holds rows of one expert, and the kernel reads one expert id per
  block.  Right only at the ``BLOCK_M`` the host padded for.
* ``block_partial_sum``: each program writes the sum of its ``BLOCK`` elements into ``out[pid]``:
  the output's meaning (and length) depends on ``BLOCK``.
* ``stepped_scale_matmul``: as ``group_scaled_matmul`` but the scale pointer is stepped by one
  group per ``BLOCK_K`` iteration (``s_ptrs += stride``).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def group_scaled_matmul_kernel(a_ptr, b_ptr, c_ptr, as_ptr, M, N, K, group_k,
                               stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                               stride_asm, stride_ask,
                               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_start = k * BLOCK_K
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + (k_start + offs_k)[None, :] * stride_ak,
                    mask=(offs_m[:, None] < M) & ((k_start + offs_k)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k_start + offs_k)[:, None] * stride_bk + offs_n[None, :] * stride_bn,
                    mask=((k_start + offs_k)[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        group = k_start // group_k
        a_s = tl.load(as_ptr + offs_m * stride_asm + group * stride_ask, mask=offs_m < M, other=0.0)
        acc += tl.dot(a, b) * a_s[:, None]
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn, acc,
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def stepped_scale_matmul_kernel(a_ptr, b_ptr, c_ptr, as_ptr, M, N, K,
                                stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                                stride_asm, stride_ask,
                                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    s_ptrs = as_ptr + offs_m * stride_asm
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k * BLOCK_K), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < K - k * BLOCK_K) & (offs_n[None, :] < N), other=0.0)
        a_s = tl.load(s_ptrs, mask=offs_m < M, other=0.0)
        acc += tl.dot(a, b) * a_s[:, None]
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
        s_ptrs += stride_ask
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn, acc,
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def routed_matmul_kernel(a_ptr, w_ptr, c_ptr, sorted_rows_ptr, block_expert_ptr, num_padded, M, N, K,
                         stride_am, stride_ak, stride_we, stride_wk, stride_wn, stride_cm, stride_cn,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    if pid_m * BLOCK_M >= num_padded:
        return
    offs = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rows = tl.load(sorted_rows_ptr + offs, mask=offs < num_padded, other=M)
    expert = tl.load(block_expert_ptr + pid_m)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        kk = k * BLOCK_K + offs_k
        a = tl.load(a_ptr + rows[:, None] * stride_am + kk[None, :] * stride_ak,
                    mask=(rows[:, None] < M) & (kk[None, :] < K), other=0.0)
        w = tl.load(w_ptr + expert * stride_we + kk[:, None] * stride_wk + offs_n[None, :] * stride_wn,
                    mask=(kk[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, w)
    tl.store(c_ptr + rows[:, None] * stride_cm + offs_n[None, :] * stride_cn, acc,
             mask=(rows[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def block_partial_sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + pid, tl.sum(x, axis=0))


# ----- host side: what the launching code of such a library does --------------------------------
def route_rows(expert_of_row: torch.Tensor, num_experts: int, block_m: int):
    """Sort rows by expert and pad each expert's rows to a multiple of ``block_m`` (padding rows = M)."""
    m = expert_of_row.numel()
    rows, experts = [], []
    for e in range(num_experts):
        mine = (expert_of_row == e).nonzero().flatten().tolist()
        if not mine:
            continue
        pad = (-len(mine)) % block_m
        rows.extend(mine + [m] * pad)
        experts.extend([e] * ((len(mine) + pad) // block_m))
    return (torch.tensor(rows, dtype=torch.int32), torch.tensor(experts, dtype=torch.int32), len(rows))


def reference_group_scaled(a, b, a_scale, group_k):
    """C for group_scaled_matmul_kernel's inputs, in float32."""
    scale = a_scale.repeat_interleave(group_k, dim=1)[:, : a.shape[1]]
    return (a.float() * scale) @ b.float()
