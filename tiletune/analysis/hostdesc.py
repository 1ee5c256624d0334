"""Block shapes of host-side tensor descriptors, read from config pre-hooks.

A kernel that takes a ``triton.tools.tensor_descriptor.TensorDescriptor``
argument has no block shape in its source: the host sets it, usually in a
config ``pre_hook`` that reads the tiling constexprs::

    def _pre_hook(nargs):
        BLOCK_M = nargs["BLOCK_M"]
        nargs["desc_a"].block_shape = [BLOCK_M, nargs["BLOCK_K"]]

:func:`hook_block_shapes` collects every such assignment of a module (by
function, then descriptor name), with the hook's ``NAME = nargs["KEY"]``
aliases resolved; each dimension is the constexpr name it reads
(``"BLOCK_M"``), an ``int``, or None when it is neither.
:func:`pre_hook_names` lists the hooks a kernel's decorators name
(``pre_hook=_hook``), so that a kernel reads its own hooks only.  A
descriptor built where the kernel is launched, ``desc_a =
TensorDescriptor.from_tensor(a, block_shape=[BLOCK_M, BLOCK_K])``, is found
the same way under the function name ``""`` and the variable's name (matched
with the kernel parameter of that name); the block shape may be passed
positionally, and a dimension held in a local variable that the launch passes
as a constexpr (``BLOCK_K=block_k``) is that constexpr.
"""

from __future__ import annotations

from typing import Mapping, Optional, Union

import libcst as cst

__all__ = ["Dim", "hook_block_shapes", "pre_hook_names"]

#: One block dimension: a key the hook reads (a constexpr name), a literal, or None (not understood).
Dim = Union[str, int, None]

_cache: tuple = (None, {})


def hook_block_shapes(positions: Mapping) -> dict[str, dict[str, list[tuple[Dim, ...]]]]:
    """``{function: {descriptor name: [block shape, ...]}}`` from ``x["name"].block_shape = [...]``
    assignments in the module's functions (``positions`` holds every node of
    the module; the result for the last mapping is cached)."""
    global _cache
    if _cache[0] is positions:
        return _cache[1]
    found: dict[str, dict[str, list[tuple[Dim, ...]]]] = {}
    classes = {"TensorDescriptor"}  # and the names it is imported as
    for node in positions:
        if isinstance(node, cst.ImportAlias) and isinstance(node.name, cst.Name) and node.name.value == "TensorDescriptor" \
                and node.asname is not None and isinstance(node.asname.name, cst.Name):
            classes.add(node.asname.name.value)
    for node in positions:
        if isinstance(node, cst.FunctionDef):
            shapes: dict[str, list[tuple[Dim, ...]]] = {}
            _scan_function(node, shapes, classes)
            for name, dims in shapes.items():
                # pre-hooks by their function; descriptors built at a launch site pooled under ""
                key = node.name.value if _is_hook(node) else ""
                found.setdefault(key, {}).setdefault(name, [])
                found[key][name].extend(d for d in dims if d not in found[key][name])
    _cache = (positions, found)
    return found


def pre_hook_names(func: cst.FunctionDef) -> set[str]:
    """Names passed as ``pre_hook=`` anywhere in ``func``'s decorators."""
    names: set[str] = set()

    class _Visitor(cst.CSTVisitor):
        def visit_Arg(self, node: cst.Arg) -> None:
            if node.keyword is not None and node.keyword.value == "pre_hook" and isinstance(node.value, cst.Name):
                names.add(node.value.value)

    for d in func.decorators:
        d.visit(_Visitor())
    return names


def _launch_keywords(func: cst.FunctionDef) -> dict[str, str]:
    """``{local variable: constexpr}`` for every ``kernel[grid](..., NAME=variable)`` in ``func``:
    a block dimension written with the variable is the constexpr the launch passes it as."""
    out: dict[str, str] = {}

    class _Visitor(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if not isinstance(node.func, cst.Subscript):
                return
            for arg in node.args:
                if arg.keyword is not None and isinstance(arg.value, cst.Name):
                    out.setdefault(arg.value.value, arg.keyword.value)

    func.visit(_Visitor())
    return out


def _scan_function(func: cst.FunctionDef, found: dict[str, list[tuple[Dim, ...]]], classes: set[str]) -> None:
    aliases: dict[str, Dim] = dict(_launch_keywords(func))
    body = func.body.body if isinstance(func.body, cst.IndentedBlock) else ()
    for stmt in body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if not isinstance(small, cst.Assign) or len(small.targets) != 1:
                continue
            target, value = small.targets[0].target, small.value
            if isinstance(target, cst.Name):
                key = _string_key(value)
                if key is not None:
                    aliases[target.value] = key
            if isinstance(target, cst.Name) and isinstance(value, cst.Call):
                block = _constructor_block(value, classes)
                if block is not None:
                    dims = tuple(_dim(e.value, aliases) for e in block.elements)
                    if dims not in found.setdefault(target.value, []):
                        found[target.value].append(dims)
            elif isinstance(target, cst.Attribute) and target.attr.value == "block_shape":
                name = _string_key(target.value)
                if name is not None and isinstance(value, (cst.List, cst.Tuple)):
                    dims = tuple(_dim(e.value, aliases) for e in value.elements)
                    if dims not in found.setdefault(name, []):
                        found[name].append(dims)


def _is_hook(func: cst.FunctionDef) -> bool:
    """A pre-hook takes one argument (``nargs``); a host wrapper that builds descriptors takes tensors."""
    return len(func.params.params) == 1


def _constructor_block(call: cst.Call, classes: set[str]) -> Optional[cst.List]:
    """The ``block_shape=[...]`` list of ``TensorDescriptor(...)`` / ``TensorDescriptor.from_tensor(...)``
    (``classes``: the names the class goes by in the module)."""
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
    owner = func.value if isinstance(func, cst.Attribute) else None
    owner_name = owner.attr.value if isinstance(owner, cst.Attribute) else getattr(owner, "value", "")
    constructor = name in classes
    if not constructor and not (name == "from_tensor" and owner_name in classes):
        return None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "block_shape" and isinstance(arg.value, (cst.List, cst.Tuple)):
            return arg.value
    # positionally: TensorDescriptor(base, shape, strides, block_shape) / from_tensor(tensor, block_shape)
    position = 3 if constructor else 1
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if len(positional) > position and isinstance(positional[position].value, (cst.List, cst.Tuple)):
        return positional[position].value
    return None


def _string_key(node: cst.CSTNode) -> Optional[str]:
    """``"k"`` of ``x["k"]``."""
    if isinstance(node, cst.Subscript) and len(node.slice) == 1:
        idx = node.slice[0].slice
        if isinstance(idx, cst.Index) and isinstance(idx.value, cst.SimpleString):
            value = idx.value.evaluated_value
            return value if isinstance(value, str) else None
    return None


def _dim(node: cst.CSTNode, aliases: Mapping[str, Dim]) -> Dim:
    if isinstance(node, cst.Integer):
        return int(node.value.replace("_", ""), 0)
    if isinstance(node, cst.Name):
        return aliases.get(node.value, node.value)
    return _string_key(node)
