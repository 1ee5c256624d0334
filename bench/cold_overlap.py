"""A cold first tune's CPU part, with and without the compiler's warm-up run ahead (no GPU needed).

In a fresh process per run: the fixture kernel is analysed, its candidates
synthesised for the H100, and the first batch (the leading ``--batch``
candidates) compiled for ``GPUTarget("cuda", 90, 32)`` in the compile
children of a :class:`~tiletune.runtime.compile_workers.CompileSession`, as
a first tune does.  ``fork``: :meth:`~tiletune.runtime.compile_workers.CompileSession.fork_ahead`
forks the compile children first, as the autotuner does when a first tune
starts, each warming its own compiler while the analysis and synthesis run;
``off``: the warm-up runs in this process before the first fork (as before);
``thread``: it runs in a thread of this process, next to the analysis.  Modes alternate over ``--runs`` pairs;
the per-run timeline (runtime/timeline.py) and the medians go to
``--out`` (JSON and markdown).

    python bench/cold_overlap.py [--fixture matmul --shape M=96,N=5000,K=4096] [--runs 3] [--out bench/results/cold_overlap]
    python bench/cold_overlap.py --one fork   # one run in this process, JSON on stdout (what the runs call)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SHAPE = "M=96,N=5000,K=4096"
#: off: the warm-up before the first fork (as before); fork: the children forked ahead, each warming its own
#: compiler (CompileSession.fork_ahead, what the autotuner does); thread: the warm-up in a thread of this process
MODES = ("off", "fork", "thread")


def _shape(text: str) -> dict:
    out = {}
    for part in text.split(","):
        name, _, value = part.partition("=")
        if not value:
            raise SystemExit(f"--shape {text!r}: write NAME=VALUE pairs separated by commas, e.g. {SHAPE}")
        out[name.strip()] = int(value)
    return out


def one_run(mode: str, fixture: str, shape: dict, batch: int) -> dict:
    """One cold first tune's CPU part in this process (which must be fresh); its timeline and facts."""
    from triton.backends.compiler import GPUTarget

    from tiletune.runtime import timeline
    from tiletune.runtime.compile_workers import CompileSession, CompileSpec, ProcessCompiles, warm_compiler

    target = GPUTarget("cuda", 90, 32)
    timeline.start()
    t0 = time.perf_counter()
    thread = None
    if mode == "thread":  # the warm-up in a thread of this process (measured, not adopted: the GIL)
        import threading

        thread = threading.Thread(target=warm_compiler, args=(target,), daemon=True)
        thread.start()
    session = CompileSession()
    import fixtures
    forked = mode == "fork" and session.fork_ahead([fixtures.load(fixture).KERNEL], target)
    from tests.fixture_problems import kernel_spec, launch_constants, synthesis_inputs
    from tiletune.runtime.offline_compile import specialize
    from tiletune.synthesis import synthesize

    fx = fixtures.load(fixture)
    spec = kernel_spec(fx, launch_constants(fx, shape))[1]
    desc, shapes, dtypes, fixed = synthesis_inputs(fx, spec, shape)
    t1 = time.perf_counter()
    timeline.add("setup", "analysis", t0, t1)
    result = synthesize(spec, shapes, dtypes, "h100", fixed=fixed, top_k=16)
    t2 = time.perf_counter()
    timeline.add("synthesis", f"{len(result.candidates)} candidate(s)", t1, t2)
    fn = fx.KERNEL
    while not hasattr(fn, "params") and hasattr(fn, "fn"):  # unwrap autotune/heuristics to the JITFunction
        fn = fn.fn
    params = [(p.name, bool(p.is_constexpr)) for p in fn.params]
    specs = {}
    for i, cand in enumerate(result.candidates[:batch]):
        signature, values, attrs = specialize(params, desc, cand.kwargs)
        constexprs = {(fn.arg_names.index(k),): v for k, v in values.items()}
        specs[i] = CompileSpec(fn, signature, constexprs, attrs,
                               {"num_warps": cand.num_warps, "num_stages": cand.num_stages}, target)
    with session:
        with ProcessCompiles(specs, session) as children:
            compiled = {k: children.wait(k) for k in specs}
            finished = children._finished()
        t3 = time.perf_counter()
    for res in finished.values():
        timeline.add("compile", "child", res[3], res[4])
    timeline.add("batch", f"first batch of {len(specs)}", t2, t3)
    events = timeline.stop()
    from tiletune.runtime.compile_workers import _WARMED, _WARMING

    for warming in _WARMING:  # the warm-up this process started when the session closed (warm_after)
        warming.join()
    warm_after_close = bool(_WARMING) and _WARMED.get(repr(target)) is not None
    again = CompileSession()
    forked_again = again.fork_ahead([fixtures.load(fixture).KERNEL], target)
    again.close()
    return {"mode": mode, "fixture": fixture, "shape": shape, "wall_s": t3 - t0, "analysis_s": t1 - t0,
            "synthesis_s": t2 - t1, "batch_s": t3 - t2, "warm_s": session.warm_s, "warm_wait_s": session.warm_wait_s,
            "thread": thread is not None, "forked_ahead": forked, "warm_after_close": warm_after_close,
            "forked_ahead_again": forked_again, "compiled": sum(1 for got in compiled.values() if got is not None),
            "summary": timeline.summary(events), "events": events}


