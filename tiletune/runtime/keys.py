"""Tuning-key material for the function tuner: hashable and JSON forms of call arguments and config dicts.

:func:`to_hashable` (what a ``key_fn`` result stands for in memory),
:func:`to_key_material` (the same as plain JSON, for the disk key),
:func:`config_material` (a config dict as JSON, equal for equal configs) and
:func:`config_label` (a readable one-liner).  Re-exported by :mod:`tiletune.tune`.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import numbers
from typing import Any, Mapping

__all__ = ["to_hashable", "to_key_material", "config_material", "config_label"]


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
