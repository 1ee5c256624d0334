"""The base of every lint rule: :class:`Rule`, its :class:`Invalid` examples and the
:class:`LintContext` a rule reads.

The rule modules under :mod:`tiletune.lint.rules` import this module only;
:mod:`tiletune.lint.registry` imports the rule modules, fills :data:`RULES`
and runs them (so the imports go one way: registry -> rules -> rule).
"""

from __future__ import annotations

import os
import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Iterable, Optional, Sequence

from .diagnostic import Diagnostic

if TYPE_CHECKING:  # the analysis and libcst are heavy imports; rules load them lazily
    import libcst as cst
    from libcst.metadata import MetadataWrapper

__all__ = ["Rule", "Invalid", "LintContext", "RULES", "UsageError", "FixError", "DEFAULT_TARGET", "ANALYSIS_FAILED"]


class FixError(ValueError):
    """The fix cannot be made (the code it targets is not where the diagnostic says, or the result would not parse)."""


DEFAULT_TARGET = "h100"
#: Code of the pseudo-rule reported when a file cannot be analysed.
ANALYSIS_FAILED = "TT000"


class UsageError(ValueError):
    """Bad front-end input: an unknown code in --select/--ignore, a missing path, an unknown target."""


@dataclass(frozen=True)
class Invalid:
    """An ``INVALID`` example: ``code`` triggers the rule; ``fixed`` is what the
    rule's quick fix turns it into (``None``: the finding must carry no fix)."""

    code: str
    fixed: Optional[str] = None


class Rule:
    """One lint rule (subclass it in a module of :mod:`tiletune.lint.rules`).

    Class attributes: ``code``, ``name``, ``summary``, ``severity``
    (``"error"``: the kernel fails or tunes garbage at run time;
    ``"warning"``: it runs but its tiling is not tuned), ``WHAT``/``WHY``
    (the documentation), ``FIX`` (when a quick fix is offered, or ``None``),
    ``VALID`` (sources that must stay clean) and ``INVALID``
    (:class:`Invalid` sources that must trigger it).

    :meth:`check` yields the rule's diagnostics for one module; a fixable
    rule overrides :meth:`fix`.
    """

    code: ClassVar[str] = ""
    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    severity: ClassVar[str] = "warning"
    WHAT: ClassVar[str] = ""
    WHY: ClassVar[str] = ""
    FIX: ClassVar[Optional[str]] = None
    VALID: ClassVar[Sequence[str]] = ()
    INVALID: ClassVar[Sequence[Invalid]] = ()

    def check(self, ctx: "LintContext") -> Iterable[Diagnostic]:
        """The diagnostics of this rule for one module."""
        return ()

    def needs_body(self, module: Any, kernel: Any) -> bool:
        """True when :meth:`check` may read, for ``kernel``, a fact only the analysis of
        its body fills (tiling parameters and their roles, bounds and powers of two,
        memory accesses, the graph, the footprint, the meaning, the shared
        tunability verdict).

        Asked before the body is analysed: ``kernel``'s declaration (decorators,
        parameters, autotune arguments, heuristics, launches in its module) and
        ``module.enables_tiletune`` are filled, nothing else.  When no selected rule
        needs a kernel's body, the lint does not analyse it, and :meth:`check` then
        sees the body's facts empty (no tiling parameter, no access): it must
        report exactly what it reports with the body analysed.  The default,
        True, is always safe; a rule that reads only declarations says False.
        """
        return True

    def fix(self, wrapper: "MetadataWrapper", diagnostic: Diagnostic) -> "cst.Module":
        """The module with ``diagnostic``'s quick fix made (raise
        :class:`tiletune.lint.fixes.FixError` when it cannot be made)."""
        raise FixError(f"{self.code} has no quick fix")

    @property
    def fixable(self) -> bool:
        """True when the rule can offer a quick fix (some findings may still carry none)."""
        return type(self).fix is not Rule.fix

    @property
    def what(self) -> str:
        """``WHAT``, dedented."""
        return textwrap.dedent(self.WHAT).strip()

    @property
    def why(self) -> str:
        """``WHY``, dedented."""
        return textwrap.dedent(self.WHY).strip()

    @property
    def bad(self) -> str:
        """The first ``INVALID`` example (the one the docs show)."""
        return _example(self.INVALID[0].code) if self.INVALID else ""

    @property
    def good(self) -> str:
        """The first ``VALID`` example (the one the docs show)."""
        return _example(self.VALID[0]) if self.VALID else ""

    def valid_examples(self) -> list[str]:
        """Every ``VALID`` source, dedented."""
        return [_example(v) for v in self.VALID]

    def invalid_examples(self) -> list[Invalid]:
        """Every ``INVALID`` example, dedented."""
        return [Invalid(_example(i.code), None if i.fixed is None else _example(i.fixed)) for i in self.INVALID]


def _example(text: str) -> str:
    return textwrap.dedent(text).strip() + "\n"


#: Every rule by code, filled by :mod:`tiletune.lint.registry` when the rules load.
RULES: dict[str, Rule] = {}


@dataclass
class LintContext:
    """What a rule sees: the module's analysis, its source and the options."""

    module: Any  # tiletune.analysis.model.ModuleSpec
    source: str
    path: str
    target: str = DEFAULT_TARGET
    project: bool = False
    _lines: Optional[list[str]] = field(default=None, repr=False)
    _launches: dict[int, list[Any]] = field(default_factory=dict, repr=False)

    def all_launches(self, kernel: Any) -> list[Any]:
        """The kernel's launches in this module and, when linting a file of a
        package (``project``), in the other modules of the package.  Those are
        read only when a rule asks (reading them costs more than the rest of
        the lint), once per kernel."""
        launches = list(kernel.launches) + list(kernel.project_launches)
        if not self.project or kernel.project_launches or not os.path.isfile(self.path):
            return launches
        if id(kernel) not in self._launches:
            from tiletune.analysis.frontend import _project_launches  # TODO(lead): public API

            self._launches[id(kernel)] = _project_launches(self.path, kernel.name)
        return launches + self._launches[id(kernel)]

    @property
    def lines(self) -> list[str]:
        """The source split into lines (no line ends)."""
        if self._lines is None:
            self._lines = self.source.splitlines()
        return self._lines

    def report(
        self,
        code: str,
        span: Any,
        message: str,
        kernel: Optional[str] = None,
        param: Optional[str] = None,
        fix: Optional[str] = None,
        fix_data: Optional[dict] = None,
    ) -> Diagnostic:
        """A diagnostic of rule ``code`` at ``span`` (an analysis ``Span``)."""
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
            severity=RULES[code].severity,
            fix=fix,
            fix_data=dict(fix_data or {}),
        )
