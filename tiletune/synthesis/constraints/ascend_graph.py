"""Rewrites of a kernel's dataflow graph before the Ascend UB plan (:mod:`.ascend_ub`) is replayed.

Each returns a copy of the graph changed the way Triton or Triton-Ascend changes the kernel before
BiShengIR plans its buffers: the side of an ``if`` Triton does not generate (rule 7 of
:mod:`.ascend_ub`), common subexpressions merged (rule 6), and a store under a mask computed from
loaded data lowered to a read of its destination, a select and a store (rule 9).
"""

from __future__ import annotations

import ast
import operator
import re
from typing import Mapping, Optional

from .ascend_dtypes import eval_condition, load_sources

__all__ = ["drop_untaken", "merge_common", "discrete_stores", "order_key", "side", "eval_const_condition"]


def side(line: int, branches) -> Optional[int]:
    """0 / 1 when ``line`` is in the then / else lines of an ``if``, else None."""
    for k, (a, b) in enumerate(branches):
        if a <= line <= b:
            return k
    return None


def drop_untaken(g, names: tuple, dtypes: dict, consts: Optional[Mapping[str, int]] = None):
    """The graph without the nodes of an ``if`` side Triton does not generate (rule 7), as a copy.

    A test that compares dtypes (``if a.dtype != b.dtype:``, ``if dtype is tl.int64:``) is a
    compile-time constant for given pointer dtypes; a dropped node's uses read its operands
    instead (the name keeps the value it had before the ``if``).
    """
    _, _, tests, fn = names
    pointers = set(dtypes)
    dead: list[tuple[int, int]] = []
    for test, then, other in tests:
        taken = eval_condition(test, names[0], dtypes, load_sources(fn, pointers, test.lineno))
        if taken is None and consts:
            taken = eval_const_condition(test, consts)
        if taken is not None:
            dead.append(other if taken else then)
    drop = [n for n in g.nodes if any(a <= (g.nodes[n].get("line") or 0) <= b for a, b in dead)
            and not str(n).startswith("param:")]
    if not drop:
        return g
    out = g.copy()
    for n in drop:
        for s in list(out.successors(n)):
            if out.nodes[s]["kind"] in ("elementwise", "reduce", "other"):
                out.nodes[s]["dtype"] = None  # typed from the dropped value: re-derived from its operands
            for p in list(out.predecessors(n)):
                out.add_edge(p, s)
        out.remove_node(n)
    return out


_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge}


def eval_const_condition(test: ast.expr, consts: Mapping[str, int]) -> Optional[bool]:
    """An ``if`` test on constexpr parameters whose values are known (``SPLIT_K == 1``, ``EVEN_K``,
    ``not HAS_BIAS``), folded as Triton folds a constexpr condition (only the taken side is generated:
    ``code_generator.py`` ``visit_If``); None when the test reads anything else."""
    def value(e: ast.expr) -> Optional[int]:
        if isinstance(e, ast.Constant) and isinstance(e.value, (bool, int)):
            return int(e.value)
        if isinstance(e, ast.Name) and e.id in consts:
            return int(consts[e.id])
        return None

    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = eval_const_condition(test.operand, consts)
        return None if inner is None else not inner
    if isinstance(test, ast.Compare):
        if len(test.ops) != 1 or type(test.ops[0]) not in _COMPARE:
            return None
        a, b = value(test.left), value(test.comparators[0])
        return None if a is None or b is None else bool(_COMPARE[type(test.ops[0])](a, b))
    v = value(test)
    return None if v is None else bool(v)


def order_key(n) -> tuple[int, int]:
    """Trace order of a graph node: ``n7`` by its number; ``n7.0``, ``n7.1`` (ops :func:`discrete_stores`
    inserts for the store ``n7``) just before it."""
    m = re.fullmatch(r"n(\d+)(?:\.(\d+))?", str(n))
    if m is None:
        return (0, 0)
    return int(m.group(1)), int(m.group(2)) if m.group(2) is not None else 9


#: What the select a data-masked store becomes reads as (``explain`` quotes it).
_SELECT_LABEL = ("select(mask, value, destination read back): a store under a mask from loaded data "
                 "(Triton-Ascend DiscreteMaskStoreConversion)")

#: Node kinds whose tile holds values read from memory: a mask computed from one is never a rectangle.
_READ_KINDS = ("load", "dot", "reduce", "scan", "atomic")


