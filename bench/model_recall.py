"""Where the cost model ranks the configs an H100 measured fastest (no GPU needed).

For every (fixture, shape) pair of a ``bench/gpu_bench.py`` result, the
exhaustive screening's fastest configs (measured on the GPU, recorded in the
JSON) are looked up in the model's full ranking of the feasible space at that
shape (``tiletune.synthesis.synthesize`` on the ``h100`` target, every
feasible point in cost order) and in the pool the default search starts from
(the top 16).  A winner the model ranks low is one the search must walk to;
one outside the synthesized space (a preference or a domain left it out) only
the descent can reach, and one the hard limits reject nothing can.  Cost-model changes can be
judged here, offline, before a GPU run confirms them.

    python bench/model_recall.py                       # gpu_bench_search_default.json + gpu_bench.json (48 pairs)
    python bench/model_recall.py --from A.json B.json --out bench/results
    python bench/model_recall.py --before OLD.json     # adds before/after tables (recall, the cold pairs' ranks)

The cold bench's dev pairs (``--cold``, default ``bench/results/first_tune_cold.json``; held-out kernels left
out) get a table of the model's rank of their best known config and of the config the run picked.

Writes ``model_recall.json`` and ``model_recall.md`` under ``--out``.

Recall: a pair is a top-k hit when one of the model's ``k`` best-ranked
configs (exact, ``num_stages`` included) is among the measured leaders within
:data:`NEAR` of the measured best (the screening's recorded top 10).  The
pairs are split in two halves by a hash of (fixture, shape) (:func:`half_of`):
a constant of the cost model is chosen on the ``fit`` half and judged on the
``held-out`` half, never fitted to the pairs it is judged on.  ``--before
OLD.json`` (this script's JSON from an earlier model) adds a before/after table.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import zlib
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
for _p in (ROOT, ROOT / "bench"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

POOL = 16  # the default search's synthesized pool (search.SEARCH_MODES["default"].synth_top_k)
NEAR = 0.05  # a measured leader within 5% of the measured best counts as a hit
RECALL_AT = (1, 8)  # top-k recall is reported at these k (8: the default search's largest first batch)
HALVES = ("fit", "held-out")


def half_of(fixture: str, shape: str) -> str:
    """Which half a pair belongs to: ``fit`` (constants may be chosen on it) or ``held-out`` (judged only),
    by the parity of a CRC-32 of ``fixture/shape`` (stable across runs and machines)."""
    return HALVES[zlib.crc32(f"{fixture}/{shape}".encode()) & 1]


def _shown(path: Path) -> str:
    """``path`` relative to the repository when inside it (results files must not name this machine)."""
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def _key(kwargs: Dict[str, Any], warps: Any, stages: Any) -> Tuple:
    return tuple(sorted(kwargs.items())), warps, stages


class _GridCatcher:
    """Stands in for the kernel in a fixture's ``launch``: keeps the grid it is indexed with, launches nothing."""

    def __init__(self) -> None:
        self.grid: Any = None

    def __getitem__(self, grid: Any):
        self.grid = grid
        return lambda *a, **k: None


def launch_grid_shapes(fx: Any, args: Dict[str, Any], tiling: List[str]) -> Dict[str, int]:
    """The ``grid[i]`` shapes the runtime reads off the fixture's launch grid (runtime/grid_axes.py)."""
    from tiletune.runtime.grid_axes import grid_axis_shapes

    catcher = _GridCatcher()
    try:
        fx.launch(catcher, args)
    except Exception:  # a launch that needs more than the meta tensors: the model keeps its assumption
        return {}
    return grid_axis_shapes(catcher.grid, args, tiling)


