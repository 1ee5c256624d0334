"""``tiletune explain NAME``: why a cached config was chosen.

For each cached key of a kernel (or function) it joins the cache file's entry
with the matching line of the tuning log (same name, same source hash, same
key) and tells: the candidates the model predicted (rank and predicted cost),
which were measured and their times, the winner's margin over the runner-up,
what was skipped and why (dropped candidates, tiling parameters left out of
the search), and how many tilings were feasible.  Nothing is re-run: it reads
what :mod:`tiletune.runtime.cache` and :mod:`tiletune.runtime.tuning_log`
already stored.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional

from tiletune.runtime.cache import read_cache_file
from tiletune.runtime.tuning_log import log_path, read_tuning_log

__all__ = ["explain_cached", "explain_entry"]


def _config_text(config: Any) -> str:
    if not isinstance(config, Mapping):
        return json.dumps(config, sort_keys=True)
    parts = [f"{k}={v}" for k, v in (config.get("kwargs") or {}).items()]
    for name in ("num_warps", "num_stages"):
        if config.get(name) is not None:
            parts.append(f"{name}={config[name]}")
    for name, value in (config.get("extra") or {}).items():
        parts.append(f"{name}={value}")
    return ", ".join(parts) if parts else "(no parameters)"


def _measured(cand: Mapping[str, Any]) -> Optional[float]:
    """A candidate's final time: its re-timed figure when it has one, else its first."""
    for field in ("retimed_ms", "ms"):
        value = cand.get(field)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return None


def _same_key(record: Mapping[str, Any], key: Mapping[str, Any]) -> bool:
    logged = record.get("key")
    if not isinstance(logged, Mapping):
        return False
    if logged.get("key") != key.get("key") or logged.get("dtypes") != key.get("dtypes"):
        return False
    target = key.get("target")
    return target is None or record.get("target") in (None, target)


def _matching_record(records: List[Mapping[str, Any]], key: Mapping[str, Any]) -> Optional[Mapping[str, Any]]:
    """The last tuning (not a cache hit) of ``key`` in a log."""
    for record in reversed(records):
        if record.get("status") == "tuned" and _same_key(record, key):
            return record
    return None


