"""Fill the tuning cache ahead of time: ``tiletune.pretune(kernel, shapes, make_args=..., launch=...)`` and the
``tiletune tune FILE --shape ...`` command.

Each shape is tuned by launching the kernel once on inputs built for it, exactly as a program's first call
would: the winner lands in the disk cache (``TILETUNE_CACHE_DIR``), and later processes find it there.  Keys
tuned before warm-start the ones after (:mod:`.warm_start`).  The command spreads the shapes over every
local GPU, one process per device (``--devices``); the cache file is shared safely between processes.

``FILE`` is a Python module with the fixture interface (``fixtures/README.md``): ``KERNEL`` (a
``@triton.jit`` kernel, tuned with ``configs=[]`` and ``KEY``, or an already tuned one), ``KEY``,
``make_args(shape, device)`` and ``launch(kernel, args)``.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence

from tiletune.errors import TiletuneError

__all__ = ["pretune", "parse_shape", "load_problem_module", "add_tune_parser"]


def pretune(kernel: Any, shapes: Iterable[Mapping[str, Any]], *, make_args: Callable[[Mapping[str, Any]], Any],
            launch: Callable[[Any, Any], Any], sync: Optional[Callable[[], None]] = None) -> List[Dict[str, Any]]:
    """Tune ``kernel`` (a tiletune-tuned kernel) for each of ``shapes`` ahead of time; one row a shape.

    ``make_args(shape)`` builds one launch's arguments and ``launch(kernel, args)`` launches it (the first
    launch of a key tunes it and stores the winner in the disk cache; a key already cached is a hit).
    ``sync`` (optional) waits for the device after each launch.  Each row: the shape, the winning config
    (``str``), the seconds the launch took and the search's facts (empty for a cache hit).
    """
    if not hasattr(kernel, "best_config"):
        raise TiletuneError(f"pretune: {kernel!r} is not a tuned kernel; wrap it first, e.g. "
                            "tiletune.autotune(configs=[], key=[...])(kernel)")
    rows: List[Dict[str, Any]] = []
    for shape in shapes:
        before = getattr(kernel, "search_facts", None)
        args = make_args(shape)
        t0 = time.perf_counter()
        launch(kernel, args)
        if sync is not None:
            sync()
        facts = getattr(kernel, "search_facts", None)
        rows.append({"shape": dict(shape), "config": str(kernel.best_config), "seconds": time.perf_counter() - t0,
                     "search": dict(facts) if facts is not None and facts is not before else {}})
    return rows


def parse_shape(text: str) -> Dict[str, Any]:
    """``"M=4096,N=512"`` -> ``{"M": 4096, "N": 512}`` (integers where they parse, else the text)."""
    shape: Dict[str, Any] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, sep, value = part.partition("=")
        if not sep or not name.strip():
            raise TiletuneError(f"--shape {text!r}: {part!r} is not NAME=VALUE; write e.g. --shape M=4096,N=512")
        try:
            shape[name.strip()] = int(value)
        except ValueError:
            shape[name.strip()] = value.strip()
    if not shape:
        raise TiletuneError(f"--shape {text!r} names no sizes; write e.g. --shape M=4096,N=512")
    return shape


def load_problem_module(path: str) -> ModuleType:
    """Import ``path`` and check it has the fixture interface; a clear error names what is missing."""
    file = Path(path)
    if not file.is_file():
        raise TiletuneError(f"tune: {path} is not a file")
    spec = importlib.util.spec_from_file_location(f"tiletune_tune_{file.stem}", file)
    if spec is None or spec.loader is None:
        raise TiletuneError(f"tune: cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    missing = [n for n in ("KERNEL", "make_args", "launch") if not hasattr(module, n)]
    if missing:
        raise TiletuneError(f"tune: {path} has no {', '.join(missing)}; the file needs KERNEL (the kernel), KEY, "
                            "make_args(shape, device) and launch(kernel, args), as the fixtures/ modules have")
    return module


def _tuned(module: ModuleType) -> Any:
    """The module's kernel, tuned with ``configs=[]`` over its ``KEY`` unless it is tuned already."""
    kernel = module.KERNEL
    if hasattr(kernel, "best_config"):
        return kernel
    key = getattr(module, "KEY", None)
    if not key:
        raise TiletuneError(f"tune: {module.__file__} has no KEY (the launch arguments the winner depends on)")
    from tiletune.runtime.autotuner import autotune

    return autotune(configs=[], key=list(key), restore_value=list(getattr(module, "RESTORE_VALUE", []) or []) or None,
                    reset_to_zero=list(getattr(module, "RESET_TO_ZERO", []) or []) or None)(kernel)


