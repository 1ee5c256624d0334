"""Candidates stage of the kernel autotuner: the configs one key is tuned over.

``configs=[]``: the kernel's analysis, the launch's sizes and dtypes and the
target give a ranked list of feasible tilings (:func:`tiletune.synthesis.synthesize`),
with ``hints`` values and Triton's own pruning (``prune_configs_by``) applied.
Explicit configs: Triton's pruning over them.  Then the grid rules: a
launch grid that cannot follow a tuned tile is an error naming the fix.

:class:`CandidatesStage` is a value: it is built from what it needs (the
kernel, its analysis, the user's configs, pruning, hints, ``top_k`` and
``search``, the target, the search breadth) and :meth:`CandidatesStage.run`
returns a :class:`Candidates` (the list, the synthesis context the search
reuses, the IR oracle's reading, the breadth).  It reads no tuner's
attributes; :class:`tiletune.runtime.autotuner.Autotuner` builds one per launch.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple

import triton

from tiletune.errors import TiletuneWarning, TuningError

from . import bench as _bench
from . import distributed as _dd

from .notices import user_stacklevel, warn_missing_key, warn_untuned
from .binding import synthesis_shapes
from .parallel_compile import describe_error
from .report import TuningReport, config_str
from .search import resolve_search

__all__ = ["Candidates", "CandidatesStage", "MetaParameterConflict", "SynthesisContext", "agreed_candidates",
           "incomplete_message"]

Config = triton.Config

#: How much wider the measured search is when the analysis is incomplete.
INCOMPLETE_BREADTH = 2.0

#: Values tried for a tiling parameter only Triton's IR revealed, and over how many leading candidates.
IR_TILE_VALUES = (16, 32, 64, 128)
IR_TILE_BASES = 4


#: Why the static reader could not find a helper at all (the resolver's words): making it importable helps.
_NOT_FOUND = ("not found from", "cannot be parsed", "import cycle", "import chain deeper")


def incomplete_message(kernel_name: str, spec: Any, oracle_on: bool) -> str:
    """The warning for a kernel whose static reading is incomplete: the unknowns by kind, and per kind the
    fix that applies.  "Make it importable" only for helpers the static reader could not find; a helper
    it followed, or an op it does not model, is read from Triton's IR by the oracle at the first tuning
    (``oracle_on``), else ``TILETUNE_IR_ORACLE=1`` turns that on."""
    followed = {k.rsplit(":", 1)[-1] for k in (spec.helpers or {})}
    unfound = [r for r in spec.incomplete if r.startswith("unresolved helper") and any(w in r for w in _NOT_FOUND)]
    helpers = [r for r in spec.incomplete if r.startswith("unresolved helper") and r not in unfound]
    # a helper bound at run time (``f = importlib.import_module(...).f``, a factory): no def to follow
    unseen = [r for r in helpers if not any(f" {name}()" in r for name in followed)]
    helpers = [r for r in helpers if r not in unseen]
    rest = [r for r in spec.incomplete if r not in unfound and r not in helpers and r not in unseen]

    def _items(reasons: List[str]) -> str:
        text = "; ".join(reasons[:3])
        return text + (f" (+{len(reasons) - 3} more)" if len(reasons) > 3 else "")

    parts = []
    if unfound:
        parts.append(f"helpers it cannot find ({_items(unfound)}): make them importable from the kernel's package")
    if unseen:
        parts.append(f"helpers bound at run time, with no def or import it can follow ({_items(unseen)})")
    if helpers:
        parts.append(f"results of helpers it followed but cannot compute ({_items(helpers)})")
    if rest:
        parts.append(f"what it does not model ({_items(rest)})")
    if helpers or rest or unseen:
        parts.append("Triton's IR is read at the first tuning of each key: candidates Triton refuses are dropped and "
                     "tile parameters the IR shows are searched (verbose=True says what it found)" if oracle_on else
                     "set TILETUNE_IR_ORACLE=1 to have Triton's IR read at the first tuning (the kernel is lowered in "
                     "a child process)")
    return (f"tiletune: the static analysis of kernel {kernel_name!r} is incomplete: {'; '.join(parts)}. "
            "configs=[] keeps only configs safe under the unknowns and measures more of them instead of trusting "
            "the model; or pass configs=[...]")


class MetaParameterConflict(TuningError, ValueError):
    """A tuned parameter was also passed at launch (a ValueError, as in Triton)."""


@dataclass
class SynthesisContext:
    """What one key's synthesis worked from: the search's feasibility check and first batch reuse it.

    ``costs`` maps ``config_str`` of each candidate to its modelled cost;
    ``tiling`` names the parameters synthesis searched (the descent's moves);
    ``point_costs`` maps every feasible point, ``(sorted kwargs items,
    num_warps, num_stages)`` as the candidates' configs carry them, to its
    modelled cost (:meth:`cost`).
    """

    spec: Any
    shapes: Dict[str, int]
    dtypes: Dict[str, str]
    fixed: Dict[str, Any]
    target: Any
    tiling: List[str]
    costs: Dict[str, float] = field(default_factory=dict)
    point_costs: Dict[tuple, float] = field(default_factory=dict, repr=False)
    _tiling_costs: Optional[Dict[tuple, float]] = field(default=None, init=False, repr=False)

    def cost(self, kwargs: Mapping[str, Any], num_warps: Optional[int], num_stages: Optional[int]) -> Optional[float]:
        """The modelled cost of this config, or None (not a feasible point the model enumerated).

        With ``num_warps``/``num_stages`` None (the interpreter's points), the
        best cost of the tiling over them."""
        items = tuple(sorted(kwargs.items()))
        if num_warps is not None and num_stages is not None:
            return self.point_costs.get((items, num_warps, num_stages))
        if self._tiling_costs is None:
            self._tiling_costs = {}
            for (its, _, _), c in self.point_costs.items():
                self._tiling_costs[its] = min(self._tiling_costs.get(its, c), c)
        return self._tiling_costs.get(items)

    def by_cost(self) -> List[tuple]:
        """Every feasible point the model enumerated, as :attr:`point_costs` keys it (``(sorted kwargs items,
        num_warps, num_stages)``), cheapest modelled cost first (ties in enumeration order)."""
        return sorted(self.point_costs, key=self.point_costs.__getitem__)

    def space_size(self, launch_options: bool = True) -> int:
        """How many feasible configs the model enumerated (0: too many to keep, see ``point_costs``); with
        ``launch_options`` False (the interpreter) the tilings, whatever their num_warps and num_stages."""
        if launch_options:
            return len(self.point_costs)
        return len({items for items, _, _ in self.point_costs})

    def domain(self, name: str, default: Any) -> list:
        """The values synthesis considers for ``name`` (``num_warps``, ``num_stages``), else ``default``."""
        try:
            from tiletune.synthesis.families import family_of
            from tiletune.synthesis.space import build_space

            space = build_space(self.spec, self.shapes, self.dtypes, self.target, None, self.fixed,
                                family=family_of(self.target))
            for v in space.vars:
                if v.name == name:
                    return list(v.values)
        except Exception:  # the descent then uses its own bounds
            pass
        return list(default)

    def feasible(self, kwargs: Mapping[str, Any], num_warps: Optional[int], num_stages: Optional[int]) -> bool:
        """True when the model finds nothing wrong with this config as one tiletune proposes: hard limits,
        known compiler defects, and the domain's upper bounds (``check_config(proposed=True)``)."""
        from tiletune.synthesis import check_config

        try:
            return not check_config(self.spec, {**self.fixed, **dict(kwargs)}, num_warps, num_stages,
                                    self.shapes, self.dtypes, self.target, proposed=True)
        except Exception:  # a config the model cannot evaluate is not compiled
            return False


class _RecordingMeta(dict):
    """A dict that remembers which keys a grid function read."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.read: set = set()

    def __getitem__(self, k):
        self.read.add(k)
        return super().__getitem__(k)

    def get(self, k, default=None):
        self.read.add(k)
        return super().get(k, default)

    def __contains__(self, k):
        self.read.add(k)
        return super().__contains__(k)


@dataclass
class Candidates:
    """What the candidates stage returns for one launch.

    ``configs``: the candidate list, ranked (synthesized) or as given
    (pruned); ``synthesis``: what the synthesis worked from (the search's
    feasibility check and costs), None for a hand list; ``ir_reading``: the
    IR oracle's reading (:class:`tiletune.runtime.ir_oracle.OracleReading`)
    or None; ``search_breadth``: the breadth the search uses (wider when the
    analysis turned out incomplete); ``notes``: what the stage noted for this
    launch (fixed parameters, the synthesis, dropped candidates), also in the
    report it was given.
    """

    configs: List[Config]
    synthesis: Optional[SynthesisContext] = None
    ir_reading: Any = None
    search_breadth: float = 1.0
    notes: List[str] = field(default_factory=list)


@dataclass
class CandidatesStage:
    """The candidate list of one key, from explicit inputs (see the module docstring).

    ``spec(constants)`` gives the kernel's analysis (None when it failed,
    ``spec_error()`` then says why); ``target()`` the resolved target (asked
    only when synthesizing); ``noted`` is the kernel's once-per-kernel memory
    of what was already said (shared between launches, updated here);
    ``nargs`` the launch's arguments by name (Triton's pruning reads them).
    """

    kernel_name: str
    fn: Any
    arg_names: Sequence[str]
    keys: Sequence[str]
    constexpr: Set[str]
    defaults: Mapping[str, Any]
    heuristics: Sequence[str]
    spec: Callable[..., Any]
    spec_error: Callable[[], Optional[BaseException]]
    target: Callable[[], Any]
    configs: List[Config] = field(default_factory=list)
    hints: Mapping[str, List[Any]] = field(default_factory=dict)
    top_k: Optional[int] = None
    search: Any = None
    search_breadth: float = 1.0
    early_config_prune: Optional[Callable] = None
    perf_model: Optional[Callable] = None
    configs_top_k: Any = 1.0
    noted: Set[str] = field(default_factory=set)
    nargs: Optional[Mapping[str, Any]] = None
    #: set by a run: the synthesis context and the IR oracle's reading of this launch
    _synthesis: Optional[SynthesisContext] = field(default=None, init=False, repr=False)
    ir_reading: Any = field(default=None, init=False, repr=False)

    @property
    def synthesize_configs(self) -> bool:
        """True for ``configs=[]`` (the stage synthesizes), False for a hand list."""
        return not self.configs

    def run(self, bound: Dict[str, Any], kwargs: Dict[str, Any], launch_const: Mapping[str, Any],
            dtypes: Mapping[str, str], report: TuningReport) -> Candidates:
        """The candidates of this launch (see :class:`Candidates`); notes and predictions go to ``report``."""
        before = len(report.notes)
        configs = self._candidates(bound, kwargs, launch_const, dtypes, report)
        return Candidates(configs, self._synthesis, self.ir_reading, self.search_breadth, list(report.notes[before:]))

    # ---------------------------------------------------------------- candidates
    def _candidates(self, bound: Dict[str, Any], kwargs: Dict[str, Any], launch_const: Mapping[str, Any],
                    dtypes: Mapping[str, str], report: TuningReport) -> List[Config]:
        if not self.synthesize_configs:
            conflicts = set(kwargs) & set().union(*(c.kwargs.keys() for c in self.configs))
            if conflicts:
                raise MetaParameterConflict(
                    f"Conflicting meta-parameters: {', '.join(sorted(conflicts))}. Make sure that you don't "
                    f"re-define auto-tuned symbols (kernel {self.kernel_name!r}: these are passed at launch and "
                    "set by the configs; remove them from one of the two)."
                )
            return self.prune_configs(kwargs)
        return self._synthesize(bound, kwargs, launch_const, dtypes, report)

    def _synthesize(self, bound: Dict[str, Any], kwargs: Dict[str, Any], launch_const: Mapping[str, Any],
                    dtypes: Mapping[str, str], report: TuningReport) -> List[Config]:
        # specialised with the launch's constexpr values and None arguments: dead branches need nothing
        spec = self.spec({k: v for k, v in bound.items()
                          if v is None or (k in self.constexpr and isinstance(v, (bool, int, str)))})
        if spec is None:
            error = self.spec_error()
            raise TuningError(
                f"kernel {self.kernel_name!r}: configs=[] needs the kernel's source analysis, which failed "
                f"({error}); fix the kernel source or pass configs=[triton.Config(...), ...]"
            ) from error
        try:
            from tiletune.synthesis import required_shapes
            from tiletune.synthesis.alignment import alignment_shapes
            from tiletune.synthesis.request import RequestError, synthesis_request
        except ImportError as exc:
            raise TuningError(
                f"kernel {self.kernel_name!r}: configs=[] needs tiletune.synthesis, which cannot be imported "
                f"({exc}); pass configs=[...] explicitly"
            ) from exc
        clash = sorted(set(self.hints) & set(launch_const))
        if clash:
            raise MetaParameterConflict(
                f"kernel {self.kernel_name!r}: {', '.join(map(repr, clash))} is passed at launch and listed in "
                "hints; remove it from the launch to search it, or from hints to keep the launch's value"
            )
        required = synthesis_shapes(self.kernel_name, required_shapes(spec), bound)
        # and the strides and extents that decide which loads Triton pipelines (their divisibility by 16 only)
        shapes = {**alignment_shapes(spec, bound), **required}
        from .grid_axes import grid_axis_shapes

        target = self.target()
        # the pool the measured search draws from: top_k= when given, else the search policy's size;
        # under an incomplete analysis (configs kept safe under the unknowns) more of them are measured
        breadth = self.search_breadth if spec.complete else max(self.search_breadth, INCOMPLETE_BREADTH)
        top_k = self.top_k if self.top_k is not None else resolve_search(self.search, breadth).synth_top_k
        wide = max(resolve_search(self.search, INCOMPLETE_BREADTH).synth_top_k, 2 * top_k)
        try:
            # the launch grid's axes that no tiling parameter sizes (a batch, the rows): the programs they launch
            sized = grid_axis_shapes(kwargs.get("grid"), bound, [p.name for p in spec.tiling_params], self.hints)
            request = synthesis_request(spec, {**shapes, **sized}, dict(dtypes), target, hints=self.hints, top_k=top_k,
                                        front="runtime", launch_kwargs=list(launch_const),
                                        defaults=self.defaults, known={**bound, **launch_const},
                                        meaning="measure", incomplete_top_k=wide)
        except RequestError as exc:
            raise TuningError(f"{exc} (at this launch)") from None
        verdict, fixed = request.verdict, request.fixed
        for name, why in verdict.fixed.items():
            if name not in self.noted:
                self.noted.add(name)
                value = f" = {fixed[name]!r}" if name in fixed else ""
                report.note(f"tiling parameter {name}{value} {why}: left out of the search")
        warn_untuned(self.kernel_name, verdict, self.hints, self.noted, spec)
        if not spec.complete:
            self._warn_incomplete(spec)
        missing_key = [s for s in required if s not in self.keys]
        if missing_key and "missing_key" not in self.noted:
            self.noted.add("missing_key")
            warn_missing_key(self.kernel_name, missing_key, self.keys, self.noted)
            report.note(f"synthesis depends on {', '.join(missing_key)}, which is not in key=; a change of it "
                        "will reuse the tuning of the first value")
        if not spec.complete:
            # Triton's IR tiles where the static reading has accesses without a shape (the IR wins)
            ir_spec = self._ir_footprint(spec, bound, verdict.tuned, fixed, report)
            if ir_spec is not spec:
                spec = ir_spec
                request = replace(request, spec=ir_spec)
        result = request.run(point_costs=True)
        drop = set(launch_const) | set(self.heuristics)
        configs: List[Config] = []
        costs: Dict[str, float] = {}
        seen = set()
        # Under the interpreter, num_warps/num_stages change nothing: one candidate per tiling.
        interp = _bench.interpreting()
        for cand in result.candidates:
            cfg = cand.to_config()
            if drop & cfg.kwargs.keys():
                cfg.kwargs = {k: v for k, v in cfg.kwargs.items() if k not in drop}
            sig = repr(sorted(cfg.kwargs.items())) if interp else str(cfg)
            if sig not in seen:
                seen.add(sig)
                report.predicted(cfg, float(cand.cost), len(configs))
                configs.append(cfg)
                costs[config_str(cfg)] = float(cand.cost)
        if not configs:
            raise TuningError(
                f"kernel {self.kernel_name!r}: synthesis for target {target.name} returned no candidates "
                f"for {shapes}; pass configs=[...] explicitly"
            )
        # every constexpr must get a value from somewhere
        given = set(bound) | set(configs[0].kwargs)
        unset = [n for n in self.arg_names if n in self.constexpr and n not in given]
        ir_tiled = False
        if unset:
            configs = self._ir_tiling(bound, configs, unset, report)
            ir_tiled = any(n in configs[0].kwargs for n in unset)
            unset = [n for n in unset if n not in configs[0].kwargs]
        if unset:
            raise TuningError(
                f"kernel {self.kernel_name!r}: constexpr parameter {', '.join(map(repr, unset))} has no value: "
                "synthesis does not search it; pass it at launch, give it a default, or list values in "
                f"hints={{{unset[0]!r}: [...]}}"
            )
        report.note(f"synthesized {len(configs)} candidate(s) of {result.feasible_count} feasible for "
                    f"{target.name}, shapes {shapes}, dtypes {dict(dtypes)}")
        searched = [n for n in verdict.tuned if n not in drop]
        configs = self._oracle_screen(bound, configs, searched, report, read=not spec.complete,
                                      here=not spec.complete or ir_tiled)
        point_costs: Dict[tuple, float] = {}
        for (items, warps, stages), cost in result.point_costs.items():
            key = (tuple((k, v) for k, v in items if k not in drop), warps, stages)
            point_costs[key] = min(point_costs.get(key, cost), cost)
        self._synthesis = SynthesisContext(spec, dict(shapes), dict(dtypes), dict(fixed), target, searched, costs,
                                           point_costs)
        if self.early_config_prune or self.perf_model:
            configs = self._prune_list(configs, kwargs)
        return configs

    def _oracle_screen(self, bound: Mapping[str, Any], configs: List[Config], searched: List[str],
                       report: TuningReport, read: bool = True, here: bool = True) -> List[Config]:
        """Drop the candidates Triton's front end refuses, and, with ``read`` (an incomplete static reading),
        say where the IR and the static reading disagree on the tiling parameters (the IR wins: it is what
        Triton compiles).  A complete static reading is not re-read from the IR: its doubled and halved
        probe lowerings would only confirm it (``bench/static_vs_ir.py``: no disagreement where the static
        reading is complete), and they cost a first tune half as much again as the screen.

        Without ``here`` (a complete static reading whose tiling the IR did not add to) and where the compile
        children compile every batch (:func:`~tiletune.runtime.parallel_compile.front_end_in_children`), this
        process lowers nothing: each child runs Triton's front end first and reports a refusal before any
        backend work, and the measure stage drops the candidate, unmeasured, and measures the next ranked
        one instead (``_Trial.refuse``).  Lowering the whole pool here, one tiling after another, cost a
        first tune 75% of its candidates stage (``bench/results/fixed_cost.md``) before any compile began."""
        from . import ir_oracle
        from .parallel_compile import front_end_in_children

        if not configs or not ir_oracle.oracle_enabled(self.fn):
            return configs
        if not here and front_end_in_children():
            report.note("Triton's front end screens each candidate in its compile child: one it refuses is "
                        "dropped before timing and the next ranked candidate measured instead")
            return configs
        try:
            unique: List[Dict[str, Any]] = []
            for c in configs:  # configs differing only in num_warps/num_stages lower alike: once each
                if c.kwargs not in unique:
                    unique.append(dict(c.kwargs))
            refused_unique = ir_oracle.refused_configs(self.fn, bound, unique)
            refused = {i: refused_unique[unique.index(c.kwargs)] for i, c in enumerate(configs)
                       if unique.index(c.kwargs) in refused_unique}
            kept = [c for i, c in enumerate(configs) if i not in refused]
            reading = ir_oracle.read_kernel(self.fn, bound, kept[0].kwargs, list(kept[0].kwargs)) \
                if kept and read else None
        except Exception as exc:  # the oracle is an extra check: without it the static reading stands
            report.note(f"the IR oracle could not lower kernel {self.kernel_name!r} ({describe_error(exc)}); "
                        "the static reading stands")
            return configs
        for i, why in sorted(refused.items()):
            report.note(f"dropped {config_str(configs[i])} before timing: Triton refuses it ({why})")
        if unique:
            report.note(f"Triton's front end lowered {len(unique)} distinct tiling(s) of {len(configs)} candidate(s); "
                        f"{len(refused)} refused")
        if not kept:
            first = next(iter(refused.values()))
            raise TuningError(
                f"kernel {self.kernel_name!r}: Triton refuses every synthesized candidate (first: {first}); "
                "fix the kernel for these launch arguments or pass configs=[...]"
            )
        if reading is not None and reading.base is not None:
            ir_set = set(reading.tiling) | set(reading.trip_count)
            static_set = set(searched) & set(kept[0].kwargs)
            if ir_set != static_set:
                report.note(
                    f"the static reading and Triton's IR disagree on the tiling parameters: static "
                    f"{sorted(static_set)}, IR {sorted(ir_set)} (tiles {sorted(reading.tiling)}, loop trip counts "
                    f"{sorted(reading.trip_count)}); the IR is what Triton compiles"
                )
            self.ir_reading = reading
        return kept

    def _ir_tiling(self, bound: Mapping[str, Any], configs: List[Config], unset: List[str],
                   report: TuningReport) -> List[Config]:
        """Constexprs the static reading left without a value but Triton's IR shows sizing tiles (a helper
        it could not follow): searched over :data:`IR_TILE_VALUES` with the leading candidates; the
        oracle's screen then drops what Triton refuses.  The configs unchanged when the IR says otherwise."""
        from . import ir_oracle

        if not ir_oracle.oracle_enabled(self.fn):
            return configs
        base = {**dict(configs[0].kwargs), **{n: IR_TILE_VALUES[0] for n in unset}}
        try:
            reading = ir_oracle.read_kernel(self.fn, bound, base, unset)
        except Exception as exc:  # no oracle: the caller's error names the parameter
            report.note(f"the IR oracle could not lower kernel {self.kernel_name!r} ({describe_error(exc)})")
            return configs
        found = [n for n in unset if n in reading.tiling or n in reading.trip_count]
        if not found:
            return configs
        report.note(f"Triton's IR shows {', '.join(found)} sizing tiles, which the static reading missed: "
                    f"searched over {list(IR_TILE_VALUES)} (the IR wins)")
        out: List[Config] = []
        for cfg in configs[:IR_TILE_BASES]:
            combos: List[Dict[str, Any]] = [{}]
            for name in found:
                combos = [{**c, name: v} for c in combos for v in IR_TILE_VALUES]
            for combo in combos:
                out.append(Config({**cfg.kwargs, **combo}, num_warps=cfg.num_warps, num_stages=cfg.num_stages))
        return out

    def _ir_footprint(self, spec: Any, bound: Mapping[str, Any], tuned: List[str], fixed: Mapping[str, Any],
                      report: TuningReport) -> Any:
        """The spec with Triton's IR tiles in its footprint where the static reading has accesses without a
        shape (:mod:`tiletune.runtime.ir_footprint`); unchanged when the oracle is off or cannot lower."""
        from . import ir_footprint, ir_oracle

        if not any(a.shape is None for a in spec.accesses) or not ir_oracle.oracle_enabled(self.fn):
            return spec
        names = [n for n in tuned if n not in bound]
        try:
            tiles = ir_footprint.read_tiles(self.fn, bound, ir_footprint.tile_values(names, {
                k: v for k, v in fixed.items() if k not in bound}), names)
        except Exception as exc:  # the oracle is an extra: without it the static footprint stands
            report.note(f"the IR oracle could not lower kernel {self.kernel_name!r} for its tile shapes "
                        f"({describe_error(exc)}); the static footprint stands")
            return spec
        out, note = ir_footprint.with_ir_footprint(spec, tiles or [])
        if note:
            report.note(note)
        return out

    def _warn_incomplete(self, spec: Any) -> None:
        """Say once per kernel that its analysis is incomplete: what is unknown, what tiletune does about
        it and the fix that applies (:func:`incomplete_message`)."""
        self.search_breadth = max(self.search_breadth, INCOMPLETE_BREADTH)  # every launch: the stage is per launch
        if "incomplete" in self.noted:
            return
        self.noted.add("incomplete")
        from . import ir_oracle

        warnings.warn(incomplete_message(self.kernel_name, spec, ir_oracle.oracle_enabled(self.fn)),
                      TiletuneWarning, stacklevel=user_stacklevel())

    def prune_configs(self, kwargs: Dict) -> List[Config]:
        """Triton's pruning (``early_config_prune``, then ``perf_model`` + ``top_k``) over ``self.configs``."""
        return self._prune_list(self.configs, kwargs)

    def _prune_list(self, configs: List[Config], kwargs: Dict) -> List[Config]:
        nargs = self.nargs or {}
        pruned = configs
        if self.early_config_prune:
            pruned = self.early_config_prune(configs, nargs, **kwargs)
            if not pruned:
                raise TuningError(
                    f"kernel {self.kernel_name!r}: no configs left after early_config_prune; it should return "
                    "at least one config"
                )
        if self.perf_model:
            top_k = self.configs_top_k
            if isinstance(top_k, float) and top_k <= 1.0:
                top_k = int(len(configs) * top_k)
            elif not isinstance(top_k, int):
                raise TypeError("Error while pruning configs, top_k must be either 1) a float <= 1.0 or 2) an int")
            if len(pruned) > top_k:
                est = {c: self.perf_model(**nargs, **kwargs, **c.all_kwargs()) for c in pruned}
                pruned = sorted(est, key=lambda c: est[c])[:top_k]
        return list(pruned)

    # ---------------------------------------------------------------- grid rules
    def _check_grid(self, grid: Any, bound: Mapping[str, Any], configs: List[Config]) -> None:
        spec = self.spec()
        if spec is None or len(configs) == 0:
            return
        try:
            from tiletune.analysis.model import Role
        except ImportError:  # pragma: no cover
            return
        parallel = [p.name for p in spec.tiling_params if p.role == Role.PARALLEL]
        searched = []
        for name in parallel:
            values = {repr(c.kwargs[name]) for c in configs if name in c.kwargs}
            if not values:
                continue
            if self.synthesize_configs or len(values) > 1:
                searched.append(name)
        if not searched:
            return
        if not callable(grid):
            example = searched[0]
            bound_to = spec.param(example).bound or "N"
            raise TuningError(
                f"kernel {self.kernel_name!r}: the launch grid {grid!r} is fixed, but the tiling parameter "
                f"{', '.join(searched)} it depends on is being tuned, so the grid cannot follow the chosen "
                f"tile; launch with a grid function, e.g. kernel[lambda meta: "
                f"(triton.cdiv({bound_to}, meta[{example!r}]),)](...)"
            )
        base_meta = {**bound, **configs[0].all_kwargs()}

        def call(meta: dict) -> tuple:
            try:
                g = grid(meta)
            except Exception as exc:
                raise TuningError(
                    f"kernel {self.kernel_name!r}: calling the grid function with a candidate's meta-parameters "
                    f"raised {describe_error(exc)}; the grid must read the tiling parameters from its argument "
                    "(meta['BLOCK_...'])"
                ) from exc
            return tuple(g) if isinstance(g, (list, tuple)) else (g,)

        rec = _RecordingMeta(base_meta)
        g0 = call(rec)
        for name in searched:
            if name in rec.read:
                continue
            other = next((c.kwargs[name] for c in configs if name in c.kwargs and c.kwargs[name] != base_meta[name]),
                         None)
            if other is None:
                try:
                    other = base_meta[name] * 2
                except TypeError:
                    continue
            probe = dict(base_meta)
            probe[name] = other
            if call(probe) == g0:
                bound_to = spec.param(name).bound or "N"
                raise TuningError(
                    f"kernel {self.kernel_name!r}: the grid function does not depend on the tuned tiling "
                    f"parameter {name!r} (same grid {g0} for {name}={base_meta[name]} and {name}={other}); "
                    f"compute the grid from meta, e.g. lambda meta: (triton.cdiv({bound_to}, meta[{name!r}]),)"
                )


def agreed_candidates(build: Callable[[], Tuple[List[Config], Any]], pg: Any, kernel_name: str) -> Tuple[List[Config], Any]:
    """``build()``'s ``(candidate list, benchmark function)``; with a group, the same list on every rank.

    A rank whose ``build()`` raises (synthesis, pruning, grid rules) makes
    every rank raise; lists that differ between ranks (a rank-dependent
    prune) raise TuningError on every rank
    (:func:`~tiletune.runtime.distributed.check_consistent` over their text).
    """
    active = _dd.is_active(pg)
    error: Optional[BaseException] = None
    configs: List[Config] = []
    bench = None
    try:
        configs, bench = build()
    except Exception as exc:
        if not active:
            raise
        error = exc
    if active:
        errors = _dd.all_gather_json(None if error is None else f"{type(error).__name__}: {error}", pg)
        if error is not None:
            raise error
        for r, e in enumerate(errors):
            if e is not None:
                raise TuningError(f"kernel {kernel_name!r}: tuning stopped because rank {r} could not "
                                  f"build its candidate list: {e}")
        _dd.check_consistent([str(c) for c in configs], pg, what=f"candidate list of kernel {kernel_name!r}")
    return configs, bench
