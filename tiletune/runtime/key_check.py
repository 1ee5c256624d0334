"""Check what a ``key_fn`` returns before it becomes a tuning key.

A key must be finite and acyclic: a list that contains itself would recurse
for ever when hashed or written to JSON (a RecursionError deep inside the
tuner), and a NaN never equals itself, so a key holding one would miss the
in-memory cache on every call and re-tune each time.  :func:`check_key`
walks the value without recursion and raises a TypeError naming the tuned
function, where in the key the problem is, and what to return instead.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Mapping

__all__ = ["check_key", "MAX_KEY_DEPTH"]

#: Deeper keys than this are certainly a mistake (and would exhaust the stack when hashed).
MAX_KEY_DEPTH = 64


def check_key(value: Any, owner: str) -> None:
    """Raise TypeError if ``value`` (a key_fn result) is cyclic, holds a NaN or is nested absurdly deep.

    ``owner`` names the tuned function in the message.  Containers looked
    into: list, tuple, set, frozenset, dict (keys and values).
    """
    # (node, path, ids of the containers on the way down)
    stack = [(value, "key", frozenset())]
    while stack:
        node, path, above = stack.pop()
        if isinstance(node, bool) or node is None or isinstance(node, (str, bytes)):
            continue
        if isinstance(node, numbers.Real) and not isinstance(node, numbers.Integral):
            try:
                finite = math.isfinite(float(node))
            except (TypeError, ValueError, OverflowError):
                finite = True
            if not finite:
                raise TypeError(
                    f"tiletune: {owner}: key_fn returned {float(node)!r} at {path}; a NaN or infinity never "
                    "matches a cached key (NaN != NaN), so every call would re-tune. Return a finite number, "
                    "a string, or leave that value out of the key"
                )
            continue
        if isinstance(node, Mapping):
            children = [(f"{path} key {k!r}", k) for k in node.keys()] + [
                (f"{path}[{k!r}]", v) for k, v in node.items()
            ]
        elif isinstance(node, (list, tuple)):
            children = [(f"{path}[{i}]", v) for i, v in enumerate(node)]
        elif isinstance(node, (set, frozenset)):
            children = [(f"{path} item", v) for v in node]
        else:
            continue
        if id(node) in above:
            raise TypeError(
                f"tiletune: {owner}: key_fn returned a {type(node).__name__} that contains itself (at {path}); "
                "a cyclic value cannot be a tuning key. Return shapes, dtypes and flags (ints, strings, tuples)"
            )
        if len(above) >= MAX_KEY_DEPTH:
            raise TypeError(
                f"tiletune: {owner}: key_fn returned a value nested more than {MAX_KEY_DEPTH} levels deep "
                f"(at {path}); return a flat tuple of shapes, dtypes and flags"
            )
        inner = above | {id(node)}
        for where, child in children:
            stack.append((child, where, inner))