def model_ranking(name: str, shape: Dict[str, int], target: str, problem: Any = None) -> Tuple[List[Tuple], List[Tuple], Any]:
    """The model's full cost order and its top-``POOL`` pool at ``shape`` (lists of (kwargs, warps, stages)),
    and ``hard(kwargs, warps, stages, proposed=False)``: the hard limits a config breaks (``proposed=True``: as
    a config the search proposes, the descent's feasibility check).
    ``problem``: a fixture-like object (bench/cold_pairs.py's library kernels) instead of the fixture ``name``."""
    import fixtures
    from tiletune.analysis import analyze_kernel
    from tiletune.runtime.binding import synthesis_shapes, tensor_dtypes
    from tiletune.runtime.search import SEARCH_MODES, first_batch, first_batch_size
    from tiletune.synthesis import check_config, required_shapes, synthesize

    fx = problem if problem is not None else fixtures.load(name)
    spec = analyze_kernel(fx.KERNEL)
    args = fx.make_args(shape, device="meta")
    from tiletune.synthesis.alignment import alignment_shapes

    shapes = {**alignment_shapes(spec, args), **synthesis_shapes(spec.name, required_shapes(spec), args)}
    jit = fx.KERNEL
    while not hasattr(jit, "arg_names") and hasattr(jit, "fn"):
        jit = jit.fn  # triton.heuristics around the JITFunction
    dtypes = tensor_dtypes(list(jit.arg_names), args)
    fixed = {p.name: args[p.name] for p in spec.tiling_params if p.name in args} or None
    shapes.update(launch_grid_shapes(fx, args, [p.name for p in spec.tiling_params]))  # as the runtime does
    full = synthesize(spec, shapes, dtypes, target, fixed=fixed, top_k=10**6)
    pool = synthesize(spec, shapes, dtypes, target, fixed=fixed, top_k=POOL)
    as_keys = lambda res: [_key(c.kwargs, c.num_warps, c.num_stages) for c in res.candidates]  # noqa: E731
    # the first batch as the default search picks it from the pool (runtime/measure.py)
    policy = SEARCH_MODES["default"]
    n_first = first_batch_size([c.cost for c in pool.candidates], policy)
    batch = first_batch([(tuple(sorted(c.kwargs.items())), c.num_warps) for c in pool.candidates], n_first,
                        costs=[c.cost for c in pool.candidates], stages=[c.num_stages for c in pool.candidates])
    first = [as_keys(pool)[i] for i in batch]

    def hard(kwargs: Dict[str, Any], warps: Any, stages: Any, proposed: bool = False) -> List[str]:
        return check_config(spec, {**(fixed or {}), **kwargs}, warps, stages, shapes, dtypes, target,
                            proposed=proposed)

    return as_keys(full), as_keys(pool), first, hard


def _position(order: Sequence[Tuple], kwargs: Dict[str, Any], warps: Any, stages: Any) -> Tuple[Optional[int], str]:
    """1-based rank of the config in ``order``: exact, else its tiling (kwargs and warps) at another stage count."""
    exact = _key(kwargs, warps, stages)
    for i, k in enumerate(order):
        if k == exact:
            return i + 1, "exact"
    for i, k in enumerate(order):
        if k[0] == exact[0] and k[1] == warps:
            return i + 1, "tiling"
    return None, "outside the synthesized space"


