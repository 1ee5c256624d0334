"""Side-effect kernels are safe to tune by default: their input tensors are snapshotted and restored.

Benchmarking launches a kernel dozens of times.  A kernel that updates a
tensor in place (``x += 1``: loads and stores ``x``) or accumulates into one
(``tl.atomic_add``) would leave the user's tensor changed by every one of
them: Triton's answer is ``restore_value``/``reset_to_zero``, which the author
must remember.  tiletune's analysis knows which pointers a kernel stores to,
loads from and updates atomically, so ``configs=[]`` does it by itself:
:func:`side_effect_plan` names the tensors that need it, :class:`Protection`
copies them once before tuning, :func:`after_each_launch` puts them back after
every benchmarked launch and the decision path's ``protect_side_effects``
once more before the real one; the user's tensors then come out exactly as
one untuned launch leaves them.

What needs protecting (each with its reason, for the one-time message):

* a pointer the kernel stores to and also loads from (an in-place update);
* a pointer the kernel stores to whose tensor shares memory with a tensor it
  loads from (the caller passed the same tensor twice);
* a pointer updated by an atomic that is not idempotent (``atomic_add``,
  ``atomic_xchg``, ``atomic_cas``, ``atomic_xor``...), or by an idempotent one
  (``atomic_max``/``atomic_min``/``atomic_and``/``atomic_or``) whose returned old
  value the kernel uses; repeating an unused ``atomic_max`` changes nothing;
* every tensor argument when a store or atomic's pointer could not be traced
  to a parameter (the analysis says what it does not know; tiletune then
  protects everything rather than guess).

Tensors already named in ``restore_value`` or ``reset_to_zero`` are left to
those.  ``side_effects="error"`` refuses to tune such a kernel instead;
``side_effects="ignore"`` keeps Triton's behaviour (nothing restored).
"""

from __future__ import annotations

import contextlib
import re
import threading
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence

from tiletune.errors import TiletuneWarning, TuningError

from .notices import user_stacklevel
from .side_effects import storage_span

__all__ = ["MODES", "IDEMPOTENT_ATOMICS", "SideEffectPlan", "side_effect_plan", "Protection", "protection_for",
           "kernel_protection", "after_each_launch", "check_mode"]

MODES = ("restore", "error", "ignore")
#: Atomics whose repetition with the same operand leaves memory as one application does.
IDEMPOTENT_ATOMICS = frozenset({"atomic_max", "atomic_min", "atomic_and", "atomic_or"})
_ATOMIC_OP = re.compile(r"\b(atomic_[a-z]+)\s*\(")


def check_mode(mode: Any, kernel_name: str) -> str:
    """``mode`` if it is one of :data:`MODES`, else a TuningError naming the kernel and the choices."""
    if mode not in MODES:
        raise TuningError(
            f"kernel {kernel_name!r}: side_effects={mode!r} is not one of {', '.join(map(repr, MODES))}; "
            "'restore' (default) snapshots the tensors the kernel writes into around benchmarking"
        )
    return mode


@dataclass
class SideEffectPlan:
    """Which tensor arguments benchmarking would change, and why (in words)."""

    reasons: Dict[str, str] = field(default_factory=dict)
    untraced: bool = False  # a store/atomic pointer the analysis could not follow

    @property
    def names(self) -> List[str]:
        """The tensor arguments to protect, in the order found."""
        return list(self.reasons)

    def describe(self) -> str:
        """``x_ptr (stored to and loaded: an in-place update), ...``."""
        return ", ".join(f"{n} ({why})" for n, why in self.reasons.items())


def _is_tensor(value: Any) -> bool:
    return hasattr(value, "data_ptr") and hasattr(value, "copy_") and hasattr(value, "clone")


def _storage(value: Any) -> Optional[int]:
    try:
        return int(value.untyped_storage().data_ptr())
    except Exception:  # not a torch tensor, or no storage
        return None


def _atomic_op(spec: Any, node: str) -> Optional[str]:
    label = ""
    try:
        label = str(spec.graph.nodes[node].get("label") or "")
    except Exception:
        pass
    found = _ATOMIC_OP.search(label)
    return found.group(1) if found else None


def _result_used(spec: Any, node: str) -> bool:
    try:
        return spec.graph.out_degree(node) > 0
    except Exception:  # no graph: assume the worst
        return True


