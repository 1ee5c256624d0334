"""Run by tests/test_compile_abandon.py in a process without TRITON_INTERPRET.

Hands a batch of real sm_90 compiles to a session's children, abandons the session at once (the search's
deadline came), and prints JSON: whether every child was stopped, every compile's future settled, and what a
later batch of the same session gets (nothing: its compiles go to the threads).
"""

import json
import os
import sys
from concurrent.futures import wait

from compile_children_worker import spec

from tiletune.runtime.compile_workers import CompileSession


def _running(proc) -> bool:
    """The child still exists.  ``Process.is_alive()`` alone can say True for a child the pool's manager thread
    already reaped: both wait on its pid, and the one that loses gets ECHILD and leaves no exit code."""
    if not proc.is_alive():
        return False
    try:
        os.kill(proc.pid, 0)
    except ProcessLookupError:
        return False
    return True


def main() -> None:
    session = CompileSession(workers=2)
    futures = session.submit({"b1024w8": spec(1024, 8), "b256w4": spec(256, 4), "b512w2": spec(512, 2)})
    children = [p for pool in session.pools for p in pool._processes.values()]
    session.abandon()
    for proc in children:
        proc.join(timeout=60)  # reaped once terminated (the bound only keeps a broken test from hanging)
    done, pending = wait(list(futures.values()), timeout=180)  # generous: a loaded 2-core machine is slow
    later = session.submit({"b128w4": spec(128, 4)})
    session.close()  # after abandon: nothing left to stop
    json.dump({"children": len(children), "children_alive": sum(_running(p) for p in children),
               "futures": len(futures), "settled": len(done), "pending": len(pending),
               "pools_left": len(session.pools), "later_batch_to_children": len(later),
               "launcher": session.launcher is None}, sys.stdout)


if __name__ == "__main__":
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
    main()
