"""The Ascend labelled set: does tiletune accept what runs and reject what fails?

Reads ``tests/data/ascend_truth.json`` (configs a public source reports as
running or failing on Ascend 910B, each with its citation) and adds the
launch-time block choices of liger-kernel 0.8.5's ``_ascend`` backend
recorded in ``tests/data/ascend_anchor_configs.json`` (label ``runs``).  For
each entry it runs :func:`tiletune.synthesis.check_config` and reports
accepted / rejected with the reasons.  Goal: 0 ``runs`` entries rejected,
every ``fails`` entry rejected.

With ``--flaggems DIR`` (a checkout of FlagGems, e.g. ``git clone
https://github.com/flagos-ai/FlagGems``) it also checks every config of
FlagGems' Ascend autotune lists (``src/flag_gems/runtime/backend/_ascend/
tune_configs.yaml``; label ``shipped``: the library ships them for Ascend)
against the kernels of that backend that take ``configs=runtime.get_tuned_config(...)``,
in fp16 and in fp32, with no runtime sizes (only what the config decides is checked).

Writes ``bench/results/ascend_truth.{json,md}``.  Needs the dev corpus
(``.corpus``) for the liger entries; they are skipped without it.

    python bench/ascend_truth.py [--out bench/results] [--flaggems DIR] [--vllm-ascend DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.corpus import library_root  # noqa: E402
from tiletune.analysis import analyze_file  # noqa: E402
from tiletune.analysis.expr import const, esize_symbol  # noqa: E402
from tiletune.analysis.model import DTYPE_BYTES  # noqa: E402
from tiletune.synthesis import check_config  # noqa: E402
from tiletune.synthesis.constraints.ascend import RETRY_ENV, multibuffer_retry, sub_blocks  # noqa: E402
from tiletune.synthesis.constraints.ascend_ub import ub_bytes, ub_certain, ub_floor  # noqa: E402
from tiletune.synthesis.targets import get_target  # noqa: E402

TRUTH = ROOT / "tests" / "data" / "ascend_truth.json"
ANCHOR = ROOT / "tests" / "data" / "ascend_anchor_configs.json"
LIGER_SOURCE = "liger-kernel 0.8.5 ops/backends/_ascend launch-time block choice (bench/ascend_anchor.py liger_rows)"


VLLM_PREFIX = "vllm-ascend:"


def _path(file: str) -> Optional[Path]:
    """A labelled entry's kernel file: ``corpus:...`` under the dev corpus, else under the repository."""
    if file.startswith(VLLM_PREFIX):
        return None  # staged by entries() when a vllm-ascend checkout is given
    if file.startswith("corpus:"):
        root = library_root("liger_kernel")
        return None if root is None else root.parent / file[len("corpus:"):]
    return ROOT / file


def entries(vllm_root: Optional[Path] = None) -> list[dict[str, Any]]:
    """The labelled entries: the JSON set, then liger's launch choices from the anchor data.

    ``vllm-ascend:`` entries are read from ``vllm_root`` (their ``from vllm.triton_utils import tl,
    triton`` is read as Triton's own modules); without it they are skipped.
    """
    data = json.loads(TRUTH.read_text())
    out = [dict(e, target=data["target"]) for e in data["entries"]]
    if vllm_root is not None:
        for e in out:
            if e["file"].startswith(VLLM_PREFIX) and (vllm_root / e["file"][len(VLLM_PREFIX):]).is_file():
                e["abs"] = str(vllm_root / e["file"][len(VLLM_PREFIX):])  # read as it is (vllm.triton_utils)
    anchor = json.loads(ANCHOR.read_text())
    for item in anchor["items"]:
        for i, cfg in enumerate(item["liger"]):
            out.append({"id": f"liger:{item['name']}:{i}:{json.dumps(item['shapes'], sort_keys=True)}",
                        "file": item["file"], "kernel": item["name"], "config": {**item["fixed"], **cfg},
                        "shapes": item["shapes"], "dtypes": item["dtypes"], "label": "runs",
                        "source": LIGER_SOURCE, "target": anchor["target"]})
    return out


