"""Predicates and integer terms: one tree, evaluated over NumPy arrays and turned into Z3.

A term is an analysis :class:`~tiletune.analysis.expr.Expr` or a :class:`Term`
(the same shape, plus ``mod``/``pow``/``neg`` for ``tl.static_assert``
conditions); a :class:`Pred` is a comparison, ``and``/``or``/``not`` or a
constant.  :func:`evaluate_pred` works on ints or arrays (the enumeration),
:func:`pred_to_z3` builds the Z3 formula (unsat cores, single points): both
read the same tree, so they cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Union

import numpy as np

from ...analysis.expr import Expr, const
from ..z3_terms import term_to_z3 as to_z3  # also takes Terms (neg, mod, pow)

__all__ = [
    "Term",
    "TermLike",
    "Pred",
    "term_symbols",
    "pred_symbols",
    "evaluate",
    "evaluate_pred",
    "pred_to_z3",
    "term_str",
    "pred_str",
]

@dataclass(frozen=True)
class Term:
    """An integer term with the operations :class:`Expr` lacks (``mod``, ``pow``, ``neg``)."""

    op: str
    args: tuple


TermLike = Union[Expr, Term]


@dataclass(frozen=True)
class Pred:
    """A predicate: ``cmp`` (``args = (op, a, b)``), ``and``/``or``/``not`` or ``bool``."""

    op: str
    args: tuple

    # constructors
    @staticmethod
    def cmp(op: str, a: TermLike, b: TermLike) -> "Pred":
        return Pred("cmp", (op, a, b))

    @staticmethod
    def le(a: TermLike, b: TermLike) -> "Pred":
        return Pred("cmp", ("<=", a, b))

    @staticmethod
    def ge(a: TermLike, b: TermLike) -> "Pred":
        return Pred("cmp", (">=", a, b))

    @staticmethod
    def any_of(*ps: "Pred") -> "Pred":
        return ps[0] if len(ps) == 1 else Pred("or", tuple(ps))

    @staticmethod
    def all_of(*ps: "Pred") -> "Pred":
        return ps[0] if len(ps) == 1 else Pred("and", tuple(ps))

    @staticmethod
    def isin(a: TermLike, values: Iterable[int]) -> "Pred":
        return Pred.any_of(*[Pred.cmp("==", a, const(int(v))) for v in values])

    @staticmethod
    def multiple_of(a: TermLike, m: int) -> "Pred":
        return Pred.cmp("==", Term("mod", (a, const(int(m)))), const(0))


def term_symbols(t: TermLike) -> frozenset:
    """Symbol names of a term."""
    if isinstance(t, Expr):
        return t.symbols()
    out: set = set()
    for a in t.args:
        if isinstance(a, (Expr, Term)):
            out |= term_symbols(a)
    return frozenset(out)


def pred_symbols(p: Pred) -> frozenset:
    """Symbol names of a predicate."""
    if p.op == "bool":
        return frozenset()
    if p.op == "cmp":
        return term_symbols(p.args[1]) | term_symbols(p.args[2])
    out: set = set()
    for a in p.args:
        out |= pred_symbols(a)
    return frozenset(out)


def evaluate(t: TermLike, env: Mapping[str, Any]):
    """Evaluate a term over ints or NumPy integer arrays (broadcasting)."""
    op, args = t.op, t.args
    if op == "const":
        return args[0]
    if op == "sym":
        return env[args[0]]
    vals = [evaluate(a, env) for a in args]
    if op == "add":
        out = vals[0]
        for v in vals[1:]:
            out = out + v
        return out
    if op == "mul":
        out = vals[0]
        for v in vals[1:]:
            out = out * v
        return out
    if op == "max":
        out = vals[0]
        for v in vals[1:]:
            out = np.maximum(out, v)
        return out
    if op == "min":
        out = vals[0]
        for v in vals[1:]:
            out = np.minimum(out, v)
        return out
    if op == "neg":
        return -vals[0]
    if op == "npow2":  # ``triton.next_power_of_2(n)``: a tile sized by a runtime value
        return _next_pow2(vals[0])
    a, b = vals
    if op == "sub":
        return a - b
    if op == "floordiv":
        return a // b
    if op == "cdiv":
        return -((-a) // b)
    if op == "mod":
        return a % b
    if op == "pow":
        return a**b
    raise ValueError(f"unknown term op {op!r}")


def _next_pow2(x):
    """The smallest power of two >= ``x`` (1 for ``x <= 1``), over an int or an integer array."""
    if isinstance(x, np.ndarray):
        out = np.ones_like(x, dtype=np.int64)
        while True:
            short = out < x
            if not short.any():
                return out
            out = np.where(short, out * 2, out)
    x = int(x)
    return 1 if x <= 1 else 1 << (x - 1).bit_length()


_CMP = {
    "<=": lambda a, b: a <= b,
    "<": lambda a, b: a < b,
    ">=": lambda a, b: a >= b,
    ">": lambda a, b: a > b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}


def evaluate_pred(p: Pred, env: Mapping[str, Any]):
    """Evaluate a predicate over ints or arrays (a bool or a bool array)."""
    op = p.op
    if op == "bool":
        return bool(p.args[0])
    if op == "cmp":
        c, a, b = p.args
        return _CMP[c](evaluate(a, env), evaluate(b, env))
    if op == "not":
        return np.logical_not(evaluate_pred(p.args[0], env))
    vals = [evaluate_pred(a, env) for a in p.args]
    out = vals[0]
    for v in vals[1:]:
        out = np.logical_and(out, v) if op == "and" else np.logical_or(out, v)
    return out


def pred_to_z3(p: Pred, env: Mapping[str, Any]):
    """A Z3 boolean for a predicate."""
    import z3

    op = p.op
    if op == "bool":
        return z3.BoolVal(bool(p.args[0]))
    if op == "cmp":
        c, a, b = p.args
        return _CMP[c](to_z3(a, env), to_z3(b, env))
    if op == "not":
        return z3.Not(pred_to_z3(p.args[0], env))
    vals = [pred_to_z3(a, env) for a in p.args]
    return z3.And(*vals) if op == "and" else z3.Or(*vals)


_TPREC = {"add": 1, "sub": 1, "mul": 2, "floordiv": 2, "mod": 2, "pow": 3, "neg": 3}


def term_str(t: TermLike, prec: int = 0) -> str:
    """Python-like text of a term."""
    if isinstance(t, Expr):
        text = str(t)
        return f"({text})" if prec and t.op in ("add", "sub") and prec > 1 else text
    op, args = t.op, t.args
    if op == "mod":
        text = f"{term_str(args[0], 2)} % {term_str(args[1], 3)}"
    elif op == "pow":
        text = f"{term_str(args[0], 4)} ** {term_str(args[1], 3)}"
    elif op == "neg":
        text = f"-{term_str(args[0], 3)}"
    else:
        text = str(Expr(op, args)) if op in ("const", "sym") else f"{op}({', '.join(term_str(a) for a in args)})"
    p = _TPREC.get(op, 4)
    return f"({text})" if p < prec else text


def pred_str(p: Pred) -> str:
    """Python-like text of a predicate."""
    if p.op == "bool":
        return str(bool(p.args[0]))
    if p.op == "cmp":
        c, a, b = p.args
        return f"{term_str(a)} {c} {term_str(b)}"
    if p.op == "not":
        return f"not ({pred_str(p.args[0])})"
    joiner = " and " if p.op == "and" else " or "
    return joiner.join(f"({pred_str(a)})" if a.op in ("and", "or") else pred_str(a) for a in p.args)
