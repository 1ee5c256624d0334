"""Probe values for the static-vs-IR harness that do not lie (issue 24, item 1).

A probe config is only evidence if the kernel lowered at it looks like a real
launch.  Values come, in this order, from:

* the library's first autotune config (tiling parameters);
* the kernel's own launches in its library, evaluated: literals, and
  expressions over the kernel's size constexprs such as
  ``min(64, triton.next_power_of_2(K))`` (:func:`launch_values`);
* what each constexpr does in the kernel's live source (:func:`constexpr_kinds`):
  a *flag* (only tested: ``if USE_G:``, ``X is None``, ``not X``) is probed on at
  one point and off at the other; a *choice* (compared with strings) takes the
  strings it is compared with; a *size* (used in arithmetic, a ``tl.arange``
  bound, a ``static_range`` count) gets a realistic size, never 1 (a unit size
  lets Triton fold a branch or a tile away and the IR "loses" a parameter);
* signature defaults for anything else.

:func:`probe_points` gives two base points: flags on with sizes of
``SIZES[0]`` (counts ``COUNTS[0]``), flags off with sizes of ``SIZES[1]``
(counts ``COUNTS[1]``).
"""

from __future__ import annotations

import ast
import math
import textwrap
from typing import Any, Dict, List, Mapping, Optional, Sequence

TILE_PROBE = 32
#: Realistic sizes for size constexprs (head dims, conv widths, group counts) at the two base points.
SIZES = (64, 128)

#: Realistic counts for constexprs that bound a ``tl.static_range`` (conv widths, unroll counts): small,
#: since the IR holds one copy of the body per step.
COUNTS = (4, 8)

FLAG, CHOICE, SIZE, COUNT, DTYPE, OTHER = "flag", "choice", "size", "count", "dtype", "other"


def _function_def(src: str) -> Optional[ast.FunctionDef]:
    try:
        tree = ast.parse(textwrap.dedent(src))
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            return node
    return None


def _parents(fn: ast.AST) -> Dict[int, ast.AST]:
    out: Dict[int, ast.AST] = {}
    for node in ast.walk(fn):
        for child in ast.iter_child_nodes(node):
            out[id(child)] = node
    return out


def _callee(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def constexpr_kinds(src: str, names: Sequence[str]) -> Dict[str, Any]:
    """``{name: (kind, strings)}`` for each constexpr ``names`` of the kernel source ``src``.

    kind is :data:`FLAG` when every use tests it (``if X``, ``X and Y``,
    ``not X``, ``X is None``, a ternary's test), :data:`CHOICE` when it is
    compared with string literals (``strings`` lists them, in source order),
    :data:`DTYPE` when it is an element type (``x.to(D)``, ``dtype=D``),
    :data:`COUNT` when it bounds a ``tl.static_range``, :data:`SIZE` when any other use computes with
    it, :data:`OTHER` when unused.
    """
    fn = _function_def(src)
    wanted = set(names)
    uses: Dict[str, set] = {n: set() for n in names}
    strings: Dict[str, List[str]] = {n: [] for n in names}
    if fn is None:
        return {n: (OTHER, []) for n in names}
    parents = _parents(fn)
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in wanted):
            continue
        parent = parents.get(id(node))
        if isinstance(parent, ast.Call) and node in parent.args and _callee(parent) == "static_range":
            uses[node.id].add(COUNT)
        elif (isinstance(parent, ast.keyword) and parent.arg == "dtype") or (
                isinstance(parent, ast.Call) and node in parent.args and _callee(parent) in ("to", "cast")):
            uses[node.id].add(DTYPE)  # x.to(OUT_DTYPE), tl.zeros(..., dtype=ACC_DTYPE)
        elif isinstance(parent, (ast.If, ast.IfExp, ast.While, ast.Assert)) and parent.test is node:
            uses[node.id].add(FLAG)
        elif isinstance(parent, (ast.BoolOp,)) or (isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)):
            uses[node.id].add(FLAG)
        elif isinstance(parent, ast.Compare):
            others = [parent.left, *parent.comparators]
            lits = [o.value for o in others if isinstance(o, ast.Constant) and isinstance(o.value, str)]
            if lits:
                uses[node.id].add(CHOICE)
                strings[node.id] += [s for s in lits if s not in strings[node.id]]
            elif all(isinstance(op, (ast.Is, ast.IsNot)) for op in parent.ops):
                uses[node.id].add(FLAG)
            else:
                uses[node.id].add(SIZE)
        else:
            uses[node.id].add(SIZE)
    out = {}
    for n in names:
        u = uses[n]
        kind = DTYPE if DTYPE in u else COUNT if COUNT in u else SIZE if SIZE in u else CHOICE if CHOICE in u else FLAG if FLAG in u else OTHER
        out[n] = (kind, strings[n])
    return out


_SAFE_BUILTINS = {"min": min, "max": max, "int": int, "abs": abs, "pow": pow, "round": round, "bool": bool,
                  "True": True, "False": False, "None": None, "len": len}


def _evaluate(text: str, env: Mapping[str, Any]) -> Any:
    """The value of a launch argument's source text over ``env``, or raises (names it does not know,
    anything that is not arithmetic over sizes and Triton's host helpers)."""
    import triton

    tree = ast.parse(text, mode="eval")
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    scope = {"triton": triton, "math": math, **_SAFE_BUILTINS, **env}
    missing = names - set(scope)
    if missing:
        raise NameError(", ".join(sorted(missing)))
    return eval(compile(tree, "<launch>", "eval"), {"__builtins__": {}}, scope)  # noqa: S307 - harness only


