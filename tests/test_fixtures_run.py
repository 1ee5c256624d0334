"""Run every kernel fixture on the CPU through Triton's interpreter.

conftest.py sets TRITON_INTERPRET=1 before triton is imported.  Each fixture
is checked for a complete interface (see fixtures/README.md), then launched at
EXAMPLE_CONFIG on each of its SHAPES, at each distinct HAND_CONFIGS tiling on
its first shape, and once through triton.autotune, and compared with its
torch reference.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
import torch
import triton
import triton.language as tl

import fixtures

ROOT = Path(__file__).resolve().parent.parent
MODULES = {name: fixtures.load(name) for name in fixtures.NAMES}

INTERFACE = (
    "KERNEL", "KEY", "SHAPES", "BENCH_SHAPES", "EXAMPLE_CONFIG", "HAND_CONFIGS",
    "RESTORE_VALUE", "RESET_TO_ZERO", "TOLERANCE",
    "make_args", "launch", "reference", "outputs",
)


def _params(mod) -> list[inspect.Parameter]:
    # Under the interpreter triton.jit gives an InterpretedFunction, which has
    # no .params; the Python signature of the wrapped function has it all.
    return list(inspect.signature(mod.KERNEL.fn).parameters.values())


def _is_constexpr(p: inspect.Parameter) -> bool:
    ann = p.annotation
    return ann is tl.constexpr or (isinstance(ann, str) and ann.split(".")[-1] == "constexpr")


def _tiling(mod) -> list[str]:
    """The module's TILING list, else the constexpr parameters with BLOCK in their name, in signature order."""
    names = getattr(mod, "TILING", None)
    if names is not None:
        return [p.name for p in _params(mod) if p.name in names]
    return [p.name for p in _params(mod) if _is_constexpr(p) and "BLOCK" in p.name]


def _check(mod, args, ref):
    outs = mod.outputs(args)
    assert len(outs) == len(ref)
    for out, expected in zip(outs, ref):
        assert out.shape == expected.shape
        torch.testing.assert_close(out.float(), expected.float(), **mod.TOLERANCE)


def _skip_unsupported(mod):
    """Skip, with the fixture's reason, a fixture this Triton cannot run (``UNSUPPORTED``)."""
    reason = getattr(mod, "UNSUPPORTED", None)
    if reason:
        pytest.skip(reason)


def _run(mod, shape, config):
    _skip_unsupported(mod)
    args = mod.make_args(shape)
    ref = mod.reference(args)
    mod.launch(mod.KERNEL, args, **config)
    _check(mod, args, ref)


def test_names_cover_the_package():
    on_disk = sorted(p.stem for p in (ROOT / "fixtures").glob("*.py") if not p.stem.startswith("_"))
    assert sorted(fixtures.NAMES) == on_disk
    assert len(fixtures.NAMES) >= 18
    with pytest.raises(KeyError):
        fixtures.load("no_such_fixture")


