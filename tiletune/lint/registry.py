"""The rule base class, the rule registry and the entry points every front end calls.

Rules are arranged as Fixit arranges its rules: one module per rule under
:mod:`tiletune.lint.rules`, each holding one :class:`Rule` subclass with its
documentation, its ``VALID``/``INVALID`` examples (the tests run them and
``docs/lint.md`` shows the first of each) and its safe quick fix.  Unlike a
Fixit rule, a tiletune rule does not visit syntax nodes: it reads the
module's analysis (:class:`LintContext`), which already ties kernel
signatures, decorators, autotune arguments and launch sites together, so
rules run once per module.

Front ends: :func:`lint_source` (flake8 plugin, LSP), :func:`lint_file`,
:func:`iter_lint_paths` / :func:`lint_paths` (CLI; see :mod:`.runner`).
"""

from __future__ import annotations

import gc
import textwrap
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Optional, Sequence

from .diagnostic import Diagnostic
from .prefilter import might_have_kernels
# The rule base and the context rules read live in .rule, which the rule modules import (never this
# registry, which imports them): re-exported here for every caller of the registry.
from .rule import ANALYSIS_FAILED, DEFAULT_TARGET, RULES, Invalid, LintContext, Rule, UsageError

__all__ = [
    "Rule",
    "Invalid",
    "LintContext",
    "RULES",
    "all_rules",
    "select_codes",
    "lint_source",
    "lint_file",
    "render_rules_markdown",
    "UsageError",
    "DEFAULT_TARGET",
    "ANALYSIS_FAILED",
]



def _load_rules() -> None:
    if RULES:
        return
    from .rules import RULE_CLASSES

    for cls in RULE_CLASSES:
        if cls.code in RULES:
            raise ValueError(f"lint rule {cls.code} defined twice ({RULES[cls.code].name}, {cls.name})")
        RULES[cls.code] = cls()


def all_rules() -> list[Rule]:
    """Every rule, by code."""
    _load_rules()
    return [RULES[c] for c in sorted(RULES)]


def get_rule(code: str) -> Rule:
    """The rule with ``code`` (KeyError listing the codes otherwise)."""
    _load_rules()
    try:
        return RULES[code]
    except KeyError:
        raise KeyError(f"no tiletune lint rule {code!r} (known: {', '.join(sorted(RULES))})") from None


def select_codes(select: Optional[Sequence[str]] = None, ignore: Optional[Sequence[str]] = None) -> frozenset[str]:
    """The codes to run: those matching a ``select`` prefix (all by default)
    and no ``ignore`` prefix, flake8-style (``TT00`` selects TT000-TT009).

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


def analysis_failed(path: str, exc: BaseException) -> Diagnostic:
    """The TT000 diagnostic for a file the analysis rejected with ``exc``."""
    line = getattr(exc, "line", None) or getattr(exc, "lineno", None) or 1
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
    module: Any = None,
    project: bool = False,
) -> list[Diagnostic]:
    """Run the rules on ``source`` and return the diagnostics, sorted.

    ``codes`` (from :func:`select_codes`) overrides ``select``/``ignore``.
    ``module`` is an already computed analysis of ``source`` (else it is
    analysed here).  ``project=True`` (``path`` is a real file) lets rules
    read the launches of its kernels in the other modules of its package.  A file the
    analysis rejects (syntax error, bug) gives one ``TT000`` diagnostic
    instead of raising.
    """
    # The analysis pauses the cyclic collector while it builds the syntax tree and its records; the
    # rules then read them: a collection there would walk all of them (a lint of a 400-file library
    # spent 12% of its time so).  They are freed by reference counting when the file is done, the
    # index the analysis kept for the rules included.
    # Spans are read when a rule reports (few are): the positions of most statements are never computed.
    from tiletune.analysis.source import lazy_spans

    with _collector_paused(), lazy_spans():
        try:
            return _lint_source(source, path, target=target, select=select, ignore=ignore, codes=codes,
                                module=module, project=project)
        finally:
            _forget_text()


@contextmanager
def _collector_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _lint_source(source: str, path: str, *, target: str, select: Optional[Sequence[str]],
                 ignore: Optional[Sequence[str]], codes: Optional[frozenset[str]], module: Any,
                 project: bool) -> list[Diagnostic]:
    if codes is None:
        codes = select_codes(select, ignore)
    else:
        _load_rules()
    if module is None:
        if not might_have_kernels(source):
            return []
        try:
            module = _analyze(source, path, codes)
        except Exception as exc:  # the lint must survive any input
            return [analysis_failed(path, exc)] if ANALYSIS_FAILED in codes else []
    ctx = LintContext(module=module, source=source, path=path, target=target, project=project)
    out: list[Diagnostic] = []
    for code in sorted(codes):
        try:
            out.extend(RULES[code].check(ctx))
        except Exception as exc:  # a rule bug must not hide the other rules' findings
            out.append(
                Diagnostic(path, 1, 0, 1, 1, ANALYSIS_FAILED, f"rule {code} failed on this file ({type(exc).__name__}: {exc}); "
                           f"the other rules ran; please report it", severity="error")
            )
    return sorted(set(out), key=Diagnostic.sort_key)


def _forget_text() -> None:
    from tiletune.analysis.resolver import forget_text

    forget_text()


def _analyze(source: str, path: str, codes: frozenset[str]) -> Any:
    from tiletune.analysis import analyze_source

    return analyze_source(source, file=path, wants_body=body_wanted(codes))


def body_wanted(codes: frozenset[str]) -> Callable[[Any, Any], bool]:
    """The analysis' ``wants_body(module, kernel)`` for a lint running ``codes``: a kernel's body (most of
    the analysis) is read only when one of those rules reads it (:meth:`Rule.needs_body`)."""
    _load_rules()
    rules = [RULES[c] for c in sorted(codes)]

    def wants_body(module: Any, kernel: Any) -> bool:
        return any(r.needs_body(module, kernel) for r in rules)

    return wants_body


def read_python_source(path: str) -> str:
    """A file's text as Python reads it (PEP 263 coding line, UTF-8 BOM)."""
    from tiletune.analysis.source import read_source

    return read_source(path)


def lint_file(path: str, **kwargs: Any) -> list[Diagnostic]:
    """Lint one file, with the launches of its kernels elsewhere in its package
    (see :func:`lint_source` for the options)."""
    try:
        source = read_python_source(path)
    except Exception as exc:  # unreadable, undecodable: one TT000
        codes = kwargs.get("codes")
        if codes is not None and ANALYSIS_FAILED not in codes:
            return []
        return [analysis_failed(path, exc)]
    kwargs.setdefault("project", True)
    return lint_source(source, path, **kwargs)


def render_rules_markdown() -> str:
    """The "Rules" section of ``docs/lint.md``, generated from the rule modules
    (a test keeps the doc and the rules in step)."""
    parts = []
    for r in all_rules():
        parts.append(f"### {r.code} `{r.name}`: {r.summary}\n")
        parts.append(f"Severity: {r.severity}. Module: `tiletune/lint/rules/{_module_name(r)}.py`.\n")
        parts.append(f"**What.** {r.what}\n")
        parts.append(f"**Why.** {r.why}\n")
        fix = textwrap.dedent(r.FIX).strip() if r.FIX else "none."
        parts.append(f"**Quick fix.** {fix}\n")
        if r.bad:
            parts.append("Reported:\n\n```python\n" + r.bad + "```\n")
        if r.good:
            parts.append("Clean:\n\n```python\n" + r.good + "```\n")
    return "\n".join(parts)


def _module_name(r: Rule) -> str:
    return type(r).__module__.rsplit(".", 1)[-1]
