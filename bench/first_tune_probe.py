"""One kernel's first tune as a user's fresh process sees it: tiletune's search facts, no bench around it.

    python bench/first_tune_probe.py int8_gemv N=300,K=4096 [more pairs...]

Each pair is tuned by tiletune and by ``triton.autotune`` over the fixture's hand list, each in its own
fresh interpreter (fresh Triton and tiletune cache directories), then once more in the same interpreter
with a fresh ``triton.jit`` (a warm process).
Prints, per run: the first tune's wall time and the search's own facts (compile seconds, latency of a
wave of compiles, first batch and descent seconds).  Compare with a ``gpu_bench.py`` record of the pair:
there the first tune runs inside a long-lived process that already tuned other kernels.
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def one(fixture: str, shape: str, method: str) -> list:
    import torch
    import triton
    import tiletune
    import fixtures

    fx = fixtures.load(fixture)
    shp = {k: int(v) for k, v in (p.split("=") for p in shape.split(","))}
    args = fx.make_args(shp, device="cuda")
    from gpu_bench_lib import FreshDirs

    rows = []
    for run in ("fresh process", "same process again"):
        with FreshDirs(Path(tempfile.gettempdir()), "probe"):
            jit = triton.jit(fx.KERNEL.fn)
            common = dict(key=fx.KEY, restore_value=fx.RESTORE_VALUE or None,
                          reset_to_zero=fx.RESET_TO_ZERO or None)
            if method == "hand":
                tuned = triton.autotune(configs=list(fx.HAND_CONFIGS), **common)(jit)
            else:
                tuned = tiletune.autotune(configs=[], **common)(jit)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            fx.launch(tuned, args)
            torch.cuda.synchronize()
            wall = time.perf_counter() - t0
        facts = dict(getattr(tuned, "search_facts", {}) or {})
        rows.append({"run": run, "first_tune_s": wall, "search": facts})
    return rows


def main() -> None:
    if len(sys.argv) >= 5 and sys.argv[1] == "--one":
        print(json.dumps(one(sys.argv[2], sys.argv[3], sys.argv[4])))
        return
    pairs = sys.argv[1:]
    for fixture, shape in zip(pairs[0::2], pairs[1::2]):
        for method in ("tiletune", "hand"):
            proc = subprocess.run([sys.executable, __file__, "--one", fixture, shape, method], capture_output=True,
                                  text=True, cwd=ROOT)
            if proc.returncode != 0:
                print(f"{fixture} {shape} {method}: FAILED\n{proc.stderr[-2000:]}")
                continue
            rows = json.loads(proc.stdout.strip().splitlines()[-1])
            if method == "hand":
                print(f"{fixture} {shape} hand list: first tune {rows[0]['first_tune_s']:.2f}s in a fresh process, "
                      f"{rows[1]['first_tune_s']:.2f}s again")
                continue
            report(fixture, shape, rows)


def report(fixture: str, shape: str, rows: list) -> None:
    """Print tiletune's runs of one pair."""
    for r in rows:
        s = r["search"]
        ci = s.get("compiled_in", {})
        print(f"{fixture} {shape} [{r['run']}]: first tune {r['first_tune_s']:.2f}s, budget "
              f"{s.get('time_budget_s', 0):.2f}s, compile_s {s.get('compile_s') or 0:.3f}, latency "
              f"{s.get('compile_latency_s') or 0:.3f}, start children {ci.get('start_children_s', 0):.3f}, "
              f"capture {ci.get('capture_s', 0):.3f}, warm {ci.get('warm_compiler_s', 0):.3f}, children: wall "
              f"{ci.get('children_wall_s', 0):.3f} dispatch {ci.get('children_dispatch_s', 0):.3f} compile "
              f"{ci.get('children_compile_s', 0):.3f} return {ci.get('children_return_s', 0):.3f} (summed over "
              f"batches), first batch {s.get('first_batch')} in "
              f"{s.get('seconds', {}).get('first_batch', 0):.2f}s, descent {s.get('descent_measured')} in "
              f"{s.get('seconds', {}).get('descent', 0):.2f}s ({s.get('descent_stopped')})")


if __name__ == "__main__":
    main()