def _device() -> str:
    return "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"


def tune_file(path: str, shapes: Sequence[Mapping[str, Any]]) -> List[Dict[str, Any]]:
    """Pretune the kernel of ``path`` for ``shapes`` on this process's device."""
    module = load_problem_module(path)
    kernel = _tuned(module)
    device = _device()
    sync = None
    if device == "cuda":
        import torch

        sync = torch.cuda.synchronize
    return pretune(kernel, shapes, make_args=lambda s: module.make_args(dict(s), device=device),
                   launch=module.launch, sync=sync)


def local_devices() -> int:
    """GPUs this process can use (0 under the interpreter or without CUDA)."""
    if _device() == "cpu":
        return 0
    try:
        import torch

        return torch.cuda.device_count()
    except Exception:  # no torch, no driver
        return 0


def add_tune_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Register ``tiletune tune``."""
    p = sub.add_parser("tune", help="fill the tuning cache ahead of time for a kernel's shapes",
                       description="Tune a kernel file's KERNEL for each --shape (one launch each) so that later "
                                   "processes find the winners in the cache (TILETUNE_CACHE_DIR).")
    p.add_argument("file", help="Python file with KERNEL, KEY, make_args(shape, device) and launch(kernel, args)")
    p.add_argument("--shape", action="append", required=True, metavar="NAME=V,...",
                   help="one shape's sizes, e.g. M=4096,N=512 (repeat for more shapes)")
    p.add_argument("--devices", type=int, default=None,
                   help="GPUs to spread the shapes over, one process each (default: every local GPU)")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    p.set_defaults(func=run_tune)


def run_tune(args: argparse.Namespace) -> int:
    """``tiletune tune``: tune each shape here, or spread the shapes over the local GPUs."""
    shapes = [parse_shape(s) for s in args.shape]
    n = local_devices() if args.devices is None else max(1, args.devices)
    n = max(1, min(n, len(shapes)))
    if n == 1:
        rows = tune_file(args.file, shapes)
    else:
        rows = _spread(args.file, shapes, n)
    if args.json:
        print(json.dumps(rows))
    else:
        for r in rows:
            how = "tuned" if r["search"] else "cached"
            print(f"{','.join(f'{k}={v}' for k, v in r['shape'].items())}: {r['config']} ({how}, {r['seconds']:.2f}s)")
    return 0


def _spread(path: str, shapes: Sequence[Mapping[str, Any]], n: int) -> List[Dict[str, Any]]:
    """Shapes ``i::n`` tuned by a process on device ``i`` (``CUDA_VISIBLE_DEVICES``), all at once."""
    procs = []
    for i in range(n):
        mine = shapes[i::n]
        cmd = [sys.executable, "-c", "import sys; from tiletune.cli import main; sys.exit(main())", "tune", path,
               "--devices", "1", "--json"]
        for s in mine:
            cmd += ["--shape", ",".join(f"{k}={v}" for k, v in s.items())]
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(i))
        procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    rows: List[Dict[str, Any]] = []
    for i, proc in enumerate(procs):
        out, err = proc.communicate()
        if proc.returncode != 0:
            raise TiletuneError(f"tune: the process on device {i} failed: {err.strip()[-800:]}")
        for r in json.loads(out.strip().splitlines()[-1]):
            r["device"] = i
            rows.append(r)
    return rows
