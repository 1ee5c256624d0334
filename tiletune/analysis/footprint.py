"""The on-chip footprint model: :class:`~tiletune.analysis.model.Footprint`.

All four figures are expressions over tiling parameters, ``esize_<ptr>`` and
``num_stages``.

``live_bytes``
    Peak bytes of named tiles live at once (:mod:`.liveness`): each tile
    variable counts ``elements * element size`` from its definition to its
    last use (to the loop's end when it is carried around a loop), tiles of
    pointers are not counted, loads inside loops count ``num_stages`` times.
    Unknown element types count 4 bytes.

``dot_operand_bytes`` / ``accumulator_bytes``
    One stage of ``tl.dot`` operand tiles (each distinct operand once) and
    the dot results/accumulators.

``shared_bytes``
    NVIDIA shared memory as Triton 3.6 allocates it on sm_90 (see
    :func:`shared_bytes` for the rules and the compiles they were fitted to).
"""

from __future__ import annotations

from typing import Optional

from .expr import NUM_STAGES, Expr, const, emax, sym, total
from .model import Footprint, KernelSpec
from .shapes import Trace
from .values import dtype_size, shape_bytes, shape_elems

__all__ = ["compute_footprint", "shared_bytes"]


def compute_footprint(spec: KernelSpec, trace: Trace) -> Footprint:
    """The footprint of the kernel whose body produced ``trace``."""
    operands: dict[str, Expr] = {}
    accs: dict[str, Expr] = {}
    for d in trace.dots:
        for v in (d.a, d.b):
            b = shape_bytes(v.shape, v.dtype)
            if b is not None:
                operands.setdefault(v.node or f"{d.node}:{id(v)}", b)
        if d.m is not None and d.n is not None:
            key = d.acc.node if d.acc is not None and d.acc.node is not None else d.node
            batch = const(1)
            if d.a.shape is not None and len(d.a.shape) > 2:
                for x in d.a.shape[:-2]:
                    batch = batch * x
            accs.setdefault(key, batch * d.m * d.n * dtype_size(d.out_dtype))
    return Footprint(
        live_bytes=trace.live.peak(),
        shared_bytes=shared_bytes(trace),
        dot_operand_bytes=total(operands.values()),
        accumulator_bytes=total(accs.values()),
    )


def _pipelined_loads(trace: Trace) -> list:
    return [a for a in trace.accesses if a.kind == "load" and a.feeds_dot and a.shape]


def shared_bytes(trace: Trace) -> Expr:
    """Shared memory bytes (first model: dot operands staged ``num_stages`` deep in loops)."""
    terms: list[Expr] = []
    stages = sym(NUM_STAGES)
    for a in _pipelined_loads(trace):
        b = shape_bytes(a.shape, a.dtype)
        if b is None:
            continue
        terms.append(b * stages if a.in_loop else b)
    pipelined = total(terms)
    scratch: list[Expr] = []
    for s in trace.scratch:
        b = shape_bytes(s.shape, s.dtype)
        if b is not None and s.kind in ("trans", "reshape", "join", "split", "gather", "sort"):
            scratch.append(b)
    if not scratch:
        return pipelined
    return emax(pipelined, *scratch)
