"""Summaries and output of bench/gpu_bench.py (ratios, summary, JSON, Markdown, table), --merge, --list-spaces
and the overhead part."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

torch: Any = None  # set by gpu_bench._runtime()
triton: Any = None

from gpu_bench_lib import (DEFAULT_TUNE_FIXTURES, GOALS, MATMUL_FAMILY, SCHEMA, FreshDirs, _check_outputs, _wall_do_bench, config_dict,
                           config_label, exhaustive_rules, exhaustive_space, fresh_jit, geomean, log, shape_key)

def _public_exh(exh: dict) -> dict:
    return {k: v for k, v in exh.items() if not k.startswith("_") and k != "ok_configs"}


def _fmt(v, nd: int = 4) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{nd}f}"
    return str(v)


def ratios(rec: dict) -> dict:
    tt = (rec.get("tiletune") or {}).get("ms")
    hand = (rec.get("hand") or {}).get("ms")
    exh = (rec.get("exhaustive") or {}).get("ms")
    tor = (rec.get("torch") or {}).get("ms")
    tt_valid = (rec.get("tiletune") or {}).get("valid", True)
    t_first = (rec.get("tiletune") or {}).get("first_tune_s")
    h_first = (rec.get("hand") or {}).get("first_tune_s")
    e_first = ((rec.get("exhaustive") or {}).get("first_tune") or {}).get("first_tune_s")
    tex_first = (((rec.get("exhaustive") or {}).get("first_tune") or {}).get("tiletune_exhaustive") or {}).get(
        "first_tune_s")
    ex = rec.get("exhaustive") or {}
    screen_wall = ex.get("wall_s") if ex.get("complete") else None

    def div(a, b):
        return a / b if a is not None and b not in (None, 0) else None

    return {
        "tiletune_over_exhaustive": div(tt, exh) if tt_valid else None,
        "tiletune_over_hand": div(tt, hand) if tt_valid else None,
        "tiletune_over_torch": div(tt, tor) if tt_valid else None,
        "hand_over_exhaustive": div(hand, exh),
        "first_tune_speedup_vs_exhaustive": div(e_first, t_first),
        "first_tune_exhaustive_measured": bool(((rec.get("exhaustive") or {}).get("first_tune") or {}).get("measured")),
        "first_tune_speedup_vs_hand": div(h_first, t_first),
        "first_tune_speedup_vs_tiletune_exhaustive_measured": div(tex_first, t_first),
        "first_tune_speedup_vs_exhaustive_screening_measured": div(screen_wall, t_first),
    }


# ============================================================================ summaries and output


def summarize(results: dict) -> dict:
    out: Dict[str, Any] = {"goals": GOALS}
    syn = results.get("synth") or {}
    if syn.get("ratio") is not None:
        out["synth"] = {"ratio": syn["ratio"], "rank": syn.get("tiletune_best_rank"),
                        "met": syn["ratio"] <= GOALS["synth_ratio_max"],
                        "compiled": {"tiletune": (syn.get("tiletune") or {}).get("n_compiled"),
                                     "exhaustive": (syn.get("exhaustive") or {}).get("n_compiled")}}
    pairs = [r for per in (results.get("tune") or {}).values() for r in per.values() if r.get("ratios")]
    if pairs:
        te = [r["ratios"]["tiletune_over_exhaustive"] for r in pairs]
        th = [r["ratios"]["tiletune_over_hand"] for r in pairs]
        tt = [r["ratios"]["tiletune_over_torch"] for r in pairs]
        sp = [r["ratios"]["first_tune_speedup_vs_exhaustive"] for r in pairs]
        sph = [r["ratios"]["first_tune_speedup_vs_hand"] for r in pairs]
        g_te, g_th, g_sp = geomean(te), geomean(th), geomean(sp)
        n_meas = sum(1 for r in pairs if r["ratios"].get("first_tune_exhaustive_measured"))
        invalid = [f"{r['fixture']} {shape_key(r['shape'])}" + (
                   f" (tuning failed: {(r.get('tiletune') or {}).get('error')})"
                   if (r.get("tiletune") or {}).get("error") else "")
                   for r in pairs
                   if not (r.get("tiletune") or {}).get("valid", True) or (r.get("tiletune") or {}).get("error")]
        incomplete = [f"{r['fixture']} {shape_key(r['shape'])}" for r in pairs
                      if not (r.get("exhaustive") or {}).get("complete", False)]
        est_err = [((r.get("exhaustive") or {}).get("first_tune") or {}) for r in pairs]
        est_err = [ft["estimated_s"] / ft["first_tune_s"] for ft in est_err
                   if ft.get("measured") and ft.get("estimated_s") and ft.get("first_tune_s")]
        cubins = {m: min(((r.get(m) or {}).get("cubins_in_fresh_cache") or 0) for r in pairs)
                  for m in ("tiletune", "hand")}
        by_set: Dict[str, Any] = {}
        for name in sorted({r.get("set", "existing") for r in pairs}):
            vals = [r["ratios"]["tiletune_over_exhaustive"] for r in pairs if r.get("set", "existing") == name]
            vals = [v for v in vals if v is not None]
            by_set[name] = {"pairs": len(vals), "geomean_tiletune_over_exhaustive": geomean(vals),
                            "worst_tiletune_over_exhaustive": max(vals, default=None)}
        firsts = {m: [(r.get(m) or {}).get("first_tune_s") for r in pairs] for m in ("tiletune", "hand")}
        median_first = {m: statistics.median([v for v in vs if v is not None]) if any(v is not None for v in vs)
                        else None for m, vs in firsts.items()}
        tex = [r["ratios"].get("first_tune_speedup_vs_tiletune_exhaustive_measured") for r in pairs]
        scr = [r["ratios"].get("first_tune_speedup_vs_exhaustive_screening_measured") for r in pairs]
        scr_family = [r["ratios"].get("first_tune_speedup_vs_exhaustive_screening_measured") for r in pairs
                      if r.get("fixture") in MATMUL_FAMILY]
        out["tune"] = {
            "pairs": len(pairs),
            "by_shape_set": by_set,
            "median_first_tune_s": median_first,
            "geomean_first_tune_speedup_vs_tiletune_exhaustive_measured": geomean([v for v in tex if v]),
            "first_tune_tiletune_exhaustive_measured": sum(1 for v in tex if v),
            "geomean_first_tune_speedup_vs_exhaustive_screening_measured": geomean([v for v in scr if v]),
            "first_tune_exhaustive_screening_measured": sum(1 for v in scr if v),
            "geomean_first_tune_speedup_vs_exhaustive_screening_matmul_family": geomean([v for v in scr_family if v]),
            "min_cubins_written_to_fresh_triton_cache": cubins,
            "exhaustive_first_tune_estimate_over_measured": geomean(est_err),
            "fixtures": sorted({r["fixture"] for r in pairs}),
            "geomean_tiletune_over_exhaustive": g_te,
            "geomean_tiletune_over_hand": g_th,
            "geomean_tiletune_over_torch": geomean(tt),
            "geomean_first_tune_speedup_vs_exhaustive": g_sp,
            "geomean_first_tune_speedup_vs_hand": geomean(sph),
            "first_tune_exhaustive_measured": n_meas,
            "first_tune_exhaustive_estimated": len(pairs) - n_meas,
            "worst_tiletune_over_exhaustive": max((v for v in te if v is not None), default=None),
            "tiletune_pick_invalid": invalid,
            "exhaustive_incomplete": incomplete,
            "met": {
                "tiletune_over_exhaustive": g_te is not None and g_te <= GOALS["tiletune_over_exhaustive_max"],
                "tiletune_over_exhaustive_worst": bool(te) and all(
                    v is not None and v <= GOALS["tiletune_over_exhaustive_worst"] for v in te),
                "median_first_tune_vs_hand": None not in median_first.values() and
                median_first["tiletune"] <= GOALS["median_first_tune_over_hand_max"] * median_first["hand"],
                "tiletune_over_hand": g_th is not None and g_th < GOALS["tiletune_over_hand_max"],
                "first_tune_speedup": g_sp is not None and g_sp >= GOALS["first_tune_speedup_min"],
            },
        }
    ov = results.get("overhead") or {}
    if ov.get("us_per_launch"):
        out["overhead_us_per_launch"] = ov["us_per_launch"]
    errors = [f"{r.get('fixture')} {shape_key(r.get('shape', {}))}: {r['error']}"
              for per in (results.get("tune") or {}).values() for r in per.values() if r.get("error")]
    skipped = [f"{r.get('fixture')} {shape_key(r.get('shape', {}))}"
               for per in (results.get("tune") or {}).values() for r in per.values() if r.get("skipped")]
    if errors:
        out["errors"] = errors
    if skipped:
        out["skipped"] = skipped
    return out


def _json_default(o):
    if hasattr(o, "all_kwargs"):
        return config_dict(o)
    if isinstance(o, Path):
        return str(o)
    return str(o)


def write_outputs(results: dict, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "gpu_bench.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(results, indent=1, default=_json_default, allow_nan=True))
    tmp.replace(path)
    md = out_dir / "gpu_bench.md"
    tmp = md.with_suffix(".md.tmp")
    tmp.write_text(render_markdown(results))
    tmp.replace(md)


def tune_rows(results: dict) -> List[dict]:
    rows = []
    for name, per in (results.get("tune") or {}).items():
        for skey, r in per.items():
            rows.append(r)
    return rows


def render_markdown(results: dict) -> str:
    s = results.get("summary") or summarize(results)
    lines = ["# GPU benchmark (bench/gpu_bench.py)", ""]
    for run in results.get("runs", []):
        lines.append(f"- {run.get('date')}: {run.get('device')}; torch {run.get('torch')}, triton {run.get('triton')}, "
                     f"tiletune {run.get('tiletune')} ({run.get('commit')}); `{' '.join(run.get('argv', []))}`"
                     + (" **DRY RUN (interpreter, wall clock)**" if run.get("dry_run") else ""))
    if results.get("runs"):
        st = results["runs"][0].get("settings", {})
        lines += ["", f"Screening: {st.get('screen')}. Final: {st.get('final')}; "
                      f"the top {st.get('retime_top')} of each method re-timed."]
    lines.append("")
    syn = results.get("synth")
    if syn:
        lines += ["## Synthesis quality (matmul)", ""]
        if syn.get("ratio") is not None:
            ex = syn.get("exhaustive") or {}
            tt = syn.get("tiletune") or {}
            lines += [
                f"{syn['fixture']} {shape_key(syn['shape'])} {syn.get('dtype', '')}, target {syn.get('target')}:",
                "",
                "| | configs compiled | valid | best (ms) | config |",
                "|---|---:|---:|---:|---|",
                f"| tiletune top-{tt.get('n_candidates')} | {tt.get('n_compiled')} | {tt.get('n_valid')} | "
                f"{_fmt(syn.get('tiletune_best_ms'))} | {syn.get('tiletune_best')} (rank {syn.get('tiletune_best_rank')}) |",
                f"| exhaustive ({ex.get('n_grid')} configs; {(ex.get('space') or {}).get('n_heavy_pruned')} "
                f"register-heavy pruned) | {ex.get('n_compiled')} | {ex.get('n_ok')} | "
                f"{_fmt(syn.get('exhaustive_best_ms'))} | {syn.get('exhaustive_best')} |",
                f"| torch (cuBLAS) | | | {_fmt(syn.get('torch_ms'))} | |",
                "",
                f"Ratio tiletune / exhaustive: **{syn['ratio']:.3f}** (goal <= {GOALS['synth_ratio_max']}: "
                f"{'met' if syn['ratio'] <= GOALS['synth_ratio_max'] else 'NOT met'}); "
                "exhaustive " + ("complete" if ex.get("complete") else
                                 f"stopped early: {ex.get('n_done')}/{ex.get('n_grid')}") + ".",
                "",
            ]
        else:
            lines += [f"Not complete: {syn.get('error')}", ""]
    rows = tune_rows(results)
    if rows:
        lines += ["## Tuning quality and first-tune time", "",
                  "| fixture | shape | tiletune ms | hand ms | exhaustive ms | torch ms | tt/exh | tt/hand | "
                  "first tune s: tiletune | hand | exhaustive | speedup vs exh |",
                  "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in rows:
            if r.get("skipped") or r.get("error"):
                why = r.get("skipped") or "error: " + str(r.get("error"))[:80]
                lines.append(f"| {r['fixture']} | {shape_key(r['shape'])} | {why} |" + " |" * 9)
                continue
            ra = r.get("ratios") or {}
            ex = r.get("exhaustive") or {}
            ft = ex.get("first_tune") or {}
            e_first = ft.get("first_tune_s")
            e_txt = "-" if e_first is None else (f"{e_first:.1f}" if ft.get("measured") else f"~{e_first:.0f} (est.)")
            tt = r.get("tiletune") or {}
            tt_ms = _fmt(tt.get("ms")) + ("" if tt.get("valid", True) else " INVALID")
            ex_ms = _fmt(ex.get("ms")) + ("" if ex.get("complete") else f" ({ex.get('n_done')}/{ex.get('n_grid')})")
            lines.append(
                f"| {r['fixture']} | {shape_key(r['shape'])} | {tt_ms} | {_fmt((r.get('hand') or {}).get('ms'))} | "
                f"{ex_ms} | {_fmt((r.get('torch') or {}).get('ms'))} | {_fmt(ra.get('tiletune_over_exhaustive'), 3)} | "
                f"{_fmt(ra.get('tiletune_over_hand'), 3)} | {_fmt(tt.get('first_tune_s'), 1)} | "
                f"{_fmt((r.get('hand') or {}).get('first_tune_s'), 1)} | {e_txt} | "
                f"{_fmt(ra.get('first_tune_speedup_vs_exhaustive'), 1)} |")
        t = s.get("tune") or {}
        if t:
            met = t.get("met", {})
            lines += [
                "",
                f"Over {t['pairs']} (fixture, shape) pairs:",
                "",
                f"- geomean tiletune / exhaustive: **{_fmt(t.get('geomean_tiletune_over_exhaustive'), 3)}** "
                f"(goal <= {GOALS['tiletune_over_exhaustive_max']}: "
                f"{'met' if met.get('tiletune_over_exhaustive') else 'NOT met'}); "
                f"worst {_fmt(t.get('worst_tiletune_over_exhaustive'), 3)} (goal <= "
                f"{GOALS['tiletune_over_exhaustive_worst']}: "
                f"{'met' if met.get('tiletune_over_exhaustive_worst') else 'NOT met'})",
                f"- geomean tiletune / hand: **{_fmt(t.get('geomean_tiletune_over_hand'), 3)}** "
                f"(goal < 1: {'met' if met.get('tiletune_over_hand') else 'NOT met'})",
                f"- geomean first-tune speedup over triton.autotune(exhaustive): "
                f"**{_fmt(t.get('geomean_first_tune_speedup_vs_exhaustive'), 1)}x** (goal >= "
                f"{GOALS['first_tune_speedup_min']:.0f}x: {'met' if met.get('first_tune_speedup') else 'NOT met'}); "
                f"exhaustive first tune measured for {t.get('first_tune_exhaustive_measured')} pairs, estimated for "
                f"{t.get('first_tune_exhaustive_estimated')} (n_list x (sampled compile + do_bench time per config))",
                f"- geomean first-tune speedup over triton.autotune(HAND_CONFIGS): "
                f"{_fmt(t.get('geomean_first_tune_speedup_vs_hand'), 2)}x",
                f"- geomean tiletune / torch: {_fmt(t.get('geomean_tiletune_over_torch'), 3)}",
                f"- median first-tune wall time: tiletune {_fmt((t.get('median_first_tune_s') or {}).get('tiletune'), 2)}"
                f" s, triton.autotune(HAND_CONFIGS) {_fmt((t.get('median_first_tune_s') or {}).get('hand'), 2)} s "
                f"(goal: tiletune <= hand: {'met' if met.get('median_first_tune_vs_hand') else 'NOT met'})",
                f"- geomean first-tune speedup over tiletune(search='exhaustive') (measured, "
                f"{t.get('first_tune_tiletune_exhaustive_measured')} pairs): "
                f"{_fmt(t.get('geomean_first_tune_speedup_vs_tiletune_exhaustive_measured'), 1)}x",
            ]
            lines.append(
                f"- geomean first-tune speedup over the exhaustive screening's measured wall time (parallel compile "
                f"+ screening, cold Triton cache only on a fixture's first shape): "
                f"{_fmt(t.get('geomean_first_tune_speedup_vs_exhaustive_screening_measured'), 1)}x over "
                f"{t.get('first_tune_exhaustive_screening_measured')} pairs; matmul family "
                f"{_fmt(t.get('geomean_first_tune_speedup_vs_exhaustive_screening_matmul_family'), 1)}x")
            for name, v in (t.get("by_shape_set") or {}).items():
                lines.append(f"- {name} shapes ({v['pairs']} pairs): geomean tiletune / exhaustive "
                             f"{_fmt(v['geomean_tiletune_over_exhaustive'], 3)}, worst "
                             f"{_fmt(v['worst_tiletune_over_exhaustive'], 3)}")
            if t.get("tiletune_pick_invalid"):
                lines.append("- tiletune failed, or picked a config that failed validation: "
                             + ", ".join(t["tiletune_pick_invalid"]))
            unstable = [f"{r['fixture']} {shape_key(r['shape'])}" for r in rows
                        if ((r.get("exhaustive") or {}).get("unstable"))]
            if unstable:
                lines.append("- reference timed unstably (its choosing and reporting rounds differ by more than "
                             "25%; the median of all its rounds is used): " + ", ".join(unstable))
            if t.get("exhaustive_incomplete"):
                lines.append(f"- exhaustive search stopped early (budget) for: {', '.join(t['exhaustive_incomplete'])}")
        lines += ["", "### Picks and exhaustive spaces", "", f"Exhaustive grids: {results.get('exhaustive_rules', '')}", ""]
        for r in rows:
            if r.get("skipped") or r.get("error"):
                continue
            ex = r.get("exhaustive") or {}
            sp = ex.get("space") or {}
            lines.append(f"- **{r['fixture']} {shape_key(r['shape'])}** ({r.get('dtype')}): tiletune "
                         f"`{(r.get('tiletune') or {}).get('label')}`, hand `{(r.get('hand') or {}).get('label')}`, "
                         f"exhaustive best `{ex.get('best')}`; grid {sp.get('domains')} x warps {sp.get('num_warps')} "
                         f"x stages {sp.get('num_stages')} = {ex.get('n_grid')} configs, {ex.get('n_ok')} valid, "
                         f"{ex.get('n_wrong')} wrong, {ex.get('n_failed', 0) + ex.get('n_compile_failed', 0)} failed")
        lines.append("")
    ov = results.get("overhead") or {}
    if ov.get("us_per_launch"):
        lines += ["## Cached-call overhead", "",
                  f"vector_add n={ov['n_elements']}, {ov['launches']} launches x {ov['rounds']} rounds, median, "
                  f"host time per launch (perf_counter around the loop, then synchronize):", "",
                  "| launch | us/launch | over plain jit |", "|---|---:|---:|"]
        for k, v in ov["us_per_launch"].items():
            lines.append(f"| {k} | {v:.2f} | {ov['over_plain_us'][k]:+.2f} |")
        lines.append("")
    if s.get("errors"):
        lines += ["## Errors", ""] + [f"- {e}" for e in s["errors"]] + [""]
    return "\n".join(lines)


def print_table(results: dict) -> None:
    s = summarize(results)
    print("", flush=True)
    syn = results.get("synth") or {}
    if syn.get("ratio") is not None:
        print(f"synth  matmul {shape_key(syn['shape'])}: tiletune best {syn['tiletune_best_ms']:.4f} ms "
              f"(rank {syn['tiletune_best_rank']}/{(syn.get('tiletune') or {}).get('n_candidates')}) vs exhaustive "
              f"{syn['exhaustive_best_ms']:.4f} ms ({(syn.get('exhaustive') or {}).get('n_compiled')} compiled): "
              f"ratio {syn['ratio']:.3f} (goal <= {GOALS['synth_ratio_max']})")
    rows = tune_rows(results)
    if rows:
        hdr = (f"{'fixture':<17} {'shape':<34} {'tt ms':>8} {'hand ms':>8} {'exh ms':>8} {'torch ms':>8} "
               f"{'tt/exh':>6} {'tt/hand':>7} {'tt 1st s':>8} {'exh 1st s':>10}")
        print(hdr)
        for r in rows:
            if r.get("skipped") or r.get("error"):
                why = r.get("skipped") or "ERROR " + str(r.get("error"))[:60]
                print(f"{r['fixture']:<17} {shape_key(r['shape'])[:34]:<34} {why}")
                continue
            ra = r["ratios"]
            ft = (r["exhaustive"].get("first_tune") or {})
            e_first = ft.get("first_tune_s")
            e_txt = "-" if e_first is None else (f"{e_first:.1f}" if ft.get("measured") else f"~{e_first:.0f}est")
            print(f"{r['fixture']:<17} {shape_key(r['shape'])[:34]:<34} {_fmt(r['tiletune'].get('ms')):>8} "
                  f"{_fmt(r['hand'].get('ms')):>8} {_fmt(r['exhaustive'].get('ms')):>8} {_fmt(r['torch'].get('ms')):>8} "
                  f"{_fmt(ra.get('tiletune_over_exhaustive'), 3):>6} {_fmt(ra.get('tiletune_over_hand'), 3):>7} "
                  f"{_fmt(r['tiletune'].get('first_tune_s'), 1):>8} {e_txt:>10}")
        t = s.get("tune") or {}
        if t:
            mf = t.get("median_first_tune_s") or {}
            print(f"geomean tt/exh {_fmt(t.get('geomean_tiletune_over_exhaustive'), 3)} "
                  f"(goal <= {GOALS['tiletune_over_exhaustive_max']}), worst "
                  f"{_fmt(t.get('worst_tiletune_over_exhaustive'), 3)} (goal <= "
                  f"{GOALS['tiletune_over_exhaustive_worst']}), median first tune tiletune "
                  f"{_fmt(mf.get('tiletune'), 2)} s vs hand {_fmt(mf.get('hand'), 2)} s (goal <=)")
            print(f"geomean tt/exh {_fmt(t.get('geomean_tiletune_over_exhaustive'), 3)}, "
                  f"tt/hand {_fmt(t.get('geomean_tiletune_over_hand'), 3)} (goal < 1), first-tune speedup vs exh "
                  f"{_fmt(t.get('geomean_first_tune_speedup_vs_exhaustive'), 1)}x (goal >= 5; "
                  f"{t.get('first_tune_exhaustive_measured')} measured, {t.get('first_tune_exhaustive_estimated')} estimated)")
    ov = results.get("overhead") or {}
    if ov.get("us_per_launch"):
        print("overhead us/launch: " + ", ".join(f"{k} {v:.2f}" for k, v in ov["us_per_launch"].items()))
    for e in s.get("errors", []):
        print(f"ERROR {e}")
    sys.stdout.flush()


def merge(opts: argparse.Namespace) -> int:
    merged: Dict[str, Any] = {"schema": SCHEMA, "runs": [], "synth": None, "tune": {}, "overhead": None,
                              "exhaustive_rules": exhaustive_rules(), "summary": {}}
    for p in opts.merge:
        data = json.loads(Path(p).read_text())
        merged["runs"].extend(data.get("runs", []))
        if data.get("synth") and (data["synth"].get("ratio") is not None or merged["synth"] is None):
            merged["synth"] = data["synth"]
        for name, per in (data.get("tune") or {}).items():
            for skey, rec in per.items():
                old = merged["tune"].setdefault(name, {}).get(skey)
                if old is None or not (rec.get("skipped") or rec.get("error")) or old.get("skipped") or old.get("error"):
                    merged["tune"][name][skey] = rec
        if data.get("overhead") and data["overhead"].get("us_per_launch"):
            merged["overhead"] = data["overhead"]
    merged["summary"] = summarize(merged)
    write_outputs(merged, Path(opts.out))
    print_table(merged)
    return 0


def list_spaces(opts: argparse.Namespace) -> int:
    """Grid sizes at the BENCH_SHAPES, and how many distinct compilations they need (no device)."""
    import fixtures
    from tiletune.analysis import analyze_kernel

    names = ([f.strip() for f in opts.fixtures.split(",") if f.strip()] if opts.fixtures
             else list(DEFAULT_TUNE_FIXTURES))
    total = 0
    print(f"{'fixture':<17} {'shape':<42} {'grid':>6} {'pruned':>6}  compile set")
    for name in names:
        fx = fixtures.load(name)
        spec = analyze_kernel(fx.KERNEL)
        sets: Dict[tuple, int] = {}
        for i, shape in enumerate(fx.BENCH_SHAPES):
            args = fx.make_args(shape, device="meta")
            sp = exhaustive_space(spec, args, False, include_heavy=opts.include_heavy)
            # what a launch specialises on: ints divisible by 16 or equal to 1, constexpr values
            key = tuple(sorted((k, (v % 16 == 0, v == 1) if isinstance(v, int) and not isinstance(v, bool) else v)
                               for k, v in args.items() if not hasattr(v, "dtype") and not isinstance(v, float)))
            sets.setdefault(key, len(sets))
            total += sp.desc["n_grid"]
            print(f"{name:<17} {shape_key(shape)[:42]:<42} {sp.desc['n_grid']:>6} {sp.desc['n_heavy_pruned']:>6}  "
                  f"#{sets[key]}  {sp.desc['domains']} w{sp.desc['num_warps']} s{sp.desc['num_stages']}")
    print(f"total configs to screen: {total}")
    return 0


def part_overhead(self: Any) -> None:
    """The overhead part: host time per launch once tuned (plain jit, triton.autotune, tiletune)."""
    import fixtures
    import tiletune

    fx = fixtures.load("vector_add")
    n = 4096
    log(f"overhead: vector_add n={n}, {self.opts.overhead_launches} launches per measurement")
    args = fx.make_args({"n_elements": n}, device=self.dev.name)
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)  # noqa: E731
    kw = {}
    if self.dev.dry:
        kw["do_bench"] = _wall_do_bench(self.dev)
    with FreshDirs(self.fresh_base, "ovh"):
        stock = triton.autotune(configs=fx.HAND_CONFIGS, key=fx.KEY, **kw)(fresh_jit(fx))
        tt = tiletune.autotune(configs=[], key=fx.KEY, target=self.target())(fresh_jit(fx))
        plain = fresh_jit(fx)
        stock[grid](**args)
        tt[grid](**args)
        meta = tt.best_config.all_kwargs()
        plain[grid](**args, **meta)
        self.dev.sync()
        launchers = {
            "plain_jit": lambda: plain[grid](**args, **meta),
            "triton_autotune": lambda: stock[grid](**args),
            "tiletune_autotune": lambda: tt[grid](**args),
        }
        n_launch = self.opts.overhead_launches
        for f in launchers.values():
            for _ in range(max(5, n_launch // 10)):
                f()
        self.dev.sync()
        samples: Dict[str, List[float]] = {k: [] for k in launchers}
        rounds = 2 if self.dev.dry else 5
        for r in range(rounds):
            for k, f in launchers.items():
                self.dev.sync()
                t0 = time.perf_counter()
                for _ in range(n_launch):
                    f()
                self.dev.sync()
                samples[k].append((time.perf_counter() - t0) / n_launch * 1e6)
        ok, why = _check_outputs(fx, args)
    rec = {
        "fixture": "vector_add", "n_elements": n, "launches": n_launch, "rounds": rounds,
        "config": config_label(tt.best_config),
        "us_per_launch": {k: statistics.median(v) for k, v in samples.items()},
        "samples_us": samples,
        "output_ok": ok,
    }
    base = rec["us_per_launch"]["plain_jit"]
    rec["over_plain_us"] = {k: v - base for k, v in rec["us_per_launch"].items()}
    self.results["overhead"] = rec
    log("  us/launch: " + ", ".join(f"{k} {v:.2f}" for k, v in rec["us_per_launch"].items()))
    self.save()


def estimate_stock_first(self: Any, prob: Any, ok_configs: list, n_list: int) -> dict:
    """Per-config compile (fresh caches, one at a time) + stock do_bench time on a sample, times n_list."""
    k = min(self.opts.est_sample, len(ok_configs))
    sample = self.rng.sample(ok_configs, k) if k else []
    bench_s: List[float] = []
    known = self.compile_samples.get(prob.name)
    cubins = None
    if known and len(known) >= k:
        # compile time does not depend on the shape: reuse this fixture's sample, time do_bench only
        compile_s = list(known)
        for cfg in sample:
            meta = cfg.all_kwargs()
            try:
                prob.call(meta)()
                self.dev.sync()
            except Exception:  # noqa: BLE001
                continue
            t0 = time.perf_counter()
            self.timer.stock_do_bench(prob.call(meta))
            bench_s.append(time.perf_counter() - t0)
        compile_from = "an earlier shape of this fixture"
    else:
        compile_s = []
        with FreshDirs(self.fresh_base, "est") as dirs:
            jit = fresh_jit(prob.fx)
            for cfg in sample:
                meta = cfg.all_kwargs()
                self.dev.sync()
                t0 = time.perf_counter()
                try:
                    prob.call(meta, kernel=jit)()
                    self.dev.sync()
                except Exception:  # noqa: BLE001
                    continue
                compile_s.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                self.timer.stock_do_bench(prob.call(meta, kernel=jit))
                bench_s.append(time.perf_counter() - t0)
            cubins = dirs.cubins()
        if compile_s:
            self.compile_samples[prob.name] = list(compile_s)
        compile_from = "this shape, fresh caches, one at a time"
    if not compile_s or not bench_s:
        return {"estimated_s": None, "sample": k}
    per = statistics.mean(compile_s) + statistics.mean(bench_s)
    return {
        "estimated_s": per * n_list,
        "per_config_compile_s": statistics.mean(compile_s),
        "per_config_bench_s": statistics.mean(bench_s),
        "compile_sample": len(compile_s),
        "compile_sample_from": compile_from,
        "bench_sample": len(bench_s),
        "sample_cubins_in_fresh_cache": cubins,
        "n_list": n_list,
    }
