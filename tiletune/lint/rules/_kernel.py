"""What the rules ask about a kernel, answered from its analysis and from
:func:`tiletune.analysis.tunability.tunability` (the one place that decides
which tiling constexprs a search chooses; the rules never re-derive it).
"""

from __future__ import annotations

import re
from typing import Any, Optional

__all__ = [
    "is_autotuned",
    "is_jitted",
    "literal_configs",
    "tiletune_searches",
    "autotuner_supplies",
    "passes",
    "tunability_of",
    "atomic_ops",
    "IDEMPOTENT_ATOMICS",
    "fmt_names",
    "param_by_name",
    "shape_like",
    "target_family",
]

#: Atomic updates that repeated runs cannot change once the first run is done
#: (``max(max(x, v), v) == max(x, v)``, likewise min, and, or): benchmarking a
#: kernel many times leaves the same result as one launch.
IDEMPOTENT_ATOMICS = frozenset({"max", "min", "and", "or"})

_ATOMIC_OP = re.compile(r"\batomic_(\w+)\s*\(")


def is_autotuned(kernel: Any) -> bool:
    """True when the kernel has an ``autotune`` decorator (Triton's or tiletune's)."""
    return kernel.autotune is not None or any(d.kind == "autotune" for d in kernel.decorators)


def is_jitted(kernel: Any) -> bool:
    """True when the kernel is ``@triton.jit`` (or ``triton.jit(fn)``)."""
    return any(d.kind == "jit" for d in kernel.decorators)


def param_by_name(kernel: Any, name: str) -> Optional[Any]:
    """The parameter called ``name``, or None."""
    for p in kernel.params:
        if p.name == name:
            return p
    return None


def fmt_names(names: list[str]) -> str:
    """``'A', 'B'``."""
    return ", ".join(repr(n) for n in names)


def literal_configs(kernel: Any) -> Optional[list[Any]]:
    """The kernel's hand-written configs when every one is a literal whose
    names are all known (a ``triton.Config({...})`` with a literal dict), else
    None (no autotune, ``configs=[]``, a variable, a comprehension, a
    ``Config(**kw)``)."""
    at = kernel.autotune
    if at is None or at.configs_empty or not at.configs:
        return None
    for c in at.configs:
        if "kwargs" in c.unresolved or any(k.startswith("*") for k in c.unresolved):
            return None
    return list(at.configs)


def tiletune_searches(module: Any, kernel: Any) -> bool:
    """True when tiletune's ``configs=[]`` search tunes this kernel: a literal
    ``configs=[]`` on ``tiletune.autotune``, or on ``triton.autotune`` in a
    module that enables tiletune (plain Triton runs one empty config)."""
    at = kernel.autotune
    if at is None or not at.configs_empty:
        return False
    return at.qualname.split(".")[0] == "tiletune" or bool(module.enables_tiletune)


def tunability_of(kernel: Any, launch_kwargs: Optional[list[str]] = None) -> Any:
    """The shared verdict (:class:`tiletune.analysis.tunability.Tunability`),
    for one launch when ``launch_kwargs`` (its keyword names) are given."""
    from tiletune.analysis.tunability import tunability

    return tunability(kernel, launch_kwargs=launch_kwargs)


def autotuner_supplies(module: Any, kernel: Any) -> Optional[frozenset[str]]:
    """Names the autotuner passes to every run of the kernel: those the literal
    configs set, or, under tiletune's ``configs=[]`` search, those the search
    would choose (``Tunability.searchable``); an empty set when nothing is
    autotuned; None when it cannot be known (configs that are not literal)."""
    if kernel.autotune is None:
        return frozenset()
    configs = literal_configs(kernel)
    if configs is not None:
        names: set[str] = set()
        for c in configs:
            names.update(c.kwargs)
            names.update(k for k in c.unresolved if param_by_name(kernel, k) is not None)
        return frozenset(names) - set(kernel.heuristics)
    if tiletune_searches(module, kernel):
        return frozenset(tunability_of(kernel).searchable)
    if kernel.autotune.configs_empty:
        return frozenset()  # plain Triton: one empty Config
    return None


def passes(launch: Any, param: Any) -> bool:
    """True when ``launch`` passes ``param`` (as a keyword or positionally), or
    may (it unpacks ``*args`` or ``**kwargs``, which can carry any name)."""
    if getattr(launch, "star_args", None):
        return True
    return param.name in launch.fixed or launch.positional_count > param.index


def atomic_ops(kernel: Any) -> dict[str, set[str]]:
    """For each pointer parameter updated with ``tl.atomic_*``, the operations
    (``"add"``, ``"max"``, ...); ``"?"`` where the analysis graph does not say."""
    out: dict[str, set[str]] = {}
    graph = kernel.graph
    for a in kernel.accesses:
        if a.kind != "atomic" or a.pointer is None:
            continue
        label = graph.nodes[a.node].get("label", "") if a.node in graph.nodes else ""
        m = _ATOMIC_OP.search(label)
        out.setdefault(a.pointer, set()).add(m.group(1) if m else "?")
    for p in kernel.atomic_pointers:
        out.setdefault(p, {"?"})
    return out


def shape_like(param: Any) -> bool:
    """True for a block that covers a whole extent (neither split across
    programs nor a loop step) and is never masked against a runtime size: it
    must equal the tensor's dimension (a head dimension), so it is a shape the
    caller passes, not a tiling choice."""
    from tiletune.analysis.model import Role

    return param.role == Role.INNER and param.bound is None


def target_family(target: Optional[str]) -> Any:
    """The chip family (:mod:`tiletune.synthesis.families`) of the lint's ``--target``, or None when the synthesis
    is not there or the name is unknown (the front end validates it; a rule then falls back to its own default)."""
    try:
        from tiletune.synthesis import get_target
        from tiletune.synthesis.families import family_of

        return family_of(get_target(target))
    except Exception:  # noqa: BLE001 - no synthesis or an unknown name
        return None
