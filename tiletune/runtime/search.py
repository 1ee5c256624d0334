"""The measured search: an adaptive first batch, then coordinate descent from the best measured configs.

The cost model ranks the feasible tilings; measuring a fixed top-k of that
ranking misses the winner where the model is wrong (few programs per wave,
fused epilogues, persistent kernels).  So the search measures, and moves:

1. **first batch** (:func:`first_batch_size`): the leading candidates of the
   model's ranking; few where the model is decisive (a clear cost gap after
   the leaders), more where the leaders' costs are close;
2. **coordinate descent** (:class:`Descent`, after PyTorch Inductor's
   coordinate-descent tuner, but seeded with the best *measured* configs and
   never compiling a neighbour the feasibility model rejects): from each seed,
   every single move -- a tiling parameter x2 or /2, ``num_warps`` x2 or /2,
   ``num_stages`` +-1, another value of a hint -- is measured (memoised);
   the best neighbour becomes the new centre when it gains more than
   ``gain`` (1%); the descent stops when no move gains, or when the budget
   (compiles and seconds) is spent.

``search=`` on the autotuner, else ``TILETUNE_SEARCH``, picks a
:class:`SearchPolicy`: ``"fast"``, ``"default"`` or ``"exhaustive"``
(every feasible candidate the model enumerates, up to a cap; no descent).
Under ``TRITON_INTERPRET=1`` with neither set, the ranked list is measured
once without a descent (interpreter times mean nothing).
Nothing here touches a device: measuring is the caller's function.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

__all__ = [
    "SearchPolicy",
    "SEARCH_MODES",
    "resolve_search",
    "first_batch_size",
    "neighbours",
    "repeat_move",
    "diverse_seeds",
    "Descent",
    "config_signature",
]

#: ``num_warps`` values a move may reach, ``num_stages`` bounds (Triton on sm80/sm90).
WARPS = (1, 2, 4, 8, 16, 32)
MIN_STAGES, MAX_STAGES = 1, 7


@dataclass(frozen=True)
class SearchPolicy:
    """How much to measure for one key.

    ``first_min``/``first_max``: the first batch's size range (chosen by
    :func:`first_batch_size` from the cost gap); ``decisive_gap``: the
    relative cost gap after which the model counts as decisive; ``descent``:
    run the coordinate descent; ``seeds``: how many of the best measured
    configs it starts from; ``gain``: the smallest relative gain that moves
    the centre; ``max_compiles``/``max_seconds``: the descent's budget (new
    configs measured, wall seconds since tuning began); ``synth_top_k``: how
    many ranked candidates synthesis returns (the pool the first batch draws
    from; ``exhaustive`` asks for many).
    """

    name: str
    first_min: int
    first_max: int
    decisive_gap: float = 0.15
    descent: bool = True
    seeds: int = 2
    gain: float = 0.01
    max_compiles: int = 48
    max_seconds: float = 30.0
    synth_top_k: int = 16


#: The modes.  Budgets are sized against the goal "first tune no slower than the author's hand list"
#: (a 4-8 config list: 1-4 s on an H100): each descent round compiles its <= 10 neighbours in parallel.
SEARCH_MODES: Dict[str, SearchPolicy] = {
    "fast": SearchPolicy("fast", first_min=2, first_max=4, seeds=1, max_compiles=8, max_seconds=3.0,
                         synth_top_k=8),
    "default": SearchPolicy("default", first_min=3, first_max=8, seeds=2, max_compiles=24, max_seconds=8.0,
                            synth_top_k=16),
    "exhaustive": SearchPolicy("exhaustive", first_min=100_000, first_max=100_000, descent=False,
                               max_compiles=0, max_seconds=float("inf"), synth_top_k=100_000),
}


def resolve_search(search: Any = None, breadth: float = 1.0) -> SearchPolicy:
    """The policy for ``search=`` (a mode name or a :class:`SearchPolicy`), else ``TILETUNE_SEARCH``, else default.

    ``breadth`` > 1 widens it (larger first batch, more seeds and compiles):
    the hook for "the analysis is incomplete, search wider".  An unknown name
    raises ValueError listing the modes.
    """
    if isinstance(search, SearchPolicy):
        policy = search
    elif search is None and not os.environ.get("TILETUNE_SEARCH", "").strip() and _interpreting():
        # times under TRITON_INTERPRET=1 mean nothing: measure the ranked list once, no descent
        policy = replace(SEARCH_MODES["default"], name="interpreter", first_min=16, first_max=16, descent=False)
    else:
        name = search if search is not None else (os.environ.get("TILETUNE_SEARCH", "").strip() or "default")
        key = str(name).strip().lower()
        if key not in SEARCH_MODES:
            where = "search=" if search is not None else "TILETUNE_SEARCH"
            raise ValueError(f"tiletune: {where}{name!r} is not a search mode; use one of "
                             f"{', '.join(map(repr, SEARCH_MODES))}")
        policy = SEARCH_MODES[key]
    if breadth > 1.0 and policy.descent:
        policy = replace(
            policy,
            first_min=int(round(policy.first_min * breadth)),
            first_max=int(round(policy.first_max * breadth)),
            seeds=policy.seeds + 1,
            max_compiles=int(round(policy.max_compiles * breadth)),
            max_seconds=policy.max_seconds * breadth,
            synth_top_k=int(round(policy.synth_top_k * breadth)),
        )
    return policy


def _interpreting() -> bool:
    from .bench import interpreting

    return interpreting()


def first_batch_size(costs: Sequence[Optional[float]], policy: SearchPolicy) -> int:
    """How many of the ranked candidates (model costs, best first) to measure first.

    The batch holds every candidate whose modelled cost is within
    ``decisive_gap`` of the best (the model cannot tell them apart), clamped
    to ``[first_min, first_max]`` and to ``len(costs)``.  Unknown costs (hand
    configs, pruned lists) count as undecided: the whole list up to
    ``first_max``.
    """
    n = len(costs)
    if n == 0:
        return 0
    known = [c for c in costs if c is not None]
    if len(known) < n or not known or known[0] <= 0:
        return min(n, max(policy.first_min, policy.first_max))
    best = known[0]
    close = sum(1 for c in known if c <= best * (1.0 + policy.decisive_gap))
    return min(n, max(policy.first_min, min(policy.first_max, close)))


def config_signature(kwargs: Mapping[str, Any], num_warps: Any = None, num_stages: Any = None) -> str:
    """A stable text for a config: its keyword values, num_warps, num_stages (memo key of the descent)."""
    items = ", ".join(f"{k}={kwargs[k]!r}" for k in sorted(kwargs))
    return f"{items}; w={num_warps}; s={num_stages}"


@dataclass(frozen=True)
class Point:
    """One config the descent can measure: keyword values, num_warps, num_stages."""

    kwargs: Tuple[Tuple[str, Any], ...]
    num_warps: Optional[int]
    num_stages: Optional[int]

    @staticmethod
    def of(kwargs: Mapping[str, Any], num_warps: Optional[int], num_stages: Optional[int]) -> "Point":
        """A point from a config's parts."""
        return Point(tuple(sorted(kwargs.items())), num_warps, num_stages)

    def values(self) -> Dict[str, Any]:
        """The keyword values as a dict."""
        return dict(self.kwargs)

    def signature(self) -> str:
        """:func:`config_signature` of this point."""
        return config_signature(self.values(), self.num_warps, self.num_stages)

    def with_value(self, name: str, value: Any) -> "Point":
        """This point with one keyword changed."""
        kw = self.values()
        kw[name] = value
        return Point.of(kw, self.num_warps, self.num_stages)


