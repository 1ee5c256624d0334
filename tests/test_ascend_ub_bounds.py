"""The Ascend UB count's rules for what the analysis leaves open, on kernels in shipped patterns.

Kernels: tests/data/ascend_ub_patterns.py (written for these tests in the patterns of
FlagGems' Ascend amax/max and weight-norm backward kernels).  A rejection must be
backed by a need the compiler cannot go below; these tests pin that down.
"""

from bench.ascend_truth import compiler
from tiletune.analysis import analyze_file
from tiletune.analysis.expr import const
from tiletune.synthesis import check_config
from tiletune.synthesis.constraints.ascend import rule_of
from tiletune.synthesis.ascend_cost import OVERFLOW_RISK
from tiletune.synthesis.explain import explain_config
from tiletune.synthesis.constraints.ascend_ub import ub_bytes, ub_certain, ub_floor

KERNELS = "tests/data/ascend_ub_patterns.py"
UB = 196608  # ascend910b3


def _dtypes(spec, dt):
    return {p.name: dt for p in spec.params if p.is_pointer}


def test_a_named_accumulator_type_is_folded_like_triton():
    """``acc_type = tl.float32 if dtype is tl.bfloat16 else dtype``: fp16 input keeps an fp16 accumulator."""
    spec = analyze_file(KERNELS).kernel("row_max_named_acc")
    m, n = 16, 2048
    env = {"BLOCK_M": m, "BLOCK_N": n}
    fp16 = ub_bytes(spec, _dtypes(spec, "fp16"), const(2)).evaluate(env)
    bf16 = ub_certain(spec, _dtypes(spec, "bf16"), const(2)).evaluate(env)
    assert fp16 == 2 * m * n + 2 * (2 * m * n)  # fp16 accumulator + the loop's fp16 load, multibuffered
    assert bf16 == 4 * m * n + 2 * (2 * m * n)  # the fp32 accumulator for bf16 beside the load it reads
    # the estimate adds the fp32 copy tl.maximum makes of the bf16 load (an implicit widening)
    assert ub_bytes(spec, _dtypes(spec, "bf16"), const(2)).evaluate(env) == bf16 + 4 * m * n
    assert check_config(spec, env, None, None, {}, _dtypes(spec, "fp16"), "ascend910b3") == []
    # one copy of the load (the compiler retries an overflowing plan without multibuffer): 196608 B fits
    assert ub_certain(spec, _dtypes(spec, "bf16"), const(1)).evaluate(env) == UB
    assert check_config(spec, env, None, None, {}, _dtypes(spec, "bf16"), "ascend910b3") == []
    with compiler({"multibuffer_retry": False}):  # a compiler that does not retry: the copies count
        assert check_config(spec, env, None, None, {}, _dtypes(spec, "bf16"), "ascend910b3") == [
            f"UB: needs {bf16} B > {UB} B on ascend910b3"]


def test_an_unplanned_kernel_is_rejected_only_by_its_largest_tile():
    """A helper the analysis does not follow: no plan, so only the largest tile (a lower bound) rejects."""
    spec = analyze_file(KERNELS).kernel("row_pow_helper")
    assert any(x.startswith("unresolved helper") for x in spec.incomplete)
    dt = _dtypes(spec, "fp16")
    assert ub_bytes(spec, dt, const(2)) is None
    fits = {"BLOCK_R": 32, "BLOCK_C": 1024}  # the fp32 tile: 128 KiB
    live = spec.footprint.live_bytes.evaluate({**fits, "esize_x_ptr": 2, "esize_y_ptr": 2, "num_stages": 2})
    assert live > UB  # the analysis' live tiles (no reuse) over-count past the UB...
    assert ub_floor(spec, dt, const(2)).evaluate(fits) == 4 * 32 * 1024
    assert check_config(spec, fits, None, None, {}, dt, "ascend910b3") == []  # ...and reject nothing
    big = {"BLOCK_R": 64, "BLOCK_C": 1024}  # one fp32 tile of 256 KiB cannot be allocated at all
    assert check_config(spec, big, None, None, {}, dt, "ascend910b3") == [
        f"UB: needs {4 * 64 * 1024} B > {UB} B on ascend910b3"]


def test_the_floor_and_the_estimate_cite_their_rule():
    assert "no spilling" in rule_of("ub.floor") and "PlanMemory" in rule_of("ub.floor")
    assert "ranked lower" in rule_of("ub.estimate") and "binary_op_type_checking_impl" in rule_of("ub.estimate")
    assert "iter arg" in rule_of("ub.certain") and "enable-code-motion" in rule_of("ub.certain")


