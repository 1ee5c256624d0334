"""What ``tiletune.autotune`` wraps, checked at decoration: a jitted kernel (under any heuristics), Triton's
init keywords of this version, the tuning modules imported early, and the process group a tuner agrees over."""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from triton.runtime.autotuner import Autotuner as _TritonAutotuner
from triton.runtime.autotuner import Heuristics

from tiletune.errors import TuningError

from .binding import base_function
from .env import env_on

__all__ = ["resolve_group", "innermost", "check_wraps_jit", "base_init_kwargs", "import_tuning_modules"]


def resolve_group(pg: Any) -> Any:
    """The process group a tuner agrees over: ``pg``; ``"default"`` -> the default group; ``None`` ->
    the default group when ``TILETUNE_DIST=1``, else no agreement.

    ``"default"`` (or ``TILETUNE_DIST=1``) without an initialised
    torch.distributed means no agreement (a single process).
    """
    if pg is None:
        if not env_on("TILETUNE_DIST"):
            return None
        pg = "default"
    if isinstance(pg, str):
        if pg.strip().lower() != "default":
            raise TuningError(f"pg={pg!r} is not a process group; pass a torch.distributed ProcessGroup, "
                              "'default' (the default group) or None")
        try:
            import torch.distributed as dist
        except ImportError:
            return None
        if not (dist.is_available() and dist.is_initialized()):
            return None
        return dist.group.WORLD
    return pg


def innermost(fn: Any) -> tuple[Any, list[str]]:
    """The object under any ``Heuristics`` layers, and the parameters those set."""
    names: list[str] = []
    cur = fn
    while isinstance(cur, Heuristics):
        names.extend(cur.values.keys())
        cur = cur.fn
    return cur, names


def check_wraps_jit(fn: Any) -> None:
    """Raise a clear TuningError unless ``fn`` is a jitted kernel (or heuristics over one)."""
    from triton.runtime.jit import JITFunction

    try:
        from triton.runtime.interpreter import InterpretedFunction
    except ImportError:  # pragma: no cover
        InterpretedFunction = JITFunction  # type: ignore[misc,assignment]
    inner, _ = innermost(fn)
    if isinstance(inner, (JITFunction, InterpretedFunction)):
        return
    name = getattr(base_function(fn), "__name__", repr(fn))
    if isinstance(inner, _TritonAutotuner):
        raise TuningError(
            f"kernel {name!r}: autotune is applied twice (it wraps another autotuner); keep one "
            "@tiletune.autotune / @triton.autotune directly above @triton.jit"
        )
    if inspect.isfunction(inner):
        raise TuningError(
            f"kernel {name!r}: autotune must wrap a @triton.jit function, but it got a plain Python "
            "function; put @triton.jit directly under @tiletune.autotune(...) (decorators apply "
            "bottom-up: @autotune, then optionally @triton.heuristics, then @triton.jit)"
        )
    raise TuningError(
        f"kernel {name!r}: autotune must wrap a @triton.jit function (or @triton.heuristics over one), "
        f"not a {type(inner).__name__}; put @triton.jit directly under the autotune decorator"
    )


def base_init_kwargs(**kwargs: Any) -> dict:
    """Keep only the keywords this Triton's Autotuner.__init__ accepts (they changed across versions)."""
    try:
        params = inspect.signature(_TritonAutotuner.__init__).parameters
    except (TypeError, ValueError):  # pragma: no cover
        return {}
    return {k: v for k, v in kwargs.items() if k in params}


#: What a ``configs=[]`` tuning runs at its first launch: the source analysis (libcst, networkx), the synthesis.
TUNING_MODULES = ("tiletune.analysis", "tiletune.synthesis", "tiletune.synthesis.request")


def import_tuning_modules() -> None:
    """Import what a ``configs=[]`` tuning runs at its first launch (:data:`TUNING_MODULES`, about 0.4 CPU s)
    at decoration, where a program pays its imports, rather than inside the first launch it tunes.  On the
    decorating thread: an import in a thread of its own would race the program's own imports and any fork
    it makes meanwhile (a child copying a half-done import)."""
    for name in TUNING_MODULES:
        importlib.import_module(name)
