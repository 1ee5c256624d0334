"""The tiletune version, in a module of its own.

Every layer may import it (the runtime's cache fingerprint, the lint's SARIF
and LSP server, the CLIs' ``--version``) without importing the package face
``tiletune/__init__.py``, which loads the runtime lazily: an import from a
layer back up to the face would close a circle.
"""

__version__ = "0.1.0"

__all__ = ["__version__", "installed_version"]


def installed_version() -> str:
    """The installed distribution's version (``pip install``), else :data:`__version__` (a source tree)."""
    try:
        from importlib import metadata

        return metadata.version("tiletune")
    except Exception:  # not installed
        return __version__