def neighbours(point: Point, tiling: Sequence[str], hints: Optional[Mapping[str, Sequence[Any]]] = None,
               *, launch_options: bool = True, warps: Sequence[int] = WARPS,
               stages: Sequence[int] = tuple(range(MIN_STAGES, MAX_STAGES + 1))) -> List[Point]:
    """Every single move from ``point``: each tiling parameter x2 and /2 (integers >= 1), num_warps x2
    and /2 (within ``warps``), num_stages +-1 (within ``stages``), each other value of each hint.

    ``warps``/``stages`` are the values synthesis considers (a kernel with no
    loop to pipeline has ``stages == [1]``: no stage moves).
    ``launch_options=False`` leaves num_warps/num_stages alone (under the
    interpreter they change nothing).  The order is deterministic.
    """
    out: List[Point] = []
    values = point.values()
    for name in tiling:
        v = values.get(name)
        if not isinstance(v, int) or isinstance(v, bool):
            continue
        for w in (v * 2, v // 2):
            if w >= 1 and w != v:
                out.append(point.with_value(name, w))
    for name, options in (hints or {}).items():
        if name not in values:
            continue
        for w in options:
            if w != values[name]:
                out.append(point.with_value(name, w))
    if launch_options:
        if point.num_warps is not None:
            for w in (point.num_warps * 2, point.num_warps // 2):
                if w in warps:
                    out.append(Point(point.kwargs, w, point.num_stages))
        if point.num_stages is not None:
            for s in (point.num_stages + 1, point.num_stages - 1):
                if s in stages:
                    out.append(Point(point.kwargs, point.num_warps, s))
    seen, unique = set(), []
    for p in out:
        if p not in seen:
            seen.add(p)
            unique.append(p)
    return unique


def repeat_move(a: Point, b: Point, *, launch_options: bool = True, warps: Sequence[int] = WARPS,
                stages: Sequence[int] = tuple(range(MIN_STAGES, MAX_STAGES + 1))) -> Optional[Point]:
    """The point one more step along the single move ``a -> b`` (x2, /2, +-1), or None (not a repeatable
    move: a hint value, a bound, a change of more than one coordinate)."""
    av, bv = a.values(), b.values()
    changed = [k for k in set(av) | set(bv) if av.get(k) != bv.get(k)]
    if len(changed) == 1 and a.num_warps == b.num_warps and a.num_stages == b.num_stages:
        k = changed[0]
        x, y = av.get(k), bv.get(k)
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in (x, y)):
            return None
        z = y * y // x if y > x else y // (x // y) if x % y == 0 else 0
        return b.with_value(k, z) if z >= 1 and z != y else None
    if changed or not launch_options:
        return None
    if a.num_warps != b.num_warps and a.num_stages == b.num_stages and a.num_warps and b.num_warps:
        w = b.num_warps * b.num_warps // a.num_warps if b.num_warps > a.num_warps else b.num_warps // 2
        return Point(b.kwargs, w, b.num_stages) if w in warps and w != b.num_warps else None
    if a.num_stages != b.num_stages and a.num_warps == b.num_warps and a.num_stages and b.num_stages:
        s = b.num_stages + (b.num_stages - a.num_stages)
        return Point(b.kwargs, b.num_warps, s) if s in stages else None
    return None


def diverse_seeds(ranked: Sequence[Point], n: int) -> List[Point]:
    """The first ``n`` seeds of ``ranked`` (best first), each after the first from another tile than the
    seeds before it when one was measured (the two best configs often differ only in num_stages: one basin)."""
    seeds: List[Point] = []
    for p in ranked:
        if len(seeds) >= n:
            break
        if all(p.kwargs != q.kwargs for q in seeds):
            seeds.append(p)
    for p in ranked:  # fewer tiles than seeds: fill up in order
        if len(seeds) >= n:
            break
        if p not in seeds:
            seeds.append(p)
    return seeds


@dataclass
class DescentResult:
    """What the descent did: every measured time (None: failed), its moves, and why it stopped."""

    times: Dict[Point, Optional[float]]
    moves: List[Tuple[Point, Point, float]]
    measured: int
    rejected: int
    stopped: str


class Descent:
    """Coordinate descent over :class:`Point` s with memoised, batched measurements and a budget.

    ``measure(points) -> [ms or None]`` times a batch (compiling it first;
    None = failed); ``feasible(point) -> bool`` is the model's check, asked
    before anything is compiled; ``clock`` (seconds) is injectable for tests.
    ``started`` is when tuning began (the time budget counts the first batch).
    ``stop_round()`` (optional) may end the descent between rounds (a group
    of ranks agreeing to stop together).
    """

    def __init__(self, measure: Callable[[List[Point]], Sequence[Optional[float]]],
                 feasible: Callable[[Point], bool], policy: SearchPolicy, tiling: Sequence[str],
                 hints: Optional[Mapping[str, Sequence[Any]]] = None, *, launch_options: bool = True,
                 warps: Sequence[int] = WARPS, stages: Sequence[int] = tuple(range(MIN_STAGES, MAX_STAGES + 1)),
                 clock: Callable[[], float] = time.perf_counter, started: Optional[float] = None,
                 stop_round: Optional[Callable[[bool], bool]] = None):
        self.measure = measure
        self.feasible = feasible
        self.policy = policy
        self.tiling = list(tiling)
        self.hints = dict(hints or {})
        self.launch_options = launch_options
        self.moves_kw = {"launch_options": launch_options, "warps": tuple(warps), "stages": tuple(stages)}
        self.clock = clock
        self.started = clock() if started is None else started
        self.stop_round = stop_round
        self.times: Dict[Point, Optional[float]] = {}
        self.rejected: set = set()
        self.measured = 0

    def _over_budget(self) -> bool:
        p = self.policy
        return self.measured >= p.max_compiles or (self.clock() - self.started) >= p.max_seconds

    def _should_stop(self) -> bool:
        over = self._over_budget()
        if self.stop_round is not None:
            return self.stop_round(over)
        return over

    def run(self, measured: Mapping[Point, Optional[float]]) -> DescentResult:
        """Descend from the best of ``measured`` (the first batch's times) until no move gains or the
        budget is spent; returns every time known (first batch included)."""
        self.times.update(measured)
        moves: List[Tuple[Point, Point, float]] = []
        ok = sorted((t, p.signature(), p) for p, t in self.times.items() if t is not None)
        seeds = diverse_seeds([p for _, _, p in ok], max(1, self.policy.seeds))
        stopped = "no seed" if not seeds else "converged"
        visited_centres: set = set()
        for seed in seeds:
            centre = seed
            while True:
                if centre in visited_centres:
                    break
                visited_centres.add(centre)
                if self._should_stop():
                    return self._result(moves, "budget")
                around = neighbours(centre, self.tiling, self.hints, **self.moves_kw)
                fresh = [q for q in around if q not in self.times and q not in self.rejected]
                feasible = []
                for q in fresh:
                    if self.feasible(q):
                        feasible.append(q)
                    else:
                        self.rejected.add(q)
                room = self.policy.max_compiles - self.measured
                batch = feasible[:max(0, room)]
                if batch:
                    results = list(self.measure(batch))
                    self.measured += len(batch)
                    for q, t in zip(batch, results):
                        self.times[q] = t
                if len(batch) < len(feasible):
                    return self._result(moves, "budget")
                best_t = self.times[centre]
                cands = [(self.times[q], q.signature(), q) for q in around if self.times.get(q) is not None]
                if not cands or best_t is None:
                    break
                t, _, q = min(cands)
                if t < best_t * (1.0 - self.policy.gain):
                    moves.append((centre, q, t))
                    centre, over = self._extend(centre, q, moves)
                    if over:
                        return self._result(moves, "budget")
                    continue
                break
        return self._result(moves, stopped)

    def _extend(self, start: Point, end: Point, moves: List[Tuple[Point, Point, float]]) -> Tuple[Point, bool]:
        """Keep taking the move ``start -> end`` while it gains (one measurement a step): a long valley
        (num_warps 32 -> 1, a tile 128 -> 2) is walked in a step per halving, not a neighbourhood per halving.
        Returns ``(new centre, budget spent)``."""
        prev, cur = start, end
        while True:
            nxt = repeat_move(prev, cur, **self.moves_kw)
            if nxt is None or nxt in self.rejected:
                return cur, False
            if nxt not in self.times:
                if not self.feasible(nxt):
                    self.rejected.add(nxt)
                    return cur, False
                if self.measured >= self.policy.max_compiles or self._should_stop():
                    return cur, True
                (t,) = list(self.measure([nxt]))
                self.measured += 1
                self.times[nxt] = t
            t_cur, t_nxt = self.times[cur], self.times[nxt]
            if t_nxt is None or t_cur is None or not t_nxt < t_cur * (1.0 - self.policy.gain):
                return cur, False
            moves.append((cur, nxt, t_nxt))
            prev, cur = cur, nxt

    def _result(self, moves: List[Tuple[Point, Point, float]], stopped: str) -> DescentResult:
        return DescentResult(dict(self.times), moves, self.measured, len(self.rejected), stopped)
