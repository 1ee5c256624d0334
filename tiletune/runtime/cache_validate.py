"""Check a cached winner against the kernel and the target before it is launched.

A cache file is JSON anyone can edit (or an older tiletune wrote); a value
that is not what a tuning of *this* kernel on *this* target could have chosen
must never reach a launch: a missing tiling parameter is a TypeError in the
user's call, ``BLOCK=3`` fails in ``tl.arange``, ``BLOCK=-64`` launches a
negative grid and leaves the output uninitialised.  :func:`config_problems`
lists every reason an entry's config is unusable (``[]`` when none is known);
the autotuner then warns with :class:`~tiletune.errors.TiletuneCacheWarning`
(:func:`warn_bad_entry`) and tunes again, and the new winner replaces the bad
entry.

Checks, in order: the config is an object whose ``kwargs`` is an object; every
name is a parameter of the kernel and not one the launch passes; every
parameter a ``configs=[]`` search tunes (:func:`tiletune.analysis.tunability`)
is present, and nothing else is set: a name that is neither tuned nor a
``hints`` name nor ``multibuffer`` (Ascend) may appear only with the value the
launch would give it anyway (its default or fixed value), so an edited entry
cannot switch on e.g. a defaulted ``EVEN`` constexpr that drops the masks; tiling values are integers, at least the parameter's minimum,
powers of two where a ``tl.arange`` needs it (``Param.power_of_two``) and
within Triton's largest tensor; ``hints`` parameters hold one of the hinted
values; ``num_warps``/``num_stages`` are sane integers; finally the target's
hard limits, through the same :func:`tiletune.synthesis.check_config`
that synthesis and the lint use (capacity, element limit, static asserts).
"""

from __future__ import annotations

import json
import threading
import warnings
from typing import Any, Iterable, List, Mapping, Optional, Sequence

from tiletune.errors import TiletuneCacheWarning

__all__ = ["config_problems", "kernel_entry_problems", "config_from_entry", "warn_bad_entry", "TRITON_MAX_NUMEL", "MAX_NUM_WARPS", "MAX_NUM_STAGES",
           "MAX_NUM_CTAS", "MAX_NREG", "CONFIG_FIELDS"]

#: Triton's largest tensor (``triton.language.TRITON_MAX_TENSOR_NUMEL``), also the largest arange extent.
TRITON_MAX_NUMEL = 1 << 20
#: 32 warps of 32 threads = 1024 threads, the most a CUDA block may have.
MAX_NUM_WARPS = 32
#: Deeper software pipelines than this are not something a tuning chooses.
MAX_NUM_STAGES = 16
#: A thread block cluster has at most 16 blocks (sm_90).
MAX_NUM_CTAS = 16
#: A thread has at most 255 registers.
MAX_NREG = 255
#: The fields of a stored config (``report.config_to_dict``); any other (non-null) one was not written by tiletune.
CONFIG_FIELDS = ("kwargs", "num_warps", "num_stages", "extra")


def _triton_max_numel() -> int:
    try:
        import triton.language as tl

        return int(getattr(tl, "TRITON_MAX_TENSOR_NUMEL", TRITON_MAX_NUMEL))
    except Exception:  # triton missing or broken: the documented value
        return TRITON_MAX_NUMEL


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _same_json(a: Any, b: Any) -> bool:
    try:
        return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    except (TypeError, ValueError):
        return a == b


