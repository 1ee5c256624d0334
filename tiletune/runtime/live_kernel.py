"""The kernel that runs, as Triton sees it: live source, identity, and the binding of a launch.

tiletune used to read the kernel's file at the first launch; a file edited or
deleted after import then gave answers about code that does not run.  This
module reads the running objects instead:

* :func:`live_source`: the source the ``JITFunction`` captured at decoration
  (``JITFunction.src``), else the Python function's code as imported;
* :func:`triton_identity`: Triton's own kernel identity
  (``JITFunction.cache_key``: the source, every jit function it calls,
  transitively, and the ``tl.constexpr`` globals they read); under the
  interpreter the same key is computed over the interpreted functions;
* :func:`launch_constants`: what a launch fixes as Triton binds it:
  constexpr parameters passed positionally or by keyword, and every
  ``@triton.heuristics`` value that the launch's arguments decide, however it
  is computed (a lambda, a named function, a callable object).
"""

from __future__ import annotations

import hashlib
import inspect
import textwrap
import threading
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

__all__ = [
    "live_source",
    "triton_identity",
    "heuristic_layers",
    "launch_constants",
    "kernel_module_and_name",
    "file_source",
    "analyze_live",
]

_IDENTITY_LOCK = threading.Lock()


def _chain(obj: Any) -> List[Any]:
    """``obj`` and every object under it along ``.fn`` links (autotuner, heuristics, jit, function)."""
    out, seen = [], set()
    while obj is not None and id(obj) not in seen and len(out) < 16:
        seen.add(id(obj))
        out.append(obj)
        obj = getattr(obj, "fn", None)
    return out


def _python_function(obj: Any) -> Any:
    for node in _chain(obj):
        if inspect.isfunction(node):
            return node
    return None


def live_source(obj: Any) -> Optional[str]:
    """The running kernel's source: ``JITFunction.src`` (captured by Triton at decoration), else the
    Python function's source read now (call this at decoration to capture what runs).  None when
    neither is available."""
    for node in _chain(obj):
        src = getattr(node, "src", None)
        if isinstance(src, str) and not inspect.isfunction(node):
            return src
    fn = _python_function(obj)
    if fn is None:
        return None
    try:
        return _from_def(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError):
        return None


def _from_def(text: str) -> str:
    """``text`` from its ``def`` line on (decorators dropped, as ``JITFunction.src`` has it)."""
    for i, line in enumerate(text.splitlines(keepends=True)):
        if line.lstrip().startswith(("def ", "async def ")):
            return "".join(text.splitlines(keepends=True)[i:])
    return text


def file_source(obj: Any) -> Optional[str]:
    """The kernel's source as its file reads now (None when the file is gone or unreadable)."""
    import linecache

    fn = _python_function(obj)
    if fn is None:
        return None
    linecache.checkcache(getattr(getattr(fn, "__code__", None), "co_filename", None))
    try:
        return _from_def(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, IndexError):
        return None


def analyze_live(obj: Any, live_src: Optional[str], constants: Optional[Mapping[str, Any]] = None) -> Any:
    """The static analysis of the kernel that runs: of its file when the file still holds the live
    source, else of the live source itself (a file edited or deleted after import)."""
    from tiletune.analysis import analyze_kernel

    if live_src is None or file_source(obj) == live_src:
        return analyze_kernel(obj, constants=dict(constants) if constants else None)
    from tiletune.analysis.frontend import analyze_source

    fn = _python_function(obj)
    name = getattr(fn, "__name__", None)
    first = getattr(getattr(fn, "__code__", None), "co_firstlineno", 1)
    file = getattr(getattr(fn, "__code__", None), "co_filename", None)
    # the live source starts at ``def``: give it back the jit decorator that makes it a kernel
    header = "import triton\n" + "\n" * max(first - 3, 0) + "@triton.jit\n"
    module = analyze_source(header + live_src, file, constants=dict(constants) if constants else None)
    return module.kernel(name)


def kernel_module_and_name(obj: Any) -> Tuple[Optional[str], Optional[str]]:
    """``(module, qualname)`` of the kernel's Python function (for a process that imports it again)."""
    fn = _python_function(obj)
    if fn is None:
        return None, None
    return getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)


