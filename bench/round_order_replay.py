"""Replay the first descent round's order of recorded cold first tunes on the CPU, with and without stage
directions as kinds of their own (``Descent._note_kinds``), and say what the change would have moved.

``python bench/round_order_replay.py RUN.json [RUN.json ...]``

For each tiletune first tune of a ``bench/first_tune_cold.py`` result: the first batch (its timings, in the
order measured), the seeds the descent takes from it, the seeds' feasible moves (the model's check and its cost
order, ``bench/model_recall.model_ranking`` on the h200 target), the round in turns, and how many of it the
run measured.  Checked first: how many of the replayed old order's first k the run measured in that round
(a faithful replay: all k).  Then: which points the new order drops from and adds to the
first k, and whether the run's pick or the best known is among them.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parent.parent
for _p in (ROOT, ROOT / "tests", ROOT / "bench"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import cold_pairs  # noqa: E402
import model_recall  # noqa: E402
from tiletune.runtime import descent as descent_mod  # noqa: E402
from tiletune.runtime.search import SEARCH_MODES, Point  # noqa: E402


def point(label: str) -> Point:
    kwargs, warps, stages = model_recall.parse_label(label)
    return Point.of(kwargs, warps, stages)


def round_order(order: List, hard: Any, first: Dict[Point, float], directions: bool) -> List[Point]:
    """The first round's points in turns, as the descent orders them."""
    rank = {Point.of(dict(k), w, s): i for i, (k, w, s) in enumerate(order)}
    tiling = [k for k, _ in order[0][0]]
    warps = sorted({w for _, w, _ in order if w})
    stages = sorted({s for _, _, s in order if s})
    saved = descent_mod._stage_step
    if not directions:
        descent_mod._stage_step = lambda a, b: int(a.num_stages != b.num_stages)  # noqa: E731 - the old kind
    try:
        d = descent_mod.Descent(lambda pts: [1.0] * len(pts),
                                lambda p: not hard(p.values(), p.num_warps, p.num_stages, proposed=True),
                                SEARCH_MODES["default"], tiling, warps=warps or (4,),
                                stages=stages or (1,), cost=lambda p: rank.get(p))
        return d.first_round(first)
    finally:
        descent_mod._stage_step = saved


def replay(path: Path) -> List[Dict[str, Any]]:
    rows = json.loads(path.read_text())["rows"]
    out = []
    for row in rows:
        problem = cold_pairs.load(row)
        try:
            order, _, _, hard = model_recall.model_ranking(row["kernel"], row["shape"], "h200", problem=problem)
        except Exception as exc:  # noqa: BLE001 - a kernel the offline model cannot rank without more input
            note = f"not ranked: {exc}"[:120]
            out.append({"kernel": row["kernel"], "shape": row["shape"], "side": "-", "note": note})
            continue
        best = (row.get("reference") or {}).get("best")
        tunes = [("tiletune", row["search"], row["tiletune_pick"])]
        tunes += [(a["side"], a["search"], a["pick"]) for a in row.get("tiletune_again") or []]
        for side, facts, pick in tunes:
            timed = [(point(label), ms) for label, ms in row["timings_ms"].get(side) or []]
            n_first = facts["first_batch"] + (facts.get("check_probes") or 0)
            batches = facts.get("batches") or []
            entry = {"kernel": row["kernel"], "shape": row["shape"], "side": side}
            if len(batches) < 2:
                out.append({**entry, "note": "no descent round"})
                continue
            k = batches[1]["configs"] - (facts.get("descent_filled") or 0)
            first = dict(timed[:n_first])
            old = round_order(order, hard, first, directions=False)
            new = round_order(order, hard, first, directions=True)
            ran = {p for p, _ in timed[n_first:n_first + batches[1]["configs"]]}  # abandoned ones are missing
            match = len(set(old[:k]) & ran)
            dropped = [p for p in old[:k] if p not in new[:k]]
            added = [p for p in new[:k] if p not in old[:k]]
            labels = {"pick": point(pick), "best": point(best) if best else None}
            out.append({**entry, "k": k, "round": len(old), "match": match,
                        "dropped": [model_recall._label((p.kwargs, p.num_warps, p.num_stages)) for p in dropped],
                        "added": [model_recall._label((p.kwargs, p.num_warps, p.num_stages)) for p in added],
                        "drops": [n for n, p in labels.items() if p in dropped],
                        "adds": [n for n, p in labels.items() if p in added]})
    return out


def _matches(cut: List[Dict[str, Any]], exact: List[Dict[str, Any]]) -> str:
    """How many of k the replay matched, for the cut rounds it did not match whole."""
    others = [f"{r['match']} of {r['k']}" for r in cut if r not in exact]
    return ", ".join(others) or "none"


def to_markdown(rows: List[Dict[str, Any]], sources: List[str]) -> str:
    """The replay as a markdown report: a summary line, then one row per first tune."""
    cut = [r for r in rows if "note" not in r and 0 < r["k"] < r["round"]]
    exact = [r for r in cut if r["match"] == r["k"]]
    lines = ["# The first descent round's order, replayed (bench/round_order_replay.py)", "",
             f"Runs: {', '.join(sources)}.  {len(rows)} first tunes; {len(cut)} cut first rounds (the run measured "
             f"fewer than the round held); in {len(exact)} of them the replayed order's first k are the k configs the "
             f"run measured in that round; in the others, {_matches(cut, exact)} (a compile abandoned at the deadline "
             f"is never timed).  With a stage's two directions as kinds of their "
             f"own, the cut rounds would have dropped the run's pick {sum('pick' in r['drops'] for r in cut)} times "
             f"and the best known {sum('best' in r['drops'] for r in cut)} times, and added the pick "
             f"{sum('pick' in r['adds'] for r in cut)} and the best known {sum('best' in r['adds'] for r in cut)} "
             "times.", "",
             "| kernel | shape | tune | k / round | replayed k the run measured | dropped | added |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        shape = ",".join(f"{k}={v}" for k, v in r["shape"].items())
        if "note" in r:
            lines.append(f"| {r['kernel']} | {shape} | {r['side']} | {r['note']} | | | |")
        else:
            lines.append(f"| {r['kernel']} | {shape} | {r['side']} | {r['k']} / {r['round']} | {r['match']} | "
                         f"{'; '.join(r['dropped'])} | {'; '.join(r['added'])} |")
    return "\n".join(lines) + "\n"


def main(argv: List[str]) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="first_tune_cold.json files")
    ap.add_argument("--out", help="write the markdown report here")
    args = ap.parse_args(argv)
    rows = [r for path in args.runs for r in replay(Path(path))]
    text = to_markdown(rows, args.runs)
    if args.out:
        Path(args.out).write_text(text)
    print(text.splitlines()[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
