"""A per-file cache of lint results, as ruff and mypy keep one.

A file's diagnostics are stored under a key made of everything they depend
on: the file's bytes, its path, the tiletune version and its own files' state, the lint options
(selected codes, target) and the state of the other Python files of its
package (the rules read launches of its kernels in sibling modules; any
change there, seen as a size or modification time, gives a new key).  A
second ``tiletune lint`` of an unchanged library then reads every result back
instead of analysing the files again.

Where: ``TILETUNE_LINT_CACHE_DIR``, else ``<user cache dir>/tiletune/lint``
(``platformdirs``).  ``TILETUNE_LINT_CACHE=0`` turns it off.  Entries are
small JSON files (never pickle), written atomically; a corrupt or unreadable
entry counts as a miss.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional

from .diagnostic import Diagnostic

__all__ = ["LintCache", "lint_cache_dir", "cache_enabled", "python_files_state"]

#: Bump when the stored form changes.
FORMAT = 1


def cache_enabled() -> bool:
    """False when ``TILETUNE_LINT_CACHE`` is ``0``/``false``/``no``/``off``."""
    return os.environ.get("TILETUNE_LINT_CACHE", "1").strip().lower() not in ("0", "false", "no", "off")


def lint_cache_dir() -> Path:
    """``TILETUNE_LINT_CACHE_DIR``, else the user cache directory's ``tiletune/lint``."""
    env = os.environ.get("TILETUNE_LINT_CACHE_DIR", "").strip()
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("tiletune")) / "lint"


def _diag_to_json(d: Diagnostic) -> dict:
    return {"line": d.line, "column": d.column, "end_line": d.end_line, "end_column": d.end_column,
            "code": d.code, "message": d.message, "kernel": d.kernel, "param": d.param,
            "severity": d.severity, "fix": d.fix, "fix_data": d.fix_data}


def _diag_from_json(path: str, obj: Mapping[str, Any]) -> Diagnostic:
    return Diagnostic(path=path, line=int(obj["line"]), column=int(obj["column"]), end_line=int(obj["end_line"]),
                      end_column=int(obj["end_column"]), code=str(obj["code"]), message=str(obj["message"]),
                      kernel=obj.get("kernel"), param=obj.get("param"), severity=str(obj.get("severity", "warning")),
                      fix=obj.get("fix"), fix_data=dict(obj.get("fix_data") or {}))


def python_files_state(root: str) -> str:
    """A digest of the path, size and modification time of every Python file under ``root`` (hidden folders
    left out): any file added, removed or rewritten gives another digest."""
    h = hashlib.sha256()
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".py"):
                full = os.path.join(folder, name)
                try:
                    st = os.stat(full)
                except OSError:
                    continue
                h.update(f"{os.path.relpath(full, root)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


class LintCache:
    """Lint results by key, under ``directory`` (default :func:`lint_cache_dir`)."""

    def __init__(self, options: Mapping[str, Any], directory: Optional[Path] = None) -> None:
        from tiletune.version import __version__

        self.directory = Path(directory) if directory is not None else lint_cache_dir()
        # the tool's own files too: a rule added or changed in a source checkout keeps the version string
        self._salt = json.dumps({"format": FORMAT, "tiletune": __version__,
                                 "tool": python_files_state(str(Path(__file__).resolve().parent.parent)),
                                 "options": {k: sorted(v) if isinstance(v, (set, frozenset)) else v
                                             for k, v in sorted(options.items())}},
                                sort_keys=True, default=str)
        self._packages: dict[str, str] = {}

    def _package_state(self, path: str) -> str:
        """A digest of the size and modification time of every Python file in ``path``'s package."""
        from tiletune.analysis.resolver import package_root

        root = package_root(path)
        if root not in self._packages:
            in_package = os.path.isfile(os.path.join(os.path.dirname(os.path.abspath(path)), "__init__.py"))
            self._packages[root] = python_files_state(root) if in_package else hashlib.sha256().hexdigest()
        return self._packages[root]

    def key(self, path: str) -> Optional[str]:
        """The key of ``path``'s results now, or None when the file cannot be read (never cached)."""
        from tiletune.files import read_regular_bytes

        try:
            data = read_regular_bytes(path)  # never blocks on a FIFO, never reads a device
        except OSError:
            return None
        h = hashlib.sha256(self._salt.encode())
        h.update(b"\0" + os.path.abspath(path).encode() + b"\0")
        h.update(self._package_state(path).encode() + b"\0")
        h.update(data)
        return h.hexdigest()

    def _file(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key[2:]}.json"

    def get(self, key: Optional[str], path: str) -> Optional[list]:
        """The cached diagnostics of ``path`` under ``key``, or None (a miss)."""
        if key is None:
            return None
        try:
            obj = json.loads(self._file(key).read_text(encoding="utf-8"))
            return [_diag_from_json(path, d) for d in obj["diagnostics"]]
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, key: Optional[str], diagnostics: Iterable[Diagnostic]) -> None:
        """Store ``diagnostics`` under ``key`` (atomically; a disk problem only costs the cache)."""
        if key is None:
            return
        target = self._file(key)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"diagnostics": [_diag_to_json(d) for d in diagnostics]}, f, default=str)
            os.replace(tmp, target)
        except (OSError, TypeError, ValueError):
            try:
                os.unlink(tmp)  # type: ignore[possibly-undefined]
            except (OSError, NameError):
                pass