def recall(results: Sequence[Path], target: str) -> Dict[str, Any]:
    """Per pair: the model's rank of each measured leader, and whether the pool holds the best tiling."""
    rows: List[Dict[str, Any]] = []
    seen = set()
    for path in results:
        data = json.loads(Path(path).read_text())
        for fixture, pairs in (data.get("tune") or {}).items():
            for skey, rec in pairs.items():
                top = ((rec.get("exhaustive") or {}).get("top")) or []
                if not top or (fixture, skey) in seen:
                    continue
                seen.add((fixture, skey))
                order, pool, first, hard = model_ranking(fixture, rec["shape"], target)
                measured = sorted(top, key=lambda t: t["screen_ms"])[:5]
                leaders = []
                for t in measured:
                    c = t["config"]
                    rank, how = _position(order, c["kwargs"], c["num_warps"], c["num_stages"])
                    if rank is None:  # preferences or domains left it out; do the hard limits reject it too?
                        broken = hard(c["kwargs"], c["num_warps"], c["num_stages"])
                        how = ("rejected: " + "; ".join(broken)) if broken else "outside the synthesized space"
                    in_pool, _ = _position(pool, c["kwargs"], c["num_warps"], c["num_stages"])
                    in_first, _ = _position(first, c["kwargs"], c["num_warps"], c["num_stages"])
                    leaders.append({"label": t["label"], "screen_ms": t["screen_ms"], "model_rank": rank,
                                    "match": how, "in_pool": in_pool is not None,
                                    "in_first_batch": in_first is not None})
                best_ms = min(t["screen_ms"] for t in top)
                near = {_key(t["config"]["kwargs"], t["config"]["num_warps"], t["config"]["num_stages"])
                        for t in top if t["screen_ms"] <= best_ms * (1.0 + NEAR)}
                hits = {str(k): any(key in near for key in order[:k]) for k in RECALL_AT}
                rows.append({"fixture": fixture, "shape": skey, "half": half_of(fixture, skey),
                             "feasible": len(order),
                             "tt_over_best": (rec.get("ratios") or {}).get("tiletune_over_exhaustive"),
                             "model_pick": _label(order[0]) if order else None, "hits": hits,
                             "leaders": leaders})
    best_ranks = [r["leaders"][0]["model_rank"] for r in rows]
    known = [b for b in best_ranks if b is not None]
    return {
        "target": target,
        "sources": [_shown(p) for p in results],
        "pairs": rows,
        "summary": {
            "pairs": len(rows),
            "best_in_pool": sum(1 for r in rows if r["leaders"][0]["in_pool"]),
            "any_top5_in_pool": sum(1 for r in rows if any(x["in_pool"] for x in r["leaders"])),
            "any_top5_in_first_batch": sum(1 for r in rows if any(x["in_first_batch"] for x in r["leaders"])),
            "best_outside_space": sum(1 for b in best_ranks if b is None),
            "best_rejected_by_hard_limits": sum(1 for r in rows if r["leaders"][0]["match"].startswith("rejected")),
            "median_best_rank": statistics.median(known) if known else None,
            "geomean_best_rank": _geomean(known),
            "geomean_first_top5_rank": _geomean([min((x["model_rank"] for x in r["leaders"] if x["model_rank"]),
                                                     default=None) for r in rows]),
            "recall": {**{half: _recall([r for r in rows if r["half"] == half]) for half in HALVES},
                       "all": _recall(rows)},
        },
    }


def parse_label(label: str) -> Tuple[Dict[str, int], int, int]:
    """``"BLOCK_M=32 BLOCK_N=64 w8 s5"`` (the cold bench's config labels) as (kwargs, num_warps, num_stages)."""
    kwargs: Dict[str, int] = {}
    warps = stages = None
    for part in label.split():
        if "=" in part:
            k, v = part.split("=", 1)
            kwargs[k] = int(v)
        elif part[:1] == "w" and part[1:].isdigit():
            warps = int(part[1:])
        elif part[:1] == "s" and part[1:].isdigit():
            stages = int(part[1:])
        else:
            raise ValueError(f"model_recall: cannot read config label {label!r} (part {part!r}); "
                             "expected NAME=VALUE ... wN sN")
    return kwargs, warps, stages


def cold_ranks(path: Path, target: str) -> List[Dict[str, Any]]:
    """For each dev pair of a ``bench/first_tune_cold.py`` result (held-out kernels left out: the model is
    not developed on them): the model's rank of the best known config and of the config tiletune picked, and
    the configs tiletune timed outside the space synthesis enumerates (the descent's moves reach them), with
    how many of those the search's feasibility check (``check_config(proposed=True)``) now rejects."""
    import cold_pairs

    data = json.loads(Path(path).read_text())
    out = []
    for row in data.get("rows") or []:
        if cold_pairs.is_holdout(row) or not (row.get("reference") or {}).get("best"):
            continue
        problem = cold_pairs.load(row)
        order, pool, first, hard = model_ranking(row["kernel"], row["shape"], target, problem=problem)
        entry = {"kernel": row["kernel"], "shape": ",".join(f"{k}={v}" for k, v in row["shape"].items()),
                 "tt_over_best": row.get("tiletune_over_best"), "best": row["reference"]["best"],
                 "model_pick": _label(order[0]) if order else None}
        for what, label in (("best", row["reference"]["best"]), ("measured_pick", row.get("tiletune_pick"))):
            if not label:
                continue
            kwargs, warps, stages = parse_label(label)
            rank, how = _position(order, kwargs, warps, stages)
            entry[f"{what}_rank"] = rank
            entry[f"{what}_match"] = how
            entry[f"{what}_in_first_batch"] = _position(first, kwargs, warps, stages)[0] is not None
        space = set(order)
        timed = [parse_label(label) for label, _ in (row.get("timings_ms") or {}).get("tiletune") or []]
        outside = [t for t in timed if _key(*t) not in space]
        entry["timed"] = len(timed)
        entry["timed_outside"] = [_label(_key(*t)) for t in outside]
        entry["timed_outside_rejected"] = sum(1 for t in outside if hard(*t, proposed=True))
        out.append(entry)
    return out