# ------------------------------------------------------------------------------------------ identity
def _interpreted_identity(fn: Any) -> str:
    """Triton's ``cache_key`` computed for a kernel decorated under ``TRITON_INTERPRET=1``: its jit
    callees are ``InterpretedFunction`` objects, which Triton's dependency finder rejects, so each is
    read as the ``JITFunction`` Triton would have built for it."""
    import triton.runtime.jit as jit
    from triton.runtime.interpreter import InterpretedFunction

    shadows: Dict[int, Any] = {}
    base = jit.DependenciesFinder

    class _Finder(base):  # type: ignore[misc,valid-type]
        def record_reference(self, val, var_dict=None, name=None):
            if isinstance(val, InterpretedFunction):
                shadow = shadows.get(id(val))
                if shadow is None:
                    shadow = shadows[id(val)] = jit.JITFunction(val.fn)
                val = shadow
            return super().record_reference(val, var_dict, name)

    with _IDENTITY_LOCK:
        jit.DependenciesFinder = _Finder
        try:
            shadow = jit.JITFunction(fn)
            return shadow.cache_key + _globals_text(shadow)
        finally:
            jit.DependenciesFinder = base


def triton_identity(obj: Any) -> Optional[str]:
    """Triton's identity of the running kernel (``JITFunction.cache_key``): source, called jit
    functions and the constexpr globals they read.  None when Triton cannot compute it."""
    from triton.runtime.jit import JITFunction

    for node in _chain(obj):
        if isinstance(node, JITFunction):
            try:
                return node.cache_key + _globals_text(node)
            except Exception:  # Triton's own error surfaces at the launch; no identity here
                return None
    fn = _python_function(obj)
    if fn is None:
        return None
    try:
        return _interpreted_identity(fn)
    except Exception:  # an older interpreter or an unsupported reference: the source hash stands
        return None


def _globals_text(jf: Any) -> str:
    """The globals the kernel and its callees read, with their values (``used_global_vals``, filled by
    ``cache_key``): Triton hashes only ``tl.constexpr`` objects, and refuses to launch when another
    read global changed; a new value in a new process is a new kernel, so both go in."""
    used = getattr(jf, "used_global_vals", None) or {}
    return "".join(f"|{name}={value!r}" for (name, _), (value, _) in sorted(used.items(), key=lambda kv: kv[0][0]))


def identity_digest(obj: Any) -> Optional[str]:
    """The first 16 hex digits of a sha256 over :func:`triton_identity` (None without one)."""
    ident = triton_identity(obj)
    return None if ident is None else hashlib.sha256(ident.encode()).hexdigest()[:16]


__all__.append("identity_digest")


# ------------------------------------------------------------------------------------------ binding
def heuristic_layers(obj: Any) -> List[Mapping[str, Any]]:
    """The ``values`` dicts of the ``@triton.heuristics`` layers around a kernel, outermost first."""
    from triton.runtime.autotuner import Heuristics

    return [node.values for node in _chain(obj) if isinstance(node, Heuristics)]


def launch_constants(kernel_name: str, arg_names: Sequence[str], constexpr: set, args: tuple,
                     kwargs: Mapping[str, Any], defaults: Mapping[str, Any],
                     heuristics: Sequence[Mapping[str, Any]] = ()) -> Dict[str, Any]:
    """The constexpr values a launch fixes, as Triton binds the call.

    A constexpr parameter passed positionally (``kernel[grid](x, y, out, n, 64)``) is fixed
    exactly as ``BLOCK=64`` is.  Each heuristic layer (outermost first, as Triton runs them) is
    called on the launch's arguments, the defaults and the values already set; a heuristic
    that needs a value the launch does not give (a tuned parameter) depends on the config and
    is left out: it is set per config, never tuned.
    """
    from .binding import LAUNCH_KEYWORDS

    out: Dict[str, Any] = {}
    for name, value in zip(arg_names, args):
        if name in constexpr:
            out[name] = value
    for name, value in kwargs.items():
        if name in constexpr and name not in LAUNCH_KEYWORDS:
            out[name] = value
    if heuristics:
        # defaults of constexprs are left out: a tuned parameter's default is not its value
        seen = {**{k: v for k, v in defaults.items() if k not in constexpr}, **dict(zip(arg_names, args)),
                **{k: v for k, v in kwargs.items() if k not in LAUNCH_KEYWORDS}}
        for layer in heuristics:
            for name, fn in layer.items():
                try:
                    value = fn(dict(seen))
                except Exception:  # reads a tuned parameter (or fails for another reason): per config
                    continue
                seen[name] = value
                if isinstance(value, (bool, int, float, str)) or value is None:
                    out[name] = value
    return out