def test_an_index_loaded_as_a_scalar_leaves_addresses_metadata():
    """sgl-kernel-npu #477's pattern: row indices loaded as scalars, a 3-D state tile copied per step.

    The compiler reported 2097152 bits (262144 B) for H_BLOCK=2, V=K=128 fp32: the tile and its
    multibuffer copy, nothing for the addresses built from the loaded indices.
    """
    spec = analyze_file("tests/data/ascend_truth_kernels.py").kernel("state_copy_h_blocks")
    dt = {"dst_ptr": "fp32", "src_ptr": "fp32", "src_rows": "int32", "dst_rows": "int32"}
    env = {"H_BLOCK": 2, "BLOCK_V": 128, "BLOCK_K": 128}
    assert ub_bytes(spec, dt, const(2)).evaluate(env) == 2097152 // 8
    assert ub_bytes(spec, dt, const(2)).evaluate({**env, "H_BLOCK": 1}) <= UB  # the fix's direction fits


def test_a_subexpression_written_twice_is_one_value():
    """Triton's CSE pass merges ``(x - mean)`` written twice: it costs what naming it once costs (one tile)."""
    dt = {"x_ptr": "fp32", "y_ptr": "fp32"}
    env = {"BLOCK": 8192}
    twice = ub_bytes(analyze_file(KERNELS).kernel("squared_deviation_twice"), dt, const(2)).evaluate(env)
    once = ub_bytes(analyze_file(KERNELS).kernel("squared_deviation_once"), dt, const(2)).evaluate(env)
    assert twice == once == 4 * 8192


def test_an_if_on_dtypes_keeps_only_the_side_triton_generates():
    """``if vals.dtype == tl.bfloat16:`` is decided at compile time: fp16 input never gets the fp32 copy."""
    spec = analyze_file(KERNELS).kernel("row_max_bf16_upcast")
    m, n = 64, 256
    env = {"BLOCK_M": m, "BLOCK_N": n}
    fp16 = ub_bytes(spec, {"inp": "fp16", "out": "fp16"}, const(2)).evaluate(env)
    bf16 = ub_bytes(spec, {"inp": "bf16", "out": "bf16"}, const(2)).evaluate(env)
    assert fp16 == 2 * m * n + 2 * m  # the loaded tile and its row max
    assert bf16 >= 2 * m * n + 4 * m * n  # bf16: the fp32 copy is made


def test_an_accumulator_and_its_load_are_live_together_with_one_copy():
    """amax's pattern: ``acc = tl.maximum(acc, x)`` reads both tiles, so both are in UB at once
    whatever the compiler does with multibuffer (its overflow retry drops only the second copy)."""
    from bench.ascend_truth import cause

    spec = analyze_file(KERNELS).kernel("row_max_named_acc")
    dt = _dtypes(spec, "fp32")
    over = {"BLOCK_M": 16, "BLOCK_N": 2048}  # 128 KiB accumulator + 128 KiB load
    assert check_config(spec, over, None, None, {}, dt, "ascend910b3") == [f"UB: needs {2 * 131072} B > {UB} B on ascend910b3"]
    entry = {"config": over, "shapes": {}, "dtypes": dt, "target": "ascend910b3"}
    assert cause(spec, entry, ["UB"]) == "plan"
    assert check_config(spec, {"BLOCK_M": 8, "BLOCK_N": 2048}, None, None, {}, dt, "ascend910b3") == []


