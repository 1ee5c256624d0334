"""The first tune's fixed cost (issue 25): cut without changing what it decides.

The candidates stage runs here without TRITON_INTERPRET (the GPU's candidates, the IR oracle on), in child
processes of ``bench/fixed_cost.py``: the ranked candidate list (configs and order) and the feasible count of
every cold-bench pair are those recorded on main before the cuts (tests/data/first_candidates.json), and a
first tune of a kernel whose static reading is complete lowers nothing in this process where the compile
children screen (each distinct candidate tiling once, and nothing more, with compile processes off).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BENCH = ROOT / "bench" / "fixed_cost.py"
RECORDED = HERE / "data" / "first_candidates.json"

sys.path.insert(0, str(ROOT / "bench"))
import cold_pairs  # noqa: E402


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


def _run(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True, env=_env(),
                          cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


@pytest.mark.slow
def test_every_pairs_ranked_candidates_and_feasible_count_are_those_recorded_before_the_cuts(tmp_path):
    out = tmp_path / "now.json"
    _run("--record", str(out))
    now = json.loads(out.read_text())
    recorded = json.loads(RECORDED.read_text())
    fixtures = [cold_pairs.GPU_PAIRS[i] for i in range(len(cold_pairs.GPU_PAIRS))
                if cold_pairs.GPU_PAIRS[i]["source"] in ("fixture", "holdout")]
    assert len(fixtures) >= 12
    # library pairs are recorded only where the dev corpus is
    assert set(now) <= set(recorded) and {_name(p) for p in fixtures} <= set(now)
    for name, got in now.items():
        assert got["feasible"] == recorded[name]["feasible"], name
        assert got["ranked"] == recorded[name]["ranked"], name


def _name(pair: dict) -> str:
    sys.path.insert(0, str(ROOT / "bench"))
    from fixed_cost import pair_name

    return pair_name(pair)


def test_a_complete_static_reading_lowers_nothing_where_the_compile_children_screen():
    # rms_norm (fixture) at M=100, N=3000: a complete static reading; the compile children run Triton's front end
    # first (a refusal comes back before any backend work), so the candidates stage lowers nothing
    index = next(i for i, p in enumerate(cold_pairs.GPU_PAIRS) if p["kernel"] == "rms_norm")
    got = json.loads(_run("--child", str(index)).stdout.strip().splitlines()[-1])
    assert got["lowerings"] == 0 and got["distinct"] is None and got["refused"] == 0
    assert got["calls"].get("ir_read", 0) == 0 and got["calls"].get("ir_refused", 0) == 0


def test_with_compile_processes_off_the_screen_lowers_each_distinct_candidate_tiling_once_and_nothing_more():
    index = next(i for i, p in enumerate(cold_pairs.GPU_PAIRS) if p["kernel"] == "rms_norm")
    env = {**_env(), "TILETUNE_COMPILE_PROCESSES": "0"}
    proc = subprocess.run([sys.executable, str(BENCH), "--child", str(index)], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["distinct"] >= 1 and got["refused"] == 0
    # the screen's lowerings only: no doubled/halved tiling probes of a reading the IR would only confirm
    assert got["lowerings"] == got["distinct"]
    assert got["calls"].get("ir_read", 0) == 0


@pytest.mark.parametrize("name", ["matmul", "flash_attention", "sum_axis", "rms_norm"])
def test_every_feasible_points_cost_is_the_one_read_point_by_point(name):
    # the descent ranks its moves by these costs: read column by column, they must equal the point-by-point
    # reading (Table.point, the reference path) for every feasible point, on NVIDIA and on Ascend
    import numpy as np

    import fixtures
    from fixture_problems import fixture_problem
    from tiletune.synthesis import pipeline
    from tiletune.synthesis.cost import cost_table
    from tiletune.synthesis.enumerate import enumerate_feasible

    shape = fixtures.load(name).BENCH_SHAPES[0]
    spec, shapes, dtypes, fixed = fixture_problem(name, shape)
    for target in ("h100", "ascend910b4"):
        model = pipeline.build(spec, shapes, dtypes, target, fixed=fixed)
        table = enumerate_feasible(model)
        costs = cost_table(model, table)
        reference: dict = {}
        for i in range(table.n):
            kwargs, warps, stages, _ = pipeline._point_parts(model.space, table.point(i))
            key = (tuple(sorted(kwargs.items())), warps, stages)
            reference[key] = min(reference.get(key, np.inf), float(costs["cost"][i]))
        got = pipeline._point_costs(model, table, costs)
        assert table.n > 0 and got == reference, (name, target)
