"""Tile creation and scalar sources: ``tl.arange``, ``tl.zeros``/``tl.full``, ``tl.program_id``, ``tl.cdiv``, random numbers."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from ..expr import Expr, cdiv, next_pow2, sym
from ..values import UNKNOWN, Val, broadcast_shapes
from ..cst_text import dotted_name, node_text
from ..trace import EMPTY, PID_PREFIX

__all__ = ["CreationOps"]

SIGS_SWIZZLE = ("i", "j", "size_i", "size_j", "size_g")


def _under_npow2(e: Expr) -> set:
    """Symbols that ``e`` mentions only inside ``next_power_of_2(...)``."""
    inside: set = set()
    outside: set = set()
    _walk_symbols(e, False, inside, outside)
    return inside - outside


def _walk_symbols(x: Expr, under: bool, inside: set, outside: set) -> None:
    """Sort the symbols of ``x`` into ``inside``/``outside`` a ``next_power_of_2`` (a module function: a
    recursive closure is a reference cycle)."""
    if x.op == "sym":
        (inside if under else outside).add(x.args[0])
    elif x.op != "const":
        for arg in x.args:
            _walk_symbols(arg, under or x.op == "npow2", inside, outside)


class CreationOps:
    """Mixin of :class:`~tiletune.analysis.shapes.Interpreter`: tile creation and scalar sources: ``tl.arange``, ``tl.zeros``/``tl.full``, ``tl.program_id``, ``tl.cdiv``, random numbers."""

    def shape_arg(self, v: Optional[Val]) -> Optional[tuple[Expr, ...]]:
        """A shape argument: a tuple/list of integers, or a single integer."""
        if v is None:
            return None
        if v.kind == "tuple":
            dims = [it.expr for it in v.items]
            return None if any(d is None for d in dims) else tuple(dims)
        if v.kind == "value" and v.shape == () and v.expr is not None:
            return (v.expr,)
        return None

    def _shape_evidence(self, shape: Optional[tuple[Expr, ...]], what: str, line: int) -> None:
        if shape is None:
            return
        for d in shape:
            for p in sorted(d.symbols()):
                if p in self.constexprs:
                    self.tile_use(p, f"{what} at line {line}")
            if d.op == "sym" and d.args[0] in self.constexprs:
                self.trace.pow2.add(d.args[0])  # every tile dimension is a power of two

    def _dtype_arg(self, v: Optional[Val], default: Optional[str]) -> Optional[str]:
        if v is None or v.kind == "none":
            return default
        if v.kind == "dtype":
            return v.dtype
        return None

    def op_arange(self, a: dict, pos, kws, node: cst.Call) -> Val:
        start = a.get("start", UNKNOWN)
        end = a.get("end", UNKNOWN)
        line = self.line(node)
        cparams = set(self.constexpr_syms(end)) | set(self.constexpr_syms(start))
        rounded = set().union(*(_under_npow2(v.expr) for v in (start, end) if v.expr is not None))
        for p in sorted(cparams):
            self.tile_use(p, f"tl.arange extent at line {line}")
            if p not in rounded:  # next_power_of_2(N) is a power of two whatever N is
                self.trace.pow2.add(p)
        if start.expr is None or end.expr is None:
            self.gap(node, "unknown access shape", f"tl.arange bounds in {node_text(node)} not understood")
            shape = None
        else:
            shape = (end.expr - start.expr,)
        nid = self.add_node("arange", node, shape, "int32", (start, end))
        return Val(
            shape=shape,
            dtype="int32",
            node=nid,
            params=start.params | end.params,
            tiles=frozenset(cparams),
            unit=frozenset((0,)),
            varying=frozenset((0,)),
        )

    def op_zeros(self, a: dict, pos, kws, node: cst.Call, what: str = "tl.zeros") -> Val:
        shape = self.shape_arg(a.get("shape"))
        line = self.line(node)
        self._shape_evidence(shape, f"{what} shape", line)
        if shape is None:
            self.gap(node, "unknown access shape", f"shape of {node_text(node)} not understood")
        dtype = self._dtype_arg(a.get("dtype"), "fp32")
        nid = self.add_node("alloc", node, shape, dtype, [v for v in a.values() if v is not None])
        return Val(shape=shape, dtype=dtype, node=nid)

    def op_full(self, a: dict, pos, kws, node: cst.Call) -> Val:
        value = a.get("value")
        out = self.op_zeros(a, pos, kws, node, what="tl.full")
        if a.get("dtype") is None and value is not None:
            out = out.with_(dtype=value.dtype)
        return out

    def op_zeros_like(self, a: dict, pos, kws, node: cst.Call) -> Val:
        x = a.get("input", UNKNOWN)
        dtype = self._dtype_arg(a.get("dtype"), x.dtype)
        nid = self.add_node("alloc", node, x.shape, dtype, (x,))
        return Val(shape=x.shape, dtype=dtype, node=nid)

    def op_program_id(self, a: dict, pos, kws, node: cst.Call) -> Val:
        ax = a.get("axis")
        axis = ax.literal if ax is not None and isinstance(ax.literal, int) else 0
        return Val(shape=(), dtype="int32", pids=frozenset((axis,)), expr=sym(f"{PID_PREFIX}{axis}"))

    def op_num_programs(self, a: dict, pos, kws, node: cst.Call) -> Val:
        return Val(shape=(), dtype="int32")

    def op_cdiv(self, a: dict, pos, kws, node: cst.Call) -> Val:
        x, d = a.get("x", UNKNOWN), a.get("div", UNKNOWN)
        expr = cdiv(x.expr, d.expr) if x.expr is not None and d.expr is not None else None
        shape = broadcast_shapes([x.shape, d.shape]) if x.kind == d.kind == "value" else None
        return Val(shape=shape, expr=expr, dtype=x.dtype or "int32", weak=x.weak and d.weak, params=x.params | d.params, pids=x.pids | d.pids, tiles=x.tiles)

    def op_next_pow2(self, a: dict, pos, kws, node: cst.Call) -> Val:
        """``triton.next_power_of_2(n)`` (a compile-time value inside a kernel)."""
        x = a.get("n", UNKNOWN)
        lit = x.literal if isinstance(x.literal, int) and not isinstance(x.literal, bool) else None
        return x.with_(
            expr=next_pow2(x.expr) if x.expr is not None else None,
            literal=next_pow2(lit).value if lit is not None else None,
            ptrs=EMPTY, unit=EMPTY, node=None,
        ) if x.kind == "value" and x.shape == () else UNKNOWN

    def op_swizzle2d(self, a: dict, pos, kws, node: cst.Call) -> Val:
        """``tl.swizzle2d(i, j, size_i, size_j, size_g)``: a reordered (i, j) pair of program indices."""
        ins = [v for v in (a.get(k) for k in SIGS_SWIZZLE) if v is not None and v.kind == "value"]
        v = Val(shape=(), dtype="int32", params=frozenset().union(*(x.params for x in ins)) if ins else EMPTY,
                pids=frozenset().union(*(x.pids for x in ins)) if ins else EMPTY)
        return Val(kind="tuple", shape=None, items=(v, v))

    def op_random(self, a: dict, pos, kws, node: cst.Call) -> Val:
        off = a.get("offset", UNKNOWN)
        shape = off.shape if off.kind == "value" else None
        name = dotted_name(node.func) or ""
        dtype = "int32" if "randint" in name else "fp32"
        nid = self.add_node("elementwise", node, shape, dtype, (off,))
        v = Val(shape=shape, dtype=dtype, node=nid)
        if name.endswith("4x"):
            return Val(kind="tuple", shape=None, items=(v, v, v, v))
        return v

    def op_philox(self, a: dict, pos, kws, node: cst.Call) -> Val:
        """Triton's counter-based generator and its conversions (``tl.philox(seed, c0, c1, c2, c3)``: four
        integer tiles of the counters' shape; ``uint_to_uniform_float``: floats of its input's shape;
        ``pair_uniform_to_normal``: two float tiles)."""
        name = (dotted_name(node.func) or "").rsplit(".", 1)[-1]
        keys = {"philox": ("c0", "c1", "c2", "c3"), "philox_impl": ("c0", "c1", "c2", "c3"),
                "uint_to_uniform_float": ("x",), "pair_uniform_to_normal": ("u1", "u2")}[name]
        ins = [a[k] for k in keys if k in a and a[k].kind == "value"]
        shapes = [v.shape for v in ins]
        shape = broadcast_shapes(shapes) if ins and all(s is not None for s in shapes) else None
        dtype = "fp32" if name in ("uint_to_uniform_float", "pair_uniform_to_normal") else (ins[0].dtype if ins else None)
        nid = self.add_node("elementwise", node, shape, dtype, ins)
        v = Val(shape=shape, dtype=dtype, node=nid)
        count = {"philox": 4, "philox_impl": 4, "pair_uniform_to_normal": 2}.get(name)
        return Val(kind="tuple", shape=None, items=(v,) * count) if count else v

    def op_range(self, a: dict, pos, kws, node: cst.Call) -> Val:
        return Val(kind="other", shape=None)
