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
