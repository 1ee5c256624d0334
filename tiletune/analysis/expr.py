"""Symbolic integer expressions over tiling parameters and runtime sizes.

Tile shapes, footprints, loop trip counts and grid sizes are all small integer
expressions such as ``BLOCK_M * BLOCK_K * esize_a_ptr * num_stages`` or
``cdiv(K, BLOCK_K)``.  :class:`Expr` is an immutable tree with just the
operations those need; it prints as Python-like text, parses back from that
text (without ``eval``), evaluates with integer values and converts to Z3.

Symbols are plain identifiers.  By convention:

* a tiling or runtime parameter is its own name (``BLOCK_M``, ``M``);
* the element size in bytes of a pointer parameter ``x_ptr`` is
  ``esize_x_ptr`` (see :func:`esize_symbol`);
* the software-pipelining depth is ``num_stages``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterable, Mapping, Union

__all__ = [
    "Expr",
    "ExprLike",
    "const",
    "sym",
    "cdiv",
    "emax",
    "emin",
    "next_pow2",
    "product",
    "total",
    "as_expr",
    "parse_expr",
    "esize_symbol",
    "align16_symbol",
    "ALIGN16_PREFIX",
    "NUM_STAGES",
    "ExprParseError",
]

NUM_STAGES = "num_stages"
#: Warps per program: a launch knob the target's family binds (searched on NVIDIA).
NUM_WARPS = "num_warps"
#: 1 when the target's compiler lowers a wgmma-shaped ``tl.dot`` to wgmma (NVIDIA sm_90 and later), else 0:
#: the target family binds it (``tiletune.synthesis.families``), the analysis never assumes a chip.
WGMMA = "wgmma"

_BINARY = ("add", "mul", "sub", "floordiv", "cdiv", "max", "min")
_COMMUTATIVE = ("add", "mul", "max", "min")


class ExprParseError(ValueError):
    """Raised when text is not a valid tiletune expression."""


@dataclass(frozen=True)
class Expr:
    """An integer expression: ``const``, ``sym`` or an operation on sub-expressions.

    ``op`` is one of ``const`` (``args == (value,)``), ``sym`` (``args ==
    (name,)``), ``add``/``mul``/``max``/``min`` (n-ary), ``sub``,
    ``floordiv`` and ``cdiv`` (binary), ``npow2`` (unary: the smallest power
    of two >= its argument, ``triton.next_power_of_2``).  Build expressions with :func:`const`,
    :func:`sym`, the arithmetic operators and :func:`cdiv`/:func:`emax`; they
    fold constants as they go.
    """

    op: str
    args: tuple

    # ----- inspection -------------------------------------------------
    @property
    def is_const(self) -> bool:
        """True when the expression is a plain integer."""
        return self.op == "const"

    @property
    def value(self) -> int:
        """The integer of a constant expression (ValueError otherwise)."""
        if self.op != "const":
            raise ValueError(f"{self} is not a constant")
        return self.args[0]

    def symbols(self) -> frozenset[str]:
        """Every symbol name the expression mentions."""
        if self.op == "sym":
            return frozenset(self.args)
        if self.op == "const":
            return frozenset()
        out: set[str] = set()
        for a in self.args:
            out |= a.symbols()
        return frozenset(out)

    # ----- arithmetic ---------------------------------------------------
    def __add__(self, other: ExprLike) -> Expr:
        return _nary("add", [self, as_expr(other)])

    def __radd__(self, other: ExprLike) -> Expr:
        return _nary("add", [as_expr(other), self])

    def __mul__(self, other: ExprLike) -> Expr:
        return _nary("mul", [self, as_expr(other)])

    def __rmul__(self, other: ExprLike) -> Expr:
        return _nary("mul", [as_expr(other), self])

    def __sub__(self, other: ExprLike) -> Expr:
        return _binary("sub", self, as_expr(other))

    def __rsub__(self, other: ExprLike) -> Expr:
        return _binary("sub", as_expr(other), self)

    def __floordiv__(self, other: ExprLike) -> Expr:
        return _binary("floordiv", self, as_expr(other))

    def __rfloordiv__(self, other: ExprLike) -> Expr:
        return _binary("floordiv", as_expr(other), self)

    # ----- evaluation ---------------------------------------------------
    def evaluate(self, env: Mapping[str, int]) -> int:
        """Evaluate with integer values for every symbol.

        Raises ``KeyError`` naming the first symbol ``env`` lacks.
        """
        op, args = self.op, self.args
        if op == "const":
            return args[0]
        if op == "sym":
            name = args[0]
            if name not in env:
                raise KeyError(name)
            return int(env[name])
        vals = [a.evaluate(env) for a in args]
        if op == "npow2":
            return _npow2_int(vals[0])
        if op == "add":
            return sum(vals)
        if op == "mul":
            out = 1
            for v in vals:
                out *= v
            return out
        if op == "max":
            return max(vals)
        if op == "min":
            return min(vals)
        a, b = vals
        if op == "sub":
            return a - b
        if op == "floordiv":
            return a // b
        if op == "cdiv":
            return -(-a // b)
        raise AssertionError(op)

    def substitute(self, env: Mapping[str, ExprLike]) -> Expr:
        """Replace the symbols named in ``env`` (by ints or expressions) and refold."""
        if self.op == "sym":
            return as_expr(env[self.args[0]]) if self.args[0] in env else self
        if self.op == "const":
            return self
        parts = [a.substitute(env) for a in self.args]
        if self.op == "npow2":
            return next_pow2(parts[0])
        if self.op in _COMMUTATIVE:
            return _nary(self.op, parts)
        return _binary(self.op, parts[0], parts[1])

    # ----- text ---------------------------------------------------------
    def __str__(self) -> str:
        # Kept on the instance (outside the fields, so equality and hashing are unchanged): sorting an n-ary
        # expression's terms reads every term's text, and the body interpreter builds terms from terms.
        text = self.__dict__.get("_text")
        if text is None:
            text = _format(self, 0)
            object.__setattr__(self, "_text", text)
        return text

    def __repr__(self) -> str:
        return f"Expr({str(self)!r})"

    def to_json(self) -> str:
        """The JSON form of an expression is its text; see :func:`parse_expr`."""
        return str(self)


ExprLike = Union[Expr, int, str]


def const(value: int) -> Expr:
    """An integer constant."""
    return Expr("const", (int(value),))


def sym(name: str) -> Expr:
    """A named symbol (a parameter, a runtime size, ``num_stages``, ...)."""
    if not name.isidentifier():
        raise ValueError(f"symbol name must be an identifier, got {name!r}")
    return Expr("sym", (name,))


def as_expr(x: ExprLike) -> Expr:
    """Coerce an int (constant), str (symbol) or Expr to an Expr."""
    if isinstance(x, Expr):
        return x
    if isinstance(x, bool):
        return const(int(x))
    if isinstance(x, int):
        return const(x)
    if isinstance(x, str):
        return sym(x)
    raise TypeError(f"cannot make an expression of {x!r}")


def cdiv(a: ExprLike, b: ExprLike) -> Expr:
    """Ceiling division, as ``triton.cdiv``."""
    return _binary("cdiv", as_expr(a), as_expr(b))


def emax(*xs: ExprLike) -> Expr:
    """Maximum of the arguments."""
    return _nary("max", [as_expr(x) for x in xs])


def emin(*xs: ExprLike) -> Expr:
    """Minimum of the arguments."""
    return _nary("min", [as_expr(x) for x in xs])


def next_pow2(x: ExprLike) -> Expr:
    """The smallest power of two >= ``x`` (``triton.next_power_of_2``; 1 for ``x <= 1``)."""
    x = as_expr(x)
    if x.is_const:
        return const(_npow2_int(x.value))
    if x.op == "npow2":
        return x
    return Expr("npow2", (x,))


def _npow2_int(v: int) -> int:
    return 1 if v <= 1 else 1 << (v - 1).bit_length()


def product(xs: Iterable[ExprLike]) -> Expr:
    """Product of the arguments (1 for none)."""
    return _nary("mul", [as_expr(x) for x in xs])


def total(xs: Iterable[ExprLike]) -> Expr:
    """Sum of the arguments (0 for none)."""
    return _nary("add", [as_expr(x) for x in xs])


def esize_symbol(param: str) -> str:
    """The symbol for the element size in bytes of pointer parameter ``param``."""
    return f"esize_{param}"


#: Prefix of the symbols ``align16_<param>``: 1 unless integer parameter ``param`` is known at the launch not
#: to be a multiple of 16 (Triton's specialisation ``tt.divisibility=16``); synthesis binds them.
ALIGN16_PREFIX = "align16_"


def align16_symbol(param: str) -> str:
    """The symbol that is 0 when integer parameter ``param`` is known not to be a multiple of 16, else 1."""
    return f"{ALIGN16_PREFIX}{param}"


# ----- construction with light simplification -----------------------------
def _sort_key(e: Expr) -> tuple:
    return (0 if e.op == "const" else 1, str(e))


def _nary(op: str, parts: list[Expr]) -> Expr:
    flat: list[Expr] = []
    for p in parts:
        if p.op == op:
            flat.extend(p.args)
        else:
            flat.append(p)
    consts = [p.value for p in flat if p.op == "const"]
    rest = [p for p in flat if p.op != "const"]
    if op == "add":
        c = sum(consts)
        items = rest + ([const(c)] if c or not rest else [])
    elif op == "mul":
        c = 1
        for v in consts:
            c *= v
        if c == 0:
            return const(0)
        items = ([const(c)] if c != 1 or not rest else []) + rest
    else:  # max / min
        items = rest
        if consts:
            items = items + [const(max(consts) if op == "max" else min(consts))]
        # drop duplicates, keep order stable
        seen: list[Expr] = []
        for it in items:
            if it not in seen:
                seen.append(it)
        items = seen
    if op == "add":  # constants last: "K + 15", not "15 + K"
        items = sorted(items, key=lambda e: (e.op == "const", str(e)))
    elif op in ("max", "min"):
        items = sorted(items, key=_sort_key)
    elif op == "mul":
        items = [i for i in items if i.op == "const"] + sorted(
            (i for i in items if i.op != "const"), key=_sort_key
        )
    if not items:
        return const(0 if op == "add" else 1)
    if len(items) == 1:
        return items[0]
    return Expr(op, tuple(items))


def _binary(op: str, a: Expr, b: Expr) -> Expr:
    if a.is_const and b.is_const:
        return const(Expr(op, (a, b)).evaluate({}))
    if op == "sub" and b.is_const and b.value == 0:
        return a
    if op == "sub":
        return _nary("add", [a, _nary("mul", [const(-1), b])]) if b.is_const else Expr(op, (a, b))
    if op in ("floordiv", "cdiv") and b.is_const and b.value == 1:
        return a
    if op in ("floordiv", "cdiv") and a == b:
        return const(1)
    return Expr(op, (a, b))


# ----- printing --------------------------------------------------------------
_PREC = {"add": 1, "sub": 1, "mul": 2, "floordiv": 2}


def _format(e: Expr, parent_prec: int) -> str:
    op = e.op
    if op == "const":
        return str(e.args[0])
    if op == "sym":
        return e.args[0]
    if op in ("max", "min", "cdiv"):
        return f"{op}({', '.join(_format(a, 0) for a in e.args)})"
    if op == "npow2":
        return f"next_power_of_2({_format(e.args[0], 0)})"
    prec = _PREC[op]
    if op == "add":
        text = _format(e.args[0], prec)
        for a in e.args[1:]:
            if a.op == "mul" and a.args[0].is_const and a.args[0].value < 0:
                neg = _nary("mul", [const(-a.args[0].value), *a.args[1:]])
                text += f" - {_format(neg, prec + 1)}"
            elif a.is_const and a.value < 0:
                text += f" - {-a.value}"
            else:
                text += f" + {_format(a, prec)}"
    elif op == "mul":
        text = " * ".join(_format(a, prec) for a in e.args)
    elif op == "sub":
        text = f"{_format(e.args[0], prec)} - {_format(e.args[1], prec + 1)}"
    else:  # floordiv
        text = f"{_format(e.args[0], prec)} // {_format(e.args[1], prec + 1)}"
    return f"({text})" if prec < parent_prec else text


# ----- parsing (no eval) ----------------------------------------------------
def parse_expr(text: str) -> Expr:
    """Parse the text form of an expression (as printed by ``str(expr)``).

    Accepts integers, identifiers, ``+ - * //``, unary minus, parentheses and
    the calls ``cdiv``, ``max``, ``min`` and ``next_power_of_2`` (also spelled
    ``triton.cdiv`` / ``triton.next_power_of_2``, as at a launch site).  Anything else raises
    :class:`ExprParseError`.  The text is parsed with :mod:`ast`, never run.
    """
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExprParseError(f"not an expression: {text!r} ({exc.msg})") from None
    return _from_ast(tree.body, text)


def _call_name(node: ast.AST) -> str:
    """``f`` of ``f(...)``, also ``triton.cdiv(...)`` / ``triton.next_power_of_2(...)`` as written at a launch."""
    if not isinstance(node, ast.Call):
        return ""
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) and node.func.value.id == "triton" \
            and node.func.attr in ("cdiv", "next_power_of_2"):
        return node.func.attr
    return ""


def _from_ast(node: ast.AST, text: str) -> Expr:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return const(node.value)
    if isinstance(node, ast.Name):
        return sym(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return const(-1) * _from_ast(node.operand, text)
    if isinstance(node, ast.BinOp):
        a, b = _from_ast(node.left, text), _from_ast(node.right, text)
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Mult):
            return a * b
        if isinstance(node.op, ast.FloorDiv):
            return a // b
    fname = _call_name(node)
    if fname in ("cdiv", "max", "min", "next_power_of_2") and not node.keywords:
        args = [_from_ast(a, text) for a in node.args]
        if fname == "next_power_of_2" and len(args) == 1:
            return next_pow2(args[0])
        if fname == "cdiv" and len(args) == 2:
            return cdiv(*args)
        if fname == "max" and args:
            return emax(*args)
        if fname == "min" and args:
            return emin(*args)
    raise ExprParseError(f"unsupported construct in expression {text!r}: {ast.dump(node)[:80]}")
