"""A cheap text test that skips files holding no kernel (most files of a
package hold none, and parsing is the expensive part of linting)."""

from __future__ import annotations

import re

__all__ = ["might_have_kernels"]

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


def might_have_kernels(source: str) -> bool:
    """False only when ``source`` certainly holds no kernel: a kernel needs a
    ``jit``/``autotune``/``heuristics`` decorator (or a ``jit(...)`` call) that
    is bare or reached through a name imported from triton or tiletune.
    Conservative: when in doubt the file is analysed."""
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
