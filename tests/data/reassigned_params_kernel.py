"""A kernel in fla-core's chunked pattern, for the analysis-determinism test
(tests/test_static_params_determinism.py): pointer parameters are moved with ``+=`` and ``T`` is
rebound under a varlen branch, so the parameters' first values die while the body goes on and later
branch tests look up other names. Read by the analyser only, never imported."""

import triton
import triton.language as tl


@triton.jit
def chunk_bwd_kernel(
    q,
    k,
    do,
    dq,
    dg,
    g,
    cu_seqlens,
    chunk_indices,
    scale,
    T,
    H: tl.constexpr,
    K: tl.constexpr,
    BT: tl.constexpr,
    BK: tl.constexpr,
    USE_G: tl.constexpr,
    IS_VARLEN: tl.constexpr,
):
    i_k, i_t, i_bh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    i_b, i_h = i_bh // H, i_bh % H
    if IS_VARLEN:
        i_n, i_t = tl.load(chunk_indices + i_t * 2).to(tl.int32), tl.load(chunk_indices + i_t * 2 + 1).to(tl.int32)
        bos, eos = tl.load(cu_seqlens + i_n).to(tl.int32), tl.load(cu_seqlens + i_n + 1).to(tl.int32)
        T = eos - bos
    else:
        bos, eos = i_b * T, i_b * T + T
    q += (bos * H + i_h) * K
    k += (bos * H + i_h) * K
    do += (bos * H + i_h) * K
    dq += (bos * H + i_h) * K
    dg += (bos * H + i_h) * K
    RCP_LN2: tl.constexpr = 1.4426950216
    LN2: tl.constexpr = 0.6931471805599453
    HALF: tl.constexpr = 0.5
    p_q = tl.make_block_ptr(q, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
    p_k = tl.make_block_ptr(k, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
    p_do = tl.make_block_ptr(do, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
    b_q = tl.load(p_q, boundary_check=(0, 1))
    b_k = tl.load(p_k, boundary_check=(0, 1))
    b_do = tl.load(p_do, boundary_check=(0, 1))
    b_a = tl.dot(b_q, tl.trans(b_k))
    b_dq = tl.dot(b_a.to(b_k.dtype), b_k) * scale
    b_dg = LN2 * b_do * b_q * RCP_LN2
    if HALF > 0:
        b_dg = b_dg * HALF
    if USE_G:
        p_g = tl.make_block_ptr(g + (bos * H + i_h) * K, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
        b_g = tl.load(p_g, boundary_check=(0, 1))
        b_dq = b_dq * tl.exp(b_g)
        b_dg = b_dg + b_g
    if g is not None:
        b_dg = b_dg * 2
    p_dq = tl.make_block_ptr(dq, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
    p_dg = tl.make_block_ptr(dg, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
    tl.store(p_dq, b_dq.to(p_dq.dtype.element_ty), boundary_check=(0, 1))
    tl.store(p_dg, b_dg.to(p_dg.dtype.element_ty), boundary_check=(0, 1))
