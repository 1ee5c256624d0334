"""Kernels the IR oracle tests lower (a package the oracle's child process can import by name)."""