FLAGGEMS_BACKEND = "src/flag_gems/runtime/backend/_ascend"


def _flaggems_configs(spec: dict) -> list[dict]:
    """The kwargs of one op's entries in FlagGems' tune_configs.yaml (``META`` dicts and ``gen`` products)."""
    out: list[dict] = []
    for item in spec:
        if item.get("gen"):
            names = item.get("param_map", {}).get("META", {})
            keys = list(names)
            lists = [item[names[k]] if isinstance(names[k], str) and names[k] in item else [names[k]] for k in keys]
            for values in itertools.product(*lists):
                out.append(dict(zip(keys, values)))
        elif isinstance(item.get("META"), dict):
            out.append(dict(item["META"]))
    return out


def _tuned_kernels(root: Path, folder: Path, tuned: dict) -> list[tuple[str, Path, Any]]:
    """(op name, file, kernel spec) of every kernel under ``folder`` tuned by ``get_tuned_config(op)``."""
    out = []
    for path in sorted(folder.rglob("*.py")):
        source = path.read_text(errors="replace")
        if "get_tuned_config(" not in source:
            continue
        try:
            module = analyze_file(str(path))
        except Exception:  # noqa: BLE001 - a file the analyser cannot read is reported by its own tests
            continue
        lines = source.splitlines()
        for spec in module.kernels:
            # the decorators' text: triton.autotune or FlagGems' own libtuner(configs=runtime.get_tuned_config(...))
            first = min((d.span.line for d in spec.decorators), default=spec.span.line)
            m = re.search(r'get_tuned_config\(\s*["\']([^"\']+)', "\n".join(lines[first - 1:spec.span.line]))
            if m and m.group(1) in tuned:
                out.append((m.group(1), path, spec))
    return out


def flaggems_entries(root: Path) -> list[dict[str, Any]]:
    """One entry per (kernel tuned by an Ascend config list, config, dtype fp16/fp32).

    The Ascend ``tune_configs.yaml`` tunes the backend's own kernels and, for
    ops the backend does not replace, the generic kernels under
    ``src/flag_gems/ops`` and ``src/flag_gems/fused``.
    """
    import yaml

    tuned = yaml.safe_load((root / FLAGGEMS_BACKEND / "tune_configs.yaml").read_text())
    found = _tuned_kernels(root, root / FLAGGEMS_BACKEND, tuned)
    replaced = {op for op, _, _ in found}
    for generic in ("src/flag_gems/ops", "src/flag_gems/fused"):
        if (root / generic).is_dir():
            found += [x for x in _tuned_kernels(root, root / generic, tuned) if x[0] not in replaced]
    out = []
    for op, path, spec in found:
        tiling = {p.name for p in spec.params}
        for i, cfg in enumerate(_flaggems_configs(tuned[op])):
            cfg = {k: v for k, v in cfg.items() if k in tiling}
            for dt in ("fp16", "fp32"):
                out.append({"id": f"flaggems:{op}:{spec.name}:{i}:{dt}", "abs": str(path),
                            "file": "FlagGems:" + str(path.relative_to(root)), "kernel": spec.name, "config": cfg,
                            "shapes": {}, "dtypes": {p.name: dt for p in spec.params if p.is_pointer},
                            "label": "shipped", "source": f"FlagGems {FLAGGEMS_BACKEND}/tune_configs.yaml '{op}'",
                            "target": "ascend910b3"})
    return out


