"""Run a dev-corpus library's kernel under the interpreter without importing the library.

Test-only (the analyser never imports library code): the kernel's own source text is cut out of
its file (at any nesting depth), written with Triton's imports into a module of its own under a
temporary directory and imported from there, so ``inspect.getsource`` and tiletune's analysis
read exactly the library's text.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
import textwrap
from pathlib import Path

CORPUS = Path(__file__).resolve().parent.parent / ".corpus"

_HEADER = "import torch\nimport triton\nimport triton.language as tl\n\n\n"


def library_kernel(path: Path, name: str, workdir: Path):
    """The ``@triton.jit`` function ``name`` defined anywhere in ``path`` (its decorators replaced by
    ``@triton.jit``), loaded from a module written under ``workdir``."""
    source = path.read_text()
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            lines = source.splitlines()
            body = "\n".join(lines[node.lineno - 1: node.end_lineno])
            text = _HEADER + "@triton.jit\n" + textwrap.dedent(body) + "\n"
            module_path = workdir / f"lib_{name}.py"
            module_path.write_text(text)
            spec = importlib.util.spec_from_file_location(f"lib_{name}", module_path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
            return getattr(module, name)
    raise LookupError(f"no function {name!r} in {path}")
