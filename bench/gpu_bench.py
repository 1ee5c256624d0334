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
tune      per fixture and BENCH_SHAPE: the kernel time of (a) the config
          ``tiletune.autotune(configs=[])`` picks, (b) the config
          ``triton.autotune(configs=HAND_CONFIGS)`` picks, (c) the best of an
          exhaustive power-of-two search (space in ``exhaustive_space``; it
          is written into the JSON), (d) the fixture's ``torch_baseline``; and
          the first-tune wall time of tiletune, of triton.autotune over the
          hand list and of triton.autotune over the exhaustive list (measured
          where it is short enough, else estimated from sampled per-config
          compile + benchmark times, and marked so).  Summaries: geomean
          tiletune/exhaustive (goal <= 1.03), tiletune/hand (goal < 1),
          first-tune speedup over the exhaustive autotune (goal >= 5).
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
  of the config it picked (exhaustive: the best re-timed).
* First-tune wall time: a fresh ``triton.jit`` of the kernel (empty
  in-memory cache), a fresh ``TRITON_CACHE_DIR`` and a fresh
  ``TILETUNE_CACHE_DIR`` for each measured first call; the number of cubins
  written to the fresh directory is recorded to show that it compiled.
* ``--dry-run``: TRITON_INTERPRET=1 on the CPU with the fixtures' tiny
  SHAPES, tiny spaces and wall-clock timing, to check the plumbing.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SCHEMA = 1
PARTS = ("synth", "tune", "overhead")
# Fixtures where a hand-written list is what an author would otherwise write.
DEFAULT_TUNE_FIXTURES = [
    "matmul", "batched_matmul", "block_ptr_matmul", "flash_attention",
    "softmax", "layer_norm", "rms_norm", "cross_entropy",
    "transpose", "sum_axis", "vector_add", "int8_gemv",
]
SYNTH_FIXTURE = "matmul"
SYNTH_SHAPE = {"M": 512, "N": 4096, "K": 11008}
GOALS = {
    "synth_ratio_max": 1.05,
    "tiletune_over_exhaustive_max": 1.03,
    "tiletune_over_hand_max": 1.0,
    "first_tune_speedup_min": 5.0,
}
EARLY_STOP_FACTOR = 1.5
SLOW_FACTOR = 20.0
HEAVY_PER_THREAD_DOT = 256
PER_THREAD_MAX = 128  # tile elements per thread, kernels without a dot

T0 = time.perf_counter()


