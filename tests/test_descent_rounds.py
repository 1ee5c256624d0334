"""The descent's rounds (runtime/descent.py): rounds cut by the budget or the compile count, the joint first
round of the seeds, rounds priced in waves of compiles, the second ring.  Clocks and timings are injected."""

from __future__ import annotations

import math

from tiletune.runtime.descent import Descent
from tiletune.runtime.search import Point, SearchPolicy, neighbours
from tests.search_helpers import bowl


def test_a_round_the_budget_cannot_hold_whole_measures_the_models_favourites_that_fit():
    """0.5 s compile latency a round, 0.1 s a point; every move's time is 1.0 (the seed 'took' 1e9): the
    first round moves the centre, the repeat of its move gains nothing, and the budget leaves room for
    3.5 points of the next round: the 3 the model likes best are measured, then the descent stops."""
    now = [0.0]
    measured: list = []

    def measure(points):
        now[0] += 0.5 + 0.1 * len(points)
        measured.append(list(points))
        return [1.0 for _ in points]

    def model_cost(p):  # the model prefers many warps, then small BM
        return 1.0 / p.num_warps + 0.001 * p.values()["BM"]

    start = Point.of({"BM": 256, "BN": 4}, 4, 3)
    n1 = len(neighbours(start, ["BM", "BN"], far_warps=True))  # a seed's moves
    seconds = (0.5 + 0.1 * n1) + 0.6 + 0.5 + 0.35  # round 1, the repeated move, 3.5 points of round 2
    d = Descent(measure, lambda p: True, SearchPolicy("t", 1, 1, seeds=1, max_compiles=10_000, max_seconds=1e9),
                ["BM", "BN"], clock=lambda: now[0], started=0.0, seconds=seconds, compile_s=0.5, point_s=0.1,
                cost=model_cost)
    result = d.run({start: 1.0e9})
    assert result.stopped == "budget" and now[0] <= seconds
    first, repeat, partial = measured
    assert len(first) == n1 and len(repeat) == 1 and len(partial) == 3
    centre = result.moves[0][1]
    fresh = [q for q in neighbours(centre, ["BM", "BN"]) if q not in first + repeat and q != start]
    assert len(fresh) > 3 and partial == sorted(fresh, key=model_cost)[:3]  # the model's favourites


def test_a_round_cut_by_the_compile_count_keeps_the_models_favourites():
    def model_cost(p):
        return -p.values()["BN"] - p.num_warps  # the model likes big BN and many warps

    start = Point.of({"BM": 64, "BN": 64}, 4, 3)
    measured: list = []

    def measure(points):
        measured.extend(points)
        return [1.0 for _ in points]

    d = Descent(measure, lambda p: True, SearchPolicy("t", 1, 1, seeds=1, max_compiles=3, max_seconds=1e9),
                ["BM", "BN"], cost=model_cost)
    result = d.run({start: 2.0})
    assert result.stopped == "budget" and len(measured) == 3
    assert measured == sorted(neighbours(start, ["BM", "BN"]), key=model_cost)[:3]


def test_a_cut_round_gives_every_kind_of_move_a_turn_before_any_kind_a_second():
    """The model likes both BM moves and both stage moves best and ranks BN /2 -- the move that wins -- low.
    Four points fit: in the model's order alone they would be BM x2, BM /2 and the two stages; in turns they
    are the favourite of BM, a stage up, a stage down and the favourite of BN, and the descent finds the win."""
    start = Point.of({"BM": 64, "BN": 64}, 4, 3)
    win = start.with_value("BN", 32)
    favourites = {start.with_value("BM", 128): 0.0, start.with_value("BM", 32): 0.1,
                  Point(start.kwargs, 4, 4): 0.2, Point(start.kwargs, 4, 2): 0.3, win: 0.5}

    def model_cost(p):
        return favourites.get(p, 5.0)

    measured: list = []

    def measure(points):
        measured.extend(points)
        return [0.5 if p == win else 1.0 for p in points]

    d = Descent(measure, lambda p: True, SearchPolicy("t", 1, 1, seeds=1, max_compiles=4, max_seconds=1e9),
                ["BM", "BN"], cost=model_cost)
    result = d.run({start: 1.0})
    assert sorted(neighbours(start, ["BM", "BN"]), key=model_cost)[:4] == list(favourites)[:4]  # the old order
    assert measured == [start.with_value("BM", 128), Point(start.kwargs, 4, 4), Point(start.kwargs, 4, 2), win]
    assert result.moves and result.moves[0][1] == win


