"""The static reader on patterns found in libraries outside the dev corpus (bench/results/heldout_corpus.md):
each test reads a small kernel written in that pattern (tests/data/heldout_patterns, never imported)."""

from __future__ import annotations

from pathlib import Path

from tiletune.analysis import analyze_file

DATA = Path(__file__).resolve().parent / "data" / "heldout_patterns"


def _kernel(module: str, name: str):
    """The analysed kernel ``name`` of ``tests/data/heldout_patterns/<module>.py``."""
    kernels = {k.name: k for k in analyze_file(DATA / f"{module}.py").kernels}
    return kernels[name]


def test_address_cast_to_a_parameters_element_type():
    # tl.pointer_type(out_ptr.dtype.element_ty): the loaded address holds out_ptr's element type
    spec = _kernel("pointer_table", "gather_rows_kernel")
    assert spec.complete, spec.incomplete
    rows = [(a.kind, a.pointer, a.dtype, [str(d) for d in a.shape]) for a in spec.accesses if a.shape]
    assert rows == [("load", None, "elem:out_ptr", ["BLOCK"]), ("store", "out_ptr", "elem:out_ptr", ["BLOCK"])]
    assert [p.name for p in spec.tiling_params] == ["BLOCK"]


def test_launch_whose_kernel_is_imported_inside_the_launching_function():
    # ``from ._kernels.rotary import rotary_kernel`` in the function body, then BLOCK=block at the launch
    from tiletune.analysis.tunability import tunability

    spec = _kernel("ops/_kernels/rotary", "rotary_kernel")
    assert spec.complete, spec.incomplete
    assert [p.name for p in spec.tiling_params] == ["BLOCK"]
    assert [(s.file.endswith("ops/rotary.py"), sorted(s.fixed)) for s in spec.project_launches] == [(True, ["BLOCK"])]
    verdict = tunability(spec)
    assert verdict.tuned == () and verdict.fixed["BLOCK"].startswith("passed at launch")


def test_integer_view_of_a_float_through_get_int_dtype():
    # tl.core.get_int_dtype(bitwidth=x.dtype.primitive_bitwidth, signed=True) is int32 for an fp32 tile
    spec = _kernel("bitcast", "negate_bits_kernel")
    assert spec.complete, spec.incomplete
    assert [(a.kind, [str(d) for d in a.shape]) for a in spec.accesses] == [("load", ["BLOCK"]), ("store", ["BLOCK"])]
    assert "int32" in {data.get("dtype") for _, data in spec.graph.nodes(data=True)}


def test_view_to_a_shape_computed_from_the_tiles_own_size_and_back():
    # tl.reshape(x, [x.numel >> (level + 1), 2, 2 ** level]) ... tl.reshape(..., x.shape): the views in between
    # have shapes the reader cannot evaluate, but nothing is loaded, stored or multiplied through them
    spec = _kernel("butterfly", "butterfly_kernel")
    assert spec.complete, spec.incomplete
    assert [(a.kind, [str(d) for d in a.shape]) for a in spec.accesses] == [("load", ["BLOCK"]), ("store", ["BLOCK"])]
    assert [p.name for p in spec.tiling_params] == ["BLOCK"]


def test_access_through_a_view_of_unknown_shape_stays_incomplete():
    spec = _kernel("butterfly", "butterfly_store_kernel")
    assert not spec.complete
    assert any(r.startswith("unknown access shape: store of y_ptr") for r in spec.incomplete), spec.incomplete


def test_compile_time_questions_about_the_element_type():
    # x_ptr.type.element_ty, a @triton.constexpr_function accumulator type, dtype.value.is_floating(),
    # dtype.int_bitwidth in a scalar fill helper, and an `if dtype.is_floating()` around the stores
    spec = _kernel("dtype_queries", "rowmax_sum_kernel")
    assert spec.complete, spec.incomplete
    assert [p.name for p in spec.tiling_params] == ["BLOCK_R", "BLOCK_C"]
    assert [(a.kind, a.pointer, [str(d) for d in a.shape]) for a in spec.accesses] == [
        ("load", "x_ptr", ["BLOCK_R", "BLOCK_C"]), ("store", "max_ptr", ["BLOCK_R"]),
        ("store", "sum_ptr", ["BLOCK_R"]), ("store", "sum_ptr", ["BLOCK_R"])]


def test_dtype_named_by_a_string():
    spec = _kernel("dtype_queries", "radix_digit_kernel")
    assert spec.complete, spec.incomplete
    assert [p.name for p in spec.tiling_params] == ["BLOCK"]


def test_dtype_predicates_answer_as_triton_does():
    import triton.language as tl

    from tiletune.analysis.ops.dtypes import PREDICATES, dtype_named, dtype_predicate
    from tiletune.analysis.values import TL_DTYPES

    checked = 0
    for tl_name, ours in TL_DTYPES.items():
        if not hasattr(tl, tl_name) or tl_name.startswith(("float8e4b8", "float8e5b16")):
            continue
        live = getattr(tl, tl_name)
        for method in sorted(PREDICATES):
            try:
                answer = getattr(live, method)()
            except (AttributeError, RuntimeError, TypeError):  # not a question this Triton answers for a dtype
                continue
            assert dtype_predicate(ours, method) == answer, (tl_name, method)
            checked += 1
    assert checked > 100
    assert dtype_named("uint32") == "uint32" and dtype_named("float16") == "fp16" and dtype_named(None) is None


