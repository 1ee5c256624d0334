"""Kernel declarations read from source: which functions are Triton kernels
(by their decorators or a ``triton.jit(fn)`` wrapper), their parameters, and
the literal arguments of ``@triton.autotune`` / ``@tiletune.autotune`` and
``@triton.heuristics``.

Nothing here runs user code: values are read from libcst literals only; any
other expression is kept as its source text.
"""

from __future__ import annotations

from typing import Any, Optional

import libcst as cst

from .source import ModuleScan, SourceInfo, dotted_name
from .model import AutotuneArgs, ConfigLiteral, Decorator, KernelSpec, Param


__all__ = [
    "KernelEntry",
    "find_kernels",
    "jit_assignments",
    "fill_declaration",
    "NOT_LITERAL",
    "dotted_name",
    "literal_value",
    "decorator_kind",
    "decorator_callee",
    "build_decorators",
    "parse_autotune",
    "parse_config",
    "parse_heuristics",
]

#: Returned by :func:`literal_value` for an expression that is not a literal.
NOT_LITERAL = object()

_KIND_BY_LAST = {"jit": "jit", "autotune": "autotune", "heuristics": "heuristics"}
_KNOWN_ROOTS = ("triton", "tiletune")

# Positional parameters of triton.autotune (tiletune.autotune takes the same first ones).
_AUTOTUNE_POSITIONAL = ("configs", "key", "prune_configs_by", "reset_to_zero", "restore_value")
# Positional parameters of triton.Config after the kwargs dict.
_CONFIG_POSITIONAL = ("kwargs", "num_warps", "num_stages", "num_ctas", "maxnreg", "pre_hook")


def literal_value(node: cst.CSTNode) -> Any:
    """The Python value of a literal expression, or :data:`NOT_LITERAL`.

    Accepts numbers (with a unary sign), strings without f-string parts,
    ``True``/``False``/``None``, and lists, tuples and dicts of literals
    (tuples come back as lists, so the result is JSON-friendly).
    """
    if isinstance(node, (cst.Integer, cst.Float)):
        return node.evaluated_value
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        try:
            value = node.evaluated_value
        except Exception:  # malformed escapes and the like
            return NOT_LITERAL
        return value if isinstance(value, str) else NOT_LITERAL
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        inner = literal_value(node.expression)
        if isinstance(inner, (int, float)) and not isinstance(inner, bool):
            return -inner if isinstance(node.operator, cst.Minus) else inner
        return NOT_LITERAL
    if isinstance(node, (cst.List, cst.Tuple)):
        out = []
        for el in node.elements:
            if not isinstance(el, cst.Element):
                return NOT_LITERAL
            v = literal_value(el.value)
            if v is NOT_LITERAL:
                return NOT_LITERAL
            out.append(v)
        return out
    if isinstance(node, cst.Dict):
        d: dict[Any, Any] = {}
        for el in node.elements:
            if not isinstance(el, cst.DictElement):
                return NOT_LITERAL
            k, v = literal_value(el.key), literal_value(el.value)
            if k is NOT_LITERAL or v is NOT_LITERAL or isinstance(k, (list, dict)):
                return NOT_LITERAL
            d[k] = v
        return d
    return NOT_LITERAL


def decorator_kind(resolved: str, imported: bool) -> str:
    """``"jit"``, ``"autotune"``, ``"heuristics"`` or ``"other"`` for a decorator name.

    ``resolved`` is the name after import aliases (``tr.jit`` -> ``triton.jit``);
    ``imported`` says whether its first component came from an import.  A
    name from ``triton`` or ``tiletune`` (``triton.jit``,
    ``triton.runtime.autotuner.autotune``, ``tiletune.autotune``) counts, and so
    does a bare ``jit``/``autotune``/``heuristics`` the module does not import
    from elsewhere (a snippet without its imports).  The function tuner
    ``tiletune.tune.autotune`` decorates host functions: ``"other"``.
    """
    parts = resolved.split(".")
    kind = _KIND_BY_LAST.get(parts[-1])
    if kind is None or _is_function_tuner(parts):
        return "other"
    if parts[0] in _KNOWN_ROOTS and len(parts) > 1:
        return kind
    if len(parts) == 1 and not imported:
        return kind
    return "other"


def _is_function_tuner(parts: list[str]) -> bool:
    """``tiletune.tune.autotune`` (and the module that implements it) tunes a host function, not a kernel."""
    return parts[0] == "tiletune" and ("tune" in parts[1:2] or "function_tuner" in parts)


def decorator_callee(dec: cst.Decorator) -> tuple[cst.BaseExpression, Optional[cst.Call]]:
    """The decorator expression without its call, and the call if written ``@d(...)``."""
    expr = dec.decorator
    if isinstance(expr, cst.Call):
        return expr.func, expr
    return expr, None


