"""Cheap source text of libcst nodes, for graph labels and messages."""

from __future__ import annotations

from typing import Optional

import libcst as cst

__all__ = ["BINOP_TEXT", "TOKEN_FIELDS", "node_text", "dotted_name", "root_name", "is_cst_node"]

#: Node fields that hold only tokens, brackets, whitespace and comments (plus fields named ``whitespace*``):
#: never a name, a call or an operation, so walks that look for those skip them. An operation's
#: ``operator`` is read from the operation itself.
TOKEN_FIELDS = frozenset(
    "lpar rpar leading_lines lines_after_decorators header footer comma semicolon whitespace "
    "colon equal operator asynchronous default_indent default_newline encoding has_trailing_newline".split()
)

BINOP_TEXT = {
    cst.Add: "+",
    cst.Subtract: "-",
    cst.Multiply: "*",
    cst.Divide: "/",
    cst.FloorDivide: "//",
    cst.Modulo: "%",
    cst.Power: "**",
    cst.BitAnd: "&",
    cst.BitOr: "|",
    cst.BitXor: "^",
    cst.LeftShift: "<<",
    cst.RightShift: ">>",
    cst.MatrixMultiply: "@",
}


_CMP_TEXT = {
    cst.LessThan: "<",
    cst.LessThanEqual: "<=",
    cst.GreaterThan: ">",
    cst.GreaterThanEqual: ">=",
    cst.Equal: "==",
    cst.NotEqual: "!=",
    cst.Is: "is",
    cst.IsNot: "is not",
    cst.In: "in",
    cst.NotIn: "not in",
}


_EMPTY_MODULE = cst.Module(body=[])


def node_text(node: cst.CSTNode, limit: int = 60) -> str:
    """Source text of an expression, rebuilt cheaply and shortened to ``limit`` characters."""
    text = _text(node, 4)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


def _text(node: cst.CSTNode, depth: int) -> str:
    if type(node) is cst.Name:
        return node.value
    if type(node) in (cst.Integer, cst.Float):
        return node.value
    if type(node) is cst.Attribute:
        return f"{_text(node.value, depth)}.{node.attr.value}"
    if depth <= 0:
        return "..."
    if type(node) is cst.Call:
        args = ", ".join(
            (f"{a.keyword.value}=" if a.keyword else "") + _text(a.value, depth - 1) for a in node.args
        )
        return f"{_text(node.func, depth)}({args})"
    if type(node) is cst.BinaryOperation:
        op = BINOP_TEXT.get(type(node.operator), "?")
        return f"{_text(node.left, depth - 1)} {op} {_text(node.right, depth - 1)}"
    if type(node) is cst.Comparison:
        out = _text(node.left, depth - 1)
        for c in node.comparisons:
            out += f" {_CMP_TEXT.get(type(c.operator), '?')} {_text(c.comparator, depth - 1)}"
        return out
    if type(node) is cst.Subscript:
        parts = []
        for el in node.slice:
            s = el.slice
            if type(s) is cst.Index:
                parts.append(_text(s.value, depth - 1))
            else:
                parts.append(":")
        return f"{_text(node.value, depth)}[{', '.join(parts)}]"
    if type(node) in (cst.Tuple, cst.List):
        inner = ", ".join(_text(e.value, depth - 1) for e in node.elements)
        return f"({inner})" if type(node) is cst.Tuple else f"[{inner}]"
    if type(node) is cst.UnaryOperation:
        op = {cst.Minus: "-", cst.Plus: "+", cst.BitInvert: "~", cst.Not: "not "}.get(type(node.operator), "")
        return op + _text(node.expression, depth - 1)
    if type(node) is cst.BooleanOperation:
        op = "and" if type(node.operator) is cst.And else "or"
        return f"{_text(node.left, depth - 1)} {op} {_text(node.right, depth - 1)}"
    if type(node) is cst.SimpleString:
        return node.value
    try:
        return _EMPTY_MODULE.code_for_node(node)
    except Exception:  # pragma: no cover - defensive
        return type(node).__name__


def dotted_name(node: cst.CSTNode) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts = []
    while type(node) is cst.Attribute:
        parts.append(node.attr.value)
        node = node.value
    if type(node) is not cst.Name:
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def root_name(node: cst.CSTNode) -> Optional[str]:
    while type(node) is cst.Attribute:
        node = node.value
    return node.value if type(node) is cst.Name else None


_IS_NODE: dict = {}  # isinstance(x, cst.CSTNode) goes through the ABC machinery: once per class
#: The classes :func:`is_cst_node` has answered so far, by answer: the walkers over every node test
#: ``type(x) in NODE_TYPES`` first (a set lookup instead of a call per field) and call it for the rest.
NODE_TYPES: set = set()
NOT_NODE_TYPES: set = set()


def is_cst_node(value: object) -> bool:
    """Whether ``value`` is a libcst node (cached per class: ``isinstance`` on the ABC is slow)."""
    cls = type(value)
    known = _IS_NODE.get(cls)
    if known is None:
        known = _IS_NODE[cls] = issubclass(cls, cst.CSTNode)
        (NODE_TYPES if known else NOT_NODE_TYPES).add(cls)
    return known
