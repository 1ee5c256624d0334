"""The NVIDIA family: ``num_warps`` and ``num_stages`` knobs, shared memory, occupancy cost terms."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from ...analysis.expr import NUM_STAGES, WGMMA
from ..constraints import nvidia as rules
from ..space import NUM_WARPS
from .base import ChipFamily, KnobDomain, KnobPlan

__all__ = ["NvidiaFamily", "NVIDIA", "stages_matter", "stage_domain"]

#: The first compute capability with wgmma (sm_90, Hopper).
WGMMA_ARCH = 90

#: The warp counts searched (capped by the target's threads per block).
WARPS = (1, 2, 4, 8, 16, 32)


def stages_matter(spec) -> bool:
    """Whether ``num_stages`` can change the compiled kernel: a loop holds a ``tl.dot`` and loads something.

    Triton's software pipeliner (``AssignLatencies``/``loadOpsToIndirectionLevel``, Triton 3.x on
    NVIDIA) pipelines the loads it reaches from a ``tl.dot`` in the same ``scf.for``; a loop without a
    dot is pipelined only when it carries its own ``tt.num_stages`` (``tl.range(..., num_stages=k)``),
    which the launch's ``num_stages`` does not change.  So a kernel with no dot in a loop compiles to the
    same binary at every ``num_stages``: ``bench/stage_identity.py`` compiles dot-free kernels at stages
    1-4 for sm_90 and finds one cubin per tiling (``bench/results/stage_identity.md``).
    """
    loads_in_loops = any(a.in_loop and a.kind == "load" for a in spec.accesses)
    return loads_in_loops and any(d.in_loop for d in spec.dots)


def stage_domain(spec) -> list[int]:
    """The ``num_stages`` values worth searching for ``spec``: 1 to 6 where they matter
    (:func:`stages_matter`), else just 1 (every value compiles to the same kernel)."""
    return [1, 2, 3, 4, 5, 6] if stages_matter(spec) else [1]


class NvidiaFamily(ChipFamily):
    """NVIDIA GPUs under stock Triton."""

    name = "nvidia"
    any_arange_extent = False
    pow2_tiles = True
    min_num_stages = 1
    config_knobs = frozenset()
    cost_terms = frozenset({"warps_stages", "wgmma_efficiency", "residency", "register_pressure", "warp_fit",
                            "dot_wave_saturation"})
    cost_profile = "nvidia"
    reports_registers = True
    fit_advice = "use fewer pipeline stages or a smaller block"

    def constraint_rules(self) -> Any:
        """:mod:`tiletune.synthesis.constraints.nvidia`."""
        return rules

    def program_cores(self, target) -> int:
        """The SMs."""
        return target.cores

    def cost_cores(self, target, has_dots: bool) -> float:
        """The SMs."""
        return float(target.cores)

    def scratch_capacity(self, target) -> Optional[int]:
        """Shared memory per block."""
        return target.shared_bytes

    def model_constants(self, target) -> dict[str, int]:
        """``wgmma`` = 1 from sm_90 on (Hopper's warp-group MMA; Triton 3.6 uses it for wgmma-shaped dots)."""
        return {WGMMA: int((target.arch or 0) >= WGMMA_ARCH)}

    def knob_plan(self, spec, target, fixed: Mapping[str, Any], hints: Mapping[str, Any]) -> KnobPlan:
        """``num_stages`` (pipelining depth) and ``num_warps`` unless fixed; hints replace the domains."""
        plan = KnobPlan()
        if NUM_STAGES not in fixed:
            stages = [int(v) for v in hints[NUM_STAGES]] if NUM_STAGES in hints else stage_domain(spec)
            plan.domains.append(KnobDomain(NUM_STAGES, "num_stages", stages, "software pipelining depth"))
        if NUM_WARPS not in fixed:
            max_warps = max(1, target.max_threads_per_block // target.warp_size)
            warps = [int(v) for v in hints[NUM_WARPS]] if NUM_WARPS in hints else [w for w in WARPS if w <= max_warps]
            plan.domains.append(KnobDomain(NUM_WARPS, "num_warps", warps, "warps per program"))
        else:
            plan.env[NUM_WARPS] = int(fixed[NUM_WARPS])
        return plan

    def stage_binding(self, space) -> Optional[Any]:
        """A fixed ``num_stages`` when it is not searched."""
        if not space.has_var(NUM_STAGES) and NUM_STAGES in space.fixed:
            return int(space.fixed[NUM_STAGES])
        return None

    def tile_values(self, spec, p, values: list[int], bound: Optional[int], target, lo: int, hi: int,
                    min_esize: int) -> list[int]:
        """The powers of two."""
        return values

    def config_parts(self, point: Mapping[str, Any], fixed: Mapping[str, Any]) -> tuple:
        """``num_warps`` (4 unless searched or fixed) and ``num_stages`` (None: Triton's default)."""
        num_warps = int(point[NUM_WARPS]) if NUM_WARPS in point else int(fixed.get(NUM_WARPS, 4))
        if NUM_STAGES in point:
            num_stages = int(point[NUM_STAGES])
        else:
            num_stages = int(fixed[NUM_STAGES]) if NUM_STAGES in fixed else None
        return num_warps, num_stages, {}

    def check_env(self, env: dict, kwargs: Mapping[str, Any], num_warps: Optional[int],
                  num_stages: Optional[int], target) -> None:
        """The config's warps, and its stages (Triton's default 3 when not given)."""
        if num_warps is not None:
            env[NUM_WARPS] = int(num_warps)
        env[NUM_STAGES] = int(num_stages) if num_stages is not None else 3  # Triton's default

    def check_consts(self, kwargs: Mapping[str, Any], target, *, default: bool) -> dict[str, int]:
        """None: warps and stages are checked at their values, not fixed in the model."""
        return {}

    def capacity_rule(self, constraint_name: str) -> Optional[str]:
        """None: the constraint's own text says it."""
        return None


NVIDIA = NvidiaFamily()