def check(entry: dict[str, Any], cache: dict) -> dict[str, Any]:
    """Accepted or rejected (with the reasons) for one entry; ``skipped`` when its file is absent."""
    path = Path(entry["abs"]) if "abs" in entry else _path(entry["file"])
    row = {k: entry[k] for k in ("id", "file", "kernel", "config", "shapes", "dtypes", "label", "source", "target")}
    if path is None or not path.is_file():
        row.update(result="skipped", why=["kernel file not available (dev corpus not fetched, or no --vllm-ascend checkout)"])
        return row
    key = (str(path), entry["kernel"])
    if key not in cache:
        cache[key] = analyze_file(str(path)).kernel(entry["kernel"])
    spec = cache[key]
    with compiler(entry):
        why = check_config(spec, entry["config"], None, None, entry["shapes"], entry["dtypes"], entry["target"])
    row.update(result="rejected" if why else "accepted", why=why)
    if why:
        row["cause"] = cause(spec, entry, why)
    else:
        risk = may_overflow(spec, entry)
        if risk is not None:
            row["may_overflow"] = risk
    if "multibuffer_retry" in entry:
        row["multibuffer_retry"] = entry["multibuffer_retry"]
    return row


@contextlib.contextmanager
def compiler(entry: dict[str, Any]):
    """The compiler an entry was reported on: ``"multibuffer_retry": false`` (a bishengir-compile that
    does not retry an overflowing plan without multibuffer) sets ``TILETUNE_ASCEND_MULTIBUFFER_RETRY=0``
    while it is checked; other entries use the model's default (``check_config``'s cached models are
    keyed by the switch too)."""
    if "multibuffer_retry" not in entry:
        yield
        return
    before = os.environ.get(RETRY_ENV)
    os.environ[RETRY_ENV] = "1" if entry["multibuffer_retry"] else "0"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(RETRY_ENV, None)
        else:
            os.environ[RETRY_ENV] = before


def _evaluate(e, entry: dict[str, Any]) -> Optional[int]:
    """An expression over the config, the shapes and the pointers' element sizes, or None."""
    env = {**entry["config"], **entry["shapes"]}
    env.update({esize_symbol(p): DTYPE_BYTES[dt] for p, dt in entry["dtypes"].items() if dt in DTYPE_BYTES})
    try:
        return int(e.evaluate(env))
    except Exception:  # noqa: BLE001 - a symbol the entry does not give: no figure
        return None


def _consts(spec, entry: dict[str, Any]) -> dict[str, int]:
    """The constexpr values an entry's config fixes (not tiling parameters): an ``if`` on them is decided."""
    cfg = entry["config"]
    return {p.name: cfg[p.name] for p in spec.params
            if p.constexpr and not p.tiling and isinstance(cfg.get(p.name), int)}


def largest_tile(spec, entry: dict[str, Any], copies: int) -> Optional[int]:
    """Bytes of the kernel's largest UB tile for this config (a loop's load with ``copies`` copies,
    a mix kernel's vector part per sub-block): the need no plan of the compiler goes below."""
    t = get_target(entry["target"])
    floor = ub_floor(spec, entry["dtypes"], const(copies), _consts(spec, entry))
    need = _evaluate(floor, entry) if floor is not None else None
    return need // sub_blocks(t) if need is not None and spec.dots else need


def may_overflow(spec, entry: dict[str, Any]) -> Optional[str]:
    """For an accepted config, ``"estimated N B > UB B"`` when the full UB plan (one copy of each
    buffer, a mix kernel's vector part per sub-block) overflows while the certain count fits, else None:
    the configs the model keeps but ranks lower."""
    t = get_target(entry["target"])
    if t.family != "ascend":
        return None
    with compiler(entry):
        copies = 1 if multibuffer_retry() else 1 + int(bool(entry["config"].get("multibuffer", t.multibuffer_default)))
    plan = ub_bytes(spec, entry["dtypes"], const(copies), _consts(spec, entry))
    est = _evaluate(plan, entry) if plan is not None else None
    if est is None:
        return None
    est = est // sub_blocks(t) if spec.dots else est
    return f"estimated {est} B > {t.ub_bytes} B" if est > t.ub_bytes else None


