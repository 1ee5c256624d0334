"""``tiletune lint`` and ``tiletune lsp``: argparse front ends over the one rule set.

``tiletune/cli.py`` wires them in with :func:`add_lint_parser` /
:func:`add_lsp_parser` and dispatches to :func:`run_lint` / :func:`run_lsp`
(each parser also sets ``func`` as a default).  ``python -m tiletune.lint``
runs them without the main CLI (:func:`main`).

Exit status of ``lint``: 0 clean, 1 something found, 2 usage error.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from typing import Any, Callable, Iterator, Optional, Sequence, TextIO

from .diagnostic import Diagnostic
from .registry import DEFAULT_TARGET, UsageError, all_rules, select_codes
from .runner import iter_lint_paths, iter_python_files

__all__ = [
    "add_lint_parser",
    "add_lsp_parser",
    "configure_lint_parser",
    "configure_lsp_parser",
    "run_lint",
    "run_lsp",
    "format_diagnostics",
    "to_sarif",
    "validate_target",
    "main",
]

FORMATS = ("text", "json", "sarif")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/tiletune/tiletune/blob/main/docs/lint.md"


# ----- parsers ---------------------------------------------------------------------


def _codes_arg(value: str) -> list[str]:
    return [c.strip() for c in value.split(",") if c.strip()]


def configure_lint_parser(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the ``lint`` arguments to ``p``."""
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or directories (walked for *.py)")
    p.add_argument("--target", default=DEFAULT_TARGET, help=f"chip hand-written configs must fit (TT009; default {DEFAULT_TARGET})")
    p.add_argument(
        "--select",
        action="append",
        type=_codes_arg,
        default=[],
        metavar="CODES",
        help="comma-separated codes or prefixes to run (default: all), e.g. TT001,TT003 or TT00",
    )
    p.add_argument("--ignore", action="append", type=_codes_arg, default=[], metavar="CODES", help="codes or prefixes to skip")
    p.add_argument("--format", choices=FORMATS, default="text", help="output format (default: text)")
    p.add_argument("--fix", action="store_true", help="apply the safe quick fixes in place, then report what is left")
    p.add_argument("--timing", action="store_true", help="print the files linted and the wall time on stderr")
    p.add_argument("--list-rules", action="store_true", help="print the rules and exit")
    p.add_argument(
        "--no-cache", action="store_true",
        help="lint every file again, ignoring the per-file result cache (TILETUNE_LINT_CACHE_DIR, else the user "
        "cache dir; TILETUNE_LINT_CACHE=0 also turns it off)",
    )
    p.add_argument(
        "-j", "--jobs", type=int, default=None, metavar="N",
        help="lint in N processes (default: TILETUNE_LINT_JOBS or the CPU count; 1 = in this process)",
    )
    p.set_defaults(func=run_lint)
    return p


def add_lint_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``lint`` subcommand to an ``add_subparsers()`` object."""
    p = subparsers.add_parser(
        "lint",
        help="report kernels whose tiling cannot be tuned (TT000-TT009)",
        description="Lint Triton kernels for tiling that cannot be tuned. Exit 0 clean, 1 findings, 2 usage error.",
    )
    return configure_lint_parser(p)


def configure_lsp_parser(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the ``lsp`` arguments to ``p``."""
    p.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default; accepted for editors that pass it)")
    p.add_argument("--target", default=DEFAULT_TARGET, help=f"chip for TT009 (default {DEFAULT_TARGET}; initializationOptions.target overrides)")
    p.add_argument("--select", action="append", type=_codes_arg, default=[], metavar="CODES", help="codes to run")
    p.add_argument("--ignore", action="append", type=_codes_arg, default=[], metavar="CODES", help="codes to skip")
    p.set_defaults(func=run_lsp)
    return p


