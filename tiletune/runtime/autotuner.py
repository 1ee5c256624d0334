"""``tiletune.autotune``: Triton's autotuner, plus ``configs=[]`` that synthesizes the tilings.

The decorator is a drop-in for ``triton.autotune`` (same arguments, same
semantics for each) with these additions:

* ``configs=[]``: per tuning key, the kernel's analysis (done once), the bound
  arguments (the sizes synthesis needs, the element types of the tensor
  arguments) and the target give a ranked list of feasible tilings
  (:func:`tiletune.synthesis.synthesize`); ``hints`` adds values of non-tiling
  parameters, ``top_k`` caps the list;
* candidates compile in parallel on a device, failures are dropped with their
  reason, the leading three are re-timed interleaved before a winner is
  chosen, ``verify=True`` drops candidates whose outputs differ;
* winners are cached on disk (:class:`tiletune.runtime.cache.TuningCache`),
  so the next process launches at once; every tuning is logged;
* ``pg=`` (a ``torch.distributed`` process group, ``"default"``, or
  ``TILETUNE_DIST=1``): every rank ends with the same config for every key,
  decided by :mod:`tiletune.runtime.distributed`; ``shard=True`` splits the
  candidates across the ranks.

Dispatch after tuning is one key computation, one dict lookup and one launch.
While :func:`tiletune.contextual_autotune` runs a function in tuning mode, a
launch whose key is not decided yet is handed to that context instead
(:data:`LAUNCH_CONTEXT`).
"""

from __future__ import annotations

import contextvars
import hashlib
import inspect
import os
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

import triton
from triton.runtime.autotuner import Autotuner as _TritonAutotuner
from triton.runtime.autotuner import Heuristics

from tiletune.errors import TiletuneError, TuningError

from . import bench as _bench
from . import distributed as _dd
from .binding import (
    Binder,
    base_function,
    fixed_tiling,
    synthesis_shapes,
    tensor_dtypes,
)
from .parallel_compile import compile_all, describe_error
from .report import TuningReport, config_str, config_to_dict
from .side_effects import DefaultHooks, Snapshot, capture, outputs_match, verify_targets

__all__ = ["Autotuner", "autotune", "MetaParameterConflict", "LAUNCH_CONTEXT", "resolve_group"]

Config = triton.Config

#: How many leading candidates are re-timed interleaved, and how many rounds
#: (``TILETUNE_RETIME_ROUNDS`` overrides; one round under the interpreter).
RETIME_TOP = 3
RETIME_ROUNDS = 2


def _retime_rounds() -> int:
    env = os.environ.get("TILETUNE_RETIME_ROUNDS", "").strip()
    if env.isdigit():
        return int(env)
    return 1 if _bench.interpreting() else RETIME_ROUNDS


class MetaParameterConflict(TuningError, ValueError):
    """A tuned parameter was also passed at launch (a ValueError, as in Triton)."""


#: Set by :func:`tiletune.contextual_autotune` while it runs a function in
#: tuning mode: an object with ``launch(tuner, key, args, kwargs)``.  When it
#: is set, :meth:`Autotuner.run` hands every launch whose key is not decided
#: yet to it (the context picks the candidate, launches and times it) instead
#: of tuning in isolation.  Decided keys launch as usual.
LAUNCH_CONTEXT: contextvars.ContextVar = contextvars.ContextVar("tiletune_launch_context", default=None)

_TRUE = {"1", "true", "yes", "on"}


def resolve_group(pg: Any) -> Any:
    """The process group a tuner agrees over: ``pg``; ``"default"`` -> the default group; ``None`` ->
    the default group when ``TILETUNE_DIST=1``, else no agreement.

    ``"default"`` (or ``TILETUNE_DIST=1``) without an initialised
    torch.distributed means no agreement (a single process).
    """
    if pg is None:
        if os.environ.get("TILETUNE_DIST", "").strip().lower() not in _TRUE:
            return None
        pg = "default"
    if isinstance(pg, str):
        if pg.strip().lower() != "default":
            raise TuningError(f"pg={pg!r} is not a process group; pass a torch.distributed ProcessGroup, "
                              "'default' (the default group) or None")
        try:
            import torch.distributed as dist
        except ImportError:
            return None
        if not (dist.is_available() and dist.is_initialized()):
            return None
        return dist.group.WORLD
    return pg


@dataclass
class _Problem:
    """What one tuning of one key works from (computed once, before the cache decision)."""

    bound: Dict[str, Any]
    launch_const: Dict[str, Any]
    dtypes: Dict[str, str]
    target_name: str
    disk_key: str
    report: TuningReport


def _noop_pre_hook(kwargs, reset_only=False):
    return 0


def _noop_post_hook(kwargs, exception):
    return 0


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return str(value)


def _innermost(fn: Any) -> tuple[Any, list[str]]:
    """The object under any ``Heuristics`` layers, and the parameters those set."""
    names: list[str] = []
    cur = fn
    while isinstance(cur, Heuristics):
        names.extend(cur.values.keys())
        cur = cur.fn
    return cur, names


def _check_wraps_jit(fn: Any) -> None:
    """Raise a clear TuningError unless ``fn`` is a jitted kernel (or heuristics over one)."""
    from triton.runtime.jit import JITFunction

    try:
        from triton.runtime.interpreter import InterpretedFunction
    except ImportError:  # pragma: no cover
        InterpretedFunction = JITFunction  # type: ignore[misc,assignment]
    inner, _ = _innermost(fn)
    if isinstance(inner, (JITFunction, InterpretedFunction)):
        return
    name = getattr(base_function(fn), "__name__", repr(fn))
    if isinstance(inner, _TritonAutotuner):
        raise TuningError(
            f"kernel {name!r}: autotune is applied twice (it wraps another autotuner); keep one "
            "@tiletune.autotune / @triton.autotune directly above @triton.jit"
        )
    if inspect.isfunction(inner):
        raise TuningError(
            f"kernel {name!r}: autotune must wrap a @triton.jit function, but it got a plain Python "
            "function; put @triton.jit directly under @tiletune.autotune(...) (decorators apply "
            "bottom-up: @autotune, then optionally @triton.heuristics, then @triton.jit)"
        )
    raise TuningError(
        f"kernel {name!r}: autotune must wrap a @triton.jit function (or @triton.heuristics over one), "
        f"not a {type(inner).__name__}; put @triton.jit directly under the autotune decorator"
    )


