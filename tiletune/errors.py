"""Exceptions tiletune raises.  Every message names the kernel, the parameter
(where there is one) and what to do next."""

from __future__ import annotations

from typing import Optional


class TiletuneError(Exception):
    """Base class of every error tiletune raises on purpose."""


class AnalysisError(TiletuneError):
    """Kernel source that cannot be analysed (syntax error, kernel not found...).

    ``str(err)`` is ``"file:line:col: message"`` so editors can jump to it.
    """

    def __init__(self, message: str, file: Optional[str] = None, line: Optional[int] = None, column: Optional[int] = None):
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        where = file or "<source>"
        if line is not None:
            where += f":{line}"
            if column is not None:
                where += f":{column + 1}"
        super().__init__(f"{where}: {message}")


class SynthesisError(TiletuneError):
    """Synthesis could not run: missing shapes or dtypes, unknown target, bad hints."""


class InfeasibleError(SynthesisError):
    """No tiling fits the target.  ``explanation`` says why in words."""

    def __init__(self, message: str, explanation: str = ""):
        self.explanation = explanation
        super().__init__(message if not explanation else f"{message}\n{explanation}")


class TuningError(TiletuneError):
    """Tuning failed at run time: every candidate failed, bad arguments, bad grid."""


class TiletuneWarning(UserWarning):
    """Something tiletune did on the user's behalf, or could not do, that they should know:
    nothing to tune, a tiling parameter fixed at launch, tensors protected around benchmarking."""


class TiletuneCacheWarning(TiletuneWarning):
    """A cache file or entry was unusable (unreadable, malformed, invalid for the kernel or target);
    the message names the file, the key and the reason. tiletune re-tunes instead of using it."""
