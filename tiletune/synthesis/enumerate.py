"""Complete enumeration of the feasible points of a :class:`~.constraints.Model`.

The space is finite (every variable has a short list of values), so the
enumeration is a product built one variable at a time, with each constraint
applied as soon as every variable it mentions is present.  That is complete
(every point of the product is either kept or removed by a constraint that it
violates) and cheap: a constraint is evaluated with NumPy over all partial
points at once, and pruning after the tiling parameters keeps the product
with ``num_warps``/``num_stages`` small.  The constraints are the very objects
the Z3 model asserts (see :mod:`.constraints`), so the two cannot disagree;
tests check that they agree point by point.

User ``prune`` predicates (Python callables over the config dict, True =
drop the point) run on the feasible points after the model's constraints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..errors import SynthesisError
from .constraints import Constraint, Model, evaluate_pred

__all__ = ["Table", "enumerate_feasible", "point_env", "apply_prune", "MAX_POINTS"]

#: Largest partial product the enumeration builds before giving up.
MAX_POINTS = 20_000_000


@dataclass
class Table:
    """Points as columns: ``idx[name]`` indexes ``var.values``, ``codes[name]`` is the integer value."""

    model: Model
    idx: dict[str, np.ndarray]
    n: int
    removed: dict[str, int] = field(default_factory=dict)  # constraint -> points it removed
    explored: int = 0
    pruned: int = 0

    def codes(self, name: str) -> np.ndarray:
        """Integer values of a numeric variable for every point."""
        v = self.model.space.var(name)
        return np.asarray(v.codes, dtype=np.int64)[self.idx[name]]

    def env(self) -> dict[str, np.ndarray]:
        """Symbol -> array of values, for evaluating terms over all points."""
        out = {}
        for v in self.model.space.vars:
            if v.numeric:
                out[v.name] = self.codes(v.name)
        return out

    def take(self, keep: np.ndarray) -> "Table":
        """The points where ``keep`` is True (or at the indices in ``keep``)."""
        return Table(self.model, {k: a[keep] for k, a in self.idx.items()}, int(np.count_nonzero(keep)) if keep.dtype == bool else len(keep), dict(self.removed), self.explored, self.pruned)

    def point(self, i: int) -> dict[str, Any]:
        """The ``i``-th point as ``{variable: value}``."""
        return {v.name: v.values[int(self.idx[v.name][i])] for v in self.model.space.vars}


def point_env(model: Model, point: dict[str, Any]) -> dict[str, int]:
    """Integer environment of one point (numeric variables only)."""
    env = {}
    for v in model.space.vars:
        if v.numeric and v.name in point:
            value = point[v.name]
            env[v.name] = int(value) if not isinstance(value, bool) else int(value)
    return env


def _mask(c: Constraint, env: dict, n: int) -> np.ndarray:
    m = np.asarray(evaluate_pred(c.pred, env))
    if m.shape != (n,):
        m = np.broadcast_to(m, (n,))
    return m


def enumerate_feasible(model: Model, *, skip: Sequence[str] = (), max_points: int = MAX_POINTS) -> Table:
    """Every point of the model's space that satisfies all its constraints.

    ``skip`` names constraints to leave out (used to find the closest
    infeasible point).  Raises :class:`SynthesisError` when a partial product
    would exceed ``max_points``.
    """
    space = model.space
    pending = [c for c in model.constraints if not c.implicit and c.name not in skip]
    removed: dict[str, int] = {}
    # constant requirements first
    for c in [c for c in pending if not c.symbols]:
        ok = bool(np.all(evaluate_pred(c.pred, {})))
        pending.remove(c)
        if not ok:
            removed[c.name] = -1
            return Table(model, {v.name: np.zeros(0, dtype=np.int64) for v in space.vars}, 0, removed, 0)
    idx: dict[str, np.ndarray] = {}
    codes: dict[str, np.ndarray] = {}
    n = 1
    explored = 0
    present: set[str] = set()
    for v in space.vars:
        k = len(v.values)
        if n * k > max_points:
            raise SynthesisError(
                f"kernel {space.spec.name!r}: the search space grows past {max_points} points at {v.name}; "
                "fix some tiling parameters (fixed=) or narrow hints"
            )
        for name in idx:
            idx[name] = np.repeat(idx[name], k)
            if name in codes:
                codes[name] = np.repeat(codes[name], k)
        idx[v.name] = np.tile(np.arange(k, dtype=np.int64), n)
        if v.numeric:
            codes[v.name] = np.asarray(v.codes, dtype=np.int64)[idx[v.name]]
        n *= k
        explored += n
        present.add(v.name)
        ready = [c for c in pending if c.symbols <= present]
        for c in ready:
            pending.remove(c)
            if n == 0:
                continue
            m = _mask(c, codes, n)
            dropped = n - int(np.count_nonzero(m))
            if dropped:
                removed[c.name] = removed.get(c.name, 0) + dropped
                for name in idx:
                    idx[name] = idx[name][m]
                for name in codes:
                    codes[name] = codes[name][m]
                n -= dropped
    return Table(model, idx, n, removed, explored)


def apply_prune(table: Table, prune: Optional[Sequence[Callable[[dict], bool]]], make_config: Callable[[dict], dict]) -> Table:
    """Drop the points for which any ``prune`` predicate returns True.

    Each predicate receives the config dict that the point becomes (tiling
    and hinted kwargs plus ``num_warps``/``num_stages``/``multibuffer``).
    """
    if not prune or table.n == 0:
        return table
    keep = np.ones(table.n, dtype=bool)
    for i in range(table.n):
        cfg = make_config(table.point(i))
        for pred in prune:
            if pred(dict(cfg)):
                keep[i] = False
                break
    out = table.take(keep)
    out.pruned = table.n - out.n
    return out
