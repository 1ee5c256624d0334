"""The agreement check: candidates tiletune chose must compute the same thing.

With ``configs=[]`` tiletune, not the author, picks the tile sizes, so it
must not pick one that changes what the kernel computes.  Some tile
parameters carry meaning: a block-scaled matmul that loads one scale per
``BLOCK_K`` step is right only while ``BLOCK_K`` divides the scale group; a
routed GEMM whose rows the host padded to ``BLOCK_M`` is right only at that
``BLOCK_M``.  Nothing in a config list says so; the outputs do.

Every candidate runs once from the same snapshot of the tensors it writes,
and a :class:`Fingerprint` of its outputs is compared with the reference
(the first candidate checked).  A fingerprint is a full copy of an output up
to :data:`FULL_COPY_ELEMENTS` elements, else a fixed random sample of
:data:`SAMPLE_ELEMENTS` elements plus the whole tensor's sum and norm.
Candidates agree when the norm-wise relative error of every output is at
most :func:`threshold_for` its dtype (loose enough for TF32 dots and a
different reduction order, far below what a wrong tile does: 0.14-1.3 on the
kernels that motivated this).  ``verify=True`` keeps its stronger meaning:
full copies compared element by element (:func:`~tiletune.runtime.side_effects.outputs_match`).

When two candidates disagree, :func:`attribute` finds the parameter whose
change alone alters the output (one parameter at a time, from either side);
:class:`MeaningError` names it.  Which side is right is never guessed.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from tiletune.errors import TuningError

__all__ = ["Fingerprint", "Disagreement", "MeaningError", "compare", "threshold_for", "differing",
           "attribute", "meaning_message", "probe_indices", "Checker", "check_mode", "FULL_COPY_ELEMENTS", "SAMPLE_ELEMENTS",
           "LAUNCH_OPTIONS"]

#: Outputs up to this many elements are kept whole (4 MiB of float32); larger ones as a sample.
FULL_COPY_ELEMENTS = 1 << 20
#: Elements sampled (fixed positions, one seed) from an output larger than FULL_COPY_ELEMENTS.
SAMPLE_ELEMENTS = 1 << 16
_SEED = 20261126

#: Launch options compared one at a time after the kernel's own parameters.
LAUNCH_OPTIONS = ("num_warps", "num_stages")

#: Other settings in which a suspected parameter's effect is checked before it is said to carry meaning
#: (:func:`_reproduces`): each costs two runs, on the disagreement path only.
MAX_WITNESSES = 2

# Norm-wise relative error above which two outputs disagree, by dtype.  fp32 allows for TF32 dots
# (10-bit mantissa, ~1e-3 on long reductions); fp8 for one ulp (12.5% for e4m3) on some elements.
_THRESHOLDS = {
    "torch.float64": 1e-6,
    "torch.float32": 1e-2,
    "torch.float16": 1e-2,
    "torch.bfloat16": 3e-2,
    "torch.float8_e4m3fn": 0.1,
    "torch.float8_e4m3fnuz": 0.1,
    "torch.float8_e5m2": 0.15,
    "torch.float8_e5m2fnuz": 0.15,
}
_INTEGER_THRESHOLD = 1e-3


def threshold_for(dtype: Any) -> float:
    """The norm-wise relative error above which two outputs of ``dtype`` disagree."""
    return _THRESHOLDS.get(str(dtype), _INTEGER_THRESHOLD)


@dataclass
class _Print:
    """One output's fingerprint: the whole tensor (``full``) or a sample, with its shape and stats."""

    shape: Tuple[int, ...]
    dtype: Any
    values: Any  # float64 tensor: every element, or the sampled ones
    full: bool
    total: float  # sum over the whole tensor (float64)
    norm: float  # 2-norm over the whole tensor (float64)
    nonfinite: int  # NaN/inf elements in the whole tensor


class Fingerprint:
    """Cheap, comparable summaries of a candidate's outputs (see the module doc)."""

    def __init__(self, prints: Mapping[str, _Print]):
        self.prints = dict(prints)

    @classmethod
    def of(cls, tensors: Mapping[str, Any]) -> "Fingerprint":
        """Fingerprint each named tensor (read now; the tensors may change afterwards)."""
        import torch

        prints: Dict[str, _Print] = {}
        for name, t in tensors.items():
            flat = t.detach().reshape(-1)
            if flat.is_complex():
                flat = torch.view_as_real(flat).reshape(-1)
            full = flat.numel() <= FULL_COPY_ELEMENTS
            if full:
                values = flat.to(torch.float64).clone()
            else:
                gen = torch.Generator(device="cpu").manual_seed(_SEED)
                idx = torch.randint(0, flat.numel(), (SAMPLE_ELEMENTS,), generator=gen).to(flat.device)
                values = flat.index_select(0, idx).to(torch.float64)
            total, norm, nonfinite = _stats(flat)
            prints[name] = _Print(tuple(t.shape), t.dtype, values, full, total, norm, nonfinite)
        return cls(prints)


