"""The sizes of the launch grid's axes that no tiling parameter changes (a batch, a head count, rows).

The source analysis cannot size a grid axis the launch computes from a tensor's
shape (``lambda meta: (cdiv(M, meta["BLOCK_M"]), cdiv(N, meta["BLOCK_N"]), B)``,
or one program per row: ``(n_rows,)``), and the cost model then assumed one full
wave of programs per tile: 4224 programs for batched_matmul's 128x256 tile at
B=5 (there are 160), 132 for a row kernel over 100 rows.  Wave quantisation on
small batches and few rows is where the model's ranking goes wrong, so the
runtime, which holds the grid function, asks it: an axis whose size is the same
under two different tilings is sized by the launch alone, and synthesis gets it
as the shape ``grid[i]`` (:func:`~tiletune.synthesis.constraints.programs.grid_axis_name`).
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Sequence

from tiletune.synthesis.constraints.programs import grid_axis_name

__all__ = ["grid_axis_shapes"]

#: Two settings of every tiling parameter the grid is evaluated at: an axis that reads none of them keeps its size.
PROBES = (16, 32)


def _axes(grid: Any, meta: Mapping[str, Any]) -> tuple:
    g = grid(dict(meta)) if callable(grid) else grid
    return tuple(g) if isinstance(g, (list, tuple)) else (g,)


def grid_axis_shapes(grid: Any, bound: Mapping[str, Any], tiling: Sequence[str],
                     hints: Mapping[str, Sequence[Any]] = None) -> Dict[str, int]:
    """``{"grid[i]": size}`` for each axis of ``grid`` (a grid function or a tuple) whose size no tiling
    parameter changes, evaluated with the launch's arguments ``bound``, every name of ``tiling`` at each of
    :data:`PROBES`, and each hint at its first value.  Empty when the grid is missing or cannot be evaluated
    that way (it reads a value the launch does not give): the model then keeps its assumption."""
    if grid is None:
        return {}
    base = dict(bound)
    for name, values in (hints or {}).items():
        if values:
            base[name] = list(values)[0]
    try:
        seen = [_axes(grid, {**base, **{t: v for t in tiling}}) for v in PROBES]
    except Exception:  # a grid that needs more than the launch gives: no sizes, the model's assumption stands
        return {}
    first, second = seen
    if len(first) != len(second):
        return {}
    out: Dict[str, int] = {}
    for i, (a, b) in enumerate(zip(first, second)):
        if isinstance(a, bool) or not isinstance(a, int) or a != b or a < 1:
            continue
        out[grid_axis_name(i)] = int(a)
    return out
