"""``tiletune.autotune``: Triton's autotuner, plus ``configs=[]`` that synthesizes the tilings.

The decorator is a drop-in for ``triton.autotune`` (same arguments, same
semantics for each) with these additions:

* ``configs=[]``: per tuning key, the kernel's analysis (done once), the bound
  arguments (the sizes synthesis needs, the element types of the tensor
  arguments) and the target give a ranked list of feasible tilings
  (:func:`tiletune.synthesis.synthesize`); ``hints`` adds values of non-tiling
  parameters, ``top_k`` caps the list;
* the runtime is a row of stages, each a value built from explicit
  arguments in its own module and composed here: candidates
  (:class:`~tiletune.runtime.candidates.CandidatesStage` -> ``Candidates``),
  the decision path shared with the function and contextual tuners
  (:func:`tiletune.runtime.decision.decide`: cache, version policy, rank
  agreement, store), measuring
  (:class:`~tiletune.runtime.measure_stage.MeasureStage` -> ``Measured``:
  compile overlapped with timing, verify, retime) and the measured search
  (:mod:`~tiletune.runtime.strategies`: adaptive first batch, coordinate
  descent within the feasibility model);
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
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Dict, Mapping, Optional, Sequence

import triton
from triton.runtime.autotuner import Autotuner as _TritonAutotuner

from tiletune.errors import TuningError

from . import bench as _bench
from . import decision as _decision
from . import distributed as _dd
from . import protect as _protect
from .binding import Binder, base_function, tensor_dtypes
from . import isolate as _isolate
from .cache_validate import config_from_entry, kernel_entry_problems
from .candidates import Candidates, CandidatesStage, MetaParameterConflict, agreed_candidates
from . import live_kernel as _live
from .compile_workers import CompileSession
from .measure import RETIME_ROUNDS, RETIME_TOP
from .measure_stage import BenchSettings, MeasureStage, kernel_call
from .warm_start import warm_seeds
from .wrapping import base_init_kwargs as _base_init_kwargs
from .wrapping import check_wraps_jit as _check_wraps_jit
from .wrapping import import_tuning_modules as _import_tuning_modules
from .wrapping import innermost as _innermost
from .wrapping import resolve_group
from .report import TuningReport, config_str, config_to_dict
from .search import resolve_search
from .strategies import get_strategy
from .side_effects import DefaultHooks, verify_targets
from . import targets as _targets
from .tuning_log import json_plain

__all__ = ["Autotuner", "autotune", "MetaParameterConflict", "LAUNCH_CONTEXT", "resolve_group"]

Config = triton.Config

__all__ += ["RETIME_TOP", "RETIME_ROUNDS"]

#: Set by :func:`tiletune.contextual_autotune` while it runs a function in
#: tuning mode: an object with ``launch(tuner, key, args, kwargs)``.  When it
#: is set, :meth:`Autotuner.run` hands every launch whose key is not decided
#: yet to it (the context picks the candidate, launches and times it) instead
#: of tuning in isolation.  Decided keys launch as usual.
LAUNCH_CONTEXT: contextvars.ContextVar = contextvars.ContextVar("tiletune_launch_context", default=None)



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


#: The one JSON normaliser of the runtime (tuning_log.json_plain), under its old name here.
_jsonable = json_plain


class Autotuner(_TritonAutotuner):
    """Triton's ``Autotuner`` with synthesized configs, robust benchmarking and a disk cache.

    It composes the stages (values built per launch, see :meth:`candidates_stage` and
    :meth:`measure_stage`) and the decision path (:mod:`~tiletune.runtime.decision`).

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
        verify: Any = None,
        target: Any = None,
        top_k: Optional[int] = None,
        bench_method: Optional[str] = None,
        verbose: bool = False,
        pg: Any = None,
        shard: bool = False,
        search: Any = None,
        side_effects: str = "restore",
    ):
        _check_wraps_jit(fn)
        self.kernel_name = base_function(fn).__name__
        self.side_effects = _protect.check_mode(side_effects, self.kernel_name)
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
        if self.synthesize_configs:
            _import_tuning_modules()
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
        # the measured search (runtime/search.py): mode, and how much wider to search.  search_breadth > 1 is
        # the hook for "the analysis is incomplete -> search wider" (set it before the first launch).
        if search is not None:
            # an unknown mode or strategy fails at decoration, naming the registered ones
            get_strategy(resolve_search(search).strategy)
        self.search = search
        self.search_breadth = 1.0
        self._synthesis: Any = None  # the last synthesis's context (the candidates stage's result)
        self.ir_reading: Any = None  # the IR oracle's reading of the last synthesis
        self._method_used = "none"  # the last tuning's benchmark method
        self.search_facts: Dict[str, Any] = {}  # what the last tuning's search did (first batch, descent)
        # distributed: the group is resolved at tuning time (it may be initialised after decoration)
        self.pg = pg
        self.shard = bool(shard)
        # precomputed state
        self._inner, self._heuristics = _innermost(fn)
        self._binder = Binder(self.kernel_name, self.arg_names, key, self.base_fn)
        self._fast: Dict[tuple, tuple] = {}  # key -> (config, config.all_kwargs())
        self._unproven: set = set()  # keys whose cached config has not been launched yet
        self._bypass_cache = False  # re-tuning a key whose cached config failed at launch
        self._spec: Any = None
        self._spec_error: Optional[BaseException] = None
        self._spec_done = False
        self._target_obj: Any = None
        # the source that runs, captured now: a file edited or deleted after import does not change it
        self._source: Optional[str] = _live.live_source(fn)
        self._disk: Any = None
        self._noted_fixed: set = set()
        self.configs_timings: Dict[Config, Any] = {}
        self.bench_time = 0.0
        self.best_config: Optional[Config] = None
        self.nargs = None

    # ================================================================ dispatch (hot path)
    def run(self, *args: Any, **kwargs: Any) -> Any:
        if not self._binder.alignment_keyed:  # once: what decides Triton's pipelining joins the key
            self._first_launch()
        key = self._binder.key(args, kwargs)
        hit = self._fast.get(key)
        if hit is None:
            ctx = LAUNCH_CONTEXT.get()
            if ctx is not None:  # contextual tuning decides this launch
                return ctx.launch(self, key, args, kwargs)
            return self._tune_and_launch(key, args, kwargs)
        config, config_kwargs = hit
        self.best_config = config
        if config.pre_hook is not None:
            config.pre_hook({**dict(zip(self.arg_names, args)), **kwargs, **config_kwargs})
        return self.fn.run(*args, **kwargs, **config_kwargs)

    def _tune_and_launch(self, key: tuple, args: tuple, kwargs: Dict[str, Any]) -> Any:
        """The first launch of a key: decide its config, launch it; a cached one failing at launch is re-tuned once."""

        def launch(hit: tuple) -> Any:
            config, config_kwargs = hit
            self.best_config = config
            if config.pre_hook is not None:
                config.pre_hook({**dict(zip(self.arg_names, args)), **kwargs, **config_kwargs})
            return self.fn.run(*args, **kwargs, **config_kwargs)

        def retune() -> Any:
            self._fast.pop(key, None)
            self.cache.pop(key, None)
            self._bypass_cache = True
            try:
                return launch(self._tune(key, args, kwargs))
            finally:
                self._bypass_cache = False

        hit = self._tune(key, args, kwargs)
        if key not in self._unproven:
            return launch(hit)
        self._unproven.discard(key)
        where = self._disk.path if self._disk is not None else "the cache"
        return _decision.first_cached_launch(f"kernel {self.kernel_name!r}", where, list(key), config_str(hit[0]),
                                             lambda: launch(hit), retune)

    def _first_launch(self) -> None:
        """Key launches on the alignment of the integers that decide Triton's pipelining (the analysis reads
        them).  A ``configs=[]`` first tune forks its compile children before (:meth:`_cold_session`, taken up
        by :meth:`_tune`), so their warm-up overlaps the analysis."""
        if self.synthesize_configs and LAUNCH_CONTEXT.get() is None and not self._fast \
                and "_cold" not in self.__dict__:
            self._cold_started, self._cold = _bench.clock(), self._cold_session()
        if not self.synthesize_configs:  # a hand list: its configs are the user's, whatever the alignment
            return self._binder.key_alignment(())
        from tiletune.synthesis.alignment import spec_alignment_params
        self._binder.key_alignment(spec_alignment_params(self.spec()))

    # ================================================================ lazy, once per kernel
    @property
    def source(self) -> str:
        """The running kernel's source text (the cache file is named after its hash)."""
        if self._source is None:
            try:
                self._source = inspect.getsource(self.base_fn)
            except (OSError, TypeError):
                self._source = getattr(self._inner, "src", None) or self.kernel_name
        return self._source

    def spec(self, constants: Optional[Mapping[str, Any]] = None) -> Any:
        """The kernel's :class:`KernelSpec` (analysed once; None when analysis fails).

        ``constants`` (a launch's constexpr values and ``None`` arguments)
        specialises it: branches they decide are resolved, so what only a dead
        branch uses needs no dtype and no space (analysed once per distinct set).
        When no compile-time branch test of the unspecialised analysis read any
        of them (``KernelSpec.static_params``), specialising would find the same:
        the unspecialised spec is returned, and a first tune analyses once.
        """
        if constants and self._spec_done and self._spec is not None \
                and not set(constants) & set(getattr(self._spec, "static_params", None) or ()):
            return self._spec  # no branch test reads these parameters: specialising changes nothing
        if constants:
            by_constants = self.__dict__.setdefault("_spec_by_constants", {})
            ckey = tuple(sorted((k, repr(v)) for k, v in constants.items()))
            if ckey not in by_constants:
                try:
                    by_constants[ckey] = _live.analyze_live(self._inner, self._source, constants)
                except Exception:  # the unspecialised analysis (or its error) stands
                    by_constants[ckey] = self.spec()
            return by_constants[ckey]
        if not self._spec_done:
            self._spec_done = True
            try:
                self._spec = _live.analyze_live(self._inner, self._source)
            except Exception as exc:  # analysis is optional for explicit configs
                self._spec_error = exc
        return self._spec

    def resolved_target(self) -> Any:
        """The :class:`Target` tuned for (see :func:`tiletune.runtime.targets.resolve_target`)."""
        if self._target_obj is None:
            self._target_obj = _targets.resolve_target(self.target)
        return self._target_obj

    def _target_name(self) -> str:
        """The target's canonical name for the cache key (aliases resolved; "unknown" when none resolves)."""
        try:
            return _targets.target_name(self.target)
        except Exception:  # explicit configs need a name for the cache key only
            return "unknown"

    def _disk_cache(self, target_name: str) -> Any:
        if self._disk is None:
            from .cache import TuningCache, environment_fingerprint

            self._disk = TuningCache(self.kernel_name, self._identity(), kind="kernel",
                                     fingerprint=environment_fingerprint(target_name))
        return self._disk

    # ================================================================ the stages, composed
    def candidates_stage(self) -> CandidatesStage:
        """The candidates stage of a launch, built from this kernel's inputs (see :class:`CandidatesStage`)."""
        return CandidatesStage(
            self.kernel_name, self.fn, self.arg_names, self.keys, self._binder.constexpr, self._binder.defaults,
            self._heuristics, self.spec, lambda: self._spec_error, self.resolved_target, configs=self.configs,
            hints=self.hints, top_k=self.top_k, search=self.search, search_breadth=self.search_breadth,
            early_config_prune=self.early_config_prune, perf_model=self.perf_model,
            configs_top_k=self.configs_top_k, noted=self._noted_fixed, nargs=self.nargs)

    def _candidates(self, bound: Dict[str, Any], kwargs: Dict[str, Any], launch_const: Mapping[str, Any],
                    dtypes: Mapping[str, str], report: TuningReport) -> list:
        """Run the candidates stage for one launch; keep its synthesis context, IR reading and breadth."""
        got: Candidates = self.candidates_stage().run(bound, kwargs, launch_const, dtypes, report)
        if got.synthesis is not None:
            self._synthesis = got.synthesis
        if got.ir_reading is not None:
            self.ir_reading = got.ir_reading
        self.search_breadth = got.search_breadth
        return got.configs

    def _synthesize(self, bound: Dict[str, Any], kwargs: Dict[str, Any], launch_const: Mapping[str, Any],
                    dtypes: Mapping[str, str], report: TuningReport) -> list:
        """The synthesized candidates of one launch (``configs=[]``)."""
        return self._candidates(bound, kwargs, launch_const, dtypes, report)

    def prune_configs(self, kwargs: Dict) -> list:
        """Triton's pruning (``early_config_prune``, then ``perf_model`` + ``top_k``) over ``self.configs``."""
        return self.candidates_stage().prune_configs(kwargs)

    def _check_grid(self, grid: Any, bound: Mapping[str, Any], configs: list) -> None:
        """The grid rules over a candidate list (:meth:`CandidatesStage._check_grid`)."""
        self.candidates_stage()._check_grid(grid, bound, configs)

    def _checked_names(self, bound: Mapping[str, Any]) -> list:
        """The tensors the agreement check and ``verify`` compare: ``verify_targets`` over the stored/atomic pointers."""
        spec = self.spec()
        stored = [] if spec is None else list(spec.stored_pointers) + list(spec.atomic_pointers)
        return verify_targets(bound, self.reset_to_zero, self.restore_value, stored)

    def _kernel_call(self, args: tuple, kwargs: Dict[str, Any], config: Config,
                     grab: Optional[Callable[[], None]] = None) -> Callable[[], None]:
        """One benchmarked launch of ``config`` with the hooks in place now (:func:`~tiletune.runtime.measure.kernel_call`)."""
        return kernel_call(self.fn, self.arg_names, self.pre_hook, self.post_hook, args, kwargs, config, grab)

    def measure_stage(self, problem: Any = None, pg: Any = None) -> MeasureStage:
        """The measure stage of a key, built from this kernel's inputs (see :class:`MeasureStage`)."""
        return MeasureStage(
            self.kernel_name, self.fn, self._kernel_call, self._checked_names,
            lambda full_nargs: self.pre_hook(full_nargs, reset_only=True), self.arg_names,
            bench=BenchSettings(self._do_bench, self.num_warmups, self.num_reps, self.bench_method,
                                self.use_cuda_graph),
            verify=self.verify, hints=self.hints, shard=self.shard, search=self.search, top_k=self.top_k,
            synthesize_configs=self.synthesize_configs, synthesis=self._synthesis,
            search_breadth=self.search_breadth, seeds=lambda add: warm_seeds(self, problem, add, pg))

    def _fork_ahead(self, session: CompileSession, target: Any = None) -> None:
        """Fork ``session``'s first children, warming their compilers for ``target`` (default: Triton's) while this
        process analyses (:meth:`CompileSession.fork_ahead`; a no-op once warm, interpreted or forked)."""
        session.fork_ahead([self.fn], target, n=None if self.synthesize_configs else len(self.configs))

    def _cold_session(self) -> Optional[CompileSession]:
        """A compile session forked before Triton's driver, the binding and the analysis, so the children's
        compiler warm-up overlaps them; only when nothing cached can answer (no cache file of this kernel,
        the cache off or bypassed, ``TILETUNE_ALWAYS_TUNE``), else None (a cache hit needs no children)."""
        from .cache import always_tune, may_hold

        if self.cache_results and not self._bypass_cache and not always_tune() and may_hold(self.kernel_name):
            return None
        session = CompileSession()
        self._fork_ahead(session, _targets.cuda_target_before_driver())  # Triton's driver does not exist yet
        return session

    def _search(self, args: tuple, kwargs: Dict[str, Any], problem: _Problem, pg: Any,
                started: Optional[float] = None, session: Optional[CompileSession] = None) -> tuple:
        """Tune one key: the candidates stage, then the measure stage; ``(winner, extra facts)``.

        ``started``: when this first tune began on the measuring clock (binding,
        analysis and the cache lookup before the search count against its time
        budget); default now.  ``session``: compile children forked earlier
        (:meth:`_cold_session`); default a new session, forked now."""
        with session or CompileSession() as session:  # child processes that compile for every batch of this search
            self._fork_ahead(session)  # forked now unless forked earlier (or this process is warm)
            t_begin = _bench.clock()  # the measuring clock: the search's time budget reads it too
            t_start = t_begin if started is None else min(started, t_begin)
            stage: Dict[str, MeasureStage] = {}

            def build() -> tuple:
                configs = self._candidates(problem.bound, kwargs, problem.launch_const, problem.dtypes,
                                           problem.report)
                self._check_grid(kwargs.get("grid"), problem.bound, configs)
                stage["measure"] = self.measure_stage(problem, pg)  # after synthesis: its context and breadth
                return configs, stage["measure"].bench_fn(problem.report)

            configs, bench = agreed_candidates(build, pg, self.kernel_name)
            measure = stage["measure"]
            self._method_used = measure.method_used
            got = measure.run(configs, bench, args, kwargs, problem, pg, session, (t_start, t_begin, _bench.clock()))
        self.configs_timings, self.bench_time, self.search_facts = got.timings, got.seconds, got.facts
        return got.winner, got.extra

    # ================================================================ tuning (once per key)
    def _tune(self, key: tuple, args: tuple, kwargs: Dict[str, Any]) -> tuple:
        started = _bench.clock()  # the search's time budget covers the first tune from here (its first launch)
        started = min(started, self.__dict__.pop("_cold_started", started))
        self.nargs = dict(zip(self.arg_names, args))
        try:
            if not self.synthesize_configs and len(self.configs) == 1:
                # as Triton: a single config is used without benchmarking
                cfg = self.configs[0]
                self.cache[key] = cfg
                self._fast[key] = (cfg, cfg.all_kwargs())
                return self._fast[key]
            cold = self.__dict__.pop("_cold", None) or self._cold_session()  # forked at the first launch
            try:
                _targets.require_device(f"kernel {self.kernel_name!r}")
                problem = self._problem(args, kwargs)
                pg = self.process_group()

                def tune() -> tuple:
                    protection = _protect.kernel_protection(self, problem)  # configs=[]: inputs it writes into
                    with _decision.protect_side_effects(f"kernel {self.kernel_name!r}", problem.bound,
                                                        protection), \
                            _protect.after_each_launch(self, protection), _isolate.first_launches(self):
                        config, extra = self._search(args, kwargs, problem, pg, started=started, session=cold)
                    return config, self._entry(config, extra), extra

                decided = _decision.decide(self._decision(problem, pg), self._match, tune)
            finally:
                if cold is not None and cold.pools:  # not searched (a rank 0 winner, an error): stop at once
                    cold.abandon()
            config = decided.choice
            if decided.status == "cache hit":
                config = self._config_from_entry({"config": config})
                if config is None:  # rank 0's entry does not fit here: the same kernel everywhere makes this unreachable
                    raise TuningError(
                        f"kernel {self.kernel_name!r}: rank 0's cached config {decided.choice!r} does not fit this "
                        "rank's kernel; every rank must run the same kernel source and configs"
                    )
                self._unproven.add(key)
                where = self._disk_cache(problem.target_name).path
                problem.report.note(f"cache hit in {where}" + (" (rank 0's entry, agreed)" if _dd.is_active(pg) else ""))
            self._adopt(key, problem, config, status=decided.status, extra=decided.extra)
            return self._fast[key]
        finally:
            self.nargs = None

    def process_group(self) -> Any:
        """The process group this kernel's tunings agree over (None: no agreement); see :func:`resolve_group`."""
        return resolve_group(self.pg)

    def _launch_constants(self, args: tuple, kwargs: Dict[str, Any]) -> Dict[str, Any]:
        """The constexpr values this launch fixes, as Triton binds it (positional, keyword, heuristics)."""
        return _live.launch_constants(self.kernel_name, self.arg_names, self._binder.constexpr, args, kwargs,
                                      self._binder.defaults, _live.heuristic_layers(self.fn))

    def _problem(self, args: tuple, kwargs: Dict[str, Any]) -> _Problem:
        """Bind one launch and compute its disk key (no analysis, no synthesis)."""
        bound = self._binder.bind(args, kwargs)
        launch_const = self._launch_constants(args, kwargs)
        dtypes = tensor_dtypes(self.arg_names, bound)
        target_name = self._target_name() if (self.synthesize_configs or self.cache_results) else "unknown"
        key_values = self._binder.key_values(bound)
        report = TuningReport(self.kernel_name, self._source_hash(), {"key": key_values, "dtypes": list(dtypes.values())},
                              verbose=self.verbose)
        from .cache import entry_key

        disk_key = entry_key({"key": key_values, "dtypes": list(dtypes.values()), "target": target_name,
                              **self._space(launch_const)})
        return _Problem(bound, dict(launch_const), dict(dtypes), target_name, disk_key, report)

    def _decision(self, problem: _Problem, pg: Any) -> _decision.Decision:
        """This key's :class:`~tiletune.runtime.decision.Decision` (cache, key, what the ranks agree on)."""
        space = [str(c) for c in self.configs] if not self.synthesize_configs else "synthesized"
        cache = self._disk_cache(problem.target_name) if self.cache_results else None
        return _decision.Decision(f"kernel {self.kernel_name!r}", cache, problem.disk_key,
                                  problem=[problem.disk_key, space], pg=pg, note=problem.report.note,
                                  check=lambda entry: kernel_entry_problems(self, problem, entry),
                                  skip_cache=self._bypass_cache)

    def _match(self, entry: Mapping[str, Any]) -> Optional[Any]:
        """A cached entry's config as JSON, when it fits this kernel (the decision path's match stage)."""
        config = self._config_from_entry(entry)
        return None if config is None else _jsonable(config_to_dict(config))

    def _adopt(self, key: tuple, problem: _Problem, config: Config, *, status: str,
               extra: Optional[Dict[str, Any]] = None) -> None:
        """Make ``config`` this key's winner in memory and report it (the disk store is the decision path's)."""
        info = {"target": problem.target_name}
        if status != "cache hit":
            info["method"] = self._method_used
        info.update(extra or {})
        problem.report.finish(config, status=status, extra=info)
        self.cache[key] = config
        self._fast[key] = (config, config.all_kwargs())

    def _identity(self) -> str:
        """The text whose hash names this kernel's cache file and its tuning log: the live source, the
        @triton.jit helpers it calls, and what Triton's own kernel identity covers (constexpr globals)."""
        from .cache import code_identity

        helpers = dict(getattr(self.spec(), "helpers", None) or {})
        triton_key = _live.identity_digest(self._inner)
        if triton_key is not None:
            helpers["<triton cache_key>"] = triton_key
        return code_identity(self.source, helpers)

    def _source_hash(self) -> str:
        """The hash that names this kernel's cache file and its tuning log (the same one for both)."""
        from .cache import source_hash

        return source_hash(self._identity())

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

    # ---------------------------------------------------------------- disk cache entries
    def _config_from_entry(self, entry: Mapping[str, Any]) -> Optional[Config]:
        """The config a disk-cache entry names (:func:`~tiletune.runtime.cache_validate.config_from_entry`)."""
        return config_from_entry(entry, self.arg_names, None if self.synthesize_configs else self.configs)

    def _entry(self, config: Config, extra: Optional[Mapping[str, Any]] = None) -> Optional[dict]:
        """The disk-cache entry of a tuning that chose ``config`` (None with ``cache_results=False``)."""
        if not self.cache_results:
            return None
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
        return entry

    # ================================================================ the contextual tuner's protocol
    # :mod:`tiletune.runtime.contextual` drives a tuner through these four public methods only.
    def tuning_problem(self, args: tuple, kwargs: Dict[str, Any]) -> tuple:
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

    def cache_decision(self, problem: _Problem, candidates: Sequence[Config]) -> tuple:
        """``(Decision, match)`` of a launch the contextual tuner decides: this kernel's cache, entry key and
        entry checks (the context sets its group and what its ranks agree on); ``match(entry)`` is the index
        of the cached config among ``candidates``, None when it is not one of them."""

        def match(entry: Mapping[str, Any]) -> Optional[int]:
            choice = self._match(entry)
            for i, c in enumerate(candidates if choice is not None else ()):
                if _jsonable(config_to_dict(c)) == choice:
                    return i
            return None

        return self._decision(problem, None), match

    def launch_config(self, config: Config, args: tuple, kwargs: Dict[str, Any]) -> Any:
        """Launch ``config`` as a tuned launch does (its pre_hook, then the kernel)."""
        config_kwargs = config.all_kwargs()
        self.best_config = config
        if config.pre_hook is not None:
            config.pre_hook({**dict(zip(self.arg_names, args)), **kwargs, **config_kwargs})
        return self.fn.run(*args, **kwargs, **config_kwargs)

    def adopt(self, key: tuple, problem: _Problem, config: Config, timings: Mapping[Config, Optional[float]],
              *, status: str, extra: Optional[Dict[str, Any]] = None, decision: Any = None) -> None:
        """Take ``config`` as the winner of ``key`` (memory, disk cache after a tuning, report); a tuned winner
        is stored by ``decision`` (the one the context decided the key with; default: this kernel's)."""
        if status.startswith("tuned"):
            self.configs_timings = {c: [t, t, t] for c, t in timings.items() if t is not None}
            self._method_used = "contextual"
            for c, t in timings.items():
                if t is not None:
                    problem.report.candidate(c, t)
            entry = self._entry(config, extra)
            if entry is not None:
                _decision.store(decision if decision is not None else self._decision(problem, None), entry)
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
        configs = self._synthesize(bound, kwargs, self._launch_constants(args, kwargs),
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
    verify: Any = None,
    target: Any = None,
    top_k: Optional[int] = None,
    bench_method: Optional[str] = None,
    verbose: bool = False,
    use_cuda_graph: bool = False,
    pg: Any = None,
    shard: bool = False,
    search: Any = None,
    side_effects: str = "restore",
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
    :param verify: the agreement check (docs/agreement-check.md).  None
        (default): with ``configs=[]`` every candidate's outputs must agree
        with the others' (a fingerprint, norm-wise, per dtype); a parameter
        whose value alone changes them stops the tune with
        :class:`~tiletune.runtime.agreement.MeaningError` naming it (pass it at
        launch or list its safe values in ``hints``); hand lists are not
        checked.  False: no check.  True, or a dict with ``rtol``/``atol``:
        full outputs compared element by element, for hand lists too.
    :param target: the chip to synthesize for (a name such as ``"h100"`` or a
        ``Target``); default: ``TILETUNE_TARGET``, else the detected device
        (``"h100"`` under ``TRITON_INTERPRET=1``).
    :param top_k: how many synthesized candidates to benchmark first (default:
        chosen from the model's cost gap, see ``search``).
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
    :param search: how much to measure for synthesized configs: ``"fast"``,
        ``"default"`` or ``"exhaustive"`` (default ``TILETUNE_SEARCH``, else
        ``"default"``): the model's leading candidates first (more where
        their modelled costs are close), then a coordinate descent from the
        best measured ones, never compiling a neighbour the model rejects
        (:mod:`tiletune.runtime.search`).  A hand ``configs`` list is
        measured as given.
    :param side_effects: what ``configs=[]`` does about a kernel that writes
        into its inputs (the analysis sees an in-place update or a
        non-idempotent atomic into a tensor no ``restore_value``/
        ``reset_to_zero`` covers): ``"restore"`` (default) snapshots those
        tensors before tuning and restores them after, so they come out as
        one untuned launch leaves them, and says so once (TiletuneWarning);
        ``"error"`` raises TuningError instead; ``"ignore"`` does nothing (as
        Triton).  See :mod:`tiletune.runtime.protect`.
    """

    def decorator(fn: Any) -> Autotuner:
        _check_wraps_jit(fn)
        return Autotuner(
            fn, list(fn.arg_names), configs, key, reset_to_zero, restore_value,
            pre_hook=pre_hook, post_hook=post_hook, prune_configs_by=prune_configs_by,
            warmup=warmup, rep=rep, use_cuda_graph=use_cuda_graph, do_bench=do_bench,
            cache_results=cache_results, hints=hints, verify=verify, target=target, top_k=top_k,
            bench_method=bench_method, verbose=verbose, pg=pg, shard=shard, search=search,
            side_effects=side_effects,
        )

    return decorator
