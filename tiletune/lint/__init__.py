"""tiletune lint: rules over the analysis that flag kernels whose tiling cannot
be tuned, with three thin front ends over the one rule set: ``tiletune lint``
(:mod:`.cli`), the flake8 plugin (:mod:`.flake8_plugin`, codes ``TT``) and
``tiletune lsp`` (:mod:`.server`).  Rules are documented in ``docs/lint.md``.
"""

from .diagnostic import Diagnostic
from .registry import (
    DEFAULT_TARGET,
    Rule,
    UsageError,
    all_rules,
    lint_file,
    lint_paths,
    lint_source,
    select_codes,
)

__all__ = [
    "DEFAULT_TARGET",
    "Diagnostic",
    "Rule",
    "UsageError",
    "all_rules",
    "lint_file",
    "lint_paths",
    "lint_source",
    "select_codes",
]
