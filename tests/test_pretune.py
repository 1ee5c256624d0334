"""Filling the cache ahead of time: tiletune.pretune and ``tiletune tune``."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tiletune
from tiletune.errors import TiletuneError
from tiletune.runtime.pretune import parse_shape
from tiletune.runtime.search import SearchPolicy

import fixtures

ROOT = Path(__file__).resolve().parent.parent
SMALL = SearchPolicy("small", first_min=2, first_max=2, descent=False)


def test_pretune_tunes_each_shape_once_and_a_later_kernel_finds_them_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(tmp_path))
    fx = fixtures.load("vector_add")
    shapes = [{"n_elements": 1000}, {"n_elements": 3000}]
    tuned = tiletune.autotune(configs=[], key=fx.KEY, search=SMALL)(fx.KERNEL)
    rows = tiletune.pretune(tuned, shapes, make_args=lambda s: fx.make_args(s), launch=fx.launch)
    assert [r["shape"] for r in rows] == shapes
    assert all(r["search"] for r in rows)  # both tuned
    assert rows[1]["search"]["warm_start"] == [[1000]]  # the second key started from the first's winner
    again = tiletune.autotune(configs=[], key=fx.KEY, search=SMALL)(fx.KERNEL)  # another process's kernel
    hits = tiletune.pretune(again, shapes, make_args=lambda s: fx.make_args(s), launch=fx.launch)
    assert [r["search"] for r in hits] == [{}, {}]
    assert [r["config"] for r in hits] == [r["config"] for r in rows]


def test_pretune_refuses_a_kernel_that_is_not_tuned():
    fx = fixtures.load("vector_add")
    with pytest.raises(TiletuneError, match="not a tuned kernel.*tiletune.autotune"):
        tiletune.pretune(fx.KERNEL, [{"n_elements": 8}], make_args=fx.make_args, launch=fx.launch)


def test_shapes_parse_and_bad_ones_say_how_to_write_them():
    assert parse_shape("M=4096, N=512,dtype=fp16") == {"M": 4096, "N": 512, "dtype": "fp16"}
    with pytest.raises(TiletuneError, match="not NAME=VALUE.*--shape M=4096,N=512"):
        parse_shape("M4096")


def _cli(args, cache):
    env = dict(os.environ, TILETUNE_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT), TRITON_INTERPRET="1",
               TILETUNE_SEARCH="fast")
    return subprocess.run([sys.executable, "-c", "import sys; from tiletune.cli import main; sys.exit(main())",
                           "tune", *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)


@pytest.mark.slow
def test_the_tune_command_fills_the_cache_a_second_run_hits(tmp_path):
    file = str(ROOT / "fixtures" / "vector_add.py")
    first = _cli([file, "--shape", "n_elements=1000", "--shape", "n_elements=2000", "--json"], tmp_path)
    assert first.returncode == 0, first.stderr[-2000:]
    rows = json.loads(first.stdout.strip().splitlines()[-1])
    assert len(rows) == 2 and all(r["search"] for r in rows)
    entries = [json.loads(p.read_text())["entries"] for p in (tmp_path / "kernel").glob("*.json")]
    assert sum(len(e) for e in entries) == 2
    second = _cli([file, "--shape", "n_elements=1000"], tmp_path)
    assert second.returncode == 0, second.stderr[-2000:]
    assert "(cached," in second.stdout


def test_the_tune_command_names_what_a_file_lacks(tmp_path):
    bad = tmp_path / "k.py"
    bad.write_text("KERNEL = None\n")
    out = _cli([str(bad), "--shape", "M=1"], tmp_path)
    assert out.returncode == 2
    assert "has no make_args, launch" in out.stderr