def test_both_directions_of_a_stage_move_have_a_turn_in_a_cut_round():
    """flash_attention's pattern on the H200: the model ranks a tiling's stage variants deepest first (6, 5,
    4, 3), the first batch took 5, and the best is 3.  With room for three points the round takes the model's
    favourite tile move, a stage up (its favourite direction) and a stage down (before, only the stage up:
    the two shared one turn), and the descent moves towards 3 stages."""
    start = Point.of({"BM": 64, "BN": 128}, 4, 5)
    times = {2: 0.97, 3: 0.95, 4: 0.98, 5: 1.0, 6: 1.04, 7: 1.08}

    def model_cost(p):  # a tile move is its favourite of all; of the stage variants, deeper is better
        if p == start.with_value("BM", 128):
            return 0.0
        same_tile = p.kwargs == start.kwargs and p.num_warps == start.num_warps
        return (1.0 if same_tile else 2.0) - 0.01 * (p.num_stages or 0)

    measured: list = []

    def measure(points):
        measured.extend(points)
        return [times[p.num_stages] if p.kwargs == start.kwargs and p.num_warps == 4 else 2.0 for p in points]

    d = Descent(measure, lambda p: True, SearchPolicy("t", 1, 1, seeds=1, max_compiles=3, max_seconds=1e9),
                ["BM", "BN"], cost=model_cost, stages=range(1, 8))
    result = d.run({start: 1.0})
    assert measured == [start.with_value("BM", 128), Point(start.kwargs, 4, 6), Point(start.kwargs, 4, 4)]
    assert result.moves == [(start, Point(start.kwargs, 4, 4), 0.98)]

def test_the_first_round_measures_every_seeds_neighbourhood_together():
    """Two seeds within noise of each other: A (1.0) is a local minimum, B (1.01) is one move from the
    best point (0.5).  The budget holds one round: a descent from A alone would spend it around A."""
    a, b, best = Point.of({"BM": 256, "BN": 16}, None, None), Point.of({"BM": 32, "BN": 256}, None, None), \
        Point.of({"BM": 16, "BN": 256}, None, None)

    def dist(p, q):
        return sum(abs(math.log2(p.values()[k]) - math.log2(q.values()[k])) for k in ("BM", "BN"))

    def time_of(p):
        return min(1.0 + 0.25 * dist(p, a), 0.5 + 0.51 * dist(p, best))

    now, rounds = [0.0], []

    def measure(points):
        now[0] += 0.5 + 0.1 * len(points)
        rounds.append(list(points))
        return [time_of(p) for p in points]

    joint = {q for s in (a, b) for q in neighbours(s, ["BM", "BN"], launch_options=False)}
    seconds = 0.5 + 0.1 * len(joint) + 0.05
    d = Descent(measure, lambda p: True, SearchPolicy("t", 1, 1, seeds=2, max_compiles=10_000, max_seconds=1e9),
                ["BM", "BN"], launch_options=False, clock=lambda: now[0], started=0.0, seconds=seconds,
                compile_s=0.5, point_s=0.1)
    result = d.run({a: time_of(a), b: time_of(b)})
    assert time_of(a) < time_of(b)  # the first batch ranks the wrong basin first
    assert set(rounds[0]) == joint  # one round, both neighbourhoods
    assert result.times[best] == 0.5 and result.stopped == "budget"


