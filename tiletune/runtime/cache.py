"""Disk cache of tuning winners, shared by every tuner of the project.

One JSON file per tuned object (a kernel or a function), at
``<cache_dir>/<kind>/<name>-<source_hash>.json``::

    {"format": "tiletune-cache", "version": 1, "name": ..., "kind": ...,
     "source_hash": ..., "fingerprint": {...}, "entries": {key: entry}}

An entry is any JSON object; tuners store ``{"config": {...}, "timings_ms":
{...}, "created": ..., "fingerprint": {...}, "method": ...}``.  Each entry
keeps the :func:`environment_fingerprint` it was tuned under; an entry whose
fingerprint differs from the current one is *stale* and is not returned by
:meth:`TuningCache.get`.

Files are read without a lock (writers replace them atomically) and written
under a file lock (``<path>.lock``): re-read, merge, write a temporary file in
the same directory, fsync, ``os.replace``.  Concurrent processes therefore
never tear a file or lose each other's entries.  Only JSON is read or written:
never pickle, never eval.  Garbled files are reported once with
:class:`TiletuneCacheWarning`, treated as empty and moved aside to
``<path>.corrupt`` by the next :meth:`TuningCache.put`.  A cache directory
that cannot be written is reported once; the cache then keeps working in
memory only.  As ssh treats its files, a cache file, its ``<kind>`` folder or
the cache root that another user owns or may write (group- or world-writable,
unless the group is the user's own private group) is not trusted: reported
once, never read nor written, the cache then works in memory only
(:func:`untrusted_reason`).
"""

from __future__ import annotations

import copy
import datetime as _dt
import functools
import glob
import hashlib
import json
import math
import numbers
import os
import re
import stat
import sys
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Tuple

from tiletune.errors import TiletuneCacheWarning, TiletuneError
from tiletune.files import UnreadableFileError, read_regular_bytes

from .env import env_on, env_word

__all__ = [
    "FORMAT",
    "VERSION",
    "KINDS",
    "TiletuneCacheWarning",
    "StaleCacheEntryError",
    "cache_dir",
    "environment_fingerprint",
    "source_hash",
    "code_identity",
    "entry_key",
    "always_tune",
    "strict_version_check",
    "check_version_policy",
    "fingerprint_diff",
    "read_cache_file",
    "read_regular_file",
    "untrusted_reason",
    "NotACacheFileError",
    "loads_limited",
    "json_depth",
    "MAX_JSON_DEPTH",
    "MAX_FILE_BYTES",
    "TuningCache",
]

FORMAT = "tiletune-cache"
VERSION = 1
KINDS = ("kernel", "function")
LOCK_TIMEOUT_S = 120.0



class StaleCacheEntryError(TiletuneError):
    """A cached winner was tuned under other versions and strict checking is on."""


# --------------------------------------------------------------------------- environment


def cache_dir() -> Path:
    """The cache root: ``TILETUNE_CACHE_DIR`` if set, else ``platformdirs.user_cache_dir("tiletune")``."""
    env = os.environ.get("TILETUNE_CACHE_DIR", "").strip()
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("tiletune"))


def may_hold(name: str, kind: str = "kernel", directory: Optional[Path] = None) -> bool:
    """False only when the cache certainly holds no entry for ``name``: no file of that name (any source
    hash) exists.  Cheap (one directory listing, no hashing), so a first tune can tell a cold cache before
    it analyses the kernel to compute its file's name; a file of another kernel whose name extends this
    one's answers True (the caller then takes the usual path)."""
    root = (Path(directory) if directory is not None else cache_dir()) / kind
    try:
        return any(root.glob(f"{glob.escape(_safe_name(name))}-*.json"))
    except OSError:  # unreadable: assume it may
        return True


def always_tune() -> bool:
    """True when ``TILETUNE_ALWAYS_TUNE`` or ``TRITON_DIST_AUTOTUNE_ALWAYS_TUNE`` is set to 1/true.

    Tuners check it and re-tune even on a cache hit (then ``put`` the new winner).
    """
    return env_on("TILETUNE_ALWAYS_TUNE", "TRITON_DIST_AUTOTUNE_ALWAYS_TUNE")


