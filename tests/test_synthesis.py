"""Synthesis: the space, the Z3 model, enumeration, ranking, explanations, check_config.

Two kinds of specs: KernelSpecs built by hand (a matmul-like and a
softmax-like kernel, so the model is tested independently of the analysis)
and the real fixtures analysed from source.
"""

import math
import random

import pytest

from tiletune.analysis.footprint import assume_aligned
from tiletune.synthesis.alignment import alignment_params, bind_alignment
from tiletune.analysis.expr import const
from tiletune.synthesis.constraints.ascend import sub_blocks
from tiletune.synthesis.constraints.ascend_ub import ub_certain

import fixtures
from tiletune.analysis import analyze_source
from tiletune.analysis.expr import parse_expr as E
from tiletune.analysis.model import (
    DTYPE_BYTES,
    DotInfo,
    Footprint,
    KernelSpec,
    LaunchSite,
    MemoryAccess,
    Param,
    Role,
    Span,
)
from tiletune.errors import InfeasibleError, SynthesisError
from tiletune.synthesis import TARGETS, check_config, get_target, required_shapes, synthesize
from tiletune.synthesis.enumerate import enumerate_feasible
from tiletune.synthesis.families import family_of
from tests.fixture_problems import fixture_problem
from tiletune.synthesis.space import normalize_dtype
from tiletune.synthesis.pipeline import build

SP = Span(1, 0, 1, 1)
ASCEND = [n for n, t in TARGETS.items() if t.family == "ascend"]
NVIDIA = [n for n, t in TARGETS.items() if t.family == "nvidia"]


# ----- hand-built specs ----------------------------------------------------------
def _p(name, i, **kw):
    return Param(name=name, index=i, span=SP, **kw)


def matmul_spec(static_asserts=()):
    params = [
        _p("a_ptr", 0, is_pointer=True),
        _p("b_ptr", 1, is_pointer=True),
        _p("c_ptr", 2, is_pointer=True),
        _p("M", 3),
        _p("N", 4),
        _p("K", 5),
        _p("GROUP_SIZE_M", 6, constexpr=True),
        _p("BLOCK_M", 7, constexpr=True, tiling=True, role=Role.PARALLEL, axis=0, bound="M", min_value=16, power_of_two=True),
        _p("BLOCK_N", 8, constexpr=True, tiling=True, role=Role.PARALLEL, axis=0, bound="N", min_value=16, power_of_two=True),
        _p("BLOCK_K", 9, constexpr=True, tiling=True, role=Role.REDUCTION, bound="K", min_value=16, power_of_two=True),
    ]
    trips = E("cdiv(K, BLOCK_K)")
    accesses = [
        MemoryAccess("l1", "load", SP, "a_ptr", (E("BLOCK_M"), E("BLOCK_K")), "elem:a_ptr", True, trips, 1, feeds_dot=True),
        MemoryAccess("l2", "load", SP, "b_ptr", (E("BLOCK_K"), E("BLOCK_N")), "elem:b_ptr", True, trips, 1, feeds_dot=True),
        MemoryAccess("s1", "store", SP, "c_ptr", (E("BLOCK_M"), E("BLOCK_N")), "elem:c_ptr", False, E("1"), 1),
    ]
    dots = [DotInfo("d1", SP, E("BLOCK_M"), E("BLOCK_N"), E("BLOCK_K"), "elem:a_ptr", "elem:b_ptr", "fp32", True, trips)]
    ops = "BLOCK_M * BLOCK_K * esize_a_ptr + BLOCK_K * BLOCK_N * esize_b_ptr"
    fp = Footprint(
        live_bytes=E(f"({ops}) * num_stages + BLOCK_M * BLOCK_N * 4 + BLOCK_M * BLOCK_N * esize_c_ptr"),
        shared_bytes=E(f"({ops}) * num_stages"),
        dot_operand_bytes=E(ops),
        accumulator_bytes=E("BLOCK_M * BLOCK_N * 4"),
    )
    grid = LaunchSite(
        span=SP,
        grid_span=SP,
        grid_kind="lambda",
        grid_source="lambda meta: (triton.cdiv(M, meta['BLOCK_M']) * triton.cdiv(N, meta['BLOCK_N']),)",
        reads_meta=True,
        meta_keys=["BLOCK_M", "BLOCK_N"],
        grid=[E("cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)")],
    )
    return KernelSpec(
        name="mm",
        span=SP,
        params=params,
        accesses=accesses,
        dots=dots,
        footprint=fp,
        launches=[grid],
        static_asserts=list(static_asserts),
    )