@pytest.mark.parametrize("name", fixtures.NAMES)
def test_interface(name):
    mod = MODULES[name]
    for attr in INTERFACE:
        assert hasattr(mod, attr), f"{name} lacks {attr}"

    # A plain @triton.jit function (no autotune/heuristics wrapper).
    assert isinstance(mod.KERNEL, triton.runtime.jit.JITFunction) or type(mod.KERNEL).__name__ == "InterpretedFunction"
    params = _params(mod)
    names = [p.name for p in params]
    tiling = _tiling(mod)
    assert tiling, f"{name} has no tiling parameter"
    # Tiling constexprs come last and have no default.
    assert names[-len(tiling):] == tiling
    for p in params:
        if p.name in tiling:
            assert p.default is inspect.Parameter.empty, f"{p.name} has a default"
    assert set(mod.EXAMPLE_CONFIG) == set(tiling)

    # Shapes.
    for shapes in (mod.SHAPES, mod.BENCH_SHAPES):
        assert isinstance(shapes, list) and len(shapes) == 3
        for shape in shapes:
            assert all(isinstance(k, str) and isinstance(v, int) for k, v in shape.items())
            assert set(shape) == set(mod.SHAPES[0])
    assert set(mod.KEY) <= set(names), "KEY must name kernel parameters"
    assert set(mod.KEY) <= set(mod.SHAPES[0]), "KEY entries must be shape keys"
    runtime_key = [k for k in mod.KEY if not _is_constexpr(next(p for p in params if p.name == k))]
    assert runtime_key
    # Odd sizes are multiples of no power-of-two block size >= 2.
    assert any(shape[k] % 2 for shape in mod.SHAPES for k in runtime_key)

    # Configs.
    assert mod.HAND_CONFIGS and all(isinstance(c, triton.Config) for c in mod.HAND_CONFIGS)
    for config in mod.HAND_CONFIGS:
        assert set(config.kwargs) == set(tiling)
        assert config.num_warps is not None and config.num_stages is not None

    # Pointer lists and tolerance.
    pointers = {n for n in names if n.endswith("_ptr")}
    assert set(mod.RESTORE_VALUE) <= pointers
    assert set(mod.RESET_TO_ZERO) <= pointers
    assert set(mod.TOLERANCE) == {"atol", "rtol"}

    # make_args: every non-tiling parameter, sizes matching the shape.
    args = mod.make_args(mod.SHAPES[0])
    assert set(args) == set(names) - set(tiling)
    for k in mod.KEY:
        assert int(args[k]) == mod.SHAPES[0][k]
    for n in pointers:
        assert isinstance(args[n], torch.Tensor) and args[n].device.type == "cpu"
    if getattr(mod, "TILING", None) is not None:
        assert set(mod.TILING) == set(tiling) and all(_is_constexpr(p) for p in params if p.name in tiling)
    for n in mod.RESET_TO_ZERO:
        assert not args[n].any(), f"{n} must start at zero"
    outs = mod.outputs(args)
    assert outs and all(any(o is args[n] for n in pointers) for o in outs)

    # reference() reads inputs only: scribbling over the (pure) outputs
    # must not change it.
    ref = mod.reference(args)
    assert len(ref) == len(outs)
    for o in outs:
        if not any(o is args[n] for n in mod.RESTORE_VALUE):
            o.fill_(7)
    for a, b in zip(ref, mod.reference(args)):
        assert torch.equal(a, b)


@pytest.mark.parametrize("name", fixtures.NAMES)
def test_make_args_on_meta_device(name):
    """BENCH_SHAPES can be described (dtypes, strides, sizes) without allocating."""
    mod = MODULES[name]
    for shape in mod.BENCH_SHAPES:
        args = mod.make_args(shape, device="meta")
        assert set(args) == {p.name for p in _params(mod)} - set(_tiling(mod))


@pytest.mark.parametrize(
    "name,index",
    [(name, i) for name in fixtures.NAMES for i in range(3)],
)
def test_run_example_config(name, index):
    mod = MODULES[name]
    _run(mod, mod.SHAPES[index], mod.EXAMPLE_CONFIG)


@pytest.mark.parametrize("name", fixtures.NAMES)
def test_run_hand_configs(name):
    """Every distinct HAND_CONFIGS tiling on the first shape (the interpreter ignores warps/stages)."""
    mod = MODULES[name]
    seen = []
    for config in mod.HAND_CONFIGS:
        if config.kwargs not in seen:
            seen.append(dict(config.kwargs))
    for kwargs in seen:
        _run(mod, mod.SHAPES[0], kwargs)


@pytest.mark.parametrize("name", fixtures.NAMES)
def test_run_under_autotune(name):
    """launch() leaves the tiling to the wrapper: its grid reads meta."""
    mod = MODULES[name]
    _skip_unsupported(mod)
    tuned = triton.autotune(
        configs=[triton.Config(dict(mod.EXAMPLE_CONFIG))],
        key=mod.KEY,
        restore_value=mod.RESTORE_VALUE,
        reset_to_zero=mod.RESET_TO_ZERO,
    )(mod.KERNEL)
    shape = mod.SHAPES[-1]
    args = mod.make_args(shape)
    ref = mod.reference(args)
    mod.launch(tuned, args)
    _check(mod, args, ref)
