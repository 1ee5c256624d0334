"""Search strategies behind one small interface, registered by name.

A strategy takes a benchmark function and a budget, and returns the best
config it measured and what it did -- as PyTorch Inductor's coordinate-descent
tuner takes its benchmark, and Helion's autotuner registers its searches by
name.  It never touches a device: ``benchmark(points) -> [ms or None]``
compiles and times a batch (None = failed), and is the caller's.

    result = run_strategy("descent", benchmark, budget, space, measured)

``space`` says where a strategy may go (:class:`Space`: the model's ranked
points, its feasibility check and cost, the tiling parameters, hints and the
``num_warps``/``num_stages`` values); ``budget`` how far (:class:`Budget`:
the policy, the time budget on an injectable clock, the compile parallelism);
``measured`` the times known already (the first batch's).

Registered: ``"descent"`` (:class:`~tiletune.runtime.descent.Descent`, the
default search's second phase) and ``"screen"`` (the ranked points in order
while the budget lasts, no moves: the exhaustive screening's way).
:func:`register_strategy` adds one; ``SearchPolicy.strategy`` names the one a
search mode uses, and ``search="<name>"`` runs the default mode with strategy ``<name>``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from .descent import Descent
from .search import MAX_STAGES, MIN_STAGES, SEARCH_MODES, STRATEGY_NAMES, WARPS, Point, SearchPolicy

__all__ = ["Space", "Budget", "StrategyResult", "Strategy", "register_strategy", "strategy_names", "get_strategy",
           "run_strategy"]

Benchmark = Callable[[List[Point]], Sequence[Optional[float]]]


@dataclass
class Space:
    """Where a strategy may search: the model's ranked points (best first, with variety: the candidates),
    every feasible point it enumerated in its cost order (``by_cost``), its feasibility check and cost
    (None: unknown), the tiling parameters moves scale, the hints' values, and the launch options' values."""

    ranked: List[Point] = field(default_factory=list)
    by_cost: List[Point] = field(default_factory=list)
    feasible: Callable[[Point], bool] = lambda p: True
    cost: Optional[Callable[[Point], Optional[float]]] = None
    tiling: Sequence[str] = ()
    hints: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    launch_options: bool = True
    warps: Sequence[int] = WARPS
    stages: Sequence[int] = tuple(range(MIN_STAGES, MAX_STAGES + 1))


@dataclass
class Budget:
    """How far a strategy may go: ``policy`` (``max_compiles``, ``gain``, ``seeds``), ``seconds`` since
    ``started`` on ``clock`` (``reserve_s`` of it kept for what follows), and the prices of a round
    (``compile_s`` a compile wave of ``compile_workers``, ``point_s`` a measurement); ``ceiling_s``, how far
    ``seconds`` may grow to hold a first round the first batch left no room for (``on_grow(seconds)`` hears
    of it)."""

    policy: SearchPolicy
    seconds: Optional[float] = None
    clock: Callable[[], float] = time.perf_counter
    started: Optional[float] = None
    reserve_s: float = 0.0
    compile_s: float = 0.0
    point_s: float = 0.0
    compile_workers: int = 0
    agree_round: Optional[Callable[[int], int]] = None
    ceiling_s: Optional[float] = None
    on_grow: Optional[Callable[[float], None]] = None

    def left_s(self) -> float:
        """Seconds left before the budget ends, the reserve kept back (inf without a time budget)."""
        if self.seconds is None:
            return float("inf")
        started = self.clock() if self.started is None else self.started
        return self.seconds - self.reserve_s - (self.clock() - started)


@dataclass
class StrategyResult:
    """What a strategy did: every time known (measured before included; None = failed), the best point and
    its time (None when nothing ran), the moves it took (``(from, to, ms)``), how many points it measured
    (``filled`` of them in idle compile slots, :class:`~tiletune.runtime.descent.Descent`), how many the model
    rejected, why it stopped, and how many seconds the budget grew by (``grown_s``)."""

    times: Dict[Point, Optional[float]]
    best: Optional[Point]
    best_ms: Optional[float]
    moves: List[tuple]
    measured: int
    rejected: int
    stopped: str
    filled: int = 0
    grown_s: float = 0.0


Strategy = Callable[[Benchmark, Budget, Space, Mapping[Point, Optional[float]]], StrategyResult]
_REGISTRY: Dict[str, Strategy] = {}


def register_strategy(name: str, strategy: Strategy) -> None:
    """Register ``strategy(benchmark, budget, space, measured) -> StrategyResult`` under ``name``
    (lower case; registering a name again replaces it)."""
    key = str(name).strip().lower()
    if not key:
        raise ValueError("tiletune: a search strategy needs a non-empty name")
    if key in SEARCH_MODES:
        raise ValueError(f"tiletune: {name!r} is a search mode; give the strategy another name")
    _REGISTRY[key] = strategy
    STRATEGY_NAMES.add(key)  # search="<name>" now picks it


def strategy_names() -> List[str]:
    """The registered strategies' names, sorted."""
    return sorted(_REGISTRY)


