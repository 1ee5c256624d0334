"""tiletune.tune.autotune without a process group: keys, pruning, failures, cache, restore_args."""

from __future__ import annotations

import dataclasses
import enum
import json
import logging

import pytest
import torch
import triton

from tiletune.errors import TuningError
from tiletune.runtime.bench import VirtualClock, set_clock
from tiletune.runtime.cache import StaleCacheEntryError, environment_fingerprint, read_cache_file
from tiletune.tune import autotune, config_label, config_material, to_hashable, to_key_material

CALLS: list = []
SPACE = [{"c": 0}, {"c": 1}, {"c": 2}]
SLEEP_MS = {0: 12.0, 1: 2.0, 2: 7.0}  # config 1 is fastest
# The time a config takes is virtual: measurements read this clock and the functions advance it
# (instead of sleeping), so a busy machine cannot change a winner.
CLOCK = VirtualClock()


@pytest.fixture(autouse=True)
def _clean(monkeypatch, tmp_path):
    CALLS.clear()
    for var in ("TILETUNE_ALWAYS_TUNE", "TRITON_DIST_AUTOTUNE_ALWAYS_TUNE", "TILETUNE_VERSION_CHECK",
                "TRITON_DIST_AUTOTUNE_VERSION_CHECK", "TRITON_PRINT_AUTOTUNING"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(tmp_path / "cache"))
    previous = set_clock(CLOCK)
    yield
    set_clock(previous)


def sleepy(x, *, c):
    CALLS.append(c)
    CLOCK.advance(SLEEP_MS[c])
    return x * 0 + c


def tuned(fn=sleepy, space=SPACE, **kw):
    kw.setdefault("warmup", 1)
    kw.setdefault("rep", 2)
    kw.setdefault("name", "tests.sleepy")
    return autotune(space, key_fn=kw.pop("key_fn", lambda x: x), prune_fn=kw.pop("prune_fn", None), **kw)(fn)


def cache_file(tmp_path, name="tests.sleepy"):
    (path,) = (tmp_path / "cache" / "function").glob(f"{name}-*.json")
    return path


# ---------------------------------------------------------------- keys


class Mode(enum.Enum):
    FAST = 1


@dataclasses.dataclass
class Shape:
    m: int
    dtype: torch.dtype


def test_to_hashable_and_key_material():
    t = torch.zeros(4, 6, dtype=torch.float16)[:, ::2]
    assert to_hashable(t) == ("tensor", (4, 3), "torch.float16", (6, 2), "cpu")
    assert to_hashable([1, (2.5, "a"), None, True]) == (1, (2.5, "a"), None, True)
    assert to_hashable({"b": 1, "a": torch.float32}) == ("dict", (("a", "torch.float32"), ("b", 1)))
    assert to_hashable(torch.device("cpu")) == "cpu"
    assert to_hashable(Mode.FAST)[::2] == ("enum", "FAST")
    h = to_hashable(Shape(3, torch.bfloat16))
    assert h[0] == "dataclass" and h[2] == (("m", 3), ("dtype", "torch.bfloat16"))
    assert to_hashable(torch.Size([2, 3])) == (2, 3)
    hash(to_hashable({"x": [t, Shape(1, torch.int8)]}))
    assert to_key_material((t, {"k": (1, 2)})) == [
        ["tensor", [4, 3], "torch.float16", [6, 2], "cpu"],
        ["dict", [["k", [1, 2]]]],
    ]
    json.dumps(to_key_material({"x": [t, Shape(1, torch.int8), Mode.FAST]}))
    with pytest.raises(TypeError, match="key_fn"):
        to_hashable(object())
    with pytest.raises(TypeError, match="set"):
        to_hashable({1, 2})


def test_config_material_and_label():
    cfg = {"gemm": triton.Config({"BLOCK_M": 64}, num_warps=4), "dtype": torch.float16, "n": 2}
    m = config_material(cfg)
    assert m["gemm"]["__triton_config__"]["kwargs"] == {"BLOCK_M": 64}
    assert m == config_material({"gemm": triton.Config({"BLOCK_M": 64}, num_warps=4), "dtype": torch.float16, "n": 2})
    json.dumps(m)
    assert "BLOCK_M: 64" in config_label(cfg) and "n=2" in config_label(cfg)