def log(msg: str) -> None:
    print(f"[{time.perf_counter() - T0:7.1f}s {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def next_pow2(n: int) -> int:
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def pow2_range(lo: int, hi: int) -> List[int]:
    out, v = [], next_pow2(max(1, lo))
    while v <= hi:
        out.append(v)
        v *= 2
    return out


def geomean(values: Sequence[float]) -> Optional[float]:
    vals = [v for v in values if v is not None and v > 0 and math.isfinite(v)]
    if not vals:
        return None
    return math.exp(sum(math.log(v) for v in vals) / len(vals))


def shape_key(shape: Dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in shape.items())


def first_line(text: str, limit: int = 300) -> str:
    lines = [ln.strip() for ln in str(text).strip().splitlines() if ln.strip()]
    out = lines[0] if lines else ""
    return out[:limit]


# ============================================================================ options


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=None, help="directory for gpu_bench.json and gpu_bench.md (required)")
    ap.add_argument("--parts", default="synth,tune,overhead", help="comma list of synth,tune,overhead")
    ap.add_argument("--fixtures", default=None, help="comma list of fixtures for 'tune' (default: 12 fixtures)")
    ap.add_argument("--shapes", default=None, help="comma list of BENCH_SHAPES indices (default: all 3)")
    ap.add_argument("--budget-s", type=float, default=None,
                    help="wall budget of this run; exhaustive searches stop early to fit (default 480 on a GPU)")
    ap.add_argument("--dry-run", action="store_true", help="TRITON_INTERPRET=1 on the CPU, tiny shapes and spaces")
    ap.add_argument("--target", default=None, help="tiletune target (default: detected; h100 in --dry-run)")
    ap.add_argument("--top-k", type=int, default=16, help="synthesized candidates (synth part)")
    ap.add_argument("--screen-rep-ms", type=float, default=10.0, help="exhaustive screening time per config")
    ap.add_argument("--final-warmup-ms", type=float, default=10.0)
    ap.add_argument("--final-rep-ms", type=float, default=50.0)
    ap.add_argument("--final-rounds", type=int, default=3)
    ap.add_argument("--retime-top", type=int, default=5, help="configs per method re-timed at the end")
    ap.add_argument("--est-sample", type=int, default=6,
                    help="configs sampled to estimate the exhaustive triton.autotune first-tune time")
    ap.add_argument("--exh-first-max-s", type=float, default=75.0,
                    help="measure the exhaustive triton.autotune first tune when estimated below this")
    ap.add_argument("--exh-first-max-configs", type=int, default=60,
                    help="... and when the list has at most this many configs")
    ap.add_argument("--exh-first-total-s", type=float, default=100.0,
                    help="at most this much of a run spent measuring exhaustive first tunes")
    ap.add_argument("--chunk", type=int, default=None, help="configs compiled per chunk (default 8 x threads)")
    ap.add_argument("--overhead-launches", type=int, default=None, help="launches per measurement (default 2000)")
    ap.add_argument("--triton-cache", default=None,
                    help="TRITON_CACHE_DIR for everything but the first-tune measurements")
    ap.add_argument("--include-heavy", action="store_true",
                    help="keep register-heavy dot configs in the exhaustive grid (compiled last)")
    ap.add_argument("--list-spaces", action="store_true",
                    help="print the exhaustive grid size per fixture and BENCH_SHAPE (no device needed) and exit")
    ap.add_argument("--merge", nargs="+", default=None, metavar="JSON",
                    help="merge these gpu_bench.json files into --out and exit")
    opts = ap.parse_args(argv)
    if opts.out is None and not opts.list_spaces:
        ap.error("--out DIR is required")
    opts.parts = [p.strip() for p in opts.parts.split(",") if p.strip()]
    bad = [p for p in opts.parts if p not in PARTS]
    if bad:
        ap.error(f"unknown part(s) {bad}; choose from {PARTS}")
    if opts.budget_s is None:
        opts.budget_s = 3600.0 if opts.dry_run else 480.0
    if opts.overhead_launches is None:
        opts.overhead_launches = 20 if opts.dry_run else 2000
    return opts


# ============================================================================ device helpers

torch = None  # imported in main() after the environment is set
triton = None


def _import_runtime() -> None:
    global torch, triton
    import torch as _torch
    import triton as _triton

    torch, triton = _torch, _triton


class Device:
    def __init__(self, dry: bool):
        self.dry = dry
        self.name = "cpu" if dry else "cuda"

    def sync(self) -> None:
        if not self.dry:
            torch.cuda.synchronize()

    def describe(self) -> str:
        if self.dry:
            return f"CPU (TRITON_INTERPRET=1), {platform.processor() or platform.machine()}"
        p = torch.cuda.get_device_properties(0)
        return f"{p.name}, {p.multi_processor_count} SMs, {p.total_memory / 2**30:.0f} GiB"


