"""Run by tests/test_prompt_exit.py: tune, then report what is still running, then exit.

``python tests/prompt_exit_worker.py tune``: ``configs=[]`` tunes the
vector_add fixture (under ``TRITON_INTERPRET=1``, set by the caller);
``compile``: a :class:`~tiletune.runtime.compile_workers.CompileSession`
compiles real specs for sm_90 in forked children (no interpreter).  Then it
prints JSON: the threads other than the main one, multiprocessing's live
children and every OS process whose parent is this one.
"""

import json
import os
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _os_children() -> list:
    me, out = os.getpid(), []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == me:
                out.append(int(entry.name))
    return out


def tune() -> str:
    import tiletune
    import fixtures

    mod = fixtures.load("vector_add")
    tuned = tiletune.autotune(configs=[], key=mod.KEY, target="h100", top_k=3)(mod.KERNEL)
    mod.launch(tuned, mod.make_args({"n_elements": 1000}))
    return str(tuned.best_config)


def compile_in_children() -> str:
    from tests.compile_children_worker import spec
    from tiletune.runtime.compile_workers import CompileSession, ProcessCompiles

    specs = {"a": spec(256, 4), "b": spec(1024, 8)}
    with CompileSession() as session:
        with ProcessCompiles(specs, session) as batch:
            results = {k: batch.wait(k) for k in specs}
        pids = session.child_pids()
    return json.dumps({"compiled": sorted(k for k, r in results.items() if r), "children": len(pids)})


def _left() -> dict:
    import multiprocessing

    return {
        "threads": [t.name for t in threading.enumerate() if t is not threading.main_thread()],
        "mp_children": [p.pid for p in multiprocessing.active_children()],
        "os_children": _os_children(),
    }


if __name__ == "__main__":
    import time

    what = tune() if sys.argv[1] == "tune" else compile_in_children()
    # A closed session does not wait for its pools (shutdown(wait=False)): their manager thread and idle
    # children finish on their own a moment later.  Whatever is still there after 20 s was left running.
    left = _left()
    for _ in range(200):
        if not any(left.values()):
            break
        time.sleep(0.1)
        left = _left()
    print(json.dumps({"did": what, **left}), flush=True)
