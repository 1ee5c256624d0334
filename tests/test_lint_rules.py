"""Lint rules TT001-TT009: each on real sources (the rule's own bad/good
examples, more variants written here, the fixtures) and on hand-built
analysis specs for the logic the sources do not reach."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tiletune.analysis.model import (
    AutotuneArgs,
    ConfigLiteral,
    Decorator,
    KernelSpec,
    LaunchSite,
    ModuleSpec,
    Param,
    Span,
)
from tiletune.lint import all_rules, lint_source
from tiletune.lint.registry import render_rules_markdown, select_codes, UsageError

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = sorted(p for p in (ROOT / "fixtures").glob("*.py") if not p.name.startswith("_"))


def has_synthesis_check() -> bool:
    try:
        from tiletune.synthesis import check_config, get_target  # noqa: F401
    except ImportError:
        return False
    return True


def codes(source: str, **kw) -> list[str]:
    return [d.code for d in lint_source(textwrap.dedent(source), "t.py", **kw)]


def diags(source: str, code: str, **kw):
    return [d for d in lint_source(textwrap.dedent(source), "t.py", **kw) if d.code == code]


def _needs(code: str) -> None:
    if code == "TT009" and not has_synthesis_check():
        pytest.skip("tiletune.synthesis.check_config not available yet")


# Every rule's VALID/INVALID examples (and their fixes) run in tests/test_lint_examples.py.


def test_docs_show_every_rule():
    doc = (ROOT / "docs" / "lint.md").read_text()
    assert render_rules_markdown() in doc, "docs/lint.md rules section is stale: paste render_rules_markdown()"
    for r in all_rules():
        assert f"### {r.code}" in doc


# ----- fixtures are lint-clean ------------------------------------------------------


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_fixture_is_clean(path):
    found = lint_source(path.read_text(), str(path))
    assert found == [], "\n".join(d.format_text() for d in found)


# ----- more real sources per rule ---------------------------------------------------

HEAD = """\
import tiletune
import triton
import triton.language as tl

