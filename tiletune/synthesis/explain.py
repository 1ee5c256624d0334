"""Words for the model and for infeasibility.

When nothing fits, :func:`explain_infeasible` says why in two parts:

1. the *conflict*: Z3's unsatisfiable core over the tracked constraints
   (``assert_and_track``; ``core.minimize`` on), each tracked name mapped
   back to its sentence -- e.g. "BLOCK_K >= 16 (tl.dot operand dimension)"
   and "UB: live tiles ... <= 196608 B per vector core".  Should Z3 time out,
   a deletion-based core is computed with the (complete) enumeration instead;
2. the *closest point*: among the points that satisfy every requirement
   except the capacities, the one whose total relative excess is smallest,
   with the bytes it needs, the bytes available and by how much it misses
   -- so the user knows what to change.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .constraints import Constraint, Model, build_model, evaluate
from .enumerate import enumerate_feasible
from .families import family_of
from .space import build_space
from .targets import get_target

__all__ = ["explain_infeasible", "unsat_core", "closest_point", "explain_config"]

_CAPACITY_KINDS = ("capacity", "numel")


def unsat_core(model: Model, timeout_ms: int = 5000) -> tuple[list[Constraint], str]:
    """The constraints of a minimal conflict, and how it was found (``"z3"`` or ``"enumeration"``)."""
    import z3

    solver, _, tracks = model.solver(timeout_ms=timeout_ms)
    result = solver.check()
    if result == z3.unsat:
        names = [str(b) for b in solver.unsat_core()]
        core = [tracks[n] for n in names if tracks.get(n) is not None]
        order = {c.name: i for i, c in enumerate(model.constraints)}
        core.sort(key=lambda c: order.get(c.name, 0))
        return core, "z3"
    # Z3 gave up (or, with non-numeric hints, saw less than the enumeration): delete one at a time.
    explicit = [c for c in model.constraints if not c.implicit]
    core = list(explicit)
    for c in list(explicit):
        trial = [x.name for x in explicit if x not in core or x is c]
        if enumerate_feasible(model, skip=trial).n == 0:
            core.remove(c)
    return core, "enumeration"


def closest_point(model: Model) -> Optional[dict[str, Any]]:
    """The point nearest to fitting: ``{"point", "violations": [(constraint, need, limit)]}``.

    Searched among points that meet every non-capacity requirement (falling
    back to the whole grid); the score is the sum over capacity constraints
    of ``max(0, need - limit) / limit``.
    """
    caps = [c for c in model.constraints if c.kind in _CAPACITY_KINDS]
    skip = [c.name for c in caps]
    table = enumerate_feasible(model, skip=skip)
    if table.n == 0:
        skip = [c.name for c in model.constraints if not c.implicit]
        table = enumerate_feasible(model, skip=skip)
    if table.n == 0:
        return None
    env = table.env()
    for k, v in model.space.env.items():
        env.setdefault(k, v)
    n = table.n
    score = np.zeros(n)
    per: list[tuple[Constraint, np.ndarray, np.ndarray]] = []
    for c in caps:
        need = np.broadcast_to(np.asarray(evaluate(c.need, env), dtype=np.float64), (n,))
        limit = np.broadcast_to(np.asarray(evaluate(c.limit, env), dtype=np.float64), (n,))
        score += np.maximum(0.0, need - limit) / np.maximum(limit, 1.0)
        per.append((c, need, limit))
    # tie-break towards small tiles (the usual way out is to shrink them)
    order = np.lexsort(tuple(table.idx[v.name] for v in reversed(model.space.vars)) + (score,))
    i = int(order[0])
    point = table.point(i)
    violations = [(c, int(need[i]), int(limit[i])) for c, need, limit in per if need[i] > limit[i]]
    return {"point": point, "violations": violations, "score": float(score[i])}


def _point_text(point: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in point.items())


def explain_infeasible(model: Model) -> str:
    """Why no point fits, in words (see the module docstring)."""
    sp = model.space
    lines: list[str] = []
    core, how = unsat_core(model)
    shown = [c for c in core if c.kind != "pow2"] or core
    if shown:
        lines.append("These requirements cannot all hold" + (" (Z3 unsat core):" if how == "z3" else ":"))
        for c in shown:
            lines.append(f"  - {c.text}")
    else:
        lines.append("The search space is empty.")
    near = closest_point(model)
    if near is not None and near["violations"]:
        parts = []
        for c, need, limit in near["violations"]:
            unit = c.unit
            parts.append(f"{c.label} needs {need} {unit} > {limit} {unit} ({need - limit} {unit} over)")
        lines.append(f"Closest point: {_point_text(near['point'])}: " + "; ".join(parts) + ".")
        lines.append(_advice(model, near))
    elif near is not None:
        lines.append(f"Closest point: {_point_text(near['point'])} (it fails a non-capacity requirement above).")
    fixed = sp.fixed
    if fixed:
        lines.append("Fixed values: " + ", ".join(f"{k}={v}" for k, v in fixed.items()) + " (these were not searched).")
    return "\n".join(lines)


def _advice(model: Model, near: dict[str, Any]) -> str:
    sp = model.space
    tips = []
    mins = [v.name for v in sp.tile_vars if near["point"].get(v.name) == v.values[0]]
    if len(mins) == 1:
        tips.append(f"{mins[0]} is already at its smallest value")
    elif mins:
        tips.append(f"{', '.join(mins)} are already at their smallest values")
    if sp.fixed:
        tips.append(f"reduce the fixed value(s) {', '.join(sp.fixed)}")
    tips.append(sp.family.fit_advice)
    return "To fit: " + "; ".join(tips) + "."


def explain_config(spec, kwargs: dict, shapes: dict, dtypes: dict, target) -> list[str]:
    """Why one Ascend config does not fit: per overflowing buffer, the bytes over and the rule with its source.

    One line per capacity constraint the config breaks, e.g. ``"UB overflows
    by 131072 B (327680 B > 196608 B on ascend910b3) under the rule: UB holds
    the peak of the vector buffers live at the same time (BiShengIR
    PlanMemory ...)"``; ``[]`` when every buffer fits.  A config whose certain
    UB tiles fit but whose estimated plan does not gets ``"UB may overflow:
    estimated N B > UB, certain M B fits ..."`` (it is accepted and ranked lower).  For a non-Ascend
    target the lines carry no rule.
    """
    t = get_target(target)
    tiling = {p.name for p in spec.tiling_params}
    consts = {k: v for k, v in kwargs.items() if k not in tiling and isinstance(v, (int, bool))}
    family = family_of(t)
    consts.update(family.check_consts(kwargs, t, default=True))
    space = build_space(spec, shapes, dtypes, t, None, consts, family=family, partial=True)
    model = build_model(space, strict=False)
    env: dict[str, Any] = dict(space.env)
    env.update({k: int(v) for k, v in kwargs.items() if k in tiling})
    lines = []
    fits: dict[str, int] = {}
    for c in model.constraints:
        if c.kind != "capacity" or not c.check or not c.symbols <= set(env):
            continue
        need, limit = int(evaluate(c.need, env)), int(evaluate(c.limit, env))
        if need <= limit:
            fits[c.name] = need
            continue
        rule = family.capacity_rule(c.name)
        text = f"{c.label} overflows by {need - limit} B ({need} B > {limit} B on {t.name})"
        detail = family.capacity_detail(c.name, spec, space.dtypes, env, need)
        text += f", {detail}," if detail else ""
        lines.append(text + (f" under the rule: {rule}" if rule else f": {c.text}"))
    estimate = model.footprint.get("ub_estimate")  # Ascend: the full UB plan, a risk next to the certain count
    certain = fits.get("ub", fits.get("ub:mix"))
    if estimate is not None and certain is not None and estimate.symbols() <= set(env):
        est = int(evaluate(estimate, env))
        if est > t.ub_bytes:
            rule = family.capacity_rule("ub.estimate")
            lines.append(f"UB may overflow: estimated {est} B > {t.ub_bytes} B, certain {certain} B fits "
                         f"(kept, ranked lower){f' under the rule: {rule}' if rule else ''}")
    return lines
