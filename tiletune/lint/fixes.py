"""Quick fixes as libcst transforms: each takes the source and a diagnostic
and returns new source (formatting and comments elsewhere are kept).

* TT001: drop the default value of the tiling parameter;
* TT002: drop the launch keyword that fixes a tuned parameter;
* TT003: turn the grid into a lambda over ``meta`` (``BLOCK`` ->
  ``meta["BLOCK"]``), rewriting the grid variable's assignment when the grid
  is a name.

:func:`apply_fix` checks that the result still parses.  The LSP turns the
result into a ``WorkspaceEdit`` (:func:`minimal_edit` gives the changed lines).
"""

from __future__ import annotations

import ast
from typing import Optional, Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from .diagnostic import Diagnostic

__all__ = ["FixError", "apply_fix", "fix_all", "minimal_edit", "FIXABLE_CODES"]

FIXABLE_CODES = ("TT001", "TT002", "TT003")


class FixError(ValueError):
    """The fix cannot be made (the code it targets is not where the diagnostic says, or the result would not parse)."""


def apply_fix(source: str, diagnostic: Diagnostic) -> str:
    """The source with ``diagnostic``'s quick fix applied.

    Raises :class:`FixError` when the diagnostic has no fix or the fix cannot
    be made.
    """
    if not diagnostic.fixable or diagnostic.code not in _FIXERS:
        raise FixError(f"{diagnostic.code} at line {diagnostic.line} has no quick fix")
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        raise FixError(f"cannot fix a file that does not parse: {exc.message}") from exc
    wrapper = MetadataWrapper(module)
    new_module = _FIXERS[diagnostic.code](wrapper, diagnostic)
    new_source = new_module.code
    if new_source == source:
        raise FixError(f"{diagnostic.code} fix for kernel {diagnostic.kernel!r} changed nothing at line {diagnostic.line}")
    try:
        ast.parse(new_source)
    except SyntaxError as exc:
        raise FixError(f"{diagnostic.code} fix for kernel {diagnostic.kernel!r} would not parse: {exc.msg}") from exc
    return new_source


def fix_all(source: str, path: str = "<source>", codes: Sequence[str] = FIXABLE_CODES, max_rounds: int = 50, **lint_kwargs) -> tuple[str, list[Diagnostic]]:
    """Apply every available fix of ``codes``, one at a time (re-linting in
    between, since a fix moves positions).  Returns the new source and the
    diagnostics fixed."""
    from .registry import lint_source

    fixed: list[Diagnostic] = []
    failed: set[tuple] = set()
    for _ in range(max_rounds):
        diags = [
            d
            for d in lint_source(source, path, select=list(codes), **lint_kwargs)
            if d.fixable and (d.code, d.kernel, d.param, d.message) not in failed
        ]
        if not diags:
            break
        d = diags[0]
        try:
            source = apply_fix(source, d)
            fixed.append(d)
        except FixError:
            failed.add((d.code, d.kernel, d.param, d.message))
    return source, fixed


def minimal_edit(old: str, new: str) -> tuple[int, int, str]:
    """The smallest whole-line replacement turning ``old`` into ``new``:
    ``(first_line, end_line, text)`` (0-based lines, ``end_line`` exclusive)
    such that replacing lines ``[first_line, end_line)`` of ``old`` by
    ``text`` gives ``new``."""
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    start = 0
    while start < len(a) and start < len(b) and a[start] == b[start]:
        start += 1
    end_a, end_b = len(a), len(b)
    while end_a > start and end_b > start and a[end_a - 1] == b[end_b - 1]:
        end_a -= 1
        end_b -= 1
    return start, end_a, "".join(b[start:end_b])


# ----- helpers -------------------------------------------------------------------


def _start(wrapper_positions, node: cst.CSTNode) -> tuple[int, int]:
    r = wrapper_positions[node]
    return r.start.line, r.start.column