def _host_assignments(path: str, line: int) -> List[tuple]:
    """``(line, name, expr)`` of the ``name = expr`` (and ``a, b = x, y``) statements of the function
    around ``line`` of ``path`` that come before it."""
    tree = _FILE_TREES.get(path)
    if tree is None:
        try:
            tree = ast.parse(open(path, encoding="utf-8", errors="replace").read())
        except (OSError, SyntaxError):
            tree = ast.Module(body=[], type_ignores=[])
        _FILE_TREES[path] = tree
    around = [f for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
              and f.lineno <= line <= (f.end_lineno or f.lineno)]
    if not around:
        return []
    fn = max(around, key=lambda f: f.lineno)  # the innermost
    out = []
    for a in ast.walk(fn):
        if not (isinstance(a, ast.Assign) and a.lineno < line and len(a.targets) == 1):
            continue
        target, value = a.targets[0], a.value
        if isinstance(target, ast.Name):
            out.append((a.lineno, target.id, value))
        elif isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
            # BK, BV = max(triton.next_power_of_2(K), 16), max(triton.next_power_of_2(V), 16)
            out += [(a.lineno, t.id, v) for t, v in zip(target.elts, value.elts) if isinstance(t, ast.Name)]
    return sorted(out, key=lambda x: x[0])


_FILE_TREES: Dict[str, ast.Module] = {}


def launch_values(spec: Any, env: Mapping[str, Any], module_globals: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """Constexpr values the kernel's launches give (first launch that gives one wins), evaluated over
    ``env`` (the probe point's sizes: a launch passing ``BK=min(64, triton.next_power_of_2(K))`` gets
    the ``K`` of the point), the module's constants and the launcher's own assignments before the
    launch (``BK = min(64, ...)`` then ``BK=BK``).  Arguments that read host state (``x.stride(0)``)
    are left out."""
    constants = {k: v for k, v in (module_globals or {}).items()
                 if not k.startswith("__") and (v is None or isinstance(v, (bool, int, float, str)))}
    out: Dict[str, Any] = {}
    for site in list(spec.launches) + list(getattr(spec, "project_launches", [])):
        scope = {**constants, **env}
        for _, name, value in _host_assignments(site.file or spec.file, site.span.line):
            try:
                scope[name] = _evaluate(ast.unparse(value), scope)
            except Exception:  # host state (a tensor's shape): the point's size stands, if any
                if name not in env:
                    scope.pop(name, None)
        for name, text in site.fixed.items():
            if name in out:
                continue
            try:
                value = _evaluate(text, scope)
            except Exception:  # host state, unknown names: the launch does not say
                continue
            if value is None or isinstance(value, (bool, int, float, str)):
                out[name] = value
    return out


def _default(p: Any) -> Any:
    if not getattr(p, "has_default", False):
        return NotImplemented
    d = p.default
    return getattr(d, "value", d)  # tl.constexpr(8) -> 8


def probe_points(spec: Any, jf: Any, src: str, module_globals: Optional[Mapping[str, Any]] = None
                 ) -> List[Dict[str, Any]]:
    """Two base probe configs (constexpr name -> value) for the live kernel ``jf`` with static reading
    ``spec``: flags on and sizes of ``SIZES[0]``, then flags off and sizes of ``SIZES[1]``."""
    constexprs = [p for p in jf.params if p.is_constexpr]
    kinds = constexpr_kinds(src, [p.name for p in constexprs])
    tiling = {p.name for p in spec.params if p.tiling}
    first = dict(spec.autotune.configs[0].kwargs) if spec.autotune and spec.autotune.configs else {}
    points = []
    for index, size in enumerate(SIZES):
        on = index == 0
        values: Dict[str, Any] = {}
        sizes = {p.name: size if kinds[p.name][0] == SIZE else COUNTS[index]
                 for p in constexprs if kinds[p.name][0] in (SIZE, COUNT) and p.name not in tiling}
        launched = launch_values(spec, {**sizes, **{n: first[n] for n in first if isinstance(first[n], int)}},
                                 module_globals)
        for p in constexprs:
            kind, strings = kinds[p.name]
            default = _default(p)
            if p.name in first:
                values[p.name] = first[p.name]
            elif p.name in launched:
                values[p.name] = launched[p.name]
            elif p.name in tiling:
                # a tile that is also a static_range count (a conv width) takes a count's realistic size
                values[p.name] = COUNTS[index] if kind == COUNT else TILE_PROBE
            elif kind == FLAG and (default is NotImplemented or isinstance(default, bool)):
                values[p.name] = on
            elif kind == CHOICE and strings:
                values[p.name] = strings[0] if on or len(strings) == 1 else strings[1]
            elif default is not NotImplemented:
                values[p.name] = default
            elif kind == DTYPE:
                import triton.language as tl

                values[p.name] = tl.float32  # an element type; an integer would not lower
            elif kind in (SIZE, COUNT):
                values[p.name] = sizes[p.name]
            else:
                values[p.name] = 1
        points.append(values)
    return points
