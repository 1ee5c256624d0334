"""Run a recursive computation with room for deep source trees.

libcst builds, prints and measures positions recursively: a flat sum of 500
terms is a left-nested chain 500 ``BinaryOperation`` nodes deep, which
exhausts Python's default 1000-frame limit (and libcst then reports the
RecursionError as a KeyError).  :func:`run_deep` runs a function in a
thread with a large C stack and a raised recursion limit, so such files are
analysed instead of refused; anything deeper still ends in RecursionError,
which callers turn into a located error.
"""

from __future__ import annotations

import sys
import threading
from typing import Any, Callable, Optional, TypeVar

__all__ = ["run_deep", "caused_by_recursion", "too_deep", "DEEP_STACK_BYTES", "DEEP_RECURSION_LIMIT", "MAX_EXPRESSION_DEPTH"]

T = TypeVar("T")

#: C stack of the worker thread (virtual memory: only the pages used are touched).
DEEP_STACK_BYTES = 512 << 20
#: Python frames allowed while it runs (about 20 KiB of C stack per frame at worst).
DEEP_RECURSION_LIMIT = 20000

_lock = threading.Lock()
_depth = 0  # run_deep calls in flight (the recursion limit is per interpreter, not per thread)
_saved_limit = 0


def run_deep(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` run in a thread with a :data:`DEEP_STACK_BYTES` stack and a recursion
    limit of at least :data:`DEEP_RECURSION_LIMIT`; its result or its exception (re-raised here).

    Runs ``fn`` directly when called from inside another :func:`run_deep` (already deep enough)
    or when the platform refuses the stack size.
    """
    global _depth, _saved_limit
    if getattr(_local, "inside", False):
        return fn(*args, **kwargs)
    outcome: dict = {}

    def target() -> None:
        _local.inside = True
        try:
            outcome["value"] = fn(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            outcome["error"] = exc

    with _lock:
        if _depth == 0:
            _saved_limit = sys.getrecursionlimit()
            if _saved_limit < DEEP_RECURSION_LIMIT:
                sys.setrecursionlimit(DEEP_RECURSION_LIMIT)
        _depth += 1
        try:
            old_size = threading.stack_size(DEEP_STACK_BYTES)
        except (ValueError, RuntimeError):  # platform without settable stacks
            old_size = None
        try:
            worker = threading.Thread(target=target, name="tiletune-deep", daemon=True)
            worker.start()
        finally:
            if old_size is not None:
                threading.stack_size(old_size)
    try:
        while worker.is_alive():
            worker.join(0.5)  # short waits keep the caller's thread responsive to Ctrl-C
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                sys.setrecursionlimit(_saved_limit)
    if "error" in outcome:
        error = outcome["error"]
        raise error.with_traceback(error.__traceback__)
    return outcome["value"]


_local = threading.local()


def caused_by_recursion(exc: BaseException) -> bool:
    """True when ``exc`` is a RecursionError or was raised while handling one (libcst turns a
    RecursionError in its position pass into a KeyError)."""
    seen = 0
    cur: Any = exc
    while cur is not None and seen < 50:
        if isinstance(cur, RecursionError):
            return True
        cur = cur.__context__ or cur.__cause__
        seen += 1
    return False


#: Deepest expression the analysis takes on (libcst's parser slows down quadratically with nesting:
#: a flat sum of 2500 terms parses in about 2 s, 4000 in 5 s, 10000 in minutes).
MAX_EXPRESSION_DEPTH = 3000


def too_deep(tree: Any, source: str, limit: int = MAX_EXPRESSION_DEPTH) -> Optional[tuple[int, int, int]]:
    """``(line, column, depth)`` of the first expression of ``tree`` (an ``ast.Module`` of ``source``)
    nested more than ``limit`` levels deep, or None.

    Cheap on ordinary code: only statements whose source spans at least
    ``limit`` bytes are walked (every level of nesting takes at least one byte).
    """
    import ast

    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line.encode("utf-8", "surrogatepass")))

    def span(node: Any) -> int:
        try:
            return (starts[node.end_lineno - 1] + node.end_col_offset) - (starts[node.lineno - 1] + node.col_offset)
        except (AttributeError, IndexError, TypeError):
            return limit  # no position: look inside

    statements = list(getattr(tree, "body", []))
    while statements:
        stmt = statements.pop()
        for field in stmt._fields:
            value = getattr(stmt, field, None)
            items = value if isinstance(value, list) else [value]
            for item in items:
                if isinstance(item, ast.stmt):
                    statements.append(item)
                elif isinstance(item, ast.AST) and span(item) >= limit:
                    found = _deepest(item, limit)
                    if found is not None:
                        return found
    return None


def _deepest(root: Any, limit: int) -> Optional[tuple[int, int, int]]:
    import ast

    stack = [(root, 1, getattr(root, "lineno", 1), getattr(root, "col_offset", 0))]
    while stack:
        node, depth, line, col = stack.pop()
        line = getattr(node, "lineno", line)
        col = getattr(node, "col_offset", col)
        if depth > limit:
            return line, col, depth
        for child in ast.iter_child_nodes(node):
            stack.append((child, depth + 1, line, col))
    return None
