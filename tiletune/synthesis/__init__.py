"""Synthesis layer: KernelSpec + shapes + dtypes + Target -> ranked ``triton.Config`` candidates.

Public API::

    from tiletune.synthesis import synthesize, get_target, detect, check_config, required_shapes, TARGETS

See ``docs/synthesis.md`` for the model (variables, constraints, Z3,
enumeration) and the cost model.
"""

from importlib import import_module
from typing import Any

# Names resolve on first use (PEP 562): a tuner that only resolves its target (a cache hit) imports
# ``targets``/``model`` and never the solver and the analysis behind ``synthesize``.
_HOME = {
    "Candidate": ".model",
    "SynthesisResult": ".model",
    "Target": ".model",
    "TARGETS": ".targets",
    "detect": ".targets",
    "get_target": ".targets",
    "target_names": ".targets",
    "required_shapes": ".space",
    "check_config": ".pipeline",
    "synthesize": ".pipeline",
}

__all__ = list(_HOME)


def __getattr__(name: str) -> Any:
    """Import the module that defines ``name`` when it is first asked for."""
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(home, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(_HOME))
