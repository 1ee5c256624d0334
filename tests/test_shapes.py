"""Symbolic shape and dtype propagation over kernel bodies (tiletune.analysis.shapes)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from tiletune.analysis import analyze_source
from tiletune.analysis.expr import parse_expr
from tiletune.analysis.model import KernelSpec, Param, Span
from tiletune.analysis.shapes import Interpreter

HEADER = "import triton\nimport triton.language as tl\n\n"


def kernel(body: str, params: str = "x_ptr, y_ptr, N, BLOCK: tl.constexpr"):
    """Analyse ``@triton.jit def k(<params>): <body>`` with the full front end."""
    src = HEADER + f"@triton.jit\ndef k({params}):\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"
    module = analyze_source(src, "k.py")
    return module.kernels[0]


def interpret(body: str, params: str = "x_ptr, y_ptr, N, BLOCK: tl.constexpr"):
    """Run the interpreter alone and return its final environment and trace."""
    src = HEADER + f"def k({params}):\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"
    wrapper = cst.metadata.MetadataWrapper(cst.parse_module(src))
    positions = wrapper.resolve(cst.metadata.PositionProvider)
    func = next(n for n in wrapper.module.body if isinstance(n, cst.FunctionDef))
    spec = KernelSpec(name="k", span=Span(1, 0, 1, 0))
    for i, p in enumerate(func.params.params):
        ann = p.annotation
        constexpr = ann is not None and "constexpr" in cst.Module([]).code_for_node(ann.annotation)
        spec.params.append(Param(name=p.name.value, index=i, span=Span(1, 0, 1, 0), constexpr=constexpr))
    interp = Interpreter(spec, positions, {})
    trace = interp.run(func)
    return interp.env, trace


def shape(v):
    return None if v.shape is None else [str(d) for d in v.shape]


def sh(*dims):
    return [str(parse_expr(d)) if isinstance(d, str) else str(d) for d in dims]


# ----- basics ---------------------------------------------------------------------
def test_arange_indexing_and_broadcast():
    env, _ = interpret(
        """
        offs_m = tl.arange(0, BM)
        offs_n = tl.arange(0, BN)
        col = offs_m[:, None]
        row = offs_n[None, :]
        ptrs = x_ptr + col * 4 + row
        three = offs_m[None, :, None]
        """,
        params="x_ptr, BM: tl.constexpr, BN: tl.constexpr",
    )
    assert shape(env["offs_m"]) == ["BM"]
    assert shape(env["col"]) == ["BM", "1"]
    assert shape(env["row"]) == ["1", "BN"]
    assert shape(env["ptrs"]) == ["BM", "BN"]
    assert shape(env["three"]) == ["1", "BM", "1"]
    assert env["offs_m"].dtype == "int32"
    assert env["ptrs"].ptrs == frozenset({"x_ptr"})


def test_arange_with_offset_and_alias():
    env, _ = interpret(
        """
        B = BLOCK
        a = tl.arange(0, B * 2)
        b = tl.arange(4, 4 + B)
        """
    )
    assert shape(env["a"]) == sh("2 * BLOCK")
    assert shape(env["b"]) == ["BLOCK"]


def test_load_store_shapes_and_dtypes():
    spec = kernel(
        """
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < N, other=0.0)
        y = x.to(tl.float32) * 2.0
        tl.store(y_ptr + offs, y.to(tl.float16), mask=offs < N)
        """
    )
    load, store = spec.accesses
    assert (load.kind, load.pointer, load.dtype) == ("load", "x_ptr", "elem:x_ptr")
    assert [str(d) for d in load.shape] == ["BLOCK"]
    assert (store.kind, store.pointer) == ("store", "y_ptr")
    assert [str(d) for d in store.shape] == ["BLOCK"]
    assert spec.loaded_pointers == ["x_ptr"] and spec.stored_pointers == ["y_ptr"]
    assert load.contiguous_dim == 0 and load.trips is not None and str(load.trips) == "1"


def test_dtype_promotion():
    env, _ = interpret(
        """
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        f = x.to(tl.float32)
        a = f + x
        b = x * 2
        c = x + 1.5
        m = x > 0
        i = offs + 1
        d = offs / 2
        h = tl.zeros([BLOCK], dtype=tl.float16) + tl.zeros([BLOCK], dtype=tl.bfloat16)
        e = tl.exp(offs)
        s = tl.sum(m, axis=0)
        """
    )
    assert env["x"].dtype == "elem:x_ptr"
    assert env["a"].dtype == "fp32"
    assert env["b"].dtype == "elem:x_ptr"
    assert env["c"].dtype == "elem:x_ptr"
    assert env["m"].dtype == "int1"
    assert env["i"].dtype == "int32"
    assert env["d"].dtype == "fp32"
    assert env["h"].dtype == "fp32"
    assert env["e"].dtype == "fp32"
    assert env["s"].dtype == "int32" and env["s"].shape == ()


def test_element_type_of_pointer():
    env, _ = interpret(
        """
        offs = tl.arange(0, BLOCK)
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        out = acc.to(y_ptr.dtype.element_ty)
        z = tl.zeros((BLOCK,), dtype=x_ptr.dtype.element_ty)
        """
    )
    assert env["out"].dtype == "elem:y_ptr"
    assert env["z"].dtype == "elem:x_ptr"


# ----- dots -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "stmt",
    ["acc += tl.dot(a, b)", "acc = tl.dot(a, b, acc)", "acc = tl.dot(a, b, acc=acc)"],
)
def test_dot_shapes(stmt):
    spec = kernel(
        f"""
        rm = tl.arange(0, BM)
        rn = tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            a = tl.load(a_ptr + rm[:, None] * K + rk[None, :] + k)
            b = tl.load(b_ptr + rk[:, None] * N + rn[None, :] + k * N)
            {stmt}
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)
        """,
        params="a_ptr, b_ptr, c_ptr, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr",
    )
    (d,) = spec.dots
    assert (str(d.m), str(d.n), str(d.k)) == ("BM", "BN", "BK")
    assert (d.a_dtype, d.b_dtype, d.acc_dtype) == ("elem:a_ptr", "elem:b_ptr", "fp32")
    assert d.in_loop and str(d.trips) == "cdiv(K, BK)"
    a, b, c = spec.accesses
    assert a.feeds_dot and b.feeds_dot and not c.feeds_dot
    assert [str(x) for x in c.shape] == ["BM", "BN"]
    assert a.in_loop and str(a.trips) == "cdiv(K, BK)"
    assert spec.notes == []


def test_dot_out_dtype_and_int8():
    env, trace = interpret(
        """
        r = tl.arange(0, BLOCK)
        a = tl.load(x_ptr + r[:, None] * BLOCK + r[None, :]).to(tl.int8)
        c = tl.dot(a, a)
        h = tl.zeros((BLOCK, BLOCK), dtype=tl.float16)
        d = tl.dot(h, h, out_dtype=tl.float16)
        e = tl.dot(h, tl.trans(h))
        """
    )
    assert env["c"].dtype == "int32"
    assert env["d"].dtype == "fp16"
    assert shape(env["e"]) == ["BLOCK", "BLOCK"]
    assert len(trace.dots) == 3


def test_batched_dot():
    env, _ = interpret(
        """
        a = tl.zeros((2, BM, BK), dtype=tl.float16)
        b = tl.zeros((2, BK, BN), dtype=tl.float16)
        c = tl.dot(a, b)
        """,
        params="BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr",
    )
    assert shape(env["c"]) == ["2", "BM", "BN"]


# ----- reductions, scans, layout ops ----------------------------------------------
def test_reductions():
    env, trace = interpret(
        """
        r = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
        x = tl.load(x_ptr + r)
        s1 = tl.sum(x, axis=1)
        s0 = x.sum(0)
        sk = tl.sum(x, axis=1, keep_dims=True)
        sa = tl.max(x)
        neg = tl.min(x, axis=-1)
        am = tl.argmax(x, axis=0)
        v, i = tl.max(x, axis=1, return_indices=True)
        red = tl.reduce(x, 1, _combine)
        cs = tl.cumsum(x, axis=1)
        """,
        params="x_ptr, BM: tl.constexpr, BN: tl.constexpr",
    )
    assert shape(env["s1"]) == ["BM"]
    assert shape(env["s0"]) == ["BN"]
    assert shape(env["sk"]) == ["BM", "1"]
    assert shape(env["sa"]) == []
    assert shape(env["neg"]) == ["BM"]
    assert shape(env["am"]) == ["BN"] and env["am"].dtype == "int32"
    assert shape(env["v"]) == ["BM"] and env["i"].dtype == "int32"
    assert shape(env["red"]) == ["BM"]
    assert shape(env["cs"]) == ["BM", "BN"]
    kinds = [s.kind for s in trace.scratch]
    assert kinds.count("reduce") == 8 and kinds.count("scan") == 1


def test_layout_ops():
    env, _ = interpret(
        """
        x = tl.zeros((BM, BN), dtype=tl.float32)
        t = tl.trans(x)
        tt = x.T
        p = tl.permute(tl.zeros((2, BM, BN), dtype=tl.float32), (2, 0, 1))
        r = tl.reshape(x, (BM * BN,))
        r2 = x.reshape(BN, BM)
        v = tl.view(x, [BN, BM])
        j = tl.join(x, x)
        a, b = tl.split(j)
        e = tl.expand_dims(tl.arange(0, BM), 1)
        bc = tl.broadcast_to(e, (BM, BN))
        w = tl.where(x > 0, x, 0.0)
        il = tl.interleave(x, x)
        """,
        params="BM: tl.constexpr, BN: tl.constexpr",
    )
    assert shape(env["t"]) == ["BN", "BM"]
    assert shape(env["tt"]) == ["BN", "BM"]
    assert shape(env["p"]) == ["BN", "2", "BM"]
    assert shape(env["r"]) == sh("BM * BN")
    assert shape(env["r2"]) == ["BN", "BM"]
    assert shape(env["v"]) == ["BN", "BM"]
    assert shape(env["j"]) == ["BM", "BN", "2"]
    assert shape(env["a"]) == ["BM", "BN"] and shape(env["b"]) == ["BM", "BN"]
    assert shape(env["e"]) == ["BM", "1"]
    assert shape(env["bc"]) == ["BM", "BN"]
    assert shape(env["w"]) == ["BM", "BN"] and env["w"].dtype == "fp32"
    assert shape(env["il"]) == sh("BM", "2 * BN")


def test_math_and_passthrough():
    env, _ = interpret(
        """
        offs = tl.multiple_of(tl.arange(0, BLOCK), 16)
        offs = tl.max_contiguous(offs, BLOCK)
        x = tl.load(x_ptr + offs)
        a = tl.exp(x)
        b = tl.math.exp2(x.to(tl.float32))
        c = libdevice.tanh(x)
        d = tl.sqrt(tl.maximum(x, 0.0))
        e = tl.sigmoid(x) * tl.rsqrt(x)
        f = tl.fma(x, x, x)
        g = tl.extra.cuda.libdevice.fast_expf(x)
        h = tl.clamp(x, 0.0, 1.0)
        """
    )
    for name in "abcdefgh":
        assert shape(env[name]) == ["BLOCK"], name
    assert env["b"].dtype == "fp32"


# ----- block pointers and descriptors ----------------------------------------------
def test_block_pointer_load_store_advance():
    spec = kernel(
        """
        pid = tl.program_id(0)
        a_bp = tl.make_block_ptr(base=x_ptr, shape=(M, K), strides=(K, 1), offsets=(pid * BM, 0),
                                 block_shape=(BM, BK), order=(1, 0))
        acc = tl.zeros((BM, BK), dtype=tl.float32)
        for k in range(0, K, BK):
            a = tl.load(a_bp, boundary_check=(0, 1))
            acc += a
            a_bp = tl.advance(a_bp, (0, BK))
        o_bp = tl.make_block_ptr(y_ptr, (K, M), (1, K), (0, pid * BM), (BK, BM), (0, 1))
        tl.store(o_bp, tl.trans(acc).to(y_ptr.dtype.element_ty), boundary_check=(0, 1))
        """,
        params="x_ptr, y_ptr, M, K, BM: tl.constexpr, BK: tl.constexpr",
    )
    load, store = spec.accesses
    assert load.block_ptr and store.block_ptr
    assert [str(d) for d in load.shape] == ["BM", "BK"] and load.dtype == "elem:x_ptr"
    assert load.contiguous_dim == 1 and store.contiguous_dim == 0
    assert [str(d) for d in store.shape] == ["BK", "BM"]
    assert spec.param("BM").bound == "M" and spec.param("BK").bound == "K"
    assert spec.notes == []


def test_tensor_descriptor():
    spec = kernel(
        """
        desc = tl.make_tensor_descriptor(x_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
        t = desc.load([0, 0])
        desc.store([0, 0], t)
        """,
        params="x_ptr, M, K, BM: tl.constexpr, BK: tl.constexpr",
    )
    load, store = spec.accesses
    assert [str(d) for d in load.shape] == ["BM", "BK"] and load.pointer == "x_ptr"
    assert store.kind == "store"
    assert spec.param("BM").tiling and spec.param("BK").tiling


# ----- control flow ---------------------------------------------------------------
def test_loops_trips_and_nesting():
    spec = kernel(
        """
        offs = tl.arange(0, BLOCK)
        for i in range(N):
            for j in tl.range(0, N, BLOCK, num_stages=2):
                x = tl.load(x_ptr + j + offs)
                tl.store(y_ptr + j + offs, x)
        k = 0
        while k < N:
            x = tl.load(x_ptr + k + offs)
            k += BLOCK
        for s in tl.static_range(4):
            tl.store(y_ptr + s * BLOCK + offs, x)
        """
    )
    a, b, c, d = spec.accesses
    assert str(a.trips) == "N * cdiv(N, BLOCK)"
    assert c.in_loop and c.trips is None
    assert str(d.trips) == "4"


def test_if_else_join_and_tuple_assignment():
    env, _ = interpret(
        """
        offs = tl.arange(0, BLOCK)
        if FLAG:
            x = tl.load(x_ptr + offs)
        else:
            x = tl.zeros([BLOCK], dtype=tl.float32)
        a, b = offs, offs[:, None]
        (c, d) = tl.split(tl.join(x, x))
        if N > 4:
            e = 1.0
        else:
            e = offs.to(tl.float32)
        """,
        params="x_ptr, N, BLOCK: tl.constexpr, FLAG: tl.constexpr",
    )
    assert shape(env["x"]) == ["BLOCK"]
    assert shape(env["a"]) == ["BLOCK"] and shape(env["b"]) == ["BLOCK", "1"]
    assert shape(env["c"]) == ["BLOCK"]
    assert shape(env["e"]) == ["BLOCK"]


def test_loop_carried_values_keep_shape():
    env, _ = interpret(
        """
        m = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
        l = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, N, BLOCK):
            x = tl.load(x_ptr + start + tl.arange(0, BLOCK))
            m_new = tl.maximum(m, x)
            l = l * tl.exp(m - m_new) + tl.exp(x - m_new)
            m = m_new
        """
    )
    assert shape(env["m"]) == ["BLOCK"] and shape(env["l"]) == ["BLOCK"]
    assert env["l"].dtype == "fp32"


def test_static_assert_recorded():
    spec = kernel(
        """
        tl.static_assert(BLOCK % 16 == 0, "multiple of 16")
        tl.static_assert(BLOCK <= 1024)
        x = tl.load(x_ptr + tl.arange(0, BLOCK))
        """
    )
    assert spec.static_asserts == ["BLOCK % 16 == 0", "BLOCK <= 1024"]


def test_atomics():
    spec = kernel(
        """
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        old = tl.atomic_add(y_ptr + offs, x, mask=offs < N)
        tl.atomic_max(y_ptr, 1.0)
        tl.atomic_cas(y_ptr + offs, offs, offs)
        """
    )
    assert [a.kind for a in spec.accesses] == ["load", "atomic", "atomic", "atomic"]
    assert spec.atomic_pointers == ["y_ptr"]
    assert [str(d) for d in spec.accesses[1].shape] == ["BLOCK"]
    assert spec.accesses[2].shape == ()


def test_contiguous_dim():
    spec = kernel(
        """
        rm = tl.arange(0, BM)
        rn = tl.arange(0, BN)
        x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
        tl.store(y_ptr + rm[:, None] + rn[None, :] * M, x)
        tl.store(y_ptr + rm[:, None] * sm + rn[None, :] * sn, x)
        """,
        params="x_ptr, y_ptr, M, N, sm, sn, BM: tl.constexpr, BN: tl.constexpr",
    )
    a, b, c = spec.accesses
    assert a.contiguous_dim == 1
    assert b.contiguous_dim == 0
    assert c.contiguous_dim == 1  # unknown strides: row-major convention


def test_pointer_arithmetic_through_locals():
    spec = kernel(
        """
        row = tl.program_id(0)
        x_ptr += row * stride
        base = y_ptr + row * stride
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + cols, mask=cols < N)
        tl.store(base + cols, x, mask=cols < N)
        """,
        params="x_ptr, y_ptr, stride, N, BLOCK: tl.constexpr",
    )
    assert [a.pointer for a in spec.accesses] == ["x_ptr", "y_ptr"]
    assert spec.param("x_ptr").is_pointer and spec.param("y_ptr").is_pointer
    assert not spec.param("stride").is_pointer and not spec.param("N").is_pointer


# ----- degradation ----------------------------------------------------------------
def test_unknown_helper_degrades_with_note():
    spec = kernel(
        """
        offs = tl.arange(0, BLOCK)
        x = some_module.helper(offs)
        y = x + 1
        tl.store(y_ptr + offs, y)
        z = y[:, None] * 2
        w = weird[3](x)
        """
    )
    assert any("some_module.helper" in n for n in spec.notes)
    assert spec.accesses[0].shape is not None  # address known; value unknown
    assert spec.param("BLOCK").tiling


def test_jit_helper_is_inlined():
    src = HEADER + textwrap.dedent(
        """
        @triton.jit
        def _offsets(pid, BLOCK: tl.constexpr):
            return pid * BLOCK + tl.arange(0, BLOCK)

        @triton.jit
        def _swizzle(pid, n):
            return pid // n, pid % n

        @triton.jit
        def k(x_ptr, N, BLOCK: tl.constexpr):
            pid = tl.program_id(0)
            pm, pn = _swizzle(pid, 4)
            offs = _offsets(pm, BLOCK)
            x = tl.load(x_ptr + offs, mask=offs < N)
            tl.store(x_ptr + offs, x * 2, mask=offs < N)
        """
    )
    spec = analyze_source(src).kernel("k")
    assert spec.notes == []
    assert [str(d) for d in spec.accesses[0].shape] == ["BLOCK"]
    p = spec.param("BLOCK")
    assert (p.tiling, p.role.value, p.axis, p.bound) == (True, "parallel", 0, "N")


def test_no_exception_on_odd_code():
    spec = kernel(
        """
        a = [i for i in range(3)]
        b = lambda q: q
        c = x_ptr[0]
        d = {"k": 1}
        e = (yield)
        f = tl.arange(0, N)
        g = tl.reshape(f, (N, 2))
        h = tl.arange(0, BLOCK).foo(1)
        i = (1, 2)[5]
        j = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)[:, :, :, None]
        k2 = tl.dot(f, f)
        for q in something():
            pass
        del a
        """
    )
    assert spec.notes  # several things not understood, none raised
    assert spec.footprint is not None


def test_graph_attributes():
    spec = kernel(
        """
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < N)
        tl.store(y_ptr + offs, tl.sum(x, axis=0) + x)
        """
    )
    g = spec.graph
    kinds = {d["kind"] for _, d in g.nodes(data=True)}
    assert {"param", "arange", "load", "store", "reduce", "elementwise"} <= kinds
    for _, d in g.nodes(data=True):
        assert set(d) >= {"kind", "label", "shape", "dtype", "line"}
    load = next(n for n, d in g.nodes(data=True) if d["kind"] == "load")
    store = next(n for n, d in g.nodes(data=True) if d["kind"] == "store")
    import networkx as nx

    assert nx.has_path(g, "param:x_ptr", load)
    assert nx.has_path(g, load, store)
    assert g.nodes[load]["shape"] == ["BLOCK"] and g.nodes[load]["dtype"] == "elem:x_ptr"


def test_gaps_record_where_the_analysis_gave_up():
    _, trace = interpret(
        """
        o = tl.arange(0, BLOCK)
        y = some_helper(o)
        z = tl.frobnicate(o)
        a = tl.load(x_ptr + o)
        w = tl.dot(y, a)
        """
    )
    kinds = [k for k, _ in trace.gaps]
    assert kinds == ["unresolved helper", "unknown op", "unknown dot extent"]
    assert all(text.startswith("line ") and text in trace.notes for _, text in trace.gaps)
    _, clean = interpret("o = tl.arange(0, BLOCK)\ntl.store(y_ptr + o, tl.load(x_ptr + o))")
    assert clean.gaps == [] and clean.notes == []


# ----- known constexpr values: dead branches ---------------------------------------
LN_PARAMS = "x_ptr, res, res_out, y_ptr, N, HAS_RESIDUAL: tl.constexpr, STORE_RESIDUAL_OUT: tl.constexpr, BLOCK: tl.constexpr"
LN_BODY = """
o = tl.arange(0, BLOCK)
x = tl.load(x_ptr + o, mask=o < N)
if HAS_RESIDUAL:
    x += tl.load(res + o, mask=o < N)
