"""Waiting for a candidate's compile under the search's deadline (the measuring stage's ``_Trial`` holds it).

A first tune returns a timed config, so with nothing timed the first candidate
was awaited whatever the clock said.  Where the model's first candidate is also
the slowest compile (big tiles: seconds on the H100), that held the first tune
for it while the rest of the batch sat compiled.  :func:`deadline_left` gives
such a wait a deadline as soon as another candidate of the batch is ready to be
timed instead, and :func:`await_compile` waits in slices so that a compile
finishing meanwhile can narrow the deadline or make one ready.
"""

from __future__ import annotations

from concurrent.futures import TimeoutError as FuturesTimeout
from typing import Any, Optional, Sequence

from . import bench as _bench

__all__ = ["WAIT_SLICE_S", "OtherReady", "compiled", "ready_first", "deadline_left", "await_compile"]

#: Seconds a wait for a compile lasts before the deadline is looked at again (a compile finishing elsewhere may
#: narrow it, or make another candidate ready to be timed).
WAIT_SLICE_S = 0.05


class OtherReady(Exception):
    """Raised by :func:`await_compile` when a later candidate of the batch finished compiling while this one
    was awaited (alone, that one is timed first: :func:`ready_first`)."""


def compiled(queue: Any, i: int) -> bool:
    """True when candidate ``i``'s compile in ``queue`` has finished (or there was none to run)."""
    if i in getattr(queue, "failures", {}):
        return True
    fut = queue.futures.get(i)
    return fut is None or fut.done()


def ready_first(queue: Any, alive: Sequence[int], j: int) -> int:
    """The position (``j`` or later) of the candidate to time next: ``alive[j]`` when its compile has finished
    or none after it has, else the first later one whose compile has (``alive`` is in the model's order).

    Awaiting the model's first candidate while the rest of the batch sits
    compiled wastes the time its compile takes (matmul M=96 on the H100: the
    first candidate was the batch's slowest compile, 0.64 s, and the
    deadline came while it was awaited with five others compiled)."""
    if compiled(queue, alive[j]):
        return j
    return next((k for k in range(j + 1, len(alive)) if compiled(queue, alive[k])), j)


def deadline_left(trial: Any, queue: Any, alive: Sequence[int], j: int) -> Optional[float]:
    """``trial.left_s()`` for candidate ``alive[j]``; before anything was timed, the seconds to the deadline when a
    later candidate of the batch has finished compiling, else None (the candidate is awaited)."""
    left = trial.left_s()
    if left is not None or trial.deadline is None or trial.active or trial.timings or trial.bench_s or trial.late:
        return left
    failed = getattr(queue, "failures", {})
    if any(compiled(queue, k) and k not in failed for k in alive[j + 1:]):
        return trial.deadline - _bench.clock()
    return None


def await_compile(trial: Any, i: int, queue: Any, alive: Sequence[int], j: int, first: bool,
                  left: Optional[float], switch: bool = False) -> Optional[str]:
    """Wait for candidate ``i``'s compile (``alive[j]``); its failure reason or None.

    With a deadline the wait goes in slices of :data:`WAIT_SLICE_S`: a compile of
    the first batch finishing meanwhile narrows the deadline
    (``trial.narrow_deadline``), and another becoming ready sets one
    (:func:`deadline_left`).  Raises ``TimeoutError`` when the deadline comes
    first (the candidate is then abandoned, not awaited).  ``switch``: raises
    :class:`OtherReady` when a later candidate of ``alive`` finished compiling
    meanwhile (it is timed first, this one awaited afterwards)."""
    while True:
        if trial.deadline is None or trial.active:
            return queue.wait(i)
        try:
            return queue.wait(i, timeout=WAIT_SLICE_S if left is None else max(0.0, min(left, WAIT_SLICE_S)))
        except FuturesTimeout:
            if first:
                trial.narrow_deadline(queue)
            if switch and ready_first(queue, alive, j) != j:
                raise OtherReady() from None
            left = deadline_left(trial, queue, alive, j)
            if left is not None and left <= 0:
                raise
