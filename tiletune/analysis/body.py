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

from typing import Any, Mapping, Optional

import libcst as cst

from .classify import classify_params
from .footprint import compute_footprint
from .graph import fill_records
from .meaning import find_meaning
from .model import KernelSpec
from .shapes import Interpreter

__all__ = ["analyze_body", "mark_device_functions"]


def analyze_body(
    func: cst.FunctionDef,
    spec: KernelSpec,
    positions: Mapping,
    module_constants: Mapping[str, int],
    helpers: Mapping[str, cst.FunctionDef],
    external: Optional[Mapping[str, str]] = None,
    constants: Optional[Mapping[str, Any]] = None,
    aliases: Optional[Mapping[str, str]] = None,
) -> dict[int, set[str]]:
    """Fill ``spec`` from the body of ``func``; return the helpers it calls with values only jit code holds
    (``id`` of the helper's ``FunctionDef`` -> those parameters; see :func:`mark_device_functions`).

    ``positions`` maps the module's nodes to their ``CodeRange``;
    ``module_constants`` gives integer module-level constants by name;
    ``helpers`` maps names of other ``@triton.jit`` functions (the module's
    and those the resolver followed into other modules) to their definitions,
    so that calls to them are followed.
    ``external`` maps names imported from outside the project to their
    module (see :func:`record_gaps`).  ``constants`` (optional) gives known
    parameter values (a launch's constexpr flags, ``None`` pointers):
    branches they decide are resolved and the dead side counts for nothing.
    ``aliases`` maps names bound to Triton functions (``triton_tanh =
    libdevice.tanh``) to those functions' dotted names.  Constructs the analysis does not
    understand become notes on ``spec``.
    """
    interp = Interpreter(spec, positions, module_constants, helpers, constants, aliases)
    trace = interp.run(func)
    spec.static_params = sorted(interp.static_params)
    spec.tile_arguments = sorted(trace.tile_params)
    classify_params(spec, trace)
    spec.meaning = find_meaning(func, [p.name for p in spec.tiling_params],
                                [p.name for p in spec.params])
    fill_records(spec, trace)
    spec.footprint = compute_footprint(spec, trace)
    record_gaps(spec, trace, external or {})
    return trace.device_calls


def mark_device_functions(specs: list[tuple[cst.FunctionDef, KernelSpec]], device_calls: Mapping[int, set[str]]) -> None:
    """Mark as device functions the module's jit functions that another one calls with a tile, a block pointer or a
    tensor descriptor made in the kernel (``device_calls`` from :func:`analyze_body`): only jit code can call them,
    and their callers read their bodies with those values. A function the package launches stays a kernel."""
    for func, spec in specs:
        params = device_calls.get(id(func))
        if params and not spec.tile_arguments and not spec.launches and not spec.project_launches:
            spec.tile_arguments = sorted(params)


def record_gaps(spec: KernelSpec, trace, external: Mapping[str, str]) -> None:
    """Fill ``spec.incomplete``: the interpreter's gaps (where it gave up), plus
    every access without a known tile shape and every dot without known extents.

    A call the interpreter could not follow is classed by where its name comes
    from: a Triton function it does not model (imported from ``triton...``)
    is an ``unknown op``; a host-side library function (``torch.finfo``,
    ``math.log2``) cannot load, store or make a tile, so it is no gap (were its
    result to size a tile, that tile's access would have an unknown shape);
    anything else is an ``unresolved helper``.
    """
    out = spec.incomplete
    for kind, text in trace.gaps:
        if kind == "unresolved helper":
            called = _called_name(text)
            module = external.get(called.split(".")[0]) if called else None
            if module is not None:
                if not module.startswith("triton"):
                    continue
                kind = "unknown op"
            elif called and any(r.startswith(f"unresolved helper: {called}: ") for r in out):
                continue  # the resolver already said why this helper was not followed
        reason = f"{kind}: {text}"
        if reason not in out:
            out.append(reason)
    for a in spec.accesses:
        if a.shape is None or any(d is None for d in a.shape):
            reason = f"unknown access shape: {a.kind} of {a.pointer or 'an untraced pointer'} at line {a.span.line}"
            if reason not in out:
                out.append(reason)
    for d in spec.dots:
        if d.m is None or d.n is None or d.k is None:
            reason = f"unknown dot extent: tl.dot at line {d.span.line}"
            if reason not in out:
                out.append(reason)


def _called_name(text: str) -> Optional[str]:
    """The function name in an interpreter note ``call to helper f() ...`` / ``call to m.f ...``."""
    body = text.split("call to ", 1)[-1] if "call to " in text else None
    if body is None:
        return None
    name = body.removeprefix("helper ").split(" ", 1)[0].removesuffix("()")
    return name or None
