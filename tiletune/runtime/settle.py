"""Settling futures a process pool may leave pending: an abandoned batch's compiles.

When the search's deadline comes, :meth:`~tiletune.runtime.compile_workers.CompileSession.abandon` stops the
compile children at once and relies on ``ProcessPoolExecutor``'s manager thread to fail the futures of the
compiles they held.  Here (CPython 3.11, Triton 3.6 and 3.9) that left one of three futures pending for good
in about 1 of 20-30 long test runs (``tests/test_compile_abandon.py``; the cause inside the pool was not
found).  Nothing in tiletune waits on an abandoned compile without a bound, but a future must not hang
whoever holds it: :func:`settle_later` fails, after a grace period in which the pool normally does it
itself, every one still pending.  The grace keeps this out of the pool's way: settling a future the pool
settles too would make its manager thread raise.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, InvalidStateError, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Iterable

__all__ = ["settle_later", "ABANDONED_SETTLE_S"]

#: Seconds an abandoned compile's future is left to its pool before it is failed here.
ABANDONED_SETTLE_S = 5.0


def settle_later(futures: Iterable[Future], why: str, seconds: float = ABANDONED_SETTLE_S) -> None:
    """In a daemon thread: wait up to ``seconds`` for ``futures``, then fail each still pending with
    ``BrokenProcessPool(why)``."""
    pending = [f for f in futures if not f.done()]
    if not pending:
        return

    def settle() -> None:
        wait(pending, timeout=seconds)
        for f in pending:
            if f.done():
                continue
            try:
                f.set_exception(BrokenProcessPool(why))
            except InvalidStateError:  # the pool settled it meanwhile
                pass

    threading.Thread(target=settle, name="tiletune-settle-abandoned", daemon=True).start()
