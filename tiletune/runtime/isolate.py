"""GPU-fault isolation: the first launch of a never-validated candidate runs in a worker process.

A candidate that faults the GPU ("illegal memory access") poisons the CUDA
context of the process that launched it.  With ``TILETUNE_ISOLATE_FIRST_LAUNCH=1``
:func:`first_launches` screens each candidate of a ``configs=[]`` tuning once,
before its first benchmarked launch: a worker process (``python -m
tiletune.runtime.isolate``, one per tuning, replaced when it dies) imports the
kernel's module by name, launches the candidate on copies of the launch's
tensors and synchronises.  A worker that dies costs the search that candidate
(:class:`CandidateFaulted`, a failed candidate like a compile error, with a
warning naming it); the user's process never runs it.  See docs/hardening.md.

The worker honours ``TILETUNE_ISOLATE_FAULT_INJECT=TEXT``: after launching a
candidate whose config text contains TEXT it kills itself with SIGSEGV, so the
plumbing is tested on CPU with a real kernel under the interpreter.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import os
import pickle
import signal
import struct
import subprocess
import sys
import warnings
from typing import Any, BinaryIO, Dict, Iterator, Optional

from tiletune.errors import TiletuneWarning

from .env import env_on

__all__ = ["ENV", "FAULT_ENV", "CandidateFaulted", "enabled", "Screen", "first_launches", "worker_main", "wrappers_of"]

ENV = "TILETUNE_ISOLATE_FIRST_LAUNCH"
FAULT_ENV = "TILETUNE_ISOLATE_FAULT_INJECT"
_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


class CandidateFaulted(RuntimeError):
    """A candidate killed the worker that launched it first: the search drops it (not a TiletuneError,
    so tuning goes on with the other candidates)."""


def enabled() -> bool:
    """True when ``TILETUNE_ISOLATE_FIRST_LAUNCH`` is 1/true."""
    return env_on(ENV)


def _send(stream: BinaryIO, value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _receive(stream: BinaryIO) -> Any:
    head = stream.read(8)
    if len(head) < 8:
        raise EOFError("the other side closed the pipe")
    (size,) = struct.unpack("<Q", head)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the other side closed the pipe mid-message")
    return pickle.loads(data)  # noqa: S301 - our own worker's pipe, never a file


def _is_tensor(value: Any) -> bool:
    return hasattr(value, "data_ptr") and hasattr(value, "detach") and hasattr(value, "device")


def _kernel_reference(tuner: Any) -> Optional[tuple]:
    """``(module, name)`` the worker imports the kernel by; None when it cannot (``__main__``, a closure)."""
    fn = getattr(tuner, "base_fn", None)
    while fn is not None and not inspect.isfunction(fn):
        fn = getattr(fn, "fn", None)  # a JITFunction (or a wrapper) around the Python function
    module, name = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    if not module or not name or module == "__main__" or "<locals>" in name:
        return None
    return module, name


class Screen:
    """The worker of one tuning: launches each candidate once, says whether it survived."""

    def __init__(self, tuner: Any, reference: tuple):
        self.tuner = tuner
        self.reference = reference
        self.proc: Optional[subprocess.Popen] = None
        self.seen: Dict[str, bool] = {}

    def _start(self, tensors: Dict[str, Any]) -> None:
        # the directory holding the tiletune package (this file is tiletune/runtime/isolate.py)
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([root, *[p for p in sys.path if p], env.get("PYTHONPATH", "")])
        self.proc = subprocess.Popen([sys.executable, "-m", "tiletune.runtime.isolate"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env)
        _send(self.proc.stdin, {"kernel": self.reference, "wrappers": wrappers_of(self.tuner),
                                "tensors": {n: (t.detach().cpu().clone(), str(t.device)) for n, t in tensors.items()}})

    def check(self, nargs: Dict[str, Any]) -> None:
        """Launch the candidate of ``nargs`` (a benchmarked launch's full arguments) once in the worker,
        unless it was already; raise :class:`CandidateFaulted` when the worker died of it."""
        grid = nargs.get("grid")
        meta = {k: v for k, v in nargs.items() if k not in ("grid", "warmup")}
        config = ", ".join(f"{k}={meta[k]}" for k in sorted(meta) if not _is_tensor(meta[k])
                           and (k in _OPTIONS or k not in self.tuner.arg_names or k in self._constexprs()))
        if config in self.seen:
            if not self.seen[config]:
                raise CandidateFaulted(f"config [{config}] faulted the worker that launched it first")
            return
        tensors = {k: v for k, v in meta.items() if _is_tensor(v)}
        values = {k: v for k, v in meta.items() if not _is_tensor(v)}
        grid = grid(nargs) if callable(grid) else grid
        try:
            if self.proc is None or self.proc.poll() is not None:
                self._start(tensors)
            _send(self.proc.stdin, {"values": values, "grid": tuple(grid), "config": config})
            ok = _receive(self.proc.stdout) == "ok"
        except (EOFError, BrokenPipeError, OSError, pickle.PickleError):
            ok = False
        self.seen[config] = ok
        if ok:
            return
        status = self.proc.wait() if self.proc is not None else None
        self.proc = None
        why = f"signal {-status}" if isinstance(status, int) and status < 0 else f"exit status {status}"
        warnings.warn(
            f"tiletune: kernel {self.tuner.kernel_name!r}: candidate [{config}] killed the worker process that "
            f"launched it first ({why}; a GPU fault such as an illegal memory access); it is left out of the "
            "search and your process never ran it",
            TiletuneWarning, stacklevel=2)
        raise CandidateFaulted(f"candidate [{config}] faulted its first launch in the worker ({why})")

    def _constexprs(self) -> set:
        return set(getattr(getattr(self.tuner, "_binder", None), "constexpr", ()) or ())

    def close(self) -> None:
        """Stop the worker (it exits when its stdin closes)."""
        if self.proc is None:
            return
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        except Exception:  # noqa: BLE001 - a worker that will not stop is killed
            self.proc.kill()
            self.proc.wait()
        finally:
            self.proc.stdout.close()
            self.proc = None


@contextlib.contextmanager
def first_launches(tuner: Any) -> Iterator[None]:
    """While a ``configs=[]`` tuning runs, screen every candidate's first benchmarked launch in a
    worker (by wrapping ``tuner.pre_hook``); nothing when the switch is off or the kernel cannot be
    imported by name (said once)."""
    if not enabled() or not getattr(tuner, "synthesize_configs", False):
        yield
        return
    reference = _kernel_reference(tuner)
    if reference is None:
        warnings.warn(f"tiletune: kernel {tuner.kernel_name!r} cannot be imported by a worker process (defined in "
                      f"__main__ or a function); {ENV}=1 does not isolate its candidates", TiletuneWarning,
                      stacklevel=3)
        yield
        return
    screen = Screen(tuner, reference)
    original = tuner.pre_hook

    def pre_hook(nargs: Any, reset_only: bool = False) -> Any:
        if not reset_only:
            screen.check(nargs)
        return original(nargs, reset_only=reset_only)

    tuner.pre_hook = pre_hook
    try:
        yield
    finally:
        tuner.pre_hook = original
        screen.close()


def _is_autotuner(obj: Any) -> bool:
    return type(obj).__name__.endswith("Autotuner")  # Triton's, tiletune's, or a library's subclass


def _chain(obj: Any) -> list:
    """``obj`` and every wrapper under it, down to the jit function (the object whose ``fn`` is plain Python)."""
    chain = [obj]
    while not inspect.isfunction(getattr(obj, "fn", None)) and getattr(obj, "fn", None) is not None:
        obj = obj.fn
        chain.append(obj)
    return chain


def wrappers_of(tuner: Any) -> tuple:
    """The type names of the non-autotuner wrappers (e.g. ``Heuristics``) between what ``tuner`` tunes and
    its jit function: the worker launches the object at the same level, whatever the module exports."""
    return tuple(type(o).__name__ for o in _chain(getattr(tuner, "fn", tuner))[:-1] if not _is_autotuner(o))


def _kernel(reference: tuple, wrappers: tuple = ()) -> Any:
    """The object the tuner wraps, found from the module's export: a library may export its own
    heuristics and autotuner around the jit function the user tuned, and the worker must launch the
    candidate on the jit function (and the user's own wrappers), never through the library's autotuner."""
    module, name = reference
    obj: Any = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    levels = [o for o in _chain(obj) if not _is_autotuner(o)]
    if len(wrappers) >= len(levels) or tuple(type(o).__name__ for o in levels[-1 - len(wrappers):-1]) != wrappers:
        raise LookupError(f"{module}.{name} does not wrap its jit function as the tuned kernel does "
                          f"(wrappers {list(wrappers)})")
    return levels[-1 - len(wrappers)]


def worker_main(stdin: BinaryIO, stdout: BinaryIO) -> int:
    """The worker: receive the kernel and the tensors, then launch each config sent, answering "ok"."""
    setup = _receive(stdin)
    kernel = _kernel(setup["kernel"], tuple(setup.get("wrappers", ())))
    tensors = {n: t.to(device) if device != "cpu" else t for n, (t, device) in setup["tensors"].items()}
    fault = os.environ.get(FAULT_ENV, "")
    while True:
        try:
            request = _receive(stdin)
        except EOFError:
            return 0
        args = {**request["values"], **tensors}
        kernel.run(grid=request["grid"], warmup=False, **args)
        if any(t.device.type == "cuda" for t in tensors.values()):
            import torch

            torch.cuda.synchronize()
        if fault and fault in request["config"]:
            os.kill(os.getpid(), signal.SIGSEGV)  # fault injection for tests: die as a faulting kernel would
        _send(stdout, "ok")


def _main() -> int:
    """Keep the answers' pipe to ourselves: whatever the kernel's module prints goes to stderr."""
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return worker_main(sys.stdin.buffer, answers)


if __name__ == "__main__":
    sys.exit(_main())
