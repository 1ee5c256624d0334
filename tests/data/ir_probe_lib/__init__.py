"""A small library in the patterns the static-vs-IR harness meets in real ones (tests/test_static_vs_ir.py).

Its ``__init__`` refuses this machine, as a GPU-only package's does: the harness must import the kernel
modules without it (a bare package)."""

raise ImportError("ir_probe_lib: please install its GPU companion package")
