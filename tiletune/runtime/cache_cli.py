"""``tiletune cache list|show|clear``: look at and remove cached tuning winners.

``tiletune.cli`` wires it in with :func:`add_cache_parser` and
:func:`run_cache`; ``python -m tiletune.runtime.cache_cli list`` runs it alone.
Every subcommand takes ``--dir`` (default: :func:`tiletune.runtime.cache.cache_dir`).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, TextIO

from tiletune.runtime.cache import KINDS, cache_dir, read_cache_file

__all__ = [
    "add_cache_parser",
    "add_cache_subcommands",
    "run_cache",
    "find_cache_files",
    "format_config",
    "CacheNameError",
    "run_explain",
    "main",
]

#: How a cache file is named: ``<name>-<16 hex digits of the source hash>.json`` (see ``TuningCache``).
_CACHE_FILE = re.compile(r"^.+-[0-9a-f]{16}\.json$")


#: Characters a cache file's text must not send to a terminal raw: C0/C1 controls (escape sequences) and
#: the bidirectional overrides (text that reads otherwise than it is); shown as ``\xNN`` / ``\uNNNN``.
_UNPRINTABLE = {c: f"\\x{c:02x}" for c in [*range(0, 32), *range(127, 160)] if chr(c) not in "\n\t"}
_UNPRINTABLE.update({c: f"\\u{c:04x}" for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]})


class _Printable:
    """A text stream that escapes what :data:`_UNPRINTABLE` names: what a cache file holds (names, keys,
    values) reaches the terminal as text, never as a terminal escape sequence."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        """Write ``text`` with its control characters escaped."""
        return self.stream.write(text.translate(_UNPRINTABLE))

    def flush(self) -> None:
        """Flush the underlying stream."""
        self.stream.flush()


class CacheNameError(ValueError):
    """A NAME given to ``show``/``clear`` that could reach outside the cache directory (exit status 2)."""


def _inside(path: Path, directory: Path) -> bool:
    """True when ``path``'s real parent is ``<real directory>/<kind>`` (symlinked kind folders do not count)."""
    try:
        parent = Path(os.path.realpath(path.parent))
        root = Path(os.path.realpath(directory))
    except OSError:
        return False
    return parent.parent == root and parent.name in KINDS and path.parent.name == parent.name


def find_cache_files(directory: Path) -> List[Path]:
    """Every tiletune cache file under ``directory`` (``<dir>/<kind>/<name>-<hash>.json``), sorted.

    Only files named like a cache file, in a ``kernel``/``function`` folder that
    really lies in ``directory`` (not a symlink to elsewhere), are listed: these
    are the only files ``clear`` may delete.
    """
    if not directory.is_dir():
        return []
    # Anything named like a cache file is listed (a FIFO or device too: `list` reports it, never opens it blocking).
    return sorted(
        p for kind in KINDS for p in directory.glob(f"{kind}/*.json")
        if _CACHE_FILE.match(p.name) and not p.is_dir() and _inside(p, directory)
    )


def _human_size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB"):
        if size < 1024 or unit == "MiB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def format_config(config: Any) -> str:
    """A one-line readable form of a stored config: ``BLOCK_M=128, num_warps=4, ...`` or its JSON
    (any JSON value is shown, a malformed one too)."""
    if isinstance(config, dict) and isinstance(config.get("kwargs"), dict):
        parts = [f"{k}={v}" for k, v in config["kwargs"].items()]
        for k, v in config.items():
            if k == "kwargs" or (k == "extra" and not v) or v is None:
                continue
            parts.append(f"{k}={json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v}")
        return ", ".join(parts)
    return json.dumps(config, sort_keys=True)


def _best_ms(entry: Dict[str, Any]) -> Optional[float]:
    for field in ("best_ms", "time_ms"):  # kernel entries time every candidate; function entries keep time_ms
        best = entry.get(field)
        if isinstance(best, (int, float)) and not isinstance(best, bool):
            return float(best)
    timings = entry.get("timings_ms")
    if isinstance(timings, dict):
        times = [t for t in timings.values() if isinstance(t, (int, float)) and not isinstance(t, bool)]
        if times:
            return float(min(times))
    return None


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _describe(path: Path) -> Dict[str, Any]:
    """What ``list`` and ``show`` print about one file, without warnings."""
    try:
        data, reason = read_cache_file(path)
    except OSError as exc:
        data, reason = None, str(exc)
    kind = path.parent.name
    stem_name = path.stem.rsplit("-", 1)[0]
    info: Dict[str, Any] = {
        "path": str(path),
        "kind": kind,
        "name": stem_name,
        "size": _size(path),
    }
    if data is None:
        info["error"] = reason or "unreadable"
        return info
    info.update(
        kind=str(data.get("kind", kind)),
        name=str(data.get("name", stem_name)),
        source_hash=data.get("source_hash"),
        fingerprint=data.get("fingerprint"),
        entries=data["entries"],
    )
    return info


