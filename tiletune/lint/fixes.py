"""Applying quick fixes.  Each fix lives with its rule
(``Rule.fix``, a libcst transform in the rule's module); this module runs
them: :func:`apply_fix` makes one and checks the result still parses,
:func:`fix_all` makes every offered fix of a file, :func:`minimal_edit`
gives the changed lines (the LSP turns them into a ``WorkspaceEdit``).

A rule offers a fix (``Diagnostic.fix``) only when making it cannot change
what the kernel computes; the tests apply every fix offered on the dev
corpus and check that the analysis is unchanged except for the finding.
"""

from __future__ import annotations

import ast
from typing import Any, Optional, Sequence

from .diagnostic import Diagnostic
from .registry import get_rule
from .rule import FixError  # noqa: F401 - where callers have always found it

__all__ = ["FixError", "apply_fix", "fix_all", "minimal_edit"]


def apply_fix(source: str, diagnostic: Diagnostic) -> str:
    """The source with ``diagnostic``'s quick fix applied.

    Raises :class:`FixError` when the diagnostic has no fix or the fix cannot
    be made.
    """
    import libcst as cst
    from libcst.metadata import MetadataWrapper

    rule = get_rule(diagnostic.code)
    if not diagnostic.fixable or not rule.fixable:
        raise FixError(f"{diagnostic.code} at line {diagnostic.line} has no quick fix")
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        raise FixError(f"cannot fix a file that does not parse: {exc.message}") from exc
    new_source = rule.fix(MetadataWrapper(module), diagnostic).code
    if new_source == source:
        raise FixError(f"{diagnostic.code} fix for kernel {diagnostic.kernel!r} changed nothing at line {diagnostic.line}")
    try:
        ast.parse(new_source)
    except SyntaxError as exc:
        raise FixError(f"{diagnostic.code} fix for kernel {diagnostic.kernel!r} would not parse: {exc.msg}") from exc
    return new_source


def fix_all(
    source: str,
    path: str = "<source>",
    codes: Optional[Sequence[str]] = None,
    max_rounds: int = 50,
    **lint_kwargs: Any,
) -> tuple[str, list[Diagnostic]]:
    """Apply every offered fix (of ``codes``, default all), one at a time
    (re-linting in between, since a fix moves positions).  Returns the new
    source and the diagnostics fixed."""
    from .registry import all_rules, lint_source

    if codes is None:
        codes = [r.code for r in all_rules() if r.fixable]
    fixed: list[Diagnostic] = []
    failed: set[tuple] = set()
    for _ in range(max_rounds):
        diags = [
            d
            for d in lint_source(source, path, select=list(codes), **lint_kwargs)
            if d.fixable and (d.code, d.kernel, d.param, d.message) not in failed
        ]
        if not diags:
            break
        d = diags[0]
        try:
            source = apply_fix(source, d)
            fixed.append(d)
        except FixError:
            failed.add((d.code, d.kernel, d.param, d.message))
    return source, fixed


def minimal_edit(old: str, new: str) -> tuple[int, int, str]:
    """The smallest whole-line replacement turning ``old`` into ``new``:
    ``(first_line, end_line, text)`` (0-based lines, ``end_line`` exclusive)
    such that replacing lines ``[first_line, end_line)`` of ``old`` by
    ``text`` gives ``new``."""
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    start = 0
    while start < len(a) and start < len(b) and a[start] == b[start]:
        start += 1
    end_a, end_b = len(a), len(b)
    while end_a > start and end_b > start and a[end_a - 1] == b[end_b - 1]:
        end_a -= 1
        end_b -= 1
    return start, end_a, "".join(b[start:end_b])