def add_lsp_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``lsp`` subcommand (a language server over stdio)."""
    p = subparsers.add_parser(
        "lsp",
        help="language server (stdio): lint diagnostics and quick fixes in the editor",
        description="Run the tiletune language server over stdin/stdout.",
    )
    return configure_lsp_parser(p)


# ----- lint ------------------------------------------------------------------------


def _flatten(groups: Optional[Sequence[Sequence[str]]]) -> list[str]:
    return [c for g in (groups or []) for c in g]


def validate_target(name: str) -> None:
    """Raise :class:`UsageError` when synthesis knows no target ``name`` (accept anything if synthesis is not there)."""
    try:
        from tiletune.synthesis import get_target
    except ImportError:
        return
    try:
        get_target(name)
    except Exception as exc:
        from tiletune.synthesis.targets import TARGETS

        if "unknown target" in str(exc):  # said in the command line's words, not the Python API's
            raise UsageError(f"--target {name}: unknown target; use one of {', '.join(TARGETS)}, or a JSON "
                             "override such as --target '{\"base\": \"h100\", \"shared_bytes\": 101376}'") from exc
        raise UsageError(f"--target {name}: {exc}") from exc


def run_lint(args: argparse.Namespace, stdout: Optional[TextIO] = None, stderr: Optional[TextIO] = None) -> int:
    """Run ``tiletune lint`` with parsed ``args``; returns the exit status.

    Text output streams: each file's findings are printed as soon as that file
    is done (files finish in any order; each file's lines stay together).  On
    a terminal, a progress bar on stderr shows the files done.
    """
    err = stderr or sys.stderr
    try:
        if getattr(args, "list_rules", False):
            out = stdout or sys.stdout
            for r in all_rules():
                fix = " [fix]" if r.fixable else ""
                out.write(f"{r.code} {r.name} ({r.severity}){fix}: {r.summary}\n")
            return 0
        if not args.paths:
            raise UsageError("no PATH given (files or directories to lint)")
        codes = select_codes(_flatten(args.select), _flatten(args.ignore))
        validate_target(args.target)
        files = list(iter_python_files(args.paths))
    except UsageError as exc:
        err.write(f"tiletune lint: error: {exc}\n")
        return 2
    start = time.perf_counter()
    if getattr(args, "fix", False):
        for f in files:
            _fix_file(f, args.target, err)
    stream = args.format == "text"
    found: dict[str, list[Diagnostic]] = {}
    with _progress(err, len(files)) as advance:
        from .result_cache import cache_enabled

        use_cache = cache_enabled() and not getattr(args, "no_cache", False) and not getattr(args, "fix", False)
        for path, diags in iter_lint_paths(files, jobs=getattr(args, "jobs", None), cache=use_cache,
                                           target=args.target, codes=codes):
            found[path] = diags
            if stream and diags:
                # sys.stdout is looked up at each write: the progress display
                # redirects it so findings print above the bar.
                out = stdout or sys.stdout
                out.write(format_diagnostics(diags, "text"))
                out.flush()  # a pipe or file sees each file's findings as it is done, not at the end
            advance(path)
    diagnostics = [d for f in files for d in found.get(f, [])]
    if not stream:
        (stdout or sys.stdout).write(format_diagnostics(diagnostics, args.format))
    if getattr(args, "timing", False):
        err.write(f"tiletune lint: {len(files)} files, {len(diagnostics)} findings in {time.perf_counter() - start:.2f} s\n")
    return 1 if diagnostics else 0


@contextlib.contextmanager
def _progress(err: TextIO, total: int, command: str = "lint") -> Iterator[Callable[[str], None]]:
    """A callable advancing a rich progress bar on ``err`` when it is a terminal
    (and there is more than one file); a no-op otherwise."""
    if total < 2 or not getattr(err, "isatty", lambda: False)():
        yield lambda path: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(file=err)
    with Progress(
        TextColumn(f"tiletune {command}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        TextColumn("{task.fields[path]}"), console=console, transient=True,
    ) as progress:
        task = progress.add_task(command, total=total, path="")

        def advance(path: str) -> None:
            progress.update(task, advance=1, path=os.path.basename(path))

        yield advance


def _fix_file(path: str, target: str, err: TextIO) -> None:
    from .fixes import fix_all
    from .registry import read_python_source

    try:
        source = read_python_source(path)
    except Exception:  # noqa: BLE001 - the lint pass reports it as TT000
        return
    new, fixed = fix_all(source, path, target=target)
    if fixed and new != source:
        with open(path, "w", encoding="utf-8") as f:
            f.write(new)
        for d in fixed:
            err.write(f"{path}:{d.line}:{d.column + 1}: fixed {d.code} ({d.fix})\n")


def format_diagnostics(diagnostics: Sequence[Diagnostic], fmt: str = "text") -> str:
    """The diagnostics as ``text`` (one ``path:line:col: CODE message`` per
    line), ``json`` (a list of objects) or ``sarif`` (SARIF 2.1.0)."""
    if fmt == "text":
        return "".join(d.format_text() + "\n" for d in diagnostics)
    if fmt == "json":
        return json.dumps([d.to_dict() for d in diagnostics], indent=2) + "\n"
    if fmt == "sarif":
        return json.dumps(to_sarif(diagnostics), indent=2) + "\n"
    raise UsageError(f"unknown format {fmt!r} (one of {', '.join(FORMATS)})")


_SARIF_LEVEL = {"error": "error", "warning": "warning"}


def _uri(path: str) -> str:
    p = path.replace(os.sep, "/")
    if os.path.isabs(path):
        return "file://" + (p if p.startswith("/") else "/" + p)
    return p


def to_sarif(diagnostics: Sequence[Diagnostic]) -> dict:
    """A minimal valid SARIF 2.1.0 log: one run, the rules, one result per diagnostic."""
    from tiletune.version import __version__

    rules = all_rules()
    index = {r.code: i for i, r in enumerate(rules)}
    results = []
    for d in diagnostics:
        region = {
            "startLine": d.line,
            "startColumn": d.column + 1,
            "endLine": max(d.end_line, d.line),
            "endColumn": max(d.end_column + 1, 1),
        }
        if region["endLine"] == region["startLine"] and region["endColumn"] < region["startColumn"]:
            region["endColumn"] = region["startColumn"]
        result = {
            "ruleId": d.code,
            "level": _SARIF_LEVEL.get(d.severity, "warning"),
            "message": {"text": d.message},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(d.path)}, "region": region}}],
        }
        if d.code in index:
            result["ruleIndex"] = index[d.code]
        props = {k: v for k, v in (("kernel", d.kernel), ("param", d.param)) if v is not None}
        if props:
            result["properties"] = props
        results.append(result)
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "tiletune",
                        "version": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": [
                            {
                                "id": r.code,
                                "name": r.name,
                                "shortDescription": {"text": r.summary},
                                "fullDescription": {"text": r.what},
                                "help": {"text": r.why},
                                "defaultConfiguration": {"level": _SARIF_LEVEL.get(r.severity, "warning")},
                            }
                            for r in rules
                        ],
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


# ----- lsp -------------------------------------------------------------------------


def run_lsp(args: argparse.Namespace) -> int:
    """Run the language server over stdio until the client exits."""
    try:
        codes = select_codes(_flatten(getattr(args, "select", None)), _flatten(getattr(args, "ignore", None)))
        validate_target(args.target)
    except UsageError as exc:
        sys.stderr.write(f"tiletune lsp: error: {exc}\n")
        return 2
    from .server import create_server

    server = create_server(target=args.target, codes=codes)
    server.start_io()
    return server.exit_code


# ----- standalone ------------------------------------------------------------------


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m tiletune.lint {lint,lsp} ...`` (also: ``python -m tiletune.lint PATH...`` lints)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python -m tiletune.lint", description="tiletune lint front ends")
    sub = parser.add_subparsers(dest="command", metavar="{lint,lsp}")
    add_lint_parser(sub)
    add_lsp_parser(sub)
    if argv and argv[0] not in ("lint", "lsp", "-h", "--help"):
        argv.insert(0, "lint")
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_usage(sys.stderr)
        return 2
    return args.func(args)
