"""Warnings ``configs=[]`` gives by default (not only with ``verbose=True``).

Three situations make a tuning silently do less than the author expects:
a tiling parameter passed at the launch (``kernel[grid](..., BLOCK=128)``)
is left out of the search, a kernel whose every tiling parameter is
fixed (or that has none) has nothing to tune at all, and a size the synthesis
depends on is missing from ``key=`` (the first tuning is then reused for every
value of it).  Each is said once per kernel and parameter with :class:`~tiletune.errors.TiletuneWarning`; silence
them with ``warnings.filterwarnings("ignore", category=TiletuneWarning)``.
"""

from __future__ import annotations

import warnings
from typing import Any, Mapping, MutableSet, Optional, Sequence

from tiletune.errors import TiletuneWarning

__all__ = ["warn_untuned", "warn_missing_key", "user_stacklevel"]


def user_stacklevel() -> int:
    """The ``stacklevel`` that points a warning at the first caller outside tiletune and Triton.

    Call it in the function that calls ``warnings.warn``: the warning then
    names the user's launch line however many tiletune and Triton frames
    (decorators, dispatch, the search) lie between.
    """
    import os
    import sys

    import triton

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tiletune/, not its face's import
    ours = (package + os.sep, os.path.dirname(triton.__file__) + os.sep)
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(ours):
        frame, level = frame.f_back, level + 1
    return level


def warn_untuned(kernel_name: str, verdict: Any, hints: Optional[Mapping[str, Sequence[Any]]],
                 said: MutableSet[str], spec: Any = None) -> None:
    """Warn about launch-fixed tiling parameters and about a search with nothing to tune.

    ``verdict`` is the launch's :class:`~tiletune.analysis.tunability.Tunability`;
    ``said`` remembers what was already said for this kernel (one warning each).
    With ``spec`` (the KernelSpec), a whole-extent parameter tied to no runtime
    size (``HEAD_DIM``, ``NUM_BINS``: the problem's own size, role inner, no
    bound) passed at launch is not warned about: the launch is where it belongs;
    nor is a parameter that may carry meaning (``spec.meaning``: its value is
    the one the data was built for).
    """
    shape_defining = set()
    if spec is not None:
        shape_defining = {p.name for p in spec.tiling_params
                          if getattr(p.role, "value", p.role) == "inner" and p.bound is None}
        shape_defining |= set(getattr(spec, "meaning", None) or {})
    launch = [n for n, why in verdict.fixed.items()
              if why.startswith("passed at launch") and n not in shape_defining]
    for name in launch:
        token = f"warned-launch:{name}"
        if token in said:
            continue
        said.add(token)
        warnings.warn(
            f"tiletune: kernel {kernel_name!r}: tiling parameter {name} is passed at launch, so configs=[] "
            f"leaves it out of the search and uses the launch's value; drop {name}=... from the launch to "
            "have it tuned (the grid should read it from meta)",
            TiletuneWarning,
            stacklevel=user_stacklevel(),
        )
    if verdict.tuned or hints or "warned-nothing" in said:
        return
    said.add("warned-nothing")
    if verdict.fixed:
        why = "every tiling parameter is fixed (" + "; ".join(f"{n}: {w}" for n, w in verdict.fixed.items()) + ")"
    else:
        why = "the analysis found no constexpr that sizes a tile"
    warnings.warn(
        f"tiletune: kernel {kernel_name!r}: configs=[] has nothing to tune: {why}; only launch options "
        "(num_warps, num_stages) are searched. Leave a tiling parameter to the search, give hints=, or drop "
        "the autotune decorator",
        TiletuneWarning,
        stacklevel=user_stacklevel(),
    )


def warn_missing_key(kernel_name: str, missing: Sequence[str], keys: Sequence[str], said: MutableSet[str]) -> None:
    """Warn once per kernel that sizes the synthesis depends on are not in ``key=``.

    Without them in the key, the config tuned for the first value is reused
    for every later value (a 64-row tiling for a 65536-row launch).
    """
    if not missing or "warned-missing-key" in said:
        return
    said.add("warned-missing-key")
    names = ", ".join(missing)
    suggested = ", ".join(repr(n) for n in [*keys, *missing])
    warnings.warn(
        f"tiletune: kernel {kernel_name!r}: configs=[] sizes tiles from {names}, which "
        f"{'is' if len(missing) == 1 else 'are'} not in key=; the config tuned for the first value is reused for "
        f"every other value. Add {'it' if len(missing) == 1 else 'them'} to the key (key=[{suggested}]) to tune "
        "each size",
        TiletuneWarning,
        stacklevel=user_stacklevel(),
    )
