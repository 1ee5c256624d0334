"""The rule registry and the one entry point every front end calls.

A rule is a function over a module's analysis (:class:`LintContext`: the
:class:`~tiletune.analysis.model.ModuleSpec` plus the source) that yields
:class:`~tiletune.lint.diagnostic.Diagnostic` s.  Rules are cross-node: they
join kernel signatures, decorators, autotune arguments and launch sites that
the analysis has already tied together, so they run once per module, not
once per syntax node.

Each rule carries a ``bad`` and a ``good`` example (whole modules); the tests
run both and ``docs/lint.md`` shows them (:func:`render_rules_markdown`).

Front ends: :func:`lint_source` (flake8 plugin, LSP), :func:`lint_paths` (CLI).
"""

from __future__ import annotations

import os
import re
import textwrap
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Optional, Sequence

from .diagnostic import Diagnostic

__all__ = [
    "Rule",
    "LintContext",
    "RULES",
    "rule",
    "all_rules",
    "select_codes",
    "lint_source",
    "lint_file",
    "lint_paths",
    "iter_python_files",
    "render_rules_markdown",
    "UsageError",
    "DEFAULT_TARGET",
    "ANALYSIS_FAILED",
]

DEFAULT_TARGET = "h100"
#: Code of the pseudo-rule reported when a file cannot be analysed.
ANALYSIS_FAILED = "TT000"


class UsageError(ValueError):
    """Bad front-end input: an unknown code in --select/--ignore, a missing path, an unknown target."""


@dataclass(frozen=True)
class Rule:
    """One lint rule.

    ``check(ctx)`` yields the rule's diagnostics for one module (build them
    with :meth:`LintContext.report`).  ``what``/``why`` are the doc entry;
    ``bad`` triggers the rule, ``good`` is the same code made clean.
    """

    code: str
    name: str
    summary: str
    severity: str
    what: str
    why: str
    bad: str
    good: str
    check: Optional[Callable[["LintContext"], Iterable[Diagnostic]]] = None
    fixable: bool = False


RULES: dict[str, Rule] = {}


def rule(
    code: str,
    name: str,
    summary: str,
    *,
    severity: str,
    what: str,
    why: str,
    bad: str,
    good: str,
    fixable: bool = False,
) -> Callable[[Callable[["LintContext"], Iterable[Diagnostic]]], Callable[["LintContext"], Iterable[Diagnostic]]]:
    """Decorator registering ``check`` as rule ``code``."""

    def register(check: Callable[["LintContext"], Iterable[Diagnostic]]):
        if code in RULES:
            raise ValueError(f"lint rule {code} registered twice ({RULES[code].name}, {name})")
        RULES[code] = Rule(
            code=code,
            name=name,
            summary=summary,
            severity=severity,
            what=textwrap.dedent(what).strip(),
            why=textwrap.dedent(why).strip(),
            bad=textwrap.dedent(bad).strip() + "\n",
            good=textwrap.dedent(good).strip() + "\n",
            check=check,
            fixable=fixable,
        )
        return check

    return register


def _load_rules() -> None:
    from . import rules  # noqa: F401  (registers on import)


def all_rules() -> list[Rule]:
    """Every rule, by code."""
    _load_rules()
    return [RULES[c] for c in sorted(RULES)]


def select_codes(select: Optional[Sequence[str]] = None, ignore: Optional[Sequence[str]] = None) -> frozenset[str]:
    """The codes to run: those matching a ``select`` prefix (all by default)
    and no ``ignore`` prefix, flake8-style (``TT00`` selects TT001-TT009).

    Raises :class:`UsageError` for a prefix that matches no rule.
    """
    codes = [r.code for r in all_rules()]

    def expand(prefixes: Sequence[str], what: str) -> set[str]:
        out: set[str] = set()
        for raw in prefixes:
            p = raw.strip().upper()
            if not p:
                continue
            hit = {c for c in codes if c.startswith(p)}
            if not hit:
                raise UsageError(f"--{what} {raw!r} matches no tiletune lint rule (known: {', '.join(codes)})")
            out |= hit
        return out

    chosen = expand(select, "select") if select else set(codes)
    if ignore:
        chosen -= expand(ignore, "ignore")
    return frozenset(chosen)


