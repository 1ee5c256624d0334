"""Tile parameters that may carry meaning: where a value other than the one the data was built for
computes something else.

A free tile size changes how the work is cut, never what is computed.  Three
patterns in a kernel's source tie a tiling parameter ``P`` to the data
instead; each is a *may*: the source shows the dependence, not that the
author's data breaks it.

1. **one value per block against a group size**: a scalar (not a tile)
   that depends on ``P`` is divided by another parameter of the kernel (a
   runtime size or a non-tiling constexpr, with no tiling parameter in it)
   and the quotient addresses memory
   (``scale = load(s_ptr + (k * BLOCK_K) // group_k)``,
   ``k_m = (k * (BLOCK_K / group_size)).to(tl.int32)``): one scale serves a
   whole ``P``-sized block, right only while ``P`` divides the group;
2. **a pointer stepped once per block**: in a loop whose trip count depends
   on ``P``, one pointer advances by ``P`` elements per iteration and
   another by an amount without ``P`` (``s_ptrs += stride_s``): the second
   tensor holds one entry per ``P``-sized step;
3. **a buffer indexed by the block number**: a scalar address that uses a
   program's block index ``v`` itself, where ``v * P`` starts the block
   (``load(expert_ids + pid_m)``, ``store(partial + pid)``): the host built
   (or reads) one entry per ``P``-sized block.

:func:`find_meaning` reads the kernel's own body (libcst, never run) and
returns ``{param: [reason, ...]}``.  The runtime's agreement check
(:mod:`tiletune.runtime.agreement`) decides by running; this is what
``analyze``, ``synth-configs`` and the lint (TT010) can say without a device.
"""

from __future__ import annotations

import dataclasses
from typing import Dict, Iterable, List, Optional, Set

import libcst as cst

from .cst_text import NODE_TYPES as _NODE_TYPES, NOT_NODE_TYPES as _NOT_NODE_TYPES, TOKEN_FIELDS, is_cst_node

__all__ = ["find_meaning"]

_TILE_MAKERS = {"arange", "zeros", "full", "zeros_like", "full_like", "make_block_ptr", "make_tensor_descriptor",
                "rand", "randn", "randint", "broadcast_to", "reshape", "view", "expand_dims", "cat", "join"}
_MEMORY = {"load", "store", "atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor",
           "atomic_xchg", "atomic_cas"}
#: Calls whose result is proportional to their arguments (a helper's result is not assumed to be).
_PROPORTIONAL_CALLS = {"to", "min", "max", "minimum", "maximum", "where", "abs", "multiple_of", "max_contiguous",
                       "cast", "int"}
_TILE = "@tile"
_PID = "@pid"
_START = "@start"


def _callee(node: cst.Call) -> Optional[str]:
    """``"arange"`` for ``tl.arange(...)`` / ``arange(...)``; None for other callee shapes."""
    f = node.func
    if type(f) is cst.Attribute:
        return f.attr.value
    if type(f) is cst.Name:
        return f.value
    return None


def _address(node: cst.Call) -> Optional[cst.BaseExpression]:
    """The pointer argument of a memory call."""
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "pointer":
            return arg.value
    positional = [a for a in node.args if a.keyword is None]
    return positional[0].value if positional else None


