"""A cold first tune, as a user meets it: tiletune ``configs=[]`` against the author's own list, each side in its
own fresh process with empty Triton and tiletune caches, and the best config known from a screening re-timed
interleaved with both picks.

    python bench/first_tune_cold.py                 # on a GPU (one H100: about 8 minutes)
    python bench/first_tune_cold.py --dry-run       # 2 tiny pairs under TRITON_INTERPRET=1 on the CPU

Per pair (``bench/cold_pairs.py``: fixtures and dev-corpus library kernels at odd and skinny shapes), three
processes, one after the other:

* ``tiletune`` and ``hand`` (their order alternates from pair to pair): a fresh interpreter with its own empty
  ``TRITON_CACHE_DIR`` and ``TILETUNE_CACHE_DIR``; it builds the inputs (which starts CUDA, as a user program
  does), then times the first launch of the tuned kernel -- the whole first tune, nothing warmed before it;
* ``reference``: screens the author's list, both picks and the exhaustive power-of-two grid of
  ``bench/gpu_bench_lib.py`` (a seeded sample of ``--grid-sample`` points where the grid is larger), then
  re-times the screening's best few and both picks in ``--rounds`` interleaved rounds; the best known is
  chosen on the even rounds and timed on the odd (``gpu_bench_lib.best_known``).

Every tiletune first tune is profiled (``tiletune.runtime.timeline``: one ``list.append`` an event): compile
waves, launcher builds, checks, timings, re-timing and idle time; each row keeps its timeline's summary and
events, and the first pair's is drawn in the markdown.  Each row also keeps every time both tuners measured
(``timings_ms``, in the order measured) and the reference's screening of every config it screened
(``reference.screened_ms``): the data a miss is diagnosed from.  Writes ``first_tune_cold.json`` and
``first_tune_cold.md`` under ``--out`` (default ``bench/results``) after every pair, and prints a summary
table last.  Pairs that no longer fit ``--budget-s`` are listed as skipped.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

ROOT = Path(__file__).resolve().parent.parent
for _p in (ROOT, ROOT / "bench"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import cold_pairs  # noqa: E402
from cold_report import score_row, summarize, write_outputs  # noqa: E402

#: Seconds a pair is expected to take when nothing is known yet (the budget check before each pair).
PAIR_GUESS_S = 25.0


# ============================================================================ the sides (child processes)


def _config_dict(cfg) -> dict:
    return {"kwargs": dict(cfg.kwargs), "num_warps": cfg.num_warps, "num_stages": cfg.num_stages}


def _config_of(d: dict):
    import triton

    return triton.Config(dict(d["kwargs"]), num_warps=d.get("num_warps"), num_stages=d.get("num_stages"))


def _label(d: Optional[dict]) -> str:
    if not d:
        return "-"
    kw = " ".join(f"{k}={v}" for k, v in d["kwargs"].items())
    return f"{kw} w{d.get('num_warps')} s{d.get('num_stages')}"


def _cubins() -> Optional[int]:
    """Binaries in this process's (fresh) Triton cache: one per compiled config (compile children included)."""
    cache = os.environ.get("TRITON_CACHE_DIR")
    if not cache or os.environ.get("TRITON_INTERPRET") == "1":
        return None
    return sum(1 for _ in Path(cache).rglob("*.cubin"))


