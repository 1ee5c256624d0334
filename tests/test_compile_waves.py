"""What fills a compile wave, which costs about the same whatever number of its slots are used: the descent's
fill (runtime/descent.py: a round's last wave with idle compile workers takes the model's next-best points not
measured yet, as far as their timing fits the budget, and a filled point that beats every centre becomes one),
and a feasible space no larger than one wave measured whole in the first batch (search.whole_space_batch).
Clocks, compile waves and timings are injected."""

from __future__ import annotations

import math

import pytest

from tiletune.runtime.descent import Descent
import tiletune
from tiletune.runtime.search import Point, SearchPolicy, whole_space_batch
from tests.test_search import Injected, launch, scale2d_kernel
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


def test_a_space_no_larger_than_one_compile_wave_is_measured_whole_in_the_first_batch():
    assert whole_space_batch(3, pool=6, space=6, workers=9) == 6  # rms_norm's 6 configs: one wave, no descent
    assert whole_space_batch(3, pool=6, space=6, workers=4) == 3  # two waves either way: the model's picks first
    assert whole_space_batch(3, pool=16, space=24, workers=16) == 3  # the pool is not the whole space
    assert whole_space_batch(3, pool=6, space=0, workers=9) == 3  # the space's size unknown (too large to list)


@pytest.mark.parametrize("m, n", [(2, 32), (16, 1024)])
def test_a_first_tune_of_a_small_space_measures_it_in_one_wave_and_a_large_one_descends(monkeypatch, m, n):
    monkeypatch.setenv("TILETUNE_COMPILE_THREADS", "16")
    inj = Injected(monkeypatch, best=(1, 32))
    policy = SearchPolicy("t", first_min=2, first_max=3, max_compiles=40, max_seconds=8.0)
    tuned = tiletune.autotune(configs=[], key=["M", "N"], pre_hook=inj.pre_hook, search=policy)(scale2d_kernel)
    launch(tuned, m=m, n=n)
    facts = tuned.search_facts
    if (m, n) == (2, 32):  # 8 configs, all of them in the first batch; nothing left for a descent
        assert facts["first_batch"] == facts["pool"] == facts["measured"] == 8
        assert facts["descent_measured"] == 0
    else:  # a larger space: the model's first picks, then the descent
        assert facts["first_batch"] <= 3 < facts["pool"] and facts["descent_measured"] > 0
