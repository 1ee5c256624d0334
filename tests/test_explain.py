"""``tiletune explain NAME`` / ``tiletune cache show NAME --why`` on a real tuning's cache and log."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import triton
import triton.language as tl

import tiletune
from tiletune.runtime.explain import explain_entry

ROOT = Path(__file__).resolve().parent.parent


@triton.jit
def _scaled(x, s):
    return x * s


@triton.jit
def scale_rows_kernel(x_ptr, y_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, _scaled(tl.load(x_ptr + offs, mask=mask), scale), mask=mask)


def _tune(cache: Path):
    os.environ["TILETUNE_CACHE_DIR"] = str(cache)
    tuned = tiletune.autotune(configs=[], key=["n"], target="h100", top_k=3)(scale_rows_kernel)
    x = torch.randn(3000)
    y = torch.empty_like(x)
    tuned[lambda meta: (triton.cdiv(3000, meta["BLOCK"]),)](x, y, 3000, 2.0)
    torch.testing.assert_close(y, x * 2.0)
    return tuned


def _cli(*args, cache: Path):
    env = dict(os.environ, TILETUNE_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "tiletune.cli", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=120)


@pytest.fixture
def tuned_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(tmp_path))
    tuned = _tune(tmp_path)
    return tuned, tmp_path


def test_cache_file_and_log_carry_the_same_hash(tuned_cache):
    _, cache = tuned_cache
    (cache_file,) = (cache / "kernel").glob("scale_rows_kernel-*.json")
    (log_file,) = (cache / "logs").glob("scale_rows_kernel-*.jsonl")
    assert cache_file.stem == log_file.stem  # the kernel calls a helper: both hashes cover it


def test_explain_names_winner_margin_and_model_ranks(tuned_cache):
    tuned, cache = tuned_cache
    best = tuned.best_config
    result = _cli("explain", "scale_rows_kernel", cache=cache)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    winner = f"BLOCK={best.kwargs['BLOCK']}"
    chosen = next(line for line in text.splitlines() if line.strip().startswith("chosen:"))
    assert winner in chosen
    winner_row = next(line for line in text.splitlines() if line.endswith("<- winner"))
    assert winner in winner_row and " ms " in winner_row and "#" in winner_row
    assert "margin:" in text and "runner-up" in text
    assert "#0" in text and "1.00x" in text  # the model's pick, with its predicted cost
    assert "model:" in text and "key=[3000]" in text
    assert _cli("cache", "show", "scale_rows_kernel", "--why", cache=cache).stdout == text


def test_explain_unknown_name_says_where_it_looked(tmp_path):
    result = _cli("explain", "no_such_kernel", cache=tmp_path)
    assert result.returncode == 1
    assert "no_such_kernel" in result.stderr and str(tmp_path) in result.stderr
    assert "tiletune cache list" in result.stderr


def test_explain_lists_dropped_candidates_with_reason():
    cfg = {"kwargs": {"BLOCK": 64}, "num_warps": 4, "num_stages": 2}
    bad = {"kwargs": {"BLOCK": 4096}, "num_warps": 4, "num_stages": 2}
    record = {"status": "tuned", "candidates": [
        {"config": cfg, "ms": 1.0, "predicted": 2.0, "rank": 1},
        {"config": bad, "dropped": "compile failed: out of resources", "predicted": 1.0, "rank": 0}],
        "notes": ["tiling parameter GROUP = 8 passed at launch: left out of the search"]}
    lines = explain_entry("k", {"key": [1]}, {"config": cfg}, record)
    text = "\n".join(lines)
    assert "[BLOCK=4096, num_warps=4, num_stages=2]: compile failed: out of resources" in text
    assert "GROUP = 8 passed at launch: left out of the search" in text
    assert "the only candidate measured" in text
    assert "the model's pick was [BLOCK=4096" in text
