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
from collections.abc import Mapping
from typing import Any, Iterator, Optional

import libcst as cst

from .cst_text import is_cst_node
from libcst.metadata import MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

__all__ = ["LazyPositions", "whole_module_positions"]


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


class _Sink:
    """What the provider's codegen state writes into (it reads and writes ``_computed``)."""

    def __init__(self, computed: dict):
        self._computed = computed


def _statement_lines(source: str, module: cst.Module) -> Optional[list[int]]:
    """The line each top-level statement's code starts on (its leading blank/comment lines included),
    or None when ``ast`` and libcst do not see the same statements."""
    if "\r" in source:
        return None  # libcst and ast may count a lone \r differently
    try:
        body = ast.parse(source).body
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
            if type(value) in (list, tuple):
                stack.extend(item for item in value if _is_node(item))
            elif _is_node(value):
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
        self._owner: dict[int, int] = {}  # id(node) -> index of its top-level statement
        self._indexed = 0  # statements whose nodes are in _owner
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
        if not self._owner:
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

    def _compute(self, i: int) -> None:
        if self._starts is None:
            self._starts = _statement_lines(self._source, self._module) or []
        if not self._starts:
            self._whole()
            return
        module = self._module
        state = PositionProvidingCodegenState(default_indent=module.default_indent,
                                              default_newline=module.default_newline,
                                              provider=_Sink(self._computed))
        state.line = self._starts[i]
        module.body[i]._codegen(state)
        self._done.add(i)

    def __getitem__(self, node: Any) -> Any:
        r = self._computed.get(node)
        if r is not None or self._all:
            if r is None:
                raise KeyError(node)
            return r
        i = self._statement_of(node) if isinstance(node, cst.CSTNode) else None
        if i is None:
            raise KeyError(node)  # not a node of this module
        if i < 0 or i in self._done:
            self._whole()  # the module itself or its header/footer lines
        else:
            self._compute(i)
        return self._computed[node]

    def __iter__(self) -> Iterator[Any]:
        self._whole()
        return iter(self._computed)

    def __len__(self) -> int:
        self._whole()
        return len(self._computed)