def build_decorators(info: SourceInfo, func: cst.FunctionDef) -> list[Decorator]:
    """The decorators of ``func``, outermost first, each classified by kind."""
    out: list[Decorator] = []
    for dec in func.decorators:
        callee, call = decorator_callee(dec)
        written = info.code(callee)
        dotted = dotted_name(callee)
        kind = "other"
        if dotted is not None:
            resolved, imported = info.resolve(dotted)
            kind = decorator_kind(resolved, imported)
        out.append(Decorator(qualname=written, kind=kind, span=info.span(dec), has_call=call is not None))
    return out


def _positional_and_keywords(call: cst.Call, positional_names: tuple[str, ...]) -> list[tuple[str, cst.Arg]]:
    """Pair each argument of ``call`` with its parameter name (positional ones by order)."""
    pairs: list[tuple[str, cst.Arg]] = []
    pos = 0
    for arg in call.args:
        if arg.star:
            pairs.append((arg.star, arg))
        elif arg.keyword is not None:
            pairs.append((arg.keyword.value, arg))
        else:
            name = positional_names[pos] if pos < len(positional_names) else f"<arg{pos}>"
            pairs.append((name, arg))
            pos += 1
    return pairs


def _name_list(value: Any) -> Optional[list[str]]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def parse_autotune(info: SourceInfo, dec: cst.Decorator) -> AutotuneArgs:
    """Read an autotune decorator's arguments (see :class:`AutotuneArgs`).

    A known keyword whose value is not a literal of the expected form
    (``configs`` built by a comprehension or a function, ``key`` held in a
    variable) is left ``None`` and its source text goes to ``other``.
    """
    callee, call = decorator_callee(dec)
    args = AutotuneArgs(span=info.span(dec), qualname=info.code(callee))
    if call is None:
        return args
    for name, arg in _positional_and_keywords(call, _AUTOTUNE_POSITIONAL):
        value_node = arg.value
        args.arg_spans[name] = info.span(value_node)
        text = info.code(value_node)
        if name == "configs":
            configs = _parse_config_list(info, value_node)
            if configs is None:
                args.other[name] = text
            else:
                args.configs = configs
                args.configs_empty = not configs
            continue
        value = literal_value(value_node)
        ok = False
        if name == "key":
            args.key = _name_list(value)
            ok = args.key is not None
        elif name in ("restore_value", "reset_to_zero"):
            names = _name_list(value)
            setattr(args, name, names)
            ok = names is not None or value is None
        elif name == "hints":
            if isinstance(value, dict) and all(isinstance(k, str) for k in value):
                args.hints = {k: (v if isinstance(v, list) else [v]) for k, v in value.items()}
                ok = True
            ok = ok or value is None
        if not ok:
            args.other[name] = text
    return args


def _is_config_call(info: SourceInfo, node: cst.CSTNode) -> bool:
    if not isinstance(node, cst.Call):
        return False
    dotted = dotted_name(node.func)
    return dotted is not None and info.resolve(dotted)[0].split(".")[-1] == "Config"


def _parse_config_list(info: SourceInfo, node: cst.CSTNode) -> Optional[list[ConfigLiteral]]:
    if not isinstance(node, (cst.List, cst.Tuple)):
        return None
    out: list[ConfigLiteral] = []
    for el in node.elements:
        if not isinstance(el, cst.Element) or not _is_config_call(info, el.value):
            return None
        out.append(parse_config(info, el.value))
    return out


def parse_config(info: SourceInfo, call: cst.Call) -> ConfigLiteral:
    """Read one ``triton.Config({...}, num_warps=..., ...)`` call."""
    cfg = ConfigLiteral(span=info.span(call))
    for name, arg in _positional_and_keywords(call, _CONFIG_POSITIONAL):
        node = arg.value
        if name == "kwargs":
            _read_config_kwargs(info, node, cfg)
            continue
        value = literal_value(node)
        if name in ("num_warps", "num_stages") and isinstance(value, int) and not isinstance(value, bool):
            setattr(cfg, name, value)
        elif value is not NOT_LITERAL and name not in ("num_warps", "num_stages") and not name.startswith("*"):
            cfg.extra[name] = value
        else:
            cfg.unresolved[name] = info.code(node)
    return cfg


def _read_config_kwargs(info: SourceInfo, node: cst.CSTNode, cfg: ConfigLiteral) -> None:
    items: list[tuple[str, cst.BaseExpression]] = []
    if isinstance(node, cst.Dict):
        for el in node.elements:
            key = literal_value(el.key) if isinstance(el, cst.DictElement) else NOT_LITERAL
            if not isinstance(key, str):
                cfg.unresolved["kwargs"] = info.code(node)
                return
            items.append((key, el.value))
    elif isinstance(node, cst.Call) and dotted_name(node.func) == "dict" and all(a.keyword for a in node.args):
        items = [(a.keyword.value, a.value) for a in node.args]  # type: ignore[union-attr]
    else:
        cfg.unresolved["kwargs"] = info.code(node)
        return
    for key, value_node in items:
        cfg.value_spans[key] = info.span(value_node)
        value = literal_value(value_node)
        if value is NOT_LITERAL:
            cfg.unresolved[key] = info.code(value_node)
        else:
            cfg.kwargs[key] = value


