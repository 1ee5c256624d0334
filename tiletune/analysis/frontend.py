"""Front end: find the Triton kernels of a source file and fill their
:class:`KernelSpec` front-end fields, then hand each to the body analysis.

The source is parsed with libcst and never imported or run.  A kernel is a
function decorated with ``@triton.jit`` (under any import alias, with or
without arguments), or with a Triton/tiletune ``autotune``/``heuristics``
decorator, or wrapped as ``name = triton.jit(fn)``; it may sit at module
level or inside a class or function.  Launches ``kernel[grid](...)`` of the
same module are attached to the kernel they launch.
"""

from __future__ import annotations

import ast
import gc
import inspect
import os
import textwrap
import traceback
from typing import Any, Callable, Mapping, Optional, Union

from ..deep_stack import caused_by_recursion, run_deep
from ..errors import AnalysisError
from . import body as _body
from .decorators import fill_declaration, find_kernels
from .heuristics import read_heuristics
import libcst as cst

from .launches import build_launch, launches_by_kernel
from .positions import forget_tree, nested_deeper_than
from .model import KernelSpec, LaunchSite, ModuleSpec
from .resolver import ModuleIndex, cached_index, index_module, last_index, remember, remember_text, project_launch_calls, resolve_helpers
from .source import ModuleScan, SourceInfo, is_compile_time_def, is_jit_def, parse, positions_of, read_source

__all__ = ["analyze_source", "analyze_file", "analyze_kernel", "SourceInfo", "WantsBody"]

#: ``wants_body(module, kernel)``: whether to analyse a kernel's body (see :func:`analyze_source`).
WantsBody = Callable[[ModuleSpec, KernelSpec], bool]


# ----- entry points ------------------------------------------------------------
def analyze_source(source: str, file: Optional[str] = None, constants: Optional[Mapping[str, Any]] = None,
                   wants_body: Optional[WantsBody] = None) -> ModuleSpec:
    """Analyse Python source text and return every Triton kernel in it.

    ``file`` only labels positions and errors.  ``constants`` gives known
    parameter values by name (constexpr flags, ``None`` pointers) for every
    kernel that has them: branches they decide are resolved and the dead side
    counts for nothing.  ``wants_body(module, kernel)``, when given, is asked
    once each kernel's declaration is filled (decorators, parameters, autotune
    arguments, heuristics, launches); a kernel it says False for keeps its
    body unread (no tiling parameters, accesses, footprint or notes of its
    body): the lint asks its rules.  Raises :class:`AnalysisError`
    (``file:line:col: invalid syntax: ...``) when the text does not parse.
    """
    return _analyze(source, file, force=None, constants=constants, wants_body=wants_body)


def analyze_file(path: Union[str, "os.PathLike[str]"]) -> ModuleSpec:
    """Read and analyse a Python file (honouring a PEP 263 encoding line).

    Launches of each kernel in the other modules of its package are read too
    (:attr:`KernelSpec.project_launches`).  Raises :class:`AnalysisError` when the file is missing, unreadable, not
    decodable or not valid Python.
    """
    file = os.fspath(path)
    return _analyze(read_source(file), file, force=None, project=True)


def analyze_kernel(obj: Any, name: Optional[str] = None, constants: Optional[Mapping[str, Any]] = None) -> KernelSpec:
    """Analyse a live kernel object: a ``triton.JITFunction``, an interpreter
    ``InterpretedFunction``, an ``Autotuner``/``Heuristics`` (or any wrapper
    with a ``.fn`` chain down to the Python function) or a plain function.

    The whole defining file is analysed when it can be read, so decorators and
    launch sites are known; otherwise the function's own source is.  ``name``
    picks the kernel (default: the function's ``__name__``).  ``constants``
    specialises the analysis with a launch's known values (constexpr flags,
    ``None`` for pointers passed as ``None``): branches they decide are
    resolved, and what only a dead branch uses needs no dtype and no space.
    """
    fn = _python_function(obj)
    if fn is None:
        raise AnalysisError(
            f"cannot find the Python function behind {obj!r}: pass the kernel decorated with "
            "@triton.jit (a JITFunction or an autotuner wrapping one), or analyse its source "
            "with analyze_source(text) / analyze_file(path)"
        )
    kname = name or fn.__name__
    code = getattr(fn, "__code__", None)
    first_line = code.co_firstlineno if code is not None else None
    try:
        file = inspect.getsourcefile(fn)
    except TypeError:
        file = None
    if file and os.path.isfile(file):
        try:
            spec = _select(_analyze(read_source(file), file, force=(kname, first_line), constants=constants), kname, first_line, strict=True)
        except AnalysisError:
            spec = None
        if spec is not None:
            return spec
    # Fall back to the function's own source, shifted to its lines in the file.
    for text, start in _function_sources(obj, fn):
        snippet = "\n" * max(start - 1, 0) + textwrap.dedent(text)
        try:
            module = _analyze(snippet, file, force=(kname, start), constants=constants)
        except AnalysisError:
            continue
        spec = _select(module, kname, start, strict=False)
        if spec is not None:
            return spec
    raise AnalysisError(
        f"no source for kernel {kname!r}: define it in a .py file, or pass its source to "
        "analyze_source(text) and pick it with ModuleSpec.kernel(name)",
        file,
        first_line,
    )


