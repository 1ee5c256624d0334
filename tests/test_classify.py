"""Tiling parameters and their roles (tiletune.analysis.classify)."""

from __future__ import annotations

import textwrap

from tiletune.analysis import analyze_source
from tiletune.analysis.model import Role

HEADER = "import triton\nimport triton.language as tl\n\n"


def kernel(body: str, params: str):
    src = HEADER + f"@triton.jit\ndef k({params}):\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"
    return analyze_source(src, "k.py").kernels[0]


def role(spec, name):
    p = spec.param(name)
    return (p.tiling, p.role, p.axis, p.bound)


def test_grouped_matmul_roles():
    spec = kernel(
        """
        pid = tl.program_id(axis=0)
        num_pid_m = tl.cdiv(M, BLOCK_M)
        num_pid_n = tl.cdiv(N, BLOCK_N)
        num_pid_in_group = GROUP_M * num_pid_n
        group_id = pid // num_pid_in_group
        first_pid_m = group_id * GROUP_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
        pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
        pid_n = (pid % num_pid_in_group) // group_size_m
        offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
        offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
        offs_k = tl.arange(0, BLOCK_K)
        a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
        b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
        accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
            accumulator = tl.dot(a, b, accumulator)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk
        c = accumulator.to(tl.float16)
        offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
        c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
        tl.store(c_ptrs, c, mask=c_mask)
        """,
        "a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,"
        " BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,"
        " ACTIVATION: tl.constexpr",
    )
    assert role(spec, "BLOCK_M") == (True, Role.PARALLEL, 0, "M")
    assert role(spec, "BLOCK_N") == (True, Role.PARALLEL, 0, "N")
    assert role(spec, "BLOCK_K") == (True, Role.REDUCTION, None, "K")
    assert role(spec, "GROUP_M") == (False, Role.NON_TILING, None, None)
    assert role(spec, "ACTIVATION") == (False, Role.NON_TILING, None, None)
    for n in ("BLOCK_M", "BLOCK_N", "BLOCK_K"):
        p = spec.param(n)
        assert p.min_value == 16 and p.power_of_two, n
        assert any("tl.arange extent at line" in u for u in p.uses)
    assert any("loop" in u for u in spec.param("BLOCK_K").uses)
    assert any("binds to M" in u for u in spec.param("BLOCK_M").uses)
    assert [p.name for p in spec.params if p.is_pointer] == ["a_ptr", "b_ptr", "c_ptr"]
    assert spec.notes == []


def test_inner_tile_bound_by_mask():
    spec = kernel(
        """
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK_SIZE)
        x = tl.load(in_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
        y = tl.exp(x - tl.max(x, axis=0))
        tl.store(out_ptr + row * stride + cols, y / tl.sum(y, axis=0), mask=cols < n_cols)
        """,
        "out_ptr, in_ptr, stride, n_cols, BLOCK_SIZE: tl.constexpr",
    )
    assert role(spec, "BLOCK_SIZE") == (True, Role.INNER, None, "n_cols")
    p = spec.param("BLOCK_SIZE")
    assert p.min_value == 1 and p.power_of_two


def test_grid_stride_step_is_not_tiling():
    spec = kernel(
        """
        start = tl.program_id(0)
        num_tiles = tl.cdiv(M, BLOCK)
        for tile in range(start, num_tiles, NUM_SMS):
            offs = tile * BLOCK + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs, mask=offs < M)
            tl.store(x_ptr + offs, x + 1, mask=offs < M)
        """,
        "x_ptr, M, BLOCK: tl.constexpr, NUM_SMS: tl.constexpr",
    )
    assert role(spec, "NUM_SMS") == (False, Role.NON_TILING, None, None)
    assert any("grid-stride" in u for u in spec.param("NUM_SMS").uses)
    assert role(spec, "BLOCK") == (True, Role.PARALLEL, 0, "M")


