"""The Ascend model: what Triton-Ascend accepts is accepted, what cannot fit is rejected.

* preferences are not rejections: 32-byte alignment is a cost (rounding up),
  tile sizes need not be powers of two (Triton-Ascend's ``tl.arange`` takes
  any extent);
* hard limits still reject: UB (loads in loops counted twice with
  multibuffer), L0C and L1 for ``tl.dot`` (L0A/L0B are stepped through, not a limit);
* Triton-Ascend 3.2.0's generated configs and liger-kernel's ``_ascend``
  launch choices, recorded by ``bench/ascend_anchor.py --test-data``, are
  checked without the wheel;
* explanations never crash when one pointer is accessed with two tile shapes.
"""

import json
from pathlib import Path

import pytest

import fixtures
from bench.ascend_truth import compiler
from tests.corpus import library_root
from tests.fixture_problems import fixture_problem
from tiletune.analysis import analyze_file, analyze_source
from tiletune.errors import InfeasibleError
from tiletune.synthesis import check_config, get_target, synthesize
from tiletune.synthesis.cli import main as synth_main
from tiletune.synthesis.pipeline import build

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "ascend_anchor_configs.json"

ROWS_SRC = '''
import triton
import triton.language as tl

@triton.jit
def rows_kernel(x_ptr, rstd_ptr, n_rows, n_cols, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    r = tl.sum(x * x, axis=1)
    tl.store(rstd_ptr + rows, r.to(rstd_ptr.dtype.element_ty), mask=rows < n_rows)
'''

TWO_SHAPES_SRC = '''
import triton
import triton.language as tl

@triton.jit
def two_shapes(x_ptr, y_ptr, n, WIDE: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if WIDE:
        offs = pid * 2 * BLOCK + tl.arange(0, 2 * BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        tl.store(y_ptr + offs, x, mask=offs < n)
    else:
        offs1 = pid * BLOCK + tl.arange(0, BLOCK)
        x1 = tl.load(x_ptr + offs1, mask=offs1 < n)
        tl.store(y_ptr + offs1, x1, mask=offs1 < n)
'''


def _vector_add(n):
    return fixture_problem("vector_add", {"n_elements": n})


# ----- preferences are not rejections ------------------------------------------------------
def test_one_row_store_is_not_rejected_for_alignment():
    """liger's fused_add_rms_norm no_tiling kernel: BLOCK_SIZE_M=1 at n_cols=2048 stores 2 B per row."""
    spec = analyze_source(ROWS_SRC).kernel("rows_kernel")
    dt = {"x_ptr": "bf16", "rstd_ptr": "bf16"}
    shapes = {"n_rows": 8192, "n_cols": 2048}
    assert check_config(spec, {"BLOCK_M": 1, "BLOCK_N": 2048}, None, None, shapes, dt, "ascend910b3") == []


def test_liger_fused_add_rms_norm_launch_is_accepted():
    root = library_root("liger_kernel")
    if root is None:
        pytest.skip("dev corpus not fetched (bench/fetch_corpus.sh)")
    path = root / "ops/backends/_ascend/ops/fused_add_rms_norm.py"
    spec = analyze_file(str(path)).kernel("_fused_add_rms_norm_forward_kernel_no_tiling")
    dt = {p.name: "bf16" for p in spec.params if p.is_pointer}
    kw = {"BLOCK_SIZE_M": 1, "BLOCK_SIZE_N": 2048}
    assert check_config(spec, kw, None, None, {"n_rows": 8192, "n_cols": 2048}, dt, "ascend910b3") == []


def test_non_power_of_two_blocks_are_legal_on_ascend_only():
    spec, shapes, dtypes, _ = _vector_add(98432)
    assert check_config(spec, {"BLOCK_SIZE": 2461}, None, None, shapes, dtypes, "ascend910b3") == []
    nv = check_config(spec, {"BLOCK_SIZE": 2461}, 4, 2, shapes, dtypes, "h100")
    assert any("power of two" in v for v in nv)


