"""Side effects of tuning: reset, restore and verify.

Tuning launches the kernel many times; a kernel that writes into its inputs
(in place, atomics, accumulation) would leave the user's tensors changed by
every candidate.  Triton's contract, kept here exactly:

* ``reset_to_zero``: those tensors are zeroed before every benchmarked launch
  and once more before the final real launch;
* ``restore_value``: those tensors are copied before every benchmarked launch
  and copied back after it, so the final real launch sees the user's values;
* a user ``pre_hook``/``post_hook`` replaces both.

:class:`Snapshot` goes further for ``verify=True``: it keeps a copy of the
tensors a verification run writes and puts it back between candidates and
before the final launch.  :func:`outputs_match` compares one candidate's
outputs with a reference candidate's under dtype-appropriate tolerances.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from tiletune.errors import TuningError

__all__ = ["DefaultHooks", "Snapshot", "storage_span", "tolerance_for", "outputs_match", "verify_targets", "capture"]


def storage_span(tensor: Any) -> Any:
    """A 1-D, gap-free view of the whole stretch of ``tensor``'s storage that ``tensor`` covers.

    Snapshots are taken and restored through it: ``clone``/``copy_`` of the
    tensor itself fail or go wrong when its elements overlap (an expanded,
    stride-0 output: "more than one element of the written-to tensor refers to
    a single memory location") and copying back through the span restores
    exactly the memory a launch could have written, whatever the view's
    strides.  A tensor without strides (not a torch tensor) is returned as is.
    """
    try:
        sizes, strides, offset = tuple(tensor.shape), tuple(tensor.stride()), int(tensor.storage_offset())
    except (AttributeError, RuntimeError, TypeError):
        return tensor
    if tensor.numel() == 0:
        return tensor.as_strided((0,), (1,), offset)
    extent = 1 + sum((n - 1) * abs(s) for n, s in zip(sizes, strides))
    return tensor.as_strided((extent,), (1,), offset)


class DefaultHooks:
    """Triton's default ``pre_hook``/``post_hook`` for ``reset_to_zero`` and ``restore_value``.

    ``pre_hook(nargs, reset_only=False)`` zeroes the ``reset_to_zero``
    tensors and (unless ``reset_only``) copies the ``restore_value`` ones;
    ``post_hook(nargs, exception)`` copies them back.
    """

    def __init__(self, kernel_name: str, reset_to_zero: Sequence[str], restore_value: Sequence[str]):
        self.kernel_name = kernel_name
        self.reset_to_zero = list(reset_to_zero)
        self.restore_value = list(restore_value)
        self.restore_copies: Dict[str, Any] = {}

    def _tensor(self, nargs: Mapping[str, Any], name: str, what: str) -> Any:
        try:
            value = nargs[name]
        except KeyError:
            raise TuningError(
                f"kernel {self.kernel_name!r}: {what} names {name!r} but the launch did not pass it; "
                f"pass {name} or remove it from {what}"
            ) from None
        if not hasattr(value, "zero_"):
            raise TuningError(
                f"kernel {self.kernel_name!r}: {what} names {name!r}, which is a {type(value).__name__}, "
                f"not a tensor; list only tensor arguments in {what}"
            )
        return value

    def pre_hook(self, nargs: Mapping[str, Any], reset_only: bool = False) -> None:
        for name in self.reset_to_zero:
            self._tensor(nargs, name, "reset_to_zero").zero_()
        if not reset_only:
            self.restore_copies = {
                name: storage_span(self._tensor(nargs, name, "restore_value")).clone() for name in self.restore_value
            }

    def post_hook(self, nargs: Mapping[str, Any], exception: Optional[BaseException]) -> None:
        for name in self.restore_value:
            if name in self.restore_copies:
                storage_span(nargs[name]).copy_(self.restore_copies[name])
        self.restore_copies = {}

    @property
    def active(self) -> bool:
        return bool(self.reset_to_zero or self.restore_value)


class Snapshot:
    """Copies of some tensors' storage spans (:func:`storage_span`), put back on :meth:`restore`."""

    def __init__(self, tensors: Mapping[str, Any]):
        self.tensors = dict(tensors)
        self.copies = {name: storage_span(t).clone() for name, t in self.tensors.items()}

    def restore(self) -> None:
        """Put every tensor's storage span back as it was when the snapshot was taken."""
        for name, t in self.tensors.items():
            storage_span(t).copy_(self.copies[name])


def verify_targets(
    bound: Mapping[str, Any],
    reset_to_zero: Sequence[str],
    restore_value: Sequence[str],
    stored: Iterable[str] = (),
) -> List[str]:
    """The tensor arguments whose contents are compared between candidates.

    The ``restore_value`` and ``reset_to_zero`` tensors if any are named, else
    every tensor argument the kernel stores to (``stored``: the analysis's
    stored and atomic pointers), else every tensor argument.
    """

    def tensors(names: Iterable[str]) -> List[str]:
        out = []
        for n in names:
            if n not in out and hasattr(bound.get(n), "data_ptr"):
                out.append(n)
        return out

    named = tensors(list(restore_value) + list(reset_to_zero))
    if named:
        return named
    written = tensors(stored)
    if written:
        return written
    return tensors(bound.keys())


# dtype name (str(torch dtype)) -> (rtol, atol)
_TOLERANCES = {
    "torch.float16": (1e-2, 1e-2),
    "torch.bfloat16": (2e-2, 2e-2),
    "torch.float32": (1e-3, 1e-4),
    "torch.float64": (1e-7, 1e-9),
    "torch.float8_e4m3fn": (1.25e-1, 1.25e-1),
    "torch.float8_e5m2": (2.5e-1, 2.5e-1),
}


def tolerance_for(dtype: Any) -> Tuple[float, float]:
    """``(rtol, atol)`` for comparing two candidates' outputs of ``dtype``: exact for integers and bool."""
    return _TOLERANCES.get(str(dtype), (0.0, 0.0))


def outputs_match(
    ref: Mapping[str, Any], got: Mapping[str, Any], tolerance: Optional[Mapping[str, float]] = None
) -> Tuple[bool, str]:
    """Whether ``got`` equals ``ref`` tensor by tensor; a reason naming the first difference if not.

    Float tensors use :func:`tolerance_for` (or ``tolerance``'s ``rtol``/``atol``)
    and NaNs in the same places count as equal; other dtypes must be equal.
    """
    import torch

    for name, r in ref.items():
        g = got[name]
        if r.shape != g.shape or r.dtype != g.dtype:
            return False, f"{name}: shape/dtype {tuple(g.shape)}/{g.dtype} differs from {tuple(r.shape)}/{r.dtype}"
        if r.is_floating_point():
            rtol, atol = tolerance_for(r.dtype)
            if tolerance:
                rtol = tolerance.get("rtol", rtol)
                atol = tolerance.get("atol", atol)
            rf, gf = r.double(), g.double()
            if not torch.allclose(gf, rf, rtol=rtol, atol=atol, equal_nan=True):
                diff = (gf - rf).abs()
                diff = torch.nan_to_num(diff, nan=float("inf"))
                worst = float(diff.max())
                count = int((diff > atol + rtol * rf.abs()).sum())
                return False, f"{name}: {count} elements differ (max abs diff {worst:.3g}, rtol={rtol}, atol={atol})"
        else:
            if not torch.equal(r, g):
                count = int((r != g).sum())
                return False, f"{name}: {count} elements differ"
    return True, ""


def capture(bound: Mapping[str, Any], names: Sequence[str]) -> Dict[str, Any]:
    """Clones of the named tensors (a candidate's outputs)."""
    return {n: bound[n].detach().clone() for n in names}


HookFn = Callable[..., Any]
