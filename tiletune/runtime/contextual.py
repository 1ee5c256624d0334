"""Contextual autotuning: tune the kernels a function launches in the context of the whole function.

``@tiletune.contextual_autotune()`` over a function that launches several
autotuned kernels (``tiletune.autotune`` or ``triton.autotune``) changes how
those kernels tune.  Instead of each kernel benchmarking its candidates in
isolation on its first launch, the function itself is run repeatedly, and on
every run each kernel launches its next candidate, timed where it runs (after
the kernels before it, with the caches and the clocks they leave):

* runs come in steps; in step ``s`` a kernel with ``n`` candidates launches
  candidate ``s mod n`` (counted from the step where the kernel first
  launched), ``n_warmup`` untimed runs then ``n_repeat`` timed runs per step,
  until every kernel has covered every candidate;
* each launch is timed by itself: CUDA events around it on a GPU (resolved
  after the run, so launches are not serialised), ``perf_counter`` with a
  device synchronise elsewhere (Triton's interpreter, NPUs);
* each kernel then settles on the candidate with the lowest median time;
  with ``is_dist=True`` the medians are combined over the default process
  group (:func:`~tiletune.runtime.distributed.combine_timings`: slowest rank,
  a failure anywhere excludes), so every rank settles on the same configs;
* the winners go into each kernel's own cache (memory, and tiletune's disk
  cache for tiletune kernels), so later launches anywhere hit it, and the
  function is called one last time with the winners: that call's result is
  returned.

Side effects: the function's tensor arguments are cloned before tuning and
copied back before every run and before the final call, so the final call
starts from the caller's data.  Anything else the function changes (globals,
tensors it reaches other than through its arguments) is changed on every run;
outputs must be recomputed by the function (not accumulated across calls).

Launches whose key a kernel has already decided (in memory, or in tiletune's
disk cache) are not tuned again.  When nothing needs tuning the first run's
result is returned and the function runs once.

Per-rank logs: one JSON line per candidate per tuned (kernel, key) in
``./.autotune_logs/rank-<rank>.jsonl`` (``log_dir=`` elsewhere).

The hook: :data:`tiletune.runtime.autotuner.LAUNCH_CONTEXT` is set while the
function runs in tuning mode; ``tiletune.Autotuner.run`` hands undecided
launches to it, and Triton's ``Autotuner.run`` is wrapped for the duration
(restored afterwards).
"""

from __future__ import annotations

import functools
import json
import os
import statistics
import threading
import types
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from triton.runtime.autotuner import Autotuner as _TritonAutotuner

from tiletune.errors import TuningError

from .agreement import Checker, check_mode, differing

from . import bench as _bench
from . import distributed as _dd
from .autotuner import LAUNCH_CONTEXT, Autotuner
from . import decision as _decision
from .decision import Decision
from .report import config_str, config_to_dict
from .tuning_log import json_plain

__all__ = ["contextual_autotune", "ContextualTuner", "LOG_DIR"]

#: Where the per-rank logs go, relative to the working directory.
LOG_DIR = ".autotune_logs"


# --------------------------------------------------------------------------- restoring the arguments


class _ArgumentSnapshot:
    """Clones of the tensor arguments of one call (top level, and inside lists, tuples and dicts)."""

    def __init__(self, args: tuple, kwargs: dict):
        import torch

        self._pairs: List[Tuple[Any, Any]] = []
        seen: set = set()

        def visit(v: Any, depth: int = 0) -> None:
            if isinstance(v, torch.Tensor):
                if id(v) not in seen:
                    seen.add(id(v))
                    self._pairs.append((v, v.detach().clone()))
            elif depth < 2 and isinstance(v, (list, tuple)):
                for x in v:
                    visit(x, depth + 1)
            elif depth < 2 and isinstance(v, dict):
                for x in v.values():
                    visit(x, depth + 1)

        for a in args:
            visit(a)
        for a in kwargs.values():
            visit(a)

    def restore(self) -> None:
        import torch

        with torch.no_grad():
            for t, saved in self._pairs:
                t.copy_(saved)


# --------------------------------------------------------------------------- timing one launch


def _use_cuda_events() -> bool:
    if _bench.interpreting():
        return False
    try:
        import torch

        return torch.cuda.is_available() and torch.cuda.is_initialized()
    except Exception:  # pragma: no cover
        return False


