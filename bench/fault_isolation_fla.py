"""fla-core's ``chunk_fwd_kernel_o`` at the config that faulted an H100, with and without isolation (GPU only).

The kernel (dev data, ``.corpus/fla-core``; read by the analysis, imported
here only to launch it) made an illegal memory access on an H100 at
``BK=64, BV=32, num_warps=4``, a config its authors never list.  This bench:

1. launches that config directly, in a child process per ``num_stages``, and
   reports which ones fault (a fault kills the child's CUDA context);
2. tunes the jit function with ``tiletune.autotune(configs=[])`` and hints
   that put the faulting tile in the pool, in a child with
   ``TILETUNE_ISOLATE_FIRST_LAUNCH=1``, and checks that the process survives,
   that the faulting candidates are screened out and that the output equals
   the authors' config's output.

    python bench/fault_isolation_fla.py        # needs a GPU and .corpus/fla-core
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLA = ROOT / ".corpus" / "fla-core"
SHAPE = dict(B=1, T=2048, H=8, HV=8, K=128, V=128, BT=64, dtype="bfloat16")
# shapes the direct launches sweep (the fault's shape was not recorded): ragged T, head sizes, GQA, dtypes
SWEEP = [dict(SHAPE, T=t, K=kv[0], V=kv[1], H=hh[0], HV=hh[1], dtype=dt)
         for t in (2048, 1000) for kv in ((128, 128), (64, 64), (256, 256), (128, 256))
         for hh in ((8, 8), (4, 8)) for dt in ("bfloat16", "float32")]


def _inputs():
    import torch

    torch.manual_seed(0)
    B, T, H, HV, K, V, BT = (SHAPE[k] for k in ("B", "T", "H", "HV", "K", "V", "BT"))
    NT = (T + BT - 1) // BT
    dt = getattr(torch, SHAPE["dtype"])
    q = torch.randn(B, T, H, K, device="cuda", dtype=dt)
    k = torch.randn(B, T, H, K, device="cuda", dtype=dt)
    v = torch.randn(B, T, HV, V, device="cuda", dtype=dt)
    h = torch.randn(B, NT, HV, K, V, device="cuda", dtype=dt) * 0.05
    return q, k, v, h, NT


def _jit():
    sys.path.insert(0, str(FLA))
    from fla.ops.common import chunk_o

    fn = chunk_o.chunk_fwd_kernel_o
    while not hasattr(fn, "cache_key") and hasattr(fn, "fn"):
        fn = fn.fn  # fla's heuristics and its caching autotuner around the jit function
    return fn


def _args(q, k, v, h, o):
    B, T, H, HV, K, V, BT = (SHAPE[k] for k in ("B", "T", "H", "HV", "K", "V", "BT"))
    return dict(q=q, k=k, v=v, h=h, g=None, g_gamma=None, o=o, cu_seqlens=None, chunk_indices=None,
                scale=K ** -0.5, T=T, H=H, HV=HV, K=K, V=V, BT=BT, USE_G=False, USE_G_GAMMA=False,
                STATE_V_FIRST=False, IS_VARLEN=False)


def _grid(NT):
    import triton

    return lambda m: (triton.cdiv(SHAPE["V"], m["BV"]) * NT, SHAPE["B"] * SHAPE["HV"])


def direct(bk: int, bv: int, warps: int, stages: int) -> int:
    """Launch one config directly; exit 0 when it ran (the output is saved next to nothing: only survival)."""
    import torch

    q, k, v, h, NT = _inputs()
    o = torch.empty_like(v)
    _jit()[_grid(NT)](**_args(q, k, v, h, o), BK=bk, BV=bv, num_warps=warps, num_stages=stages)
    torch.cuda.synchronize()
    print(json.dumps({"ran": True}))
    return 0


def tuned() -> int:
    """configs=[] with the faulting tile in the pool; isolation comes from the environment."""
    import torch

    import tiletune

    q, k, v, h, NT = _inputs()
    want = torch.empty_like(v)
    _jit()[_grid(NT)](**_args(q, k, v, h, want), BK=64, BV=64, num_warps=4, num_stages=3)  # the authors' config
    torch.cuda.synchronize()
    o = torch.empty_like(v)
    kernel = tiletune.autotune(configs=[], key=["H", "HV", "K", "V", "BT"],
                               hints={"BK": [32, 64], "BV": [32, 64]})(_jit())
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kernel[_grid(NT)](**_args(q, k, v, h, o))
        torch.cuda.synchronize()
    seconds = time.perf_counter() - t0
    screened = [str(w.message) for w in caught if "killed the worker process" in str(w.message)]
    err = (o.float() - want.float()).norm().item() / max(want.float().norm().item(), 1e-30)
    print(json.dumps({"winner": str(kernel.best_config), "screened_out": screened, "seconds": round(seconds, 2),
                      "rel_err_vs_authors_config": err, "output_ok": err < 1e-2}))
    return 0


def _child(argv, env=None, shape=None):
    env = {**os.environ, **(env or {}), "FLA_BENCH_SHAPE": json.dumps(shape or SHAPE)}
    proc = subprocess.run([sys.executable, __file__, *argv], capture_output=True, text=True, timeout=280, env=env)
    last = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    faulted = "illegal memory access" in proc.stderr + proc.stdout
    return proc.returncode, (json.loads(last[-1]) if last else None), faulted, proc.stderr[-600:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--direct", nargs=4, type=int, metavar=("BK", "BV", "WARPS", "STAGES"))
    parser.add_argument("--tuned", action="store_true")
    args = parser.parse_args()
    SHAPE.update(json.loads(os.environ.get("FLA_BENCH_SHAPE", "{}")))
    if args.direct:
        return direct(*args.direct)
    if args.tuned:
        return tuned()
    from concurrent.futures import ThreadPoolExecutor

    rows = []
    jobs = [(shape, stages) for shape in SWEEP for stages in (2, 3)]
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda j: _child(["--direct", "64", "32", "4", str(j[1])], shape=j[0]), jobs))
    faulting = None
    for (shape, stages), (rc, _, faulted, tail) in zip(jobs, results):
        if rc != 0:
            rows.append(f"direct BK=64 BV=32 w4 s{stages} at {shape}: exit {rc}"
                        f"{', illegal memory access' if faulted else ''} {'' if faulted else tail[-200:]}")
            print(rows[-1], flush=True)
            faulting = faulting or (shape if faulted else None)
    print(f"direct launches of BK=64 BV=32 w4: {len(jobs)} over {len(SWEEP)} shapes, "
          f"{sum(1 for r in results if r[2])} faulted", flush=True)
    if faulting:
        SHAPE.update(faulting)
    print(f"tuning at {SHAPE}", flush=True)
    env = {"TILETUNE_ISOLATE_FIRST_LAUNCH": "1", "TILETUNE_ALWAYS_TUNE": "1"}
    rc, result, faulted, tail = _child(["--tuned"], env, SHAPE)
    rows.append(f"configs=[] with isolation: exit {rc}, {json.dumps(result)}")
    print(rows[-1], flush=True)
    if rc != 0:
        print(tail)
    env = {"TILETUNE_ALWAYS_TUNE": "1"}
    rc, result, faulted, tail = _child(["--tuned"], env, SHAPE)
    rows.append(f"configs=[] without isolation: exit {rc}{', died of the fault' if faulted else ''}, {json.dumps(result)}")
    print(rows[-1], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
