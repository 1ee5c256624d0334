"""bench/cold_repeat.py tells a move of the same two configs (measurement across processes) from a changed pick."""

import json
from bench_scripts import load_bench

cold_repeat = load_bench("cold_repeat")


def _row(kernel, tt_pick, hand_pick, best, tt, hand, noise=0.005):
    return {"kernel": kernel, "shape": {"N": 1}, "tiletune_pick": tt_pick, "hand_pick": hand_pick,
            "tiletune_over_best": tt, "hand_over_best": hand, "tiletune_first_s": 1.0, "hand_first_s": 2.0,
            "reference": {"best": best, "noise": noise}}


def test_same_configs_and_changed_picks_are_counted_apart(tmp_path):
    a = [_row("softmax", "w8", "w16", "w4", 1.018, 1.105), _row("layer_norm", "B1024", "B512", "B256", 1.083, 1.096)]
    b = [_row("softmax", "w8", "w8", "w4", 1.047, 1.200), _row("layer_norm", "B512", "B512", "B256", 1.073, 1.059)]
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps({"rows": a}))
    pb.write_text(json.dumps({"rows": b}))
    rows, summary = cold_repeat.compare(pa, pb)
    by = {r["kernel"]: r for r in rows}
    # softmax: tiletune's pick and the best are the same configs in both runs; the hand pick changed
    assert by["softmax"]["same_configs"] == ["tiletune_over_best"]
    assert by["softmax"]["flagged"] == ["tiletune_over_best", "hand_over_best"]
    # layer_norm: tiletune's pick changed (its ratio moved 0.010, within 2 x 0.005 + 0.01); the hand's did not
    assert by["layer_norm"]["same_configs"] == ["hand_over_best"]
    assert by["layer_norm"]["flagged"] == ["hand_over_best"]
    assert summary["flagged_same_configs"] == 2 and summary["flagged_changed_configs"] == 1
    assert by["softmax"]["causes"] == {"tiletune_over_best": "timing", "hand_over_best": "pick changed"}
    assert by["layer_norm"]["causes"] == {"hand_over_best": "timing"}
    assert summary["flagged_tiletune"] == 1 and summary["flagged_hand"] == 2
    assert summary["same_config_ratios"] == 2
    assert abs(summary["largest_same_config_move"] - 0.037) < 1e-9
    text = cold_repeat.markdown(pa, pb, rows, summary)
    assert "2 compare the same two configs" in text
    assert "hand (pick changed)" in text and "tiletune (timing)" in text
