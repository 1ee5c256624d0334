"""Does ``num_stages`` change the machine code? Each kernel compiled for sm_90 at stages 1-4 (no GPU).

Triton is the oracle: a few tilings of every kernel are compiled offline (``triton.compile`` for
``GPUTarget("cuda", 90, 32)``, ``bench/register_oracle.py``'s worker) at ``num_stages`` 1, 2, 3 and 4, and the
cubins are compared (``gpu_bench_lib.binary_digest``).  Where every stage count gives the same cubin,
``num_stages`` is moot for that tiling: the binaries are one, and a tuner that
compiles or times more than one of them measures noise.

The synthesis model's rule (:func:`tiletune.synthesis.families.nvidia.stages_matter`) is checked against it:
a kernel the rule calls stage-free must compile to one cubin per tiling; a kernel it keeps stages for should
show a difference somewhere (a dot loop Triton pipelines).

    python bench/stage_identity.py                  # writes bench/results/stage_identity.{json,md}
    python bench/stage_identity.py --workers 2 --out /tmp/stages
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
for _p in (ROOT, ROOT / "bench", ROOT / "tests"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import register_oracle  # noqa: E402

STAGES = (1, 2, 3, 4)
#: Tilings compiled per kernel, each at every stage count ...
TILINGS = 3
#: ... spread over the model's first RANKED tilings (the far end of a ranking holds tiles of thousands of elements
#: a thread, which take minutes to compile and no tuner would pick).
RANKED = 24

#: Kernels without tl.dot (fixtures at a bench shape, dev-corpus and held-out kernels), and kernels with dots.
PROBLEMS: List[Dict[str, Any]] = [
    {"kernel": "layer_norm", "source": "fixture", "shape": {"M": 1000, "N": 777}},
    {"kernel": "layer_norm", "source": "fixture", "shape": {"M": 4096, "N": 4096}},
    {"kernel": "rms_norm", "source": "fixture", "shape": {"M": 100, "N": 3000}},
    {"kernel": "softmax", "source": "fixture", "shape": {"n_rows": 100, "n_cols": 3000}},
    {"kernel": "cross_entropy", "source": "fixture", "shape": {"n_rows": 500, "n_cols": 50257}},
    {"kernel": "sum_axis", "source": "fixture", "shape": {"M": 3000, "N": 77}},
    {"kernel": "int8_gemv", "source": "fixture", "shape": {"N": 300, "K": 4096}},
    {"kernel": "transpose", "source": "fixture", "shape": {"M": 1000, "N": 33}},
    {"kernel": "vector_add", "source": "fixture", "shape": {"n_elements": 100001}},
    {"kernel": "l2norm_fwd", "source": "fla-core", "shape": {"T": 32768, "D": 128}},
    {"kernel": "rows_log_softmax", "source": "holdout", "shape": {"M": 8192, "N": 6144}},
    {"kernel": "matmul", "source": "fixture", "shape": {"M": 512, "N": 4096, "K": 11008}},
    {"kernel": "flash_attention", "source": "fixture",
     "shape": {"Z": 1, "H": 8, "N_CTX": 1000, "HEAD_DIM": 64, "CAUSAL": 0}},
    {"kernel": "scaled_int8_mm", "source": "torchao", "shape": {"M": 128, "N": 4096, "K": 4096}},
]


def measure(workers: int) -> List[Dict[str, Any]]:
    """Every problem's tilings compiled at every stage count: one row per tiling with its cubins' digests."""
    import cold_pairs
    from model_recall import model_ranking
    from tiletune.analysis import analyze_kernel
    from tiletune.synthesis.families.nvidia import stages_matter

    rows = []
    for pair in PROBLEMS:
        problem = cold_pairs.load(pair)
        full, _pool, _first, _hard = model_ranking(pair["kernel"], pair["shape"], register_oracle.TARGET, problem)
        tilings: List[Any] = []
        for kwargs, warps, _stages in full:
            t = (kwargs, warps)
            if t not in tilings:
                tilings.append(t)
        tilings = tilings[:RANKED]
        step = max(1, len(tilings) // TILINGS)
        picked = tilings[::step][:TILINGS]
        configs = [{"kwargs": dict(kw), "num_warps": w, "num_stages": s} for kw, w in picked for s in STAGES]
        side = register_oracle.model_side(pair, grid=lambda spec, space, c=configs: c, per_verdict=10 ** 6)
        jobs = [r for r in side["rows"]]
        got = register_oracle.compile_all([r["job"] for r in jobs], workers)
        expected_free = not stages_matter(analyze_kernel(problem.KERNEL))
        by_tiling: Dict[str, Dict[str, Any]] = {}
        for r, t in zip(jobs, got):
            label = " ".join(f"{k}={v}" for k, v in r["kwargs"].items()) + f" w{r['num_warps']}"
            entry = by_tiling.setdefault(label, {"kernel": pair["kernel"], "source": pair["source"],
                                                 "shape": pair["shape"], "tiling": label,
                                                 "model_stage_free": expected_free, "digests": {}})
            entry["digests"][str(r["num_stages"])] = t.get("binary_digest") if t.get("ok") else None
        for entry in by_tiling.values():
            digests = [d for d in entry["digests"].values() if d]
            entry["distinct"] = len(set(digests))
            entry["compiled"] = len(digests)
            rows.append(entry)
    return rows


def summarise(rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Per kernel: tilings whose stages all compiled to one cubin; the rule's agreement with that."""
    per: Dict[str, Dict[str, Any]] = {}
    for r in rows:
        k = per.setdefault(f"{r['kernel']} {json.dumps(r['shape'])}",
                           {"tilings": 0, "one_binary": 0, "model_stage_free": r["model_stage_free"]})
        k["tilings"] += 1
        k["one_binary"] += int(r["distinct"] == 1 and r["compiled"] == len(STAGES))
    wrong = [name for name, k in per.items() if k["model_stage_free"] and k["one_binary"] < k["tilings"]]
    return {"kernels": per, "rule_wrong": wrong,
            "stage_free_kernels": sum(1 for k in per.values() if k["one_binary"] == k["tilings"])}


def to_markdown(res: Dict[str, Any]) -> str:
    """The report."""
    s = res["summary"]
    lines = ["# Does num_stages change the machine code? (bench/stage_identity.py)", "",
             f"Triton {res['triton']}, sm_{res['arch']}, compiled offline at num_stages {', '.join(map(str, STAGES))}; "
             "cubins compared.", "",
             f"- kernels whose every tiling compiled to one cubin at all stage counts: {s['stage_free_kernels']} "
             f"of {len(s['kernels'])}",
             f"- kernels the model calls stage-free that are not: {', '.join(s['rule_wrong']) or 'none'}", "",
             "| kernel | shape | tilings | one binary | model: stage-free |", "|---|---|---:|---:|---|"]
    for name, k in s["kernels"].items():
        kernel, shape = name.split(" ", 1)
        lines.append(f"| {kernel} | {shape} | {k['tilings']} | {k['one_binary']} | "
                     f"{'yes' if k['model_stage_free'] else 'no'} |")
    lines += ["", "| kernel | tiling | distinct cubins over stages 1-4 |", "|---|---|---:|"]
    for r in res["rows"]:
        lines.append(f"| {r['kernel']} | {r['tiling']} | {r['distinct']} |")
    return "\n".join(lines) + "\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command line: see the module docstring."""
    return register_oracle.compile_bench_main("stage_identity", __doc__, measure, summarise, to_markdown, argv,
                                              shown=None)


if __name__ == "__main__":
    sys.exit(main())
