"""The register estimate is a price, not a filter: configs Triton compiles for sm_90 stay in the synthesized
space (bench/register_oracle.py compiles them offline; no GPU)."""

from pathlib import Path

import pytest

from fixture_problems import fixture_problem
from tiletune.synthesis import synthesize
from bench_scripts import load_bench

ROOT = Path(__file__).resolve().parent.parent
register_oracle = load_bench("register_oracle")

SHAPE = {"M": 512, "N": 4096, "K": 11008}


def _space(shape):
    spec, shapes, dtypes, fixed = fixture_problem("matmul", shape)
    res = synthesize(spec, shapes, dtypes, "h100", fixed=fixed, top_k=10**6)
    return {(c.kwargs["BLOCK_SIZE_M"], c.kwargs["BLOCK_SIZE_N"], c.kwargs["BLOCK_SIZE_K"], c.num_warps,
             c.num_stages): c for c in res.candidates}


def test_a_config_over_the_register_estimate_is_enumerated_and_priced():
    """matmul 128x128x128 on 4 warps: the live-tile estimate (387 registers per thread) rejected it; ptxas
    uses 254 and spills nothing (bench/results/register_oracle.md).  It must be in the space, priced above
    the same tile on 8 warps (194 estimated, no spill price).  Fails on main d5a5712 (not enumerated)."""
    space = _space(SHAPE)
    wide = space[(128, 128, 128, 4, 3)]
    assert wide.cost_terms["spill_factor"] > 1.0
    assert space[(128, 128, 128, 8, 3)].cost_terms["spill_factor"] == 1.0
    assert wide.footprint["registers_per_thread"] == 255  # the estimate, capped at the file
    # shared memory stays a hard limit: 128x128x128 at 5 stages needs 327680 B > 232448 B
    assert (128, 128, 128, 8, 5) not in space


def test_the_spill_price_grows_with_the_estimate_over_the_file():
    space = _space(SHAPE)
    f = {k[0]: c.cost_terms["spill_factor"] for k, c in space.items() if k[1:] == (128, 64, 4, 3)}
    assert f[64] <= f[128] < f[256]
    assert f[32] == 1.0


def test_the_benchs_verdicts_come_from_the_models_constraints():
    """The bench's model side on a real fixture: the old register filter against the estimate, the shared
    verdict from the shared-memory constraint, and the compile jobs' constexprs (GROUP_SIZE_M passed)."""
    side = register_oracle.model_side({"kernel": "matmul", "source": "fixture", "shape": SHAPE})
    rows = {(tuple(r["kwargs"].values()), r["num_warps"], r["num_stages"]): r for r in side["rows"]}
    r = rows[((128, 128, 128), 4, 3)]
    assert r["model"]["registers"] and not r["model"]["shared"]
    assert rows[((128, 128, 128), 8, 5)]["model"]["shared"]
    assert not rows[((32, 32, 32), 4, 3)]["model"]["registers"]
    assert all(not r["compiled"] for r in side["rows"] if r["acc_regs_per_thread"] > register_oracle.ACC_REGS_MAX)
    assert r["job"]["constexprs"] == {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 128}
    assert r["job"]["args"]["GROUP_SIZE_M"] == 8


@pytest.mark.slow
def test_triton_compiles_a_config_the_estimate_rejected():
    """The oracle's claim on one config, compiled for sm_90 here in a worker process (seconds)."""
    side = register_oracle.model_side({"kernel": "matmul", "source": "fixture", "shape": SHAPE})
    row = next(r for r in side["rows"] if (tuple(r["kwargs"].values()), r["num_warps"], r["num_stages"])
               == ((128, 128, 128), 4, 3))
    assert row["model"]["registers"]
    (res,) = register_oracle.compile_all([row["job"]], 1)
    assert res["ok"] and res["launchable"], res
    assert res["regs"] <= 255 and res["stack"] == 0  # no spill at all: the estimate was wrong
    assert res["shared"] == 196608 == row["footprint"]["shared_bytes"]  # 3 stages of 64 KiB


def test_the_committed_record_counts_every_compiled_config_once():
    """bench/results/register_oracle.json: the verdict counts partition the compiled configs, under both
    models, and no config the register estimate rejected failed to compile."""
    import json

    res = json.loads((ROOT / "bench" / "results" / "register_oracle.json").read_text())
    s = register_oracle.summarise(res["problems"])
    compiled = [r for p in res["problems"] for r in p["rows"] if r["compiled"]]
    for mode in ("register_filter", "register_cost"):
        assert sum(s[mode]["all"].values()) == len(compiled) == s["compiled"]
    assert s["register_cost"]["all"]["false reject"] <= s["register_filter"]["all"]["false reject"]
    assert all(r["triton"]["ok"] for r in compiled if r["model"]["registers"])
    assert sum(s["spill_price"].values()) == sum(1 for r in compiled if r["triton"]["ok"])
    md = register_oracle.to_markdown({**res, "summary": s})
    assert "| all |" in md and "false reject" in md
