"""Tunability semantics (one place: tiletune.analysis.tunability) and the
runtime's answer to an incomplete analysis."""

from __future__ import annotations

import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from tiletune.analysis import analyze_source
from tiletune.analysis.tunability import fixed_values, tunability

DATA = Path(__file__).resolve().parent / "data"


def _spec(text: str, name: str):
    return analyze_source(textwrap.dedent(text)).kernel(name)


CHUNKED = """
import triton
import triton.language as tl

@triton.autotune(configs=[triton.Config({"BK": 32}), triton.Config({"BK": 64})], key=["T", "BT"])
@triton.heuristics({"BV": lambda args: triton.next_power_of_2(args["V"])})
@triton.jit
def chunked(x_ptr, y_ptr, T, K, V, BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr, BS: tl.constexpr = 16):
    i_t = tl.program_id(0)
    o_t = i_t * BT + tl.arange(0, BT)
    o_k = tl.arange(0, BK)
    o_v = tl.arange(0, BV)
    o_s = tl.arange(0, BS)
    x = tl.load(x_ptr + o_t[:, None] * K + o_k[None, :], mask=(o_t[:, None] < T) & (o_k[None, :] < K))
    v = tl.load(x_ptr + o_t[:, None] * V + o_v[None, :], mask=(o_t[:, None] < T) & (o_v[None, :] < V))
    s = tl.load(x_ptr + o_s, mask=o_s < T)
    tl.store(y_ptr + o_t, tl.sum(x, 1) + tl.sum(v, 1) + tl.sum(s, 0), mask=o_t < T)

def launch(x, y, T, K, V, block_t):
    chunked[(triton.cdiv(T, block_t),)](x, y, T, K, V, BT=block_t)
"""


def test_key_heuristics_default_and_launch_are_never_tuned():
    spec = _spec(CHUNKED, "chunked")
    assert {p.name for p in spec.tiling_params} == {"BT", "BK", "BV", "BS"}
    t = tunability(spec)
    assert t.tuned == ("BK",)
    # BT is both in the key and passed at launch: the launch is the reason given
    assert t.fixed["BT"].startswith("passed at launch")
    assert t.fixed["BV"] == "set by @triton.heuristics"
    assert t.fixed["BS"] == "has a default"
    # Triton rejects a launch keyword only when a config sets it: BT is not set by the configs
    assert t.config_set == {"BK"} and t.conflicts() == {}


def test_runtime_launch_kwargs_replace_the_static_launches():
    spec = _spec(CHUNKED, "chunked")
    t = tunability(spec, launch_kwargs=["BK"], defaults={"BS": 16})
    assert t.fixed["BK"] == "passed at launch" and t.fixed["BT"].startswith("in the autotune key")
    values, missing = fixed_values(spec, t, {"BK": 32, "BT": 64})
    assert values == {"BK": 32, "BT": 64, "BS": 16} and missing == {"BV": "set by @triton.heuristics"}


def test_configs_setting_a_launch_keyword_conflict():
    spec = _spec(CHUNKED.replace("BT=block_t", "BT=block_t, BK=32"), "chunked")
    assert tunability(spec).conflicts() == {"BK": ("<source>:20",)}


def test_incomplete_kernel_warns_and_tunes_safely_under_the_interpreter(monkeypatch, tmp_path):
    torch = pytest.importorskip("torch")
    monkeypatch.syspath_prepend(str(DATA))
    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(tmp_path))
    sys.modules.pop("dynamic_helper_kernel", None)
    import dynamic_helper_kernel as mod

    x = torch.arange(1000, dtype=torch.float32)
    y = torch.zeros_like(x)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mod.scaled_copy(x, y)
    assert torch.equal(y, x * 3)
    texts = [str(w.message) for w in caught if type(w.category).__name__ and w.category.__name__ == "TiletuneWarning"]
    assert len(texts) == 1 and "analysis of kernel 'scaled_copy_kernel' is incomplete" in texts[0]
    assert "unresolved helper" in texts[0]
    tuner = mod.scaled_copy_kernel
    assert tuner.best_config.kwargs["BLOCK"] >= 16  # a tl.dot may hide in what was not followed
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        mod.scaled_copy(x, y)
    assert not [w for w in again if w.category.__name__ == "TiletuneWarning"]
