"""Compile-time questions about a dtype: ``x.dtype.is_floating()``, ``tl.dtype("uint32")``.

Triton answers them while it specialises a kernel on its argument types; the reader answers them
when the dtype is one it knows (a cast, a literal dtype) and otherwise leaves the answer unknown,
so a branch it decides is read on both sides (never a gap: a dtype test does not size a tile).
"""

from __future__ import annotations

from typing import Optional

from ..model import DTYPE_BYTES
from ..values import TL_DTYPES

__all__ = ["dtype_predicate", "dtype_named", "PREDICATES"]

_FLOATS = {"fp8e4nv", "fp8e5", "fp8e4b15", "fp16", "bf16", "fp32", "fp64"}
_SIGNED = {"int8", "int16", "int32", "int64"}
_UNSIGNED = {"int1", "uint8", "uint16", "uint32", "uint64"}
#: Triton's ``tl.dtype.is_<x>()`` for a name with no table entry below: ``is_fp16`` -> "fp16", ``is_int64`` -> "int64".
_SPECIAL = {
    "is_floating": _FLOATS,
    "is_standard_floating": {"fp16", "bf16", "fp32", "fp64"},
    "is_fp8": {"fp8e4nv", "fp8e5", "fp8e4b15"},
    "is_int": _SIGNED | _UNSIGNED,
    "is_int_signed": _SIGNED,
    "is_int_unsigned": _UNSIGNED,
    "is_bool": {"int1"},
    "is_ptr": set(),
    "is_block": set(),
    "is_void": set(),
}
#: Every predicate method the reader answers.
PREDICATES = frozenset(_SPECIAL) | frozenset(f"is_{d}" for d in DTYPE_BYTES)


def dtype_predicate(dtype: Optional[str], method: str) -> Optional[bool]:
    """``dtype.<method>()`` for a dtype name of :mod:`..model` (None when the dtype is not known)."""
    if dtype is None or dtype not in DTYPE_BYTES or method not in PREDICATES:
        return None
    members = _SPECIAL.get(method)
    if members is None:
        members = {method[3:]}
    return dtype in members


def dtype_named(text: object) -> Optional[str]:
    """The dtype ``tl.dtype(text)`` names (``"uint32"``, ``"float16"``, ``"bf16"``), or None."""
    if not isinstance(text, str):
        return None
    if text in DTYPE_BYTES:
        return text
    return TL_DTYPES.get(text)