class _Timer:
    """Times single launches: CUDA events resolved after the run, or wall clock with a synchronise."""

    def __init__(self) -> None:
        self.pending: List[Tuple[Any, Any, Callable[[float], None]]] = []

    def time(self, launch: Callable[[], Any], record: Callable[[float], None]) -> Any:
        if _use_cuda_events():  # checked per launch: the function may be what initialises CUDA
            import torch

            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            result = launch()
            end.record()
            self.pending.append((start, end, record))
            return result
        _bench._synchronize()
        t0 = _bench.clock()
        result = launch()
        _bench._synchronize()
        record((_bench.clock() - t0) * 1e3)
        return result

    def resolve(self) -> None:
        """Turn the events of the run into times (after a device synchronise)."""
        if not self.pending:
            return
        import torch

        torch.cuda.synchronize()
        for start, end, record in self.pending:
            record(float(start.elapsed_time(end)))
        self.pending.clear()


# --------------------------------------------------------------------------- kernels: tiletune's and Triton's


class _TiletuneKernel:
    """How the context drives a ``tiletune.Autotuner``."""

    def __init__(self, tuner: Autotuner):
        self.tuner = tuner
        self.name = tuner.kernel_name

    def prepare(self, key: Any, args: tuple, kwargs: dict) -> Tuple[Any, List[Any]]:
        return self.tuner.tuning_problem(args, kwargs)

    def decision(self, state: Any, candidates: Sequence[Any]) -> Tuple[Decision, Callable[[Any], Optional[int]]]:
        """The kernel's own decision (its disk cache and entry checks) and the match onto ``candidates``."""
        return self.tuner.cache_decision(state, candidates)

    def launch(self, config: Any, args: tuple, kwargs: dict) -> Any:
        return self.tuner.launch_config(config, args, kwargs)

    def checker(self) -> Optional[Checker]:
        """The agreement check this kernel's candidates get (None: off, e.g. a hand list)."""
        t = self.tuner
        mode = check_mode(t.verify, bool(t.synthesize_configs), t.kernel_name)
        return None if mode == "off" else Checker(mode, t.verify if isinstance(t.verify, dict) else None)

    def written(self, state: Any) -> Dict[str, Any]:
        """The tensors a launch writes (what the agreement check compares), by parameter name."""
        return {n: state.bound[n] for n in self.tuner._checked_names(state.bound)}

    def adopt(self, key: Any, state: Any, config: Any, timings: Dict[Any, Optional[float]], status: str,
              extra: Dict[str, Any], decision: Optional[Decision] = None) -> None:
        self.tuner.adopt(key, state, config, timings, status=status, extra=extra, decision=decision)


class _TritonKernel:
    """How the context drives Triton's own ``triton.runtime.autotuner.Autotuner``."""

    def __init__(self, tuner: _TritonAutotuner):
        self.tuner = tuner
        self.name = getattr(tuner.base_fn, "__name__", repr(tuner))

    @staticmethod
    def key(tuner: _TritonAutotuner, args: tuple, kwargs: dict) -> tuple:
        """The tuning key exactly as Triton 3.x's ``Autotuner.run`` computes it."""
        all_args = {**dict(zip(tuner.arg_names, args)), **kwargs}
        named = {k: v for k, v in all_args.items() if k in tuner.arg_names}
        key = [named[k] for k in tuner.keys if k in named]
        for arg in named.values():
            if hasattr(arg, "dtype"):
                key.append(str(arg.dtype))
        return tuple(key)

    def prepare(self, key: Any, args: tuple, kwargs: dict) -> Tuple[Any, List[Any]]:
        self.tuner.nargs = dict(zip(self.tuner.arg_names, args))
        try:
            return None, list(self.tuner.prune_configs(kwargs))
        finally:
            self.tuner.nargs = None

    def decision(self, state: Any, candidates: Sequence[Any]) -> Tuple[Decision, Callable[[Any], Optional[int]]]:
        """No disk cache of tiletune's (Triton's own is read by its own tuning only): the decision path agrees
        and tunes."""
        return Decision(f"kernel {self.name!r}", None, ""), lambda entry: None

    def checker(self) -> None:
        return None  # the author's own list: not checked (as triton.autotune)

    def launch(self, config: Any, args: tuple, kwargs: dict) -> Any:
        t = self.tuner
        config_kwargs = config.all_kwargs()
        t.best_config = config
        if config.pre_hook is not None:
            config.pre_hook({**dict(zip(t.arg_names, args)), **kwargs, **config_kwargs})
        return t.fn.run(*args, **kwargs, **config_kwargs)

    def adopt(self, key: Any, state: Any, config: Any, timings: Dict[Any, Optional[float]], status: str,
              extra: Dict[str, Any], decision: Optional[Decision] = None) -> None:
        t = self.tuner
        t.configs_timings = {c: [v, v, v] for c, v in timings.items() if v is not None}
        if getattr(t, "cache_results", False) and status.startswith("tuned"):
            try:  # Triton's own disk cache, as its tuning writes it (nothing to benchmark: timings are set)
                t.check_disk_cache(key, list(timings), lambda: None)
            except Exception:
                pass
        t.cache[key] = config
        t.best_config = config


