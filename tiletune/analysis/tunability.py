"""Which constexprs a search may choose: the one place that decides.

``synth-configs``, ``configs=[]`` (the runtime) and the lint (TT002, TT003)
all ask :func:`tunability`; none of them re-derives the rules.

A tiling constexpr (one the body analysis found sizing a tile or a loop step)
is *tuned* unless the author fixed it, which the source says in one of four
ways, checked in this order:

1. a launch passes it, as a keyword or positionally (bound by signature order,
   as Triton binds a call): the real launch's arguments when the runtime knows
   them (``launch_kwargs``), else any launch site the analysis sees, except a
   keyword whose value is a lookup of the same name in a meta/config mapping
   (``BLOCK=meta["BLOCK"]``, ``BLOCK=cfg.kwargs["BLOCK"]``): that forwards a
   tuned value rather than fixing one;
2. it is in the kernel's autotune ``key``: a per-call input the author keys
   the cache on (a head dimension, a chunk size), not a tiling choice;
3. ``@triton.heuristics`` computes it (read statically, any tiling parameter when a
   heuristics mapping's keys cannot be read: it may be one a heuristic sets; at run time the
   live launch's binding, heuristic values included, says which);
4. it has a default (in the signature, or ``defaults`` the runtime passes).

Triton rejects a launch keyword only when a config sets that name
("Conflicting meta-parameters"); :attr:`Tunability.config_set` says which
names the kernel's own literal configs set.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional

from .model import KernelSpec

__all__ = ["Tunability", "tunability", "fixed_values", "is_meta_lookup", "config_names"]

# meta["X"], meta.get("X"), cfg.kwargs["X"], config.all_kwargs()["X"], kwargs.get('X', 1) ...
_LOOKUP = re.compile(r"""^[A-Za-z_][\w.]*(?:\(\))?\s*(?:\[\s*(['"])(?P<a>\w+)\1\s*\]|\.get\(\s*(['"])(?P<b>\w+)\3\s*(?:,.*)?\))$""", re.S)


def is_meta_lookup(name: str, value_source: str) -> bool:
    """True when a launch keyword ``name=value_source`` forwards ``name`` from a
    meta or config mapping (``meta["BLOCK"]``) instead of fixing a value."""
    m = _LOOKUP.match(value_source.strip())
    return bool(m) and (m.group("a") or m.group("b")) == name


def config_names(spec: KernelSpec) -> frozenset[str]:
    """Names the kernel's own literal ``triton.Config`` list sets (empty for ``configs=[]``,
    no autotune, or a list that is not literal)."""
    at = spec.autotune
    names: set[str] = set()
    if at is not None and at.configs:
        for c in at.configs:
            names.update(c.kwargs)
            names.update(c.unresolved)
    return frozenset(names)


@dataclass(frozen=True)
class Tunability:
    """The verdict for one kernel (and, at run time, one launch).

    ``tuned``: tiling constexprs a ``configs=[]`` search chooses, in signature
    order.  ``fixed``: every tiling constexpr the search leaves alone, with the
    reason in words.  ``launch_fixed``: names a launch fixes, with where
    (``"file:line"``, or ``"this launch"`` at run time).  ``searchable``: the
    tiling constexprs that would be tuned if no launch fixed them.
    ``config_set``: names the kernel's literal configs set.
    """

    kernel: str
    tuned: tuple[str, ...]
    fixed: Mapping[str, str] = field(default_factory=dict)
    launch_fixed: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    searchable: tuple[str, ...] = ()
    config_set: frozenset[str] = frozenset()

    def is_tuned(self, name: str) -> bool:
        """True when a ``configs=[]`` search chooses ``name``."""
        return name in self.tuned

    def conflicts(self) -> dict[str, tuple[str, ...]]:
        """Names a launch fixes that the configs also supply (set by the kernel's
        literal configs, or tuned by ``configs=[]``): the launches Triton
        rejects or tiletune leaves untuned."""
        supplied = self.config_set | set(self.searchable)
        return {n: where for n, where in self.launch_fixed.items() if n in supplied}


def _static_launch_fixed(spec: KernelSpec) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for site in list(spec.launches) + list(spec.project_launches):
        passed = {**site.bound_positionally(spec.params), **site.fixed}
        for name, text in passed.items():
            if is_meta_lookup(name, text):
                continue
            where = f"{site.file or spec.file or '<source>'}:{site.span.line}"
            out.setdefault(name, []).append(where)
    return {n: tuple(w) for n, w in out.items()}


def tunability(
    spec: KernelSpec,
    launch_kwargs: Optional[Iterable[str]] = None,
    defaults: Optional[Mapping[str, Any]] = None,
) -> Tunability:
    """Decide which of ``spec``'s tiling constexprs a search may choose.

    ``launch_kwargs`` (run time): the names the real launch passes (keyword
    or positional, bound to parameter names); when
    given they replace the launch sites the analysis saw.  ``defaults`` (run
    time): parameter defaults of the live kernel; the signature's are used
    otherwise.
    """
    if launch_kwargs is not None:
        launch_fixed = {n: ("this launch",) for n in launch_kwargs}
    else:
        launch_fixed = _static_launch_fixed(spec)
    key = set(spec.autotune.key or ()) if spec.autotune is not None else set()
    heuristics = set(spec.heuristics)
    if launch_kwargs is None and spec.heuristics_unread:  # statically: any of them may be set by a heuristic
        heuristics |= {p.name for p in spec.tiling_params}
    tuned: list[str] = []
    searchable: list[str] = []
    fixed: dict[str, str] = {}
    for p in spec.tiling_params:
        has_default = (p.name in defaults) if defaults is not None else p.has_default
        if p.name in key:
            fixed[p.name] = "in the autotune key: a per-call input the cache is keyed on, not a tiling choice"
        elif p.name in spec.heuristics:
            fixed[p.name] = "set by @triton.heuristics"
        elif p.name in heuristics:
            lines = ", ".join(map(str, spec.heuristics_unread))
            fixed[p.name] = (f"may be set by @triton.heuristics (line {lines}: its mapping's keys cannot be read "
                             "statically)")
        elif has_default:
            fixed[p.name] = "has a default"
        else:
            searchable.append(p.name)
        if p.name in launch_fixed:
            fixed[p.name] = "passed at launch" + (
                "" if launch_fixed[p.name] == ("this launch",) else f" ({', '.join(launch_fixed[p.name])})"
            )
        elif p.name not in fixed:
            tuned.append(p.name)
    # Launch-fixed names that are not tiling parameters still matter to TT002 (configs may set them).
    return Tunability(
        kernel=spec.name,
        tuned=tuple(tuned),
        fixed=fixed,
        launch_fixed=launch_fixed,
        searchable=tuple(searchable),
        config_set=config_names(spec),
    )


def fixed_values(
    spec: KernelSpec, verdict: Tunability, known: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, str]]:
    """Values for the tiling constexprs ``verdict`` leaves alone.

    ``known`` gives values the caller has (launch arguments at run time;
    ``--shape``/``--fixed`` for ``synth-configs``); a literal default in the
    signature is used otherwise.  Returns ``(values, missing)``: ``missing``
    maps each fixed name with no value to why it is fixed, so the caller can
    ask for it instead of guessing.
    """
    values: dict[str, Any] = {}
    missing: dict[str, str] = {}
    params = {p.name: p for p in spec.params}
    for name, why in verdict.fixed.items():
        if name in known:
            values[name] = known[name]
            continue
        default = _literal_int(params[name].default) if name in params else None
        if default is not None and not why.startswith("passed at launch"):
            values[name] = default
        else:
            missing[name] = why
    return values, missing


def _literal_int(text: Optional[str]) -> Optional[int]:
    if text is None:
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None