def test_philox_random_bits():
    # r0, r1, r2, r3 = tl.philox(seed, c0, c1, c2, c3): four tiles of the counters' shape
    spec = _kernel("random_bits", "keep_mask_kernel")
    assert spec.complete, spec.incomplete
    assert [[str(d) for d in a.shape] for a in spec.accesses] == [["BLOCK"]] * 4


def test_math_functions_chosen_at_import_and_re_exported():
    # exp = _choose_exp() (returns tldevice.fast_expf or tl.exp); math_shim = libdevice after a failed
    # vendor import; both re-exported by the package's __init__
    spec = _kernel("ops/activations", "softplus_cube_kernel")
    assert spec.complete, spec.incomplete
    assert [[str(d) for d in a.shape] for a in spec.accesses] == [["BLOCK"], ["BLOCK"]]


def test_view_whose_factor_comes_from_a_constexpr_and_an_unrolled_level():
    # tl.reshape(x, (BLOCK // (2 * STRIDE), 2, STRIDE)) with STRIDE = 1 << (LOG_N - 1 - level): LOG_N only
    # shapes views that are viewed back to (BLOCK,), so it is no tiling parameter
    spec = _kernel("butterfly", "walsh_kernel")
    assert spec.complete, spec.incomplete
    assert [p.name for p in spec.tiling_params] == ["BLOCK"]
    assert [[str(d) for d in a.shape] for a in spec.accesses] == [["BLOCK"], ["BLOCK"]]


def test_function_taken_from_a_math_module_with_a_jit_fallback():
    # gauss_error = getattr(math_shim, "erf", _erf_fallback): the fallback, a jit function, stands for the name
    spec = _kernel("ops/activations", "gelu_erf_kernel")
    assert spec.complete, spec.incomplete
    assert [[str(d) for d in a.shape] for a in spec.accesses] == [["BLOCK"], ["BLOCK"]]


def test_cat_of_two_tiles():
    spec = _kernel("random_bits", "two_halves_count_kernel")
    assert spec.complete, spec.incomplete
    assert [[str(d) for d in a.shape] for a in spec.accesses] == [["BLOCK"], ["BLOCK"], []]
    assert "['2 * BLOCK']" in {str(data.get("shape")) for _, data in spec.graph.nodes(data=True)}


def test_helpers_nested_five_deep():
    # kernel -> _two_passes -> _histogram_pass -> _count_digits -> _digit -> _sortable_key
    spec = _kernel("nested", "radix_histogram_kernel")
    assert spec.complete, spec.incomplete
    assert [(a.kind, [str(d) for d in a.shape]) for a in spec.accesses] == [
        ("load", ["BLOCK"]), ("atomic", ["BLOCK"]), ("load", ["BLOCK"]), ("atomic", ["BLOCK"])]


def test_lint_sees_a_launch_through_a_lazy_import():
    # TT002: the launch in ops/scaling.py (kernel imported inside the function) fixes BLOCK positionally,
    # which configs=[] would tune
    from tiletune.lint.registry import lint_file

    found = [d for d in lint_file(str(DATA / "ops" / "_kernels" / "tuned_scale.py"), project=True) if d.code == "TT002"]
    assert [(d.kernel, d.param) for d in found] == [("tuned_scale_kernel", "BLOCK")]
    assert "scaling.py" in found[0].message and "positionally" in found[0].message


def test_heuristics_from_a_registry_tune_nothing_statically():
    # @triton.heuristics(REGISTRY.heuristics_for("row_softmax")): the names it sets cannot be read, so the
    # static verdict tunes no tiling parameter (BLOCK_N is the one it sets); at run time the live launch's
    # binding, heuristic values included, decides
    from tiletune.analysis.tunability import tunability

    spec = _kernel("registry", "row_softmax_kernel")
    assert not spec.complete and "cannot be read" in spec.incomplete[0]
    assert [p.name for p in spec.tiling_params] == ["BLOCK_M", "BLOCK_N"]
    verdict = tunability(spec)
    assert verdict.tuned == ()
    assert all(why.startswith("may be set by @triton.heuristics (line 22") for why in verdict.fixed.values())
    assert tunability(spec, launch_kwargs=["BLOCK_N"]).tuned == ("BLOCK_M",)


def test_block_pointers_over_addresses_from_a_table():
    # tl.make_block_ptr over tl.load(table + g).to(tl.pointer_type(tl.float16)), advanced with the method
    spec = _kernel("grouped", "grouped_matmul_kernel")
    assert spec.complete, spec.incomplete
    tiles = [(a.kind, a.dtype, [str(d) for d in a.shape]) for a in spec.accesses if a.shape]
    assert tiles == [("load", "fp16", ["BLOCK_M", "BLOCK_K"]), ("load", "fp16", ["BLOCK_K", "BLOCK_N"]),
                     ("store", "fp32", ["BLOCK_M", "BLOCK_N"])]
    assert [(str(d.m), str(d.n), str(d.k)) for d in spec.dots] == [("BLOCK_M", "BLOCK_N", "BLOCK_K")]


def test_module_level_name_for_a_function_of_an_imported_math_module():
    # _power = math_shim.pow, math_shim imported from the package (bound to libdevice after a failed vendor import)
    spec = _kernel("ops/activations", "softsign_power_kernel")
    assert spec.complete, spec.incomplete
    assert [[str(d) for d in a.shape] for a in spec.accesses] == [["BLOCK"], ["BLOCK"]]
