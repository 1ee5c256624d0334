"""Function-level tuning: ``tiletune.tune.autotune`` (the Triton-distributed API).

Tune any Python function over a list of config dicts, with the winner cached
on disk per key, shared with the kernel autotuner's cache and benchmark
layer, and agreed by every rank of a process group::

    from tiletune.tune import autotune

    @autotune(
        config_space=[{"BLOCK": b, "num_warps": w} for b in (64, 128) for w in (4, 8)],
        key_fn=lambda x, y: (x.shape, x.dtype),
        prune_fn=lambda config, x, y: config["BLOCK"] <= x.shape[-1],
    )
    def add(x, y, *, BLOCK, num_warps):
        ...

    add(x, y)                       # tunes once per key, then reuses the winner
    add(x, y, autotune_pg=group)    # every rank of ``group`` agrees on one config

As in ``triton_dist.tune.autotune``, the keys of the chosen config dict are
passed to the function as keyword arguments (``config_kwarg="config"`` passes
the whole dict as one keyword instead).  See :func:`autotune` and
``docs/function-tuning.md``.

The key helpers :func:`to_hashable`, :func:`to_key_material`,
:func:`config_material` and :func:`config_label` live in
:mod:`tiletune.runtime.keys` and are re-exported here.  This module is the
front: it imports the runtime, never the other way round.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from tiletune.runtime.fits import config_space_from, fits
from tiletune.runtime.function_tuner import FunctionTuner
from tiletune.runtime.keys import config_label, config_material, to_hashable, to_key_material

__all__ = ["autotune", "fits", "config_space_from", "to_hashable", "to_key_material", "config_material",
           "config_label"]


def autotune(
    config_space: Sequence[Mapping[str, Any]],
    key_fn: Optional[Callable[..., Any]],
    prune_fn: Optional[Callable[..., bool]] = None,
    *,
    warmup: int = 3,
    rep: int = 10,
    cache_results: bool = True,
    name: Optional[str] = None,
    restore_args: Optional[Sequence[Union[str, int]]] = None,
    shard: bool = False,
    config_kwarg: Optional[str] = None,
    bench_method: Optional[str] = None,
    cache_dir: Optional[Union[str, Path]] = None,
    autotune_timeout_s: Optional[float] = None,
) -> Callable[[Callable[..., Any]], Any]:
    """Decorator: tune a Python function over ``config_space`` and call it with the winner.

    ``config_space``: the candidate configs, each a dict of keyword arguments
    (values may be anything, ``triton.Config`` included).  The decorated
    function is called as ``f(*args, **kwargs, **config)``, i.e. the config's
    keys arrive as keyword arguments, as in Triton-distributed; with
    ``config_kwarg="config"`` it is called as ``f(*args, config=config, **kwargs)``.

    ``key_fn(*args, **kwargs)``: what the best config depends on (shapes,
    dtypes...); passed through :func:`to_hashable`.  ``None``: one key for all
    calls.  ``prune_fn(config, *args, **kwargs) -> bool``: False drops the
    config for this call (Triton-distributed's convention).

    ``warmup`` / ``rep``: untimed and timed calls per config (counts, not ms);
    the time of a config is the median of its ``rep`` wall-clock times (ms,
    device synchronised).  ``bench_method`` ("event", "cudagraph", "profiler",
    "npu", "wall"): time with the kernel autotuner's benchmark methods
    instead (their ms budgets, restore copies inside the timed call).

    ``cache_results``: keep winners in the JSON disk cache (``cache_dir``,
    default ``TILETUNE_CACHE_DIR`` or the user cache dir), under ``name``
    (default: the function's module and qualified name) and a hash of its
    source and the config space.  An entry tuned under other versions (the
    environment fingerprint) is re-tuned; with ``TILETUNE_VERSION_CHECK=strict``
    (or ``TRITON_DIST_AUTOTUNE_VERSION_CHECK=1``) it raises
    StaleCacheEntryError instead.  ``TILETUNE_ALWAYS_TUNE=1`` (or
    ``TRITON_DIST_AUTOTUNE_ALWAYS_TUNE=1``) ignores the disk cache.

    Tuning runs the function ``(warmup + rep)`` times per config, then once
    more with the winner (that call's result is returned): the function must
    be safe to re-run.  ``restore_args`` (parameter names or positional
    indices of tensor arguments) are copied before tuning and restored before
    every trial and before the final call, so those tensors end as one
    untuned call leaves them.  A config that raises is skipped (logged with
    its error); if all raise, TuningError lists each config and its error.
    ``autotune_timeout_s`` (default ``TILETUNE_AUTOTUNE_TIMEOUT_S``, else 60):
    a config whose warmup and timed calls together take longer is dropped
    with that reason as soon as one of its calls returns past the budget, and
    never cached (a call that never returns cannot be interrupted).
    ``key_fn`` results that contain themselves or hold a NaN/infinity raise
    TypeError (they could never be matched to a cached key).

    The returned callable takes extra keywords: ``autotune=False`` (no
    tuning: use the first config prune_fn keeps), ``autotune_verbose=True``
    (print each config's time), ``autotune_pg=<ProcessGroup>`` (every rank
    agrees on one config; every rank must make the call),
    ``autotune_allow_arg_overwrite=True`` (a keyword argument that is also a
    config key wins over the config instead of raising ValueError).
    ``shard=True`` splits the configs across the ranks of ``autotune_pg``
    (each rank times its share; only for functions that do not communicate).
    """
    def decorate(fn: Callable[..., Any]) -> Any:
        return FunctionTuner(
            fn,
            config_space,
            key_fn,
            prune_fn,
            warmup=warmup,
            rep=rep,
            cache_results=cache_results,
            name=name,
            restore_args=restore_args,
            shard=shard,
            config_kwarg=config_kwarg,
            bench_method=bench_method,
            cache_dir=cache_dir,
            timeout_s=autotune_timeout_s,
        )

    return decorate
