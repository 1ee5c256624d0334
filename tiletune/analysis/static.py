"""Compile-time evaluation of branch conditions on known constexpr values.

A kernel specialised with known constexpr values (the launch's flags, say
``HAS_RESIDUAL=False``) has dead branches: Triton drops them before code
generation, so they load, store and allocate nothing, and a pointer used
only there needs no dtype.  :func:`static_value` evaluates a condition from
the values the interpreter knows statically (parameters given in
``constants``, module constants, literals) and says when it cannot.
"""

from __future__ import annotations

import operator
from typing import Any, Callable, Optional

import libcst as cst

__all__ = ["UNKNOWN_STATIC", "SCALARS", "static_value"]


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN_STATIC"


#: What :func:`static_value` returns when the value is not known at compile time.
UNKNOWN_STATIC: Any = _Unknown()

_CMP: dict[type, Callable[[Any, Any], Any]] = {
    cst.Equal: operator.eq,
    cst.NotEqual: operator.ne,
    cst.LessThan: operator.lt,
    cst.LessThanEqual: operator.le,
    cst.GreaterThan: operator.gt,
    cst.GreaterThanEqual: operator.ge,
    cst.Is: operator.is_,  # ``x is None``: None, True and False are singletons
    cst.IsNot: operator.is_not,
}
_BIN: dict[type, Callable[[Any, Any], Any]] = {
    cst.Add: operator.add,
    cst.Subtract: operator.sub,
    cst.Multiply: operator.mul,
    cst.FloorDivide: operator.floordiv,
    cst.Modulo: operator.mod,
    cst.BitAnd: operator.and_,
    cst.BitOr: operator.or_,
    cst.LeftShift: operator.lshift,
    cst.RightShift: operator.rshift,
}
#: Python types a compile-time value may have.
SCALARS = (bool, int, float, str, type(None))


def static_value(node: cst.CSTNode, lookup: Callable[[str], Any],
                 is_none: Optional[Callable[[str], Optional[bool]]] = None) -> Any:
    """The compile-time value of expression ``node``, or :data:`UNKNOWN_STATIC`.

    ``lookup(name)`` gives a name's static value (or :data:`UNKNOWN_STATIC`).  Understood:
    literals (integers and strings), ``True``/``False``/``None``, ``not``/``and``/``or``, comparisons
    (``is None`` included), integer arithmetic and ``tl.constexpr(x)``.
    ``is_none(name)`` (optional) says whether a name whose value is not static
    is known to be ``None`` or known not to be (a computed tile or scalar is
    never ``None``), else None: ``x is None`` / ``x is not None`` is then decided.
    """
    try:
        return _value(node, lookup, is_none)
    except (ArithmeticError, TypeError, ValueError, RecursionError):
        return UNKNOWN_STATIC


def _none_test(node: cst.Comparison, lookup, is_none) -> Any:
    """``name is None`` / ``name is not None`` decided by ``is_none``, else UNKNOWN_STATIC."""
    if is_none is None or len(node.comparisons) != 1:
        return UNKNOWN_STATIC
    c = node.comparisons[0]
    if type(c.operator) not in (cst.Is, cst.IsNot):
        return UNKNOWN_STATIC
    left, right = node.left, c.comparator
    if type(left) is cst.Name and left.value == "None":
        left, right = right, left
    if not (type(left) is cst.Name and type(right) is cst.Name and right.value == "None"):
        return UNKNOWN_STATIC
    if lookup(left.value) is not UNKNOWN_STATIC:
        return UNKNOWN_STATIC  # a static value: the general rule decides
    known = is_none(left.value)
    if known is None:
        return UNKNOWN_STATIC
    return known if type(c.operator) is cst.Is else not known


def _value(node: cst.CSTNode, lookup, is_none=None) -> Any:
    if type(node) is cst.Name:
        if node.value in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[node.value]
        return lookup(node.value)
    if type(node) is cst.Integer:
        return int(node.value.replace("_", ""), 0)
    if type(node) is cst.SimpleString:  # ``reduction == "none"`` on a string constexpr
        value = node.evaluated_value
        return value if isinstance(value, str) else UNKNOWN_STATIC
    if type(node) is cst.UnaryOperation:
        x = _value(node.expression, lookup, is_none)
        if x is UNKNOWN_STATIC:
            return x
        if type(node.operator) is cst.Not:
            return not x
        if type(node.operator) is cst.Minus:
            return -x
        return UNKNOWN_STATIC
    if type(node) is cst.BooleanOperation:
        a = _value(node.left, lookup, is_none)
        is_and = type(node.operator) is cst.And
        if a is not UNKNOWN_STATIC and (not a if is_and else a):
            return a  # short circuit: ``False and ?`` / ``True or ?``
        b = _value(node.right, lookup, is_none)
        if a is UNKNOWN_STATIC:
            # ``? and False`` is false whatever ``?`` is; ``? or True`` is true
            if b is not UNKNOWN_STATIC and (not b if is_and else b):
                return b
            return UNKNOWN_STATIC
        return b
    if type(node) is cst.Comparison:
        decided = _none_test(node, lookup, is_none)
        if decided is not UNKNOWN_STATIC:
            return decided
        left = _value(node.left, lookup)
        result: Any = True
        for c in node.comparisons:
            right = _value(c.comparator, lookup)
            fn = _CMP.get(type(c.operator))
            if left is UNKNOWN_STATIC or right is UNKNOWN_STATIC or fn is None:
                return UNKNOWN_STATIC
            result = result and fn(left, right)
            left = right
        return bool(result)
    if type(node) is cst.BinaryOperation:
        fn = _BIN.get(type(node.operator))
        a = _value(node.left, lookup)
        b = _value(node.right, lookup)
        if fn is None or a is UNKNOWN_STATIC or b is UNKNOWN_STATIC:
            return UNKNOWN_STATIC
        return fn(a, b)
    if type(node) is cst.Call and len(node.args) == 1 and _callee(node.func) == "constexpr":
        return _value(node.args[0].value, lookup)
    return UNKNOWN_STATIC


def _callee(func: cst.CSTNode) -> str:
    if type(func) is cst.Attribute:
        return func.attr.value
    return func.value if type(func) is cst.Name else ""