"""

ADD_BODY = """\
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)
"""


def add_module(decorators: str, launch: str = "", default: str = "", extra_params: str = "") -> str:
    return (
        HEAD
        + decorators.strip()
        + "\n"
        + f"def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr{default}{extra_params}):\n"
        + ADD_BODY
        + ("\n\ndef add(x, y, out):\n    n = out.numel()\n" + textwrap.indent(textwrap.dedent(launch).strip(), "    ") + "\n" if launch else "")
    )


TUNED = '@tiletune.autotune(configs=[], key=["n_elements"])\n@triton.jit'
HAND = '@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 256}), triton.Config({"BLOCK_SIZE": 1024})], key=["n_elements"])\n@triton.jit'


def test_tt001_untuned_jit_kernel_with_default():
    src = add_module("@triton.jit", default=" = 1024", launch="add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n)")
    (d,) = diags(src, "TT001")
    assert d.param == "BLOCK_SIZE" and d.kernel == "add_kernel"
    assert "1024" in d.message
    assert not d.fixable  # dropping a default changes what the kernel runs with


def test_tt001_default_every_launch_overrides_is_not_reported():
    relies = add_module("@triton.jit", default=" = 1024", launch="add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n)")
    assert [d.param for d in diags(relies, "TT001")] == ["BLOCK_SIZE"]
    overrides = add_module("@triton.jit", default=" = 1024", launch="add_kernel[(triton.cdiv(n, 512),)](x, y, out, n, BLOCK_SIZE=512)")
    assert diags(overrides, "TT001") == []


def test_tt001_key_or_config_set_is_not_reported():
    in_key = add_module('@tiletune.autotune(configs=[], key=["n_elements", "BLOCK_SIZE"])\n@triton.jit', default=" = 1024")
    assert diags(in_key, "TT001") == []
    in_configs = add_module(HAND, default=" = 1024")
    assert diags(in_configs, "TT001") == []
    not_in_configs = add_module(
        '@triton.autotune(configs=[triton.Config({}, num_warps=4), triton.Config({}, num_warps=8)], key=["n_elements"])\n@triton.jit',
        default=" = 1024",
    )
    (d,) = diags(not_in_configs, "TT001")
    assert "no config of the autotuner sets it" in d.message


def test_tt001_heuristics_param_not_reported():
    src = add_module(
        '@triton.heuristics({"BLOCK_SIZE": lambda args: triton.next_power_of_2(args["n_elements"])})\n@triton.jit',
        default=" = 1024",
    )
    assert "TT001" not in codes(src)


def test_tt001_non_tiling_default_not_reported():
    src = add_module(TUNED, extra_params=", EVEN: tl.constexpr = False")
    assert "TT001" not in codes(src)


def test_tt002_keyword_and_positional():
    bad = add_module(TUNED, launch='grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)\nadd_kernel[grid](x, y, out, n, BLOCK_SIZE=512)')
    (d,) = diags(bad, "TT002")
    assert d.param == "BLOCK_SIZE" and "BLOCK_SIZE=512" in d.message and "never tunes it" in d.message
    assert not d.fixable  # configs=[]: the search would choose another value
    good = add_module(TUNED, launch='grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)\nadd_kernel[grid](x, y, out, n)')
    assert codes(good) == []


def test_tt002_hand_configs_conflict_message():
    bad = add_module(HAND, launch='add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, n, BLOCK_SIZE=512)')
    (d,) = diags(bad, "TT002")
    assert "Conflicting meta-parameters: BLOCK_SIZE" in d.message


def test_tt002_names_the_configs_never_set_are_the_callers():
    # The head-dimension case: a constexpr in the key that no config sets.
    src = add_module(
        '@triton.autotune(configs=[triton.Config({}, num_warps=4), triton.Config({}, num_warps=8)], key=["n_elements"])\n@triton.jit',
        launch="add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)",
    )
    assert codes(src) == []
    keyed = add_module(
        '@tiletune.autotune(configs=[], key=["n_elements", "BLOCK_SIZE"])\n@triton.jit',
        launch="add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)",
    )
    assert codes(keyed) == []


def test_tt002_configs_empty_shape_passed_at_launch_is_not_reported():
    src = """\
        import tiletune
        import triton
        import triton.language as tl


        @tiletune.autotune(configs=[], key=["n_rows"])
        @triton.jit
        def scale_rows_kernel(x_ptr, out_ptr, n_rows, stride, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr):
            rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
            cols = tl.arange(0, HEAD_DIM)
            offs = rows[:, None] * stride + cols[None, :]
            mask = rows[:, None] < n_rows
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


        def scale_rows(x, out):
            n_rows, d = x.shape
            scale_rows_kernel[lambda meta: (triton.cdiv(n_rows, meta["BLOCK_M"]),)](x, out, n_rows, x.stride(0), HEAD_DIM=d)
        """
    assert diags(src, "TT002") == []  # HEAD_DIM is a shape: never masked, covers the row
    fixed_tile = src.replace("HEAD_DIM=d)", "HEAD_DIM=d, BLOCK_M=64)")
    assert [d.param for d in diags(fixed_tile, "TT002")] == ["BLOCK_M"]


def test_tt002_meta_forwarding_and_unknown_configs_not_reported():
    fwd = add_module(HAND, launch='add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, n, BLOCK_SIZE=meta["BLOCK_SIZE"])')
    assert diags(fwd, "TT002") == []
    unknown = add_module(
        "@triton.autotune(configs=CONFIGS, key=['n_elements'])\n@triton.jit",
        launch="add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)",
    )
    assert diags(unknown, "TT002") == []


def test_tt002_untuned_kernel_may_fix_its_tiling():
    src = add_module("@triton.jit", launch="add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)")
    assert codes(src) == []


def test_tt002_config_key_fixed_at_launch():
    src = add_module(
        '@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 256, "EVEN": False}), '
        'triton.Config({"BLOCK_SIZE": 1024, "EVEN": False})], key=["n_elements"])\n@triton.jit',
        extra_params=", EVEN: tl.constexpr",
        launch='add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, n, EVEN=True)',
    )
    (d,) = diags(src, "TT002")
    assert d.param == "EVEN"


@pytest.mark.parametrize(
    "launch",
    [
        "BLOCK_SIZE = 1024\nadd_kernel[(triton.cdiv(n, BLOCK_SIZE),)](x, y, out, n)",
        "BLOCK_SIZE = 1024\ngrid = (triton.cdiv(n, BLOCK_SIZE),)\nadd_kernel[grid](x, y, out, n)",
        "BLOCK_SIZE = 1024\nadd_kernel[lambda meta: (triton.cdiv(n, BLOCK_SIZE),)](x, y, out, n)",
        "BLOCK_SIZE = 1024\ngrid = lambda META: (triton.cdiv(n, BLOCK_SIZE),)\nadd_kernel[grid](x, y, out, n)",
    ],
    ids=["tuple", "tuple-variable", "lambda-ignores-meta", "lambda-variable"],
)
def test_tt003_bad_grids(launch):
    src = add_module(TUNED, launch=launch)
    (d,) = diags(src, "TT003")
    assert d.param == "BLOCK_SIZE" and d.kernel == "add_kernel" and d.fixable


@pytest.mark.parametrize(
    "launch",
    [
        'add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, n)',
        'grid = lambda META: (triton.cdiv(n, META["BLOCK_SIZE"]),)\nadd_kernel[grid](x, y, out, n)',
        "add_kernel[(n,)](x, y, out, n)",
        # a def rebinding the name after an earlier tuple grid (for another launch)
        'BLOCK_SIZE = 1024\ngrid = (triton.cdiv(n, BLOCK_SIZE),)\n'
        'def grid(meta):\n    return (triton.cdiv(n, meta["BLOCK_SIZE"]),)\nadd_kernel[grid](x, y, out, n)',
    ],
    ids=["lambda", "lambda-variable", "grid-without-tiling", "def-rebinds-grid"],
)
def test_tt003_good_grids(launch):
    assert "TT003" not in codes(add_module(TUNED, launch=launch))


def test_tt003_only_for_autotuned_kernels():
    src = add_module("@triton.jit", launch="BLOCK_SIZE = 1024\nadd_kernel[(triton.cdiv(n, BLOCK_SIZE),)](x, y, out, n, BLOCK_SIZE=BLOCK_SIZE)")
    assert codes(src) == []


def test_tt004_heuristics_between_autotune_and_jit_is_legal():
    src = add_module(
        '@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 256}), triton.Config({"BLOCK_SIZE": 1024})], key=["n_elements"])\n'
        '@triton.heuristics({"EVEN": lambda args: args["n_elements"] % args["BLOCK_SIZE"] == 0})\n'
        "@triton.jit",
        extra_params=", EVEN: tl.constexpr",
    )
    assert "TT004" not in codes(src)


def test_tt004_autotune_below_jit():
    src = add_module('@triton.jit\n@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 256})], key=["n_elements"])')
    (d,) = diags(src, "TT004")
    assert "add_kernel" in d.message and "triton.autotune" in d.message


def test_tt004_heuristics_below_jit():
    src = add_module('@triton.jit\n@triton.heuristics({"BLOCK_SIZE": lambda args: 1024})')
    assert [d.code for d in diags(src, "TT004")] == ["TT004"]


def test_tt004_unknown_decorator_above_autotune_is_fine():
    src = "import functools\n" + add_module(f"@functools.lru_cache(maxsize=None)\n{HAND}")
    assert "TT004" not in codes(src)


def test_tt004_wrapper_from_elsewhere_is_not_reported():
    # An imported decorator may be a triton.KernelInterface (FlagGems' libentry is).
    src = "from .utils import libentry\n" + add_module(f"{HAND.splitlines()[0]}\n@libentry()\n@triton.jit")
    assert "TT004" not in codes(src)


def test_tt005_fork_keywords_are_not_stock_triton():
    fork = add_module('@triton.autotune(configs=[], generate_configs="bmm", key=["n_elements"])\n@triton.jit')
    assert "TT005" not in codes(fork)


def test_tt007_star_kwargs_may_carry_hooks():
    src = ATOMIC.replace("DECORATOR", TWO[1:-1] + ", **tune_kwargs)").replace("ATOMIC", "atomic_add")
    assert diags(src, "TT007") == []


def test_tt005_tiletune_patch_or_tiletune_autotune_enable():
    plain = '@triton.autotune(configs=[], key=["n_elements"])\n@triton.jit'
    (d,) = diags(add_module(plain), "TT005")
    assert d.param == "BLOCK_SIZE"
    assert "TT005" not in codes("import tiletune.patch\n" + add_module(plain))
    assert "TT005" not in codes(add_module(TUNED))


def test_tt006_each_list():
    src = add_module(
        '@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 256}), triton.Config({"BLOCK_SIZE": 1024})], '
        'key=["n_elements", "N"], restore_value=["x"], reset_to_zero=["out_ptr"])\n@triton.jit'
    )
    found = {(d.param, d.code) for d in diags(src, "TT006")}
    assert found == {("N", "TT006"), ("x", "TT006")}


def test_tt007_atomics_need_reset():
    src = """\
        import triton
        import triton.language as tl


        @triton.autotune(
            configs=[triton.Config({"BLOCK_SIZE": 512}), triton.Config({"BLOCK_SIZE": 1024})],
            key=["n_elements"],
        )
        @triton.jit
        def sum_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
            pid = tl.program_id(axis=0)
            offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            x = tl.load(x_ptr + offs, mask=offs < n_elements, other=0.0)
            tl.atomic_add(out_ptr, tl.sum(x, axis=0))
        """
    (d,) = diags(src, "TT007")
    assert d.param == "out_ptr" and "reset_to_zero" in d.message
    fixed = src.replace('key=["n_elements"],', 'key=["n_elements"], reset_to_zero=["out_ptr"],')
    assert "TT007" not in codes(fixed)


ATOMIC = """\
import tiletune
import triton
import triton.language as tl


