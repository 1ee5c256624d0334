"""The lint on the semantics of issue 24 (kernels in tests/data/issue24_pkg, read never imported):
TT002 for positional launches in other modules of the package, TT003 for a grid sized with a
literal, TT004 for standard-library wrappers between autotune and jit, and no TT001 under a
decorator that is an autotuner in disguise (its definition, in another module, calls autotune)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tiletune.lint import lint_source
from tiletune.lint.registry import lint_file

PKG = Path(__file__).resolve().parent / "data" / "issue24_pkg"

_KERNEL = '''
import functools
import tiletune
import triton
import triton.language as tl

{decorators}
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def add(x, y, out):
    n = out.numel()
    add_kernel[{grid}](x, y, out, n{extra})
'''


def _lint(decorators: str, grid: str = 'lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)', extra: str = ""):
    src = textwrap.dedent(_KERNEL).format(decorators=decorators, grid=grid, extra=extra)
    return [(d.code, d.param) for d in lint_source(src)]


def test_tt002_positional_launch_in_another_module():
    found = [d for d in lint_file(str(PKG / "kernels.py"), project=True) if d.code == "TT002"]
    assert [(d.kernel, d.param) for d in found] == [("tuned_scale_kernel", "BLOCK")]
    assert "launch.py" in found[0].message and "positionally" in found[0].message and found[0].fix is None


def test_tt002_positional_launch_in_the_same_module():
    tuned = '@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 256}), triton.Config({"BLOCK_SIZE": 512})], key=["n_elements"])'
    assert ("TT002", "BLOCK_SIZE") in _lint(tuned, extra=", 512")
    assert ("TT002", "BLOCK_SIZE") in _lint('@tiletune.autotune(configs=[], key=["n_elements"])', extra=", 512")
    assert not [c for c, _ in _lint(tuned) if c == "TT002"]


def test_tt003_literal_grid_of_a_tuned_kernel():
    searched = '@tiletune.autotune(configs=[], key=["n_elements"])'
    assert ("TT003", "BLOCK_SIZE") in _lint(searched, grid="(triton.cdiv(n, 128),)")
    assert not [c for c, _ in _lint(searched) if c == "TT003"]
    # the launch passes the block itself: the literal grid and the kernel agree
    assert not [c for c, _ in _lint(searched, grid="(triton.cdiv(n, 128),)", extra=", BLOCK_SIZE=128") if c == "TT003"]


def test_tt004_standard_library_wrappers_between_autotune_and_jit():
    tuned = '@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 256})], key=["n_elements"])'
    assert [c for c, _ in _lint(tuned + "\n@functools.lru_cache(maxsize=None)") if c == "TT004"] == ["TT004"]
    assert [c for c, _ in _lint(tuned + "\n@functools.cache") if c == "TT004"] == ["TT004"]
    assert not [c for c, _ in _lint("@functools.lru_cache(maxsize=None)\n" + tuned) if c == "TT004"]


def test_no_tt001_under_an_autotuner_in_disguise_from_another_module():
    found = [(d.code, d.kernel) for d in lint_file(str(PKG / "kernels.py"), project=True)]
    assert ("TT001", "table_scale_kernel") not in found
