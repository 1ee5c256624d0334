"""Golden analysis of every fixture, and the expected classification of each.

``fixtures/golden/<name>.json`` is ``analyze_file(fixture).to_dict()``;
regenerate with ``python tests/update_golden.py`` after a deliberate change
and review the diff.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tiletune.analysis import analyze_file
from tiletune.analysis.model import Role

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("_update_golden", ROOT / "tests" / "update_golden.py")
update_golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(update_golden)

NAMES = update_golden.fixture_names()

P, R, I = Role.PARALLEL, Role.REDUCTION, Role.INNER

#: fixture -> {tiling param: (role, axis, bound)}; every other constexpr must be non-tiling.
EXPECTED: dict[str, dict[str, tuple]] = {
    "vector_add": {"BLOCK_SIZE": (P, 0, "n_elements")},
    "softmax": {"BLOCK_SIZE": (I, None, "n_cols")},
    "layer_norm": {"BLOCK_SIZE": (R, None, "N")},
    "rms_norm": {"BLOCK_SIZE": (I, None, "N")},
    "matmul": {"BLOCK_SIZE_M": (P, 0, "M"), "BLOCK_SIZE_N": (P, 0, "N"), "BLOCK_SIZE_K": (R, None, "K")},
    "batched_matmul": {"BLOCK_M": (P, 0, "M"), "BLOCK_N": (P, 1, "N"), "BLOCK_K": (R, None, "K")},
    "flash_attention": {"BLOCK_M": (P, 0, "N_CTX"), "BLOCK_N": (R, None, "N_CTX"), "HEAD_DIM": (I, None, None)},
    "cross_entropy": {"BLOCK_SIZE": (R, None, "n_cols")},
    "transpose": {"BLOCK_M": (P, 0, "M"), "BLOCK_N": (P, 1, "N")},
    "sum_axis": {"BLOCK_M": (P, 0, "M"), "BLOCK_N": (R, None, "N")},
    "rotary": {"BLOCK_S": (P, 0, "seq_len"), "BLOCK_D": (R, None, "half_dim")},
    "int8_gemv": {"BLOCK_N": (P, 0, "N"), "BLOCK_K": (R, None, "K")},
    "split_k_matmul": {"BLOCK_M": (P, 0, "M"), "BLOCK_N": (P, 0, "N"), "BLOCK_K": (R, None, "K")},
    "histogram": {"BLOCK_SIZE": (P, 0, "n_elements"), "NUM_BINS": (I, None, None)},
    "block_ptr_matmul": {"BLOCK_M": (P, 0, "M"), "BLOCK_N": (P, 1, "N"), "BLOCK_K": (R, None, "K")},
    "scale_inplace": {"BLOCK_SIZE": (P, 0, "n_elements")},
    "rows_rms_norm": {"BLOCK_N": (I, None, "N"), "ROWS_PER_PROG": (P, 0, "M")},
    "desc_bias_add": {"BLOCK_B": (P, 0, "B"), "BLOCK_M": (P, 1, "M"), "BLOCK_N": (P, 2, "N")},
    "group_layer_norm": {"BT": (P, 0, "T"), "BD": (I, None, "D")},
}

#: tiling parameters that size a loop, not a tile dimension (no power-of-two requirement).
LOOP_SIZED = {"rows_rms_norm": {"ROWS_PER_PROG"}}

#: constexprs that size tl.dot operands (min_value 16).
DOT_PARAMS = {
    "matmul": {"BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K"},
    "batched_matmul": {"BLOCK_M", "BLOCK_N", "BLOCK_K"},
    "flash_attention": {"BLOCK_M", "BLOCK_N", "HEAD_DIM"},
    "split_k_matmul": {"BLOCK_M", "BLOCK_N", "BLOCK_K"},
    "block_ptr_matmul": {"BLOCK_M", "BLOCK_N", "BLOCK_K"},
}


def test_every_fixture_has_expectations():
    assert set(EXPECTED) == set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_golden_file_matches(name):
    path = update_golden.GOLDEN_DIR / f"{name}.json"
    assert path.exists(), f"no golden file for {name}: run python tests/update_golden.py {name}"
    expected = json.loads(path.read_text())
    actual = json.loads(update_golden.dumps(update_golden.golden(name)))
    assert actual == expected, f"analysis of {name} changed: if deliberate, run python tests/update_golden.py {name}"


@pytest.mark.parametrize("name", NAMES)
def test_fixture_classification(name):
    module = analyze_file(ROOT / "fixtures" / f"{name}.py")
    kernel = module.kernel(__import__(f"fixtures.{name}", fromlist=["KERNEL"]).KERNEL.__name__)
    expected = EXPECTED[name]
    got = {p.name: (p.role, p.axis, p.bound) for p in kernel.tiling_params}
    assert got == expected
    for p in kernel.params:
        if p.constexpr and p.name not in expected:
            assert (p.tiling, p.role) == (False, Role.NON_TILING), p.name
        if p.tiling:
            assert p.uses and p.power_of_two == (p.name not in LOOP_SIZED.get(name, ())), p.name
            assert p.min_value == (16 if p.name in DOT_PARAMS.get(name, ()) else 1), p.name
    assert kernel.notes == []
    assert kernel.footprint is not None
    for access in kernel.accesses:
        assert access.pointer is not None and access.shape is not None, access
    assert all(a.pointer in {p.name for p in kernel.params if p.is_pointer} for a in kernel.accesses)


def test_flash_attention_flags_and_dots():
    kernel = analyze_file(ROOT / "fixtures" / "flash_attention.py").kernels[0]
    assert not kernel.param("CAUSAL").tiling
    qk, pv = kernel.dots
    assert (str(qk.m), str(qk.n), str(qk.k)) == ("BLOCK_M", "BLOCK_N", "HEAD_DIM")
    assert (str(pv.m), str(pv.n), str(pv.k)) == ("BLOCK_M", "HEAD_DIM", "BLOCK_N")
    assert pv.a_dtype == "elem:v_ptr" and pv.acc_dtype == "fp32"


def test_split_k_is_atomic_and_matmul_groups_are_not_tiling():
    split = analyze_file(ROOT / "fixtures" / "split_k_matmul.py").kernels[0]
    assert split.atomic_pointers == ["c_ptr"] and not split.param("SPLIT_K").tiling
    mm = analyze_file(ROOT / "fixtures" / "matmul.py").kernels[0]
    assert not mm.param("GROUP_SIZE_M").tiling
    assert mm.loaded_pointers == ["a_ptr", "b_ptr"] and mm.stored_pointers == ["c_ptr"]
    assert all(a.feeds_dot for a in mm.accesses if a.kind == "load")
    assert str(mm.dots[0].trips) == "cdiv(K, BLOCK_SIZE_K)"
