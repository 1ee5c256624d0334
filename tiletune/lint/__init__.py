"""tiletune lint: rules over the analysis that flag kernels whose tiling cannot
be tuned, with three thin front ends over the one rule set: ``tiletune lint``
(:mod:`.cli`), the flake8 plugin (:mod:`.flake8_plugin`, codes ``TT``) and
``tiletune lsp`` (:mod:`.server`).  One module per rule under
:mod:`.rules`; documented in ``docs/lint.md`` (generated from them).
"""

from .diagnostic import Diagnostic
from .registry import (
    DEFAULT_TARGET,
    Invalid,
    Rule,
    UsageError,
    all_rules,
    lint_file,
    lint_source,
    select_codes,
)
from .runner import iter_lint_paths, lint_paths

__all__ = [
    "DEFAULT_TARGET",
    "Diagnostic",
    "Invalid",
    "Rule",
    "UsageError",
    "all_rules",
    "iter_lint_paths",
    "lint_file",
    "lint_paths",
    "lint_source",
    "select_codes",
]
