"""Compile candidates in forked worker processes, filling Triton's disk cache.

Compiles submitted to a thread pool run nearly one at a time: Triton's
compiler holds the GIL for much of a compile (on the H100 host, eight
compiles of 0.28 s each took 2.6 s on 16 cores).  So before the thread pool
compiles a batch, each candidate is compiled in a forked child process; the
child writes the binary to Triton's disk cache, and the thread's own compile
of the same candidate then only reads it back.

What a candidate's compile needs is taken from Triton itself: its
``knobs.runtime.jit_cache_hook`` is called before every JIT compile with the
kernel, its signature, constexprs, attributes and serialised options (the data
Triton's own ``JITFunction.preload`` compiles from).  :func:`capture_specs`
runs each warmup job once with that hook answering "skip" for this thread
only, which records the compile without doing it.  A forked child shares the
parent's imported modules, so it compiles the very ``JITFunction`` the parent
holds, with no import by path.

Before the first children of a process are forked, the process compiles a
one-line kernel for the target itself (:func:`warm_compiler`).  A compile
first pays the compiler's once-per-process set-up; children forked from a
process that never compiled each pay it again, side by side, and a first
tune in a fresh process then waited for that in every child of its first
batch (on the H100 host a child's first compile took 0.68 s there against
0.23 s in children forked from a process that had compiled before).

Nothing here decides correctness: when a child fails, dies, hangs past
:data:`WAIT_S`, or its cache entry does not match (a different cache key), the
thread compiles the candidate itself, as it did without processes.  Children
never touch the GPU (the target is passed in), so forking a process that holds
a CUDA context is safe for them.  Turned off by
``TILETUNE_COMPILE_PROCESSES=0``; needs the ``fork`` start method (POSIX).
"""

from __future__ import annotations

import itertools
import json
import multiprocessing
import os
import threading
import time
import warnings
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Dict, Hashable, List, Optional, Tuple

import triton.language as tl

from . import cache_key_warm
from . import timeline as _timeline
from .env import env_off
from .quiet import quiet_child
from .settle import settle_later
from .launcher_prebuild import build_launcher, prepare_launcher_build

__all__ = ["CompileSpec", "FrontEndRefusal", "processes_enabled", "capture_specs", "children_for", "CompileSession",
           "ProcessCompiles", "WAIT_S", "warm_compiler", "AHEAD_CHILDREN"]

#: Seconds a thread waits for a child's compile before compiling the candidate
#: itself (a child that deadlocked after the fork must not stall tuning).
WAIT_S = 120.0

#: Seconds the first launch waits for the child building the kernel's launcher (about 0.3 s on the H100
#: host) before it goes on and builds its own.
LAUNCHER_WAIT_S = 30.0


#: Batches of fewer compiles than this go to the threads, not to child processes
#: (``TILETUNE_COMPILE_PROCESSES_MIN``; default 1: children for every batch).  On a 2-core CPU host, matmul
#: configs for sm_90 compiled from a fresh process took 3.7 s in children against 4.7 s on threads for 2
#: configs, 5.6 s against 8.5 s for 4 (the threads share one GIL), so the default keeps children even for
#: small batches; where forks cost more than they gain (a host with few cores, a large CUDA context), raise it.
MIN_CHILD_BATCH = 1


def min_child_batch() -> int:
    """The smallest batch compiled in child processes (:data:`MIN_CHILD_BATCH`, or
    ``TILETUNE_COMPILE_PROCESSES_MIN``); a value that is not a positive integer is refused, naming it."""
    raw = os.environ.get("TILETUNE_COMPILE_PROCESSES_MIN", "").strip()
    if not raw:
        return MIN_CHILD_BATCH
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"tiletune: TILETUNE_COMPILE_PROCESSES_MIN={raw!r} is not a positive integer; set it to "
                         "the smallest batch of compiles worth forking children for (e.g. 4), or unset it")
    return int(raw)


def processes_enabled(n_jobs: Optional[int] = None) -> bool:
    """True unless ``TILETUNE_COMPILE_PROCESSES`` is 0/false, this platform cannot fork, or ``n_jobs`` (a
    batch's compiles) is below :func:`min_child_batch`."""
    if env_off("TILETUNE_COMPILE_PROCESSES"):
        return False
    if n_jobs is not None and n_jobs < min_child_batch():
        return False
    return "fork" in multiprocessing.get_all_start_methods()


