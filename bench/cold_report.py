"""Summary, markdown and the printed table of ``bench/first_tune_cold.py`` (issue 25's goals)."""
from __future__ import annotations

import json
import math
import statistics
from pathlib import Path
from typing import Any, Dict, List, Optional

#: Issue 25's "done when", on the rows of one run.
GOALS = {
    "median_first_tune_over_hand_max": 0.7,
    "worst_first_tune_over_hand_max": 1.0,
    "geomean_over_best_max": 1.015,
    "worst_over_best_max": 1.06,
    "worse_than_hand_max": 0.02,  # tiletune_over_best / hand_over_best - 1, every pair
    "pairs_min": 12,
    "library_pairs_min": 3,
}


def _geomean(values: List[float]) -> Optional[float]:
    vals = [v for v in values if v is not None and v > 0 and math.isfinite(v)]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


def summarize(rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    """The run's ratios against issue 25's goals (``None`` where no row had the value)."""
    first = [r["tiletune_first_s"] / r["hand_first_s"] for r in rows
             if r.get("tiletune_first_s") and r.get("hand_first_s")]
    over = [r["tiletune_over_best"] for r in rows if r.get("tiletune_over_best")]
    hand_over = [r["hand_over_best"] for r in rows if r.get("hand_over_best")]
    vs_hand = [r["tiletune_over_best"] / r["hand_over_best"] - 1.0 for r in rows
               if r.get("tiletune_over_best") and r.get("hand_over_best")]
    noise = [r["reference"]["noise"] for r in rows if (r.get("reference") or {}).get("noise") is not None]
    s: Dict[str, Any] = {
        "pairs": len(rows),
        "library_pairs": sum(1 for r in rows if r.get("source") != "fixture"),
        "median_first_tune_over_hand": statistics.median(first) if first else None,
        "worst_first_tune_over_hand": max(first) if first else None,
        "median_tiletune_first_s": statistics.median([r["tiletune_first_s"] for r in rows
                                                      if r.get("tiletune_first_s")]) if first else None,
        "median_hand_first_s": statistics.median([r["hand_first_s"] for r in rows
                                                  if r.get("hand_first_s")]) if first else None,
        "geomean_tiletune_over_best": _geomean(over),
        "worst_tiletune_over_best": max(over) if over else None,
        "geomean_hand_over_best": _geomean(hand_over),
        "worst_worse_than_hand": max(vs_hand) if vs_hand else None,
        "median_noise": statistics.median(noise) if noise else None,
        "wrong_results": [f"{r['kernel']} {r['shape']}" for r in rows
                          if r.get("tiletune_correct") is False or r.get("hand_correct") is False],
    }
    g = GOALS
    s["goals"] = {
        "median_first_tune_over_hand": _met(s["median_first_tune_over_hand"], g["median_first_tune_over_hand_max"]),
        "no_first_tune_over_hand": _met(s["worst_first_tune_over_hand"], g["worst_first_tune_over_hand_max"]),
        "geomean_over_best": _met(s["geomean_tiletune_over_best"], g["geomean_over_best_max"]),
        "worst_over_best": _met(s["worst_tiletune_over_best"], g["worst_over_best_max"]),
        "never_2pct_worse_than_hand": _met(s["worst_worse_than_hand"], g["worse_than_hand_max"]),
        "pairs": s["pairs"] >= g["pairs_min"] and s["library_pairs"] >= g["library_pairs_min"],
    }
    return s


def _met(value: Optional[float], limit: float) -> Optional[bool]:
    return None if value is None else value <= limit


def _f(v: Any, digits: int = 2) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def _shape(shape: Dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in shape.items())


def table(rows: List[Dict[str, Any]]) -> List[str]:
    """The per-pair markdown table."""
    out = ["| kernel | source | shape | tiletune first s | hand first s | tt/hand | compiled | timed | hand list "
           "| tiletune/best | hand/best | tiletune pick | hand pick | best |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ratio = (r["tiletune_first_s"] / r["hand_first_s"]) if r.get("tiletune_first_s") and r.get("hand_first_s") \
            else None
        ref = r.get("reference") or {}
        out.append(f"| {r['kernel']} | {r['source']} | {_shape(r['shape'])} | {_f(r.get('tiletune_first_s'))} | "
                   f"{_f(r.get('hand_first_s'))} | {_f(ratio)} | {_f(r.get('configs_compiled'))} | "
                   f"{_f(r.get('configs_timed'))} | {_f(r.get('hand_configs'))} | "
                   f"{_f(r.get('tiletune_over_best'), 3)} | {_f(r.get('hand_over_best'), 3)} | "
                   f"{r.get('tiletune_pick', '-')} | {r.get('hand_pick', '-')} | {ref.get('best') or '-'} |")
    return out


def timeline_lines(tl: Optional[Dict[str, Any]]) -> List[str]:
    """The profiled first tune: seconds per kind, then its events in order."""
    if not tl:
        return ["(no profiled first tune)"]
    s = tl["summary"]
    out = [f"Profiled: {tl['kernel']} {_shape(tl['shape'])} (tiletune's cold first tune).", "",
           "| wall | setup | synthesis | compile (children) | waves | compile wait | launcher | check | timing "
           "| retime | idle |",
           "|---|---|---|---|---|---|---|---|---|---|---|",
           "| " + " | ".join(_f(s.get(k), 3) for k in ("wall", "setup", "synthesis", "compile"))
           + f" | {int(s.get('compile_waves', 0))} | "
           + " | ".join(_f(s.get(k), 3) for k in ("compile_wait", "launcher", "check", "timing", "retime", "idle"))
           + " |", "", "```"]
    for e in tl["events"]:
        shown = ("batch", "search", "setup", "synthesis", "launcher", "retime")
        if e["kind"] in shown or e["end_s"] - e["start_s"] > 0.05:
            out.append(f"{e['start_s']:8.3f} {e['end_s']:8.3f}  {e['kind']:<12} {e['label']}")
    out.append("```")
    return out


def write_outputs(results: Dict[str, Any], out_dir: Path) -> None:
    """``first_tune_cold.json`` and ``first_tune_cold.md`` under ``out_dir``."""
    (out_dir / "first_tune_cold.json").write_text(json.dumps(results, indent=1, default=str) + "\n")
    s = results.get("summary") or {}
    meta = results.get("meta") or {}
    lines = ["# Cold first tune: tiletune configs=[] against the authors' lists", "",
             f"Run {meta.get('date')} (commit {meta.get('commit')}, source {meta.get('source_digest')}, "
             f"{'DRY RUN, interpreter' if meta.get('dry_run') else 'GPU'}); method: {meta.get('method')}.", "",
             "## Summary", ""]
    for k, v in s.items():
        if k != "goals":
            lines.append(f"- {k}: {_f(v, 3)}")
    lines += ["", "Goals (issue 25): " + ", ".join(f"{k} {'met' if v else ('-' if v is None else 'NOT met')}"
                                                  for k, v in (s.get("goals") or {}).items()), "", "## Pairs", ""]
    lines += table(results.get("rows") or [])
    if results.get("skipped"):
        lines += ["", "Skipped: " + "; ".join(f"{x['kernel']} {_shape(x['shape'])} ({x['why']})"
                                              for x in results["skipped"])]
    lines += ["", "## Timeline of one cold first tune", ""] + timeline_lines(results.get("timeline"))
    (out_dir / "first_tune_cold.md").write_text("\n".join(lines) + "\n")


def print_summary(results: Dict[str, Any]) -> None:
    """The short table printed last."""
    s = results.get("summary") or {}
    print("\n| kernel | shape | tt first s | hand first s | tt/best | hand/best |")
    for r in results.get("rows") or []:
        print(f"| {r['kernel']} | {_shape(r['shape'])} | {_f(r.get('tiletune_first_s'))} | "
              f"{_f(r.get('hand_first_s'))} | {_f(r.get('tiletune_over_best'), 3)} | "
              f"{_f(r.get('hand_over_best'), 3)} |")
    tl = (results.get("timeline") or {}).get("summary") or {}
    print(f"pairs {s.get('pairs')} ({s.get('library_pairs')} library); first tune tiletune/hand median "
          f"{_f(s.get('median_first_tune_over_hand'))}, worst {_f(s.get('worst_first_tune_over_hand'))}; "
          f"tiletune/best geomean {_f(s.get('geomean_tiletune_over_best'), 3)}, worst "
          f"{_f(s.get('worst_tiletune_over_best'), 3)}; hand/best geomean {_f(s.get('geomean_hand_over_best'), 3)}; "
          f"noise {_f(s.get('median_noise'), 3)}")
    if tl:
        print("timeline (s): " + ", ".join(f"{k} {_f(v, 2)}" for k, v in tl.items()))
    print("goals: " + ", ".join(f"{k}={v}" for k, v in (s.get("goals") or {}).items()))