def test_a_round_larger_than_the_compile_workers_is_priced_in_waves_of_compiles():
    """Two compiles side by side, 0.5 s each: a round of n points takes 0.5 x ceil(n / 2) + 0.1 n s.
    With 1.5 s left, a round of 6 (2.1 s) does not fit, 4 (1.4 s) do: 4 are measured, within budget."""
    now, rounds = [0.0], []

    def measure(points):
        now[0] += 0.5 * math.ceil(len(points) / 2) + 0.1 * len(points)
        rounds.append(len(points))
        return [1.0 for _ in points]

    hint = {"G": [1, 2, 3, 4, 5, 6, 7]}  # six other values of a hint: six moves
    start = Point.of({"BM": 64, "G": 1}, None, None)
    d = Descent(measure, lambda p: True, SearchPolicy("t", 1, 1, seeds=1, max_compiles=10_000, max_seconds=1e9),
                [], hint, launch_options=False, clock=lambda: now[0], started=0.0, seconds=1.5, compile_s=0.5,
                point_s=0.1, compile_workers=2)
    result = d.run({start: 2.0})
    assert len(neighbours(start, [], hint, launch_options=False)) == 6
    assert rounds == [4] and result.stopped == "budget" and now[0] <= 1.5


def test_each_round_re_measures_the_compile_latency_the_next_one_is_priced_with():
    """The first batch's compile latency (2 s: cold compile children) prices the first round; the round
    itself shows 0.5 s, so later rounds are priced at that and the budget is spent, not left over."""
    now, rounds = [0.0], []

    def measure(points):
        now[0] += 0.5 + 0.1 * len(points)
        rounds.append(len(points))
        return [bowl({"BM": 1, "BN": 4096})(p) for p in points]

    start = Point.of({"BM": 256, "BN": 1}, 4, 3)
    d = Descent(measure, lambda p: True, SearchPolicy("t", 1, 1, seeds=1, max_compiles=10_000, max_seconds=1e9),
                ["BM", "BN"], clock=lambda: now[0], started=0.0, seconds=6.0, compile_s=2.0, point_s=0.1)
    result = d.run({start: 1.0e9})
    assert result.stopped == "budget" and now[0] <= 6.0
    assert len(rounds) >= 4 and now[0] > 5.0  # at a 2 s latency, two rounds would have been all


def test_num_warps_two_steps_away_is_a_first_round_move_of_its_own_kind():
    """num_warps 1 -> 2 is worse, 1 -> 4 better (layer_norm 4096x1151 on the H100: 26.1, 27.2, 23.8 us).
    Warps x4 is one move of a seed's first round, and a round the budget cuts to one point per kind still
    measures it: one step and two steps of num_warps are kinds of their own."""
    by_warps = {1: 26.1, 2: 27.2, 4: 23.8, 8: 25.0, 16: 27.0, 32: 28.0}

    def time_of(p):
        return by_warps[p.num_warps] * (1.0 + abs(math.log2(p.values()["BS"] / 256)) * 0.1)

    first_round: list = []

    def measure(points):
        if not first_round:
            first_round.extend(points)
        return [time_of(p) for p in points]

    start = Point.of({"BS": 256}, 1, 1)
    assert Point.of({"BS": 256}, 4, 1) in neighbours(start, ["BS"], stages=(1,), far_warps=True)
    # the model ranks every warps move behind the tile moves and 2 warps ahead of 4
    cost = lambda p: p.num_warps * 10.0 + abs(math.log2(p.values()["BS"] / 256))  # noqa: E731
    kinds = 4  # BS x2 or /2; num_warps one step; num_warps two steps; BS and num_warps x2 together
    d = Descent(measure, lambda p: True, SearchPolicy("t", 1, 1, seeds=1, max_compiles=kinds, max_seconds=1e9),
                ["BS"], stages=(1,), cost=cost)
    result = d.run({start: time_of(start)})
    assert len(first_round) == kinds and Point.of({"BS": 256}, 4, 1) in first_round
    best = min((t, p.signature(), p) for p, t in result.times.items() if t is not None)[2]
    assert best == Point.of({"BS": 256}, 4, 1)