_patch_lock = threading.Lock()
_patch_depth = 0
_triton_run = _TritonAutotuner.run


def _triton_run_in_context(self: _TritonAutotuner, *args: Any, **kwargs: Any) -> Any:
    """Triton's ``Autotuner.run`` while a contextual tuning is active (in any thread)."""
    ctx = LAUNCH_CONTEXT.get()
    if ctx is None or len(self.configs) <= 1:
        return _triton_run(self, *args, **kwargs)
    key = _TritonKernel.key(self, args, kwargs)
    if key in self.cache:
        return _triton_run(self, *args, **kwargs)
    return ctx.launch(self, key, args, kwargs)


class _PatchTriton:
    """Wrap ``triton.runtime.autotuner.Autotuner.run`` for the duration (nested and threaded uses counted)."""

    def __enter__(self) -> "_PatchTriton":
        global _patch_depth
        with _patch_lock:
            if _patch_depth == 0:
                _TritonAutotuner.run = _triton_run_in_context
            _patch_depth += 1
        return self

    def __exit__(self, *exc: Any) -> None:
        global _patch_depth
        with _patch_lock:
            _patch_depth -= 1
            if _patch_depth == 0:
                _TritonAutotuner.run = _triton_run


# --------------------------------------------------------------------------- one tuning session


class _Entry:
    """One (kernel, key) met while tuning: its candidates, its samples, its failures."""

    def __init__(self, kernel: Any, key: Any, state: Any, candidates: List[Any], first_step: int):
        self.kernel = kernel
        self.key = key
        self.state = state
        self.candidates = candidates
        self.labels = [config_str(c) for c in candidates]
        self.first_step = first_step
        self.samples: Dict[int, List[float]] = {i: [] for i in range(len(candidates))}
        self.errors: Dict[int, str] = {}
        self.decided: Optional[Any] = None  # set when not tuned here (cache hit, single config)
        self.decision: Optional[Decision] = None  # how the key was decided; a tuned winner is stored by it
        self.key_json = json_plain(list(key) if isinstance(key, tuple) else key)
        self.checker: Optional[Checker] = None  # the agreement check (configs=[]), see _Session.check
        self.prints: Dict[int, Any] = {}  # candidate -> record of its outputs at its first launch
        self.checked_run = -1  # the run whose first launch of this entry was looked at

    def candidate_for(self, step: int) -> int:
        return (step - self.first_step) % len(self.candidates)

    def remaining_after(self, step: int) -> int:
        if self.decided is not None:
            return 0
        return max(0, len(self.candidates) - (step - self.first_step + 1))


