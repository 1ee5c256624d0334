"""Binding a launch's arguments to what tuning needs.

A launch ``kernel[grid](*args, **kwargs)`` reaches the autotuner as
``run(*args, grid=..., warmup=..., **kwargs)``.  :class:`Binder` is built once
per kernel (at decoration) and turns such a call into:

* the in-memory tuning key (:meth:`Binder.key`) - the hot path: key argument
  values plus the dtype of every tensor argument, as Triton's autotuner does;
* the named arguments (:meth:`Binder.bind`), defaults filled in;
* the runtime sizes synthesis needs (:func:`synthesis_shapes`), the element
  types of the tensor arguments (:func:`tensor_dtypes`).  Which tiling
  parameters the launch fixes is decided by :mod:`tiletune.analysis.tunability`.

Nothing here imports torch: tensors are recognised by their ``dtype`` and
``data_ptr`` attributes.
"""

from __future__ import annotations

import inspect
from typing import Any, Iterable, Mapping, Sequence

from tiletune.errors import TuningError
from tiletune.specialization import keeps_alignment

__all__ = [
    "LAUNCH_KEYWORDS",
    "Binder",
    "dtype_name",
    "is_tensor",
    "tensor_dtypes",
    "synthesis_shapes",
    "base_function",
]

#: Keywords a launch passes that are not kernel parameters (KernelInterface / compile options).
LAUNCH_KEYWORDS = frozenset(
    {"grid", "warmup", "num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "debug",
     "ir_override", "launch_cooperative_grid", "launch_pdl", "instrumentation_mode"}
)

_MISSING = object()

# torch dtype (by its str()) -> tiletune dtype name
_TORCH_DTYPES = {
    "torch.float16": "fp16",
    "torch.half": "fp16",
    "torch.bfloat16": "bf16",
    "torch.float32": "fp32",
    "torch.float": "fp32",
    "torch.float64": "fp64",
    "torch.double": "fp64",
    "torch.int8": "int8",
    "torch.int16": "int16",
    "torch.short": "int16",
    "torch.int32": "int32",
    "torch.int": "int32",
    "torch.int64": "int64",
    "torch.long": "int64",
    "torch.uint8": "uint8",
    "torch.uint16": "uint16",
    "torch.uint32": "uint32",
    "torch.uint64": "uint64",
    "torch.bool": "int1",
    "torch.float8_e4m3fn": "fp8e4nv",
    "torch.float8_e5m2": "fp8e5",
    "torch.float8_e4m3fnuz": "fp8e4b8",
    "torch.float8_e5m2fnuz": "fp8e5b16",
}


def dtype_name(dtype: Any) -> str:
    """tiletune's name of a torch (or Triton) dtype: ``torch.float16`` -> ``"fp16"``.

    Unknown dtypes come back as their ``str()`` without a ``torch.`` prefix.
    """
    text = str(dtype)
    name = _TORCH_DTYPES.get(text)
    if name is not None:
        return name
    return text[6:] if text.startswith("torch.") else text


def is_tensor(value: Any) -> bool:
    """True for tensor-like launch arguments (torch tensors, Triton's mock tensors)."""
    return hasattr(value, "dtype") and hasattr(value, "data_ptr")


def base_function(fn: Any) -> Any:
    """The Python function under a chain of Triton wrappers (``.fn`` links)."""
    seen = 0
    while not inspect.isfunction(fn) and hasattr(fn, "fn") and seen < 16:
        fn = fn.fn
        seen += 1
    return fn


