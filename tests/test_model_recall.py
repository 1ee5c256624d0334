"""bench/model_recall.py on the committed H100 results: every pair is ranked, and the report is consistent."""

from pathlib import Path
from bench_scripts import load_bench

ROOT = Path(__file__).resolve().parent.parent
model_recall = load_bench("model_recall")

RESULTS = ROOT / "bench" / "results" / "gpu_bench_search_default.json"


def test_every_measured_pair_is_ranked_in_the_models_space():
    import json

    pairs = json.loads(RESULTS.read_text())["tune"]
    expected = {(f, k) for f, rows in pairs.items() for k, r in rows.items() if (r.get("exhaustive") or {}).get("top")}
    res = model_recall.recall([RESULTS], "h100")
    assert {(r["fixture"], r["shape"]) for r in res["pairs"]} == expected
    for r in res["pairs"]:
        assert 1 <= len(r["leaders"]) <= 5
        ms = [x["screen_ms"] for x in r["leaders"]]
        assert ms == sorted(ms)  # fastest measured first
        for x in r["leaders"]:
            if x["model_rank"] is None:
                assert x["match"] == "outside the synthesized space" or x["match"].startswith("rejected: ")
                assert not x["in_pool"]
            else:
                assert 1 <= x["model_rank"] <= r["feasible"] and x["match"] in ("exact", "tiling")
    s = res["summary"]
    assert s["pairs"] == len(expected) and s["best_in_pool"] <= s["any_top5_in_pool"] <= s["pairs"]
    assert res["sources"] == ["bench/results/gpu_bench_search_default.json"]
    assert "| fixture | shape |" in model_recall.to_markdown(res)


def test_recall_is_counted_per_half_and_the_halves_partition_the_pairs():
    res = model_recall.recall([RESULTS], "h100")
    halves = {r["half"] for r in res["pairs"]}
    assert halves == set(model_recall.HALVES)  # both halves are populated on the committed grid
    rec = res["summary"]["recall"]
    assert rec["fit"]["pairs"] + rec["held-out"]["pairs"] == rec["all"]["pairs"] == len(res["pairs"])
    for half, r in rec.items():
        rows = [p for p in res["pairs"] if half == "all" or p["half"] == half]
        assert r["top1"] == sum(p["hits"]["1"] for p in rows) <= r["top8"] == sum(p["hits"]["8"] for p in rows)
    for p in res["pairs"]:  # a top-1 hit is the model's pick among the measured leaders within NEAR of the best
        assert p["half"] == model_recall.half_of(p["fixture"], p["shape"])
        if p["hits"]["1"]:
            assert p["hits"]["8"]


def test_the_cold_table_counts_what_tiletune_timed_outside_the_models_space(tmp_path):
    """A cold-bench row (layer_norm at N=777, a fixture) whose tiletune side timed a tile past the next power of
    two of the row (2048) and one inside the space: the first is counted outside and rejected by the search's
    check now, the second is not counted."""
    import json

    row = {"kernel": "layer_norm", "source": "fixture", "shape": {"M": 1000, "N": 777},
           "tiletune_pick": "BLOCK_SIZE=512 w2 s1", "tiletune_over_best": 1.09,
           "reference": {"best": "BLOCK_SIZE=256 w4 s1"},
           "timings_ms": {"tiletune": [["BLOCK_SIZE=512 w2 s1", 0.0047], ["BLOCK_SIZE=2048 w4 s1", 0.0063]]}}
    path = tmp_path / "first_tune_cold.json"
    path.write_text(json.dumps({"rows": [row]}))
    (entry,) = model_recall.cold_ranks(path, "h100")
    assert entry["timed"] == 2
    assert entry["timed_outside"] == ["BLOCK_SIZE=2048 w4 s1"] and entry["timed_outside_rejected"] == 1
