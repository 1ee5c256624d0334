"""tiletune.tune.autotune without a process group: keys, pruning, failures, cache, restore_args."""

from __future__ import annotations

import dataclasses
import enum
import json
import logging
import time

import pytest
import torch
import triton

from tiletune.errors import TuningError
from tiletune.runtime.cache import StaleCacheEntryError, environment_fingerprint, read_cache_file
from tiletune.tune import autotune, config_label, config_material, to_hashable, to_key_material

CALLS: list = []
SPACE = [{"c": 0}, {"c": 1}, {"c": 2}]
SLEEP_MS = {0: 12.0, 1: 2.0, 2: 7.0}  # config 1 is fastest


@pytest.fixture(autouse=True)
def _clean(monkeypatch, tmp_path):
    CALLS.clear()
    for var in ("TILETUNE_ALWAYS_TUNE", "TRITON_DIST_AUTOTUNE_ALWAYS_TUNE", "TILETUNE_VERSION_CHECK",
                "TRITON_DIST_AUTOTUNE_VERSION_CHECK", "TRITON_PRINT_AUTOTUNING"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(tmp_path / "cache"))


def sleepy(x, *, c):
    CALLS.append(c)
    time.sleep(SLEEP_MS[c] / 1e3)
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
        time.sleep(SLEEP_MS[c] / 1e3)
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
        time.sleep(SLEEP_MS[c] / 1e3)
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
        time.sleep(0.008 if cfg.kwargs["B"] == 16 else 0.001)
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
