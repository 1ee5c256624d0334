"""Which target a tuner tunes for, resolved in one place for every runtime tuner.

``target=`` (a name, an alias such as ``"sm90"``/``"910b3"``, an override
dict or JSON text, or a :class:`~tiletune.synthesis.model.Target`), else
``TILETUNE_TARGET``, else ``"h100"`` under ``TRITON_INTERPRET=1``, else the
detected device.  Names and aliases go through
:func:`tiletune.synthesis.get_target` (the one resolver); this module only
picks what to resolve.
"""

from __future__ import annotations

import os
from typing import Any

from . import bench as _bench

__all__ = ["given_target", "resolve_target", "target_name", "require_device", "cuda_target_before_driver",
           "NO_DEVICE_FIX"]


#: What to do when no device can run a kernel: said by every error about it.
NO_DEVICE_FIX = (
    "no GPU or NPU is active in this process, so Triton cannot run the kernel. To run and tune it on the CPU, "
    "set TRITON_INTERPRET=1 before triton is imported (e.g. `TRITON_INTERPRET=1 python script.py`; kernels then "
    "take torch CPU tensors); on a GPU machine, check that torch.cuda.is_available() is True. "
    "For configs to paste without a device, use `synth-configs kernel.py --target h100`"
)


def _driver_active() -> bool:
    """True when Triton has an active driver (a GPU or NPU backend that found its device)."""
    try:
        from triton.runtime.driver import driver

        driver.active  # noqa: B018 - creating it raises "0 active drivers" on a machine without one
        return True
    except Exception:
        return False


def cuda_target_before_driver() -> Any:
    """The compile target of torch's current CUDA device, read without creating Triton's driver; None when
    torch sees no CUDA device (a HIP or other device: Triton's driver tells, later).

    Creating Triton's driver first builds its launcher utilities (0.3-0.8 s in an empty Triton cache on the
    H100 host), so a first tune that asks it for the target cannot fork its compile children before that.
    Only the children's compiler warm-up uses this target; every compile takes Triton's own
    (``driver.active.get_current_target()``), as Triton's CUDA driver computes it: capability major x 10 +
    minor, warp size 32."""
    try:
        import torch

        if torch.version.hip is not None or not torch.cuda.is_available():
            return None
        from triton.backends.compiler import GPUTarget

        major, minor = torch.cuda.get_device_capability()
        return GPUTarget("cuda", major * 10 + minor, 32)
    except Exception:  # no usable device: Triton's driver decides later
        return None


def require_device(what: str) -> None:
    """Raise :class:`~tiletune.errors.TuningError` for ``what`` (``kernel 'k'``) when no device can run it:
    not under the interpreter and no Triton driver active.  The message names ``TRITON_INTERPRET=1``."""
    if _bench.interpreting() or _driver_active():
        return
    from tiletune.errors import TuningError

    raise TuningError(f"{what}: {NO_DEVICE_FIX}")


def given_target(target: Any = None) -> Any:
    """What the user asked for: ``target``, else ``TILETUNE_TARGET``, else "h100" under the interpreter, else None."""
    if target is None:
        target = os.environ.get("TILETUNE_TARGET", "").strip() or None
    if target is None and _bench.interpreting():
        target = "h100"
    return target


def resolve_target(target: Any = None) -> Any:
    """The :class:`~tiletune.synthesis.model.Target` for ``target`` (see :func:`given_target`; None: detect)."""
    from tiletune.synthesis import detect, get_target

    given = given_target(target)
    if given is None and not _bench.interpreting() and not _driver_active():
        from tiletune.errors import TuningError

        raise TuningError(f"cannot detect the target: {NO_DEVICE_FIX}")
    if given is None:
        return detect()
    if target is None and isinstance(given, str) and given == os.environ.get("TILETUNE_TARGET", "").strip():
        from tiletune.errors import SynthesisError

        try:
            return get_target(given)
        except SynthesisError as exc:  # say where the bad name came from
            raise SynthesisError(f"TILETUNE_TARGET={given!r}: {exc}; fix or unset TILETUNE_TARGET") from None
    return get_target(given)


def target_name(target: Any = None) -> str:
    """The canonical name of :func:`resolve_target` (``"sm90"`` and ``"H100-SXM"`` both give ``"h100"``)."""
    return str(resolve_target(target).name)
