"""Kernels whose helpers, launches and heuristics sit in other modules, written in the
patterns of issue 24 (test data for the static reader and the lint; never imported by it)."""