def _launch_options(config: Mapping[str, Any], low_stages: int) -> List[str]:
    out: List[str] = []
    warps = config.get("num_warps")
    if warps is not None:
        if not _is_int(warps) or warps < 1 or warps & (warps - 1) or warps > MAX_NUM_WARPS:
            out.append(f"num_warps={warps!r} is not a power of two between 1 and {MAX_NUM_WARPS}")
    stages = config.get("num_stages")
    if stages is not None:
        if not _is_int(stages) or not low_stages <= stages <= MAX_NUM_STAGES:
            out.append(f"num_stages={stages!r} is not an integer between {low_stages} and {MAX_NUM_STAGES}")
    extra = config.get("extra")
    if extra is not None and not isinstance(extra, Mapping):
        out.append(f"'extra' is a {type(extra).__name__}, not an object")
    unknown = sorted(str(k) for k, v in config.items() if k not in CONFIG_FIELDS and v is not None)
    if unknown:
        out.append(f"field(s) {', '.join(unknown)} are not part of a tiletune config "
                   f"(it holds only {', '.join(CONFIG_FIELDS)})")
    if isinstance(extra, Mapping):
        ctas = extra.get("num_ctas")
        if ctas is not None and (not _is_int(ctas) or not 1 <= ctas <= MAX_NUM_CTAS):
            out.append(f"num_ctas={ctas!r} is not an integer between 1 and {MAX_NUM_CTAS}")
        regs = extra.get("maxnreg")
        if regs is not None and (not _is_int(regs) or not 1 <= regs <= MAX_NREG):
            out.append(f"maxnreg={regs!r} is not an integer between 1 and {MAX_NREG}")
    return out


def config_problems(
    config: Any,
    *,
    kernel_name: str,
    arg_names: Sequence[str],
    spec: Any,
    launch_names: Iterable[str] = (),
    constexpr: Optional[Iterable[str]] = None,
    defaults: Optional[Mapping[str, Any]] = None,
    hints: Optional[Mapping[str, Sequence[Any]]] = None,
    shapes: Optional[Mapping[str, int]] = None,
    dtypes: Optional[Mapping[str, str]] = None,
    target: Any = None,
    fixed: Optional[Mapping[str, Any]] = None,
) -> List[str]:
    """Every reason the stored ``config`` (``{"kwargs": {...}, "num_warps": ..., ...}``) cannot be
    launched for this kernel and target; ``[]`` when nothing is known to be wrong.

    ``spec`` is the kernel's :class:`~tiletune.analysis.model.KernelSpec` (None
    when the analysis failed: then only the checks that need no analysis run).
    ``launch_names`` are the constexprs this launch passes, ``constexpr`` the
    kernel's constexpr parameters (a config sets only those), ``defaults`` the
    live kernel's parameter defaults, ``hints`` the decorator's hints;
    ``shapes``/``dtypes``/``target`` feed ``check_config`` (skipped when
    ``target`` is None); ``fixed`` are the values this launch gives the tiling
    parameters it does not tune.  With a ``spec``, a config may set only the
    tuned parameters, the ``hints`` names and ``multibuffer`` (Ascend), or
    another parameter to exactly its default/fixed value.  Never raises for the
    entry's contents.
    """
    if not isinstance(config, Mapping):
        return [f"the config is a {type(config).__name__}, not an object"]
    kwargs = config.get("kwargs")
    if not isinstance(kwargs, Mapping):
        return [f"the config's 'kwargs' is a {type(kwargs).__name__}, not an object"]
    extra = config.get("extra") if isinstance(config.get("extra"), Mapping) else {}
    values = {**{k: v for k, v in extra.items() if k not in ("num_ctas", "maxnreg")}, **kwargs}
    family = _family(target)
    problems = _launch_options(config, family.min_num_stages)
    params = set(arg_names)
    launch = set(launch_names)
    meta = set(constexpr) if constexpr is not None else None
    for name in values:
        if not isinstance(name, str) or name not in params:
            problems.append(f"{name!r} is not a parameter of kernel {kernel_name!r}")
        elif name in launch or (meta is not None and name not in meta):
            problems.append(f"{name} is passed at launch, so a config may not set it")
    for name, allowed in (hints or {}).items():
        if name in values and name not in launch and not any(_same_json(values[name], a) for a in allowed):
            problems.append(f"{name}={values[name]!r} is not one of the hinted values {list(allowed)!r}")
    if spec is None:
        return problems
    tiling = {p.name: p for p in spec.tiling_params}
    try:
        from tiletune.analysis.tunability import tunability

        tuned = tunability(spec, launch_kwargs=list(launch), defaults=defaults).tuned
    except Exception:  # an older analysis without the verdict: the tiling parameters not passed
        tuned = tuple(n for n in tiling if n not in launch and n not in (defaults or {}))
    missing = [n for n in tuned if n not in values]
    if missing:
        problems.append(f"tuned parameter(s) {', '.join(missing)} missing")
    problems.extend(_untuned_settings(values, kernel_name, tuned, hints, params, launch, meta, family.config_knobs,
                                      {**(defaults or {}), **(fixed or {})}))
    limit = _triton_max_numel()
    bad_value = False
    for name, p in tiling.items():
        if name not in values or name in launch:
            continue
        v = values[name]
        if not _is_int(v):
            problems.append(f"{name}={v!r} is not an integer")
        elif v < max(1, p.min_value):
            problems.append(f"{name}={v} is below its minimum {max(1, p.min_value)}")
        elif p.power_of_two and v & (v - 1):
            problems.append(f"{name}={v} is not a power of two (it sizes a tl.arange)")
        elif p.power_of_two and v > limit:
            problems.append(f"{name}={v} exceeds Triton's largest tensor ({limit} elements)")
        else:
            continue
        bad_value = True
    if problems or bad_value or target is None:
        return problems
    return problems + _target_problems(spec, values, config, shapes, dtypes, target)


