"""Kernels whose tiling a careless probe misreads (flags, unit sizes, launch-computed blocks)."""
import torch
import triton
import triton.language as tl

from triton.language.math import tanh  # a Triton-version shim: this Triton keeps tanh in libdevice

NUM_SMS = torch.cuda.get_device_properties(0).multi_processor_count  # a module-level CUDA probe


@triton.jit
def flag_branch_kernel(a_ptr, q_ptr, out_ptr, T, K: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr,
                       USE_A: tl.constexpr):
    # BK sizes tiles only when USE_A is off: flags all on hide it
    o_t = tl.program_id(0) * BT + tl.arange(0, BT)
    if USE_A:
        b = tl.load(a_ptr + o_t, mask=o_t < T, other=0.0)
    else:
        b = tl.zeros([BT], dtype=tl.float32)
        for i_k in range(tl.cdiv(K, BK)):
            o_k = i_k * BK + tl.arange(0, BK)
            x = tl.load(q_ptr + o_t[:, None] * K + o_k[None, :], mask=(o_t < T)[:, None] & (o_k < K)[None, :], other=0.0)
            b += tl.sum(x.to(tl.float32), axis=1)
    tl.store(out_ptr + o_t, tanh(b.to(tl.float32)), mask=o_t < T)


@triton.jit
def width_loop_kernel(x_ptr, out_ptr, D: tl.constexpr, W: tl.constexpr, BD: tl.constexpr):
    # W counts an unrolled loop; at W=1 the loop is empty and the IR has no tile at all
    o_d = tl.program_id(0) * BD + tl.arange(0, BD)
    for i_w in tl.static_range(1, W):
        b = tl.load(x_ptr + i_w * D + o_d, mask=o_d < D, other=0.0)
        tl.store(out_ptr + i_w * D + o_d, b, mask=o_d < D)


def launch(a, q, out, x, y, T, K, D, W):
    BK = min(64, triton.next_power_of_2(K))
    flag_branch_kernel[(triton.cdiv(T, 32),)](a, q, out, T, K=K, BT=32, BK=BK, USE_A=a is not None)
    width_loop_kernel[(triton.cdiv(D, 64),)](x, y, D=D, W=W, BD=64)


def _build():
    @triton.jit
    def nested_copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

    return nested_copy_kernel


@triton.jit
def rows_per_program_kernel(x_ptr, y_ptr, n_rows, n_cols, ROWS: tl.constexpr, BLOCK: tl.constexpr,
                            STRIDE: tl.constexpr):
    # ROWS sets the work of a program through a loop only (no tile of ROWS); STRIDE is a grid-stride step
    cols = tl.arange(0, BLOCK)
    for r in range(ROWS):
        row = tl.program_id(0) * ROWS + r
        x = tl.load(x_ptr + row * n_cols + cols, mask=(cols < n_cols) & (row < n_rows), other=0.0)
        tl.store(y_ptr + row * n_cols + cols, x, mask=(cols < n_cols) & (row < n_rows))
    for row in range(tl.program_id(1), n_rows, STRIDE):
        tl.store(y_ptr + row, 0.0)


@triton.jit
def coupled_tiles_kernel(h_ptr, v_ptr, K: tl.constexpr, V: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr):
    # BK and BV must be equal (a [BK] row is added to a [BK, BV] tile): Triton refuses moving either alone
    o_k = tl.arange(0, BK)
    o_v = tl.arange(0, BV)
    b_h = tl.load(h_ptr + o_k[:, None] * V + o_v[None, :], mask=(o_k < K)[:, None] & (o_v < V)[None, :])
    b_v = tl.load(v_ptr + o_k, mask=o_k < K)
    tl.store(h_ptr + o_k[:, None] * V + o_v[None, :], b_h + b_v[None, :],
             mask=(o_k < K)[:, None] & (o_v < V)[None, :])


def launch_coupled(h, v, K, V):
    BK, BV = max(triton.next_power_of_2(K), 16), max(triton.next_power_of_2(V), 16)
    coupled_tiles_kernel[(1,)](h, v, K=K, V=V, BK=BK, BV=BV)


@triton.jit
def tile_value_branch_kernel(x_ptr, y_ptr, L, BL: tl.constexpr, BN: tl.constexpr):
    # BL sizes tiles only when BN == 1, a value no probe takes: probe-limited, not a disagreement
    if BN == 1:
        o_l = tl.arange(0, BL)
        tl.store(y_ptr + o_l, tl.load(x_ptr + o_l, mask=o_l < L), mask=o_l < L)
    else:
        o_n = tl.program_id(0) * BN + tl.arange(0, BN)
        tl.store(y_ptr + o_n, tl.load(x_ptr + o_n, mask=o_n < L), mask=o_n < L)


def _logged(fn):
    """A library's decorator over the jit function (functools.wraps): the kernel is reached through it."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


@_logged
@triton.jit
def wrapped_copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit
def string_choice_kernel(x_ptr, loss_ptr, n, BLOCK: tl.constexpr, reduction: tl.constexpr):
    # a string constexpr decides which store exists: the static reading specialised with it must agree
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    if reduction == "none":
        tl.store(loss_ptr + offs, x, mask=offs < n)
    if reduction != "none":
        tl.store(loss_ptr, tl.sum(x, axis=0))


def _has_device():
    return False  # a module-level device check (torch.utils._triton.has_triton) that fails on this machine


if _has_device():
    import triton.language as tlg  # what the guarded kernel reads is imported under the guard too

    @triton.jit
    def guarded_copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tlg.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit
def gather_rows_kernel(table_ptr, idx_ptr, out_ptr, n, D: tl.constexpr, BLOCK_M: tl.constexpr,
                       BLOCK_D: tl.constexpr, OUT_DTYPE: tl.constexpr):
    # idx_ptr holds indices (no element type in the source): a probe typing it fp16 is refused by Triton;
    # OUT_DTYPE is an element type, which an integer probe value cannot stand for
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    idx = tl.load(idx_ptr + offs_m, mask=offs_m < n, other=0)
    offs_d = tl.arange(0, BLOCK_D)
    rows = tl.load(table_ptr + idx[:, None] * D + offs_d[None, :], mask=(offs_d < D)[None, :], other=0.0)
    tl.store(out_ptr + offs_m[:, None] * D + offs_d[None, :], rows.to(OUT_DTYPE),
             mask=(offs_m < n)[:, None] & (offs_d < D)[None, :])


@triton.jit
def local_flag_kernel(x_ptr, idx_ptr, y_ptr, n, BLOCK: tl.constexpr, PERMUTE_X: tl.constexpr,
                      PERMUTE_Y: tl.constexpr):
    # a local constexpr computed from flags decides a branch: with both flags off the gather is dead
    SHOULD_PERMUTE: tl.constexpr = PERMUTE_X or PERMUTE_Y
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if SHOULD_PERMUTE:
        offs = tl.load(idx_ptr + offs, mask=offs < n, other=0)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n, other=0.0), mask=offs < n)
