"""GPU benchmark: tiletune's synthesized tilings against hand lists, an exhaustive search and torch.

    python bench/gpu_bench.py --out DIR [--parts synth,tune,overhead] [--fixtures a,b] [--shapes 0,2]
                              [--budget-s 480] [--dry-run]
    python bench/gpu_bench.py --merge A/gpu_bench.json B/gpu_bench.json ... --out DIR

Writes ``DIR/gpu_bench.json`` and ``DIR/gpu_bench.md`` after every (fixture,
shape), so a run that is killed keeps what it measured, and prints a short
table last.  ``--merge`` combines the JSON of several runs (one per device
call) into one file and recomputes the summaries.

Parts
-----
synth     matmul at M=512, N=4096, K=11008 fp16: the best of tiletune's top-16
          synthesized candidates against the best of an exhaustive
          power-of-two search (BLOCK_SIZE_M/N 16..256, BLOCK_SIZE_K 16..128,
          num_warps {2,4,8}, num_stages {1..5}); the ratio (goal <= 1.05), the
          rank of the best candidate, how many configs each compiled.
tune      per fixture and shape -- the fixture's BENCH_SHAPES and the odd set
          ``ODD_SHAPES`` (gpu_bench_lib.py: sizes not multiples of 16/64,
          skinny M <= 512, grids under one wave of SMs; ``--shape-set``) --
          the kernel time of (a) the config
          ``tiletune.autotune(configs=[], search=--search)`` picks (its
          search facts -- first batch, descent -- are recorded), (b) the config
          ``triton.autotune(configs=HAND_CONFIGS)`` picks, (c) the best of an
          exhaustive power-of-two search (space in ``exhaustive_space``; it
          is written into the JSON), (d) the fixture's ``torch_baseline``; and
          the first-tune wall time of tiletune, of triton.autotune over the
          hand list and of triton.autotune over the exhaustive list (measured
          where it is short enough, else estimated from sampled per-config
          compile + benchmark times, and marked so).  For the matmul family
          (``--measure-exh-first``) the exhaustive first tune is measured:
          ``tiletune.autotune(configs=[], search="exhaustive")`` (every
          feasible point, compiled in parallel) always, and triton.autotune
          over the grid whenever the budget holds its estimate.  Summaries: geomean
          tiletune/exhaustive (goal <= 1.03), tiletune/hand (goal < 1),
          first-tune speedup over the exhaustive autotune (goal >= 5), median
          first-tune wall time of tiletune and of the hand list, and
          tiletune / exhaustive per shape set.
overhead  host time per launch once tuned, vector_add n=4096: plain jit with
          explicit meta, triton.autotune(HAND_CONFIGS), tiletune.autotune([]).

Method
------
* Fresh random inputs per (fixture, shape) (``make_args``).  Every config
  that is timed is first run once with its outputs poisoned (NaN, or the
  largest integer) and compared with the fixture's ``reference`` at its
  ``TOLERANCE``; wrong or failing configs are dropped and counted (a softmax
  tile that does not cover the row is dropped, never a winner).
* Exhaustive screening: configs compiled in parallel in chunks (tiletune's
  ``compile_all``: Triton's AsyncCompileMode on a thread pool), then each is
  validated and timed by CUDA events with the L2 flushed before every call:
  3 calls, stop there when slower than 1.5x the best so far, else up to
  ``--screen-rep-ms`` worth of calls (5..100), median (a config 20x slower
  than the best is timed once).  Dot configs whose
  accumulator needs more than 256 fp32 values per thread (they spill, and
  take 10 s to 2 min each to compile) are pruned and counted
  (``--include-heavy`` keeps them, compiled last).  When the budget stops a
  search early, the JSON says how much of the grid was screened.
* Final numbers: the top-5 of each method (tiletune's and triton.autotune's
  own timings, the exhaustive screening) and torch are re-timed interleaved,
  ``--final-rounds`` rounds of ``triton.testing.do_bench(warmup, rep,
  return_mode="median")``, median over rounds.  A method's time is the time
  of the config it picked.  The reference ("exhaustive") is the best config
  known: the fastest of every re-timed config (the exhaustive screening's
  top, tiletune's and the hand list's), chosen on the even rounds and timed
  on the odd ones (:func:`best_known`): the minimum of many noisy times is
  biased low, so the rounds that choose it do not also time it.
* First-tune wall time: a fresh ``triton.jit`` of the kernel (empty
  in-memory cache), a fresh ``TRITON_CACHE_DIR`` and a fresh
  ``TILETUNE_CACHE_DIR`` for each measured first call; the number of cubins
  written to the fresh directory is recorded to show that it compiled.
  The two methods of a pair take turns going first, and each process is
  warmed before its first pair (a one-line ``triton.jit`` kernel compiled
  and launched, :func:`gpu_bench_lib.warm_process`): a cold process is
  measured by ``bench/first_tune_probe.py``, not here.
* ``--dry-run``: TRITON_INTERPRET=1 on the CPU with the fixtures' tiny
  SHAPES, tiny spaces and wall-clock timing, to check the plumbing.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

BENCH_DIR = Path(__file__).resolve().parent
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

import gpu_bench_lib as _lib  # noqa: E402
import gpu_bench_report as _report  # noqa: E402
from gpu_bench_lib import (  # noqa: E402
    DEFAULT_TUNE_FIXTURES, Device, EARLY_STOP_FACTOR, FreshDirs, best_known, warm_process,
    GOALS, Problem, SCHEMA, SLOW_FACTOR, SYNTH_FIXTURE, SYNTH_SHAPE, Space, T0, Timer, _Warm, _example,
    _main_dtype, _threads, _wall_do_bench, config_dict, config_label, config_sig, describe_exc,
    exhaustive_rules, exhaustive_space, fresh_jit, log, shape_key,
)
from gpu_bench_lib import ODD_SHAPES, parse_args, source_digest  # noqa: E402
from gpu_bench_report import (  # noqa: E402
    _fmt, _public_exh, estimate_stock_first, list_spaces, merge, part_overhead, print_table, ratios, summarize,
    write_outputs,
)

torch: Any = None  # set by _runtime()
triton: Any = None


def _runtime() -> None:
    """Import torch and triton (after the environment is set) into this module and the other bench modules."""
    global torch, triton
    _lib._import_runtime()
    torch, triton = _lib.torch, _lib.triton
    _report.torch, _report.triton = torch, triton


# ============================================================================ options




# ============================================================================ the benchmark


class Bench:
    def __init__(self, opts: argparse.Namespace):
        self.opts = opts
        self.dev = Device(opts.dry_run)
        self.timer = Timer(self.dev, opts)
        self.out_dir = Path(opts.out)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.fresh_base = Path(tempfile.mkdtemp(prefix="gpu_bench_fresh-"))
        self.deadline = T0 + opts.budget_s
        self.exh_memo: Dict[tuple, dict] = {}
        self.exh_first_spent = 0.0
        self.tt_exh_measured: set = set()
        self.specs: Dict[str, Any] = {}
        self.compile_samples: Dict[str, List[float]] = {}
        self.pairs_run = 0  # tiletune's first tune goes first on odd pairs, the hand list's on even ones
        self.rng = random.Random(1234)
        self.results: Dict[str, Any] = {
            "schema": SCHEMA,
            "runs": [self._meta()],
            "synth": None,
            "tune": {},
            "overhead": None,
            "exhaustive_rules": exhaustive_rules(),
            "summary": {},
        }

    # ---------------------------------------------------------------- bookkeeping
    def _meta(self) -> dict:
        import tiletune

        commit = _lib.checkout_commit(ROOT)  # None when the checkout's git metadata does not match its files
        threads = None
        try:
            from tiletune.runtime.parallel_compile import max_workers

            threads = max_workers(10_000)
        except Exception:  # noqa: BLE001
            pass
        return {
            "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
            "argv": sys.argv[1:],
            "dry_run": self.opts.dry_run,
            "device": self.dev.describe(),
            "host": f"{platform.node()} ({os.cpu_count()} cpus)",
            "compile_threads": threads,
            "python": platform.python_version(),
            "torch": torch.__version__,
            "triton": triton.__version__,
            "tiletune": getattr(tiletune, "__version__", "?"),
            "commit": commit,  # the checkout's HEAD, which a copied tree may not match: see source_digest
            "source_digest": source_digest(ROOT),
            "budget_s": self.opts.budget_s,
            "settings": {
                "screen": f"CUDA events, L2 flushed per call, 3 calls (stop if > {EARLY_STOP_FACTOR}x best), "
                          f"then up to {self.opts.screen_rep_ms} ms of calls (5..100), median; a config whose "
                          f"validation launch took > {SLOW_FACTOR:.0f}x the best is timed once",
                "final": f"{self.opts.final_rounds} interleaved rounds of triton.testing.do_bench(warmup="
                         f"{self.opts.final_warmup_ms}, rep={self.opts.final_rep_ms}, return_mode='median'), "
                         "median over rounds",
                "retime_top": self.opts.retime_top,
            },
        }

    def left(self) -> float:
        return self.deadline - time.perf_counter()

    def save(self) -> None:
        self.results["summary"] = summarize(self.results)
        write_outputs(self.results, self.out_dir)

    def spec(self, name: str, fx):
        if name not in self.specs:
            from tiletune.analysis import analyze_kernel

            self.specs[name] = analyze_kernel(fx.KERNEL)
        return self.specs[name]

    def target(self):
        t = self.opts.target or ("h100" if self.opts.dry_run else None)
        return t

    # ---------------------------------------------------------------- compile
    def compile(self, prob: Problem, configs: list) -> Tuple[Dict[int, str], float]:
        from tiletune.runtime.parallel_compile import compile_all

        fx, args, kernel = prob.fx, prob.args, prob.kernel

        def job(c):
            def run():
                w = _Warm(kernel)
                fx.launch(w, args, **c.all_kwargs())
                return w.last
            return run

        return compile_all({i: job(c) for i, c in enumerate(configs)})

    # ---------------------------------------------------------------- exhaustive screening
    def exhaustive(self, prob: Problem, space: Space, deadline: float) -> dict:
        """Compile (in parallel, by chunks), validate and screen the grid until done or ``deadline``.

        The same grid at the same shape earlier in this run is reused, or
        resumed where the budget stopped it (timings do not depend on the
        random input values).
        """
        key = (prob.name, shape_key(prob.shape), space.signature)
        rec = self.exh_memo.get(key)
        configs = space.configs
        n = len(configs)
        if rec is not None and rec["complete"]:
            log(f"  exhaustive: reusing the screening done earlier in this run ({rec['n_ok']} valid configs)")
            return rec
        if rec is not None:
            log(f"  exhaustive: resuming at {rec['n_done']}/{n}")
        else:
            rec = {
                "space": space.desc, "n_grid": n, "n_compiled": 0, "n_compile_failed": 0, "n_screened": 0,
                "n_wrong": 0, "n_failed": 0, "n_ok": 0, "n_early_stop": 0, "n_slow": 0, "complete": False,
                "stopped": None, "n_done": 0, "compile_s": 0.0, "screen_s": 0.0, "wall_s": 0.0,
                "examples": {"wrong": [], "failed": []}, "_times": {},
            }
            self.exh_memo[key] = rec
        rec["stopped"] = None
        times: Dict[int, float] = rec["_times"]
        best = min(times.values()) if times else None
        chunk = self.opts.chunk or (4 if self.dev.dry else 8 * max(1, _threads()))
        t_start = time.perf_counter()
        for start in range(rec["n_done"], n, chunk):
            if time.perf_counter() > deadline:
                rec["stopped"] = "budget"
                break
            idx = list(range(start, min(n, start + chunk)))
            fails, cs = self.compile(prob, [configs[i] for i in idx])
            rec["compile_s"] += cs
            t_scr = time.perf_counter()
            stop = False
            for j, i in enumerate(idx):
                if j in fails:
                    rec["n_compile_failed"] += 1
                    _example(rec["examples"]["failed"], configs[i], "compile: " + fails[j])
                    rec["n_done"] = i + 1
                    continue
                if time.perf_counter() > deadline:
                    rec["stopped"] = "budget"
                    stop = True
                    break
                meta = configs[i].all_kwargs()
                ok, why = prob.validate(meta)
                rec["n_screened"] += 1
                rec["n_done"] = i + 1
                if not ok:
                    if why.startswith("wrong"):
                        rec["n_wrong"] += 1
                        _example(rec["examples"]["wrong"], configs[i], why)
                    else:
                        rec["n_failed"] += 1
                        _example(rec["examples"]["failed"], configs[i], why)
                    continue
                try:
                    if best is not None and prob.last_launch_ms > SLOW_FACTOR * best:
                        # far slower than the best (a tiny tile looping a million times): one timed
                        # call confirms it (the validation launch may have compiled) and that is all
                        one = self.timer.one(prob.call(meta))
                        if one > SLOW_FACTOR * best:
                            rec["n_slow"] += 1
                            rec["n_ok"] += 1
                            times[i] = one
                            continue
                    ms, early = self.timer.screen(prob.call(meta), best)
                except Exception as exc:  # noqa: BLE001
                    rec["n_failed"] += 1
                    _example(rec["examples"]["failed"], configs[i], "timing: " + describe_exc(exc))
                    continue
                rec["n_ok"] += 1
                rec["n_early_stop"] += int(early)
                times[i] = ms
                best = ms if best is None else min(best, ms)
            rec["screen_s"] += time.perf_counter() - t_scr
            if stop:
                break
            if (start // chunk) % 4 == 3 or start + chunk >= n:
                log(f"  exhaustive: {rec['n_done']}/{n} configs, {rec['n_ok']} valid, best "
                    f"{'-' if best is None else f'{best:.4f}'} ms")
        rec["complete"] = rec["n_done"] >= n
        rec["n_compiled"] = rec["n_done"] - rec["n_compile_failed"]
        rec["wall_s"] += time.perf_counter() - t_start
        order = sorted(times, key=times.get)
        rec["ok_configs"] = [configs[i] for i in order]
        rec["top"] = [{"config": config_dict(configs[i]), "label": config_label(configs[i]), "screen_ms": times[i]}
                      for i in order[:10]]
        if not rec["complete"]:
            log(f"  exhaustive: stopped by the budget at {rec['n_done']}/{n}")
        return rec

    # ---------------------------------------------------------------- first tunes
    def first_tune_tiletune(self, prob: Problem, search: Optional[str] = None) -> dict:
        import tiletune

        fx = prob.fx
        search = search if search is not None else self.opts.search
        with FreshDirs(self.fresh_base, "tt") as dirs:
            jit = fresh_jit(fx)
            tuned = tiletune.autotune(configs=[], key=fx.KEY, restore_value=fx.RESTORE_VALUE or None,
                                      reset_to_zero=fx.RESET_TO_ZERO or None, target=self.target(),
                                      search=search)(jit)
            self.dev.sync()
            t0 = time.perf_counter()
            fx.launch(tuned, prob.args)
            self.dev.sync()
            wall = time.perf_counter() - t0
            cubins = dirs.cubins()
        best = tuned.best_config
        timings = {c: (t[0] if isinstance(t, (list, tuple)) else t) for c, t in tuned.configs_timings.items()}
        ranked = sorted(timings, key=timings.get)
        return {
            "first_tune_s": wall,
            "bench_time_s": getattr(tuned, "bench_time", None),
            "search": dict(getattr(tuned, "search_facts", {}) or {}),
            "n_candidates": len(timings),
            "cubins_in_fresh_cache": cubins,
            "config": config_dict(best),
            "label": config_label(best),
            "_best": best,
            "_ranked": ranked,
            "own_ms": {config_label(c): timings[c] for c in ranked[:10]},
        }

    def first_tune_stock(self, prob: Problem, configs: list, tag: str) -> dict:
        fx = prob.fx
        kwargs = {}
        if self.dev.dry:
            kwargs["do_bench"] = _wall_do_bench(self.dev)
        with FreshDirs(self.fresh_base, tag) as dirs:
            jit = fresh_jit(fx)
            tuned = triton.autotune(configs=list(configs), key=fx.KEY, restore_value=fx.RESTORE_VALUE or None,
                                    reset_to_zero=fx.RESET_TO_ZERO or None, **kwargs)(jit)
            self.dev.sync()
            t0 = time.perf_counter()
            fx.launch(tuned, prob.args)
            self.dev.sync()
            wall = time.perf_counter() - t0
            cubins = dirs.cubins()
        best = tuned.best_config
        timings = {}
        for c, t in (getattr(tuned, "configs_timings", None) or {}).items():
            v = t[0] if isinstance(t, (list, tuple)) else t
            timings[c] = float(v)
        ranked = sorted((c for c in timings if math.isfinite(timings[c])), key=timings.get)
        return {
            "first_tune_s": wall,
            "n_configs": len(configs),
            "cubins_in_fresh_cache": cubins,
            "config": config_dict(best),
            "label": config_label(best),
            "_best": best,
            "_ranked": ranked or [best],
            "own_ms": {config_label(c): timings[c] for c in ranked[:10]},
        }

    def estimate_stock_first(self, prob: Problem, ok_configs: list, n_list: int) -> dict:
        """Per-config compile + stock do_bench time on a sample, times n_list (gpu_bench_report)."""
        return estimate_stock_first(self, prob, ok_configs, n_list)

    # ---------------------------------------------------------------- final re-timing
    def retime(self, prob: Problem, groups: Dict[str, list], with_torch: bool) -> Dict[str, Any]:
        """Validate and re-time, interleaved, every config in ``groups`` (deduplicated) and torch."""
        fns: Dict[str, Callable[[], Any]] = {}
        cfg_of: Dict[str, Any] = {}
        invalid: Dict[str, str] = {}
        unique: Dict[str, Any] = {}
        for cfgs in groups.values():
            for c in cfgs:
                unique.setdefault(config_sig(c), c)
        sigs = list(unique)
        fails, _ = self.compile(prob, [unique[s] for s in sigs])  # those not compiled yet, in parallel
        for j, reason in fails.items():
            invalid[sigs[j]] = "compile failed: " + reason
        for _, cfgs in groups.items():
            for c in cfgs:
                s = config_sig(c)
                if s in fns or s in invalid:
                    continue
                ok, why = prob.validate(c.all_kwargs())
                if not ok:
                    invalid[s] = why
                    continue
                fns[s] = prob.call(c.all_kwargs())
                cfg_of[s] = c
        if with_torch:
            ok, why = prob.validate_baseline()
            fn = prob.baseline_call()
            if fn is not None and (ok or why.startswith("differs")):
                fns["torch"] = fn
        res = self.timer.interleaved(fns, self.opts.final_rounds)
        return {"timings": res, "invalid": invalid, "configs": cfg_of}

    # ---------------------------------------------------------------- parts
    def part_synth(self, weight_left: float, fixed_left: float) -> None:
        import fixtures
        from tiletune.runtime.binding import synthesis_shapes, tensor_dtypes
        from tiletune.synthesis import detect, get_target, required_shapes, synthesize

        name = SYNTH_FIXTURE
        fx = fixtures.load(name)
        shape = dict(fx.SHAPES[0]) if self.opts.dry_run else dict(SYNTH_SHAPE)
        log(f"synth: {name} {shape_key(shape)}")
        rec: Dict[str, Any] = {"fixture": name, "shape": shape}
        self.results["synth"] = rec
        prob = Problem(name, fx, shape, self.dev)
        spec = self.spec(name, fx)
        tname = self.target()
        target = get_target(tname) if tname else detect()
        arg_names = list(fx.KERNEL.arg_names)
        shapes = synthesis_shapes(spec.name, required_shapes(spec), prob.args)
        dtypes = tensor_dtypes(arg_names, prob.args)
        fixed = {p.name: prob.args[p.name] for p in spec.tiling_params if p.name in prob.args}
        top_k = 4 if self.opts.dry_run else self.opts.top_k
        t0 = time.perf_counter()
        result = synthesize(spec, shapes, dtypes, target, fixed=fixed or None, top_k=top_k)
        rec["synthesis_s"] = time.perf_counter() - t0
        rec["target"] = target.name
        rec["feasible"] = result.feasible_count
        cands = [c.to_config() for c in result.candidates]
        rec["dtype"] = str(prob.args["a_ptr"].dtype).replace("torch.", "")
        # tiletune's candidates
        fails, cs = self.compile(prob, cands)
        cand_rows = []
        times: Dict[int, float] = {}
        best = None
        for i, c in enumerate(cands):
            row = {"rank": i + 1, "label": config_label(c), "config": config_dict(c)}
            if i in fails:
                row["status"] = "compile failed: " + fails[i]
            else:
                ok, why = prob.validate(c.all_kwargs())
                if not ok:
                    row["status"] = why
                else:
                    ms, _ = self.timer.screen(prob.call(c.all_kwargs()), best)
                    row["status"], row["screen_ms"] = "ok", ms
                    times[i] = ms
                    best = ms if best is None else min(best, ms)
            cand_rows.append(row)
        rec["tiletune"] = {"n_candidates": len(cands), "n_compiled": len(cands) - len(fails), "n_valid": len(times),
                           "compile_s": cs, "candidates": cand_rows}
        log(f"  tiletune: {len(cands)} candidates, {len(times)} valid, best screen {best} ms")
        # exhaustive
        space = exhaustive_space(spec, prob.args, self.opts.dry_run, include_heavy=self.opts.include_heavy)
        # the headline number: most of the run (its compiles serve the matmul tune pairs too)
        avail = self.left() - fixed_left
        share = max(self._share(weight=2.0, weight_left=weight_left, fixed_left=fixed_left), 0.75 * avail)
        exh = self.exhaustive(prob, space, time.perf_counter() + share)
        rec["exhaustive"] = _public_exh(exh)
        # final: top of each, interleaved
        tt_top = [cands[i] for i in sorted(times, key=times.get)[: self.opts.retime_top]]
        ex_top = exh["ok_configs"][: self.opts.retime_top]
        rt = self.retime(prob, {"tiletune": tt_top, "exhaustive": ex_top}, with_torch=True)
        tim = rt["timings"]

        def ms_of(c):
            return (tim.get(config_sig(c)) or {}).get("ms")

        tt_ms = [(ms_of(c), c) for c in tt_top if ms_of(c) is not None]
        ex_ms = [(ms_of(c), c) for c in ex_top if ms_of(c) is not None]
        if tt_ms and ex_ms:
            bt, ct = min(tt_ms, key=lambda x: x[0])
            be, ce = min(ex_ms, key=lambda x: x[0])
            rank = next(i + 1 for i, c in enumerate(cands) if config_sig(c) == config_sig(ct))
            rec.update({
                "tiletune_best_ms": bt, "tiletune_best": config_label(ct), "tiletune_best_rank": rank,
                "exhaustive_best_ms": be, "exhaustive_best": config_label(ce),
                "ratio": bt / be, "goal": GOALS["synth_ratio_max"], "met": bt / be <= GOALS["synth_ratio_max"],
                "torch_ms": (tim.get("torch") or {}).get("ms"),
                "retimed": {config_label(rt["configs"][s]) if s in rt["configs"] else s: v["ms"]
                            for s, v in tim.items()},
            })
            log(f"  synth: tiletune best {bt:.4f} ms (rank {rank}) vs exhaustive {be:.4f} ms: ratio {bt / be:.3f}")
        else:
            rec["error"] = "no valid timings for one of the methods"
        prob.free()
        self.save()

    def _share(self, weight: float, weight_left: float, fixed_left: float = 0.0) -> float:
        """Seconds of exhaustive screening for an item of ``weight`` among ``weight_left`` still to run."""
        avail = self.left() - fixed_left
        return max(10.0, avail * weight / max(weight, weight_left))

    @staticmethod
    def _first_tune_logged(what: str, run: Callable[[], dict]) -> dict:
        """One first tune, logged; a failure is recorded (the other methods still run)."""
        try:
            got = run()
        except Exception as exc:  # noqa: BLE001
            log(f"  {what} first tune FAILED: {describe_exc(exc)}")
            return {"error": describe_exc(exc), "traceback": traceback.format_exc()[-2000:], "_best": None,
                    "_ranked": []}
        n = got.get("n_candidates", got.get("n_configs"))
        log(f"  {what} first tune {got['first_tune_s']:.2f}s ({n} configs, {got['cubins_in_fresh_cache']} cubins "
            f"compiled): {got['label']}")
        return got

    def tune_pair(self, name: str, fx, idx: int, shape: dict, weight: float, weight_left: float,
                  fixed_left: float, shape_set: str = "existing") -> None:
        skey = shape_key(shape)
        log(f"tune: {name} [{idx}] {skey} ({shape_set} shape)")
        rec: Dict[str, Any] = {"fixture": name, "shape_index": idx, "shape": shape, "set": shape_set}
        self.results["tune"].setdefault(name, {})[skey] = rec
        prob = Problem(name, fx, shape, self.dev)
        rec["dtype"] = _main_dtype(prob.args)
        spec = self.spec(name, fx)
        try:
            # (a) tiletune's and (b) triton.autotune(HAND_CONFIGS)'s first tunes, in turns: the one that
            # goes first in a pair alternates, so neither always pays (or skips) a warm-up the other left
            tt = hand = None
            self.pairs_run += 1
            tt_first = self.pairs_run % 2 == 1
            for which in (("tt", "hand") if tt_first else ("hand", "tt")):
                if which == "tt":
                    tt = self._first_tune_logged("tiletune", lambda: self.first_tune_tiletune(prob))
                else:
                    hand = self._first_tune_logged("triton.autotune(HAND_CONFIGS)",
                                                   lambda: self.first_tune_stock(prob, fx.HAND_CONFIGS, "hand"))
            rec["first_tune_order"] = "tiletune first" if tt_first else "hand list first"
            # (c) exhaustive
            space = exhaustive_space(spec, prob.args, self.opts.dry_run, include_heavy=self.opts.include_heavy)
            share = self._share(weight, weight_left, fixed_left)
            log(f"  exhaustive: {len(space.configs)} configs ({space.desc['n_heavy_pruned']} register-heavy pruned), "
                f"budget {share:.0f}s")
            exh = self._reused_exhaustive(name, skey) or self.exhaustive(prob, space, time.perf_counter() + share)
            ok_cfgs = exh["ok_configs"]
            if exh.get("reused_from"):
                first = dict(exh.get("first_tune") or {"measured": False, "first_tune_s": None})
            else:
                first = self._exhaustive_first(name, prob, exh, ok_cfgs, fixed_left)
            # final interleaved re-timing
            top = self.opts.retime_top

            def top_of(info: dict) -> list:
                pick = info.get("_best")
                if pick is None:
                    return []
                return [pick] + [c for c in info["_ranked"] if config_sig(c) != config_sig(pick)][: top - 1]

            groups = {"tiletune": top_of(tt), "hand": top_of(hand), "exhaustive": ok_cfgs[:top]}
            rt = self.retime(prob, groups, with_torch=True)
            tim, invalid = rt["timings"], rt["invalid"]

            def ms_of(c):
                return (tim.get(config_sig(c)) or {}).get("ms")

            def method(label: str, info: dict, cfgs: list) -> dict:
                pick = info.get("_best")
                out = {k: v for k, v in (info or {}).items() if not k.startswith("_")}
                if pick is not None:
                    s = config_sig(pick)
                    out["valid"] = s not in invalid
                    if s in invalid:
                        out["invalid_reason"] = invalid[s]
                    out["ms"] = ms_of(pick)
                ranked = [(ms_of(c), c) for c in cfgs if ms_of(c) is not None]
                if ranked:
                    bm, bc = min(ranked, key=lambda x: x[0])
                    out["top_best_ms"], out["top_best"] = bm, config_label(bc)
                out["retimed"] = {config_label(c): ms_of(c) for c in cfgs}
                return out

            rec["tiletune"] = method("tiletune", tt, groups["tiletune"])
            rec["hand"] = method("hand", hand, groups["hand"])
            rec["exhaustive"] = _public_exh(exh)
            rec["exhaustive"]["first_tune"] = first
            rec["exhaustive"]["retimed"] = {config_label(c): ms_of(c) for c in groups["exhaustive"]}
            known = best_known(tim, {config_sig(c): (g, c) for g, cfgs in groups.items() for c in cfgs})
            rec["samples_ms"] = {config_label(c): (tim.get(config_sig(c)) or {}).get("samples_ms")
                                 for cfgs in groups.values() for c in cfgs}  # every round, in order
            if known is not None:
                rec["exhaustive"].update(known)
            ok_b, why_b = prob.validate_baseline()
            rec["torch"] = {"ms": (tim.get("torch") or {}).get("ms"), "valid": ok_b, "note": why_b}
            rec["ratios"] = ratios(rec)
            r = rec["ratios"]
            log(f"  ms: tiletune {_fmt(rec['tiletune'].get('ms'))} hand {_fmt(rec['hand'].get('ms'))} "
                f"exhaustive {_fmt(rec['exhaustive'].get('ms'))} torch {_fmt(rec['torch'].get('ms'))}; "
                f"tt/exh {_fmt(r.get('tiletune_over_exhaustive'), 3)} tt/hand {_fmt(r.get('tiletune_over_hand'), 3)} "
                f"first-tune speedup vs exh {_fmt(r.get('first_tune_speedup_vs_exhaustive'), 1)}")
        except Exception as exc:  # noqa: BLE001
            rec["error"] = describe_exc(exc)
            rec["traceback"] = traceback.format_exc()[-3000:]
            log(f"  ERROR {rec['error']}")
            if self.opts.dry_run:
                traceback.print_exc()
        finally:
            prob.free()
            if not self.dev.dry:
                torch.cuda.empty_cache()
        self.save()

    def _reused_exhaustive(self, name: str, skey: str) -> Optional[dict]:
        """The exhaustive screening of (fixture, shape) from ``--exhaustive-from`` JSON, if there: its top
        configs are re-timed in this run with the others (the screening itself is not repeated)."""
        for path in self.opts.exhaustive_from or []:
            data = json.loads(Path(path).read_text())
            old = ((data.get("tune") or {}).get(name) or {}).get(skey) or {}
            ex = old.get("exhaustive") or {}
            if not ex.get("top"):
                continue
            rec = {k: v for k, v in ex.items() if k not in ("retimed", "ms", "best")}
            rec["ok_configs"] = [triton.Config(dict(t["config"]["kwargs"]), num_warps=t["config"]["num_warps"],
                                               num_stages=t["config"]["num_stages"]) for t in ex["top"]]
            rec["reused_from"] = str(path)
            log(f"  exhaustive: screening reused from {path} ({len(rec['ok_configs'])} top configs re-timed here)")
            return rec
        return None

    def _exhaustive_first(self, name: str, prob: Problem, exh: dict, ok_cfgs: list, fixed_left: float) -> dict:
        """The first tune of triton.autotune over the exhaustive list: estimated, or measured where it fits."""
        # first tune of triton.autotune over the exhaustive list (the valid configs)
        n_list = len(ok_cfgs)
        if not exh["complete"] and exh["n_done"]:
            n_list = round(len(ok_cfgs) * exh["n_grid"] / exh["n_done"])
        first = self.estimate_stock_first(prob, ok_cfgs, n_list)
        first["list"] = "configs of the exhaustive grid that compiled and passed validation" + (
            "" if exh["complete"] else " (grid not fully screened: size extrapolated)")
        est = first.get("estimated_s")
        room = self.left() - fixed_left - 30.0
        family = name in {f.strip() for f in (self.opts.measure_exh_first or "").split(",")}
        if family and name not in self.tt_exh_measured:
            # once per fixture: it compiles every feasible point (the compile set is much the same per shape)
            self.tt_exh_measured.add(name)
            # the exhaustive first tune, measured: tiletune's own search="exhaustive" (every feasible
            # point the model enumerates, compiled in parallel, overlapped with timing)
            try:
                tex = self.first_tune_tiletune(prob, search="exhaustive")
                first["tiletune_exhaustive"] = {k: v for k, v in tex.items() if not k.startswith("_")}
                log(f"  tiletune(search='exhaustive') first tune measured {tex['first_tune_s']:.1f}s "
                    f"({tex['n_candidates']} candidates timed): {tex['label']}")
            except Exception as exc:  # noqa: BLE001
                first["tiletune_exhaustive"] = {"error": describe_exc(exc)}
                log(f"  tiletune(search='exhaustive') FAILED: {describe_exc(exc)}")
            room = self.left() - fixed_left - 30.0
        if (est is not None and exh["complete"] and family and 1.2 * est < room) or (
                est is not None and exh["complete"] and est <= self.opts.exh_first_max_s
                and len(ok_cfgs) <= self.opts.exh_first_max_configs
                and self.exh_first_spent + est <= self.opts.exh_first_total_s and 1.5 * est < room):
            t_meas = time.perf_counter()
            m = self.first_tune_stock(prob, ok_cfgs, "exh")
            self.exh_first_spent += time.perf_counter() - t_meas
            first.update({"measured": True, "first_tune_s": m["first_tune_s"],
                          "cubins_in_fresh_cache": m["cubins_in_fresh_cache"], "picked": m["label"]})
            log(f"  triton.autotune(exhaustive, {len(ok_cfgs)} configs) first tune measured "
                f"{m['first_tune_s']:.1f}s (estimate {est:.1f}s)")
        else:
            first.update({"measured": False, "first_tune_s": est})
            log(f"  triton.autotune(exhaustive, {n_list} configs) first tune estimated "
                + ("(nothing to estimate)" if est is None else f"{est:.1f}s"))
        return first

    def part_tune(self, fixture_names: List[str], shape_idx: Optional[List[int]], synth_weight: float) -> None:
        import fixtures

        items = []
        sets = {x.strip() for x in self.opts.shape_set.split(",")}
        for name in fixture_names:
            fx = fixtures.load(name)
            shapes: List[Tuple[str, dict]] = []
            if "existing" in sets:
                shapes += [("existing", dict(s)) for s in (fx.SHAPES if self.opts.dry_run else fx.BENCH_SHAPES)]
            if "odd" in sets and not self.opts.dry_run:
                shapes += [("odd", dict(s)) for s in ODD_SHAPES.get(name, [])]
            idxs = shape_idx if shape_idx is not None else list(range(len(shapes)))
            # the first shape of a fixture pays for most compiles (3x with a dot, 2x without)
            first_w = 3.0 if self.spec(name, fx).dots else 2.0
            for n, i in enumerate(i for i in idxs if i < len(shapes)):
                items.append((name, fx, i, shapes[i][1], first_w if n == 0 else 1.0, shapes[i][0]))
        fixed_per = 5.0 if self.dev.dry else 25.0  # first tunes + re-timing, seconds per pair (rough)
        if items:
            log(f"tune: process warmed in {warm_process(self.dev):.2f}s (a one-line triton.jit kernel)")
        for k, (name, fx, i, shape, w, shape_set) in enumerate(items):
            rest = items[k:]
            weight_left = sum(x[4] for x in rest)
            fixed_left = fixed_per * (len(rest) - 1)
            if self.left() < fixed_per:
                rec = {"fixture": name, "shape_index": i, "shape": shape, "set": shape_set, "skipped": "budget"}
                self.results["tune"].setdefault(name, {})[shape_key(shape)] = rec
                log(f"tune: {name} [{i}] skipped (budget)")
                self.save()
                continue
            self.tune_pair(name, fx, i, shape, w, weight_left, fixed_left, shape_set)

    def part_overhead(self) -> None:
        """Host time per launch once tuned (gpu_bench_report.part_overhead)."""
        part_overhead(self)

    # ---------------------------------------------------------------- run
    def run(self) -> None:
        opts = self.opts
        # import what a user's process has imported before its first tuning (z3, libcst)
        import tiletune.analysis  # noqa: F401
        import tiletune.synthesis  # noqa: F401,F811

        fixture_names = ([f.strip() for f in opts.fixtures.split(",") if f.strip()]
                         if opts.fixtures else list(DEFAULT_TUNE_FIXTURES))
        shape_idx = [int(s) for s in opts.shapes.split(",")] if opts.shapes else None
        per_fixture = 3 + (2 if "odd" in opts.shape_set else 0)
        n_tune = len(fixture_names) * (len(shape_idx) if shape_idx else per_fixture) if "tune" in opts.parts else 0
        tune_weight = n_tune + len(fixture_names) if n_tune else 0
        log(f"gpu_bench: parts {opts.parts}, device {self.results['runs'][0]['device']}, budget {opts.budget_s:.0f}s")
        if "overhead" in opts.parts:
            try:
                self.part_overhead()
            except Exception as exc:  # noqa: BLE001
                self.results["overhead"] = {"error": describe_exc(exc), "traceback": traceback.format_exc()[-3000:]}
                log(f"overhead: ERROR {describe_exc(exc)}")
                self.save()
        if "synth" in opts.parts:
            try:
                self.part_synth(weight_left=2.0 + tune_weight, fixed_left=(5.0 if opts.dry_run else 25.0) * n_tune)
            except Exception as exc:  # noqa: BLE001
                self.results["synth"] = {**(self.results.get("synth") or {}), "error": describe_exc(exc),
                                         "traceback": traceback.format_exc()[-3000:]}
                log(f"synth: ERROR {describe_exc(exc)}")
                self.save()
        if "tune" in opts.parts:
            self.part_tune(fixture_names, shape_idx, 0.0)
        self.save()
        shutil.rmtree(self.fresh_base, ignore_errors=True)






def main(argv: Optional[Sequence[str]] = None) -> int:
    opts = parse_args(argv)
    if opts.list_spaces:
        _runtime()
        return list_spaces(opts)
    if opts.merge:
        _runtime()
        return merge(opts)
    if opts.dry_run:
        os.environ["TRITON_INTERPRET"] = "1"
    cache = opts.triton_cache or os.path.join(tempfile.gettempdir(), "gpu_bench_triton_cache")
    os.environ["TRITON_CACHE_DIR"] = cache
    os.environ.setdefault("TILETUNE_PROGRESS", "0")
    _runtime()
    if not opts.dry_run and not torch.cuda.is_available():
        print("gpu_bench: no CUDA device; use --dry-run on a CPU", file=sys.stderr)
        return 2
    bench = Bench(opts)
    try:
        bench.run()
    finally:
        bench.save()
        print_table(bench.results)
        log(f"wrote {bench.out_dir / 'gpu_bench.json'} and gpu_bench.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
