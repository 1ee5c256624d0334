"""The protocol a chip family implements: everything synthesis, the runtime and the lint ask per family.

A *chip family* (NVIDIA GPUs, Ascend NPUs) is one object of a
:class:`ChipFamily` subclass (see :mod:`.nvidia`, :mod:`.ascend`);
:func:`tiletune.synthesis.families.family_of` picks it for a
:class:`~tiletune.synthesis.model.Target`.  No module outside this package
branches on the family: each asks its family object instead.  The
family-specific rules themselves may live in their own modules (the
constraint rules in ``constraints/nvidia.py`` / ``constraints/ascend.py``,
Ascend's transfer alignment in ``ascend_cost.py``, its split sizes in
``ascend_space.py``); the family object is the one place that selects them.

This module imports nothing of synthesis, so every layer can name the type.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional


@dataclass(frozen=True)
class KnobDomain:
    """One launch knob a search chooses (``num_warps``, ``num_stages``, ``multibuffer``).

    ``kind`` names the knob's variable kind in the space; ``values`` its
    domain; ``why`` the words of its domain in explanations.
    """

    name: str
    kind: str
    values: list
    why: str


@dataclass
class KnobPlan:
    """The launch knobs of one space: the ones searched, the constants fixed, and notes for the user."""

    domains: list[KnobDomain] = field(default_factory=list)
    env: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


class ChipFamily:
    """What differs between chip families, asked by name (see the module docstring).

    Subclasses set the class attributes and implement every method; the
    base raises :class:`NotImplementedError` naming the family and the
    member, so a new family that misses one fails at its first use.
    """

    #: The ``Target.family`` string this object serves.
    name: str = ""
    #: ``tl.arange`` takes any extent (Triton-Ascend), not only powers of two (stock Triton).
    any_arange_extent: bool = False
    #: Tile sizes are searched over powers of two only (no split sizes).
    pow2_tiles: bool = True
    #: Lowest ``num_stages`` a stored config may carry.
    min_num_stages: int = 1
    #: Names a config may set in ``extra`` beyond the kernel's parameters (``multibuffer``).
    config_knobs: frozenset = frozenset()
    #: The cost terms the family's cost model includes (names tested in ``synthesis/cost.py``).
    cost_terms: frozenset = frozenset()
    #: The row of the per-family constant tables of ``synthesis/cost.py`` (LATENCY_S, WAVE_S, ITER_S, LINE_BYTES).
    cost_profile: str = ""
    #: Candidates report an estimated ``registers_per_thread`` in their footprint.
    reports_registers: bool = False
    #: The advice printed when nothing fits.
    fit_advice: str = ""

    def _missing(self, member: str):
        return NotImplementedError(f"chip family {self.name!r} does not implement {member}; add it to its module in "
                                   "tiletune/synthesis/families/")

    def constraint_rules(self) -> Any:
        """The module with the family's ``access_rules``, ``dot_rules`` and ``capacity_rules``."""
        raise self._missing("constraint_rules")

    def program_cores(self, target) -> int:
        """Cores one wave of programs fills (a grid axis of unknown size is assumed to give that many)."""
        raise self._missing("program_cores")

    def cost_cores(self, target, has_dots: bool) -> float:
        """Cores the cost model spreads programs over."""
        raise self._missing("cost_cores")

    def scratch_capacity(self, target) -> Optional[int]:
        """Bytes of the on-chip buffer tiles are staged in (the bound of an incomplete analysis' guards)."""
        raise self._missing("scratch_capacity")

    def model_constants(self, target) -> dict[str, int]:
        """Values of the chip facts the analysis leaves symbolic (``wgmma``: the compiler has wgmma)."""
        raise self._missing("model_constants")

    def knob_plan(self, spec, target, fixed: Mapping[str, Any], hints: Mapping[str, Any]) -> KnobPlan:
        """The launch knobs the search chooses for ``spec`` on ``target``, given fixed values and hints."""
        raise self._missing("knob_plan")

    def stage_binding(self, space) -> Optional[Any]:
        """What ``num_stages`` stands for in the model's expressions (``None``: leave the symbol)."""
        raise self._missing("stage_binding")

    def tile_values(self, spec, p, values: list[int], bound: Optional[int], target, lo: int, hi: int,
                    min_esize: int) -> list[int]:
        """The values a tiling parameter ``p`` may take, given the powers of two between ``lo`` and ``hi``."""
        raise self._missing("tile_values")

    def config_parts(self, point: Mapping[str, Any], fixed: Mapping[str, Any]) -> tuple:
        """A search point's launch options: ``(num_warps, num_stages, extra)``."""
        raise self._missing("config_parts")

    def check_env(self, env: dict, kwargs: Mapping[str, Any], num_warps: Optional[int],
                  num_stages: Optional[int], target) -> None:
        """Set the launch knobs of a hand-written config in ``env`` (check_config)."""
        raise self._missing("check_env")

    def check_consts(self, kwargs: Mapping[str, Any], target, *, default: bool) -> dict[str, int]:
        """Launch knobs of a hand-written config that fix the model (``default``: fill the compiler's default)."""
        raise self._missing("check_consts")

    def capacity_rule(self, constraint_name: str) -> Optional[str]:
        """The documented rule (with its source) behind a capacity constraint, or None."""
        raise self._missing("capacity_rule")

    def capacity_detail(self, constraint_name: str, spec, dtypes: dict, env: dict, need: int) -> Optional[str]:
        """What makes up a broken capacity constraint's ``need`` bytes for one config (which tiles), or None."""
        return None
