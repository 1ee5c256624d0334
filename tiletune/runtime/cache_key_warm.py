"""Triton's per-process cache-key digest, computed in a background thread while a cold first tune analyses.

Every compile, and every submission to Triton's async compile, builds its cache key from
``triton.runtime.cache.triton_key()``: a SHA-256 of Triton's compiler and language sources and of the whole
``libtriton`` shared object (396 MB in Triton 3.6), cached per process.  A first tune whose compiles all run
in children forked ahead (:meth:`~.compile_workers.CompileSession.fork_ahead`) computes it first when it hands
its first batch to Triton's async compile, on the critical path: the H200 cold bench at c1ce0ae
(``bench/results/first_tune_cold_runs/h200_c1ce0ae``) timed that submission at 0.40-0.53 s on all 20 pairs,
whatever their 3-19 jobs, ending 0.1-0.33 s after the children's compiles on the small kernels; computing the
digest alone takes 0.25 s on the 2-core dev host.

Reading the file and hashing it release the GIL (``hashlib`` does for buffers over 2 KiB), so a thread
started as the tune starts (:func:`start`) computes part of it beside the binding and the analysis, though
each 1 MB chunk waits for the GIL between its read and its hash while the analysis holds it.  The first
submission waits for the thread instead of computing the digest a second time (:func:`settled`; the
``lru_cache`` does not make concurrent callers wait).  Measured on the 2-core dev host (Triton 3.6, fresh
processes, ``fixtures/matmul.py`` analysed first): the digest after the analysis took 0.24 s without the
thread and 0.18 s with it (three runs each).  On the H200 (cold bench at 57bbf43, two runs and the held-out
set) the submission took 0.009-0.06 s on every pair, and the median first tune's timeline 1.90 s against 2.43 s
at c1ce0ae.  A fork while the thread
runs could copy an import lock it holds into the child, so every fork of the compile session waits for it
first as well.
"""

from __future__ import annotations

import threading
from typing import List

__all__ = ["start", "settled"]

_THREADS: List[threading.Thread] = []
_LOCK = threading.Lock()


def _digest() -> None:
    try:
        from triton.runtime.cache import triton_key

        triton_key()
    except Exception:  # another Triton layout: its first compile computes its own key, as before
        pass


def start() -> bool:
    """Start computing the digest in a daemon thread, once per process; True when this call started it."""
    with _LOCK:
        if _THREADS:
            return False
        thread = threading.Thread(target=_digest, name="tiletune-triton-key", daemon=True)
        _THREADS.append(thread)
    thread.start()
    return True


def settled() -> None:
    """Wait for the digest's thread, if one was started (before a fork: see the module's docstring)."""
    for thread in list(_THREADS):
        if thread.is_alive() and thread is not threading.current_thread():
            thread.join()
