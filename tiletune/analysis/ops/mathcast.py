"""Elementwise math, ``tl.where``, casts, inline assembly and scalar ``min``/``max``."""

from __future__ import annotations

import libcst as cst

from ..expr import emax, emin
from ..values import UNKNOWN, Val, align_dims, broadcast_shapes, is_float, promote
from ..trace import EMPTY
from .tables import BOOL_MATH, INT_KEEP_MATH

__all__ = ["MathOps"]


class MathOps:
    """Mixin of :class:`~tiletune.analysis.shapes.Interpreter`: elementwise math, ``tl.where``, casts, inline assembly and scalar ``min``/``max``."""

    def elementwise(self, name: str, args: list[Val], node: cst.Call) -> Val:
        vals = [a for a in args if a.kind == "value"]
        if not vals:
            return UNKNOWN
        shape = broadcast_shapes([v.shape for v in vals])
        dtype = vals[0].dtype
        weak = vals[0].weak
        for v in vals[1:]:
            dtype = promote(Val(dtype=dtype, weak=weak), v)
            weak = weak and v.weak
        if name in BOOL_MATH:
            dtype = "int1"
        elif dtype is not None and not is_float(dtype) and name not in INT_KEEP_MATH and name not in ("maximum", "minimum", "clamp"):
            dtype = "fp32"
        rank = len(shape) if shape is not None else 0
        out = Val(
            shape=shape,
            dtype=dtype,
            weak=weak,
            params=frozenset().union(*(v.params for v in vals)),
            pids=frozenset().union(*(v.pids for v in vals)),
            tiles=frozenset().union(*(v.tiles for v in vals)) if name in ("maximum", "minimum", "clamp") else EMPTY,
            loads=frozenset().union(*(v.loads for v in vals)),
            accs=frozenset().union(*(v.accs for v in vals)),
            reduced=any(v.reduced and v.shape == shape for v in vals),
            varying=frozenset().union(*(align_dims(v.varying, len(v.shape or ()), rank) for v in vals)),
        )
        if name in ("maximum", "minimum") and shape == () and all(v.expr is not None for v in vals[:2]) and len(vals) >= 2:
            out = out.with_(expr=(emax if name == "maximum" else emin)(vals[0].expr, vals[1].expr))
        if any(v.node is not None for v in vals) or shape:
            out = out.with_(node=self.add_node("elementwise", node, shape, dtype, vals))
        return out

    def minmax_scalar(self, name: str, pos: list[Val], node: cst.Call) -> Val:
        vals = [v for v in pos if v.kind == "value"]
        if not vals:
            return UNKNOWN
        if len(pos) == 1 and pos[0].kind == "tuple":
            vals = list(pos[0].items)
        exprs = [v.expr for v in vals]
        expr = None
        if all(e is not None for e in exprs) and exprs:
            expr = (emin if name == "min" else emax)(*exprs)
        lits = [v.literal for v in vals]
        lit = None
        if all(isinstance(x, (int, float)) for x in lits) and lits:
            lit = min(lits) if name == "min" else max(lits)
        return Val(
            shape=broadcast_shapes([v.shape for v in vals]),
            expr=expr,
            dtype=vals[0].dtype,
            weak=all(v.weak for v in vals),
            params=frozenset().union(*(v.params for v in vals)),
            pids=frozenset().union(*(v.pids for v in vals)),
            literal=lit,
        )

    def op_where(self, a: dict, pos, kws, node: cst.Call) -> Val:
        c, x, y = a.get("condition", UNKNOWN), a.get("x", UNKNOWN), a.get("y", UNKNOWN)
        vals = [v for v in (c, x, y) if v.kind == "value"]
        shape = broadcast_shapes([v.shape for v in vals]) if len(vals) == 3 else None
        dtype = promote(x, y) if x.kind == y.kind == "value" else None
        rank = len(shape) if shape is not None else 0
        out = Val(
            shape=shape,
            dtype=dtype,
            weak=x.weak and y.weak,
            params=c.params | x.params | y.params,
            pids=x.pids | y.pids,
            tiles=x.tiles | y.tiles,
            ptrs=x.ptrs | y.ptrs,
            pointer=x.pointer or y.pointer,
            loads=x.loads | y.loads,
            accs=x.accs | y.accs,
            reduced=(x.reduced and x.shape == shape) or (y.reduced and y.shape == shape),
            unit=align_dims(x.unit, len(x.shape or ()), rank) | align_dims(y.unit, len(y.shape or ()), rank),
            varying=frozenset().union(*(align_dims(v.varying, len(v.shape or ()), rank) for v in vals)),
        )
        return out.with_(node=self.add_node("elementwise", node, shape, dtype, vals))

    def op_cast(self, a: dict, node: cst.Call) -> Val:
        x = a.get("input", UNKNOWN)
        dt = a.get("dtype")
        if x.kind != "value":
            return UNKNOWN
        target = dt.dtype if dt is not None and dt.kind == "dtype" else None
        if target is not None and target.startswith("ptr:"):
            out = x.with_(dtype=None, pointer=True, weak=False, literal=None, direct=EMPTY)
        elif target is not None and target.startswith("ptrto:"):  # an address whose element type the cast names
            out = x.with_(dtype=None, pointer=True, pointee=target[6:], weak=False, literal=None, direct=EMPTY)
        else:
            out = x.with_(dtype=target, weak=False, literal=None, direct=EMPTY)
        if x.node is not None or x.shape:
            out = out.with_(node=self.add_node("elementwise", node, x.shape, out.dtype, (x,)))
        return out

    def op_cast_fn(self, a: dict, pos, kws, node: cst.Call) -> Val:
        return self.op_cast(a, node)

    def op_inline_asm(self, a: dict, pos, kws, node: cst.Call) -> Val:
        args = a.get("args", UNKNOWN)
        vals = list(args.items) if args.kind == "tuple" else [args]
        vals = [v for v in vals if v.kind == "value"]
        shape = broadcast_shapes([v.shape for v in vals]) if vals else None
        dt = a.get("dtype")
        dtype = dt.dtype if dt is not None and dt.kind == "dtype" else None
        nid = self.add_node("elementwise", node, shape, dtype, vals)
        return Val(shape=shape, dtype=dtype, node=nid, loads=frozenset().union(*(v.loads for v in vals)) if vals else EMPTY)