def softmax_spec():
    params = [
        _p("out_ptr", 0, is_pointer=True),
        _p("in_ptr", 1, is_pointer=True),
        _p("stride", 2),
        _p("n_cols", 3),
        _p("BLOCK_SIZE", 4, constexpr=True, tiling=True, role=Role.INNER, bound="n_cols", power_of_two=True),
    ]
    accesses = [
        MemoryAccess("l1", "load", SP, "in_ptr", (E("BLOCK_SIZE"),), "elem:in_ptr", False, E("1"), 0),
        MemoryAccess("s1", "store", SP, "out_ptr", (E("BLOCK_SIZE"),), "elem:out_ptr", False, E("1"), 0),
    ]
    fp = Footprint(
        live_bytes=E("BLOCK_SIZE * esize_in_ptr + 12 * BLOCK_SIZE"),
        shared_bytes=E("0"),
        dot_operand_bytes=E("0"),
        accumulator_bytes=E("0"),
    )
    grid = LaunchSite(span=SP, grid_span=SP, grid_kind="tuple", grid_source="(n_rows,)", grid=[E("n_rows")])
    return KernelSpec(name="softmax", span=SP, params=params, accesses=accesses, footprint=fp, launches=[grid])


MM_DT = {"a_ptr": "fp16", "b_ptr": "fp16", "c_ptr": "fp16"}
SM_DT = {"in_ptr": "fp32", "out_ptr": "fp32"}


# ----- real fixtures ---------------------------------------------------------------
FIXTURE_SHAPES = [(n, i) for n in fixtures.NAMES for i in range(3)]


def _env(spec, shapes, dtypes, fixed, cand, target):
    env = dict(shapes)
    env.update(family_of(target).model_constants(target))  # the chip facts the analysis leaves symbolic
    # which loads Triton pipelines at these sizes (a size not a multiple of 16: one shared buffer)
    env.update(bind_alignment(alignment_params([spec.footprint.shared_bytes]), shapes, spec.name)[0])
    if cand.num_warps is not None:
        env["num_warps"] = cand.num_warps
    env.update(fixed)
    env.update({k: int(v) for k, v in cand.kwargs.items() if isinstance(v, (int, bool))})
    for ptr, dt in dtypes.items():
        env[f"esize_{ptr}"] = DTYPE_BYTES[normalize_dtype(dt)]
    for p in spec.params:  # constexpr defaults
        if p.constexpr and p.default is not None and p.name not in env:
            try:
                env[p.name] = int(p.default)
            except ValueError:
                pass
    if target.family == "ascend":
        env["num_stages"] = 1 + int(cand.extra.get("multibuffer", False))
    else:
        env["num_stages"] = cand.num_stages
        env["num_warps"] = cand.num_warps
    return env


# ----- API basics ------------------------------------------------------------------
def test_required_shapes():
    assert required_shapes(matmul_spec()) == ["M", "N", "K"]
    assert required_shapes(softmax_spec()) == ["n_cols"]  # n_rows is a grid-only name


def test_missing_shapes_name_the_kernel_and_the_sizes():
    with pytest.raises(SynthesisError) as err:
        synthesize(matmul_spec(), {"M": 512}, MM_DT, "h100")
    text = str(err.value)
    assert "'mm'" in text and "N, K" in text and "M, N, K" in text


def test_missing_dtype_names_the_pointer():
    with pytest.raises(SynthesisError, match="b_ptr"):
        synthesize(matmul_spec(), {"M": 64, "N": 64, "K": 64}, {"a_ptr": "fp16", "c_ptr": "fp16"}, "h100")


