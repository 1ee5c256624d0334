"""`import tiletune.patch` turns plain @triton.autotune into tiletune's; unpatch() restores Triton's."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
import triton
import triton.language as tl
import triton.runtime.autotuner as triton_autotuner_module

ROOT = Path(__file__).resolve().parent.parent
TRITON_AUTOTUNE = triton_autotuner_module.autotune


@pytest.fixture
def patched(tmp_path, monkeypatch):
    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(tmp_path / "cache"))
    import tiletune.patch

    tiletune.patch.patch()
    try:
        yield tiletune.patch
    finally:
        tiletune.patch.unpatch()


def _make_kernel():
    @triton.jit
    def scale_kernel(x_ptr, y_ptr, n, BLOCK_SIZE: tl.constexpr):
        offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offs < n
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)

    return scale_kernel


def test_patch_binds_every_name(patched):
    import tiletune

    assert triton.autotune is tiletune.autotune
    assert triton.runtime.autotune is tiletune.autotune
    assert triton_autotuner_module.autotune is tiletune.autotune
    assert patched.is_patched()


def test_unpatch_restores_triton(patched):
    patched.unpatch()
    assert triton.autotune is TRITON_AUTOTUNE
    assert triton.runtime.autotune is TRITON_AUTOTUNE
    assert triton_autotuner_module.autotune is TRITON_AUTOTUNE
    assert not patched.is_patched()
    patched.patch()
    patched.patch()  # idempotent
    patched.unpatch()
    assert triton.autotune is TRITON_AUTOTUNE


def test_plain_triton_autotune_with_empty_configs_synthesizes(patched):
    from tiletune.runtime.autotuner import Autotuner

    kernel = triton.autotune(configs=[], key=["n"], top_k=2)(_make_kernel())
    assert isinstance(kernel, Autotuner) and kernel.synthesize_configs
    x = torch.randn(300)
    y = torch.empty(300)
    kernel[lambda meta: (triton.cdiv(300, meta["BLOCK_SIZE"]),)](x, y, 300)
    torch.testing.assert_close(y, x * 2)
    assert "BLOCK_SIZE" in kernel.best_config.kwargs


def test_plain_triton_autotune_with_configs_keeps_triton_arguments(patched):
    from tiletune.runtime.autotuner import Autotuner

    configs = [triton.Config({"BLOCK_SIZE": 32}), triton.Config({"BLOCK_SIZE": 64})]
    kernel = triton.autotune(configs=configs, key=["n"], use_cuda_graph=False, cache_results=False,
                             do_bench=lambda fn, quantiles: (fn(), [1.0, 1.0, 1.0])[1])(_make_kernel())
    assert isinstance(kernel, Autotuner)
    x, y = torch.randn(100), torch.empty(100)
    kernel[lambda meta: (triton.cdiv(100, meta["BLOCK_SIZE"]),)](x, y, 100)
    torch.testing.assert_close(y, x * 2)


def test_without_the_import_triton_is_untouched():
    code = textwrap.dedent(
        """
        import triton, triton.runtime, triton.runtime.autotuner as m
        import tiletune, tiletune.runtime.autotuner
        assert triton.autotune is m.autotune and m.autotune.__module__ == "triton.runtime.autotuner"
        assert triton.runtime.autotune is m.autotune
        import tiletune.patch
        assert triton.autotune is tiletune.autotune
        print("ok")
        """
    )
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
