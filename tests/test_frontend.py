"""Front end: kernel discovery, signatures, decorators, autotune arguments and
launch sites read from source (tiletune.analysis.frontend)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import triton
import triton.language as tl
from triton.runtime.jit import JITFunction

import tiletune.analysis.body as body_module
from tiletune.analysis import analyze_file, analyze_kernel, analyze_source
from tiletune.analysis.expr import parse_expr
from tiletune.analysis.model import SCHEMA_VERSION, Span
from tiletune.analysis.resolver import index_module
from tiletune.errors import AnalysisError

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = sorted(p for p in (ROOT / "fixtures").glob("*.py") if p.name != "__init__.py")


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def only(text: str, file: str = "k.py"):
    module = analyze_source(src(text), file)
    assert len(module.kernels) == 1, [k.name for k in module.kernels]
    return module.kernels[0]


# ----- discovery ------------------------------------------------------------------
@pytest.mark.parametrize(
    "header, deco",
    [
        ("import triton\nimport triton.language as tl", "@triton.jit"),
        ("from triton import jit\nimport triton.language as tl", "@jit"),
        ("import triton as tr\nfrom triton import language as tl", "@tr.jit"),
        ("import triton\nimport triton.language as tl", '@triton.jit(do_not_specialize=["n"])'),
        ("import triton.runtime.jit as rj\nimport triton.language as tl", "@rj.jit"),
    ],
)
def test_discovery_forms(header, deco):
    text = f"{header}\n\n{deco}\ndef kern(x_ptr, n, BLOCK: tl.constexpr):\n    pass\n"
    module = analyze_source(text, "forms.py")
    (k,) = module.kernels
    assert k.name == "kern" and k.file == "forms.py"
    assert [d.kind for d in k.decorators] == ["jit"]
    assert k.decorators[0].qualname == deco[1:].split("(")[0]
    assert k.decorators[0].has_call == ("(" in deco)
    assert k.param("BLOCK").constexpr
    assert k.notes == []


def test_not_kernels():
    module = analyze_source(
        src(
            """
            import numba
            import torch
            from numba import jit

            @numba.jit
            def a(x): pass

            @jit
            def b(x): pass

            @torch.jit.script
            def c(x): pass

            def plain(x): pass
            """
        )
    )
    assert module.kernels == []


def test_nested_kernels_class_and_function_and_wrapped():
    module = analyze_source(
        src(
            """
            import triton
            import triton.language as tl

            class Ops:
                @staticmethod
                @triton.jit
                def in_class(x, B: tl.constexpr):
                    pass

                def run(self, x):
                    self.in_class[(4,)](x, B=16)

            def factory():
                @triton.jit
                def in_func(x, B: tl.constexpr):
                    pass
                in_func[(1,)](x)
                return in_func

            def _body(x_ptr, N: tl.constexpr):
                pass

            wrapped = triton.jit(_body)

            def host(x):
                wrapped[(2,)](x, N=8)
            """
        )
    )
    names = [k.name for k in module.kernels]
    assert names == ["in_class", "in_func", "_body"]
    cls = module.kernel("in_class")
    assert [(d.qualname, d.kind) for d in cls.decorators] == [("staticmethod", "other"), ("triton.jit", "jit")]
    assert len(cls.launches) == 1 and cls.launches[0].fixed == {"B": "16"}
    assert len(module.kernel("in_func").launches) == 1
    body = module.kernel("_body")
    assert [(d.qualname, d.kind, d.has_call) for d in body.decorators] == [("triton.jit", "jit", False)]
    assert body.launches[0].fixed == {"N": "8"}
    assert body.param("N").constexpr


def test_decorator_stack_order_and_kinds():
    k = only(
        """
        import functools
        import triton
        import triton.language as tl
        from tiletune import autotune

        @functools.lru_cache
        @autotune(configs=[], key=["n"])
        @triton.heuristics(values={"EVEN": lambda a: a["n"] % 2 == 0})
        @triton.jit
        def k(x_ptr, n, EVEN: tl.constexpr, BLOCK: tl.constexpr):
            pass
        """
    )
    assert [(d.qualname, d.kind) for d in k.decorators] == [
        ("functools.lru_cache", "other"),
        ("autotune", "autotune"),
        ("triton.heuristics", "heuristics"),
        ("triton.jit", "jit"),
    ]
    assert [d.span.line for d in k.decorators] == [6, 7, 8, 9]
    assert k.span.line == 10
    assert k.heuristics == ["EVEN"]
    assert k.autotune.qualname == "autotune" and k.autotune.configs_empty


def test_wrong_order_still_found():
    k = only(
        """
        import triton
        @triton.jit
        @triton.autotune(configs=[], key=[])
        def k(x): pass
        """
    )
    assert [d.kind for d in k.decorators] == ["jit", "autotune"]


# ----- parameters -------------------------------------------------------------------
def test_params():
    k = only(
        """
        import triton
        import triton.language
        from triton.language import constexpr

        @triton.jit
        def k(a_ptr, M, stride: int, BLOCK_M: triton.language.constexpr, BLOCK_N: constexpr = 64,
              FLAG: "tl.constexpr" = False, *, K_ONLY: triton.language.constexpr = 2):
            pass
        """
    )
    assert k.param_names == ["a_ptr", "M", "stride", "BLOCK_M", "BLOCK_N", "FLAG", "K_ONLY"]
    assert [p.index for p in k.params] == list(range(7))
    assert [p.constexpr for p in k.params] == [False, False, False, True, True, True, True]
    assert k.param("stride").annotation == "int"
    assert k.param("BLOCK_M").annotation == "triton.language.constexpr"
    assert k.param("BLOCK_N").default == "64" and k.param("BLOCK_N").has_default
    assert k.param("FLAG").default == "False"
    assert not k.param("M").has_default
    assert k.param("a_ptr").span == Span(6, 6, 6, 11)


# ----- autotune arguments -------------------------------------------------------------
AUTOTUNE_SRC = """
import triton
import triton.language as tl
import tiletune

