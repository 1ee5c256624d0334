"""Helpers in another module: a one-liner, and one whose constexpr parameter chooses a branch."""
import triton
import triton.language as tl


@triton.jit
def exp(x):
    return tl.exp(x)


@triton.jit
def tile_offsets(pid, BT: tl.constexpr, BS: tl.constexpr = None):
    if BS is None:
        return pid * BT + tl.arange(0, BT)
    return pid * BT + tl.arange(0, BT)[:, None] * BS + tl.arange(0, BS)[None, :]


@triton.jit
def checked_arange(BLOCK: tl.constexpr):
    tl.static_assert(BLOCK <= 16, "BLOCK is at most 16")
    return tl.arange(0, BLOCK)


@triton.jit
def outer_offsets(rows, cols, BS: tl.constexpr):
    return rows[:, None] * BS + cols[None, :]
