"""The static-vs-IR harness (bench/static_vs_ir.py): probes that do not lie, imports around its own limits.

The harness lowers real kernels with Triton's front end, which the interpreter this test process runs
(conftest.py) cannot do, so it runs as a child process without TRITON_INTERPRET on a small library in
the patterns met in real ones (tests/data/ir_probe_lib)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "bench"))

import ir_probes  # noqa: E402


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("svi") / "report"
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "static_vs_ir.py"), "--path",
                           str(HERE / "data" / "ir_probe_lib"), "--out", str(out)],
                          capture_output=True, text=True, env=env, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(out.with_suffix(".json").read_text())
    return data["summary"], {r["kernel"]: r for r in data["rows"]}


def test_a_flag_that_hides_a_tile_is_probed_off_too(report):
    _, rows = report
    row = rows["flag_branch_kernel"]
    # flags on (first point) hide BK; the second point, flags off, shows it: no disagreement
    assert row["lowered"] and row["points"] == 2
    assert row["probe"]["USE_A"] is True and row["probe_b"]["USE_A"] is False
    assert row["ir_tiling"] == row["static_tiling"] == ["BK", "BT"]
    assert not row["problems"] and not row["probe_limited"]


def test_probe_values_come_from_the_kernels_launch(report):
    _, rows = report
    # the launcher computes BK = min(64, triton.next_power_of_2(K)) and passes BK=BK; K is probed at 64
    assert rows["flag_branch_kernel"]["probe"]["K"] == 64
    assert rows["flag_branch_kernel"]["probe"]["BK"] == 64
    assert rows["width_loop_kernel"]["probe"]["BD"] == 64  # a literal at the launch


def test_a_count_is_never_probed_at_one(report):
    _, rows = report
    row = rows["width_loop_kernel"]
    # at W=1 the static_range loop is empty and the IR has no tile: W would look like a tiling parameter
    assert row["probe"]["W"] == ir_probes.COUNTS[0] > 1
    assert row["ir_tiling"] == ["BD"] and not row["problems"]


def test_imports_around_harness_limits(report):
    summary, rows = report
    # the package __init__ refuses the machine, the module probes CUDA at import, imports a Triton shim
    used = set(rows["flag_branch_kernel"]["imported_with"])
    assert {"bare-package", "cuda-probes"} <= used
    # a kernel defined inside a function is found by re-running its definition in the module namespace
    nested = rows["nested_copy_kernel"]
    assert nested["lowered"] and nested["found"].startswith("nested definition")
    # one defined under a guard that fails here (`if has_triton():`), with the guard's own imports
    guarded = rows["guarded_copy_kernel"]
    assert guarded["lowered"] and guarded["found"].startswith("nested definition")
    assert summary["lowered"] == 11 and summary["agree"] == 10 and summary["disagree_where_static_complete"] == 0


def test_constexpr_kinds_from_the_source():
    src = '''
def k(x, USE_G: tl.constexpr, ACT: tl.constexpr, K: tl.constexpr, W: tl.constexpr, Y: tl.constexpr, Z: tl.constexpr,
      OUT: tl.constexpr):
    if USE_G and not Y is None:
        pass
    if ACT == "swish":
        pass
    for i in tl.static_range(0, W):
        o = tl.arange(0, 16) + K
    z = x if Z else x.to(OUT)
'''
    kinds = ir_probes.constexpr_kinds(src, ["USE_G", "ACT", "K", "W", "Y", "Z", "OUT"])
    assert {n: k for n, (k, _) in kinds.items()} == {"USE_G": "flag", "ACT": "choice", "K": "size", "W": "count",
                                                    "Y": "flag", "Z": "flag", "OUT": "dtype"}
    assert kinds["ACT"][1] == ["swish"]


def test_rows_per_program_and_grid_stride_steps_agree(report):
    _, rows = report
    row = rows["rows_per_program_kernel"]
    # ROWS: a loop bound on the IR side, rows per program on the static side; STRIDE: a grid-stride step,
    # a tile size for neither
    assert row["trip_count_both"] == ["ROWS"] and row["ir_tiling"] == ["BLOCK"]
    assert not row["problems"] and not row["probe_limited"]


def test_tiles_triton_only_moves_together_are_measured_together(report):
    _, rows = report
    row = rows["coupled_tiles_kernel"]
    # the launcher's `BK, BV = max(triton.next_power_of_2(K), 16), ...` gives the probe BK = BV = K = 64
    assert row["probe"]["BK"] == row["probe"]["BV"] == row["probe"]["K"] == 64
    assert row["moved_together"] == ["BK", "BV"] and row["ir_tiling"] == ["BK", "BV"]
    assert not row["problems"] and not row["probe_limited"]


def test_a_tile_sized_only_under_an_unprobed_value_is_probe_limited(report):
    summary, rows = report
    row = rows["tile_value_branch_kernel"]
    assert row["tiling_only_elsewhere"] == ["BL"] and not row["problems"]
    assert row["probe_limited"] and "no probe point took" in row["probe_limited"][0]
    assert summary["probe_limited"] == 1


def test_a_kernel_behind_a_wraps_decorator_is_reached(report):
    _, rows = report
    row = rows["wrapped_copy_kernel"]  # @functools.wraps copies the JITFunction's `fn` onto the wrapper
    assert row["lowered"] and row["ir_tiling"] == ["BLOCK"] and not row["problems"]


def test_a_string_constexpr_decides_branches_in_the_static_reading(report):
    from tiletune.analysis.frontend import analyze_source

    path = HERE / "data" / "ir_probe_lib" / "kernels" / "probes.py"
    kinds = {}
    for reduction in ("none", "sum"):
        spec = analyze_source(path.read_text(), str(path), constants={"reduction": reduction}).kernel(
            "string_choice_kernel")
        kinds[reduction] = sorted((a.kind, len(a.shape)) for a in spec.accesses)
    # `reduction == "none"` / `!= "none"` are decided like Triton decides them (string literals were unknown)
    assert kinds == {"none": [("load", 1), ("store", 1)], "sum": [("load", 1), ("store", 0)]}
    _, rows = report
    assert rows["string_choice_kernel"]["probe"]["reduction"] == "none"
    assert rows["string_choice_kernel"]["lowered"] and not rows["string_choice_kernel"]["problems"]


def test_index_pointers_and_element_type_constexprs_are_probed_as_triton_accepts_them(report):
    _, rows = report
    row = rows["gather_rows_kernel"]
    assert row["lowered"] and row["pointer_types"] == {"idx_ptr": "*i32"}
    assert "OUT_DTYPE" not in row["probe"]  # tl.float32, not a plain value
    assert row["ir_tiling"] == ["BLOCK_D", "BLOCK_M"] and not row["problems"]


def test_a_local_constexpr_of_flags_decides_branches_in_the_static_reading(report):
    from tiletune.analysis.frontend import analyze_source

    path = HERE / "data" / "ir_probe_lib" / "kernels" / "probes.py"
    loads = {}
    for flag in (False, True):
        spec = analyze_source(path.read_text(), str(path), constants={"PERMUTE_X": flag, "PERMUTE_Y": False}
                              ).kernel("local_flag_kernel")
        loads[flag] = sorted(a.pointer for a in spec.accesses if a.kind == "load")
    # `SHOULD_PERMUTE: tl.constexpr = PERMUTE_X or PERMUTE_Y` is known once the flags are (it was unknown)
    assert loads == {False: ["x_ptr"], True: ["idx_ptr", "x_ptr"]}
    _, rows = report
    row = rows["local_flag_kernel"]
    assert row["lowered"] and not row["problems"] and not row["probe_limited"]
