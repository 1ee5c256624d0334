"""The measured search: an adaptive first batch, then coordinate descent from the best measured configs.

The cost model ranks the feasible tilings; measuring a fixed top-k of that
ranking misses the winner where the model is wrong (few programs per wave,
fused epilogues, persistent kernels).  So the search measures, and moves:

1. **first batch** (:func:`first_batch_size`): the leading candidates of the
   model's ranking; few where the model is decisive (a clear cost gap after
   the leaders), more where the leaders' costs are close;
2. **coordinate descent** (:class:`~tiletune.runtime.descent.Descent`, after PyTorch Inductor's
   coordinate-descent tuner, but seeded with the best *measured* configs and
   never compiling a neighbour the feasibility model rejects): from each seed,
   every move -- a tiling parameter x2 or /2, ``num_warps`` x2 or /2,
   ``num_stages`` +-1, another value of a hint, and a tiling parameter and
   ``num_warps`` scaled together (x2 or /2 both: the same work per thread),
   a tiling parameter scaled against ``num_stages`` (the same bytes in flight)
   -- is measured (memoised); the best neighbour becomes the new centre when
   it gains more than ``gain`` (1%); a seed's moves include ``num_warps``
   x4 and /4 (the model's warp count is checked two steps out from the
   start); the descent stops when no move gains,
   or when the budget is spent.  Where no move gains, the second ring
   (:func:`second_ring`: x4 and /4) is probed before the centre counts as
   converged.  The seeds' first neighbourhoods are measured in one round;
   a round the budget cannot hold whole measures the moves that fit, each
   kind of move from each centre in turn (the model's favourite of a kind
   first), and the descent goes on while any move fits.

The budget (:func:`time_budget`) is priced in what the author's hand list
would cost: ``hand_lists`` x a list of :data:`HAND_LIST_CONFIGS` configs,
each compiled (at the compile time measured for this kernel in the first
batch) and timed by ``triton.autotune``'s default benchmark
(:data:`STOCK_BENCH_S`).  A round that would not fit is not started.

``search=`` on the autotuner, else ``TILETUNE_SEARCH``, picks a
:class:`SearchPolicy`: ``"fast"``, ``"default"`` or ``"exhaustive"``
(every feasible candidate the model enumerates, up to a cap; no descent).
Under ``TRITON_INTERPRET=1`` with neither set, the ranked list is measured
once without a descent (interpreter times mean nothing).
Nothing here touches a device: measuring is the caller's function.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

__all__ = [
    "SearchPolicy",
    "SEARCH_MODES",
    "resolve_search",
    "first_batch_size",
    "first_batch",
    "whole_space_batch",
    "refill",
    "neighbours",
    "repeat_move",
    "second_ring",
    "warp_steps",
    "config_signature",
    "time_budget",
    "with_first_round",
    "HAND_LIST_CONFIGS",
    "STOCK_BENCH_S",
    "COMPILE_TIE",
    "STRATEGY_NAMES",
]

#: ``num_warps`` values a move may reach, ``num_stages`` bounds (Triton on sm80/sm90).
WARPS = (1, 2, 4, 8, 16, 32)
MIN_STAGES, MAX_STAGES = 1, 7

#: The yardstick of the time budget: the author's hand list as ``triton.autotune`` tunes it -- each config
#: compiled, then timed by ``do_bench(warmup=25, rep=100)``.  Literal lists in torchao 0.18.0 and gemlite
#: 0.6.0.post2 have 1-8 configs (median 4 over 41 lists), the fixtures' 3-8 (median 5, as over the 42
#: pairs of the H100 benchmark).  The price of a config is low: on the H100 a hand-list config cost
#: triton.autotune 1.2x (compile_s + STOCK_BENCH_S) (median over 42 pairs; compiling in the tuning
#: process is slower than in a child), so 5 priced configs cost about 0.83 of the median list of 5.
#: Priced at 5 before the first batch got cheaper (s21a-e, bench/results/gpu_bench_search.md), the descent
#: ran in only 16-23 of the 42 pairs; with the launcher built beside the first compiles and the forks
#: staged (median first batch 0.55 s against 0.78-0.84 s), it ran in 32-35 (s22c-d), and the median first
#: tune was 1.33-1.36 s against the hand lists' 1.71-1.75 s.
HAND_LIST_CONFIGS = 5
STOCK_BENCH_S = 0.125


@dataclass(frozen=True)
class SearchPolicy:
    """How much to measure for one key.

    ``first_min``/``first_max``: the first batch's size range (chosen by
    :func:`first_batch_size` from the cost gap); ``decisive_gap``: the
    relative cost gap after which the model counts as decisive; ``descent``:
    run the coordinate descent; ``seeds``: how many of the best measured
    configs it starts from; ``gain``: the smallest relative gain that moves
    the centre; ``max_compiles``/``max_seconds``: the descent's budget (new
    configs measured, wall seconds since tuning began); ``hand_lists``: the
    time budget in hand-list costs (:func:`time_budget`; None: only
    ``max_seconds``); ``hand_lists_max``: where the first batch leaves the
    time budget no room for a descent round, the budget grows to hold one,
    up to this many hand lists (:func:`with_first_round`; None: never);
    ``synth_top_k``: how many ranked candidates synthesis
    returns (the pool the first batch draws from; ``exhaustive`` asks for
    many); ``strategy``: the registered search strategy that measures after
    the first batch (:mod:`~tiletune.runtime.strategies`; ``descent`` by default).
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
    hand_lists: Optional[float] = None
    hand_lists_max: Optional[float] = None
    synth_top_k: int = 16
    strategy: str = "descent"


