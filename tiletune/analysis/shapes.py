"""Symbolic shape and dtype propagation over a kernel body.

:class:`Interpreter` walks the statements of a ``@triton.jit`` function once,
in source order (loop bodies once, both branches of an ``if``), computing a
:class:`~tiletune.analysis.values.Val` for every expression.  As it goes it
records, in a :class:`Trace`:

* the evidence the classifier (:mod:`.classify`) needs: which constexprs size
  tiles and how (``tl.arange`` extents, ``tl.zeros``/``tl.full`` shapes,
  block shapes, reshape shapes, loop steps), which are multiplied by a
  ``tl.program_id``-derived value, which masks compare tile offsets against
  which runtime arguments, which loop bounds go with which steps;
* every memory access, ``tl.dot``, reduction / scan / transpose (the
  shared-memory scratch candidates), ``tl.static_assert``;
* the dataflow graph (:mod:`networkx`) and the live ranges of named tiles.

Nothing here raises on unfamiliar code: a construct it does not understand
gives an unknown value and a gap (:meth:`Interpreter.gap`: a note and a
structured reason in ``trace.gaps``).

Layout: this module holds the interpreter core (state, statements, control
flow); expressions are in :mod:`.evaluate`, calls and helper inlining in
:mod:`.calls`, the ``tl.*`` operations in :mod:`.ops` (one mixin module per
family: creation, memory, dot, reductions, math & casts, layout), the trace
records in :mod:`.trace`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable, Mapping, Optional

import libcst as cst

from .calls import CallOps
from .cst_text import dotted_name, node_text, root_name
from .evaluate import ExprEval
from .expr import NUM_STAGES, Expr, cdiv, const, sym, total
from .model import KernelSpec, Shape, Span, shape_to_json
from .ops import CreationOps, DotOps, LayoutOps, MathOps, MemoryOps, ReductionOps
from .ops.tables import TL_ROOTS
from .trace import EMPTY, GAP_KINDS, PID_PREFIX, AccessRec, DotRec, LoopRec, ScratchRec, Trace, public_expr
from .static import SCALARS, UNKNOWN_STATIC, static_value
from .values import UNKNOWN, Val, ValMap, join_envs, shape_bytes

__all__ = ["GAP_KINDS", "Interpreter", "Trace", "AccessRec", "DotRec", "ScratchRec", "LoopRec", "node_text"]

AUG_OPS = {
    "Add": "+",
    "Subtract": "-",
    "Multiply": "*",
    "Divide": "/",
    "FloorDivide": "//",
    "Modulo": "%",
    "Power": "**",
    "BitAnd": "&",
    "BitOr": "|",
    "BitXor": "^",
    "LeftShift": "<<",
    "RightShift": ">>",
    "MatrixMultiply": "@",
}


def _span(start: Optional[Expr], end: Optional[Expr]) -> Optional[Expr]:
    """``end - start`` of a ``range``: ``end`` itself from 0, ``X`` when ``end`` is ``start + X``
    (also ``min(start + X, N)``: at most ``X``)."""
    if start is None or end is None:
        return None
    if start.is_const and start.value == 0:
        return end
    if end.op == "add" and start in end.args:
        rest = list(end.args)
        rest.remove(start)
        return total(rest)
    if end.op == "min":
        spans = [s for s in (_span(start, arg) for arg in end.args) if s is not None]
        return spans[0] if len(spans) == 1 else None
    return None


def static_of(v: Val) -> Any:
    """The compile-time value a :class:`Val` carries by itself, else :data:`UNKNOWN_STATIC`.

    ``None`` (a ``tl.constexpr = None`` default or argument of a helper) and a
    scalar Python literal are known at compile time, as Triton's code generator
    keeps them ``constexpr``: a helper inlined under its caller's values
    evaluates the branch they select (partial evaluation)."""
    if v.kind == "none":
        return None
    if v.kind in ("value", "other") and not v.shape and isinstance(v.literal, SCALARS) and v.literal is not None:
        return v.literal
    return UNKNOWN_STATIC


def _shown_path(path: Optional[str]) -> Optional[str]:
    """``path`` relative to the working directory when under it (as the CLI prints file:line), else as is."""
    if path is None:
        return None
    import os

    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return path if rel.startswith("..") else rel

class Interpreter(ExprEval, CallOps, CreationOps, MemoryOps, DotOps, ReductionOps, MathOps, LayoutOps):
    """Abstract interpretation of one kernel body (see the module docstring).

    ``helpers`` optionally maps names of other ``@triton.jit`` functions of
    the module to their definitions; calls to them are then followed
    (inlined, one level of the call stack at a time).

    ``constants`` optionally gives known values of parameters (a launch's
    constexpr flags, ``None`` for pointers passed as ``None``): an ``if`` or
    conditional expression whose test they decide is resolved and its dead
    side is not interpreted (no accesses, footprint or dtype needs).  Without
    a value both sides count.
    """

    #: Jit helpers inlined inside each other at most (the resolver follows as deep: ``resolver._MAX_DEPTH``).
    MAX_INLINE_DEPTH = 8

    def __init__(
        self,
        spec: KernelSpec,
        positions: Mapping[cst.CSTNode, Any],
        module_constants: Mapping[str, int],
        helpers: Optional[Mapping[str, cst.FunctionDef]] = None,
        constants: Optional[Mapping[str, Any]] = None,
        aliases: Optional[Mapping[str, str]] = None,
    ) -> None:
        self.spec = spec
        self.aliases = dict(aliases or {})  # name as called -> Triton function it is bound to
        self.constants = dict(constants or {})
        self._static = ValMap()  # the Val of a parameter or local with a known value -> the value
        self._param_vals = ValMap()  # each parameter's first Val -> its name
        self.static_params: set[str] = set()  # parameters a compile-time branch test looked up
        # a local's Val -> the parameters its assigned expression read (a test of the local reads them)
        self._static_deps = ValMap()
        self.positions = positions
        self.module_constants = module_constants
        self.helpers = helpers or {}
        self.trace = Trace()
        self.graph = self.trace.graph
        self.live = self.trace.live
        self.params = {p.name: p for p in spec.params}
        self.constexprs = {p.name for p in spec.params if p.constexpr}
        self.env: dict[str, Val] = {}
        self.loop_stack: list[int] = []  # indices into trace.loops
        self._counter = 0
        self._stmt_temps: dict[str, Expr] = {}
        self._inline_depth = 0
        self._return: Optional[list[Val]] = None
        self._note_set: set[str] = set()
        self._gap_set: set[tuple[str, str]] = set()
        self.func: Optional[cst.FunctionDef] = None  # the kernel being interpreted
        self._pre_hooks: Optional[set] = None

    def run(self, func: cst.FunctionDef) -> Trace:
        """Interpret ``func``'s body and return the trace."""
        self.func = func
        for p in self.spec.params:
            node_id = f"param:{p.name}"
            self.graph.add_node(node_id, kind="param", label=p.name, shape=[], dtype=None, line=p.span.line)
            v = Val(
                shape=(),
                expr=sym(p.name) if p.name.isidentifier() else None,
                node=node_id,
                weak=True,
                params=frozenset((p.name,)),
                ptrs=EMPTY if p.constexpr else frozenset((p.name,)),
            )
            self._param_vals[v] = p.name
            if p.name in self.constants:
                self._static[v] = self.constants[p.name]
            self.env[p.name] = v
        self.block(func.body)
        return self.trace

    def line(self, node: cst.CSTNode) -> int:
        r = self.positions.get(node)
        return r.start.line if r is not None else 0

    def span(self, node: cst.CSTNode) -> Span:
        r = self.positions.get(node)
        if r is None:
            return Span(0, 0, 0, 0)
        file_of = getattr(self.positions, "file_of", None)  # a helper's node, inlined from another module
        return Span(r.start.line, r.start.column, r.end.line, r.end.column, _shown_path(file_of(node)) if file_of else None)

    def note(self, node: cst.CSTNode, text: str) -> None:
        msg = f"line {self.line(node)}: {text}"
        if msg not in self._note_set:
            self._note_set.add(msg)
            self.trace.notes.append(msg)

    def gap(self, node: cst.CSTNode, kind: str, text: str) -> None:
        """Record that the analysis gave up at ``node``: a note, and ``(kind, note)`` in ``trace.gaps``.

        ``kind`` is one of :data:`GAP_KINDS`; the front end turns the gaps into
        :attr:`KernelSpec.incomplete`.  Every place that gives up calls this.
        """
        if kind not in GAP_KINDS:
            raise ValueError(f"gap kind {kind!r} is not one of {GAP_KINDS}")
        msg = f"line {self.line(node)}: {text}"
        self.note(node, text)
        if (kind, msg) not in self._gap_set:
            self._gap_set.add((kind, msg))
            self.trace.gaps.append((kind, msg))

    def add_node(self, kind: str, cst_node: cst.CSTNode, shape: Shape, dtype: Optional[str], inputs: Iterable[Val]) -> str:
        self._counter += 1
        nid = f"n{self._counter}"
        self.graph.add_node(
            nid,
            kind=kind,
            label=node_text(cst_node),
            shape=shape_to_json(shape),
            dtype=dtype,
            line=self.line(cst_node),
        )
        for v in inputs:
            if v is not None and v.node is not None:
                self.graph.add_edge(v.node, nid)
            elif v is not None and v.kind == "tuple":
                for it in v.items:
                    if it.node is not None:
                        self.graph.add_edge(it.node, nid)
        return nid

    def tile_parameter(self, param: str) -> None:
        """Record that the function being analysed uses its parameter ``param`` as a tile
        (directly or in a helper it passes it to): it is a device function only jit code can call."""
        self.trace.tile_params.add(param)

    def tile_use(self, param: str, reason: str) -> None:
        self.trace.tile_uses.setdefault(param, [])
        if reason not in self.trace.tile_uses[param]:
            self.trace.tile_uses[param].append(reason)

    def constexpr_syms(self, v: Val) -> list[str]:
        """Constexpr parameters an integer value mentions (by its expression, else its taint)."""
        names = v.expr.symbols() if v.expr is not None else v.params
        return sorted(n for n in names if n in self.constexprs)

    def in_loop(self) -> bool:
        return bool(self.loop_stack)

    def total_trips(self) -> Optional[Expr]:
        if not self.loop_stack:
            return const(1)
        return self.trace.loops[self.loop_stack[-1]].total_trips

    def choose_pointer(self, v: Val) -> Optional[str]:
        cands = [n for n in v.ptrs if n in self.params and n not in self.constexprs]
        if not cands:
            return None
        known = [n for n in cands if n in self.trace.pointer_uses]
        ptrish = [n for n in cands if "ptr" in n.lower()]
        pool = known or ptrish or cands
        return min(pool, key=lambda n: self.params[n].index)

    def mark_pointer(self, name: Optional[str], reason: str) -> None:
        if name is not None and name not in self.trace.pointer_uses:
            self.trace.pointer_uses[name] = reason

    def block(self, body: Any) -> None:
        stmts = body.body if isinstance(body, (cst.IndentedBlock, cst.SimpleStatementSuite)) else body
        for stmt in stmts:
            self.statement(stmt)

    def statement(self, stmt: cst.CSTNode) -> None:
        try:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    self.simple(small)
            elif isinstance(stmt, cst.BaseSmallStatement):  # a one-line suite: ``def exp(x): return tl.exp(x)``
                self.simple(stmt)
            elif isinstance(stmt, cst.If):
                self.if_stmt(stmt)
            elif isinstance(stmt, cst.For):
                self.for_stmt(stmt)
            elif isinstance(stmt, cst.While):
                self.while_stmt(stmt)
            elif isinstance(stmt, cst.With):
                self.block(stmt.body)
            elif isinstance(stmt, cst.Try):
                self.block(stmt.body)
            elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                pass
            elif isinstance(stmt, (cst.IndentedBlock, cst.SimpleStatementSuite)):
                self.block(stmt)
        except RecursionError:
            self.gap(stmt, "unknown op", "statement too deeply nested to analyse")
        except Exception as exc:  # never let one statement sink the kernel
            self.gap(stmt, "unknown op", f"analysis error ({type(exc).__name__}: {exc})")

    def simple(self, small: cst.CSTNode) -> None:
        self.live.tick()
        self._stmt_temps = {}
        if isinstance(small, cst.Assign):
            v = self._with_static(small.value, self.ev(small.value))
            for t in small.targets:
                self.assign(t.target, v)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self.assign(small.target, self._with_static(small.value, self.ev(small.value)))
        elif isinstance(small, cst.AugAssign):
            self.aug_assign(small)
        elif isinstance(small, cst.Expr):
            self.ev(small.value)
        elif isinstance(small, cst.Return):
            if small.value is not None:
                v = self.ev(small.value)
                if self._return is not None:
                    self._return.append(v)
        elif isinstance(small, cst.Assert):
            self.ev(small.test)
        for nbytes in self._stmt_temps.values():
            self.live.temp(nbytes)
        self._stmt_temps = {}

    def _with_static(self, node: cst.CSTNode, v: Val) -> Val:
        """``v``, or a copy of it carrying the compile-time value of ``node`` when one is known
        (``SHOULD_PERMUTE: tl.constexpr = PERMUTE_X or PERMUTE_Y`` over known flags): a branch on the
        name is then decided as Triton decides it."""
        if static_of(v) is not UNKNOWN_STATIC:
            return v
        read: set[str] = set()  # the parameters the value derives from: a later test of it reads them
        known = static_value(node, lambda name: self._static_lookup(name, read), self._is_none)
        if known is UNKNOWN_STATIC or not isinstance(known, SCALARS) or known is None:
            if read:
                self._static_deps[v] = read | set(self._static_deps.get(v, ()))
            return v
        copy = dataclasses.replace(v)
        self._static[copy] = known
        if read:
            self._static_deps[copy] = read
        return copy

    def _live_bytes(self, v: Val) -> Optional[Expr]:
        if v.kind != "value" or not v.shape or v.pointer:
            return None
        b = shape_bytes(v.shape, v.dtype)
        if b is None:
            return None
        if v.node is not None and self.in_loop() and self.graph.nodes[v.node].get("kind") == "load":
            b = b * sym(NUM_STAGES)
        return b

    def assign(self, target: cst.CSTNode, v: Val, augmented: bool = False) -> None:
        if isinstance(target, cst.Name):
            self.env[target.value] = v
            if v.node is not None:
                self._stmt_temps.pop(v.node, None)
            self.live.define(target.value, self._live_bytes(v), augmented)
        elif isinstance(target, (cst.Tuple, cst.List)):
            elems = [e.value for e in target.elements]
            if v.kind == "alternatives":  # ``a, b, c = f()``: only the 3-tuple path compiles
                fits = [alt for alt in v.items if len(alt.items) == len(elems)]
                v = fits[0] if len(fits) == 1 and not any(isinstance(t, cst.StarredElement) for t in elems) else UNKNOWN
            if v.kind == "tuple" and len(v.items) == len(elems):
                for t, it in zip(elems, v.items):
                    self.assign(t, it)
            else:
                for t in elems:
                    if isinstance(t, cst.StarredElement):
                        t = t.value
                    self.assign(t, UNKNOWN)
        else:
            # attribute / subscript targets: evaluate for side effects only
            pass

    def aug_assign(self, node: cst.AugAssign) -> None:
        rhs = self.ev(node.value)
        if isinstance(node.target, cst.Name):
            name = node.target.value
            self.live.use(name)
            cur = self.env.get(name, UNKNOWN)
            op = type(node.operator).__name__.replace("Assign", "")
            # ``acc += tl.dot(a, b)`` accumulates in place: the dot result is the accumulator
            if rhs.node is not None and self.graph.nodes[rhs.node].get("kind") == "dot":
                self._stmt_temps.pop(rhs.node, None)
            v = self.binop(AUG_OPS.get(op, "?"), cur, rhs, node)
            self.assign(node.target, v, augmented=True)
        else:
            self.ev(node.target)

    def static_test(self, test: cst.CSTNode) -> Optional[bool]:
        """The truth of a branch condition known at compile time (see ``constants``), else None."""
        value = static_value(test, self._static_lookup, self._is_none)
        return None if value is UNKNOWN_STATIC else bool(value)

    def _static_lookup(self, name: str, read: Optional[set] = None) -> Any:
        """The compile-time value of ``name`` (or UNKNOWN_STATIC).  The parameters it derives from are
        added to ``read`` when given (an assignment's value, whose later tests decide), else to
        ``static_params`` (a branch test: a launch value of them could decide it)."""
        v = self.env.get(name)
        if v is not None:
            into = self.static_params if read is None else read
            param = self._param_vals.get(v)
            if param is not None:
                into.add(param)
            into.update(self._static_deps.get(v, ()))
            known = self._static.get(v, UNKNOWN_STATIC)
            return known if known is not UNKNOWN_STATIC else static_of(v)
        c = self.module_constants.get(name, UNKNOWN_STATIC)
        return c if isinstance(c, SCALARS) else UNKNOWN_STATIC

    def _is_none(self, name: str) -> Optional[bool]:
        """Whether a name is known to hold ``None`` (True), known not to (False), or neither.

        A tile, scalar, tuple, dtype, block pointer or descriptor the body computed is never
        ``None``; a kernel parameter may be (a launch passes ``None``), and so may a value the
        analysis could not follow."""
        v = self.env.get(name)
        if v is None:
            return None
        if v.kind == "none":
            return True
        if v.node is not None and v.node.startswith("param:"):
            return None
        if v.kind in ("tuple", "dtype", "blockptr", "desc") or (v.kind == "value" and v.shape is not None):
            return False
        return None

    def if_stmt(self, node: cst.If) -> None:
        known = self.static_test(node.test)
        narrowed = self.descriptor_test(node.test) if known is None else None
        if narrowed is not None and narrowed[1] is not None:
            known = narrowed[1]
        if known is not None:  # a dead side is dropped, as Triton drops it
            if known:
                self.block(node.body)
            elif isinstance(node.orelse, cst.If):
                self.if_stmt(node.orelse)
            elif isinstance(node.orelse, cst.Else):
                self.block(node.orelse.body)
            return
        # ``if isinstance(desc, tl.tensor_descriptor)``: the side where it holds reads ``desc`` as a host descriptor
        view_in_body = view_in_else = None
        if narrowed is not None and narrowed[2] is not None:
            view_in_else, view_in_body = (narrowed, None) if narrowed[3] else (None, narrowed)
        self.ev(node.test)
        before = dict(self.env)
        snap = self.live.snapshot()
        if view_in_body is not None:
            self.env[view_in_body[0]] = view_in_body[2]
        self.block(node.body)
        after_body = self.env
        body_snap = self.live.snapshot()
        self.env = dict(before)
        if view_in_else is not None:
            self.env[view_in_else[0]] = view_in_else[2]
        self.live.restore(snap)
        orelse = node.orelse
        if isinstance(orelse, cst.If):
            self.if_stmt(orelse)
        elif isinstance(orelse, cst.Else):
            self.block(orelse.body)
        self.live.merge(body_snap)
        self.env = join_envs(after_body, self.env)

    def while_stmt(self, node: cst.While) -> None:
        self.live.tick()
        self.ev(node.test)
        self._push_loop(node, None)
        try:
            self.block(node.body)
        finally:
            self._pop_loop()

    def _push_loop(self, node: cst.CSTNode, trips: Optional[Expr], num_stages: Optional[Expr] = None) -> None:
        outer = self.total_trips()
        total_ = None if (trips is None or outer is None) else outer * trips
        parent = self.loop_stack[-1] if self.loop_stack else None
        self.trace.loops.append(LoopRec(self.line(node), trips, total_, parent, num_stages))
        self.loop_stack.append(len(self.trace.loops) - 1)
        self.live.enter_loop()

    def _pop_loop(self) -> None:
        self.loop_stack.pop()
        self.live.exit_loop()

    def for_stmt(self, node: cst.For) -> None:
        self.live.tick()
        it = node.iter
        trips: Optional[Expr] = None
        stages: Optional[Expr] = None
        target_val = UNKNOWN
        q = dotted_name(it.func) if isinstance(it, cst.Call) else None
        if q is not None and q.split(".")[-1] in ("range", "static_range") and (q == "range" or root_name(it.func) in TL_ROOTS):
            pos = [self.ev(a.value) for a in it.args if a.keyword is None and not a.star]
            kws = {a.keyword.value: self.ev(a.value) for a in it.args if a.keyword is not None}
            if "num_stages" in kws:
                stages = kws["num_stages"].expr
            zero, one = Val(expr=const(0), weak=True), Val(expr=const(1), weak=True)
            if len(pos) == 1:
                start, end, step = zero, pos[0], one
            elif len(pos) >= 2:
                start, end = pos[0], pos[1]
                step = pos[2] if len(pos) > 2 else one
            else:
                start, end, step = zero, UNKNOWN, one
            span = _span(start.expr, end.expr)
            if span is not None and step.expr is not None:
                trips = public_expr(cdiv(span, step.expr))
            elif start.expr is not None and end.expr is not None and step.expr is not None:
                # a start that depends on the program id counts from 0: the largest trip count
                first = start.expr.substitute({s: 0 for s in start.expr.symbols() if s.startswith(PID_PREFIX)})
                trips = public_expr(cdiv(end.expr - first, step.expr))
            self._loop_evidence(node, start, end, step)
            rows = self._rows_loop(node, start, end, span, step)
            target_val = Val(
                shape=(),
                dtype="int32",
                params=start.params | end.params | step.params,
                pids=start.pids | step.pids,
                tiles=frozenset((rows,)) if rows else EMPTY,
                loopvars=frozenset((len(self.trace.loops),)),  # the loop pushed next
            )
        else:
            iv = self.ev(it)
            if iv.kind == "tuple" and iv.items:
                target_val = iv.items[0]
                trips = const(len(iv.items))
            else:
                self.gap(it, "unknown op", f"loop over {node_text(it)} not understood")
        self._push_loop(node, trips, stages)
        try:
            self.assign(node.target, target_val)
            self.block(node.body)
        finally:
            self._pop_loop()
        if node.orelse is not None:
            self.block(node.orelse.body)

    def _rows_loop(self, node: cst.For, start: Val, end: Val, span: Optional[Expr], step: Val) -> Optional[str]:
        """The constexpr ``R`` of ``for r in range(R)`` / ``range(s, s + R)`` (unit step), else None.

        Such a loop walks ``R`` rows (or items) one at a time; when ``R`` also
        multiplies a program id (``row = pid * R + r``) it is a rows-per-program
        tiling parameter (see :mod:`.classify`).  The loop variable carries ``R``
        as a tile extent, so ``row < M`` binds ``R`` to ``M``, and so does
        ``range(s, min(s + R, M))``.
        """
        if span is None or span.op != "sym" or span.args[0] not in self.constexprs:
            return None
        if step.expr is None or not (step.expr.is_const and step.expr.value == 1):
            return None
        name = span.args[0]
        line = self.line(node)
        self.trace.loop_bounds.append((name, line))
        if end.expr is not None and end.expr.op == "min":
            limits = frozenset(s for a in end.expr.args if _span(start.expr, a) is None
                               for s in a.symbols() if not s.startswith(PID_PREFIX)) - {name}
            if limits:
                self.trace.binds.append((frozenset((name,)), limits, line, node_text(node.iter), "compare"))
        return name

    def _loop_evidence(self, node: cst.For, start: Val, end: Val, step: Val) -> None:
        """Loop steps and trip-count divisors are reduction-axis candidates.

        A step that is a single constexpr (``range(0, K, BLOCK_K)``) sizes a tile by
        itself, unless the loop starts at a program-id-derived value (a grid-stride
        loop: its step, like ``NUM_SMS``, is not a tile size).  Constexprs in a
        product step (``BLOCK_K * SPLIT_K``) or in the divisor of the trip count
        (``range(0, tl.cdiv(K, BLOCK_K))``) only give a role to parameters that
        size tiles elsewhere.
        """
        line = self.line(node)
        grid_stride = bool(start.pids)
        bound_params = end.params
        step_syms = self.constexpr_syms(step)
        for p in step_syms:
            if grid_stride:
                self.trace.grid_strides.append((p, line))
            if len(step_syms) == 1 and not grid_stride:
                self.tile_use(p, f"loop step at line {line}")
            self.trace.reduction_steps.append((p, bound_params, line, "loop step"))
        e = end.expr
        if e is not None and e.op in ("cdiv", "floordiv") and not grid_stride:
            for p in sorted(e.args[1].symbols()):
                if p in self.constexprs:
                    self.trace.reduction_steps.append((p, bound_params, line, "trip-count divisor"))


Interpreter._dispatch = {
    cst.Name: Interpreter.ev_name,
    cst.Integer: Interpreter.ev_integer,
    cst.Float: Interpreter.ev_float,
    cst.Imaginary: Interpreter.ev_float,
    cst.SimpleString: Interpreter.ev_string,
    cst.ConcatenatedString: Interpreter.ev_string,
    cst.FormattedString: Interpreter.ev_string,
    cst.Tuple: Interpreter.ev_tuple,
    cst.List: Interpreter.ev_tuple,
    cst.Ellipsis: Interpreter.ev_ellipsis,
    cst.IfExp: Interpreter.ev_ifexp,
    cst.UnaryOperation: Interpreter.ev_unary,
    cst.BooleanOperation: Interpreter.ev_boolop,
    cst.BinaryOperation: Interpreter.ev_binop,
    cst.Comparison: Interpreter.ev_compare,
    cst.Subscript: Interpreter.ev_subscript,
    cst.Attribute: Interpreter.ev_attribute,
    cst.Call: Interpreter.ev_call,
    cst.Lambda: lambda self, node: Val(kind="other", shape=None),
}
