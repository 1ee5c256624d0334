"""Checks of the sizes, dtypes and values a user gives on the command line, against the kernel.

``synth-configs`` (``tiletune synth-configs``) names kernel parameters in
``--shape``, ``--dtype``, ``--fixed`` and ``--hint``; a typo there used to be
ignored silently (the synthesis then ran for another problem than the one
meant) and a zero, negative or non-power-of-two size produced configs that
cannot launch.  :func:`synth_argument_problems` lists each such mistake in
words naming the kernel, the parameter and the fix; the CLI prints them and
exits with status 2.
"""

from __future__ import annotations

from typing import Any, List, Mapping, Sequence

__all__ = ["synth_argument_problems"]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _pow2(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


def synth_argument_problems(
    spec: Any,
    shapes: Mapping[str, int],
    dtypes: Mapping[str, str],
    fixed: Mapping[str, Any],
    hints: Mapping[str, Sequence[Any]],
    pow2_required: bool = True,
) -> List[str]:
    """Every mistake in the command line's ``--shape``/``--dtype``/``--fixed``/``--hint`` for ``spec``.

    ``shapes`` are the ``--shape`` sizes (a tiling constexpr given there is
    fixed, so it is checked as ``--fixed`` is), ``dtypes`` the ``--dtype``
    pointers, ``fixed`` the ``--fixed`` values, ``hints`` the ``--hint`` lists.
    ``num_warps``, ``num_stages`` and ``multibuffer`` are target knobs, not
    kernel parameters.  ``pow2_required=False`` for Ascend targets:
    Triton-Ascend's ``tl.arange`` takes any extent.
    """
    kernel = spec.name
    params = {p.name: p for p in spec.params}
    names = ", ".join(params) or "none"
    grid_names = set()  # sizes the launch grid the analysis saw reads (locals of the launching code)
    for site in getattr(spec, "launches", []):
        for g in site.grid or ():
            if g is not None and hasattr(g, "symbols"):
                grid_names |= {str(s) for s in g.symbols()}
    tiling = {p.name: p for p in spec.tiling_params}
    out: List[str] = []

    def unknown(flag: str, name: str) -> None:
        extra = f"; sizes the launch grid reads: {', '.join(sorted(grid_names))}" if grid_names and flag == "--shape" else ""
        out.append(f"{flag} {name}: kernel {kernel!r} has no parameter {name!r} (parameters: {names}{extra})")

    def tile_value(flag: str, name: str, value: Any) -> None:
        p = tiling[name]
        if not _is_int(value) or value < max(1, p.min_value):
            out.append(f"{flag} {name}={value!r}: a tile size must be an integer >= {max(1, p.min_value)}")
        elif pow2_required and p.power_of_two and not _pow2(value):
            out.append(f"{flag} {name}={value}: {name} sizes a tl.arange, so it must be a power of two "
                       f"(e.g. {1 << (value.bit_length() - 1)} or {1 << value.bit_length()})")

    for name, value in shapes.items():
        if name not in params and name not in grid_names:
            unknown("--shape", name)
        elif value <= 0:
            out.append(f"--shape {name}={value}: sizes must be positive")
        elif name in tiling:
            tile_value("--shape", name, value)
    for name in dtypes:
        if name not in params:
            unknown("--dtype", name)
        elif params[name].constexpr or not params[name].is_pointer:
            pointers = ", ".join(p.name for p in spec.params if p.is_pointer) or "none"
            out.append(f"--dtype {name}: {name!r} is not a pointer argument of kernel {kernel!r} "
                       f"(pointers: {pointers})")
    knobs = ("num_warps", "num_stages", "multibuffer")
    for name, value in fixed.items():
        if name in knobs:
            continue
        if name not in params:
            unknown("--fixed", name)
        elif not params[name].constexpr:
            out.append(f"--fixed {name}: {name!r} is a runtime argument of kernel {kernel!r}, not a constexpr; "
                       f"give its size with --shape {name}=...")
        elif name in tiling:
            tile_value("--fixed", name, value)
    for name, values in hints.items():
        if name in knobs:
            continue
        if name not in params:
            unknown("--hint", name)
        elif not params[name].constexpr:
            out.append(f"--hint {name}: {name!r} is a runtime argument of kernel {kernel!r}, not a constexpr")
        elif name in tiling:
            for value in values:
                tile_value("--hint", name, value)
    return out