class _Reader:
    """Flow-insensitive dependences of the kernel's names (two passes over the body reach loop-carried
    names), then the three patterns."""

    def __init__(self, func: cst.FunctionDef, tiling: Iterable[str], params: Iterable[str]):
        self.func = func
        self.tiling = set(tiling)
        self.others = set(params) - self.tiling  # runtime sizes and non-tiling constexprs
        self.deps: Dict[str, Set[str]] = {}
        self.found: Dict[str, List[str]] = {}
        self.block_vars: Dict[str, Set[str]] = {}  # P -> names v with v * P in the body
        self.loops: List[tuple] = []  # (loop deps, body)
        self._assigned: List[tuple] = []  # (value, names assigned from it), both passes: read by assigned_from()
        self._assigned_from: Optional[Dict[str, Set[str]]] = None  # assigned_from(), built when first needed
        self.steps: Dict[str, Set[str]] = {}  # name -> tiling params it is proportional to (k * BLOCK_K)
        self._addresses: Optional[List[tuple]] = None  # memory_addresses(), read once
        self._body_divisions: List[cst.BinaryOperation] = []  # the body's divisions, found by the same walk
        self._address_deps: Optional[List[tuple]] = None  # address_deps(), read once the walk is done
        self._divisions: Dict[int, tuple] = {}  # id(value) -> (value, texts of its floor divisions)

    # ----- dependences ----------------------------------------------------------------------------
    def expr_deps(self, node: cst.CSTNode) -> Set[str]:
        """Every name ``node`` depends on, transitively, with the markers @tile, @pid and @start."""
        out: Set[str] = set()
        self._collect(node, out)
        return out

    def _collect(self, node: cst.CSTNode, out: Set[str]) -> None:
        if type(node) is cst.Name:
            out.add(node.value)
            out |= self.deps.get(node.value, set())
            return
        if type(node) is cst.Attribute:  # x.dtype, tl.float32: only the base object matters
            self._collect(node.value, out)
            return
        if type(node) is cst.Call:
            name = _callee(node)
            if name in _TILE_MAKERS:
                out.add(_TILE)
            if name == "program_id":
                out.add(_PID)
            if type(node.func) is cst.Attribute and type(node.func.value) is not cst.Name:
                self._collect(node.func.value, out)  # x.to(...): the object's deps
            for arg in node.args:
                self._collect(arg.value, out)
            return
        if type(node) is cst.BinaryOperation and type(node.operator) is cst.Multiply:
            start = self._block_start(node)
            if start is not None:
                out |= {start, _START}
                return
        for child in _children(node):  # libcst's node.children rebuilds the node: read the fields
            self._collect(child, out)

    def step_params(self, node: cst.CSTNode) -> Set[str]:
        """The tiling parameters ``node`` is proportional to: ``k * BLOCK_K`` and ``BLOCK_K / g`` are,
        ``tl.cdiv(K, BLOCK_K)`` (a count of blocks) and ``pid // cdiv(N, BLOCK_N)`` are not."""
        if type(node) is cst.Name:
            return {node.value} if node.value in self.tiling else set(self.steps.get(node.value, set()))
        if type(node) is cst.BinaryOperation:
            if type(node.operator) in (cst.FloorDivide, cst.Divide, cst.Modulo):
                return self.step_params(node.left)
            return self.step_params(node.left) | self.step_params(node.right)
        if type(node) is cst.UnaryOperation:
            return self.step_params(node.expression)
        if type(node) is cst.Call:
            if _callee(node) not in _PROPORTIONAL_CALLS:  # a count (cdiv), an id, or a helper's result
                return set()
            out: Set[str] = set()
            if type(node.func) is cst.Attribute and type(node.func.value) is not cst.Name:
                out |= self.step_params(node.func.value)  # x.to(tl.int32)
            for arg in node.args:
                if arg.keyword is None:
                    out |= self.step_params(arg.value)
            return out
        if type(node) is cst.Subscript:
            return self.step_params(node.value)
        return set()

    def _block_start(self, node: cst.BinaryOperation) -> Optional[str]:
        """``P`` when ``node`` is ``v * P`` (or ``P * v``) with ``v`` a program's block index."""
        for v, p in ((node.left, node.right), (node.right, node.left)):
            if type(p) is cst.Name and p.value in self.tiling:
                vd = self.expr_deps(v)
                if _PID in vd and _TILE not in vd:
                    if type(v) is cst.Name:
                        self.block_vars.setdefault(p.value, set()).add(v.value)
                    return p.value
        return None

    def assign(self, targets: Iterable[cst.BaseExpression], value: cst.BaseExpression) -> None:
        names: List[str] = []
        for t in targets:
            names.extend(_target_names(t))
        if not names:
            return
        self._assigned.append((value, names))
        d = self.expr_deps(value)
        steps = self.step_params(value)
        for n in names:
            self.deps.setdefault(n, set()).update(d - {n})
            self.steps.setdefault(n, set()).update(steps)

    # ----- the walk ---------------------------------------------------------------------------------
    def walk(self, body: Iterable[cst.CSTNode]) -> None:
        for stmt in body:
            self.statement(stmt)

    def statement(self, stmt: cst.CSTNode) -> None:
        if type(stmt) is cst.SimpleStatementLine:
            for small in stmt.body:
                if type(small) is cst.Assign:
                    self.assign([t.target for t in small.targets], small.value)
                elif type(small) is cst.AnnAssign and small.value is not None:
                    self.assign([small.target], small.value)
                elif type(small) is cst.AugAssign:
                    self.assign([small.target], cst.BinaryOperation(small.target, cst.Add(), small.value))
        elif type(stmt) is cst.For:
            d = self.expr_deps(stmt.iter)
            step = _range_step(stmt.iter)
            for n in _target_names(stmt.target):
                self.deps.setdefault(n, set()).update(d)
                if step is not None:
                    self.steps.setdefault(n, set()).update(self.step_params(step))
            self.loops.append((d, stmt.body))
            self.walk(stmt.body.body)
        elif type(stmt) in (cst.If, cst.While):
            self.walk(stmt.body.body)
            orelse = getattr(stmt, "orelse", None)
            while orelse is not None:
                self.walk(orelse.body.body)
                orelse = getattr(orelse, "orelse", None)
        elif type(stmt) in (cst.With,):
            self.walk(stmt.body.body)

    def assigned_from(self) -> Dict[str, Set[str]]:
        """A floor division's text -> the names assigned from a value holding it (both passes).

        Only a division that passes every other test of :meth:`floor_divisions` asks, and most
        kernels have none: the assigned values are searched for divisions then, once."""
        if self._assigned_from is None:
            found: Dict[str, Set[str]] = {}
            for value, names in self._assigned:
                hit = self._divisions.get(id(value))
                if hit is None or hit[0] is not value:  # the walk ran twice: read each value's divisions once
                    hit = self._divisions[id(value)] = (value, [_text(div) for div in _floor_divisions(value)])
                for text in hit[1]:
                    found.setdefault(text, set()).update(names)
            self._assigned_from = found
        return self._assigned_from

    def run(self) -> Dict[str, List[str]]:
        for _ in range(2):  # the second pass sees loop-carried and later-defined names
            self.loops = []
            self.walk(self.func.body.body)
        self.floor_divisions()
        self.stepped_pointers()
        self.block_indexed()
        return self.found

    def note(self, param: str, reason: str) -> None:
        reasons = self.found.setdefault(param, [])
        if reason not in reasons:
            reasons.append(reason)

    def memory_addresses(self) -> List[tuple]:
        """(call name, address expression) of every memory call in the body, in source order (read once)."""
        if self._addresses is None:
            found: List[tuple] = []
            divisions = self._body_divisions
            for node in _nodes(self.func.body):  # one walk finds the divisions floor_divisions() reads too
                if type(node) is cst.Call:
                    name = _callee(node)
                    if name in _MEMORY:
                        addr = _address(node)
                        if addr is not None:
                            found.append((name, addr))
                elif type(node) is cst.BinaryOperation and type(node.operator) in _DIVISIONS:
                    divisions.append(node)
            self._addresses = found
        return self._addresses

    def address_deps(self) -> List[tuple]:
        """(call name, address expression, its dependences) of every memory call, in source order; the
        dependences are final once the walk is done, so the three patterns share one reading."""
        if self._address_deps is None:
            self._address_deps = [(n, a, self.expr_deps(a)) for n, a in self.memory_addresses()]
        return self._address_deps

    # ----- the three patterns ------------------------------------------------------------------------
    def floor_divisions(self) -> None:
        address_deps = self.address_deps()  # its walk finds the divisions too
        addresses = None  # with their text, once a division passes the tests below (few do)
        for div in self._body_divisions:
            left, right = self.expr_deps(div.left), self.expr_deps(div.right)
            params = sorted(self.step_params(div.left))
            if not params or _TILE in left or _TILE in right:
                continue
            if not (right & self.others) or (right & self.tiling):
                continue
            text = _text(div)
            if addresses is None:
                addresses = [(n, a, d, _text(a)) for n, a, d in address_deps]
            users = self.assigned_from().get(text, set())
            for call, addr, adeps, atext in addresses:
                if text in atext or users & adeps:
                    for p in params:
                        self.note(p, f"one value per {p} block: `{text}` divides a {p}-sized step by "
                                     f"`{_text(div.right)}` and addresses tl.{call}({atext}): "
                                     f"right only where {p} divides it")
                    break

    def stepped_pointers(self) -> None:
        addresses = [(n, d) for n, _, d in self.address_deps()]
        for loop_deps, body in self.loops:
            params = sorted(loop_deps & self.tiling)
            if not params:
                continue
            by_p: Dict[str, str] = {}
            fixed: Dict[str, str] = {}
            for node in _nodes(body):
                if type(node) is not cst.AugAssign or type(node.operator) not in (cst.AddAssign, cst.SubtractAssign):
                    continue
                names = _target_names(node.target)
                if len(names) != 1:
                    continue
                step = self.expr_deps(node.value)
                if step & self.tiling:
                    by_p[names[0]] = _text(node.value)
                elif _TILE not in step and not _is_zero(node.value):
                    fixed[names[0]] = _text(node.value)
            for ptr, step in fixed.items():
                if ptr in by_p or not any(ptr in d for _, d in addresses):
                    continue
                moving = [n for n in by_p if any(n in d for _, d in addresses)]
                if not moving:
                    continue
                for p in params:
                    self.note(p, f"a pointer stepped once per {p} block: `{ptr} += {step}` in a loop that "
                                 f"steps `{moving[0]}` by {by_p[moving[0]]}: the tensor behind `{ptr}` holds "
                                 f"one entry per {p} elements")

    def block_indexed(self) -> None:
        for call, addr, d in self.address_deps():
            if _TILE in d:
                continue
            for p, names in self.block_vars.items():
                used = sorted(n for n in names if n in d)
                if used:
                    self.note(p, f"a buffer indexed by the {p} block number: tl.{call}({_text(addr)}) uses "
                                 f"`{used[0]}` where `{used[0]} * {p}` starts a block: one entry per {p}-sized "
                                 "block, as the host built it")


