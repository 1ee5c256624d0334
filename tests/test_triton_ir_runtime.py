"""Issue 24 at run time: the launch is bound as Triton binds it, and what runs (not the file) is read.

Runs under TRITON_INTERPRET=1 (conftest.py).  Kernels are written to files in tmp_path and imported,
so a test can edit or delete the file after import, as a user's editor would.
"""

from __future__ import annotations

import importlib
from pathlib import Path
import sys
import textwrap
import warnings

import pytest
import torch
import triton

from tiletune.errors import TiletuneWarning
from tiletune.runtime.live_kernel import heuristic_layers, launch_constants

KERNEL = '''
import triton
import triton.language as tl
import tiletune

SCALE: tl.constexpr = {scale}


@triton.jit
def helper(x):
    return x * {helper_factor}


@tiletune.autotune(configs=[], key=["n"], cache_results={cache})
@triton.jit
def add_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, helper(x) * SCALE, mask=mask)


@tiletune.autotune(configs=[], key=["n"], cache_results=False)
@triton.jit
def inplace_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1, mask=mask)
'''

# the same file after an edit: inplace_kernel now writes its result to y (read from disk, it needs no protection)
EDITED = KERNEL.replace("tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1, mask=mask)",
                        "tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1, mask=mask)")


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TILETUNE_ALWAYS_TUNE", raising=False)
    monkeypatch.setenv("TILETUNE_IR_ORACLE", "0")
    yield tmp_path / "cache"


def _load(tmp_path, name, text):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    sys.path.insert(0, str(tmp_path))
    try:
        return importlib.import_module(name), path
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(name, None)


def _grid(n):
    return lambda meta: (triton.cdiv(n, meta["BLOCK"]),)


def test_positional_tile_size_is_fixed_like_a_keyword(tmp_path):
    mod, _ = _load(tmp_path, "k_positional", KERNEL.format(scale=2, helper_factor=1, cache=False))
    n = 100
    x = torch.arange(n, dtype=torch.float32)
    y = torch.zeros(n, dtype=torch.float32)
    mod.add_kernel[(triton.cdiv(n, 64),)](x, y, n, 64)  # BLOCK=64 positionally, a fixed grid
    assert torch.equal(y, x * 2)
    assert mod.add_kernel.best_config.kwargs == {}  # nothing tuned: the launch fixed BLOCK
    y2 = torch.zeros(n, dtype=torch.float32)
    mod.add_kernel[(triton.cdiv(n, 64),)](x, y2, n, BLOCK=64)
    assert torch.equal(y2, x * 2)


def test_heuristic_values_from_any_callable_are_fixed_at_the_launch():
    def block_for(args):  # a named function, not a literal lambda
        return triton.next_power_of_2(args["n"])

    class Warps:
        def __call__(self, args):
            return 4 if args["n"] < 4096 else 8

    layers = [{"BLOCK": block_for, "WARPS": Warps()}, {"EVEN": lambda a: a["n"] % a["TILE"] == 0}]
    got = launch_constants("k", ["x_ptr", "n", "BLOCK", "WARPS", "TILE", "EVEN"],
                           {"BLOCK", "WARPS", "TILE", "EVEN"}, (object(), 1000), {}, {}, layers)
    # TILE is tuned, so EVEN depends on the config: left to the heuristic at each launch, not fixed
    assert got == {"BLOCK": 1024, "WARPS": 4}


def test_heuristic_layers_are_read_outermost_first():
    import triton.language as tl

    @triton.heuristics({"A": lambda a: 1})
    @triton.heuristics({"B": lambda a: 2})
    @triton.jit
    def k(x_ptr, A: tl.constexpr, B: tl.constexpr):
        tl.store(x_ptr, A + B)

    assert [list(layer) for layer in heuristic_layers(k)] == [["A"], ["B"]]


def test_an_edited_file_does_not_change_the_protection_of_what_runs(tmp_path):
    mod, path = _load(tmp_path, "k_edited", KERNEL.format(scale=2, helper_factor=1, cache=False))
    path.write_text(textwrap.dedent(EDITED.format(scale=2, helper_factor=1, cache=False)))
    assert EDITED != KERNEL
    n = 256
    x, y = torch.zeros(n, dtype=torch.float32), torch.zeros(n, dtype=torch.float32)
    # the kernel imported updates x in place: tuning protects x (the file's version would need nothing).
    # (Triton's interpreter itself re-reads the file when it runs a kernel, so only the decision is checked.)
    with pytest.warns(TiletuneWarning, match="x_ptr"):
        mod.inplace_kernel[_grid(n)](x, y, n)
    # control: the edited file imported as such needs no protection, so says nothing about x_ptr
    edited, _ = _load(tmp_path, "k_edited_control", EDITED.format(scale=2, helper_factor=1, cache=False))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        edited.inplace_kernel[_grid(n)](x, y, n)
    assert not [w for w in caught if "x_ptr" in str(w.message)]