def _untuned_settings(values: Mapping[str, Any], kernel_name: str, tuned: Iterable[str],
                      hints: Optional[Mapping[str, Any]], params: set, launch: set, meta: Optional[set],
                      config_knobs: Iterable[str], known: Mapping[str, Any]) -> List[str]:
    """A problem per name a config sets that tuning never chooses (and whose value differs from the
    launch's own): such a value changes the kernel's code beyond what was measured."""
    allowed = set(tuned) | set(hints or {}) | set(config_knobs)
    out: List[str] = []
    for name, value in values.items():
        if name in allowed or not isinstance(name, str) or name not in params or name in launch:
            continue  # tuned, or reported already as not a parameter / passed at launch
        if meta is not None and name not in meta:
            continue
        if name in known and _same_json(value, known[name]):
            continue  # the value the launch gives it anyway
        chosen = ", ".join(sorted(allowed)) or "nothing"
        out.append(f"{name}={value!r} is not chosen by tuning of kernel {kernel_name!r} (it tunes {chosen}); "
                   "a cache entry may set only those")
    return out


def _target(target: Any) -> Any:
    if isinstance(target, str):
        try:
            from tiletune.synthesis import get_target

            return get_target(target)
        except Exception:
            return None
    return target


def _family(target: Any) -> Any:
    """The chip family of ``target``; stock Triton's (the default family) when none is given or known."""
    from tiletune.synthesis.families import DEFAULT_FAMILY, family_of

    resolved = _target(target) if target is not None else None
    try:
        return family_of(resolved) if resolved is not None else DEFAULT_FAMILY
    except Exception:  # noqa: BLE001 - an unknown family: the default rules
        return DEFAULT_FAMILY


def _target_problems(spec: Any, values: Mapping[str, Any], config: Mapping[str, Any],
                     shapes: Optional[Mapping[str, int]], dtypes: Optional[Mapping[str, str]], target: Any) -> List[str]:
    try:
        from tiletune.synthesis.pipeline import check_config

        found = check_config(spec, dict(values), config.get("num_warps"), config.get("num_stages"),
                             dict(shapes) if shapes else None, dict(dtypes or {}), target)
    except Exception:  # noqa: BLE001 - a check that cannot run proves nothing either way
        return []
    name = getattr(_target(target), "name", target)
    return [f"does not fit {name}: {why}" for why in found]


_warned: set = set()
_warned_lock = threading.Lock()