def cause(spec, entry: dict[str, Any], why: list[str]) -> str:
    """Why a rejection stands, most certain first: ``one tile`` (a single UB tile is larger than the
    UB), ``one tile x multibuffer`` (a loop's load with its second copy is), ``multibuffer`` (the
    modelled plan fits with one copy of each buffer: a compiler that retries without multibuffer
    runs it), ``plan`` (the whole tiles one operation reads and writes, with the loop-carried ones
    around it: the certain count, ``ub_certain``), ``cube`` (L1 / L0C)."""
    if not any(w.startswith("UB") for w in why):
        return "cube"
    t = get_target(entry["target"])
    with compiler(entry):
        retry = multibuffer_retry()  # a compiler that retries without multibuffer: one copy is the need
    mb = 1 if retry else 1 + int(bool(entry["config"].get("multibuffer", t.multibuffer_default)))
    one = largest_tile(spec, entry, 1)
    if one is not None and one > t.ub_bytes:
        return "one tile"
    two = largest_tile(spec, entry, mb)
    if two is not None and two > t.ub_bytes:
        return "one tile x multibuffer"
    if any(w.startswith(("L1", "L0C")) for w in why):
        return "cube"  # L1 / L0C reject it whatever the UB plan
    plan = ub_certain(spec, entry["dtypes"], const(1), _consts(spec, entry))
    single = _evaluate(plan, entry) if plan is not None else None
    if not retry and single is not None and (single // sub_blocks(t) if spec.dots else single) <= t.ub_bytes:
        return "multibuffer"
    return "plan"


def recheck(rows: list[dict], by_id: dict[str, dict], target: str, cache: dict) -> None:
    """Check each rejected shipped config again on ``target``; its row gets ``also``: ``{"target",
    "result", "why"}`` (a list tuned on a chip with a larger UB or L0C would fit there)."""
    for r in rows:
        if r["label"] == "shipped" and r["result"] == "rejected":
            again = check(dict(by_id[r["id"]], target=target), cache)
            r["also"] = {"target": target, "result": again["result"], "why": again["why"]}


CAUSES = ("one_tile", "one_tile_x_multibuffer", "multibuffer", "plan", "cube")


def _key(cause_text: str) -> str:
    return cause_text.replace(" ", "_")


def summary(rows: list[dict]) -> dict[str, int]:
    """Counts per label and result; ``wrong`` = runs rejected + fails accepted."""
    out = {"runs": 0, "runs_rejected": 0, "fails": 0, "fails_rejected": 0, "shipped": 0, "shipped_rejected": 0,
           "skipped": 0, **{f"shipped_rejected_{c}": 0 for c in CAUSES}, "runs_may_overflow": 0,
           "fails_may_overflow": 0, "shipped_may_overflow": 0, "shipped_rejected_accepted_on_also": 0}
    for r in rows:
        if r["result"] == "skipped":
            out["skipped"] += 1
            continue
        out[r["label"]] += 1
        if r.get("may_overflow"):
            out[f"{r['label']}_may_overflow"] += 1
        if r["result"] == "rejected":
            out[f"{r['label']}_rejected"] += 1
            if r["label"] == "shipped":
                out[f"shipped_rejected_{_key(r['cause'])}"] += 1
                out["shipped_rejected_accepted_on_also"] += r.get("also", {}).get("result") == "accepted"
    out["wrong"] = out["runs_rejected"] + (out["fails"] - out["fails_rejected"])
    return out


def _also_lines(rows: list[dict], total: dict[str, int]) -> list[str]:
    """The report's line on the rejected shipped configs checked again on another target (``--also-target``)."""
    again = [r for r in rows if "also" in r]
    if not again:
        return []
    fit = [r["id"] for r in again if r["also"]["result"] == "accepted"]
    return [f"- the {len(again)} rejected shipped configs on {again[0]['also']['target']}: accepted "
            f"**{total['shipped_rejected_accepted_on_also']}**" + (f" ({'; '.join(fit)})" if fit else "")]


def markdown(rows: list[dict], total: dict[str, int], flaggems: str = "") -> str:
    """The report table."""
    lines = [
        "# Ascend labelled set: accepted / rejected by tiletune",
        "",
        "Generated by `python bench/ascend_truth.py` from `tests/data/ascend_truth.json` (its `vllm-ascend:` "
        "entries with `--vllm-ascend DIR`) and liger-kernel's `_ascend` launch choices "
        "(`tests/data/ascend_anchor_configs.json`).",
        "",
        f"- known to run: {total['runs']}, rejected: **{total['runs_rejected']}**",
        f"- known to fail: {total['fails']}, rejected: **{total['fails_rejected']}**",
        f"- shipped in FlagGems' Ascend tune_configs.yaml (fp16 + fp32; with `--flaggems`): {total['shipped']}, "
        f"rejected: **{total['shipped_rejected']}**, by cause: one UB tile alone larger than the UB "
        f"{total['shipped_rejected_one_tile']}; a loop's load tile with its multibuffer copy "
        f"{total['shipped_rejected_one_tile_x_multibuffer']}; the modelled plan, fitting with one copy of each "
        f"buffer (runs where the compiler retries without multibuffer) {total['shipped_rejected_multibuffer']}; "
        f"the tiles one operation reads and writes with the loop-carried ones (the certain count) "
        f"{total['shipped_rejected_plan']}; L1/L0C {total['shipped_rejected_cube']}",
        f"- accepted but may overflow (the estimated plan over the UB, the certain count within; ranked lower): "
        f"known to run {total['runs_may_overflow']}, known to fail {total['fails_may_overflow']}, "
        f"shipped {total['shipped_may_overflow']}",
        f"- skipped (file not available): {total['skipped']}",
        *([f"- FlagGems checked: {flaggems}"] if flaggems else []),
        *_also_lines(rows, total),
        "",
        "| id | kernel | config | label | result | why | cause | source |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        cfg = ", ".join(f"{k}={v}" for k, v in r["config"].items())
        why = "; ".join(r["why"]) or (f"may overflow: {r['may_overflow']}" if r.get("may_overflow") else "-")
        lines.append(f"| {r['id']} | {r['kernel']} | {cfg} | {r['label']} | {r['result']} | {why} | "
                     f"{r.get('cause', '-')} | {r['source']} |")
    return "\n".join(lines) + "\n"


def main(argv: Optional[list[str]] = None) -> int:
    """Check every entry and write the JSON and Markdown reports."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--flaggems", help="a FlagGems checkout: also check its Ascend tune_configs.yaml")
    ap.add_argument("--flaggems-rev", default="", help="words for the report: which FlagGems (repository, commit)")
    ap.add_argument("--vllm-ascend", help="a vllm-ascend checkout: check the labelled entries read from it")
    ap.add_argument("--also-target", help="re-check each rejected shipped config on this Ascend target too "
                    "(e.g. ascend910_95: was the list tuned for a chip with a larger UB / L0C?)")
    args = ap.parse_args(argv)
    if args.also_target and get_target(args.also_target).family != "ascend":
        ap.error(f"--also-target {args.also_target}: not an Ascend target; use e.g. ascend910_95 or ascend910_93")
    cache: dict = {}
    todo = entries(Path(args.vllm_ascend) if args.vllm_ascend else None) + (flaggems_entries(Path(args.flaggems)) if args.flaggems else [])
    rows = []
    for e in todo:
        try:
            rows.append(check(e, cache))
        except Exception as exc:  # noqa: BLE001 - one kernel the analyser cannot follow is reported, not fatal
            rows.append({**e, "result": "skipped", "why": [f"{type(exc).__name__}: {exc}"]})
    if args.also_target:
        recheck(rows, {e["id"]: e for e in todo}, get_target(args.also_target).name, cache)
    total = summary(rows)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "ascend_truth.json").write_text(json.dumps({"summary": total, "rows": rows}, indent=1) + "\n")
    (out / "ascend_truth.md").write_text(markdown(rows, total, args.flaggems_rev))
    print(json.dumps(total))
    return 0 if total["wrong"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