def discrete_stores(g):
    """The graph with each store under a mask computed from loaded data rewritten the way Triton-Ascend
    lowers it (rule 9), as a copy; ``g`` itself is unchanged.

    Triton-Ascend's first TTIR pass, ``discrete-mask-access-conversion`` (3.2.0 wheel
    ``backends/ascend/compiler.py`` ``ttir_to_linalg``; source
    ``third_party/ascend/lib/DiscreteMaskAccessConversion/DiscreteMaskAccessConversionPass.cpp``
    ``DiscreteMaskStoreConversion``), rewrites a store whose mask ``MaskState::parse`` cannot read as
    a rectangle into: a load of the whole destination tile, ``select(mask, value, loaded)``, and an
    unmasked store of the select (docs ``architecture_design_and_core_features.md`` 3.2.2.2.1).  ``parse``
    (``TritonToLinalg/MaskAnalysis.cpp`` l.81-130) reads constants, ``addi``, ``andi``, ``cmpi``,
    ``make_range``, ``splat``, ``broadcast``, ``expand_dims``, ``extsi``, ``divsi``, ``select`` and integer
    scalars, and fails on anything else, so a mask tile computed from a loaded tile (``~fill & in_range``
    with ``fill`` loaded) is always discrete.  The destination tile read back (a UB buffer of the
    store's shape in the pointer's element type) is then an operand of the select beside the value and
    the mask.  Masks from indices only are left as they are (most parse; those that do not, a tensor
    ``*`` or ``%`` in a mask, are not modelled).
    """
    order = sorted((n for n in g.nodes if not str(n).startswith("param:")), key=order_key)
    read: dict = {}
    for n in order:
        a = g.nodes[n]
        read[n] = a.get("shape") != [] and (a["kind"] in _READ_KINDS or any(read.get(p, False) for p in g.predecessors(n)))
    stores = [n for n in order if g.nodes[n]["kind"] == "store" and g.nodes[n].get("shape")
              and g.nodes[n].get("mask") in g and read.get(g.nodes[n]["mask"], False)]
    if not stores:
        return g
    out = g.copy()
    for n in stores:
        a = out.nodes[n]
        mask, value = a["mask"], a.get("value")
        back, select = f"{n}.0", f"{n}.1"
        out.add_node(back, kind="load", label=f"destination read back for {a.get('label')}", shape=a["shape"],
                     dtype=a.get("dtype"), line=a.get("line"))
        out.add_node(select, kind="elementwise", label=_SELECT_LABEL,
                     shape=a["shape"], dtype=a.get("dtype"), line=a.get("line"))
        for p in (mask, value, back):
            if p is not None and p in out:
                out.add_edge(p, select)
        for p in (mask, value):
            if p is not None and out.has_edge(p, n):
                out.remove_edge(p, n)
        out.add_edge(select, n)
    return out


def merge_common(g, loops, ifs):
    """The graph with common subexpressions merged (rule 6), as a copy; ``g`` itself is unchanged.

    Two elementwise/view nodes with the same source text, the same (merged) operands, shape and
    type, in the same loops and on the same side of every ``if``, are one value.
    """
    order = sorted((n for n in g.nodes if not str(n).startswith("param:")),
                   key=order_key)
    rep: dict = {}
    seen: dict = {}
    for n in order:
        a = g.nodes[n]
        label = a.get("label") or ""
        line = a.get("line") or 0
        if a["kind"] not in ("elementwise", "other") or not label or label.endswith("...") or a.get("shape") is None:
            continue
        where = (tuple(L for L in loops if L[0] <= line <= L[1]), tuple(side(line, br) for br in ifs))
        key = (a["kind"], label, tuple(sorted(str(rep.get(p, p)) for p in g.predecessors(n))),
               str(a.get("shape")), str(a.get("dtype")), where)
        if key in seen:
            rep[n] = seen[key]
        else:
            seen[key] = n
    if not rep:
        return g
    out = g.copy()
    for dup, keep in rep.items():
        for succ in list(out.successors(dup)):
            out.add_edge(keep, succ)
            for role in ("value", "mask"):  # a store's value / mask that was the duplicate is the kept one
                if out.nodes[succ].get(role) == dup:
                    out.nodes[succ][role] = keep
        out.remove_node(dup)
    return out