def test_split_k_roles():
    spec = kernel(
        """
        pid = tl.program_id(0)
        pid_k = tl.program_id(1)
        offs_m = pid * BM + tl.arange(0, BM)
        acc = tl.zeros((BM, BM), dtype=tl.float32)
        for k0 in range(pid_k * BK, K, BK * SPLIT_K):
            offs_k = k0 + tl.arange(0, BK)
            a = tl.load(a_ptr + offs_m[:, None] * K + offs_k[None, :], mask=offs_k[None, :] < K)
            acc = tl.dot(a, tl.trans(a), acc)
        tl.atomic_add(c_ptr + offs_m[:, None] * M + offs_m[None, :], acc, mask=offs_m[:, None] < M)
        """,
        "a_ptr, c_ptr, M, K, BM: tl.constexpr, BK: tl.constexpr, SPLIT_K: tl.constexpr",
    )
    assert role(spec, "BK") == (True, Role.REDUCTION, None, "K")
    assert role(spec, "SPLIT_K") == (False, Role.NON_TILING, None, None)
    assert role(spec, "BM") == (True, Role.PARALLEL, 0, "M")
    # pid_k=0 gives the largest trip count
    assert str(spec.dots[0].trips) == "cdiv(K, BK * SPLIT_K)"


def test_loop_step_without_arange():
    spec = kernel(
        """
        row = tl.program_id(0)
        acc = 0.0
        for i in range(0, n, ROWS):
            acc += tl.load(x_ptr + row + i)
        tl.store(y_ptr + row, acc)
        """,
        "x_ptr, y_ptr, n, ROWS: tl.constexpr",
    )
    p = spec.param("ROWS")
    assert (p.tiling, p.role, p.bound) == (True, Role.REDUCTION, "n")
    assert not p.power_of_two


def test_modulo_binds_and_trip_count_divisor():
    spec = kernel(
        """
        pid = tl.program_id(1)
        offs = (pid * BLOCK_N + tl.arange(0, BLOCK_N)) % N
        acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
        for k in range(K // BLOCK_K):
            r = k * BLOCK_K + tl.arange(0, BLOCK_K)
            acc += tl.sum(tl.load(x_ptr + r[:, None] * N + offs[None, :]), axis=0)
        tl.store(y_ptr + offs, acc)
        """,
        "x_ptr, y_ptr, N, K, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr",
    )
    assert role(spec, "BLOCK_N") == (True, Role.PARALLEL, 1, "N")
    assert role(spec, "BLOCK_K") == (True, Role.REDUCTION, None, "K")


def test_head_dim_like_extent_is_inner_without_bound():
    spec = kernel(
        """
        pid = tl.program_id(0)
        offs_m = pid * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_d = tl.arange(0, HEAD_DIM)
        q = tl.load(q_ptr + offs_m[:, None] * HEAD_DIM + offs_d[None, :], mask=offs_m[:, None] < N)
        tl.store(o_ptr + offs_m[:, None] * HEAD_DIM + offs_d[None, :], q, mask=offs_m[:, None] < N)
        """,
        "q_ptr, o_ptr, N, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, dtype: tl.constexpr",
    )
    assert role(spec, "HEAD_DIM") == (True, Role.INNER, None, None)
    assert role(spec, "BLOCK_M") == (True, Role.PARALLEL, 0, "N")
    assert role(spec, "dtype") == (False, Role.NON_TILING, None, None)


def test_reshape_and_zeros_shapes_are_evidence():
    spec = kernel(
        """
        acc = tl.zeros((R, C), dtype=tl.float32)
        flat = tl.reshape(acc, (R * C,))
        full = tl.full((W,), 0, tl.int32)
        """,
        "R: tl.constexpr, C: tl.constexpr, W: tl.constexpr, FLAG: tl.constexpr",
    )
    for n in ("R", "C", "W"):
        assert spec.param(n).tiling and spec.param(n).role == Role.INNER
        assert spec.param(n).power_of_two
    assert not spec.param("FLAG").tiling


def test_block_ptr_roles():
    spec = kernel(
        """
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
        a = tl.make_block_ptr(a_ptr, (M, K), (sam, sak), (pid_m * BM, 0), (BM, BK), (1, 0))
        b = tl.make_block_ptr(b_ptr, (K, N), (sbk, sbn), (0, pid_n * BN), (BK, BN), (1, 0))
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            acc += tl.dot(tl.load(a, boundary_check=(0, 1)), tl.load(b, boundary_check=(0, 1)))
            a = tl.advance(a, (0, BK))
            b = tl.advance(b, (BK, 0))
        c = tl.make_block_ptr(c_ptr, (M, N), (scm, scn), (pid_m * BM, pid_n * BN), (BM, BN), (1, 0))
        tl.store(c, acc.to(tl.float16), boundary_check=(0, 1))
        """,
        "a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,"
        " BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr",
    )
    assert role(spec, "BM") == (True, Role.PARALLEL, 0, "M")
    assert role(spec, "BN") == (True, Role.PARALLEL, 1, "N")
    assert role(spec, "BK") == (True, Role.REDUCTION, None, "K")
    assert all(spec.param(n).power_of_two and spec.param(n).min_value == 16 for n in ("BM", "BN", "BK"))


