"""The model's records: :class:`Constraint` (one tracked requirement) and :class:`Model`.

Each constraint has a tracking name unique within its model (two accesses of
one pointer with different tile shapes get ``align:x_ptr`` and
``align:x_ptr#2``), so Z3's ``assert_and_track`` never sees a name twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np

from ...analysis.expr import Expr, const
from ..space import Space
from .preds import Pred, TermLike, evaluate, pred_symbols, pred_to_z3

__all__ = ["Constraint", "AccessTerm", "DotTerm", "Model", "PIPELINED_SHARED"]

#: The footprint key (only while the family's capacity rules run) of the shared-memory figure with every
#: ``tl.dot`` operand load counted as pipelined: the register estimate subtracts it from the live tiles.
PIPELINED_SHARED = "pipelined_shared_bytes"


#: A constraint's text longer than this shows its footprint expression as f(variables).
READABLE_TEXT_CHARS = 160


def _readable(text: str, need: Any, names: Sequence[str]) -> str:
    """``text`` with a long footprint expression (``need``) replaced by ``f(the variables it reads)``."""
    expr = str(need) if need is not None else ""
    if len(text) <= READABLE_TEXT_CHARS or len(expr) < 40 or expr not in text:
        return text
    import re

    used = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", expr))
    return text.replace(expr, "f(" + ", ".join(n for n in names if n in used) + ")")


@dataclass
class Constraint:
    """One tracked requirement.

    ``kind``: ``lo``/``hi``/``pow2``/``domain`` (domains: implied by the
    enumeration's value lists), ``capacity`` (``need <= limit`` bytes),
    ``align``, ``fractal``, ``numel``, ``registers``, ``warps``, ``assert``.
    ``text`` states the rule; ``label`` names the resource for violation
    messages.  ``check`` says whether :func:`check_config` reports it (the
    register estimate and the warps heuristic are synthesis preferences, not
    hard limits).
    """

    name: str
    kind: str
    pred: Pred
    text: str
    label: str = ""
    need: Optional[TermLike] = None
    limit: Optional[TermLike] = None
    unit: str = "B"
    check: bool = True
    implicit: bool = False  # holds for every enumerated point (a domain bound)
    soft: bool = False  # a preference: relaxed when nothing satisfies it (see synthesize)
    symbols: frozenset = field(default_factory=frozenset)

    def __post_init__(self):
        if not self.symbols:
            self.symbols = pred_symbols(self.pred)

    @classmethod
    def within(
        cls, name: str, kind: str, need: TermLike, limit: Union[int, TermLike], text: str, label: str, **kw
    ) -> "Constraint":
        """A resource constraint ``need <= limit`` (``capacity`` in bytes, ``numel`` in elements...);
        an int ``limit`` is a constant."""
        limit = const(limit) if isinstance(limit, int) else limit
        return cls(name, kind, Pred.le(need, limit), text, label=label, need=need, limit=limit, **kw)

    def violation(self, env: Mapping[str, Any], target_name: str) -> str:
        """Words for a point that violates this constraint."""
        if self.need is not None and self.limit is not None:
            need = int(evaluate(self.need, env))
            limit = int(evaluate(self.limit, env))
            return f"{self.label}: needs {need} {self.unit} > {limit} {self.unit} on {target_name}"
        names = sorted(s for s in self.symbols)
        at = ", ".join(f"{n}={_fmt(env.get(n))}" for n in names if n in env)
        return f"{self.text}" + (f" (here {at})" if at else "")

    def excess(self, env: Mapping[str, Any]):
        """How much ``need`` exceeds ``limit`` (capacity constraints), as an array or int."""
        if self.need is None or self.limit is None:
            return None
        return evaluate(self.need, env) - evaluate(self.limit, env)


def _fmt(v: Any) -> str:
    if isinstance(v, (np.integer,)):
        return str(int(v))
    return str(v)


# ----- the model ----------------------------------------------------------------------


@dataclass
class AccessTerm:
    """Bytes of one memory access per execution and how often it runs per program."""

    kind: str
    pointer: Optional[str]
    bytes: Expr  # tile bytes (dims clipped to their bounds)
    trips: Expr
    in_loop: bool
    contiguous_bytes: Optional[Expr] = None  # bytes of the contiguous run (clipped dim x esize)
    reuse: Expr = field(default_factory=lambda: const(1))  # programs that load the same tile


@dataclass
class DotTerm:
    """Flops of one tl.dot per execution, its trips and input dtype."""

    flops: Expr
    trips: Expr
    dtype: str
    in_loop: bool
    m: Optional[Expr] = None
    mn: Optional[Expr] = None


@dataclass
class Model:
    """The constraint model of one synthesis problem, plus the terms the cost model reads."""

    space: Space
    constraints: list[Constraint]
    programs: Expr
    programs_source: str
    accesses: list[AccessTerm]
    dots: list[DotTerm]
    footprint: dict[str, Expr]
    max_tile_numel: Expr
    notes: list[str] = field(default_factory=list)

    @property
    def target(self):
        return self.space.target

    def constraint(self, name: str) -> Constraint:
        for c in self.constraints:
            if c.name == name:
                return c
        raise KeyError(name)

    def z3_vars(self) -> dict[str, Any]:
        """A Z3 integer per numeric variable."""
        import z3

        return {v.name: z3.Int(v.name) for v in self.space.vars if v.numeric}

    def solver(self, extra: Optional[Mapping[str, int]] = None, timeout_ms: int = 10000):
        """A Z3 solver with every constraint asserted under its tracking name.

        ``extra`` pins variables to values (tracked as ``pin:<name>``).
        Returns ``(solver, vars, tracks)`` where ``tracks`` maps each tracking
        Boolean's name to its :class:`Constraint` (or None for pins).
        """
        import z3

        s = z3.Solver()
        s.set("timeout", int(timeout_ms))
        s.set("core.minimize", True)
        zv = self.z3_vars()
        tracks: dict[str, Optional[Constraint]] = {}
        for c in self.constraints:
            if not c.symbols <= set(zv):
                continue  # mentions a non-numeric hint: enumeration-only
            b = z3.Bool(c.name)
            s.assert_and_track(pred_to_z3(c.pred, zv), b)
            tracks[c.name] = c
        for name, value in (extra or {}).items():
            if name in zv:
                b = z3.Bool(f"pin:{name}")
                s.assert_and_track(zv[name] == int(value), b)
                tracks[f"pin:{name}"] = None
        return s, zv, tracks

    def summary(self) -> list[str]:
        """The model in words: variables with domains, constants, constraints."""
        sp = self.space
        lines = [f"kernel {sp.spec.name} on {sp.target.name} ({sp.target.family})"]
        lines.append("variables:")
        for v in sp.vars:
            lines.append(f"  {v.describe()}")
        consts = {k: v for k, v in sp.env.items()}
        if consts:
            lines.append("constants: " + ", ".join(f"{k}={v}" for k, v in sorted(consts.items())))
        if sp.fixed:
            lines.append("fixed: " + ", ".join(f"{k}={v}" for k, v in sp.fixed.items()))
        lines.append(f"programs: {self.programs} ({self.programs_source})")
        lines.append("constraints:")
        names = [v.name for v in sp.vars]
        shortened = False
        for c in self.constraints:
            if c.kind in ("lo", "hi", "pow2", "domain"):
                continue
            text = _readable(c.text, c.need, names)
            shortened = shortened or text != c.text
            lines.append(f"  [{c.name}] {text}")
        if shortened:
            lines.append("  (f(...): a footprint expression too long to read here; `tiletune analyze FILE` prints "
                         "the kernel's footprint expressions)")
        for n in sp.notes + self.notes:
            lines.append(f"note: {n}")
        return lines