def test_values_made_before_a_loop_and_used_after_it_live_through_it():
    """Weight-norm backward's pattern: three per-row fp32 vectors made before the first pass and used
    in the second are live during the first, beside its accumulator and its two loads.  The
    accumulator and the two loads it reads are certain; the per-row vectors are only estimated, so
    a config over by them alone is kept, ranked lower and explained as a risk."""
    spec = analyze_file(KERNELS).kernel("two_pass_row_grad")
    dt = _dtypes(spec, "fp32")
    env = {"BLOCK_R": 32, "BLOCK_C": 512}
    tile, vec = 32 * 512 * 4, 32 * 4
    assert ub_bytes(spec, dt, const(1)).evaluate(env) == 3 * tile + 3 * vec  # acc, v, w + g, inv, inv3
    assert ub_certain(spec, dt, const(1)).evaluate(env) == 3 * tile == UB  # acc, v, w: fits exactly
    assert check_config(spec, env, None, None, {}, dt, "ascend910b3") == []
    lines = explain_config(spec, env, {}, dt, "ascend910b3")
    assert len(lines) == 1 and lines[0].startswith(
        f"UB may overflow: estimated {3 * tile + 3 * vec} B > {UB} B, certain {3 * tile} B fits")
    big = {"BLOCK_R": 64, "BLOCK_C": 512}  # the certain tiles alone are twice the UB
    assert check_config(spec, big, None, None, {}, dt, "ascend910b3") == [f"UB: needs {6 * tile} B > {UB} B on ascend910b3"]
    assert explain_config(spec, {"BLOCK_R": 16, "BLOCK_C": 512}, {}, dt, "ascend910b3") == []
    # fp16 pointers: the loads are cast up to fp32, and a cast's input lives while its output is written
    f16 = _dtypes(spec, "fp16")
    assert ub_bytes(spec, f16, const(1)).evaluate(env) == 3 * tile + tile // 2 + 3 * vec
    assert ub_certain(spec, f16, const(1)).evaluate(env) == 3 * tile  # acc and the fp32 v, w that v * w reads


def test_a_config_that_may_overflow_is_kept_and_ranked_lower():
    """Over on the estimated plan only (weight-norm backward's per-row vectors): the synthesis keeps the
    config but ranks it below one that fits on both counts (ascend_cost.overflow_risk_factor)."""
    from tiletune.synthesis import synthesize

    spec = analyze_file(KERNELS).kernel("two_pass_row_grad")
    dt = _dtypes(spec, "fp32")
    res = synthesize(spec, {"M": 4096, "N": 4096}, dt, "ascend910b3",
                     hints={"BLOCK_R": [16, 32], "BLOCK_C": [512]})
    order = [c.kwargs["BLOCK_R"] for c in res.candidates]
    assert 32 in order and 16 in order  # kept: a penalty, not a filter
    assert order.index(16) < order.index(32)
    risk = {c.kwargs["BLOCK_R"]: c.cost_terms["overflow_risk_factor"] for c in res.candidates}
    assert risk == {16: 1.0, 32: OVERFLOW_RISK}
    from tiletune.synthesis.cli import format_python

    text = format_python(res, explain=True)  # synth-configs --explain
    flagged = [line for line in text.splitlines() if "UB may overflow" in line]
    assert len(flagged) == 1 and "'BLOCK_R': 32" in flagged[0] and "estimated 196992 B" in flagged[0]


def test_a_widened_operand_is_estimated_not_certain():
    """``acc = tl.maximum(acc, x)`` with a bf16 ``x`` and an fp32 ``acc``: Triton casts ``x`` up first,
    a tile of its own in the estimate; the certain count holds the tiles as written."""
    spec = analyze_file(KERNELS).kernel("row_max_named_acc")
    env = {"BLOCK_M": 16, "BLOCK_N": 1024}
    tile = 16 * 1024
    bf16 = _dtypes(spec, "bf16")
    assert ub_bytes(spec, bf16, const(1)).evaluate(env) == 4 * tile + 2 * tile + 4 * tile
    assert ub_certain(spec, bf16, const(1)).evaluate(env) == 4 * tile + 2 * tile
    fp32 = _dtypes(spec, "fp32")  # nothing to widen
    assert ub_bytes(spec, fp32, const(1)).evaluate(env) == ub_certain(spec, fp32, const(1)).evaluate(env) == 8 * tile


def test_a_multibuffered_load_holds_both_slots_through_its_loop():
    """Without the overflow retry, a loop's multibuffered load is one allocation of two slots made before
    the loop (MLIR memref::multiBuffer): certain beside any operation of the loop, and nothing extra when
    multibuffer is off."""
    spec = analyze_file("tests/data/ascend_truth_kernels.py").kernel("bias_silu_rows")
    dt = {"io_ptr": "bf16", "bias_ptr": "bf16"}
    env = {"Y0BLOCK": 48, "Y0BLOCK_SUB": 1, "X1BLOCK_SUB": 16384, "y0_numel": 4096, "x1_numel": 16384}
    tile = 16384
    # a + b: both fp32 tiles (a's buffer, stored, two slots) and both bf16 loads' two slots
    assert ub_certain(spec, dt, const(2)).evaluate(env) == 2 * 4 * tile + 4 * tile + 2 * (2 * 2 * tile)
    assert ub_certain(spec, dt, const(1)).evaluate(env) == 2 * 4 * tile  # s and sigmoid(s)


