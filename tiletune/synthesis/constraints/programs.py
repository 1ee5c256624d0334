"""How many programs a tiling launches and how often an access runs per program.

:func:`programs` reads the launch grid when its sizes are known, else
``cdiv(bound, block)`` over the parallel tiling parameters; :func:`trips`
estimates a loop's trip count the analysis could not give.  Both only feed
the cost model and the summary, never a feasibility constraint.
"""

from __future__ import annotations

import ast
import os
from typing import Optional

from ...analysis.expr import Expr, cdiv, const, product, sym
from ...analysis.model import KernelSpec, Role
from ..space import Space

__all__ = ["programs", "trips", "program_axes", "grid_axis_name"]


def grid_axis_name(axis: int) -> str:
    """The shape name that carries launch grid axis ``axis``'s size (``grid[2]``) when the caller knows it.

    The runtime evaluates the launch's grid function and passes the sizes of
    the axes no tiling parameter changes (a batch, a head count); the API's
    ``shapes=`` takes it as well.  An axis the kernel tiles ignores it."""
    return f"grid[{int(axis)}]"


def trips(space: Space, given: Optional[Expr], in_loop: bool, dims, notes: list[str], what: str) -> Expr:
    """Trip count of an access or dot; estimated when the analysis could not say.

    An unknown count inside a loop becomes ``cdiv(bound, P)`` for each
    reduction parameter ``P`` among the tile's dimensions (the loop walks
    ``P``'s extent in steps of ``P``), else 1.
    """
    if given is not None:
        b = space.bind(given)
        if not space.unknown_symbols(b):
            return b
    if not in_loop:
        return const(1)
    names = set(space.var_names)
    est = []
    for p in space.spec.tiling_params:
        if p.role != Role.REDUCTION or p.name not in space.bound_values:
            continue
        if any(d is not None and p.name in d.symbols() for d in dims):
            value = sym(p.name) if p.name in names else const(int(space.fixed.get(p.name, 1)))
            est.append(cdiv(space.bound_values[p.name], value))
    if est:
        e = product(est)
        notes.append(f"trip count of the {what} estimated as {e}")
        return e
    return const(1)


def programs(space: Space, notes: list[str]) -> tuple[Expr, str]:
    """(number of programs, where it comes from); notes say what was assumed."""
    spec = space.spec
    names = set(space.var_names)
    for launch in spec.launches:
        if not launch.grid:
            continue
        dims = [space.bind(g) for g in launch.grid]
        if all(not (d.symbols() - names) for d in dims):
            return product(dims), f"launch grid {launch.grid_source}"
    parallel = [p for p in spec.tiling_params if p.role == Role.PARALLEL]
    terms = []
    axes_tiled = set()
    for p in parallel:
        bound = space.env.get(p.bound) if p.bound else None
        if bound is None:
            continue
        axes_tiled.add(p.axis)
        value = sym(p.name) if p.name in names else const(int(space.fixed.get(p.name, 1)))
        terms.append(cdiv(int(bound), value))
    axes = program_axes(spec)
    untiled = sorted(a for a in axes if a not in axes_tiled) if axes is not None else []
    cores = space.family.program_cores(space.target)
    if terms and not untiled:
        return product(terms), "cdiv(bound, block) over the parallel tiling parameters"
    # The launch grid's sizes of the untiled axes (the runtime reads them off the grid function) replace the
    # one-wave-per-tile assumption beside tiled axes, where that assumption multiplies every tile's count
    # (batched_matmul at B=5: 4224 programs of 128x256 assumed, 160 launched) and skews the waves one tile gets
    # against another.  Where no axis is tiled every candidate launches the same programs; the count then
    # reaches the ranking only through the residency terms, which were fitted on the one-wave assumption
    # (told the rows, cross_entropy's measured best fell from model rank 7 to 52 over 4096 rows), so it stays.
    known = {a: int(space.env[grid_axis_name(a)]) for a in untiled if grid_axis_name(a) in space.env}
    if terms and untiled and len(known) == len(untiled):  # the launch's grid gave every untiled axis its size
        sizes = " x ".join(f"{grid_axis_name(a)}={known[a]}" for a in untiled)
        return product(terms) * max(1, product_of(known.values())), \
            f"cdiv(bound, block) over the parallel tiling parameters x {sizes} (launch grid)"
    if terms:
        notes.append(
            f"grid axes {untiled} are not tiled by any parameter and their size is unknown; assumed to give "
            f"{cores} programs (one full wave) per tile"
        )
        return product(terms) * cores, f"cdiv(bound, block) over the parallel tiling parameters x {cores} (untiled axes {untiled})"
    notes.append("number of programs unknown (no usable launch grid, no parallel tiling parameter); assumed one full wave")
    return const(cores), "assumed one full wave"


_AXES_CACHE: dict[tuple, Optional[frozenset]] = {}


def product_of(values) -> int:
    """The product of integers (1 for none)."""
    out = 1
    for v in values:
        out *= int(v)
    return out


def program_axes(spec: KernelSpec) -> Optional[frozenset]:
    """The ``tl.program_id`` axes the kernel's source uses (None when the source cannot be read).

    The source is parsed with :mod:`ast`, never run.
    """
    if not spec.file:
        return None
    try:
        key = (spec.file, os.path.getmtime(spec.file), spec.name, spec.span.line)
    except OSError:
        return None
    if key in _AXES_CACHE:
        return _AXES_CACHE[key]
    result: Optional[frozenset] = None
    try:
        with open(spec.file, "rb") as fh:
            tree = ast.parse(fh.read())
        fn = None
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == spec.name:
                if fn is None or abs(node.lineno - spec.span.line) < abs(fn.lineno - spec.span.line):
                    fn = node
        if fn is not None:
            axes = set()
            for node in ast.walk(fn):
                if isinstance(node, ast.Call):
                    f = node.func
                    fname = f.attr if isinstance(f, ast.Attribute) else (f.id if isinstance(f, ast.Name) else "")
                    if fname != "program_id":
                        continue
                    arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "axis"), None)
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, int):
                        axes.add(arg.value)
                    elif arg is None:
                        axes.add(0)
            result = frozenset(axes)
    except (OSError, SyntaxError, ValueError):
        result = None
    _AXES_CACHE[key] = result
    return result
