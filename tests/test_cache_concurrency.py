"""Four real processes write the same cache file at once; nothing is torn or lost."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from tiletune.runtime.cache import TuningCache

ROOT = Path(__file__).resolve().parent.parent
FP = {"tiletune": "0.1.0", "triton": "3.6.0", "torch": "2.11.0", "python": "3.11"}
WRITERS = 4
KEYS_EACH = 50

# Each writer waits for the "go" file so that all four write at the same time.
WRITER = """
import os, sys, time
from tiletune.runtime.cache import TuningCache, entry_key
directory, go, writer = sys.argv[1], sys.argv[2], int(sys.argv[3])
cache = TuningCache("matmul_kernel", "source", directory=directory, fingerprint={fp!r})
open(go + ".ready-" + str(writer), "w").close()
while not os.path.exists(go):
    time.sleep(0.001)
for i in range({n}):
    key = entry_key({{"key": [writer, i]}})
    cache.put(key, {{"config": {{"kwargs": {{"W": writer, "I": i}}}}, "timings_ms": {{"c": 0.5}}}})
    assert cache.get(key) is not None, key
""".format(fp=FP, n=KEYS_EACH)


def test_four_processes_put_into_one_file(tmp_path):
    go = tmp_path / "go"
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), str(go), str(w)], cwd=ROOT)
        for w in range(WRITERS)
    ]
    ready = [Path(f"{go}.ready-{w}") for w in range(WRITERS)]
    while not all(r.exists() for r in ready) and all(p.poll() is None for p in procs):
        time.sleep(0.01)  # every writer has started and imported (an event, not a guess of how long that takes)
    go.touch()
    for p in procs:
        assert p.wait(timeout=120) == 0

    cache = TuningCache("matmul_kernel", "source", directory=tmp_path, fingerprint=FP)
    doc = json.loads(cache.path.read_text())  # valid JSON, not torn
    assert doc["format"] == "tiletune-cache"
    assert len(doc["entries"]) == WRITERS * KEYS_EACH
    entries = cache.entries()
    for w in range(WRITERS):
        for i in range(KEYS_EACH):
            key = json.dumps({"key": [w, i]}, separators=(",", ":"))
            assert entries[key]["config"]["kwargs"] == {"W": w, "I": i}
    leftovers = [p.name for p in cache.path.parent.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


def test_threads_put_into_one_cache(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    caches = [TuningCache("k", "s", directory=tmp_path, fingerprint=FP) for _ in range(2)]

    def work(n: int) -> None:
        caches[n % 2].put(f"key{n}", {"config": n})

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(work, range(80)))
    fresh = TuningCache("k", "s", directory=tmp_path, fingerprint=FP)
    assert {k: e["config"] for k, e in fresh.entries().items()} == {f"key{n}": n for n in range(80)}
