"""Warm start across keys: a new key starts from the cached winners of the kernel's nearest other keys."""
from __future__ import annotations

import json

import pytest

import tiletune
from tiletune.runtime.search import SearchPolicy
from tiletune.runtime.warm_start import key_distance, nearest_winners
from tests.test_search import Injected, launch, scale2d_kernel


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(tmp_path / "cache"))
    for var in ("TILETUNE_ALWAYS_TUNE", "TRITON_BENCH_METHOD", "TILETUNE_SEARCH", "TILETUNE_VERSION_CHECK"):
        monkeypatch.delenv(var, raising=False)


def _key(values, dtype="fp32", target="h100"):
    return json.dumps({"key": values, "dtypes": [dtype], "target": target, "space": "synthesized"},
                      sort_keys=True, separators=(",", ":"))


def _entry(block, fp="a"):
    return {"config": {"kwargs": {"BLOCK": block}, "num_warps": 4, "num_stages": 1}, "fingerprint": fp}


def test_the_nearest_keys_winners_come_first_one_per_config():
    entries = {_key([4096, 4096]): _entry(128), _key([512, 4096]): _entry(64), _key([4000, 4096]): _entry(128),
               _key([64, 64]): _entry(16)}
    near = nearest_winners(entries, _key([3000, 4096]), "a", n=2)
    assert [k for _, k, _ in near] == [[4000, 4096], [512, 4096]]  # 4096's winner is 4000's: counted once
    assert [e["config"]["kwargs"]["BLOCK"] for _, _, e in near] == [128, 64]


def test_only_keys_of_the_same_dtypes_target_space_and_versions_are_neighbours():
    entries = {_key([4096], dtype="fp16"): _entry(1), _key([4096], target="a100"): _entry(2),
               _key([4096]): _entry(3, fp="other versions"), _key(["x"]): _entry(4), _key([4096, 1]): _entry(5)}
    assert nearest_winners(entries, _key([4000]), "a") == []
    assert key_distance([1, "bf16"], [3, "bf16"]) == pytest.approx(1.0)
    assert key_distance([1, "bf16"], [1, "fp16"]) is None
    assert nearest_winners({}, "not json", "a") == []


#: Two candidates a first batch, no descent: what a warm start changes, measured quickly under the interpreter.
SMALL = SearchPolicy("small", first_min=2, first_max=2, descent=False)


def test_a_new_key_measures_the_nearest_cached_winner_first(monkeypatch):
    inj = Injected(monkeypatch, best=(4, 64))
    first = tiletune.autotune(configs=[], key=["M", "N"], search=SMALL, pre_hook=inj.pre_hook)(scale2d_kernel)
    launch(first, m=32, n=64)
    won = (first.best_config.kwargs["BLOCK_M"], first.best_config.kwargs["BLOCK_N"])
    inj.timed.clear()
    again = tiletune.autotune(configs=[], key=["M", "N"], search=SMALL, pre_hook=inj.pre_hook)(scale2d_kernel)
    launch(again, m=32, n=128)
    assert again.search_facts["warm_start"] == [[32, 64]]
    assert inj.timed[0] == won  # measured first, not taken on trust
    assert again.search_facts["first_batch"] == 2
    assert len(set(inj.timed)) == 2  # the seed took one place of the two; the model's pick has the other


def test_without_cached_neighbours_the_first_batch_is_the_models(monkeypatch):
    inj = Injected(monkeypatch, best=(4, 64))
    tuned = tiletune.autotune(configs=[], key=["M", "N"], search=SMALL, pre_hook=inj.pre_hook)(scale2d_kernel)
    launch(tuned, m=32, n=64)
    assert tuned.search_facts["warm_start"] == []


def test_a_broken_neighbour_seeds_nothing_and_a_seed_outside_the_pool_is_probed_with_it(monkeypatch, tmp_path):
    """A neighbour whose cached config is unusable (edited by hand) is skipped.  A usable one the model ranks
    too low for the pool (1x2 tiles) joins the candidates, and the agreement check's probes are drawn from
    them, the seed included."""
    inj = Injected(monkeypatch, best=(4, 64))
    first = tiletune.autotune(configs=[], key=["M", "N"], search=SMALL, pre_hook=inj.pre_hook)(scale2d_kernel)
    launch(first, m=32, n=64)
    path = next((tmp_path / "cache" / "kernel").glob("*.json"))
    data = json.loads(path.read_text())
    (key, entry), = data["entries"].items()
    broken, tiny = json.loads(json.dumps(entry)), json.loads(json.dumps(entry))
    broken["config"]["kwargs"]["BLOCK_M"] = "wide"
    tiny["config"]["kwargs"].update(BLOCK_M=1, BLOCK_N=2)
    data["entries"][key.replace("[32,64]", "[32,99]")] = broken  # the nearest, but unusable
    data["entries"][key.replace("[32,64]", "[32,90]")] = tiny
    path.write_text(json.dumps(data))
    inj.timed.clear()
    again = tiletune.autotune(configs=[], key=["M", "N"], search=SMALL, pre_hook=inj.pre_hook)(scale2d_kernel)
    launch(again, m=32, n=100)
    assert again.search_facts["warm_start"] == [[32, 90], [32, 64]]
    assert inj.timed[0] == (1, 2)
