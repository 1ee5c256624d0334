"""Every kernel fixture tuned end to end with ``configs=[]`` under the interpreter.

For each fixture: ``tiletune.autotune(configs=[], ...)`` over its kernel,
launched through the fixture's own ``launch`` on each of its shapes, gives the
torch reference's outputs.  Kernels with side effects (in place, atomics:
those with RESTORE_VALUE / RESET_TO_ZERO) must leave every tensor argument
exactly as one untuned launch of the winning config leaves a clone of them.

Kept fast: top_k=3 on the first shape, 2 on the others; the interpreter's
benchmark is one call per measurement (see tiletune.runtime.bench).
"""

from __future__ import annotations

import pytest
import torch

import fixtures
import tiletune

MODULES = {name: fixtures.load(name) for name in fixtures.NAMES}
SIDE_EFFECTS = {name for name, m in MODULES.items() if m.RESTORE_VALUE or m.RESET_TO_ZERO}


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TILETUNE_ALWAYS_TUNE", raising=False)
    monkeypatch.delenv("TRITON_BENCH_METHOD", raising=False)


def _clone(args: dict) -> dict:
    return {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in args.items()}


def _check_outputs(mod, args, ref):
    outs = mod.outputs(args)
    assert len(outs) == len(ref)
    for out, expected in zip(outs, ref):
        assert out.shape == expected.shape
        torch.testing.assert_close(out.float(), expected.float(), **mod.TOLERANCE)


def test_side_effect_fixtures_are_known():
    assert {"scale_inplace", "split_k_matmul", "histogram"} <= SIDE_EFFECTS


@pytest.mark.parametrize("name", fixtures.NAMES)
def test_fixture_tuned_with_empty_configs(name):
    mod = MODULES[name]
    if getattr(mod, "UNSUPPORTED", None):
        pytest.skip(mod.UNSUPPORTED)
    for i, shape in enumerate(mod.SHAPES):
        tuned = tiletune.autotune(
            configs=[], key=mod.KEY, restore_value=mod.RESTORE_VALUE, reset_to_zero=mod.RESET_TO_ZERO,
            target="h100", top_k=3 if i == 0 else 2,
        )(mod.KERNEL)
        torch.manual_seed(1234 + i)
        args = mod.make_args(shape)
        ref = mod.reference(args)
        untouched = _clone(args)
        mod.launch(tuned, args)
        _check_outputs(mod, args, ref)
        best = tuned.best_config
        assert best is not None and best.kwargs, f"{name}: no tuned config"
        if name in SIDE_EFFECTS:
            # one untuned launch of the winner on a clone leaves every tensor exactly as tuning did
            mod.launch(mod.KERNEL, untouched, **best.kwargs)
            for k, v in args.items():
                if isinstance(v, torch.Tensor):
                    assert torch.equal(v, untouched[k]), f"{name}: tensor {k!r} differs from an untuned launch"