class Timer:
    """Screening (events, L2 flush, early stop) and final (do_bench median) timings, in ms."""

    def __init__(self, dev: Device, opts: argparse.Namespace):
        self.dev = dev
        self.opts = opts
        self.flush = None
        if not dev.dry:
            self.flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")

    def _wall(self, fn: Callable[[], Any]) -> float:
        self.dev.sync()
        t0 = time.perf_counter()
        fn()
        self.dev.sync()
        return (time.perf_counter() - t0) * 1e3

    def _events(self, fn: Callable[[], Any], n: int) -> List[float]:
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        for i in range(n):
            self.flush.zero_()
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        return [s.elapsed_time(e) for s, e in zip(starts, ends)]

    def one(self, fn: Callable[[], Any]) -> float:
        """One call (L2 flushed before it on a device), ms."""
        if self.dev.dry:
            return self._wall(fn)
        return self._events(fn, 1)[0]

    def screen(self, fn: Callable[[], Any], best: Optional[float]) -> Tuple[float, bool]:
        """(median ms, stopped early)."""
        if self.dev.dry:
            return self._wall(fn), False
        times = self._events(fn, 3)
        est = statistics.median(times)
        if best is not None and est > EARLY_STOP_FACTOR * best:
            return est, True
        n = max(5, min(100, int(self.opts.screen_rep_ms / max(est, 1e-3))))
        times += self._events(fn, n)
        return statistics.median(times), False

    def final(self, fn: Callable[[], Any]) -> float:
        if self.dev.dry:
            return self._wall(fn)
        import triton.testing

        return float(triton.testing.do_bench(fn, warmup=self.opts.final_warmup_ms, rep=self.opts.final_rep_ms,
                                             return_mode="median"))

    def interleaved(self, fns: Dict[str, Callable[[], Any]], rounds: int) -> Dict[str, dict]:
        samples: Dict[str, List[float]] = {k: [] for k in fns}
        errors: Dict[str, str] = {}
        keys = list(fns)
        for r in range(max(1, rounds)):
            order = keys[r % len(keys):] + keys[:r % len(keys)] if keys else []
            for k in order:
                if k in errors:
                    continue
                try:
                    samples[k].append(self.final(fns[k]))
                except Exception as exc:  # noqa: BLE001
                    errors[k] = first_line(f"{type(exc).__name__}: {exc}")
        out = {}
        for k in keys:
            if samples[k] and k not in errors:
                out[k] = {"ms": statistics.median(samples[k]), "samples_ms": samples[k]}
            else:
                out[k] = {"ms": None, "error": errors.get(k, "no sample")}
        return out

    def stock_do_bench(self, fn: Callable[[], Any]) -> float:
        """What triton.autotune's default benchmarker does per config (do_bench 25/100 ms)."""
        if self.dev.dry:
            return self._wall(fn)
        import triton.testing

        return float(triton.testing.do_bench(fn, quantiles=(0.5, 0.2, 0.8))[0])


def _wall_do_bench(dev: Device):
    """A do_bench for triton.autotune under the interpreter (its default needs a driver)."""

    def do_bench(fn, quantiles=None, **_):
        t0 = time.perf_counter()
        fn()
        ms = (time.perf_counter() - t0) * 1e3
        return [ms, ms, ms] if quantiles else ms

    return do_bench


class _Warm:
    """Stands in for the kernel in ``fixture.launch`` so that the launch only compiles."""

    def __init__(self, jit):
        self.jit = jit
        self.last = None

    def __getitem__(self, grid):
        def go(*args, **kwargs):
            self.last = self.jit.run(*args, grid=grid, warmup=True, **kwargs)
            return self.last

        return go


class FreshDirs:
    """Fresh TRITON_CACHE_DIR / TILETUNE_CACHE_DIR for one first-tune measurement, then the old ones back."""

    def __init__(self, base: Path, tag: str):
        self.base = base
        self.tag = tag

    def __enter__(self):
        self.root = Path(tempfile.mkdtemp(prefix=f"{self.tag}-", dir=self.base))
        self.triton_dir = self.root / "triton"
        self.tiletune_dir = self.root / "tiletune"
        self.triton_dir.mkdir()
        self.tiletune_dir.mkdir()
        self.saved = {k: os.environ.get(k) for k in ("TRITON_CACHE_DIR", "TILETUNE_CACHE_DIR")}
        os.environ["TRITON_CACHE_DIR"] = str(self.triton_dir)
        os.environ["TILETUNE_CACHE_DIR"] = str(self.tiletune_dir)
        return self

    def cubins(self) -> int:
        return sum(1 for _ in self.triton_dir.rglob("*.cubin"))

    def __exit__(self, *exc):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(self.root, ignore_errors=True)
        return False


