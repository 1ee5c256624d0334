from .mathshim import exp, math_shim  # noqa: F401  (re-exported, as packages expose their helpers)
