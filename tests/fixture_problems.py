"""A fixture kernel at one of its shapes as synthesis input (shared by tests and bench).

``fixture_problem(name, shape)`` analyses the fixture's kernel once (cached)
and returns ``(spec, shapes, dtypes, fixed)`` for
:func:`tiletune.synthesis.synthesize`: the pointer dtypes and integer
arguments of ``make_args(shape)`` (on the meta device), and the shape values
that are tiling constexprs as ``fixed``.  A shape whose launch leaves an
optional pointer out (``None``) gets the analysis specialised with that
launch's constexpr values and ``None`` arguments (:func:`launch_constants`),
as ``configs=[]`` does at run time.
"""

from __future__ import annotations

import inspect
from types import ModuleType
from typing import Optional

import fixtures
from tiletune.analysis import analyze_file, analyze_kernel
from tiletune.runtime.offline_compile import describe_args

_SPECS: dict = {}


def kernel_spec(fx: ModuleType, constants: Optional[dict] = None):
    """(kernel name, analysed KernelSpec) of a fixture module's ``KERNEL`` (specialised with ``constants``)."""
    kname = getattr(fx.KERNEL, "__name__", None) or fx.KERNEL.fn.__name__
    if constants:
        return kname, analyze_kernel(fx.KERNEL, constants=constants)
    return kname, analyze_file(fx.__file__).kernel(kname)


def launch_constants(fx: ModuleType, shape: dict) -> dict:
    """The constexpr values and ``None`` arguments of ``make_args(shape)`` when it leaves a pointer out, else {}."""
    args = fx.make_args(shape, device="meta")
    if not any(v is None for v in args.values()):
        return {}
    fn = getattr(fx.KERNEL, "fn", fx.KERNEL)
    constexpr = {p.name for p in inspect.signature(fn).parameters.values() if "constexpr" in str(p.annotation)}
    return {k: v for k, v in args.items() if v is None or k in constexpr}


def synthesis_inputs(fx: ModuleType, spec, shape: dict):
    """(described args, shapes, dtypes, fixed) of a fixture at ``shape``."""
    desc = describe_args(fx.make_args(shape, device="meta"))
    dtypes = {k: v["ptr"] for k, v in desc.items() if isinstance(v, dict) and "ptr" in v}
    ints = {k: int(v) for k, v in desc.items() if isinstance(v, (bool, int))}
    shapes = {**{k: v for k, v in shape.items() if isinstance(v, int)}, **ints}
    tiling = {p.name for p in spec.tiling_params}
    fixed = {k: v for k, v in shapes.items() if k in tiling}
    return desc, shapes, dtypes, fixed


def fixture_problem(name: str, shape: dict, cache: Optional[dict] = None):
    """(spec, shapes, dtypes, fixed) for a fixture at one of its shapes; specs cached in ``cache``."""
    cache = _SPECS if cache is None else cache
    fx = fixtures.load(name)
    constants = launch_constants(fx, shape)
    ckey = (name, repr(sorted(constants.items()))) if constants else name
    if ckey not in cache:
        cache[ckey] = kernel_spec(fx, constants)[1]
    spec = cache[ckey]
    _, shapes, dtypes, fixed = synthesis_inputs(fx, spec, shape)
    return spec, shapes, dtypes, fixed