@dataclass
class CompileSpec:
    """One JIT compile as Triton would run it: ``fn.compile(ASTSource(fn, ...), target, options)``."""

    fn: Any  # the triton.runtime.jit.JITFunction
    signature: Dict[str, Any]
    constexprs: Dict[Any, Any]
    attrs: Dict[Any, Any]
    options: Dict[str, Any]
    target: Any  # triton.backends.compiler.GPUTarget

    def compile(self, front_end_errors: Optional[List[str]] = None) -> Any:
        """Compile (or read back from Triton's cache); the ``CompiledKernel``.

        ``front_end_errors``: where Triton's front end (``make_ir``, the compile's first step) raised, its
        message is appended there (the caller then knows Triton refused the candidate, not the backend)."""
        from triton import compiler

        # what the JIT itself calls (it binds them on first use), else Triton's own
        ast_source = getattr(self.fn, "ASTSource", compiler.ASTSource)
        compile_fn = getattr(self.fn, "compile", compiler.compile)
        src = ast_source(self.fn, self.signature, self.constexprs, self.attrs)
        if front_end_errors is not None:
            make_ir = src.make_ir

            def front_end(*args: Any, **kwargs: Any) -> Any:
                try:
                    return make_ir(*args, **kwargs)
                except Exception as exc:
                    from .triton_ir import refusal_text

                    front_end_errors.append(refusal_text(exc))
                    raise
            src.make_ir = front_end
        return compile_fn(src, target=self.target, options=dict(self.options))

    def identity(self) -> str:
        """A string equal for two specs that compile the same thing."""
        return repr((id(self.fn), self.signature, sorted(map(repr, self.constexprs.items())),
                     sorted(map(repr, self.attrs.items())), sorted(self.options.items()), self.target))


def _options_from(specialization_data: str) -> Dict[str, Any]:
    """The backend options a JIT compile used, from Triton's serialised specialisation (as ``preload`` reads it)."""
    options = json.loads(specialization_data)["options"]
    return {k: tuple(v) if isinstance(v, list) else v for k, v in options.items()}


_capture = threading.local()
_CAPTURE_LOCK = threading.Lock()


def _spec_from_hook(fn: Any, compile: Dict[str, Any]) -> Optional[CompileSpec]:
    jit = getattr(fn, "jit_function", None)
    try:
        target = jit.device_caches[compile["device"]][2]
        return CompileSpec(jit, dict(compile["signature"]), dict(compile["constants"]), dict(compile["configs"][0]),
                           _options_from(compile["specialization_data"]), target)
    except Exception:  # a Triton whose hook data differs: leave this job to the thread
        return None


def capture_specs(jobs: Dict[Hashable, Callable[[], Any]]) -> Dict[Hashable, CompileSpec]:
    """Run each ``jobs[k]()`` (a ``fn.run(..., warmup=True)``) with compiling skipped; what each would compile.

    Jobs whose kernel is already compiled in memory, or that raise, get no
    spec (the thread pool handles them as before).  Other threads' compiles
    during the capture go on untouched, through any hook already installed.
    """
    try:
        from triton import knobs
    except ImportError:
        return {}
    specs: Dict[Hashable, CompileSpec] = {}
    with _CAPTURE_LOCK:
        previous = knobs.runtime.jit_cache_hook

        def hook(*, fn, compile, **kwargs):
            if getattr(_capture, "into", None) is None:
                return previous(fn=fn, compile=compile, **kwargs) if previous is not None else None
            spec = _spec_from_hook(fn, compile)
            if spec is not None:
                _capture.into.append(spec)
            return True  # skip the compile: the candidate compiles later, in a child and then the pool

        knobs.runtime.jit_cache_hook = hook
        try:
            for k, job in jobs.items():
                _capture.into = []
                try:
                    job()
                except Exception:  # reported when the thread pool runs the job
                    pass
                if len(_capture.into) == 1:
                    specs[k] = _capture.into[0]
        finally:
            _capture.into = None
            knobs.runtime.jit_cache_hook = previous
    return specs


# The kernels of the sessions in flight, by session id and token: forked children find them here, in the
# memory they share with the parent as of the fork (a JITFunction is not sent to them).
_KERNELS: Dict[int, Dict[int, Any]] = {}
_session_ids = itertools.count()