def test_split_sizes_aim_at_the_vector_core_count():
    spec, shapes, dtypes, _ = _vector_add(98432)
    for target, cores in (("ascend910b3", 40), ("ascend910b2", 48)):
        values = build(spec, shapes, dtypes, target).space.var("BLOCK_SIZE").values
        one_wave = -(-98432 // cores)
        assert one_wave in values and -(-98432 // (2 * cores)) in values
        assert all(v & (v - 1) == 0 for v in values if v not in _split(98432, cores))


def _split(n, cores):
    out = set()
    for k in (1, 2, 4):
        v = -(-n // (k * cores))
        out |= {v, -(-v // 8) * 8}
    return out


def test_alignment_is_a_cost_not_a_rule():
    spec, shapes, dtypes, _ = _vector_add(98432)
    res = synthesize(spec, shapes, dtypes, "ascend910b3", hints={"BLOCK_SIZE": [2461, 2464]})
    by = {c.kwargs["BLOCK_SIZE"]: c for c in res.candidates}
    assert set(by) == {2461, 2464}
    assert by[2461].cost_terms["transaction_factor"] > by[2464].cost_terms["transaction_factor"]
    assert by[2461].cost > by[2464].cost
    assert res.candidates[0].cost_terms["programs"] == 40


def test_ascend_configs_have_no_warps_or_stages():
    spec, shapes, dtypes, fixed = fixture_problem("sum_axis", {"M": 8192, "N": 8192})
    res = synthesize(spec, shapes, dtypes, "ascend910b3", fixed=fixed)
    for c in res.candidates:
        assert c.num_warps is None and c.num_stages is None
        cfg = c.to_config()
        assert "multibuffer" in cfg.kwargs


@pytest.mark.parametrize("name", ["vector_add", "sum_axis", "matmul", "layer_norm"])
def test_synth_configs_ascend_prints_multibuffer_not_warps(capsys, name):
    fx = fixtures.load(name)
    shape = fx.BENCH_SHAPES[0]
    spec, shapes, _, _ = fixture_problem(name, shape)
    args = [str(ROOT / "fixtures" / f"{name}.py"), "--target", "ascend910b3", "--hint", "multibuffer=True,False"]
    params = {p.name for p in spec.params}
    for k, v in shape.items():
        if k in params:  # grid-only sizes are not kernel parameters
            args += ["--shape", f"{k}={v}"]
    assert synth_main(args) == 0
    out = capsys.readouterr().out
    assert "num_warps" not in out and "num_stages" not in out
    assert "'multibuffer': True" in out or "'multibuffer': False" in out


# ----- hard limits still reject ---------------------------------------------------------------
def test_ub_counts_multibuffered_loads_twice():
    """sum_axis loads its tile in a loop: find a tile that fits once but not double-buffered."""
    spec, shapes, dtypes, _ = fixture_problem("sum_axis", {"M": 8192, "N": 8192})
    ub = get_target("ascend910b3").ub_bytes
    env = {**shapes, **{f"esize_{p}": 4 for p in dtypes}}
    straddle = None
    for bm in (1, 2, 4, 8, 16, 32, 64):
        for bn in (256, 512, 1024, 2048, 4096, 8192):
            one = spec.footprint.live_bytes.evaluate({**env, "BLOCK_M": bm, "BLOCK_N": bn, "num_stages": 1})
            two = spec.footprint.live_bytes.evaluate({**env, "BLOCK_M": bm, "BLOCK_N": bn, "num_stages": 2})
            if one <= ub < two:
                straddle = {"BLOCK_M": bm, "BLOCK_N": bn}
                break
        if straddle:
            break
    assert straddle is not None
    with compiler({"multibuffer_retry": False}):  # a bishengir-compile that does not retry (CANN 8.5.0)
        off = check_config(spec, {**straddle, "multibuffer": False}, None, None, shapes, dtypes, "ascend910b3")
        on = check_config(spec, {**straddle, "multibuffer": True}, None, None, shapes, dtypes, "ascend910b3")
        default = check_config(spec, straddle, None, None, shapes, dtypes, "ascend910b3")
    assert off == []
    assert len(on) == 1 and on[0].startswith("UB: needs") and "> 196608 B on ascend910b3" in on[0]
    assert default == on  # Triton-Ascend's compiler turns multibuffer on by default on 910B
    # the compiler that retries an overflowing plan without multibuffer (the default) runs it
    assert check_config(spec, {**straddle, "multibuffer": True}, None, None, shapes, dtypes, "ascend910b3") == []


def test_cube_buffers_reject_oversize_dot_tiles():
    """L1 and L0C reject; L0A/L0B do not (the cube op steps through K in L0-sized pieces)."""
    spec, shapes, dtypes, _ = fixture_problem("matmul", {"M": 4096, "N": 4096, "K": 4096})
    kw = {"BLOCK_SIZE_M": 256, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 512, "GROUP_SIZE_M": 8}
    why = check_config(spec, kw, None, None, shapes, dtypes, "ascend910b3")
    # (A + B) once: 524288 B fits L1 (the compiler retries without the ND2NZ second copies)
    assert why == ["L0C: needs 262144 B > 131072 B on ascend910b3"]  # 256 x 256 fp32 accumulator
    with compiler({"multibuffer_retry": False}):
        why = check_config(spec, kw, None, None, shapes, dtypes, "ascend910b3")
    labels = {w.split(":")[0] for w in why}
    assert {"L0C", "L1"} <= labels and not labels & {"L0A", "L0B"}, why
    l1 = next(w for w in why if w.startswith("L1"))
    assert l1 == "L1: needs 1048576 B > 524288 B on ascend910b3"  # (A + B) x 2 multibuffer stages
    fits = {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8}
    assert check_config(spec, fits, None, None, shapes, dtypes, "ascend910b3") == []


def test_block_k_is_not_limited_by_l0a():
    """Triton-Ascend's matmul tutorial config 128x128x128 in fp32: A = B = 65536 B, L0A/L0B 65536 B;
    with BLOCK_K = 256 the operand tiles are twice L0A and still fit L1 (2 x 2 x 131072 B); at 1024
    one copy of A and B (2 x 524288 B) is over L1."""
    spec, shapes, dtypes, _ = fixture_problem("matmul", {"M": 4096, "N": 4096, "K": 4096})
    f32 = {k: "fp32" for k in dtypes}
    for bk in (128, 256):
        kw = {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": bk, "GROUP_SIZE_M": 8}
        assert check_config(spec, kw, None, None, shapes, f32, "ascend910b3") == [], bk
    kw = {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 1024, "GROUP_SIZE_M": 8}
    labels = [w.split(":")[0] for w in check_config(spec, kw, None, None, shapes, f32, "ascend910b3")]
    assert "L1" in labels and not set(labels) & {"L0A", "L0B"}, labels


def test_synthesis_never_returns_a_tile_over_the_hard_limits():
    spec, shapes, dtypes, fixed = fixture_problem("matmul", {"M": 4096, "N": 4096, "K": 4096})
    res = synthesize(spec, shapes, dtypes, "ascend910b3", fixed=fixed, top_k=64)
    for c in res.candidates:
        kw = {**c.kwargs, **c.extra, **fixed}
        assert check_config(spec, kw, None, None, shapes, dtypes, "ascend910b3") == [], kw


def test_whole_row_over_ub_is_infeasible():
    spec, shapes, dtypes, fixed = fixture_problem("softmax", {"n_rows": 16, "n_cols": 100_000})
    with pytest.raises(InfeasibleError) as err:
        synthesize(spec, shapes, dtypes, "ascend910b3", fixed=fixed)
    assert "UB" in err.value.explanation and "196608 B" in err.value.explanation


# ----- explanations never crash ------------------------------------------------------------------
def test_one_pointer_two_tile_shapes_gets_distinct_names_and_explains():
    spec = analyze_source(TWO_SHAPES_SRC).kernel("two_shapes")
    dt = {"x_ptr": "fp32", "y_ptr": "fp32"}
    for target in ("ascend910b3", "h100"):
        model = build(spec, {"n": 1 << 20}, dt, target, fixed={"WIDE": 1})
        names = [c.name for c in model.constraints]
        assert len(names) == len(set(names))
        solver, _, _ = model.solver()
        assert str(solver.check()) == "sat"
        with pytest.raises(InfeasibleError) as err:
            synthesize(spec, {"n": 1 << 22}, dt, target, fixed={"WIDE": 1, "BLOCK": 1 << 20})
        assert "largest tensor" in err.value.explanation or "UB" in err.value.explanation


# ----- Triton-Ascend's configs and liger's launches, recorded by bench/ascend_anchor.py ------------
def _anchor_items():
    data = json.loads(DATA.read_text())
    return data["target"], data["items"]


def _spec_of(item):
    f = item["file"]
    if f.startswith("corpus:"):
        root = library_root("liger_kernel")
        if root is None:
            return None
        path = root.parent / f[len("corpus:"):]
    else:
        path = ROOT / f
    return analyze_file(str(path)).kernel(item["name"])


def test_anchor_data_is_there():
    target, items = _anchor_items()
    assert target == "ascend910b3"
    assert sum(len(i["anchor"]) for i in items) >= 30
    assert sum(len(i["liger"]) for i in items) >= 30


def test_triton_ascend_and_liger_configs_are_accepted():
    target, items = _anchor_items()
    checked = 0
    for item in items:
        spec = _spec_of(item)
        if spec is None:
            continue
        for cfg in item["anchor"] + item["liger"]:
            why = check_config(spec, {**item["fixed"], **cfg}, None, None, item["shapes"], item["dtypes"], target)
            assert why == [], (item["kernel"], item["shapes"], cfg, why)
            checked += 1
        for over in item["anchor_over_ub"]:
            # beyond the UB when multibuffered: rejected, and only for UB, by a compiler that does not
            # retry without multibuffer; the retrying one rejects it only for UB if at all
            cfg = {**item["fixed"], **over["config"]}
            with compiler({"multibuffer_retry": False}):
                why = check_config(spec, cfg, None, None, item["shapes"], item["dtypes"], target)
            assert why and all(w.startswith("UB: needs") for w in why), (item["kernel"], over, why)
            why = check_config(spec, cfg, None, None, item["shapes"], item["dtypes"], target)
            assert all(w.startswith("UB: needs") for w in why), (item["kernel"], over, why)
    assert checked > 0


# ----- matmul / bmm with configs=[] on Ascend -------------------------------------------------------
def _dot_dims(spec, kw):
    d = spec.dots[0]
    return [x.evaluate(kw) for x in (d.m, d.n, d.k)]


@pytest.mark.parametrize("name,shape", [
    ("matmul", {"M": 4096, "N": 4096, "K": 4096}),
    ("batched_matmul", {"B": 8, "M": 2048, "N": 2048, "K": 2048}),
])
def test_matmul_and_bmm_get_cube_aligned_tilings(name, shape):
    """Triton-Ascend's generator has no tl.dot logic (its parser finds no axis); tiletune tiles them."""
    spec, shapes, dtypes, fixed = fixture_problem(name, shape)
    t = get_target("ascend910b3")
    res = synthesize(spec, shapes, dtypes, t, fixed=fixed)
    assert res.candidates
    for c in res.candidates:
        kw = {**c.kwargs, **fixed}
        m, n, k = _dot_dims(spec, kw)
        assert m % 16 == 0 and n % 16 == 0 and k % 16 == 0  # 16x16 fp16 fractal
        copies = 1 + int(c.extra["multibuffer"])
        assert (m * k + k * n) * 2 * copies <= t.l1_bytes and m * n * 4 <= t.l0c_bytes
    assert {bool(c.extra["multibuffer"]) for c in res.candidates} <= {True, False}
    assert any(c.extra["multibuffer"] for c in res.candidates)  # a knob the search sets


def test_int8_dots_use_the_16x32_fractal():
    spec, shapes, dtypes, fixed = fixture_problem("matmul", {"M": 4096, "N": 4096, "K": 4096})
    i8 = {**dtypes, "a_ptr": "int8", "b_ptr": "int8"}
    res = synthesize(spec, shapes, i8, "ascend910b3", fixed=fixed)
    assert res.candidates
    assert all(_dot_dims(spec, {**c.kwargs, **fixed})[2] % 32 == 0 for c in res.candidates)
    kw = {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 48, "GROUP_SIZE_M": 8}
    why = check_config(spec, kw, None, None, shapes, i8, "ascend910b3")
    assert any("multiple of 32" in w for w in why), why
