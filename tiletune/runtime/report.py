"""What tuning tells the user: verbose lines, Triton's summary line, a progress bar, the JSON log.

* ``verbose=True`` (or ``TILETUNE_VERBOSE=1``): one line per event on stdout,
  prefixed ``[tiletune] <kernel>:`` - fixed parameters, each candidate's
  time, dropped candidates with their reason, cache hits, the winner.
* ``TRITON_PRINT_AUTOTUNING=1``: Triton's line after each tuning,
  ``Triton autotuning for function {name} finished after {t:.2f}s; best config
  selected: {config};`` (and ``... best config from cache: ...`` on a hit).
* a rich progress bar on stderr once a tuning has run for more than a second
  (only on a terminal, or with ``TILETUNE_PROGRESS=1``; ``=0`` turns it off);
* one JSON line per tuning (or cache hit) in the kernel's tuning log
  (:func:`tiletune.runtime.tuning_log.append_tuning_log`).
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Dict, List, Optional

from .env import env_off, env_on

__all__ = ["config_to_dict", "config_str", "print_autotuning", "TuningReport"]

def _env_true(name: str) -> bool:
    return env_on(name)


def print_autotuning() -> bool:
    """True when ``TRITON_PRINT_AUTOTUNING=1`` (Triton's knob, read fresh each time)."""
    try:
        from triton import knobs

        return bool(knobs.autotuning.print)
    except Exception:
        return _env_true("TRITON_PRINT_AUTOTUNING")


def config_to_dict(config: Any) -> Dict[str, Any]:
    """The JSON form of a ``triton.Config`` used in the cache and the log."""
    extra = {}
    for name in ("num_ctas", "maxnreg"):
        v = getattr(config, name, None)
        if v is not None and not (name == "num_ctas" and v == 1):
            extra[name] = v
    return {
        "kwargs": dict(config.kwargs),
        "num_warps": getattr(config, "num_warps", None),
        "num_stages": getattr(config, "num_stages", None),
        "extra": extra,
    }


def config_str(config: Any) -> str:
    """Short text of a config: ``BLOCK_M=64, BLOCK_N=32, num_warps=4, num_stages=3``."""
    parts = [f"{k}={v}" for k, v in config.kwargs.items()]
    for name in ("num_warps", "num_stages"):
        v = getattr(config, name, None)
        if v is not None:
            parts.append(f"{name}={v}")
    for name in ("num_ctas", "maxnreg"):
        v = getattr(config, name, None)
        if v is not None and not (name == "num_ctas" and v == 1):
            parts.append(f"{name}={v}")
    return ", ".join(parts)


class _Progress:
    """A rich progress bar that appears only once a tuning has taken more than ``delay`` seconds."""

    def __init__(self, kernel: str, total: int, delay: float = 1.0):
        self.kernel = kernel
        self.total = total
        self.done = 0
        self.delay = delay
        self.start = time.perf_counter()
        self._bar = None
        self._task = None
        if env_off("TILETUNE_PROGRESS"):
            self.enabled = False
        elif env_on("TILETUNE_PROGRESS"):
            self.enabled = True
        else:
            self.enabled = sys.stderr.isatty()

    def advance(self, n: int = 1) -> None:
        self.done += n
        if not self.enabled:
            return
        if self._bar is None and time.perf_counter() - self.start > self.delay:
            try:
                from rich.console import Console
                from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

                self._bar = Progress(
                    TextColumn("[bold]tiletune[/] {task.description}"),
                    BarColumn(),
                    MofNCompleteColumn(),
                    TimeElapsedColumn(),
                    console=Console(stderr=True),
                    transient=True,
                )
                self._bar.start()
                self._task = self._bar.add_task(f"tuning {self.kernel}", total=self.total, completed=0)
            except Exception:  # rich missing or no console: go on without a bar
                self.enabled = False
                return
        if self._bar is not None:
            self._bar.update(self._task, completed=min(self.done, self.total))

    def close(self) -> None:
        if self._bar is not None:
            try:
                self._bar.stop()
            finally:
                self._bar = None


class TuningReport:
    """Collects what happens during one tuning (or cache hit) and reports it.

    Create one per key; call :meth:`note`, :meth:`candidate`, :meth:`dropped`
    while tuning, then :meth:`finish`.
    """

    def __init__(self, kernel: str, source_hash: str, key: Any, verbose: bool = False):
        self.kernel = kernel
        self.source_hash = source_hash
        self.key = key
        self.verbose = verbose or _env_true("TILETUNE_VERBOSE")
        self.start = time.perf_counter()
        self.notes: List[str] = []
        self.candidates: List[Dict[str, Any]] = []
        self._by_id: Dict[int, Dict[str, Any]] = {}
        self.progress: Optional[_Progress] = None

    # ------------------------------------------------------------------ events
    def say(self, message: str) -> None:
        """Print a verbose line (only with verbose on)."""
        if self.verbose:
            print(f"[tiletune] {self.kernel}: {message}", flush=True)

    def note(self, message: str) -> None:
        """A fact about this tuning: kept in the log, printed when verbose."""
        self.notes.append(message)
        self.say(message)

    def _record(self, config: Any) -> Dict[str, Any]:
        rec = self._by_id.get(id(config))
        if rec is None:
            rec = {"config": config_to_dict(config)}
            self._by_id[id(config)] = rec
            self.candidates.append(rec)
        return rec

    def candidate(self, config: Any, ms: float, stage: str = "ms") -> None:
        """A candidate's time (``stage`` ``"ms"`` for the first measurement, ``"retimed_ms"`` after)."""
        rec = self._record(config)
        rec[stage] = ms
        label = "re-timed" if stage != "ms" else "time"
        self.say(f"{label} {ms:.4f} ms  [{config_str(config)}]")

    def predicted(self, config: Any, cost: float, rank: int) -> None:
        """The cost model's figure for a candidate and its rank (0 = the model's pick), before measuring."""
        rec = self._record(config)
        rec["predicted"] = cost
        rec["rank"] = rank

    def dropped(self, config: Any, reason: str) -> None:
        """A candidate left out, and why."""
        rec = self._record(config)
        rec["dropped"] = reason
        self.say(f"dropped [{config_str(config)}]: {reason}")

    def start_progress(self, total: int) -> None:
        self.progress = _Progress(self.kernel, total)

    def advance(self) -> None:
        if self.progress is not None:
            self.progress.advance()

    # ------------------------------------------------------------------ end
    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def finish(self, config: Any, *, status: str, extra: Optional[Dict[str, Any]] = None, write_log: bool = True) -> None:
        """Report the outcome: ``status`` is ``"tuned"``, ``"cache hit"`` or ``"single config"``."""
        if self.progress is not None:
            self.progress.close()
        elapsed = self.elapsed()
        if status == "cache hit":
            self.say(f"cache hit for key {self.key}: [{config_str(config)}]")
        else:
            self.say(f"best [{config_str(config)}] after {elapsed:.2f}s ({status})")
        if print_autotuning() and status != "single config":
            if status == "cache hit":
                print(
                    f"Triton autotuning for function {self.kernel} finished after {elapsed:.2f}s; "
                    f"best config from cache: {config};",
                    flush=True,
                )
            else:
                print(
                    f"Triton autotuning for function {self.kernel} finished after {elapsed:.2f}s; "
                    f"best config selected: {config};",
                    flush=True,
                )
        if not write_log:
            return
        record: Dict[str, Any] = {
            "kernel": self.kernel,
            "status": status,
            "key": self.key,
            "winner": config_to_dict(config),
            "wall_s": round(elapsed, 6),
            "pid": os.getpid(),
            "notes": list(self.notes),
            "candidates": self.candidates,
        }
        if extra:
            record.update(extra)
        try:
            from .tuning_log import append_tuning_log

            self.log_path = append_tuning_log(self.kernel, self.source_hash, record)
        except Exception as exc:  # the log must never break a launch
            self.say(f"could not write the tuning log: {exc}")
