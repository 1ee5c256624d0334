"""Reading and parsing one source file: text (PEP 263 aware), the libcst
module, node positions, import aliases, and a single scan of its scopes
(imports, defs, simple assignments, launch calls) and integer constants.

Shared by the front end, the declaration and launch readers and the
project-wide resolver; it imports none of them.
"""

from __future__ import annotations

import dataclasses
import io
import os
import re
import threading
import tokenize
from contextlib import contextmanager
from typing import Any, Iterator, Optional

import libcst as cst


from ..deep_stack import MAX_EXPRESSION_DEPTH
from ..errors import AnalysisError
from ..files import UnreadableFileError, read_regular_bytes
from .cst_text import NODE_TYPES as _NODE_TYPES, NOT_NODE_TYPES as _NOT_NODE_TYPES, TOKEN_FIELDS, is_cst_node
from .model import Span
from .positions import LazyPositions, nested_deeper_than, python_tree, whole_module_positions

__all__ = ["is_jit_def", "is_compile_time_def", "iter_nodes", "SourceInfo", "lazy_spans", "ModuleScan", "ScopeKey", "read_source", "parse", "positions_of", "module_constants",
           "dotted_name"]

_LIBCST_WHERE = re.compile(r"error at (\d+):(\d+)")


#: Modules that re-export Triton under their own name, read as Triton itself: vllm's
#: ``vllm/triton_utils/__init__.py`` does ``import triton``, ``import triton.language as tl`` and
#: ``import triton.language.extra.libdevice as tldevice`` (vllm-ascend's kernels import them as
#: ``from vllm.triton_utils import tl, triton``).
REEXPORTS: dict[str, str] = {
    "vllm.triton_utils.triton": "triton",
    "vllm.triton_utils.tl": "triton.language",
    "vllm.triton_utils.tldevice": "triton.language.extra.libdevice",
}


def dotted_name(node: cst.CSTNode) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = dotted_name(node.value)
        return None if head is None else f"{head}.{node.attr.value}"
    return None


_LAZY_SPANS = threading.local()  # .on: spans made in this thread are computed when first read


@contextmanager
def lazy_spans() -> Iterator[None]:
    """While open, :meth:`SourceInfo.span` in this thread returns spans whose line and columns are
    computed when first read (a lint with no finding reads few: most kernel and launch statements then
    need no code generation for their positions).  Such a span holds its module's tree until read, so
    only a caller that drops the analysis soon (the lint) opens this; an analysis in another thread (the
    deep-stack one) makes its spans as usual."""
    was = getattr(_LAZY_SPANS, "on", False)
    _LAZY_SPANS.on = True
    try:
        yield
    finally:
        _LAZY_SPANS.on = was


class _LazySpan(Span):
    """A :class:`Span` of ``first``'s start to ``last``'s end, read from ``positions`` when a field is first
    read.  It equals, hashes, prints and pickles as the plain :class:`Span` of the same range."""

    def __init__(self, positions: Any, first: cst.CSTNode, last: cst.CSTNode):  # noqa: D107 - no dataclass init
        object.__setattr__(self, "_at", (positions, first, last))

    def __getattr__(self, name: str) -> Any:  # reached only while the range is not read
        at = self.__dict__.get("_at")
        if at is None or name not in _SPAN_FIELDS:
            raise AttributeError(name)
        positions, first, last = at
        start = positions[first]
        end = positions[last] if last is not first else start
        for field_name, value in zip(_SPAN_FIELDS, (start.start.line, start.start.column, end.end.line, end.end.column)):
            object.__setattr__(self, field_name, value)
        del self.__dict__["_at"]  # the tree is no longer held
        return self.__dict__[name]

    def _fields(self) -> tuple:
        return (self.line, self.column, self.end_line, self.end_column, self.file)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Span):
            return NotImplemented
        return self._fields() == (other.line, other.column, other.end_line, other.end_column, other.file)

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return repr(Span(*self._fields()))

    def __reduce__(self) -> tuple:
        return (Span, self._fields())


_SPAN_FIELDS = ("line", "column", "end_line", "end_column")