class _Session:
    """The launch context of one contextual tuning (see :data:`LAUNCH_CONTEXT`)."""

    def __init__(self, name: str, pg: Any, log_dir: Path):
        self.name = name
        self.pg = pg
        self.log_dir = log_dir
        self.entries: Dict[Tuple[int, Any], _Entry] = {}
        self.step = 0
        self.timed = False
        self.timer = _Timer()
        self.errors: List[str] = []
        self.run_index = 0  # which run of the function is under way (the agreement check looks once a run)

    # ------------------------------------------------------------ the hook
    def launch(self, tuner: Any, key: Any, args: tuple, kwargs: dict) -> Any:
        """Called by an autotuner's ``run`` for a launch whose key is not decided yet."""
        entry = self.entries.get((id(tuner), key))
        if entry is None:
            entry = self._meet(tuner, key, args, kwargs)
        kernel = entry.kernel
        if entry.decided is not None:
            return kernel.launch(entry.decided, args, kwargs)
        i = entry.candidate_for(self.step)
        if i not in entry.errors:
            record = (lambda ms, s=entry.samples[i]: s.append(ms)) if self.timed else (lambda ms: None)
            try:
                result = self.timer.time(lambda: kernel.launch(entry.candidates[i], args, kwargs), record)
            except Exception as exc:
                entry.errors[i] = f"{type(exc).__name__}: {exc}"
            else:
                self.check(entry, i)
                return result
        # this step's candidate fails here: launch another one, untimed, so the run goes on
        for j in range(len(entry.candidates)):
            if j in entry.errors:
                continue
            try:
                return kernel.launch(entry.candidates[j], args, kwargs)
            except Exception as exc:
                entry.errors[j] = f"{type(exc).__name__}: {exc}"
        msg = (f"kernel {kernel.name!r}, key {entry.key_json}: every candidate failed on this rank: "
               + "; ".join(f"[{entry.labels[j]}]: {e}" for j, e in sorted(entry.errors.items())))
        if msg not in self.errors:
            self.errors.append(msg)
        return None  # raised on every rank at the end of the run (no rank leaves the run early)

    def check(self, entry: _Entry, i: int) -> None:
        """The agreement check, once a run per entry: candidate ``i``'s outputs at its first launch in a run
        against the first candidate's.  The function's arguments are restored before every run, so equal
        candidates see equal inputs; a disagreement is an error raised on every rank after this run."""
        if entry.checker is None or entry.checked_run == self.run_index:
            return
        entry.checked_run = self.run_index
        if i in entry.prints:
            return
        entry.prints[i] = entry.checker.take(entry.kernel.written(entry.state))
        ref = next(iter(entry.prints))
        if ref == i:
            return
        d = entry.checker.differs(entry.prints[ref], entry.prints[i])
        if d is None:
            return
        names = differing(entry.candidates[ref], entry.candidates[i])
        msg = (f"kernel {entry.kernel.name!r}, key {entry.key_json}: candidates [{entry.labels[ref]}] and "
               f"[{entry.labels[i]}] compute different outputs ({d.why}); they differ in {', '.join(names)}: "
               "one of those carries meaning, so tiletune will not choose it. Tune the kernel on its own (outside "
               "contextual_autotune) to be told which, pass it at launch, or list its safe values in hints=; "
               "verify=False turns this check off")
        if msg not in self.errors:
            self.errors.append(msg)

    def _meet(self, tuner: Any, key: Any, args: tuple, kwargs: dict) -> _Entry:
        """The first launch of (kernel, key): candidates, and whether a cached winner is reused."""
        kernel = _TiletuneKernel(tuner) if isinstance(tuner, Autotuner) else _TritonKernel(tuner)
        error: Optional[BaseException] = None
        state, candidates = None, []
        try:
            state, candidates = kernel.prepare(key, args, kwargs)
        except Exception as exc:
            if not _dd.is_active(self.pg):
                raise
            error = exc  # raised on this rank by the decision path, after the ranks' one exchange
        d, match = kernel.decision(state, candidates) if error is None else (Decision("", None, ""), None)
        # the one decision path (runtime/decision.py): the kernel's cache lookup and checks (a single config has
        # nothing to look up), rank 0's cached choice agreed over the group, with the same candidate list on
        # every rank; the tuning is this session's runs, its winner stored with the same decision (settle)
        d = replace(d, what=f"contextual tuning of {self.name} (kernel {kernel.name!r})", pg=self.pg,
                    problem=[kernel.name, json_plain(key), [config_str(c) for c in candidates]],
                    cache=d.cache if len(candidates) > 1 else None)
        index = _decision.decide(d, match, None, failed=error).choice
        entry = _Entry(kernel, key, state, candidates, self.step)
        entry.decision = d
        entry.checker = kernel.checker() if len(candidates) > 1 else None
        self.entries[(id(tuner), key)] = entry
        if len(candidates) == 1:
            entry.decided = candidates[0]
            kernel.adopt(key, state, candidates[0], {}, "single config", {})
        elif index is not None:
            entry.decided = candidates[int(index)]
            kernel.adopt(key, state, entry.decided, {}, "cache hit", {})
        return entry

    # ------------------------------------------------------------ between runs
    def tuning(self) -> List[_Entry]:
        return [e for e in self.entries.values() if e.decided is None]

    def sync(self, local: int) -> int:
        """The max of ``local`` over the ranks; raises on every rank if any rank recorded an error."""
        views = _dd.all_gather_json({"n": int(local), "errors": self.errors}, self.pg)
        failed = [(r, e) for r, v in enumerate(views) for e in v["errors"]]
        if failed:
            many = len(views) > 1
            raise TuningError(
                f"contextual tuning of {self.name}: "
                + "; ".join((f"rank {r}: " if many else "") + e for r, e in failed)
                + ". Fix the failing configs or prune them."
            )
        return max(v["n"] for v in views)

    def remaining(self) -> int:
        return max([e.remaining_after(self.step) for e in self.entries.values()] or [0])

    # ------------------------------------------------------------ the end
    def settle(self) -> None:
        """Pick every tuned (kernel, key)'s winner from the (agreed) medians; adopt it; write the log."""
        tuned = self.tuning()
        rank, world = _dd.group_rank(self.pg), _dd.group_size(self.pg)
        _dd.check_consistent([[e.kernel.name, e.key_json, e.labels] for e in tuned], self.pg,
                             what=f"kernels tuned by the contextual tuning of {self.name}")
        local: List[Optional[float]] = []
        for e in tuned:
            for i in range(len(e.candidates)):
                ok = i not in e.errors and e.samples[i]
                local.append(statistics.median(e.samples[i]) if ok else None)
        agreed = _dd.combine_timings(local, self.pg)
        lines: List[dict] = []
        offset = 0
        for e in tuned:
            n = len(e.candidates)
            times, mine = agreed[offset:offset + n], local[offset:offset + n]
            offset += n
            if all(t is None for t in times):
                detail = "; ".join(f"[{e.labels[i]}]: {e.errors.get(i, 'failed on another rank')}" for i in range(n))
                raise TuningError(
                    f"contextual tuning of {self.name}: every candidate of kernel {e.kernel.name!r} failed for key "
                    f"{e.key_json}: {detail}"
                )
            best = _dd.pick_winner(times, e.labels)
            extra = {"contextual": True, "function": self.name}
            if world > 1:
                extra.update({"world_size": world, "rank": rank})
            e.kernel.adopt(e.key, e.state, e.candidates[best], dict(zip(e.candidates, times)), "tuned (contextual)",
                           extra, decision=e.decision)
            for i in range(n):
                lines.append({
                    "function": self.name, "kernel": e.kernel.name, "key": e.key_json,
                    "config": json_plain(config_to_dict(e.candidates[i])), "time_ms": times[i],
                    "local_ms": mine[i], "samples": len(e.samples[i]), "error": e.errors.get(i),
                    "winner": i == best, "rank": rank, "world_size": world,
                })
        for e in self.entries.values():
            if e.decided is not None:
                lines.append({
                    "function": self.name, "kernel": e.kernel.name, "key": e.key_json,
                    "config": json_plain(config_to_dict(e.decided)), "time_ms": None, "winner": True,
                    "status": "single config" if len(e.candidates) == 1 else "cache hit",
                    "rank": rank, "world_size": world,
                })
        if lines:
            self._write_log(lines, rank)

    def _write_log(self, lines: List[dict], rank: int) -> None:
        try:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            path = self.log_dir / f"rank-{rank}.jsonl"
            with open(path, "a", encoding="utf-8") as f:
                for line in lines:
                    f.write(json.dumps(json_plain(line), sort_keys=True) + "\n")
        except OSError as exc:  # the log is a convenience; never fail the call over it
            import warnings

            warnings.warn(f"tiletune: contextual tuning of {self.name}: cannot write its log in {self.log_dir} ({exc})")