def _defined_names(source_path: Path) -> List[str]:
    """Names of every function defined in a Python source file (read safely, never imported)."""
    from tiletune.analysis.source import read_source
    from tiletune.errors import AnalysisError

    try:
        text = read_source(str(source_path))
    except AnalysisError as exc:
        raise CacheNameError(f"{source_path} cannot be read as a kernel source file ({exc})") from None
    try:
        tree = ast.parse(text, filename=str(source_path))
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise CacheNameError(f"{source_path} is not valid Python ({exc}); pass a kernel or function name") from None
    return sorted({n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))})


def _selector(directory: Path, name: str, files: Sequence[Path]):
    """How NAME selects cache files: a predicate over ``(path, info)``.

    NAME is a kernel/function name, a cache file's stem or file name, the path
    of a cache file inside ``directory``, or the path of a kernel's ``.py``
    source (selecting the cache files of the functions it defines, never the
    source itself).  Anything else with a path separator or a ``..`` raises
    :class:`CacheNameError`.
    """
    if not name or "\x00" in name:
        raise CacheNameError(f"cache NAME {name!r} is empty or holds a NUL byte; pass a kernel or function name")
    parts = re.split(r"[/\\]", name)
    if ".." in parts:
        raise CacheNameError(
            f"cache NAME {name!r} contains '..'; pass a kernel or function name as `tiletune cache list` shows it")
    has_sep = len(parts) > 1 or name.startswith("~")
    given = Path(name).expanduser()
    if os.path.isfile(given):  # a regular file (stat only: never opened here)
        real = os.path.realpath(given)
        mine = [p for p in files if os.path.realpath(p) == real]
        if mine:
            return lambda path, info: path in mine
        if given.suffix == ".py":
            names = set(_defined_names(given))
            return lambda path, info: info["name"] in names or path.stem.rsplit("-", 1)[0] in names
        raise CacheNameError(
            f"{name} is not a tiletune cache file in {directory} nor a kernel's .py source; pass a kernel or "
            "function name (see `tiletune cache list`)")
    if has_sep:
        raise CacheNameError(
            f"cache NAME {name!r} is a path that names no cache file in {directory} and no kernel source file; "
            "pass a kernel or function name without path separators (see `tiletune cache list`)")
    return lambda path, info: name in (info["name"], path.stem, path.name)


def _selected(directory: Path, name: Optional[str]) -> List[Dict[str, Any]]:
    files = find_cache_files(directory)
    keep = _selector(directory, name, files) if name is not None else None
    infos = [(p, _describe(p)) for p in files]
    return [i for p, i in infos if keep is None or keep(p, i)]


def _cmd_list(args: argparse.Namespace, out: TextIO) -> int:
    infos = _selected(args.dir, None)
    if not infos:
        print(f"no cache files in {args.dir}", file=out)
        return 0
    rows = [
        (i["kind"], i["name"], "corrupt" if "error" in i else str(len(i["entries"])), _human_size(i["size"]), i["path"])
        for i in infos
    ]
    header = ("KIND", "NAME", "ENTRIES", "SIZE", "PATH")
    widths = [max(len(r[c]) for r in rows + [header]) for c in range(4)]
    for row in [header] + rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[4], file=out)
    return 0


def _cmd_show(args: argparse.Namespace, out: TextIO) -> int:
    try:
        infos = _selected(args.dir, args.name)
    except CacheNameError as exc:
        print(f"tiletune cache show: {exc}", file=sys.stderr)
        return 2
    if getattr(args, "why", False):
        return run_explain(args.name, args.dir, out)
    if not infos:
        print(f"tiletune cache: no cache file named {args.name!r} in {args.dir} (see `tiletune cache list`)", file=sys.stderr)
        return 1
    if args.json:
        json.dump(infos, out, indent=2, sort_keys=True)
        out.write("\n")
        return 0
    for n, info in enumerate(infos):
        if n:
            print(file=out)
        print(f"{info['kind']} {info['name']}  ({info['path']})", file=out)
        if "error" in info:
            print(f"  corrupt: {info['error']}", file=out)
            continue
        fp = info.get("fingerprint") or {}
        versions = " ".join(f"{k}={v}" for k, v in sorted(fp.items())) if isinstance(fp, dict) else f"fingerprint={fp!r}"
        print(f"  source {info.get('source_hash')}  {versions}", file=out)
        if not info["entries"]:
            print("  (no entries)", file=out)
        for key, entry in sorted(info["entries"].items()):
            best = _best_ms(entry)
            timings = entry.get("timings_ms")
            details = [f"best {best:.4g} ms" if best is not None else "best -"]
            if isinstance(timings, dict):
                details.append(f"{len(timings)} candidates")
            for field in ("method", "created"):
                if isinstance(entry.get(field), (str, int, float)):
                    details.append(str(entry[field]))
            if entry.get("fingerprint") != info.get("fingerprint"):
                details.append("tuned under another fingerprint")
            print(f"  {key}", file=out)
            print(f"    -> {format_config(entry.get('config'))}", file=out)
            print(f"       {', '.join(details)}", file=out)
    return 0