def side_effect_plan(
    spec: Any,
    bound: Mapping[str, Any],
    restore_value: Sequence[str] = (),
    reset_to_zero: Sequence[str] = (),
) -> SideEffectPlan:
    """The tensors of this launch that benchmarking would leave changed and no hook covers.

    ``spec`` is the kernel's KernelSpec (its accesses and dataflow graph),
    ``bound`` the launch's named arguments.  Empty when nothing needs
    protecting.
    """
    plan = SideEffectPlan()
    covered = set(restore_value) | set(reset_to_zero)
    loaded = set(spec.loaded_pointers)
    loaded_storages = {_storage(bound[n]) for n in loaded if _is_tensor(bound.get(n))} - {None}

    def add(name: Optional[str], why: str) -> None:
        if name is None:
            plan.untraced = True
        elif name not in covered and name not in plan.reasons and _is_tensor(bound.get(name)):
            plan.reasons[name] = why

    for access in spec.accesses:
        name = access.pointer
        if access.kind == "store":
            if name is None:
                add(None, "")
            elif name in loaded:
                add(name, "stored to and loaded: an in-place update")
            elif _is_tensor(bound.get(name)) and _storage(bound[name]) in loaded_storages:
                add(name, "stored to, and shares memory with a tensor the kernel loads")
        elif access.kind == "atomic":
            op = _atomic_op(spec, access.node)
            if op in IDEMPOTENT_ATOMICS and not _result_used(spec, access.node):
                continue
            if op in IDEMPOTENT_ATOMICS:
                add(name, f"{op} whose returned old value the kernel uses")
            else:
                add(name, f"{op or 'an atomic'} accumulates into it")
    if plan.untraced:
        for n, v in bound.items():
            add(n, "a store or atomic's pointer was not traced to a parameter, so every tensor is protected")
    return plan


class Protection:
    """Copies of some tensors, taken once, put back on :meth:`restore`.

    Both go through the stretch of storage each tensor covers
    (:func:`~tiletune.runtime.side_effects.storage_span`), so an expanded
    (stride-0) or self-overlapping output is snapshotted and restored exactly.
    """

    def __init__(self, tensors: Mapping[str, Any]):
        import torch

        self.tensors = dict(tensors)
        with torch.no_grad():
            self.copies = {n: storage_span(t.detach()).clone() for n, t in self.tensors.items()}

    def __bool__(self) -> bool:
        return bool(self.tensors)

    def restore(self) -> None:
        """Put every tensor back as it was when the protection was taken."""
        import torch

        with torch.no_grad():
            for n, t in self.tensors.items():
                storage_span(t.detach()).copy_(self.copies[n])

    def wrap(self, call: Callable[[], Any]) -> Callable[[], Any]:
        """``call`` followed by :meth:`restore` (also when it raises)."""

        def protected() -> Any:
            try:
                return call()
            finally:
                self.restore()

        return protected


@contextlib.contextmanager
def after_each_launch(tuner: Any, protection: Optional[Protection]) -> Iterator[None]:
    """While tuning, put ``protection``'s tensors back after every benchmarked launch (as Triton's
    ``restore_value`` does), by wrapping ``tuner.post_hook``: every candidate then runs on the
    user's values, so data-dependent indices or exits cannot drift from launch to launch."""
    if not protection:
        yield
        return
    original = tuner.post_hook

    def post_hook(nargs: Any, exception: Optional[BaseException] = None) -> Any:
        try:
            return original(nargs, exception=exception)
        finally:
            protection.restore()

    tuner.post_hook = post_hook
    try:
        yield
    finally:
        tuner.post_hook = original


_said: set = set()
_said_lock = threading.Lock()


def protection_for(
    kernel_name: str,
    spec: Any,
    bound: Mapping[str, Any],
    *,
    mode: str = "restore",
    restore_value: Sequence[str] = (),
    reset_to_zero: Sequence[str] = (),
) -> Optional[Protection]:
    """The :class:`Protection` benchmarking needs for this launch, or None when nothing needs it.

    ``mode="restore"`` says once per kernel (a :class:`TiletuneWarning`) which
    tensors are protected and why; ``"error"`` raises TuningError instead;
    ``"ignore"`` (and a kernel without analysis) returns None.
    """
    check_mode(mode, kernel_name)
    if mode == "ignore" or spec is None:
        return None
    plan = side_effect_plan(spec, bound, restore_value, reset_to_zero)
    if not plan.reasons:
        return None
    if mode == "error":
        raise TuningError(
            f"kernel {kernel_name!r}: benchmarking would change {plan.describe()}, and side_effects='error'; "
            f"name them in restore_value=[...] (or reset_to_zero=[...] for accumulators that start at zero), "
            "or pass side_effects='restore' to let tiletune snapshot and restore them"
        )
    with _said_lock:
        first = kernel_name not in _said
        _said.add(kernel_name)
    if first:
        warnings.warn(
            f"tiletune: kernel {kernel_name!r} writes into its inputs: {plan.describe()}; configs=[] benchmarks "
            "several candidates, so tiletune restores these tensors after every benchmarked launch and they "
            f"come out as one untuned launch leaves them. Name them in restore_value=[...] to say so "
            "explicitly, or pass side_effects='ignore' to skip the copies.",
            TiletuneWarning,
            stacklevel=user_stacklevel(),
        )
    return Protection({n: bound[n] for n in plan.names})


def kernel_protection(tuner: Any, problem: Any) -> Optional[Protection]:
    """The :class:`Protection` a ``configs=[]`` tuning of one launch needs (None for a hand configs list,
    ``side_effects="ignore"``, or a kernel that changes none of its inputs)."""
    if not getattr(tuner, "synthesize_configs", False):
        return None
    return protection_for(
        tuner.kernel_name,
        tuner.spec(),
        problem.bound,
        mode=getattr(tuner, "side_effects", "restore"),
        restore_value=tuner.restore_value,
        reset_to_zero=tuner.reset_to_zero,
    )
