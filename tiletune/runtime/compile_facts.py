"""What both compile modules need: how many compiles run side by side, and one line naming a failure.

A leaf module: :mod:`.parallel_compile` (threads) and :mod:`.compile_workers`
(child processes) both import it, and neither imports the other back.
"""

from __future__ import annotations

import os

__all__ = ["max_workers", "describe_error"]


def max_workers(n_jobs: int) -> int:
    """Threads for ``n_jobs`` compiles: the machine's cores (``TILETUNE_COMPILE_THREADS`` overrides), at most 64."""
    from .env import env_int

    cores = env_int("TILETUNE_COMPILE_THREADS", None, minimum=1)
    if cores is None:
        try:
            cores = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cores = os.cpu_count() or 1
    return max(1, min(n_jobs, cores, 64))


def describe_error(exc: BaseException) -> str:
    """One line naming an exception: ``OutOfResources: out of resource: shared memory ...``."""
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    # Triton's compile errors put the useful line last
    if len(text) > 1 and "error" in text[-1].lower():
        first = f"{first} ... {text[-1].strip()}"
    if len(first) > 400:
        first = first[:400] + "..."
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__