class Binder:
    """Argument binding for one kernel, precomputed at decoration.

    ``arg_names`` are the kernel's parameters in order; ``key`` the names whose
    values select a tuning (Triton's ``key=``).  The signature's defaults are
    read from the Python function.
    """

    def __init__(self, kernel_name: str, arg_names: Sequence[str], key: Sequence[str], base_fn: Any = None):
        self.kernel_name = kernel_name
        self.arg_names = list(arg_names)
        self.key_names = list(key)
        self.index = {name: i for i, name in enumerate(self.arg_names)}
        self.defaults: dict[str, Any] = {}
        self.constexpr: set[str] = set()
        if base_fn is not None:
            try:
                sig = inspect.signature(base_fn)
            except (TypeError, ValueError):
                sig = None
            if sig is not None:
                for p in sig.parameters.values():
                    if p.default is not inspect.Parameter.empty:
                        self.defaults[p.name] = p.default
                    ann = p.annotation
                    text = ann if isinstance(ann, str) else getattr(ann, "__name__", repr(ann))
                    if "constexpr" in str(text):
                        self.constexpr.add(p.name)
        # (position, name) pairs, precomputed for the hot path
        self._key_slots = tuple((self.index[k], k) for k in self.key_names if k in self.index)
        self._dtype_slots = tuple((i, n) for i, n in enumerate(self.arg_names) if n not in self.constexpr)
        self._align_slots: tuple = ()
        self.alignment_keyed = False

    def key_alignment(self, names: Sequence[str]) -> None:
        """Make the in-memory key also say whether each of ``names`` is a multiple of 16 (those not in ``key``).

        ``names`` are the integers that decide which loads Triton pipelines
        (:func:`tiletune.synthesis.alignment.alignment_params`); Triton
        specialises on the same fact.  A config tuned where a load was not
        pipelined (one shared buffer) may not fit where it is (``num_stages``
        buffers), so the two launches are tuned apart."""
        self._align_slots = tuple((self.index[n], n) for n in names if n in self.index and n not in self.key_names)
        self.alignment_keyed = True

    # ------------------------------------------------------------------ hot path
    def key(self, args: tuple, kwargs: Mapping[str, Any]) -> tuple:
        """The in-memory tuning key: key values, the dtype of each tensor argument, then the alignment of the
        integers :meth:`key_alignment` names."""
        n = len(args)
        out = []
        for i, name in self._key_slots:
            out.append(args[i] if i < n else kwargs.get(name, self.defaults.get(name)))
        for i, name in self._dtype_slots:
            a = args[i] if i < n else kwargs.get(name)
            d = getattr(a, "dtype", None)
            if d is not None:
                out.append(d)
        for i, name in self._align_slots:
            v = args[i] if i < n else kwargs.get(name, self.defaults.get(name))
            out.append(keeps_alignment(v))
        return tuple(out)

    # ------------------------------------------------------------------ tuning path
    def bind(self, args: tuple, kwargs: Mapping[str, Any], *, defaults: bool = True) -> dict[str, Any]:
        """Named kernel arguments of a launch (positional and keyword), defaults filled in.

        Launch options (``grid``, ``num_warps``...) are left out.  Raises
        :class:`TuningError` for too many positional arguments or a parameter
        given twice.
        """
        if len(args) > len(self.arg_names):
            raise TuningError(
                f"kernel {self.kernel_name!r} takes {len(self.arg_names)} arguments "
                f"({', '.join(self.arg_names)}) but the launch passed {len(args)} positionally; "
                "check the launch's argument list"
            )
        bound = dict(zip(self.arg_names, args))
        for name, value in kwargs.items():
            if name in LAUNCH_KEYWORDS:
                continue
            if name in bound:
                raise TuningError(
                    f"kernel {self.kernel_name!r}: parameter {name!r} was passed both positionally and "
                    "as a keyword; pass it once"
                )
            bound[name] = value
        if defaults:
            for name, value in self.defaults.items():
                bound.setdefault(name, value)
        return bound

    def key_values(self, bound: Mapping[str, Any]) -> list:
        """The values of the key arguments (JSON-friendly: tensors become their dtype name)."""
        out = []
        for name in self.key_names:
            v = bound.get(name)
            if is_tensor(v):
                v = dtype_name(v.dtype)
            elif not isinstance(v, (int, float, str, bool, type(None))):
                v = str(v)
            out.append(v)
        return out


def tensor_dtypes(arg_names: Iterable[str], bound: Mapping[str, Any]) -> dict[str, str]:
    """``{param: dtype name}`` for every tensor argument, in signature order."""
    out = {}
    for name in arg_names:
        v = bound.get(name)
        if is_tensor(v):
            out[name] = dtype_name(v.dtype)
    return out


def synthesis_shapes(kernel_name: str, required: Iterable[str], bound: Mapping[str, Any]) -> dict[str, int]:
    """``{runtime arg: int}`` for the sizes synthesis needs; a clear error when one is missing."""
    shapes: dict[str, int] = {}
    for name in required:
        if name not in bound:
            raise TuningError(
                f"kernel {kernel_name!r}: synthesis needs the runtime argument {name!r} (a size the "
                f"tiling depends on) but the launch did not pass it; pass {name}=... or give "
                "configs=[...] explicitly"
            )
        v = bound[name]
        if isinstance(v, bool) or not isinstance(v, int):
            try:
                import numbers

                if isinstance(v, numbers.Integral):
                    v = int(v)
                else:
                    raise TypeError
            except TypeError:
                raise TuningError(
                    f"kernel {kernel_name!r}: synthesis needs the runtime argument {name!r} as an int, "
                    f"got {type(v).__name__} {v!r}; pass a Python int"
                ) from None
        shapes[name] = int(v)
    return shapes