class SourceInfo:
    """A parsed module with positions and import aliases (shared by the front-end helpers)."""

    def __init__(self, module: cst.Module, positions: Any, file: Optional[str], imports: dict[str, str]):
        self.module = module
        self.positions = positions
        self.file = file
        self.imports = imports

    def span(self, node: cst.CSTNode, last: Optional[cst.CSTNode] = None) -> Span:
        """The :class:`Span` of ``node`` (to the end of ``last`` when given); computed when first read
        under :func:`lazy_spans`."""
        if getattr(_LAZY_SPANS, "on", False):
            return _LazySpan(self.positions, node, node if last is None else last)
        r = self.positions[node]
        if last is None:
            return Span(r.start.line, r.start.column, r.end.line, r.end.column)
        e = self.positions[last]
        return Span(r.start.line, r.start.column, e.end.line, e.end.column)

    def line(self, node: cst.CSTNode) -> int:
        """The first line of ``node``."""
        return self.positions[node].start.line

    def code(self, node: cst.CSTNode) -> str:
        """The source text of ``node``."""
        return self.module.code_for_node(node).strip()

    def resolve(self, dotted: str) -> tuple[str, bool]:
        """``dotted`` with its first name replaced by what it was imported as, and
        whether that first name was imported (``tl.constexpr`` -> ``triton.language.constexpr``)."""
        head, _, rest = dotted.partition(".")
        target = self.imports.get(head)
        if target is None:
            return dotted, False
        return (f"{target}.{rest}" if rest else target), True


# ----- reading and parsing --------------------------------------------------------
def read_source(file: str) -> str:
    """A Python file's text as Python reads it (PEP 263 coding line, UTF-8 BOM), read safely.

    Only a regular file of at most :data:`~tiletune.files.MAX_SOURCE_BYTES` is
    read, without ever blocking (a FIFO, a device, a symlink to ``/dev/zero``);
    anything else is an :class:`AnalysisError` naming the file.
    """
    try:
        data = read_regular_bytes(file)
    except (FileNotFoundError, NotADirectoryError):
        if os.path.lexists(file):
            raise AnalysisError("is a dangling symlink (its target does not exist); fix or remove the link", file) from None
        raise AnalysisError("no such file", file) from None
    except UnreadableFileError as exc:
        raise AnalysisError(exc.reason, file) from None
    except OSError as exc:
        raise AnalysisError(f"cannot read file: {exc.strerror or exc}", file) from None
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise AnalysisError(f"invalid encoding declaration: {exc.msg}", file, exc.lineno or 1) from None
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1)
        raise AnalysisError(f"cannot decode as {encoding}: byte {data[exc.start]:#04x}", file, line, column) from None


def parse(source: str, file: Optional[str]) -> cst.Module:
    """Parse with libcst; every failure becomes an AnalysisError with a line.

    Python's own parser checks the text first: it is fast, reports the exact
    position of a syntax error, and refuses pathological nesting that would
    crash libcst's native parser (thousands of nested brackets).
    """
    try:
        python_tree(source)
    except (SyntaxError, ValueError) as exc:  # incl. IndentationError, TabError; NUL bytes
        line, column = getattr(exc, "lineno", None), max((getattr(exc, "offset", None) or 1) - 1, 0)
        if line is None and "\0" in source:
            index = source.index("\0")
            line, column = source.count("\n", 0, index) + 1, index - source.rfind("\n", 0, index) - 1
        message = getattr(exc, "msg", None) or str(exc)
        raise AnalysisError(f"invalid syntax: {message}", file, max(line or 1, 1), column) from None
    except (RecursionError, MemoryError):
        raise AnalysisError("code nested too deeply to analyse", file, 1, 0) from None
    deep = nested_deeper_than(source, MAX_EXPRESSION_DEPTH)  # libcst's parser slows down quadratically with nesting
    if deep is not None:
        line, column, depth = deep
        raise AnalysisError(f"expression nested more than {MAX_EXPRESSION_DEPTH} levels deep ({depth}+) is too deep "
                            "to analyse; split it into smaller expressions (e.g. partial sums)", file, line, column)
    try:
        return _parse_unvalidated(source)
    except cst.ParserSyntaxError as exc:
        found = _LIBCST_WHERE.search(exc.message)
        line, column = (int(found.group(1)), int(found.group(2))) if found else (exc.raw_line, exc.raw_column)
        message = exc.message.replace("parser error: ", "").replace("tokenizer error: ", "")
        raise AnalysisError(f"invalid syntax: {message}", file, max(line, 1), max(column, 0)) from None
    except RecursionError:
        raise AnalysisError("code nested too deeply to analyse", file, 1, 0) from None
    except Exception as exc:  # any other libcst failure is reported the same way
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise AnalysisError(f"cannot parse: {message}", file, 1, 0) from None