def get_strategy(name: str) -> Strategy:
    """The strategy registered as ``name``; ValueError naming the registered ones when there is none."""
    key = str(name).strip().lower()
    if key not in _REGISTRY:
        raise ValueError(f"tiletune: {name!r} is not a search strategy; registered: "
                         f"{', '.join(map(repr, strategy_names()))} (tiletune.runtime.strategies.register_strategy "
                         "adds one)")
    return _REGISTRY[key]


def run_strategy(name: str, benchmark: Benchmark, budget: Budget, space: Space,
                 measured: Optional[Mapping[Point, Optional[float]]] = None) -> StrategyResult:
    """Run the strategy registered as ``name`` (see the module docstring)."""
    return get_strategy(name)(benchmark, budget, space, dict(measured or {}))


def _best(times: Mapping[Point, Optional[float]]) -> tuple:
    ok = sorted((t, p.signature(), p) for p, t in times.items() if t is not None)
    return (ok[0][2], ok[0][0]) if ok else (None, None)


def descent(benchmark: Benchmark, budget: Budget, space: Space,
            measured: Mapping[Point, Optional[float]]) -> StrategyResult:
    """Coordinate descent from the best of ``measured`` (:class:`~tiletune.runtime.descent.Descent`)."""
    d = Descent(benchmark, space.feasible, budget.policy, space.tiling, space.hints,
                launch_options=space.launch_options, warps=space.warps, stages=space.stages,
                clock=budget.clock, started=budget.started, agree_round=budget.agree_round,
                seconds=budget.seconds, reserve_s=budget.reserve_s, compile_s=budget.compile_s,
                point_s=budget.point_s, cost=space.cost, compile_workers=budget.compile_workers,
                fill=space.by_cost, ceiling_s=budget.ceiling_s, on_grow=budget.on_grow)
    r = d.run(measured)
    best, ms = _best(r.times)
    return StrategyResult(r.times, best, ms, r.moves, r.measured, r.rejected, r.stopped, r.filled, r.grown_s)


def screen(benchmark: Benchmark, budget: Budget, space: Space,
           measured: Mapping[Point, Optional[float]]) -> StrategyResult:
    """The ranked points not measured yet, in the model's order, in rounds of ``compile_workers`` (all at once
    when 0) while the budget's seconds and ``max_compiles`` last; no moves."""
    times: Dict[Point, Optional[float]] = dict(measured)
    todo = [p for p in space.ranked if p not in times]
    rejected = [p for p in todo if not space.feasible(p)]
    todo = [p for p in todo if p not in rejected]
    cap = budget.policy.max_compiles if budget.policy.max_compiles > 0 else len(todo)
    todo = todo[:cap]
    step = budget.compile_workers or len(todo) or 1
    count, stopped = 0, "done"
    for at in range(0, len(todo), step):
        if budget.left_s() <= 0:
            stopped = "budget"
            break
        batch = todo[at:at + step]
        for p, t in zip(batch, benchmark(batch)):
            times[p] = t
        count += len(batch)
    best, ms = _best(times)
    return StrategyResult(times, best, ms, [], count, len(rejected), stopped)


register_strategy("descent", descent)
register_strategy("screen", screen)
