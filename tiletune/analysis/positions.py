"""Line and column of libcst nodes, computed only for the statements someone asks about.

libcst's ``PositionProvider`` generates the code of the whole module to
count lines, which costs as much as the rest of a lint of a kernel file
(the lint asks for the positions of a few kernels and launches, not of
every node).  :class:`LazyPositions` is the same ``node -> CodeRange``
mapping computed one top-level statement at a time: the first time a node
is asked for, the statement holding it is found (a walk of the node
fields), its first line read from Python's own parse of the source
(``ast``, in C), and the provider's code generator run over that statement
alone, from that line.  The ranges are the provider's own (same class, same
code), so a finding's line and column are unchanged; a source the
statement-wise mapping cannot be sure of (``\\r`` line ends, a statement
count that does not match ``ast``'s) falls back to the whole-module pass.
"""

from __future__ import annotations

import ast
import dataclasses
import threading
import warnings
from collections.abc import Mapping
from contextlib import contextmanager
from typing import Any, Iterator, Optional

import libcst as cst

from libcst._nodes.expression import _BaseParenthesizedNode
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import NEWLINE_RE

from ..deep_stack import too_deep
from .cst_text import NODE_TYPES as _NODE_TYPES, NOT_NODE_TYPES as _NOT_NODE_TYPES, is_cst_node

__all__ = ["LazyPositions", "whole_module_positions", "python_tree", "forget_tree", "nested_deeper_than"]

_LAST_TREE: list = [None, None]  # [source, its ast.Module]
_SHALLOW: list = [None]  # a depth no expression of the kept tree exceeds (the least checked so far), or None


