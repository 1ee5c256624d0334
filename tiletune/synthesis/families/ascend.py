"""The Ascend family: the ``multibuffer`` knob, the Unified Buffer, split (non power of two) block sizes."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from ...analysis.expr import NUM_STAGES, WGMMA, const, sym
from ..ascend_space import split_values
from ..constraints import ascend as rules
from ..space import MULTIBUFFER, NUM_WARPS
from .base import ChipFamily, KnobDomain, KnobPlan

__all__ = ["AscendFamily", "ASCEND"]


class AscendFamily(ChipFamily):
    """Ascend NPUs under Triton-Ascend (BiShengIR)."""

    name = "ascend"
    any_arange_extent = True
    pow2_tiles = False
    min_num_stages = 0
    config_knobs = frozenset({MULTIBUFFER})
    cost_terms = frozenset({"multibuffer", "ub_alignment", "ub_overflow_risk"})
    cost_profile = "ascend"
    reports_registers = False
    fit_advice = "split the work into a loop over a smaller block"

    def constraint_rules(self) -> Any:
        """:mod:`tiletune.synthesis.constraints.ascend`."""
        return rules

    def program_cores(self, target) -> int:
        """The vector cores (the cube cores when the target gives none)."""
        return target.vector_cores or target.cores

    def cost_cores(self, target, has_dots: bool) -> float:
        """The cube cores for dot kernels, else the vector cores."""
        return float(target.cores if has_dots else (target.vector_cores or target.cores))

    def scratch_capacity(self, target) -> Optional[int]:
        """The Unified Buffer of one vector core."""
        return target.ub_bytes

    def model_constants(self, target) -> dict[str, int]:
        """``wgmma`` = 0 (an NVIDIA instruction; the cube unit is modelled by the Ascend rules)."""
        return {WGMMA: 0}

    def knob_plan(self, spec, target, fixed: Mapping[str, Any], hints: Mapping[str, Any]) -> KnobPlan:
        """``multibuffer`` (searched only when a loop loads); warps and stages hints are ignored with a note."""
        plan = KnobPlan()
        if MULTIBUFFER in fixed:
            plan.env[MULTIBUFFER] = int(bool(fixed[MULTIBUFFER]))
        else:
            if MULTIBUFFER in hints:
                mb = [bool(v) for v in hints[MULTIBUFFER]]
            elif any(a.in_loop and a.kind == "load" for a in spec.accesses):
                mb = [False, True]
            else:
                mb = [False]  # no loop: nothing to double-buffer
            plan.domains.append(KnobDomain(MULTIBUFFER, "multibuffer", mb, "double-buffered loads (num_stages 1 or 2)"))
        for k in (NUM_WARPS, NUM_STAGES):
            if k in hints:
                plan.notes.append(f"hint {k!r} ignored on {target.name} (Ascend uses multibuffer)")
        return plan

    def stage_binding(self, space) -> Optional[Any]:
        """``1 + multibuffer``: a fixed multibuffer (check_config, fixed=) counts as much as a searched one."""
        if space.has_var(MULTIBUFFER):
            return const(1) + sym(MULTIBUFFER)
        return 1 + int(space.env.get(MULTIBUFFER, 0))

    def tile_values(self, spec, p, values: list[int], bound: Optional[int], target, lo: int, hi: int,
                    min_esize: int) -> list[int]:
        """The powers of two plus the split sizes of :func:`~tiletune.synthesis.ascend_space.split_values`."""
        if bound is not None:
            values = sorted(set(values) | set(split_values(spec, p, int(bound), target, lo, hi, min_esize)))
        return [v for v in values if lo <= v <= hi] or values

    def config_parts(self, point: Mapping[str, Any], fixed: Mapping[str, Any]) -> tuple:
        """No warps or stages; ``multibuffer`` in ``extra`` when searched or fixed."""
        mb = point.get(MULTIBUFFER, fixed.get(MULTIBUFFER))
        return None, None, ({MULTIBUFFER: bool(mb)} if mb is not None else {})

    def check_env(self, env: dict, kwargs: Mapping[str, Any], num_warps: Optional[int],
                  num_stages: Optional[int], target) -> None:
        """The config's ``multibuffer`` (the compiler's default when it does not say)."""
        env.setdefault(MULTIBUFFER, int(bool(kwargs.get(MULTIBUFFER, target.multibuffer_default))))

    def check_consts(self, kwargs: Mapping[str, Any], target, *, default: bool) -> dict[str, int]:
        """``multibuffer`` fixes the model's buffer count."""
        if MULTIBUFFER in kwargs or default:
            return {MULTIBUFFER: int(bool(kwargs.get(MULTIBUFFER, target.multibuffer_default)))}
        return {}

    def capacity_rule(self, constraint_name: str) -> Optional[str]:
        """The BiShengIR rule with its source (:func:`~tiletune.synthesis.constraints.ascend.rule_of`)."""
        return rules.rule_of(constraint_name)

    def capacity_detail(self, constraint_name: str, spec, dtypes: dict, env: dict, need: int) -> Optional[str]:
        """For a ``ub`` overflow: the operation and the tiles that make up ``need``
        (:func:`~tiletune.synthesis.constraints.ascend.certain_detail`); None for the other buffers."""
        if constraint_name != "ub":
            return None
        return rules.certain_detail(spec, dtypes, env, need)


ASCEND = AscendFamily()
