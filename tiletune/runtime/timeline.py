"""A process-wide record of where a first tune's wall time goes: compile waves, launcher builds, checks,
timings, re-timing and the waits between them.

Off unless :func:`start` was called (``bench/first_tune_cold.py`` calls it in the process it profiles);
recording is one ``list.append`` per event, and nothing when off.  Every event is ``(kind, label, start,
end)`` on ``time.perf_counter`` -- the clock the compile children report their compiles on, so a child's
compile lands on the same axis as the parent's waits.
"""
from __future__ import annotations

import contextlib
import time
from typing import Dict, Iterator, List, Optional

#: The kinds of events recorded, in the order a timeline lists them.
KINDS = ("search", "setup", "synthesis", "batch", "capture", "hand_over", "submit", "warm_up", "compile", "load",
         "prepare", "compile_wait", "launcher", "check", "timing", "retime")

_events: Optional[List[Dict[str, object]]] = None
_origin = 0.0


def start() -> None:
    """Start recording (and forget anything recorded before); times are reported from now."""
    global _events, _origin
    _events = []
    _origin = time.perf_counter()


def stop() -> List[Dict[str, object]]:
    """Stop recording; the events, each ``{"kind", "label", "start_s", "end_s"}`` in seconds from
    :func:`start`, sorted by start."""
    global _events
    events, _events = _events or [], None
    out = [{"kind": k, "label": lab, "start_s": round(s - _origin, 6), "end_s": round(e - _origin, 6)}
           for k, lab, s, e in events]
    return sorted(out, key=lambda ev: (ev["start_s"], ev["end_s"]))


def recording() -> bool:
    """True between :func:`start` and :func:`stop`."""
    return _events is not None


def add(kind: str, label: str, t0: float, t1: float) -> None:
    """Record one event that ran from ``t0`` to ``t1`` (``time.perf_counter`` seconds)."""
    if _events is not None:
        _events.append((kind, label, t0, t1))


@contextlib.contextmanager
def span(kind: str, label: str = "") -> Iterator[None]:
    """Record the block as one event of ``kind`` (nothing when not recording)."""
    if _events is None:
        yield
        return
    t0 = time.perf_counter()
    try:
        yield
    finally:
        add(kind, label, t0, time.perf_counter())


def summary(events: List[Dict[str, object]]) -> Dict[str, float]:
    """Seconds per kind (overlaps within a kind merged) and ``idle``: the part of the whole span that no
    main-thread event (anything but ``compile``, which runs in children, a ``warm_up`` run ahead in a
    thread, and the enclosing ``search`` and ``batch``) covers."""
    if not events:
        return {}
    begin = min(float(e["start_s"]) for e in events)
    end = max(float(e["end_s"]) for e in events)
    out: Dict[str, float] = {"wall": end - begin}
    for kind in KINDS:
        out[kind] = _covered([(float(e["start_s"]), float(e["end_s"])) for e in events if e["kind"] == kind])
    busy = [(float(e["start_s"]), float(e["end_s"])) for e in events
            if e["kind"] not in ("compile", "search", "batch") and not _in_background(e)]
    out["idle"] = max(0.0, out["wall"] - _covered(busy))
    out["compile_waves"] = float(len(_waves(events)))
    return {k: round(v, 4) for k, v in out.items()}


def _in_background(event: Dict[str, object]) -> bool:
    """True for an event of a background thread (the compiler's warm-up run ahead): not main-thread work."""
    return event["kind"] == "warm_up" and str(event["label"]).startswith("ahead")


def _covered(spans: List[tuple]) -> float:
    """Seconds covered by the union of ``spans``."""
    total, cur_s, cur_e = 0.0, None, None
    for s, e in sorted(spans):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def _waves(events: List[Dict[str, object]]) -> List[tuple]:
    """The compile waves: maximal runs of overlapping child compiles, as ``(start, end, compiles)``."""
    spans = sorted((float(e["start_s"]), float(e["end_s"])) for e in events if e["kind"] == "compile")
    waves: List[list] = []
    for s, e in spans:
        if waves and s <= waves[-1][1]:
            waves[-1][1] = max(waves[-1][1], e)
            waves[-1][2] += 1
        else:
            waves.append([s, e, 1])
    return [tuple(w) for w in waves]