class _RecordingMeta(dict):
    """A dict that remembers which keys a grid function read."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.read: set = set()

    def __getitem__(self, k):
        self.read.add(k)
        return super().__getitem__(k)

    def get(self, k, default=None):
        self.read.add(k)
        return super().get(k, default)

    def __contains__(self, k):
        self.read.add(k)
        return super().__contains__(k)


def _base_init_kwargs(**kwargs: Any) -> dict:
    """Keep only the keywords this Triton's Autotuner.__init__ accepts (they changed across versions)."""
    try:
        params = inspect.signature(_TritonAutotuner.__init__).parameters
    except (TypeError, ValueError):  # pragma: no cover
        return {}
    return {k: v for k, v in kwargs.items() if k in params}


class Autotuner(_TritonAutotuner):
    """Triton's ``Autotuner`` with synthesized configs, robust benchmarking and a disk cache.

    Public attributes kept from Triton: ``configs``, ``keys``, ``cache``
    (in-memory key -> Config), ``best_config``, ``configs_timings``,
    ``bench_time``, ``nargs``, ``fn``, ``base_fn``, ``arg_names``.
    """

    def __init__(
        self,
        fn: Any,
        arg_names: Optional[Sequence[str]],
        configs: Optional[Sequence[Config]],
        key: Sequence[str],
        reset_to_zero: Optional[Sequence[str]] = None,
        restore_value: Optional[Sequence[str]] = None,
        pre_hook: Optional[Callable] = None,
        post_hook: Optional[Callable] = None,
        prune_configs_by: Optional[Dict[str, Any]] = None,
        warmup: Optional[float] = None,
        rep: Optional[float] = None,
        use_cuda_graph: bool = False,
        do_bench: Optional[Callable] = None,
        cache_results: bool = True,
        *,
        hints: Optional[Mapping[str, Sequence[Any]]] = None,
        verify: Any = False,
        target: Any = None,
        top_k: Optional[int] = None,
        bench_method: Optional[str] = None,
        verbose: bool = False,
        pg: Any = None,
        shard: bool = False,
    ):
        _check_wraps_jit(fn)
        self.kernel_name = base_function(fn).__name__
        if arg_names is None:
            arg_names = list(getattr(fn, "arg_names"))
        key = list(key or [])
        reset_to_zero = list(reset_to_zero or [])
        restore_value = list(restore_value or [])
        for what, names in (("key", key), ("reset_to_zero", reset_to_zero), ("restore_value", restore_value)):
            unknown = [n for n in names if n not in arg_names]
            if unknown:
                raise TuningError(
                    f"kernel {self.kernel_name!r}: {what} names {', '.join(map(repr, unknown))}, which "
                    f"{'is not a parameter' if len(unknown) == 1 else 'are not parameters'} of the kernel "
                    f"(parameters: {', '.join(arg_names)}); fix the name in {what}=[...]"
                )
        configs = list(configs or [])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            super().__init__(
                fn, arg_names, configs, key, reset_to_zero, restore_value,
                **_base_init_kwargs(pre_hook=pre_hook, post_hook=post_hook, prune_configs_by=prune_configs_by,
                                    warmup=None, rep=None, use_cuda_graph=False, do_bench=None,
                                    cache_results=False),
            )
        # Triton turns [] into one default config; we synthesize instead.
        self.synthesize_configs = not configs
        self.configs = configs
        self.keys = key
        self.arg_names = list(arg_names)
        self.cache_results = bool(cache_results)
        self.reset_to_zero = reset_to_zero
        self.restore_value = restore_value
        # reset/restore hooks with Triton's semantics, independent of the Triton version
        self._hooks = DefaultHooks(self.kernel_name, reset_to_zero, restore_value)
        self.user_defined_pre_hook = pre_hook is not None
        self.user_defined_post_hook = post_hook is not None
        self.pre_hook = pre_hook if pre_hook is not None else (
            self._hooks.pre_hook if self._hooks.active else _noop_pre_hook)
        self.post_hook = post_hook if post_hook is not None else (
            self._hooks.post_hook if restore_value else _noop_post_hook)
        self.perf_model = None
        self.configs_top_k = 1.0
        self.early_config_prune = None
        if prune_configs_by:
            self.perf_model = prune_configs_by.get("perf_model")
            self.configs_top_k = prune_configs_by.get("top_k", 1.0)
            self.early_config_prune = prune_configs_by.get("early_config_prune")
        # benchmarking
        self._do_bench = do_bench
        self.num_warmups = warmup
        self.num_reps = rep
        self.use_cuda_graph = use_cuda_graph
        self.bench_method = bench_method
        # synthesis
        self.hints = {k: list(v) for k, v in (hints or {}).items()}
        for name, values in self.hints.items():
            if name not in self.arg_names:
                raise TuningError(
                    f"kernel {self.kernel_name!r}: hints names {name!r}, which is not a parameter of the "
                    f"kernel (parameters: {', '.join(self.arg_names)}); fix the name in hints={{...}}"
                )
            if not values:
                raise TuningError(
                    f"kernel {self.kernel_name!r}: hints[{name!r}] is empty; give at least one value"
                )
        self.verify = verify
        self.target = target
        self.top_k = top_k
        self.verbose = verbose
        # distributed: the group is resolved at tuning time (it may be initialised after decoration)
        self.pg = pg
        self.shard = bool(shard)
        # precomputed state
        self._inner, self._heuristics = _innermost(fn)
        self._binder = Binder(self.kernel_name, self.arg_names, key, self.base_fn)
        self._fast: Dict[tuple, tuple] = {}  # key -> (config, config.all_kwargs())
        self._spec: Any = None
        self._spec_error: Optional[BaseException] = None
        self._spec_done = False
        self._target_obj: Any = None
        self._source: Optional[str] = None
        self._disk: Any = None
        self._noted_fixed: set = set()
        self.configs_timings: Dict[Config, Any] = {}
        self.bench_time = 0.0
        self.best_config: Optional[Config] = None
        self.nargs = None

    # ================================================================ dispatch (hot path)
    def run(self, *args: Any, **kwargs: Any) -> Any:
        key = self._binder.key(args, kwargs)
        hit = self._fast.get(key)
        if hit is None:
            ctx = LAUNCH_CONTEXT.get()
            if ctx is not None:  # contextual tuning decides this launch
                return ctx.launch(self, key, args, kwargs)
            hit = self._tune(key, args, kwargs)
        config, config_kwargs = hit
        self.best_config = config
        if config.pre_hook is not None:
            config.pre_hook({**dict(zip(self.arg_names, args)), **kwargs, **config_kwargs})
        return self.fn.run(*args, **kwargs, **config_kwargs)

    # ================================================================ lazy, once per kernel
    @property
    def source(self) -> str:
        """The kernel's source text (the cache file is named after its hash)."""
        if self._source is None:
            try:
                self._source = inspect.getsource(self.base_fn)
            except (OSError, TypeError):
                self._source = getattr(self._inner, "src", None) or self.kernel_name
        return self._source

    def spec(self) -> Any:
        """The kernel's :class:`KernelSpec` (analysed once; None when analysis fails)."""
        if not self._spec_done:
            self._spec_done = True
            try:
                from tiletune.analysis import analyze_kernel

                self._spec = analyze_kernel(self._inner)
            except Exception as exc:  # analysis is optional for explicit configs
                self._spec_error = exc
        return self._spec

    def resolved_target(self) -> Any:
        """The :class:`Target` tuned for: ``target=``, else ``TILETUNE_TARGET``, else h100 under the
        interpreter, else the detected device."""
        if self._target_obj is None:
            from tiletune.synthesis import detect, get_target

            t = self.target
            if t is None:
                t = os.environ.get("TILETUNE_TARGET", "").strip() or None
            if t is None and _bench.interpreting():
                t = "h100"
            if t is None:
                self._target_obj = detect()
            elif isinstance(t, str):
                self._target_obj = get_target(t)
            else:
                self._target_obj = t
        return self._target_obj

    def _target_name(self) -> str:
        """The target's name for the cache key, without importing synthesis when a name is given.

        A cache hit in a new process then costs no analysis, no synthesis
        import and no device query: ``target="h100"`` (or ``TILETUNE_TARGET``,
        or the interpreter's default) is used as written, normalised.
        """
        given = self.target if self.target is not None else (os.environ.get("TILETUNE_TARGET", "").strip() or None)
        if given is None and _bench.interpreting():
            given = "h100"
        if isinstance(given, str) and not given.lstrip().startswith("{"):
            return given.strip().lower().replace("-", "_").replace(" ", "")
        try:
            return str(self.resolved_target().name)
        except Exception:  # explicit configs need a name for the cache key only
            return "unknown"

    def _disk_cache(self, target_name: str) -> Any:
        if self._disk is None:
            from .cache import TuningCache, environment_fingerprint

            self._disk = TuningCache(self.kernel_name, self.source, kind="kernel",
                                     fingerprint=environment_fingerprint(target_name))
        return self._disk

    # ================================================================ tuning (once per key)
    def _tune(self, key: tuple, args: tuple, kwargs: Dict[str, Any]) -> tuple:
        self.nargs = dict(zip(self.arg_names, args))
        if not self.synthesize_configs and len(self.configs) == 1:
            # as Triton: a single config is used without benchmarking
            cfg = self.configs[0]
            hit = (cfg, cfg.all_kwargs())
            self.cache[key] = cfg
            self._fast[key] = hit
            self.nargs = None
            return hit
        problem = self._problem(args, kwargs)
        pg = self.process_group()
        config = self._agreed_cached(problem, pg)
        if config is None:
            config, extra = self._search(args, kwargs, problem, pg)
            self._adopt(key, problem, config, status="tuned", extra=extra)
        else:
            self._adopt(key, problem, config, status="cache hit")
        self.nargs = None
        return self._fast[key]

    def process_group(self) -> Any:
        """The process group this kernel's tunings agree over (None: no agreement); see :func:`resolve_group`."""
        return resolve_group(self.pg)

    def _problem(self, args: tuple, kwargs: Dict[str, Any]) -> _Problem:
        """Bind one launch and compute its disk key (no analysis, no synthesis)."""
        bound = self._binder.bind(args, kwargs)
        launch_const = self._binder.launch_fixed(kwargs)
        dtypes = tensor_dtypes(self.arg_names, bound)
        target_name = self._target_name() if (self.synthesize_configs or self.cache_results) else "unknown"
        key_values = self._binder.key_values(bound)
        report = TuningReport(self.kernel_name, self._source_hash(), {"key": key_values, "dtypes": list(dtypes.values())},
                              verbose=self.verbose)
        from .cache import entry_key

        disk_key = entry_key({"key": key_values, "dtypes": list(dtypes.values()), "target": target_name,
                              **self._space(launch_const)})
        return _Problem(bound, dict(launch_const), dict(dtypes), target_name, disk_key, report)

    def _adopt(self, key: tuple, problem: _Problem, config: Config, *, status: str,
               extra: Optional[Dict[str, Any]] = None) -> None:
        """Make ``config`` this key's winner: memory, disk (after a tuning) and the report."""
        if status.startswith("tuned") and self.cache_results:
            self._store(problem.disk_key, problem.target_name, config, extra)
        info = {"target": problem.target_name}
        if status != "cache hit":
            info["method"] = self._method_used
        info.update(extra or {})
        problem.report.finish(config, status=status, extra=info)
        self.cache[key] = config
        self._fast[key] = (config, config.all_kwargs())

    def _source_hash(self) -> str:
        from .cache import source_hash

        return source_hash(self.source)

    def _space(self, launch_const: Mapping[str, Any]) -> dict:
        """What besides the key decides the winner (part of the disk key)."""
        if self.synthesize_configs:
            space: dict = {"space": "synthesized"}
            if self.hints:
                space["hints"] = _jsonable(self.hints)
            if launch_const:
                space["fixed"] = _jsonable(dict(sorted(launch_const.items())))
            if self.top_k is not None:
                space["top_k"] = self.top_k
            return space
        digest = hashlib.sha256("\n".join(str(c) for c in self.configs).encode()).hexdigest()[:16]
        return {"space": f"configs:{digest}"}

    # ---------------------------------------------------------------- disk cache
    def _lookup(self, problem: _Problem) -> tuple:
        """This process's view of the disk cache: ``(config JSON or None, strict-mode refusal or None)``.

        Never raises for a stale entry: the refusal is returned, so that every
        rank of a group can raise it together.
        """
        if not self.cache_results:
            return None, None
        from .cache import StaleCacheEntryError, always_tune, check_version_policy

        report = problem.report
        if always_tune():
            report.note("TILETUNE_ALWAYS_TUNE is set: re-tuning despite the cache")
            return None, None
        cache = self._disk_cache(problem.target_name)
        entry, status = cache.get_with_status(problem.disk_key)
        if status == "miss":
            return None, None
        if status == "stale":
            try:
                check_version_policy(status, entry, cache.path)
            except StaleCacheEntryError as exc:
                return None, str(exc)
            report.note(f"cache entry in {cache.path} was tuned under other versions; re-tuning")
            return None, None
        config = self._config_from_entry(entry)
        if config is None:
            report.note(f"cache entry in {cache.path} does not fit this kernel; re-tuning")
            return None, None
        return _jsonable(config_to_dict(config)), None

    def _agreed_cached(self, problem: _Problem, pg: Any) -> Optional[Config]:
        """The cached winner every rank uses, or None when any rank must tune (then all tune).

        Without a group: this process's cache.  With one: one exchange
        (:func:`~tiletune.runtime.distributed.agree_on_cached`) over the key
        and the candidate space; rank 0's entry wins when every rank hit.
        """
        choice, refused = self._lookup(problem)
        space = [str(c) for c in self.configs] if not self.synthesize_configs else "synthesized"
        cached = _dd.agree_on_cached(choice, pg, problem=[problem.disk_key, space], refused=refused,
                                     what=f"kernel {self.kernel_name!r}")
        if cached is None:
            return None
        config = self._config_from_entry({"config": cached})
        if config is None:  # rank 0's entry does not fit here: the same kernel everywhere makes this unreachable
            raise TuningError(
                f"kernel {self.kernel_name!r}: rank 0's cached config {cached!r} does not fit this rank's kernel; "
                "every rank must run the same kernel source and configs"
            )
        where = self._disk_cache(problem.target_name).path
        problem.report.note(f"cache hit in {where}" + (" (rank 0's entry, agreed)" if _dd.is_active(pg) else ""))
        return config

    def _config_from_entry(self, entry: Mapping[str, Any]) -> Optional[Config]:
        try:
            c = entry["config"]
            kwargs = dict(c.get("kwargs") or {})
            opts = {}
            if c.get("num_warps") is not None:
                opts["num_warps"] = int(c["num_warps"])
            if c.get("num_stages") is not None:
                opts["num_stages"] = int(c["num_stages"])
            for name, value in (c.get("extra") or {}).items():
                if name in ("num_ctas", "maxnreg"):
                    opts[name] = value
                else:
                    kwargs[name] = value
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        if any(k not in self.arg_names for k in kwargs):
            return None
        config = Config(kwargs, **opts)
        if not self.synthesize_configs:
            # give back the user's own Config object (it may carry a pre_hook)
            want = _jsonable(config_to_dict(config))
            for cand in self.configs:
                if _jsonable(config_to_dict(cand)) == want:
                    return cand
            return None
        return config

    def _store(self, disk_key: str, target_name: str, config: Config,
               extra: Optional[Mapping[str, Any]] = None) -> None:
        timings = {}
        for cfg, t in self.configs_timings.items():
            v = t[0] if isinstance(t, (list, tuple)) else t
            timings[config_str(cfg)] = v
        entry = {
            "config": config_to_dict(config),
            "timings_ms": timings,
            "method": self._method_used,
            "kernel": self.kernel_name,
        }
        for name in ("world_size", "sharded", "contextual"):
            if extra and name in extra:
                entry[name] = extra[name]
        try:
            self._disk_cache(target_name).put(disk_key, entry)
        except Exception as exc:  # never fail a launch over the cache
            warnings.warn(f"tiletune: kernel {self.kernel_name!r}: could not cache the winner ({exc})")

    # ---------------------------------------------------------------- candidates
    def _candidates(self, bound: Dict[str, Any], kwargs: Dict[str, Any], launch_const: Mapping[str, Any],
                    dtypes: Mapping[str, str], report: TuningReport) -> List[Config]:
        if not self.synthesize_configs:
            conflicts = set(kwargs) & set().union(*(c.kwargs.keys() for c in self.configs))
            if conflicts:
                raise MetaParameterConflict(
                    f"Conflicting meta-parameters: {', '.join(sorted(conflicts))}. Make sure that you don't "
                    f"re-define auto-tuned symbols (kernel {self.kernel_name!r}: these are passed at launch and "
                    "set by the configs; remove them from one of the two)."
                )
            return self.prune_configs(kwargs)
        return self._synthesize(bound, kwargs, launch_const, dtypes, report)

    def _synthesize(self, bound: Dict[str, Any], kwargs: Dict[str, Any], launch_const: Mapping[str, Any],
                    dtypes: Mapping[str, str], report: TuningReport) -> List[Config]:
        spec = self.spec()
        if spec is None:
            raise TuningError(
                f"kernel {self.kernel_name!r}: configs=[] needs the kernel's source analysis, which failed "
                f"({self._spec_error}); fix the kernel source or pass configs=[triton.Config(...), ...]"
            ) from self._spec_error
        try:
            from tiletune.synthesis import required_shapes, synthesize
        except ImportError as exc:
            raise TuningError(
                f"kernel {self.kernel_name!r}: configs=[] needs tiletune.synthesis, which cannot be imported "
                f"({exc}); pass configs=[...] explicitly"
            ) from exc
        clash = sorted(set(self.hints) & set(launch_const))
        if clash:
            raise MetaParameterConflict(
                f"kernel {self.kernel_name!r}: {', '.join(map(repr, clash))} is passed at launch and listed in "
                "hints; remove it from the launch to search it, or from hints to keep the launch's value"
            )
        shapes = synthesis_shapes(self.kernel_name, required_shapes(spec), bound)
        fixed, reasons = fixed_tiling(spec, launch_const, self._binder.defaults, self._heuristics, bound)
        for name, why in reasons.items():
            if name not in self._noted_fixed:
                self._noted_fixed.add(name)
                value = f" = {fixed[name]!r}" if name in fixed else ""
                report.note(f"tiling parameter {name}{value} {why}: left out of the search")
        missing_key = [s for s in shapes if s not in self.keys]
        if missing_key and "missing_key" not in self._noted_fixed:
            self._noted_fixed.add("missing_key")
            report.note(f"synthesis depends on {', '.join(missing_key)}, which is not in key=; a change of it "
                        "will reuse the tuning of the first value")
        target = self.resolved_target()
        opts: dict = {"hints": self.hints or None, "fixed": {k: v for k, v in fixed.items()} or None}
        if self.top_k is not None:
            opts["top_k"] = self.top_k
        result = synthesize(spec, shapes, dict(dtypes), target, **opts)
        drop = set(launch_const) | set(self._heuristics)
        configs: List[Config] = []
        seen = set()
        # Under the interpreter, num_warps/num_stages change nothing: one candidate per tiling.
        interp = _bench.interpreting()
        for cand in result.candidates:
            cfg = cand.to_config()
            if drop & cfg.kwargs.keys():
                cfg.kwargs = {k: v for k, v in cfg.kwargs.items() if k not in drop}
            sig = repr(sorted(cfg.kwargs.items())) if interp else str(cfg)
            if sig not in seen:
                seen.add(sig)
                configs.append(cfg)
        if not configs:
            raise TuningError(
                f"kernel {self.kernel_name!r}: synthesis for target {target.name} returned no candidates "
                f"for {shapes}; pass configs=[...] explicitly"
            )
        # every constexpr must get a value from somewhere
        given = set(bound) | set(configs[0].kwargs)
        unset = [n for n in self.arg_names if n in self._binder.constexpr and n not in given]
        if unset:
            raise TuningError(
                f"kernel {self.kernel_name!r}: constexpr parameter {', '.join(map(repr, unset))} has no value: "
                "synthesis does not search it; pass it at launch, give it a default, or list values in "
                f"hints={{{unset[0]!r}: [...]}}"
            )
        report.note(f"synthesized {len(configs)} candidate(s) of {result.feasible_count} feasible for "
                    f"{target.name}, shapes {shapes}, dtypes {dict(dtypes)}")
        if self.early_config_prune or self.perf_model:
            configs = self._prune_list(configs, kwargs)
        return configs

    def prune_configs(self, kwargs: Dict) -> List[Config]:
        """Triton's pruning (``early_config_prune``, then ``perf_model`` + ``top_k``) over ``self.configs``."""
        return self._prune_list(self.configs, kwargs)

    def _prune_list(self, configs: List[Config], kwargs: Dict) -> List[Config]:
        nargs = self.nargs or {}
        pruned = configs
        if self.early_config_prune:
            pruned = self.early_config_prune(configs, nargs, **kwargs)
            if not pruned:
                raise TuningError(
                    f"kernel {self.kernel_name!r}: no configs left after early_config_prune; it should return "
                    "at least one config"
                )
        if self.perf_model:
            top_k = self.configs_top_k
            if isinstance(top_k, float) and top_k <= 1.0:
                top_k = int(len(configs) * top_k)
            elif not isinstance(top_k, int):
                raise TypeError("Error while pruning configs, top_k must be either 1) a float <= 1.0 or 2) an int")
            if len(pruned) > top_k:
                est = {c: self.perf_model(**nargs, **kwargs, **c.all_kwargs()) for c in pruned}
                pruned = sorted(est, key=lambda c: est[c])[:top_k]
        return list(pruned)

    # ---------------------------------------------------------------- grid rules
    def _check_grid(self, grid: Any, bound: Mapping[str, Any], configs: List[Config]) -> None:
        spec = self.spec()
        if spec is None or len(configs) == 0:
            return
        try:
            from tiletune.analysis.model import Role
        except ImportError:  # pragma: no cover
            return
        parallel = [p.name for p in spec.tiling_params if p.role == Role.PARALLEL]
        searched = []
        for name in parallel:
            values = {repr(c.kwargs[name]) for c in configs if name in c.kwargs}
            if not values:
                continue
            if self.synthesize_configs or len(values) > 1:
                searched.append(name)
        if not searched:
            return
        if not callable(grid):
            example = searched[0]
            bound_to = spec.param(example).bound or "N"
            raise TuningError(
                f"kernel {self.kernel_name!r}: the launch grid {grid!r} is fixed, but the tiling parameter "
                f"{', '.join(searched)} it depends on is being tuned, so the grid cannot follow the chosen "
                f"tile; launch with a grid function, e.g. kernel[lambda meta: "
                f"(triton.cdiv({bound_to}, meta[{example!r}]),)](...)"
            )
        base_meta = {**bound, **configs[0].all_kwargs()}

        def call(meta: dict) -> tuple:
            try:
                g = grid(meta)
            except Exception as exc:
                raise TuningError(
                    f"kernel {self.kernel_name!r}: calling the grid function with a candidate's meta-parameters "
                    f"raised {describe_error(exc)}; the grid must read the tiling parameters from its argument "
                    "(meta['BLOCK_...'])"
                ) from exc
            return tuple(g) if isinstance(g, (list, tuple)) else (g,)

        rec = _RecordingMeta(base_meta)
        g0 = call(rec)
        for name in searched:
            if name in rec.read:
                continue
            other = next((c.kwargs[name] for c in configs if name in c.kwargs and c.kwargs[name] != base_meta[name]),
                         None)
            if other is None:
                try:
                    other = base_meta[name] * 2
                except TypeError:
                    continue
            probe = dict(base_meta)
            probe[name] = other
            if call(probe) == g0:
                bound_to = spec.param(name).bound or "N"
                raise TuningError(
                    f"kernel {self.kernel_name!r}: the grid function does not depend on the tuned tiling "
                    f"parameter {name!r} (same grid {g0} for {name}={base_meta[name]} and {name}={other}); "
                    f"compute the grid from meta, e.g. lambda meta: (triton.cdiv({bound_to}, meta[{name!r}]),)"
                )

    # ---------------------------------------------------------------- the search
    def _bench_fn(self, report: TuningReport) -> Callable[[Callable], float]:
        if self._do_bench is not None:
            self._method_used = "user do_bench"
            user = self._do_bench
            return lambda fn: _bench.call_user_do_bench(user, fn)
        method = _bench.resolve_method(self.bench_method, use_cuda_graph=self.use_cuda_graph)
        method, note = _bench.effective_method(method)
        if note:
            report.note(note)
        self._method_used = method
        return _bench.get_bench(method, warmup=self.num_warmups, rep=self.num_reps)

    _method_used = "none"

    def _kernel_call(self, args: tuple, kwargs: Dict[str, Any], config: Config,
                     grab: Optional[Callable[[], None]] = None) -> Callable[[], None]:
        current = dict(kwargs, **config.all_kwargs())
        full_nargs = {**dict(zip(self.arg_names, args)), **current}
        fn = self.fn
        pre, post = self.pre_hook, self.post_hook

        def kernel_call() -> None:
            if config.pre_hook:
                config.pre_hook(full_nargs)
            pre(full_nargs)
            try:
                fn.run(*args, **current)
            except Exception as e:
                try:
                    post(full_nargs, exception=e)
                finally:
                    raise
            if grab is not None:
                grab()
            post(full_nargs, exception=None)

        return kernel_call

    def _agreed_candidates(self, kwargs: Dict[str, Any], problem: _Problem, pg: Any) -> tuple:
        """The candidate list and the benchmark function; with a group, the same list on every rank.

        A rank that cannot build its list (synthesis, pruning, grid rules)
        makes every rank raise; lists that differ between ranks (a
        rank-dependent prune) raise TuningError on every rank
        (:func:`~tiletune.runtime.distributed.check_consistent` over their text).
        """
        active = _dd.is_active(pg)
        error: Optional[BaseException] = None
        configs: List[Config] = []
        bench = None
        try:
            configs = self._candidates(problem.bound, kwargs, problem.launch_const, problem.dtypes, problem.report)
            self._check_grid(kwargs.get("grid"), problem.bound, configs)
            bench = self._bench_fn(problem.report)
        except Exception as exc:
            if not active:
                raise
            error = exc
        if active:
            errors = _dd.all_gather_json(None if error is None else f"{type(error).__name__}: {error}", pg)
            if error is not None:
                raise error
            for r, e in enumerate(errors):
                if e is not None:
                    raise TuningError(f"kernel {self.kernel_name!r}: tuning stopped because rank {r} could not "
                                      f"build its candidate list: {e}")
            _dd.check_consistent([str(c) for c in configs], pg, what=f"candidate list of kernel {self.kernel_name!r}")
        return configs, bench

    def _all_failed(self, configs: List[Config], failures: Mapping[int, str],
                    remote: Optional[BaseException] = None) -> TuningError:
        lines = "\n".join(f"  [{config_str(configs[i])}]: {failures.get(i, 'failed on another rank')}"
                          for i in range(len(configs)))
        every_rank = f"\nas seen on every rank:\n{remote}" if remote is not None else ""
        return TuningError(
            f"kernel {self.kernel_name!r}: every candidate config failed ({len(configs)} tried):\n{lines}{every_rank}\n"
            "fix the kernel or the launch, or pass configs that compile and run"
        )

    def _search(self, args: tuple, kwargs: Dict[str, Any], problem: _Problem, pg: Any) -> tuple:
        """Tune one key; returns ``(winner, extra facts for the log and cache)``.

        With an active group every decision below is taken identically on
        every rank: candidates dropped on any rank (compile, verify, run) are
        dropped on all, times are combined (or gathered from the shards), and
        the winner is picked from the agreed times.
        """
        t_start = time.perf_counter()
        bound, report = problem.bound, problem.report
        active = _dd.is_active(pg)
        shard = self.shard and active
        configs, bench = self._agreed_candidates(kwargs, problem, pg)
        failures: Dict[int, str] = {}

        def drop(i: int, reason: str) -> None:
            if i not in failures:
                failures[i] = reason
                report.dropped(configs[i], reason)

        # 1. compile in parallel (a device only).  Sharded: each rank compiles its share (failures are
        #    made common below); the few it re-times from other shares compile on their first launch.
        warm_kwargs = dict(kwargs, warmup=True)
        share = _dd.shard_indices(len(configs), pg) if shard and not self.verify else range(len(configs))
        jobs = {i: (lambda c=configs[i]: self.fn.run(*args, **warm_kwargs, **c.all_kwargs())) for i in share}
        compile_failures, compile_s = compile_all(jobs)
        for i, reason in compile_failures.items():
            drop(i, f"compile failed: {reason}")
        if compile_s:
            report.note(f"compiled {len(jobs)} candidate(s) in {compile_s:.2f}s")
        alive = [i for i in range(len(configs)) if i not in failures]

        # 2. verify outputs against the first candidate that runs
        snapshot = None
        if self.verify and len(alive) > 1:
            spec = self.spec()
            stored = [] if spec is None else list(spec.stored_pointers) + list(spec.atomic_pointers)
            names = verify_targets(bound, self.reset_to_zero, self.restore_value, stored)
            snapshot = Snapshot({n: bound[n] for n in names})
            tolerance = self.verify if isinstance(self.verify, Mapping) else None
            reference = None
            ref_index = None
            for i in list(alive):
                out: Dict[str, Any] = {}
                snapshot.restore()
                call = self._kernel_call(args, kwargs, configs[i], grab=lambda o=out: o.update(capture(bound, names)))
                try:
                    call()
                except Exception as exc:
                    drop(i, f"failed to run: {describe_error(exc)}")
                    alive.remove(i)
                    continue
                if reference is None:
                    reference, ref_index = out, i
                    continue
                ok, why = outputs_match(reference, out, tolerance)
                if not ok:
                    drop(i, f"outputs differ from [{config_str(configs[ref_index])}]: {why}")
                    alive.remove(i)
            snapshot.restore()
        if active:  # dropped on any rank -> dropped on every rank (0.0 = kept, None = dropped)
            kept = _dd.combine_timings([0.0 if i in alive else None for i in range(len(configs))], pg)
            for i in alive:
                if kept[i] is None:
                    drop(i, "dropped on another rank of the process group (compile or verify)")
            alive = [i for i in alive if kept[i] is not None]
        if not alive:  # the same on every rank: alive is common
            raise self._all_failed(configs, failures)

        # 3. benchmark: every rank times every candidate (or its share); times agreed across the group
        calls = {i: self._kernel_call(args, kwargs, configs[i]) for i in alive}
        labels = [f"[{config_str(configs[i])}]" for i in alive]
        report.start_progress(len(_dd.shard_indices(len(alive), pg)) if shard else len(alive))
        stopped: List[BaseException] = []

        def bench_one(j: int) -> float:
            if stopped:
                raise TuningError("not run: tuning stopped after an error")
            i = alive[j]
            try:
                t = bench(calls[i])
            except TiletuneError as exc:  # a broken benchmark or launch, not a bad candidate: stop
                stopped.append(exc)
                raise
            finally:
                report.advance()
            report.candidate(configs[i], t)
            return t

        def on_error(j: int, exc: BaseException) -> None:
            drop(alive[j], f"failed to run: {describe_error(exc)}")

        all_failed: Optional[TuningError] = None
        agreement = None
        try:
            agreement = _dd.agree_on_best(len(alive), bench_one, pg, shard=shard, labels=labels,
                                          what=f"kernel {self.kernel_name!r}", on_error=on_error)
        except TuningError as exc:  # every candidate failed: raised identically on every rank
            all_failed = exc
        # tiletune errors stop tuning on every rank (fatal, as agree_on_best's fatal=): one exchange
        met = _dd.all_gather_json(f"{type(stopped[0]).__name__}: {stopped[0]}" if stopped else None, pg)
        if stopped:
            raise stopped[0]
        for r, m in enumerate(met):
            if m is not None:
                raise TuningError(f"kernel {self.kernel_name!r}: tuning stopped because rank {r} failed: {m}")
        if all_failed is not None:
            raise self._all_failed(configs, failures, all_failed if active else None) from all_failed
        assert agreement is not None
        timings: Dict[int, float] = {}
        for j, t in enumerate(agreement.times):
            if t is None:
                drop(alive[j], "failed on another rank of the process group")
            else:
                timings[alive[j]] = t

        # 4. re-time the leading few, interleaved, unless the user's do_bench decides; agree on the new times
        order = sorted(timings, key=lambda i: (timings[i], i))
        if self._do_bench is None and len(order) > 1:
            top = order[:RETIME_TOP]
            retimed = _bench.retime_interleaved({i: calls[i] for i in top}, bench, {i: timings[i] for i in top},
                                                rounds=_retime_rounds())
            agreed = _dd.combine_timings([retimed[i] for i in top], pg)
            for i, t in zip(top, agreed):
                report.candidate(configs[i], retimed[i], stage="retimed_ms")
                if t is None:
                    drop(i, "failed when re-timed")
                    del timings[i]
                else:
                    timings[i] = t
        ordered = sorted(timings)
        best = ordered[_dd.pick_winner([timings[i] for i in ordered], [config_str(configs[i]) for i in ordered])]
        winner = configs[best]

        # 5. leave the user's tensors as an untuned launch would find them
        if snapshot is not None:
            snapshot.restore()
        full_nargs = {**dict(zip(self.arg_names, args)), **kwargs, **winner.all_kwargs()}
        self.pre_hook(full_nargs, reset_only=True)

        self.configs_timings = {configs[i]: [t, t, t] for i, t in timings.items()}
        self.bench_time = time.perf_counter() - t_start
        extra: Dict[str, Any] = {}
        if active:
            extra = {
                "world_size": agreement.world_size,
                "rank": agreement.rank,
                "sharded": shard,
                "timed_here": [config_str(configs[alive[j]]) for j in agreement.timed],
            }
        return winner, extra

    # ================================================================ contextual tuning (runtime/contextual.py)
    def _context_candidates(self, args: tuple, kwargs: Dict[str, Any]) -> tuple:
        """``(problem, candidates)`` for a launch that :func:`tiletune.contextual_autotune` tunes."""
        self.nargs = dict(zip(self.arg_names, args))
        try:
            problem = self._problem(args, kwargs)
            if not self.synthesize_configs and len(self.configs) == 1:
                return problem, list(self.configs)
            configs = self._candidates(problem.bound, kwargs, problem.launch_const, problem.dtypes, problem.report)
            self._check_grid(kwargs.get("grid"), problem.bound, configs)
            return problem, configs
        finally:
            self.nargs = None

    def _context_cached(self, problem: _Problem, candidates: Sequence[Config]) -> tuple:
        """``(index into candidates or None, strict-mode refusal or None)`` from this process's disk cache."""
        choice, refused = self._lookup(problem)
        if choice is not None:
            for i, c in enumerate(candidates):
                if _jsonable(config_to_dict(c)) == choice:
                    return i, None
        return None, refused

    def _context_launch(self, config: Config, args: tuple, kwargs: Dict[str, Any]) -> Any:
        """Launch ``config`` as a tuned launch does (its pre_hook, then the kernel)."""
        config_kwargs = config.all_kwargs()
        self.best_config = config
        if config.pre_hook is not None:
            config.pre_hook({**dict(zip(self.arg_names, args)), **kwargs, **config_kwargs})
        return self.fn.run(*args, **kwargs, **config_kwargs)

    def _context_adopt(self, key: tuple, problem: _Problem, config: Config, timings: Mapping[Config, Optional[float]],
                       *, status: str, extra: Optional[Dict[str, Any]] = None) -> None:
        """Take ``config`` as the winner of ``key`` (memory and disk cache, report), as a tuning would."""
        if status.startswith("tuned"):
            self.configs_timings = {c: [t, t, t] for c, t in timings.items() if t is not None}
            self._method_used = "contextual"
            for c, t in timings.items():
                if t is not None:
                    problem.report.candidate(c, t)
        self._adopt(key, problem, config, status=status, extra=extra)
        self.best_config = config

    # ================================================================ AOT warmup
    def warmup(self, *args: Any, **kwargs: Any) -> list:
        """Compile every candidate for these arguments without launching (as Triton's ``warmup``)."""
        if not self.synthesize_configs:
            return super().warmup(*args, **kwargs)
        self.nargs = dict(zip(self.arg_names, args))
        bound = self._binder.bind(args, kwargs)
        report = TuningReport(self.kernel_name, self._source_hash(), None, verbose=self.verbose)
        configs = self._synthesize(bound, kwargs, self._binder.launch_fixed(kwargs),
                                   tensor_dtypes(self.arg_names, bound), report)
        ret = [self.fn.warmup(*args, **kwargs, **c.all_kwargs()) for c in configs]
        self.nargs = None
        return ret

    def __repr__(self) -> str:
        mode = "synthesized" if self.synthesize_configs else f"{len(self.configs)} configs"
        return f"tiletune.Autotuner({self.kernel_name}, key={self.keys}, {mode})"


