"""Which loads Triton can pipeline at a launch: the ``align16_<param>`` symbols of the footprint.

The shared-memory model (:func:`tiletune.analysis.footprint.pipelined`) counts a ``tl.dot`` operand load
``num_stages`` (wgmma) or ``num_stages - 1`` (mma.sync) buffers deep only when Triton's pipeliner turns it into
an async copy, which needs a 16-byte-aligned vector: every integer in the load's ``align_params`` (row strides,
mask bounds and ``% N`` along the contiguous dimension) specialised ``tt.divisibility=16``.  Triton specialises
an integer argument that way when it is a multiple of 16 (and an integer equal to 1 as the constant 1:
a unit stride, which leaves the alignment alone).  This module binds ``align16_<param>``:

* 0 when the launch's value (or the ``--shape`` given) is known and is not a multiple of 16 (nor 1);
* 1 when it is a multiple of 16, is 1, or is unknown.  An unknown keeps the pipelined count, the larger
  one: the model never accepts what may not fit.  ``synth-configs --shape`` gives sizes, not strides; a
  stride not given counts as unknown, while a mask bound or ``% N`` extent given (``K=1500``) decides.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from ..analysis.expr import ALIGN16_PREFIX
from ..specialization import keeps_alignment

__all__ = ["bind_alignment", "alignment_params", "alignment_shapes", "spec_alignment_params"]


def alignment_params(exprs: Iterable) -> list[str]:
    """The parameters named by ``align16_<param>`` symbols in ``exprs`` (footprint expressions), sorted."""
    names = set()
    for e in exprs:
        if e is None:
            continue
        for s in e.symbols():
            if s.startswith(ALIGN16_PREFIX):
                names.add(s[len(ALIGN16_PREFIX):])
    return sorted(names)


def spec_alignment_params(spec) -> list[str]:
    """The integers whose alignment decides which of ``spec``'s loads are pipelined ([] without a footprint):
    the ``align16_`` symbols of its footprint, the only expressions that carry them."""
    fp = getattr(spec, "footprint", None)
    if fp is None:
        return []
    return alignment_params([fp.live_bytes, fp.shared_bytes, fp.dot_operand_bytes, fp.accumulator_bytes,
                             fp.unstaged_bytes])


def bind_alignment(names: Iterable[str], known: Mapping[str, int], kernel: str,
                   constants: Iterable[str] = ()) -> tuple[dict[str, int], list[str]]:
    """``align16_<name>`` for each of ``names`` from the integers ``known`` (launch values or ``--shape``
    sizes), and notes naming the parameters that make a load unaligned and those assumed aligned for want of
    a value (see the module docstring).  ``constants`` (constexprs: constants to Triton, a tile size a power
    of two) are aligned without a note."""
    constants = set(constants)
    env: dict[str, int] = {}
    odd: list[str] = []
    unknown: list[str] = []
    for name in names:
        value = known.get(name)
        if value is None and name not in constants:
            unknown.append(name)
        aligned = value is None or keeps_alignment(int(value))
        env[ALIGN16_PREFIX + name] = int(aligned)
        if not aligned:
            odd.append(f"{name}={int(value)}")
    notes = []
    if odd:
        notes.append(f"kernel {kernel!r}: {', '.join(odd)} not a multiple of 16: Triton cannot vectorise the loads "
                     "they stride or bound to 16 bytes, so it does not pipeline those of 8/16-bit elements (one "
                     "shared buffer each, whatever num_stages; stages do not hide their latency)")
    if unknown:
        notes.append(f"kernel {kernel!r}: {', '.join(unknown)} not given: assumed multiples of 16 (contiguous "
                     "tensors whose sizes are), the tl.dot operand loads they decide counted as pipelined; give them as "
                     "shapes (--shape NAME=VALUE) to count shared memory as Triton will at odd sizes")
    return env, notes


def alignment_shapes(spec, bound: Mapping[str, object]) -> dict[str, int]:
    """The launch's integers that decide which loads are pipelined (``align_params`` of the footprint), from
    the bound arguments ``bound``: what a caller adds to the required shapes so the model counts shared
    memory as Triton allocates it at this launch (an argument absent or not an int stays unknown)."""
    import numbers

    names = spec_alignment_params(spec)
    out: dict[str, int] = {}
    for name in names:
        v = bound.get(name)
        if isinstance(v, numbers.Integral) and not isinstance(v, bool):
            out[name] = int(v)
    return out
