"""Keep what Triton prints while compiling candidates off the user's terminal.

A candidate that fails to compile is data for tuning (it is dropped, and
verbose mode names it), but Triton prints its compile-failure reproducer
(``ptxas`` errors: "please share the reproducer above") with ``print`` and
MLIR writes diagnostics to file descriptor 2.  :func:`quiet_threads` drops
what the compile pool's threads write to ``sys.stdout``/``sys.stderr`` while
every other thread's output passes; :func:`quiet_child` points a forked
compile child's descriptors 1 and 2 at ``/dev/null`` (its errors come back as
text through the pool).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from typing import Any, Iterator

__all__ = ["COMPILE_THREAD_PREFIX", "quiet_threads", "quiet_child"]

#: The thread-name prefix of tiletune's compile pools (``parallel_compile``).
COMPILE_THREAD_PREFIX = "tiletune-compile"


class _ThreadFilter:
    """A stream that drops writes from threads whose name starts with ``prefix``."""

    def __init__(self, stream: Any, prefix: str):
        self._stream = stream
        self._prefix = prefix

    def write(self, text: str) -> int:
        """Write unless the calling thread is a compile thread (then report it written)."""
        if threading.current_thread().name.startswith(self._prefix):
            return len(text)
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


_LOCK = threading.Lock()
_DEPTH = [0]


@contextlib.contextmanager
def quiet_threads(prefix: str = COMPILE_THREAD_PREFIX) -> Iterator[None]:
    """While inside, what threads named ``prefix...`` print is dropped (re-entrant; other threads unaffected)."""
    with _LOCK:
        _DEPTH[0] += 1
        if _DEPTH[0] == 1:
            saved = (sys.stdout, sys.stderr)
            sys.stdout = _ThreadFilter(sys.stdout, prefix)  # type: ignore[assignment]
            sys.stderr = _ThreadFilter(sys.stderr, prefix)  # type: ignore[assignment]
            _DEPTH.append(saved)  # type: ignore[arg-type]
    try:
        yield
    finally:
        with _LOCK:
            _DEPTH[0] -= 1
            if _DEPTH[0] == 0:
                out, err = _DEPTH.pop()  # type: ignore[misc]
                # put back only our own filters (a test harness may have swapped the streams meanwhile)
                if isinstance(sys.stdout, _ThreadFilter):
                    sys.stdout = out
                if isinstance(sys.stderr, _ThreadFilter):
                    sys.stderr = err


def quiet_child() -> None:
    """In a forked compile child: descriptors 1 and 2 (and ``sys.stdout``/``sys.stderr``) go to /dev/null."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.close(null)
        sys.stdout = open(os.devnull, "w")
        sys.stderr = open(os.devnull, "w")
    except OSError:  # no such descriptors: nothing would reach a terminal anyway
        pass