def test_a_deleted_file_still_tunes_from_the_live_source(tmp_path):
    mod, path = _load(tmp_path, "k_deleted", KERNEL.format(scale=3, helper_factor=1, cache=False))
    path.unlink()
    n = 100
    x = torch.arange(n, dtype=torch.float32)
    y = torch.zeros(n, dtype=torch.float32)
    mod.add_kernel[_grid(n)](x, y, n)
    assert torch.equal(y, x * 3)
    assert "BLOCK" in mod.add_kernel.best_config.kwargs


@pytest.mark.parametrize("change", ["constant", "helper"])
def test_a_changed_constexpr_global_or_helper_gets_a_new_cache_file(tmp_path, change):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, _ = _load(tmp_path / "a", "k_ident", KERNEL.format(scale=2, helper_factor=1, cache=True))
    edit = {"scale": 4, "helper_factor": 1} if change == "constant" else {"scale": 2, "helper_factor": 5}
    second, _ = _load(tmp_path / "b", "k_ident", KERNEL.format(cache=True, **edit))
    # the kernel's own source is the same text in both files
    assert first.add_kernel.source == second.add_kernel.source
    assert first.add_kernel._disk_cache("h100").path != second.add_kernel._disk_cache("h100").path
    n = 64
    x = torch.arange(n, dtype=torch.float32)
    for mod, factor in ((first, 2), (second, 4 if change == "constant" else 10)):
        y = torch.zeros(n, dtype=torch.float32)
        mod.add_kernel[_grid(n)](x, y, n)
        assert torch.equal(y, x * factor)  # the second file's kernel is tuned, not given the first's winner


def test_candidates_triton_refuses_are_dropped_before_timing(monkeypatch, capsys):
    monkeypatch.setenv("TILETUNE_IR_ORACLE", "1")  # an interpreted kernel is lowered in a child process
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent / "data"))
    from ir_kernels import kernels

    timed = []
    tuner = kernels.capped_copy_kernel
    tuner.verbose = True
    n = 4096
    x = torch.arange(n, dtype=torch.float32)
    y = torch.zeros(n, dtype=torch.float32)
    tuner[_grid(n)](x, y, n)
    assert torch.equal(y, x)
    timed = [c.kwargs["BLOCK"] for c in tuner.configs_timings]
    assert timed and max(timed) <= 16
    out = capsys.readouterr().out
    assert "Triton refuses it" in out and "BLOCK is at most 16" in out
    assert "Triton's IR shows BLOCK sizing tiles, which the static reading missed" in out  # the IR wins
    assert "reproducer" not in out


def test_the_irs_tile_shapes_enter_the_footprint_where_the_static_reading_has_none(monkeypatch, capsys):
    monkeypatch.setenv("TILETUNE_IR_ORACLE", "1")  # an interpreted kernel is lowered in a child process
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent / "data"))
    from ir_kernels import kernels

    tuner = kernels.hidden_tile_kernel
    tuner.verbose = True
    n = 4096
    x = torch.arange(n, dtype=torch.float32)
    y = torch.zeros(n, dtype=torch.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TiletuneWarning)
        tuner[lambda meta: (triton.cdiv(n, meta["BT"] * meta["BS"]),)](x, y, n)
    assert torch.equal(y, x)
    out = capsys.readouterr().out
    assert "Triton's IR gives the shapes of the tiles the static reading lacks" in out
    assert "load [BT, BS] fp32" in out and "store [BT, BS] fp32" in out
    # the footprint the synthesis used counts the [BT, BS] load and store tiles (4 bytes each element)
    spec = tuner._synthesis.spec
    assert spec.footprint.live_bytes.evaluate({"BT": 32, "BS": 16, "num_stages": 1}) >= 2 * 32 * 16 * 4
    # an incomplete static reading is still re-read through the tiling probes (a complete one is not:
    # tests/test_fixed_cost.py); the IR sees both parameters size the tile
    assert tuner.ir_reading is not None and {"BT", "BS"} <= set(tuner.ir_reading.tiling)
