"""Hardening (issue 26): what a cache file, a path or a malformed message can do, on real kernels and files.

Kernels run under Triton's interpreter; every case checks the user's data
(outputs, files) and what the user is told.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any

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


# ----- 3. every reader of source opens only regular files, never blocks, reads at most 4 MiB --------------
def _tiletune(*args: str, cwd: Path = ROOT, module: str = "tiletune.cli") -> Any:
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120)


@pytest.fixture
def hostile_dir(tmp_path) -> Path:
    """A folder with one good kernel file and every kind of unreadable ``*.py`` next to it."""
    d = tmp_path / "pkg"
    d.mkdir()
    (d / "good.py").write_text((ROOT / "tests" / "hardening_kernels.py").read_text())
    (d / ".#good.py").symlink_to("user@host.1234")  # an editor's lock file: a dangling symlink
    (d / "zero.py").symlink_to("/dev/zero")
    os.mkfifo(d / "fifo.py")
    (d / "huge.py").write_bytes(b"# " + b"x" * (5 << 20) + b"\n")
    return d


UNREADABLE = {".#good.py": "dangling symlink", "zero.py": "is a device", "fifo.py": "is a FIFO",
              "huge.py": "more than the 4194304"}


def test_lint_dir_reports_unreadable_entries_and_lints_the_rest(hostile_dir):
    result = _tiletune("lint", str(hostile_dir), "--format", "json")
    assert "Traceback" not in result.stderr, result.stderr
    found = json.loads(result.stdout)
    by_file = {}
    for d in found:
        by_file.setdefault(Path(d["path"]).name, []).append(d)
    for name, why in UNREADABLE.items():
        assert [d["code"] for d in by_file[name]] == ["TT000"] and why in by_file[name][0]["message"], (name, by_file)
    assert not [d for d in by_file.get("good.py", []) if d["code"] == "TT000"]


def test_analyze_dir_reports_unreadable_entries_and_analyses_the_rest(hostile_dir):
    result = _tiletune("analyze", str(hostile_dir))
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert "copy_even" in result.stdout
    for name, why in UNREADABLE.items():
        assert any(name in line and why in line for line in result.stderr.splitlines()), (name, result.stderr)


@pytest.mark.parametrize("name", sorted(UNREADABLE))
def test_analyze_and_synth_configs_refuse_an_unreadable_file_at_once(hostile_dir, name):
    path = str(hostile_dir / name)
    for result in (_tiletune("analyze", path), _tiletune(path, "--target", "h100", module="tiletune.synthesis.cli")):
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert path in result.stderr and UNREADABLE[name] in result.stderr, result.stderr


def test_a_fifo_among_the_package_modules_is_skipped_not_waited_for(tmp_path):
    """The launch finder reads the kernel's package's other modules: a FIFO or /dev/zero there is skipped."""
    from tiletune.analysis import analyze_file

    pkg = tmp_path / "proj" / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    os.mkfifo(pkg / "launcher.py")
    (pkg / "zero.py").symlink_to("/dev/zero")
    (pkg / "sub" / "kern.py").write_text((ROOT / "tests" / "hardening_kernels.py").read_text())
    import signal

    def hang(signum, frame):
        raise TimeoutError("reading a package module blocked")

    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(60)
    try:
        module = analyze_file(str(pkg / "sub" / "kern.py"))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert "copy_even" in [k.name for k in module.kernels]


def test_read_source_names_the_file_and_the_fix(hostile_dir):
    from tiletune.analysis.source import read_source
    from tiletune.errors import AnalysisError

    for name, why in UNREADABLE.items():
        with pytest.raises(AnalysisError) as info:
            read_source(str(hostile_dir / name))
        assert info.value.file == str(hostile_dir / name) and why in str(info.value)
    assert "copy_even" in read_source(str(hostile_dir / "good.py"))


# ----- 4. synth-configs: an out-of-range --shape is a usage error ---------------------------------------
@pytest.mark.parametrize("value", ["99999999999999999999", str((1 << 63) - 1), str((1 << 48) + 1)])
def test_synth_configs_refuses_an_out_of_range_shape(value):
    result = _tiletune(str(ROOT / "tests" / "hardening_kernels.py"), "--shape", f"n={value}", "--target", "h100",
                       module="tiletune.synthesis.cli")
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert f"--shape n={value}" in result.stderr and "out of range" in result.stderr, result.stderr


def test_synth_configs_accepts_the_largest_shape():
    result = _tiletune(str(ROOT / "fixtures" / "matmul.py"), "--shape", f"M={1 << 48},N={1 << 48},K={1 << 48}",
                       "--target", "h100", module="tiletune.synthesis.cli")
    assert result.returncode == 0 and "triton.Config(" in result.stdout, result.stderr


# ----- 5. side-effect protection through the storage: expanded and overlapping outputs -------------------
@pytest.mark.parametrize("layout", ["expanded", "overlapping rows"])
def test_protection_restores_expanded_and_overlapping_outputs_exactly(fresh_cache, layout):
    rows, cols = 25, 8
    n = rows * cols
    x = torch.arange(n, dtype=torch.float32) % 7

    def make():
        buf = torch.arange(300, dtype=torch.float32) * 1000
        if layout == "expanded":
            return buf, buf[5:6].expand(rows, cols)  # every element of the output is buf[5]
        return buf, torch.as_strided(buf, (rows, cols), (4, 1), 10)  # each row shares 4 elements with the next

    def launch(kernel, out, **meta):
        kernel[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, out, n, cols, out.stride(0), out.stride(1), **meta)

    want_buf, want_out = make()
    launch(hk.scatter_add, want_out, BLOCK=64)  # one untuned launch
    buf, out = make()
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        kernel = tiletune.autotune(configs=[], key=["n"])(hk.scatter_add)
        launch(kernel, out)
    assert len(kernel.configs_timings) > 1, "the tuning must have launched several candidates"
    assert torch.equal(buf, want_buf), (buf - want_buf).abs().max()
    assert not torch.equal(buf, make()[0])  # the kernel did write


def test_snapshot_and_restore_value_hooks_go_through_the_storage():
    from tiletune.runtime.side_effects import DefaultHooks, Snapshot

    buf = torch.arange(10, dtype=torch.float32)
    expanded = buf[3:4].expand(4, 5)
    snap = Snapshot({"out": expanded})
    hooks = DefaultHooks("k", [], ["out"])
    hooks.pre_hook({"out": expanded})
    buf[3] = -1
    hooks.post_hook({"out": expanded}, None)
    assert buf[3] == 3
    buf[3] = -2
    snap.restore()
    assert torch.equal(buf, torch.arange(10, dtype=torch.float32))


# ----- 8. a cached config that fails at launch is re-tuned once ----------------------------------------
def test_cached_config_that_fails_at_launch_is_retuned_once_with_a_warning(fresh_cache):
    n = 100
    x = torch.arange(n, dtype=torch.float32)

    def make():
        return tiletune.autotune(configs=[], key=["n"], hints={"VARIANT": [0, 1]})(hk.variant_copy)

    def launch(kernel):
        out = torch.zeros(n)
        kernel[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, out, n)
        return out

    assert torch.equal(launch(make()), x * 2)
    (path,) = (fresh_cache / "kernel").glob("variant_copy-*.json")
    data = json.loads(path.read_text())
    (key,) = data["entries"]
    assert data["entries"][key]["config"]["kwargs"]["VARIANT"] == 1  # VARIANT=0 fails at launch
    data["entries"][key]["config"]["kwargs"]["VARIANT"] = 0  # passes every check: a hinted value
    path.write_text(json.dumps(data))

    kernel = make()
    out, said = _caught(lambda: launch(kernel))
    assert torch.equal(out, x * 2)
    assert len(said) == 1 and "failed at launch" in said[0] and "VARIANT=0" in said[0] and str(path) in said[0], said
    assert kernel.configs_timings  # tuned again
    assert json.loads(path.read_text())["entries"][key]["config"]["kwargs"]["VARIANT"] == 1  # entry replaced
    out, said = _caught(lambda: launch(kernel))
    assert torch.equal(out, x * 2) and said == []
    out, said = _caught(lambda: launch(make()))  # a fresh process's view: the new entry is a hit
    assert torch.equal(out, x * 2) and said == []


def test_a_launch_error_after_a_fresh_tuning_is_the_users(fresh_cache):
    """Only a cached config's failure is re-tuned: a tuned config's launch error reaches the caller."""
    kernel = tiletune.autotune(configs=[], key=["n"])(hk.copy_even)
    with pytest.raises(Exception):
        kernel[lambda m: (triton.cdiv(100, m["BLOCK"]),)](torch.zeros(100), "not a tensor", 100)


# ----- 7. the function tuner names a config that runs past autotune_timeout_s ----------------------------
def test_function_tuner_warns_naming_a_config_that_has_not_returned_by_its_timeout(tmp_path):
    """A config whose call is still running at its deadline is named while it runs (here it returns only
    once warned; the clock is virtual, so nothing depends on the machine's speed)."""
    import logging
    import threading

    from tiletune.runtime.bench import VirtualClock, set_clock
    from tiletune.tune import autotune as tune_function

    clock = VirtualClock()
    previous = set_clock(clock)
    released = threading.Event()

    class Release(logging.Handler):
        def emit(self, record):
            if "has run for more than autotune_timeout_s" in record.getMessage():
                released.set()

    handler = Release()
    logging.getLogger("tiletune.tune").addHandler(handler)
    woke = []
    try:
        @tune_function([{"mode": "fast"}, {"mode": "stuck"}], key_fn=None, cache_dir=tmp_path,
                       autotune_timeout_s=1.0, warmup=1, rep=1)
        def f(mode):
            if mode == "stuck" and not released.is_set():
                clock.advance(5e3)  # 5 s pass on the clock, and the call has not returned
                woke.append(released.wait(120))  # returns once the watchdog has named it
            else:
                clock.advance(1)
            return mode

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert f() == "fast"
    finally:
        set_clock(previous)
        logging.getLogger("tiletune.tune").removeHandler(handler)
    assert woke == [True], "the stuck config was never named while it ran"
    said = [str(w.message) for w in caught if "has run for more than" in str(w.message)]
    assert len(said) == 1 and "{mode='stuck'}" in said[0] and "autotune_timeout_s=1" in said[0], said


# ----- 10. a candidate that faults costs the search that candidate, not the user's process ----------------
def test_a_candidate_that_kills_its_worker_is_left_out_and_the_process_goes_on(fresh_cache, monkeypatch):
    """TILETUNE_ISOLATE_FIRST_LAUNCH=1: each candidate's first launch runs in a worker on copies of the
    tensors; the worker kills itself (SIGSEGV) after launching any UNROLL=2 candidate, as a GPU fault would."""
    monkeypatch.setenv("TILETUNE_ISOLATE_FIRST_LAUNCH", "1")
    monkeypatch.setenv("TILETUNE_ISOLATE_FAULT_INJECT", "UNROLL=2")
    n = 100
    x = torch.arange(n, dtype=torch.float32)
    out = torch.zeros(n)
    kernel = tiletune.autotune(configs=[], key=["n"], hints={"UNROLL": [1, 2]})(hk.unrolled_copy)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kernel[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, out, n)
    assert torch.equal(out, x * 2)
    assert kernel.best_config.kwargs["UNROLL"] == 1
    said = [str(w.message) for w in caught if "killed the worker process" in str(w.message)]
    assert said and all("UNROLL=2" in s and "signal 11" in s for s in said), said
    timed = {c.kwargs["UNROLL"]: t for c, t in kernel.configs_timings.items()}
    assert 1 in timed  # the survivors were measured in this process


def test_the_worker_launches_the_function_the_user_tuned_not_the_library_wrapper_around_it(fresh_cache, monkeypatch):
    """The kernel's module exports heuristics(autotune(jit)) (a library's own tuning); the user tunes the jit
    function. The worker must launch that jit function with the candidate, not the library's autotuner."""
    monkeypatch.setenv("TILETUNE_ISOLATE_FIRST_LAUNCH", "1")
    monkeypatch.setenv("TILETUNE_ISOLATE_FAULT_INJECT", "UNROLL=2")
    n = 100
    x, out = torch.arange(n, dtype=torch.float32), torch.zeros(n)
    kernel = tiletune.autotune(configs=[], key=["n"], hints={"UNROLL": [1, 2]})(hk.library_tuned_copy.fn.fn)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kernel[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, out, n, SCALE=2)
    assert torch.equal(out, x * 2)
    said = [str(w.message) for w in caught if "killed the worker process" in str(w.message)]
    assert said and all("UNROLL=2" in s for s in said), said  # only the injected fault, no wrapper failure
    assert kernel.best_config.kwargs["UNROLL"] == 1


def test_without_the_switch_no_worker_runs(fresh_cache, monkeypatch):
    monkeypatch.delenv("TILETUNE_ISOLATE_FIRST_LAUNCH", raising=False)
    monkeypatch.setenv("TILETUNE_ISOLATE_FAULT_INJECT", "UNROLL=")
    n = 100
    x, out = torch.arange(n, dtype=torch.float32), torch.zeros(n)
    kernel = tiletune.autotune(configs=[], key=["n"], hints={"UNROLL": [1, 2]})(hk.unrolled_copy)
    (_, said) = _caught(lambda: kernel[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, out, n))
    assert torch.equal(out, x * 2) and {c.kwargs["UNROLL"] for c in kernel.configs_timings} == {1, 2}
