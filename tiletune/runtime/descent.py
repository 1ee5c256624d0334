"""The coordinate descent: from the best measured configs, moves measured in batched rounds under a budget.

:class:`Descent` is the default search strategy's second phase (after the first batch; see
:mod:`tiletune.runtime.search` for the moves, the policies and the time budget, and
:mod:`tiletune.runtime.strategies` for the interface it runs behind).  Nothing here touches a device:
measuring is the caller's function.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .search import (MAX_STAGES, MIN_STAGES, WARPS, Point, SearchPolicy, neighbours, repeat_move, second_ring,
                     warp_steps, with_first_round)

__all__ = ["Descent", "DescentResult", "diverse_seeds"]


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
    """What the descent did: every measured time (None: failed), its moves, why it stopped, how many of its
    points filled idle compile slots, and how many seconds the budget grew by to hold its first round."""

    times: Dict[Point, Optional[float]]
    moves: List[Tuple[Point, Point, float]]
    measured: int
    rejected: int
    stopped: str
    filled: int = 0
    grown_s: float = 0.0


def _stage_step(a: Point, b: Point) -> int:
    """+1 when ``b`` has more num_stages than ``a``, -1 when fewer, 0 when the same or either has none."""
    if a.num_stages is None or b.num_stages is None:
        return 0
    return (b.num_stages > a.num_stages) - (b.num_stages < a.num_stages)


class Descent:
    """Coordinate descent over :class:`Point` s with memoised, batched measurements and a budget.

    ``measure(points) -> [ms or None]`` times a batch (compiling it first;
    None = failed); ``feasible(point) -> bool`` is the model's check, asked
    before anything is compiled; ``clock`` (seconds) is injectable for tests.
    ``started`` is when tuning began (the time budget counts the first batch).
    ``seconds`` is the time budget (default ``policy.max_seconds``; see
    :func:`time_budget`), of which ``reserve_s`` is kept for what follows the
    descent (re-timing the leaders).  A round is started only when its
    estimated cost fits: ``compile_s`` (one compile's latency) for every
    ``compile_workers`` of the round's points (that many compile side by
    side) plus ``point_s`` (the first batch's seconds per benchmark) a
    point.  ``compile_s`` starts as the first batch's latency (from handing
    the batch to the children, their forks and the compiler's warm-up not
    included); from the first round on it is the
    slowest wave a round has shown (what the round took beyond ``point_s`` a
    point, per wave).  When the whole round does not fit but some of its
    points do, those are measured (a partial round), and the descent goes
    on while anything fits.
    ``cost(point)`` (optional, the model's cost, None when unknown) orders
    each kind of move's points, and kinds take turns (:meth:`_in_turns`),
    so a round cut short by the budget or ``max_compiles`` measures the
    model's favourite of every kind before a second of any kind.
    ``agree_round(n) -> n`` (optional) agrees how many points a round
    measures with a group of ranks (the least over them; -1 stops).

    ``fill`` (optional) is every feasible point in the model's cost order:
    a whole round whose last compile wave has idle compile workers fills
    them with the best-ranked points not measured yet (:meth:`_fill`), as
    far as their timing fits the budget.  The wave is paid for either way,
    so a filled point costs only its timing; it reaches what the moves do
    not (a dip several moves from the basin the descent is in).  A filled
    point that beats every centre descended from becomes a centre itself
    (:meth:`_jump`).  Not under a process group (``agree_round``): the ranks
    would have to agree on the fill as well.

    ``ceiling_s`` (optional): where the first round's first compile wave no
    longer fits ``seconds``, the budget grows to hold it and the reserve, up
    to ``ceiling_s`` (:func:`~tiletune.runtime.search.with_first_round`,
    priced when the round is, after the descent's own set-up);
    ``on_grow(seconds)`` hears of it (the caller's deadline moves with it).
    """

    def __init__(self, measure: Callable[[List[Point]], Sequence[Optional[float]]],
                 feasible: Callable[[Point], bool], policy: SearchPolicy, tiling: Sequence[str],
                 hints: Optional[Mapping[str, Sequence[Any]]] = None, *, launch_options: bool = True,
                 warps: Sequence[int] = WARPS, stages: Sequence[int] = tuple(range(MIN_STAGES, MAX_STAGES + 1)),
                 clock: Callable[[], float] = time.perf_counter, started: Optional[float] = None,
                 agree_round: Optional[Callable[[int], int]] = None, seconds: Optional[float] = None,
                 reserve_s: float = 0.0, compile_s: float = 0.0, point_s: float = 0.0,
                 cost: Optional[Callable[["Point"], Optional[float]]] = None, compile_workers: int = 0,
                 fill: Sequence[Point] = (), ceiling_s: Optional[float] = None,
                 on_grow: Optional[Callable[[float], None]] = None):
        self.measure = measure
        self.feasible = feasible
        self.policy = policy
        self.tiling = list(tiling)
        self.hints = dict(hints or {})
        self.launch_options = launch_options
        self.moves_kw = {"launch_options": launch_options, "warps": tuple(warps), "stages": tuple(stages)}
        self.clock = clock
        self.started = clock() if started is None else started
        self.agree_round = agree_round
        self.cost = cost
        self.seconds = policy.max_seconds if seconds is None else seconds
        self.reserve_s = max(0.0, reserve_s)
        self.compile_s = max(0.0, compile_s)
        self._waves_seen = 0  # descent rounds measured (until the first, compile_s is the first batch's)
        self.point_s = max(0.0, point_s)  # seconds a point takes beyond its round's compile latency
        self.compile_workers = max(0, int(compile_workers))  # 0: every point of a round compiles at once
        self.times: Dict[Point, Optional[float]] = {}
        self.rejected: set = set()
        self.measured = 0
        self._kind: Dict[Point, Any] = {}  # the kind of move (from which centre) that first reached a point
        self._seeds: set = set()  # centres whose moves include num_warps x4 and /4 (:meth:`_around`)
        self.fill = list(fill) if agree_round is None else []
        self.filled: List[Point] = []  # the points measured in idle compile slots (:meth:`_fill`)
        self.ceiling_s = ceiling_s
        self.on_grow = on_grow
        self.grown_s = 0.0  # seconds the budget grew to hold the first round (:meth:`_hold_first_round`)

    def _compile_waves(self, n: int) -> int:
        return -(-n // self.compile_workers) if self.compile_workers else 1

    def _round_cost(self, n: int) -> float:
        return self.compile_s * self._compile_waves(n) + self.point_s * n if n else 0.0

    def _fit(self, n: int) -> int:
        """How many of a round's ``n`` points to measure: all when the round fits the budget, the first
        few when only they fit (a partial round), -1 when nothing more fits (stop)."""
        now = self.clock() - self.started
        room = self.policy.max_compiles - self.measured
        if room > 0 and n > 0 and self.measured == 0:
            self._hold_first_round(min(n, room), now)
        left = self.seconds - self.reserve_s - now
        if left <= 0 or room <= 0:
            return -1
        n = min(n, room)
        if n == 0 or left > self._round_cost(n):
            return n
        few = max((k for k in range(1, n) if left > self._round_cost(k)), default=0)
        return few if few >= 1 else -1

    def _hold_first_round(self, n: int, now: float) -> None:
        """Grow the budget to hold the first compile wave of the first round (``n`` points) and the reserve,
        with a point of slack, where it no longer fits and ``ceiling_s`` allows (see :class:`Descent`)."""
        if self.ceiling_s is None:
            return
        k = min(n, self.compile_workers) if self.compile_workers else n
        grown = with_first_round(self.seconds, now, self.reserve_s, self._round_cost(k) + self.point_s, self.ceiling_s)
        if grown > self.seconds:
            self.grown_s += grown - self.seconds
            self.seconds = grown
            if self.on_grow is not None:
                self.on_grow(grown)

    def _agreed_fit(self, n: int) -> int:
        """:meth:`_fit`, agreed with the group (once a round: one exchange under a process group)."""
        k = self._fit(n)
        return k if self.agree_round is None else int(self.agree_round(k))

    def _by_cost(self, points: List[Point]) -> List[Point]:
        """``points`` in the model's cost order (unknown costs last; ties keep the move order)."""
        if self.cost is None:
            return points
        costs = {q: self.cost(q) for q in points}
        return sorted(points, key=lambda q: (costs[q] is None, costs[q] or 0.0))

    def _in_turns(self, points: List[Point]) -> List[Point]:
        """``points`` in the order a round the budget cuts measures them: each kind of move from each centre
        (:meth:`_fresh`, :meth:`_ring_move`) has its turn, the model's favourite of that kind first, before
        any kind has its second; kinds take turns in the order of their favourites' costs.

        A round ordered by the model alone measures what the model already likes and cuts the moves it
        ranks low, which are the ones that correct it (on the H100: BLOCK_SIZE_N 64 -> 32 on matmul
        96x5000x4096, the best config one move away)."""
        groups: Dict[Any, List[Point]] = {}
        for q in self._by_cost(points):
            groups.setdefault(self._kind.get(q, q), []).append(q)
        lists = list(groups.values())
        return [lst[i] for i in range(max(map(len, lists), default=0)) for lst in lists if i < len(lst)]

    def _note_kinds(self, centre: Point, points: Sequence[Point], ring: bool = False) -> None:
        """Remember, for each of ``points`` not seen before, which kind of move from ``centre`` reaches it: the
        parameters it changes, num_warps one step or two (kinds of their own), and num_stages up, down or not
        (each direction a kind of its own: the model barely tells a tiling's stage variants apart, so the first
        batch takes the fewest stages within :data:`~.search.COMPILE_TIE` and leaves the stages to the
        descent, and the model's favourite direction is no better than the other; on the H200,
        flash_attention's model ranked 6, 5, 4, 3 stages in that order, the best known has 3, and the first
        tunes whose cut rounds took only the favourite, 6, never timed 4)."""
        a = centre.values()
        for q in points:
            if q in self._kind:
                continue
            b = q.values()
            changed = [k for k in sorted(set(a) | set(b), key=str) if a.get(k) != b.get(k)]
            self._kind[q] = (centre, ring, tuple(changed), warp_steps(centre, q), _stage_step(centre, q))

    def _measure(self, batch: List[Point]) -> List[Optional[float]]:
        t0 = self.clock()
        results = list(self.measure(batch))
        # the round's compile latency, measured: the first batch's (the estimate until now) comes from
        # children compiling for the first time, and later rounds may compile faster
        elapsed = self.clock() - t0
        seen = max(0.0, elapsed - self.point_s * len(batch)) / self._compile_waves(len(batch))
        # the slowest wave of the descent so far: a round of one point compiles alone, faster than a
        # full wave whose compiles share the cores, and must not price the next full round
        self.compile_s = seen if self._waves_seen == 0 else max(self.compile_s, seen)
        self._waves_seen += 1
        self.measured += len(batch)
        for q, t in zip(batch, results):
            self.times[q] = t
        return results

    def run(self, measured: Mapping[Point, Optional[float]]) -> DescentResult:
        """Descend from the best of ``measured`` (the first batch's times) until no move gains or the
        budget is spent; returns every time known (first batch included).

        With several seeds, the first round measures every seed's
        neighbourhood together (one compile latency for all of them), and the
        descent goes on first from the seed whose neighbourhood holds the best
        time: first-batch times within noise of each other no longer decide
        alone which basin the budget is spent in."""
        moves: List[Tuple[Point, Point, float]] = []
        seeds = self._take_seeds(measured)
        stopped = "no seed" if not seeds else "converged"
        if len(seeds) > 1:
            if self._round(self._fresh(seeds)) is None:
                return self._result(moves, "budget")
            seeds.sort(key=self._best_near)
        converged: set = set()
        while seeds:
            centre = seeds.pop(0)
            while centre not in converged:
                whole = self._round(self._fresh([centre]))
                move = self._best_move(centre)
                if whole is None:  # nothing more fits the budget
                    if move is not None:
                        moves.append(move)
                    return self._result(moves, "budget")
                if move is None and whole:
                    move = self._ring_move(centre)  # no single step gains: probe two steps out
                if move is None:
                    if whole:
                        converged.add(centre)
                    continue  # a partial round found nothing yet: measure more of this neighbourhood
                converged.add(centre)  # left for a better centre: not to be descended from again
                moves.append(move)
                centre, over = self._extend(centre, move[1], moves)
                if over:
                    return self._result(moves, "budget")
            jump = self._jump(converged) if not seeds else None
            if jump is not None:
                moves.append(jump)
                seeds.append(jump[1])
        return self._result(moves, stopped)

    def _take_seeds(self, measured: Mapping[Point, Optional[float]]) -> List[Point]:
        """Record ``measured`` and return the seeds the descent starts from (:func:`diverse_seeds`, best first)."""
        self.times.update(measured)
        ok = sorted((t, p.signature(), p) for p, t in self.times.items() if t is not None)
        seeds = diverse_seeds([p for _, _, p in ok], max(1, self.policy.seeds))
        self._seeds = set(seeds)
        return seeds

    def first_round(self, measured: Mapping[Point, Optional[float]]) -> List[Point]:
        """The points of the first round :meth:`run` would measure after ``measured`` (the first batch's
        times), in the order a round the budget cuts measures them (:meth:`_in_turns`); nothing is measured.
        For replaying a recorded first tune's round offline (``bench/round_order_replay.py``)."""
        return self._in_turns(self._fresh(self._take_seeds(measured)))

    def _fresh(self, centres: Sequence[Point]) -> List[Point]:
        """The feasible neighbours of ``centres`` not measured yet (see :meth:`_unmeasured`)."""
        around: List[Point] = []
        for c in centres:
            near = self._around(c)
            self._note_kinds(c, near)
            around.extend(near)
        return self._unmeasured(around)

    def _around(self, centre: Point) -> List[Point]:
        """The moves from ``centre`` (:func:`neighbours`; num_warps x4 and /4 too from a seed)."""
        return neighbours(centre, self.tiling, self.hints, far_warps=centre in self._seeds, **self.moves_kw)

    def _unmeasured(self, points: Sequence[Point]) -> List[Point]:
        """The feasible ``points`` not measured yet, each once, in order (the model's rejects are
        remembered, never measured)."""
        out: List[Point] = []
        for q in points:
            if q in self.times or q in self.rejected or q in out:
                continue
            if self.feasible(q):
                out.append(q)
            else:
                self.rejected.add(q)
        return out

    def _round(self, points: List[Point]) -> Optional[bool]:
        """Measure ``points`` as far as the budget allows (:meth:`_in_turns`): True when
        all were measured, False when only some (a partial round), None when none fit (stop)."""
        k = self._agreed_fit(len(points))
        if k < 0:
            return None
        if k:
            batch = self._in_turns(points)[:k]
            self._measure(batch + (self._fill(batch) if k == len(points) else []))
        return k == len(points)

    def _fill(self, batch: Sequence[Point]) -> List[Point]:
        """The best-ranked points of ``fill`` not measured yet, for the compile workers ``batch``'s last wave
        leaves idle, as many as the budget's time and ``max_compiles`` allow beside ``batch``.  One
        ``num_stages`` variant of a config at most (a stage is one move away); the model's rejects never."""
        if not self.fill or not self.compile_workers:
            return []
        idle = -len(batch) % self.compile_workers
        left = self.seconds - self.reserve_s - (self.clock() - self.started)
        room = self.policy.max_compiles - self.measured - len(batch)
        tiles = {(q.kwargs, q.num_warps) for q in list(self.times) + list(batch)}
        out: List[Point] = []
        for q in self.fill:
            if len(out) >= min(idle, room) or not left > self._round_cost(len(batch) + len(out) + 1):
                break
            if (q.kwargs, q.num_warps) in tiles or q in self.rejected:
                continue
            if not self.feasible(q):
                self.rejected.add(q)
                continue
            tiles.add((q.kwargs, q.num_warps))
            out.append(q)
        self.filled.extend(out)
        return out

    def _jump(self, converged: set) -> Optional[Tuple[Point, Point, float]]:
        """``(best centre, p, time)`` when a filled point ``p`` beats every centre descended from by more than
        ``gain`` (it becomes a centre), else None."""
        centres = [(self.times[c], c.signature(), c) for c in converged if self.times.get(c) is not None]
        if not centres:
            return None
        best = min(centres)[2]
        return self._gaining(best, [q for q in self.filled if q not in converged])

    def _gaining(self, centre: Point, points: Sequence[Point]) -> Optional[Tuple[Point, Point, float]]:
        """``(centre, q, time)`` for the fastest measured ``q`` of ``points`` when it gains more than
        ``gain`` over ``centre``, else None."""
        best_t = self.times.get(centre)
        cands = [(self.times[q], q.signature(), q) for q in points if self.times.get(q) is not None]
        if not cands or best_t is None:
            return None
        t, _, q = min(cands)
        return (centre, q, t) if t < best_t * (1.0 - self.policy.gain) else None

    def _best_move(self, centre: Point) -> Optional[Tuple[Point, Point, float]]:
        """The move to ``centre``'s best measured neighbour, when it gains (see :meth:`_gaining`)."""
        return self._gaining(centre, self._around(centre))

    def _ring_move(self, centre: Point) -> Optional[Tuple[Point, Point, float]]:
        """Measure :func:`second_ring` of ``centre`` (what the budget allows); the move to its best point
        when that gains, else None."""
        ring = second_ring(centre, self.tiling, launch_options=self.moves_kw["launch_options"],
                           warps=self.moves_kw["warps"])
        self._note_kinds(centre, ring, ring=True)
        self._round(self._unmeasured(ring))
        return self._gaining(centre, ring)

    def _best_near(self, centre: Point) -> Tuple[float, str]:
        """The best time measured at ``centre`` or one move from it (the order seeds are descended in)."""
        around = [centre] + self._around(centre)
        known = [self.times[q] for q in around if self.times.get(q) is not None]
        return (min(known) if known else float("inf"), centre.signature())

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
                if self._agreed_fit(1) < 1:
                    return cur, True
                self._measure([nxt])
            t_cur, t_nxt = self.times[cur], self.times[nxt]
            if t_nxt is None or t_cur is None or not t_nxt < t_cur * (1.0 - self.policy.gain):
                return cur, False
            moves.append((cur, nxt, t_nxt))
            prev, cur = cur, nxt

    def _result(self, moves: List[Tuple[Point, Point, float]], stopped: str) -> DescentResult:
        return DescentResult(dict(self.times), moves, self.measured, len(self.rejected), stopped, len(self.filled),
                             self.grown_s)
