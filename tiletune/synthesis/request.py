"""One synthesis request for every caller: the runtime (``configs=[]``), ``synth-configs`` and ``config_space_from``.

:func:`synthesis_request` is the one place that turns a kernel's analysis
and a caller's inputs into what :func:`~tiletune.synthesis.synthesize` is
asked, with the guards every caller needs:

* tunability -- which tiling constexprs the search may choose
  (:func:`~tiletune.analysis.tunability.tunability`); each one it leaves
  alone needs a value (given, or the signature's literal default), else the
  request is refused naming the parameter, why it is not tuned and how to
  pass it;
* meaning -- a tuned parameter that may carry meaning (``spec.meaning``)
  with no value or hint is refused offline (``meaning="refuse"``); the
  runtime measures it instead (its agreement check, ``meaning="measure"``);
* an incomplete analysis -- only configs safe under every unknown are kept
  (:func:`~tiletune.synthesis.incomplete.unknown_guards`), and the pool is
  at least ``incomplete_top_k``.

Every problem is reported at once (:class:`RequestError`), phrased for the
caller's front (``"runtime"``, ``"cli"``, ``"api"``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

from ..analysis.model import KernelSpec
from ..analysis.tunability import Tunability, fixed_values, tunability
from ..errors import SynthesisError
from .incomplete import unknown_guards
from .model import SynthesisResult, Target
from .pipeline import synthesize
from .targets import get_target

__all__ = ["SynthesisRequest", "RequestError", "synthesis_request", "FRONTS"]

#: How each front tells its user to give a value (``fixed``) or a list of values (``hint``) for ``{n}``.
FRONTS: dict[str, dict[str, str]] = {
    "runtime": {"fixed": "{n}=... at launch (or a default in the signature)", "hint": "hints={{'{n}': [...]}}"},
    "cli": {"fixed": "--fixed {n}=<value>", "hint": "--hint {n}=<v1>,<v2>"},
    "api": {"fixed": "fixed={{'{n}': <value>}}", "hint": "hints={{'{n}': [<v1>, <v2>]}}"},
}


class RequestError(SynthesisError):
    """A synthesis request that cannot be made; ``problems`` lists every reason (all at once)."""

    def __init__(self, problems: Sequence[str]):
        self.problems = list(problems)
        text = self.problems[0] if len(self.problems) == 1 else "\n  ".join(
            [f"{len(self.problems)} problems:"] + self.problems)
        super().__init__(text)


@dataclass(frozen=True)
class SynthesisRequest:
    """What synthesis is asked for one kernel at one set of sizes, guards applied.

    ``fixed`` holds every value the search leaves alone (the caller's and
    the untuned parameters'); ``verdict`` is the tunability decision it was
    built from; ``prune`` the guards of an incomplete analysis (empty when
    the analysis is complete); ``assumed`` names the parameters whose value
    came from the signature's default rather than from the caller.
    """

    spec: KernelSpec
    shapes: dict[str, int]
    dtypes: dict[str, str]
    target: Target
    fixed: dict[str, Any]
    hints: dict[str, list]
    top_k: int
    verdict: Tunability
    prune: list[Callable[[dict], bool]] = field(default_factory=list)
    assumed: dict[str, Any] = field(default_factory=dict)

    def run(self, *, point_costs: bool = False) -> SynthesisResult:
        """Synthesize: the ranked candidates (see :func:`tiletune.synthesis.synthesize`)."""
        return synthesize(self.spec, self.shapes, self.dtypes, self.target, hints=self.hints or None,
                          fixed=self.fixed or None, top_k=self.top_k, prune=self.prune or None,
                          point_costs=point_costs)


def synthesis_request(
    spec: KernelSpec,
    shapes: Mapping[str, int],
    dtypes: Mapping[str, str],
    target: Any,
    *,
    fixed: Optional[Mapping[str, Any]] = None,
    hints: Optional[Mapping[str, Sequence[Any]]] = None,
    top_k: int = 10,
    front: str = "api",
    launch_kwargs: Optional[Sequence[str]] = None,
    defaults: Optional[Mapping[str, Any]] = None,
    known: Optional[Mapping[str, Any]] = None,
    meaning: str = "refuse",
    incomplete_top_k: Optional[int] = None,
    earlier: Sequence[str] = (),
) -> SynthesisRequest:
    """Build the :class:`SynthesisRequest` for ``spec`` (see the module docstring); raise :class:`RequestError`.

    ``fixed``/``hints`` are the caller's; ``launch_kwargs`` and ``defaults``
    (run time) feed :func:`~tiletune.analysis.tunability.tunability`;
    ``known`` gives the values the caller has for parameters the search may
    leave alone (default: ``shapes`` and ``fixed``).  ``earlier`` are
    problems the caller found in its own inputs: they are reported together
    with the request's.  ``target`` may be None only when ``earlier`` says why.
    """
    if front not in FRONTS:
        raise ValueError(f"synthesis_request: front={front!r}; use one of {', '.join(FRONTS)}")
    if meaning not in ("refuse", "measure"):
        raise ValueError(f"synthesis_request: meaning={meaning!r}; use 'refuse' or 'measure'")
    say = FRONTS[front]
    fixed = dict(fixed or {})
    hints = {k: list(v) for k, v in (hints or {}).items()}
    problems = list(earlier)
    verdict = tunability(spec, launch_kwargs=launch_kwargs, defaults=defaults)
    given = dict(known) if known is not None else {**shapes, **fixed}
    values, missing = fixed_values(spec, verdict, given)
    if missing:
        problems.append(
            f"kernel {spec.name!r}: " + "; ".join(f"{n} is not tuned ({why})" for n, why in missing.items())
            + ". Its value enters the model: pass it with " + " ".join(say["fixed"].format(n=n) for n in missing))
    if meaning == "refuse":
        carries = {n: why for n, why in spec.meaning.items()
                   if verdict.is_tuned(n) and n not in fixed and n not in values and n not in hints}
        if carries:
            problems.append(
                f"kernel {spec.name!r}: " + "; ".join(f"{n} may carry meaning: {why[0]}" for n, why in carries.items())
                + ". A value other than the one your data is built for computes something else, so it is not "
                + "searched: pass it with " + " or ".join(say["fixed"].format(n=n) for n in carries)
                + ", or list the values that are safe with " + " ".join(say["hint"].format(n=n) for n in carries))
    if problems:
        raise RequestError(problems)
    if target is None:
        raise ValueError(f"synthesis_request: kernel {spec.name!r} has no target; pass target=")
    t = get_target(target)
    assumed = {n: v for n, v in values.items() if n not in given}
    fixed.update(values)
    prune = unknown_guards(spec, t, verdict.tuned, fixed)
    if not spec.complete and incomplete_top_k is not None:
        top_k = max(top_k, incomplete_top_k)
    return SynthesisRequest(spec, dict(shapes), dict(dtypes), t, fixed, hints, int(top_k), verdict, prune, assumed)