def _from_cache_timings(entry: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """Candidates rebuilt from a cache entry's ``timings_ms`` (when no log line matches)."""
    timings = entry.get("timings_ms")
    if not isinstance(timings, Mapping):
        return []
    return [{"label": label, "ms": ms} for label, ms in timings.items()
            if isinstance(ms, (int, float)) and not isinstance(ms, bool)]


def _candidate_rows(cands: List[Mapping[str, Any]], winner_text: str) -> List[str]:
    predicted = [c["predicted"] for c in cands if isinstance(c.get("predicted"), (int, float))]
    best_pred = min(predicted) if predicted else None
    rows = []
    order = sorted(cands, key=lambda c: (c.get("rank") is None, c.get("rank") or 0,
                                         _measured(c) if _measured(c) is not None else float("inf")))
    for cand in order:
        text = cand.get("label") or _config_text(cand.get("config"))
        rank = cand.get("rank")
        pred = cand.get("predicted")
        if isinstance(pred, (int, float)) and best_pred:
            pred_text = f"{pred / best_pred:.2f}x"
        else:
            pred_text = "-"
        ms = _measured(cand)
        if ms is not None:
            meas = f"{ms:.4g} ms"
        elif cand.get("dropped"):
            meas = "dropped"
        else:
            meas = "not measured"
        mark = "  <- winner" if text == winner_text else ""
        rows.append(f"    {('#' + str(rank)) if rank is not None else '-':>5}  {pred_text:>9}  {meas:>13}  "
                    f"[{text}]{mark}")
    return rows


def explain_entry(name: str, key: Mapping[str, Any], entry: Mapping[str, Any],
                  record: Optional[Mapping[str, Any]]) -> List[str]:
    """The lines explaining one cached key: winner, margin, candidates, skipped, notes."""
    winner_text = _config_text(entry.get("config"))
    shown_key = ", ".join(f"{k}={json.dumps(v)}" for k, v in key.items())
    lines = [f"{name}  {shown_key}"]
    when = " ".join(str(entry[f]) for f in ("created", "method") if isinstance(entry.get(f), str))
    lines.append(f"  chosen: [{winner_text}]" + (f"  ({when})" if when else ""))
    if record is not None:
        cands = [c for c in record.get("candidates", []) if isinstance(c, Mapping)]
    else:
        cands = _from_cache_timings(entry)
        lines.append("  (no tuning log line for this key: only the cached timings are known)")
    timed = sorted((ms, c.get("label") or _config_text(c.get("config")))
                   for c in cands for ms in [_measured(c)] if ms is not None)
    if timed:
        best_ms, best_text = timed[0]
        if len(timed) > 1:
            second_ms, second_text = timed[1]
            margin = (second_ms / best_ms - 1.0) * 100 if best_ms > 0 else float("inf")
            lines.append(f"  margin: {best_ms:.4g} ms against {second_ms:.4g} ms for the runner-up "
                         f"[{second_text}]: {margin:.1f}% faster")
        else:
            lines.append(f"  margin: the only candidate measured ({best_ms:.4g} ms)")
    if record is not None:
        pick = next((c for c in cands if c.get("rank") == 0), None)
        if pick is not None:
            pick_text = _config_text(pick.get("config"))
            verdict = "the model's pick won" if pick_text == winner_text else f"the model's pick was [{pick_text}]"
            lines.append(f"  model: {verdict}")
    measured = sum(1 for c in cands if _measured(c) is not None)
    predicted = sum(1 for c in cands if c.get("rank") is not None)
    summary = f"  candidates: {measured} measured"
    if predicted:
        summary += f" of {predicted} predicted"
    lines.append(summary + " (rank = the model's order, predicted = cost relative to its pick)")
    if cands:
        lines.append(f"    {'rank':>5}  {'predicted':>9}  {'measured':>13}  config")
        lines.extend(_candidate_rows(cands, winner_text))
    skipped = [(c.get("label") or _config_text(c.get("config")), c["dropped"]) for c in cands if c.get("dropped")]
    notes = [n for n in (record or {}).get("notes", []) if isinstance(n, str)]
    left_out = [n for n in notes if "left out of the search" in n or "not in key=" in n]
    fixed = key.get("fixed") if isinstance(key.get("fixed"), Mapping) else {}
    if skipped or left_out or fixed:
        lines.append("  skipped:")
        if fixed and not left_out:
            lines.append("    not searched (fixed by the launch, key, a heuristic or a default): "
                         + ", ".join(f"{k}={v}" for k, v in fixed.items()))
        lines.extend(f"    [{text}]: {why}" for text, why in skipped)
        lines.extend(f"    {n}" for n in left_out)
    other = [n for n in notes if n not in left_out]
    if other:
        lines.append("  notes:")
        lines.extend(f"    {n}" for n in other)
    return lines


def _parse_key(text: str) -> Dict[str, Any]:
    try:
        key = json.loads(text)
    except ValueError:
        return {"key": text}
    return key if isinstance(key, dict) else {"key": key}


def explain_cached(name: str, directory: Path) -> str:
    """Why each cached config of kernel or function ``name`` (a name, file stem or path) was chosen.

    Raises FileNotFoundError naming the directory when no cache file matches.
    """
    directory = Path(directory)
    explicit = Path(name).expanduser()
    files = sorted(p for p in directory.glob("*/*.json") if p.parent.name != "logs") if directory.is_dir() else []
    paths = [explicit] if explicit.is_file() else [
        p for p in files if name in (p.stem, p.name, re.sub(r"-[0-9a-f]{16}$", "", p.stem))]
    if not paths:
        raise FileNotFoundError(f"no cache file for {name!r} in {directory}; `tiletune cache list` shows what is "
                                "cached (set TILETUNE_CACHE_DIR or pass --dir for another cache)")
    out: List[str] = []
    for path in paths:
        data, reason = read_cache_file(path)
        if data is None:
            out.append(f"{path}: unreadable ({reason or 'missing'})")
            continue
        stored_name = str(data.get("name", name))
        source = str(data.get("source_hash", ""))
        logs = log_path(stored_name, source, directory=path.parent.parent)
        records = read_tuning_log(logs)
        out.append(f"{data.get('kind', 'kernel')} {stored_name}  source {source}")
        out.append(f"  cache {path}")
        out.append(f"  log   {logs}" + ("" if logs.exists() else "  (missing)"))
        entries = data.get("entries") or {}
        if not entries:
            out.append("  (no entries)")
        for key_text, entry in sorted(entries.items()):
            key = _parse_key(key_text)
            out.append("")
            out.extend(explain_entry(stored_name, key, entry, _matching_record(records, key)))
        out.append("")
    return "\n".join(out).rstrip() + "\n"