#: The modes.  ``default`` spends at most 0.7 of what the author's hand list would (``hand_lists=0.7``:
#: issue 25's goal for a cold first tune against the hand list), ``fast`` half that; each descent round
#: compiles its neighbours in parallel.  At ``hand_lists=1`` the H100 cold bench's slow-compiling pairs
#: (block_ptr_matmul, batched_matmul: 0.8-1.6 s a compile) ended at 1.2-1.4x their hand lists
#: (bench/results/first_tune_cold_runs/h100_2b1483f_first_tune_cold.md, 2026-11-26).  Where the first batch
#: leaves no room for one descent round, the budget grows to hold it, up to ``hand_lists_max``: on the H200 at
#: 2e11a26, 7 of 21 cold first tunes ran no descent (matmul-family kernels, a compile wave of 0.3-1.9 s against
#: 0.35-1.3 s left), and the held-out skinny_linear_act stayed 6.4% behind its hand list for the want of one
#: round, which a second run, its budget 1 s larger, spent to reach the best known.  ``hand_lists_max`` is 0.9
#: for ``default``: a first tune may end up to 10% past its deadline (the compile or timing under way then), so
#: 0.9 keeps a first tune that buys its round within one hand list (at 1.0, block_ptr_matmul's ceiling on the
#: H200 at 4f412b0 was 7.99 s against its hand list's 8.05 s).
SEARCH_MODES: Dict[str, SearchPolicy] = {
    "fast": SearchPolicy("fast", first_min=2, first_max=4, seeds=1, max_compiles=8, max_seconds=3.0,
                         hand_lists=0.35, hand_lists_max=0.5, synth_top_k=8),
    "default": SearchPolicy("default", first_min=3, first_max=8, seeds=2, max_compiles=40, max_seconds=8.0,
                            hand_lists=0.7, hand_lists_max=0.9, synth_top_k=16),
    "exhaustive": SearchPolicy("exhaustive", first_min=100_000, first_max=100_000, descent=False,
                               max_compiles=0, max_seconds=float("inf"), synth_top_k=100_000),
}


#: Names of the registered search strategies (runtime/strategies.py registers into it): ``search="<name>"``
#: runs the default mode's first batch and budget with that strategy after it.
STRATEGY_NAMES: set = set()