def strict_version_check() -> bool:
    """True when ``TILETUNE_VERSION_CHECK=strict`` or ``TRITON_DIST_AUTOTUNE_VERSION_CHECK=1``."""
    return env_word("TILETUNE_VERSION_CHECK") == "strict" or env_on("TILETUNE_VERSION_CHECK", "TRITON_DIST_AUTOTUNE_VERSION_CHECK")


def _dist_version(*names: str) -> str:
    from importlib import metadata

    for name in names:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return "none"


@functools.lru_cache(maxsize=None)
def _base_fingerprint() -> Tuple[Tuple[str, str], ...]:
    from tiletune.version import __version__

    fp = {
        "tiletune": __version__,
        "triton": _dist_version("triton", "triton-ascend", "pytorch-triton"),
        "torch": _dist_version("torch"),
        "python": f"{sys.version_info.major}.{sys.version_info.minor}",
    }
    if env_on("TRITON_INTERPRET"):
        fp["interpret"] = "1"
    device = _device_name()
    if device:
        fp["device"] = device
    return tuple(sorted(fp.items()))


def _device_name() -> Optional[str]:
    try:
        import torch
    except Exception:  # torch missing or broken: no device to name
        return None
    try:
        if torch.cuda.is_available():
            return str(torch.cuda.get_device_name())
        npu = getattr(torch, "npu", None)  # present once torch_npu is imported
        if npu is not None and npu.is_available():
            return str(npu.get_device_name())
    except Exception:
        return None
    return None


def environment_fingerprint(target_name: Optional[str] = None) -> Dict[str, str]:
    """Versions that invalidate cache entries, as a fresh dict of strings.

    Keys: ``tiletune``, ``triton``, ``torch``, ``python`` (major.minor), ``target``
    (when given), ``device`` (the current CUDA/NPU device's name, when one is
    available) and ``interpret`` (when ``TRITON_INTERPRET=1``).  Computed once
    per process (the first call imports torch to look for a device).
    """
    fp = dict(_base_fingerprint())
    if target_name is not None:
        fp["target"] = str(target_name)
    return fp


def fingerprint_diff(cached: Mapping[str, Any], current: Mapping[str, Any]) -> Dict[str, Tuple[Any, Any]]:
    """``{key: (cached value, current value)}`` for every key whose value differs (None = absent)."""
    keys = sorted(set(cached) | set(current))
    return {k: (cached.get(k), current.get(k)) for k in keys if cached.get(k) != current.get(k)}


def check_version_policy(
    status: str,
    entry: Optional[Mapping[str, Any]],
    path: Any,
    *,
    current: Optional[Mapping[str, str]] = None,
) -> None:
    """Raise :class:`StaleCacheEntryError` for a ``"stale"`` status in strict mode; else do nothing.

    ``status`` and ``entry`` come from :meth:`TuningCache.get_with_status`.  The
    message names every version that differs.  ``current`` defaults to
    :func:`environment_fingerprint` for the entry's target.
    """
    if status != "stale" or not strict_version_check():
        return
    cached = dict((entry or {}).get("fingerprint") or {})
    if current is None:
        target = cached.get("target")
        current = environment_fingerprint(str(target) if target is not None else None)
    diff = fingerprint_diff(cached, current)
    what = ", ".join(f"{k} {old!r} -> {new!r}" for k, (old, new) in diff.items()) or "fingerprint missing"
    raise StaleCacheEntryError(
        f"tiletune: cached tuning result in {path} was tuned under other versions ({what}) and "
        "strict version checking is on (TILETUNE_VERSION_CHECK=strict or "
        "TRITON_DIST_AUTOTUNE_VERSION_CHECK=1). Re-tune with TILETUNE_ALWAYS_TUNE=1, remove the "
        "entry with `tiletune cache clear NAME`, or turn strict checking off."
    )


