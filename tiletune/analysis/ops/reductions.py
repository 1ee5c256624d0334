"""Reductions, scans and histograms (the shared-memory scratch candidates)."""

from __future__ import annotations

import libcst as cst

from ..expr import const
from ..values import UNKNOWN, Val
from ..trace import ScratchRec

__all__ = ["ReductionOps"]


class ReductionOps:
    """Mixin of :class:`~tiletune.analysis.shapes.Interpreter`: reductions, scans and histograms (the shared-memory scratch candidates)."""

    def op_reduce(self, name: str, a: dict, node: cst.Call) -> Val:
        x = a.get("input", UNKNOWN)
        axis_v = a.get("axis")
        keep = a.get("keep_dims")
        keep_dims = bool(keep is not None and keep.literal)
        if x.kind == "tuple":
            xs = list(x.items)
        else:
            xs = [x]
        outs = []
        axis = None
        for xv in xs:
            shape = xv.shape
            if shape is not None:
                if axis_v is None or axis_v.kind == "none":
                    shape = tuple(const(1) for _ in shape) if keep_dims else ()
                elif isinstance(axis_v.literal, int) and shape:
                    axis = axis_v.literal % len(shape)
                    shape = tuple(const(1) if (i == axis and keep_dims) else d for i, d in enumerate(shape) if i != axis or keep_dims)
                else:
                    shape = None
            dtype = xv.dtype
            if name in ("argmax", "argmin"):
                dtype = "int32"
            elif name == "sum" and dtype in ("int1", "int8", "uint8", "int16", "uint16"):
                dtype = "int32"
            if name == "sum" and a.get("dtype") is not None:
                dtype = self._dtype_arg(a.get("dtype"), dtype)
            outs.append((shape, dtype))
        first_shape, first_dtype = outs[0]
        nid = self.add_node("reduce", node, first_shape, first_dtype, xs)
        self.trace.scratch.append(ScratchRec("reduce", nid, x.shape if x.kind == "value" else xs[0].shape, first_dtype, axis, self.line(node), self.in_loop()))
        vals = tuple(Val(shape=s, dtype=d, node=nid, reduced=True) for s, d in outs)
        ri = a.get("return_indices")
        if name in ("max", "min") and ri is not None and ri.literal:
            return Val(kind="tuple", shape=None, items=(vals[0], Val(shape=vals[0].shape, dtype="int32", node=nid)))
        if x.kind == "tuple":
            return Val(kind="tuple", shape=None, items=vals)
        return vals[0]

    def op_scan(self, name: str, a: dict, node: cst.Call) -> Val:
        x = a.get("input", UNKNOWN)
        axis_v = a.get("axis")
        xs = list(x.items) if x.kind == "tuple" else [x]
        nid = self.add_node("scan", node, xs[0].shape, xs[0].dtype, xs)
        axis = axis_v.literal if axis_v is not None and isinstance(axis_v.literal, int) else None
        self.trace.scratch.append(ScratchRec("scan", nid, xs[0].shape, xs[0].dtype, axis, self.line(node), self.in_loop()))
        vals = tuple(Val(shape=v.shape, dtype=v.dtype, node=nid) for v in xs)
        return Val(kind="tuple", shape=None, items=vals) if x.kind == "tuple" else vals[0]

    def op_histogram(self, a: dict, pos, kws, node: cst.Call) -> Val:
        x = a.get("input", UNKNOWN)
        bins = a.get("num_bins", UNKNOWN)
        shape = (bins.expr,) if bins.expr is not None else None
        self._shape_evidence(shape, "tl.histogram bins", self.line(node))
        nid = self.add_node("reduce", node, shape, "int32", (x, bins))
        self.trace.scratch.append(ScratchRec("histogram", nid, shape, "int32", None, self.line(node), self.in_loop()))
        return Val(shape=shape, dtype="int32", node=nid)