_PARSING = threading.Lock()
_PARSER_THREAD: list = [None]  # the thread whose parse skips node validation
_VALIDATE = getattr(cst.CSTNode, "__post_init__", None)  # None: a libcst that validates elsewhere parses plainly


def _validate_unless_parsing(node: cst.CSTNode) -> None:
    if threading.get_ident() != _PARSER_THREAD[0]:
        _VALIDATE(node)  # a node built by hand in another thread meanwhile is checked as always


def _parse_unvalidated(source: str) -> cst.Module:
    """``cst.parse_module(source)`` without libcst's check of each node as it is built.

    Every libcst node checks its fields in ``__post_init__`` (``_validate``), which
    guards trees built by hand; the native parser builds only trees the grammar
    accepted, and the checks cost about a fifth of the parse (2 of 9-10 CPU s on
    fla-core's kernel files; libcst's own comment on ``__post_init__`` suggests moving
    them out of parsing).  They only raise, never change a node, so the tree is the
    same.  The check is skipped for this thread while it parses; parses are serialised.
    """
    if _VALIDATE is None:
        return cst.parse_module(source)
    with _PARSING:
        _PARSER_THREAD[0] = threading.get_ident()
        cst.CSTNode.__post_init__ = _validate_unless_parsing  # type: ignore[method-assign]
        try:
            return cst.parse_module(source)
        finally:
            cst.CSTNode.__post_init__ = _VALIDATE  # type: ignore[method-assign]
            _PARSER_THREAD[0] = None


# ----- one pass over the module --------------------------------------------------
ScopeKey = tuple[cst.CSTNode, ...]
"""The enclosing ``def``/``class`` nodes of a statement, outermost first (``()`` = module)."""


# Node fields that never hold anything the scan looks for (whitespace, brackets, tokens).
_SKIP_FIELDS = TOKEN_FIELDS
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def is_jit_def(func: cst.FunctionDef) -> bool:
    """True when ``func`` has a decorator named ``jit`` (``@triton.jit``, ``@jit``, ``@triton.jit(...)``)."""
    for d in func.decorators:
        expr = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
        name = expr.attr.value if isinstance(expr, cst.Attribute) else getattr(expr, "value", None)
        if name == "jit":
            return True
    return False


def is_compile_time_def(func: cst.FunctionDef) -> bool:
    """True when ``func`` is a compile-time function a jit function may call: decorated
    ``@triton.constexpr_function`` or ``@tl.constexpr`` (Python run while Triton specialises the
    caller, on dtypes and constexpr values), read like a jit helper."""
    for d in func.decorators:
        expr = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
        name = expr.attr.value if isinstance(expr, cst.Attribute) else getattr(expr, "value", None)
        if name in ("constexpr_function", "constexpr"):
            return True
    return False