def _user_cpu_s() -> float:
    """User CPU seconds of this process and of its finished children (``ptxas``).

    User time only: a forked child's system time is mostly copy-on-write
    page faults of the parent's heap, which a compile in the parent (what the
    time budget prices) does not pay.
    """
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_utime + resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime


class FrontEndRefusal(Exception):
    """Triton's front end refused a candidate in a compile child (a ``tl.static_assert``, a dot under 16, a
    type error): the message is Triton's, as the IR oracle's screen words it.  Nothing of the backend ran."""


def _compile_in_child(session: int, token: int, signature: Dict[str, Any], constexprs: Dict[Any, Any],
                      attrs: Dict[Any, Any], options: Dict[str, Any],
                      target: Any) -> Tuple[float, Optional[str], Optional[str], float, float, Optional[str]]:
    """In a forked child: compile one spec.  ``(user CPU seconds, kernel hash or None, error or None, start,
    end, refusal or None)``, start and end on ``time.perf_counter`` (CLOCK_MONOTONIC: one clock for the parent
    and its children on Linux).

    The compile's first step is Triton's front end (``ASTSource.make_ir``): when it raises, the candidate is
    one Triton refuses, and ``refusal`` carries its message (:func:`tiletune.runtime.triton_ir.refusal_text`,
    the IR oracle's wording) -- the child returns at once, before any backend pass, and the parent drops the
    candidate instead of compiling it again (:meth:`ProcessCompiles.refusal`).  The compile children are the
    screen of a first tune: the parent no longer lowers the whole pool before the first compile starts."""
    from .compile_facts import describe_error

    start, t0 = time.perf_counter(), _user_cpu_s()
    digest, error, refusal = None, None, None
    front: List[str] = []
    try:
        spec = CompileSpec(_KERNELS[session][token], signature, constexprs, attrs, options, target)
        digest = getattr(spec.compile(front_end_errors=front), "hash", None)
    except Exception as exc:  # Triton's exceptions need not pickle: send their text
        error = describe_error(exc)
        refusal = front[0] if front else None
    return _user_cpu_s() - t0, digest, error, start, time.perf_counter(), refusal


def _launcher_in_child(session: int, token: int, signature: Dict[str, Any], constexprs: Dict[Any, Any],
                       attrs: Dict[Any, Any], options: Dict[str, Any], target: Any) -> bool:
    """In a forked child: build the launcher of a spec's kernel into Triton's cache (launcher_prebuild)."""
    return build_launcher(CompileSpec(_KERNELS[session][token], signature, constexprs, attrs, options, target))


def _warm_body(out_ptr):
    tl.store(out_ptr, 0)


_WARMED: Dict[str, Optional[float]] = {}  # target -> seconds its warm-up compile took (None: it failed)
_WARM_LOCK = threading.Lock()
_WARMING: List[threading.Thread] = []  # the threads warm_after started


def warm_compiler(target: Any) -> Optional[float]:
    """Compile a one-line kernel for ``target`` in this process, once per process and target.

    Seconds the compile took the first time, None afterwards (or when it
    failed: the warm-up is only an optimisation).  Called before children
    are forked, so that they inherit a compiler that has done its
    once-per-process set-up (:mod:`this module's <tiletune.runtime.compile_workers>` docstring),
    and in children forked ahead (:meth:`CompileSession.fork_ahead`).
    """
    from triton.compiler import ASTSource, compile as triton_compile
    from triton.runtime.jit import JITFunction

    key = repr(target)
    with _WARM_LOCK:
        if key in _WARMED:
            return None
        t0 = time.perf_counter()
        try:
            # JITFunction directly: triton.jit would hand back an interpreter function under TRITON_INTERPRET
            triton_compile(ASTSource(JITFunction(_warm_body), {"out_ptr": "*i32"}, {}, {}), target=target,
                           options={"num_warps": 1, "num_stages": 1})
        except Exception:  # a target this Triton cannot compile for: the children will say so themselves
            _WARMED[key] = None
            return None
        _WARMED[key] = time.perf_counter() - t0
        _timeline.add("warm_up", "in this process", t0, t0 + _WARMED[key])
        return _WARMED[key]


