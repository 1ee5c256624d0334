"""``tl.static_assert`` conditions as predicates, parsed with :mod:`ast` and never evaluated.

A condition is kept only when every name in it is a variable or a known
constant and it uses integer arithmetic, comparisons and ``and``/``or``/``not``.
"""

from __future__ import annotations

import ast
from typing import Callable, Optional

from ...analysis.expr import Expr, const, sym
from .preds import Pred, Term, TermLike

__all__ = ["parse_condition"]


class _Unsupported(Exception):
    pass


def parse_condition(text: str, known: Callable[[str], bool]) -> tuple[Optional[Pred], str]:
    """Parse a ``tl.static_assert`` condition into a :class:`Pred` (never evaluated).

    ``known(name)`` says whether a name is a variable or a constant.  Returns
    ``(pred, "")`` or ``(None, reason)`` when the condition uses something
    outside integer arithmetic, comparisons and ``and``/``or``/``not``
    over known names.
    """
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        return None, f"not an expression ({exc.msg})"
    try:
        return _cond(tree.body, known), ""
    except _Unsupported as exc:
        return None, str(exc)


def _cond(node: ast.AST, known: Callable[[str], bool]) -> Pred:
    if isinstance(node, ast.BoolOp):
        parts = [_cond(v, known) for v in node.values]
        return Pred("and" if isinstance(node.op, ast.And) else "or", tuple(parts))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return Pred("not", (_cond(node.operand, known),))
    if isinstance(node, ast.Compare):
        parts = []
        left = node.left
        for op, right in zip(node.ops, node.comparators):
            if isinstance(op, (ast.In, ast.NotIn)):
                if not isinstance(right, (ast.Tuple, ast.List, ast.Set)):
                    raise _Unsupported("'in' needs a literal tuple, list or set")
                a = _term(left, known)
                p = Pred.any_of(*[Pred.cmp("==", a, _term(e, known)) for e in right.elts]) if right.elts else Pred("bool", (False,))
                parts.append(Pred("not", (p,)) if isinstance(op, ast.NotIn) else p)
            else:
                sym_op = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}.get(type(op))
                if sym_op is None:
                    raise _Unsupported(f"comparison {type(op).__name__} is not supported")
                parts.append(Pred.cmp(sym_op, _term(left, known), _term(right, known)))
            left = right
        return Pred.all_of(*parts)
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return Pred("bool", (node.value,))
    # a bare integer expression: true when non-zero
    return Pred.cmp("!=", _term(node, known), const(0))


def _term(node: ast.AST, known: Callable[[str], bool]) -> TermLike:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, bool)):
        return const(int(node.value))
    if isinstance(node, ast.Name):
        if not known(node.id):
            raise _Unsupported(f"name {node.id!r} has no known value")
        return sym(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return Term("neg", (_term(node.operand, known),))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd):
        return _term(node.operand, known)
    if isinstance(node, ast.BinOp):
        a, b = _term(node.left, known), _term(node.right, known)
        if isinstance(node.op, ast.Add):
            return Term("add", (a, b))
        if isinstance(node.op, ast.Sub):
            return Term("sub", (a, b))
        if isinstance(node.op, ast.Mult):
            return Term("mul", (a, b))
        if isinstance(node.op, ast.FloorDiv):
            return Term("floordiv", (a, b))
        if isinstance(node.op, ast.Mod):
            return Term("mod", (a, b))
        if isinstance(node.op, ast.Pow):
            if not (isinstance(b, Expr) and b.is_const and 0 <= b.value <= 64):
                raise _Unsupported("'**' needs a small constant exponent")
            return Term("pow", (a, b))
        if isinstance(node.op, ast.LShift) and isinstance(b, Expr) and b.is_const and 0 <= b.value < 63:
            return Term("mul", (a, const(1 << b.value)))
        if isinstance(node.op, ast.RShift) and isinstance(b, Expr) and b.is_const and 0 <= b.value < 63:
            return Term("floordiv", (a, const(1 << b.value)))
        raise _Unsupported(f"operator {type(node.op).__name__} is not supported")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("max", "min") and not node.keywords:
        args = [_term(a, known) for a in node.args]
        if len(args) < 2:
            raise _Unsupported("max/min need two or more arguments")
        return Term(node.func.id, tuple(args))
    if isinstance(node, ast.Call):
        fname = ast.unparse(node.func)
        if fname.endswith("cdiv") and len(node.args) == 2:
            return Term("cdiv", (_term(node.args[0], known), _term(node.args[1], known)))
    raise _Unsupported(f"unsupported construct {ast.unparse(node)[:40]!r}")
