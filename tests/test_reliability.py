"""Hardening (issue 12): bad cache contents, edited helpers, hanging configs, side effects, odd sources.

Every case runs with real files, real processes (where a user's process is
what matters) and Triton's interpreter, each under a timeout, and checks
that the user sees no traceback, no hang, no wrong output and no lost cache
entry.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest
import torch
import triton

import tiletune
from tiletune.errors import AnalysisError, TiletuneCacheWarning, TiletuneWarning, TuningError
from tiletune.runtime.cache import read_cache_file
from tiletune.tune import autotune as tune_function

ROOT = Path(__file__).resolve().parent.parent
WORKER = ROOT / "tests" / "reliability_worker.py"
TIMEOUT_S = 300


@pytest.fixture(autouse=True)
def _case_timeout(request):
    """Every case ends within its time limit: a hang fails the case instead of the run."""
    import signal

    limit = 960 if request.node.get_closest_marker("slow") else TIMEOUT_S

    def expired(signum, frame):
        raise TimeoutError(f"{request.node.name} ran for more than {limit} s (a hang)")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(limit)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def _env(cache: Path, **extra: str) -> dict:
    env = dict(os.environ, TRITON_INTERPRET="1", TILETUNE_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    env.pop("TILETUNE_ALWAYS_TUNE", None)
    env.update(extra)
    return env


def _run_worker(cache: Path, sizes, cwd: Path = ROOT, script: Path = WORKER) -> dict:
    proc = subprocess.run([sys.executable, str(script), *map(str, sizes)], env=_env(cache), cwd=cwd,
                          capture_output=True, text=True, timeout=TIMEOUT_S)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _cache_warnings(report: dict) -> list:
    return [text for cat, text in report["warnings"] if cat == "TiletuneCacheWarning"]


# ----- 1. cached values are validated before use --------------------------------------------
BAD_CONFIGS = {
    # size: (stored config, what the warning must say)
    101: ({"kwargs": {}}, "BLOCK missing"),
    102: ({"kwargs": {"BLOCK": "abc"}}, "not an integer"),
    103: ({"kwargs": {"BLOCK": 3}}, "not a power of two"),
    104: ({"kwargs": {"BLOCK": 2 ** 30}}, "largest tensor"),
    105: ({"kwargs": {"BLOCK": -64}}, "below its minimum"),
    106: ({"kwargs": {"BLOCK": 64}, "num_warps": 3}, "num_warps=3"),
    107: ({"kwargs": {"BLOCK": 64, "NOT_A_PARAM": 1}}, "not a parameter"),
    108: ("garbage", "no config object"),
    109: ({"kwargs": {"BLOCK": 64, "n": 5}}, "passed at launch"),
    110: ({"kwargs": {"BLOCK": 64}, "num_stages": -1}, "num_stages=-1"),
    111: ({"kwargs": {"BLOCK": True}}, "not an integer"),
}
GOOD_SIZE = 112


@pytest.fixture(scope="module")
def populated(tmp_path_factory) -> tuple:
    """A cache written by a first process: one entry per size."""
    cache = tmp_path_factory.mktemp("cache")
    report = _run_worker(cache, [*BAD_CONFIGS, GOOD_SIZE])
    assert all(r["ok"] for r in report["results"].values())
    return cache, Path(report["cache"])


def _entry_sizes(path: Path) -> dict:
    data, reason = read_cache_file(path)
    assert reason is None
    return {json.loads(k)["key"][0]: v for k, v in data["entries"].items()}


def test_bad_cached_values_warn_retune_and_are_replaced(populated, tmp_path):
    from tiletune.runtime.cache_validate import config_problems

    cache_src, path_src = populated
    cache = tmp_path / "cache"
    (cache / "kernel").mkdir(parents=True)
    path = cache / "kernel" / path_src.name
    data = json.loads(path_src.read_text())
    by_size = {json.loads(k)["key"][0]: k for k in data["entries"]}
    good_before = data["entries"][by_size[GOOD_SIZE]]["config"]
    for size, (config, _) in BAD_CONFIGS.items():
        data["entries"][by_size[size]]["config"] = config
    path.write_text(json.dumps(data))

    report = _run_worker(cache, [*BAD_CONFIGS, GOOD_SIZE])
    assert all(r["ok"] for r in report["results"].values()), report["results"]
    texts = _cache_warnings(report)
    for size, (_, reason) in BAD_CONFIGS.items():
        mine = [t for t in texts if by_size[size] in t]
        assert len(mine) == 1 and reason in mine[0] and str(path) in mine[0], (size, texts)
    assert not [t for t in texts if by_size[GOOD_SIZE] in t]
    # 0 lost entries: every key is there again, the bad ones replaced by usable configs, the good one kept
    entries = _entry_sizes(path)
    assert set(entries) == {*BAD_CONFIGS, GOOD_SIZE}
    assert entries[GOOD_SIZE]["config"] == good_before
    for size, entry in entries.items():
        assert config_problems(entry["config"], kernel_name="add_kernel", arg_names=["x_ptr", "y_ptr", "out_ptr", "n", "BLOCK"],
                               spec=None) == [], (size, entry)
        assert isinstance(entry["config"]["kwargs"]["BLOCK"], int) and entry["config"]["kwargs"]["BLOCK"] > 0


@pytest.mark.parametrize("kind", ["fifo", "directory", "deep_json"])
def test_unreadable_cache_file_never_blocks_or_crashes(populated, tmp_path, kind):
    _, path_src = populated
    cache = tmp_path / "cache"
    (cache / "kernel").mkdir(parents=True)
    path = cache / "kernel" / path_src.name
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        path.write_text("[" * 100_000 + "]" * 100_000)
    report = _run_worker(cache, [GOOD_SIZE])  # within the worker's TIMEOUT_S, or it failed
    assert report["results"][str(GOOD_SIZE)]["ok"]
    texts = _cache_warnings(report)
    assert texts and any(str(path) in t for t in texts), report["warnings"]
    # the thing in the way was moved aside and a real cache file written
    assert path.is_file() and len(_entry_sizes(path)) == 1
    for command in (["list"], ["show", "add_kernel"], ["show", "add_kernel", "--json"]):
        proc = subprocess.run([sys.executable, "-m", "tiletune.runtime.cache_cli", *command, "--dir", str(cache)],
                              env=_env(cache), capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr


def test_cache_cli_on_fifo_and_deep_json(tmp_path):
    kernel_dir = tmp_path / "kernel"
    kernel_dir.mkdir()
    os.mkfifo(kernel_dir / "a_kernel-0000000000000000.json")
    (kernel_dir / "b_kernel-0000000000000000.json").write_text("[" * 100_000 + "]" * 100_000)
    for command in (["list"], ["show", "a_kernel"], ["show", "b_kernel"], ["show", "b_kernel", "--json"]):
        proc = subprocess.run([sys.executable, "-m", "tiletune.runtime.cache_cli", *command, "--dir", str(tmp_path)],
                              env=_env(tmp_path), capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, (command, proc.stderr)
        assert "FIFO" in proc.stdout or "nested" in proc.stdout or "corrupt" in proc.stdout, proc.stdout


# ----- 2. editing a @triton.jit helper re-tunes -----------------------------------------------
HELPERS = '''\
import triton
import triton.language as tl


@triton.jit
def inner(x):
    return x + {add}


@triton.jit
def twice(x):
    {check}return inner(x) * 2
'''

KERNEL = '''\
import json, sys
import torch, triton
import triton.language as tl
import tiletune
from pkg.helpers import twice


@triton.jit
def local(x):
    return x


@tiletune.autotune(configs=[], key=["n"])
@triton.jit
def helper_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, local(twice(tl.load(x_ptr + offs, mask=m))), mask=m)


n = 1000
x = torch.arange(n, dtype=torch.float32)
y = torch.zeros(n)
helper_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n)
print(json.dumps({"y": y[:4].tolist(), "config": helper_kernel.best_config.kwargs}))
'''


def test_editing_an_imported_helper_retunes(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text(HELPERS.format(add=1, check=""))
    script = pkg / "kern.py"
    script.write_text(KERNEL)
    cache = tmp_path / "cache"

    def run() -> dict:
        proc = subprocess.run([sys.executable, "-m", "pkg.kern"], cwd=tmp_path, env=_env(cache, PYTHONPATH=f"{tmp_path}:{ROOT}"),
                              capture_output=True, text=True, timeout=TIMEOUT_S)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
        return json.loads(proc.stdout.strip().splitlines()[-1])

    assert run()["y"] == [2.0, 4.0, 6.0, 8.0]
    files = sorted((cache / "kernel").glob("helper_kernel-*.json"))
    assert len(files) == 1
    (pkg / "helpers.py").write_text(HELPERS.format(add=2, check=""))
    assert run()["y"] == [4.0, 6.0, 8.0, 10.0]
    assert len(list((cache / "kernel").glob("helper_kernel-*.json"))) == 2  # a new cache file: re-tuned
    # a static_assert added to the helper: the old winner (BLOCK > 64) must not be launched
    (pkg / "helpers.py").write_text(HELPERS.format(add=2, check="tl.static_assert(x.shape[0] <= 64)\n    "))
    out = run()
    assert out["y"] == [4.0, 6.0, 8.0, 10.0] and out["config"]["BLOCK"] <= 64
    assert len(list((cache / "kernel").glob("helper_kernel-*.json"))) == 3


# ----- 3. function tuner: timeout and keys ------------------------------------------------------
@pytest.fixture
def virtual_clock():
    """The measuring clock, made deterministic: a config "takes" the time it advances it by."""
    from tiletune.runtime.bench import VirtualClock, set_clock

    clock = VirtualClock()
    previous = set_clock(clock)
    yield clock
    set_clock(previous)


def test_function_tuner_drops_a_config_past_its_timeout_and_never_caches_it(tmp_path, virtual_clock):
    calls = {"slow": 0}

    @tune_function([{"delay": 0.0}, {"delay": 5.0}], key_fn=lambda n: n, cache_dir=tmp_path,
                   autotune_timeout_s=0.5, warmup=2, rep=5)
    def f(n, delay):
        if delay:
            calls["slow"] += 1
        virtual_clock.advance(1 + delay * 1e3)
        return delay

    assert f(1) == 0.0
    assert calls["slow"] == 1  # dropped after its first call (5 s), not after 7 calls (35 s)
    data, _ = read_cache_file(f.cache.path)
    (entry,) = data["entries"].values()
    assert entry["config"] == {"delay": 0.0}
    assert [t["ms"] for t in entry["timings_ms"] if t["config"] == {"delay": 5.0}] == [None]


def test_function_tuner_when_every_config_times_out(tmp_path, virtual_clock):
    g = tune_function([{"delay": 0.3}, {"delay": 0.4}], key_fn=None, cache_dir=tmp_path, autotune_timeout_s=0.1,
                      warmup=1, rep=1)(lambda delay: virtual_clock.advance(delay * 1e3))
    with pytest.raises(TuningError, match="autotune_timeout_s"):
        g()
    assert not (g.cache.path.exists() and read_cache_file(g.cache.path)[0]["entries"])


def test_function_tuner_timeout_is_real_time_by_default(tmp_path):
    """Without an installed clock the budget is wall time: a config that sleeps past it is dropped."""
    calls = []

    def fn(delay):
        calls.append(delay)
        time.sleep(delay)
        return delay

    f = tune_function([{"delay": 0.0}, {"delay": 1.0}], key_fn=None, cache_dir=tmp_path, autotune_timeout_s=0.2,
                      warmup=3, rep=10)(fn)
    assert f() == 0.0
    assert calls.count(1.0) == 1  # the sleeper ran once (1 s, past the 0.2 s budget), not 13 times


@pytest.mark.parametrize("key", ["cyclic", "nan", "inf", "deep"])
def test_function_tuner_rejects_unusable_keys(tmp_path, key):
    value = {"cyclic": None, "nan": float("nan"), "inf": [1, {"a": math.inf}], "deep": None}[key]
    if key == "cyclic":
        value = [1]
        value.append(value)
    if key == "deep":
        value = []
        for _ in range(10_000):
            value = [value]
    f = tune_function([{"c": 1}], key_fn=lambda: value, cache_dir=tmp_path)(lambda c: c)
    with pytest.raises(TypeError, match="key_fn returned"):
        f()


@pytest.mark.parametrize("bad", [0, -1, "soon", float("nan")])
def test_function_tuner_rejects_bad_timeouts(tmp_path, bad):
    with pytest.raises(TuningError, match="autotune_timeout_s"):
        tune_function([{"c": 1}], key_fn=None, cache_dir=tmp_path, autotune_timeout_s=bad)(lambda c: c)


# ----- 4. side-effect kernels are safe by default ------------------------------------------------
import fixtures.histogram as histogram_fixture  # noqa: E402
import fixtures.scale_inplace as scale_fixture  # noqa: E402
from tests import side_effect_kernels as sek  # noqa: E402


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TILETUNE_ALWAYS_TUNE", raising=False)
    return tmp_path / "cache"


def _cases():
    """(name, kernel, make the launch's arguments, launch(kernel, args, **meta), block parameter)."""

    def scale_args():
        torch.manual_seed(0)
        return scale_fixture.make_args({"n_elements": 1000})

    def scale_launch(kernel, a, **meta):
        scale_fixture.launch(kernel, a, **meta)

    def hist_args():
        torch.manual_seed(1)
        return histogram_fixture.make_args({"n_elements": 1000, "NUM_BINS": 16})

    def hist_launch(kernel, a, **meta):
        histogram_fixture.launch(kernel, a, **meta)

    def sum_args():
        return {"x_ptr": torch.arange(1000, dtype=torch.float32), "total_ptr": torch.full((1,), 5.0), "n": 1000}

    def max_args():
        torch.manual_seed(2)
        return {"x_ptr": torch.randn(1000), "best_ptr": torch.zeros(4), "n": 1000}

    def track_args():
        return {"x_ptr": torch.arange(256, dtype=torch.float32) / 256, "seen_ptr": torch.zeros(1), "n": 256}

    def n_launch(kernel, a, **meta):
        n = a["n"]
        kernel[lambda m: (triton.cdiv(n, m["BLOCK"]),)](**a, **meta)

    return {
        "in_place": (scale_fixture.KERNEL, ["n_elements"], scale_args, scale_launch, "BLOCK_SIZE", True),
        "atomic_add_histogram": (histogram_fixture.KERNEL, ["n_elements"], hist_args, hist_launch, "BLOCK_SIZE", True),
        "atomic_add_sum": (sek.sum_into, ["n"], sum_args, n_launch, "BLOCK", True),
        "atomic_max": (sek.running_max, ["n"], max_args, n_launch, "BLOCK", False),
        # restored after every benchmarked launch, not only at the end: seen must stay one launch's max
        "in_place_tracked": (sek.double_and_track, ["n"], track_args, n_launch, "BLOCK", True),
    }


CASES = _cases()


@pytest.mark.parametrize("name", list(CASES))
def test_side_effect_kernels_tuned_with_no_hooks_equal_one_untuned_launch(fresh_cache, name):
    kernel, key, make_args, launch, block, protected = CASES[name]
    expected = make_args()
    launch(kernel, expected, **{block: 64})  # one untuned launch
    args = make_args()
    tuned = tiletune.autotune(configs=[], key=key)(kernel)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        launch(tuned, args)
    said = [w for w in caught if issubclass(w.category, TiletuneWarning) and "writes into its inputs" in str(w.message)]
    assert len(said) == (1 if protected else 0), [str(w.message) for w in caught]
    for arg, value in expected.items():
        if isinstance(value, torch.Tensor):
            assert torch.allclose(args[arg], value, rtol=1e-6, atol=1e-5), (arg, args[arg], value)
    # a second launch (cached winner, no tuning) acts exactly as a second untuned launch
    launch(kernel, expected, **{block: 64})
    launch(tuned, args)
    for arg, value in expected.items():
        if isinstance(value, torch.Tensor):
            assert torch.allclose(args[arg], value, rtol=1e-6, atol=1e-5), arg


def test_side_effects_error_refuses_and_ignore_keeps_triton_behaviour(fresh_cache, monkeypatch):
    kernel, key, make_args, launch, block, _ = CASES["atomic_add_sum"]
    refusing = tiletune.autotune(configs=[], key=key, side_effects="error")(kernel)
    with pytest.raises(TuningError, match=r"total_ptr.*side_effects='error'.*restore_value"):
        launch(refusing, make_args())
    with pytest.raises(TuningError, match="side_effects='sometimes'"):
        tiletune.autotune(configs=[], key=key, side_effects="sometimes")(kernel)
    # restore_value covers it: no protection, no message, and the result is still one launch's
    args = make_args()
    covered = tiletune.autotune(configs=[], key=key, restore_value=["total_ptr"])(kernel)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        launch(covered, args)
    assert not [w for w in caught if "writes into its inputs" in str(w.message)]
    assert args["total_ptr"].item() == 5.0 + sum(range(1000))
    monkeypatch.setenv("TILETUNE_ALWAYS_TUNE", "1")  # tune again (the winner above is cached)
    # Triton's behaviour needs the agreement check off too: it snapshots what the candidates write
    ignoring = tiletune.autotune(configs=[], key=key, side_effects="ignore", verify=False)(kernel)
    args = make_args()
    launch(ignoring, args)
    assert args["total_ptr"].item() > 5.0 + 2 * sum(range(1000))  # accumulated by every benchmarked launch
    checked = tiletune.autotune(configs=[], key=key, side_effects="ignore")(kernel)
    args = make_args()
    launch(checked, args)
    assert args["total_ptr"].item() == 5.0 + sum(range(1000))  # the check's snapshot: one launch's result


def test_aliased_output_is_protected(fresh_cache):
    x = torch.arange(100, dtype=torch.float32)
    tuned = tiletune.autotune(configs=[], key=["n"])(sek.add_one)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tuned[lambda m: (triton.cdiv(100, m["BLOCK"]),)](x, x, 100)  # the same tensor in and out
    assert torch.equal(x, torch.arange(100, dtype=torch.float32) + 1)
    assert any("shares memory" in str(w.message) for w in caught)
    out = torch.zeros(100)
    y = torch.arange(100, dtype=torch.float32)
    tuned[lambda m: (triton.cdiv(100, m["BLOCK"]),)](y, out, 100)  # separate output: nothing to protect
    assert torch.equal(out, y + 1) and torch.equal(y, torch.arange(100, dtype=torch.float32))


# ----- 6. warnings by default ---------------------------------------------------------------------
def _tiletune_warnings(fn) -> list:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [str(w.message) for w in caught if issubclass(w.category, TiletuneWarning)]


def test_tuning_warnings_point_at_the_users_launch_line(fresh_cache):
    """However many tiletune and Triton frames lie between, the warning names this file."""
    x, out = torch.arange(100, dtype=torch.float32), torch.zeros(100)
    tuned = tiletune.autotune(configs=[], key=["n"])(sek.add_one)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tuned[lambda m: (triton.cdiv(100, m["BLOCK"]),)](x, out, 100, BLOCK=32)
    ours = [w for w in caught if issubclass(w.category, TiletuneWarning)]
    assert ours and all(w.filename == __file__ for w in ours), [(w.filename, w.lineno) for w in ours]


def test_launch_fixed_tiling_parameter_and_nothing_to_tune_warn_by_default(fresh_cache):
    x, out = torch.arange(100, dtype=torch.float32), torch.zeros(100)
    tuned = tiletune.autotune(configs=[], key=["n"])(sek.add_one)
    said = _tiletune_warnings(lambda: tuned[lambda m: (triton.cdiv(100, m["BLOCK"]),)](x, out, 100, BLOCK=32))
    assert any("BLOCK is passed at launch" in s for s in said), said
    assert any("nothing to tune" in s for s in said), said
    assert torch.equal(out, x + 1)
    fixed = tiletune.autotune(configs=[], key=["n"])(sek.copy_fixed)
    said = _tiletune_warnings(lambda: fixed[lambda m: (triton.cdiv(100, 128),)](x, out, 100))
    assert any("nothing to tune" in s and "BLOCK: has a default" in s for s in said), said
    # said once per kernel
    assert not _tiletune_warnings(lambda: fixed[lambda m: (triton.cdiv(50, 128),)](x, out, 50))


# ----- 7. timing-driven tests do not flake on a busy machine --------------------------------------
SATURATED_TESTS = [  # every test whose winner is decided by timings (now virtual ones)
    "tests/test_contextual.py",
    "tests/test_dist_autotune.py::test_explicit_configs_ranks_with_different_timings_agree",
    "tests/test_distributed.py::test_ranks_with_different_timings_agree",
    "tests/test_distributed.py::test_sharded_tuning_splits_configs_and_agrees",
    "tests/test_function_tuner.py",
]
#: Not the slow tests of those files: they compile for sm_90 (tests/test_function_tuner.py), no timing decides
#: them, and the suite runs them already (under the burners they only made this test longer).
SATURATED_SELECT = ["-m", "not slow"]


@pytest.mark.slow
def test_timing_driven_tests_pass_on_a_saturated_machine(tmp_path):
    """The distributed and contextual tests, run while two CPU burners keep both cores busy."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *SATURATED_SELECT,
                               *SATURATED_TESTS],
                              cwd=ROOT, env=_env(tmp_path / "cache"), capture_output=True, text=True, timeout=900)
    finally:
        for b in burners:
            b.kill()
        for b in burners:
            b.wait(timeout=30)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


# ----- 5. analyser and lint on any input -----------------------------------------------------------
FLAT = '''\
import triton
import triton.language as tl


@triton.autotune(configs=[], key=["n"])
@triton.jit
def flat_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x0 = x1 = x2 = tl.load(x_ptr + offs, mask=offs < n)
    y = {terms}
    tl.store(x_ptr + offs, y, mask=offs < n)
'''


def _flat(terms: int) -> str:
    return FLAT.format(terms=" + ".join(f"x{i % 3}" for i in range(terms)))


def _tiletune(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    # (analyze, lint and synth-configs never write the cache; it points at a directory that is never made)
    return subprocess.run([sys.executable, "-m", "tiletune.cli", *args], cwd=cwd, env=_env(cwd / ".no-cache-here"),
                          capture_output=True, text=True, timeout=TIMEOUT_S)


@pytest.mark.parametrize("terms", [500, 2500])
def test_long_flat_sums_are_analysed(tmp_path, terms):
    from tiletune.analysis import analyze_file

    path = tmp_path / "flat.py"
    path.write_text(_flat(terms))
    (kernel,) = analyze_file(str(path)).kernels
    assert kernel.name == "flat_kernel" and [p.name for p in kernel.tiling_params] == ["BLOCK"]


def test_deeper_expressions_are_refused_with_a_located_error(tmp_path):
    from tiletune.analysis import analyze_file

    path = tmp_path / "flat.py"
    path.write_text(_flat(5000))
    with pytest.raises(AnalysisError) as info:
        analyze_file(str(path))
    assert info.value.line == 10 and "too deep" in str(info.value) and str(path) in str(info.value)


def test_lint_dir_keeps_every_file_and_reads_encodings_as_python_does(tmp_path):
    from tiletune.lint.registry import all_rules

    bad = next(r for r in all_rules() if r.code == "TT003").bad
    (tmp_path / "a_ok.py").write_text(bad)
    (tmp_path / "b_flat.py").write_text(_flat(5000))
    (tmp_path / "c_bom.py").write_bytes(b"\xef\xbb\xbf" + bad.encode())
    latin = "# -*- coding: latin-1 -*-\n# caf\u00e9\n" + bad
    (tmp_path / "d_latin.py").write_bytes(latin.encode("latin-1"))
    (tmp_path / "e_syntax.py").write_text("import triton\n@triton.jit\ndef k(:\n")
    proc = _tiletune("lint", str(tmp_path), cwd=tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    by_file = {}
    for line in proc.stdout.splitlines():
        path, _, rest = line.partition(":")
        by_file.setdefault(Path(path).name, []).append(rest.split(": ", 1)[1].split()[0] if ": " in rest else rest)
    assert by_file["a_ok.py"] and "TT000" not in by_file["a_ok.py"]
    assert by_file["c_bom.py"] == by_file["a_ok.py"] and by_file["d_latin.py"] == by_file["a_ok.py"]
    assert by_file["b_flat.py"] == ["TT000"] and by_file["e_syntax.py"] == ["TT000"]
    for name in ("c_bom.py", "d_latin.py"):
        out = _tiletune("analyze", str(tmp_path / name), cwd=tmp_path)
        assert out.returncode == 0 and "kernel add_kernel" in out.stdout, out.stderr


# ----- 8. CLI conventions ---------------------------------------------------------------------------
def test_cli_version_and_synth_configs_subcommand():
    version = _tiletune("--version")
    assert version.returncode == 0 and version.stdout.startswith("tiletune ") and tiletune.__version__ in version.stdout
    sub = _tiletune("synth-configs", "fixtures/vector_add.py", "--shape", "n_elements=4096", "--target", "h100")
    assert sub.returncode == 0 and "triton.Config(" in sub.stdout, sub.stderr
    assert "synth-configs" in _tiletune("--help").stdout


@pytest.mark.parametrize("args, message", [
    (["--shape", "n_elements=0"], "sizes must be positive"),
    (["--shape", "n_elements=-7"], "sizes must be positive"),
    (["--shape", "n_elements=64", "--shape", "nelements=64"], "no parameter 'nelements'"),
    (["--shape", "n_elements=64", "--dtype", "xptr=fp16"], "no parameter 'xptr'"),
    (["--shape", "n_elements=64", "--dtype", "x_ptr=fp17"], "unknown dtype"),
    (["--shape", "n_elements=64", "--dtype", "n_elements=fp16"], "not a pointer"),
    (["--shape", "n_elements=64", "--hint", "BLOCK_SIZE=48,64"], "must be a power of two"),
    (["--shape", "n_elements=64", "--fixed", "BLOCK_SIZE=100"], "must be a power of two"),
    (["--shape", "n_elements=64", "--shape", "BLOCK_SIZE=3"], "must be a power of two"),
    (["--shape", "n_elements=64", "--hint", "GROUP=1,2"], "no parameter 'GROUP'"),
])
def test_synth_configs_rejects_bad_arguments(args, message):
    proc = _tiletune("synth-configs", "fixtures/vector_add.py", "--target", "h100", *args)
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_progress_bar_on_a_terminal_only(tmp_path):
    import pty

    for i in range(3):
        (tmp_path / f"k{i}.py").write_text(_flat(5))
    for command in ("analyze", "lint"):
        master, slave = pty.openpty()
        proc = subprocess.Popen([sys.executable, "-m", "tiletune.cli", command, str(tmp_path)], cwd=tmp_path,
                                env=_env(tmp_path / "cache", TILETUNE_LINT_JOBS="1"), stdout=subprocess.DEVNULL,
                                stderr=slave)
        os.close(slave)
        seen = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        os.close(master)
        assert proc.wait(timeout=TIMEOUT_S) in (0, 1)
        assert f"tiletune {command}".encode() in seen, (command, seen[-500:])
        piped = _tiletune(command, str(tmp_path), cwd=tmp_path)
        assert f"tiletune {command}" not in piped.stderr


def test_edited_entry_of_a_hand_config_list_warns_and_retunes(fresh_cache):
    configs = [triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})]
    x, out = torch.arange(100, dtype=torch.float32), torch.zeros(100)

    def launch(kernel):
        kernel[lambda m: (triton.cdiv(100, m["BLOCK"]),)](x, out, 100)

    launch(tiletune.autotune(configs=configs, key=["n"])(sek.add_one))
    (path,) = (fresh_cache / "kernel").glob("add_one-*.json")
    data = json.loads(path.read_text())
    (key,) = data["entries"]
    data["entries"][key]["config"]["kwargs"]["BLOCK"] = 48
    path.write_text(json.dumps(data))
    out.zero_()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        launch(tiletune.autotune(configs=configs, key=["n"])(sek.add_one))
    said = [str(w.message) for w in caught if issubclass(w.category, TiletuneCacheWarning)]
    assert len(said) == 1 and "is not one of the kernel's 2 configs" in said[0] and str(path) in said[0]
    assert torch.equal(out, x + 1)
    assert json.loads(path.read_text())["entries"][key]["config"]["kwargs"]["BLOCK"] in (32, 64)


def test_fifo_in_place_of_the_tuning_log_never_blocks(populated, tmp_path):
    _, path_src = populated
    cache = tmp_path / "cache"
    (cache / "logs").mkdir(parents=True)
    os.mkfifo(cache / "logs" / path_src.name.replace(".json", ".jsonl"))
    report = _run_worker(cache, [GOOD_SIZE])
    assert report["results"][str(GOOD_SIZE)]["ok"]
    assert any("tuning log" in text for _, text in report["warnings"]), report["warnings"]
