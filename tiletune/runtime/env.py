"""Environment variables, read the same way everywhere.

A switch is on when set to 1/true/yes/on and off when set to 0/false/no/off
(any case, surrounding spaces ignored); unset or anything else is neither.
A ``TILETUNE_*`` switch set to anything else is a typo the user should hear
about: :func:`env_on`/:func:`env_off` warn once (``TiletuneWarning``) naming
the variable, the value and the words accepted, and go on with the default.
Numbers (:func:`env_int`) are read the same way: a value that is not an
integer in range is a warning and the default, never a traceback.
"""

from __future__ import annotations

import os
import warnings
from typing import Dict, FrozenSet, Optional, Set, Tuple

__all__ = ["TRUE_WORDS", "FALSE_WORDS", "EXTRA_WORDS", "env_word", "env_on", "env_off", "env_int", "warn_env"]

TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off"})
#: Words a switch accepts besides the true and false ones.
EXTRA_WORDS: Dict[str, FrozenSet[str]] = {"TILETUNE_VERSION_CHECK": frozenset({"strict"})}

_KNOWN = TRUE_WORDS | FALSE_WORDS
_warned: Set[Tuple[str, str]] = set()


def warn_env(name: str, value: str, expected: str, default: str) -> None:
    """Warn once per (variable, value) that ``name=value`` is not ``expected`` and ``default`` is used."""
    if (name, value) in _warned:
        return
    _warned.add((name, value))
    from tiletune.errors import TiletuneWarning

    warnings.warn(TiletuneWarning(f"tiletune: {name}={value!r} is not {expected}; using {default} "
                                  f"(fix or unset {name})"), stacklevel=3)


def env_word(name: str) -> str:
    """The variable's value, stripped and lower-cased ('' when unset)."""
    return os.environ.get(name, "").strip().lower()


def _checked_word(name: str) -> str:
    word = env_word(name)
    if word and word not in _KNOWN and name.startswith("TILETUNE_") and word not in EXTRA_WORDS.get(name, ()):
        accepted = sorted(TRUE_WORDS) + sorted(FALSE_WORDS) + sorted(EXTRA_WORDS.get(name, ()))
        warn_env(name, os.environ.get(name, ""), f"one of {', '.join(accepted)}", "the default")
    return word


def env_on(*names: str) -> bool:
    """True when any of ``names`` is set to a true word (a ``TILETUNE_*`` one set to junk warns)."""
    return any(_checked_word(n) in TRUE_WORDS for n in names)


def env_off(*names: str) -> bool:
    """True when any of ``names`` is set to a false word (a ``TILETUNE_*`` one set to junk warns)."""
    return any(_checked_word(n) in FALSE_WORDS for n in names)


def env_int(name: str, default: Optional[int], minimum: int = 1, maximum: Optional[int] = None) -> Optional[int]:
    """The integer value of ``name`` within ``[minimum, maximum]``; ``default`` when unset.

    Anything else (``abc``, ``-5``, ``1e3``, a number past ``maximum``) warns
    once, naming the variable and the range, and gives ``default``.
    """
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw, 10)
    except ValueError:
        value = None
    if value is None or value < minimum or (maximum is not None and value > maximum):
        upper = f" and <= {maximum}" if maximum is not None else ""
        what = "the default" if default is None else f"the default {default}"
        warn_env(name, raw, f"an integer >= {minimum}{upper}", what)
        return default
    return value
