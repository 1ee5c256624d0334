"""What the agreement check costs a cold first tune: ``configs=[]`` with the check (the default) against
``verify=False``, each tune in its own fresh process with empty Triton and tiletune caches.

    python bench/agreement_cost.py --out bench/results            # on a GPU (about 4 minutes on one H100)
    python bench/agreement_cost.py --dry-run --out /tmp/agree     # two tiny pairs under the interpreter

Per pair and side: the first tune's wall time, the peak GPU memory the process allocated
(``torch.cuda.max_memory_allocated``; the check's snapshot and fingerprints are in it), the configs
measured and the probes the check added.  The two sides run alternately, ``--reps`` times each, in
both orders.  Writes ``agreement_cost.json`` and ``agreement_cost.md`` under ``--out``; prints the
table last.
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

#: (fixture, index into its BENCH_SHAPES) on the GPU; SHAPES under --dry-run.
PAIRS = [("matmul", 1), ("matmul", 2), ("softmax", 0), ("rms_norm", 1), ("layer_norm", 0), ("int8_gemv", 1),
         ("flash_attention", 0), ("sum_axis", 1), ("vector_add", 0), ("cross_entropy", 0)]
DRY_PAIRS = [("vector_add", 0), ("softmax", 0)]


def one(fixture: str, index: int, verify: str, dry: bool) -> dict:
    """Tune one pair once in this (fresh) process; the facts as a dict."""
    sys.path.insert(0, str(ROOT))
    import torch
    import tiletune
    import fixtures

    fx = fixtures.load(fixture)
    shape = (fx.SHAPES if dry else fx.BENCH_SHAPES)[index]
    device = "cpu" if dry else "cuda"
    args = fx.make_args(dict(shape), device=device)
    kwargs = dict(key=fx.KEY, restore_value=getattr(fx, "RESTORE_VALUE", None) or None,
                  reset_to_zero=getattr(fx, "RESET_TO_ZERO", None) or None)
    if verify == "off":
        kwargs["verify"] = False
    import triton

    tuned = tiletune.autotune(configs=[], **kwargs)(triton.jit(fx.KERNEL.fn))  # a fresh jit, as a user's
    if not dry:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.max_memory_allocated()
    t0 = time.perf_counter()
    fx.launch(tuned, args)
    if not dry:
        torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    facts = dict(getattr(tuned, "search_facts", {}) or {})
    peak = (torch.cuda.max_memory_allocated() - base) if not dry else 0
    return {"fixture": fixture, "shape": shape, "verify": verify, "first_tune_s": wall, "peak_extra_bytes": peak,
            "measured": facts.get("measured"), "probes": facts.get("check_probes"), "check": facts.get("check"),
            "winner": str(tuned.best_config)}


def run_pair(fixture: str, index: int, verify: str, dry: bool) -> dict:
    """``one`` in a fresh interpreter with empty cache directories."""
    with tempfile.TemporaryDirectory(prefix="agree-") as tmp:
        env = dict(os.environ, TRITON_CACHE_DIR=str(Path(tmp) / "triton"), TILETUNE_CACHE_DIR=str(Path(tmp) / "tt"))
        if dry:
            env["TRITON_INTERPRET"] = "1"
        proc = subprocess.run([sys.executable, __file__, "--one", fixture, str(index), verify] + (["--dry-run"] if dry else []),
                              capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    if proc.returncode != 0:
        return {"fixture": fixture, "verify": verify, "error": proc.stderr[-1500:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def summarize(rows: list) -> list:
    """Per pair: median first tune of each side, their ratio, peak memory."""
    out = []
    keys = sorted({(r["fixture"], json.dumps(r.get("shape"))) for r in rows if "error" not in r})
    for fixture, shape in keys:
        mine = [r for r in rows if r["fixture"] == fixture and json.dumps(r.get("shape")) == shape and "error" not in r]
        on = [r["first_tune_s"] for r in mine if r["verify"] == "on"]
        off = [r["first_tune_s"] for r in mine if r["verify"] == "off"]
        if not on or not off:
            continue
        mem_on = max(r["peak_extra_bytes"] for r in mine if r["verify"] == "on")
        mem_off = max(r["peak_extra_bytes"] for r in mine if r["verify"] == "off")
        out.append({"fixture": fixture, "shape": json.loads(shape), "check_s": statistics.median(on),
                    "no_check_s": statistics.median(off), "ratio": statistics.median(on) / statistics.median(off),
                    "peak_check_mb": mem_on / 2 ** 20, "peak_no_check_mb": mem_off / 2 ** 20,
                    "probes": max((r.get("probes") or 0) for r in mine if r["verify"] == "on")})
    return out


def markdown(summary: list, device: str) -> str:
    lines = [f"# Agreement check: what it costs a cold first tune ({device})", "",
             "`python bench/agreement_cost.py --out bench/results`: each first tune in its own fresh process with "
             "empty Triton and tiletune caches; median of the runs; the sides alternate in both orders.", "",
             "| fixture | shape | with check (s) | verify=False (s) | ratio | peak MiB with / without | probes |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for s in summary:
        lines.append(f"| {s['fixture']} | {s['shape']} | {s['check_s']:.2f} | {s['no_check_s']:.2f} | "
                     f"{s['ratio']:.3f} | {s['peak_check_mb']:.1f} / {s['peak_no_check_mb']:.1f} | {s['probes']} |")
    if summary:
        ratios = [s["ratio"] for s in summary]
        geo = 1.0
        for r in ratios:
            geo *= r
        geo **= 1.0 / len(ratios)
        lines += ["", f"Geomean ratio {geo:.3f}, median {statistics.median(ratios):.3f}, worst {max(ratios):.3f} "
                      f"over {len(ratios)} pairs (goal: the check costs at most 10% of a cold first tune)."]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--pairs", default="", help="fixture:index,... (default: the built-in list)")
    ap.add_argument("--one", nargs=3, metavar=("FIXTURE", "INDEX", "VERIFY"))
    a = ap.parse_args()
    if a.one:
        print(json.dumps(one(a.one[0], int(a.one[1]), a.one[2], a.dry_run)))
        return
    pairs = DRY_PAIRS if a.dry_run else PAIRS
    if a.pairs:
        pairs = [(p.split(":")[0], int(p.split(":")[1])) for p in a.pairs.split(",")]
    rows = []
    for rep in range(a.reps):
        for fixture, index in pairs:
            order = ("on", "off") if rep % 2 == 0 else ("off", "on")
            for verify in order:
                row = run_pair(fixture, index, verify, a.dry_run)
                rows.append(row)
                a.out.mkdir(parents=True, exist_ok=True)  # partial results survive a killed run
                (a.out / "agreement_cost.rows.json").write_text(json.dumps(rows, indent=1, default=str))
                status = row.get("error", "")[:200] or f"{row['first_tune_s']:.2f}s measured={row['measured']}"
                print(f"[{rep}] {fixture}:{index} verify={verify}: {status}", flush=True)
    device = "CPU interpreter (dry run)" if a.dry_run else _device_name()
    summary = summarize(rows)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "agreement_cost.json").write_text(json.dumps({"device": device, "rows": rows, "summary": summary},
                                                          indent=1, default=str))
    md = markdown(summary, device)
    (a.out / "agreement_cost.md").write_text(md)
    print(md)


def _device_name() -> str:
    try:
        import torch

        return torch.cuda.get_device_name()
    except Exception:  # noqa: BLE001
        return "unknown device"


if __name__ == "__main__":
    main()
