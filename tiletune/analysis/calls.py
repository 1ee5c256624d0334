"""Calls in a kernel body: ``tl.*`` functions, methods, builtins and inlined ``@triton.jit`` helpers."""

from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst

from .expr import const
from .model import DTYPE_BYTES
from .values import EMPTY, NONE, OPEN_POINTEE, TL_DTYPES, UNKNOWN, Val, join_vals
from .cst_text import dotted_name, node_text, root_name
from .ops import HANDLERS
from .ops.dtypes import PREDICATES, dtype_named, dtype_predicate
from .ops.tables import DEVICE_SCALARS, ELEMENTWISE, NO_VALUE, PASS_THROUGH, REDUCTIONS, SCANS, SIGS, TL_ROOTS, VARARG_SHAPE_OPS

__all__ = ["CallOps"]


class CallOps:
    """Mixin of :class:`~tiletune.analysis.shapes.Interpreter`: call dispatch and helper inlining."""

    def ev_call(self, node: cst.Call) -> Val:
        func = node.func
        if isinstance(func, cst.Attribute):
            root = root_name(func)
            if root is not None and root in self.env or root is None:
                recv = self.ev(func.value)
                return self.method(recv, func.attr.value, node)
        q = dotted_name(func)
        if q is None:
            self._eval_args(node)
            self.gap(node, "unknown op", f"call {node_text(node)} not understood")
            return UNKNOWN
        if q in self.aliases and q.split(".")[0] not in self.env:  # ``triton_tanh = libdevice.tanh``
            q = self.aliases[q]
        parts = q.split(".")
        name = parts[-1]
        if len(parts) == 1:
            return self.bare_call(name, node)
        if parts[0] in TL_ROOTS or "libdevice" in parts:
            return self.tl_call(name, node, parts)
        if q in self.helpers and self._inline_depth < self.MAX_INLINE_DEPTH:  # module.helper(...)
            return self.inline(self.helpers[q], node)
        self._eval_args(node)
        self.gap(node, "unresolved helper", f"call to {q} not followed (result unknown)")
        return UNKNOWN

    def _eval_args(self, node: cst.Call, recv: Optional[Val] = None) -> tuple[list[Val], dict[str, Val]]:
        pos: list[Val] = [recv] if recv is not None else []
        kws: dict[str, Val] = {}
        for a in node.args:
            v = self.ev(a.value)
            if a.keyword is not None:
                kws[a.keyword.value] = v
            elif a.star == "*" and v.kind == "tuple":
                pos.extend(v.items)
            else:
                pos.append(v)
        return pos, kws

    @staticmethod
    def _bind_args(name: str, pos: list[Val], kws: dict[str, Val]) -> dict[str, Val]:
        sig = SIGS.get(name, ())
        out = dict(kws)
        for pname, v in zip(sig, pos):
            out.setdefault(pname, v)
        return out

    def method(self, recv: Val, name: str, node: cst.Call) -> Val:
        pos, kws = self._eval_args(node, recv)
        if recv.kind == "desc":
            return self.descriptor_op(recv, name, pos, kws, node)
        if recv.kind == "blockptr" and name == "advance":  # ``bp.advance([BLOCK_M, 0])`` is ``tl.advance(bp, ...)``
            return self.apply(name, pos, kws, node)
        if name in ("load", "store") and recv.kind == "value" and recv.shape == () and recv.node is not None and recv.node.startswith("param:"):
            # a host-side tensor descriptor passed as an argument
            return self.descriptor_op(self.host_descriptor(recv, name, pos, kws, node), name, pos, kws, node)
        if name in PREDICATES and recv.kind in ("dtype", "other"):  # ``x.dtype.is_floating()``: a compile-time bool
            answer = dtype_predicate(recv.dtype if recv.kind == "dtype" else None, name)
            return Val(shape=(), dtype="int1", weak=True, literal=answer,
                       expr=const(int(answer)) if answer is not None else None)
        if recv.kind == "none" and (name in ("load", "store", "advance") or name.startswith("atomic_")):
            return self.refused_none(node, f"method {name}")
        if recv.kind not in ("value",):
            if recv.kind == "tuple" and name in ("index", "count"):
                return Val(shape=(), weak=True)
            self.gap(node, "unknown op", f"method {name} on a {recv.kind} not understood")
            return UNKNOWN
        if name in ("to", "cast"):
            return self.op_cast(self._bind_args("to", pos, kws), node)
        return self.apply(name, pos, kws, node)

    def bare_call(self, name: str, node: cst.Call) -> Val:
        if name in ("min", "max"):
            pos, _ = self._eval_args(node)
            return self.minmax_scalar(name, pos, node)
        if name in ("int", "float", "abs", "bool"):
            pos, _ = self._eval_args(node)
            if not pos:
                return UNKNOWN
            v = pos[0]
            if name == "float":
                lit = v.literal if isinstance(v.literal, (int, float)) else None
                if isinstance(v.literal, str):
                    try:
                        lit = float(v.literal)
                    except ValueError:
                        lit = None
                return Val(shape=v.shape if v.kind == "value" else (), dtype="fp32", weak=v.weak or v.kind != "value", literal=lit, node=v.node if v.kind == "value" else None)
            if name == "abs":
                return v.with_(expr=None)
            return v
        if name == "len":
            pos, _ = self._eval_args(node)
            if pos and pos[0].kind == "tuple":
                n = len(pos[0].items)
                return Val(shape=(), expr=const(n), weak=True, dtype="int32", literal=n)
            return Val(shape=(), weak=True)
        if name in ("print", "isinstance", "hasattr", "getattr"):
            self._eval_args(node)
            return Val(kind="other", shape=None)
        if name in ("range",):
            self._eval_args(node)
            return Val(kind="other", shape=None)
        if name in self.helpers and self._inline_depth < self.MAX_INLINE_DEPTH:
            return self.inline(self.helpers[name], node)
        if name in ELEMENTWISE or name in HANDLERS:  # ``from triton.language.extra.libdevice import tanh``
            return self.tl_call(name, node, [name])
        pos, kws = self._eval_args(node)
        if name in self.helpers:
            self.gap(node, "unresolved helper", f"call to helper {name}() not followed: helpers nested deeper than "
                     f"{self.MAX_INLINE_DEPTH} (result unknown)")
            return UNKNOWN
        self.gap(node, "unresolved helper", f"call to helper {name}() not followed (result unknown)")
        return UNKNOWN

    def inline(self, fdef: cst.FunctionDef, node: cst.Call) -> Val:
        """Follow a call to another jit function: bind its parameters, interpret its body."""
        pos, kws = self._eval_args(node)
        saved_env, saved_ret = self.env, self._return
        env: dict[str, Val] = {}
        n_positional = len(fdef.params.params)
        params = list(fdef.params.params) + list(fdef.params.kwonly_params)
        for i, p in enumerate(params):
            pname = p.name.value
            if i < len(pos) and i < n_positional:
                env[pname] = pos[i]
            elif pname in kws:
                env[pname] = kws[pname]
            elif p.default is not None:
                self.env = env
                env[pname] = self.ev(p.default)
            else:
                env[pname] = UNKNOWN
        device = {name for name, v in env.items() if _device_only(v)}
        if device:
            self.trace.device_calls.setdefault(id(fdef), set()).update(device)
        self.env = env
        self._return = []
        self._inline_depth += 1
        try:
            self.block(fdef.body)
            rets = self._return
        finally:
            self._inline_depth -= 1
            self.env, self._return = saved_env, saved_ret
        if not rets:
            return NONE
        out = rets[0]
        for r in rets[1:]:
            out = join_vals(out, r)
        return out

    def tl_call(self, name: str, node: cst.Call, parts: Sequence[str]) -> Val:
        if name == "static_assert":
            if node.args:
                self.trace.static_asserts.append(node_text(node.args[0].value, limit=200))
            self._eval_args(node)
            return NONE
        if name in NO_VALUE:
            self._eval_args(node)
            return NONE
        if name in DEVICE_SCALARS:  # ``tl.extra.cuda.globaltimer()``: a scalar per program
            self._eval_args(node)
            return Val(shape=(), dtype=DEVICE_SCALARS[name])
        if name == "_log2":  # ``tl.standard._log2(n)``: a compile-time int (a loop count)
            self._eval_args(node)
            return Val(shape=(), weak=True, dtype="int32")
        if name in TL_DTYPES and name not in ELEMENTWISE:
            self._eval_args(node)
            return Val(kind="dtype", shape=None, dtype=TL_DTYPES[name])
        if name == "get_int_dtype":  # ``tl.core.get_int_dtype(bitwidth=32, signed=True)``: a dtype
            pos, kws = self._eval_args(node)
            bits = pos[0] if pos else kws.get("bitwidth")
            signed = pos[1] if len(pos) > 1 else kws.get("signed")
            known = bits is not None and isinstance(bits.literal, int) and signed is not None \
                and isinstance(signed.literal, bool)
            dtype = f"{'' if signed.literal else 'u'}int{bits.literal}" if known else None
            return Val(kind="dtype", shape=None, dtype=dtype if dtype in DTYPE_BYTES else None)
        if name == "dtype":  # ``tl.dtype("uint32")``, ``tl.dtype(f"uint{bits}")``: a dtype
            pos, kws = self._eval_args(node)
            text = pos[0] if pos else kws.get("name")
            return Val(kind="dtype", shape=None, dtype=dtype_named(text.literal) if text is not None else None)
        if name == "pointer_type":  # ``tl.pointer_type(tl.int64)``: "ptrto:int64"
            pos, kws = self._eval_args(node)
            elem = pos[0] if pos else kws.get("element_ty")
            # a named dtype, or a parameter's element type (``tl.pointer_type(out_ptr.dtype.element_ty)``)
            known = elem is not None and elem.kind == "dtype" and elem.dtype is not None and (
                ":" not in elem.dtype or (elem.dtype.startswith("elem:") and elem.dtype.count(":") == 1))
            if known:
                return Val(kind="dtype", shape=None, dtype=f"ptrto:{elem.dtype}")
            # ``tl.pointer_type(dtype)`` with ``dtype`` a constexpr parameter or a type the kernel picks at compile
            # time (``tl.float8e4nv if FP8 else tl.float16``): Triton makes the address type from the value it has
            # then; the address is known, its element type stays open
            named = elem is not None and (elem.kind == "dtype" or self._param_vals.get(elem) in self.constexprs)
            return Val(kind="dtype", shape=None, dtype=f"ptrto:{OPEN_POINTEE}" if named else None)
        pos, kws = self._eval_args(node)
        mathy = "libdevice" in parts or "math" in parts
        if mathy and name not in ELEMENTWISE and name not in SIGS:
            return self.elementwise(name, pos, node)
        return self.apply(name, pos, kws, node)

    def apply(self, name: str, pos: list[Val], kws: dict[str, Val], node: cst.Call) -> Val:
        handler = HANDLERS.get(name)
        if handler is not None:
            return handler(self, self._bind_args(name, pos, kws), pos, kws, node)
        if name in PASS_THROUGH:
            if pos and name in ("multiple_of", "max_contiguous") and (pos[0].bounds or pos[0].strides):
                # the hint states the alignment a ``% N`` or a stride would hide (dropping the evidence
                # counts the load as pipelined: the larger count, never an under-count)
                return pos[0].with_(bounds=EMPTY, strides=EMPTY)
            return pos[0] if pos else UNKNOWN
        if name in REDUCTIONS:
            return self.op_reduce(name, self._bind_args(name, pos, kws), node)
        if name in SCANS:
            return self.op_scan(name, self._bind_args(name, pos, kws), node)
        if name in VARARG_SHAPE_OPS:
            return self.shape_op(name, pos, kws, node)
        if name in ELEMENTWISE:
            return self.elementwise(name, pos, node)
        if name.startswith("atomic_"):
            return self.op_store(self._bind_args(name, pos, kws), node, kind="atomic")
        self.gap(node, "unknown op", f"tl.{name} not understood (result unknown)")
        return UNKNOWN


def _device_only(v: Val) -> bool:
    """True for a value no launch can pass, only jit code: a tile, a block pointer, a tensor descriptor made in
    the kernel (a host ``TensorDescriptor`` is a parameter, ``param:<name>``)."""
    if v.kind == "blockptr":
        return True
    if v.kind == "desc":
        return not (v.node or "").startswith("param:")
    return v.kind == "value" and bool(v.shape)