def parse_heuristics(dec: cst.Decorator) -> list[str]:
    """Parameter names set by ``@triton.heuristics({"NAME": fn, ...})`` (or ``values=``)."""
    _, call = decorator_callee(dec)
    if call is None:
        return []
    for arg in call.args:
        if arg.star or (arg.keyword is not None and arg.keyword.value != "values"):
            continue
        if isinstance(arg.value, cst.Dict):
            names = []
            for el in arg.value.elements:
                if isinstance(el, cst.DictElement):
                    key = literal_value(el.key)
                    if isinstance(key, str):
                        names.append(key)
            return names
        if isinstance(arg.value, cst.Call) and dotted_name(arg.value.func) == "dict":
            return [a.keyword.value for a in arg.value.args if a.keyword is not None]
        return []
    return []


# ----- kernels and their signatures ------------------------------------------------
KernelEntry = tuple[tuple, cst.FunctionDef, Optional[cst.Call]]
"""(scope, def, the ``triton.jit(fn)`` call wrapping it, if any)."""


def find_kernels(info: SourceInfo, scan: ModuleScan, force: Optional[tuple[str, Optional[int]]]) -> list[KernelEntry]:
    """Kernels in source order: (scope, def, the ``triton.jit(fn)`` call wrapping it, if any)."""
    wrapped = {id(func): call for func, call, _ in jit_assignments(info, scan)}
    out: list[KernelEntry] = []
    for scope, func in scan.functions:
        kinds = {_decorator_kind(info, d) for d in func.decorators}
        forced = force is not None and func.name.value == force[0] and (
            force[1] is None or force[1] in (info.line(func), *(info.line(d) for d in func.decorators))
        )
        if kinds & {"jit", "autotune", "heuristics"} or id(func) in wrapped or forced:
            out.append((scope, func, wrapped.get(id(func))))
    return out


def _decorator_kind(info: SourceInfo, dec: cst.Decorator) -> str:
    expr = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
    dotted = dotted_name(expr)
    return "other" if dotted is None else decorator_kind(*info.resolve(dotted))


def jit_assignments(info: SourceInfo, scan: ModuleScan) -> list[tuple[cst.FunctionDef, cst.Call, tuple[tuple, str]]]:
    """``name = triton.jit(fn)``: (the def of fn, the call, (scope, name))."""
    out = []
    for scope, names in scan.assigns.items():
        for target, entries in names.items():
            for _, value in entries:
                if not (isinstance(value, cst.Call) and value.args and isinstance(value.args[0].value, cst.Name)):
                    continue
                dotted = dotted_name(value.func)
                if dotted is None or decorator_kind(*info.resolve(dotted)) != "jit":
                    continue
                func = scan.lookup_def(scope, value.args[0].value.value)
                if func is not None:
                    out.append((func, value, (scope, target)))
    return out


def fill_declaration(info: SourceInfo, func: cst.FunctionDef, spec: KernelSpec, jit_call: Optional[cst.Call]) -> None:
    spec.decorators = build_decorators(info, func)
    if jit_call is not None:
        written = info.code(jit_call.func)
        has_call = len(jit_call.args) > 1  # triton.jit(fn, do_not_specialize=...)
        spec.decorators.append(Decorator(qualname=written, kind="jit", span=info.span(jit_call), has_call=has_call))
    for dec, d in zip(func.decorators, spec.decorators):
        if d.kind == "autotune" and spec.autotune is None:
            spec.autotune = parse_autotune(info, dec)
        elif d.kind == "heuristics":
            spec.heuristics.extend(n for n in parse_heuristics(dec) if n not in spec.heuristics)
    spec.params = _params(info, func)


def _params(info: SourceInfo, func: cst.FunctionDef) -> list[Param]:
    ps = func.params
    params = list(ps.posonly_params) + list(ps.params) + list(ps.kwonly_params)
    out = []
    for i, p in enumerate(params):
        annotation = None if p.annotation is None else info.code(p.annotation.annotation)
        out.append(
            Param(
                name=p.name.value,
                index=i,
                span=info.span(p),
                constexpr=_is_constexpr(info, p.annotation.annotation) if p.annotation else False,
                annotation=annotation,
                default=None if p.default is None else info.code(p.default),
            )
        )
    return out


def _is_constexpr(info: SourceInfo, node: cst.BaseExpression) -> bool:
    dotted = dotted_name(node)
    if dotted is None:
        value = literal_value(node)  # a string annotation: "tl.constexpr"
        dotted = value.strip() if isinstance(value, str) and value is not NOT_LITERAL else None
    if dotted is None:
        return False
    resolved = info.resolve(dotted)[0]
    return resolved.split(".")[-1] == "constexpr"
