"""``python -m tiletune.runtime.cache_cli list|show|clear`` against real cache files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tiletune.runtime.cache import TuningCache, entry_key

ROOT = Path(__file__).resolve().parent.parent
FP = {"tiletune": "0.1.0", "triton": "3.6.0", "torch": "2.11.0", "python": "3.11", "target": "h100"}
KEY = entry_key({"key": [512, 4096], "dtypes": ["float16"], "target": "h100"})


def cli(cache_root: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, TILETUNE_CACHE_DIR=str(cache_root))
    return subprocess.run(
        [sys.executable, "-m", "tiletune.runtime.cache_cli", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60,
    )


@pytest.fixture
def populated(tmp_path) -> Path:
    matmul = TuningCache("matmul_kernel", "def matmul_kernel(): pass", directory=tmp_path, fingerprint=FP)
    matmul.put(KEY, {
        "config": {"kwargs": {"BLOCK_M": 128, "BLOCK_N": 64}, "num_warps": 4, "num_stages": 3, "extra": {}},
        "timings_ms": {"a": 0.123, "b": 0.5},
        "method": "cuda-event",
    })
    matmul.put(entry_key({"key": [64, 64], "dtypes": ["float16"], "target": "h100"}),
               {"config": {"kwargs": {"BLOCK_M": 32}, "num_warps": 2, "num_stages": 2}, "timings_ms": {"x": 0.01}})
    ag = TuningCache("ag_gemm", "def ag_gemm(): pass", directory=tmp_path, kind="function", fingerprint=FP)
    ag.put(entry_key({"key": [8192]}), {"config": {"chunk": 4}, "timings_ms": {"chunk=4": 1.5}})
    broken = tmp_path / "kernel" / "broken_kernel-0000000000000000.json"
    broken.write_text("{truncated")
    return tmp_path


def test_list(populated):
    result = cli(populated, "list")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["KIND", "NAME", "ENTRIES", "SIZE", "PATH"]
    rows = {line.split()[1]: line.split() for line in lines[1:]}
    assert set(rows) == {"matmul_kernel", "ag_gemm", "broken_kernel"}
    assert rows["matmul_kernel"][0] == "kernel" and rows["matmul_kernel"][2] == "2"
    assert rows["ag_gemm"][0] == "function" and rows["ag_gemm"][2] == "1"
    assert rows["broken_kernel"][2] == "corrupt"
    assert rows["matmul_kernel"][-1].startswith(str(populated / "kernel" / "matmul_kernel-"))
    assert "TiletuneCacheWarning" not in result.stderr


def test_list_empty(tmp_path):
    result = cli(tmp_path / "none", "list")
    assert result.returncode == 0 and "no cache files" in result.stdout


def test_show_text_and_json(populated):
    result = cli(populated, "show", "matmul_kernel")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert KEY in out
    assert "BLOCK_M=128, BLOCK_N=64" in out and "num_warps=4" in out and "num_stages=3" in out
    assert "best 0.123 ms" in out and "2 candidates" in out and "cuda-event" in out

    as_json = cli(populated, "show", "matmul_kernel", "--json")
    assert as_json.returncode == 0, as_json.stderr
    [info] = json.loads(as_json.stdout)
    assert info["name"] == "matmul_kernel" and info["kind"] == "kernel"
    assert info["entries"][KEY]["config"]["kwargs"] == {"BLOCK_M": 128, "BLOCK_N": 64}

    path = info["path"]
    by_path = cli(populated, "show", path, "--json")
    assert json.loads(by_path.stdout)[0]["path"] == path

    broken = cli(populated, "show", "broken_kernel")
    assert broken.returncode == 0 and "corrupt" in broken.stdout

    missing = cli(populated, "show", "nope")
    assert missing.returncode == 1 and "nope" in missing.stderr


def test_clear_one_then_all(populated):
    refused = cli(populated, "clear")  # no --yes and no terminal: refuse
    assert refused.returncode == 1 and "--yes" in refused.stderr
    assert len(list(populated.glob("*/*.json"))) == 3

    one = cli(populated, "clear", "ag_gemm", "--yes")
    assert one.returncode == 0, one.stderr
    assert not list((populated / "function").glob("*.json"))
    names = cli(populated, "list").stdout
    assert "ag_gemm" not in names and "matmul_kernel" in names

    everything = cli(populated, "clear", "--yes")
    assert everything.returncode == 0, everything.stderr
    assert "removed 2" in everything.stdout
    assert not list(populated.glob("*/*.json"))
    assert "no cache files" in cli(populated, "list").stdout


def test_in_process_parser_wiring(populated, capsys):
    import argparse

    from tiletune.runtime.cache_cli import add_cache_parser, run_cache

    parser = argparse.ArgumentParser(prog="tiletune")
    add_cache_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["cache", "list", "--dir", str(populated)])
    assert args.func is run_cache
    assert run_cache(args) == 0
    assert "matmul_kernel" in capsys.readouterr().out


def test_show_well_formed_file_with_garbage_values(tmp_path):
    """A file that parses but whose fields have any JSON type: shown as it is, no traceback."""
    (tmp_path / "kernel").mkdir()
    doc = {
        "format": "tiletune-cache", "version": 1, "name": "k", "kind": "kernel", "source_hash": 5, "fingerprint": "x",
        "entries": {
            "a": {"config": "garbage", "timings_ms": [1, 2], "best_ms": "fast", "created": {"x": 1}},
            "b": {"config": {"kwargs": [1, 2], "num_warps": {"a": 1}}, "timings_ms": {"x": "y", "z": None},
                  "method": ["w"]},
            "c": {},
            "d": {"config": {"c": 1}, "time_ms": 2.5, "timings_ms": [{"config": {"c": 1}, "ms": 2.5}]},
        },
    }
    (tmp_path / "kernel" / "k-0000000000000000.json").write_text(json.dumps(doc))
    for args in (["list"], ["show", "k"], ["show", "k", "--json"]):
        result = cli(tmp_path, *args, "--dir", str(tmp_path))
        assert result.returncode == 0 and "Traceback" not in result.stderr, (args, result.stderr)
    shown = cli(tmp_path, "show", "k", "--dir", str(tmp_path)).stdout
    assert '-> "garbage"' in shown and "fingerprint='x'" in shown and "best 2.5 ms" in shown


# ----- issue 26: only tiletune cache files inside the cache directory are ever touched ------------------
def cli_in(cwd: Path, cache_root: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, TILETUNE_CACHE_DIR=str(cache_root), PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "tiletune.runtime.cache_cli", *args],
        cwd=cwd, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60,
    )


def test_clear_of_a_kernel_source_path_removes_its_entries_never_the_source(populated, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    source = work / "kernel.py"
    text = "import triton\n\n@triton.jit\ndef matmul_kernel(a_ptr, BLOCK_M: tl.constexpr):\n    pass\n"
    source.write_text(text)
    for name in ("kernel.py", str(source)):
        shown = cli_in(work, populated, "show", name)
        assert shown.returncode == 0 and "matmul_kernel" in shown.stdout and "ag_gemm" not in shown.stdout, shown
    result = cli_in(work, populated, "clear", "kernel.py", "--yes")
    assert result.returncode == 0, result.stderr
    assert source.read_text() == text  # the user's file is untouched
    assert "removed 1 cache file(s)" in result.stdout
    assert not list((populated / "kernel").glob("matmul_kernel-*.json"))
    assert list((populated / "function").glob("ag_gemm-*.json"))


@pytest.mark.parametrize("name", ["../victim.json", "{victim}", "sub/../../victim.json", "..", "nope/matmul_kernel"])
def test_names_with_separators_or_dotdot_are_refused(populated, tmp_path, name):
    victim = populated.parent / "victim.json"
    victim.write_text('{"format": "tiletune-cache", "version": 1, "entries": {}}')
    name = name.format(victim=victim)
    for command in (["clear", name, "--yes"], ["show", name]):
        result = cli_in(populated / "kernel", populated, *command)
        assert result.returncode == 2, (command, result)
        assert "Traceback" not in result.stderr and ("NAME" in result.stderr or str(victim) in result.stderr), result.stderr
        assert victim.exists()
    assert len(list(populated.glob("*/*.json"))) == 3


def test_clear_never_follows_a_symlinked_kind_folder(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    precious = elsewhere / "notes-0123456789abcdef.json"
    precious.write_text("{}")
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "kernel").symlink_to(elsewhere)
    (cache / "function").mkdir()
    other = cache / "function" / "not_ours.json"  # not named like a cache file
    other.write_text("{}")
    result = cli(cache, "clear", "--yes")
    assert result.returncode == 0 and "no cache files" in result.stdout, result
    assert precious.exists() and other.exists()