def test_non_constexpr_params_are_never_tiling():
    spec = kernel(
        """
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs * stride, mask=offs < n)
        tl.store(x_ptr + offs * stride, x * alpha, mask=offs < n)
        """,
        "x_ptr, stride, n, alpha, BLOCK: tl.constexpr",
    )
    for n in ("x_ptr", "stride", "n", "alpha"):
        assert not spec.param(n).tiling and spec.param(n).role == Role.NON_TILING
    assert spec.param("x_ptr").is_pointer
    assert not spec.param("alpha").is_pointer


# ----- loop-sized and structured tiles -------------------------------------------------
def test_rows_per_program_is_a_parallel_tiling_parameter():
    spec = kernel(
        """
        pid = tl.program_id(0)
        cols = tl.arange(0, BLOCK_N)
        for r in range(ROWS_PER_PROG):
            row = pid * ROWS_PER_PROG + r
            mask = (cols < N) & (row < M)
            x = tl.load(x_ptr + row * stride + cols, mask=mask)
            tl.store(y_ptr + row * stride + cols, x * 2, mask=mask)
        """,
        "x_ptr, y_ptr, stride, M, N, BLOCK_N: tl.constexpr, ROWS_PER_PROG: tl.constexpr, UNROLL: tl.constexpr",
    )
    assert role(spec, "ROWS_PER_PROG") == (True, Role.PARALLEL, 0, "M")
    assert any("rows per program" in u for u in spec.param("ROWS_PER_PROG").uses)
    assert role(spec, "BLOCK_N") == (True, Role.INNER, None, "N")
    assert not spec.param("UNROLL").tiling


def test_rows_per_program_range_from_start_and_plain_loops():
    spec = kernel(
        """
        start = tl.program_id(0) * ROWS
        cols = tl.arange(0, BLOCK_N)
        for row in range(start, start + ROWS):
            x = tl.load(x_ptr + row * N + cols, mask=(cols < N) & (row < M))
            tl.store(x_ptr + row * N + cols, x + 1, mask=(cols < N) & (row < M))
        for i in range(REPEAT):
            tl.store(x_ptr + cols, cols, mask=cols < N)
        """,
        "x_ptr, M, N, BLOCK_N: tl.constexpr, ROWS: tl.constexpr, REPEAT: tl.constexpr",
    )
    assert role(spec, "ROWS") == (True, Role.PARALLEL, 0, "M")
    assert not spec.param("REPEAT").tiling  # bounds a loop, multiplies no program id
    assert str(spec.accesses[0].trips) == "ROWS"


def test_modulo_for_indexing_is_not_a_bound_when_a_mask_is():
    spec = kernel(
        """
        i_t = tl.program_id(0)
        o_t = i_t * BT + tl.arange(0, BT)
        m_t = o_t < T
        x = tl.load(x_ptr + o_t, mask=m_t)
        w = tl.load(w_ptr + o_t % G, mask=m_t)
        tl.store(y_ptr + o_t, x * w, mask=m_t)
        """,
        "x_ptr, w_ptr, y_ptr, T, G, BT: tl.constexpr",
    )
    assert role(spec, "BT") == (True, Role.PARALLEL, 0, "T")
    wrapped = kernel(
        """
        offs = (tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)) % M
        tl.store(y_ptr + offs, tl.load(x_ptr + offs))
        """,
        "x_ptr, y_ptr, M, BLOCK: tl.constexpr",
    )
    assert role(wrapped, "BLOCK") == (True, Role.PARALLEL, 0, "M")