def _stats(flat: Any) -> Tuple[float, float, int]:
    """Sum, 2-norm (float64 accumulation, no float64 copy of the tensor) and count of NaN/inf elements;
    the sum and norm over the finite elements only."""
    import torch

    if not (flat.is_floating_point() or flat.is_complex()):  # integers and bool: in chunks, no whole copy
        total, squares = 0.0, 0.0
        for part in flat.split(FULL_COPY_ELEMENTS):
            part = part.double()
            total += float(part.sum())
            squares += float((part * part).sum())
        return total, math.sqrt(squares), 0
    finite = torch.isfinite(flat)
    nonfinite = int(flat.numel() - int(finite.sum()))
    if nonfinite:
        flat = torch.where(finite, flat, torch.zeros((), dtype=flat.dtype, device=flat.device))
    return (float(flat.sum(dtype=torch.float64)),
            float(torch.linalg.vector_norm(flat, dtype=torch.float64)), nonfinite)


@dataclass
class Disagreement:
    """Two candidates' outputs differ: which tensor, the norm-wise relative error, and in words."""

    tensor: str
    rel_err: float
    why: str


def _rel_err(ref: _Print, got: _Print) -> float:
    """Norm-wise relative error of ``got`` against ``ref`` (sampled where a fingerprint is a sample)."""
    import torch

    r, g = ref.values, got.values
    both_nan = torch.isnan(r) & torch.isnan(g)
    same_inf = torch.isinf(r) & (r == g)
    diff = torch.where(both_nan | same_inf, torch.zeros_like(r), g - r)
    if not bool(torch.isfinite(diff).all()):
        return math.inf
    scale = float(torch.where(torch.isfinite(r), r, torch.zeros_like(r)).norm())
    err = float(diff.norm())
    if err == 0.0:
        rel = 0.0
    else:
        rel = err / scale if scale > 0 else math.inf
    if not ref.full:  # the whole tensor's sum and norm catch what the sample misses
        mag = max(ref.norm * math.sqrt(max(1, math.prod(ref.shape))), 1e-300)
        rel = max(rel, abs(got.total - ref.total) / mag if ref.norm > 0 else 0.0,
                  abs(got.norm - ref.norm) / ref.norm if ref.norm > 0 else (0.0 if got.norm == 0 else math.inf))
    return rel


def compare(ref: Fingerprint, got: Fingerprint, thresholds: Optional[Mapping[str, float]] = None) -> Optional[Disagreement]:
    """The first output on which ``got`` disagrees with ``ref``, or None when every output agrees.

    ``thresholds`` may give ``rtol`` (the norm-wise threshold for every dtype).
    """
    for name, r in ref.prints.items():
        g = got.prints.get(name)
        if g is None:
            continue
        if r.shape != g.shape or r.dtype != g.dtype:
            return Disagreement(name, math.inf, f"{name}: shape/dtype {g.shape}/{g.dtype} differs from {r.shape}/{r.dtype}")
        if r.nonfinite != g.nonfinite:
            return Disagreement(name, math.inf, f"{name}: {g.nonfinite} NaN/inf element(s) against {r.nonfinite}")
        limit = float(thresholds["rtol"]) if thresholds and "rtol" in thresholds else threshold_for(r.dtype)
        rel = _rel_err(r, g)
        if rel > limit:
            what = "sampled " if not r.full else ""
            return Disagreement(name, rel, f"{name}: {what}relative error {rel:.3g} (agreement threshold {limit:g})")
    return None


def _params(config: Any) -> Dict[str, Any]:
    out = dict(config.kwargs)
    for opt in LAUNCH_OPTIONS:
        out[opt] = getattr(config, opt, None)
    return out


def differing(a: Any, b: Any) -> List[str]:
    """The parameters (kernel parameters first, then launch options) whose values differ between configs."""
    pa, pb = _params(a), _params(b)
    names = [n for n in pa if n not in LAUNCH_OPTIONS] + [n for n in pb if n not in pa and n not in LAUNCH_OPTIONS]
    names += list(LAUNCH_OPTIONS)
    return [n for n in names if pa.get(n) != pb.get(n)]


