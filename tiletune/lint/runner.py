"""Linting many files: walk the paths, lint the files in worker processes and
hand each file's diagnostics back as soon as it is done.

:func:`iter_lint_paths` streams ``(path, diagnostics)`` pairs in file order,
each as soon as that file and the ones before it are done (the CLI prints
them at once and advances its progress bar); :func:`lint_paths` collects them.
"""

from __future__ import annotations

import gc
import os
from typing import Any, Iterable, Iterator, Optional, Sequence

from .diagnostic import Diagnostic
from .registry import ANALYSIS_FAILED, UsageError, _load_rules, analysis_failed, lint_file, select_codes

__all__ = ["iter_python_files", "iter_lint_paths", "lint_paths", "default_jobs"]

_SKIP_DIRS = {"__pycache__", "node_modules", "build", "dist", "site-packages"}


def iter_python_files(paths: Iterable[str]) -> Iterator[str]:
    """Each ``*.py`` file under ``paths`` (files given explicitly are kept
    whatever their suffix), sorted, skipping hidden and build directories.

    Raises :class:`UsageError` for a path that does not exist.  A dangling
    symlink (an editor's lock file) is kept: linting it reports it as a TT000
    finding, and the other files are linted all the same.
    """
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS)
                for name in sorted(files):
                    if name.endswith(".py"):
                        yield os.path.join(root, name)
        elif os.path.lexists(p):  # a file, a FIFO, a device, a dangling link: the reader says what it is
            yield p
        else:
            raise UsageError(f"{p}: no such file or directory")


def default_jobs(jobs: Optional[int], n_files: int) -> int:
    """Worker processes for ``n_files`` files: ``jobs``, else ``TILETUNE_LINT_JOBS``,
    else the CPU count; one process (no workers) for fewer than 8 files."""
    if jobs is None:
        from ..runtime.env import env_int

        jobs = env_int("TILETUNE_LINT_JOBS", None, minimum=1) or (os.cpu_count() or 1)
    # A worker costs an interpreter's start; only worth it for many files.
    return max(1, min(jobs, n_files // 8 or 1))


def _options(kwargs: dict[str, Any]) -> dict[str, Any]:
    kwargs = dict(kwargs)
    select, ignore = kwargs.pop("select", None), kwargs.pop("ignore", None)
    if kwargs.get("codes") is None:
        kwargs["codes"] = select_codes(select, ignore)
    return kwargs


def iter_lint_paths(paths: Sequence[str], jobs: Optional[int] = None, cache: bool = False,
                    **kwargs: Any) -> Iterator[tuple[str, list[Diagnostic]]]:
    """Lint every Python file under ``paths`` (options as for
    :func:`~tiletune.lint.registry.lint_source`) in ``jobs`` processes, and
    yield ``(file, diagnostics)`` for each file (clean files too) in file
    order, each as soon as it and the files before it are done.

    ``cache=True`` reads unchanged files' results back from the per-file
    result cache (:mod:`.result_cache`) and stores the others' there."""
    kwargs = _options(kwargs)
    files = list(iter_python_files(paths))
    store = None
    if cache:
        from .result_cache import LintCache

        store = LintCache({k: v for k, v in kwargs.items() if k != "project"})
    keys = {f: store.key(f) for f in files} if store is not None else {}
    hits = {f: d for f in files for d in [store.get(keys[f], f) if store is not None else None] if d is not None}
    todo = [f for f in files if f not in hits]
    jobs = default_jobs(jobs, len(todo))
    fresh = (_lint_one((f, kwargs)) for f in todo) if jobs <= 1 else _lint_parallel(todo, jobs, kwargs)
    for f in files:
        if f in hits:
            yield f, hits[f]
            continue
        path, diags = next(fresh)
        if store is not None and not any(d.code == ANALYSIS_FAILED for d in diags):
            store.put(keys[path], diags)
        yield path, diags


def lint_paths(paths: Sequence[str], jobs: Optional[int] = None, **kwargs: Any) -> list[Diagnostic]:
    """Every diagnostic of the files under ``paths``, in file order (see :func:`iter_lint_paths`)."""
    results = dict(iter_lint_paths(paths, jobs, **kwargs))
    return [d for f in iter_python_files(paths) for d in results.get(f, [])]


def _lint_one(args: tuple) -> tuple[str, list[Diagnostic]]:
    path, kwargs = args
    try:
        return path, lint_file(path, **kwargs)
    except Exception as exc:  # noqa: BLE001 - one file must not cost the others their findings
        codes = kwargs.get("codes")
        if codes is not None and ANALYSIS_FAILED not in codes:
            return path, []
        try:
            return path, [analysis_failed(path, exc)]
        except Exception:  # noqa: BLE001 - an exception whose str() fails (libcst's recursion KeyError)
            return path, [analysis_failed(path, RuntimeError(type(exc).__name__))]


def _lint_parallel(files: list[str], jobs: int, kwargs: dict) -> Iterator[tuple[str, list[Diagnostic]]]:
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    # Workers inherit the imported analysis with "fork" (no re-import);
    # elsewhere they start fresh.
    methods = mp.get_all_start_methods()
    ctx = mp.get_context("fork" if "fork" in methods else None)
    if "fork" in methods:
        import tiletune.analysis  # noqa: F401  (warm the parent before forking)

        _load_rules()
        # The imported modules' objects go to the collector's permanent generation: the workers'
        # collections between files then never walk them (nor write to their pages, shared with
        # the parent until written).
        gc.freeze()
    # Files go to the workers in file order and come back in file order, each
    # as soon as it and the files before it are done: the output streams and is
    # the same for any number of jobs.
    try:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
            futures = [pool.submit(_lint_one, (f, kwargs)) for f in files]
            for fut in futures:
                yield fut.result()
    finally:
        if "fork" in methods:
            gc.unfreeze()
