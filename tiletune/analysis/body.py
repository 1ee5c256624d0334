"""Kernel body analysis: shapes, dtypes, roles, dataflow graph, footprint.

:func:`analyze_body` is called by the front end for each kernel once the
declaration (name, decorators, parameters, autotune arguments, launches) is
filled in.  It runs four passes, each in its own module:

1. :mod:`.shapes` interprets the body once, symbolically (tile shapes,
   dtypes, evidence about parameters, memory accesses, dots, the dataflow
   graph, live ranges);
2. :mod:`.classify` decides which constexprs are tiling parameters and their
   roles/bounds;
3. :mod:`.graph` turns the trace into ``accesses``/``dots``/pointer lists;
4. :mod:`.footprint` computes the on-chip footprint expressions.
"""

from __future__ import annotations

from typing import Mapping, Optional

import libcst as cst

from .classify import classify_params
from .footprint import compute_footprint
from .graph import fill_records
from .model import KernelSpec
from .shapes import Interpreter

__all__ = ["analyze_body", "module_helpers"]

_helper_cache: tuple = (None, {})


def module_helpers(positions: Mapping) -> dict[str, cst.FunctionDef]:
    """The ``@jit``-decorated functions among the nodes of ``positions``, by name.

    ``positions`` (the module's node -> position mapping) holds every node of
    the module, so it doubles as the list of function definitions.  The
    result for the last mapping seen is cached: the front end analyses all
    kernels of a module with the same mapping.
    """
    global _helper_cache
    if _helper_cache[0] is positions:
        return _helper_cache[1]
    found: dict[str, cst.FunctionDef] = {}
    for node in positions:
        if isinstance(node, cst.FunctionDef) and node.name.value not in found and _is_jit(node):
            found[node.name.value] = node
    _helper_cache = (positions, found)
    return found


def _is_jit(func: cst.FunctionDef) -> bool:
    for d in func.decorators:
        expr = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
        name = expr.attr.value if isinstance(expr, cst.Attribute) else getattr(expr, "value", None)
        if name == "jit":
            return True
    return False


def analyze_body(
    func: cst.FunctionDef,
    spec: KernelSpec,
    positions: Mapping,
    module_constants: Mapping[str, int],
    helpers: Optional[Mapping[str, cst.FunctionDef]] = None,
) -> None:
    """Fill ``spec`` from the body of ``func``.

    ``positions`` maps the module's nodes to their ``CodeRange``;
    ``module_constants`` gives integer module-level constants by name;
    ``helpers`` (optional) maps names of other ``@triton.jit`` functions of the
    module to their definitions so that calls to them are followed; by default
    they are found among the nodes of ``positions`` (:func:`module_helpers`).
    Constructs the analysis does not understand become notes on ``spec``.
    """
    if helpers is None:
        helpers = module_helpers(positions)
    trace = Interpreter(spec, positions, module_constants, helpers).run(func)
    classify_params(spec, trace)
    fill_records(spec, trace)
    spec.footprint = compute_footprint(spec, trace)
