"""Host code: the kernel module is imported lazily, inside the function that launches it."""


def rotary(x, cos, sin, out):
    import triton

    from ._kernels.rotary import rotary_kernel

    rows, dim = x.shape
    block = max(triton.next_power_of_2(dim), 128)
    rotary_kernel[(rows,)](x, cos, sin, out, dim // 2, x.stride(0), BLOCK=block)