# ----- module analysis -----------------------------------------------------------
_Force = Optional[tuple[str, Optional[int]]]  # (name, line) of a def to treat as a kernel


def _analyze(source: str, file: Optional[str], force: _Force, project: bool = False,
             constants: Optional[Mapping[str, Any]] = None, wants_body: Optional[WantsBody] = None) -> ModuleSpec:
    # libcst allocates a great many small objects and keeps them all alive until
    # the end: the cyclic collector's passes over them cost a third of the time
    # and find nothing, so it is paused for the analysis.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        # deep, flat expressions (a sum of thousands of terms) need a deeper stack than Python's default;
        # starting a thread with one costs milliseconds, so ordinary files run here
        if _nested_deeply(source):
            return run_deep(_analyze_module, source, file, force, project, constants, wants_body)
        return _analyze_module(source, file, force, project, constants, wants_body)
    finally:
        forget_tree()
        if was_enabled:
            gc.enable()


#: Expression depth from which libcst's recursion may exhaust Python's default stack (about 5 frames a level).
_DIRECT_DEPTH = 100


def _nested_deeply(source: str) -> bool:
    """True when some expression of ``source`` nests :data:`_DIRECT_DEPTH` levels or more (or Python cannot tell)."""
    try:
        return nested_deeper_than(source, _DIRECT_DEPTH) is not None
    except SyntaxError:
        return False  # parse() reports it with its position
    except (RecursionError, MemoryError, ValueError):
        return True


def _analyze_module(source: str, file: Optional[str], force: _Force, project: bool = False,
                    constants: Optional[Mapping[str, Any]] = None, wants_body: Optional[WantsBody] = None) -> ModuleSpec:
    # A whole-file analysis shares parses with the resolver (each file of a package parsed once a run).
    index = cached_index(file) if project and file else None
    if index is None:  # the same text indexed just before (a launch's specialisation of the kernel analysed)
        index = last_index(source, file)
    if index is None:
        module = parse(source, file)
        try:
            positions = positions_of(module, source)
            scan = ModuleScan(module)
        except Exception as exc:  # libcst reports a RecursionError of its position pass as a KeyError
            if not caused_by_recursion(exc):
                raise
            raise AnalysisError("code nested too deeply to analyse", file, 1, 0) from None
        index = index_module(source, file, module, positions, scan)
        if project and file:
            remember(file, index)
    remember_text(index)
    info, scan = index.info, index.scan
    result = ModuleSpec(file=file, enables_tiletune=scan.enables_tiletune)
    kernels = find_kernels(info, scan, force)
    launch_map = launches_by_kernel(info, scan, kernels)
    device_calls: dict[int, set[str]] = {}
    analysed: list[tuple[cst.FunctionDef, KernelSpec]] = []
    for scope, func, jit_call in kernels:
        spec = KernelSpec(name=func.name.value, span=info.span(func), file=file)
        try:
            fill_declaration(info, func, spec, jit_call)
            read_heuristics(index, func, spec)
            if any(d.kind == "jit" and "gluon" in info.resolve(d.qualname.split("(")[0])[0].split(".")
                   for d in spec.decorators):
                spec.incomplete.append(
                    f"unknown op: line {spec.span.line}: {spec.name} is a Gluon kernel (@gluon.jit): its explicit "
                    "layouts and warp-level operations are not read by the static reader; give it hand-written configs"
                )
            spec.launches = launch_map.get(id(func), [])
            if project and file and not scope:
                spec.project_launches = _project_launches(file, spec.name)
        except Exception as exc:  # noqa: BLE001 - keep going, but say so
            spec.notes.append(_internal_note("front end", exc, info.line(func)))
        if wants_body is not None and not wants_body(result, spec):
            result.kernels.append(spec)
            continue
        try:
            known = constants
            if known is None and project:
                known = unchanged_defaults(spec) or None
                if known:
                    spec.notes.append("specialised on defaults no launch of the package overrides: "
                                      + ", ".join(f"{n}={v!r}" for n, v in known.items()))
            # Read the def's own span first (lazy in the lint): a top-level def's statement is then computed
            # at once, instead of found by walking the module from a node of its body.
            _ = spec.span.line
            for helper, params in (_analyze_kernel_body(index, func, spec, known) or {}).items():
                device_calls.setdefault(helper, set()).update(params)
        except Exception as exc:  # noqa: BLE001 - one kernel must not stop the module
            spec.notes.append(_internal_note("body", exc, info.line(func)))
            spec.incomplete.append(f"unknown op: the body analysis stopped ({type(exc).__name__})")
        result.kernels.append(spec)
        analysed.append((func, spec))
    _body.mark_device_functions(analysed, device_calls)
    return result


