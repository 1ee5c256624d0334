"""The static reader on the patterns of issue 24 (kernels in tests/data/issue24_pkg, written in
the shapes real libraries use; read, never imported): helpers partially evaluated under the
caller's values, one-line helpers, scalar-only helpers, Triton functions under another name,
heuristics from any callable, derived extents in synthesis, and function tuners that are not kernels."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tiletune.analysis import analyze_file, analyze_source
from tiletune.analysis.tunability import tunability
from tiletune.synthesis import synthesize
from tiletune.synthesis.targets import get_target

PKG = Path(__file__).resolve().parent / "data" / "issue24_pkg"


@pytest.fixture(scope="module")
def kernels():
    return {k.name: k for k in analyze_file(PKG / "kernels.py").kernels}


def test_one_line_and_branching_helpers_give_known_shapes(kernels):
    # exp is a one-line helper (under if/else per platform); split_program_id picks its
    # 2-D branch because Y defaults to None; lowest_value only computes a scalar fill value
    spec = kernels["softmax_rows_kernel"]
    assert spec.complete, spec.incomplete
    assert [[str(d) for d in a.shape] for a in spec.accesses] == [["BLOCK_R", "BLOCK_C"]] * 2
    assert set(spec.helpers) == {"issue24_pkg/helpers.py:exp", "issue24_pkg/helpers.py:lowest_value",
                                 "issue24_pkg/helpers.py:split_program_id"}
    assert tunability(spec).tuned == ("BLOCK_R", "BLOCK_C")


def test_helper_branch_on_a_computed_value_is_followed(kernels):
    # split_program_id(X, Y) with Y = tl.cdiv(...): a computed value is never None
    spec = kernels["heads_scale_kernel"]
    assert spec.complete, spec.incomplete
    assert [[str(d) for d in a.shape] for a in spec.accesses] == [["BLOCK_R", "BLOCK_C"]] * 2


def test_unpacking_picks_the_helper_path_of_that_length(kernels):
    spec = kernels["rows_copy_kernel"]
    assert spec.complete, spec.incomplete
    assert [[str(d) for d in a.shape] for a in spec.accesses] == [["BLOCK_C"]] * 2


def test_helper_branch_on_a_passed_value_is_followed():
    spec = analyze_source(textwrap.dedent('''
        import triton
        import triton.language as tl

        @triton.jit
        def pick(x, MODE: tl.constexpr = None):
            if MODE is None:
                return x
            else:
                return tl.sum(x, axis=0)

        @triton.jit
        def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs, mask=offs < n)
            tl.store(y_ptr + offs, pick(x), mask=offs < n)
            tl.store(y_ptr + tl.program_id(0), pick(x, 1))
    ''')).kernel("k")
    assert spec.complete, spec.incomplete
    assert [[str(d) for d in a.shape] for a in spec.accesses] == [["BLOCK"], ["BLOCK"], []]


def test_placeholder_helper_loses_to_the_real_triton_function(kernels):
    # ``def take(...): return None`` for old Tritons, else ``take = tl.gather``
    spec = kernels["pick_columns_kernel"]
    assert spec.complete, spec.incomplete
    assert [(str(d.m), str(d.n), str(d.k)) for d in spec.dots] == [("BLOCK", "BLOCK", "BLOCK")]


def test_triton_function_under_another_name_is_understood(kernels):
    spec = kernels["tanh_gate_kernel"]  # helpers.fast_tanh = libdevice.tanh
    assert spec.complete, spec.incomplete


def test_heuristic_parameters_from_any_callable_are_never_tuned(kernels):
    named = kernels["rowsum_kernel"]  # a named function and a functools.partial
    assert set(named.heuristics) == {"BLOCK_C", "BLOCK_R"}
    assert tunability(named).tuned == ()  # BLOCK_T is passed at launch in launch.py
    shared = kernels["masked_rowsum_kernel"]  # a module-level dict, spread into another, imported
    assert set(shared.heuristics) == {"EVEN_N", "BLOCK_C"}
    assert tunability(shared).tuned == ("BLOCK_R",)


def test_unreadable_heuristics_make_the_kernel_incomplete():
    spec = analyze_source(textwrap.dedent('''
        import triton
        import triton.language as tl
        from somewhere_else import make_heuristics

        @triton.heuristics(make_heuristics())
        @triton.jit
        def k(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, 0.0, mask=offs < n)
    ''')).kernel("k")
    assert not spec.complete
    assert any("heuristics" in r and "cannot be read" in r for r in spec.incomplete), spec.incomplete


def test_next_power_of_2_extent_does_not_crash_synthesis():
    # tl.arange(0, triton.next_power_of_2(K)): the extent is a term of the prune predicates
    spec = analyze_file(PKG / "norms.py").kernel("rms_rows_kernel")
    dtypes = {"x_ptr": "fp32", "y_ptr": "fp32"}
    searched = synthesize(spec, {"n_rows": 4096}, dtypes, get_target("h100"), top_k=4)
    assert searched.candidates and all(set(c.kwargs) >= {"BLOCK_R", "K"} for c in searched.candidates)
    fixed = synthesize(spec, {"n_rows": 4096}, dtypes, get_target("h100"), fixed={"K": 3000}, top_k=4)
    assert fixed.candidates and all(set(c.kwargs) == {"BLOCK_R"} for c in fixed.candidates)


def test_derived_dot_extent_is_bounded():
    spec = analyze_file(PKG / "norms.py").kernel("half_block_matmul_kernel")
    (dot,) = spec.dots
    assert str(dot.m) == "BLOCK_M1 // FACTOR"
    result = synthesize(spec, {"M": 4096, "N": 4096, "K": 4096}, {"a_ptr": "fp16", "b_ptr": "fp16", "c_ptr": "fp32"},
                        get_target("h100"), fixed={"FACTOR": 4}, top_k=200)
    assert result.candidates
    assert all(c.kwargs["BLOCK_M1"] // 4 >= 16 for c in result.candidates)


def test_function_tuner_is_not_a_kernel(tmp_path):
    (tmp_path / "host.py").write_text(textwrap.dedent('''
        import tiletune.tune as tt
        from tiletune.tune import autotune

        @tt.autotune([{"chunk": 64}, {"chunk": 128}], key_fn=lambda x: x.shape)
        def host_a(x, chunk):
            return x

        @autotune([{"chunk": 64}], key_fn=None)
        def host_b(x, chunk):
            return x
    '''))
    assert analyze_file(tmp_path / "host.py").kernels == []
    out = subprocess.run([sys.executable, "-m", "tiletune.cli", "analyze", str(tmp_path)], capture_output=True,
                         text=True, check=False)
    assert "no Triton kernels found" in out.stdout + out.stderr, out.stdout + out.stderr


def test_functions_called_with_tiles_are_device_functions_not_kernels():
    specs = {k.name: k for k in analyze_file(PKG / "tiles.py").kernels}
    assert specs["_gather_rows"].device_function and specs["_gather_rows"].tile_arguments == ["cols", "rows"]
    assert specs["_flatten"].device_function  # t.numel of a parameter
    assert specs["_square"].device_function  # a tl.dot operand
    kernel = specs["gather_kernel"]  # the caller reads both with its own tiles: x.numel is known
    assert not kernel.device_function and kernel.complete, kernel.incomplete
    assert [d.evaluate({"BLOCK_R": 4, "BLOCK_C": 32}) for d in kernel.accesses[-1].shape] == [128]


def test_host_descriptor_block_shape_through_launch_variables():
    spec = analyze_file(PKG / "tiles.py").kernel("desc_copy_kernel")
    assert spec.complete, spec.incomplete
    assert [[str(d) for d in a.shape] for a in spec.accesses] == [["BLOCK_M", "BLOCK_N"]] * 2


def test_tuple_indexed_by_a_static_range_variable():
    spec = analyze_source(textwrap.dedent('''
        import triton
        import triton.language as tl

        @triton.jit
        def k(x_ptr, y_ptr, BLOCK: tl.constexpr, STEPS: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs)
            parts = ()
            for s in tl.static_range(STEPS):
                x = x * 2
                parts += (x, x + 1)
            acc = tl.zeros([BLOCK], dtype=tl.float32)
            for s in tl.static_range(STEPS):
                acc += parts[2 * s + 1]
            tl.store(y_ptr + offs, acc)
    ''')).kernel("k")
    assert spec.complete, spec.incomplete
    assert [[str(d) for d in a.shape] for a in spec.accesses] == [["BLOCK"]] * 2


def test_gluon_kernel_is_incomplete_with_a_named_reason():
    spec = analyze_source(textwrap.dedent('''
        from triton.experimental import gluon
        from triton.experimental.gluon import language as gl

        @gluon.jit
        def k(x_ptr, BLOCK: gl.constexpr):
            layout: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])
            offs = gl.arange(0, BLOCK, layout=layout)
            gl.store(x_ptr + offs, gl.load(x_ptr + offs) * 2)
    ''')).kernel("k")
    assert not spec.complete and "Gluon kernel" in spec.incomplete[0]
