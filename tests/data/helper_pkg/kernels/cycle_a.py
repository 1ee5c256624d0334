from .cycle_b import ping  # noqa: F401  (cycle_b imports ping from here: an import cycle)