def _recall(rows: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    """Top-k hits over ``rows`` and the geomean model rank of the measured best."""
    out: Dict[str, Any] = {"pairs": len(rows)}
    for k in RECALL_AT:
        out[f"top{k}"] = sum(1 for r in rows if r["hits"][str(k)])
    out["geomean_best_rank"] = _geomean([r["leaders"][0]["model_rank"] for r in rows])
    return out


def _rank_cell(entry: Dict[str, Any], what: str) -> str:
    rank = entry.get(f"{what}_rank")
    how = entry.get(f"{what}_match", "-")
    return how if rank is None else (str(rank) if how == "exact" else f"{rank} ({how})")


def _outside_cell(entry: Dict[str, Any]) -> str:
    outside = entry.get("timed_outside") or []
    if "timed" not in entry:
        return "-"
    return f"{len(outside)} of {entry['timed']}" + (f" ({entry['timed_outside_rejected']})" if outside else "")


def _label(key: Tuple) -> str:
    kwargs, warps, stages = key
    return " ".join(f"{k}={v}" for k, v in kwargs) + f" w{warps} s{stages}"


def _geomean(values: Sequence[Optional[int]]) -> Optional[float]:
    known = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in known) / len(known)) if known else None


def to_markdown(res: Dict[str, Any]) -> str:
    """The report as a markdown table, one row per pair."""
    s = res["summary"]
    lines = [
        "# Where the cost model ranks the measured winners (bench/model_recall.py)",
        "",
        f"Target {res['target']}; measured leaders from {', '.join(res['sources'])} (the exhaustive screening's "
        "fastest configs on an H100). Model rank: position in the model's full cost order of the feasible space "
        f"(1 = its pick); pool: the top {POOL} the default search starts from. 'tiling' = the same tile and warps "
        "at another num_stages.",
        "",
        f"- pairs: {s['pairs']}; the measured best in the pool: {s['best_in_pool']}; any of the measured top 5 in "
        f"the pool: {s['any_top5_in_pool']}, in the first batch: {s['any_top5_in_first_batch']} (a tiling of it "
        "at another num_stages counts); the measured best outside the synthesized space: "
        f"{s['best_outside_space']} (of which rejected by the hard limits the descent checks: "
        f"{s['best_rejected_by_hard_limits']})",
        f"- model rank of the measured best: median {s['median_best_rank']}, geomean "
        f"{s['geomean_best_rank']:.1f}; of the best-ranked of the measured top 5: geomean "
        f"{s['geomean_first_top5_rank']:.1f}" if s["geomean_best_rank"] else "- model rank of the measured best: -",
        "",
        f"Top-k recall (one of the model's k best within {NEAR:.0%} of the measured best), by half:",
        "",
        "| half | pairs | " + " | ".join(f"top-{k}" for k in RECALL_AT) + " | geomean rank of best |",
        "|---|---:|" + "---:|" * len(RECALL_AT) + "---:|",
    ]
    for half, r in s["recall"].items():
        g = "-" if r["geomean_best_rank"] is None else f"{r['geomean_best_rank']:.1f}"
        lines.append(f"| {half} | {r['pairs']} | " + " | ".join(str(r[f"top{k}"]) for k in RECALL_AT) + f" | {g} |")
    if res.get("before"):
        lines += ["", "Before and after (the same pairs; before: " + res["before"]["source"] + "):", "",
                  "| half | " + " | ".join(f"top-{k} before | top-{k} after" for k in RECALL_AT)
                  + " | geomean rank before | after |",
                  "|---|" + "---:|---:|" * len(RECALL_AT) + "---:|---:|"]
        for half, r in s["recall"].items():
            b = res["before"]["recall"].get(half, {})
            cells = " | ".join(f"{b.get(f'top{k}', '-')} | {r[f'top{k}']}" for k in RECALL_AT)
            gb, ga = b.get("geomean_best_rank"), r["geomean_best_rank"]
            lines.append(f"| {half} | {cells} | {'-' if gb is None else f'{gb:.1f}'} | "
                         f"{'-' if ga is None else f'{ga:.1f}'} |")
    lines += [
        "",
        "| fixture | shape | half | feasible | measured best | model rank | model pick | in pool | best of top 5 in pool "
        "| tiletune / best |",
        "|---|---|---|---:|---|---:|---|---|---|---:|",
    ]
    for r in res["pairs"]:
        b = r["leaders"][0]
        rank = b["match"] if b["model_rank"] is None else f"{b['model_rank']} ({b['match']})"
        pooled = [x["label"] for x in r["leaders"] if x["in_pool"]]
        ratio = "-" if r["tt_over_best"] is None else f"{r['tt_over_best']:.3f}"
        lines.append(f"| {r['fixture']} | {r['shape']} | {r['half']} | {r['feasible']} | {b['label']} | {rank} | "
                     f"{r['model_pick']} | "
                     f"{'yes' if b['in_pool'] else 'no'} | {pooled[0] if pooled else '-'} | {ratio} |")
    if res.get("cold"):
        lines += ["", f"The cold bench's dev pairs ({res['cold']['source']}): the model's rank of the best known "
                  "config (exhaustive screening re-timed) and of the config the measured run picked"
                  + (" (before: " + res["cold"]["before_source"] + ")" if res["cold"].get("before_source") else "")
                  + ":", "",
                  "| kernel | shape | best known | rank of best | before | in first batch | model pick "
                  "| rank of the run's pick | tiletune / best (run) | timed outside the space (rejected now) |",
                  "|---|---|---|---:|---:|---|---|---:|---:|---|"]
        before = {(b["kernel"], b["shape"]): b for b in res["cold"].get("before") or []}
        for c in res["cold"]["pairs"]:
            b = before.get((c["kernel"], c["shape"]), {})
            ratio = "-" if c["tt_over_best"] is None else f"{c['tt_over_best']:.3f}"
            lines.append(f"| {c['kernel']} | {c['shape']} | {c['best']} | {_rank_cell(c, 'best')} | "
                         f"{_rank_cell(b, 'best') if b else '-'} | {'yes' if c.get('best_in_first_batch') else 'no'} | "
                         f"{c['model_pick']} | {_rank_cell(c, 'measured_pick')} | {ratio} | {_outside_cell(c)} |")
        timed = sum(c.get("timed", 0) for c in res["cold"]["pairs"])
        outside = sum(len(c.get("timed_outside", [])) for c in res["cold"]["pairs"])
        rejected = sum(c.get("timed_outside_rejected", 0) for c in res["cold"]["pairs"])
        lines += ["", f"Timed by tiletune outside the space synthesis enumerates: {outside} of {timed} configs; the "
                  f"search's feasibility check (`check_config(proposed=True)`) now rejects {rejected} of them."]
    return "\n".join(lines) + "\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command line: see the module docstring."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--from", dest="sources", nargs="+", type=Path,
                    default=[ROOT / "bench" / "results" / "gpu_bench_search_default.json",
                             ROOT / "bench" / "results" / "gpu_bench.json"],
                    help="gpu_bench.py result JSON files (the first holding a pair is used)")
    ap.add_argument("--target", default="h100")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    ap.add_argument("--before", type=Path, default=None,
                    help="this script's JSON from an earlier cost model: adds a before/after recall table")
    ap.add_argument("--cold", type=Path, default=ROOT / "bench" / "results" / "first_tune_cold.json",
                    help="a bench/first_tune_cold.py result: the model's rank of each dev pair's best known config "
                         "('' to leave out)")
    opts = ap.parse_args(argv)
    res = recall(opts.sources, opts.target)
    if str(opts.cold) not in ("", "."):
        res["cold"] = {"source": _shown(opts.cold), "pairs": cold_ranks(opts.cold, opts.target)}
    if opts.before is not None:
        old = json.loads(opts.before.read_text())
        if "recall" not in old.get("summary", {}):
            raise SystemExit(f"model_recall: {opts.before} has no summary.recall (written by an older "
                             "model_recall.py); run this script on the earlier model to make it")
        res["before"] = {"source": _shown(opts.before), "recall": old["summary"]["recall"]}
        if res.get("cold") and old.get("cold"):
            res["cold"]["before"] = old["cold"]["pairs"]
            res["cold"]["before_source"] = _shown(opts.before)
    opts.out.mkdir(parents=True, exist_ok=True)
    (opts.out / "model_recall.json").write_text(json.dumps(res, indent=1) + "\n")
    md = to_markdown(res)
    (opts.out / "model_recall.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
