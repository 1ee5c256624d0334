"""bench/round_order_replay.py on a recorded first tune: flash_attention's first rounds at 711e564 (H200)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import round_order_replay  # noqa: E402

RUN = ROOT / "bench/results/first_tune_cold_runs/h200_711e564/S/first_tune_cold.json"


def test_the_replay_rebuilds_flash_attentions_cut_first_rounds_and_the_stage_kinds_add_four_stages(tmp_path):
    """The recorded runs measured 15 of the round; the replayed order's first 15 are what they measured but the
    compiles abandoned at the deadline (3 and 0); a stage's two directions as kinds put 4 stages (the way to the
    best known, 3) into the first 15 and drop neither the pick nor the best known."""
    data = json.loads(RUN.read_text())
    flash = [r for r in data["rows"] if r["kernel"] == "flash_attention"]
    path = tmp_path / "flash.json"
    path.write_text(json.dumps({"rows": flash}))
    rows = round_order_replay.replay(path)
    assert [r["side"] for r in rows] == ["tiletune", "tiletune#2"]
    abandoned = [flash[0]["search"]["abandoned"], flash[0]["tiletune_again"][0]["search"]["abandoned"]]
    for r, lost in zip(rows, abandoned):
        assert r["k"] == 15 < r["round"] and r["match"] == r["k"] - lost
        assert "BLOCK_M=64 BLOCK_N=128 w4 s4" in r["added"]
        assert not r["drops"]
    text = round_order_replay.to_markdown(rows, [str(path)])
    assert "2 cut first rounds" in text and "dropped the run's pick 0 times" in text
