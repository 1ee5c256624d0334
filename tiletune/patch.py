"""``import tiletune.patch``: plain ``@triton.autotune(...)`` becomes tiletune's autotuner.

After the import, ``triton.autotune``, ``triton.runtime.autotune`` and
``triton.runtime.autotuner.autotune`` are :func:`tiletune.autotune`, so
``@triton.autotune(configs=[], key=[...])`` synthesizes its configs (and a
non-empty list is tuned with tiletune's benchmarking and cache).  Import it
before the modules that define the kernels: decorators run when those modules
are imported, and a module that did ``from triton import autotune`` earlier
keeps the name it bound.  :func:`unpatch` puts Triton's function back.
Without this import Triton is untouched.
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

import triton
import triton.runtime
import triton.runtime.autotuner

from tiletune.runtime.autotuner import autotune as _tiletune_autotune

__all__ = ["patch", "unpatch", "is_patched"]

_TARGETS: List[Tuple[Any, str]] = [
    (triton, "autotune"),
    (triton.runtime, "autotune"),
    (triton.runtime.autotuner, "autotune"),
]
_saved: Dict[Tuple[int, str], Any] = {}


def patch() -> None:
    """Bind ``autotune`` in triton, triton.runtime and triton.runtime.autotuner to tiletune's (idempotent)."""
    for module, attr in _TARGETS:
        if not hasattr(module, attr):
            continue
        current = getattr(module, attr)
        if current is _tiletune_autotune:
            continue
        _saved[(id(module), attr)] = current
        setattr(module, attr, _tiletune_autotune)


def unpatch() -> None:
    """Put Triton's own ``autotune`` back where :func:`patch` replaced it."""
    for module, attr in _TARGETS:
        original = _saved.pop((id(module), attr), None)
        if original is not None:
            setattr(module, attr, original)


def is_patched() -> bool:
    """True while ``triton.autotune`` is tiletune's."""
    return getattr(triton, "autotune", None) is _tiletune_autotune


patch()