def test_key_fn_decides_when_to_tune():
    f = tuned()
    assert f(torch.zeros(2)).tolist() == [1.0, 1.0]
    assert len(CALLS) == 3 * 3 + 1  # (warmup 1 + rep 2) per config, then the winner
    CALLS.clear()
    f(torch.ones(2))  # same shape/dtype: same key
    assert CALLS == [1]
    CALLS.clear()
    f(torch.zeros(3))  # new shape: tuned again
    assert len(CALLS) == 10
    CALLS.clear()
    f(torch.zeros(2, dtype=torch.float64))
    assert len(CALLS) == 10
    assert len(f.best_configs) == 3


def test_unhashable_key_names_the_type():
    f = tuned(key_fn=lambda x: object())
    with pytest.raises(TypeError, match="object"):
        f(torch.zeros(2))


def test_prune_fn_drops_configs_for_the_call():
    f = tuned(prune_fn=lambda config, x: config["c"] != 1)
    assert f(torch.zeros(2)).tolist() == [2.0, 2.0]
    assert 1 not in CALLS
    none = tuned(prune_fn=lambda config, x: False, name="tests.none")
    with pytest.raises(TuningError, match="prune_fn rejected every one of the 3 configs"):
        none(torch.zeros(2))


def test_autotune_false_uses_the_first_valid_config(tmp_path):
    f = tuned(prune_fn=lambda config, x: config["c"] > 0)
    assert f(torch.zeros(2), autotune=False).tolist() == [1.0, 1.0]
    assert CALLS == [1]
    assert not (tmp_path / "cache" / "function").exists()


def test_config_kwarg_passes_the_whole_dict():
    seen = []

    def g(x, *, config):
        seen.append(config)
        return x

    f = autotune([{"a": 1}, {"a": 2}], key_fn=None, warmup=0, rep=1, config_kwarg="config", name="tests.g")(g)
    f(torch.zeros(1))
    assert seen[-1] in ({"a": 1}, {"a": 2}) and len(seen) == 3


def test_keyword_that_is_also_a_config_key():
    f = tuned(key_fn=lambda x, **kwargs: x)  # key_fn and prune_fn see the call's keywords too
    with pytest.raises(ValueError, match="autotune_allow_arg_overwrite"):
        f(torch.zeros(2), c=0)
    assert f(torch.zeros(2), c=2, autotune_allow_arg_overwrite=True).tolist() == [2.0, 2.0]


def test_failing_config_is_skipped_and_logged(caplog):
    def flaky(x, *, c):
        CALLS.append(c)
        if c == 1:
            raise RuntimeError("c=1 does not fit")
        CLOCK.advance(SLEEP_MS[c])
        return x * 0 + c

    f = tuned(flaky, name="tests.flaky")
    with caplog.at_level(logging.WARNING, logger="tiletune.tune"):
        assert f(torch.zeros(2)).tolist() == [2.0, 2.0]
    assert "RuntimeError: c=1 does not fit" in caplog.text and "{c=1}" in caplog.text


def test_all_configs_failing_raise_tuning_error():
    def broken(x, *, c):
        raise ValueError(f"no good {c}")

    f = tuned(broken, name="tests.broken")
    with pytest.raises(TuningError) as err:
        f(torch.zeros(2))
    msg = str(err.value)
    for c in range(3):
        assert f"{{c={c}}}: ValueError: no good {c}" in msg


def test_restore_args_leave_tensors_as_one_call_would():
    def accumulate(x, out, *, c):
        CALLS.append(c)
        CLOCK.advance(SLEEP_MS[c])
        out += x * (c + 1)
        x.add_(100)  # not restored unless asked
        return out.clone()

    for restore in (["out", "x"], [1, 0]):
        x, out = torch.ones(3), torch.full((3,), 10.0)
        f = tuned(accumulate, restore_args=restore, name=f"tests.acc{restore[0]}", key_fn=lambda x, out: x)
        result = f(x, out)
        assert CALLS[-1] == 1
        assert out.tolist() == [12.0] * 3 and result.tolist() == [12.0] * 3  # 10 + 1 * (1 + 1)
        assert x.tolist() == [101.0] * 3
        CALLS.clear()
    with pytest.raises(TuningError, match="not a tensor"):
        tuned(lambda x, n, *, c: x, restore_args=["n"], name="tests.bad", key_fn=lambda x, n: n)(torch.zeros(1), 3)


def test_cache_reuse_by_a_new_tuner(tmp_path):
    tuned()(torch.zeros(2))
    CALLS.clear()
    f2 = tuned()  # a fresh process would build the same tuner
    assert f2(torch.zeros(2)).tolist() == [1.0, 1.0]
    assert CALLS == [1]
    data, _ = read_cache_file(cache_file(tmp_path))
    (entry,) = data["entries"].values()
    assert entry["config"] == {"c": 1} and entry["fingerprint"] == environment_fingerprint()
    assert [t["config"] for t in entry["timings_ms"]] == SPACE