def test_where_no_single_step_gains_the_descent_probes_tiles_two_steps_out():
    """A tile one step away is worse both ways, two steps up better: the second ring (x4, /4) finds it."""
    by_tile = {64: 10.0, 128: 11.0, 256: 10.0, 512: 10.5, 1024: 9.0, 2048: 12.0, 4096: 13.0}

    def time_of(p):
        return by_tile[p.values()["BS"]] * (1.0 + 0.2 * abs(math.log2(p.num_warps / 4)))

    start = Point.of({"BS": 256}, 4, 1)
    d = Descent(lambda points: [time_of(p) for p in points], lambda p: True,
                SearchPolicy("t", 1, 1, seeds=1, max_compiles=100, max_seconds=1e9), ["BS"], stages=(1,))
    result = d.run({start: time_of(start)})
    assert all(time_of(q) >= time_of(start) for q in neighbours(start, ["BS"], stages=(1,)))  # a single-step minimum
    best = min((t, p.signature(), p) for p, t in result.times.items() if t is not None)[2]
    assert best == Point.of({"BS": 1024}, 4, 1) and result.stopped == "converged"


def test_a_one_point_round_does_not_price_the_next_full_wave():
    """A wave of compiles takes 0.5 s, one compile alone 0.2 s: after a one-point round the next round is
    still priced at 0.5 s a wave, so no round runs past the budget."""
    now, rounds = [0.0], []

    def measure(points):
        now[0] += (0.2 if len(points) == 1 else 0.5) + 0.1 * len(points)
        rounds.append(len(points))
        return [bowl({"BM": 1, "BN": 4096})(p) for p in points]

    start = Point.of({"BM": 256, "BN": 1}, 4, 3)
    for seconds in (3.0, 3.5, 4.0, 4.5, 5.0):
        now[0] = 0.0
        rounds.clear()
        d = Descent(measure, lambda p: True, SearchPolicy("t", 1, 1, seeds=1, max_compiles=10_000, max_seconds=1e9),
                    ["BM", "BN"], clock=lambda: now[0], started=0.0, seconds=seconds, compile_s=0.5, point_s=0.1)
        d.run({start: 1.0e9})
        assert 1 in rounds and now[0] <= seconds, (seconds, rounds, now[0])


def test_the_first_round_is_held_where_it_is_priced_after_the_descents_own_set_up():
    """The first batch left 0.1 s; a round's wave costs 0.5 s.  Checking the seeds' moves takes time (0.02 s a
    check: on the H200 block_ptr_matmul's descent spent 0.19 s before pricing its first round, and a round
    bought before that set-up no longer fit).  With a ceiling the descent grows its budget, when it prices the
    round, to hold one wave of it; the round runs within the grown budget, and ``on_grow`` hears of it."""
    for ceiling in (None, 10.0):
        now, rounds, heard = [0.0], [], []

        def feasible(p):
            now[0] += 0.02
            return True

        def measure(points):
            now[0] += 0.5 + 0.01 * len(points)
            rounds.append(len(points))
            ended.append(now[0])
            return [bowl({"BM": 64, "BN": 64})(p) for p in points]

        ended: list = []
        start = Point.of({"BM": 16, "BN": 16}, 4, 3)
        d = Descent(measure, feasible, SearchPolicy("t", 1, 1, seeds=1, max_compiles=10_000, max_seconds=1e9),
                    ["BM", "BN"], clock=lambda: now[0], started=0.0, seconds=0.1, compile_s=0.5, point_s=0.01,
                    compile_workers=4, ceiling_s=ceiling, on_grow=heard.append)
        result = d.run({start: 10.0})
        if ceiling is None:
            assert rounds == [] and d.grown_s == 0.0 and heard == []
            continue
        assert rounds == [4] and d.grown_s > 0 and heard == [d.seconds]  # one wave of the round, then the budget
        assert ended[0] <= d.seconds and result.stopped == "budget"  # the round ended within the grown budget