def resolve_search(search: Any = None, breadth: float = 1.0) -> SearchPolicy:
    """The policy for ``search=`` (a mode name, a registered strategy's name, or a :class:`SearchPolicy`),
    else ``TILETUNE_SEARCH``, else default.

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
        if key in SEARCH_MODES:
            policy = SEARCH_MODES[key]
        elif key in STRATEGY_NAMES:  # the default search with another strategy after its first batch
            policy = replace(SEARCH_MODES["default"], name=key, strategy=key)
        else:
            where = "search=" if search is not None else "TILETUNE_SEARCH"
            raise ValueError(f"tiletune: {where}{name!r} is not a search mode or strategy; use one of "
                             f"{', '.join(map(repr, list(SEARCH_MODES) + sorted(STRATEGY_NAMES)))}")
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


def time_budget(policy: SearchPolicy, compile_s: Optional[float], setup_s: float = 0.0) -> float:
    """Seconds the whole search may take: ``max_seconds``, and at most ``hand_lists`` hand lists.

    A hand list costs :data:`HAND_LIST_CONFIGS` x (``compile_s`` +
    :data:`STOCK_BENCH_S`), ``compile_s`` being the seconds one config of
    this kernel took to compile (measured); unknown (nothing compiled: the
    binaries were cached, or the interpreter) leaves ``max_seconds``.
    ``setup_s`` is what this search spent on once-per-process set-up (the
    driver, the kernel's first binding, the compiler's warm-up): a hand list
    tuned first in the process pays it too, so it is added to the hand lists.
    """
    if policy.hand_lists is None or compile_s is None:
        return policy.max_seconds
    hand = HAND_LIST_CONFIGS * (max(0.0, compile_s) + STOCK_BENCH_S)
    return min(policy.max_seconds, policy.hand_lists * hand + max(0.0, setup_s))


def with_first_round(seconds: float, elapsed: float, reserve_s: float, round_s: float, ceiling: float) -> float:
    """The descent's time budget made to hold its first round: where a round of ``round_s`` no longer fits
    ``seconds`` after the ``elapsed`` seconds with ``reserve_s`` kept back (the re-timing), the seconds at
    which that round and the reserve end, when that is within ``ceiling``; else ``seconds``.

    A search that measures only its first batch measures the model's picks: the descent is what corrects
    the model, so one round of it is worth a little more time.  ``ceiling`` bounds that
    (``hand_lists_max`` hand lists, :func:`time_budget`); a round past it is not bought at all.
    """
    need = elapsed + reserve_s + round_s
    return need if seconds < need <= ceiling else seconds


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


def whole_space_batch(n: int, pool: int, space: int, workers: int) -> int:
    """The first batch's size: ``n`` (:func:`first_batch_size`), or the whole ``pool`` where it holds every
    feasible config the model enumerated (``space`` of them) and one wave of the ``workers`` compiles side by
    side holds it.  A compile wave costs about the same whatever number of its slots are used, so the whole
    space measured at once ends the search in one wave: on the H200 (2026-11-29) rms_norm M=100,N=3000 and
    softmax 100x3000, spaces of 6, took a first batch of 3 and a descent of 3 in two waves (0.44-0.88 s a
    wave), 0.80-1.06 and 0.88 of their hand lists."""
    return pool if 0 < space <= pool <= workers else n


#: Modelled costs within this fraction of each other are ones the model cannot tell apart: among the
#: ``num_stages`` variants of a tiling that close to its best, the first batch takes the one with the fewest
#: stages (cheaper to compile, less shared memory).  Twice the descent's smallest gain (``gain``, 1%): a
#: difference the search itself would not act on is not one to pay compile time for.
COMPILE_TIE = 0.02


def first_batch(tilings: Sequence[Any], n: int, costs: Optional[Sequence[Optional[float]]] = None,
                stages: Optional[Sequence[Optional[int]]] = None) -> List[int]:
    """Which ``n`` of the ranked candidates to measure first: indices, best ranked first.

    ``tilings[i]`` is candidate ``i``'s tiling without ``num_stages`` (its
    keyword values and ``num_warps``).  Each slot goes to the best-ranked
    candidate of a tiling not yet in the batch; ``num_stages`` variants of a
    tiling already chosen only fill slots left over.  The model ranks
    stage variants side by side (their modelled costs barely differ), and
    measuring them spends the batch on one basin, while a stage is one move
    of the descent away.  With ``costs`` and ``stages`` (per candidate), a
    tiling's slot goes to its variant with the fewest stages among those
    within :data:`COMPILE_TIE` of its best-ranked one's cost (where the model
    cannot tell them apart, the one cheaper to compile).
    """
    chosen: List[int] = []
    seen: set = set()
    for i, t in enumerate(tilings):
        if len(chosen) >= n:
            return chosen
        if t not in seen:
            seen.add(t)
            chosen.append(_cheapest_tied(i, tilings, costs, stages))
    for i in range(len(tilings)):
        if len(chosen) >= n:
            break
        if i not in chosen:
            chosen.append(i)
    return sorted(chosen)


def refill(tilings: Sequence[Any], taken: Any, n: int) -> List[int]:
    """The next ``n`` ranked candidates to measure in place of first-batch candidates Triton refused: indices
    of ``tilings`` (candidate ``i``'s tiling, as :func:`first_batch` takes them, best ranked first) not in
    ``taken`` (in the batch, timed or dropped), a tiling not met yet before another variant of one met."""
    met = {tilings[i] for i in taken if 0 <= i < len(tilings)}
    fresh: List[int] = []
    for i, t in enumerate(tilings):
        if i not in taken and t not in met:
            met.add(t)
            fresh.append(i)
    rest = [i for i in range(len(tilings)) if i not in taken and i not in fresh]
    return (fresh + rest)[:max(0, n)]


def _cheapest_tied(i: int, tilings: Sequence[Any], costs: Optional[Sequence[Optional[float]]],
                   stages: Optional[Sequence[Optional[int]]]) -> int:
    """Candidate ``i`` (a tiling's best-ranked), or its variant with the fewest stages within COMPILE_TIE."""
    if costs is None or stages is None or costs[i] is None or stages[i] is None:
        return i
    limit = costs[i] * (1.0 + COMPILE_TIE)
    tied = [j for j in range(i, len(tilings)) if tilings[j] == tilings[i] and costs[j] is not None
            and stages[j] is not None and costs[j] <= limit]
    return min(tied, key=lambda j: (stages[j], j))


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


def _counts(point: Point, tiling: Sequence[str]) -> List[Tuple[str, int]]:
    """The tiling parameters of ``point`` that hold a count (moves scale them; others are left alone)."""
    values = point.values()
    return [(name, values[name]) for name in tiling
            if isinstance(values.get(name), int) and not isinstance(values.get(name), bool)]


def _scaled(point: Point, counts: Sequence[Tuple[str, int]], factor: int) -> List[Point]:
    """Each count of ``counts`` times and over ``factor`` (integers >= 1), one at a time."""
    return [point.with_value(name, w) for name, v in counts for w in (v * factor, v // factor) if w >= 1 and w != v]


def _warps_scaled(point: Point, factor: int, warps: Sequence[int]) -> List[Point]:
    """``point`` with num_warps times and over ``factor`` (within ``warps``)."""
    if point.num_warps is None:
        return []
    return [Point(point.kwargs, w, point.num_stages) for w in (point.num_warps * factor, point.num_warps // factor)
            if w in warps]


def neighbours(point: Point, tiling: Sequence[str], hints: Optional[Mapping[str, Sequence[Any]]] = None,
               *, launch_options: bool = True, warps: Sequence[int] = WARPS,
               stages: Sequence[int] = tuple(range(MIN_STAGES, MAX_STAGES + 1)),
               far_warps: bool = False) -> List[Point]:
    """Every move from ``point``: each tiling parameter x2 and /2 (integers >= 1), num_warps x2
    and /2 (within ``warps``), num_stages +-1 (within ``stages``), each other value of each hint,
    each tiling parameter scaled with num_warps (both x2, or both /2), and each tiling parameter
    scaled against num_stages (/2 with x2, or x2 with /2; clipped to ``stages``).

    The paired moves keep what single moves break.  Tile with warps keeps the
    work per thread: from a big tile on many warps, the small-tile few-warp
    corner is a straight line, where single moves first pass through worse
    points (a small tile on many idle warps) and stop there.  Tile against
    stages keeps the bytes in flight in the software pipeline (stages x the
    tile's bytes per stage): from a deep tile at few stages, halving the tile
    alone shortens the prefetch and adding stages alone overflows shared
    memory, while the shallower tile at twice the stages does neither.

    ``far_warps`` adds num_warps x4 and /4.  The response to num_warps is
    not a bowl: a warp count changes how a tile is laid out over threads
    (the elements each thread holds, its vector width) and how many programs
    an SM keeps resident, and one step can be worse where two are better (on
    the H100, layer_norm 4096x1151 at BLOCK_SIZE=256 timed 26.1 us at 1
    warp, 27.2 at 2 and 23.8 at 4, in each of six runs).  The descent asks
    for them around its seeds, the model's picks, whose warp count no
    measurement has checked yet.

    ``warps``/``stages`` are the values synthesis considers (a kernel with no
    loop to pipeline has ``stages == [1]``: no stage moves).
    ``launch_options=False`` leaves num_warps/num_stages alone (under the
    interpreter they change nothing).  The order is deterministic.
    """
    values = point.values()
    counts = _counts(point, tiling)
    out: List[Point] = _scaled(point, counts, 2)
    for name, options in (hints or {}).items():
        if name not in values:
            continue
        for w in options:
            if w != values[name]:
                out.append(point.with_value(name, w))
    if launch_options:
        out.extend(_warps_scaled(point, 2, warps))
        if far_warps:
            out.extend(_warps_scaled(point, 4, warps))
        if point.num_stages is not None:
            for s in (point.num_stages + 1, point.num_stages - 1):
                if s in stages:
                    out.append(Point(point.kwargs, point.num_warps, s))
        if point.num_warps is not None:
            for name, v in counts:
                for f_up in (True, False):
                    tile, w = (v * 2, point.num_warps * 2) if f_up else (v // 2, point.num_warps // 2)
                    if tile >= 1 and tile != v and w in warps:
                        out.append(Point(point.with_value(name, tile).kwargs, w, point.num_stages))
        if point.num_stages is not None and len(stages) > 1:
            deepest, shallowest = max(stages), min(stages)
            for name, v in counts:
                for tile, s in ((v // 2, min(deepest, point.num_stages * 2)),
                                (v * 2, max(shallowest, point.num_stages // 2))):
                    if tile >= 1 and tile != v and s != point.num_stages and s in stages:
                        out.append(Point(point.with_value(name, tile).kwargs, point.num_warps, s))
    seen, unique = set(), []
    for p in out:
        if p not in seen:
            seen.add(p)
            unique.append(p)
    return unique


def second_ring(point: Point, tiling: Sequence[str], *, launch_options: bool = True,
                warps: Sequence[int] = WARPS) -> List[Point]:
    """The moves two steps out: each tiling parameter x4 and /4, num_warps x4 and /4 (within ``warps``).

    Probed where no move of :func:`neighbours` gains: a minimum that one
    worse step separates from a better point (on the H100, layer_norm
    4096x1151 timed 26.0 us at 1 warp, 26.6 at 2 and 24.0 at 4) is a
    minimum only for single steps.
    """
    return _scaled(point, _counts(point, tiling), 4) + (_warps_scaled(point, 4, warps) if launch_options else [])


def warp_steps(a: Point, b: Point) -> int:
    """How many doublings or halvings of num_warps lead from ``a`` to ``b`` (0 when either has none)."""
    if not a.num_warps or not b.num_warps or a.num_warps == b.num_warps:
        return 0
    hi, lo = max(a.num_warps, b.num_warps), min(a.num_warps, b.num_warps)
    return (hi // lo).bit_length() - 1


def repeat_move(a: Point, b: Point, *, launch_options: bool = True, warps: Sequence[int] = WARPS,
                stages: Sequence[int] = tuple(range(MIN_STAGES, MAX_STAGES + 1))) -> Optional[Point]:
    """The point one more step along the move ``a -> b`` (x2, /2, num_warps x4 or /4, +-1, or a tiling
    parameter and num_warps scaled together), or None (not a repeatable move: a hint value, a bound, any
    other change)."""
    av, bv = a.values(), b.values()
    changed = [k for k in set(av) | set(bv) if av.get(k) != bv.get(k)]
    if len(changed) == 1 and a.num_warps == b.num_warps and a.num_stages == b.num_stages:
        k = changed[0]
        x, y = av.get(k), bv.get(k)
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in (x, y)):
            return None
        z = y * y // x if y > x else y // (x // y) if x % y == 0 else 0
        return b.with_value(k, z) if z >= 1 and z != y else None
    if len(changed) == 1 and launch_options and a.num_stages == b.num_stages and a.num_warps and b.num_warps:
        # a tiling parameter and num_warps scaled together: scale both once more
        k = changed[0]
        x, y = av.get(k), bv.get(k)
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in (x, y)):
            return None
        up = y > x
        if up != (b.num_warps > a.num_warps):
            return None
        z, w = (y * 2, b.num_warps * 2) if up else (y // 2, b.num_warps // 2)
        if z < 1 or w not in warps:
            return None
        return Point(b.with_value(k, z).kwargs, w, b.num_stages)
    if changed or not launch_options:
        return None
    if a.num_warps != b.num_warps and a.num_stages == b.num_stages and a.num_warps and b.num_warps:
        square = b.num_warps * b.num_warps  # the same factor once more: x2, /2, x4 or /4
        w = square // a.num_warps if square % a.num_warps == 0 else 0
        return Point(b.kwargs, w, b.num_stages) if w in warps and w != b.num_warps else None
    if a.num_stages != b.num_stages and a.num_warps == b.num_warps and a.num_stages and b.num_stages:
        s = b.num_stages + (b.num_stages - a.num_stages)
        return Point(b.kwargs, b.num_warps, s) if s in stages else None
    return None