if not STORE_RESIDUAL_OUT:
    pass
else:
    tl.store(res_out + o, x, mask=o < N)
tl.store(y_ptr + o, x, mask=o < N)
"""


def _ln(constants=None, body=LN_BODY, params=LN_PARAMS):
    src = HEADER + f"@triton.jit\ndef k({params}):\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"
    return analyze_source(src, "k.py", constants=constants).kernels[0]


def test_constexpr_flags_resolve_branches():
    both = _ln()
    assert {a.pointer for a in both.accesses} == {"x_ptr", "res", "res_out", "y_ptr"}
    off = _ln({"HAS_RESIDUAL": False, "STORE_RESIDUAL_OUT": False, "res": None, "res_out": None})
    assert {a.pointer for a in off.accesses} == {"x_ptr", "y_ptr"}
    assert not off.param("res").is_pointer and not off.param("res_out").is_pointer
    assert str(off.footprint.live_bytes) != str(both.footprint.live_bytes)
    on = _ln({"HAS_RESIDUAL": True, "STORE_RESIDUAL_OUT": 1})
    assert {a.pointer for a in on.accesses} == {"x_ptr", "res", "res_out", "y_ptr"}
    assert off.param("BLOCK").tiling and off.notes == []


def test_none_pointers_elif_ifexp_and_helpers():
    body = """
    o = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + o)
    if res is not None and HAS_RESIDUAL:
        x += tl.load(res + o)
    elif BLOCK > 4096:
        x = x * 2
    else:
        x = _bump(x, res_out, o, STORE_RESIDUAL_OUT)
    y = tl.load(res_out + o) if STORE_RESIDUAL_OUT else x
    tl.store(y_ptr + o, y)
    """
    helper = "@triton.jit\ndef _bump(x, p, o, FLAG: tl.constexpr):\n    if FLAG:\n        tl.store(p + o, x)\n    return x\n\n\n"
    src = HEADER + helper + f"@triton.jit\ndef k({LN_PARAMS}):\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"
    k = analyze_source(src, "k.py", constants={"res": None, "STORE_RESIDUAL_OUT": False}).kernel("k")
    assert {a.pointer for a in k.accesses} == {"x_ptr", "y_ptr"}
    k = analyze_source(src, "k.py", constants={"res": None}).kernel("k")
    assert {a.pointer for a in k.accesses} == {"x_ptr", "res_out", "y_ptr"}
    k = analyze_source(src, "k.py").kernel("k")
    assert {a.pointer for a in k.accesses} == {"x_ptr", "res", "res_out", "y_ptr"}


def test_module_constant_flag_and_shadowing():
    src = HEADER + "DEBUG: tl.constexpr = 0\n\n\n@triton.jit\ndef k(x_ptr, y_ptr, BLOCK: tl.constexpr):\n" \
        "    o = tl.arange(0, BLOCK)\n    if DEBUG:\n        tl.store(y_ptr + o, tl.load(x_ptr + o))\n" \
        "    DEBUG2 = tl.load(x_ptr)\n    if DEBUG2:\n        tl.store(x_ptr + o, o)\n"
    k = analyze_source(src, "k.py").kernels[0]
    assert [a.pointer for a in k.accesses] == ["x_ptr", "x_ptr"]


# ----- tensor descriptors -----------------------------------------------------------
DESC_KERNEL = '''
@triton.jit
def k(a_desc, b_desc, c_desc, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = a_desc.load([pid_m * BLOCK_M, k])
        b = tl.load_tensor_descriptor(b_desc, [k, pid_n * BLOCK_N])
        acc = tl.dot(a, b, acc)
    tl.store_tensor_descriptor(c_desc, [pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(tl.float16))
'''


def test_host_descriptor_block_shape_from_the_kernels_pre_hook():
    hooks = '''
def _hook(nargs):
    BM = nargs["BLOCK_M"]
    nargs["a_desc"].block_shape = [BM, nargs["BLOCK_K"]]
    nargs["b_desc"].block_shape = [nargs["BLOCK_K"], nargs["BLOCK_N"]]


def _other_hook(nargs):
    nargs["a_desc"].block_shape = [nargs["BLOCK_N"], 16]


@triton.autotune(configs=[triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, pre_hook=_hook)], key=["K"])'''
    spec = analyze_source(HEADER + hooks + DESC_KERNEL, "k.py").kernel("k")
    assert spec.complete, spec.incomplete
    shapes = {a.pointer: [str(d) for d in a.shape] for a in spec.accesses}
    assert shapes == {"a_desc": ["BLOCK_M", "BLOCK_K"], "b_desc": ["BLOCK_K", "BLOCK_N"], "c_desc": ["BLOCK_M", "BLOCK_N"]}
    assert all(a.block_ptr for a in spec.accesses)
    (dot,) = spec.dots
    assert (str(dot.m), str(dot.n), str(dot.k)) == ("BLOCK_M", "BLOCK_N", "BLOCK_K")
    assert {p.name for p in spec.params if p.is_pointer} == {"a_desc", "b_desc", "c_desc"}


def test_host_descriptor_built_at_the_launch_site_and_unknown():
    host = '''
def run(a, b, c, BLOCK_M, BLOCK_N, BLOCK_K):
    a_desc = TensorDescriptor.from_tensor(a, block_shape=[BLOCK_M, BLOCK_K])
    b_desc = TensorDescriptor(b, b.shape, b.stride(), block_shape=[BLOCK_K, BLOCK_N])
    c_desc = TensorDescriptor.from_tensor(c, [BLOCK_M, BLOCK_N])
    k[(1,)](a_desc, b_desc, c_desc, a.shape[1], BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
'''
    spec = analyze_source(HEADER + DESC_KERNEL + host, "k.py").kernel("k")
    assert spec.complete, spec.incomplete
    assert [str(d) for d in spec.accesses[1].shape] == ["BLOCK_K", "BLOCK_N"]
    assert [str(d) for d in spec.accesses[2].shape] == ["BLOCK_M", "BLOCK_N"]  # the stored value's shape
    bare = analyze_source(HEADER + DESC_KERNEL, "k.py").kernel("k")
    assert not bare.complete
    assert any("a_desc.load: tensor descriptor built on the host, block shape unknown" in r for r in bare.incomplete)


def test_dot_scaled_extents_and_fp4_packing():
    spec = kernel(
        """
        offs_m = tl.arange(0, BM)
        offs_n = tl.arange(0, BN)
        offs_kh = tl.arange(0, BK // 2)
        a = tl.load(x_ptr + offs_m[:, None] * BK + offs_kh[None, :])
        b = tl.load(y_ptr + offs_kh[:, None] * BN + offs_n[None, :])
        sa = tl.load(x_ptr + offs_m[:, None] * 4 + tl.arange(0, 4)[None, :])
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        acc = tl.dot_scaled(a, sa, "e2m1", b, None, "e2m1", acc)
        tl.store(x_ptr + offs_m[:, None] * BN + offs_n[None, :], acc)
        """,
        params="x_ptr, y_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr",
    )
    (dot,) = spec.dots
    assert (str(dot.m), str(dot.n)) == ("BM", "BN") and dot.k.evaluate({"BK": 64}) == 64
    assert spec.complete, spec.incomplete


def test_next_power_of_2_extent():
    spec = kernel(
        """
        offs = tl.arange(0, triton.next_power_of_2(D))
        x = tl.load(x_ptr + offs, mask=offs < D)
        tl.store(y_ptr + offs, x, mask=offs < D)
        w = tl.zeros((triton.next_power_of_2(12), BLOCK), dtype=tl.float32)
        tl.store(y_ptr + tl.arange(0, 16)[:, None] * BLOCK + tl.arange(0, BLOCK)[None, :], w)
        """,
        params="x_ptr, y_ptr, D: tl.constexpr, BLOCK: tl.constexpr",
    )
    assert spec.complete, spec.incomplete
    assert str(spec.accesses[0].shape[0]) == "next_power_of_2(D)"
    assert spec.accesses[0].shape[0].evaluate({"D": 100}) == 128
    assert [str(d) for d in spec.accesses[2].shape] == ["16", "BLOCK"]
    d = spec.param("D")
    assert d.tiling and not d.power_of_two  # sizes a tile, may be any integer


def test_next_pow2_expression_round_trip_and_z3():
    import z3

    from tiletune.synthesis.z3_terms import term_to_z3

    from tiletune.analysis.expr import next_pow2, sym

    e = next_pow2(sym("N")) * 2
    assert parse_expr(str(e)) == e and e.substitute({"N": 33}).value == 128 and next_pow2(1).value == 1
    # as written at a launch site: BLOCK_SIZE=triton.next_power_of_2(n_cols)
    assert parse_expr("triton.next_power_of_2(n_cols)").evaluate({"n_cols": 1000}) == 1024
    assert str(parse_expr("triton.cdiv(M, 128)")) == "cdiv(M, 128)"
    n = z3.Int("N")
    solver = z3.Solver()
    solver.add(n == 1000, term_to_z3(e, {"N": n}) != 2048)
    assert solver.check() == z3.unsat


def test_subscript_follows_tritons_rule_for_none_and_colons():
    env, trace = interpret(
        """
        pid = tl.program_id(0)
        one = pid[:, None]
        row = pid[None, :]
        o = tl.arange(0, BLOCK)
        a = o[:, None]
        b = o[None, :, None]
        t = a[:, None]
        """
    )
    assert shape(env["one"]) == ["1"] and shape(env["row"]) == ["1"]
    assert shape(env["a"]) == ["BLOCK", "1"] and shape(env["b"]) == ["1", "BLOCK", "1"]
    assert shape(env["t"]) == ["BLOCK", "1", "1"]
    assert trace.gaps == []


def test_swizzle2d_and_ascend_slices_imported_bare():
    src = HEADER + "from triton.language.extra.cann.extension import extract_slice, insert_slice\n\n\n" \
        "@triton.jit\ndef k(x_ptr, M, N, BM: tl.constexpr, BD: tl.constexpr):\n" \
        "    pid_m, pid_n = tl.swizzle2d(tl.program_id(0), tl.program_id(1), M, N, 8)\n" \
        "    rows = pid_m * BM + tl.arange(0, BM)\n" \
        "    cols = tl.arange(0, 2 * BD)\n" \
        "    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=rows[:, None] < M)\n" \
        "    left = extract_slice(x, (0, 0), (BM, BD), (1, 1))\n" \
        "    y = insert_slice(x, left * 2, (0, BD), (BM, BD), (1, 1))\n" \
        "    tl.store(x_ptr + rows[:, None] * N + cols[None, :], y, mask=rows[:, None] < M)\n"
    spec = analyze_source(src, "k.py").kernels[0]
    assert spec.complete, spec.incomplete
    assert [str(d) for d in spec.accesses[1].shape] == ["BM", "2 * BD"]
    assert spec.param("BM").role.value == "parallel" and spec.param("BD").tiling


def test_loaded_pointer_with_a_pointer_type_cast_has_its_element_type():
    spec = kernel(
        """
        table = x_ptr.to(tl.pointer_type(tl.uint64))
        row_ptr = tl.load(table + 3).to(tl.pointer_type(tl.int64))
        o = tl.arange(0, BLOCK)
        vals = tl.load(row_ptr + o, mask=o < N, other=0)
        tl.store(y_ptr + o, vals, mask=o < N)
        """
    )
    assert spec.complete, spec.incomplete
    assert [(a.pointer, a.dtype) for a in spec.accesses] == [("x_ptr", "uint64"), (None, "int64"), ("y_ptr", "elem:y_ptr")]


def test_a_dtype_chosen_by_an_undecided_test_is_left_open_not_one_side():
    """``tl.float32 if dtype is tl.bfloat16 else dtype`` with the pointer's type unknown at analysis: the
    accumulator's type is open (the Ascend UB count then folds it per dtype), never fp32 for every input."""
    src = textwrap.dedent('''
        import triton
        import triton.language as tl

        @triton.jit
        def k(inp, out, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
            dtype = inp.type.element_ty
            acc_type = tl.float32 if dtype is tl.bfloat16 else dtype
            acc = tl.full([BLOCK_M, BLOCK_N], value=0.0, dtype=acc_type)
            same = tl.full([BLOCK_M, BLOCK_N], value=0.0, dtype=dtype)
            offs = tl.arange(0, BLOCK_M)[:, None] * N + tl.arange(0, BLOCK_N)[None, :]
            tl.store(out + offs, acc + same)
    ''')
    spec = analyze_source(src).kernel("k")
    allocs = [spec.graph.nodes[n] for n in spec.graph.nodes if spec.graph.nodes[n].get("kind") == "alloc"]
    assert [a.get("dtype") for a in allocs] == [None, "elem:inp"]