def test_dtype_spellings():
    r1 = synthesize(matmul_spec(), {"M": 256, "N": 256, "K": 256}, MM_DT, "h100")
    r2 = synthesize(
        matmul_spec(), {"M": 256, "N": 256, "K": 256}, {"a_ptr": "torch.float16", "b_ptr": "half", "c_ptr": "float16"}, "h100"
    )
    assert r1.feasible_count == r2.feasible_count
    with pytest.raises(SynthesisError, match="unknown dtype"):
        synthesize(matmul_spec(), {"M": 64, "N": 64, "K": 64}, {**MM_DT, "a_ptr": "fp13"}, "h100")


def test_matmul_candidates_fit_h100():
    spec = matmul_spec()
    t = get_target("h100")
    res = synthesize(spec, {"M": 4096, "N": 4096, "K": 4096}, MM_DT, t)
    assert res.kernel == "mm" and res.target == "h100"
    assert len(res.candidates) == 16
    assert res.feasible_count > 100
    costs = [c.cost for c in res.candidates]
    assert costs == sorted(costs)
    for c in res.candidates:
        assert set(c.kwargs) == {"BLOCK_M", "BLOCK_N", "BLOCK_K"}
        for v in c.kwargs.values():
            assert v >= 16 and v & (v - 1) == 0
        assert c.num_warps in (1, 2, 4, 8, 16, 32) and 1 <= c.num_stages <= 6
        env = {**c.kwargs, "num_stages": c.num_stages, "esize_a_ptr": 2, "esize_b_ptr": 2, "esize_c_ptr": 2,
               "wgmma": 1, "num_warps": c.num_warps}
        assert spec.footprint.shared_bytes.evaluate({**assume_aligned(spec.footprint.shared_bytes), **env}) <= t.shared_bytes
        assert c.footprint["shared_bytes"] == spec.footprint.shared_bytes.evaluate({**assume_aligned(spec.footprint.shared_bytes), **env})
        assert c.cost_terms["programs"] == math.ceil(4096 / c.kwargs["BLOCK_M"]) * math.ceil(4096 / c.kwargs["BLOCK_N"])
    # variety: no tiling more than twice
    keys = [tuple(sorted(c.kwargs.items())) for c in res.candidates]
    assert max(keys.count(k) for k in keys) <= 2
    configs = res.configs()
    assert configs[0].kwargs == res.candidates[0].kwargs


