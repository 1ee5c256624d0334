"""Public types of the synthesis layer: targets' limits and ranked candidates.

Synthesis turns a :class:`~tiletune.analysis.model.KernelSpec`, the runtime
sizes it depends on and the element types of its pointers into a ranked list
of :class:`Candidate` tilings that fit a :class:`Target`.  It never touches
torch or a device.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional


@dataclass(frozen=True)
class Target:
    """One chip's limits, with the public source of each figure in ``sources``.

    ``family`` is ``"nvidia"`` or ``"ascend"``.  NVIDIA fields: ``shared_bytes``
    (per block), ``registers_per_sm``, ``max_threads_per_block``,
    ``warp_size``, ``cores`` (SMs).  Ascend fields: ``ub_bytes`` (per vector
    core), ``l1_bytes``, ``l0a_bytes``, ``l0b_bytes``, ``l0c_bytes``,
    ``cores`` (cube cores), ``vector_cores``, ``ub_align_bytes``, ``fractal``
    (cube fractal edge; ``fractal_k_int8`` for the k of int8 dots).  Occupancy
    fields (NVIDIA): ``shared_bytes_per_sm``, ``max_registers_per_thread``,
    ``max_threads_per_sm``, ``max_blocks_per_sm``.  ``max_tensor_numel`` is
    Triton's largest tensor; ``max_unbound_tile`` caps tiling parameters that
    no runtime size bounds.
    ``bandwidth`` is bytes/s of device memory, ``flops`` maps a dtype to the
    dense matrix-unit rate in FLOP/s and ``vector_flops`` is the fp32 vector
    rate; ``l2_bandwidth`` the cache bandwidth re-read tiles are served at
    (cost model only).  ``arch`` is the compute capability (90 for sm_90) on NVIDIA.
    """

    name: str
    family: str
    cores: int
    bandwidth: float
    flops: dict[str, float] = field(default_factory=dict, hash=False, compare=False)
    vector_flops: float = 0.0
    arch: Optional[int] = None
    shared_bytes: Optional[int] = None
    registers_per_sm: Optional[int] = None
    max_threads_per_block: int = 1024
    warp_size: int = 32
    ub_bytes: Optional[int] = None
    l1_bytes: Optional[int] = None
    l0a_bytes: Optional[int] = None
    l0b_bytes: Optional[int] = None
    l0c_bytes: Optional[int] = None
    vector_cores: Optional[int] = None
    ub_align_bytes: int = 32
    # Ascend: whether Triton-Ascend's compiler double-buffers when a config does not say (multibuffer).
    multibuffer_default: bool = True
    sources: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    # NVIDIA occupancy limits (CUDA guide); used by the register estimate and the cost model.
    shared_bytes_per_sm: Optional[int] = None
    max_registers_per_thread: int = 255
    max_threads_per_sm: int = 2048
    max_blocks_per_sm: int = 32
    # Ascend cube fractal: dot dims are multiples of ``fractal`` (k of int8 dots: ``fractal_k_int8``).
    fractal: int = 16
    fractal_k_int8: int = 32
    # Triton's largest tensor (TRITON_MAX_TENSOR_NUMEL) and the cap for tiles with no runtime bound.
    max_tensor_numel: int = 1048576
    max_unbound_tile: int = 1024
    # Bytes/s of the last-level cache for re-read tiles (cost model only); 0 -> 2.5 x bandwidth.
    l2_bandwidth: float = 0.0


@dataclass
class Candidate:
    """One feasible tiling, ready to become a ``triton.Config``.

    ``kwargs`` holds the tiling parameters and hinted values; ``extra`` holds
    target options beyond warps and stages (``multibuffer`` on Ascend).
    ``cost`` is the cost model's predicted time in seconds (lower is better);
    ``cost_terms`` breaks it down; ``footprint`` gives each resource's bytes.
    """

    kwargs: dict[str, Any]
    num_warps: Optional[int] = None
    num_stages: Optional[int] = None
    extra: dict[str, Any] = field(default_factory=dict)
    cost: float = 0.0
    cost_terms: dict[str, float] = field(default_factory=dict)
    footprint: dict[str, int] = field(default_factory=dict)

    def to_config(self):
        """This candidate as a ``triton.Config``."""
        import triton

        opts: dict[str, Any] = {}
        if self.num_warps is not None:
            opts["num_warps"] = self.num_warps
        if self.num_stages is not None:
            opts["num_stages"] = self.num_stages
        return triton.Config({**self.kwargs, **self.extra}, **opts)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "kwargs": dict(self.kwargs),
            "num_warps": self.num_warps,
            "num_stages": self.num_stages,
            "extra": dict(self.extra),
            "cost": self.cost,
            "cost_terms": dict(self.cost_terms),
            "footprint": dict(self.footprint),
        }


@dataclass
class SynthesisResult:
    """Ranked candidates (best first) and what the search saw.

    ``feasible_count`` counts every feasible point found before ranking;
    ``model_summary`` describes the variables and constraints in words;
    ``point_costs`` maps every feasible point, as ``(sorted kwargs items,
    num_warps, num_stages)``, to its modelled cost when asked for
    (``synthesize(point_costs=True)``; empty for very large spaces): the
    measured search ranks the moves it cannot all afford by it.
    """

    kernel: str
    target: str
    candidates: list[Candidate]
    feasible_count: int
    model_summary: list[str] = field(default_factory=list)
    point_costs: dict[tuple, float] = field(default_factory=dict, repr=False)

    def configs(self) -> list:
        """The candidates as ``triton.Config`` objects, best first."""
        return [c.to_config() for c in self.candidates]
