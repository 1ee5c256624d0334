"""The disk cache of tuning winners: real files in temporary directories."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from tiletune.runtime.cache import (
    StaleCacheEntryError,
    TiletuneCacheWarning,
    TuningCache,
    always_tune,
    cache_dir,
    check_version_policy,
    entry_key,
    environment_fingerprint,
    source_hash,
    strict_version_check,
)
from tiletune.runtime.tuning_log import append_tuning_log, read_tuning_log

ROOT = Path(__file__).resolve().parent.parent
FP = {"tiletune": "0.1.0", "triton": "3.6.0", "torch": "2.11.0", "python": "3.11", "target": "h100"}
SOURCE = "@triton.jit\ndef matmul_kernel(a_ptr, BLOCK_M: tl.constexpr):\n    pass\n"
KEY = entry_key({"key": [512, 4096], "dtypes": ["float16"], "target": "h100"})
ENTRY = {
    "config": {"kwargs": {"BLOCK_M": 128, "BLOCK_N": 64}, "num_warps": 4, "num_stages": 3, "extra": {}},
    "timings_ms": {"BLOCK_M: 128, BLOCK_N: 64, num_warps: 4": 0.123, "BLOCK_M: 64": 0.2},
    "method": "cuda-event",
}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in (
        "TILETUNE_CACHE_DIR",
        "TILETUNE_ALWAYS_TUNE",
        "TRITON_DIST_AUTOTUNE_ALWAYS_TUNE",
        "TILETUNE_VERSION_CHECK",
        "TRITON_DIST_AUTOTUNE_VERSION_CHECK",
    ):
        monkeypatch.delenv(name, raising=False)


def make(tmp_path: Path, fingerprint=FP, **kw) -> TuningCache:
    return TuningCache("matmul_kernel", SOURCE, directory=tmp_path, fingerprint=fingerprint, **kw)


def cache_warnings(record) -> list:
    return [w for w in record if issubclass(w.category, TiletuneCacheWarning)]


def test_roundtrip(tmp_path):
    cache = make(tmp_path)
    assert cache.path == tmp_path / "kernel" / f"matmul_kernel-{source_hash(SOURCE)}.json"
    assert cache.get(KEY) is None
    assert cache.get_with_status(KEY) == (None, "miss")
    assert not cache.path.exists()  # reading creates nothing

    cache.put(KEY, dict(ENTRY, shape=(512, 4096), failed=float("inf")))
    got = cache.get(KEY)
    assert got["config"] == ENTRY["config"]
    assert got["timings_ms"] == ENTRY["timings_ms"]
    assert got["shape"] == [512, 4096] and got["failed"] is None  # tuple -> list, inf -> null
    assert got["fingerprint"] == FP and got["created"].startswith("20")

    got["config"]["num_warps"] = 99  # callers get copies
    assert cache.get(KEY)["config"]["num_warps"] == 4

    doc = json.loads(cache.path.read_text())
    assert doc["format"] == "tiletune-cache" and doc["version"] == 1
    assert doc["name"] == "matmul_kernel" and doc["kind"] == "kernel"
    assert doc["source_hash"] == source_hash(SOURCE) and doc["fingerprint"] == FP
    assert list(doc["entries"]) == [KEY]

    fresh = make(tmp_path)  # a new process would see the same
    assert fresh.get_with_status(KEY)[1] == "hit"
    assert fresh.entries() == cache.entries()

    cache.clear()
    assert not cache.path.exists() and cache.get(KEY) is None and fresh.get(KEY) is None


def test_function_kind_and_odd_names(tmp_path):
    cache = TuningCache("pkg.mod:<lambda>/x", "def f(): pass", directory=tmp_path, kind="function", fingerprint=FP)
    assert cache.path.parent == tmp_path / "function"
    assert "/" not in cache.path.name and "<" not in cache.path.name
    cache.put("k", {"config": {"tile": 8}})
    assert json.loads(cache.path.read_text())["name"] == "pkg.mod:<lambda>/x"
    with pytest.raises(ValueError):
        TuningCache("f", "", directory=tmp_path, kind="module")


def test_entry_key_is_canonical_and_json_only():
    a = entry_key({"target": "h100", "key": (512, 4096), "dtypes": ["float16"]})
    b = entry_key({"dtypes": ["float16"], "key": [512, 4096], "target": "h100"})
    assert a == b == '{"dtypes":["float16"],"key":[512,4096],"target":"h100"}'
    with pytest.raises(TypeError):
        entry_key({"key": [object()]})
    assert len(source_hash("x")) == 16 and source_hash("x") != source_hash("y")


def test_put_rejects_non_json(tmp_path):
    cache = make(tmp_path)
    with pytest.raises(TypeError):
        cache.put(KEY, {"config": object()})
    assert not cache.path.exists()


def test_get_sees_other_writers(tmp_path):
    reader, writer = make(tmp_path), make(tmp_path)
    assert reader.get(KEY) is None
    writer.put(KEY, ENTRY)
    assert reader.get(KEY)["config"] == ENTRY["config"]  # file changed -> re-read
    writer.put(KEY, dict(ENTRY, method="cpu"))
    assert reader.get(KEY)["method"] == "cpu"


def test_merge_of_two_writers(tmp_path):
    first, second = make(tmp_path), make(tmp_path)
    first.get("a")
    second.get("b")  # both hold an (empty) in-memory view of the file
    first.put("a", {"config": 1})
    second.put("b", {"config": 2})  # must not drop "a"
    first.put("c", {"config": 3})  # must not drop "b"
    # and a writer in another process
    code = (
        "import sys; from tiletune.runtime.cache import TuningCache;"
        f"TuningCache('matmul_kernel', {SOURCE!r}, directory=sys.argv[1], fingerprint={FP!r}).put('d', {{'config': 4}})"
    )
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=ROOT, check=True)
    for cache in (first, second, make(tmp_path)):
        assert {k: e["config"] for k, e in cache.entries().items()} == {"a": 1, "b": 2, "c": 3, "d": 4}


def test_fingerprint_mismatch_is_stale(tmp_path, monkeypatch):
    make(tmp_path).put(KEY, ENTRY)
    newer = make(tmp_path, fingerprint=dict(FP, triton="3.7.0"))
    assert newer.get(KEY) is None
    entry, status = newer.get_with_status(KEY)
    assert status == "stale" and entry["fingerprint"]["triton"] == "3.6.0"

    check_version_policy(status, entry, newer.path, current=newer.fingerprint)  # lenient by default
    check_version_policy("hit", entry, newer.path)
    for var, value in (("TILETUNE_VERSION_CHECK", "strict"), ("TRITON_DIST_AUTOTUNE_VERSION_CHECK", "1")):
        monkeypatch.setenv(var, value)
        assert strict_version_check()
        with pytest.raises(StaleCacheEntryError) as err:
            check_version_policy(status, entry, newer.path, current=newer.fingerprint)
        assert "triton '3.6.0' -> '3.7.0'" in str(err.value) and str(newer.path) in str(err.value)
        check_version_policy("miss", None, newer.path)
        monkeypatch.delenv(var)

    # re-tuning under the new versions replaces the entry
    newer.put(KEY, ENTRY)
    assert newer.get_with_status(KEY)[1] == "hit"
    assert make(tmp_path).get_with_status(KEY)[1] == "stale"


def test_entry_without_fingerprint_is_stale(tmp_path):
    cache = make(tmp_path)
    cache.put(KEY, dict(ENTRY, fingerprint={}))
    assert cache.get_with_status(KEY)[1] == "stale"


CORRUPT = {
    "garbage bytes": b"\x00\xff\xfe garbage \x80\x81",
    "truncated JSON": b'{"format": "tiletune-cache", "version": 1, "entries": {"k": {"con',
    "list at top level": b"[1, 2, 3]",
    "wrong format": json.dumps({"format": "other", "version": 1, "entries": {}}).encode(),
    "newer version": json.dumps({"format": "tiletune-cache", "version": 2, "entries": {}}).encode(),
    "entries not a dict": json.dumps({"format": "tiletune-cache", "version": 1, "entries": [1]}).encode(),
    "entry not a dict": json.dumps({"format": "tiletune-cache", "version": 1, "entries": {"k": 3}}).encode(),
}


@pytest.mark.parametrize("content", list(CORRUPT.values()), ids=list(CORRUPT))
def test_corrupt_file_warns_once_and_is_rebuilt(tmp_path, content):
    cache = make(tmp_path)
    cache.path.parent.mkdir(parents=True)
    cache.path.write_bytes(content)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert cache.get_with_status("k") == (None, "miss")
        assert cache.get(KEY) is None
        assert cache.entries() == {}
        assert make(tmp_path).get("k") is None  # another instance: still one report
        cache.put(KEY, ENTRY)
    reported = cache_warnings(record)
    assert len(reported) == 1, [str(w.message) for w in reported]
    message = str(reported[0].message)
    assert message.startswith(f"tiletune: cache file {cache.path} is corrupt (") and message.endswith("); rebuilding it")

    corrupt = Path(str(cache.path) + ".corrupt")
    assert corrupt.read_bytes() == content
    doc = json.loads(cache.path.read_text())
    assert list(doc["entries"]) == [KEY]
    assert make(tmp_path).get(KEY)["config"] == ENTRY["config"]


def test_corrupt_file_put_without_prior_get(tmp_path):
    cache = make(tmp_path)
    cache.path.parent.mkdir(parents=True)
    cache.path.write_text("{not json")
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        cache.put(KEY, ENTRY)
    assert len(cache_warnings(record)) == 1
    assert Path(str(cache.path) + ".corrupt").read_text() == "{not json"
    assert cache.get(KEY) is not None


def test_unwritable_directory_keeps_working_in_memory(tmp_path, monkeypatch):
    blocker = tmp_path / "file.txt"
    blocker.write_text("a regular file, so nothing can be created below it (even as root)")
    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(blocker / "sub"))
    cache = TuningCache("matmul_kernel", SOURCE, fingerprint=FP)
    assert cache.path.is_relative_to(blocker / "sub")
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert cache.get(KEY) is None
        cache.put(KEY, ENTRY)
        cache.put("other", {"config": 2})
        assert cache.get(KEY)["config"] == ENTRY["config"]
        assert set(cache.entries()) == {KEY, "other"}
        path = append_tuning_log("matmul_kernel", cache.source_hash, {"key": KEY})
    reported = [str(w.message) for w in cache_warnings(record)]
    assert len(reported) == 2, reported  # one for the cache, one for the log
    assert "in memory only" in reported[0] and str(blocker) in reported[0]
    assert not path.exists()
    cache.clear()
    assert cache.get(KEY) is None


def test_cache_dir_env(tmp_path, monkeypatch):
    import platformdirs

    assert cache_dir() == Path(platformdirs.user_cache_dir("tiletune"))
    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(tmp_path / "tt"))
    assert cache_dir() == tmp_path / "tt"
    cache = TuningCache("softmax_kernel", "src", fingerprint=FP)
    cache.put("k", {"config": {}})
    assert cache.path.parent == tmp_path / "tt" / "kernel" and cache.path.is_file()


def test_env_flags(monkeypatch):
    assert not always_tune() and not strict_version_check()
    monkeypatch.setenv("TILETUNE_ALWAYS_TUNE", "1")
    assert always_tune()
    monkeypatch.delenv("TILETUNE_ALWAYS_TUNE")
    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_ALWAYS_TUNE", "true")
    assert always_tune()
    monkeypatch.setenv("TRITON_DIST_AUTOTUNE_ALWAYS_TUNE", "0")
    assert not always_tune()


def test_environment_fingerprint():
    fp = environment_fingerprint("h100")
    assert fp["target"] == "h100" and "target" not in environment_fingerprint()
    for key in ("tiletune", "triton", "torch", "python"):
        assert isinstance(fp[key], str) and fp[key]
    assert fp["python"] == f"{sys.version_info.major}.{sys.version_info.minor}"
    fp["triton"] = "changed"
    assert environment_fingerprint("h100")["triton"] != "changed"  # a fresh dict every call
    assert make(Path("/nonexistent"), fingerprint=None).fingerprint == environment_fingerprint()


def test_tuning_log(tmp_path):
    record = {"key": KEY, "candidates": [{"config": "a", "ms": 0.1}, {"config": "b", "ms": float("inf")}],
              "winner": "a", "wall_s": 1.5, "method": "cuda-event", "odd": Path("/x")}
    path = append_tuning_log("matmul_kernel", "0123456789abcdef", record, directory=tmp_path)
    append_tuning_log("matmul_kernel", "0123456789abcdef", {"key": "k2"}, directory=tmp_path)
    assert path == tmp_path / "logs" / "matmul_kernel-0123456789abcdef.jsonl"
    lines = path.read_text().splitlines()
    assert len(lines) == 2
    first = json.loads(lines[0])
    assert first["winner"] == "a" and first["candidates"][1]["ms"] is None and first["odd"] == "/x"
    assert "time" in first
    assert [r["key"] for r in read_tuning_log(path)] == [KEY, "k2"]


# ----- what the cache refuses to read (issue 12) --------------------------------------------------
@pytest.mark.parametrize("kind", ["fifo", "directory", "deep", "huge"])
def test_only_regular_files_of_sane_size_and_depth_are_read(tmp_path, kind, monkeypatch):
    import os

    from tiletune.runtime import cache as cache_mod

    cache = make(tmp_path)
    cache.path.parent.mkdir(parents=True)
    if kind == "fifo":
        os.mkfifo(cache.path)
    elif kind == "directory":
        cache.path.mkdir()
    elif kind == "deep":
        cache.path.write_text("[" * 50_000 + "]" * 50_000)
    else:
        monkeypatch.setattr(cache_mod, "MAX_FILE_BYTES", 1000)
        doc = {"format": "tiletune-cache", "version": 1, "entries": {"k": {"pad": "x" * 2000}}}
        cache.path.write_text(json.dumps(doc))
    with warnings.catch_warnings(record=True) as record:  # a FIFO read blocking would hang here
        warnings.simplefilter("always")
        assert cache.get(KEY) is None and cache.entries() == {}
        cache.put(KEY, ENTRY)  # moves the thing in the way aside and writes a real file
    said = cache_warnings(record)
    assert said and str(cache.path) in str(said[0].message)
    assert cache.path.is_file() and cache.get(KEY)["config"] == ENTRY["config"]


def test_json_depth_is_counted_without_recursion():
    from tiletune.runtime.cache import json_depth, loads_limited

    deep = []
    for _ in range(100_000):
        deep = [deep]
    assert json_depth(deep, limit=10) == 11  # stops early
    assert json_depth({"a": [1, {"b": 2}]}) == 3 and json_depth(5) == 0
    value, reason = loads_limited(b"[" * 40 + b"]" * 40)
    assert value is None and "nested more than 32" in reason
    assert loads_limited(b'{"a": [1]}') == ({"a": [1]}, None)