def iter_nodes(root: cst.CSTNode):
    """Every node below ``root`` (itself included), reading node fields directly: much faster
    than libcst's ``children``, which rebuilds each node's child list."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        for name in _child_fields(type(node)):
            value = getattr(node, name)
            kind = type(value)
            if kind in _NODE_TYPES or (kind not in _NOT_NODE_TYPES and is_cst_node(value)):
                stack.append(value)  # (isinstance on libcst's abstract base goes through the ABC machinery)
            elif kind is list or kind is tuple or isinstance(value, (list, tuple)):
                stack.extend(item for item in value if type(item) in _NODE_TYPES or is_cst_node(item))


def _child_fields(cls: type) -> tuple[str, ...]:
    names = _CHILD_FIELDS.get(cls)
    if names is None:
        names = tuple(
            f.name for f in dataclasses.fields(cls) if f.name not in _SKIP_FIELDS and not f.name.startswith("whitespace")
        )
        _CHILD_FIELDS[cls] = names
    return names


#: Per node class: ModuleScan's visit and leave methods for it (or None) and its child fields.
_SCAN_HOOKS: dict[type, tuple] = {}


class ModuleScan:
    """Collects, by scope: imports, ``def``s, simple assignments and ``x[...](...)`` calls.

    Walks the node dataclasses directly (libcst's visitor machinery rebuilds
    every node and costs as much as parsing).  Statements are ordered by a
    counter in walking (= source) order.
    """

    def __init__(self, module: cst.Module):
        self._order = 0
        self._scope: list[cst.CSTNode] = []
        self.imports: dict[str, str] = {}
        self._enables = False
        self._autotune_uses: list[str] = []
        self.functions: list[tuple[ScopeKey, cst.FunctionDef]] = []
        self.defs: dict[ScopeKey, dict[str, cst.FunctionDef]] = {}
        # name -> [(order, value or None when not a plain ``name = value``)]
        self.assigns: dict[ScopeKey, dict[str, list[tuple[int, Optional[cst.BaseExpression]]]]] = {}
        self.launch_calls: list[tuple[ScopeKey, cst.Call, int]] = []
        # imports inside a function or class: (scope, local name, level, module, name or None for a module)
        self.scoped_imports: list[tuple[ScopeKey, str, int, str, Optional[str]]] = []
        self._walk(module)

    def _walk(self, node: cst.CSTNode) -> None:
        cls = type(node)
        hooks = _SCAN_HOOKS.get(cls)
        if hooks is None:
            hooks = _SCAN_HOOKS[cls] = (getattr(ModuleScan, "visit_" + cls.__name__, None),
                                        getattr(ModuleScan, "leave_" + cls.__name__, None), _child_fields(cls))
        visit, leave, fields = hooks
        if visit is not None:
            visit(self, node)
        for name in fields:
            value = getattr(node, name)
            kind = type(value)
            if kind is list or kind is tuple or (kind not in _NODE_TYPES and isinstance(value, (list, tuple))):
                for item in value:
                    if type(item) in _NODE_TYPES or is_cst_node(item):
                        self._walk(item)
            elif kind in _NODE_TYPES or (kind not in _NOT_NODE_TYPES and is_cst_node(value)):
                self._walk(value)
        if leave is not None:
            leave(self, node)

    @property
    def enables_tiletune(self) -> bool:
        """True when the module imports ``tiletune.patch`` or uses tiletune's autotune."""
        if self._enables:
            return True
        for dotted in self._autotune_uses:
            head, _, rest = dotted.partition(".")
            full = f"{self.imports[head]}.{rest}" if head in self.imports else dotted
            if full.startswith("tiletune.") and head in self.imports:
                return True
        return False

    def last_assignment(self, scope: ScopeKey, name: str, before: Optional[int]) -> tuple[bool, Optional[cst.BaseExpression]]:
        """(assigned?, value) of the last assignment to ``name`` in ``scope``
        before visiting order ``before`` (anywhere in the scope when None)."""
        entries = self.assigns.get(scope, {}).get(name, [])
        if before is not None:
            entries = [e for e in entries if e[0] < before]
        return (True, entries[-1][1]) if entries else (False, None)

    def lookup_def(self, scope: ScopeKey, name: str) -> Optional[cst.FunctionDef]:
        """The ``def name`` visible from ``scope`` (innermost first)."""
        for i in range(len(scope), -1, -1):
            found = self.defs.get(scope[:i], {}).get(name)
            if found is not None:
                return found
        return None

    def _next(self) -> int:
        self._order += 1
        return self._order

    # scopes
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        key = tuple(self._scope)
        self.functions.append((key, node))
        self.defs.setdefault(key, {})[node.name.value] = node
        # A def binds its name like an assignment: ``grid = (...)`` then ``def grid(meta)`` rebinds it.
        self.assigns.setdefault(key, {}).setdefault(node.name.value, []).append((self._next(), node))
        self._scope.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._scope.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._scope.append(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._scope.pop()

    # imports
    def _scoped_import(self, node: cst.CSTNode) -> None:
        """Record an import made inside a function (``from ._kernels import k`` in the launching function)."""
        if not self._scope:
            return
        scope = tuple(self._scope)
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = dotted_name(alias.name) or ""
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    self.scoped_imports.append((scope, alias.asname.name.value, 0, full, None))
        elif isinstance(node, cst.ImportFrom) and not isinstance(node.names, cst.ImportStar):
            mod = dotted_name(node.module) if node.module is not None else ""
            for alias in node.names:
                name = dotted_name(alias.name) or ""
                local = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else name
                self.scoped_imports.append((scope, local, len(node.relative), mod or "", name))

    def visit_Import(self, node: cst.Import) -> None:
        self._scoped_import(node)
        for alias in node.names:
            full = dotted_name(alias.name) or ""
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.imports[alias.asname.name.value] = full
            else:
                head = full.split(".")[0]
                self.imports[head] = head
            if full == "tiletune.patch" or full.startswith("tiletune.patch."):
                self._enables = True

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._scoped_import(node)
        if node.relative or node.module is None:
            return
        mod = dotted_name(node.module) or ""
        if mod == "tiletune.patch" or mod.startswith("tiletune.patch."):
            self._enables = True
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            name = dotted_name(alias.name) or ""
            local = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else name
            self.imports[local] = REEXPORTS.get(f"{mod}.{name}", f"{mod}.{name}")
            if mod.split(".")[0] == "tiletune" and name in ("patch", "autotune"):
                self._enables = True

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == "autotune":
            dotted = dotted_name(node)
            if dotted is not None:
                self._autotune_uses.append(dotted)

    # assignments and launches
    def _record(self, target: cst.BaseExpression, value: Optional[cst.BaseExpression], node: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            entry = (self._next(), value)
            self.assigns.setdefault(tuple(self._scope), {}).setdefault(target.value, []).append(entry)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self._record(el.value, None, node)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._record(t.target, node.value, node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._record(node.target, node.value, node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._record(node.target, None, node)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Subscript):
            self.launch_calls.append((tuple(self._scope), node, self._next()))


def module_constants(module: cst.Module, scan: ModuleScan, info: "SourceInfo") -> dict[str, int]:
    """Module-level integer constants assigned once: ``BLOCK = 128``,
    ``X: tl.constexpr = 64``, ``Y = tl.constexpr(2 * BLOCK)``."""
    once = {n for n, entries in scan.assigns.get((), {}).items() if len(entries) == 1}
    env: dict[str, int] = {}
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                target, value = small.targets[0].target, small.value
            elif isinstance(small, cst.AnnAssign) and small.value is not None:
                target, value = small.target, small.value
            else:
                continue
            if isinstance(target, cst.Name) and target.value in once:
                v = _const_int(info, value, env)
                if v is not None:
                    env[target.value] = v
    return env


def _const_int(info: "SourceInfo", node: cst.CSTNode, env: dict[str, int]) -> Optional[int]:
    if isinstance(node, cst.Integer):
        return node.evaluated_value
    if isinstance(node, cst.Name):
        return env.get(node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        v = _const_int(info, node.expression, env)
        return None if v is None else (-v if isinstance(node.operator, cst.Minus) else v)
    if isinstance(node, cst.BinaryOperation):
        a, b = _const_int(info, node.left, env), _const_int(info, node.right, env)
        if a is None or b is None:
            return None
        op = node.operator
        if isinstance(op, cst.Add):
            return a + b
        if isinstance(op, cst.Subtract):
            return a - b
        if isinstance(op, cst.Multiply):
            return a * b
        if isinstance(op, cst.FloorDivide) and b != 0:
            return a // b
        if isinstance(op, cst.LeftShift) and 0 <= b <= 64:
            return a << b
        if isinstance(op, cst.Power) and 0 <= b <= 64 and abs(a) <= 2**16:
            return a**b
        return None
    if isinstance(node, cst.Call) and len(node.args) == 1 and not node.args[0].keyword and not node.args[0].star:
        dotted = dotted_name(node.func)
        if dotted is not None and info.resolve(dotted)[0].split(".")[-1] == "constexpr":
            return _const_int(info, node.args[0].value, env)
    return None


def positions_of(module: cst.Module, source: Optional[str] = None) -> Any:
    """PositionProvider's node -> CodeRange mapping: computed per top-level statement on demand when
    the ``source`` text is given (:class:`~.positions.LazyPositions`), else for the whole module at once."""
    if source is not None:
        return LazyPositions(module, source)
    return whole_module_positions(module)