def test_an_implicit_widening_is_a_cast_then_the_operation():
    """``x * s / nrm`` with fp16 ``x`` and an fp32 ``nrm``: the division reads an fp32 copy of the
    product, which the result may take in place; neither that copy nor such a result is certain, so
    the fp16 product, the fp32 copy and the result are never counted together as certain."""
    spec = analyze_file(KERNELS).kernel("scale_rows_by_norm")
    dt = _dtypes(spec, "fp16")
    env = {"BLOCK_R": 32, "BLOCK_C": 1024}
    tile = 32 * 1024
    # the fp32 result alone (an fp32 tile exists whichever buffer it is); x and s at x * s are less
    assert ub_certain(spec, dt, const(1)).evaluate(env) == 4 * tile
    assert ub_bytes(spec, dt, const(1)).evaluate(env) > UB  # the fp32 copy beside the product
    assert check_config(spec, env, None, None, {"M": 4096, "N": 4096}, dt, "ascend910b3") == []
    assert explain_config(spec, env, {"M": 4096, "N": 4096}, dt, "ascend910b3")[0].startswith("UB may overflow")


def test_an_explicit_cast_written_with_its_load_holds_both_tiles():
    """``tl.load(...).to(tl.float32)`` in one expression (its label is shortened past the ``.to(``):
    still an explicit cast, whose narrow input and wide output are both operands of one conversion
    (PlanMemory.cpp isReusableCastOp: a widening cast cannot take its input's buffer), beside the
    accumulator carried through the loop; not an implicit widening, so no extra fp32 copy is estimated.
    Checked: before the cast was recognised from its operands, fp16 counted certain 262144 B
    (the fp16 input missing) and estimated 458752 B (a copy that does not exist)."""
    spec = analyze_file(KERNELS).kernel("row_sq_norm_cast")
    tile = 32 * 1024
    env = {"BLOCK_R": 32, "BLOCK_C": 1024}
    for dt, narrow in (("fp16", 2), ("bf16", 2)):
        d = _dtypes(spec, dt)
        need = 4 * tile + narrow * tile + 4 * tile  # acc, the loaded tile, its fp32 cast
        assert ub_certain(spec, d, const(1)).evaluate(env) == need == 327680
        assert ub_bytes(spec, d, const(1)).evaluate(env) == need
        assert check_config(spec, env, None, None, {}, d, "ascend910b3") == [f"UB: needs {need} B > {UB} B on ascend910b3"]
        half = {"BLOCK_R": 16, "BLOCK_C": 1024}
        assert check_config(spec, half, None, None, {}, d, "ascend910b3") == []
        assert explain_config(spec, half, {}, d, "ascend910b3") == []  # no may-overflow from a phantom copy
    f32 = _dtypes(spec, "fp32")  # a cast to its own type is no tile: acc and x (x * x takes x's buffer)
    assert ub_certain(spec, f32, const(1)).evaluate(env) == 8 * tile


def test_an_if_on_a_constexpr_the_config_fixes_keeps_only_the_side_triton_generates():
    """``if SPLIT == 1: store x * 2 else: store x + y`` with ``SPLIT`` given by the config: Triton
    generates one side, so only its tiles count (x + y reads two 128 KiB fp32 tiles, x * 2 one).
    Checked: before constexpr values decided the test, SPLIT=1 was rejected for x + y's 262144 B."""
    spec = analyze_file(KERNELS).kernel("rows_store_or_add")
    dt = _dtypes(spec, "fp32")
    tile = 16 * 2048 * 4
    cfg = {"BLOCK_R": 16, "BLOCK_C": 2048}
    assert check_config(spec, {**cfg, "SPLIT": 1}, None, None, {}, dt, "ascend910b3") == []
    assert check_config(spec, {**cfg, "SPLIT": 2}, None, None, {}, dt, "ascend910b3") == [
        f"UB: needs {2 * tile} B > {UB} B on ascend910b3"]
    assert ub_certain(spec, dt, const(1), {"SPLIT": 1}).evaluate(cfg) == tile
    assert ub_certain(spec, dt, const(1)).evaluate(cfg) == 2 * tile  # undecided: both sides' worst