def _launch_kernel_name(call: cst.Call) -> Optional[str]:
    """``k`` for ``k[grid](...)`` / ``mod.k[grid](...)``."""
    if not isinstance(call.func, cst.Subscript):
        return None
    v = call.func.value
    if isinstance(v, cst.Name):
        return v.value
    if isinstance(v, cst.Attribute):
        return v.attr.value
    return None


# ----- TT001: drop a parameter default -------------------------------------------


class _DropDefault(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, kernel: str, param: str, line: int, column: int):
        super().__init__()
        self.kernel, self.param, self.where = kernel, param, (line, column)
        self.done = False

    def leave_Param(self, original: cst.Param, updated: cst.Param) -> cst.Param:
        if self.done or updated.name.value != self.param or updated.default is None:
            return updated
        if _start(self.metadata[PositionProvider], original.name) != self.where:
            return updated
        self.done = True
        return updated.with_changes(default=None, equal=cst.MaybeSentinel.DEFAULT)


class _DropDefaultByName(cst.CSTTransformer):
    def __init__(self, kernel: str, param: str):
        super().__init__()
        self.kernel, self.param = kernel, param
        self.done = False

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        if self.done or updated.name.value != self.kernel:
            return updated

        def drop(params: Sequence[cst.Param]) -> list[cst.Param]:
            out = []
            for p in params:
                if p.name.value == self.param and p.default is not None:
                    p = p.with_changes(default=None, equal=cst.MaybeSentinel.DEFAULT)
                    self.done = True
                out.append(p)
            return out

        ps = updated.params
        return updated.with_changes(
            params=ps.with_changes(
                posonly_params=drop(ps.posonly_params), params=drop(ps.params), kwonly_params=drop(ps.kwonly_params)
            )
        )


def _fix_default(wrapper: MetadataWrapper, d: Diagnostic) -> cst.Module:
    kernel = d.fix_data.get("kernel", d.kernel)
    param = d.fix_data.get("param", d.param)
    t = _DropDefault(kernel, param, d.line, d.column)
    new = wrapper.visit(t)
    if t.done:
        return new
    t2 = _DropDefaultByName(kernel, param)
    new = wrapper.module.visit(t2)
    if not t2.done:
        raise FixError(f"parameter {param!r} of kernel {kernel!r} with a default not found")
    return new


# ----- TT002: drop a launch keyword ------------------------------------------------


def _remove_arg(call: cst.Call, idx: int) -> cst.Call:
    args = list(call.args)
    removed = args.pop(idx)
    if idx == len(args) and args:
        # The removed argument was the last: its comma (trailing comma and the
        # line break before ")") moves to the new last argument.
        args[-1] = args[-1].with_changes(comma=removed.comma)
    return call.with_changes(args=args)


class _DropKeyword(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, kernel: Optional[str], param: str, line: int, column: int, exact: bool):
        super().__init__()
        self.kernel, self.param, self.line, self.column, self.exact = kernel, param, line, column, exact
        self.done = False

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if self.done or not isinstance(updated.func, cst.Subscript):
            return updated
        for i, arg in enumerate(original.args):
            if arg.keyword is None or arg.keyword.value != self.param:
                continue
            line, col = _start(self.metadata[PositionProvider], arg)
            if self.exact and (line, col) != (self.line, self.column):
                continue
            if not self.exact and (line != self.line or _launch_kernel_name(original) != self.kernel):
                continue
            self.done = True
            return _remove_arg(updated, i)
        return updated


def _fix_keyword(wrapper: MetadataWrapper, d: Diagnostic) -> cst.Module:
    param = d.fix_data.get("param", d.param)
    line = d.fix_data.get("line", d.line)
    column = d.fix_data.get("column", d.column)
    for exact in (True, False):
        t = _DropKeyword(d.kernel, param, line, column, exact)
        new = wrapper.visit(t)
        if t.done:
            return new
    raise FixError(f"launch keyword {param}= of kernel {d.kernel!r} not found at line {line}")