# --------------------------------------------------------------------------- keys and JSON


def source_hash(text: str) -> str:
    """First 16 hex digits of the sha256 of a kernel's or function's source text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def code_identity(source: str, helpers: Optional[Mapping[str, str]] = None) -> str:
    """The text whose :func:`source_hash` names a kernel's cache file: its source, plus one line
    per ``@triton.jit`` helper it calls (``KernelSpec.helpers``: name -> sha256 of its source,
    transitively and across modules), so editing a helper starts a fresh cache file too."""
    if not helpers:
        return source
    lines = [f"# helper {name} {digest}" for name, digest in sorted(helpers.items())]
    return source + "\n# tiletune: @triton.jit helpers\n" + "\n".join(lines) + "\n"


def _jsonable(value: Any, where: str) -> Any:
    """A plain-JSON copy of ``value``: tuples become lists, non-finite floats become None."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        f = float(value)
        return f if math.isfinite(f) else None
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError(f"tiletune cache: key {k!r} at {where} is not a string")
            out[k] = _jsonable(v, f"{where}[{k!r}]")
        return out
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, f"{where}[{i}]") for i, v in enumerate(value)]
    raise TypeError(
        f"tiletune cache: value {value!r} at {where} has type {type(value).__name__}, which is not "
        "JSON; convert it to str/int/float/bool/None/list/dict before caching"
    )


def entry_key(values: Mapping[str, Any]) -> str:
    """Canonical JSON (sorted keys, no spaces) of JSON-able key material.

    The autotuner passes ``{"key": [...], "dtypes": [...], "target": "h100"}``.
    Raises TypeError for values that are not JSON (convert dtypes to str first).
    """
    return json.dumps(_jsonable(values, "key"), sort_keys=True, separators=(",", ":"), allow_nan=False)


