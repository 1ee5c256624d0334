"""The one decision path every tuner takes for one key.

``tiletune.autotune`` (kernels), :func:`tiletune.tune.autotune` (functions)
and :func:`tiletune.contextual_autotune` decide a key the same way, in these
stages, each written once here:

1. **always-tune**: ``TILETUNE_ALWAYS_TUNE=1`` (or Triton-distributed's name)
   skips the disk cache;
2. **cache lookup**: :meth:`TuningCache.get_with_status` for the key;
3. **validation**: :func:`validate_cached` (a cached entry that does not
   describe a usable config is re-tuned, with a note);
4. **version policy**: an entry tuned under other versions is re-tuned, or
   refused in strict mode (:func:`~tiletune.runtime.cache.check_version_policy`);
5. **match**: the tuner maps the entry onto its own candidates (a winner no
   longer in the space is re-tuned);
6. **rank agreement**: with a process group, one exchange decides between
   reusing rank 0's entry and tuning on every rank
   (:func:`~tiletune.runtime.distributed.agree_on_cached`);
7. **tune** (the tuner's own measuring), then **store** the winner and
   **log** the outcome (:func:`store`, :func:`log`).

:func:`decide` runs 1-7a for all three tuners (the kernel tuner's
``Autotuner._tune``, ``FunctionTuner._resolve``, the contextual tuner's
first launch of each kernel and key); :func:`lookup` (1-5) and :func:`agree`
(6) are its parts.  The contextual tuner tunes across runs of its function,
so it passes no ``tune`` and stores its winners with :func:`store` on the
same :class:`Decision` when it settles.
"""

from __future__ import annotations

import contextlib
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, Mapping, Optional, Sequence, Tuple

from . import distributed as _dd

__all__ = ["Decision", "Decided", "lookup", "agree", "decide", "store", "log", "validate_cached",
           "protect_side_effects", "first_cached_launch"]


def _quiet(message: str) -> None:
    return None


@dataclass
class Decision:
    """What one key's decision works with.

    ``what`` names the tuned object in messages (``"kernel 'matmul'"``);
    ``cache`` is its :class:`~tiletune.runtime.cache.TuningCache` (None: no
    disk cache, ``cache_results=False``); ``key`` the entry key
    (:func:`~tiletune.runtime.cache.entry_key`); ``problem`` what every rank
    of ``pg`` must agree on (key and candidate space); ``note`` receives the
    facts worth logging (a stale entry, always-tune, a mismatch).
    """

    what: str
    cache: Any
    key: str
    problem: Any = None
    pg: Any = None
    note: Callable[[str], None] = field(default=_quiet)
    check: Optional[Callable[[Mapping[str, Any]], Sequence[str]]] = None  # the tuner's own entry checks
    skip_cache: bool = False  # re-tune whatever the cache holds (its entry failed at launch)


@dataclass
class Decided:
    """The outcome of :func:`decide`: the tuner's ``choice``, ``"cache hit"`` or ``"tuned"``, and facts."""

    choice: Any
    status: str
    extra: Dict[str, Any] = field(default_factory=dict)


def validate_cached(entry: Mapping[str, Any], what: str,
                    check: Optional[Callable[[Mapping[str, Any]], Sequence[str]]] = None) -> Optional[str]:
    """Why a cached ``entry`` must not be used (None: usable).

    Stage 3 of the decision path; the one call site for cache-entry
    validation.  The entry must hold a ``config`` mapping; ``check(entry)``
    (the tuner's own, e.g. :func:`~tiletune.runtime.cache_validate.kernel_entry_problems`:
    names, integers, powers of two, the target's limits) lists what else is
    wrong.  A check that itself fails counts as a reason (never a crash).
    """
    config = entry.get("config") if isinstance(entry, Mapping) else None
    if not isinstance(config, Mapping):
        return "the entry has no config object"
    if check is None:
        return None
    try:
        problems = list(check(entry))
    except Exception as exc:  # noqa: BLE001 - an entry that cannot be checked is not used
        problems = [f"it could not be checked ({type(exc).__name__}: {exc})"]
    return "; ".join(problems) or None


@contextlib.contextmanager
def protect_side_effects(what: str, arguments: Optional[Mapping[str, Any]] = None,
                         protection: Any = None) -> Iterator[None]:
    """Context around the tuning of one key: the one call site for side-effect protection.

    ``protection`` (a :class:`~tiletune.runtime.protect.Protection`, taken
    before anything runs) is restored on the way out, so the tensors a
    kernel writes into come out of tuning as they went in and the real
    launch that follows leaves them as one untuned launch would.
    """
    try:
        yield
    finally:
        if protection:
            protection.restore()


