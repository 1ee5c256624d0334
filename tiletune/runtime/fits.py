"""The chip model for the function tuner: a ready ``prune_fn`` and config spaces from synthesis.

Triton-distributed users prune a function's config space by hand
(``prune_fn=lambda config, *args: config["BLOCK"] * ... <= smem``).  Here the
kernel's analysis and the target do it:

* :func:`fits` -- ``prune_fn=tiletune.fits(kernel)`` drops every config dict
  holding a kernel config the target cannot run: each ``triton.Config`` value
  in the dict (or the dict's own entries that name the kernel's constexpr
  parameters, ``num_warps`` and ``num_stages``) is checked with
  :func:`tiletune.synthesis.check_config` -- shared memory, Triton's largest
  tensor, UB / L1 / L0 on Ascend, alignment, minimum tile sizes,
  ``tl.static_assert`` conditions, ``num_warps`` domain.  The register
  estimate is a synthesis preference, not a hard limit (a spilling config
  still runs), so it prunes nothing here.
* :func:`config_space_from` -- a function's ``config_space`` built from the
  synthesized candidates of the kernel it launches.

What the checks need and where it comes from: ``shapes`` (runtime sizes:
``{"M": 4096, ...}`` or a function of the call's arguments) and ``dtypes``
(the kernel's pointer parameters' element types, likewise).  Without
``dtypes``, when every tensor argument of the call has one dtype, the
kernel's pointers are taken to have it; otherwise the checks that need a
dtype (capacities in bytes) are skipped -- pass ``dtypes=`` to have them.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

__all__ = ["fits", "config_space_from", "Fits"]

ShapeSource = Union[None, Mapping[str, int], Callable[..., Mapping[str, int]]]
DtypeSource = Union[None, Mapping[str, str], Callable[..., Mapping[str, str]]]


def _is_triton_config(v: Any) -> bool:
    t = type(v)
    return t.__name__ == "Config" and t.__module__.startswith("triton") and hasattr(v, "kwargs")


def _spec_of(kernel: Any) -> Any:
    from tiletune.analysis import analyze_kernel

    from .binding import base_function

    try:
        return analyze_kernel(kernel)
    except Exception as exc:
        name = getattr(base_function(kernel), "__name__", repr(kernel))
        raise TypeError(f"tiletune.fits: cannot analyse kernel {name!r} ({exc}); pass the @triton.jit kernel "
                        "the tuned function launches") from exc


class Fits:
    """A ``prune_fn`` (``(config, *args, **kwargs) -> bool``) that keeps configs the target can run.

    :meth:`why` gives the reasons a config dict is dropped (``[]``: kept).
    """

    def __init__(self, kernel: Any, *, target: Any = None, shapes: ShapeSource = None, dtypes: DtypeSource = None):
        from .targets import resolve_target

        self.spec = _spec_of(kernel)
        self.target = resolve_target(target)
        self.shapes = shapes
        self.dtypes = dtypes
        self._constexpr = {p.name for p in self.spec.params if p.constexpr}
        self._pointers = [p.name for p in self.spec.params if not p.constexpr]

    def __repr__(self) -> str:
        return f"tiletune.fits({self.spec.name}, target={self.target.name})"

    def _kernel_configs(self, config: Mapping[str, Any]) -> List[Tuple[Dict[str, Any], Optional[int], Optional[int]]]:
        found = [(dict(v.kwargs), v.num_warps, v.num_stages) for v in config.values() if _is_triton_config(v)]
        if found:
            return found
        kw = {k: v for k, v in config.items() if k in self._constexpr}
        if kw or "num_warps" in config or "num_stages" in config:
            return [(kw, config.get("num_warps"), config.get("num_stages"))]
        return []

    def _call_dtypes(self, args: tuple, kwargs: dict) -> Dict[str, str]:
        if callable(self.dtypes):
            return dict(self.dtypes(*args, **kwargs))
        if self.dtypes is not None:
            return dict(self.dtypes)
        from .binding import dtype_name, is_tensor

        seen = {dtype_name(v.dtype) for v in list(args) + list(kwargs.values()) if is_tensor(v)}
        if len(seen) != 1:
            return {}  # unknown: capacity checks are skipped (see the module docstring)
        only = seen.pop()
        return {name: only for name in self._pointers}

    def why(self, config: Mapping[str, Any], *args: Any, **kwargs: Any) -> List[str]:
        """Why ``config`` cannot run on the target at this call (``[]`` when nothing is known to be wrong)."""
        from tiletune.synthesis import check_config

        shapes = self.shapes(*args, **kwargs) if callable(self.shapes) else dict(self.shapes or {})
        dtypes = self._call_dtypes(args, kwargs)
        out: List[str] = []
        for kw, warps, stages in self._kernel_configs(config):
            out.extend(check_config(self.spec, kw, warps, stages, shapes or None, dtypes, self.target))
        return out

    def __call__(self, config: Mapping[str, Any], *args: Any, **kwargs: Any) -> bool:
        return not self.why(config, *args, **kwargs)


def fits(kernel: Any, *, target: Any = None, shapes: ShapeSource = None, dtypes: DtypeSource = None) -> Fits:
    """``prune_fn=tiletune.fits(kernel)``: keep the config dicts whose kernel configs fit ``target``.

    ``kernel`` is the ``@triton.jit`` kernel the tuned function launches
    (analysed once, here).  ``target``: a name, alias or Target (default
    ``TILETUNE_TARGET``, else h100 under the interpreter, else the detected
    device).  ``shapes`` / ``dtypes``: dicts, or functions of the tuned
    function's arguments returning them (see the module docstring for the
    default dtypes).
    """
    return Fits(kernel, target=target, shapes=shapes, dtypes=dtypes)


def config_space_from(kernel: Any, shapes: Mapping[str, int], dtypes: Mapping[str, str], *, target: Any = None,
                      top_k: int = 16, hints: Optional[Mapping[str, Sequence[Any]]] = None,
                      fixed: Optional[Mapping[str, int]] = None, as_config: Optional[str] = None) -> List[dict]:
    """A function's ``config_space``: the ranked candidates synthesized for ``kernel`` at these sizes.

    Each dict holds the tiling values plus ``num_warps`` and ``num_stages``
    (the function passes them on to the launch), or, with
    ``as_config="config"``, one ``triton.Config`` under that key.  ``fixed``
    values are not searched (parameters the function passes itself).  The
    request goes through the same guards as ``configs=[]`` and
    ``synth-configs`` (:func:`tiletune.synthesis.request.synthesis_request`):
    a tiling parameter the kernel does not let tuning choose (in the autotune
    key, set by a heuristic, with a default, passed at its launch) needs a
    value in ``fixed``, one that may carry meaning a value or ``hints``, else
    :class:`~tiletune.synthesis.request.RequestError` names each; under an
    incomplete analysis only configs safe under the unknowns are returned.
    """
    from tiletune.synthesis.request import synthesis_request

    from .targets import resolve_target

    spec = _spec_of(kernel)
    result = synthesis_request(spec, dict(shapes), dict(dtypes), resolve_target(target), hints=hints, fixed=fixed,
                               top_k=top_k, front="api").run()
    space: List[dict] = []
    for cand in result.candidates:
        cfg = cand.to_config()
        if as_config:
            space.append({as_config: cfg})
            continue
        entry = dict(cfg.kwargs)
        for name in ("num_warps", "num_stages"):
            if getattr(cand, name) is not None:
                entry[name] = getattr(cand, name)
        space.append(entry)
    return space
