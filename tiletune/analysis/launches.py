"""Launch sites ``kernel[grid](...)``: the grid's form, the meta keys it reads,
its dimensions as :class:`Expr` where they can be read, and the keyword
arguments fixed at launch.

The front end decides which kernel a launch targets and how a grid variable
resolves (``resolve_name``); this module only reads the expressions.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Union

import libcst as cst

from .decorators import KernelEntry, dotted_name, jit_assignments, literal_value
from .expr import Expr, cdiv, const, emax, emin, sym
from .model import LaunchSite, Span
from .source import ModuleScan, SourceInfo


__all__ = ["launches_by_kernel", "build_launch", "grid_to_exprs", "expr_from_cst"]

#: What a grid variable name resolves to: a value expression, a ``def``, or None.
Resolver = Callable[[str], Optional[Union[cst.BaseExpression, cst.FunctionDef]]]

_MAX_ALIAS_DEPTH = 8


def build_launch(info: SourceInfo, call: cst.Call, resolve_name: Resolver) -> LaunchSite:
    """Describe the launch ``call`` (whose ``func`` is ``kernel[grid]``).

    ``resolve_name(name)`` gives the value a grid variable was last assigned
    in the launch's scope (or the ``def`` of that name); a variable that
    resolves to a lambda or a tuple is described as that lambda or tuple
    (``grid_kind`` ``"lambda"``/``"tuple"``, ``grid_source`` its text), a
    ``def`` keeps ``grid_kind == "name"`` but has its meta keys and returned
    grid read.  ``grid_span`` is always the grid as written at the launch.
    """
    sub = call.func
    assert isinstance(sub, cst.Subscript)
    elements = list(sub.slice)
    single = (
        len(elements) == 1
        and isinstance(elements[0].slice, cst.Index)
        and not isinstance(elements[0].comma, cst.Comma)
    )
    if single:
        grid_node = elements[0].slice.value  # type: ignore[union-attr]
        grid_span = info.span(grid_node)
        site = _describe_grid(info, grid_node, resolve_name, call, grid_span)
    else:
        grid_span = info.span(elements[0], elements[-1])
        values = [e.slice.value for e in elements if isinstance(e.slice, cst.Index)]
        source = ", ".join(info.code(v) for v in values) + ("," if len(values) == 1 else "")
        site = _site(info, call, grid_span, "tuple", source)
        if len(values) == len(elements):
            site.grid = grid_to_exprs(values, None)
            site.grid_names = _names_of(values, None)
    _read_arguments(info, call, site)
    return site


def _site(info: SourceInfo, call: cst.Call, grid_span: Span, kind: str, source: str) -> LaunchSite:
    return LaunchSite(span=info.span(call), grid_span=grid_span, grid_kind=kind, grid_source=source)


def _describe_grid(
    info: SourceInfo, node: cst.CSTNode, resolve_name: Resolver, call: cst.Call, grid_span: Span
) -> LaunchSite:
    written = node
    for _ in range(_MAX_ALIAS_DEPTH):  # follow grid = other_grid chains
        if not isinstance(node, cst.Name):
            break
        target = resolve_name(node.value)
        if target is None:
            break
        node = target
    if isinstance(node, cst.Lambda):
        site = _site(info, call, grid_span, "lambda", info.code(node))
        _read_meta_function(site, _first_param(node.params), [node.body], node.body)
        return site
    if isinstance(node, (cst.Tuple, cst.List)):
        site = _site(info, call, grid_span, "tuple", info.code(node))
        values = [el.value for el in node.elements]
        if all(isinstance(el, cst.Element) for el in node.elements):
            site.grid = grid_to_exprs(values, None)
        site.grid_names = _names_of(values, None)
        return site
    if isinstance(node, cst.FunctionDef):
        site = _site(info, call, grid_span, "name", info.code(written))
        returns = _returned_values(node)
        _read_meta_function(site, _first_param(node.params), [node.body], returns[0] if len(returns) == 1 else None)
        return site
    if isinstance(written, cst.Name):
        site = _site(info, call, grid_span, "name", info.code(written))
        site.grid_names = [written.value]
        return site
    kind = "call" if isinstance(node, cst.Call) else "other"
    site = _site(info, call, grid_span, kind, info.code(node))
    site.grid_names = _names_of([node], None)
    return site


def _first_param(params: cst.Parameters) -> Optional[str]:
    for p in list(params.posonly_params) + list(params.params):
        return p.name.value
    if isinstance(params.star_arg, cst.Param):
        return params.star_arg.name.value
    return None


# The recursive walks below are module functions, not closures: a closure that calls itself is a
# reference cycle, which kept the syntax tree it reached alive until the cyclic collector ran.
def _returned_values(func: cst.FunctionDef) -> list[cst.BaseExpression]:
    out: list[cst.BaseExpression] = []
    _visit_returns(func, func, out)
    return out


def _visit_returns(node: cst.CSTNode, func: cst.FunctionDef, out: list) -> None:
    if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) and node is not func:
        return
    if isinstance(node, cst.Return) and node.value is not None:
        out.append(node.value)
    for child in node.children:
        _visit_returns(child, func, out)


def _read_meta_function(
    site: LaunchSite, meta: Optional[str], scan: list[cst.CSTNode], value: Optional[cst.BaseExpression]
) -> None:
    """Fill meta keys, reads_meta, grid and grid_names from a grid callable."""
    if meta is not None:
        keys: list[str] = []
        for node in scan:
            _collect_meta_keys(node, meta, keys)
        site.meta_keys = keys
        site.reads_meta = any(meta in _value_names(node, include_callees=True) for node in scan)
    if value is None:
        return
    values = [el.value for el in value.elements] if isinstance(value, (cst.Tuple, cst.List)) else [value]
    if not isinstance(value, (cst.Tuple, cst.List)) or all(isinstance(el, cst.Element) for el in value.elements):
        site.grid = grid_to_exprs(values, meta)
    site.grid_names = _names_of(values, meta)


def _meta_key(node: cst.CSTNode, meta: str) -> Optional[str]:
    """The key of ``meta["KEY"]`` or ``meta.get("KEY", ...)``, else None."""
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and node.value.value == meta:
        if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            key = literal_value(node.slice[0].slice.value)
            return key if isinstance(key, str) else None
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and isinstance(node.func.value, cst.Name)
        and node.func.value.value == meta
        and node.func.attr.value == "get"
        and node.args
    ):
        key = literal_value(node.args[0].value)
        return key if isinstance(key, str) else None
    return None


def _collect_meta_keys(node: cst.CSTNode, meta: str, out: list[str]) -> None:
    key = _meta_key(node, meta)
    if key is not None and key not in out:
        out.append(key)
    for child in node.children:
        _collect_meta_keys(child, meta, out)


def _value_names(node: cst.CSTNode, include_callees: bool) -> list[str]:
    """Names read as values in ``node`` (not attribute names, not keyword names)."""
    out: list[str] = []
    _visit_names(node, include_callees, out)
    return out


def _visit_names(n: cst.CSTNode, include_callees: bool, out: list[str]) -> None:
    if isinstance(n, cst.Name):
        if n.value not in ("True", "False", "None") and n.value not in out:
            out.append(n.value)
    elif isinstance(n, cst.Attribute):
        _visit_names(n.value, include_callees, out)
    elif isinstance(n, cst.Call):
        if include_callees:
            _visit_names(n.func, include_callees, out)
        for a in n.args:
            _visit_names(a.value, include_callees, out)
    elif isinstance(n, cst.Arg):
        _visit_names(n.value, include_callees, out)
    elif isinstance(n, cst.Lambda):
        inner = [p.name.value for p in n.params.params]
        out.extend(x for x in _value_names(n.body, include_callees) if x not in inner and x not in out)
    else:
        for child in n.children:
            _visit_names(child, include_callees, out)


def _names_of(values: list[cst.CSTNode], meta: Optional[str]) -> list[str]:
    names: list[str] = []
    for v in values:
        for n in _value_names(v, include_callees=False):
            if n != meta and n not in names:
                names.append(n)
    return names


def grid_to_exprs(values: list[cst.BaseExpression], meta: Optional[str]) -> Optional[list[Expr]]:
    """One :class:`Expr` per grid dimension, or None if any cannot be read."""
    out = []
    for v in values:
        e = expr_from_cst(v, meta)
        if e is None:
            return None
        out.append(e)
    return out


def expr_from_cst(node: cst.CSTNode, meta: Optional[str] = None) -> Optional[Expr]:
    """Translate an integer expression: literals, names (as symbols), ``meta["K"]``
    (as symbol ``K``), ``+ - * //``, unary minus, ``triton.cdiv``/``cdiv`` and
    ``max``/``min``.  Anything else gives None."""
    if meta is not None:
        key = _meta_key(node, meta)
        if key is not None:
            return sym(key) if key.isidentifier() else None
    if isinstance(node, cst.Integer):
        return const(node.evaluated_value)
    if isinstance(node, cst.Name):
        if node.value == meta or node.value in ("True", "False", "None") or not node.value.isidentifier():
            return None
        return sym(node.value)
    if isinstance(node, cst.UnaryOperation):
        inner = expr_from_cst(node.expression, meta)
        if inner is None:
            return None
        if isinstance(node.operator, cst.Minus):
            return const(-1) * inner
        return inner if isinstance(node.operator, cst.Plus) else None
    if isinstance(node, cst.BinaryOperation):
        a, b = expr_from_cst(node.left, meta), expr_from_cst(node.right, meta)
        if a is None or b is None:
            return None
        op = node.operator
        if isinstance(op, cst.Add):
            return a + b
        if isinstance(op, cst.Subtract):
            return a - b
        if isinstance(op, cst.Multiply):
            return a * b
        if isinstance(op, cst.FloorDivide):
            if b.is_const and b.value == 0:
                return None
            return a // b
        return None
    if isinstance(node, cst.Call):
        return _call_expr(node, meta)
    return None


def _call_expr(node: cst.Call, meta: Optional[str]) -> Optional[Expr]:
    name = dotted_name(node.func)
    if name is None or any(a.keyword is not None or a.star for a in node.args):
        return None
    args = [expr_from_cst(a.value, meta) for a in node.args]
    if any(a is None for a in args):
        return None
    last = name.split(".")[-1]
    if last == "cdiv" and len(args) == 2:
        if args[1].is_const and args[1].value == 0:  # type: ignore[union-attr]
            return None
        return cdiv(args[0], args[1])  # type: ignore[arg-type]
    if name in ("max", "min") and args:
        return emax(*args) if name == "max" else emin(*args)  # type: ignore[arg-type]
    if name == "int" and len(args) == 1:
        return args[0]
    return None


def _read_arguments(info: SourceInfo, call: cst.Call, site: LaunchSite) -> None:
    """Keyword and positional arguments of a launch; positionals after a ``*args`` have unknown
    positions, so only those before it are bound (as Triton binds them: by signature order)."""
    for arg in call.args:
        if arg.star:
            site.star_args.append(arg.star + info.code(arg.value))
            continue
        if arg.keyword is None:
            site.positional_count += 1
            if not site.star_args:
                site.positional.append(info.code(arg.value))
            continue
        name = arg.keyword.value
        site.fixed[name] = info.code(arg.value)
        site.keyword_spans[name] = info.span(arg.keyword, arg.value)


def launches_by_kernel(info: SourceInfo, scan: ModuleScan, kernels: list[KernelEntry]) -> dict[int, list]:
    """Map id(kernel def) -> its LaunchSites, resolving names scope by scope."""
    by_scope_name: dict[tuple[tuple, str], cst.FunctionDef] = {}
    for scope, func, _ in kernels:
        by_scope_name[(scope, func.name.value)] = func
    kernel_ids = {id(func) for _, func, _ in kernels}
    for func, _, (scope, target) in jit_assignments(info, scan):
        if id(func) in kernel_ids:
            by_scope_name[(scope, target)] = func
    class_kernels = {func.name.value: func for scope, func, _ in kernels if scope and isinstance(scope[-1], cst.ClassDef)}
    out: dict[int, list] = {}
    locate = getattr(info.positions, "locate_within", None)  # LazyPositions: find the launch's statement directly
    for scope, call, order in scan.launch_calls:
        target = call.func.value  # type: ignore[attr-defined]
        func = _kernel_for(scan, by_scope_name, class_kernels, scope, target, order)
        if func is None:
            continue
        if locate is not None and scope:
            locate(call, scope[0])

        def resolve(name: str, scope: tuple = scope, order: int = order) -> Any:
            for i in range(len(scope), -1, -1):
                assigned, value = scan.last_assignment(scope[:i], name, order if i == len(scope) else None)
                if assigned:
                    return value
                found = scan.defs.get(scope[:i], {}).get(name)
                if found is not None:
                    return found
            return None

        out.setdefault(id(func), []).append(build_launch(info, call, resolve))
    return out


def _kernel_for(scan: ModuleScan, by_scope_name: dict, class_kernels: dict, scope: tuple, node: cst.BaseExpression,
                order: int, depth: int = 0) -> Optional[cst.FunctionDef]:
    """The kernel the launched name ``node`` (seen in ``scope`` at visiting order ``order``) stands for."""
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
        return class_kernels.get(node.attr.value)
    if not isinstance(node, cst.Name) or depth > 8:
        return None
    for i in range(len(scope), -1, -1):
        sub = scope[:i]
        if (sub, node.value) in by_scope_name:
            return by_scope_name[(sub, node.value)]
        assigned, value = scan.last_assignment(sub, node.value, order if i == len(scope) else None)
        if assigned:
            if isinstance(value, (cst.Name, cst.Attribute)) and value is not node:
                return _kernel_for(scan, by_scope_name, class_kernels, sub, value, order, depth + 1)
            return None
    return None