@DECORATOR
@triton.jit
def k(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offs, mask=offs < n_elements, other=0.0)
    tl.ATOMIC(out_ptr, tl.sum(x, axis=0))
"""
TWO = '@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 512}), triton.Config({"BLOCK_SIZE": 1024})], key=["n_elements"])'


@pytest.mark.parametrize("op, reported", [("atomic_add", True), ("atomic_xchg", True), ("atomic_max", False), ("atomic_min", False), ("atomic_or", False)])
def test_tt007_idempotent_atomics_are_not_reported(op, reported):
    src = ATOMIC.replace("DECORATOR", TWO[1:]).replace("ATOMIC", op)
    assert bool(diags(src, "TT007")) is reported


def test_tt007_configs_empty_under_tiletune_is_protected_unless_error():
    auto = ATOMIC.replace("DECORATOR", 'tiletune.autotune(configs=[], key=["n_elements"])').replace("ATOMIC", "atomic_add")
    assert diags(auto, "TT007") == []
    refuse = auto.replace('key=["n_elements"])', 'key=["n_elements"], side_effects="error")')
    (d,) = diags(refuse, "TT007")
    assert 'side_effects="error"' in d.message and "refuses" in d.message


def test_tt007_buffer_written_before_read_is_scratch():
    src = """\
        import triton
        import triton.language as tl


        @triton.autotune(configs=[triton.Config({}, num_warps=4), triton.Config({}, num_warps=8)], key=["n"])
        @triton.jit
        def k(x_ptr, tmp_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs, mask=offs < n)
            tl.store(tmp_ptr + offs, x * 2, mask=offs < n)
            y = tl.load(tmp_ptr + offs, mask=offs < n)
            tl.store(out_ptr + offs, y, mask=offs < n)
        """
    assert diags(src, "TT007") == []
    inplace = src.replace("tl.store(tmp_ptr + offs, x * 2, mask=offs < n)\n            y = tl.load(tmp_ptr + offs, mask=offs < n)",
                          "y = tl.load(tmp_ptr + offs, mask=offs < n)\n            tl.store(tmp_ptr + offs, x * 2 + y, mask=offs < n)")
    assert [d.param for d in diags(inplace, "TT007")] == ["tmp_ptr"]


def test_tt007_single_config_is_not_benchmarked():
    src = """\
        import triton
        import triton.language as tl


        @triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 512})], key=["n_elements"])
        @triton.jit
        def scale_kernel(x_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
            offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            x = tl.load(x_ptr + offs, mask=offs < n_elements)
            tl.store(x_ptr + offs, x * 2, mask=offs < n_elements)
        """
    assert "TT007" not in codes(src)


def test_tt008_reports_each_bad_value():
    src = add_module(
        '@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 96}), triton.Config({"BLOCK_SIZE": 128}), '
        'triton.Config({"BLOCK_SIZE": 3000})], key=["n_elements"])\n@triton.jit'
    )
    found = diags(src, "TT008")
    assert sorted(int(d.message.split("BLOCK_SIZE=")[1].split(",")[0]) for d in found) == [96, 3000]
    assert "64 or 128" in found[0].message or "64 or 128" in found[1].message


def test_tt008_not_on_ascend_targets():
    rule = next(r for r in all_rules() if r.code == "TT008")
    assert diags(rule.bad, "TT008") and diags(rule.bad, "TT008", target="ascend910b1") == []


def test_tt009_small_config_fits_and_big_one_reports_bytes():
    _needs("TT009")
    rule = next(r for r in all_rules() if r.code == "TT009")
    (d,) = diags(rule.bad, "TT009")
    assert "h100" in d.message and " B" in d.message
    assert "TT009" not in codes(rule.good)


def test_select_and_ignore():
    src = add_module('@triton.autotune(configs=[], key=["nope"])\n@triton.jit')
    assert set(codes(src)) >= {"TT005", "TT006"}
    assert codes(src, select=["TT006"]) == ["TT006"]
    assert "TT006" not in codes(src, ignore=["TT006"])
    assert set(codes(src, select=["TT00"])) == set(codes(src))
    with pytest.raises(UsageError):
        select_codes(["XY1"])


def test_syntax_error_is_tt000():
    (d,) = lint_source("import triton\n@triton.jit\ndef k(:\n    pass\n", "broken.py")
    assert d.code == "TT000" and d.path == "broken.py"


def test_file_without_kernels_is_skipped_fast():
    assert lint_source("def f(x):\n    return x\n", "plain.py") == []


# ----- hand-built specs: rule logic without the analysis ------------------------------

S = Span(1, 0, 1, 1)


def spec(**kw) -> KernelSpec:
    k = KernelSpec(name=kw.pop("name", "k"), span=S)
    k.decorators = kw.pop("decorators", [Decorator("triton.jit", "jit", S)])
    k.params = kw.pop("params", [])
    for key, value in kw.items():
        setattr(k, key, value)
    return k


def run(kernels, code, enables=False):
    module = ModuleSpec(file="m.py", kernels=kernels, enables_tiletune=enables)
    return [d for d in lint_source("", "m.py", module=module, select=[code])]


def test_spec_tt001_respects_param_order():
    params = [
        Param("x_ptr", 0, S),
        Param("FLAG", 1, S, constexpr=True, default="False"),
        Param("BLOCK", 2, Span(3, 4, 3, 9), constexpr=True, default="128", tiling=True),
    ]
    launch = LaunchSite(span=S, grid_span=S, grid_kind="tuple", grid_source="(1,)", positional_count=1)
    (d,) = run([spec(params=params, launches=[launch])], "TT001")
    assert (d.line, d.column) == (3, 4) and not d.fixable
    assert run([spec(params=params)], "TT001") == []  # no launch seen: its callers are elsewhere


def test_spec_tt002_launch_positional_counts_for_tt001():
    params = [Param("x_ptr", 0, S), Param("BLOCK", 1, S, constexpr=True, default="128", tiling=True)]
    launch = LaunchSite(span=S, grid_span=S, grid_kind="tuple", grid_source="(1,)", positional_count=2)
    # the only launch passes BLOCK positionally: the default is never used
    assert run([spec(params=params, launches=[launch])], "TT001") == []


def test_spec_tt003_meta_key_with_same_name_is_fine():
    params = [Param("n", 0, S), Param("BLOCK", 1, S, constexpr=True, tiling=True)]
    launch = LaunchSite(
        span=S, grid_span=S, grid_kind="lambda", grid_source="...", reads_meta=True, meta_keys=["BLOCK"], grid_names=["n", "BLOCK"]
    )
    at = AutotuneArgs(span=S, qualname="tiletune.autotune", configs_empty=True)
    assert run([spec(params=params, launches=[launch], autotune=at)], "TT003") == []


def test_spec_tt004_jit_wrap_call_is_last():
    # name = triton.jit(fn): the analysis appends the jit "decorator" last.
    decs = [Decorator("triton.autotune", "autotune", S), Decorator("triton.jit", "jit", S, has_call=True)]
    assert run([spec(decorators=decs)], "TT004") == []


def test_spec_tt007_pre_hook_handles_it():
    two = [ConfigLiteral(span=S, kwargs={"B": 1}), ConfigLiteral(span=S, kwargs={"B": 2})]
    at = AutotuneArgs(span=S, qualname="triton.autotune", configs=two, other={"pre_hook": "init"})
    k = spec(autotune=at, loaded_pointers=["x"], stored_pointers=["x"], atomic_pointers=["y"])
    assert run([k], "TT007") == []
    at2 = AutotuneArgs(span=S, qualname="triton.autotune", configs=two, restore_value=["x"])
    (d,) = run([spec(autotune=at2, loaded_pointers=["x"], stored_pointers=["x"], atomic_pointers=["y"])], "TT007")
    assert d.param == "y"
    # configs built by code may carry per-config pre_hooks: not reported
    at3 = AutotuneArgs(span=S, qualname="triton.autotune", configs=None)
    assert run([spec(autotune=at3, loaded_pointers=["x"], stored_pointers=["x"], atomic_pointers=["y"])], "TT007") == []


def test_spec_tt008_ignores_bools_and_non_arange_params():
    params = [
        Param("BLOCK", 0, S, constexpr=True, tiling=True, power_of_two=True),
        Param("STEPS", 1, S, constexpr=True, tiling=True, power_of_two=False),
        Param("EVEN", 2, S, constexpr=True),
    ]
    cfg = ConfigLiteral(span=S, kwargs={"BLOCK": 64, "STEPS": 3, "EVEN": True})
    at = AutotuneArgs(span=S, qualname="triton.autotune", configs=[cfg])
    assert run([spec(params=params, autotune=at)], "TT008") == []


def test_tt002_tt003_leave_heuristics_params_alone():
    src = add_module(
        '@triton.autotune(configs=[triton.Config({}, num_warps=4), triton.Config({}, num_warps=8)], key=["n_elements"])\n'
        '@triton.heuristics({"BLOCK_SIZE": lambda args: triton.next_power_of_2(args["n_elements"])})\n'
        "@triton.jit",
        launch="BLOCK_SIZE = triton.next_power_of_2(n)\nadd_kernel[(triton.cdiv(n, BLOCK_SIZE),)](x, y, out, n)",
    )
    assert codes(src) == []


@pytest.mark.parametrize(
    "source, expect",
    [
        ("@jit\ndef k(x):\n    pass\n", True),
        ("import triton as tr\nk = tr.jit(f)\n", True),
        ("from triton import (\n    language as tl,\n    jit as J,\n)\n@J\ndef f():\n    pass\n", True),
        ("import triton\nimport cutlass.cute as cute\n@cute.jit\ndef f():\n    pass\n", False),
        ("import triton\nfrom .kernels import k\ndef run(x):\n    k[(1,)](x)\n", False),
        ("def f(x):\n    return x\n", False),
    ],
)
def test_prefilter(source, expect):
    from tiletune.lint.prefilter import might_have_kernels as _might_have_kernels

    assert _might_have_kernels(source) is expect


def test_prefilter_never_skips_a_kernel_file():
    from tiletune.analysis import analyze_source
    from tiletune.lint.prefilter import might_have_kernels as _might_have_kernels

    for path in FIXTURES + sorted((ROOT / "tests").glob("*.py")):
        text = path.read_text()
        if not _might_have_kernels(text):
            assert analyze_source(text, str(path)).kernels == [], path
