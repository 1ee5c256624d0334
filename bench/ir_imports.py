"""Import a library module for the static-vs-IR harness, around the harness's limits (issue 24, item 3).

Only the harness imports library code (the analysis never does), and nothing on
disk is changed.  When a plain import fails, :func:`import_module` retries with
the stand-ins the failure calls for, and says which were used:

* ``triton-shim``: a name a library imports from ``triton.language.math`` that
  this Triton keeps in ``libdevice`` (a Triton-version shim such as
  ``from triton.language.math import tanh``) is given its libdevice function;
* ``cuda-probes``: a module-level CUDA probe (``torch.cuda.get_device_properties(0)``,
  ``Torch not compiled with CUDA``) answers as one H100 would
  (:data:`FAKE_DEVICE`); only the property queries, never ``is_available``;
* ``bare-package``: a package ``__init__`` that refuses this machine (unsloth
  wants its GPU-only companion package) is skipped: the package is registered
  as a bare namespace so its submodules import on their own.

:func:`kernel_object` finds a kernel that is not a module attribute (defined
under a function or a guard): its decorated definition is executed again in
the module's namespace, so it reads the same globals.
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
import types
from pathlib import Path
from typing import Any, List, Optional, Tuple

#: What the CUDA property probes answer (an H100 SXM).
FAKE_DEVICE = types.SimpleNamespace(
    name="NVIDIA H100 80GB HBM3", major=9, minor=0, multi_processor_count=132, total_memory=80 * 2**30,
    shared_memory_per_block_optin=232448, shared_memory_per_multiprocessor=233472, max_threads_per_multi_processor=2048,
    regs_per_multiprocessor=65536, warp_size=32, L2_cache_size=50 * 2**20, gcnArchName="", uuid="fake",
)

_MISSING_NAME = re.compile(r"cannot import name '(\w+)' from '(triton\.language[\w.]*)'")


def _shim_triton_name(exc: BaseException) -> bool:
    m = _MISSING_NAME.search(str(exc))
    if not m:
        return False
    name, module = m.groups()
    try:
        target = importlib.import_module(module)
    except ImportError:
        return False
    for source in ("triton.language.extra.libdevice", "triton.language.extra.cuda.libdevice", "triton.language"):
        try:
            value = getattr(importlib.import_module(source), name)
        except (ImportError, AttributeError):
            continue
        setattr(target, name, value)
        return True
    return False


def _fake_cuda_probes() -> bool:
    import torch

    if getattr(torch.cuda, "_tiletune_harness_fake", False):
        return False
    torch.cuda.get_device_properties = lambda device=None: FAKE_DEVICE
    torch.cuda.get_device_capability = lambda device=None: (FAKE_DEVICE.major, FAKE_DEVICE.minor)
    torch.cuda.get_device_name = lambda device=None: FAKE_DEVICE.name
    torch.cuda.device_count = lambda: 1
    torch.cuda.current_device = lambda: 0
    torch.cuda._tiletune_harness_fake = True
    return True


def _bare_packages(module_name: str, root: Path) -> bool:
    """Register every not-yet-imported ancestor package of ``module_name`` as a bare package."""
    parts = module_name.split(".")
    added = False
    for i in range(1, len(parts)):
        name = ".".join(parts[:i])
        if name in sys.modules:
            continue
        folder = root.parent.joinpath(*parts[:i])
        if not (folder / "__init__.py").is_file():
            return added
        module = types.ModuleType(name)
        module.__path__ = [str(folder)]
        module.__file__ = str(folder / "__init__.py")
        module.__package__ = name
        sys.modules[name] = module
        if i > 1:
            setattr(sys.modules[".".join(parts[:i - 1])], parts[i - 1], module)
        added = True
    return added


def import_module(module_name: str, root: Path, attempts: int = 6) -> Tuple[Any, List[str]]:
    """Import ``module_name`` (of the library whose package folder is ``root``), retrying with the
    stand-ins the failure calls for; ``(module, stand-ins used)``.  Re-raises the last failure."""
    used: List[str] = []
    for _ in range(attempts):
        try:
            return importlib.import_module(module_name), used
        except (Exception, SystemExit) as exc:  # a library module that needs more than this machine has
            text = f"{type(exc).__name__}: {exc}"
            if isinstance(exc, ImportError) and _shim_triton_name(exc):
                used.append("triton-shim")
            elif "not compiled with CUDA" in text and _fake_cuda_probes():
                used.append("cuda-probes")
            elif "bare-package" not in used and _bare_packages(module_name, root):
                used.append("bare-package")
            else:
                raise
    return importlib.import_module(module_name), used


def _run(stmts: List[ast.stmt], path: Path, namespace: dict, strict: bool) -> Optional[str]:
    """Execute ``stmts`` (file line numbers kept: Triton reads the source back by them) in ``namespace``."""
    for stmt in stmts:
        try:
            exec(compile(ast.Module(body=[stmt], type_ignores=[]), str(path), "exec"), namespace)  # noqa: S102
        except Exception as exc:  # noqa: BLE001 - a guard's statement that needs a device: the next may not
            if strict:
                return f"{type(exc).__name__}: {str(exc)[:100]}"
    return None


def kernel_object(module: Any, name: str, path: Path) -> Tuple[Any, Optional[str]]:
    """The kernel ``name`` of ``module``: the attribute, else its decorated definition in ``path``
    (nested under a function or a guard such as ``if has_triton():``) executed again in the module's
    namespace, after the statements that precede it in each enclosing block (the guard's own
    ``import triton``, configs, helpers).  ``(object or None, how it was found or why not)``."""
    obj = getattr(module, name, None)
    if obj is not None:
        return obj, None
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except SyntaxError as exc:
        return None, f"file does not parse: {exc}"
    parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    found = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name and n.decorator_list]
    if not found:
        return None, "no definition of that name in the file"
    node = found[0]
    chain = [node]
    while id(chain[-1]) in parents:
        chain.append(parents[id(chain[-1])])
    namespace = dict(vars(module))
    for inner, outer in reversed(list(zip(chain, chain[1:]))):
        if outer is tree:
            continue
        for body in (getattr(outer, "body", []), getattr(outer, "orelse", []), getattr(outer, "finalbody", [])):
            if inner in body:
                _run([s for s in body[:body.index(inner)] if not isinstance(s, (ast.Return, ast.Raise))],
                     path, namespace, strict=False)
    why = _run([node], path, namespace, strict=True)
    if why:  # a closure over a function's locals, a decorator that needs a device
        return None, f"nested definition does not run at module level: {why}"
    return namespace.get(name), "nested definition re-run in the module namespace"
