"""Compile every candidate before benchmarking, in parallel.

Compiling one matmul config takes about a second; a search compiles dozens,
so the autotuner compiles them all up front and benchmarks afterwards.  The
thread pool alone runs compiles nearly one at a time (Triton's compiler holds
the GIL for much of a compile), so each candidate is first compiled in a
forked child process (:mod:`~tiletune.runtime.compile_workers`) and the
pool's compile reads the result back from Triton's disk cache.  Where Triton has ``AsyncCompileMode`` (3.5+), each
candidate's ``fn.run(..., warmup=True)`` is submitted to it; elsewhere the
warmups themselves run on the pool.

:func:`compiling` overlaps compiling with benchmarking: every job is
submitted at once, and the caller times candidate ``i`` (after
:meth:`CompileQueue.wait` for it) while ``i+1..`` still compile.  Compiled
binaries live in the kernel's own Triton cache, so a config met again for
another key of the same kernel (same specialisation) is not compiled again.

Turned off by ``TRITON_AUTOTUNE_PARALLEL_COMPILE=0`` or
``TILETUNE_PARALLEL_COMPILE=0`` (candidates then compile on their first
benchmarked launch).  Under ``TRITON_INTERPRET=1`` there is nothing to
compile and :func:`compile_all` returns at once.
"""

from __future__ import annotations

import contextlib
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Dict, Hashable, Iterator, List, Optional, Tuple

from . import cache_key_warm
from . import timeline as _timeline
from .bench import interpreting
from .compile_facts import describe_error, max_workers  # noqa: F401 - part of this module's API
from .compile_workers import (CompileSession, FrontEndRefusal, ProcessCompiles, capture_specs, children_for,
                              processes_enabled)
from .env import env_off
from .quiet import quiet_threads

__all__ = ["parallel_enabled", "front_end_in_children", "max_workers", "compile_all", "compiling", "CompileQueue", "describe_error"]


def parallel_enabled() -> bool:
    """False when ``TRITON_AUTOTUNE_PARALLEL_COMPILE`` or ``TILETUNE_PARALLEL_COMPILE`` is 0/false."""
    return not env_off("TILETUNE_PARALLEL_COMPILE", "TRITON_AUTOTUNE_PARALLEL_COMPILE")


def front_end_in_children() -> bool:
    """True where every batch of a tune compiles in compile children, each of which runs Triton's front end
    first and reports a refusal (:class:`~tiletune.runtime.compile_workers.FrontEndRefusal`) before any
    backend work: not under the interpreter, parallel compiles and compile processes on for batches of one,
    Triton's ``AsyncCompileMode`` present (:func:`compiling` forks children only with it)."""
    if interpreting() or not parallel_enabled() or not processes_enabled(1):
        return False
    try:
        from triton.runtime._async_compile import AsyncCompileMode  # noqa: F401
    except ImportError:  # Triton < 3.5: compile_all on threads, no children
        return False
    return True


def compile_all(
    jobs: Dict[Hashable, Callable[[], Any]],
    *,
    parallel: Optional[bool] = None,
) -> Tuple[Dict[Hashable, str], float]:
    """Run each ``jobs[k]()`` (a ``fn.run(..., warmup=True)`` call) and collect failures.

    Returns ``({k: reason}, seconds)`` for the jobs that raised.  Nothing
    runs under the interpreter or when parallel compilation is off (the
    benchmark then compiles each candidate on its first launch, and reports
    failures there).
    """
    if interpreting() or not jobs:
        return {}, 0.0
    if parallel is None:
        parallel = parallel_enabled()
    if not parallel:
        return {}, 0.0
    t0 = time.perf_counter()
    failures: Dict[Hashable, str] = {}
    workers = max_workers(len(jobs))
    try:
        from triton.runtime._async_compile import AsyncCompileMode
    except ImportError:  # Triton < 3.5: run the warmups themselves on the pool
        AsyncCompileMode = None  # type: ignore[assignment]

    with quiet_threads(), ThreadPoolExecutor(max_workers=workers, thread_name_prefix="tiletune-compile") as pool:
        if AsyncCompileMode is not None:
            submitted: Dict[Hashable, Any] = {}
            with AsyncCompileMode(pool, ignore_errors=True):
                for k, job in jobs.items():
                    try:
                        submitted[k] = job()
                    except Exception as exc:  # binding / front-end errors raised at submission
                        failures[k] = describe_error(exc)
            for k, kernel in submitted.items():
                fut = getattr(kernel, "future", None)
                if fut is not None:
                    exc = fut.exception()
                    if exc is not None:
                        failures[k] = describe_error(exc)
        else:
            futures = {k: pool.submit(job) for k, job in jobs.items()}
            for k, fut in futures.items():
                exc = fut.exception()
                if exc is not None:
                    failures[k] = describe_error(exc)
    return failures, time.perf_counter() - t0


