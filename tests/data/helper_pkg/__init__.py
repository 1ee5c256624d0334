"""A small package whose kernels call jit helpers from other modules (test data for the resolver)."""
from .utils import swizzle_tile  # noqa: F401  (re-export, as libraries do)
