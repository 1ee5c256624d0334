"""Kernels without dots: the register estimate is the live tiles' bytes scaled by the share ptxas keeps
(``FUSED_REGISTER_SHARE``, measured by bench/register_share.py), so a wide row on 8 warps is not priced as if
it held one program an SM.  Checked against ptxas' own count (compiled offline for sm_90, no GPU)."""


from tiletune.synthesis import synthesize
from bench_scripts import load_bench

register_share = load_bench("register_share")
register_oracle = register_share.register_oracle

PAIR = {"kernel": "rows_log_softmax", "source": "holdout", "shape": {"M": 8192, "N": 6144}}


def _space():
    import cold_pairs
    from tiletune.analysis import analyze_kernel

    problem = cold_pairs.load(PAIR)
    spec = analyze_kernel(problem.KERNEL)
    res = synthesize(spec, PAIR["shape"], {"x_ptr": "fp16", "y_ptr": "fp16"}, "h200", top_k=10**6)
    return {(c.kwargs["BLOCK_M"], c.num_warps): c for c in res.candidates if c.kwargs["BLOCK_N"] == 8192}


def test_a_wide_row_on_8_warps_keeps_the_programs_ptxas_allows():
    """One 8192-wide fp16 row a program: ptxas uses 48 registers a thread on 8 warps (5 programs an SM); the
    unscaled estimate (136 with scalars) allowed one, its latency term then priced 8 warps 2.7x over 4 warps,
    where an H200 measured 8 warps 6% faster (bench/results/first_tune_cold_runs/h200_bc983b5/holdout)."""
    space = _space()
    w8, w4 = space[(1, 8)], space[(1, 4)]
    assert w8.cost_terms["resident"] >= 2
    assert w8.cost_terms["latency_eff"] == 1.0
    assert w8.cost <= w4.cost


def test_the_scaled_estimate_stays_within_ptxas_residency():
    """The model never claims more programs an SM than ptxas' registers allow (compiled for sm_90 here)."""
    space = _space()
    side = register_oracle.model_side(PAIR, grid=lambda spec, sp: [
        {"kwargs": {"BLOCK_M": 1, "BLOCK_N": 8192}, "num_warps": 8, "num_stages": 1}])
    (row,) = side["rows"]
    (t,) = register_oracle.compile_all([row["job"]], 1)  # a process without TRITON_INTERPRET
    assert t["ok"] and t["stack"] == 0
    by_ptxas = 65536 // (t["regs"] * 8 * 32)
    assert 1 <= space[(1, 8)].cost_terms["resident"] <= by_ptxas
