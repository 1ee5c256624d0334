"""The implementation behind :func:`tiletune.tune.autotune`: tune a Python function over config dicts.

One :class:`FunctionTuner` wraps one function.  A call looks up the key
(``key_fn`` through :func:`~tiletune.runtime.keys.to_hashable`) in memory, then in
the disk cache (:class:`~tiletune.runtime.cache.TuningCache`, kind
``"function"``), and tunes on a miss: every config that ``prune_fn`` keeps is
run ``warmup`` times and timed ``rep`` times, failures are skipped, and the
fastest is stored and used.  With a process group the decision to tune, the
timings and the winner go through :mod:`tiletune.runtime.distributed`, so
every rank ends with the same config.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import os
import threading
import time
import types
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from tiletune.errors import TuningError
from tiletune.runtime import distributed as dd
from tiletune.runtime.key_check import check_key
from tiletune.runtime.keys import config_label, config_material, to_hashable, to_key_material

from .env import env_on

__all__ = ["FunctionTuner"]

logger = logging.getLogger("tiletune.tune")



def _print_autotuning() -> bool:
    return env_on("TRITON_PRINT_AUTOTUNING")


def _time_function(
    call: Callable[[], Any], warmup: int, rep: int, before: Optional[Callable[[], None]] = None
) -> float:
    """Median wall-clock time (ms) of ``call()`` over ``rep`` timed calls after ``warmup`` untimed ones.

    ``before()`` runs ahead of every call, outside the timed region (restoring
    arguments).  The device is synchronised around each timed call.  The
    shared benchmark layer's :func:`tiletune.runtime.bench.bench_counts`.
    """
    from tiletune.runtime import bench

    return bench.bench_counts(call, warmup, rep, before=before)


#: Default per-config budget of the function tuner (seconds, warmup and timed calls together).
DEFAULT_TIMEOUT_S = 60.0


class ConfigTimeout(TuningError):
    """A config's calls took longer than ``autotune_timeout_s``: it is dropped and never cached."""


def config_timeout_s(value: Optional[float], owner: str) -> float:
    """The per-config budget: ``value``, else ``TILETUNE_AUTOTUNE_TIMEOUT_S``, else :data:`DEFAULT_TIMEOUT_S`."""
    source = "autotune_timeout_s"
    if value is None:
        env = os.environ.get("TILETUNE_AUTOTUNE_TIMEOUT_S", "").strip()
        if not env:
            return DEFAULT_TIMEOUT_S
        value, source = env, "TILETUNE_AUTOTUNE_TIMEOUT_S"
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = float("nan")
    if not seconds > 0 or seconds != seconds:
        raise TuningError(f"tiletune: autotune of {owner}: {source}={value!r} is not a positive number of seconds")
    return seconds


#: How often (real seconds) the watchdog of a running config reads the clock.
WATCHDOG_POLL_S = 0.05


