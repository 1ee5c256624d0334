"""Held-out kernel: the output of chunked linear attention, per chunk of BT positions and head.

o[t] = scale * (q[t] @ h[chunk]) + scale * sum_{s <= t, s in chunk} (q[t] . k[s]) v[s]
q, k: (B*H, T, K), v, o: (B*H, T, V), h: (B*H, NT, K, V) the state entering each chunk, fp16 in, fp32
accumulation.  Programs over (V tiles, chunks, B*H); a loop over K in BK steps accumulates q @ h and
q @ k^T, then the causal mask and the second dot.  BT (the chunk size) is fixed by the caller; BK, BV
are the tiles.  Written for the held-out part of the cold bench.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def chunk_attn_out_kernel(
    q_ptr, k_ptr, v_ptr, h_ptr, o_ptr, scale,
    T, K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr,
    BK: tl.constexpr, BV: tl.constexpr,
):
    i_v = tl.program_id(0)
    i_t = tl.program_id(1)
    i_bh = tl.program_id(2)
    NT = tl.cdiv(T, BT)
    rt = i_t * BT + tl.arange(0, BT)
    rv = i_v * BV + tl.arange(0, BV)
    acc_o = tl.zeros((BT, BV), dtype=tl.float32)
    acc_a = tl.zeros((BT, BT), dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        q = tl.load(q_ptr + i_bh * T * K + rt[:, None] * K + rk[None, :],
                    mask=(rt[:, None] < T) & (rk[None, :] < K), other=0.0)
        kt = tl.load(k_ptr + i_bh * T * K + rt[None, :] * K + rk[:, None],
                     mask=(rt[None, :] < T) & (rk[:, None] < K), other=0.0)
        h = tl.load(h_ptr + (i_bh * NT + i_t) * K * V + rk[:, None] * V + rv[None, :],
                    mask=(rk[:, None] < K) & (rv[None, :] < V), other=0.0)
        acc_o += tl.dot(q, h)
        acc_a += tl.dot(q, kt)
    causal = tl.arange(0, BT)[:, None] >= tl.arange(0, BT)[None, :]
    acc_a = tl.where(causal, acc_a, 0.0)
    v = tl.load(v_ptr + i_bh * T * V + rt[:, None] * V + rv[None, :],
                mask=(rt[:, None] < T) & (rv[None, :] < V), other=0.0)
    o = (acc_o + tl.dot(acc_a.to(v.dtype), v)) * scale
    tl.store(o_ptr + i_bh * T * V + rt[:, None] * V + rv[None, :], o.to(o_ptr.dtype.element_ty),
             mask=(rt[:, None] < T) & (rv[None, :] < V))


KERNEL = chunk_attn_out_kernel
KEY = ["T", "K", "V", "BT"]
TILING = ["BK", "BV"]
SHAPES = [{"BH": 2, "T": 40, "K": 32, "V": 32, "BT": 16}, {"BH": 1, "T": 16, "K": 16, "V": 32, "BT": 16}]
BENCH_SHAPES = [{"BH": 32, "T": 4096, "K": 128, "V": 128, "BT": 64}]
EXAMPLE_CONFIG = {"BK": 16, "BV": 16}
# The author's list in the style of chunked-attention libraries: tiles x warps x stages.
HAND_CONFIGS = [
    triton.Config({"BK": bk, "BV": bv}, num_warps=w, num_stages=s)
    for bk in (64, 128) for bv in (64, 128) for w in (4, 8) for s in (2, 3)
]
RESTORE_VALUE: list = []
RESET_TO_ZERO: list = []
TOLERANCE = {"atol": 5e-2, "rtol": 5e-2}


def make_args(shape, device="cpu", dtype=None):
    bh, t, k, v, bt = shape["BH"], shape["T"], shape["K"], shape["V"], shape["BT"]
    nt = triton.cdiv(t, bt)
    q = (torch.randn(bh, t, k, device=device) / k ** 0.5).half()
    kk = (torch.randn(bh, t, k, device=device) / k ** 0.5).half()
    vv = torch.randn(bh, t, v, device=device).half()
    h = (torch.randn(bh, nt, k, v, device=device) / k ** 0.5).half()
    o = torch.empty(bh, t, v, device=device, dtype=torch.float16)
    return {"q_ptr": q, "k_ptr": kk, "v_ptr": vv, "h_ptr": h, "o_ptr": o, "scale": k ** -0.5,
            "T": t, "K": k, "V": v, "BT": bt}


def launch(kernel, args, **meta):
    bh = args["q_ptr"].shape[0]
    grid = lambda meta: (triton.cdiv(args["V"], meta["BV"]), triton.cdiv(args["T"], args["BT"]), bh)  # noqa: E731
    kernel[grid](**args, **meta)


def reference(args):
    q, k, v, h = (args[n].float() for n in ("q_ptr", "k_ptr", "v_ptr", "h_ptr"))
    bt, t = args["BT"], args["T"]
    out = torch.empty_like(v)
    for c in range(h.shape[1]):
        s, e = c * bt, min(t, (c + 1) * bt)
        qc, kc, vc = q[:, s:e], k[:, s:e], v[:, s:e]
        a = torch.tril(qc @ kc.transpose(1, 2))
        out[:, s:e] = (qc @ h[:, c] + a.half().float() @ vc) * args["scale"]
    return [out]


def outputs(args):
    return [args["o_ptr"]]
