"""Synthesis entry points: :func:`synthesize` and :func:`check_config`.

``synthesize(spec, shapes, dtypes, target)`` builds the search space
(:mod:`.space`), the constraint model (:mod:`.constraints`), enumerates every
feasible point (:mod:`.enumerate`), ranks them (:mod:`.cost`) and returns the
top K as :class:`~tiletune.synthesis.model.Candidate` objects.  Nothing
feasible raises :class:`~tiletune.errors.InfeasibleError` with an explanation
(:mod:`.explain`).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Sequence, Union

import os

import numpy as np

from ..analysis.model import KernelSpec
from ..errors import InfeasibleError, SynthesisError
from .constraints import Model, build_model, evaluate, evaluate_pred
from .constraints.ascend import RETRY_ENV
from .cost import cost_table, rank
from .enumerate import Table, apply_prune, enumerate_feasible
from .explain import explain_infeasible
from .families import family_of
from .model import Candidate, SynthesisResult, Target
from .space import NUM_WARPS, Space, build_space, required_shapes
from .targets import get_target

__all__ = ["synthesize", "check_config", "required_shapes", "build"]

TargetLike = Union[str, Mapping[str, Any], Target]

_SOFT_ORDER = {"capacity": 0, "warps": 1, "align": 2}


def build(
    spec: KernelSpec,
    shapes: Mapping[str, int],
    dtypes: Mapping[str, str],
    target: TargetLike,
    *,
    hints: Optional[Mapping[str, Sequence]] = None,
    fixed: Optional[Mapping[str, int]] = None,
) -> Model:
    """The constraint model for one problem (what :func:`synthesize` searches)."""
    t = get_target(target)
    space = build_space(spec, shapes, dtypes, t, hints, fixed, family=family_of(t))
    return build_model(space)


def _config_dict(space: Space, point: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for v in space.vars:
        out[v.name] = point[v.name]
    return out


def _kwarg_names(sp: Space) -> tuple[list[str], list[str]]:
    """The names a point's config kwargs come from: the tiling parameters (in signature order) and the
    hinted variables."""
    return [p.name for p in sp.spec.tiling_params], [v.name for v in sp.vars if v.kind == "hint"]


def _point_parts(sp: Space, point: Mapping[str, Any],
                 names: Optional[tuple[list[str], list[str]]] = None
                 ) -> tuple[dict[str, Any], Optional[int], Optional[int], dict[str, Any]]:
    """A point as a config's parts: ``(kwargs, num_warps, num_stages, extra)`` (``names``:
    :func:`_kwarg_names`, computed once by a caller that converts many points)."""
    tiling, hinted = names if names is not None else _kwarg_names(sp)
    kwargs: dict[str, Any] = {}
    for name in tiling:
        if name in point:
            kwargs[name] = int(point[name])
    for name in hinted:
        kwargs[name] = point[name]
    num_warps, num_stages, extra = sp.family.config_parts(point, sp.fixed)
    return kwargs, num_warps, num_stages, extra


#: Feasible spaces up to this size keep every point's modelled cost (the descent ranks its moves by it).
POINT_COSTS_MAX = 50_000


def _point_costs(model: Model, table: Table, costs: dict[str, np.ndarray]) -> dict[tuple, float]:
    """``{(sorted kwargs items, num_warps, num_stages): cost}`` for every point of ``table`` (empty past
    :data:`POINT_COSTS_MAX` points).  The points are read column by column (each variable's values taken
    once for all points), not built one by one through :meth:`Table.point`."""
    if table.n > POINT_COSTS_MAX:
        return {}
    sp = model.space
    names = _kwarg_names(sp)
    var_names = [v.name for v in sp.vars]
    columns = []
    for v in sp.vars:
        values = v.values
        columns.append([values[j] for j in table.idx[v.name].tolist()])
    rows = zip(*columns) if columns else [()] * table.n
    out: dict[tuple, float] = {}
    for row, cost in zip(rows, costs["cost"].tolist()):
        kwargs, num_warps, num_stages, _ = _point_parts(sp, dict(zip(var_names, row)), names)
        key = (tuple(sorted(kwargs.items())), num_warps, num_stages)
        out[key] = min(out.get(key, np.inf), float(cost))  # Ascend: the best multibuffer
    return out


def _make_candidate(model: Model, table: Table, costs: dict[str, np.ndarray], i: int) -> Candidate:
    sp = model.space
    point = table.point(i)
    kwargs, num_warps, num_stages, extra = _point_parts(sp, point)
    env = {k: v for k, v in sp.env.items()}
    for v in sp.vars:
        if v.numeric:
            env[v.name] = int(v.codes[v.values.index(point[v.name])])
    footprint = {}
    for key, e in model.footprint.items():
        try:
            footprint[key] = int(evaluate(e, env))
        except KeyError:
            pass
    terms = {k: float(a[i]) for k, a in costs.items() if k != "cost"}
    regs = terms.pop("regs_per_thread", 0)
    if sp.family.reports_registers:
        footprint["registers_per_thread"] = int(regs)
    return Candidate(
        kwargs=kwargs,
        num_warps=num_warps,
        num_stages=num_stages,
        extra=extra,
        cost=float(costs["cost"][i]),
        cost_terms=terms,
        footprint=footprint,
    )


def synthesize(
    spec: KernelSpec,
    shapes: Mapping[str, int],
    dtypes: Mapping[str, str],
    target: TargetLike,
    *,
    hints: Optional[Mapping[str, Sequence]] = None,
    prune: Optional[Sequence[Callable[[dict], bool]]] = None,
    fixed: Optional[Mapping[str, int]] = None,
    top_k: int = 16,
    point_costs: bool = False,
) -> SynthesisResult:
    """Ranked tilings of ``spec`` that fit ``target`` at these sizes and dtypes.

    ``shapes`` gives runtime integer arguments by name (see
    :func:`required_shapes`), ``dtypes`` the element type of each pointer
    parameter (``"fp16"``, ``"fp32"``, ``"bf16"``, ``"int8"``, ...).
    ``hints`` lists values for non-tiling knobs (``{"GROUP_SIZE_M": [1, 8]}``;
    they multiply the space and land in ``kwargs``; a hint on a tiling
    parameter, ``num_warps``, ``num_stages`` or ``multibuffer`` replaces that
    variable's domain).  ``prune`` predicates get each feasible point's config
    dict and return True to drop it.  ``fixed`` values are not searched (fixed
    at launch or by default) but enter every constraint; they are not put in
    the candidates' kwargs.  ``point_costs=True`` also returns every
    feasible point's modelled cost (``SynthesisResult.point_costs``; the
    measured search ranks its moves by it).

    Raises :class:`SynthesisError` for missing shapes or dtypes (naming
    them), :class:`InfeasibleError` with an explanation when nothing fits.
    """
    t = get_target(target)
    if top_k < 1:
        raise SynthesisError(f"top_k must be >= 1, got {top_k}")
    model = build(spec, shapes, dtypes, t, hints=hints, fixed=fixed)
    space = model.space
    table = enumerate_feasible(model)
    where = _where(spec, space)
    relaxed: list[str] = []
    if table.n == 0:
        # Preferences (register estimate, warps per tile, NVIDIA vector width) give way
        # before we call a problem infeasible: spilling or idle threads still run.
        soft = sorted((c for c in model.constraints if c.soft), key=lambda c: _SOFT_ORDER.get(c.kind, 9))
        for i in range(1, len(soft) + 1):
            table = enumerate_feasible(model, skip=[c.name for c in soft[:i]])
            if table.n:
                relaxed = [c.name for c in soft[:i]]
                break
    if table.n == 0:
        raise InfeasibleError(f"no tiling of kernel {spec.name!r} fits {t.name}{where}", explain_infeasible(model))
    model_feasible = table.n
    table = apply_prune(table, prune, lambda pt: _config_dict(space, pt))
    if table.n == 0:
        raise InfeasibleError(
            f"no tiling of kernel {spec.name!r} fits {t.name}{where}",
            f"all {model_feasible} feasible points were removed by the prune predicates",
        )
    costs = cost_table(model, table)
    chosen = rank(model, table, costs, top_k)
    candidates = [_make_candidate(model, table, costs, i) for i in chosen]
    summary = model.summary()
    if relaxed:
        summary.append(
            "note: no point met the preferences " + ", ".join(relaxed)
            + "; they were relaxed (expect register spills or idle threads)"
        )
    summary.append(f"feasible points: {table.n}" + (f" ({table.pruned} more removed by prune predicates)" if table.pruned else ""))
    if table.removed:
        summary.append("ruled out while enumerating, by the first constraint each breaks "
                       "(a count of tile-size prefixes, each standing for every point that extends it):")
    for name, count in table.removed.items():
        summary.append(f"  [{name}] {count}")
    return SynthesisResult(
        kernel=spec.name,
        target=t.name,
        candidates=candidates,
        feasible_count=table.n,
        model_summary=summary,
        point_costs=_point_costs(model, table, costs) if point_costs else {},
    )


def _where(spec: KernelSpec, space: Space) -> str:
    parts = [f"{k}={v}" for k, v in space.shapes.items()]
    dts = [f"{k}:{v}" for k, v in space.dtypes.items()]
    text = ""
    if parts:
        text += " at " + ", ".join(parts)
    if dts:
        text += " (" + ", ".join(dts) + ")"
    return text


def check_config(
    spec: KernelSpec,
    kwargs: Mapping[str, Any],
    num_warps: Optional[int],
    num_stages: Optional[int],
    shapes: Optional[Mapping[str, int]],
    dtypes: Mapping[str, str],
    target: TargetLike,
    *,
    proposed: bool = False,
) -> list[str]:
    """Why a hand-written config cannot work on ``target`` ([] when nothing is known to be wrong).

    Checks the hard limits only: minimum sizes and powers of two of tiling
    parameters, on-chip capacities (shared memory; UB, L1, L0A/L0B, L0C),
    Triton's largest tensor, Ascend alignment and cube fractals,
    ``tl.static_assert`` conditions, and -- when ``shapes`` are given -- that
    whole-extent (inner) tiles cover their extent.  Constraints that need a
    value not given (a shape, a dtype, a tiling parameter missing from
    ``kwargs`` without a default) are skipped.  The register estimate is a
    synthesis preference, not reported (spilling still runs).

    ``proposed``: the config is one tiletune proposes (the measured search's
    moves), not the user's, and is held to what synthesis holds its own
    candidates to: also outside a known compiler defect's region (kind
    ``defect``, :mod:`.constraints.nvidia_defects`) and, where a tile's
    extent is known, under the domain's upper bound (kind ``hi``: a tile past
    the next power of two of its extent covers the extent in as many blocks,
    more of each masked off, so it is never better).  The cap on a tile of
    unknown extent (``max_unbound_tile``) is synthesis's preference, not a
    bound: the search may move past it.  A user's own config is judged by
    neither.
    """
    t = get_target(target)
    tiling = {p.name: p for p in spec.tiling_params}
    consts = {k: v for k, v in kwargs.items() if k not in tiling and isinstance(v, (int, bool))}
    family = family_of(t)
    consts.update(family.check_consts(kwargs, t, default=False))
    space, model = _check_model(spec, shapes or {}, dtypes or {}, t, consts)
    env: dict[str, Any] = dict(space.env)
    for name, p in tiling.items():
        if name in kwargs:
            env[name] = int(kwargs[name])
        elif p.default is not None:
            try:
                env[name] = int(p.default)
            except ValueError:
                pass
    family.check_env(env, kwargs, num_warps, num_stages, t)
    out: list[str] = []
    for c in model.constraints:
        if not c.check and not (proposed and c.kind == "defect"):
            continue
        if c.kind == "hi" and not (proposed and next(iter(c.symbols)) in space.bound_values):
            continue
        if c.kind == "domain" and c.symbols and next(iter(c.symbols)) != NUM_WARPS:
            continue
        if c.kind == "pow2":
            name = next(iter(c.symbols))
            if not tiling.get(name) or not tiling[name].power_of_two:
                continue
        if c.kind == "lo" and ">= " in c.text and "(the tile holds" in c.text and not shapes:
            continue
        if not c.symbols <= set(env):
            continue
        ok = evaluate_pred(c.pred, env)
        if not bool(np.all(ok)):
            out.append(_violation_text(c, env, t))
    return out


_CHECK_MODELS: dict[tuple, tuple] = {}
#: Environment variables read while a model is built (they change it): part of ``_CHECK_MODELS``'s key.
_MODEL_ENV = (RETRY_ENV,)


def _check_model(spec: KernelSpec, shapes: Mapping[str, int], dtypes: Mapping[str, str], t: Target, consts: dict) -> tuple:
    """(space, model) for :func:`check_config`, built once per kernel and set of
    non-tiling values: a kernel's hand-written configs (the lint checks dozens
    per kernel) differ only in the values the model is evaluated at."""
    key = (id(spec), t, tuple(sorted(shapes.items())), tuple(sorted(dtypes.items())), tuple(sorted(consts.items())),
           tuple(os.environ.get(v) for v in _MODEL_ENV))
    hit = _CHECK_MODELS.get(key)
    if hit is not None and hit[0] is spec:  # the id of a collected spec may be reused
        return hit[1], hit[2]
    space = build_space(spec, shapes, dtypes, t, None, consts, family=family_of(t), partial=True)
    model = build_model(space, strict=False)
    if len(_CHECK_MODELS) >= 64:
        _CHECK_MODELS.pop(next(iter(_CHECK_MODELS)))
    _CHECK_MODELS[key] = (spec, space, model)
    return space, model


def _violation_text(c, env: Mapping[str, Any], t: Target) -> str:
    if c.kind in ("lo", "pow2", "domain"):
        name = next(iter(c.symbols))
        return f"{name}={env.get(name)} violates: {c.text}"
    if c.kind == "capacity":
        return c.violation(env, t.name)
    if c.kind == "numel":
        return c.violation(env, t.name)
    return c.violation(env, t.name)
