"""Which parameters ``@triton.heuristics`` sets, however its mapping is written.

Triton calls every value of the mapping (a lambda, a named function, a
``functools.partial``, a lambda calling a helper): whatever the callable, its
key is a parameter the launch computes, never a tiling choice.  The keys are
read from a dict literal, ``dict(NAME=...)``, a module-level variable holding
one (``@triton.heuristics(_HEURISTICS)``), ``{**BASE, "X": ...}`` spreads and
variables imported from another module of the project (read, never
imported).  When the keys cannot be read the kernel is marked incomplete
with the reason: a search must not choose a name a heuristic may set.
"""

from __future__ import annotations

import os
from typing import Optional

import libcst as cst

from ..errors import AnalysisError
from .decorators import decorator_callee, literal_value
from .model import KernelSpec
from .resolver import ModuleIndex, find_module, load_module
from .source import dotted_name

__all__ = ["read_heuristics"]

_MAX_DEPTH = 8


def read_heuristics(index: ModuleIndex, func: cst.FunctionDef, spec: KernelSpec) -> None:
    """Set ``spec.heuristics`` from every ``heuristics`` decorator of ``func`` (see the module
    docstring); a mapping whose keys cannot be read adds an ``unknown op`` reason to
    ``spec.incomplete``."""
    for dec, d in zip(func.decorators, spec.decorators):
        if d.kind != "heuristics":
            continue
        _, call = decorator_callee(dec)
        arg = _mapping_arg(call) if call is not None else None
        names, why = (None, "no mapping argument") if arg is None else _keys(index, arg, 0)
        if names is None:
            spec.heuristics_unread.append(d.span.line)
            spec.incomplete.append(
                f"unknown op: line {d.span.line}: the names @{d.qualname}(...) sets cannot be read ({why}); "
                "write its mapping as a dict literal or a module-level dict so the analysis knows which "
                "parameters a heuristic computes"
            )
            continue
        spec.heuristics.extend(n for n in names if n not in spec.heuristics)


def _mapping_arg(call: cst.Call) -> Optional[cst.BaseExpression]:
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None or arg.keyword.value == "values":
            return arg.value
    return None


def _keys(index: ModuleIndex, node: cst.BaseExpression, depth: int) -> tuple[Optional[list[str]], str]:
    """(keys of the mapping ``node`` evaluates to, as seen from ``index``) or (None, why)."""
    if depth > _MAX_DEPTH:
        return None, "definition chain too deep"
    if isinstance(node, cst.Dict):
        names: list[str] = []
        for el in node.elements:
            if isinstance(el, cst.DictElement):
                key = literal_value(el.key)
                if not isinstance(key, str):
                    return None, f"a key that is not a string literal: {index.info.code(el.key)}"
                names.append(key)
            else:  # ``**BASE``
                inner, why = _keys(index, el.value, depth + 1)
                if inner is None:
                    return None, why
                names.extend(inner)
        return names, ""
    if isinstance(node, cst.Call) and dotted_name(node.func) == "dict":
        names = []
        for a in node.args:
            if a.keyword is not None:
                names.append(a.keyword.value)
            elif a.star == "**" or not a.star:
                inner, why = _keys(index, a.value, depth + 1)
                if inner is None:
                    return None, why
                names.extend(inner)
            else:
                return None, f"dict({index.info.code(a.value)}) not understood"
        return names, ""
    if isinstance(node, cst.Name):
        assigned, value = index.scan.last_assignment((), node.value, None)
        if assigned and value is not None:
            return _keys(index, value, depth + 1)
        return _imported_keys(index, node.value, depth)
    return None, f"{index.info.code(node)} is not a dict the analysis can read"


def _imported_keys(index: ModuleIndex, name: str, depth: int) -> tuple[Optional[list[str]], str]:
    ref = index.imports.get(name)
    if ref is None or ref.name is None:
        return None, f"{name} is not assigned a dict in {os.path.basename(index.path)}"
    path, _ = find_module(index.path, ref.level, ref.module)
    if path is None:
        return None, f"{name} is imported from {'.' * ref.level + ref.module}, which is not a module of the project"
    try:
        other = load_module(path)
    except (AnalysisError, OSError):
        return None, f"{os.path.basename(path)} cannot be parsed"
    assigned, value = other.scan.last_assignment((), ref.name, None)
    if assigned and value is not None:
        return _keys(other, value, depth + 1)
    return _imported_keys(other, ref.name, depth + 1)
