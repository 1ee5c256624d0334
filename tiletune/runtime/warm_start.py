"""Warm start across keys: a new key of a kernel already tuned for other keys starts from their winners.

The disk cache holds one entry per key (``cache.entry_key``: the key values, the dtypes, the target and the
search space).  Entries that differ from the new key in the key values only are its neighbours; the winners
of the nearest (log2 distance over the numeric key values) seed the first batch of the new key's search,
where the measured search then keeps them or descends from them.  A winner at 4096x4096 is a better first
guess at 4000x4096 than the model's pick, and is measured, never taken on trust.
"""
from __future__ import annotations

import json
import math
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

#: How many neighbouring keys' winners seed a first batch.
WARM_SEEDS = 2


def _parse(disk_key: str) -> Optional[Dict[str, Any]]:
    try:
        value = json.loads(disk_key)
    except (TypeError, ValueError):
        return None
    return value if isinstance(value, dict) and isinstance(value.get("key"), list) else None


def key_distance(a: List[Any], b: List[Any]) -> Optional[float]:
    """Log2 distance between two keys' values (numbers: ``|log2(1+|x|) - log2(1+|y|)|`` summed; anything
    else must be equal); None when they cannot be compared (other lengths, other non-numeric values)."""
    if len(a) != len(b):
        return None
    d = 0.0
    for x, y in zip(a, b):
        numeric = isinstance(x, (int, float)) and isinstance(y, (int, float)) \
            and not isinstance(x, bool) and not isinstance(y, bool)
        if numeric:
            d += abs(math.log2(1.0 + abs(x)) - math.log2(1.0 + abs(y)))
        elif x != y:
            return None
    return d


def nearest_winners(entries: Mapping[str, Mapping[str, Any]], disk_key: str, fingerprint: Mapping[str, Any],
                    n: int = WARM_SEEDS) -> List[Tuple[float, List[Any], Mapping[str, Any]]]:
    """``(distance, key values, entry)`` of the ``n`` cached entries nearest to ``disk_key``: tuned under
    ``fingerprint``, with the same dtypes, target and search space, other key values; nearest first, one
    per distinct winning config."""
    want = _parse(disk_key)
    if want is None:
        return []
    rest = {k: v for k, v in want.items() if k != "key"}
    found: List[Tuple[float, str, List[Any], Mapping[str, Any]]] = []
    for other_key, entry in entries.items():
        if other_key == disk_key or not isinstance(entry, Mapping) or entry.get("fingerprint") != fingerprint:
            continue
        other = _parse(other_key)
        if other is None or {k: v for k, v in other.items() if k != "key"} != rest:
            continue
        d = key_distance(want["key"], other["key"])
        if d is None or not isinstance(entry.get("config"), Mapping):
            continue
        found.append((d, other_key, other["key"], entry))
    found.sort(key=lambda f: (f[0], f[1]))
    out: List[Tuple[float, List[Any], Mapping[str, Any]]] = []
    seen: set = set()
    for d, _, key, entry in found:
        sig = json.dumps(entry["config"], sort_keys=True, default=str)
        if sig in seen:
            continue
        seen.add(sig)
        out.append((d, key, entry))
        if len(out) >= n:
            break
    return out


def warm_seeds(tuner: Any, problem: Any, add: Callable[[Any], int], pg: Any) -> List[Tuple[int, list]]:
    """``(candidate index, key values)`` of the cached winners of ``tuner``'s nearest other keys that the
    model finds feasible here, each added to the search's candidates with ``add(config) -> index``; none
    under a process group (each rank reads its own cache) or without a disk cache."""
    from . import distributed as _dd
    from .cache_validate import kernel_entry_problems

    disk_key = getattr(problem, "disk_key", None)
    if not tuner.cache_results or disk_key is None or _dd.is_active(pg):
        return []
    cache = tuner._disk_cache(problem.target_name)
    ctx = tuner._synthesis
    out: List[Tuple[int, list]] = []
    entries = cache.entries()
    for _, key, entry in nearest_winners(entries, disk_key, cache.fingerprint, n=len(entries)):
        if len(out) >= WARM_SEEDS:
            break
        if kernel_entry_problems(tuner, problem, entry):  # an edited or broken entry seeds nothing
            continue
        config = tuner._config_from_entry(entry)
        if config is None or not ctx.feasible(config.kwargs, config.num_warps, config.num_stages):
            continue
        i = add(config)
        if i not in dict(out):
            out.append((i, key))
    if out:
        problem.report.note(f"warm start: {len(out)} winner(s) of the nearest cached key(s) "
                            f"{', '.join(str(k) for _, k in out)} measured first")
    return out
