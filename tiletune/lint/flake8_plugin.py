"""flake8 plugin: reports the tiletune lint rules as ``TT001``...``TT009``.

Registered in pyproject.toml (``[project.entry-points."flake8.extension"]
TT = "tiletune.lint.flake8_plugin:TiletunePlugin"``), so ``flake8 --select TT``
runs it once the package is installed.  flake8 hands over the file's
``lines``; the plugin rebuilds the source from them and runs the same
:func:`tiletune.lint.lint_source` as ``tiletune lint``, launches in the other
modules of the package included.  A file the tiletune analysis cannot read is
reported as ``TT000`` with its line and column.  A file Python itself cannot
parse never reaches a plugin: flake8 stops before running any and reports its
own ``E999`` (select it with ``--select TT,E999``).

Option: ``--tiletune-target`` (also ``tiletune-target`` in a flake8 config),
the chip TT009 checks hand-written configs against (default h100).
"""

from __future__ import annotations

import os
from typing import Any, Iterator, Optional

from tiletune.errors import AnalysisError
from tiletune.version import __version__

from .registry import DEFAULT_TARGET

__all__ = ["TiletunePlugin"]


class TiletunePlugin:
    """flake8 tree-less plugin (``tree`` is accepted but unused: the analysis
    works on libcst trees, rebuilt from ``lines``)."""

    name = "tiletune"
    version = __version__
    target: str = DEFAULT_TARGET

    def __init__(self, tree: Any, filename: str, lines: Optional[list[str]] = None):
        self.filename = filename
        self.lines = lines

    @classmethod
    def add_options(cls, option_manager: Any) -> None:
        """Register ``--tiletune-target``."""
        option_manager.add_option(
            "--tiletune-target",
            default=DEFAULT_TARGET,
            parse_from_config=True,
            help="chip the tiletune TT009 rule checks hand-written configs against (default: %(default)s)",
        )

    @classmethod
    def parse_options(cls, options: Any) -> None:
        """Read ``--tiletune-target``."""
        cls.target = getattr(options, "tiletune_target", DEFAULT_TARGET) or DEFAULT_TARGET

    def _source(self) -> str:
        if self.lines is not None:
            return "".join(self.lines)
        from tiletune.analysis.source import read_source

        return read_source(self.filename)

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        """Yield ``(line, column, "TTnnn message", type)`` per diagnostic (flake8 adds 1 to the column)."""
        from .registry import lint_source

        try:
            source = self._source()
        except (OSError, UnicodeDecodeError, AnalysisError):
            return
        project = self.filename not in ("-", "stdin") and os.path.isfile(self.filename)
        for d in lint_source(source, self.filename, target=self.target, project=project):
            if d.path != self.filename:
                continue  # a finding in another file: flake8 reports per file
            yield d.line, d.column, f"{d.code} {d.message}", type(self)