@dataclass
class LintContext:
    """What a rule sees: the module's analysis, its source and the options."""

    module: "object"  # tiletune.analysis.model.ModuleSpec (kept lazy: analysis imports are heavy)
    source: str
    path: str
    target: str = DEFAULT_TARGET
    _lines: Optional[list[str]] = field(default=None, repr=False)

    @property
    def lines(self) -> list[str]:
        """The source split into lines (no line ends)."""
        if self._lines is None:
            self._lines = self.source.splitlines()
        return self._lines

    def report(
        self,
        code: str,
        span: "object",
        message: str,
        kernel: Optional[str] = None,
        param: Optional[str] = None,
        fix: Optional[str] = None,
        fix_data: Optional[dict] = None,
    ) -> Diagnostic:
        """A diagnostic of rule ``code`` at ``span`` (an analysis ``Span``)."""
        r = RULES[code]
        return Diagnostic(
            path=self.path,
            line=span.line,
            column=span.column,
            end_line=span.end_line,
            end_column=span.end_column,
            code=code,
            message=message,
            kernel=kernel,
            param=param,
            severity=r.severity,
            fix=fix,
            fix_data=dict(fix_data or {}),
        )


_KERNEL_WORDS = ("jit", "autotune", "heuristics")
_DECORATOR_OR_CALL = re.compile(
    r"^[ \t]*@[ \t]*((?:[A-Za-z_]\w*[ \t]*\.[ \t]*)*(?:jit|autotune|heuristics))\b"
    r"|\b((?:[A-Za-z_]\w*\.)*jit)[ \t]*\(",
    re.MULTILINE,
)
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+[\w.]+[ \t]+)?import\b[^\n]*", re.MULTILINE)
_IDENT = re.compile(r"[A-Za-z_]\w*")
_RENAMED = re.compile(r"\b(?:jit|autotune|heuristics)[ \t]+as[ \t]+[A-Za-z_]")


def _import_aliases(source: str) -> set[str]:
    """Names bound by import statements that mention triton or tiletune."""
    out = {"triton", "tiletune"}
    for m in _IMPORT.finditer(source):
        text = m.group(0)
        if "(" in text and ")" not in text:  # from x import (\n a,\n b)
            end = source.find(")", m.end())
            text = source[m.start(): end if end != -1 else m.end()]
        if "triton" in text or "tiletune" in text:
            out.update(_IDENT.findall(text))
    return out


def _might_have_kernels(source: str) -> bool:
    """Cheap text pre-filter (most files of a package hold no kernel, and
    parsing is the expensive part): a kernel needs a ``jit``/``autotune``/
    ``heuristics`` decorator (or a ``jit(...)`` call) that is bare or reached
    through a name imported from triton or tiletune.  Conservative: when in
    doubt the file is analysed."""
    if not any(w in source for w in _KERNEL_WORDS):
        return False
    if "triton" not in source and "tiletune" not in source:
        # Only bare @jit / @autotune / @heuristics (a snippet without imports) can be kernels.
        return any("." not in (m.group(1) or m.group(2) or ".") for m in _DECORATOR_OR_CALL.finditer(source))
    if _RENAMED.search(source):
        return True  # from triton import jit as J: @J is a kernel too
    aliases = None
    for m in _DECORATOR_OR_CALL.finditer(source):
        dotted = re.sub(r"\s+", "", m.group(1) or m.group(2))
        root = dotted.split(".")[0]
        if "." not in dotted:
            return True
        if aliases is None:
            aliases = _import_aliases(source)
        if root in aliases:
            return True
    return False


def _analysis_failed(path: str, exc: BaseException) -> Diagnostic:
    line = getattr(exc, "line", None) or 1
    column = getattr(exc, "column", None) or 0
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    if not hasattr(exc, "message"):
        message = f"could not analyse this file ({type(exc).__name__}: {message}); no rule ran"
    else:
        message = f"could not analyse this file: {message}; no rule ran"
    return Diagnostic(
        path=path,
        line=line,
        column=column,
        end_line=line,
        end_column=column + 1,
        code=ANALYSIS_FAILED,
        message=message,
        severity="error",
    )


def lint_source(
    source: str,
    path: str = "<source>",
    *,
    target: str = DEFAULT_TARGET,
    select: Optional[Sequence[str]] = None,
    ignore: Optional[Sequence[str]] = None,
    codes: Optional[frozenset[str]] = None,
    module: "object" = None,
) -> list[Diagnostic]:
    """Run the rules on ``source`` and return the diagnostics, sorted.

    ``codes`` (from :func:`select_codes`) overrides ``select``/``ignore``.
    ``module`` is an already computed analysis of ``source`` (else it is
    analysed here).  A file the analysis rejects (syntax error, bug) gives one
    ``TT000`` diagnostic instead of raising.
    """
    if codes is None:
        codes = select_codes(select, ignore)
    else:
        _load_rules()
    if module is None:
        if not _might_have_kernels(source):
            return []
        try:
            from tiletune.analysis import analyze_source

            module = analyze_source(source, file=path)
        except Exception as exc:  # the lint must survive any input
            return [_analysis_failed(path, exc)] if ANALYSIS_FAILED in codes else []
    ctx = LintContext(module=module, source=source, path=path, target=target)
    out: list[Diagnostic] = []
    for code in sorted(codes):
        r = RULES[code]
        if r.check is None:
            continue
        out.extend(r.check(ctx))
    seen: set[Diagnostic] = set()
    unique = []
    for d in sorted(out, key=Diagnostic.sort_key):
        if d not in seen:
            seen.add(d)
            unique.append(d)
    return unique


