"""Settling futures a process pool may leave pending: an abandoned batch's compiles.

When the search's deadline comes, :meth:`~tiletune.runtime.compile_workers.CompileSession.abandon` stops the
compile children at once and relies on ``ProcessPoolExecutor``'s manager thread to fail the futures of the
compiles they held.  Here (CPython 3.11, Triton 3.6 and 3.9) that left one of three futures pending for good
in about 1 of 20-30 long test runs (``tests/test_compile_abandon.py``).  The cause: ``shutdown(cancel_futures=
True)`` cancels the compiles still queued in the pool (not yet handed to a child), and a future cancelled that
way stays ``CANCELLED`` -- ``done()`` says True, but ``concurrent.futures.wait`` and ``as_completed`` count a
cancelled future only once ``set_running_or_notify_cancel`` has moved it to ``CANCELLED_AND_NOTIFIED``, which
the pool does for the items it hands out, never for those it dropped.  :func:`notify_cancelled` does it for
them, from :func:`settle_later`'s thread (the pool's manager thread cancels them after ``shutdown`` has
returned).  :func:`settle_later` is also the bound for anything else: it fails, after a grace period in which the
pool normally does it itself, every future still pending.  The grace keeps this out of the pool's way:
settling a future the pool settles too would make its manager thread raise.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, InvalidStateError, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Iterable

__all__ = ["settle_later", "notify_cancelled", "ABANDONED_SETTLE_S"]

#: Seconds an abandoned compile's future is left to its pool before it is failed here.
ABANDONED_SETTLE_S = 5.0


def notify_cancelled(futures: Iterable[Future]) -> None:
    """Let ``wait``/``as_completed`` see the cancelled ones of ``futures`` (a pool's shutdown cancelled them
    and never notified their waiters); the others are left alone."""
    for f in futures:
        if f.cancelled():
            try:
                f.set_running_or_notify_cancel()  # CANCELLED -> CANCELLED_AND_NOTIFIED, waiters told
            except RuntimeError:  # already notified
                pass


def settle_later(futures: Iterable[Future], why: str, seconds: float = ABANDONED_SETTLE_S) -> None:
    """Notify the waiters of each of ``futures`` the pool cancelled (:func:`notify_cancelled`), now and, in a
    daemon thread, again after waiting up to ``seconds`` for the rest; then fail each still pending with
    ``BrokenProcessPool(why)``."""
    futures = list(futures)
    notify_cancelled(futures)
    pending = [f for f in futures if not f.done()]
    if not pending:
        return

    def settle() -> None:
        wait(pending, timeout=seconds)
        notify_cancelled(pending)  # the pool's manager thread cancels queued compiles after shutdown returns
        for f in pending:
            if f.done():
                continue
            try:
                f.set_exception(BrokenProcessPool(why))
            except InvalidStateError:  # the pool settled it meanwhile
                pass

    threading.Thread(target=settle, name="tiletune-settle-abandoned", daemon=True).start()