def test_cache_results_false_keeps_nothing_on_disk(tmp_path):
    tuned(cache_results=False)(torch.zeros(2))
    assert not (tmp_path / "cache" / "function").exists()


def test_always_tune_ignores_the_disk_cache(monkeypatch):
    tuned()(torch.zeros(2))
    CALLS.clear()
    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_ALWAYS_TUNE", "1")
    tuned()(torch.zeros(2))
    assert len(CALLS) == 10


def test_triton_config_values_round_trip_through_the_cache():
    space = [{"cfg": triton.Config({"B": b}, num_warps=w)} for b, w in ((16, 4), (32, 8))]
    seen = []

    def g(x, *, cfg):
        seen.append(cfg.kwargs["B"])
        CLOCK.advance(8 if cfg.kwargs["B"] == 16 else 1)
        return cfg.kwargs["B"]

    kw = dict(key_fn=lambda x: x.shape, warmup=0, rep=2, name="tests.tc")
    assert autotune(space, **kw)(g)(torch.zeros(1)) == 32
    seen.clear()
    assert autotune(space, **kw)(g)(torch.zeros(1)) == 32
    assert seen == [32]


def _stale(tmp_path):
    path = cache_file(tmp_path)
    doc = json.loads(path.read_text())
    for entry in doc["entries"].values():
        entry["fingerprint"] = {**entry["fingerprint"], "triton": "2.0.0"}
    path.write_text(json.dumps(doc))


def test_version_change_retunes_by_default(tmp_path):
    tuned()(torch.zeros(2))
    _stale(tmp_path)
    CALLS.clear()
    tuned()(torch.zeros(2))
    assert len(CALLS) == 10
    data, _ = read_cache_file(cache_file(tmp_path))
    (entry,) = data["entries"].values()
    assert entry["fingerprint"]["triton"] == environment_fingerprint()["triton"]


@pytest.mark.parametrize(
    "var,value", [("TILETUNE_VERSION_CHECK", "strict"), ("TRITON_DIST_AUTOTUNE_VERSION_CHECK", "1")]
)
def test_version_change_refused_in_strict_mode(tmp_path, monkeypatch, var, value):
    tuned()(torch.zeros(2))
    _stale(tmp_path)
    monkeypatch.setenv(var, value)
    CALLS.clear()
    with pytest.raises(StaleCacheEntryError, match="triton '2.0.0'"):
        tuned()(torch.zeros(2))
    assert CALLS == []


def test_verbose_prints_each_config(capsys):
    tuned()(torch.zeros(2), autotune_verbose=True)
    out = capsys.readouterr().out
    for c in range(3):
        assert f"config {{c={c}}}:" in out
    assert "best {c=1}" in out


def test_methods_and_wrapping():
    class Op:
        @autotune([{"k": 1}, {"k": 2}], key_fn=lambda self, x: x, warmup=0, rep=1, name="tests.Op.run")
        def run(self, x, *, k):
            """Doc."""
            return x + k

    assert Op().run(torch.zeros(1)).item() in (1.0, 2.0)
    assert Op.run.__doc__ == "Doc." and Op.run.__name__ == "run"


def test_empty_or_bad_config_space():
    with pytest.raises(TuningError, match="empty"):
        autotune([], key_fn=None)(sleepy)
    with pytest.raises(TuningError, match="not a dict"):
        autotune([triton.Config({"c": 1})], key_fn=None)(sleepy)


def test_bench_method_uses_the_shared_benchmark_layer(tmp_path):
    f = tuned(bench_method="wall", name="tests.wall")
    assert f(torch.zeros(2)).tolist() == [1.0, 1.0]
    data, _ = read_cache_file(cache_file(tmp_path, "tests.wall"))
    (entry,) = data["entries"].values()
    assert entry["method"] == "wall" and entry["config"] == {"c": 1}


# ----------------------------------------------------------------------------- tiletune.fits and config_space_from


def _matmul_function():
    """A function tuned over config dicts that launches the matmul fixture with them."""
    import fixtures

    fx = fixtures.load("matmul")
    ran: list = []

    def matmul(a, b, *, BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, num_warps=4, num_stages=3):
        ran.append((BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, num_warps, num_stages))
        m, k = a.shape
        n = b.shape[1]
        c = torch.empty(m, n, dtype=a.dtype)
        grid = (triton.cdiv(m, BLOCK_SIZE_M) * triton.cdiv(n, BLOCK_SIZE_N),)
        fx.KERNEL[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                        c.stride(1), GROUP_SIZE_M=8, BLOCK_SIZE_M=BLOCK_SIZE_M, BLOCK_SIZE_N=BLOCK_SIZE_N,
                        BLOCK_SIZE_K=BLOCK_SIZE_K, num_warps=num_warps, num_stages=num_stages)
        return c

    return fx, matmul, ran


