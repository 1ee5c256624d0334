from .cycle_a import ping  # noqa: F401
