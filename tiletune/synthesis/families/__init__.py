"""Chip families: one object per family behind the :class:`~.base.ChipFamily` protocol.

``family_of(target)`` is the one dispatch on ``Target.family``; a new chip
family is a new module here with a :class:`~.base.ChipFamily` subclass,
registered in :data:`FAMILIES` (see docs/architecture.md, "where to change
what").
"""

from __future__ import annotations

from ...errors import SynthesisError
from ..targets import get_target
from .ascend import ASCEND
from .base import ChipFamily, KnobDomain, KnobPlan
from .nvidia import NVIDIA

__all__ = ["ChipFamily", "KnobDomain", "KnobPlan", "FAMILIES", "DEFAULT_FAMILY", "family_of", "NVIDIA", "ASCEND"]

#: Every family by its ``Target.family`` name.
FAMILIES: dict[str, ChipFamily] = {f.name: f for f in (NVIDIA, ASCEND)}

#: The family whose rules apply when no target is known (stock Triton's).
DEFAULT_FAMILY: ChipFamily = NVIDIA


def family_of(target) -> ChipFamily:
    """The :class:`ChipFamily` of a :class:`~tiletune.synthesis.model.Target` (a name or dict is resolved first)."""
    if not hasattr(target, "family"):
        target = get_target(target)
    name = target.family
    fam = FAMILIES.get(name)
    if fam is None:
        who = getattr(target, "name", target)
        raise SynthesisError(f"target {who!r} has chip family {name!r}, which tiletune does not know; "
                             f"use one of {', '.join(sorted(FAMILIES))} or add a family module in "
                             "tiletune/synthesis/families/")
    return fam