def _global_rank() -> int:
    try:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            return dist.get_rank()
    except ImportError:  # pragma: no cover
        pass
    return 0


# --------------------------------------------------------------------------- the decorator


class ContextualTuner:
    """A function whose autotuned kernels are tuned in its context (see :func:`contextual_autotune`)."""

    def __init__(self, fn: Callable[..., Any], *, is_dist: bool = False, n_repeat: int = 5, n_warmup: int = 3,
                 pg: Any = None, log_dir: Optional[Union[str, Path]] = None):
        if int(n_repeat) < 1 or int(n_warmup) < 0:
            raise ValueError(f"contextual_autotune: n_repeat must be >= 1 and n_warmup >= 0 "
                             f"(got n_repeat={n_repeat}, n_warmup={n_warmup})")
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.is_dist = bool(is_dist)
        self.n_repeat = int(n_repeat)
        self.n_warmup = int(n_warmup)
        self.pg = pg
        self.log_dir = log_dir
        self.name = f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', getattr(fn, '__name__', 'fn'))}"
        #: runs of the function made by the last call (the final call included)
        self.last_runs = 0

    def __repr__(self) -> str:
        return f"<tiletune.contextual_autotune {self.name}>"

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """Support decorating methods: bind ``obj`` as the first argument."""
        return self if obj is None else types.MethodType(self, obj)

    def _group(self) -> Any:
        if not self.is_dist:
            return None
        if self.pg is not None:
            return self.pg
        try:
            import torch.distributed as dist
        except ImportError:  # pragma: no cover
            return None
        if dist.is_available() and dist.is_initialized():
            return dist.group.WORLD
        return None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if LAUNCH_CONTEXT.get() is not None:  # inside another contextual tuning: that one tunes
            return self.fn(*args, **kwargs)
        pg = self._group()
        log_dir = Path(self.log_dir) if self.log_dir is not None else Path(os.getcwd()) / LOG_DIR
        session = _Session(self.name, pg, log_dir)
        snapshot = _ArgumentSnapshot(args, kwargs)
        runs = 0
        token = LAUNCH_CONTEXT.set(session)
        try:
            with _PatchTriton():
                while True:
                    for r in range(self.n_warmup + self.n_repeat):
                        snapshot.restore()
                        session.run_index = runs
                        session.timed = r >= self.n_warmup
                        result = self.fn(*args, **kwargs)
                        runs += 1
                        session.timer.resolve()
                        if runs == 1 and session.sync(len(session.tuning())) == 0:
                            # nothing to tune on any rank: the first run was an ordinary call
                            session.settle()
                            self.last_runs = runs
                            return result
                    if session.sync(session.remaining()) == 0:
                        break
                    session.step += 1
                session.settle()
        except BaseException:
            snapshot.restore()  # the caller's arguments as the call found them
            raise
        finally:
            LAUNCH_CONTEXT.reset(token)
            session.timer.pending.clear()
        snapshot.restore()
        result = self.fn(*args, **kwargs)
        self.last_runs = runs + 1
        return result