def side_first_tune(pair: dict, side: str, dry: bool, profile: bool) -> dict:
    """One side's cold first tune in this (fresh) process: wall seconds, its pick, what it compiled and timed."""
    import torch

    problem = cold_pairs.load(pair)
    device = "cpu" if dry else "cuda"
    args = problem.make_args(pair["shape"], device=device)  # the user's tensors: this starts CUDA
    ref = [r.float() for r in problem.reference(args)]
    kernel = problem.KERNEL
    common = dict(key=problem.KEY, restore_value=problem.RESTORE_VALUE or None,
                  reset_to_zero=problem.RESET_TO_ZERO or None)
    if side == "tiletune":
        import tiletune

        tuned = tiletune.autotune(configs=[], target="h100" if dry else None, **common)(kernel)
    else:
        import triton

        extra = {}
        if dry:  # the stock do_bench asks for a driver
            from gpu_bench_lib import Device, _wall_do_bench

            extra["do_bench"] = _wall_do_bench(Device(True))
        tuned = triton.autotune(configs=list(problem.HAND_CONFIGS), **common, **extra)(kernel)
    if profile:
        from tiletune.runtime import timeline

        timeline.start()
    if not dry:
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    problem.launch(tuned, args)
    if not dry:
        torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    events = None
    if profile:
        events = timeline.stop()
    correct, why = True, ""
    for i, (o, r) in enumerate(zip(problem.outputs(args), ref)):
        try:
            torch.testing.assert_close(o.float(), r, **problem.TOLERANCE)
        except AssertionError as exc:
            correct, why = False, f"output {i}: {str(exc).strip().splitlines()[0][:200]}"
    timings = getattr(tuned, "configs_timings", None) or {}
    facts = dict(getattr(tuned, "search_facts", {}) or {})
    timed = facts.get("measured", len(timings)) if side == "tiletune" else len(timings)
    pick_ms = next((_ms(t) for c, t in timings.items() if _config_dict(c) == _config_dict(tuned.best_config)), None)
    out = {"first_s": wall, "pick": _config_dict(tuned.best_config), "configs_timed": timed,
           "configs_compiled": _cubins(), "correct": correct, "wrong": why,
           "pick_ms": None if pick_ms is None else _finite(pick_ms),
           "timings_ms": [[_label(_config_dict(c)), _finite(_ms(t))] for c, t in timings.items()]}
    if side == "tiletune":
        out["search"] = {k: facts.get(k) for k in ("search", "first_batch", "pool", "measured", "descent_measured",
                                                   "descent_filled", "descent_stopped", "time_budget_s",
                                                   "budget_for_a_round_s", "compile_s", "price_s",
                                                   "seconds", "batches", "compiled_in", "deadline_s", "abandoned",
                                                   "late_timed", "check_probes", "bench_call_s", "retime_short",
                                                   "retime_graph", "screen_graph", "graph_rescreened",
                                                   "graph_rep_ms", "eager_call_ms", "setup_s", "ceiling_s",
                                                   "reserve_s", "round_compile_s", "compile_latency_s")}
        out["ranked"] = [_config_dict(c) for c in sorted(timings, key=lambda c: _ms(timings[c]))[:4]]
    else:
        out["n_configs"] = len(problem.HAND_CONFIGS)
    if events is not None:
        out["timeline"] = events
    return out


def _finite(v: float) -> Optional[float]:
    return v if math.isfinite(v) else None


def _ms(t: Any) -> float:
    v = t[0] if isinstance(t, (list, tuple)) else t
    return float(v) if v is not None and math.isfinite(float(v)) else float("inf")


def same_binaries(sigs: List[str], binary_of) -> Dict[str, str]:
    """Each of ``sigs`` -> the first of ``sigs`` that compiled to the same binary (itself when none did).

    ``binary_of(sig)`` is a digest of the config's compiled binary, or None (not compiled, the interpreter):
    a config without one stands for itself.  Two configs that compile to one binary are one kernel: on a loop-
    free kernel ``num_stages`` changes nothing (fla-core's l2norm_fwd at BT=8, 1 warp: the same cubin at 1, 3
    and 4 stages for sm_90), and timing the copies apart measures only noise (the H100 reference put 1 and 3
    stages 5.3% apart on 2026-11-26).
    """
    first: Dict[str, str] = {}
    out: Dict[str, str] = {}
    for sig in sigs:
        digest = binary_of(sig)
        out[sig] = sig if digest is None else first.setdefault(digest, sig)
    return out


