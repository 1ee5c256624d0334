"""Synthesis layer: KernelSpec + shapes + dtypes + Target -> ranked ``triton.Config`` candidates.

Public API::

    from tiletune.synthesis import synthesize, get_target, detect, check_config, required_shapes, TARGETS

See ``docs/synthesis.md`` for the model (variables, constraints, Z3,
enumeration) and the cost model.
"""

from .model import Candidate, SynthesisResult, Target
from .targets import TARGETS, detect, get_target, target_names
from .space import required_shapes
from .synthesize import check_config, synthesize

__all__ = [
    "Candidate",
    "SynthesisResult",
    "Target",
    "TARGETS",
    "detect",
    "get_target",
    "target_names",
    "required_shapes",
    "check_config",
    "synthesize",
]