def _analyze_kernel_body(index: ModuleIndex, func: cst.FunctionDef, spec: KernelSpec,
                         launch_constants: Optional[Mapping[str, Any]] = None) -> dict[int, set[str]]:
    """Resolve the helpers and constants ``func`` reaches (across modules), then analyse its body; return the
    helpers it calls with values only jit code holds (see :func:`~tiletune.analysis.body.analyze_body`)."""
    res = resolve_helpers(index, func)
    helpers: dict[str, cst.FunctionDef] = {}
    for _, fdef in index.scan.functions:  # the module's jit functions at any depth, first of a name wins
        if is_jit_def(fdef) or is_compile_time_def(fdef):
            helpers.setdefault(fdef.name.value, fdef)
    for name, fdef in res.helpers.items():
        helpers.setdefault(name, fdef)
    module_constants = dict(res.constants)
    module_constants.update(index.constants)
    spec.helpers = dict(sorted(res.hashes.items()))
    spec.incomplete.extend(res.unresolved)
    return _body.analyze_body(func, spec, res.positions, module_constants, helpers, res.external,
                              constants=launch_constants, aliases=res.aliases)


def unchanged_defaults(spec: KernelSpec) -> dict[str, Any]:
    """Constexpr flags whose literal default is what every launch the analysis sees runs.

    A non-tiling ``tl.constexpr`` with a literal ``bool``/``int``/``None``
    default that no launch of the package passes (by keyword or position),
    that no config sets and no heuristic computes, runs at its default: the
    whole-file analysis resolves the branches it decides (a ``use_tma=False``
    path is dead code).  Any launch with ``*args``/``**kwargs`` could pass
    anything, so then nothing is assumed; the runtime always analyses with
    the real launch's values instead.
    """
    launches = list(spec.launches) + list(spec.project_launches)
    if any(site.star_args for site in launches):
        return {}
    configured = set(spec.heuristics)
    if spec.autotune is not None:
        for c in spec.autotune.configs or ():
            configured.update(c.kwargs)
            configured.update(c.unresolved)
        if spec.autotune.configs is None and not spec.autotune.configs_empty:
            return {}  # configs built by code may set anything
    out: dict[str, Any] = {}
    for p in spec.params:
        if not p.constexpr or p.tiling or p.default is None or p.name in configured:
            continue
        if any(p.name in site.fixed or site.positional_count > p.index for site in launches):
            continue
        try:
            value = ast.literal_eval(p.default)
        except (ValueError, SyntaxError):
            continue
        if value is None or isinstance(value, (bool, int)):
            out[p.name] = value
    return out


def _project_launches(file: str, kernel: str) -> list[LaunchSite]:
    """Launches of ``kernel`` in the other modules of its package (keywords and grid as written there)."""
    out: list[LaunchSite] = []
    for other, call in project_launch_calls(file, kernel):
        site = build_launch(other.info, call, lambda name: None)
        site.file = other.path
        out.append(site)
    return out


def _internal_note(stage: str, exc: BaseException, line: int) -> str:
    where = ""
    tb = traceback.extract_tb(exc.__traceback__)
    if tb:
        frame = tb[-1]
        where = f" ({stage}: {os.path.basename(frame.filename)}:{frame.lineno})"
    return f"internal: {type(exc).__name__}: {exc} at line {line}{where}"


# ----- live objects ------------------------------------------------------------------
def _python_function(obj: Any) -> Optional[Callable[..., Any]]:
    """Follow ``.fn`` / ``__wrapped__`` links down to a plain Python function."""
    seen = set()
    while obj is not None and id(obj) not in seen:
        seen.add(id(obj))
        if inspect.isfunction(obj):
            return obj
        if inspect.ismethod(obj):
            obj = obj.__func__
        elif hasattr(obj, "fn"):
            obj = obj.fn
        elif hasattr(obj, "__wrapped__"):
            obj = obj.__wrapped__
        else:
            return None
    return None


def _function_sources(obj: Any, fn: Callable[..., Any]) -> list[tuple[str, int]]:
    """Candidate (source text, first line) pairs for a kernel, best first."""
    out: list[tuple[str, int]] = []
    seen = set()
    node = obj
    while node is not None and id(node) not in seen:  # a JITFunction keeps its source
        seen.add(id(node))
        raw, start = getattr(node, "raw_src", None), getattr(node, "starting_line_number", None)
        if isinstance(raw, list) and isinstance(start, int):
            out.append(("".join(raw), start))
        src = getattr(node, "src", None)
        if isinstance(src, str):
            out.append((src, 1))
        node = getattr(node, "fn", None)
    try:
        lines, start = inspect.getsourcelines(fn)
        out.append(("".join(lines), start))
    except (OSError, TypeError):
        pass
    return out


def _select(module: ModuleSpec, name: str, line: Optional[int], strict: bool) -> Optional[KernelSpec]:
    """The kernel ``name`` of ``module`` (the one at ``line`` when several share it)."""
    matches = [k for k in module.kernels if k.name == name]
    if line is not None:
        at = [k for k in matches if k.span.line == line or any(d.span.line == line for d in k.decorators)]
        if at or strict:
            return at[0] if at else None
    return matches[0] if matches else None