def with_value(config: Any, name: str, value: Any) -> Any:
    """A copy of ``config`` with one parameter (or launch option) set to ``value``."""
    out = copy.copy(config)
    if name in LAUNCH_OPTIONS:
        setattr(out, name, value)
    else:
        out.kwargs = {**config.kwargs, name: value}
    return out


@dataclass
class Attribution:
    """The parameter whose change alone changes the output, its two values and the error between them."""

    name: str
    value_a: Any
    value_b: Any
    rel_err: float


def attribute(ref_config: Any, other_config: Any, run: Callable[[Any], Optional[Any]],
              differs: Callable[[Any, Any], Optional[Disagreement]], ref_record: Any, other_record: Any
              ) -> Optional[Attribution]:
    """Which single parameter makes ``other_config`` compute something else than ``ref_config``.

    For each differing parameter p (kernel parameters first): run the
    reference with p set to the other's value; if that disagrees with the
    reference, p carries meaning.  Else (that config could not run) run the
    other with p set back to the reference's value; if that agrees with the
    reference, p carries meaning.  ``run(config)`` returns the record of one
    run from the snapshot (:meth:`Checker.take`), or None when the config
    cannot compile or run; ``differs(ref, got)`` compares two records.  None
    when no single parameter explains the disagreement.
    """
    for name in differing(ref_config, other_config):
        a, b = _params(ref_config)[name], _params(other_config)[name]
        one = run(with_value(ref_config, name, b))
        if one is not None:
            d = differs(ref_record, one)
            if d is not None:
                if not _reproduces(ref_config, name, b, run, differs):
                    return None  # one config computes wrong (a miscompile, a race), not the parameter
                return Attribution(name, a, b, d.rel_err)
            continue  # this parameter alone changes nothing
        back = run(with_value(other_config, name, a))
        if back is not None and differs(ref_record, back) is None:
            if not _reproduces(ref_config, name, b, run, differs):
                return None
            d = differs(ref_record, other_record)
            return Attribution(name, a, b, d.rel_err if d is not None else math.inf)
    return None


