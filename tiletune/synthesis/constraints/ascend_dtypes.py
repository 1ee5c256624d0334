"""Element types of a kernel's tiles where the analysis left them open, for the Ascend UB count.

The analysis records a tile's dtype when it can read it from the call
(``tl.zeros(..., dtype=tl.float32)``, a load of ``elem:<ptr>``).  Kernels often
name the type first and pass the name::

    dtype = inp.type.element_ty
    acc_type = tl.float32 if dtype is tl.bfloat16 else dtype
    acc = tl.full([BLOCK_M, BLOCK_N], value=min_value, dtype=acc_type)

Triton evaluates such names at compile time (``tl.constexpr`` folding of a
``dtype`` object: ``triton/compiler/code_generator.py`` ``visit_IfExp`` takes
the branch of a constant condition, ``visit_Compare`` folds ``is`` / ``==`` of
two constants), so for given pointer dtypes the tile's type is known.  This
module replays that folding over the kernel's own assignments, and gives an
elementwise or reduction result of open type the type Triton's promotion gives
it: the widest float among its operands, else the widest integer
(``triton/language/semantic.py`` ``computation_type_impl``: a float operand wins,
and of two floats or two integers the wider).  What it cannot decide stays None
(the caller counts 4 bytes, as before).
"""

from __future__ import annotations

import ast
import functools
from typing import Mapping, Optional

from ...analysis.model import DTYPE_BYTES
from ...errors import SynthesisError
from ..space import normalize_dtype, resolve_dtype

__all__ = ["dtype_names", "line_dtypes", "eval_dtype", "eval_condition", "label_dtype", "promoted"]

_MAX_DEPTH = 8


def dtype_names(fn: ast.FunctionDef) -> dict[str, ast.expr]:
    """The kernel's names bound once, by a plain ``name = expr`` (a name bound twice is left out)."""
    seen: dict[str, Optional[ast.expr]] = {}
    for node in ast.walk(fn):
        targets = []
        if isinstance(node, ast.Assign):
            targets = [(t, node.value) for t in node.targets]
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            targets = [(node.target, node.value)]
        elif isinstance(node, (ast.For, ast.comprehension)):
            targets = [(node.target, None)]
        for t, v in targets:
            if isinstance(t, ast.Name):
                seen[t.id] = None if (t.id in seen or isinstance(node, ast.AugAssign)) else v
            else:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        seen[n.id] = None
    return {k: v for k, v in seen.items() if v is not None}


def line_dtypes(fn: ast.FunctionDef) -> dict[int, ast.expr]:
    """Per source line, the type expression of the one call on it that names a type
    (``dtype=<expr>``, or ``.to(<expr>)``); lines with several such calls are left out.

    The analysis' node labels are shortened, so the type is read from the source.
    """
    found: dict[int, list[ast.expr]] = {}
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        typed = _call_dtype(node)
        if typed is not None:
            found.setdefault(node.lineno, []).append(typed)
    return {line: exprs[0] for line, exprs in found.items() if len(exprs) == 1}


def _call_dtype(call: ast.Call) -> Optional[ast.expr]:
    """The type expression a call names: its ``dtype=`` keyword, or the argument of ``.to(...)``."""
    for kw in call.keywords:
        if kw.arg == "dtype":
            return kw.value
    if isinstance(call.func, ast.Attribute) and call.func.attr == "to" and call.args:
        return call.args[0]
    return None


def _dotted(e: ast.expr) -> Optional[list[str]]:
    parts = []
    while isinstance(e, ast.Attribute):
        parts.append(e.attr)
        e = e.value
    if isinstance(e, ast.Name):
        parts.append(e.id)
        return parts[::-1]
    return None


def _named_dtype(text: str) -> Optional[str]:
    try:
        return normalize_dtype(text)
    except SynthesisError:
        return None


