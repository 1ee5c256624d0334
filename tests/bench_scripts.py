"""Load a script of ``bench/`` as a module for a test (the scripts are not a package)."""

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def load_bench(name: str) -> ModuleType:
    """``bench/<name>.py`` imported as the module ``_<name>`` (registered in ``sys.modules``)."""
    spec = importlib.util.spec_from_file_location(f"_{name}", ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
