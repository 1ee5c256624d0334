"""Expression evaluation of the body interpreter: names, literals, operators, subscripts, attributes."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from .expr import Expr, const, product
from .model import DTYPE_BYTES
from .values import (NONE, TL_DTYPES, UNKNOWN, Val, align_dims, align_pairs, broadcast_shapes, is_float, join_vals, promote,
                     remap_pairs)
from .cst_text import BINOP_TEXT, dotted_name, node_text, root_name
from .trace import EMPTY, ScratchRec, offset_anchors
from .ops.tables import TL_ROOTS

__all__ = ["ExprEval"]


def _is_one(e: Optional[Expr]) -> bool:
    return e is not None and e.is_const and e.value == 1


def _fold(op: str, a, b):
    try:
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/":
            return a / b
        if op == "//":
            return a // b
        if op == "%":
            return a % b
    except (ZeroDivisionError, TypeError, OverflowError):
        return None
    return None


def _anchors(tile: Val, offset: Val) -> frozenset:
    """Names that position the tile ``tile`` when the scalar ``offset`` is added to it
    (its symbols other than program ids and the tile's own extents)."""
    if not tile.tiles or not tile.shape or offset.shape != () or offset.expr is None:
        return EMPTY
    return offset_anchors(offset.expr, tile.tiles)


class ExprEval:
    """Mixin of :class:`~tiletune.analysis.shapes.Interpreter`: one method per expression node type."""

    def ev(self, node: cst.CSTNode) -> Val:
        fn = self._dispatch.get(type(node))
        if fn is None:
            self.gap(node, "unknown op", f"expression {node_text(node)} not understood")
            return UNKNOWN
        return fn(self, node)

    def ev_name(self, node: cst.Name) -> Val:
        name = node.value
        v = self.env.get(name)
        if v is not None:
            self.live.use(name)
            return v
        if name in self.module_constants:
            c = self.module_constants[name]
            if isinstance(c, bool) or not isinstance(c, int):
                return Val(shape=(), weak=True, literal=c)
            return Val(shape=(), expr=const(c), dtype="int32", weak=True, literal=c)
        if name == "True" or name == "False":
            return Val(shape=(), expr=const(int(name == "True")), dtype="int1", weak=True, literal=name == "True")
        if name == "None":
            return NONE
        # a module global (a float constant, a helper function, ...)
        return Val(shape=(), weak=True)

    def ev_integer(self, node: cst.Integer) -> Val:
        try:
            value = int(node.value, 0)
        except ValueError:
            value = int(node.value.replace("_", ""))
        return Val(shape=(), expr=const(value), dtype="int32", weak=True, literal=value)

    def ev_float(self, node: cst.Float) -> Val:
        try:
            value = float(node.value)
        except ValueError:
            value = None
        return Val(shape=(), dtype="fp32", weak=True, literal=value)

    def ev_string(self, node: cst.CSTNode) -> Val:
        value = node.evaluated_value if isinstance(node, cst.SimpleString) else None
        return Val(kind="other", shape=None, literal=value)

    def ev_tuple(self, node: cst.CSTNode) -> Val:
        items = []
        for el in node.elements:
            if isinstance(el, cst.StarredElement):
                inner = self.ev(el.value)
                if inner.kind == "tuple":
                    items.extend(inner.items)
                else:
                    return Val(kind="tuple", shape=None)
            else:
                items.append(self.ev(el.value))
        return Val(kind="tuple", shape=None, items=tuple(items))

    def ev_paren(self, node: cst.CSTNode) -> Val:  # pragma: no cover - libcst keeps parens on nodes
        return self.ev(node.value)

    def ev_ellipsis(self, node: cst.CSTNode) -> Val:
        return Val(kind="other", shape=None, literal=Ellipsis)

    def ev_ifexp(self, node: cst.IfExp) -> Val:
        known = self.static_test(node.test)
        if known is not None:
            return self.ev(node.body if known else node.orelse)
        self.ev(node.test)
        return join_vals(self.ev(node.body), self.ev(node.orelse))

    def ev_unary(self, node: cst.UnaryOperation) -> Val:
        v = self.ev(node.expression)
        if v.kind != "value":
            return UNKNOWN
        if isinstance(node.operator, cst.Minus):
            lit = -v.literal if isinstance(v.literal, (int, float)) and not isinstance(v.literal, bool) else None
            return v.with_(expr=None if v.expr is None else const(-1) * v.expr, ptrs=EMPTY, unit=EMPTY, literal=lit)
        if isinstance(node.operator, cst.Plus):
            return v
        if isinstance(node.operator, cst.Not):
            return v.with_(expr=None, dtype="int1", ptrs=EMPTY, literal=None)
        return v.with_(expr=None, ptrs=EMPTY, unit=EMPTY, literal=None)

    def ev_boolop(self, node: cst.BooleanOperation) -> Val:
        a, b = self.ev(node.left), self.ev(node.right)
        shape = broadcast_shapes([a.shape, b.shape]) if a.kind == b.kind == "value" else None
        return Val(shape=shape, dtype="int1", params=a.params | b.params, pids=a.pids | b.pids)

    def ev_binop(self, node: cst.BinaryOperation) -> Val:
        a = self.ev(node.left)
        b = self.ev(node.right)
        return self.binop(BINOP_TEXT.get(type(node.operator), "?"), a, b, node)

    def binop(self, op: str, a: Val, b: Val, node: cst.CSTNode) -> Val:
        if a.kind == "tuple" and b.kind == "tuple" and op == "+":
            return Val(kind="tuple", shape=None, items=a.items + b.items)
        if a.kind != "value" or b.kind != "value":
            if a.kind in ("blockptr", "desc") or b.kind in ("blockptr", "desc"):
                self.gap(node, "unknown op", f"arithmetic on a block pointer: {node_text(node)}")
            return UNKNOWN.with_(params=a.params | b.params)
        shape = broadcast_shapes([a.shape, b.shape])
        rank = len(shape) if shape is not None else 0
        ua = align_dims(a.unit, len(a.shape or ()), rank)
        ub = align_dims(b.unit, len(b.shape or ()), rank)
        va = align_dims(a.varying, len(a.shape or ()), rank)
        vb = align_dims(b.varying, len(b.shape or ()), rank)
        varying = va | vb
        expr = None
        unit: frozenset = EMPTY
        ptrs: frozenset = EMPTY
        pointer = False
        dtype = promote(a, b)
        ea, eb = a.expr, b.expr
        anchors = a.anchors | b.anchors
        strides = a.strides | b.strides
        bounds = align_pairs(a.bounds, len(a.shape or ()), rank) | align_pairs(b.bounds, len(b.shape or ()), rank)
        if op == "*":
            # a scalar parameter times a varying index: a stride (its divisibility decides the alignment)
            if a.shape == () and vb and not _multiple_of_16(a.expr):
                strides |= a.params
            if b.shape == () and va and not _multiple_of_16(b.expr):
                strides |= b.params
        elif op == "%" and b.shape == () and ua:
            bounds |= frozenset((d, p) for d in ua for p in b.params)  # x % N: contiguous runs of gcd(BLOCK, N)
        if op == "+":
            unit = ua | ub
            ptrs = a.ptrs | b.ptrs
            pointer = a.pointer or b.pointer
            if ea is not None and eb is not None:
                expr = ea + eb
            anchors |= _anchors(a, b) | _anchors(b, a)
        elif op == "-":
            unit = ua | ub
            ptrs = a.ptrs
            pointer = a.pointer and not b.pointer
            if ea is not None and eb is not None:
                expr = ea - eb
            anchors |= _anchors(a, b) | _anchors(b, a)
        elif op == "*":
            if a.shape == () and _is_one(a.expr):
                unit = ub
            elif b.shape == () and _is_one(b.expr):
                unit = ua
            if ea is not None and eb is not None:
                expr = ea * eb
            self._pid_mult(a, b, node)
            self._pid_mult(b, a, node)
            self._loop_mult(a, b, node)
            self._loop_mult(b, a, node)
        elif op == "//":
            if ea is not None and eb is not None:
                expr = ea // eb
        elif op == "%":
            unit = ua
            self._bind(a, b, node, "modulo")
        elif op == "<<":
            if ea is not None and eb is not None and eb.is_const and 0 <= eb.value < 63:
                expr = ea * (1 << eb.value)
        elif op == "/":
            if dtype is None or not is_float(dtype):
                dtype = "fp32" if (a.dtype or b.dtype) is not None else None
        lit = None
        if isinstance(a.literal, (int, float)) and isinstance(b.literal, (int, float)):
            lit = _fold(op, a.literal, b.literal)
        out = Val(
            shape=shape,
            dtype=dtype,
            expr=expr,
            weak=a.weak and b.weak,
            params=a.params | b.params,
            tiles=a.tiles | b.tiles,
            pids=a.pids | b.pids,
            loopvars=a.loopvars | b.loopvars,
            anchors=anchors,
            ptrs=ptrs,
            unit=unit,
            varying=varying,
            strides=strides,
            bounds=bounds,
            loads=a.loads | b.loads,
            accs=a.accs | b.accs,
            reduced=(a.reduced and a.shape == shape) or (b.reduced and b.shape == shape),
            pointer=pointer,
            pointee=(a.pointee or b.pointee) if op == "+" else a.pointee if op == "-" else None,
            literal=lit,
        )
        if a.node is not None or b.node is not None or (shape is not None and shape != ()):
            out = out.with_(node=self.add_node("elementwise", node, shape, dtype, (a, b)))
        return out

    def _pid_mult(self, a: Val, b: Val, node: cst.CSTNode) -> None:
        """``pid * BLOCK``: ``a`` derives from program_id, ``b`` is a constexpr scalar."""
        if a.pids and not b.pids and a.shape == () and b.shape == ():
            for p in self.constexpr_syms(b):
                self.trace.pid_mults.append((p, a.pids, self.line(node)))

    def _loop_mult(self, a: Val, b: Val, node: cst.CSTNode) -> None:
        """``i * BLOCK`` (also ``(i % COUNT) * BLOCK``): ``a`` derives from a loop's induction variable,
        ``b`` is a constexpr scalar: the tile ``BLOCK`` is walked by that loop."""
        if a.loopvars and not b.loopvars and not b.pids and a.shape == () and b.shape == ():
            for p in self.constexpr_syms(b):
                self.trace.loop_mults.append((p, self.line(node)))

    def _bind(self, a: Val, b: Val, node: cst.CSTNode, how: str = "compare") -> None:
        """A comparison / modulo of tile offsets ``a`` against a bound ``b``.

        Offsets positioned by something the bound or another constexpr names
        (``seq_len - BW + tl.arange(0, BW)`` against ``seq_len``, a sub-chunk
        ``i * BT + BC + tl.arange(0, BC)``) are ``"anchored"``: such a tile
        does not have to cover the extent it is compared with.
        """
        if a.tiles and not b.tiles and b.params:
            if how == "compare" and a.anchors & (b.params | self.constexprs):
                how = "anchored"
            self.trace.binds.append((a.tiles, b.params, self.line(node), node_text(node), how))

    def ev_compare(self, node: cst.Comparison) -> Val:
        left = self.ev(node.left)
        out: Optional[Val] = None
        for c in node.comparisons:
            right = self.ev(c.comparator)
            if left.kind == "value" and right.kind == "value":
                self._bind(left, right, node)
                self._bind(right, left, node)
                shape = broadcast_shapes([left.shape, right.shape])
                v = Val(
                    shape=shape,
                    dtype="int1",
                    params=left.params | right.params,
                    tiles=left.tiles | right.tiles,
                    pids=left.pids | right.pids,
                    loads=left.loads | right.loads,
                    bounds=_compare_bounds(left, right, len(shape or ())) | _compare_bounds(right, left, len(shape or ())),
                )
                if left.node is not None or right.node is not None or shape:
                    v = v.with_(node=self.add_node("elementwise", node, shape, "int1", (left, right)))
            else:
                v = Val(shape=(), dtype="int1")
            out = v if out is None else self.binop("&", out, v, node)
            left = right
        return out if out is not None else UNKNOWN

    @staticmethod
    def _same_shaped_item(base: Val, idx: list) -> Optional[Val]:
        """``t[i]`` with ``i`` not known at analysis time (a ``tl.static_range`` variable): one of
        the items, so known when every item is a value of the same known shape."""
        if len(idx) != 1 or idx[0].kind != "value" or idx[0].shape != () or not base.items:
            return None
        first = base.items[0]
        if any(it.kind != "value" or it.shape is None or it.shape != first.shape for it in base.items):
            return None
        out = first
        for it in base.items[1:]:
            out = join_vals(out, it)
        return out

    def ev_subscript(self, node: cst.Subscript) -> Val:
        base = self.ev(node.value)
        idx = []
        for el in node.slice:
            s = el.slice
            if isinstance(s, cst.Index):
                idx.append(self.ev(s.value))
            else:
                for part in (s.lower, s.upper, s.step):
                    if part is not None:
                        self.ev(part)
                idx.append(Val(kind="slice", shape=None))
        if base.kind == "tuple":
            if len(idx) == 1 and idx[0].kind == "value" and isinstance(idx[0].literal, int):
                i = idx[0].literal
                if -len(base.items) <= i < len(base.items):
                    return base.items[i]
            if len(idx) == 1 and idx[0].kind == "slice" and isinstance(node.slice[0].slice, cst.Slice):
                s = node.slice[0].slice
                lo = self._int_literal(s.lower)
                hi = self._int_literal(s.upper)
                return Val(kind="tuple", shape=None, items=base.items[lo:hi])
            same = self._same_shaped_item(base, idx)
            if same is not None:
                return same
            self.gap(node, "unknown op", f"tuple subscript {node_text(node)} not understood")
            return UNKNOWN
        if base.kind != "value":
            return UNKNOWN
        if base.shape is None:
            return UNKNOWN.with_(params=base.params, tiles=base.tiles, pids=base.pids, ptrs=base.ptrs, loads=base.loads)
        if base.shape == () and base.node is not None and base.node.startswith("param:") and any(i.kind in ("none", "slice") for i in idx):
            self.tile_parameter(base.node[6:])
            self.gap(node, "unknown access shape", f"parameter {base.node[6:]} is indexed as a tile (a helper called with tiles?); its shape is unknown")
            return UNKNOWN.with_(params=base.params, ptrs=base.ptrs)
        new_shape: list[Expr] = []
        dim_map: dict[int, int] = {}
        src = 0
        n_real = sum(1 for i in idx if not (i.kind == "none" or i.literal is Ellipsis))
        bare = [el.slice.lower is None and el.slice.upper is None and el.slice.step is None
                for el in node.slice if isinstance(el.slice, cst.Slice)]
        if all(i.kind in ("none", "slice") for i in idx) and all(bare):
            # Triton's own rule: the k-th index ``None`` inserts a unit dimension at position k, ``:``
            # keeps everything (so ``scalar[:, None]`` is a 1-element tile)
            new_shape = list(base.shape)
            where = list(range(len(base.shape)))
            for k, i in enumerate(idx):
                if i.kind == "none":
                    at = min(k, len(new_shape))
                    new_shape.insert(at, const(1))
                    where = [w + 1 if w >= at else w for w in where]
            dim_map = dict(enumerate(where))
            idx, src = [], len(base.shape)
        for i in idx:
            if i.kind == "none":
                new_shape.append(const(1))
            elif i.literal is Ellipsis:
                for _ in range(len(base.shape) - n_real):
                    dim_map[src] = len(new_shape)
                    new_shape.append(base.shape[src])
                    src += 1
            elif i.kind == "slice":
                if src >= len(base.shape):
                    self.gap(node, "unknown op", f"too many indices in {node_text(node)}")
                    return UNKNOWN
                dim_map[src] = len(new_shape)
                new_shape.append(base.shape[src])
                src += 1
            else:
                src += 1  # integer index drops the dimension
        while src < len(base.shape):
            dim_map[src] = len(new_shape)
            new_shape.append(base.shape[src])
            src += 1
        shape = tuple(new_shape)
        if base.loads and len(base.shape) == 1 and len(shape) > 1 and base.node is not None:
            self.trace.scratch.append(ScratchRec("broadcast", base.node, base.shape, base.dtype, None, self.line(node), self.in_loop()))
        out = base.with_(
            shape=shape,
            unit=frozenset(dim_map[d] for d in base.unit if d in dim_map),
            bounds=remap_pairs(base.bounds, dim_map),
            varying=frozenset(dim_map[d] for d in base.varying if d in dim_map),
            expr=base.expr if not shape else None,
        )
        if base.node is not None:
            out = out.with_(node=self.add_node("other", node, shape, base.dtype, (base,)))
        return out

    def _int_literal(self, node: Optional[cst.CSTNode]) -> Optional[int]:
        if node is None:
            return None
        v = self.ev(node)
        return v.literal if isinstance(v.literal, int) else None

    def ev_attribute(self, node: cst.Attribute) -> Val:
        root = root_name(node)
        attr = node.attr.value
        if root is not None and root not in self.env:
            q = dotted_name(node)
            if attr in TL_DTYPES and root_name(node) in TL_ROOTS:
                return Val(kind="dtype", shape=None, dtype=TL_DTYPES[attr])
            return Val(shape=(), weak=True, literal=None, kind="other") if q else UNKNOWN
        base = self.ev(node.value)
        if attr == "T":
            return self.permute(base, None, node)
        if attr == "value" and base.kind == "dtype":  # ``tl.constexpr(dtype).value``: the dtype itself
            return base
        if attr == "dtype" or (attr == "type" and base.kind == "value" and (base.pointer or base.ptrs)):
            # ``ptr.type.element_ty`` reads a pointer's type as ``ptr.dtype.element_ty`` does
            if base.kind == "value" and base.shape == () and base.ptrs and base.dtype is None:
                p = self.choose_pointer(base)
                if p is not None:
                    self.mark_pointer(p, f"{node_text(node)} at line {self.line(node)}")
                    return Val(kind="dtype", shape=None, dtype=f"ptr:{p}")
            if base.kind == "value" and base.pointer:
                p = self.choose_pointer(base)
                return Val(kind="dtype", shape=None, dtype=f"ptr:{p}" if p else None)
            return Val(kind="dtype", shape=None, dtype=base.dtype)
        if attr == "element_ty" and base.kind == "dtype":
            d = base.dtype
            return Val(kind="dtype", shape=None, dtype=f"elem:{d[4:]}" if d and d.startswith("ptr:") else None)
        if attr in ("shape", "numel") and base.kind == "value" and base.shape == () and base.node is not None \
                and base.node.startswith("param:"):
            # ``x.shape`` / ``x.numel`` of a parameter: the function is called with tiles
            self.tile_parameter(base.node[6:])
            self.gap(node, "unknown access shape", f"{node_text(node)}: parameter {base.node[6:]} is used as a tile "
                     "(a helper called with tiles?); its shape is unknown")
            return UNKNOWN
        if attr == "shape" and base.kind == "value" and base.shape is not None:
            return Val(kind="tuple", shape=None, items=tuple(Val(shape=(), expr=d, weak=True, dtype="int32") for d in base.shape))
        if attr == "numel" and base.kind == "value" and base.shape is not None:
            return Val(shape=(), expr=product(list(base.shape)), weak=True, dtype="int32")
        if attr == "int_bitwidth" and base.kind == "dtype" and (base.dtype or "").startswith(("int", "uint")):
            attr = "primitive_bitwidth"
        if attr in ("primitive_bitwidth", "itemsize"):
            size = DTYPE_BYTES.get(base.dtype or "") if base.kind == "dtype" else None
            if size is None:
                return Val(shape=(), weak=True)
            value = (1 if base.dtype == "int1" else 8 * size) if attr == "primitive_bitwidth" else size
            return Val(shape=(), expr=const(value), dtype="int32", weak=True, literal=value)
        return Val(kind="other", shape=None)


def _compare_bounds(tile: Val, bound: Val, rank: int) -> frozenset:
    """``offs < N``: (dimension, parameter) pairs, one per dimension along which ``tile`` steps by one and per
    parameter of the scalar ``bound`` (Triton's mask alignment along that dimension is N's divisibility)."""
    if bound.shape != () or not tile.unit or not bound.params:
        return EMPTY
    dims = align_dims(tile.unit, len(tile.shape or ()), rank)
    return frozenset((d, p) for d in dims for p in bound.params)


def _multiple_of_16(e: Optional[Expr]) -> bool:
    """A stride known to be a multiple of 16 whatever its parameters (``16 * stride``): AxisInfo multiplies the
    divisibilities, so the parameter does not decide the alignment."""
    if e is None:
        return False
    if e.op == "const":
        return e.value % 16 == 0
    if e.op == "mul":
        factor = 1
        for x in e.args:
            if x.op == "const":
                factor *= x.value
        return factor % 16 == 0
    return False
