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

This module also holds the key helpers: :func:`to_hashable`,
:func:`to_key_material`, :func:`config_material`, :func:`config_label`.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import numbers
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence, Union

__all__ = ["autotune", "to_hashable", "to_key_material", "config_material", "config_label"]


def _is_tensor(x: Any) -> bool:
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency
        return False
    return isinstance(x, torch.Tensor)


def _torch_scalar_type(x: Any):
    """``str(x)`` for torch.dtype / torch.device, else None."""
    try:
        import torch
    except ImportError:  # pragma: no cover
        return None
    if isinstance(x, (torch.dtype, torch.device)):
        return str(x)
    return None


def to_hashable(x: Any) -> Any:
    """A hashable, JSON-friendly value that stands for ``x`` in a tuning key.

    * tensor -> ``("tensor", tuple(shape), str(dtype), tuple(stride), device.type)``
      (the contents never matter);
    * list / tuple (torch.Size included) -> tuple of converted items;
    * dict -> ``("dict", ((key, value), ...))`` sorted by key;
    * dataclass instance -> ``("dataclass", qualified class name, ((field, value), ...))``;
    * enum member -> ``("enum", qualified class name, member name)``;
    * None, bool, int, float, str -> unchanged (numpy-style integers and
      reals become int / float);
    * torch.dtype, torch.device -> ``str(x)``.

    Anything else raises TypeError naming the type: return shapes, dtypes and
    flags from your ``key_fn`` instead of the object itself.
    """
    if isinstance(x, enum.Enum):
        return ("enum", _qualname(type(x)), x.name)
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, numbers.Integral):
        return int(x)
    if isinstance(x, numbers.Real):
        return float(x)
    if _is_tensor(x):
        shape, stride = tuple(int(s) for s in x.shape), tuple(int(s) for s in x.stride())
        return ("tensor", shape, str(x.dtype), stride, x.device.type)
    text = _torch_scalar_type(x)
    if text is not None:
        return text
    if isinstance(x, (list, tuple)):
        return tuple(to_hashable(v) for v in x)
    if isinstance(x, Mapping):
        items = [(to_hashable(k), to_hashable(v)) for k, v in x.items()]
        items.sort(key=lambda kv: json.dumps(to_key_material(kv[0]), sort_keys=True))
        return ("dict", tuple(items))
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        fields = tuple((f.name, to_hashable(getattr(x, f.name))) for f in dataclasses.fields(x))
        return ("dataclass", _qualname(type(x)), fields)
    raise TypeError(
        f"tiletune: cannot use a value of type {_qualname(type(x))} in a tuning key. "
        "Give autotune a key_fn that returns hashable material instead: shapes, dtypes, "
        "strides, ints, strings, or tuples of these (tensors are reduced to shape/dtype/stride/device)."
    )


def to_key_material(x: Any) -> Any:
    """:func:`to_hashable` of ``x`` as plain JSON: every tuple becomes a list."""
    return _lists(to_hashable(x))


def _lists(v: Any) -> Any:
    if isinstance(v, tuple):
        return [_lists(i) for i in v]
    return v


def _qualname(t: type) -> str:
    mod = getattr(t, "__module__", "")
    name = getattr(t, "__qualname__", getattr(t, "__name__", repr(t)))
    return name if mod in ("builtins", "", None) else f"{mod}.{name}"


def _is_triton_config(v: Any) -> bool:
    t = type(v)
    return t.__name__ == "Config" and t.__module__.startswith("triton") and hasattr(v, "kwargs")


def _value_material(v: Any) -> Any:
    if isinstance(v, enum.Enum):
        return {"__enum__": f"{_qualname(type(v))}.{v.name}"}
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, numbers.Real):
        return float(v)
    if isinstance(v, (list, tuple)):
        return [_value_material(i) for i in v]
    if isinstance(v, Mapping):
        return {str(k): _value_material(i) for k, i in v.items()}
    if _is_triton_config(v):
        return {
            "__triton_config__": {
                "kwargs": _value_material(dict(v.kwargs)),
                "num_warps": getattr(v, "num_warps", None),
                "num_stages": getattr(v, "num_stages", None),
                "num_ctas": getattr(v, "num_ctas", None),
                "maxnreg": getattr(v, "maxnreg", None),
            }
        }
    text = _torch_scalar_type(v)
    if text is not None:
        return {"__torch__": text}
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {
            "__dataclass__": _qualname(type(v)),
            "fields": {f.name: _value_material(getattr(v, f.name)) for f in dataclasses.fields(v)},
        }
    return {"__repr__": repr(v)}


def config_material(config: Mapping[str, Any]) -> dict:
    """A plain-JSON description of a config dict, equal for equal configs.

    Values that are not JSON are described: a ``triton.Config`` by its kwargs
    and launch options, a torch dtype/device by ``str``, enum members and
    dataclasses by name and fields, anything else by ``repr`` (give such
    objects a stable ``__repr__``).  Used to find a cached winner in the
    current config space, so it must not depend on object identity.
    """
    return {str(k): _value_material(v) for k, v in config.items()}


def config_label(config: Mapping[str, Any]) -> str:
    """A one-line readable form of a config dict, for logs and error messages."""
    parts = []
    for k, v in config.items():
        parts.append(f"{k}=({v})" if _is_triton_config(v) else f"{k}={v!r}")
    return "{" + ", ".join(parts) + "}"


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
    from tiletune.runtime.function_tuner import FunctionTuner

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