def side_reference(pair: dict, dry: bool, picks: Dict[str, dict], opts: argparse.Namespace) -> dict:
    """The best config known for the pair: screen the author's list, the picks and the exhaustive grid (or a
    seeded sample of it), then re-time the best few and both picks interleaved."""
    import random

    import gpu_bench_lib as lib

    lib._import_runtime()
    from tiletune.analysis import analyze_kernel
    from tiletune.runtime.parallel_compile import compile_all

    t_begin = time.perf_counter()
    problem = cold_pairs.load(pair)
    dev = lib.Device(dry)
    prob = lib.Problem(pair["kernel"], problem, pair["shape"], dev)
    timer = lib.Timer(dev, argparse.Namespace(screen_rep_ms=opts.screen_rep_ms, final_warmup_ms=10.0,
                                              final_rep_ms=opts.final_rep_ms))
    grid = lib.exhaustive_space(analyze_kernel(_jit_of(problem.KERNEL)), prob.args, dry)
    grid_cfgs = list(grid.configs)
    sampled = len(grid_cfgs) > opts.grid_sample
    if sampled:
        grid_cfgs = random.Random(0).sample(grid_cfgs, opts.grid_sample)
    pool: Dict[str, Any] = {}
    groups: Dict[str, str] = {}
    for group, cfgs in ([(side, [_config_of(pick)]) for side, pick in picks.items() if pick]
                        + [("hand list", list(problem.HAND_CONFIGS)), ("grid", grid_cfgs)]):
        for c in cfgs:
            sig = lib.config_sig(c)
            if sig not in pool:
                pool[sig], groups[sig] = c, group

    def job(c):
        def run():
            w = lib._Warm(prob.kernel)
            problem.launch(w, prob.args, **c.all_kwargs())
            return w.last
        return run

    sigs = list(pool)
    fails, compile_s = compile_all({i: job(pool[s]) for i, s in enumerate(sigs)})

    def binary_of(sig: str) -> Optional[str]:
        if dry or sigs.index(sig) in fails:
            return None
        try:
            return lib.binary_digest(job(pool[sig])())  # compiled already: the launcher's cache answers
        except Exception:
            return None

    # configs that compile to one binary are one kernel: screened and timed once (the first of them in pool
    # order: the picks, then the author's list, then the grid), and each of them reads that one's times
    rep = same_binaries(sigs, binary_of)
    deadline = time.perf_counter() + opts.reference_s  # screening seconds, after the parallel compile
    screened: Dict[str, float] = {}
    invalid: Dict[str, str] = {}
    best = None
    for i, sig in enumerate(sigs):
        if i in fails:
            invalid[sig] = "compile: " + fails[i]
            continue
        if rep[sig] != sig:
            continue
        must = groups[sig] in picks
        if time.perf_counter() > deadline and not must:
            continue
        meta = pool[sig].all_kwargs()
        ok, why = prob.validate(meta)
        if not ok:
            invalid[sig] = why
            continue
        ms, _ = timer.screen(prob.call(meta), best)
        screened[sig] = ms
        best = ms if best is None else min(best, ms)
    top = sorted(screened, key=screened.get)[:opts.retime_top]
    picked = [rep[s] for s in sigs if groups[s] in picks and rep[s] in screened]
    final = list(dict.fromkeys(top + picked))
    res = timer.interleaved({s: prob.call(pool[s].all_kwargs()) for s in final}, opts.rounds)
    known = lib.best_known(res, {s: (groups[s], pool[s]) for s in final})

    def ms_of(group: str) -> Optional[float]:
        d = picks.get(group)
        if not d:
            return None
        sig = lib.config_sig(_config_of(d))
        samples = (res.get(rep.get(sig, sig)) or {}).get("samples_ms") or []
        if not samples:
            return None
        # the rounds the best known is reported on (the odd ones; all of them when it was unstable)
        odd = samples[1::2] if len(samples) > 1 and not (known and known["unstable"]) else samples
        return statistics.median(odd)

    noise = [abs(statistics.median(r["samples_ms"][0::2]) / statistics.median(r["samples_ms"][1::2]) - 1.0)
             for r in res.values() if r.get("samples_ms") and len(r["samples_ms"]) > 1]
    return {"best_ms": known["ms"] if known else None, "best": known["best"] if known else None,
            "best_from": known["best_from"] if known else None, "unstable": bool(known and known["unstable"]),
            "tiletune_ms": ms_of("tiletune"), "hand_ms": ms_of("hand"),
            "picks_ms": {side: ms_of(side) for side in picks},
            "noise": statistics.median(noise) if noise else None,
            "screened": len(screened), "invalid": len(invalid),
            "screened_ms": {_label(_config_dict(pool[s])): round(ms, 6) for s, ms in screened.items()},
            "same_binary": {s: r for s, r in rep.items() if r != s}, "grid": len(grid.configs), "grid_sampled": sampled,
            "compile_s": compile_s, "wall_s": time.perf_counter() - t_begin,
            "invalid_picks": {g: invalid[s] for s in invalid for g in ("tiletune", "hand") if groups[s] == g}}


