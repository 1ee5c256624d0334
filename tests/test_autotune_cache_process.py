"""The disk cache across real processes: reuse without benchmarking, concurrent tuners, corrupt files.

Each test writes a kernel module into a temporary directory and runs it in
fresh Python processes (TRITON_INTERPRET=1) against a temporary
TILETUNE_CACHE_DIR; what happened is read back from the tuning log and the
cache file.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tiletune.runtime.cache import read_cache_file
from tiletune.runtime.tuning_log import read_tuning_log

ROOT = Path(__file__).resolve().parent.parent

KERNEL_MODULE = textwrap.dedent(
    '''
    import json, os, sys, time

    import torch
    import triton
    import triton.language as tl

    import tiletune
    from tiletune.runtime import bench

    BENCH_CALLS = []
    _wall = bench.METHODS["wall"]


    def counting_wall(fn, **kw):
        BENCH_CALLS.append(1)
        return _wall(fn, **kw)


    bench.METHODS["wall"] = counting_wall


    @tiletune.autotune(configs=[], key=["n_elements"], target="h100", top_k=2, verbose=True)
    @triton.jit
    def axpy_kernel(x_ptr, y_ptr, out_ptr, alpha, n_elements, BLOCK_SIZE: tl.constexpr):
        pid = tl.program_id(axis=0)
        offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offs < n_elements
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, alpha * x + y, mask=mask)


    def main():
        barrier = os.environ.get("BARRIER_DIR")
        if barrier:  # every process past its imports before any tunes (an event, not a start time)
            open(os.path.join(barrier, f"ready-{os.getpid()}"), "w").close()
            while len(os.listdir(barrier)) < int(os.environ["PARTIES"]):
                time.sleep(0.005)
        n = int(os.environ.get("N", "1000"))
        x, y = torch.randn(n), torch.randn(n)
        out = torch.empty(n)
        axpy_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, 2.0, n)
        assert torch.allclose(out, 2.0 * x + y)  # (torch.testing imports torch.distributed: slow)
        print("RESULT " + json.dumps({"bench_calls": len(BENCH_CALLS),
                                      "best": axpy_kernel.best_config.kwargs}), flush=True)


    if __name__ == "__main__":
        main()
    '''
)


@pytest.fixture
def workdir(tmp_path):
    (tmp_path / "axpy.py").write_text(KERNEL_MODULE)
    return tmp_path


@pytest.fixture(scope="module")
def first_tune(tmp_path_factory):
    """One process that tuned into an empty cache: its result and the cache (and log) it left.

    Three tests start from that same state; one process makes it for all (each process spends seconds
    importing torch and Triton), and each test gets its own copy of the cache (:func:`tuned_workdir`)."""
    base = tmp_path_factory.mktemp("first_tune")
    (base / "axpy.py").write_text(KERNEL_MODULE)
    result, out, _ = _run(base)
    return base, result, out


@pytest.fixture
def tuned_workdir(workdir, first_tune):
    """``workdir`` with a copy of the cache the first tune left; the first tune's result and output."""
    base, result, out = first_tune
    shutil.copytree(base / "cache", workdir / "cache")
    return workdir, result, out


def _env(workdir: Path, **extra: str) -> dict:
    env = dict(os.environ)
    env.update(
        TRITON_INTERPRET="1",
        TILETUNE_CACHE_DIR=str(workdir / "cache"),
        PYTHONPATH=os.pathsep.join([str(ROOT), str(workdir)]),
        PYTHONWARNINGS="default",
        TILETUNE_PROGRESS="0",
    )
    for name in ("TILETUNE_ALWAYS_TUNE", "TRITON_DIST_AUTOTUNE_ALWAYS_TUNE", "TRITON_BENCH_METHOD",
                 "TILETUNE_VERSION_CHECK", "TRITON_PRINT_AUTOTUNING"):
        env.pop(name, None)
    env.update(extra)
    return env


def _start(workdir: Path, **extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(workdir / "axpy.py")], cwd=workdir, env=_env(workdir, **extra),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(proc: subprocess.Popen) -> tuple[dict, str, str]:
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, f"subprocess failed:\n{out}\n{err}"
    line = next(l for l in out.splitlines() if l.startswith("RESULT "))
    return json.loads(line[len("RESULT "):]), out, err