def test_fits_drops_configs_the_chip_cannot_hold_and_keeps_the_rest():
    import tiletune

    fx, _, _ = _matmul_function()
    prune = tiletune.fits(fx.KERNEL, target="h100", dtypes={"a_ptr": "fp16", "b_ptr": "fp16", "c_ptr": "fp16"})
    small = {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "num_warps": 4, "num_stages": 3}
    huge = {"BLOCK_SIZE_M": 256, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 256, "num_warps": 4, "num_stages": 5}
    assert prune(small)
    assert not prune(huge)
    assert any("shared" in w.lower() for w in prune.why(huge))
    # a triton.Config inside the dict is checked the same way
    assert not prune({"config": triton.Config({k: v for k, v in huge.items() if k.startswith("BLOCK")},
                                              num_warps=4, num_stages=5)})
    # the dtypes default: one dtype among the call's tensors is taken for every pointer
    guessless = tiletune.fits(fx.KERNEL, target="h100")
    a = torch.randn(8, 8, dtype=torch.float16)
    assert not guessless(huge, a, a)
    assert guessless(huge, a, a.float())  # two dtypes: unknown, so the capacity checks are skipped (documented)


def test_config_space_from_synthesis_tunes_a_function_with_the_fits_pruner():
    import tiletune
    from tiletune.tune import autotune, config_space_from

    fx, matmul, ran = _matmul_function()
    dtypes = {"a_ptr": "fp16", "b_ptr": "fp16", "c_ptr": "fp16"}
    shapes = {"M": 32, "N": 32, "K": 32, "GROUP_SIZE_M": 8}
    space = config_space_from(fx.KERNEL, shapes, dtypes, target="h100", top_k=3, fixed={"GROUP_SIZE_M": 8})
    assert 1 <= len(space) <= 3 and all({"BLOCK_SIZE_M", "num_warps"} <= set(c) for c in space)
    huge = {"BLOCK_SIZE_M": 256, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 256, "num_warps": 4, "num_stages": 5}
    tuned = autotune(config_space=space + [huge], key_fn=lambda a, b: (a.shape, b.shape),
                     prune_fn=tiletune.fits(fx.KERNEL, target="h100", dtypes=dtypes), warmup=0, rep=1)(matmul)
    a, b = torch.randn(32, 32, dtype=torch.float16), torch.randn(32, 32, dtype=torch.float16)
    out = tuned(a, b)
    torch.testing.assert_close(out.float(), a.float() @ b.float(), atol=2e-2, rtol=1e-2)
    assert (256, 256, 256, 4, 5) not in ran  # pruned before it ever ran


@pytest.mark.slow
def test_every_config_fits_keeps_compiles_for_sm90():
    import itertools

    import fixtures
    import tiletune
    from tiletune.runtime.offline_compile import CompileJob, compile_in_subprocess
    from tests.fixture_problems import kernel_spec, synthesis_inputs

    fx = fixtures.load("matmul")
    shape = {"M": 512, "N": 4096, "K": 11008}
    kname, spec = kernel_spec(fx)
    args, shapes, dtypes, _ = synthesis_inputs(fx, spec, shape)
    prune = tiletune.fits(fx.KERNEL, target="h100", shapes=shapes, dtypes=dtypes)
    grid = [{"BLOCK_SIZE_M": m, "BLOCK_SIZE_N": n, "BLOCK_SIZE_K": k, "num_warps": w, "num_stages": s}
            for m, n, k, w, s in itertools.product((64, 256), (128, 256), (64, 128), (4, 8), (3, 5))]
    kept = [c for c in grid if prune(c)]
    assert 0 < len(kept) < len(grid)
    jobs = [CompileJob(file=fx.__file__, kernel=kname, args=args,
                       constexprs={k: v for k, v in c.items() if k.startswith("BLOCK")},
                       num_warps=c["num_warps"], num_stages=c["num_stages"]) for c in kept]
    results = compile_in_subprocess(jobs)
    bad = [(c, r.error and r.error[-200:]) for c, r in zip(kept, results) if not r.ok]
    assert not bad, f"{len(bad)} of {len(kept)} kept configs do not compile for sm_90: {bad[:3]}"
