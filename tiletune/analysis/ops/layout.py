"""Layout operations: transposes, reshapes, ``expand_dims``, joins, splits, gathers, broadcasts."""

from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst

from ..expr import const
from ..values import UNKNOWN, Val, broadcast_shapes, collect, promote, remap_pairs
from ..cst_text import node_text
from ..trace import EMPTY, ScratchRec

__all__ = ["LayoutOps"]


class LayoutOps:
    """Mixin of :class:`~tiletune.analysis.shapes.Interpreter`: layout operations: transposes, reshapes, ``expand_dims``, joins, splits, gathers, broadcasts."""

    def permute(self, x: Val, dims: Optional[Sequence[int]], node: cst.CSTNode) -> Val:
        if x.kind != "value" or x.shape is None:
            return UNKNOWN
        rank = len(x.shape)
        if dims is None or not dims:
            dims = list(range(rank))[::-1] if rank <= 2 else list(range(rank - 2)) + [rank - 1, rank - 2]
        if sorted(dims) != list(range(rank)):
            self.gap(node, "unknown op", f"permutation {list(dims)} of a rank-{rank} tile")
            return UNKNOWN
        shape = tuple(x.shape[d] for d in dims)
        inv = {d: i for i, d in enumerate(dims)}
        nid = self.add_node("other", node, shape, x.dtype, (x,))
        self.trace.scratch.append(ScratchRec("trans", nid, x.shape, x.dtype, None, self.line(node), self.in_loop()))
        return x.with_(
            shape=shape,
            node=nid,
            unit=frozenset(inv[d] for d in x.unit if d in inv),
            varying=frozenset(inv[d] for d in x.varying if d in inv),
            bounds=remap_pairs(x.bounds, inv),
        )

    def shape_op(self, name: str, pos: list[Val], kws: dict, node: cst.Call) -> Val:
        x = pos[0] if pos else kws.get("input", UNKNOWN)
        rest = pos[1:]
        if name in ("trans", "permute"):
            if len(rest) == 1 and rest[0].kind == "tuple":
                rest = list(rest[0].items)
            dims = [r.literal for r in rest]
            if "dims" in kws and kws["dims"].kind == "tuple":
                dims = [r.literal for r in kws["dims"].items]
            if any(not isinstance(d, int) for d in dims):
                self.gap(node, "unknown op", f"dims of {node_text(node)} not understood")
                return UNKNOWN
            return self.permute(x, dims, node)
        if len(rest) == 1:
            shape = self.shape_arg(rest[0])
        elif rest:
            shape = self.shape_arg(Val(kind="tuple", shape=None, items=tuple(rest)))
        else:
            shape = self.shape_arg(kws.get("shape"))
        what = {"reshape": "reshape shape", "view": "view shape", "broadcast_to": "tl.broadcast_to shape"}[name]
        self._shape_evidence(shape, what, self.line(node))
        if shape is None and x.kind == "value" and self._opaque_shape(rest, kws):
            # a shape computed from the tile's own shape by arithmetic the reader cannot evaluate (a bitonic
            # sort's [n_outer * 2**i, 2, 2**(n_dims - i - 1)]): a tile of unknown shape, no gap here; a load,
            # store or dot it reaches has no shape and makes the kernel INCOMPLETE there
            nid = self.add_node("other", node, None, x.dtype, (x,))
            if name != "broadcast_to":
                if x.shape is not None:
                    self.trace.scratch.append(ScratchRec("reshape", nid, x.shape, x.dtype, None, self.line(node), self.in_loop()))
            return Val(shape=None, dtype=x.dtype, node=nid, loads=x.loads, direct=x.direct, accs=x.accs, params=x.params)
        if shape is None or x.kind != "value":
            self.gap(node, "unknown access shape", f"shape of {node_text(node)} not understood")
            return UNKNOWN
        nid = self.add_node("other", node, shape, x.dtype, (x,))
        if name != "broadcast_to":
            self.trace.scratch.append(ScratchRec("reshape", nid, x.shape, x.dtype, None, self.line(node), self.in_loop()))
        return Val(
            shape=shape,
            dtype=x.dtype,
            node=nid,
            loads=x.loads,
            direct=x.direct,
            accs=x.accs,
            params=x.params,
            tiles=x.tiles if name == "broadcast_to" else EMPTY,
        )

    def _opaque_shape(self, rest: list[Val], kws: dict) -> bool:
        """True when a shape argument is a tuple or list of integer scalars, some of unknown value (a view
        of a tile: the constexprs in it are view factors, and tile sizes only where a tile they shape
        is loaded, stored or multiplied, which is a gap)."""
        arg = rest[0] if len(rest) == 1 else Val(kind="tuple", shape=None, items=tuple(rest)) if rest else kws.get("shape")
        if arg is None or arg.kind != "tuple" or not arg.items:
            return False
        return all(it.kind == "value" and it.shape == () and not it.pointer for it in arg.items)

    def op_expand_dims(self, a: dict, pos, kws, node: cst.Call) -> Val:
        x = a.get("input", UNKNOWN)
        ax = a.get("axis")
        if x.kind != "value" or x.shape is None or ax is None:
            return UNKNOWN
        axes = [it.literal for it in ax.items] if ax.kind == "tuple" else [ax.literal]
        if any(not isinstance(i, int) for i in axes):
            return UNKNOWN
        shape = list(x.shape)
        new_rank = len(shape) + len(axes)
        axes = sorted(i % new_rank for i in axes)
        mapping = list(range(len(shape)))
        for i in axes:
            shape.insert(i, const(1))
            mapping = [m + 1 if m >= i else m for m in mapping]
        nid = self.add_node("other", node, tuple(shape), x.dtype, (x,))
        return x.with_(
            shape=tuple(shape),
            node=nid,
            unit=frozenset(mapping[d] for d in x.unit if d < len(mapping)),
            varying=frozenset(mapping[d] for d in x.varying if d < len(mapping)),
            bounds=remap_pairs(x.bounds, mapping),
        )

    def op_join(self, a: dict, pos, kws, node: cst.Call) -> Val:
        x, y = a.get("a", UNKNOWN), a.get("b", UNKNOWN)
        shape = broadcast_shapes([x.shape, y.shape]) if x.kind == y.kind == "value" else None
        shape = None if shape is None else shape + (const(2),)
        dtype = promote(x, y)
        nid = self.add_node("other", node, shape, dtype, (x, y))
        self.trace.scratch.append(ScratchRec("join", nid, shape, dtype, None, self.line(node), self.in_loop()))
        return Val(shape=shape, dtype=dtype, node=nid, loads=x.loads | y.loads)

    def op_cat(self, a: dict, pos, kws, node: cst.Call) -> Val:
        """``tl.cat(a, b, can_reorder=True)``: two 1-D tiles end to end (Triton's only form)."""
        x, y = a.get("input", UNKNOWN), a.get("other", UNKNOWN)
        ok = x.kind == y.kind == "value" and x.shape is not None and y.shape is not None \
            and len(x.shape) == len(y.shape) == 1
        if not ok:
            self.gap(node, "unknown access shape", f"shape of {node_text(node)} not understood (1-D tiles expected)")
            return UNKNOWN
        shape = (collect(x.shape[0] + y.shape[0]),)
        nid = self.add_node("other", node, shape, x.dtype, (x, y))
        self.trace.scratch.append(ScratchRec("join", nid, shape, x.dtype, None, self.line(node), self.in_loop()))
        return Val(shape=shape, dtype=x.dtype, node=nid, loads=x.loads | y.loads)

    def op_interleave(self, a: dict, pos, kws, node: cst.Call) -> Val:
        x, y = a.get("a", UNKNOWN), a.get("b", UNKNOWN)
        shape = broadcast_shapes([x.shape, y.shape]) if x.kind == y.kind == "value" else None
        if shape:
            shape = shape[:-1] + (shape[-1] * 2,)
        dtype = promote(x, y)
        nid = self.add_node("other", node, shape, dtype, (x, y))
        return Val(shape=shape, dtype=dtype, node=nid, loads=x.loads | y.loads)

    def op_split(self, a: dict, pos, kws, node: cst.Call) -> Val:
        x = a.get("a", UNKNOWN)
        shape = x.shape[:-1] if x.kind == "value" and x.shape else None
        nid = self.add_node("other", node, shape, x.dtype, (x,))
        self.trace.scratch.append(ScratchRec("split", nid, x.shape, x.dtype, None, self.line(node), self.in_loop()))
        half = Val(shape=shape, dtype=x.dtype, node=nid, loads=x.loads)
        return Val(kind="tuple", shape=None, items=(half, half))

    def op_ravel(self, a: dict, pos, kws, node: cst.Call) -> Val:
        x = a.get("x", UNKNOWN)
        shape = None
        if x.kind == "value" and x.shape is not None:
            n = const(1)
            for d in x.shape:
                n = n * d
            shape = (n,)
        nid = self.add_node("other", node, shape, x.dtype, (x,))
        return Val(shape=shape, dtype=x.dtype, node=nid, loads=x.loads)

    def op_same_shape(self, a: dict, pos, kws, node: cst.Call) -> Val:
        x = pos[0] if pos else UNKNOWN
        if x.kind != "value":
            return UNKNOWN
        nid = self.add_node("other", node, x.shape, x.dtype, (x,))
        return Val(shape=x.shape, dtype=x.dtype, node=nid, loads=x.loads)

    def op_gather(self, a: dict, pos, kws, node: cst.Call) -> Val:
        src, idx = a.get("src", UNKNOWN), a.get("index", UNKNOWN)
        nid = self.add_node("other", node, idx.shape, src.dtype, (src, idx))
        self.trace.scratch.append(ScratchRec("gather", nid, src.shape, src.dtype, None, self.line(node), self.in_loop()))
        return Val(shape=idx.shape, dtype=src.dtype, node=nid)

    def op_extract_slice(self, a: dict, pos, kws, node: cst.Call) -> Val:
        """``extract_slice(ful, offsets, sizes, strides)`` (Triton-Ascend): a sub-tile of shape ``sizes``."""
        x = a.get("ful", UNKNOWN)
        shape = self.shape_arg(a.get("sizes"))
        self._shape_evidence(shape, "extract_slice sizes", self.line(node))
        if shape is None or x.kind != "value":
            self.gap(node, "unknown access shape", f"sizes of {node_text(node)} not understood")
            return UNKNOWN
        nid = self.add_node("other", node, shape, x.dtype, (x,))
        return Val(shape=shape, dtype=x.dtype, node=nid, loads=x.loads, direct=x.direct)

    def op_insert_slice(self, a: dict, pos, kws, node: cst.Call) -> Val:
        """``insert_slice(ful, sub, offsets, sizes, strides)`` (Triton-Ascend): ``ful`` with ``sub`` written in."""
        x, sub = a.get("ful", UNKNOWN), a.get("sub", UNKNOWN)
        if x.kind != "value":
            return UNKNOWN
        nid = self.add_node("other", node, x.shape, x.dtype, (x, sub))
        return Val(shape=x.shape, dtype=x.dtype, node=nid, loads=x.loads | sub.loads)

    def op_broadcast(self, a: dict, pos, kws, node: cst.Call) -> Val:
        x, y = a.get("input", UNKNOWN), a.get("other", UNKNOWN)
        shape = broadcast_shapes([x.shape, y.shape]) if x.kind == y.kind == "value" else None
        return Val(kind="tuple", shape=None, items=(x.with_(shape=shape), y.with_(shape=shape)))