def run_fresh(mode: str, fixture: str, shape: str, batch: int) -> dict:
    """:func:`one_run` in a fresh interpreter with an empty Triton cache (no TRITON_INTERPRET)."""
    with tempfile.TemporaryDirectory() as cache:
        env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
        env.update(TRITON_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
        proc = subprocess.run([sys.executable, __file__, "--one", mode, "--fixture", fixture, "--shape", shape,
                               "--batch", str(batch)], capture_output=True, text=True, env=env, timeout=900)
    if proc.returncode != 0:
        raise SystemExit(f"cold_overlap --one {mode} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout)


def _timeline_text(run: dict) -> str:
    lines = [f"{e['start_s']:8.3f} {e['end_s']:8.3f}  {e['kind']:<12} {e['label']}" for e in run["events"]]
    return "\n".join(lines)


def main(argv=None) -> int:
    """Run the pairs (or ``--one``) and write the results."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fixture", default="matmul")
    ap.add_argument("--shape", default=SHAPE)
    ap.add_argument("--batch", type=int, default=6, help="first batch size (M=96 on the H100: 6)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--one", choices=MODES)
    ap.add_argument("--modes", default="off,fork", help=f"modes compared, of {', '.join(MODES)}")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "cold_overlap"))
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(one_run(args.one, args.fixture, _shape(args.shape), args.batch)))
        return 0
    runs = []
    modes = tuple(m for m in args.modes.split(",") if m)
    if not modes or any(m not in MODES for m in modes):
        raise SystemExit(f"--modes {args.modes!r}: name modes of {', '.join(MODES)}, separated by commas")
    for r in range(args.runs):
        for mode in (modes if r % 2 == 0 else modes[::-1]):
            run = run_fresh(mode, args.fixture, args.shape, args.batch)
            runs.append(run)
            print(f"{mode:5s} wall {run['wall_s']:.3f}  analysis {run['analysis_s']:.3f}  synthesis "
                  f"{run['synthesis_s']:.3f}  batch {run['batch_s']:.3f}  warm {run['warm_s']:.3f} "
                  f"(waited {run['warm_wait_s']:.3f})  compiled {run['compiled']}", flush=True)
    med = {m: {k: statistics.median(r[k] for r in runs if r["mode"] == m)
               for k in ("wall_s", "analysis_s", "synthesis_s", "batch_s", "warm_s", "warm_wait_s")}
           for m in modes}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"fixture": args.fixture, "shape": args.shape, "batch": args.batch,
                                                    "cpus": os.cpu_count(), "medians": med, "runs": runs}, indent=1))
    rows = [f"| {m} | {v['wall_s']:.3f} | {v['analysis_s']:.3f} | {v['synthesis_s']:.3f} | {v['batch_s']:.3f} | "
            f"{v['warm_s']:.3f} | {v['warm_wait_s']:.3f} |" for m, v in med.items()]
    last = {m: [r for r in runs if r["mode"] == m][-1] for m in modes}
    text = (f"# A cold first tune's CPU part: the compiler's warm-up run ahead or not\n\n"
            f"`python bench/cold_overlap.py --fixture {args.fixture} --shape {args.shape} --batch {args.batch} "
            f"--runs {args.runs} --modes {args.modes}` on a {os.cpu_count()}-core host (no GPU: the first batch compiles for sm_90 in "
            f"the compile children); medians of {args.runs} fresh processes per mode, modes alternating.\n\n"
            "| mode | wall s | analysis s | synthesis s | first batch s | warm-up s | waited for it s |\n"
            "|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n\n" +
            "\n\n".join(f"Timeline ({m}, last run):\n\n```\n{_timeline_text(last[m])}\n```" for m in last) + "\n")
    out.with_suffix(".md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
