"""From the interpreter's trace to the public records on :class:`KernelSpec`.

The dataflow graph itself is built while interpreting (:mod:`.shapes` adds a
node per operation and an edge per operand); here the trace's access and dot
records become :class:`MemoryAccess` / :class:`DotInfo`, and the pointer
parameters are sorted by how they are used.
"""

from __future__ import annotations

from .model import DotInfo, KernelSpec, MemoryAccess
from .shapes import Trace

__all__ = ["fill_records"]


def fill_records(spec: KernelSpec, trace: Trace) -> None:
    """Set ``accesses``, ``dots``, the pointer lists, ``static_asserts``, ``graph`` and ``notes``."""
    spec.graph = trace.graph
    spec.accesses = [
        MemoryAccess(
            node=a.node,
            kind=a.kind,
            span=a.span,
            pointer=a.pointer,
            shape=a.shape,
            dtype=a.dtype,
            in_loop=a.in_loop,
            trips=a.trips,
            contiguous_dim=a.contiguous_dim,
            block_ptr=a.block_ptr,
            feeds_dot=a.feeds_dot,
        )
        for a in trace.accesses
    ]
    spec.dots = [
        DotInfo(
            node=d.node,
            span=d.span,
            m=d.m,
            n=d.n,
            k=d.k,
            a_dtype=d.a.dtype,
            b_dtype=d.b.dtype,
            acc_dtype=d.out_dtype,
            in_loop=d.in_loop,
            trips=d.trips,
        )
        for d in trace.dots
    ]
    order = {p.name: p.index for p in spec.params}

    def names(kind: str) -> list[str]:
        found = {a.pointer for a in trace.accesses if a.kind == kind and a.pointer is not None}
        return sorted(found, key=lambda n: order.get(n, 1 << 30))

    spec.loaded_pointers = names("load")
    spec.stored_pointers = names("store")
    spec.atomic_pointers = names("atomic")
    spec.static_asserts = list(trace.static_asserts)
    for n in trace.notes:
        if n not in spec.notes:
            spec.notes.append(n)