def _target_names(t: cst.CSTNode) -> List[str]:
    if type(t) is cst.Name:
        return [t.value]
    if type(t) in (cst.Tuple, cst.List):
        out: List[str] = []
        for el in t.elements:
            out.extend(_target_names(el.value))
        return out
    return []


def _nodes(root: cst.CSTNode):
    """Every node below ``root`` (itself included) in source order, as libcst's visitor meets them, read
    from the node fields directly (the visitor rebuilds every node and costs as much as the analysis)."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(_children(node)))


_FIELDS: Dict[type, tuple] = {}


_is_node = is_cst_node


def _children(node: cst.CSTNode) -> List[cst.CSTNode]:
    kids: List[cst.CSTNode] = []
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        kind = type(value)
        if kind is list or kind is tuple:
            for item in value:
                if type(item) in _NODE_TYPES or _is_node(item):
                    kids.append(item)
        elif kind in _NODE_TYPES or (kind not in _NOT_NODE_TYPES and _is_node(value)):
            kids.append(value)
    return kids


def _child_fields(cls: type) -> tuple:
    names = _FIELDS.get(cls)
    if names is None:  # tokens, brackets, commas, operators and whitespace hold no name, call or operation
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls)
                                     if not f.name.startswith("whitespace") and f.name not in TOKEN_FIELDS)
    return names


_DIVISIONS = (cst.FloorDivide, cst.Divide)


def _floor_divisions(node: cst.CSTNode) -> List[cst.BinaryOperation]:
    """Every ``a // b`` and ``a / b`` inside ``node``."""
    return [b for b in _nodes(node) if type(b) is cst.BinaryOperation and type(b.operator) in _DIVISIONS]


def _range_step(node: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """The step of ``range(a, b, step)`` / ``tl.range(...)`` (None when there is none)."""
    if type(node) is cst.Call and _callee(node) in ("range", "static_range"):
        positional = [a.value for a in node.args if a.keyword is None]
        for a in node.args:
            if a.keyword is not None and a.keyword.value == "step":
                return a.value
        if len(positional) >= 3:
            return positional[2]
    return None


def _is_zero(node: cst.BaseExpression) -> bool:
    return type(node) is cst.Integer and node.value == "0"


_MODULE = cst.Module(body=[])


def _text(node: cst.CSTNode) -> str:
    return " ".join(_MODULE.code_for_node(node).split())


def find_meaning(func: cst.FunctionDef, tiling: Iterable[str], params: Iterable[str]) -> Dict[str, List[str]]:
    """``{tiling parameter: [reason, ...]}`` for the parameters of ``func`` that may carry meaning.

    ``tiling``: the kernel's tiling constexprs; ``params``: all its
    parameters.  Reads the body only; never runs it.
    """
    tiling = list(tiling)
    if not tiling:  # each pattern names a tiling parameter: none, nothing to find
        return {}
    return _Reader(func, tiling, params).run()