def _jit_of(kernel):
    """The JITFunction under any ``triton.heuristics`` layers."""
    while not hasattr(kernel, "src") and hasattr(kernel, "fn"):
        kernel = kernel.fn
    return kernel


def child_main(opts: argparse.Namespace) -> None:
    """Run one side of one pair in this process; print its result as JSON on the last line."""
    pair = json.loads(opts.pair)
    if opts.side == "reference":
        out = side_reference(pair, opts.dry_run, json.loads(opts.picks or "{}"), opts)
    else:
        out = side_first_tune(pair, opts.side, opts.dry_run, opts.profile)
    print(json.dumps(out))


# ============================================================================ the driver


def run_side(pair: dict, side: str, opts: argparse.Namespace, picks: Optional[dict] = None,
             profile: bool = False) -> dict:
    """Run one side in a fresh interpreter with empty Triton and tiletune caches; its JSON result, or
    ``{"error": ...}``."""
    tmp = Path(tempfile.mkdtemp(prefix=f"cold-{side}-"))
    env = dict(os.environ)
    env["TRITON_CACHE_DIR"] = str(tmp / "triton")
    env["TILETUNE_CACHE_DIR"] = str(tmp / "tiletune")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    if opts.dry_run:
        env["TRITON_INTERPRET"] = "1"
    else:
        env.pop("TRITON_INTERPRET", None)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--side", side, "--pair", json.dumps(pair),
           "--reference-s", str(opts.reference_s), "--grid-sample", str(opts.grid_sample),
           "--retime-top", str(opts.retime_top), "--rounds", str(opts.rounds),
           "--screen-rep-ms", str(opts.screen_rep_ms), "--final-rep-ms", str(opts.final_rep_ms)]
    if picks is not None:
        cmd += ["--picks", json.dumps(picks)]
    if opts.dry_run:
        cmd.append("--dry-run")
    if profile:
        cmd.append("--profile")
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT, timeout=opts.side_timeout_s)
    except subprocess.TimeoutExpired:
        return {"error": f"{side}: no result in {opts.side_timeout_s:.0f}s", "process_s": time.perf_counter() - t0}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        return {"error": f"{side} failed (rc {proc.returncode}): " + " | ".join(tail)[-600:],
                "process_s": time.perf_counter() - t0}
    out = json.loads(lines[-1])
    out["process_s"] = time.perf_counter() - t0
    return out


#: A reference time of a pick over this many times what the pick's own tuner measured for it is a disturbed
#: measurement, not the kernel: the tuners time with launch overhead included, so their figure is an upper bound
#: of the kernel's (an H200 run once read fla-core's l2norm_fwd pick at 26.6 us in every round of one reference
#: process, which its tuner had timed at a few us and two fresh references at 2.50 us).
DISTURBED_OVER_OWN = 2.0


def disturbed_picks(ref: dict, own_ms: Dict[str, Optional[float]]) -> List[str]:
    """The sides whose pick the reference timed over :data:`DISTURBED_OVER_OWN` x the side's own measurement."""
    out = []
    for side in ("tiletune", "hand"):
        r, own = ref.get(f"{side}_ms"), own_ms.get(side)
        if r and own and r > DISTURBED_OVER_OWN * own:
            out.append(side)
    return out