class _Watchdog:
    """Says once, naming the config, when a config's calls run past their deadline without returning.

    A Python call cannot be stopped from outside, so a config that never
    returns would block tuning silently; a daemon thread reads the measuring
    clock (:func:`tiletune.runtime.bench.clock`, so a virtual clock drives it
    in tests) every :data:`WATCHDOG_POLL_S` and warns (``TiletuneWarning`` and
    the ``tiletune.tune`` log) once the deadline has passed.
    """

    def __init__(self, message: str, deadline: float, clock: Callable[[], float]):
        self._done = threading.Event()
        self._message = message
        self._deadline = deadline
        self._clock = clock
        self.fired = False
        self._thread = threading.Thread(target=self._watch, name="tiletune-config-watchdog", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._done.wait(WATCHDOG_POLL_S):
            if self._clock() > self._deadline:
                self.fired = True
                from tiletune.errors import TiletuneWarning
                import warnings

                logger.warning("%s", self._message)
                warnings.warn(self._message, TiletuneWarning, stacklevel=1)
                return

    def stop(self) -> None:
        """The config's calls are over (returned or raised): no warning from now on."""
        self._done.set()


def _function_source(fn: Callable[..., Any]) -> str:
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        return f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', repr(fn))}"


class _Restorer:
    """Copies of the ``restore_args`` tensors of one call, put back on demand."""

    def __init__(self, fn: Callable[..., Any], which: Sequence[Union[str, int]], args: tuple, kwargs: dict, tuner: str):
        import torch

        self._pairs: List[Tuple[Any, Any]] = []
        if not which:
            return
        bound = None
        for w in which:
            if isinstance(w, int) and not isinstance(w, bool):
                if w >= len(args) or w < -len(args):
                    raise TuningError(
                        f"tiletune: {tuner}: restore_args index {w} is out of range for a call with "
                        f"{len(args)} positional argument(s)"
                    )
                value, label = args[w], f"positional argument {w}"
            else:
                if bound is None:
                    try:
                        bound = inspect.signature(fn).bind_partial(*args, **kwargs).arguments
                    except (TypeError, ValueError):
                        bound = dict(kwargs)
                if w not in bound:
                    raise TuningError(
                        f"tiletune: {tuner}: restore_args names {w!r}, which this call does not pass; "
                        "name a parameter the call passes, or give its positional index"
                    )
                value, label = bound[w], f"argument {w!r}"
            if not isinstance(value, torch.Tensor):
                raise TuningError(
                    f"tiletune: {tuner}: restore_args {label} is a {type(value).__name__}, not a tensor; "
                    "only tensors can be restored"
                )
            self._pairs.append((value, value.detach().clone()))

    def __bool__(self) -> bool:
        return bool(self._pairs)

    def restore(self) -> None:
        """Copy the saved contents back into the tensors."""
        import torch

        with torch.no_grad():
            for t, saved in self._pairs:
                t.copy_(saved)


def _count(value: Any, name: str, owner: str) -> int:
    """``value`` as a number of calls (an integer >= 0), or a TuningError naming ``name`` and the fix."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value < 0 \
            or value == float("inf") or int(value) != value:
        raise TuningError(f"tiletune: autotune of {owner}: {name}={value!r} is not a number of calls; "
                          f"give an integer >= 0 (e.g. {name}={3 if name == 'warmup' else 10})")
    return int(value)


class FunctionTuner:
    """A Python function tuned over a list of config dicts (see :func:`tiletune.tune.autotune`).

    Callable like the function, plus the keywords ``autotune``,
    ``autotune_verbose``, ``autotune_pg`` and ``autotune_allow_arg_overwrite``.
    ``best_configs`` maps ``(hashable key, world size)`` to the config in use.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        config_space: Sequence[Mapping[str, Any]],
        key_fn: Optional[Callable[..., Any]],
        prune_fn: Optional[Callable[..., bool]] = None,
        *,
        warmup: int = 3,
        rep: int = 10,
        cache_results: bool = True,
        name: Optional[str] = None,
        restore_args: Optional[Sequence[Union[str, int]]] = None,
        shard: bool = False,
        config_kwarg: Optional[str] = None,
        bench_method: Optional[str] = None,
        cache_dir: Optional[Union[str, Path]] = None,
        timeout_s: Optional[float] = None,
    ) -> None:
        qual = name or f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', getattr(fn, '__name__', 'fn'))}"
        if not config_space:
            raise TuningError(f"tiletune: autotune of {qual}: config_space is empty; give at least one config dict")
        space = list(config_space)
        for i, c in enumerate(space):
            if not isinstance(c, Mapping):
                raise TuningError(
                    f"tiletune: autotune of {qual}: config_space[{i}] is a {type(c).__name__}, not a dict "
                    "of keyword arguments (wrap a triton.Config as {'config': cfg})"
                )
        if isinstance(restore_args, (str, int)):
            restore_args = [restore_args]
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.name = qual
        self.config_space: List[Mapping[str, Any]] = space
        self.key_fn = key_fn
        self.prune_fn = prune_fn
        self.warmup = _count(warmup, "warmup", qual)
        self.rep = _count(rep, "rep", qual)
        self.cache_results = bool(cache_results)
        self.restore_args = list(restore_args or [])
        self.shard = bool(shard)
        self.config_kwarg = config_kwarg
        self.bench_method = bench_method
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.timeout_s = config_timeout_s(timeout_s, qual)
        self.best_configs: Dict[Any, Mapping[str, Any]] = {}
        self._materials = [config_material(c) for c in space]
        self._labels = [config_label(c) for c in space]
        self._config_keys = set().union(*(set(c) for c in space)) if config_kwarg is None else {config_kwarg}
        space_text = json.dumps(self._materials, sort_keys=True)
        self.source = _function_source(fn) + "\n# tiletune config space: " + space_text
        self._cache = None
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return f"<tiletune.tune.autotune {self.name} ({len(self.config_space)} configs)>"

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """Support decorating methods: bind ``obj`` as the first argument."""
        return self if obj is None else types.MethodType(self, obj)

    @property
    def cache(self):
        """The :class:`~tiletune.runtime.cache.TuningCache` of this function (created on first use)."""
        if self._cache is None:
            from tiletune.runtime.cache import TuningCache

            self._cache = TuningCache(self.name, self.source, directory=self.cache_dir, kind="function")
        return self._cache

    # ---------------------------------------------------------------- calling

    def _call_with(self, config: Mapping[str, Any], args: tuple, kwargs: dict) -> Any:
        if self.config_kwarg is not None:
            merged = {self.config_kwarg: dict(config), **kwargs}
        else:
            merged = {**config, **kwargs}
        return self.fn(*args, **merged)

    def _pruned(self, args: tuple, kwargs: dict) -> List[int]:
        if self.prune_fn is None:
            return list(range(len(self.config_space)))
        return [i for i, c in enumerate(self.config_space) if self.prune_fn(c, *args, **kwargs)]

    def __call__(
        self,
        *args: Any,
        autotune: bool = True,
        autotune_verbose: bool = False,
        autotune_pg: Any = None,
        autotune_allow_arg_overwrite: bool = False,
        **kwargs: Any,
    ) -> Any:
        """Call the function with the tuned config for this call's key (tuning it first if needed)."""
        dups = self._config_keys.intersection(kwargs)
        if dups and not autotune_allow_arg_overwrite:
            raise ValueError(
                f"tiletune: {self.name} was called with keyword argument(s) {sorted(dups)} that the tuned "
                "config also sets; drop them, or pass autotune_allow_arg_overwrite=True to let the call's "
                "values win"
            )
        if not autotune:
            cands = self._pruned(args, kwargs)
            if not cands:
                raise TuningError(f"tiletune: {self.name}: prune_fn rejected every config for this call")
            return self._call_with(self.config_space[cands[0]], args, kwargs)

        if self.key_fn is not None:
            raw_key = self.key_fn(*args, **kwargs)
            check_key(raw_key, self.name)
            key = to_hashable(raw_key)
        else:
            key = None
        world = dd.group_size(autotune_pg)
        mem_key = (key, world)
        config = self.best_configs.get(mem_key)
        if config is None:
            with self._lock:
                config = self.best_configs.get(mem_key)
                if config is None:
                    index = self._resolve(key, args, kwargs, autotune_pg, autotune_verbose)
                    config = self.config_space[index]
                    self.best_configs[mem_key] = config
        return self._call_with(config, args, kwargs)

    # ---------------------------------------------------------------- deciding

    def _decision(self, key_str: str, cands: List[int], pg: Any) -> Any:
        """This key's :class:`~tiletune.runtime.decision.Decision` (the path every tuner shares)."""
        from tiletune.runtime.decision import Decision

        return Decision(
            f"autotune of {self.name}", self.cache if self.cache_results else None, key_str,
            problem=[key_str, [self._materials[i] for i in cands]], pg=pg,
            note=lambda m: logger.info("tiletune: %s: %s", self.name, m),
        )

    def _match(self, cands: List[int]) -> Callable[[Mapping[str, Any]], Optional[int]]:
        """The decision path's match stage: a cached entry -> the index of its config among ``cands``."""

        def match(entry: Mapping[str, Any]) -> Optional[int]:
            wanted = entry.get("config")
            for i in cands:
                if self._materials[i] == wanted:
                    return i
            return None

        return match

    def _resolve(self, key: Any, args: tuple, kwargs: dict, pg: Any, verbose: bool) -> int:
        """The index of the config to use for ``key``: from the cache, or by tuning (agreed over ``pg``)."""
        from tiletune.runtime import decision
        from tiletune.runtime.cache import entry_key

        world, rank = dd.group_size(pg), dd.group_rank(pg)
        material = to_key_material(key)
        key_str = entry_key({"key": material, "world_size": world})
        cands = self._pruned(args, kwargs)
        d = self._decision(key_str, cands, pg)

        failed = None if cands else TuningError(
            f"tiletune: {self.name}: prune_fn rejected every one of the {len(self.config_space)} configs "
            f"for key {material!r}; relax prune_fn or add configs"
        )
        # the one decision path: lookup, validation, agreement over pg (rank 0's cached winner), tune, store
        decided = decision.decide(d, self._match(cands),
                                  lambda: self._tune(material, cands, args, kwargs, pg, verbose, world, rank),
                                  failed=failed)
        if decided.status == "tuned":
            self._log(material, cands, *decided.extra["log"])
        return int(decided.choice)

    # ---------------------------------------------------------------- tuning

    def _bench(self):
        if self.bench_method is None:
            return None
        from tiletune.runtime import bench

        method, note = bench.effective_method(bench.resolve_method(self.bench_method))
        if note:
            logger.info("tiletune: %s: %s", self.name, note)
        return bench.get_bench(method)

    def _tune(
        self,
        material: Any,
        cands: List[int],
        args: tuple,
        kwargs: dict,
        pg: Any,
        verbose: bool,
        world: int,
        rank: int,
    ) -> Tuple[int, Optional[dict], Dict[str, Any]]:
        """Time the candidates (agreed over ``pg``); ``(winner index, cache entry or None, facts for the log)``."""
        restorer = _Restorer(self.fn, self.restore_args, args, kwargs, self.name)
        bench = self._bench()
        labels = [self._labels[i] for i in cands]
        tag = f"[tiletune rank {rank}/{world}] " if world > 1 else "[tiletune] "

        def bench_one(j: int) -> float:
            config = self.config_space[cands[j]]
            from tiletune.runtime.bench import clock

            deadline = clock() + self.timeout_s

            def call() -> Any:
                result = self._call_with(config, args, kwargs)
                if clock() > deadline:
                    raise ConfigTimeout(
                        f"tiletune: {self.name}: config {labels[j]} took more than autotune_timeout_s="
                        f"{self.timeout_s:g} s (warmup and timed calls together); dropped"
                    )
                return result

            before = restorer.restore if restorer else None
            watchdog = _Watchdog(
                f"tiletune: {self.name}: config {labels[j]} has run for more than autotune_timeout_s="
                f"{self.timeout_s:g} s without returning; tuning waits for it (a running Python call cannot be "
                "stopped). If it never returns, interrupt the process and fix or remove that config, or prune it "
                "with prune_fn", deadline, clock)
            try:
                if bench is None:
                    return _time_function(call, self.warmup, self.rep, before)

                def call_restoring() -> Any:
                    if before is not None:
                        before()
                    return call()

                return bench(call_restoring)
            finally:
                watchdog.stop()

        def on_error(j: int, exc: BaseException) -> None:
            logger.warning("tiletune: %s: config %s failed: %s: %s", self.name, labels[j], type(exc).__name__, exc)
            if verbose:
                print(f"{tag}{self.name}: config {labels[j]} failed: {type(exc).__name__}: {exc}", flush=True)

        t0 = time.perf_counter()
        from tiletune.runtime.decision import protect_side_effects

        try:
            with protect_side_effects(f"autotune of {self.name}"):
                agreement = dd.agree_on_best(
                    len(cands), bench_one, pg, shard=self.shard, labels=labels, what=f"autotune of {self.name}",
                    on_error=on_error,
                )
        finally:
            if restorer:
                restorer.restore()
        wall_s = time.perf_counter() - t0
        winner = cands[agreement.index]
        best_ms = agreement.times[agreement.index]
        if verbose:
            for j, t in enumerate(agreement.times):
                shown = "failed" if t is None else f"{t:.4f} ms"
                if world > 1:
                    mine = agreement.local_times.get(j)
                    here = "not timed" if j not in agreement.local_times else (
                        "failed" if mine is None else f"{mine:.4f} ms")
                    shown += f" (agreed; this rank: {here})"
                print(f"{tag}{self.name}: config {labels[j]}: {shown}", flush=True)
        if verbose or _print_autotuning():
            print(
                f"{tag}{self.name}: tuned key {material!r} in {wall_s:.2f} s over {len(cands)} configs; "
                f"best {self._labels[winner]} ({best_ms:.4f} ms)",
                flush=True,
            )
        timings = [{"config": self._materials[c], "ms": agreement.times[j]} for j, c in enumerate(cands)]
        entry = None
        if self.cache_results:
            entry = {
                "config": self._materials[winner],
                "time_ms": best_ms,
                "timings_ms": timings,
                "world_size": world,
                "sharded": self.shard and world > 1,
                "method": getattr(bench, "method", "wall") if bench is not None else "wall",
            }
        return winner, entry, {"log": (timings, agreement, winner, wall_s, world, rank)}

    def _log(
        self, material: Any, cands: List[int], timings: list, agreement: Any, winner: int, wall_s: float,
        world: int, rank: int,
    ) -> None:
        try:
            from tiletune.runtime.cache import source_hash
            from tiletune.runtime.decision import log

            log(
                self.name,
                source_hash(self.source),
                {
                    "kind": "function",
                    "key": material,
                    "candidates": timings,
                    "local_ms": [agreement.local_times.get(j) for j in range(len(cands))],
                    "winner": self._materials[winner],
                    "errors": {self._labels[cands[j]]: e for j, e in agreement.local_errors.items()},
                    "timed_here": len(agreement.timed),
                    "rank": rank,
                    "world_size": world,
                    "sharded": agreement.sharded,
                    "wall_s": wall_s,
                },
                directory=self.cache_dir,
            )
        except Exception as exc:  # the log is a convenience; never fail a call because of it
            logger.debug("tiletune: %s: could not write the tuning log: %s", self.name, exc)