def warm_after(target: Any) -> Optional[threading.Thread]:
    """Warm this process's compiler for ``target`` in a background thread, once (None when warm or warming).

    Started when the first tune's session closes: that tune forked its
    children ahead from a cold compiler (:meth:`CompileSession.fork_ahead`)
    and this process never compiled; later tunes fork from a warm one
    (:func:`warm_compiler` waits for this thread), so their children do not
    each pay the set-up again.  Not during the tune: the compile holds the
    GIL and would slow its synthesis or timings."""
    if repr(target) in _WARMED or _WARM_LOCK.locked():
        return None
    # not a daemon: a compile cut off at the interpreter's exit could crash it; an exit waits for it instead
    thread = threading.Thread(target=warm_compiler, args=(target,), name="tiletune-warm-up", daemon=False)
    _WARMING.append(thread)
    thread.start()
    return thread


def _warm_in_child(target: Any) -> Tuple[float, float, float]:
    """In a child forked ahead: warm its compiler for ``target``; ``(seconds, start, end)`` (perf_counter)."""
    start = time.perf_counter()
    seconds = warm_compiler(target) or 0.0
    return seconds, start, time.perf_counter()


#: Children forked ahead, as a first tune starts (:meth:`CompileSession.fork_ahead`): as many as a first batch
#: compiles (3-9 on the H100 bench, agreement-check probes included) and one for the launcher's build; the rest
#: of the session's children are forked after the first batch is handed over, as without.
AHEAD_CHILDREN = 10


def _warmed_in_child() -> Dict[str, Optional[float]]:
    """The targets this child's compiler was warmed for before the fork (for the tests)."""
    return dict(_WARMED)


def _child_start() -> None:
    """First thing in each forked child: move every object inherited from the parent out of the collector's
    reach (``gc.freeze``).  Otherwise the child's first full collection walks the parent's whole heap, and
    writing each object's collector header copies every page of it (copy-on-write): time a compile in the
    parent never spends."""
    import gc

    gc.freeze()
    quiet_child()  # a failing compile's reproducer and diagnostics must not reach the user's terminal


def _frozen_in_child() -> int:
    """How many inherited objects this child froze (for the tests)."""
    import gc

    return gc.get_freeze_count()


def children_for(n_jobs: int) -> int:
    """Child processes for ``n_jobs`` compiles: one a job, at most the cores but one (the launching thread
    keeps a core, so a child compile never delays the launches timed meanwhile)."""
    from .compile_facts import max_workers

    return max(1, min(n_jobs, max_workers(n_jobs + 1) - 1))


_HEAP_LOCK = threading.Lock()
_HEAP = {"sessions": 0, "frozen": False}  # sessions with children alive; whether this module froze the heap


def _hold_heap() -> bool:
    """Freeze this process's heap (``gc.freeze``) while compile children share it; True when this session
    holds the freeze (:func:`_release_heap` at its close).

    After a fork, parent and children share the heap's pages copy-on-write.  A full collection in the parent
    writes every object's collector header, copying each page it touches: on a first tune, the collection
    that the analysis and synthesis trigger landed right after the children were forked ahead, and the
    candidates stage took 0.31-0.48 CPU s instead of 0.15 (matmul, 10 children, 24.5k page faults against
    9.7k; bench/fixed_cost.py --fork-ahead).  Frozen objects are left out of every collection; they are
    unfrozen (collected as before) once the last session's children are gone.  A program that froze its
    heap itself is left as it is."""
    import gc

    with _HEAP_LOCK:
        if _HEAP["sessions"] == 0:
            if gc.get_freeze_count():  # frozen by the program: not ours to freeze or unfreeze
                return False
            gc.freeze()
            _HEAP["frozen"] = True
        elif not _HEAP["frozen"]:
            return False
        _HEAP["sessions"] += 1
        return True


def _release_heap() -> None:
    """One session that held the freeze (:func:`_hold_heap`) closed; the last one unfreezes the heap."""
    import gc

    with _HEAP_LOCK:
        _HEAP["sessions"] = max(0, _HEAP["sessions"] - 1)
        if _HEAP["sessions"] == 0 and _HEAP["frozen"]:
            gc.unfreeze()
            _HEAP["frozen"] = False


def _ready() -> None:
    """Submitted to a new pool to fork its children now (a fork-context pool forks at its first submit)."""