def lookup(d: Decision, match: Callable[[Mapping[str, Any]], Any]) -> Tuple[Any, Optional[str]]:
    """Stages 1-5 for this process: ``(choice or None, strict-mode refusal text or None)``.

    ``match(entry)`` returns the tuner's choice for a cached entry (a config,
    an index, its JSON) or None when the entry does not fit the current
    candidates.  Never raises for a stale entry: the refusal is returned so
    every rank of a group can raise it together (:func:`agree`).
    """
    if d.cache is None:
        return None, None
    from .cache import StaleCacheEntryError, always_tune, check_version_policy

    if always_tune():
        d.note("TILETUNE_ALWAYS_TUNE is set: re-tuning despite the cache")
        return None, None
    if d.skip_cache:
        d.note(f"the cached config in {d.cache.path} failed at launch; re-tuning")
        return None, None
    entry, status = d.cache.get_with_status(d.key)
    if status == "miss" or entry is None:
        return None, None
    if status == "stale":
        try:
            check_version_policy(status, entry, d.cache.path)
        except StaleCacheEntryError as exc:
            return None, str(exc)
        d.note(f"cache entry in {d.cache.path} was tuned under other versions; re-tuning")
        return None, None
    why = validate_cached(entry, d.what, d.check)
    if why is not None:
        from .cache_validate import warn_bad_entry

        warn_bad_entry(d.cache.path, d.key, d.what, [why])
        d.note(f"cache entry in {d.cache.path} is not usable ({why}); re-tuning")
        return None, None
    choice = match(entry)
    if choice is None:
        d.note(f"cache entry in {d.cache.path} does not fit the current candidates; re-tuning")
    return choice, None


def agree(d: Decision, choice: Any, refused: Optional[str]) -> Any:
    """Stage 6: the cached choice every rank of ``d.pg`` uses, or None when all must tune.

    Without an active group this is this process's lookup (a refusal raises
    :class:`~tiletune.runtime.cache.StaleCacheEntryError`).
    """
    return _dd.agree_on_cached(choice, d.pg, problem=d.problem, refused=refused, what=d.what)


def store(d: Decision, entry: Mapping[str, Any]) -> None:
    """Stage 7a: put the winner's ``entry`` in the disk cache (warns, never raises, on failure)."""
    if d.cache is None:
        return
    try:
        d.cache.put(d.key, entry)
    except Exception as exc:  # never fail a launch over the cache
        warnings.warn(f"tiletune: {d.what}: could not cache the winner ({exc})")


def log(name: str, source_hash: str, record: Mapping[str, Any], directory: Optional[Path] = None) -> Optional[Path]:
    """Stage 7b: append one tuning's ``record`` to the tuning log; None when it could not be written."""
    try:
        from .tuning_log import append_tuning_log

        return append_tuning_log(name, source_hash, record, directory=directory)
    except Exception:  # the log is a convenience; never fail a launch over it
        return None


def first_cached_launch(what: str, where: Any, key: Any, config: Any, launch: Callable[[], Any],
                        retune: Callable[[], Any]) -> Any:
    """The first launch of a cached choice: ``launch()``, or, when it raises, one re-tune.

    A cached config can pass every check and still fail when launched (a
    compiler or driver change, a value no check models).  Then the user's
    call must not fail: a :class:`~tiletune.errors.TiletuneCacheWarning` names
    the config, the file, the key and the error, and ``retune()`` (which
    tunes the key again without the cache, stores the new winner and
    launches it) answers the call; an error of that launch is the user's.
    """
    try:
        return launch()
    except Exception as exc:  # noqa: BLE001 - any launch failure of a cached config is re-tuned once
        from tiletune.errors import TiletuneCacheWarning

        warnings.warn(
            f"tiletune: {what}: the cached config [{config}] in {where} under key {key} failed at launch "
            f"({type(exc).__name__}: {str(exc)[:300]}); re-tuning this key once and replacing the entry",
            TiletuneCacheWarning,
            stacklevel=4,
        )
    return retune()


def decide(d: Decision, match: Callable[[Mapping[str, Any]], Any],
           tune: Optional[Callable[[], Tuple[Any, Optional[Mapping[str, Any]], Dict[str, Any]]]],
           *, failed: Optional[BaseException] = None) -> Decided:
    """Stages 1-7a for one key, the same for the kernel, function and contextual tuners: a cached choice
    (agreed over ``d.pg``), or ``tune()``'s, stored.

    ``tune()`` returns ``(choice, cache entry or None, extra facts)``; the
    entry is stored when the decision has a cache.  ``tune=None``: the caller
    tunes later and stores its winner with :func:`store` on the same
    decision (the contextual tuner, which tunes across runs of its function):
    a miss returns ``Decided(None, "to tune")``.  ``failed``: this rank could
    not prepare the key (its candidate list); the lookup is skipped but the
    agreement still runs, so no rank of the group waits for it, and then
    every rank raises (this one ``failed``, the others the agreement's
    TuningError).  Logging is left to the caller (:func:`log`), which knows
    its record's shape.
    """
    from tiletune.errors import TuningError

    choice, refused = (None, None) if failed is not None else lookup(d, match)
    agreed = d if failed is None else replace(d, problem=[d.problem, f"{type(failed).__name__}: {failed}"])
    try:
        cached = agree(agreed, choice, refused)
    except TuningError:
        if failed is not None:
            raise failed
        raise
    if failed is not None:
        raise failed
    if cached is not None:
        return Decided(cached, "cache hit")
    if tune is None:
        return Decided(None, "to tune")
    choice, entry, extra = tune()
    if entry is not None:
        store(d, entry)
    return Decided(choice, "tuned", dict(extra or {}))
