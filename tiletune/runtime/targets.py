"""Which target a tuner tunes for, resolved in one place for every runtime tuner.

``target=`` (a name, an alias such as ``"sm90"``/``"910b3"``, an override
dict or JSON text, or a :class:`~tiletune.synthesis.model.Target`), else
``TILETUNE_TARGET``, else ``"h100"`` under ``TRITON_INTERPRET=1``, else the
detected device.  Names and aliases go through
:func:`tiletune.synthesis.get_target` (the one resolver); this module only
picks what to resolve.
"""

from __future__ import annotations

import os
from typing import Any

from . import bench as _bench

__all__ = ["given_target", "resolve_target", "target_name"]


def given_target(target: Any = None) -> Any:
    """What the user asked for: ``target``, else ``TILETUNE_TARGET``, else "h100" under the interpreter, else None."""
    if target is None:
        target = os.environ.get("TILETUNE_TARGET", "").strip() or None
    if target is None and _bench.interpreting():
        target = "h100"
    return target


def resolve_target(target: Any = None) -> Any:
    """The :class:`~tiletune.synthesis.model.Target` for ``target`` (see :func:`given_target`; None: detect)."""
    from tiletune.synthesis import detect, get_target

    given = given_target(target)
    return detect() if given is None else get_target(given)


def target_name(target: Any = None) -> str:
    """The canonical name of :func:`resolve_target` (``"sm90"`` and ``"H100-SXM"`` both give ``"h100"``)."""
    return str(resolve_target(target).name)