def lint_file(path: str, **kwargs) -> list[Diagnostic]:
    """Lint one file (see :func:`lint_source` for the options)."""
    try:
        with open(path, encoding="utf-8") as f:
            source = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        codes = kwargs.get("codes")
        if codes is not None and ANALYSIS_FAILED not in codes:
            return []
        return [_analysis_failed(path, exc)]
    return lint_source(source, path, **kwargs)


_SKIP_DIRS = {"__pycache__", "node_modules", "build", "dist", "site-packages"}


def iter_python_files(paths: Iterable[str]) -> Iterator[str]:
    """Each ``*.py`` file under ``paths`` (files given explicitly are kept
    whatever their suffix), sorted, skipping hidden and build directories.

    Raises :class:`UsageError` for a path that does not exist.
    """
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS)
                for name in sorted(files):
                    if name.endswith(".py"):
                        yield os.path.join(root, name)
        elif os.path.exists(p):
            yield p
        else:
            raise UsageError(f"{p}: no such file or directory")


def lint_paths(paths: Sequence[str], jobs: Optional[int] = None, **kwargs) -> list[Diagnostic]:
    """Lint every Python file under ``paths`` (see :func:`lint_source`), in
    ``jobs`` processes (default: ``TILETUNE_LINT_JOBS`` or the CPU count;
    1 lints in this process).  Diagnostics come back in file order."""
    if "codes" not in kwargs or kwargs["codes"] is None:
        kwargs["codes"] = select_codes(kwargs.pop("select", None), kwargs.pop("ignore", None))
    else:
        kwargs.pop("select", None)
        kwargs.pop("ignore", None)
    files = list(iter_python_files(paths))
    jobs = _jobs(jobs, len(files))
    if jobs <= 1:
        out: list[Diagnostic] = []
        for f in files:
            out.extend(lint_file(f, **kwargs))
        return out
    return _lint_parallel(files, jobs, kwargs)


def _jobs(jobs: Optional[int], n_files: int) -> int:
    if jobs is None:
        env = os.environ.get("TILETUNE_LINT_JOBS")
        jobs = int(env) if env and env.isdigit() else (os.cpu_count() or 1)
    # A worker costs an interpreter's start; only worth it for many files.
    return max(1, min(jobs, n_files // 8 or 1))


def _lint_one(args: tuple) -> list[Diagnostic]:
    path, kwargs = args
    return lint_file(path, **kwargs)


def _lint_parallel(files: list[str], jobs: int, kwargs: dict) -> list[Diagnostic]:
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    # Workers inherit the imported analysis with "fork" (no re-import);
    # elsewhere they start fresh.
    methods = mp.get_all_start_methods()
    ctx = mp.get_context("fork" if "fork" in methods else None)
    if "fork" in methods:
        import tiletune.analysis  # noqa: F401  (warm the parent before forking)
        _load_rules()
    # Big files first so the last worker does not finish alone.
    order = sorted(files, key=lambda f: -_size(f))
    results: dict[str, list[Diagnostic]] = {}
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        for f, diags in zip(order, pool.map(_lint_one, [(f, kwargs) for f in order], chunksize=1)):
            results[f] = diags
    return [d for f in files for d in results[f]]


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def render_rules_markdown() -> str:
    """The "Rules" section of ``docs/lint.md``, generated from the registry
    (a test keeps the doc and the registry in step)."""
    parts = []
    for r in all_rules():
        parts.append(f"### {r.code} `{r.name}`: {r.summary}\n")
        parts.append(f"Severity: {r.severity}. Quick fix: {'yes' if r.fixable else 'no'}.\n")
        parts.append(f"**What.** {r.what}\n")
        parts.append(f"**Why.** {r.why}\n")
        parts.append("Bad:\n\n```python\n" + r.bad + "```\n")
        parts.append("Good:\n\n```python\n" + r.good + "```\n")
    return "\n".join(parts)