def merge_references(first: dict, again: dict, disturbed: List[str]) -> dict:
    """Two reference processes of one pair: each config's faster reading (interference only ever slows a kernel
    down), the best known from the faster best; the first process's readings kept under ``rerun``."""
    def faster(x: Optional[float], y: Optional[float]) -> Optional[float]:
        return min((v for v in (x, y) if v), default=None)

    out = dict(again)
    for key in ("tiletune_ms", "hand_ms"):
        out[key] = faster(first.get(key), again.get(key))
    a, b = first.get("picks_ms") or {}, again.get("picks_ms") or {}
    out["picks_ms"] = {side: faster(a.get(side), b.get(side)) for side in {**a, **b}}
    if first.get("best_ms") and (not again.get("best_ms") or first["best_ms"] < again["best_ms"]):
        for key in ("best", "best_from", "best_ms", "unstable"):
            out[key] = first.get(key)
    out["noise"] = max(v for v in (first.get("noise"), again.get("noise"), 0.0) if v is not None)
    out["rerun"] = {"why": f"{', '.join(disturbed)} pick timed over {DISTURBED_OVER_OWN:g}x its own tuner's time",
                    "first": {k: first.get(k) for k in ("best", "best_ms", "tiletune_ms", "hand_ms", "noise")}}
    return out


def run_pair(pair: dict, index: int, opts: argparse.Namespace) -> dict:
    """Both sides and the reference of one pair; its row.  With ``--tiletune-runs N`` the tiletune side runs
    N - 1 more times (each a fresh process, after both sides), and the reference times every pick: the rows'
    ``tiletune_again`` are those first tunes (their picks' ratios, scored by cold_report.score_row)."""
    order = ("tiletune", "hand") if index % 2 == 0 else ("hand", "tiletune")
    sides = {s: run_side(pair, s, opts, profile=s == "tiletune") for s in order}
    more = {again_side(k): run_side(pair, "tiletune", opts) for k in range(2, opts.tiletune_runs + 1)}
    tt, hand = sides["tiletune"], sides["hand"]
    row: Dict[str, Any] = {"kernel": pair["kernel"], "source": pair["source"], "shape": pair["shape"], "cold": True,
                           "first_side": order[0]}
    row["tiletune_first_s"] = tt.get("first_s")
    row["hand_first_s"] = hand.get("first_s")
    row["configs_compiled"] = tt.get("configs_compiled")
    row["configs_timed"] = tt.get("configs_timed")
    row["hand_configs"] = hand.get("n_configs")
    row["hand_configs_compiled"] = hand.get("configs_compiled")
    row["tiletune_pick"], row["hand_pick"] = _label(tt.get("pick")), _label(hand.get("pick"))
    row["tiletune_correct"], row["hand_correct"] = tt.get("correct"), hand.get("correct")
    row["search"] = tt.get("search")
    every = {**sides, **more}
    errors = {s: r["error"] for s, r in every.items() if "error" in r}
    picks = {s: r.get("pick") for s, r in every.items() if r.get("pick")}
    ref = run_side(pair, "reference", opts, picks=picks) if picks and not opts.no_reference else {}
    disturbed = disturbed_picks(ref, {s: r.get("pick_ms") for s, r in sides.items()})
    if disturbed:  # a pick timed far slower than its own tuner measured it: measure the reference again
        again = run_side(pair, "reference", opts, picks=picks)
        if "error" not in again:
            ref = merge_references(ref, again, disturbed)
    if "error" in ref:
        errors["reference"] = ref["error"]
    row["reference"] = {k: ref.get(k) for k in ("best", "best_from", "best_ms", "tiletune_ms", "hand_ms", "noise",
                                                "unstable", "screened", "grid", "grid_sampled", "wall_s",
                                                "invalid_picks", "rerun", "screened_ms", "picks_ms")}
    if more:
        row["tiletune_again"] = [{"side": s, "pick": _label(r.get("pick")), "first_s": r.get("first_s"),
                                  "configs_timed": r.get("configs_timed"), "correct": r.get("correct"),
                                  "search": r.get("search")}
                                 for s, r in more.items()]
    score_row(row)
    row["process_s"] = {s: r.get("process_s") for s, r in list(sides.items()) + [("reference", ref)]}
    if errors:
        row["errors"] = errors
    row["timings_ms"] = {s: r.get("timings_ms") for s, r in every.items()}  # a run whose pick moved: why
    if "timeline" in tt:
        from tiletune.runtime.timeline import summary

        row["timeline"] = {"summary": summary(tt["timeline"]), "events": tt["timeline"]}
    return row


