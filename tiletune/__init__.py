"""tiletune: automatic tiling for Triton kernels.

``@tiletune.autotune(configs=[], key=[...])`` over a ``@triton.jit`` kernel
synthesizes the tilings that fit the chip, benchmarks them and caches the
winner; ``import tiletune.patch`` makes plain ``@triton.autotune`` do the same.

``contextual_autotune`` tunes the kernels a function launches in the context
of the whole function (``tiletune.runtime.contextual``).

``pretune(kernel, shapes, make_args=..., launch=...)`` (and ``tiletune tune``) fills the tuning cache ahead
of time (``tiletune.runtime.pretune``).

``fits(kernel)`` is a ready ``prune_fn`` for the function tuner
(``tiletune.tune.autotune``) and ``config_space_from(kernel, shapes, dtypes)``
builds its config space from synthesis (``tiletune.runtime.fits``).

``autotune``, ``Autotuner``, ``contextual_autotune`` and ``Config``
(``triton.Config``) are loaded on first use, so ``import tiletune`` (and the analysis, lint and CLI modules)
does not import Triton.
"""

from typing import TYPE_CHECKING, Any

from tiletune.version import __version__

__all__ = ["__version__", "autotune", "Autotuner", "contextual_autotune", "Config", "fits", "config_space_from",
           "pretune"]

if TYPE_CHECKING:  # pragma: no cover
    from triton import Config
    from tiletune.runtime.autotuner import Autotuner, autotune
    from tiletune.runtime.contextual import contextual_autotune


def __getattr__(name: str) -> Any:
    if name in ("autotune", "Autotuner"):
        from tiletune.runtime import autotuner

        return getattr(autotuner, name)
    if name == "contextual_autotune":
        from tiletune.runtime.contextual import contextual_autotune

        return contextual_autotune
    if name in ("fits", "config_space_from"):
        from tiletune.runtime import fits

        return getattr(fits, name)
    if name == "pretune":
        from tiletune.runtime.pretune import pretune

        return pretune
    if name == "Config":
        from triton import Config

        return Config
    raise AttributeError(f"module 'tiletune' has no attribute {name!r}")
