"""The oracle: what Triton's front end says about a live kernel at a launch's arguments.

At the first tuning of a key (never on the dispatch path) the kernel is lowered
to Triton IR (:mod:`tiletune.runtime.triton_ir`) at probe configs:

* :func:`read_kernel`: which constexprs change a load/store/atomic tile or a
  dot extent (the tiling parameters, as Triton reads them) and which change a
  loop's trip count;
* :func:`refused_configs`: the candidates Triton's front end refuses (a dot
  under 16, a ``tl.static_assert``, a type error), dropped before they are
  compiled or timed, with Triton's message; nothing Triton prints reaches the
  user's terminal.

Lowering runs in this process when the kernel is a ``JITFunction``; a kernel
decorated under ``TRITON_INTERPRET=1`` is lowered in a child process, only
when ``TILETUNE_IR_ORACLE=1`` (the child costs seconds; ``0`` turns the oracle
off everywhere).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from .live_kernel import kernel_module_and_name, live_source
from .triton_ir import IRFacts, LoweringError, jit_function, lower_facts, lower_facts_in_subprocess

__all__ = ["OracleReading", "oracle_enabled", "signature_of", "lower_many", "read_kernel", "refused_configs"]


@dataclass
class OracleReading:
    """What the IR says: ``tiling`` (constexprs that change a tile or dot), ``trip_count`` (constexprs
    that change a loop's bounds), ``base`` (the facts at the first probe), ``refused`` (probe -> error)."""

    tiling: List[str] = field(default_factory=list)
    trip_count: List[str] = field(default_factory=list)
    base: Optional[IRFacts] = None
    refused: Dict[str, str] = field(default_factory=dict)


def oracle_enabled(obj: Any) -> bool:
    """``TILETUNE_IR_ORACLE``: ``0`` off, ``1`` on; unset: on when the kernel lowers in this process."""
    value = os.environ.get("TILETUNE_IR_ORACLE", "").strip().lower()
    if value in ("0", "false", "off", "no"):
        return False
    if value in ("1", "true", "on", "yes"):
        return True
    return jit_function(obj) is not None


def _params(obj: Any) -> List[Tuple[str, bool]]:
    jf = jit_function(obj)
    if jf is not None:
        return [(p.name, bool(p.is_constexpr)) for p in jf.params]
    import inspect

    from .live_kernel import _python_function

    fn = _python_function(obj)
    out = []
    for p in inspect.signature(fn).parameters.values():
        ann = p.annotation
        text = ann if isinstance(ann, str) else getattr(ann, "__name__", repr(ann))
        out.append((p.name, "constexpr" in str(text)))
    return out


def signature_of(obj: Any, bound: Mapping[str, Any], constexprs: Mapping[str, Any],
                 described: bool = False) -> Dict[str, Any]:
    """The ``{"signature", "constexprs"}`` probe for a launch's bound arguments plus ``constexprs``,
    specialised as a launch specialises it (:func:`tiletune.runtime.offline_compile.specialize`).

    With ``described``, ``bound`` already describes the arguments (``{"ptr": "fp16"}`` for a
    tensor, plain values otherwise), as on a machine with no tensors (``synth-configs --import``).
    """
    from .offline_compile import describe_args, specialize

    params = _params(obj)
    rest = {k: v for k, v in bound.items() if k not in constexprs}
    signature, values, _ = specialize(params, rest if described else describe_args(rest), dict(constexprs))
    return {"signature": signature, "constexprs": values}


#: Lowerings done in this process: (kernel identity, probe) -> IRFacts or LoweringError (at most LOWERED_MAX).
_LOWERED: "OrderedDict[tuple, Any]" = OrderedDict()
LOWERED_MAX = 512
_LOWERED_LOCK = threading.Lock()


def _probe_key(jf: Any, probe: Mapping[str, Any]) -> tuple:
    """What one lowering depends on: Triton's identity of the kernel (its source, the jit functions it
    calls and the constexpr globals they read: ``JITFunction.cache_key``) and the probe."""
    return (id(jf), jf.cache_key, tuple(sorted((k, str(v)) for k, v in probe["signature"].items())),
            tuple(sorted((k, repr(v)) for k, v in probe["constexprs"].items())))


def _lower_once(jf: Any, probe: Mapping[str, Any]) -> Any:
    """:func:`lower_facts` of one probe, or its :class:`LoweringError`; each distinct probe of a kernel is
    lowered once per process (the candidates screen and the tiling probes, and later keys, share them).
    The facts are shared: callers read them and never change them."""
    try:
        key: Optional[tuple] = _probe_key(jf, probe)
    except Exception:  # Triton cannot name the kernel (its dependency finder refused it): lower, remember nothing
        key = None
    with _LOWERED_LOCK:
        if key in _LOWERED:
            _LOWERED.move_to_end(key)
            return _LOWERED[key]
    try:
        got: Any = lower_facts(jf, probe["signature"], probe["constexprs"])
    except LoweringError as exc:
        got = exc
    if key is None:
        return got
    with _LOWERED_LOCK:
        _LOWERED[key] = got
        while len(_LOWERED) > LOWERED_MAX:
            _LOWERED.popitem(last=False)
    return got


def lower_many(obj: Any, probes: Sequence[Mapping[str, Any]]) -> List[Any]:
    """One :class:`IRFacts` or :class:`LoweringError` per probe (in this process when it can, each
    distinct probe once per process)."""
    jf = jit_function(obj)
    if jf is not None:
        return [_lower_once(jf, p) for p in probes]
    module, qualname = kernel_module_and_name(obj)
    if not module or not qualname:
        raise LoweringError("the kernel has no importable module and name")
    return lower_facts_in_subprocess(module, qualname, probes, src=live_source(obj))


def _changed(obj: Any, bound: Mapping[str, Any], base_values: Mapping[str, Any], names: Sequence[str],
             described: bool) -> Tuple[list, list, list]:
    probes = [signature_of(obj, bound, base_values, described)]
    moved: List[Tuple[str, Any]] = []
    for name in names:
        v = base_values.get(name)
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            continue
        for other in (v * 2, v // 2):
            if other >= 1:
                moved.append((name, other))
                probes.append(signature_of(obj, bound, {**base_values, name: other}, described))
    return probes, moved, lower_many(obj, probes)


def read_kernel(obj: Any, bound: Mapping[str, Any], base_values: Mapping[str, Any],
                names: Sequence[str], described: bool = False) -> OracleReading:
    """Lower at ``base_values`` and with each of ``names`` doubled and halved; which change the tiles.

    ``bound`` holds the launch's arguments (tensors, sizes, fixed constexprs);
    ``base_values`` the constexpr values of one config.  A probe Triton refuses
    tells nothing and is listed in ``refused``.
    """
    probes, moved, results = _changed(obj, bound, base_values, names, described)
    reading = OracleReading()
    base = results[0]
    if isinstance(base, LoweringError):
        reading.refused["base"] = str(base)
        return reading
    reading.base = base
    tiles, loops = base.tile_signature(), base.loop_signature()
    for (name, value), res in zip(moved, results[1:]):
        if isinstance(res, LoweringError):
            reading.refused[f"{name}={value}"] = str(res)
            continue
        if res.tile_signature() != tiles and name not in reading.tiling:
            reading.tiling.append(name)
        if res.loop_signature() != loops and name not in reading.trip_count:
            reading.trip_count.append(name)
    return reading


def refused_configs(obj: Any, bound: Mapping[str, Any], configs: Sequence[Mapping[str, Any]],
                    described: bool = False) -> Dict[int, str]:
    """``{index: Triton's message}`` for the configs (constexpr values) Triton's front end refuses."""
    probes = [signature_of(obj, bound, c, described) for c in configs]
    out: Dict[int, str] = {}
    for i, res in enumerate(lower_many(obj, probes)):
        if isinstance(res, LoweringError):
            out[i] = str(res)
    return out
