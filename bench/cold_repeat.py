"""Two runs of the cold first-tune bench side by side: how far each pair's ratios moved (issue 25's repeat check).

    python bench/cold_repeat.py RUN_A/first_tune_cold.json RUN_B/first_tune_cold.json [--out FILE.md]

Per pair present in both runs: tiletune / best known and the hand list / best known in each run, the move
between runs, and the stated noise of the pair's reference (the larger of the two runs': the spread of the
interleaved re-timing rounds).  A kernel-time ratio that moved more than twice its stated noise plus 1% is
flagged, with its cause: the tuner's pick changed, or the best known did, or neither (the timing); flags of
tiletune's ratio and of the hand list's (Triton's own autotuner picking from the authors' list) are counted
apart.  Where a ratio compares the same two configs
in both runs (the same pick and the same best known), its move is measurement alone, across processes: the
report counts those flags apart (``same configs``) and gives the median and largest such move, the bench's
run-to-run noise, beside the in-run noise the flag is judged against.  First-tune seconds are reported, not judged (a cold
process' wall time moves with the host, not with tiletune).  CPU only: it reads the JSON files.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from cold_report import NOISE_FACTOR, NOISE_FLOOR, moved_beyond_noise  # noqa: E402  (one rule for both)


def _pairs(path: Path) -> Dict[Tuple[str, str], dict]:
    rows = json.loads(path.read_text())["rows"]
    return {(r["kernel"], json.dumps(r["shape"], sort_keys=True)): r for r in rows}


def _fmt(x: Optional[float], digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _cause(pick_changed: bool, best_changed: bool) -> str:
    """Why a flagged ratio moved: the tuner's pick, the best known, both, or neither (the timing alone)."""
    if pick_changed and best_changed:
        return "pick and best known changed"
    return "pick changed" if pick_changed else "best known changed" if best_changed else "timing"


def compare(a: Path, b: Path) -> Tuple[List[dict], dict]:
    """Rows of the pairs in both runs and a summary (pairs, flagged, largest move)."""
    pa, pb = _pairs(a), _pairs(b)
    rows: List[dict] = []
    for key in [k for k in pa if k in pb]:
        ra, rb = pa[key], pb[key]
        noise = max((ra.get("reference") or {}).get("noise") or 0.0, (rb.get("reference") or {}).get("noise") or 0.0)
        out: Dict[str, Any] = {"kernel": key[0], "shape": ra["shape"], "noise": noise,
                               "tiletune_pick": [ra.get("tiletune_pick"), rb.get("tiletune_pick")]}
        flagged, same, causes = [], [], {}
        best = [(r.get("reference") or {}).get("best") for r in (ra, rb)]
        for side, pick in (("tiletune_over_best", "tiletune_pick"), ("hand_over_best", "hand_pick")):
            x, y = ra.get(side), rb.get(side)
            out[side] = [x, y]
            if ra.get(pick) == rb.get(pick) and best[0] == best[1] and None not in best:
                same.append(side)
            if x is not None and y is not None and moved_beyond_noise(x, y, noise):
                flagged.append(side)
                causes[side] = _cause(ra.get(pick) != rb.get(pick), best[0] != best[1])
        out["same_configs"] = same
        out["causes"] = causes
        fa = (ra.get("tiletune_first_s") or 0) / (ra.get("hand_first_s") or 1) if ra.get("tiletune_first_s") else None
        fb = (rb.get("tiletune_first_s") or 0) / (rb.get("hand_first_s") or 1) if rb.get("tiletune_first_s") else None
        out["first_tune_over_hand"] = [fa, fb]
        out["flagged"] = flagged
        rows.append(out)
    moves = [abs(r["tiletune_over_best"][0] - r["tiletune_over_best"][1]) for r in rows
             if None not in r["tiletune_over_best"]]
    fixed = [abs(r[side][0] - r[side][1]) for r in rows for side in r["same_configs"] if None not in r[side]]
    summary = {"pairs": len(rows), "flagged": sum(1 for r in rows if r["flagged"]),
               "flagged_same_configs": sum(1 for r in rows for side in r["flagged"] if side in r["same_configs"]),
               "flagged_changed_configs": sum(1 for r in rows for side in r["flagged"]
                                              if side not in r["same_configs"]),
               "same_config_ratios": len(fixed),
               "median_same_config_move": statistics.median(fixed) if fixed else None,
               "largest_same_config_move": max(fixed) if fixed else None,
               "largest_tiletune_move": max(moves) if moves else None,
               "median_tiletune_move": statistics.median(moves) if moves else None,
               "flagged_tiletune": sum(1 for r in rows if "tiletune_over_best" in r["flagged"]),
               "flagged_hand": sum(1 for r in rows if "hand_over_best" in r["flagged"]),
               "same_pick": sum(1 for r in rows if r["tiletune_pick"][0] == r["tiletune_pick"][1])}
    return rows, summary


def _flags(row: dict) -> str:
    causes = row.get("causes", {})
    return ", ".join(f"{side.split('_')[0]} ({causes.get(side, '?')})" for side in row["flagged"])


def markdown(a: Path, b: Path, rows: List[dict], summary: dict) -> str:
    """The comparison as a markdown table."""
    lines = [f"# Repeat of the cold first-tune bench: `{a}` against `{b}`", "",
             f"{summary['pairs']} pairs in both runs; same tiletune pick in {summary['same_pick']}; "
             f"tiletune/best moved by a median {_fmt(summary['median_tiletune_move'])} and at most "
             f"{_fmt(summary['largest_tiletune_move'])}; flagged (a ratio moved more than {NOISE_FACTOR:g} x the "
             f"pair's noise + {NOISE_FLOOR:g}): {summary['flagged']} pairs ({summary['flagged_tiletune']} on "
             f"tiletune's ratio, {summary['flagged_hand']} on the hand list's); of the flagged ratios, "
             f"{summary['flagged_same_configs']} compare the same two configs in both runs (measurement across "
             f"processes) and {summary['flagged_changed_configs']} a changed pick or best known.  Run-to-run noise: "
             f"the {summary['same_config_ratios']} ratios of the same two configs in both runs moved by a median "
             f"{_fmt(summary['median_same_config_move'])} and at most {_fmt(summary['largest_same_config_move'])}.",
             "",
             "| kernel | shape | tiletune/best A | B | hand/best A | B | noise | first tune tt/hand A | B | flagged | same configs |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for r in rows:
        shape = ",".join(f"{k}={v}" for k, v in r["shape"].items())
        t, h, f = r["tiletune_over_best"], r["hand_over_best"], r["first_tune_over_hand"]
        lines.append(f"| {r['kernel']} | {shape} | {_fmt(t[0])} | {_fmt(t[1])} | {_fmt(h[0])} | {_fmt(h[1])} | "
                     f"{_fmt(r['noise'])} | {_fmt(f[0], 2)} | {_fmt(f[1], 2)} | {_flags(r)} | "
                     f"{', '.join(r.get('same_configs', [])) or ''} |")
    return "\n".join(lines) + "\n"


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    ap.add_argument("--out", type=Path, default=None, help="write the markdown here (and the JSON beside it)")
    opts = ap.parse_args(argv)
    rows, summary = compare(opts.a, opts.b)
    text = markdown(opts.a, opts.b, rows, summary)
    if opts.out is not None:
        opts.out.write_text(text)
        opts.out.with_suffix(".json").write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