def eval_dtype(e: ast.expr, names: Mapping[str, ast.expr], dtypes: Mapping[str, str], depth: int = 0,
               loads: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """The dtype an expression denotes for pointer dtypes ``dtypes``, or None when it cannot be decided.

    Reads ``tl.float32`` (any ``tl``/``triton.language`` spelling), ``p.dtype.element_ty`` /
    ``p.type.element_ty`` of a pointer parameter ``p``, names bound once in the kernel, and
    ``a if cond else b`` whose condition compares two such dtypes with ``is``/``is not``/``==``/``!=``,
    and ``x.dtype`` of a name ``loads`` maps to the pointer it is loaded from.
    """
    loads = loads or {}
    if depth > _MAX_DEPTH:
        return None
    if (isinstance(e, ast.Attribute) and e.attr == "dtype" and isinstance(e.value, ast.Name)
            and e.value.id in loads):
        return dtypes.get(loads[e.value.id])  # ``x.dtype`` of ``x = tl.load(p + ...)``: p's element type
    parts = _dotted(e)
    if parts is not None:
        if len(parts) == 1:
            if parts[0] in names:
                return eval_dtype(names[parts[0]], names, dtypes, depth + 1)
            return None
        if parts[-1] == "element_ty" and len(parts) == 3 and parts[1] in ("dtype", "type"):
            return dtypes.get(parts[0])
        if parts[0] in ("tl", "triton", "torch"):
            return _named_dtype(parts[-1])
        return None
    if isinstance(e, ast.IfExp):
        test = _eval_test(e.test, names, dtypes, depth + 1)
        if test is None:
            return None
        return eval_dtype(e.body if test else e.orelse, names, dtypes, depth + 1)
    return None


def eval_condition(e: ast.expr, names: Mapping[str, ast.expr], dtypes: Mapping[str, str],
                   loads: Mapping[str, str]) -> Optional[bool]:
    """An ``if`` test that compares two dtypes, folded as Triton folds it at compile time (only the
    taken side of a constant condition is generated: ``code_generator.py`` ``visit_If``); None when
    it is not such a test or cannot be decided."""
    return _eval_test(e, names, dtypes, 0, loads)


def load_sources(fn: ast.FunctionDef, pointers: set, before: int) -> dict[str, str]:
    """Names whose every binding above line ``before`` is ``tl.load(<p> ...)`` of one pointer
    parameter ``p``: name -> ``p`` (what ``name.dtype`` is at that line)."""
    found: dict[str, set] = {}
    for line, name, base in _bindings(fn):
        if line < before:
            found.setdefault(name, set()).add(base if base in pointers else None)
    return {k: next(iter(v)) for k, v in found.items() if len(v) == 1 and None not in v}


@functools.lru_cache(maxsize=256)
def _bindings(fn: ast.FunctionDef) -> tuple[tuple[int, str, Optional[str]], ...]:
    """Every plain ``name = value`` of ``fn``: (line, name, the pointer a ``tl.load`` of it reads or None),
    walked once per function (:func:`load_sources` asks once per ``if`` of every synthesis)."""
    out = []
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        v = node.value
        base = None
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "load" and v.args:
            base = _base_name(v.args[0])
        out.append((node.lineno, node.targets[0].id, base))
    return tuple(out)


def _base_name(e: ast.expr) -> Optional[str]:
    """The leftmost name of a pointer expression (``p + offs`` -> ``p``)."""
    while isinstance(e, ast.BinOp):
        e = e.left
    return e.id if isinstance(e, ast.Name) else None


def _eval_test(e: ast.expr, names, dtypes, depth: int, loads: Optional[Mapping[str, str]] = None) -> Optional[bool]:
    """A comparison of two dtypes (``is``, ``is not``, ``==``, ``!=``), folded; None when undecidable."""
    if not (isinstance(e, ast.Compare) and len(e.ops) == 1 and len(e.comparators) == 1):
        return None
    a = eval_dtype(e.left, names, dtypes, depth, loads)
    b = eval_dtype(e.comparators[0], names, dtypes, depth, loads)
    if a is None or b is None:
        return None
    op = e.ops[0]
    if isinstance(op, (ast.Is, ast.Eq)):
        return a == b
    if isinstance(op, (ast.IsNot, ast.NotEq)):
        return a != b
    return None


def label_dtype(label: str, names: Mapping[str, ast.expr], dtypes: Mapping[str, str]) -> Optional[str]:
    """The dtype a node's source text names: ``dtype=<expr>`` of a call, or ``.to(<expr>)``."""
    try:
        tree = ast.parse(label.strip(), mode="eval")
    except SyntaxError:
        return None
    call = tree.body
    typed = _call_dtype(call) if isinstance(call, ast.Call) else None
    return eval_dtype(typed, names, dtypes) if typed is not None else None


def promoted(operands: list[Optional[str]], dtypes: Mapping[str, str]) -> Optional[str]:
    """The result type of an elementwise op or reduction on tiles of these (analysis) dtypes.

    None when any operand's type is open (the promotion needs all of them).
    """
    known = [resolve_dtype(d, dtypes) for d in operands]
    if not known or any(d is None or d not in DTYPE_BYTES for d in known):
        return None
    floats = [d for d in known if d.startswith(("fp", "bf"))]
    pool = floats or known
    return max(pool, key=lambda d: DTYPE_BYTES[d])