def again_side(k: int) -> str:
    """The name of the tiletune side's ``k``-th run of a pair (``--tiletune-runs``), as the reference's picks."""
    return f"tiletune#{k}"


def driver_main(opts: argparse.Namespace) -> int:
    """Run every pair that fits the budget; write the results after each; print the summary table last."""
    from cold_report import print_summary

    every = cold_pairs.DRY_PAIRS if opts.dry_run else cold_pairs.GPU_PAIRS
    chosen = [int(i) for i in opts.pairs.split(",")] if opts.pairs else list(range(len(every)))
    bad = [i for i in chosen if not 0 <= i < len(every)]
    if bad:
        raise SystemExit(f"first_tune_cold: --pairs {bad} out of range; there are {len(every)} pairs "
                         f"(0-{len(every) - 1})")
    out_dir = Path(opts.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    results: Dict[str, Any] = {"meta": _meta(opts), "rows": [], "skipped": [], "timeline": None}
    if opts.append and (out_dir / "first_tune_cold.json").exists():  # a second command's pairs join the first's
        earlier = json.loads((out_dir / "first_tune_cold.json").read_text())
        results["rows"], results["timeline"] = earlier.get("rows", []), earlier.get("timeline")
        results["meta"]["appended_to"] = earlier.get("meta")
    spent: List[float] = []
    for i in chosen:
        pair = every[i]
        missing = getattr(cold_pairs.load(pair), "path", None)
        if missing is not None and not missing.exists():
            results["skipped"].append({"index": i, "kernel": pair["kernel"], "shape": pair["shape"],
                                       "why": f"{missing} is not in the dev corpus (bash bench/fetch_corpus.sh, "
                                              "or --stage-corpus DIR then TILETUNE_CORPUS=DIR)"})
            continue
        left = opts.budget_s - (time.perf_counter() - t0)
        guess = max(spent) if spent else PAIR_GUESS_S
        if left < guess:
            results["skipped"].append({"index": i, "kernel": pair["kernel"], "shape": pair["shape"],
                                       "why": f"budget: {left:.0f}s left, a pair took up to {guess:.0f}s"})
            continue
        t_pair = time.perf_counter()
        row = run_pair(pair, i, opts)
        spent.append(time.perf_counter() - t_pair)
        if results["timeline"] is None and row.get("timeline"):
            results["timeline"] = {"kernel": row["kernel"], "shape": row["shape"], **row["timeline"]}
        results["rows"].append(row)
        print(f"[{time.perf_counter() - t0:6.1f}s] {row['kernel']} {row['shape']}: tiletune "
              f"{_fmt(row['tiletune_first_s'])}s ({row['configs_timed']} timed), hand {_fmt(row['hand_first_s'])}s "
              f"({row['hand_configs']} configs); over best: tiletune {_fmt(row['tiletune_over_best'], 3)}, hand "
              f"{_fmt(row['hand_over_best'], 3)}" + (f"; errors {row['errors']}" if row.get("errors") else ""),
              flush=True)
        results["summary"] = summarize(results["rows"])
        results["meta"]["wall_s"] = time.perf_counter() - t0
        write_outputs(results, out_dir)
    results["summary"] = summarize(results["rows"])
    results["meta"]["wall_s"] = time.perf_counter() - t0
    write_outputs(results, out_dir)
    print_summary(results)
    budget_cut = [str(x["index"]) for x in results["skipped"] if x["why"].startswith("budget")]
    if budget_cut:
        print(f"skipped for the budget: run them with --pairs {','.join(budget_cut)} --append")
    return 0 if results["rows"] and not any(r.get("errors") for r in results["rows"]) else 1


def _fmt(v: Optional[float], digits: int = 2) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def _meta(opts: argparse.Namespace) -> dict:
    import platform

    from gpu_bench_lib import GRAPH_BELOW_MS, checkout_commit, source_digest

    commit = checkout_commit(ROOT)  # None when the checkout's git metadata does not match its files

    return {"date": time.strftime("%Y-%m-%d %H:%M:%S %z"), "argv": sys.argv[1:], "dry_run": opts.dry_run,
            "host": f"{platform.node()} ({os.cpu_count()} cpus)", "commit": commit,
            "source_digest": source_digest(ROOT),
            "method": "each side in a fresh interpreter with empty TRITON_CACHE_DIR and TILETUNE_CACHE_DIR, "
                      "nothing launched before the timed first call but the inputs' creation; sides alternate "
                      "which goes first; reference: screening of the hand list, both picks and the exhaustive "
                      f"grid (seeded sample of {opts.grid_sample} where larger), top {opts.retime_top} and both "
                      f"picks re-timed in {opts.rounds} interleaved rounds (do_bench rep {opts.final_rep_ms} ms; a kernel "
                      f"under {GRAPH_BELOW_MS * 1e3:.0f} us by do_bench_cudagraph), "
                      "best chosen on even rounds and timed on odd"}


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    """The options (the driver's, and the hidden ones of a side's child process)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dry-run", action="store_true", help="2 tiny pairs under TRITON_INTERPRET=1 on the CPU")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"), help="directory for the JSON and markdown")
    ap.add_argument("--pairs", default=None, help="comma list of pair indices (default: all that fit the budget)")
    ap.add_argument("--budget-s", type=float, default=460.0, help="wall budget of the whole run (default 460)")
    ap.add_argument("--side-timeout-s", type=float, default=200.0, help="one side's process at most this long")
    ap.add_argument("--reference-s", type=float, default=10.0, help="screening seconds per pair (after compiling)")
    ap.add_argument("--grid-sample", type=int, default=32, help="exhaustive grid points screened at most")
    ap.add_argument("--stage-corpus", metavar="DIR", default=None,
                    help="copy the library files the pairs read into DIR and exit (then TILETUNE_CORPUS=DIR)")
    ap.add_argument("--append", action="store_true",
                    help="add this run's rows to the --out JSON already there (a second command's pairs)")
    ap.add_argument("--retime-top", type=int, default=4, help="screened configs re-timed with both picks")
    ap.add_argument("--rounds", type=int, default=6, help="interleaved rounds of the final re-timing")
    ap.add_argument("--screen-rep-ms", type=float, default=10.0)
    ap.add_argument("--final-rep-ms", type=float, default=25.0)
    ap.add_argument("--no-reference", action="store_true", help="first tunes only")
    ap.add_argument("--tiletune-runs", type=int, default=1,
                    help="run tiletune's first tune this many times per pair (fresh processes); the reference "
                         "times every pick, and the summary gives how far its ratio moved between runs")
    ap.add_argument("--side", choices=("tiletune", "hand", "reference"), help=argparse.SUPPRESS)
    ap.add_argument("--pair", help=argparse.SUPPRESS)
    ap.add_argument("--picks", help=argparse.SUPPRESS)
    ap.add_argument("--profile", action="store_true", help=argparse.SUPPRESS)
    opts = ap.parse_args(argv)
    if opts.dry_run:
        opts.rounds = min(opts.rounds, 2)
    return opts


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point: a side's child process with ``--side``, else the driver."""
    opts = parse_args(argv)
    if opts.stage_corpus:
        for f in cold_pairs.stage_corpus(Path(opts.stage_corpus)):
            print(f)
        return 0
    if opts.side:
        child_main(opts)
        return 0
    return driver_main(opts)


if __name__ == "__main__":
    sys.exit(main())