def autotune(
    configs: Optional[Sequence[Config]],
    key: Sequence[str],
    hints: Optional[Mapping[str, Sequence[Any]]] = None,
    prune_configs_by: Optional[Dict[str, Any]] = None,
    reset_to_zero: Optional[Sequence[str]] = None,
    restore_value: Optional[Sequence[str]] = None,
    pre_hook: Optional[Callable] = None,
    post_hook: Optional[Callable] = None,
    warmup: Optional[float] = None,
    rep: Optional[float] = None,
    do_bench: Optional[Callable] = None,
    cache_results: bool = True,
    verify: Any = False,
    target: Any = None,
    top_k: Optional[int] = None,
    bench_method: Optional[str] = None,
    verbose: bool = False,
    use_cuda_graph: bool = False,
    pg: Any = None,
    shard: bool = False,
) -> Callable[[Any], Autotuner]:
    """Decorator for auto-tuning a ``@triton.jit`` kernel; ``configs=[]`` synthesizes the tilings.

    Every argument ``triton.autotune`` takes means what it means there
    (``configs``, ``key``, ``prune_configs_by``, ``reset_to_zero``,
    ``restore_value``, ``pre_hook``, ``post_hook``, ``warmup``, ``rep``,
    ``use_cuda_graph``, ``do_bench``, ``cache_results``), except that
    ``warmup``/``rep`` are simply the benchmark's time budgets in ms (not
    deprecated) and ``cache_results`` defaults to True and uses tiletune's
    cache (``TILETUNE_CACHE_DIR``).  Added:

    :param hints: values of non-tiling constexpr parameters to search along
        with the synthesized tilings, e.g. ``{"GROUP_SIZE_M": [1, 8]}``.
    :param verify: drop candidates whose outputs differ from the first
        candidate's (True, or a dict with ``rtol``/``atol``).
    :param target: the chip to synthesize for (a name such as ``"h100"`` or a
        ``Target``); default: ``TILETUNE_TARGET``, else the detected device
        (``"h100"`` under ``TRITON_INTERPRET=1``).
    :param top_k: how many synthesized candidates to benchmark.
    :param bench_method: ``"event"``, ``"cudagraph"``, ``"profiler"``,
        ``"npu"`` or ``"wall"`` (default ``TRITON_BENCH_METHOD``, else event;
        wall under the interpreter).  A ``do_bench`` callable wins over it.
    :param verbose: print what tuning does (fixed parameters, each
        candidate's time, drops, cache hits).
    :param pg: a ``torch.distributed`` process group whose ranks must all
        end with the same config for every key (every rank must launch the
        kernel with the same key: tuning is collective); ``"default"``: the
        default group.  Default None: no agreement, unless ``TILETUNE_DIST=1``
        and torch.distributed is initialised (then the default group).  The
        ``pg`` attribute of the returned object can be set later.
    :param shard: with a group, each rank benchmarks only its share of the
        candidates (round robin) on its own device; the shares are gathered,
        the leading few re-timed on every rank, and all ranks adopt one winner.
    """

    def decorator(fn: Any) -> Autotuner:
        _check_wraps_jit(fn)
        return Autotuner(
            fn, list(fn.arg_names), configs, key, reset_to_zero, restore_value,
            pre_hook=pre_hook, post_hook=post_hook, prune_configs_by=prune_configs_by,
            warmup=warmup, rep=rep, use_cuda_graph=use_cuda_graph, do_bench=do_bench,
            cache_results=cache_results, hints=hints, verify=verify, target=target, top_k=top_k,
            bench_method=bench_method, verbose=verbose, pg=pg, shard=shard,
        )

    return decorator