def _run(workdir: Path, **extra: str) -> tuple[dict, str, str]:
    return _finish(_start(workdir, **extra))


def _cache_file(workdir: Path) -> Path:
    files = sorted((workdir / "cache" / "kernel").glob("axpy_kernel-*.json"))
    assert len(files) == 1, files
    return files[0]


def _log(workdir: Path) -> list[dict]:
    files = sorted((workdir / "cache" / "logs").glob("axpy_kernel-*.jsonl"))
    assert len(files) == 1, files
    return read_tuning_log(files[0])


def test_second_process_reuses_the_cache_without_benchmarking(tuned_workdir):
    workdir, first, out1 = tuned_workdir
    assert first["bench_calls"] >= 2  # top_k=2 candidates measured, then re-timed
    data, reason = read_cache_file(_cache_file(workdir))
    assert reason is None and len(data["entries"]) == 1
    (entry,) = data["entries"].values()
    assert entry["config"]["kwargs"] == first["best"]

    second, out2, _ = _run(workdir)
    assert second["bench_calls"] == 0
    assert second["best"] == first["best"]
    assert "cache hit" in out2
    log = _log(workdir)
    assert [r["status"] for r in log] == ["tuned", "cache hit"]
    assert log[0]["candidates"] and not log[1]["candidates"]
    assert log[0]["pid"] != log[1]["pid"]

    # another key in a third process: tuned, and stored beside the first
    third, _, _ = _run(workdir, N="3000")
    assert third["bench_calls"] >= 2
    data, _ = read_cache_file(_cache_file(workdir))
    assert len(data["entries"]) == 2


def test_always_tune_retunes_despite_the_cache(tuned_workdir):
    workdir, _, _ = tuned_workdir
    again, out, _ = _run(workdir, TILETUNE_ALWAYS_TUNE="1")
    assert again["bench_calls"] >= 2
    assert [r["status"] for r in _log(workdir)] == ["tuned", "tuned"]


def test_two_processes_tuning_at_once_leave_a_valid_cache(workdir):
    """Both processes wait for each other past their imports, then tune and write the one file together.

    TILETUNE_ALWAYS_TUNE makes each tune and put whatever the other has written already: the
    test once started both at a fixed wall time 6 s ahead, and on a loaded machine one process was
    still importing when the other had stored its winner (a cache hit, ``bench_calls == 0``).
    """
    barrier = workdir / "barrier"
    barrier.mkdir()
    sync = dict(BARRIER_DIR=str(barrier), PARTIES="2", TILETUNE_ALWAYS_TUNE="1")
    procs = [_start(workdir, **sync), _start(workdir, **sync)]
    results = [_finish(p)[0] for p in procs]
    assert all(r["bench_calls"] >= 1 for r in results)
    data, reason = read_cache_file(_cache_file(workdir))
    assert reason is None
    assert len(data["entries"]) == 1  # same key: one entry, whichever wrote last
    (entry,) = data["entries"].values()
    assert entry["config"]["kwargs"] in [r["best"] for r in results]
    assert not list((workdir / "cache" / "kernel").glob("*.tmp"))
    later, _, _ = _run(workdir)
    assert later["bench_calls"] == 0 and later["best"] == entry["config"]["kwargs"]


def test_corrupt_cache_file_is_rebuilt_with_a_warning(tuned_workdir):
    workdir, _, _ = tuned_workdir
    path = _cache_file(workdir)
    path.write_text('{"format": "tiletune-cache", "entries": {garbled')
    rebuilt, out, err = _run(workdir)
    assert "corrupt" in err and str(path) in err  # TiletuneCacheWarning on stderr
    assert rebuilt["bench_calls"] >= 2  # nothing usable: tuned again
    data, reason = read_cache_file(path)
    assert reason is None and len(data["entries"]) == 1
    assert Path(str(path) + ".corrupt").exists()
    final, _, err2 = _run(workdir)
    assert final["bench_calls"] == 0 and "corrupt" not in err2
