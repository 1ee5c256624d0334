"""What share of the live-tile estimate ptxas keeps in registers for kernels without ``tl.dot`` (no GPU).

The synthesis model's register estimate for a kernel without dots is the liveness scan's peak bytes
(``live_bytes``) scaled by :data:`tiletune.synthesis.constraints.nvidia.FUSED_REGISTER_SHARE`.  This bench
is where that share comes from: the reduction and elementwise kernels of the cold bench (fixtures, a
dev-corpus library kernel and a held-out kernel) are compiled for sm_90 over a spread of their tile domains
and 1-16 warps (``bench/register_oracle.py``'s worker: ``triton.compile`` + ``cuobjdump``), and ptxas'
registers per thread are set against the raw estimate (``live_bytes`` / threads / 4 B).  Configs whose raw
estimate is under :data:`MIN_ESTIMATE` registers are left out of the share (ptxas' floor of about 32
registers decides there, not the tiles), and so are configs that spill (ptxas' cap of 255 decides there).

    python bench/register_share.py                  # writes bench/results/register_share.{json,md}
    python bench/register_share.py --workers 2 --out /tmp/share
"""

from __future__ import annotations

import itertools
import math
import statistics
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
for _p in (ROOT, ROOT / "bench", ROOT / "tests"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import register_oracle  # noqa: E402

#: The kernels without dots (cold-bench pairs at their shapes).
PROBLEMS: List[Dict[str, Any]] = [
    {"kernel": "rows_log_softmax", "source": "holdout", "shape": {"M": 8192, "N": 6144}},
    {"kernel": "softmax", "source": "fixture", "shape": {"n_rows": 100, "n_cols": 3000}},
    {"kernel": "rms_norm", "source": "fixture", "shape": {"M": 100, "N": 3000}},
    {"kernel": "layer_norm", "source": "fixture", "shape": {"M": 1000, "N": 777}},
    {"kernel": "cross_entropy", "source": "fixture", "shape": {"n_rows": 500, "n_cols": 50257}},
    {"kernel": "sum_axis", "source": "fixture", "shape": {"M": 3000, "N": 77}},
    {"kernel": "l2norm_fwd", "source": "fla-core", "shape": {"T": 32768, "D": 128}},
    {"kernel": "transpose", "source": "fixture", "shape": {"M": 1000, "N": 33}},
]
WARPS = (1, 2, 4, 8, 16)
#: Largest tile compiled (elements) and most elements a thread may hold (bigger ones take minutes to compile).
MAX_TILE = 32768
MAX_PER_THREAD = 256
#: Configs compiled per kernel and model verdict (register_oracle's sampling).
PER_VERDICT = 40
#: Raw estimates below this many registers a thread are not counted in the share.
MIN_ESTIMATE = 40


def grid(spec, space) -> List[Dict[str, Any]]:
    """Up to 4 values of each tiling parameter's domain (evenly spread, tiles up to :data:`MAX_TILE`) by
    :data:`WARPS`, one stage."""
    axes = []
    for p in spec.tiling_params:
        if not space.has_var(p.name):
            continue
        vals = sorted(v for v in space.var(p.name).values if v <= MAX_TILE)
        if len(vals) > 4:
            vals = [vals[int(i * (len(vals) - 1) / 3)] for i in range(4)]
        axes.append((p.name, vals))
    out = []
    for combo in itertools.product(*[vals for _, vals in axes], WARPS):
        tile, warps = math.prod(combo[:-1]), combo[-1]
        if tile > MAX_TILE or tile // (warps * 32) > MAX_PER_THREAD:
            continue
        out.append({"kwargs": {name: combo[i] for i, (name, _) in enumerate(axes)}, "num_warps": warps,
                    "num_stages": 1})
    return out


def measure(workers: int) -> List[Dict[str, Any]]:
    """Every problem's configs compiled: kernel, config, raw estimate and ptxas' registers and spills."""
    rows = []
    for pair in PROBLEMS:
        side = register_oracle.model_side(pair, grid=grid, per_verdict=PER_VERDICT)
        jobs = [r for r in side["rows"] if r["compiled"]]
        for r, t in zip(jobs, register_oracle.compile_all([r["job"] for r in jobs], workers)):
            if not t.get("ok"):
                continue
            threads = r["num_warps"] * 32
            rows.append({"kernel": pair["kernel"], "shape": pair["shape"], "kwargs": r["kwargs"],
                         "num_warps": r["num_warps"], "estimate": r["footprint"]["live_bytes"] / (threads * 4),
                         "regs": t["regs"], "stack": t["stack"]})
    return rows


def summarise(rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    """The share (ptxas' registers over the raw estimate) over the counted configs, all and per kernel."""
    def stats(xs: List[float]) -> Dict[str, float]:
        q = statistics.quantiles(xs, n=10, method="inclusive") if len(xs) > 1 else xs * 9
        return {"n": len(xs), "median": round(statistics.median(xs), 3), "p10": round(q[0], 3),
                "p90": round(q[-1], 3)}
    counted = [r for r in rows if r["estimate"] >= MIN_ESTIMATE and r["stack"] == 0]
    per = {}
    for r in counted:
        per.setdefault(r["kernel"], []).append(r["regs"] / r["estimate"])
    return {"compiled": len(rows), "all": stats([r["regs"] / r["estimate"] for r in counted]),
            "per_kernel": {k: stats(v) for k, v in per.items()}}


def to_markdown(res: Dict[str, Any]) -> str:
    """The report."""
    s = res["summary"]
    lines = ["# ptxas' registers against the live-tile estimate, kernels without dots (bench/register_share.py)",
             "", f"Triton {res['triton']}, sm_90, compiled offline; {s['compiled']} configs compiled, "
             f"{s['all']['n']} counted (a raw estimate of {MIN_ESTIMATE} or more registers a thread, no spill).", "",
             f"- share (ptxas registers / raw estimate): median **{s['all']['median']}**, "
             f"10th-90th percentile {s['all']['p10']}-{s['all']['p90']}", "",
             "| kernel | counted | median | p10 | p90 |", "|---|---:|---:|---:|---:|"]
    for k, v in s["per_kernel"].items():
        lines.append(f"| {k} | {v['n']} | {v['median']} | {v['p10']} | {v['p90']} |")
    lines += ["", "| kernel | config | warps | raw estimate | ptxas regs | spill B |", "|---|---|---:|---:|---:|---:|"]
    for r in res["rows"]:
        cfg = " ".join(f"{k}={v}" for k, v in r["kwargs"].items())
        lines.append(f"| {r['kernel']} | {cfg} | {r['num_warps']} | {r['estimate']:.0f} | {r['regs']} | {r['stack']} |")
    return "\n".join(lines) + "\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command line: see the module docstring."""
    return register_oracle.compile_bench_main("register_share", __doc__, measure, summarise, to_markdown, argv,
                                              shown=1500)


if __name__ == "__main__":
    sys.exit(main())