def _cmd_clear(args: argparse.Namespace, out: TextIO) -> int:
    try:
        infos = _selected(args.dir, args.name)
    except CacheNameError as exc:
        print(f"tiletune cache clear: {exc}; nothing removed", file=sys.stderr)
        return 2
    if not infos:
        what = f"named {args.name!r} " if args.name else ""
        print(f"no cache files {what}in {args.dir}", file=out)
        return 0 if args.name is None else 1
    if not args.yes:
        if not sys.stdin.isatty():
            print(f"tiletune cache clear: would remove {len(infos)} file(s); pass --yes to confirm", file=sys.stderr)
            return 1
        answer = input(f"remove {len(infos)} cache file(s) from {args.dir}? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing removed", file=out)
            return 1
    removed = 0
    for info in infos:
        path = Path(info["path"])
        if not (_CACHE_FILE.match(path.name) and _inside(path, args.dir)):  # never anything but our own files
            print(f"tiletune cache clear: {path} is not a cache file inside {args.dir}; left alone", file=sys.stderr)
            continue
        for victim in (path, path.with_name(path.name + ".corrupt")):
            try:
                victim.unlink()
                removed += victim == path
            except FileNotFoundError:
                pass
            except OSError as exc:
                print(f"tiletune cache clear: cannot remove {victim}: {exc}", file=sys.stderr)
    print(f"removed {removed} cache file(s)", file=out)
    return 0 if removed == len(infos) else 1


def add_cache_subcommands(parser: argparse.ArgumentParser) -> None:
    """Add ``list``, ``show`` and ``clear`` to ``parser`` (dest ``cache_command``)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--dir", type=Path, default=None, help="cache directory (default: TILETUNE_CACHE_DIR or the user cache dir)"
    )
    sub = parser.add_subparsers(dest="cache_command", metavar="{list,show,clear}")
    sub.required = True
    sub.add_parser("list", parents=[common], help="one line per cache file: kind, name, entries, size, path")
    show = sub.add_parser("show", parents=[common], help="the cached winners of one kernel or function")
    show.add_argument("name", help="kernel/function name, file stem or path")
    show.add_argument("--json", action="store_true", help="print JSON instead of text")
    show.add_argument("--why", action="store_true",
                      help="why each cached config was chosen (same as `tiletune explain NAME`)")
    clear = sub.add_parser("clear", parents=[common], help="remove cache files (all of them when no NAME)")
    clear.add_argument("name", nargs="?", default=None, help="kernel/function name, file stem or path")
    clear.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")


def run_explain(name: str, directory: Optional[Path], out: TextIO) -> int:
    """Print why each cached config of ``name`` was chosen (``tiletune explain``); return the exit status."""
    from tiletune.runtime.explain import explain_cached

    root = Path(directory).expanduser() if directory is not None else cache_dir()
    try:  # NAME selects cache files as `show` does: never a file outside the cache (but a kernel's source)
        infos = _selected(root, name)
    except CacheNameError as exc:
        print(f"tiletune explain: {exc}", file=sys.stderr)
        return 2
    if not infos:
        print(f"tiletune explain: no cache file for {name!r} in {root}; `tiletune cache list` shows what is "
              "cached (set TILETUNE_CACHE_DIR or pass --dir for another cache)", file=sys.stderr)
        return 1
    for info in infos:
        _Printable(out).write(explain_cached(info["path"], root))
    return 1 if any("error" in info for info in infos) else 0


def add_cache_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``cache`` command to a top-level CLI's ``add_subparsers()`` object; return its parser.

    Dispatch the parsed namespace with :func:`run_cache` (the parser also sets
    ``func=run_cache`` as a default).
    """
    parser = subparsers.add_parser("cache", help="list, show or clear cached tuning results")
    add_cache_subcommands(parser)
    parser.set_defaults(func=run_cache)
    return parser


def run_cache(args: argparse.Namespace) -> int:
    """Run a parsed ``cache`` subcommand; return the exit status."""
    if getattr(args, "dir", None) is None:
        args.dir = cache_dir()
    args.dir = Path(args.dir).expanduser()
    commands = {"list": _cmd_list, "show": _cmd_show, "clear": _cmd_clear}
    return commands[args.cache_command](args, _Printable(sys.stdout))  # type: ignore[arg-type]


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m tiletune.runtime.cache_cli {list,show,clear}``."""
    parser = argparse.ArgumentParser(prog="tiletune cache", description="Look at and remove cached tuning winners.")
    add_cache_subcommands(parser)
    try:
        return run_cache(parser.parse_args(argv))
    except BrokenPipeError:  # e.g. piped into head
        return 0


if __name__ == "__main__":
    sys.exit(main())