def test_every_feasible_point_keeps_its_cost_for_the_descent():
    spec = matmul_spec()
    shapes = {"M": 300, "N": 1000, "K": 700}
    res = synthesize(spec, shapes, MM_DT, "h100", top_k=5, point_costs=True)
    assert len(res.point_costs) == res.feasible_count  # every point, not only the ranked ones
    for c in res.candidates:
        assert res.point_costs[(tuple(sorted(c.kwargs.items())), c.num_warps, c.num_stages)] == c.cost
    # a feasible point outside the ranked five, and one the model rejects (shared memory)
    outside = max(res.point_costs, key=res.point_costs.get)
    kwargs, warps, stages = dict(outside[0]), outside[1], outside[2]
    assert check_config(spec, kwargs, warps, stages, shapes, MM_DT, "h100") == []
    assert (tuple(sorted({"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 256}.items())), 8, 6) not in res.point_costs


def test_small_shapes_keep_dot_minimum():
    res = synthesize(matmul_spec(), {"M": 8, "N": 8, "K": 8}, MM_DT, "h100")
    for c in res.candidates:
        assert c.kwargs == {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16}


def test_softmax_inner_block_covers_the_row():
    for target in ("h100", "ascend910b2"):
        res = synthesize(softmax_spec(), {"n_cols": 781, "n_rows": 4096}, SM_DT, target)
        assert {c.kwargs["BLOCK_SIZE"] for c in res.candidates} == {1024}
    res = synthesize(softmax_spec(), {"n_cols": 781, "n_rows": 4096}, SM_DT, "h100")
    assert len({c.num_warps for c in res.candidates}) == len(res.candidates)  # only warps vary
    assert res.candidates[0].cost_terms["programs"] == 4096  # from the launch grid


def test_ascend_candidates_carry_multibuffer():
    res = synthesize(matmul_spec(), {"M": 1024, "N": 1024, "K": 1024}, MM_DT, "ascend910b2")
    for c in res.candidates:
        assert c.num_warps is None and c.num_stages is None
        assert isinstance(c.extra["multibuffer"], bool)
        assert all(v % 16 == 0 for v in c.kwargs.values())
        cfg = c.to_config()
        assert cfg.kwargs["multibuffer"] == c.extra["multibuffer"]


def test_hints_multiply_the_space():
    shapes = {"M": 1024, "N": 1024, "K": 1024}
    plain = synthesize(matmul_spec(), shapes, MM_DT, "h100")
    hinted = synthesize(matmul_spec(), shapes, MM_DT, "h100", hints={"GROUP_SIZE_M": [1, 8]})
    assert hinted.feasible_count == 2 * plain.feasible_count
    assert {c.kwargs["GROUP_SIZE_M"] for c in hinted.candidates} == {1, 8}
    tri = synthesize(matmul_spec(), shapes, MM_DT, "h100", hints={"GROUP_SIZE_M": [1, 4, 8]})
    assert tri.feasible_count == 3 * plain.feasible_count
    warps = synthesize(matmul_spec(), shapes, MM_DT, "h100", hints={"num_warps": [4]})
    assert {c.num_warps for c in warps.candidates} == {4}
    mb = synthesize(matmul_spec(), shapes, MM_DT, "ascend910b2", hints={"multibuffer": [True]})
    assert all(c.extra["multibuffer"] is True for c in mb.candidates)


def test_prune_predicates_apply():
    shapes = {"M": 1024, "N": 1024, "K": 1024}
    plain = synthesize(matmul_spec(), shapes, MM_DT, "h100")
    seen = []

    def small_m(cfg):
        seen.append(cfg)
        return cfg["BLOCK_M"] > 64

    pruned = synthesize(matmul_spec(), shapes, MM_DT, "h100", prune=[small_m, lambda cfg: cfg["num_warps"] == 8])
    assert 0 < pruned.feasible_count < plain.feasible_count
    assert all(c.kwargs["BLOCK_M"] <= 64 and c.num_warps != 8 for c in pruned.candidates)
    assert {"BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages"} <= set(seen[0])
    with pytest.raises(InfeasibleError, match="prune"):
        synthesize(matmul_spec(), shapes, MM_DT, "h100", prune=[lambda cfg: True])


def test_fixed_values_enter_constraints_but_not_kwargs():
    res = synthesize(matmul_spec(), {"M": 4096, "N": 4096, "K": 4096}, MM_DT, "h100", fixed={"BLOCK_K": 128})
    for c in res.candidates:
        assert "BLOCK_K" not in c.kwargs
        assert (c.kwargs["BLOCK_M"] + c.kwargs["BLOCK_N"]) * 128 * 2 * c.num_stages <= 232448


def test_static_asserts_are_respected():
    spec = matmul_spec(static_asserts=["BLOCK_M % 64 == 0", "BLOCK_N <= 2 * BLOCK_M and BLOCK_K in (32, 64)", "tl.foo(BLOCK_M)"])
    res = synthesize(spec, {"M": 4096, "N": 4096, "K": 4096}, MM_DT, "h100")
    assert res.candidates
    for c in res.candidates:
        assert c.kwargs["BLOCK_M"] % 64 == 0
        assert c.kwargs["BLOCK_N"] <= 2 * c.kwargs["BLOCK_M"]
        assert c.kwargs["BLOCK_K"] in (32, 64)
    summary = "\n".join(res.model_summary)
    assert "tl.static_assert(BLOCK_M % 64 == 0)" in summary
    assert "not modelled" in summary  # the call it cannot read is reported, not evaluated


def test_static_assert_from_source():
    src = '''
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK >= 256)
    tl.static_assert(BLOCK <= 2048)
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x * 2, mask=offs < n)
'''
    spec = analyze_source(src).kernel("k")
    if not spec.static_asserts:
        pytest.skip("the analysis does not report tl.static_assert yet")
    res = synthesize(spec, {"n": 1 << 20}, {"x_ptr": "fp32", "y_ptr": "fp32"}, "h100", top_k=64)
    assert {c.kwargs["BLOCK"] for c in res.candidates} <= {256, 512, 1024, 2048}


# ----- the Z3 model and the enumeration agree ---------------------------------------
def test_enumeration_matches_z3_blocking_clauses():
    import z3

    model = build(matmul_spec(), {"M": 64, "N": 128, "K": 64}, MM_DT, "ascend910b2")
    table = enumerate_feasible(model)
    solver, zv, _ = model.solver()
    count = 0
    found = set()
    while solver.check() == z3.sat and count < 10000:
        m = solver.model()
        point = tuple(m.eval(zv[name]).as_long() for name in sorted(zv))
        found.add(point)
        solver.add(z3.Or([zv[name] != m.eval(zv[name]) for name in sorted(zv)]))
        count += 1
    assert count == table.n > 0
    enumerated = set()
    env = table.env()
    for i in range(table.n):
        enumerated.add(tuple(int(env[name][i]) for name in sorted(zv)))
    assert enumerated == found


def test_z3_agrees_point_by_point_on_h100():
    import z3

    model = build(matmul_spec(), {"M": 512, "N": 4096, "K": 11008}, MM_DT, "h100")
    table = enumerate_feasible(model)
    feasible = set()
    env = table.env()
    names = [v.name for v in model.space.vars]
    for i in range(table.n):
        feasible.add(tuple(int(env[n][i]) for n in names))
    rng = random.Random(0)
    grid = [v.codes for v in model.space.vars]
    for _ in range(40):
        point = tuple(rng.choice(vals) for vals in grid)
        solver, _, _ = model.solver(extra=dict(zip(names, point)))
        assert (solver.check() == z3.sat) == (point in feasible)
    for point in rng.sample(sorted(feasible), 10):
        solver, _, _ = model.solver(extra=dict(zip(names, point)))
        assert solver.check() == z3.sat


# ----- infeasible problems are explained ------------------------------------------------
def test_infeasible_fixed_tile_explained_with_core_and_closest_point():
    with pytest.raises(InfeasibleError) as err:
        synthesize(matmul_spec(), {"M": 4096, "N": 4096, "K": 4096}, MM_DT, "ascend910b2", fixed={"BLOCK_N": 4096})
    text = err.value.explanation
    assert "BLOCK_M >= 16 (tl.dot operand dimension)" in text  # from the unsat core
    assert "L0C" in text
    assert "Closest point: BLOCK_M=16" in text
    assert "needs 262144 B > 131072 B (131072 B over)" in text  # 16 x 4096 fp32 accumulators
    assert "BLOCK_N=4096" in text  # the fixed value is named


def test_infeasible_source_kernel_with_huge_inner_tile():
    src = '''
import triton
import triton.language as tl

@triton.jit
def wide_kernel(x_ptr, y_ptr, M, BLOCK_M: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, 65536)
    acc = tl.zeros((BLOCK_M, 65536), dtype=tl.float32)
    x = tl.load(x_ptr + rows[:, None] * 65536 + cols[None, :], mask=rows[:, None] < M, other=0.0)
    acc += x
    tl.store(y_ptr + rows[:, None] * 65536 + cols[None, :], acc, mask=rows[:, None] < M)
'''
    spec = analyze_source(src).kernel("wide_kernel")
    if spec.footprint is None or not spec.tiling_params:
        pytest.skip("the analysis gives no footprint for this kernel")
    with pytest.raises(InfeasibleError) as err:
        synthesize(spec, {"M": 4096}, {"x_ptr": "fp32", "y_ptr": "fp32"}, "ascend910b2")
    text = err.value.explanation
    assert "UB" in text and "196608 B" in text
    assert "Closest point: BLOCK_M=1" in text and "B over" in text


def test_infeasible_inner_row_too_long():
    with pytest.raises(InfeasibleError) as err:
        synthesize(softmax_spec(), {"n_cols": 100_000}, SM_DT, "ascend910b2")
    text = str(err.value)
    assert "BLOCK_SIZE >= 131072" in text and "UB" in text and "'softmax'" in text
    # on NVIDIA the register estimate is no filter (Triton compiles and runs what spills): the row's one
    # tile is feasible as it is, its spills priced by the cost, nothing relaxed
    res = synthesize(softmax_spec(), {"n_cols": 100_000}, SM_DT, "h100")
    assert res.candidates[0].kwargs == {"BLOCK_SIZE": 131072}
    assert not any("registers" in line and "relaxed" in line for line in res.model_summary)
    assert res.candidates[0].cost_terms["spill_factor"] > 1.0
    with pytest.raises(InfeasibleError, match="largest tensor"):
        synthesize(softmax_spec(), {"n_cols": 10_000_000}, SM_DT, "h100")


# ----- check_config (for the lint) -------------------------------------------------------
def test_check_config():
    spec = matmul_spec()
    shapes = {"M": 4096, "N": 4096, "K": 4096}
    ok = check_config(spec, {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}, 8, 3, shapes, MM_DT, "h100")
    assert ok == []
    bad = check_config(spec, {"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 128}, 8, 4, shapes, MM_DT, "h100")
    assert bad == ["shared memory: needs 524288 B > 232448 B on h100"]  # (256x128 + 128x256) x 2 B x 4 stages
    # ptxas refuses 256x256 over 16 warps ("Insufficient registers (128) to compile instruction"): the
    # m64n256 wgmma fragment (128 registers) + 26 > 65536 / 512 threads; 128x256 over 16 warps and
    # 256x128 / 256x256 on 4 warps compile (with spills) and stay
    (wide,) = check_config(spec, {"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 16}, 16, 2, shapes, MM_DT, "h100")
    # m64n256 fragments: 128 + 26 registers x 512 threads = 78848 > the 65536 of the file
    assert wide == "wgmma accumulator fragments: needs 78848 registers per block > 65536 registers per block on h100"
    assert check_config(spec, {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 32}, 16, 3, shapes, MM_DT, "h100") == []
    assert check_config(spec, {"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 64}, 4, 2, shapes, MM_DT, "h100") == []
    assert check_config(spec, {"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 64}, 4, 3, shapes, MM_DT, "h100") == []
    small = check_config(spec, {"BLOCK_M": 8, "BLOCK_N": 48, "BLOCK_K": 64}, 4, 2, None, MM_DT, "h100")
    assert any(v.startswith("BLOCK_M=8 violates: BLOCK_M >= 16") for v in small)
    assert any(v.startswith("BLOCK_N=48 violates") and "power of two" in v for v in small)
    # without shapes and with a missing dtype: only what can be known is checked
    assert check_config(spec, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, 4, 3, None, {}, "h100") == []
    ub = check_config(softmax_spec(), {"BLOCK_SIZE": 65536}, None, None, {"n_cols": 50000}, SM_DT, "ascend910b2")
    # no dataflow graph, so no plan: the hard need is the largest load tile (65536 x 4 B), a lower bound
    assert ub == ["UB: needs 262144 B > 196608 B on ascend910b2"]
    cover = check_config(softmax_spec(), {"BLOCK_SIZE": 512}, 4, None, {"n_cols": 1000}, SM_DT, "h100")
    assert len(cover) == 1 and "whole n_cols=1000 extent" in cover[0]


def test_proposed_configs_stay_under_the_domains_upper_bounds():
    """A tile past the next power of two of its extent is dominated (layer_norm N=777: BLOCK_SIZE=2048 walks the
    row in one block as 1024 does, half of it masked): the measured search never proposes it, a user's may be it."""
    spec, shapes, dtypes, fixed = fixture_problem("layer_norm", {"M": 1000, "N": 777})
    args = (4, 1)  # num_warps, num_stages
    for block in (256, 1024):
        assert check_config(spec, {**fixed, "BLOCK_SIZE": block}, *args, shapes, dtypes, "h100", proposed=True) == []
    (why,) = check_config(spec, {**fixed, "BLOCK_SIZE": 2048}, *args, shapes, dtypes, "h100", proposed=True)
    assert "next power of two of N=777" in why
    assert check_config(spec, {**fixed, "BLOCK_SIZE": 2048}, *args, shapes, dtypes, "h100") == []


# ----- real fixtures ------------------------------------------------------------------------
@pytest.mark.parametrize("name,i", FIXTURE_SHAPES)
def test_fixture_h100(name, i):
    fx = fixtures.load(name)
    spec, shapes, dtypes, fixed = fixture_problem(name, fx.BENCH_SHAPES[i])
    t = get_target("h100")
    res = synthesize(spec, shapes, dtypes, t, fixed=fixed)
    assert 1 <= len(res.candidates) <= 16
    tiling = {p.name for p in spec.tiling_params} - set(fixed)
    for c in res.candidates:
        assert set(c.kwargs) == tiling
        env = _env(spec, shapes, dtypes, fixed, c, t)
        assert spec.footprint.shared_bytes.evaluate({**assume_aligned(spec.footprint.shared_bytes), **env}) <= t.shared_bytes
        for p in spec.tiling_params:
            if p.name in c.kwargs:
                assert c.kwargs[p.name] >= p.min_value


@pytest.mark.parametrize("target", ASCEND)
@pytest.mark.parametrize("name", fixtures.NAMES)
def test_fixture_ascend_footprint_fits(name, target):
    fx = fixtures.load(name)
    t = get_target(target)
    for shape in fx.BENCH_SHAPES:
        spec, shapes, dtypes, fixed = fixture_problem(name, shape)
        res = synthesize(spec, shapes, dtypes, t, fixed=fixed)
        assert res.candidates
        fp = spec.footprint
        for c in res.candidates:
            env = _env(spec, shapes, dtypes, fixed, c, t)
            # the UB tiles certainly live together (constraints/ascend_ub.py; the estimated plan only
            # ranks), else the analysis' live set
            planned = ub_certain(spec, dtypes, const(env["num_stages"]))
            live = planned.evaluate(env) if planned is not None else fp.live_bytes.evaluate(env)
            if spec.dots:
                ops = fp.dot_operand_bytes.evaluate(env)
                acc = fp.accumulator_bytes.evaluate(env)
                vec = live if planned is not None else max(live - ops * env["num_stages"], acc)
                assert vec // sub_blocks(t) <= t.ub_bytes
                assert t.l1_bytes is None or ops * env["num_stages"] <= t.l1_bytes  # None: no published size
                assert acc <= t.l0c_bytes
                for d in spec.dots:  # L0A/L0B: stepped through by the cube op (constraints/ascend.py RULES["l0"])
                    m, n, k = (x.evaluate(env) for x in (d.m, d.n, d.k))
                    assert m % 16 == 0 and n % 16 == 0 and k % 16 == 0
            else:
                assert live <= t.ub_bytes, (c.kwargs, live)


def test_matmul_fixture_keeps_the_measured_leaders_for_a_skinny_problem():
    """M=512, N=4096: the H100's exhaustive screening put 128x128 (128 programs) and
    64x256 in its top 5 (bench/results/gpu_bench_search_default.json); both must be in the list, the
    measured best (128x128x64, 8 warps, 5 stages) in the first 8."""
    spec, shapes, dtypes, fixed = fixture_problem("matmul", {"M": 512, "N": 4096, "K": 11008})
    res = synthesize(spec, shapes, dtypes, "h100", fixed=fixed)
    tiles = {(c.kwargs["BLOCK_SIZE_M"], c.kwargs["BLOCK_SIZE_N"]) for c in res.candidates}
    assert (128, 128) in tiles and (64, 256) in tiles
    full = synthesize(spec, shapes, dtypes, "h100", fixed=fixed, top_k=10**6).candidates
    order = [(c.kwargs["BLOCK_SIZE_M"], c.kwargs["BLOCK_SIZE_N"], c.kwargs["BLOCK_SIZE_K"], c.num_warps,
              c.num_stages) for c in full]
    assert order.index((128, 128, 64, 8, 5)) < 8
    assert len({tuple(c.kwargs.values()) for c in res.candidates}) >= 6  # variety


def test_few_programs_prefer_more_programs_sum_axis():
    """sum_axis M=64, N=1e6: BLOCK_M rows per program gives 64 / BLOCK_M programs on 132 SMs.
    One SM pulls only a few times its share of DRAM bandwidth, so BLOCK_M=1 (64 programs)
    must lead; the narrow out_ptr store (1 row sum per program) must not remove it."""
    spec, shapes, dtypes, fixed = fixture_problem("sum_axis", {"M": 64, "N": 1_000_000})
    res = synthesize(spec, shapes, dtypes, "h100", fixed=fixed)
    assert res.candidates[0].kwargs["BLOCK_M"] == 1
    assert sum(c.kwargs["BLOCK_M"] == 1 for c in res.candidates) >= 3
    # 16 programs (BLOCK_M=4) predicted well above 64 programs at the same BLOCK_N: on the H100,
    # 16 busy SMs moved 50-90 GB/s each (0.8-1.4 TB/s), 64 reached ~0.76 of 3.0 TB/s (2.3 TB/s)
    by = {(c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.num_warps, c.num_stages): c.cost for c in
          synthesize(spec, shapes, dtypes, "h100", fixed=fixed, top_k=100000).candidates}
    assert 1.6 < by[(4, 8192, 16, 1)] / by[(1, 8192, 16, 1)] < 2.9


@pytest.mark.parametrize("shape", [
    {"Z": 4, "H": 32, "N_CTX": 4096, "HEAD_DIM": 64, "CAUSAL": 0},
    {"Z": 4, "H": 32, "N_CTX": 2048, "HEAD_DIM": 128, "CAUSAL": 1},
    {"Z": 16, "H": 16, "N_CTX": 1000, "HEAD_DIM": 64, "CAUSAL": 1},
])
def test_attention_keeps_the_tutorial_tiles(shape):
    """The score (BLOCK_M x BLOCK_N) and output (BLOCK_M x HEAD_DIM) fp32 accumulators are
    register resident together: large BLOCK_M spills, so 64/128 x 32/64 must be in the list."""
    spec, shapes, dtypes, fixed = fixture_problem("flash_attention", shape)
    res = synthesize(spec, shapes, dtypes, "h100", fixed=fixed)
    tiles = {(c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"]) for c in res.candidates}
    assert (64, 64) in tiles or (64, 32) in tiles
    assert (128, 64) in tiles or (128, 32) in tiles
    # fp32 accumulators per thread above half of the 255 registers are penalised
    for c in res.candidates:
        acc_regs = (c.kwargs["BLOCK_M"] * (c.kwargs["BLOCK_N"] + shapes["HEAD_DIM"])) / (c.num_warps * 32)
        assert (c.cost_terms["register_factor"] > 1.0) == (acc_regs > 127.5)


@pytest.mark.parametrize("first", [
    "from tiletune.synthesis import check_config, synthesize",
    "import tiletune.synthesis.pipeline; from tiletune.synthesis import synthesize",
    "from tiletune.synthesis import synthesize",
])
def test_the_public_names_resolve_to_functions_in_any_import_order(first):
    """The package resolves names on first use; no submodule import may shadow a public function."""
    import subprocess
    import sys

    code = first + "; import tiletune.synthesis as s; assert callable(s.synthesize) and callable(s.check_config)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lazy = "import sys, tiletune.synthesis as s; s.get_target('h100'); print('z3' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", lazy], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "False", out.stderr[-2000:]  # a target alone: no solver
