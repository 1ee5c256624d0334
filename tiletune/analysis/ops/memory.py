"""Memory operations: loads, stores, atomics, block pointers and tensor descriptors."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from ..expr import NUM_STAGES, const, sym
from ..values import NONE, OPEN_POINTEE, UNKNOWN, Val, broadcast_shapes, shape_bytes
from ..cst_text import dotted_name, node_text
from ..hostdesc import hook_block_shapes, pre_hook_names
from ..trace import EMPTY, AccessRec, ScratchRec, offset_anchors

__all__ = ["MemoryOps"]


class MemoryOps:
    """Mixin of :class:`~tiletune.analysis.shapes.Interpreter`: loads, stores, atomics, block pointers and tensor descriptors."""

    def _access_common(self, p: Val, node: cst.Call):
        """(pointer param, shape, block_ptr, contiguous_dim, order) of an address operand."""
        if p.kind in ("blockptr", "desc"):
            shape = p.block_shape
            cdim = None
            if shape is not None and shape:
                cdim = len(shape) - 1
                if p.order and isinstance(p.order[0], int) and 0 <= p.order[0] < len(shape):
                    cdim = p.order[0]
            return p.base, shape, True, cdim
        if p.kind != "value":
            return None, None, False, None
        ptr = self.choose_pointer(p)
        shape = p.shape
        cdim = None
        if shape:
            unit = sorted(d for d in p.unit if d < len(shape))
            cdim = unit[-1] if unit else len(shape) - 1
        return ptr, shape, False, cdim

    def _record_access(self, kind: str, nid: str, node: cst.Call, ptr, shape, block_ptr, cdim, value_dtype,
                       descriptor: bool = False, pointee: Optional[str] = None) -> AccessRec:
        loop = self.loop_stack[-1] if self.loop_stack else None
        rec = AccessRec(
            node=nid,
            kind=kind,
            span=self.span(node),
            pointer=ptr,
            shape=shape,
            dtype=_pointee_dtype(pointee) or (f"elem:{ptr}" if ptr else None),
            in_loop=self.in_loop(),
            trips=self.total_trips(),
            contiguous_dim=cdim,
            block_ptr=block_ptr,
            loop=loop,
            value_dtype=value_dtype,
            scalar=shape == (),
            descriptor=descriptor,
        )
        self.trace.accesses.append(rec)
        if ptr is not None:
            self.mark_pointer(ptr, f"{kind} address at line {self.line(node)}")
        return rec

    def refused_none(self, node: cst.Call, what: str) -> Val:
        """An access or a method call on ``None`` (a pointer, block pointer or descriptor left ``None`` on this
        path): Triton's front end refuses the path (an ``AttributeError`` on ``None``), so every launch that
        compiles takes another one, as a ``constexpr`` flag chooses. A note, no access; ``None`` as its value,
        which the other path's value replaces where the paths join."""
        self.note(node, f"{what} on None: Triton refuses this path, no compiled launch takes it")
        return NONE

    def op_load(self, a: dict, pos, kws, node: cst.Call) -> Val:
        p = a.get("pointer", UNKNOWN)
        if p.kind == "none":
            return self.refused_none(node, "tl.load")
        ptr, shape, block_ptr, cdim = self._access_common(p, node)
        pointee = _pointee(p)
        if ptr is None and pointee is None:
            self.gap(node, "unknown access shape", f"pointer of {node_text(node)} not traced to a parameter")
        dtype = _pointee_dtype(pointee) or (f"elem:{ptr}" if ptr else None)
        inputs = [v for v in (p, a.get("mask"), a.get("other")) if v is not None]
        nid = self.add_node("load", node, shape, dtype, inputs)
        rec = self._record_access("load", nid, node, ptr, shape, block_ptr, cdim, dtype, descriptor=p.kind == "desc", pointee=pointee)
        rec.align_params = _align_params(p, a, cdim)
        v = Val(shape=shape, dtype=dtype, node=nid, loads=frozenset((nid,)), direct=frozenset((nid,)))
        if shape:
            b = shape_bytes(shape, dtype)
            if b is not None:
                self._stmt_temps[nid] = b * sym(NUM_STAGES) if self.in_loop() else b
        return v

    def op_store(self, a: dict, pos, kws, node: cst.Call, kind: str = "store") -> Val:
        p = a.get("pointer", UNKNOWN)
        if p.kind == "none":
            return self.refused_none(node, f"tl.{kind}")
        value = a.get("value", a.get("val", UNKNOWN))
        ptr, shape, block_ptr, cdim = self._access_common(p, node)
        if not block_ptr and value.kind == "value" and value.shape is not None and shape is not None:
            shape = broadcast_shapes([shape, value.shape])
            if shape and cdim is None:
                cdim = len(shape) - 1
        pointee = _pointee(p)
        if ptr is None and pointee is None:
            self.gap(node, "unknown access shape", f"pointer of {node_text(node)} not traced to a parameter")
        inputs = [v for v in (p, value, a.get("mask"), a.get("cmp")) if v is not None]
        dtype = _pointee_dtype(pointee) or (f"elem:{ptr}" if ptr else value.dtype)
        nid = self.add_node(kind, node, shape, dtype, inputs)
        mask = a.get("mask")  # which inputs are the value and the mask (the Ascend UB model rewrites a data-masked store)
        self.graph.nodes[nid].update(value=value.node, mask=mask.node if mask is not None else None)
        self._record_access(kind, nid, node, ptr, shape, block_ptr, cdim, value.dtype, descriptor=p.kind == "desc",
                            pointee=pointee)
        if value.kind == "value" and value.shape:
            if value.accs and kind == "atomic":
                # (a plain store is done from the dot's layout; an atomic converts it)
                rows = next((d.m for d in self.trace.dots if d.node in value.accs and d.m is not None), None)
                self.trace.scratch.append(ScratchRec("store_acc", nid, value.shape, value.dtype, None, self.line(node), self.in_loop(), rows))
            elif value.reduced:
                self.trace.scratch.append(ScratchRec("store_reduced", nid, value.shape, value.dtype, None, self.line(node), self.in_loop()))
        if kind == "atomic":
            return Val(shape=shape, dtype=dtype, node=nid)
        return NONE

    def op_make_block_ptr(self, a: dict, pos, kws, node: cst.Call) -> Val:
        base = a.get("base", UNKNOWN)
        ptr = self.choose_pointer(base) if base.kind == "value" else base.base
        line = self.line(node)
        block_shape = self.shape_arg(a.get("block_shape"))
        self._shape_evidence(block_shape, "make_block_ptr block_shape", line)
        if block_shape is None:
            self.gap(node, "unknown access shape", "block_shape of tl.make_block_ptr not understood")
        order_v = a.get("order")
        order = None
        if order_v is not None and order_v.kind == "tuple":
            order = tuple(it.literal for it in order_v.items)
        shape_v = a.get("shape")
        offs_v = a.get("offsets")
        offsets = list(offs_v.items) if offs_v is not None and offs_v.kind == "tuple" else []
        if block_shape is not None and shape_v is not None and shape_v.kind == "tuple" and len(shape_v.items) == len(block_shape):
            for i, (d, full) in enumerate(zip(block_shape, shape_v.items)):
                tiles = frozenset(s for s in d.symbols() if s in self.constexprs)
                if tiles and full.params:
                    how = "block shape"
                    off = offsets[i].expr if i < len(offsets) else None
                    if off is not None and offset_anchors(off, tiles) & (full.params | self.constexprs):
                        how = "anchored"  # a sub-block positioned by another constexpr or by the extent
                    self.trace.binds.append((tiles, full.params, line, f"block_shape {d} within shape {full.expr if full.expr is not None else '?'}", how))
        if ptr is not None:
            self.mark_pointer(ptr, f"tl.make_block_ptr base at line {line}")
        inputs = [v for v in a.values() if v is not None and v.kind == "value"]
        nid = self.add_node("other", node, block_shape, f"elem:{ptr}" if ptr else None, inputs)
        offs = a.get("offsets")
        pids = frozenset().union(*(it.pids for it in offs.items)) if offs is not None and offs.kind == "tuple" else EMPTY
        strides_v = a.get("strides")
        strides = frozenset().union(*(it.params for it in strides_v.items)) if strides_v is not None and strides_v.kind == "tuple" else EMPTY
        bounds = frozenset((i, q) for i, it in enumerate(shape_v.items) for q in it.params) \
            if shape_v is not None and shape_v.kind == "tuple" else EMPTY
        return Val(kind="blockptr", shape=None, block_shape=block_shape, order=order, base=ptr, node=nid, pids=pids, params=base.params,
                   pointee=base.pointee if base.kind == "value" else None, strides=strides, bounds=bounds)

    def op_make_tensor_descriptor(self, a: dict, pos, kws, node: cst.Call) -> Val:
        v = self.op_make_block_ptr(a, pos, kws, node)
        return v.with_(kind="desc", order=None)

    def host_descriptor(self, param: Val, name: str, pos: list[Val], kws: dict, node: cst.Call) -> Val:
        """The descriptor a parameter holds (a host ``TensorDescriptor``): its block shape from the
        module's config pre-hooks (``nargs["desc"].block_shape = [BLOCK_M, ...]``, see :mod:`..hostdesc`),
        else, for a store, the stored value's shape; else a gap."""
        pname = param.node[6:]
        block, shapes = self._host_block_shape(pname)
        if block is not None:
            self._shape_evidence(block, f"{pname}.block_shape (config pre-hook)", self.line(node))
        elif name == "store":
            value = pos[2] if len(pos) > 2 else kws.get("value", UNKNOWN)
            if value.kind == "value" and value.shape:
                block = value.shape  # a descriptor stores blocks of exactly the value's shape
        if block is None:
            why = "set in several pre-hooks" if len(shapes) > 1 else "not set by a config pre-hook the analysis reads"
            self.gap(node, "unknown access shape", f"{pname}.{name}: tensor descriptor built on the host, block shape unknown ({why})")
        self.mark_pointer(pname, f"tensor descriptor {name} at line {self.line(node)}")
        return Val(kind="desc", shape=None, block_shape=block, base=pname, node=param.node)

    def _host_block_shape(self, pname: str) -> tuple[Optional[tuple], list]:
        """The block shape of the host descriptor parameter ``pname`` as the module's config pre-hooks (or a launch
        site) set it: (the shape when exactly one is set, of integers and constexprs; every shape found)."""
        hooks = hook_block_shapes(self.positions)
        mine = self.pre_hooks & set(hooks) or set(hooks) - {""}  # the kernel's own pre-hooks when it names any
        shapes: list = []
        for h in sorted(mine):
            shapes.extend(s for s in hooks[h].get(pname, []) if s not in shapes)
        if not shapes:  # built at a launch site, in a variable named like the parameter
            shapes = list(hooks.get("", {}).get(pname, []))
        if len(shapes) == 1 and all(isinstance(d, int) or d in self.constexprs for d in shapes[0]):
            return tuple(const(d) if isinstance(d, int) else sym(d) for d in shapes[0]), shapes
        return None, shapes

    def descriptor_test(self, test: cst.CSTNode) -> Optional[tuple[str, Optional[bool], Optional[Val], bool]]:
        """A branch test ``isinstance(x, tl.tensor_descriptor)`` (or its ``not``), which Triton decides at compile
        time from ``x``'s type: (``x``, the test's truth where the reader knows it, the descriptor ``x`` is where
        ``isinstance`` holds, whether the test is negated: it holds on the ``else`` side). Known for a descriptor (true) and for a block pointer, tile or address (false); a
        parameter may be a host descriptor or a pointer (unknown), read as the host descriptor its config
        pre-hook shapes where ``isinstance`` holds. None for any other test."""
        negated = False
        while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            negated, test = not negated, test.expression
        if not (isinstance(test, cst.Call) and dotted_name(test.func) == "isinstance" and len(test.args) == 2):
            return None
        x, cls = test.args[0].value, dotted_name(test.args[1].value) or ""
        if not isinstance(x, cst.Name) or cls.rsplit(".", 1)[-1] not in ("tensor_descriptor", "tensor_descriptor_base"):
            return None
        v = self.env.get(x.value)
        if v is None:
            return None
        if v.kind == "desc":
            return x.value, not negated, None, negated
        if v.kind == "blockptr" or (v.kind == "value" and (bool(v.shape) or v.pointer)):
            return x.value, negated, None, negated
        if v.kind == "value" and v.shape == () and (v.node or "").startswith("param:"):
            pname = v.node[6:]
            block, _ = self._host_block_shape(pname)
            view = Val(kind="desc", shape=None, block_shape=block, base=pname, node=v.node) if block is not None else None
            return x.value, None, view, negated
        return None

    @property
    def pre_hooks(self) -> set:
        """Names of the config pre-hooks the kernel's decorators pass."""
        if self._pre_hooks is None:
            self._pre_hooks = pre_hook_names(self.func) if self.func is not None else set()
        return self._pre_hooks

    def op_descriptor_call(self, name: str, pos: list[Val], kws: dict, node: cst.Call) -> Val:
        """``tl.load_tensor_descriptor(desc, offsets)`` / ``tl.store_tensor_descriptor(desc, offsets, value)``."""
        desc = pos[0] if pos else kws.get("desc", UNKNOWN)
        if desc.kind == "none":
            return self.refused_none(node, f"tl.{name}_tensor_descriptor")
        if desc.kind == "value" and desc.shape == () and desc.node is not None and desc.node.startswith("param:"):
            desc = self.host_descriptor(desc, name, pos, kws, node)
        if desc.kind != "desc":
            self.gap(node, "unknown access shape", f"{node_text(node)}: descriptor not traced to tl.make_tensor_descriptor or a parameter")
            desc = Val(kind="desc", shape=None, block_shape=None)
        return self.descriptor_op(desc, name, pos, kws, node)

    def descriptor_op(self, desc: Val, name: str, pos: list[Val], kws: dict, node: cst.Call) -> Val:
        if name == "load":
            return self.op_load({"pointer": desc}, pos, kws, node)
        if name == "store":
            value = pos[2] if len(pos) > 2 else kws.get("value", UNKNOWN)
            return self.op_store({"pointer": desc, "value": value}, pos, kws, node)
        if name.startswith("atomic_"):
            value = pos[2] if len(pos) > 2 else kws.get("value", UNKNOWN)
            return self.op_store({"pointer": desc, "value": value}, pos, kws, node, kind="atomic")
        self.gap(node, "unknown op", f"tensor descriptor method {name} not understood")
        return UNKNOWN

    def op_advance(self, a: dict, pos, kws, node: cst.Call) -> Val:
        base = a.get("base", UNKNOWN)
        if base.kind == "none":
            return self.refused_none(node, "tl.advance")
        if base.kind != "blockptr":
            self.gap(node, "unknown op", "tl.advance of something that is not a block pointer")
            return UNKNOWN
        nid = self.add_node("other", node, base.block_shape, f"elem:{base.base}" if base.base else None, [base, a.get("offsets", UNKNOWN)])
        return base.with_(node=nid)


