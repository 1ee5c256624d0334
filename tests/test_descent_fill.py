"""The descent's fill (runtime/descent.py): a round's last compile wave with idle compile workers takes the
model's next-best points not measured yet, as far as their timing fits the budget, and a filled point that
beats every centre becomes one.  Clocks, compile waves and timings are injected."""

from __future__ import annotations

import math

import pytest

from tiletune.runtime.descent import Descent
from tiletune.runtime.search import Point, SearchPolicy
from tests.test_search_replay import _replay

@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(tmp_path / "cache"))


TILES = (128, 256, 512, 1024)
WARPS = (1, 2, 4, 8)


def _dip(p: Point) -> float:
    """A row-reduction landscape (the shape of H200 layer_norm M=1000, N=777's): a broad basin at 1024 x 2
    warps, and one isolated dip, 256 x 4 warps, that every single move from the basin's side makes worse."""
    bs, w = p.values()["BS"], p.num_warps
    if (bs, w) == (256, 4):
        return 4.2
    return 4.6 + 0.15 * abs(math.log2(bs / 1024)) + 0.1 * abs(math.log2(w / 2))


def _model_cost(p: Point) -> float:
    """The model's order: bigger tiles first, then fewer warps (it ranks the dip 11th of 16)."""
    return -math.log2(p.values()["BS"]) * 10 + p.num_warps


BY_COST = sorted((Point.of({"BS": bs}, w, 1) for bs in TILES for w in WARPS), key=_model_cost)


def _descent(workers: int, fill, seconds: float = 100.0, point_s: float = 0.01, **kw):
    """A descent on a virtual clock: a round takes 0.3 s a wave of ``workers`` compiles and ``point_s`` a point."""
    now, rounds = [0.0], []

    def measure(points):
        now[0] += 0.3 * -(-len(points) // workers) + point_s * len(points)
        rounds.append(list(points))
        return [_dip(q) for q in points]

    d = Descent(measure, lambda p: p.values()["BS"] in TILES and p.num_warps in WARPS,
                SearchPolicy("t", 1, 1, seeds=2, max_compiles=40, max_seconds=1e9), ["BS"],
                warps=WARPS, stages=(1,), clock=lambda: now[0], started=0.0, seconds=seconds, compile_s=0.3,
                point_s=point_s, cost=_model_cost, compile_workers=workers, fill=fill, **kw)
    return d, rounds, now


def _first_batch():
    return {q: _dip(q) for q in BY_COST[:3]}


def test_idle_compile_slots_take_the_models_next_best_points_and_reach_a_dip_no_move_reaches():
    plain, _, _ = _descent(9, ())
    r = plain.run(_first_batch())
    assert Point.of({"BS": 256}, 4, 1) not in r.times  # the moves never reach it: three steps from the basin

    d, rounds, _ = _descent(9, BY_COST)
    r = d.run(_first_batch())
    dip = Point.of({"BS": 256}, 4, 1)
    assert dip in d.filled and r.times[dip] == 4.2
    assert all(len(batch) <= 9 for batch in rounds)  # fills only ride on a wave being paid for
    assert r.moves[-1][1] == dip or any(m[1] == dip for m in r.moves)  # the dip became a centre
    # the fill took the model's order among points no round had measured
    first = rounds[0]
    filled = [q for q in first if q in d.filled]
    assert filled == [q for q in BY_COST if q not in _first_batch() and q not in first[:len(first) - len(filled)]][
        :len(filled)]


def test_the_fill_takes_only_what_the_budget_holds():
    """0.1 s a point: after the first round's own points, the budget holds two more points of timing."""
    probe, rounds, _ = _descent(9, (), point_s=0.1)
    start = _first_batch()
    probe.run(start)
    own = len(rounds[0])
    seconds = 0.3 + 0.1 * own + 0.25  # the round, then room for two more points (and a hair)
    d, rounds, now = _descent(9, BY_COST, seconds=seconds, point_s=0.1)
    d.run(start)
    assert len(rounds[0]) == own + 2 and len(d.filled) == 2
    assert now[0] <= seconds


def test_no_fill_without_idle_workers_nor_under_a_process_group():
    d, rounds, _ = _descent(1, BY_COST)  # one compile at a time: a wave is never idle
    d.run(_first_batch())
    assert d.filled == []
    d, rounds, _ = _descent(9, BY_COST, agree_round=lambda k: k)  # the ranks would have to agree on it
    d.run(_first_batch())
    assert d.filled == []


def test_the_fill_takes_one_stage_variant_of_a_config_and_none_of_a_measured_one():
    measured = Point.of({"BS": 1024}, 2, 1)
    fill = [Point.of({"BS": 1024}, 2, 3), Point.of({"BS": 512}, 2, 2), Point.of({"BS": 512}, 2, 3),
            Point.of({"BS": 256}, 2, 1)]
    d, rounds, _ = _descent(9, fill)
    d.run({measured: _dip(measured)})
    assert Point.of({"BS": 1024}, 2, 3) not in d.filled  # its config was measured at another stage
    variants = [q for q in d.filled if q.values()["BS"] == 512 and q.num_warps == 2]
    assert len(variants) <= 1


def test_a_cold_first_tune_fills_its_idle_compile_slots_within_the_budget(monkeypatch, capsys):
    """The replay of a cold first tune (tests/test_search_replay.py) with nine compile workers: descent rounds
    smaller than a wave take the model's next-best candidates, and the first tune still ends within 10% of
    its budget."""
    monkeypatch.setenv("TILETUNE_COMPILE_THREADS", "9")
    monkeypatch.setenv("TILETUNE_VERBOSE", "1")
    tuned, _, queues, _ = _replay(monkeypatch, lambda config: 0.2, measure_ms=2.0, workers=9)
    facts = tuned.search_facts
    assert facts["descent_filled"] >= 1
    assert all(len(q.seconds) <= 9 for q in queues[1:])  # a fill never adds a compile wave
    assert tuned.bench_time <= 1.1 * facts["time_budget_s"]
    assert "of them the model's next best, in idle compile slots" in capsys.readouterr().out


@pytest.mark.parametrize("workers", [3, 9])
def test_a_round_with_fills_compiles_in_as_many_waves_as_without(workers):
    d, rounds, _ = _descent(workers, BY_COST)
    d.run(_first_batch())
    for batch in rounds:
        own = [q for q in batch if q not in d.filled]
        assert own and -(-len(batch) // workers) == -(-len(own) // workers)
    assert d.filled
