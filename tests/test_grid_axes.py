"""Launch grid axes that no tiling parameter sizes (a batch, the rows) reach the cost model's program count."""
from __future__ import annotations

import triton

import fixtures
from tiletune.analysis import analyze_kernel
from tiletune.runtime.binding import synthesis_shapes, tensor_dtypes
from tiletune.runtime.grid_axes import grid_axis_shapes
from tiletune.synthesis import required_shapes, synthesize


def test_only_the_axes_no_tiling_parameter_changes_are_sized():
    bsz, m, n = 5, 1000, 999
    grid = lambda meta: (triton.cdiv(m, meta["BLOCK_M"]), triton.cdiv(n, meta["BLOCK_N"]), bsz)  # noqa: E731
    assert grid_axis_shapes(grid, {"M": m, "N": n}, ["BLOCK_M", "BLOCK_N", "BLOCK_K"]) == {"grid[2]": 5}
    assert grid_axis_shapes(lambda meta: (100,), {}, ["BLOCK_SIZE"]) == {"grid[0]": 100}  # one program per row
    assert grid_axis_shapes((7, 3), {}, ["BLOCK"]) == {"grid[0]": 7, "grid[1]": 3}
    # a grid reading what the launch does not give, or no grid: nothing is sized, the model keeps its assumption
    assert grid_axis_shapes(lambda meta: (meta["SPLIT"], 4), {}, ["BLOCK"]) == {}
    assert grid_axis_shapes(None, {}, ["BLOCK"]) == {}
    # a hint the grid reads takes its first value
    assert grid_axis_shapes(lambda meta: (meta["GROUP"] * 2,), {}, ["BLOCK"], {"GROUP": [4, 8]}) == {"grid[0]": 8}


def _ranked(name: str, shape: dict, grid_shapes: dict):
    fx = fixtures.load(name)
    spec = analyze_kernel(fx.KERNEL)
    args = fx.make_args(shape, device="meta")
    shapes = {**synthesis_shapes(spec.name, required_shapes(spec), args), **grid_shapes}
    dtypes = tensor_dtypes(list(fx.KERNEL.arg_names), args)
    fixed = {p.name: args[p.name] for p in spec.tiling_params if p.name in args} or None
    return synthesize(spec, shapes, dtypes, "h100", fixed=fixed, top_k=200)


def test_the_batch_axis_of_the_launch_grid_counts_its_programs():
    """batched_matmul at B=5: the model assumed a full wave (132) per tile for the batch axis, 4224 programs for a
    128x256 tile; with the launch grid's batch it counts 8 x 4 x 5 = 160."""
    shape = {"B": 5, "M": 1000, "N": 999, "K": 257}
    unknown = _ranked("batched_matmul", shape, {})
    sized = _ranked("batched_matmul", shape, {"grid[2]": 5})
    assert any("132" in line and "untiled axes [2]" in line for line in unknown.model_summary)
    assert any("grid[2]=5" in line for line in sized.model_summary)
    tile = next(c for c in sized.candidates if c.kwargs["BLOCK_M"] == 128 and c.kwargs["BLOCK_N"] == 256)
    assert tile.cost_terms["programs"] == 160


def test_rows_alone_keep_the_one_wave_assumption():
    """rms_norm launches one program per row: every candidate launches the same count, which reaches the ranking
    only through residency terms fitted on the one-wave assumption, so the launch's 100 rows leave it as it was."""
    sized = _ranked("rms_norm", {"M": 100, "N": 3000}, {"grid[0]": 100})
    assert {c.cost_terms["programs"] for c in sized.candidates} == {132}


def test_the_autotuner_passes_its_launch_grids_batch_to_synthesis():
    """End to end (interpreter): tiletune.autotune(configs=[]) on batched_matmul launched over a batch of 3 ranks
    its candidates with the costs of a model told the batch (grid[2]=3), not of one that assumed a full wave.
    (Fails before the fix: the runtime did not read the grid.)"""
    import torch

    import tiletune

    mod = fixtures.load("batched_matmul")
    shape = {"B": 3, "M": 37, "N": 29, "K": 45}
    tuned = tiletune.autotune(configs=[], key=mod.KEY, target="h100", top_k=2, cache_results=False)(mod.KERNEL)
    torch.manual_seed(0)
    args = mod.make_args(shape)
    mod.launch(tuned, args)
    got = set(tuned._synthesis.costs.values())
    told = {c.cost for c in _ranked("batched_matmul", shape, {"grid[2]": 3}).candidates}
    assumed = {c.cost for c in _ranked("batched_matmul", shape, {}).candidates}
    assert got and got <= told
    assert not got & assumed