@tiletune.autotune(
    configs=[
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "SCALE": 0.5}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_M': 64, "BLOCK_N": NB}, 8, 2, num_ctas=1, pre_hook=hook),
        triton.Config(dict(BLOCK_M=32, BLOCK_N=-1), maxnreg=128),
    ],
    key=["M", "N"],
    hints={"GROUP_M": [1, 8], "multibuffer": [False, True], "ONE": 4},
    restore_value=["c_ptr"],
    reset_to_zero="d_ptr",
    prune_configs_by={"early_config_prune": prune},
    warmup=25,
)
@triton.jit
def k(c_ptr, d_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    pass
"""


def test_autotune_args():
    k = only(AUTOTUNE_SRC)
    a = k.autotune
    assert a.qualname == "tiletune.autotune" and not a.configs_empty
    assert a.span.line == 5
    c0, c1, c2 = a.configs
    assert c0.kwargs == {"BLOCK_M": 128, "BLOCK_N": 64, "SCALE": 0.5}
    assert (c0.num_warps, c0.num_stages, c0.extra, c0.unresolved) == (4, 3, {}, {})
    assert c0.span.line == 7
    assert c0.value_spans["BLOCK_N"] == Span(7, 50, 7, 52)
    assert c1.kwargs == {"BLOCK_M": 64}
    assert c1.unresolved == {"BLOCK_N": "NB", "pre_hook": "hook"}
    assert (c1.num_warps, c1.num_stages, c1.extra) == (8, 2, {"num_ctas": 1})
    assert c2.kwargs == {"BLOCK_M": 32, "BLOCK_N": -1} and c2.extra == {"maxnreg": 128}
    assert a.key == ["M", "N"]
    assert a.hints == {"GROUP_M": [1, 8], "multibuffer": [False, True], "ONE": [4]}
    assert a.restore_value == ["c_ptr"] and a.reset_to_zero == ["d_ptr"]
    assert a.other == {"prune_configs_by": '{"early_config_prune": prune}', "warmup": "25"}
    assert set(a.arg_spans) == {"configs", "key", "hints", "restore_value", "reset_to_zero", "prune_configs_by", "warmup"}
    assert a.arg_spans["key"].line == 11
    json.dumps(k.to_dict())  # serialisable


def test_autotune_not_literal_and_positional():
    k = only(
        """
        import triton
        CONFIGS = []
        @triton.autotune([triton.Config({"B": b}) for b in (32, 64)], KEYS, reset_to_zero=None)
        @triton.jit
        def k(x, B: tl.constexpr): pass
        """
    )
    a = k.autotune
    assert a.configs is None and not a.configs_empty
    assert a.other["configs"].startswith("[triton.Config")
    assert a.key is None and a.other["key"] == "KEYS"
    assert a.reset_to_zero is None and "reset_to_zero" not in a.other


def test_autotune_empty_configs_alias():
    k = only(
        """
        from triton import autotune as at, jit, Config
        @at(configs=[], key=["n"])
        @jit
        def k(x, n, B: tl.constexpr): pass
        """
    )
    assert k.autotune.configs == [] and k.autotune.configs_empty
    assert k.autotune.qualname == "at"


def test_heuristics_dict_call():
    k = only(
        """
        import triton
        @triton.heuristics(dict(EVEN_K=lambda a: True, BLOCK=lambda a: 4))
        @triton.heuristics({"OTHER": f})
        @triton.jit
        def k(x, EVEN_K: tl.constexpr, BLOCK: tl.constexpr, OTHER: tl.constexpr): pass
        """
    )
    assert k.heuristics == ["EVEN_K", "BLOCK", "OTHER"]


# ----- launch sites -------------------------------------------------------------------
LAUNCH_SRC = """
import triton
import triton.language as tl

@triton.jit
def mm(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    pass

def run(a, b, c):
    M, K = a.shape
    _, N = b.shape
    grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]) * triton.cdiv(N, META['BLOCK_N']),)
    mm[grid](a, b, c, M, N, K, GROUP_M=8)
    mm[lambda meta: (M // meta.get("BLOCK_M"), 1)](a, b, c, M, N, K)
    mm[lambda _: (4,)](a, b, c, M, N, K)
    mm[(triton.cdiv(M, 64), triton.cdiv(N, 32))](a, b, c, M, N, K, BLOCK_M=64, BLOCK_N=32, num_warps=4)
    mm[M, N](a, b, c, M, N, K)
    mm[get_grid(M, N)](a, b, c, M, N, K)
    mm[a.shape[0], max(N, 1) - 1](a, b, c, M, N, K)
    other = mm
    other[grid](*args, **kwargs)

    def grid_fn(meta):
        return (triton.cdiv(M, meta["BLOCK_M"]),)
    mm[grid_fn](a, b, c, M, N, K)
    mm[unknown_grid](a)
    g2 = (M * N,)
    mm[g2](a)
"""


def test_launch_sites():
    k = only(LAUNCH_SRC)
    sites = k.launches
    assert [s.grid_kind for s in sites] == ["lambda", "lambda", "lambda", "tuple", "tuple", "call", "tuple", "lambda", "name", "name", "tuple"]
    s = sites[0]
    assert s.grid_source.startswith("lambda META:")
    assert s.grid_span == Span(12, 7, 12, 11)  # the name as written at the launch
    assert s.reads_meta and s.meta_keys == ["BLOCK_M", "BLOCK_N"]
    assert [str(g) for g in s.grid] == ["cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)"]
    assert s.grid == [parse_expr("cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)")]
    assert s.grid_names == ["M", "N"]
    assert s.positional_count == 6 and s.fixed == {"GROUP_M": "8"}
    assert s.keyword_spans["GROUP_M"] == Span(12, 31, 12, 40)
    assert s.span.line == 12

    s = sites[1]
    assert s.meta_keys == ["BLOCK_M"] and [str(g) for g in s.grid] == ["M // BLOCK_M", "1"]
    s = sites[2]
    assert s.grid_kind == "lambda" and not s.reads_meta and s.meta_keys == [] and [str(g) for g in s.grid] == ["4"]
    s = sites[3]
    assert [str(g) for g in s.grid] == ["cdiv(M, 64)", "cdiv(N, 32)"]
    assert s.fixed == {"BLOCK_M": "64", "BLOCK_N": "32", "num_warps": "4"}
    s = sites[4]
    assert [str(g) for g in s.grid] == ["M", "N"] and s.grid_source == "M, N"
    s = sites[5]
    assert s.grid is None and s.grid_names == ["M", "N"] and s.grid_source == "get_grid(M, N)"
    s = sites[6]
    assert s.grid is None and s.grid_names == ["a", "N"]
    s = sites[7]  # through the alias ``other``; star arguments are not counted
    assert s.meta_keys == ["BLOCK_M", "BLOCK_N"] and s.positional_count == 0 and s.fixed == {}
    s = sites[8]  # a def used as grid
    assert s.grid_source == "grid_fn" and s.reads_meta and s.meta_keys == ["BLOCK_M"]
    assert [str(g) for g in s.grid] == ["cdiv(M, BLOCK_M)"]
    s = sites[9]
    assert s.grid is None and s.grid_names == ["unknown_grid"] and not s.reads_meta
    s = sites[10]
    assert s.grid_source == "(M * N,)" and [str(g) for g in s.grid] == ["M * N"]
    json.dumps(k.to_dict())


def test_launch_grid_variable_resolution_by_scope():
    module = analyze_source(
        src(
            """
            import triton
            @triton.jit
            def k(x, B: tl.constexpr): pass

            grid = (1,)

            def f(x, n):
                k[grid](x)
                grid = lambda m: (triton.cdiv(n, m["B"]),)
                k[grid](x)
                grid = (2, 3)
                k[grid](x)

            def g(x):
                k[grid](x)
            """
        )
    )
    sites = module.kernel("k").launches
    assert [s.grid_kind for s in sites] == ["tuple", "lambda", "tuple", "tuple"]
    # before its local assignment the name still refers to... the module's ``grid``
    # (Python would raise UnboundLocalError; we only read the source)
    assert [s.grid_source for s in sites] == ["(1,)", 'lambda m: (triton.cdiv(n, m["B"]),)', "(2, 3)", "(1,)"]


def test_launches_of_other_kernels_and_shadowing():
    module = analyze_source(
        src(
            """
            import triton
            @triton.jit
            def a(x): pass
            @triton.jit
            def b(x): pass
            def run(x, a_list):
                a[(1,)](x)
                b[(2,)](x)
                a_list[0](x)
                cache[(1, 2)](x)
            """
        )
    )
    assert [s.grid_source for s in module.kernel("a").launches] == ["(1,)"]
    assert [s.grid_source for s in module.kernel("b").launches] == ["(2,)"]


# ----- module facts ------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, expected",
    [
        ("import tiletune.patch\n", True),
        ("import tiletune.patch as _p\n", True),
        ("from tiletune import patch\n", True),
        ("from tiletune import autotune\n", True),
        ("import tiletune\n@tiletune.autotune(configs=[])\ndef f(): pass\n", True),
        ("import tiletune as tt\nx = tt.autotune\n", True),
        ("import tiletune\n", False),
        ("import triton\n@triton.autotune(configs=[], key=[])\ndef f(): pass\n", False),
        ("x = tiletune.autotune\n", False),  # never imported
    ],
)
def test_enables_tiletune(text, expected):
    assert analyze_source(text).enables_tiletune is expected


def test_module_constants_reach_the_body():
    text = src(
        """
        import triton
        import triton.language as tl
        BLOCK = 128
        X: tl.constexpr = 64
        Y = tl.constexpr(2 * BLOCK)
        Z = 1 << 4
        NEG = -3
        TWICE = 1
        TWICE = 2
        F = 1.5
        B = True
        S = "s"
        if cond:
            C = 1

        @triton.jit
        def k(x_ptr):
            offs = tl.arange(0, Y)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs))
        """
    )
    assert index_module(text, None).constants == {"BLOCK": 128, "X": 64, "Y": 256, "Z": 16, "NEG": -3}
    spec = analyze_source(text).kernel("k")
    assert [str(d) for d in spec.accesses[0].shape] == ["256"]


def test_body_exception_becomes_note(monkeypatch):
    def boom(func, spec, *rest, **options):
        if spec.name == "bad":
            raise ValueError("cannot follow this")
        spec.static_asserts.append("ok")

    monkeypatch.setattr(body_module, "analyze_body", boom)
    module = analyze_source(
        src(
            """
            import triton
            @triton.jit
            def bad(x): pass
            @triton.jit
            def good(x): pass
            """
        ),
        "m.py",
    )
    bad, good = module.kernels
    assert len(bad.notes) == 1 and bad.notes[0].startswith("internal: ValueError: cannot follow this at line 3")
    assert not bad.complete and bad.incomplete[0].startswith("unknown op: the body analysis stopped")
    assert good.notes == [] and good.static_asserts == ["ok"] and good.complete


# ----- errors -----------------------------------------------------------------------
def test_syntax_error_names_file_and_line():
    with pytest.raises(AnalysisError) as info:
        analyze_source("import triton\n\n@triton.jit\ndef k(x:\n    pass\n", "bad.py")
    err = info.value
    assert err.file == "bad.py" and err.line == 4
    assert str(err).startswith("bad.py:4:") and "invalid syntax" in str(err)


def test_missing_file(tmp_path):
    with pytest.raises(AnalysisError, match="no such file"):
        analyze_file(tmp_path / "nope.py")
    with pytest.raises(AnalysisError, match="directory"):
        analyze_file(tmp_path)


def test_non_utf8_file(tmp_path):
    p = tmp_path / "latin.py"
    p.write_bytes(b"import triton\nx = '\xe9'\n")
    with pytest.raises(AnalysisError) as info:
        analyze_file(p)
    assert info.value.line == 2 and str(p) in str(info.value)
    p.write_bytes(b"# -*- coding: latin-1 -*-\nimport triton\nx = '\xe9'\n@triton.jit\ndef k(x): pass\n")
    assert [k.name for k in analyze_file(p).kernels] == ["k"]


# ----- live kernels --------------------------------------------------------------------
@triton.jit
def live_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=2)], key=["n"])
@triton.jit
def live_tuned(x_ptr, n, BLOCK: tl.constexpr):
    pass


def live_plain(x_ptr, n, BLOCK: tl.constexpr):
    pass


def launch_live(x):
    live_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, x.numel())


def test_analyze_kernel_interpreted_function():
    # conftest sets TRITON_INTERPRET=1, so @triton.jit gave an InterpretedFunction
    spec = analyze_kernel(live_kernel)
    assert spec.name == "live_kernel" and spec.file == __file__
    assert [d.qualname for d in spec.decorators] == ["triton.jit"]
    assert spec.param("BLOCK").constexpr
    assert len(spec.launches) == 1 and spec.launches[0].meta_keys == ["BLOCK"]


def test_analyze_kernel_jitfunction_and_autotuner():
    jit = JITFunction(live_plain)
    spec = analyze_kernel(jit)
    assert spec.name == "live_plain" and spec.param_names == ["x_ptr", "n", "BLOCK"]
    assert spec.decorators == []  # not decorated in the file; analysed because it was asked for
    tuned = analyze_kernel(live_tuned)
    assert type(live_tuned).__name__ == "Autotuner"
    assert tuned.autotune is not None and tuned.autotune.key == ["n"]
    assert tuned.autotune.configs[0].kwargs == {"BLOCK": 64}


def test_analyze_kernel_plain_function_and_name():
    assert analyze_kernel(live_plain).name == "live_plain"
    assert analyze_kernel(live_kernel, name="live_kernel").name == "live_kernel"


def test_analyze_kernel_without_source():
    namespace: dict = {}
    exec("def generated(x, B):\n    pass\n", namespace)
    with pytest.raises(AnalysisError, match="no source for kernel 'generated'"):
        analyze_kernel(namespace["generated"])
    with pytest.raises(AnalysisError, match="analyze_source"):
        analyze_kernel(42)


def test_analyze_kernel_falls_back_to_jit_source(tmp_path, monkeypatch):
    class FakeJit:  # a JITFunction whose file is gone: only its kept source is left
        def __init__(self, fn):
            self.fn = fn
            self.raw_src = ["@triton.jit\n", "def ghost(x, B: tl.constexpr):\n", "    pass\n"]
            self.starting_line_number = 40

    def ghost(x, B):
        pass

    ghost.__code__ = ghost.__code__.replace(co_filename=str(tmp_path / "gone.py"), co_firstlineno=40)
    spec = analyze_kernel(FakeJit(ghost))
    assert spec.name == "ghost" and spec.span.line == 41 and spec.param("B").constexpr


# ----- fixtures ------------------------------------------------------------------------
@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_fixture_files(path):
    text = path.read_text()
    module = analyze_file(path)
    assert module.file == str(path)
    if "@triton.jit" in text:
        assert module.kernels, f"no kernel found in {path.name}"
    for k in module.kernels:
        # an "internal:" note is an exception caught in the analysis: a bug
        assert not [n for n in k.notes if n.startswith("internal")], (k.name, k.notes)
        assert k.params and all(p.span.line >= k.span.line for p in k.params)
        assert any(d.kind == "jit" for d in k.decorators)
    data = json.loads(json.dumps(module.to_dict()))
    assert data["schema_version"] == SCHEMA_VERSION