def contextual_autotune(
    is_dist: bool = False,
    n_repeat: int = 5,
    n_warmup: int = 3,
    *,
    pg: Any = None,
    log_dir: Optional[Union[str, Path]] = None,
) -> Callable[[Callable[..., Any]], ContextualTuner]:
    """Decorator: tune the autotuned kernels a function launches in the context of the whole function.

    Each ``tiletune.autotune`` or ``triton.autotune`` kernel the function
    launches with a key it has not decided yet is tuned by running the
    function repeatedly: in step ``s`` each such kernel launches its
    candidate ``s mod n`` (``n_warmup`` untimed runs, then ``n_repeat`` timed
    runs per step) until every candidate of every kernel is covered; each
    launch is timed where it runs (CUDA events on a GPU, wall clock with a
    synchronise otherwise); each kernel settles on its lowest median and the
    winners go into the kernels' caches.  The function is then called once
    more (its result is returned).

    The function's tensor arguments are restored before every run and before
    the final call; anything else it changes is changed on every run, so it
    must recompute its outputs.  A candidate that raises is skipped (another
    candidate is launched, untimed, so the run goes on); a kernel all of whose
    candidates fail raises TuningError at the end of the run.

    ``is_dist=True``: times are combined over the default process group (or
    ``pg``), so every rank settles on the same configs; every rank must call
    the function.  ``log_dir``: where ``rank-<rank>.jsonl`` goes (default
    ``./.autotune_logs``).
    """

    def decorate(fn: Callable[..., Any]) -> ContextualTuner:
        return ContextualTuner(fn, is_dist=is_dist, n_repeat=n_repeat, n_warmup=n_warmup, pg=pg, log_dir=log_dir)

    return decorate
