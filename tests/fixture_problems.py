"""A fixture kernel at one of its shapes as synthesis input (shared by tests and bench).

``fixture_problem(name, shape)`` analyses the fixture's kernel once (cached)
and returns ``(spec, shapes, dtypes, fixed)`` for
:func:`tiletune.synthesis.synthesize`: the pointer dtypes and integer
arguments of ``make_args(shape)`` (on the meta device), and the shape values
that are tiling constexprs as ``fixed``.
"""

from __future__ import annotations

from types import ModuleType
from typing import Optional

import fixtures
from tiletune.analysis import analyze_file
from tiletune.runtime.offline_compile import describe_args

_SPECS: dict = {}


def kernel_spec(fx: ModuleType):
    """(kernel name, analysed KernelSpec) of a fixture module's ``KERNEL``."""
    kname = getattr(fx.KERNEL, "__name__", None) or fx.KERNEL.fn.__name__
    return kname, analyze_file(fx.__file__).kernel(kname)


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
    if name not in cache:
        cache[name] = kernel_spec(fx)[1]
    spec = cache[name]
    _, shapes, dtypes, fixed = synthesis_inputs(fx, spec, shape)
    return spec, shapes, dtypes, fixed
