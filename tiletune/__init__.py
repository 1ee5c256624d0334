"""tiletune: automatic tiling for Triton kernels."""

__version__ = "0.1.0"