def test_end_anchored_tile_does_not_cover_the_extent():
    spec = kernel(
        """
        row = tl.program_id(0)
        o = seq_len - BW + tl.arange(0, BW)
        x = tl.load(x_ptr + row * seq_len + o, mask=(o >= 0) & (o < seq_len), other=0.0)
        tl.store(y_ptr + row * stride_y + tl.arange(0, BW), x)
        """,
        "x_ptr, y_ptr, seq_len, stride_y, BW: tl.constexpr",
    )
    assert role(spec, "BW") == (True, Role.INNER, None, None)  # no "BW >= seq_len"


def test_loop_over_a_trip_count_passed_separately_walks_the_tile():
    spec = kernel(
        """
        i_b = tl.program_id(0)
        acc = tl.zeros([BT], dtype=tl.float32)
        for i_t in range(NT):
            o_t = i_t * BT + tl.arange(0, BT)
            acc += tl.load(x_ptr + i_b * T + o_t, mask=o_t < T, other=0.0)
        tl.store(y_ptr + i_b * stride_y + tl.arange(0, BT), acc)
        """,
        "x_ptr, y_ptr, T, NT, stride_y, BT: tl.constexpr",
    )
    assert role(spec, "BT") == (True, Role.REDUCTION, None, "T")
    assert any("walked by a loop" in u for u in spec.param("BT").uses)


def test_flattened_loop_index_walks_the_tile():
    spec = kernel(
        """
        pid = tl.program_id(0)
        offs_co = pid * BLOCK_CO + tl.arange(0, BLOCK_CO)
        acc = tl.zeros([BLOCK_CO], dtype=tl.float32)
        for i in range(KSIZE * COUNT):
            c = (i % COUNT) * BLOCK_CI
            offs_ci = c + tl.arange(0, BLOCK_CI)
            x = tl.load(x_ptr + offs_ci, mask=offs_ci < C_in, other=0.0)
            acc += tl.sum(x) + offs_co
        tl.store(y_ptr + offs_co, acc, mask=offs_co < C_out)
        """,
        "x_ptr, y_ptr, C_in, C_out, KSIZE: tl.constexpr, COUNT: tl.constexpr, BLOCK_CO: tl.constexpr, BLOCK_CI: tl.constexpr",
    )
    assert role(spec, "BLOCK_CI") == (True, Role.REDUCTION, None, "C_in")
    assert role(spec, "BLOCK_CO") == (True, Role.PARALLEL, 0, "C_out")
    assert not spec.param("COUNT").tiling and not spec.param("KSIZE").tiling


def test_explicit_sub_chunks_do_not_cover_the_extent():
    spec = kernel(
        """
        i_t = tl.program_id(0)
        o_a = i_t * BT + tl.arange(0, BC)
        o_b = i_t * BT + BC + tl.arange(0, BC)
        a = tl.load(x_ptr + o_a, mask=o_a < T, other=0.0)
        b = tl.load(x_ptr + o_b, mask=o_b < T, other=0.0)
        p = tl.make_block_ptr(x_ptr, (T, K), (K, 1), (i_t * BT + BC, 0), (BC, BK), (1, 0))
        c = tl.load(p, boundary_check=(0, 1))
        o_t = i_t * BT + tl.arange(0, BT)
        tl.store(y_ptr + o_t, tl.load(x_ptr + o_t, mask=o_t < T), mask=o_t < T)
        tl.store(y_ptr + o_a, a + b + tl.sum(c, axis=1), mask=o_a < T)
        """,
        "x_ptr, y_ptr, T, K, BT: tl.constexpr, BC: tl.constexpr, BK: tl.constexpr",
    )
    assert role(spec, "BT") == (True, Role.PARALLEL, 0, "T")
    assert role(spec, "BC")[:2] == (True, Role.INNER) and spec.param("BC").bound != "T"


def test_rows_per_program_clipped_by_min():
    spec = kernel(
        """
        row_start = tl.program_id(0) * ROWS
        cols = tl.arange(0, BLOCK_N)
        for row in range(row_start, tl.minimum(row_start + ROWS, M)):
            x = tl.load(x_ptr + row * N + cols, mask=cols < N)
            tl.store(x_ptr + row * N + cols, x * 2, mask=cols < N)
        """,
        "x_ptr, M, N, BLOCK_N: tl.constexpr, ROWS: tl.constexpr",
    )
    assert role(spec, "ROWS") == (True, Role.PARALLEL, 0, "M")
    assert str(spec.accesses[0].trips) == "ROWS"
