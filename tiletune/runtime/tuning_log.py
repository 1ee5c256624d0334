"""Tuning log: one JSON Lines file per tuned object, one line per tuning run.

``<cache_dir>/logs/<name>-<source_hash>.jsonl``; each line is a JSON object
such as ``{"time": ..., "key": ..., "candidates": [{"config": ..., "ms": ...}],
"winner": ..., "wall_s": ..., "method": ...}``.  Appends happen under a file
lock (``<path>.lock``) so lines from concurrent processes never interleave.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import numbers
import os
import stat
from pathlib import Path
from typing import Any, Mapping, Optional

from tiletune.runtime.cache import LOCK_TIMEOUT_S, _safe_name, _warn_once, cache_dir

__all__ = ["log_path", "append_tuning_log", "read_tuning_log"]


def log_path(name: str, source_hash: str, *, directory: Optional[Path] = None) -> Path:
    """Where the tuning log of ``name`` (with that source hash) lives."""
    root = Path(directory) if directory is not None else cache_dir()
    return root / "logs" / f"{_safe_name(name)}-{source_hash}.jsonl"


def json_plain(value: Any) -> Any:
    """A JSON-writable copy of ``value`` for a log line.

    Non-finite floats become null; anything else that is not JSON becomes its str()."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        f = float(value)
        return f if math.isfinite(f) else None
    if isinstance(value, Mapping):
        return {str(k): json_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_plain(v) for v in value]
    return str(value)


def append_tuning_log(
    name: str, source_hash: str, record: Mapping[str, Any], *, directory: Optional[Path] = None
) -> Path:
    """Append ``record`` (plus ``"time"`` if absent) as one JSON line; return the log's path.

    Values that are not JSON are written as their ``str()``.  A log that cannot
    be written is warned about once (TiletuneCacheWarning); this never raises
    for disk trouble.
    """
    from filelock import FileLock

    path = log_path(name, source_hash, directory=directory)
    line = dict(json_plain(record))
    line.setdefault("time", _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds"))
    text = json.dumps(line, sort_keys=True, separators=(",", ":"), allow_nan=False) + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(path) + ".lock", timeout=LOCK_TIMEOUT_S):
            # O_NONBLOCK + fstat: a FIFO or device in the log's place is refused at once, never waited on
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0), 0o644)
            with os.fdopen(fd, "a", encoding="utf-8") as f:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise OSError(f"{path} is not a regular file; remove it")
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
    except OSError as exc:
        _warn_once(("log", str(path.parent)), f"tiletune: cannot write the tuning log {path} ({exc}); not logging")
    return path


def read_tuning_log(path: Path) -> list:
    """The records of a tuning log, skipping lines that are not JSON objects."""
    records = []
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except (FileNotFoundError, NotADirectoryError):
        return records
    for line in lines:
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            records.append(obj)
    return records
