"""Jit helpers in the shapes real libraries use: one-liners, a constexpr=None branch, a scalar fill."""
import os

import triton
import triton.language as tl
import triton.language.extra.libdevice as tldevice
from triton.language.extra import libdevice

#: A Triton function under another name, as libraries alias them per platform.
fast_tanh = libdevice.tanh

if os.environ.get("ISSUE24_FAST", "0") == "1":
    @triton.jit
    def exp(x): return tldevice.exp(x.to(tl.float32))
else:
    @triton.jit
    def exp(x): return tl.exp(x.to(tl.float32))


@triton.jit
def split_program_id(X: tl.constexpr, Y: tl.constexpr = None):
    """Recover 2-D or 3-D program indices from the first grid axis."""
    pid = tl.program_id(0)
    if Y is None:
        return pid % X, pid // X
    else:
        return pid % X, (pid // X) % Y, pid // (X * Y)


@triton.jit
def lowest_value(dtype: tl.constexpr):
    """The fill value of a masked max: the lowest finite value of ``dtype``."""
    if dtype == tl.float16:
        return -65504.0
    elif dtype == tl.bfloat16:
        return -3.3895313892515355e38
    else:
        return -3.4028234663852886e38


def pick_block(args):
    """A heuristic computed by a named function."""
    return triton.next_power_of_2(args["n_cols"])


#: A heuristics mapping kept in a variable and spread into another, as libraries share them.
ROW_HEURISTICS = {"EVEN_N": lambda args: args["n_cols"] % 16 == 0}
WIDE_HEURISTICS = {**ROW_HEURISTICS, "BLOCK_C": lambda args: pick_block(args)}


HAS_GATHER = hasattr(tl, "gather")
if not HAS_GATHER:
    @triton.jit
    def take(src, index, axis):
        """A placeholder so that old Tritons compile the kernels that never call it."""
        return None
else:
    take = tl.gather
