"""The one result type every lint front end (CLI, flake8 plugin, LSP) reports.

Positions follow the analysis model: ``line``/``end_line`` are 1-based,
``column``/``end_column`` are 0-based and ``end_column`` points just past the
range.  Front ends convert (text output and flake8 print ``column + 1``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

__all__ = ["Diagnostic", "SEVERITIES"]

#: Severity names, most severe first.  ``error``: the kernel fails (or tunes
#: garbage) at run time; ``warning``: it runs but its tiling is not tuned.
SEVERITIES = ("error", "warning")


@dataclass(frozen=True)
class Diagnostic:
    """One finding of one rule.

    ``kernel`` and ``param`` name what the finding is about (``param`` is
    ``None`` for kernel-level findings).  ``fix`` is the title of the quick
    fix :func:`tiletune.lint.fixes.apply_fix` can make, or ``None`` when there
    is none; ``fix_data`` carries what the fix needs beyond the position
    (JSON-serialisable: it travels through the LSP ``Diagnostic.data``).
    """

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    code: str
    message: str
    kernel: Optional[str] = None
    param: Optional[str] = None
    severity: str = "warning"
    fix: Optional[str] = None
    fix_data: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def fixable(self) -> bool:
        """True when a quick fix is available."""
        return self.fix is not None

    def sort_key(self) -> tuple:
        """Order by file, position, then code."""
        return (self.path, self.line, self.column, self.code, self.message)

    def format_text(self) -> str:
        """flake8-style ``path:line:col: CODE message`` with a 1-based column."""
        return f"{self.path}:{self.line}:{self.column + 1}: {self.code} {self.message}"

    def to_dict(self) -> dict[str, Any]:
        """JSON form.  Columns here are 1-based (``end_column`` exclusive), as in
        the text output and SARIF."""
        return {
            "path": self.path,
            "line": self.line,
            "column": self.column + 1,
            "end_line": self.end_line,
            "end_column": self.end_column + 1,
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "kernel": self.kernel,
            "param": self.param,
            "fix": self.fix,
        }