class CompileSession:
    """Child processes that compile for one tuning search; a context manager.

    The children are forked at the first :meth:`submit` (so they know the
    kernels of that batch) and serve every later batch of the search: a
    descent round then pays neither the forks nor a cold child's first
    compile again.  ``workers`` children at most (default: the cores but one,
    up to 16 unless the first batch is larger: a descent round's neighbours,
    12-24 points, then compile in one or two waves).

    The forks come in two steps.  A fork of a process that holds a CUDA
    context costs 9-24 ms on the H100 host, and a pool forks all its
    children before any of them starts: 15 children delayed a first batch of
    3 compiles by 0.13-0.36 s (bench/results/gpu_bench_search_s21f.json,
    ``start_children_s``).  So the first batch gets one child per compile,
    and the rest of the children are forked after that batch is handed
    over, while its compiles run and this process only waits for them.
    The first pool has one more child where the kernel's host launcher can
    be built before any candidate compiled (:mod:`.launcher_prebuild`);
    :attr:`launcher` is that build's future, which the first launch awaits.
    """

    def __init__(self, workers: Optional[int] = None) -> None:
        self.id = next(_session_ids)
        self.workers = workers
        self.pools: List[ProcessPoolExecutor] = []
        self._in_flight: List[List[Future]] = []  # per pool, its compiles handed over and not yet seen done
        self._sizes: List[int] = []  # children per pool
        self.dispatched: List[int] = []  # compiles handed to each pool so far
        self._to_fork = 0  # children still to fork once the first batch is handed over
        self.broken = False
        self.size = 0  # children in the pools once started (how many compiles run side by side)
        self.warm_s = 0.0  # seconds of this process' compiler warm-up counted by this session (warm_compiler)
        self.warm_wait_s = 0.0  # of which it waited for (none when the children warmed their own: fork_ahead)
        self.warm_futures: List[Future] = []  # the warm-ups of children forked ahead (fork_ahead)
        self.ahead_target: Any = None  # the target they warmed for (the later children warm for it too)
        self.handed_at: Optional[float] = None  # when the last submit had handed its compiles to the children
        self.fork_rest_s = 0.0  # seconds the last submit spent forking the children beyond its batch's
        self.launcher: Optional[Future] = None  # a child building the kernel's launcher (launcher_prebuild)
        self.holds_heap = False  # this session froze the heap for its children (_hold_heap)

    @property
    def pool(self) -> Optional[ProcessPoolExecutor]:
        """The pool of the first batch's children (None before the first submit)."""
        return self.pools[0] if self.pools else None

    def child_pids(self) -> List[int]:
        """The process ids of the children forked so far."""
        return [p.pid for pool in self.pools for p in (getattr(pool, "_processes", None) or {}).values()]

    def _fork(self, n: int) -> None:
        """Start a pool of ``n`` children and fork them now (the heap frozen first: :func:`_hold_heap`; the
        cache-key thread settled first: :mod:`.cache_key_warm`)."""
        cache_key_warm.settled()
        if not self.holds_heap:
            self.holds_heap = _hold_heap()
        pool = ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("fork"),
                                   initializer=_child_start)
        self.pools.append(pool)
        self._in_flight.append([])
        self._sizes.append(n)
        self.dispatched.append(0)
        pool.submit(_ready)

    def fork_ahead(self, fns: List[Any], target: Any = None, n: Optional[int] = None) -> bool:
        """Fork the first children now, as a first tune starts, before its first batch is known.

        Each child warms its own compiler for ``target`` (default: the current
        device's) while this process binds, analyses and synthesises: the
        once-per-process set-up (0.77 s on the H100 host, under the GIL when run
        in a thread of this process, so not overlapped there) is paid in
        parallel instead of before the first fork.  ``fns``: the kernels the
        children will compile (a wrapper is unwrapped down to its
        ``JITFunction``); a spec of another kernel compiles on the threads.
        ``n``: the compiles the first batch will have, when known (a hand
        list), else :data:`AHEAD_CHILDREN` are forked.  True when forked; False with compile processes off, under the
        interpreter, when the target is unknown, or once the session started.
        """
        from .bench import interpreting

        if self.pools or self.broken or interpreting() or not processes_enabled():
            return False
        if target is None:
            try:
                from triton.runtime import driver

                target = driver.active.get_current_target()
            except Exception:  # no device: nothing to compile for
                return False
        if repr(target) in _WARMED or _WARM_LOCK.locked():  # warm (or warming): forked from it, the children are too
            return False
        known: Dict[int, Any] = {}
        for fn in fns:
            while fn is not None and id(fn) not in known:
                known[id(fn)] = fn
                fn = getattr(fn, "fn", None)
        _KERNELS[self.id] = known
        total = self.workers or children_for(16)
        first = min(total, AHEAD_CHILDREN if n is None else max(1, n))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # Python 3.12+ warns on fork in a threaded process
            try:
                self._fork(first)
            except Exception:
                self.broken = True
                return False
        self.warm_futures = [self.pools[0].submit(_warm_in_child, target) for _ in range(first)]
        self.size, self._to_fork, self.ahead_target = first, total - first, target
        cache_key_warm.start()  # this process compiles nothing before its first batch's submission needs the key
        return True

    def _claim_warm_ups(self) -> None:
        """The first batch counts the warm-up of children forked ahead once, as the wall seconds the slowest
        one took (a hand list pays it in its first compile): :attr:`warm_s`.  One still running is waited for
        (at most :data:`LAUNCHER_WAIT_S`; a child compiles nothing before it anyway): :attr:`warm_wait_s`."""
        t0 = time.perf_counter()
        done = []
        for fut in self.warm_futures:
            try:
                done.append(fut.result(timeout=max(0.0, t0 + LAUNCHER_WAIT_S - time.perf_counter())))
            except Exception:  # failed, died or slow: the compiles say so themselves
                pass
        self.warm_wait_s += time.perf_counter() - t0
        for seconds, start, end in done:
            _timeline.add("warm_up", "ahead, in a child", start, end)
        self.warm_s += max((end - start for _, start, end in done), default=0.0)
        self.warm_futures = []

    def _start(self, specs: Dict[Hashable, CompileSpec]) -> None:
        if self.pools:  # forked ahead: the children warmed their own compilers (fork_ahead)
            self._claim_warm_ups()
            spec = next(iter(specs.values()))
            if id(spec.fn) in _KERNELS.get(self.id, {}) and prepare_launcher_build(spec):
                self.launcher = self.pools[0].submit(_launcher_in_child, self.id, id(spec.fn), spec.signature,
                                                     spec.constexprs, spec.attrs, spec.options, spec.target)
            return
        for target in {repr(s.target): s.target for s in specs.values()}.values():
            t0 = time.perf_counter()
            self.warm_s += warm_compiler(target) or 0.0
            self.warm_wait_s += time.perf_counter() - t0
        _KERNELS[self.id] = {id(s.fn): s.fn for s in specs.values()}
        n = self.workers or children_for(max(16, len(specs)))  # room for larger later batches
        spec = next(iter(specs.values()))
        launcher = prepare_launcher_build(spec)  # one more child builds it (launcher_prebuild)
        first = min(n, len({s.identity() for s in specs.values()}) + int(launcher))
        self._fork(first)
        self.size, self._to_fork = first, n - first
        if launcher:
            self.launcher = self.pools[0].submit(_launcher_in_child, self.id, id(spec.fn), spec.signature,
                                                 spec.constexprs, spec.attrs, spec.options, spec.target)

    def await_launcher(self) -> None:
        """Wait for the child building the kernel's launcher (:attr:`launcher`), at most
        :data:`LAUNCHER_WAIT_S`; once: a build that failed or hung leaves the launch to build its own, and
        holds up no later wait."""
        launcher, self.launcher = self.launcher, None
        if launcher is None:
            return
        t0 = time.perf_counter()
        try:
            launcher.result(timeout=LAUNCHER_WAIT_S)
        except Exception:  # failed, died or slow: the launch builds it
            pass
        _timeline.add("launcher", "await the child's launcher build", t0, time.perf_counter())

    def _least_loaded(self) -> int:
        """The pool for the next compile: the most idle children, else the shortest queue per child."""
        for flight in self._in_flight:
            flight[:] = [f for f in flight if not f.done()]
        load = [len(flight) for flight in self._in_flight]
        return min(range(len(self.pools)), key=lambda j: (load[j] - self._sizes[j], load[j] / self._sizes[j], j))

    def submit(self, specs: Dict[Hashable, CompileSpec]) -> Dict[Hashable, Future]:
        """Start compiling ``specs`` in the children; a future per key the children can compile."""
        self.handed_at, self.fork_rest_s = None, 0.0
        if not specs or self.broken:
            return {}
        futures: Dict[Hashable, Future] = {}
        with warnings.catch_warnings():
            # Python 3.12+ warns on fork in a threaded process; the children only compile.
            warnings.simplefilter("ignore", DeprecationWarning)
            try:
                if not self.pools or self.warm_futures:
                    self._start(specs)
                futures = self._hand_over(specs)
            except Exception:  # the pool could not start or broke (fork refused, a child died)
                self.broken = True
            self.handed_at = time.perf_counter()
            if self._to_fork and not self.broken:
                n, self._to_fork = self._to_fork, 0
                try:
                    self._fork(n)
                    self.size += n
                    if self.ahead_target is not None:  # forked from a cold compiler: each warms its own meanwhile
                        for _ in range(n):
                            self.pools[-1].submit(_warm_in_child, self.ahead_target)
                except Exception:  # the first batch's children still serve the search
                    pass
                self.fork_rest_s = time.perf_counter() - self.handed_at
        return futures

    def _hand_over(self, specs: Dict[Hashable, CompileSpec]) -> Dict[Hashable, Future]:
        known = _KERNELS[self.id]
        futures: Dict[Hashable, Future] = {}
        first_key: Dict[str, Hashable] = {}
        for k, spec in specs.items():
            if id(spec.fn) not in known:  # a kernel the children never saw: the threads compile it
                continue
            twin = first_key.setdefault(spec.identity(), k)
            if twin != k:
                futures[k] = futures[twin]
                continue
            j = self._least_loaded()
            fut = self.pools[j].submit(_compile_in_child, self.id, id(spec.fn), spec.signature,
                                       spec.constexprs, spec.attrs, spec.options, spec.target)
            self._in_flight[j].append(fut)
            self.dispatched[j] += 1
            futures[k] = fut
        return futures

    def __enter__(self) -> "CompileSession":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def abandon(self) -> None:
        """Stop every child at once, compiling or not (the search's deadline came: nothing they compile is
        awaited); later batches of the session compile on the threads."""
        children = [p for pool in self.pools for p in (getattr(pool, "_processes", None) or {}).values()]
        held = [f for flight in self._in_flight for f in flight]
        for pool in self.pools:
            pool.shutdown(wait=False, cancel_futures=True)
        for proc in children:
            if proc.is_alive():
                proc.terminate()
        settle_later(held, "compile abandoned: the search's deadline stopped the compile children")
        self.broken = True
        _KERNELS.pop(self.id, None)
        self.pools, self._in_flight, self._sizes, self.dispatched = [], [], [], []
        self.launcher = None
        self._let_heap_go()

    def _let_heap_go(self) -> None:
        if self.holds_heap:
            self.holds_heap = False
            _release_heap()

    def close(self) -> None:
        """Stop the children (a child still compiling, or hung, is terminated).  After a session forked
        ahead, this process warms its own compiler in a background thread (:func:`warm_after`)."""
        if self.ahead_target is not None:
            target, self.ahead_target = self.ahead_target, None
            warm_after(target)
        if not self.pools:
            self._let_heap_go()
            return
        children = [p for pool in self.pools for p in (getattr(pool, "_processes", None) or {}).values()]
        for pool in self.pools:  # shutdown forgets the children, so they were listed first
            pool.shutdown(wait=False, cancel_futures=True)
        deadline = time.perf_counter() + 1.0  # idle children exit at once; one still compiling is stopped
        for proc in children:
            proc.join(timeout=max(0.0, deadline - time.perf_counter()))
            if proc.is_alive():
                proc.terminate()
        _KERNELS.pop(self.id, None)
        self.pools, self._in_flight, self._sizes, self.dispatched = [], [], [], []
        self.launcher = None
        self._let_heap_go()