def test_a_load_with_no_use_the_graph_shows_is_not_certain():
    """``if EVEN_K: a = tl.load(...) else: a = tl.load(..., mask=...)`` then ``tl.dot(a, b)``: the
    graph links the dot to one side's loads only, so the other side's loads show no use.  Such a
    buffer is not certain (unused, the compiler erases it; used by the dot, it lives in L1), only
    estimated.  On Ascend 950 (no sub-block halving, 248 KiB UB) a 256 x 256 fp32 A tile used to
    be rejected as one UB tile.  Checked: before, check_config said "UB: needs 262144 B > 253952 B"."""
    spec = analyze_file(KERNELS).kernel("dot_even_or_masked")
    dt = _dtypes(spec, "fp32")
    cfg = {"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 256}
    assert ub_certain(spec, dt, const(1)).evaluate(cfg) == 0
    assert ub_bytes(spec, dt, const(1)).evaluate(cfg) == 256 * 256 * 4  # still in the estimate
    assert check_config(spec, cfg, None, None, {}, dt, "ascend910_95") == []
    assert check_config(spec, {**cfg, "EVEN_K": 1}, None, None, {}, dt, "ascend910_95") == []
    assert check_config(spec, {**cfg, "BLOCK_N": 512}, None, None, {}, dt, "ascend910_95") == [
        "L0C: needs 524288 B > 262144 B on ascend910_95"]  # the cube limits still reject


def test_a_store_under_a_mask_from_loaded_data_reads_its_destination_back():
    """Triton-Ascend's discrete-mask-access-conversion: a store whose mask is computed from loaded data
    becomes a load of the whole destination tile, a select and a store, so the destination read back is a
    UB tile beside the stored value and the mask at the select (certain: 4 + 4 + 1 B per fp32 element)."""
    spec = analyze_file(KERNELS).kernel("copy_where_flagged")
    dt = {"x_ptr": "fp32", "flag_ptr": "int32", "out_ptr": "fp32"}
    for block in (16384, 32768):
        assert ub_certain(spec, dt, const(1)).evaluate({"BLOCK": block}) == (4 + 4 + 1) * block
    assert check_config(spec, {"BLOCK": 16384}, None, None, {}, dt, "ascend910b3") == []
    assert check_config(spec, {"BLOCK": 32768}, None, None, {}, dt, "ascend910b3") == [
        f"UB: needs {9 * 32768} B > {UB} B on ascend910b3"]
    # the read back is in the destination's element type: fp16 values and output, 2 + 2 + 1 B
    half = {"x_ptr": "fp16", "flag_ptr": "int8", "out_ptr": "fp16"}
    assert ub_certain(spec, half, const(1)).evaluate({"BLOCK": 32768}) == (2 + 2 + 1) * 32768
    # the same copy under a mask of indices only is a rectangle: nothing is read back, one tile
    rect = analyze_file(KERNELS).kernel("copy_from_start")
    f32 = {"x_ptr": "fp32", "out_ptr": "fp32"}
    assert ub_certain(rect, f32, const(1)).evaluate({"BLOCK": 32768}) == 4 * 32768
    assert check_config(rect, {"BLOCK": 32768}, None, None, {}, f32, "ascend910b3") == []


def test_a_data_masked_store_in_a_loop_counts_its_read_back_each_iteration():
    """2-D rows in a loop, stored where the loaded value is positive: the select reads the mask (1 B), the
    stored tile and the destination read back; the loaded tile, dead by then, is not certain beside them."""
    spec = analyze_file(KERNELS).kernel("rows_clamp_where_positive")
    dt = {"x_ptr": "fp32", "out_ptr": "fp32"}
    env = {"BLOCK_R": 8, "BLOCK_C": 2048}
    assert ub_certain(spec, dt, const(1)).evaluate(env) == (4 + 4 + 1) * 8 * 2048
    assert check_config(spec, env, None, None, {}, dt, "ascend910b3") == []
    assert check_config(spec, {"BLOCK_R": 8, "BLOCK_C": 4096}, None, None, {}, dt, "ascend910b3") == [
        f"UB: needs {9 * 8 * 4096} B > {UB} B on ascend910b3"]
    lines = explain_config(spec, {"BLOCK_R": 8, "BLOCK_C": 4096}, {}, dt, "ascend910b3")
    assert lines and lines[0].startswith(f"UB overflows by {9 * 8 * 4096 - UB} B")
