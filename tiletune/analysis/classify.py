"""Classification of kernel parameters from the interpreter's evidence.

A constexpr is a *tiling parameter* when it sizes a tile: a ``tl.arange``
extent, a ``tl.zeros``/``tl.full`` shape, a ``tl.make_block_ptr`` block
shape, a reshape/view/broadcast shape, a ``tl.histogram`` bin count, or the
step of a loop (``range(0, K, BLOCK_K)``) that does not start at a
``tl.program_id``-derived value (a grid-stride loop's step, like ``NUM_SMS``,
is not a tile size).

Its role:

* ``REDUCTION`` when it steps a loop, directly or as the divisor of the trip
  count (``range(0, tl.cdiv(K, BLOCK_K))``), also in a grid-stride loop such
  as split-K's ``range(pid_k * BLOCK_K, K, BLOCK_K * SPLIT_K)``; ``bound`` is
  the runtime argument of the loop's end (``K``);
* else ``PARALLEL`` when it multiplies a ``tl.program_id``-derived value
  (``pid_m * BLOCK_M``, also through grouped-ordering arithmetic); ``axis``
  is that program-id axis;
* else ``REDUCTION`` when it multiplies a loop's induction variable (the loop
  walks the tiles: ``for i_t in range(NT): o = i_t * BT + ...`` over a trip
  count passed separately, a flattened index ``(i % COUNT) * BLOCK_CI``);
* else ``INNER``.

``bound`` (parallel and inner, and reduction loops whose end names no
argument) is the argument that tile offsets built from the parameter's
``tl.arange`` are compared with (``offs_m < M``, also ``% M`` and a block
pointer's ``shape``), the most frequent one when there are several.
A constexpr that bounds a unit-step loop (``for r in range(ROWS)``) and
multiplies a program id (``row = pid * ROWS + r``) is a rows-per-program
tiling parameter: ``PARALLEL``, bound to what the rows are compared with.
A modulo (``offs % M``) binds only when no comparison does (``o % G`` that
picks a weight group is no bound when ``o < T`` masks the tile).  Offsets
anchored by the bound or another constexpr (``seq_len - BW + tl.arange(0,
BW)``, a sub-chunk ``i * BT + BC + tl.arange(0, BC)``) do not bind: such a
tile need not cover the extent.
``min_value`` is 16 for ``tl.dot`` operand/result extents, ``power_of_two``
is set for ``tl.arange`` extents, ``is_pointer`` for parameters used as an
address.
"""

from __future__ import annotations

from collections import Counter
from typing import Optional

from .model import KernelSpec, Param, Role
from .shapes import Trace

__all__ = ["classify_params"]

DOT_MIN = 16


def classify_params(spec: KernelSpec, trace: Trace) -> None:
    """Set ``tiling``, ``role``, ``axis``, ``bound``, ``min_value``, ``power_of_two``,
    ``is_pointer`` and ``uses`` on every parameter of ``spec``."""
    pointers = set(trace.pointer_uses)
    _rows_per_program(spec, trace)
    tiling = {p.name for p in spec.params if p.constexpr and p.name in trace.tile_uses}
    for p in spec.params:
        uses: list[str] = []
        if p.name in pointers and not p.constexpr:
            p.is_pointer = True
            uses.append(f"pointer: {trace.pointer_uses[p.name]}")
        if not p.constexpr:
            p.uses = uses
            continue
        evidence = trace.tile_uses.get(p.name)
        strides = [line for name, line in trace.grid_strides if name == p.name]
        if not evidence:
            p.tiling = False
            p.role = Role.NON_TILING
            p.axis = None
            p.bound = None
            uses.extend(f"grid-stride loop step at line {line} (not a tile size)" for line in strides)
            p.uses = uses
            continue
        p.tiling = True
        uses.extend(evidence)
        p.power_of_two = p.name in trace.pow2
        if p.name in trace.dot_dims:
            p.min_value = DOT_MIN
            uses.append(f"tl.dot extent at line {trace.dot_dims[p.name]} (min {DOT_MIN})")
        else:
            p.min_value = 1
        excluded = pointers | tiling
        reduction = [r for r in trace.reduction_steps if r[0] == p.name]
        pid_axes = [axes for name, axes, _ in trace.pid_mults if name == p.name]
        walked = sorted(line for name, line in trace.loop_mults if name == p.name)
        bind_bound, bind_text = _bind_bound(p, trace, excluded)
        p.axis = None
        p.bound = None
        if reduction:
            p.role = Role.REDUCTION
            loop_bound = _most_common(
                [n for _, params, _, _ in reduction for n in sorted(params, key=lambda n: _index(spec, n)) if n not in excluded and n != p.name]
            )
            for _, params, line, how in reduction:
                uses.append(f"{how} of the loop at line {line}" + (f" (bound {loop_bound})" if loop_bound else ""))
            p.bound = loop_bound or bind_bound
        elif pid_axes:
            p.role = Role.PARALLEL
            axes = Counter(a for s in pid_axes for a in s)
            p.axis = min(axes, key=lambda a: (-axes[a], a))
            lines = sorted({line for name, _, line in trace.pid_mults if name == p.name})
            uses.append(f"multiplies tl.program_id({p.axis})-derived value at line {lines[0]}")
            p.bound = bind_bound
        elif walked:
            p.role = Role.REDUCTION
            uses.append(f"walked by a loop: multiplies its induction variable at line {walked[0]}")
            p.bound = bind_bound
        else:
            p.role = Role.INNER
            p.bound = bind_bound
        if bind_text and p.bound == bind_bound and bind_bound is not None:
            uses.append(bind_text)
        p.uses = uses


def _index(spec: KernelSpec, name: str) -> int:
    for p in spec.params:
        if p.name == name:
            return p.index
    return 1 << 30


def _most_common(names: list[str]) -> Optional[str]:
    if not names:
        return None
    counts = Counter(names)
    best = max(counts.values())
    for n in names:  # first occurrence among the most frequent
        if counts[n] == best:
            return n
    return None  # pragma: no cover


def _bind_bound(p: Param, trace: Trace, excluded: set[str]) -> tuple[Optional[str], Optional[str]]:
    """The argument the parameter's tile offsets are compared with, and the reason text."""
    names: dict[bool, list[str]] = {True: [], False: []}  # by "is a modulo"
    texts: dict[str, str] = {}
    for tiles, params, line, text, how in trace.binds:
        if tiles != frozenset((p.name,)) or how == "anchored":
            continue
        for n in sorted(params):
            if n in excluded or n == p.name:
                continue
            names[how == "modulo"].append(n)
            texts.setdefault(n, f"{'mask' if how != 'modulo' else 'wrap'} {text} at line {line} binds to {n}")
    # an index taken modulo something (``o % G`` picking a weight group) says nothing of the tile's
    # extent when a mask does: a modulo counts only where no comparison bounds the tile
    best = _most_common(names[False]) or _most_common(names[True])
    return best, texts.get(best) if best else None


def _rows_per_program(spec: KernelSpec, trace: Trace) -> None:
    """A constexpr ``R`` that bounds ``for r in range(R)`` and multiplies a program id
    (``row = pid * R + r``) sizes each program's share of rows: a tiling parameter."""
    pid_lines = {name: line for name, _, line in trace.pid_mults}
    for name, line in trace.loop_bounds:
        if name in pid_lines and name not in trace.tile_uses:
            trace.tile_uses[name] = [
                f"rows per program: bounds the loop at line {line} and multiplies a program id at line {pid_lines[name]}"
            ]
