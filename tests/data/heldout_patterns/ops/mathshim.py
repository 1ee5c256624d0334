"""Math functions chosen once at import: an exponential picked by a function, and a math module
picked by trying a vendor library first (Triton's libdevice is the fallback)."""
import os

import triton
import triton.language as tl
import triton.language.extra.libdevice as tldevice


def _choose_exp():
    """The fast exponential when asked for, else Triton's."""
    return tldevice.fast_expf if os.environ.get("HELDOUT_FAST_EXP", "0") == "1" else tl.exp


exp = _choose_exp()


def _vendor_math():
    raise ImportError("no vendor math library here")


try:
    math_shim = _vendor_math()
except ImportError:
    math_shim = triton.language.extra.libdevice