def fresh_jit(fx):
    """A new JITFunction over the fixture's Python function: nothing compiled in memory."""
    return triton.jit(fx.KERNEL.fn)


def config_dict(cfg) -> dict:
    return {"kwargs": dict(cfg.kwargs), "num_warps": cfg.num_warps, "num_stages": cfg.num_stages}


def config_label(cfg) -> str:
    kw = " ".join(f"{k}={v}" for k, v in cfg.kwargs.items())
    return f"{kw} w{cfg.num_warps} s{cfg.num_stages}"


def config_sig(cfg) -> str:
    return json.dumps(config_dict(cfg), sort_keys=True)


# ============================================================================ one problem


class Problem:
    """One fixture at one shape, on the device: inputs, reference, validation, timed calls."""

    def __init__(self, name: str, fx, shape: Dict[str, Any], dev: Device):
        self.name = name
        self.fx = fx
        self.shape = dict(shape)
        self.dev = dev
        self.args = fx.make_args(shape, device=dev.name)
        self.ref = [r.float() for r in fx.reference(self.args)]  # before any launch (in-place kernels)
        self.saved = {n: self.args[n].clone() for n in fx.RESTORE_VALUE}
        self.reset = list(fx.RESET_TO_ZERO)
        self.restore = list(fx.RESTORE_VALUE)
        self.kernel = fx.KERNEL
        self.last_launch_ms = 0.0
        dev.sync()

    def hooks(self) -> None:
        for n in self.reset:
            self.args[n].zero_()
        for n in self.restore:
            self.args[n].copy_(self.saved[n])

    def poison(self) -> None:
        keep = set(self.reset) | set(self.restore)
        keep_ids = {id(self.args[n]) for n in keep}
        for t in self.fx.outputs(self.args):
            if id(t) in keep_ids:
                continue
            if t.is_floating_point():
                t.fill_(float("nan"))
            else:
                t.fill_(torch.iinfo(t.dtype).max)

    def call(self, meta: Dict[str, Any], kernel=None) -> Callable[[], None]:
        fx, args, k = self.fx, self.args, kernel or self.kernel
        if self.reset or self.restore:
            hooks = self.hooks

            def fn() -> None:
                hooks()
                fx.launch(k, args, **meta)
        else:
            def fn() -> None:
                fx.launch(k, args, **meta)
        return fn

    def check(self, outs: Sequence[Any]) -> Tuple[bool, str]:
        tol = self.fx.TOLERANCE
        if len(outs) < len(self.ref):
            return False, f"{len(outs)} outputs, expected {len(self.ref)}"
        for i, (o, r) in enumerate(zip(outs, self.ref)):
            try:
                torch.testing.assert_close(o.float(), r, **tol)
            except AssertionError as exc:
                lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
                return False, f"output {i}: " + "; ".join(lines[:3])[:300]
        return True, ""

    def validate(self, meta: Dict[str, Any], kernel=None) -> Tuple[bool, str]:
        self.poison()
        self.hooks()
        self.dev.sync()
        t0 = time.perf_counter()
        try:
            self.fx.launch(kernel or self.kernel, self.args, **meta)
            self.dev.sync()
        except Exception as exc:  # noqa: BLE001
            return False, "failed: " + describe_exc(exc)
        self.last_launch_ms = (time.perf_counter() - t0) * 1e3
        ok, why = self.check(self.fx.outputs(self.args))
        return ok, ("" if ok else "wrong: " + why)

    def baseline_call(self) -> Optional[Callable[[], Any]]:
        base = getattr(self.fx, "torch_baseline", None)
        if base is None:
            return None
        args = self.args
        if self.reset or self.restore:
            hooks = self.hooks

            def fn():
                hooks()
                return base(args)
        else:
            def fn():
                return base(args)
        return fn

    def validate_baseline(self) -> Tuple[bool, str]:
        fn = self.baseline_call()
        if fn is None:
            return False, "no torch_baseline"
        try:
            out = fn()
            self.dev.sync()
        except Exception as exc:  # noqa: BLE001
            return False, "failed: " + describe_exc(exc)
        if out is None:
            return True, "returns None (not compared)"
        r = self.ref[0]
        tol = dict(self.fx.TOLERANCE)
        if out.dtype in (torch.float16, torch.bfloat16):  # native-dtype output: fp16 rounding
            tol = {"atol": max(tol.get("atol", 0), 5e-2), "rtol": max(tol.get("rtol", 0), 2e-2)}
        try:
            torch.testing.assert_close(out.float(), r, **tol)
        except AssertionError as exc:
            return False, "differs: " + first_line(str(exc))
        return True, ""

    def free(self) -> None:
        self.args = self.ref = self.saved = None


