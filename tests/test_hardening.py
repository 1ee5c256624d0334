"""Hardening (issue 26): what a cache file, a path or a malformed message can do, on real kernels and files.

Kernels run under Triton's interpreter; every case checks the user's data
(outputs, files) and what the user is told.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import pytest
import torch
import triton

import tiletune
from tiletune.errors import TiletuneCacheWarning
from tests import hardening_kernels as hk

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TILETUNE_ALWAYS_TUNE", raising=False)
    return tmp_path / "cache"


def _launch_copy_even(kernel, n=100):
    """Launch on an ``n``-element view of a longer buffer; return (view, the buffer's tail past it)."""
    x = torch.arange(256, dtype=torch.float32)
    buf = torch.full((256,), -1.0)
    out = buf[:n]
    kernel[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, out, n)
    return out, buf[n:], x[:n] * 2


def _caught(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn()
    return result, [str(w.message) for w in caught if issubclass(w.category, TiletuneCacheWarning)]


def _tuned_cache_file(cache: Path) -> Path:
    out, tail, want = _launch_copy_even(tiletune.autotune(configs=[], key=["n"])(hk.copy_even))
    assert torch.equal(out, want) and bool((tail == -1).all())
    (path,) = (cache / "kernel").glob("copy_even-*.json")
    return path


# ----- 2. a cache entry sets only what tuning chose ------------------------------------------------------
def test_entry_that_switches_on_a_defaulted_constexpr_is_refused_and_retuned(fresh_cache):
    path = _tuned_cache_file(fresh_cache)
    data = json.loads(path.read_text())
    (key,) = data["entries"]
    data["entries"][key]["config"]["kwargs"].update(BLOCK=64, EVEN=True)  # drops the masks: 28 elements past 100
    path.write_text(json.dumps(data))
    (out, tail, want), said = _caught(lambda: _launch_copy_even(tiletune.autotune(configs=[], key=["n"])(hk.copy_even)))
    assert len(said) == 1 and "EVEN=True" in said[0] and "BLOCK" in said[0] and str(path) in said[0], said
    assert torch.equal(out, want)
    assert bool((tail == -1).all()), "the launch wrote past the end of the output"
    assert "EVEN" not in json.loads(path.read_text())["entries"][key]["config"]["kwargs"]  # replaced by the re-tune


def test_entry_that_repeats_a_default_value_is_kept(fresh_cache):
    path = _tuned_cache_file(fresh_cache)
    data = json.loads(path.read_text())
    (key,) = data["entries"]
    data["entries"][key]["config"]["kwargs"]["EVEN"] = False  # what the launch gives it anyway
    path.write_text(json.dumps(data))
    (out, tail, want), said = _caught(lambda: _launch_copy_even(tiletune.autotune(configs=[], key=["n"])(hk.copy_even)))
    assert said == [] and torch.equal(out, want) and bool((tail == -1).all())


@pytest.mark.parametrize("how", ["world-writable folder", "world-writable root", "group-writable file",
                                 "file of another user"])
def test_cache_others_may_write_is_ignored_with_a_warning(fresh_cache, how):
    path = _tuned_cache_file(fresh_cache)
    if how == "world-writable folder":
        os.chmod(path.parent, 0o777)
        what, place = "writable by everyone", path.parent
    elif how == "world-writable root":
        os.chmod(fresh_cache, 0o1777)
        what, place = "writable by everyone", fresh_cache
    else:
        if os.getuid() != 0:
            pytest.skip("changing a file's owner or group to one that is not ours needs root")
        if how == "group-writable file":
            os.chown(path, -1, 54321)  # a group that is not the user's private group
            os.chmod(path, 0o664)
            what = "writable by its group"
        else:
            os.chown(path, 54321, -1)
            what = "owned by uid 54321"
        place = path
    before = path.read_bytes()
    kernel = tiletune.autotune(configs=[], key=["n"])(hk.copy_even)
    (out, tail, want), said = _caught(lambda: _launch_copy_even(kernel))
    assert torch.equal(out, want) and bool((tail == -1).all())
    assert len(said) == 1 and what in said[0] and str(place) in said[0] and "ignoring" in said[0], said
    assert kernel.configs_timings, "the entry of an untrusted file was used instead of tuning"
    assert path.read_bytes() == before  # nothing written where another user could have planted it


def test_trusted_cache_is_a_hit(fresh_cache):
    _tuned_cache_file(fresh_cache)
    kernel = tiletune.autotune(configs=[], key=["n"])(hk.copy_even)
    (out, _, want), said = _caught(lambda: _launch_copy_even(kernel))
    assert said == [] and torch.equal(out, want) and not kernel.configs_timings