def _pointee(p: Val) -> Optional[str]:
    """The element type of an address operand cast with ``tl.pointer_type(...)`` (a plain address, or the base of
    a block pointer or of a tensor descriptor made in the kernel): a dtype name, :data:`OPEN_POINTEE`, or None."""
    return p.pointee if p.kind in ("value", "blockptr", "desc") else None


def _pointee_dtype(pointee: Optional[str]) -> Optional[str]:
    """The dtype an access through an address of element type ``pointee`` reads or writes (None when the element
    type is open: a constexpr parameter's, or one the kernel picks at compile time)."""
    return None if pointee == OPEN_POINTEE else pointee


def _align_params(p: Val, a: dict, cdim: Optional[int]) -> frozenset:
    """The integer parameters whose divisibility by 16 decides how wide Triton can vectorise a load along its
    contiguous dimension ``cdim`` (AxisInfo's alignment: the address's row strides, and the mask's or a ``%``'s
    bound along ``cdim``); see :func:`tiletune.analysis.footprint.pipelined`."""
    if cdim is None or p.kind not in ("value", "blockptr"):
        return EMPTY
    if p.kind == "blockptr":
        bc = a.get("boundary_check")
        checked = {it.literal for it in bc.items} if bc is not None and bc.kind == "tuple" else set()
        if bc is not None and bc.kind == "value" and isinstance(bc.literal, int):
            checked = {bc.literal}
        return p.strides | frozenset(q for d, q in p.bounds if d == cdim and d in checked)
    out = set(p.strides) | {q for d, q in p.bounds if d == cdim}
    mask = a.get("mask")
    if mask is not None and mask.kind == "value":
        out |= {q for d, q in mask.bounds if d == cdim}
    return frozenset(out)
