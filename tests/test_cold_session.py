"""A first tune that certainly tunes forks its compile children before it binds and analyses the kernel.

Whether it certainly tunes is read off the cache directory without hashing
anything (``cache.may_hold``): no file of the kernel's name, the cache off,
or ``TILETUNE_ALWAYS_TUNE``.  Checked on a real kernel tuned under the
interpreter, so the file name the check looks for is the one the cache wrote.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

import tiletune
from tiletune.runtime import bench
from tiletune.runtime.cache import may_hold


@triton.jit
def cold_copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def _tuner(**kw):
    return tiletune.autotune(configs=[], key=["n"], target="h100", **kw)(cold_copy_kernel)


def _launch(tuned, n=300):
    x = torch.arange(n, dtype=torch.float32)
    y = torch.zeros_like(x)
    tuned[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n)
    assert torch.equal(x, y)


def test_cold_session_before_the_first_tune_and_none_once_the_kernel_has_a_cache_file(tmp_path, monkeypatch):
    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TILETUNE_ALWAYS_TUNE", raising=False)
    monkeypatch.setattr(bench, "_clock", bench.VirtualClock())
    tuned = _tuner()
    assert not may_hold("cold_copy_kernel")
    assert tuned._cold_session() is not None  # nothing cached can answer: fork before the analysis
    _launch(tuned)
    files = list((tmp_path / "cache" / "kernel").glob("*.json"))
    assert [f.name.startswith("cold_copy_kernel-") for f in files] == [True]
    assert may_hold("cold_copy_kernel")
    assert _tuner()._cold_session() is None  # a cached entry may answer: fork after the lookup
    assert not may_hold("cold_copy")  # another kernel's name is not a prefix match ...
    assert may_hold("cold_copy_kernel", directory=tmp_path / "cache")


def test_always_tune_or_no_cache_forks_early_even_with_a_cache_file(tmp_path, monkeypatch):
    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(bench, "_clock", bench.VirtualClock())
    _launch(_tuner())
    assert _tuner()._cold_session() is None
    assert _tuner(cache_results=False)._cold_session() is not None
    monkeypatch.setenv("TILETUNE_ALWAYS_TUNE", "1")
    assert _tuner()._cold_session() is not None


def test_a_first_tune_forks_its_children_before_it_analyses_the_kernel(tmp_path, monkeypatch):
    # the launch is keyed on the alignment the analysis reads: that analysis comes after the fork
    from tiletune.runtime import autotuner, live_kernel

    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TILETUNE_ALWAYS_TUNE", raising=False)
    monkeypatch.setattr(bench, "_clock", bench.VirtualClock())
    order: list = []
    real_cold, real_analysis = autotuner.Autotuner._cold_session, live_kernel.analyze_live

    def cold(self):
        order.append("fork")
        return real_cold(self)

    def analysis(*a, **k):
        order.append("analysis")
        return real_analysis(*a, **k)

    monkeypatch.setattr(autotuner.Autotuner, "_cold_session", cold)
    monkeypatch.setattr(live_kernel, "analyze_live", analysis)
    _launch(_tuner())
    assert order == ["fork", "analysis"]  # one session, taken up by the tune; one analysis
