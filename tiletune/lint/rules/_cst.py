"""libcst helpers the rules' quick fixes share."""

from __future__ import annotations

from typing import Any, Optional

import libcst as cst

__all__ = ["start_of", "launch_kernel_name", "remove_arg", "ReplaceNode"]


def start_of(positions: Any, node: cst.CSTNode) -> tuple[int, int]:
    """``(line, column)`` where ``node`` starts (1-based line, 0-based column)."""
    r = positions[node]
    return r.start.line, r.start.column


def launch_kernel_name(call: cst.Call) -> Optional[str]:
    """``k`` for a launch ``k[grid](...)`` / ``mod.k[grid](...)``, else None."""
    if not isinstance(call.func, cst.Subscript):
        return None
    v = call.func.value
    if isinstance(v, cst.Name):
        return v.value
    if isinstance(v, cst.Attribute):
        return v.attr.value
    return None


def remove_arg(call: cst.Call, idx: int) -> cst.Call:
    """``call`` without its ``idx``-th argument (commas and layout kept)."""
    args = list(call.args)
    removed = args.pop(idx)
    if idx == len(args) and args:
        # The removed argument was the last: its comma (trailing comma and the
        # line break before ")") moves to the new last argument.
        args[-1] = args[-1].with_changes(comma=removed.comma)
    return call.with_changes(args=args)


class ReplaceNode(cst.CSTTransformer):
    """Replace one node (by identity) with another."""

    def __init__(self, old: cst.CSTNode, new: cst.CSTNode):
        super().__init__()
        self.old, self.new = old, new

    def on_leave(self, original, updated):
        if original is self.old:
            return self.new
        return updated
