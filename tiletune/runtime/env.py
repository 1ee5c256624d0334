"""Boolean environment switches, read the same way everywhere.

A switch is on when set to 1/true/yes/on and off when set to 0/false/no/off
(any case, surrounding spaces ignored); unset or anything else is neither.
"""

from __future__ import annotations

import os

__all__ = ["TRUE_WORDS", "FALSE_WORDS", "env_word", "env_on", "env_off"]

TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off"})


def env_word(name: str) -> str:
    """The variable's value, stripped and lower-cased ('' when unset)."""
    return os.environ.get(name, "").strip().lower()


def env_on(*names: str) -> bool:
    """True when any of ``names`` is set to a true word."""
    return any(env_word(n) in TRUE_WORDS for n in names)


def env_off(*names: str) -> bool:
    """True when any of ``names`` is set to a false word."""
    return any(env_word(n) in FALSE_WORDS for n in names)
