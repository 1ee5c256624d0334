"""Z3 integer terms for the expressions of the analysis (the solver is synthesis' business, not the analysis').

:func:`term_to_z3` translates an :class:`~tiletune.analysis.expr.Expr` (or a
constraint ``Term`` built from the same operations plus ``neg``, ``mod`` and
``pow``) into a Z3 integer term; :func:`~tiletune.synthesis.constraints.preds.pred_to_z3`
builds formulas from it (unsat cores, single points).
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["term_to_z3"]


def term_to_z3(t: Any, env: Mapping[str, Any]):
    """A Z3 integer term for ``t``: an :class:`Expr`, or any term with ``op`` and ``args``
    built from the same operations plus ``neg``, ``mod`` and ``pow`` (constant
    non-negative exponents); ``env`` maps symbol names to Z3 terms or ints."""
    import z3

    op, args = t.op, t.args
    if op == "const":
        return z3.IntVal(args[0])
    if op == "sym":
        if args[0] not in env:
            raise KeyError(args[0])
        v = env[args[0]]
        return z3.IntVal(v) if isinstance(v, int) else v
    terms = [term_to_z3(a, env) for a in args]
    if op == "npow2":  # powers of two up to 2**40, smallest first
        x = terms[0]
        out = z3.IntVal(1 << 40)
        for e in range(39, -1, -1):
            out = z3.If(x <= (1 << e), z3.IntVal(1 << e), out)
        return out
    if op == "add":
        return z3.Sum(terms) if len(terms) > 1 else terms[0]
    if op == "mul":
        out = terms[0]
        for u in terms[1:]:
            out = out * u
        return out
    if op in ("max", "min"):
        out = terms[0]
        for u in terms[1:]:
            out = z3.If(u > out, u, out) if op == "max" else z3.If(u < out, u, out)
        return out
    if op == "neg":
        return -terms[0]
    a, b = terms
    if op == "sub":
        return a - b
    if op == "floordiv":
        return a / b  # Z3 integer division floors for positive divisors
    if op == "cdiv":
        return (a + b - 1) / b
    if op == "mod":
        return a % b
    if op == "pow":
        n = args[1]
        if n.op != "const" or n.args[0] < 0:
            raise ValueError("only constant non-negative exponents")
        out = z3.IntVal(1)
        for _ in range(n.args[0]):
            out = out * a
        return out
    raise ValueError(f"unknown term op {op!r}")
