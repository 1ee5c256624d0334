"""The compile children are forked as a first tune starts, each warming its own compiler while the tune
analyses and synthesises (CompileSession.fork_ahead), instead of this process warming its compiler before the
first fork.

A fresh process (no TRITON_INTERPRET) runs a cold first tune's CPU part
(bench/cold_overlap.py --one): a fixture analysed, its candidates synthesised,
the first batch compiled for sm_90 in compile children.  Only what happened
and in which order is checked, never how long it took.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _one(mode: str, tmp_path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.update(TRITON_CACHE_DIR=str(tmp_path / f"triton-{mode}"), PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "cold_overlap.py"), "--one", mode, "--fixture",
                           "vector_add", "--shape", "n_elements=98432", "--batch", "2"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("warm-ahead")
    return {mode: _one(mode, tmp) for mode in ("fork", "off")}


def _events(run: dict, kind: str) -> list:
    return [e for e in run["events"] if e["kind"] == kind]


def test_children_forked_ahead_warm_their_compilers_while_the_first_tune_analyses(runs):
    run = runs["fork"]
    setup = _events(run, "setup")[0]
    warm = [e for e in _events(run, "warm_up") if e["label"] == "ahead, in a child"]
    assert run["forked_ahead"] and warm
    # this process warms its own compiler only once the session closed (warm_after), never during the tune;
    # with Triton's cache-key digest computed ahead (cache_key_warm) it can end before the timeline stops
    own = [e for e in _events(run, "warm_up") if e not in warm]
    assert all(e["label"] == "in this process" for e in own)
    assert all(e["start_s"] >= max(c["end_s"] for c in _events(run, "compile")) for e in own)
    assert min(e["start_s"] for e in warm) < setup["end_s"]  # a child warmed while this process analysed
    assert run["compiled"] == 2  # the children compiled the batch (the kernel was known to them at the fork)
    # the first batch counts the warm-up once (the time budget's set-up: a hand list pays it)
    assert run["warm_s"] == pytest.approx(max(e["end_s"] - e["start_s"] for e in warm), abs=1e-3)
    # it waited only for what was left of the warm-ups when the batch came (plus the children's reply)
    left = max(0.0, max(e["end_s"] for e in warm) - _events(run, "synthesis")[0]["end_s"])
    assert run["warm_wait_s"] <= left + 0.05
    assert min(e["start_s"] for e in _events(run, "compile")) >= _events(run, "synthesis")[0]["end_s"]


def test_after_the_first_tune_this_process_warms_its_compiler_and_later_tunes_fork_from_it(runs):
    """The session that forked ahead leaves this process warming its own compiler (a thread, after the tune);
    the next session forks from a warm compiler the usual way instead of ahead."""
    assert runs["fork"]["warm_after_close"] and not runs["fork"]["forked_ahead_again"]
    assert not runs["off"]["forked_ahead_again"]  # warm already: nothing forked ahead


def test_without_it_this_process_warms_its_compiler_before_the_first_fork(runs):
    run = runs["off"]
    warm, synthesis = _events(run, "warm_up"), _events(run, "synthesis")[0]
    assert not run["forked_ahead"] and [e["label"] for e in warm] == ["in this process"]
    assert warm[0]["start_s"] >= synthesis["end_s"]
    assert run["warm_wait_s"] >= run["warm_s"] > 0  # the first batch waited for all of it
    assert run["compiled"] == 2


def test_nothing_is_forked_ahead_under_the_interpreter_or_with_compile_processes_off(monkeypatch):
    from triton.backends.compiler import GPUTarget

    from tiletune.runtime.compile_workers import CompileSession

    target = GPUTarget("cuda", 90, 32)
    with CompileSession() as session:  # conftest sets TRITON_INTERPRET=1
        assert not session.fork_ahead([], target) and session.pools == []
    monkeypatch.setenv("TILETUNE_COMPILE_PROCESSES", "0")
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    with CompileSession() as session:
        assert not session.fork_ahead([], target) and session.pools == []
