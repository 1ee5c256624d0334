"""Compiles abandoned at a search's deadline: child compiles are stopped, queued thread compiles cancelled,
and leaving the batch awaits none of them."""

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tiletune.runtime.parallel_compile import CompileQueue, _TimedPool

ROOT = Path(__file__).resolve().parent.parent


def test_an_abandoned_session_stops_its_children_and_settles_every_compile():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.update(PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "tests")]))
    proc = subprocess.run([sys.executable, str(ROOT / "tests" / "compile_abandon_worker.py")],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out["children"] >= 1 and out["children_alive"] == 0
    assert out["futures"] == 3 and out["settled"] == 3 and out["pending"] == 0
    assert out["pools_left"] == 0 and out["later_batch_to_children"] == 0 and out["launcher"]


def test_an_abandoned_thread_pool_cancels_queued_compiles_and_is_left_without_waiting():
    queue = CompileQueue()
    release = threading.Event()
    started = threading.Event()

    def running():
        started.set()
        release.wait(120)  # a compile still running when the deadline comes
        return "late"

    guard = threading.Timer(120, release.set)  # only a broken pool would still wait for it
    guard.start()
    try:
        with _TimedPool(queue, max_workers=1) as pool:
            queue.pool = pool
            first = pool.submit(running)
            queued = pool.submit(lambda: "never")
            started.wait(60)
            queue.abandon()
        left_while_running = not release.is_set()
    finally:
        release.set()
        guard.cancel()
    assert left_while_running  # the with-block ended while the running compile still ran
    assert queued.cancelled()
    assert first.result(timeout=60) == "late"  # it finishes in the background; nobody waited for it
    assert queue.abandoned


def test_small_batches_go_to_the_threads_below_the_children_threshold(monkeypatch):
    from tiletune.runtime.compile_workers import processes_enabled

    monkeypatch.delenv("TILETUNE_COMPILE_PROCESSES", raising=False)
    monkeypatch.setenv("TILETUNE_COMPILE_PROCESSES_MIN", "4")
    assert not processes_enabled(3)
    assert processes_enabled(4) == (os.name == "posix")
    monkeypatch.setenv("TILETUNE_COMPILE_PROCESSES_MIN", "zero")
    with pytest.raises(ValueError, match="TILETUNE_COMPILE_PROCESSES_MIN='zero' is not a positive integer"):
        processes_enabled(4)


def test_a_future_its_pool_leaves_pending_is_failed_after_the_grace_and_a_settled_one_is_left_alone():
    from concurrent.futures import Future
    from concurrent.futures.process import BrokenProcessPool

    from tiletune.runtime.settle import settle_later

    stuck, settled_by_pool = Future(), Future()
    for f in (stuck, settled_by_pool):
        f.set_running_or_notify_cancel()  # as a pool's future is once its child holds the compile
    settled_by_pool.set_result("cubin")  # the pool's own result
    settle_later([stuck, settled_by_pool], "compile abandoned", seconds=0.05)
    assert isinstance(stuck.exception(timeout=60), BrokenProcessPool)
    assert "compile abandoned" in str(stuck.exception())
    assert settled_by_pool.result() == "cubin"


def _sleep(seconds):
    import time

    time.sleep(seconds)
    return seconds


def test_compiles_a_pools_shutdown_cancelled_are_seen_done_by_wait_once_settled():
    """The cause of the abandoned session's pending future: ``shutdown(cancel_futures=True)`` leaves the futures of
    queued work ``CANCELLED`` (``done()`` True) without notifying ``wait()``, which then never returns them as done.
    :func:`settle_later` notifies them after its grace."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, wait

    from tiletune.runtime.settle import settle_later

    pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork"))
    futures = [pool.submit(_sleep, 0.5) for _ in range(6)]
    pending_at_shutdown = [f for f in futures if not f.done()]
    pool.shutdown(wait=False, cancel_futures=True)
    done, not_done = wait(futures, timeout=3)  # the running ones finish; the cancelled ones are never seen
    cancelled = [f for f in futures if f.cancelled()]
    assert cancelled and all(f.done() for f in cancelled) and set(cancelled) <= not_done
    settle_later(pending_at_shutdown, "test", seconds=0.05)
    done, not_done = wait(futures, timeout=60)
    assert not not_done
    assert all(f.cancelled() for f in cancelled)  # notified, not failed: still cancelled