def describe_exc(exc: BaseException) -> str:
    try:
        from tiletune.runtime.parallel_compile import describe_error

        return describe_error(exc)
    except Exception:  # noqa: BLE001
        return first_line(f"{type(exc).__name__}: {exc}")


# ============================================================================ search spaces


class Space:
    def __init__(self, configs: list, heavy: List[bool], desc: dict, include_heavy: bool = False):
        # a fixed shuffle: a search the budget stops early is a uniform sample of the grid
        rng = random.Random(0)
        order = [i for i in range(len(configs)) if not heavy[i]]
        rng.shuffle(order)
        if include_heavy:
            tail = [i for i in range(len(configs)) if heavy[i]]
            rng.shuffle(tail)
            order += tail
        self.configs = [configs[i] for i in order]
        self.heavy = [heavy[i] for i in order]
        self.desc = dict(desc, n_grid=len(self.configs), heavy_included=include_heavy,
                         n_heavy_pruned=0 if include_heavy else sum(heavy))

    @property
    def signature(self) -> str:
        return str(hash(tuple(config_sig(c) for c in self.configs)))


def exhaustive_space(spec, args: Dict[str, Any], dry: bool, seed: int = 0, include_heavy: bool = False) -> Space:
    """The power-of-two grid a careful author would sweep for this kernel at these sizes.

    * searched: the kernel's tiling parameters not passed by the launch;
    * ``tl.dot`` dimensions (min_value >= 16): 16 .. min(cap, next_pow2(bound)),
      cap 256 (parallel) / 128 (reduction);
    * other tiling parameters: 32 (1 parameter) or 1 (2 or more) .. min(65536,
      next_pow2(bound)) (1024 without a bound); their product (tile elements)
      in [32, 65536] (1 parameter) or [128, 16384] (2 or more);
    * num_warps: {2, 4, 8} with a dot; else {1, 2, 4, 8, 16} keeping 1..128
      tile elements per thread;
    * num_stages: {1..5} with a dot in a loop, {1..4} with loads in a loop,
      else {1} (nothing to pipeline: other values give the same code).
    Heavy dot configs (above 256 fp32 accumulator values per thread: more than
    the 255 registers a thread has, so they spill and cannot win) are pruned;
    they also compile for 10 s to 2 min each on sm_90 (256x256 at 2 warps).
    ``--include-heavy`` keeps them, last, where the budget cuts them first.
    Dry run: warps {4}, stages {1} and at most 4 configs sampled from the grid.
    """
    import triton as _tr
    from tiletune.analysis.model import Role

    searched = [p for p in spec.tiling_params if p.name not in args]
    fixed = {p.name: args[p.name] for p in spec.tiling_params if p.name in args}
    dot = [p for p in searched if (p.min_value or 1) >= 16]
    nondot = [p for p in searched if (p.min_value or 1) < 16]
    fixed_dot = [int(v) for p, v in ((spec.param(n), v) for n, v in fixed.items())
                 if p is not None and (p.min_value or 1) >= 16 and isinstance(v, int)]
    loads_in_loop = any(a.in_loop and a.kind == "load" for a in spec.accesses)
    dot_in_loop = any(d.in_loop for d in spec.dots)
    domains: Dict[str, List[int]] = {}
    for p in dot:
        cap = 128 if p.role == Role.REDUCTION else 256
        b = args.get(p.bound) if p.bound else None
        hi = min(cap, max(16, next_pow2(b))) if isinstance(b, int) and not isinstance(b, bool) else cap
        domains[p.name] = pow2_range(16, hi)
    multi = len(nondot) > 1
    for p in nondot:
        lo = 1 if multi else 32
        b = args.get(p.bound) if p.bound else None
        hi = min(65536, next_pow2(b)) if isinstance(b, int) and not isinstance(b, bool) else 1024
        domains[p.name] = pow2_range(lo, max(hi, lo))
    numel_lo, numel_hi = (128, 16384) if multi else (32, 65536)
    if dot:
        warps = [2, 4, 8]
    else:
        warps = [1, 2, 4, 8, 16]
    stages = [1, 2, 3, 4, 5] if dot_in_loop else ([1, 2, 3, 4] if loads_in_loop else [1])
    if dry:
        warps, stages = [4], [1]
    par_dot = [p.name for p in dot if p.role == Role.PARALLEL]
    red_dot = [p.name for p in dot if p.role != Role.PARALLEL]
    names = list(domains)
    configs, heavy = [], []
    for combo in itertools.product(*(domains[n] for n in names)):
        kw = dict(zip(names, combo))
        nd = math.prod(kw[p.name] for p in nondot) if nondot else 0
        if nondot and not (numel_lo <= nd <= numel_hi):
            continue
        if len(par_dot) >= 2:
            acc = math.prod(kw[n] for n in par_dot)
        elif len(par_dot) == 1:
            acc = kw[par_dot[0]] * max([kw[n] for n in red_dot] + fixed_dot + [1])
        else:
            acc = 0
        for w in warps:
            is_heavy = False
            if nondot and not dot:
                per = nd / (32 * w)
                if not dry and (per < 1 or per > PER_THREAD_MAX):
                    continue
            if dot:
                is_heavy = acc / (32 * w) > HEAVY_PER_THREAD_DOT
            for s in stages:
                configs.append(_tr.Config(dict(kw), num_warps=w, num_stages=s))
                heavy.append(is_heavy)
    n_full = len(configs)
    if dry and len(configs) > 4:
        # the plumbing check: a few configs of the grid (heavy or not: nothing compiles)
        idx = sorted(random.Random(seed).sample(range(len(configs)), 4))
        configs = [configs[i] for i in idx]
        heavy = [heavy[i] for i in idx]
    desc = {
        "searched": names,
        "fixed_at_launch": {k: (v if isinstance(v, (int, float, bool, str)) else str(v)) for k, v in fixed.items()},
        "domains": domains,
        "num_warps": warps,
        "num_stages": stages,
        "tile_elements": [numel_lo, numel_hi] if nondot else None,
        "n_grid_full": n_full,
    }
    return Space(configs, heavy, desc, include_heavy=include_heavy)