def _children_cpu_s() -> float:
    """CPU seconds of this process' finished child processes (``ptxas`` runs as one per compile)."""
    try:
        import resource
    except ImportError:  # not on POSIX
        return 0.0
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


class _TimedPool(ThreadPoolExecutor):
    """A thread pool that records what each compile job cost, into its queue.

    CPU time, not wall time: compiles running side by side wait for the GIL
    and the cores, and a compile's wall time in a busy pool says little of
    what it costs alone.  A job submitted while :attr:`child` is set first
    waits for that candidate's compile in a child process
    (:class:`~tiletune.runtime.compile_workers.ProcessCompiles`); when the
    thread's compile then returns the child's kernel (same hash, read back
    from Triton's cache), the child's CPU seconds are what the compile cost.
    """

    def __init__(self, queue: "CompileQueue", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.queue = queue
        self.child: Optional[Callable[[], Optional[Tuple[float, str]]]] = None

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[override]
        child, queue = self.child, self.queue

        def timed():
            from_child = child() if child is not None else None  # raises FrontEndRefusal: nothing to compile
            if queue.abandoned:  # the search stopped waiting for this batch: compile nothing more
                raise RuntimeError("compile abandoned: the tuning search's deadline came first")
            queue.in_process(+1)
            t0, wall0 = time.thread_time(), time.perf_counter()
            kernel = None
            try:
                kernel = fn(*args, **kwargs)
                return kernel
            finally:
                _timeline.add("load", "in this process" if from_child is not None else "compile in a thread", wall0,
                              time.perf_counter())
                if from_child is not None and getattr(kernel, "hash", None) == from_child[1]:
                    queue.child_durations.append(from_child[0])
                else:
                    queue.durations.append(time.thread_time() - t0)
                queue.in_process(-1)

        return super().submit(timed)

    def __exit__(self, *exc: Any) -> bool:
        self.shutdown(wait=not self.queue.abandoned, cancel_futures=self.queue.abandoned)
        return False


class CompileQueue:
    """Compiles submitted by :func:`compiling`; :meth:`wait` blocks for one of them.

    ``durations`` holds each finished compile's CPU seconds on its worker
    thread (:meth:`compile_seconds` prices one compile from them for the
    search's time budget).
    """

    def __init__(self) -> None:
        self.futures: Dict[Hashable, Any] = {}
        self.failures: Dict[Hashable, str] = {}
        self.refused: Dict[Hashable, str] = {}  # jobs Triton's front end refused (a compile child said so)
        self.durations: List[float] = []  # compiled on a pool thread: its CPU seconds
        self.child_durations: List[float] = []  # compiled in a child process: the child's CPU seconds
        self._children_at_start = _children_cpu_s()
        self._lock = threading.Lock()
        self._running = 0  # compile work running in this process now (on a pool thread)
        self._started = 0  # ... and how many times it started
        # wall seconds: capturing specs, warming this process' compiler (once a process), starting the children
        self.stage_s: Dict[str, float] = {}
        self.children: Any = None  # the ProcessCompiles of this queue, if any
        self.abandoned = False  # the search's deadline came: nothing left here is awaited (:meth:`abandon`)
        self.pool: Any = None  # the thread pool and Triton's async-compile mode of :func:`compiling`, if any
        self.mode: Any = None

    def abandon(self) -> None:
        """Stop waiting for this batch's compiles: queued ones are cancelled, child processes still compiling
        are terminated, and leaving :func:`compiling` awaits none of them (a compile already running on a
        pool thread finishes in the background; its kernel is never installed)."""
        self.abandoned = True
        if self.mode is not None:  # Triton's mode awaits every compile it started when it exits
            self.mode.raw_futures = [f for f in self.mode.raw_futures if f.done()]
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
        if self.children is not None:
            self.children.session.abandon()

    def in_process(self, step: int) -> None:
        """A pool thread starts (+1) or ends (-1) compile work in this process."""
        with self._lock:
            self._running += step
            self._started += max(0, step)

    def mark(self) -> Tuple[int, int, bool, int]:
        """Where compile work stands; pass it to :meth:`contended_since`."""
        children = self.children
        busy = bool(children is not None and children.busy())
        finished = children.finished if children is not None else 0
        with self._lock:
            return self._running, self._started, busy, finished

    def contended_since(self, mark: Tuple[int, int, bool, int]) -> bool:
        """True when compile work ran at any time since ``mark`` was taken: on this process's threads
        (they hold the GIL and a core) or in its child processes.

        Either makes a launch timed meanwhile fall behind the GPU.  The
        children were thought harmless (fewer than the cores), but on the
        H100 host a first-batch timing taken while they compiled read 2.1x
        the same config's quiet time (int8_gemv N=4096, K=11008: 0.064 ms
        against 0.030 ms), and none of this process's threads was working.
        """
        running, started, busy, finished = self.mark()
        return mark[0] > 0 or running > 0 or started != mark[1] or mark[2] or busy or finished != mark[3]

    def compile_seconds(self) -> Optional[float]:
        """What one compile costs alone, in seconds, or None when nothing was compiled.

        The median CPU seconds of a compile on its thread plus the mean CPU
        seconds of the child processes (``ptxas``) per compile.  Compiling
        matmul and int8_gemv for sm_90 on a 2-core CPU, this came within 15%
        of a compile's wall time when compiles ran one at a time, in a pool or
        not; the wall times taken in the pool on an H100 host were 1.5-3.5x
        what ``triton.autotune``'s one-at-a-time compiles implied.  Where
        child processes compiled, the median of their user CPU seconds (their
        ``ptxas`` included).  Ask once every compile finished.
        """
        if self.child_durations:  # each includes its own ptxas; the children's CPU also lands in ours when reaped
            ordered = sorted(self.child_durations)
            return ordered[len(ordered) // 2]
        if not self.durations:
            return None
        ordered = sorted(self.durations)
        children = max(0.0, _children_cpu_s() - self._children_at_start) / len(ordered)
        return ordered[len(ordered) // 2] + children

    def wait(self, k: Hashable, timeout: Optional[float] = None) -> Optional[str]:
        """Block until job ``k`` compiled (at most ``timeout`` seconds: then ``TimeoutError``); its failure
        reason, or None (also for jobs never submitted)."""
        if k in self.failures:
            return self.failures[k]
        fut = self.futures.get(k)
        if fut is None:
            return None
        exc = fut.exception(timeout=timeout)
        if isinstance(exc, FrontEndRefusal):
            self.refused[k] = str(exc)
        elif _front_end_error(exc):  # compiled on a thread (no child spec): Triton's front end refused it there
            from .triton_ir import refusal_text

            self.refused[k] = refusal_text(exc)
        if exc is not None:
            self.failures[k] = describe_error(exc)
            return self.failures[k]
        if self.children is not None:  # a launch now would build the launcher a child may be building
            self.children.session.await_launcher()
        return None


def _front_end_error(exc: Optional[BaseException]) -> bool:
    """True for the error Triton's front end raises (``CompilationError``: the code generator's, a
    ``tl.static_assert`` included); backend failures raise other types."""
    try:
        from triton.compiler.errors import CompilationError
    except ImportError:  # pragma: no cover - a Triton without it
        return False
    return isinstance(exc, CompilationError)


def _from_child(children: ProcessCompiles, k: Hashable) -> Optional[Tuple[float, str]]:
    """What job ``k``'s compile child gave (:meth:`ProcessCompiles.wait`); raises :class:`FrontEndRefusal`
    when Triton's front end refused it there: the thread then compiles nothing (its own front end would only
    refuse it again, holding the GIL), and the job fails with Triton's message."""
    got = children.wait(k)
    if got is None:
        refusal = children.refusal(k, timeout=0)
        if refusal is not None:
            raise FrontEndRefusal(refusal)
    return got


@contextlib.contextmanager
def compiling(jobs: Dict[Hashable, Callable[[], Any]], *, parallel: Optional[bool] = None,
              session: Optional[CompileSession] = None) -> Iterator[CompileQueue]:
    """Submit every ``jobs[k]()`` (a ``fn.run(..., warmup=True)``) to a thread pool and yield at once.

    Each job is first compiled in a child process of ``session`` (one
    tuning search's children, kept between its batches; without one, children
    started for this batch alone), and the pool's compile reads it back.

    Inside the block, launches of a job's config wait for its compile (Triton's
    ``AsyncCompileMode`` is active for this thread), so benchmarking candidate
    ``i`` overlaps the compiles of the others.  Nothing is submitted under the
    interpreter, with parallel compilation off, or inside another
    ``AsyncCompileMode`` (candidates then compile on their first launch).
    """
    queue = CompileQueue()
    if parallel is None:
        parallel = parallel_enabled()
    if interpreting() or not jobs or not parallel:
        yield queue
        return
    try:
        from triton.runtime._async_compile import AsyncCompileMode, active_mode
    except ImportError:  # Triton < 3.5: no overlap, compile up front
        failures, _ = compile_all(jobs, parallel=parallel)
        queue.failures.update(failures)
        yield queue
        return
    if active_mode.get() is not None:
        yield queue
        return
    t0 = time.perf_counter()
    specs = capture_specs(jobs) if processes_enabled(len(jobs)) else {}
    t1 = time.perf_counter()
    _timeline.add("capture", f"{len(specs)} compile spec(s)", t0, t1)
    warmed_before = session.warm_s if session is not None else 0.0
    waited_before = session.warm_wait_s if session is not None else 0.0
    with quiet_threads(), ProcessCompiles(specs, session, workers=children_for(len(jobs))) as children, \
            _TimedPool(queue, max_workers=max_workers(len(jobs)), thread_name_prefix="tiletune-compile") as pool:
        session = children.session
        warm, waited = session.warm_s - warmed_before, session.warm_wait_s - waited_before
        handed = session.handed_at if session.handed_at is not None else time.perf_counter()
        # warm_compiler: the warm-up's seconds (the time budget's set-up: a hand list pays it), warm_wait: what
        # this batch waited for it (less when it ran ahead, while the tune synthesised)
        queue.stage_s.update(capture=t1 - t0, warm_compiler=warm, warm_wait=waited,
                             start_children=max(0.0, handed - t1 - waited), fork_rest=session.fork_rest_s)
        queue.children, queue.pool = children, pool
        _timeline.add("hand_over", "to the compile children", t1, time.perf_counter())
        with AsyncCompileMode(pool, ignore_errors=True) as mode:
            queue.mode = mode
            with _timeline.span("submit", f"{len(jobs)} job(s)"):
                cache_key_warm.settled()  # the first submission needs Triton's digest: wait, never compute it twice
                for k, job in jobs.items():
                    pool.child = (lambda k=k: _from_child(children, k)) if k in specs else None
                    try:
                        kernel = job()
                    except Exception as exc:  # binding / front-end errors raised at submission
                        queue.failures[k] = describe_error(exc)
                        continue
                    finally:
                        pool.child = None
                    fut = getattr(kernel, "future", None)
                    if isinstance(fut, Future):
                        queue.futures[k] = fut
            yield queue
