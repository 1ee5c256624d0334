"""How Triton specialises an integer launch argument, in the one place every layer reads it.

Triton (3.x, ``JITFunction``'s specialisation of non-constexpr integers) compiles an integer equal to 1 as the
constant 1 and marks an integer that is a multiple of 16 ``tt.divisibility=16``; any other value carries no
alignment.  A load whose row stride or contiguous bound carries neither is not vectorised to 16 bytes, and
Triton's pipeliner leaves it alone (``tiletune.analysis.footprint.pipelined``).  The runtime's tuning key,
the chip model's ``align16_`` symbols and the offline compiles all ask these two questions.
"""

from __future__ import annotations

from typing import Any

__all__ = ["divisible_by_16", "keeps_alignment"]


def divisible_by_16(value: Any) -> bool:
    """True when Triton would mark the integer ``value`` ``tt.divisibility=16`` (a multiple of 16; not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and value % 16 == 0


def keeps_alignment(value: Any) -> bool:
    """True when the integer ``value`` leaves a 16-byte-aligned access aligned as Triton specialises it: a
    multiple of 16, or 1 (compiled as the constant 1: a unit stride).  A bool is not a size: True as well."""
    return isinstance(value, bool) or value == 1 or divisible_by_16(value)