# ----- TT003: grid -> lambda over meta ---------------------------------------------


class _MetaNames(cst.CSTTransformer):
    """Replace ``NAME`` (read as a value) by ``meta["NAME"]`` for the given names."""

    def __init__(self, names: Sequence[str], meta: str):
        super().__init__()
        self.names, self.meta = set(names), meta
        self.count = 0

    # Names that are not values: attribute names, keyword names, parameters.
    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return False

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        return updated.with_changes(value=original.value.visit(self))

    def visit_Arg(self, node: cst.Arg) -> bool:
        return False

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(value=original.value.visit(self))

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def leave_Lambda(self, original: cst.Lambda, updated: cst.Lambda) -> cst.BaseExpression:
        inner = {p.name.value for p in original.params.params}
        sub = _MetaNames([n for n in self.names if n not in inner], self.meta)
        body = original.body.visit(sub)
        self.count += sub.count
        return updated.with_changes(body=body)

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        if updated.value not in self.names:
            return updated
        self.count += 1
        return cst.Subscript(
            value=cst.Name(self.meta),
            slice=[cst.SubscriptElement(slice=cst.Index(value=cst.SimpleString(f'"{updated.value}"')))],
            lpar=updated.lpar,
            rpar=updated.rpar,
        )


def _all_names(node: cst.CSTNode) -> set[str]:
    out: set[str] = set()

    class V(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            out.add(n.value)

    node.visit(V())
    return out


def _meta_name(node: cst.CSTNode) -> str:
    used = _all_names(node)
    for cand in ("meta", "META", "meta_", "_meta"):
        if cand not in used:
            return cand
    return "meta__"


def _parenthesize_tuple(expr: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(expr, cst.Tuple) and not expr.lpar:
        return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return expr


def _to_lambda(expr: cst.BaseExpression, names: Sequence[str]) -> cst.BaseExpression:
    """``expr`` as a grid lambda over meta (an existing lambda is fixed in place)."""
    if isinstance(expr, cst.Lambda):
        ps = expr.params
        first = (list(ps.posonly_params) + list(ps.params))[:1]
        if first:
            meta = first[0].name.value
            t = _MetaNames(names, meta)
            return expr.with_changes(body=expr.body.visit(t))
        meta = _meta_name(expr)
        t = _MetaNames(names, meta)
        return expr.with_changes(
            params=ps.with_changes(params=[cst.Param(name=cst.Name(meta))]),
            body=expr.body.visit(t),
            whitespace_after_lambda=cst.SimpleWhitespace(" "),
        )
    meta = _meta_name(expr)
    body = _parenthesize_tuple(expr.visit(_MetaNames(names, meta)))
    template = cst.parse_expression(f"lambda {meta}: 0")
    assert isinstance(template, cst.Lambda)
    return template.with_changes(body=body)


def _fix_def(func: cst.FunctionDef, names: Sequence[str]) -> cst.FunctionDef:
    ps = func.params
    first = (list(ps.posonly_params) + list(ps.params))[:1]
    if not first:
        raise FixError(f"grid function {func.name.value!r} takes no meta argument")
    meta = first[0].name.value
    return func.with_changes(body=func.body.visit(_MetaNames(names, meta)))


class _FindLaunch(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider, ParentNodeProvider)

    def __init__(self, line: int, column: int, kernel: Optional[str]):
        super().__init__()
        self.where, self.kernel = (line, column), kernel
        self.call: Optional[cst.Call] = None
        self.scope: Optional[cst.CSTNode] = None
        self._scopes: list[cst.CSTNode] = []
        self.fallback: Optional[tuple[cst.Call, Optional[cst.CSTNode]]] = None

    def visit_Module(self, node: cst.Module) -> None:
        self._scopes.append(node)

    def leave_Module(self, node: cst.Module) -> None:
        self._scopes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.append(node)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.pop()

    def visit_Call(self, node: cst.Call) -> None:
        if self.call is not None or not isinstance(node.func, cst.Subscript):
            return
        pos = self.metadata[PositionProvider][node].start
        if (pos.line, pos.column) == self.where:
            self.call, self.scope = node, self._scopes[-1]
        elif self.fallback is None and pos.line == self.where[0] and _launch_kernel_name(node) == self.kernel:
            self.fallback = (node, self._scopes[-1])


def _grid_assignment(scope: cst.CSTNode, name: str, before_line: int, positions) -> Optional[cst.CSTNode]:
    """The last ``name = value`` (or ``def name``) directly in ``scope`` before ``before_line``."""
    found: Optional[cst.CSTNode] = None

    class V(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            nonlocal found
            if node is scope:
                return True
            if node.name.value == name and positions[node].start.line < before_line:
                found = node
            return False  # other scopes

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_Assign(self, node: cst.Assign) -> None:
            nonlocal found
            if positions[node].start.line >= before_line:
                return
            if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) and node.targets[0].target.value == name:
                found = node

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            nonlocal found
            if positions[node].start.line >= before_line or node.value is None:
                return
            if isinstance(node.target, cst.Name) and node.target.value == name:
                found = node

    scope.visit(V())
    return found


class _ReplaceNode(cst.CSTTransformer):
    def __init__(self, old: cst.CSTNode, new: cst.CSTNode):
        super().__init__()
        self.old, self.new = old, new

    def on_leave(self, original, updated):
        if original is self.old:
            return self.new
        return updated


def _fix_grid(wrapper: MetadataWrapper, d: Diagnostic) -> cst.Module:
    names = list(d.fix_data.get("names") or ([d.param] if d.param else []))
    if not names:
        raise FixError("no tiling parameter to read from meta")
    line = d.fix_data.get("line", d.line)
    column = d.fix_data.get("column", d.column)
    finder = _FindLaunch(line, column, d.kernel)
    wrapper.visit(finder)
    call, scope = finder.call, finder.scope
    if call is None and finder.fallback is not None:
        call, scope = finder.fallback
    if call is None:
        raise FixError(f"launch of kernel {d.kernel!r} not found at line {line}")
    module = wrapper.module
    positions = wrapper.resolve(PositionProvider)
    sub = call.func
    assert isinstance(sub, cst.Subscript)
    elements = list(sub.slice)
    single = len(elements) == 1 and isinstance(elements[0].slice, cst.Index) and not isinstance(elements[0].comma, cst.Comma)
    if not single:
        values = []
        for e in elements:
            if not isinstance(e.slice, cst.Index):
                raise FixError("grid with a slice cannot be rewritten")
            values.append(cst.Element(value=e.slice.value))
        grid = cst.Tuple(elements=values)
        lam = _to_lambda(grid, names)
        new_sub = sub.with_changes(slice=[cst.SubscriptElement(slice=cst.Index(value=lam))])
        return module.visit(_ReplaceNode(sub, new_sub))
    grid = elements[0].slice.value  # type: ignore[union-attr]
    if isinstance(grid, cst.Name):
        assert scope is not None
        target = _grid_assignment(scope, grid.value, positions[call].start.line, positions)
        if target is None:
            raise FixError(f"assignment of grid variable {grid.value!r} not found in the launch's scope")
        if isinstance(target, cst.FunctionDef):
            return module.visit(_ReplaceNode(target, _fix_def(target, names)))
        value = target.value  # Assign / AnnAssign
        new_value = _to_lambda(value, names)
        return module.visit(_ReplaceNode(value, new_value))
    return module.visit(_ReplaceNode(grid, _to_lambda(grid, names)))


_FIXERS = {"TT001": _fix_default, "TT002": _fix_keyword, "TT003": _fix_grid}