def witnesses(config: Any, name: str) -> List[Any]:
    """Configs like ``config`` in another setting, ``name`` untouched: ``num_warps`` doubled (halved at 8 and
    above), then each other integer kernel parameter halved (doubled at 1)."""
    out = []
    warps = getattr(config, "num_warps", None)
    if name != "num_warps" and isinstance(warps, int) and warps > 0:
        out.append(with_value(config, "num_warps", warps * 2 if warps < 8 else warps // 2))
    for other, value in config.kwargs.items():
        if other != name and isinstance(value, int) and not isinstance(value, bool) and value > 0:
            out.append(with_value(config, other, value // 2 if value > 1 else 2))
    return out


def _reproduces(ref_config: Any, name: str, b: Any, run: Callable[[Any], Optional[Any]],
                differs: Callable[[Any, Any], Optional[Disagreement]]) -> bool:
    """Whether setting ``name`` to ``b`` changes the output in another setting too (:func:`witnesses`).

    A parameter that carries meaning changes it in every setting; a config the compiler got wrong does
    not (Triton 3.6 on the H100 computed a chunked-attention kernel wrongly at BK=128, BV=32, 4 warps only:
    8 warps, or BK=64, agreed with every other BV).  False when some witness pair both ran and agreed;
    True when every pair that ran disagreed, or none ran (the attribution stands, as before)."""
    for witness in witnesses(ref_config, name)[:MAX_WITNESSES]:
        base, changed = run(witness), run(with_value(witness, name, b))
        if base is not None and changed is not None and differs(base, changed) is None:
            return False
    return True


class MeaningError(TuningError):
    """A tuned parameter changes what the kernel computes: tiletune will not choose its value."""

    def __init__(self, message: str, parameter: Optional[str] = None):
        self.parameter = parameter
        super().__init__(message)


def meaning_message(kernel: str, found: Attribution, hinted: Optional[Sequence[Any]] = None) -> str:
    """The error for a parameter that carries meaning: names the kernel, the parameter and the fix."""
    p = found.name
    err = "inf" if math.isinf(found.rel_err) else f"{found.rel_err:.3g}"
    head = (f"kernel {kernel!r}: {p} changes the output (relative error {err} at {p}={found.value_b!r} "
            f"against {p}={found.value_a!r}, every other parameter equal)")
    if p in LAUNCH_OPTIONS:
        return (f"{head}: the kernel's result depends on {p}, which no tile size should change (a race or a "
                f"reduction that assumes one {p}); fix the kernel, or pass configs=[...] by hand; "
                "verify=False turns this check off")
    if hinted is not None:
        return (f"{head}: the values hints[{p!r}] lists ({', '.join(map(repr, hinted))}) do not compute the "
                f"same thing; list only the values your data is built for, or pass {p}=... at launch")
    return (f"{head}: {p} is not a free tile size, so tiletune will not choose it. Pass it at launch "
            f"(kernel[grid](..., {p}=<the value your data is built for>)) or list its safe values in "
            f"hints={{{p!r}: [...]}}; verify=False turns this check off")


def probe_indices(configs: Sequence[Any], batch: Sequence[int]) -> List[int]:
    """Candidates to add to a first batch so that every parameter the pool varies takes two values in it.

    A parameter that carries meaning is only seen when two of its values are
    compared.  For each kernel parameter the batch holds at one value, the
    pool's config equal to the batch's first except for that parameter is
    preferred (a disagreement then names it at once), else the best-ranked
    config with another value.  Launch options are not probed.
    """
    if not batch:
        return []
    chosen = list(batch)
    first = configs[batch[0]]
    names: List[str] = []
    for c in configs:
        for n in c.kwargs:
            if n not in names:
                names.append(n)
    added: List[int] = []
    for name in names:
        values = {_key(configs[i].kwargs.get(name)) for i in chosen}
        if len(values) > 1:
            continue
        others = [j for j, c in enumerate(configs) if _key(c.kwargs.get(name)) not in values]
        if not others:
            continue
        same = [j for j in others if differing(first, configs[j]) == [name]]
        pick = (same or others)[0]
        if pick not in chosen:
            chosen.append(pick)
            added.append(pick)
    return added


def _key(v: Any) -> Any:
    try:
        hash(v)
        return v
    except TypeError:
        return repr(v)


class Checker:
    """How candidates' outputs are recorded and compared: ``"agree"`` (fingerprints, norm-wise) or
    ``"full"`` (``verify=True``: full copies, element by element, ``tolerance`` as ``rtol``/``atol``)."""

    def __init__(self, mode: str, tolerance: Optional[Mapping[str, float]] = None):
        self.mode = mode
        self.tolerance = dict(tolerance) if tolerance else None

    def take(self, tensors: Mapping[str, Any]) -> Any:
        """A record of ``tensors`` as they are now."""
        if self.mode == "full":
            clones = {n: t.detach().clone() for n, t in tensors.items()}
            return clones, Fingerprint.of(clones)
        return Fingerprint.of(tensors)

    def warm_up(self, tensors: Mapping[str, Any]) -> None:
        """Record ``tensors`` once and compare the record with itself, keeping nothing: the first record and
        the first comparison of a process load the device kernels they use.  On the H200 the first two
        checks of a cold first tune took a median 0.108 s and 0.060 s against 0.0034 s for each later one
        (36 first tunes at 57bbf43); done while the first batch compiles, that load is off the critical path.
        Only reads ``tensors``."""
        record = self.take(tensors)
        self.differs(record, record)

    def differs(self, ref: Any, got: Any) -> Optional[Disagreement]:
        """How ``got`` disagrees with ``ref``, or None."""
        if self.mode == "full":
            from .side_effects import outputs_match

            ok, why = outputs_match(ref[0], got[0], self.tolerance)
            if ok:
                return None
            d = compare(ref[1], got[1], {"rtol": 0.0})
            return Disagreement(d.tensor if d else "", d.rel_err if d else 0.0, why)
        return compare(ref, got, self.tolerance)


def check_mode(verify: Any, synthesized: bool, kernel: str) -> str:
    """``"off"``, ``"agree"`` or ``"full"`` for a tuner's ``verify=`` argument.

    None (the default): ``"agree"`` when tiletune chooses the configs
    (``configs=[]``), ``"off"`` for the author's own list; False: off; True or a
    dict of ``rtol``/``atol``: ``"full"``.
    """
    if verify is None:
        return "agree" if synthesized else "off"
    if verify is False:
        return "off"
    if verify is True or isinstance(verify, Mapping):
        return "full"
    raise TuningError(f"kernel {kernel!r}: verify={verify!r} is not understood; pass None (the default: check "
                      "that the candidates tiletune chose agree), False (no check), True (compare every "
                      "candidate's outputs in full) or a dict with 'rtol'/'atol'")


def hinted_values(hints: Mapping[str, Iterable[Any]], name: str) -> Optional[List[Any]]:
    """The values ``hints`` lists for ``name``, or None."""
    if name in hints:
        return list(hints[name])
    return None