def exhaustive_rules() -> str:
    """The rules of :func:`exhaustive_space`, in one paragraph (written once into the JSON)."""
    doc = exhaustive_space.__doc__ or ""
    return " ".join(doc.split("\n\n", 1)[-1].split())


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
        self.specs: Dict[str, Any] = {}
        self.compile_samples: Dict[str, List[float]] = {}
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

        commit = None
        try:
            commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                    text=True, timeout=10).stdout.strip() or None
        except Exception:  # noqa: BLE001
            pass
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
            "commit": commit,
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
    def first_tune_tiletune(self, prob: Problem) -> dict:
        import tiletune

        fx = prob.fx
        with FreshDirs(self.fresh_base, "tt") as dirs:
            jit = fresh_jit(fx)
            tuned = tiletune.autotune(configs=[], key=fx.KEY, restore_value=fx.RESTORE_VALUE or None,
                                      reset_to_zero=fx.RESET_TO_ZERO or None, target=self.target())(jit)
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

    def tune_pair(self, name: str, fx, idx: int, shape: dict, weight: float, weight_left: float,
                  fixed_left: float) -> None:
        skey = shape_key(shape)
        log(f"tune: {name} [{idx}] {skey}")
        rec: Dict[str, Any] = {"fixture": name, "shape_index": idx, "shape": shape}
        self.results["tune"].setdefault(name, {})[skey] = rec
        prob = Problem(name, fx, shape, self.dev)
        rec["dtype"] = _main_dtype(prob.args)
        spec = self.spec(name, fx)
        try:
            # (a) tiletune first tune
            try:
                tt = self.first_tune_tiletune(prob)
                log(f"  tiletune first tune {tt['first_tune_s']:.2f}s ({tt['n_candidates']} candidates, "
                    f"{tt['cubins_in_fresh_cache']} cubins compiled): {tt['label']}")
            except Exception as exc:  # noqa: BLE001  (recorded; the other methods still run)
                tt = {"error": describe_exc(exc), "traceback": traceback.format_exc()[-2000:], "_best": None,
                      "_ranked": []}
                log(f"  tiletune first tune FAILED: {tt['error']}")
            # (b) triton.autotune over the hand list
            try:
                hand = self.first_tune_stock(prob, fx.HAND_CONFIGS, "hand")
                log(f"  triton.autotune(HAND_CONFIGS) first tune {hand['first_tune_s']:.2f}s "
                    f"({hand['n_configs']} configs, {hand['cubins_in_fresh_cache']} cubins): {hand['label']}")
            except Exception as exc:  # noqa: BLE001
                hand = {"error": describe_exc(exc), "traceback": traceback.format_exc()[-2000:], "_best": None,
                        "_ranked": []}
                log(f"  triton.autotune(HAND_CONFIGS) FAILED: {hand['error']}")
            # (c) exhaustive
            space = exhaustive_space(spec, prob.args, self.opts.dry_run, include_heavy=self.opts.include_heavy)
            share = self._share(weight, weight_left, fixed_left)
            log(f"  exhaustive: {len(space.configs)} configs ({space.desc['n_heavy_pruned']} register-heavy pruned), "
                f"budget {share:.0f}s")
            exh = self.exhaustive(prob, space, time.perf_counter() + share)
            ok_cfgs = exh["ok_configs"]
            # first tune of triton.autotune over the exhaustive list (the valid configs)
            n_list = len(ok_cfgs)
            if not exh["complete"] and exh["n_done"]:
                n_list = round(len(ok_cfgs) * exh["n_grid"] / exh["n_done"])
            first = self.estimate_stock_first(prob, ok_cfgs, n_list)
            first["list"] = "configs of the exhaustive grid that compiled and passed validation" + (
                "" if exh["complete"] else " (grid not fully screened: size extrapolated)")
            est = first.get("estimated_s")
            room = self.left() - fixed_left - 30.0
            if (est is not None and exh["complete"] and est <= self.opts.exh_first_max_s
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
            ex_ranked = [(ms_of(c), c) for c in groups["exhaustive"] if ms_of(c) is not None]
            rec["exhaustive"] = _public_exh(exh)
            rec["exhaustive"]["first_tune"] = first
            rec["exhaustive"]["retimed"] = {config_label(c): ms_of(c) for c in groups["exhaustive"]}
            if ex_ranked:
                bm, bc = min(ex_ranked, key=lambda x: x[0])
                rec["exhaustive"]["ms"], rec["exhaustive"]["best"] = bm, config_label(bc)
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

    def part_tune(self, fixture_names: List[str], shape_idx: Optional[List[int]], synth_weight: float) -> None:
        import fixtures

        items = []
        for name in fixture_names:
            fx = fixtures.load(name)
            shapes = fx.SHAPES if self.opts.dry_run else fx.BENCH_SHAPES
            idxs = shape_idx if shape_idx is not None else list(range(len(shapes)))
            # the first shape of a fixture pays for most compiles (3x with a dot, 2x without)
            first_w = 3.0 if self.spec(name, fx).dots else 2.0
            for n, i in enumerate(i for i in idxs if i < len(shapes)):
                items.append((name, fx, i, dict(shapes[i]), first_w if n == 0 else 1.0))
        fixed_per = 5.0 if self.dev.dry else 25.0  # first tunes + re-timing, seconds per pair (rough)
        for k, (name, fx, i, shape, w) in enumerate(items):
            rest = items[k:]
            weight_left = sum(x[4] for x in rest)
            fixed_left = fixed_per * (len(rest) - 1)
            if self.left() < fixed_per:
                rec = {"fixture": name, "shape_index": i, "shape": shape, "skipped": "budget"}
                self.results["tune"].setdefault(name, {})[shape_key(shape)] = rec
                log(f"tune: {name} [{i}] skipped (budget)")
                self.save()
                continue
            self.tune_pair(name, fx, i, shape, w, weight_left, fixed_left)

    def part_overhead(self) -> None:
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

    # ---------------------------------------------------------------- run
    def run(self) -> None:
        opts = self.opts
        # import what a user's process has imported before its first tuning (z3, libcst)
        import tiletune.analysis  # noqa: F401
        import tiletune.synthesis  # noqa: F401,F811

        fixture_names = ([f.strip() for f in opts.fixtures.split(",") if f.strip()]
                         if opts.fixtures else list(DEFAULT_TUNE_FIXTURES))
        shape_idx = [int(s) for s in opts.shapes.split(",")] if opts.shapes else None
        n_tune = len(fixture_names) * (len(shape_idx) if shape_idx else 3) if "tune" in opts.parts else 0
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


def _threads() -> int:
    try:
        from tiletune.runtime.parallel_compile import max_workers

        return max_workers(10_000)
    except Exception:  # noqa: BLE001
        return os.cpu_count() or 1


def _example(lst: list, cfg, why: str) -> None:
    if len(lst) < 3:
        lst.append(f"[{config_label(cfg)}] {why}")


def _main_dtype(args: dict) -> str:
    for v in args.values():
        if hasattr(v, "dtype") and hasattr(v, "data_ptr"):
            return str(v.dtype).replace("torch.", "")
    return "?"


def _check_outputs(fx, args) -> Tuple[bool, str]:
    try:
        ref = fx.reference(args)  # vector_add: the inputs are untouched
        for o, r in zip(fx.outputs(args), ref):
            torch.testing.assert_close(o.float(), r.float(), **fx.TOLERANCE)
        return True, ""
    except AssertionError as exc:
        return False, first_line(str(exc))


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
        out["tune"] = {
            "pairs": len(pairs),
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
                f"worst {_fmt(t.get('worst_tiletune_over_exhaustive'), 3)}",
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
            ]
            if t.get("tiletune_pick_invalid"):
                lines.append("- tiletune failed, or picked a config that failed validation: "
                             + ", ".join(t["tiletune_pick_invalid"]))
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
            print(f"geomean tt/exh {_fmt(t.get('geomean_tiletune_over_exhaustive'), 3)} (goal <= 1.03), "
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


def main(argv: Optional[Sequence[str]] = None) -> int:
    opts = parse_args(argv)
    if opts.list_spaces:
        _import_runtime()
        return list_spaces(opts)
    if opts.merge:
        _import_runtime()
        return merge(opts)
    if opts.dry_run:
        os.environ["TRITON_INTERPRET"] = "1"
    cache = opts.triton_cache or os.path.join(tempfile.gettempdir(), "gpu_bench_triton_cache")
    os.environ["TRITON_CACHE_DIR"] = cache
    os.environ.setdefault("TILETUNE_PROGRESS", "0")
    _import_runtime()
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
