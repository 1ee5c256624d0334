"""Decorators that are autotuners in disguise: a project function whose body
calls ``triton.autotune`` (or tiletune's), so its configs may come from
anywhere (a data file, a table per chip).  Followed across the modules of the
project by reading them, never importing them.
"""

from __future__ import annotations

import os
from typing import Optional

import libcst as cst

from ..errors import AnalysisError
from .decorators import decorator_kind
from .resolver import ModuleIndex, find_module, index_module, last_index, load_module
from .source import dotted_name, iter_nodes

__all__ = ["wraps_autotune"]

_MAX_DEPTH = 6


def wraps_autotune(source: str, path: Optional[str], decorator: str) -> Optional[str]:
    """Where (``"file:line"``) the project function that decorator ``decorator``
    (as written, ``tune_from_table(...)`` or ``utils.tune_from_table``) names
    calls ``autotune``, following imports and the project functions it calls;
    None when it does not, or cannot be read."""
    try:
        home = _home_index(source, path)
    except (AnalysisError, ValueError, RecursionError):
        return None
    name = decorator.split("(")[0].strip()
    return _follow(home, name, 0, set())


def _home_index(source: str, path: Optional[str]) -> ModuleIndex:
    """The index of the file being read: the one the analysis of this very text built (the lint asks
    after analysing it, once per decorator of each kernel), else a fresh one."""
    return last_index(source, path) or index_module(source, path)


def _follow(index: ModuleIndex, dotted: str, depth: int, seen: set) -> Optional[str]:
    if depth > _MAX_DEPTH or (index.path, dotted) in seen:
        return None
    seen.add((index.path, dotted))
    head, _, rest = dotted.partition(".")
    if not rest:
        func = index.scan.lookup_def((), head)
        if func is not None:
            return _calls_autotune(index, func, depth, seen)
    ref = index.imports.get(head)
    if ref is None:
        return None
    path, _ = find_module(index.path, ref.level, ref.module)
    if path is None:
        return None
    try:
        other = load_module(path)
    except (AnalysisError, OSError):
        return None
    if ref.name is None:  # ``import pkg.utils as u`` / ``from . import utils``: ``u.name``
        return _follow(other, rest, depth + 1, seen) if rest else None
    sub = _submodule(other, ref.name)
    if sub is not None and rest:
        return _follow(sub, rest, depth + 1, seen)
    return _follow(other, ref.name + (f".{rest}" if rest else ""), depth + 1, seen)


def _submodule(index: ModuleIndex, name: str) -> Optional[ModuleIndex]:
    """``from pkg import mod``: the module ``mod`` next to a package ``__init__``."""
    if os.path.basename(index.path) != "__init__.py":
        return None
    for candidate in (os.path.join(os.path.dirname(index.path), name + ".py"),
                      os.path.join(os.path.dirname(index.path), name, "__init__.py")):
        if os.path.isfile(candidate):
            try:
                return load_module(candidate)
            except (AnalysisError, OSError):
                return None
    return None


def _calls_autotune(index: ModuleIndex, func: cst.FunctionDef, depth: int, seen: set) -> Optional[str]:
    for node in iter_nodes(func.body):
        if not isinstance(node, cst.Call):
            continue
        called = dotted_name(node.func)
        if called is None:
            continue
        if decorator_kind(*index.info.resolve(called)) == "autotune":
            return f"{os.path.basename(index.path)}:{index.info.line(node)}"
        found = _follow(index, called, depth + 1, seen)
        if found is not None:
            return found
    return None