class ProcessCompiles:
    """One batch's compiles in a :class:`CompileSession`'s children; a context manager.

    Without a session it starts one for this batch alone.  :meth:`wait`
    gives a finished child compile's ``(cpu seconds, hash)``, or None when
    the candidate should be compiled by the caller (no spec, or the child
    failed, died or took longer than :data:`WAIT_S`).
    """

    def __init__(self, specs: Dict[Hashable, CompileSpec], session: Optional[CompileSession] = None,
                 workers: Optional[int] = None) -> None:
        self.specs = specs
        self.own = session is None
        self.session = CompileSession(workers) if session is None else session
        self.futures: Dict[Hashable, Future] = {}
        self.submitted_at: Optional[float] = None  # when the children had the batch (after the forks it waited for)
        self.last_done_at: Optional[float] = None
        self.finished = 0  # child compiles of this batch done so far
        self._seen: Dict[Future, float] = {}  # when this process saw each child compile done

    def _done(self, fut: Future) -> None:
        self.last_done_at = time.perf_counter()
        self._seen[fut] = self.last_done_at
        self.finished += 1

    def spans_s(self) -> Dict[str, float]:
        """Where the batch's finished child compiles spent their wall time, in seconds: ``dispatch`` (submit
        to the last child's start), ``compile`` (the longest compile) and ``return`` (the longest wait from a
        child's end until this process saw it done).  Empty before any finished."""
        spans = [(res[3], res[4], self._seen.get(fut)) for fut, res in self._finished().items()]
        if not spans or self.submitted_at is None:
            return {}
        out = {"dispatch": max(0.0, max(s for s, _, _ in spans) - self.submitted_at),
               "compile": max(e - s for s, e, _ in spans)}
        seen = [d - e for _, e, d in spans if d is not None]
        if seen:
            out["return"] = max(0.0, max(seen))
        return out

    def slowest(self) -> Optional[Tuple[Hashable, float]]:
        """``(job, seconds)`` of the child compile of this batch that took longest (finished, without an
        error), or None."""
        finished = self._finished()
        best: Optional[Tuple[Hashable, float]] = None
        for k, fut in self.futures.items():
            if fut not in finished:
                continue
            _, _, error, start, end = finished[fut][:5]
            if error is None and (best is None or end - start > best[1]):
                best = (k, end - start)
        return best

    def _finished(self) -> Dict[Future, Tuple[float, Optional[str], Optional[str], float, float, Optional[str]]]:
        """Each finished child compile of this batch (jobs of one compile share it): its result."""
        out = {}
        for fut in set(self.futures.values()):
            try:
                out[fut] = fut.result(timeout=0)
            except Exception:  # not done, a dead child or a cancelled compile
                continue
        return out

    def busy(self) -> bool:
        """True while a child still compiles one of this batch's candidates."""
        return any(not f.done() for f in set(self.futures.values()))

    def wall_s(self) -> Optional[float]:
        """Seconds from handing the batch to the children to the last compile's end (None before then).

        Not counted: what a session's first batch spends before its children
        exist (the compiler's warm-up and the forks, once a session): a
        later batch's compiles never wait for them, and a price per wave of
        compiles taken from the first batch must not include them."""
        if self.submitted_at is None or self.last_done_at is None:
            return None
        return self.last_done_at - self.submitted_at

    def typical_wall_s(self) -> Optional[float]:
        """Seconds from handing the batch to the children until half of its compiles had ended (the
        median end; None before any ended).  What a wave of compiles like these takes: the last end
        (:meth:`wall_s`) is one config's, and a config that compiles for seconds (batched_matmul's
        128x256x32 tile with 6 stages: 1.38 s against 0.3-0.6 s for the rest of its first batch) is one the
        descent's moves around the best measured configs seldom reach."""
        ends = sorted(res[4] for res in self._finished().values())
        if self.submitted_at is None or not ends:
            return None
        return max(0.0, ends[(len(ends) - 1) // 2] - self.submitted_at)

    def __enter__(self) -> "ProcessCompiles":
        self.futures = self.session.submit(self.specs)
        self.submitted_at = self.session.handed_at or time.perf_counter()
        for fut in set(self.futures.values()):
            fut.add_done_callback(self._done)
        return self

    def wait(self, k: Hashable, timeout: float = WAIT_S) -> Optional[Tuple[float, str]]:
        """``(cpu seconds, kernel hash)`` of job ``k`` compiled in a child, or None (compile it yourself)."""
        fut = self.futures.get(k)
        if fut is None:
            return None
        try:
            cpu_s, digest, error = fut.result(timeout=timeout)[:3]
        except Exception:  # timed out, or the child died (BrokenProcessPool)
            return None
        if error is not None or digest is None:
            return None
        return cpu_s, digest

    def refusal(self, k: Hashable, timeout: float = WAIT_S) -> Optional[str]:
        """Triton's message when job ``k``'s child found that Triton's front end refuses it (waits for the
        child like :meth:`wait`); None otherwise (compiled, failed in the backend, no child, died, slow)."""
        fut = self.futures.get(k)
        if fut is None:
            return None
        try:
            result = fut.result(timeout=timeout)
        except Exception:  # timed out, or the child died
            return None
        return result[5] if len(result) > 5 else None

    def __exit__(self, *exc: Any) -> None:
        if self.own:
            self.session.close()
