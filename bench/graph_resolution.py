"""How finely a CUDA-graph timing tells short kernels apart, by the length of the replay (GPU).

tiletune screens and re-times a kernel under 20 us from CUDA graphs (``runtime/bench.py``:
``do_bench_cudagraph`` with ``rep=GRAPH_REP_MS``).  Triton's ``do_bench_cudagraph`` sizes its graph as
``rep`` over an estimate taken from 5 eager calls, and an eager call of a 1-5 us kernel costs tens of us of
launch overhead: the graph then holds a few dozen calls, and the replay's own start is spread over few of
them.  This times a sample of a pair's configs at several replay lengths, interleaved over rounds in one
warm process, and reports per length: the calls a graph held, the offset against the longest replay, the
run-to-run spread, and how far the length's own pick is from the longest replay's best.

    python bench/graph_resolution.py --out DIR [--pairs 4,15] [--reps 1,5,25] [--rounds 7] [--sample 24]

Writes ``DIR/graph_resolution.{json,md}``.  ``--pairs`` index ``cold_pairs.GPU_PAIRS``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cold_pairs  # noqa: E402
import gpu_bench_lib as lib  # noqa: E402
from first_tune_cold import _jit_of  # noqa: E402


def measure_pair(pair: Dict[str, Any], reps: List[float], rounds: int, sample: int) -> Dict[str, Any]:
    """Every sampled config of ``pair`` timed at each replay length in ``reps``, ``rounds`` times interleaved."""
    import triton.testing

    lib._import_runtime()
    from tiletune.analysis import analyze_kernel
    from tiletune.runtime.bench import eager_call_ms

    problem = cold_pairs.load(pair)
    dev = lib.Device(False)
    prob = lib.Problem(pair["kernel"], problem, pair["shape"], dev)
    grid = list(lib.exhaustive_space(analyze_kernel(_jit_of(problem.KERNEL)), prob.args, False).configs)
    configs = random.Random(0).sample(grid, min(sample, len(grid)))
    calls: Dict[str, Any] = {}
    for c in configs:
        ok, _ = prob.validate(c.all_kwargs())
        if ok:
            calls[lib.config_sig(c)] = prob.call(c.all_kwargs())
    times: Dict[str, Dict[str, List[float]]] = {s: {str(r): [] for r in reps} for s in calls}
    eager: Dict[str, float] = {s: eager_call_ms(fn) for s, fn in calls.items()}
    sigs = list(calls)
    for k in range(rounds):
        for rep in reps:
            for s in lib.round_order(sigs, k, rounds):
                times[s][str(rep)].append(float(triton.testing.do_bench_cudagraph(calls[s], rep=rep,
                                                                                  return_mode="median")))
    longest = str(max(reps))
    med = {str(r): {s: statistics.median(times[s][str(r)]) for s in sigs} for r in reps}
    best_long = min(med[longest].values())
    rows = []
    for rep in reps:
        m = med[str(rep)]
        pick = min(m, key=m.get)
        spread = statistics.median((max(times[s][str(rep)]) - min(times[s][str(rep)])) / m[s] for s in sigs)
        rows.append({"rep_ms": rep, "calls_in_graph": statistics.median(max(1, int(rep / max(eager[s], 1e-6)))
                                                                        for s in sigs),
                     "offset_us": 1e3 * statistics.median(m[s] - med[longest][s] for s in sigs),
                     "spread": spread, "pick": pick, "pick_over_best": med[longest][pick] / best_long})
    return {"pair": pair, "configs": len(sigs), "eager_ms": statistics.median(eager.values()),
            "best_ms": best_long, "rows": rows, "times_ms": times}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--pairs", default="4,15")
    ap.add_argument("--reps", default="1,5,25")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--sample", type=int, default=24)
    opts = ap.parse_args(argv)
    reps = [float(r) for r in opts.reps.split(",")]
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    results, t0 = [], time.perf_counter()
    for i in (int(x) for x in opts.pairs.split(",")):
        results.append(measure_pair(cold_pairs.GPU_PAIRS[i], reps, opts.rounds, opts.sample))
    import torch

    meta = {"date": time.strftime("%Y-%m-%d %H:%M:%S %z"), "argv": sys.argv[1:], "device": torch.cuda.get_device_name(),
            "commit": lib.checkout_commit(Path(__file__).resolve().parent.parent), "wall_s": time.perf_counter() - t0}
    (out / "graph_resolution.json").write_text(json.dumps({"meta": meta, "results": results}, indent=1))
    lines = ["# CUDA-graph timing of short kernels by replay length", "",
             f"Run {meta['date']} on {meta['device']} (commit {meta['commit']}): "
             f"`python bench/graph_resolution.py {' '.join(meta['argv'])}`. Per pair, a seeded sample of its grid, "
             "each config timed by `do_bench_cudagraph` at each replay length, interleaved over the rounds in one "
             "process; offset and spread are medians over the configs, the pick is the length's own fastest "
             "(median over rounds) as the longest replay times it.", "",
             "| pair | kernel us | eager call us | rep ms | calls in graph | offset us | run-to-run spread | "
             "own pick / best |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for res in results:
        name = f"{res['pair']['kernel']} {lib.shape_key(res['pair']['shape'])}"
        for row in res["rows"]:
            lines.append(f"| {name} | {res['best_ms'] * 1e3:.2f} | {res['eager_ms'] * 1e3:.1f} | {row['rep_ms']:g} | "
                         f"{row['calls_in_graph']:.0f} | {row['offset_us']:.3f} | {row['spread']:.3f} | "
                         f"{row['pick_over_best']:.3f} |")
    (out / "graph_resolution.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