def warn_bad_entry(path: Any, key: str, what: str, problems: Sequence[str]) -> None:
    """Warn once per file, key and reasons (:class:`TiletuneCacheWarning`) that an entry is unusable."""
    token = (str(path), key, tuple(problems))
    with _warned_lock:
        if token in _warned:
            return
        _warned.add(token)
    warnings.warn(
        f"tiletune: {what}: the cached config in {path} under key {key} is unusable "
        f"({'; '.join(problems)}); re-tuning and replacing it",
        TiletuneCacheWarning,
        stacklevel=4,
    )


def kernel_entry_problems(tuner: Any, problem: Any, entry: Any) -> List[str]:
    """:func:`config_problems` of a cached ``entry`` for one launch of a ``tiletune.autotune`` kernel.

    ``tuner`` is the :class:`~tiletune.runtime.autotuner.Autotuner`, ``problem``
    its bound launch (``bound``, ``launch_const``, ``dtypes``).  An entry of a
    hand ``configs`` list must be one of its configs (the entry key covers the
    list, so anything else was edited); synthesized entries get every check.
    """
    if not isinstance(entry, Mapping):
        return [f"the entry is a {type(entry).__name__}, not an object"]
    if not getattr(tuner, "synthesize_configs", False):
        # the key covers the list's text, so an entry that matches none of its configs was edited
        if tuner._config_from_entry(entry) is None:
            return [f"{entry.get('config')!r} is not one of the kernel's {len(tuner.configs)} configs"]
        return []
    spec = tuner.spec()
    shapes = None
    target = None
    fixed = None
    try:
        target = tuner.resolved_target()
    except Exception:  # no target: the capacity checks are skipped, the rest still run
        target = None
    if spec is not None:
        try:
            from tiletune.runtime.binding import synthesis_shapes
            from tiletune.synthesis import required_shapes

            from tiletune.synthesis.alignment import alignment_shapes

            shapes = {**alignment_shapes(spec, problem.bound),
                      **synthesis_shapes(tuner.kernel_name, required_shapes(spec), problem.bound)}
        except Exception:  # a launch that cannot be synthesized for fails in the search, not here
            shapes = None
        try:
            from tiletune.analysis.tunability import fixed_values, tunability

            verdict = tunability(spec, launch_kwargs=list(problem.launch_const),
                                 defaults=getattr(tuner._binder, "defaults", None))
            fixed = fixed_values(spec, verdict, {**problem.bound, **problem.launch_const})[0]
        except Exception:  # no fixed values known: only defaults count as harmless
            fixed = None
    return config_problems(
        entry.get("config"),
        kernel_name=tuner.kernel_name,
        arg_names=tuner.arg_names,
        spec=spec,
        launch_names=list(problem.launch_const),
        constexpr=getattr(tuner._binder, "constexpr", None),
        defaults=getattr(tuner._binder, "defaults", None),
        hints=tuner.hints,
        shapes=shapes,
        dtypes=problem.dtypes,
        target=target,
        fixed=fixed,
    )


def config_from_entry(entry: Mapping[str, Any], arg_names: Sequence[str], configs: Optional[Sequence[Any]] = None) -> Any:
    """The ``triton.Config`` a disk-cache entry names, or None when the entry is malformed or names a
    parameter not in ``arg_names``.  ``configs`` (a hand list): the user's own Config object equal to it (it
    may carry a ``pre_hook``), None when none is."""
    from triton import Config

    from .report import config_to_dict
    from .tuning_log import json_plain

    try:
        c = entry["config"]
        kwargs = dict(c.get("kwargs") or {})
        opts = {}
        if c.get("num_warps") is not None:
            opts["num_warps"] = int(c["num_warps"])
        if c.get("num_stages") is not None:
            opts["num_stages"] = int(c["num_stages"])
        for name, value in (c.get("extra") or {}).items():
            if name in ("num_ctas", "maxnreg"):
                opts[name] = value
            else:
                kwargs[name] = value
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    if any(k not in arg_names for k in kwargs):
        return None
    config = Config(kwargs, **opts)
    if configs is None:
        return config
    want = json_plain(config_to_dict(config))
    for cand in configs:
        if json_plain(config_to_dict(cand)) == want:
            return cand
    return None
