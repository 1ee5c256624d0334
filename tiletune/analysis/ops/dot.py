"""``tl.dot``: operand extents, result dtype, accumulators."""

from __future__ import annotations

import libcst as cst

from ..values import UNKNOWN, Val, shape_bytes
from ..cst_text import node_text
from ..trace import EMPTY, DotRec

__all__ = ["DotOps"]


class DotOps:
    """Mixin of :class:`~tiletune.analysis.shapes.Interpreter`: ``tl.dot``: operand extents, result dtype, accumulators."""

    def op_dot_scaled(self, a: dict, pos, kws, node: cst.Call) -> Val:
        """``tl.dot_scaled``: a dot of microscaled operands; an ``e2m1`` (fp4) operand packs two
        values per byte along K, so its tile is half as long as the product's K."""
        fmt = a.get("lhs_format")
        pack = a.get("lhs_k_pack")
        packed = fmt is not None and fmt.literal == "e2m1" and not (pack is not None and pack.literal is False)
        return self.op_dot({"input": a.get("lhs", UNKNOWN), "other": a.get("rhs", UNKNOWN), "acc": a.get("acc"),
                            "out_dtype": a.get("out_dtype")}, pos, kws, node, k_factor=2 if packed else 1)

    def op_dot(self, a: dict, pos, kws, node: cst.Call, k_factor: int = 1) -> Val:
        x, y = a.get("input", UNKNOWN), a.get("other", UNKNOWN)
        acc = a.get("acc")
        if acc is not None and acc.kind == "none":
            acc = None
        m = n = k = None
        shape = None
        if x.shape and y.shape and len(x.shape) >= 2 and len(y.shape) >= 2:
            m, k, n = x.shape[-2], x.shape[-1] * k_factor, y.shape[-1]
            shape = tuple(x.shape[:-1]) + (n,)
        else:
            for operand in (x, y):  # a parameter that is a dot operand is a tile: a device function's
                if operand.shape == () and operand.node is not None and operand.node.startswith("param:"):
                    self.tile_parameter(operand.node[6:])
            self.gap(node, "unknown dot extent", f"operand shapes of {node_text(node)} unknown")
        out_dtype = self._dtype_arg(a.get("out_dtype"), None)
        if acc is not None and acc.dtype is not None:
            dtype = acc.dtype
        elif out_dtype is not None:
            dtype = out_dtype
        elif x.dtype in ("int8", "uint8") or y.dtype in ("int8", "uint8"):
            dtype = "int32"
        else:
            dtype = "fp32"
        line = self.line(node)
        for d in (m, n, k):
            if d is not None and d.op == "sym" and d.args[0] in self.constexprs:
                self.trace.dot_dims.setdefault(d.args[0], line)
        inputs = [v for v in (x, y, acc) if v is not None]
        nid = self.add_node("dot", node, shape, dtype, inputs)
        loop = self.loop_stack[-1] if self.loop_stack else None
        self.trace.dots.append(
            DotRec(nid, self.span(node), x, y, acc, m, n, k, dtype, self.in_loop(), self.total_trips(), loop)
        )
        fed = x.loads | y.loads
        for rec in self.trace.accesses:
            if rec.node in fed:
                rec.feeds_dot = True
        if shape:
            b = shape_bytes(shape, dtype)
            if b is not None and acc is None:
                self._stmt_temps[nid] = b
        return Val(shape=shape, dtype=dtype, node=nid, accs=frozenset((nid,)) | (acc.accs if acc is not None else EMPTY))