def _safe_name(name: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "unnamed"
    return safe[:100]


#: Largest cache file read (a tuning cache holds kilobytes; anything bigger is not ours).
MAX_FILE_BYTES = 64 << 20
#: Deepest JSON nesting accepted (an entry is three levels deep; a config five).
MAX_JSON_DEPTH = 32


class NotACacheFileError(OSError):
    """Something other than a regular file of sane size sits where a cache file belongs."""


def read_regular_file(path: Path, limit: Optional[int] = None) -> Optional[bytes]:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes (default
    :data:`MAX_FILE_BYTES`); None if it does not exist.

    Reads through :func:`tiletune.files.read_regular_bytes` (``O_NONBLOCK``,
    ``fstat`` before reading), so a FIFO, a device or a directory in its place
    is refused at once (:class:`NotACacheFileError` naming what it is) instead
    of blocking or reading for ever.
    """
    try:
        return read_regular_bytes(path, MAX_FILE_BYTES if limit is None else limit)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except UnreadableFileError as exc:
        raise NotACacheFileError(f"{exc}; it is not a tiletune cache file") from None


def json_depth(value: Any, limit: int = MAX_JSON_DEPTH) -> int:
    """Nesting depth of a parsed JSON value (a scalar is 0), counted without recursion; stops at ``limit + 1``."""
    deepest = 0
    stack = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                return deepest
        stack.extend((child, depth) for child in children)
    return deepest


def loads_limited(raw: bytes, limit: int = MAX_JSON_DEPTH) -> Tuple[Any, Optional[str]]:
    """Parse UTF-8 JSON bytes: ``(value, None)`` or ``(None, reason)``; never raises for the contents.

    Nesting deeper than ``limit`` is refused (it would otherwise surface as a
    RecursionError wherever the value is later copied or printed).
    """
    try:
        value = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8: {exc.reason} at byte {exc.start}"
    except RecursionError:
        return None, f"JSON nested more than {limit} levels deep"
    except ValueError as exc:  # json.JSONDecodeError
        return None, f"invalid JSON: {exc}"
    if json_depth(value, limit) > limit:
        return None, f"JSON nested more than {limit} levels deep"
    return value, None


def read_cache_file(path: Path) -> Tuple[Optional[Dict[str, Any]], Optional[str]]:
    """Read and validate one cache file: ``(data, None)``, ``(None, reason)`` if corrupt.

    A missing file reads as ``(None, None)``.  Never raises for file contents
    (bad JSON, nesting deeper than :data:`MAX_JSON_DEPTH`); raises OSError for
    a file that exists but cannot be read, or is not a regular file (a FIFO, a
    device, a directory: refused without blocking), or is larger than
    :data:`MAX_FILE_BYTES`.
    """
    raw = read_regular_file(Path(path))
    if raw is None:
        return None, None
    data, reason = loads_limited(raw)
    if reason is not None:
        return None, reason
    if not isinstance(data, dict):
        return None, f"top level is a {type(data).__name__}, not an object"
    if data.get("format") != FORMAT:
        return None, f"format is {data.get('format')!r}, expected {FORMAT!r}"
    if data.get("version") != VERSION:
        return None, f"version is {data.get('version')!r}, expected {VERSION}"
    entries = data.get("entries")
    if not isinstance(entries, dict):
        return None, f"'entries' is a {type(entries).__name__}, not an object"
    for key, entry in entries.items():
        if not isinstance(entry, dict):
            return None, f"entry {key!r} is a {type(entry).__name__}, not an object"
    return data, None


def _private_group(gid: int) -> bool:
    """True when ``gid`` is the user's own group with no other member (a user private group)."""
    try:
        import grp
        import pwd

        user = pwd.getpwuid(os.getuid())
        group = grp.getgrgid(gid)
    except (ImportError, KeyError, OSError):
        return False
    return gid == user.pw_gid and group.gr_name == user.pw_name and set(group.gr_mem) <= {user.pw_name}


def untrusted_reason(path: Path) -> Optional[str]:
    """Why the cache file ``path`` (``<root>/<kind>/<file>``) may hold another user's writing, or None.

    The file, its folder and the cache root must each (where they exist) be
    owned by the current user (or root) and writable by nobody else: not by
    others, and by the group only when it is the user's private group.  The
    answer names the path and the command that fixes it.  Always None where
    there are no Unix owners.
    """
    if not hasattr(os, "getuid"):
        return None
    uid = os.getuid()
    seen = set()
    for place in (path.parent.parent, path.parent, path):
        if place in seen:
            continue
        seen.add(place)
        try:
            st = os.stat(place)
        except OSError:  # missing (nothing to trust yet) or unreadable (reported when read)
            continue
        if st.st_uid not in (uid, 0):
            return f"{place} is owned by uid {st.st_uid}, not by you (uid {uid}); chown it or remove it"
        if st.st_mode & 0o002 or (st.st_mode & 0o020 and not _private_group(st.st_gid)):
            who = "everyone" if st.st_mode & 0o002 else "its group"
            return f"{place} is writable by {who} (mode {stat.S_IMODE(st.st_mode):o}); run `chmod go-w {place}`"
    return None


def _make_dirs(directory: Path) -> None:
    """Create ``directory`` and its missing parents, each writable by its owner only (umask aside)."""
    missing = []
    for place in [directory, *directory.parents]:
        if place.exists():
            break
        missing.append(place)
    for place in reversed(missing):
        try:
            place.mkdir()
        except FileExistsError:
            continue
        os.chmod(place, 0o755)


_warned: set = set()
_warned_lock = threading.Lock()


def _warn_once(token: Any, message: str) -> None:
    with _warned_lock:
        if token in _warned:
            return
        _warned.add(token)
    warnings.warn(message, TiletuneCacheWarning, stacklevel=4)


def _stat_signature(path: Path) -> Optional[Tuple[int, int, int]]:
    try:
        st = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


# --------------------------------------------------------------------------- the cache


class TuningCache:
    """The winners of one tuned kernel or function, one entry per key.

    ``name`` names the kernel or function, ``source`` is its source text (its
    hash is part of the file name, so an edited kernel starts afresh).
    ``directory`` defaults to :func:`cache_dir`; ``kind`` is ``"kernel"`` or
    ``"function"``; ``fingerprint`` defaults to :func:`environment_fingerprint`
    (computed on first use).  Thread-safe and process-safe.
    """

    def __init__(
        self,
        name: str,
        source: str,
        *,
        directory: Optional[Path] = None,
        kind: str = "kernel",
        fingerprint: Optional[Mapping[str, str]] = None,
    ) -> None:
        if kind not in KINDS:
            raise ValueError(f"tiletune cache: kind must be one of {KINDS}, not {kind!r}")
        self.name = str(name)
        self.kind = kind
        self.source_hash = source_hash(source)
        root = Path(directory) if directory is not None else cache_dir()
        self.path: Path = root / kind / f"{_safe_name(self.name)}-{self.source_hash}.json"
        self._fingerprint: Optional[Dict[str, str]] = dict(fingerprint) if fingerprint is not None else None
        self._lock = threading.RLock()
        self._signature: Optional[Tuple[int, int, int]] = None
        self._file_entries: Dict[str, dict] = {}
        self._memory: Dict[str, dict] = {}  # entries put while the disk could not be written
        self._memory_only = False

    def __repr__(self) -> str:
        return f"TuningCache({self.name!r}, kind={self.kind!r}, path={str(self.path)!r})"

    @property
    def fingerprint(self) -> Dict[str, str]:
        """The fingerprint entries are compared with (and stored under by :meth:`put`)."""
        if self._fingerprint is None:
            self._fingerprint = environment_fingerprint()
        return dict(self._fingerprint)

    # ---------------------------------------------------------------- reading

    def _untrusted(self) -> bool:
        """True (warned once) when the file or its folders may hold another user's writing."""
        reason = untrusted_reason(self.path)
        if reason is None:
            return False
        _warn_once(
            ("untrusted", str(self.path), reason),
            f"tiletune: ignoring the cache file {self.path}: {reason} (another user could plant a config); "
            "tuning without it and keeping results in memory only",
        )
        return True

    def _refresh(self) -> Dict[str, dict]:
        """The file's entries, re-read only when its mtime/size/inode changed (none when untrusted)."""
        if self._untrusted():
            self._signature, self._file_entries = None, {}
            return self._file_entries
        try:
            sig = _stat_signature(self.path)
        except OSError as exc:
            _warn_once(("read", str(self.path)), f"tiletune: cannot read cache file {self.path} ({exc}); tuning without it")
            return {}
        if sig is None:
            self._signature, self._file_entries = None, {}
            return self._file_entries
        if sig == self._signature:
            return self._file_entries
        try:
            data, reason = read_cache_file(self.path)
        except OSError as exc:
            _warn_once(("read", str(self.path)), f"tiletune: cannot read cache file {self.path} ({exc}); tuning without it")
            return {}
        if reason is not None:
            self._warn_corrupt(sig, reason)
        self._signature = sig
        self._file_entries = dict(data["entries"]) if data else {}
        return self._file_entries

    def _warn_corrupt(self, sig: Any, reason: str) -> None:
        _warn_once(
            ("corrupt", str(self.path), sig),
            f"tiletune: cache file {self.path} is corrupt ({reason}); rebuilding it",
        )

    def _lookup(self, key: str) -> Optional[dict]:
        with self._lock:
            if key in self._memory:
                return self._memory[key]
            return self._refresh().get(key)

    def get_with_status(self, key: str) -> Tuple[Optional[dict], str]:
        """``(entry, "hit")``, ``(None, "miss")`` or ``(entry, "stale")``.

        Stale means the entry was tuned under another fingerprint; it is
        returned so that :func:`check_version_policy` can name the versions,
        but callers must re-tune rather than use it.  Never raises because of
        file contents.
        """
        entry = self._lookup(key)
        if entry is None:
            return None, "miss"
        status = "hit" if entry.get("fingerprint") == self.fingerprint else "stale"
        return copy.deepcopy(entry), status

    def get(self, key: str) -> Optional[dict]:
        """The entry stored under ``key`` if it was tuned under the current fingerprint, else None."""
        entry, status = self.get_with_status(key)
        return entry if status == "hit" else None

    def entries(self) -> Dict[str, dict]:
        """Every stored entry (stale ones included), as a fresh dict."""
        with self._lock:
            merged = dict(self._refresh())
            merged.update(self._memory)
            return copy.deepcopy(merged)

    # ---------------------------------------------------------------- writing

    def _disk_failed(self, exc: BaseException) -> None:
        self._memory_only = True
        _warn_once(
            ("unwritable", str(self.path.parent)),
            f"tiletune: cannot write the cache in {self.path.parent} ({exc}); keeping tuning "
            "results in memory only (set TILETUNE_CACHE_DIR to a writable directory)",
        )

    def put(self, key: str, entry: Mapping[str, Any]) -> None:
        """Store ``entry`` (any JSON object) under ``key``, merged with what other processes wrote.

        Adds ``"fingerprint"`` (the current one) and ``"created"`` (UTC ISO time)
        when the entry lacks them.  Non-finite floats are stored as null.
        Raises TypeError for values that are not JSON; never for disk trouble
        (that is warned about once and the entry kept in memory).
        """
        if not isinstance(key, str):
            raise TypeError(f"tiletune cache: key must be a str (see entry_key), not {type(key).__name__}")
        if not isinstance(entry, Mapping):
            raise TypeError(f"tiletune cache: entry must be a mapping, not {type(entry).__name__}")
        record = _jsonable(entry, f"entry {key!r}")
        record.setdefault("fingerprint", self.fingerprint)
        record.setdefault("created", _now_iso())
        with self._lock:
            if not self._memory_only and not self._untrusted():
                try:
                    self._write_merged({key: record})
                    return
                except OSError as exc:  # filelock.Timeout is an OSError (TimeoutError) too
                    self._disk_failed(exc)
            self._memory[key] = record

    def _write_merged(self, new: Dict[str, dict]) -> None:
        from filelock import FileLock

        _make_dirs(self.path.parent)
        with FileLock(str(self.path) + ".lock", timeout=LOCK_TIMEOUT_S):
            sig = _stat_signature(self.path)
            try:
                data, reason = read_cache_file(self.path)
            except NotACacheFileError as exc:  # a FIFO, device, directory or huge file: moved aside too
                data, reason = None, str(exc)
            if reason is not None:
                self._warn_corrupt(sig, reason)
                os.replace(self.path, str(self.path) + ".corrupt")
            entries = dict(data["entries"]) if data else {}
            entries.update(new)
            self._atomic_write(entries)
            self._signature = _stat_signature(self.path)
            self._file_entries = entries

    def _atomic_write(self, entries: Dict[str, dict]) -> None:
        doc = {
            "format": FORMAT,
            "version": VERSION,
            "name": self.name,
            "kind": self.kind,
            "source_hash": self.source_hash,
            "fingerprint": self.fingerprint,
            "entries": entries,
        }
        text = json.dumps(doc, indent=1, sort_keys=True, allow_nan=False) + "\n"
        fd, tmp = tempfile.mkstemp(prefix=self.path.name + ".", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o644)
            os.replace(tmp, self.path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        _fsync_dir(self.path.parent)

    def clear(self) -> None:
        """Remove every entry: delete the file (under the lock) and forget the in-memory ones."""
        with self._lock:
            self._memory.clear()
            self._signature, self._file_entries = None, {}
            if self._memory_only or not self.path.exists():
                return
            from filelock import FileLock

            try:
                with FileLock(str(self.path) + ".lock", timeout=LOCK_TIMEOUT_S):
                    self.path.unlink(missing_ok=True)
            except OSError as exc:
                self._disk_failed(exc)


def _fsync_dir(directory: Path) -> None:
    """Make a rename durable (best effort; not every platform can open a directory)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
