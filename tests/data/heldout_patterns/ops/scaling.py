"""Host code: the tuned kernel is imported inside the launching function, and the launch passes the
tile size the search would choose (positionally)."""


def scale(x, y, factor):
    import triton

    from ._kernels.tuned_scale import tuned_scale_kernel

    n = x.numel()
    tuned_scale_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n, factor, 1024)