def python_tree(source: str) -> ast.Module:
    """Python's own parse of ``source`` (``ast``, warnings silenced), the last text's tree kept: the front
    end's depth check, its syntax check and these positions read the same text's tree in turn.

    Raises what ``compile`` raises (``SyntaxError``, ``ValueError`` for NUL bytes, ``RecursionError``,
    ``MemoryError``); the callers handle it as they did their own parse.  Read the tree, never change it.
    """
    if _LAST_TREE[1] is not None and _LAST_TREE[0] == source:
        return _LAST_TREE[1]
    with warnings.catch_warnings():  # e.g. invalid escape sequences: not the analysis' business
        warnings.simplefilter("ignore")
        tree = compile(source, "<source>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    _LAST_TREE[:] = [source, tree]
    _SHALLOW[0] = None
    return tree


def nested_deeper_than(source: str, limit: int) -> Optional[tuple[int, int, int]]:
    """``too_deep(python_tree(source), source, limit)``: the first expression nested more than ``limit`` levels
    deep, or None; raises what :func:`python_tree` raises.

    The front end asks twice per text (100 levels: run on a deeper stack?; 3000: refuse the file), and a walk
    costs as much as a third of Python's parse; when no expression exceeds a depth, none exceeds a larger one,
    so the second answer is known without a walk.
    """
    tree = python_tree(source)
    if _SHALLOW[0] is not None and limit >= _SHALLOW[0]:
        return None
    found = too_deep(tree, source, limit)
    if found is None and (_SHALLOW[0] is None or limit < _SHALLOW[0]):
        _SHALLOW[0] = limit
    return found


def forget_tree() -> None:
    """Drop the tree :func:`python_tree` keeps (the front end calls it when an analysis is done)."""
    _LAST_TREE[:] = [None, None]
    _SHALLOW[0] = None


def whole_module_positions(module: cst.Module) -> Any:
    """PositionProvider's node -> CodeRange mapping of every node of ``module`` (one codegen pass).

    ``MetadataWrapper.resolve`` also walks the whole tree once for batchable
    providers even when there are none, which costs as much as the positions;
    calling the provider directly skips that walk (falls back if libcst changes).
    """
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    gen = getattr(PositionProvider(), "_gen", None)
    if gen is not None:
        try:
            return gen(wrapper)
        except (TypeError, AttributeError):
            pass
    return wrapper.resolve(PositionProvider)


class _Syntactic:
    """``with state.record_syntactic_position(node, start_node=, end_node=)``: the provider's context
    manager as a small object (the generator-based one costs more than the rest of the bookkeeping)."""

    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(self, state: "_RawState", node: Any, start_node: Any, end_node: Any) -> None:
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

    def __enter__(self) -> None:
        self.start = (self.state.line, self.state.column)

    def __exit__(self, *exc: Any) -> None:
        state, raw = self.state, self.state.raw
        start = raw[id(self.start_node)][0] if self.start_node is not None else self.start
        end = raw[id(self.end_node)][1] if self.end_node is not None else (state.line, state.column)
        raw[id(self.node)] = (start, end)


class _RawState(CodegenState):
    """``PositionProvidingCodegenState`` with the same ranges, kept as ``((line, column), (line, column))``
    tuples in ``raw`` (keyed by ``id(node)``: libcst's ``__hash__`` is a Python call, and every key is a node of
    the module the positions hold, alive as long as they are) and without the generated text (the positions are all a lint reads; building a
    ``CodeRange`` per node and keeping every token cost more than libcst's walk itself).  The ranges become
    ``CodeRange`` objects when they are read (:meth:`LazyPositions.__getitem__`)."""

    def __init__(self, default_indent: str, default_newline: str, raw: dict, line: int) -> None:
        super().__init__(default_indent=default_indent, default_newline=default_newline)
        self.raw = raw
        self.line = line  # one-indexed
        self.column = 0
        self._stack: list = []

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.add_token(token)

    def add_token(self, value: str) -> None:
        if "\r" in value:  # the provider's own split (a source holding \r never gets here; kept for safety)
            segments = NEWLINE_RE.split(value)
            if len(segments) == 1:
                self.column += len(value)
            else:
                self.line += len(segments) - 1
                self.column = len(segments[-1])
            return
        newlines = value.count("\n")
        if newlines:
            self.line += newlines
            self.column = len(value) - value.rfind("\n") - 1
        else:
            self.column += len(value)

    def before_codegen(self, node: Any) -> None:
        self._stack.append((self.line, self.column))

    def after_codegen(self, node: Any) -> None:
        start = self._stack.pop()
        key = id(node)
        if key not in self.raw:  # a syntactic position recorded by the node itself wins
            self.raw[key] = (start, (self.line, self.column))

    def record_syntactic_position(self, node: Any, *, start_node: Any = None, end_node: Any = None) -> _Syntactic:
        return _Syntactic(self, node, start_node, end_node)


class _Parenthesized:
    """``with node._parenthesize(state)`` for a :class:`_RawState`: libcst's generator-based context
    manager (the parentheses, then the node's syntactic position) as a small object, same order."""

    __slots__ = ("node", "state", "start")

    def __init__(self, node: Any, state: "_RawState") -> None:
        self.node, self.state = node, state

    def __enter__(self) -> None:
        state = self.state
        for lpar in self.node.lpar:
            lpar._codegen(state)
        self.start = (state.line, state.column)

    def __exit__(self, kind: Any, *exc: Any) -> bool:
        state = self.state
        state.raw[id(self.node)] = (self.start, (state.line, state.column))
        if kind is None:
            for rpar in self.node.rpar:
                rpar._codegen(state)
        return False


_LIBCST_CODEGEN = cst.CSTNode._codegen
_PARENTHESIZED = _BaseParenthesizedNode
_LIBCST_PARENTHESIZE = _PARENTHESIZED._parenthesize


def _codegen(self: Any, state: Any, **kwargs: Any) -> None:
    """``CSTNode._codegen`` while positions are computed: for a :class:`_RawState` the hooks before and
    after each node are inlined (two calls fewer per node); any other state goes to libcst's own."""
    if type(state) is not _RawState:
        return _LIBCST_CODEGEN(self, state, **kwargs)
    start = (state.line, state.column)
    self._codegen_impl(state, **kwargs)
    raw = state.raw
    key = id(self)
    if key not in raw:  # a syntactic position recorded by the node itself wins
        raw[key] = (start, (state.line, state.column))
    return None


def _parenthesize(self: Any, state: Any) -> Any:
    """``_BaseParenthesizedNode._parenthesize`` while positions are computed (see :class:`_Parenthesized`)."""
    if type(state) is not _RawState:
        return _LIBCST_PARENTHESIZE(self, state)
    return _Parenthesized(self, state)


_FAST_LOCK = threading.Lock()
_FAST_USERS = [0]


@contextmanager
def _fast_codegen() -> Iterator[None]:
    """libcst's per-node codegen hooks replaced by :func:`_codegen`/:func:`_parenthesize` while the block
    runs (a third of the position pass was the generic hooks and generator context managers).

    The replacements hand every other codegen state to libcst's own methods, so a ``module.code`` in
    another thread meanwhile is unchanged; the originals are put back when the last user leaves.
    """
    with _FAST_LOCK:
        if _FAST_USERS[0] == 0:
            cst.CSTNode._codegen = _codegen  # type: ignore[method-assign]
            _PARENTHESIZED._parenthesize = _parenthesize  # type: ignore[method-assign]
        _FAST_USERS[0] += 1
    try:
        yield
    finally:
        with _FAST_LOCK:
            _FAST_USERS[0] -= 1
            if _FAST_USERS[0] == 0:
                cst.CSTNode._codegen = _LIBCST_CODEGEN  # type: ignore[method-assign]
                _PARENTHESIZED._parenthesize = _LIBCST_PARENTHESIZE  # type: ignore[method-assign]


def _code_range(raw: tuple) -> CodeRange:
    (l0, c0), (l1, c1) = raw
    return CodeRange(CodePosition(l0, c0), CodePosition(l1, c1))


def _statement_lines(source: str, module: cst.Module) -> Optional[list[int]]:
    """The line each top-level statement's code starts on (its leading blank/comment lines included),
    or None when ``ast`` and libcst do not see the same statements."""
    if "\r" in source:
        return None  # libcst and ast may count a lone \r differently
    try:
        body = python_tree(source).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    starts: list[int] = []
    k = 0
    for stmt in module.body:
        if k >= len(body):
            return None
        first = body[k]
        line = first.lineno
        decorators = getattr(first, "decorator_list", None)
        if decorators:
            line = min([line] + [d.lineno for d in decorators])
            cst_decorators = getattr(stmt, "decorators", ())
            if cst_decorators:
                line -= len(cst_decorators[0].leading_lines)
        line -= len(stmt.leading_lines)
        starts.append(line)
        k += len(stmt.body) if isinstance(stmt, cst.SimpleStatementLine) else 1
    if k != len(body):
        return None
    return starts


_FIELDS: dict[type, tuple] = {}
_is_node = is_cst_node


def _nodes(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        cls = type(node)
        names = _FIELDS.get(cls)
        if names is None:
            names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
        for name in names:
            value = getattr(node, name)
            kind = type(value)
            if kind is list or kind is tuple:
                stack.extend(item for item in value if type(item) in _NODE_TYPES or _is_node(item))
            elif kind in _NODE_TYPES or (kind not in _NOT_NODE_TYPES and _is_node(value)):
                stack.append(value)


class LazyPositions(Mapping):
    """``node -> CodeRange`` for the nodes of ``module``, computed per top-level statement on demand.

    ``source`` is the text ``module`` was parsed from.  Lookups of nodes the
    module does not hold raise ``KeyError`` like the provider's mapping.
    """

    def __init__(self, module: cst.Module, source: str):
        self._module = module
        self._source = source
        self._computed: dict = {}
        self._raw: dict = {}  # id(node) -> ((line, column), (line, column)) of the statements computed so far
        self._owner: dict[int, int] = {}  # id(node) -> index of its top-level statement
        self._top: Optional[dict[int, int]] = None  # id(top-level statement) -> its index
        self._indexed = 0  # statements whose nodes are in _owner
        self._header_indexed = False  # the module's own header/footer lines are in _owner
        self._done: set[int] = set()
        self._starts: Optional[list[int]] = None
        self._all = False

    def _whole(self) -> None:
        if not self._all:
            self._computed.update(whole_module_positions(self._module))
            self._all = True

    def _statement_of(self, node: cst.CSTNode) -> Optional[int]:
        """The index of the top-level statement holding ``node``; -1 for the module's own lines, None
        for a node of another module (the resolver chains the positions of several modules)."""
        key = id(node)
        body = self._module.body
        if self._top is None:  # a top-level statement (a kernel's def) needs no walk
            self._top = {id(stmt): i for i, stmt in enumerate(body)}
        top = self._top.get(key)
        if top is not None:
            return top
        if not self._header_indexed:
            self._header_indexed = True
            self._owner[id(self._module)] = -1
            for part in (self._module.header, self._module.footer):
                for line in part:
                    for n in _nodes(line):
                        self._owner[id(n)] = -1
        while key not in self._owner and self._indexed < len(body):
            i = self._indexed
            for n in _nodes(body[i]):
                self._owner[id(n)] = i
            self._indexed += 1
        return self._owner.get(key)

    def locate_within(self, node: cst.CSTNode, outer: cst.CSTNode) -> None:
        """Note that ``node`` lies inside ``outer`` (an enclosing ``def``/``class`` the caller knows, e.g. a
        launch's scope), so that its statement is found without walking the statements before it.

        Only ``node``'s own subtree is indexed, and only when ``outer`` is a top-level statement of this
        module; otherwise nothing changes and a lookup finds the statement as before.
        """
        if self._top is None:
            self._top = {id(stmt): i for i, stmt in enumerate(self._module.body)}
        i = self._top.get(id(outer))
        if i is None or id(node) in self._owner:
            return
        for n in _nodes(node):
            self._owner[id(n)] = i

    def _compute(self, i: int) -> None:
        if self._starts is None:
            self._starts = _statement_lines(self._source, self._module) or []
        if not self._starts:
            self._whole()
            return
        module = self._module
        state = _RawState(module.default_indent, module.default_newline, self._raw, self._starts[i])
        with _fast_codegen():
            module.body[i]._codegen(state)
        self._done.add(i)

    def __getitem__(self, node: Any) -> Any:
        r = self._computed.get(node)
        if r is not None or self._all:
            if r is None:
                raise KeyError(node)
            return r
        raw = self._raw.get(id(node))
        if raw is not None:
            r = self._computed[node] = _code_range(raw)
            return r
        i = self._statement_of(node) if isinstance(node, cst.CSTNode) else None
        if i is None:
            raise KeyError(node)  # not a node of this module
        if i < 0 or i in self._done:
            self._whole()  # the module itself or its header/footer lines
        else:
            self._compute(i)
        if self._all:
            return self._computed[node]
        r = self._computed[node] = _code_range(self._raw[id(node)])
        return r

    def __iter__(self) -> Iterator[Any]:
        self._whole()
        return iter(self._computed)

    def __len__(self) -> int:
        self._whole()
        return len(self._computed)
