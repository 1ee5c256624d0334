"""Lower a live kernel with Triton's own front end and read the tiles from its IR.

This is the one module that touches Triton's lowering API, which moves
between releases.  :func:`lower_to_ir` runs ``ASTSource(...).make_ir`` with
the backend of ``GPUTarget("cuda", 90, 32)``: Triton's front end only (no
optimisation passes, no GPU, no cubin), milliseconds per kernel on a CPU.
:func:`read_ir` reads the printed module: the tile shape and element type of
every load, store and atomic, the M/N/K of every dot and the constant bounds
of every ``scf.for`` loop.

A kernel decorated under ``TRITON_INTERPRET=1`` is an ``InterpretedFunction``,
which Triton's code generator cannot lower; :func:`lower_facts_in_subprocess`
then lowers the same kernel (imported by module and name, with the live
source put back) in a child process without the interpreter.  Run as
``python -m tiletune.runtime.triton_ir`` it reads one JSON request on stdin
and writes the facts as JSON on stdout.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

__all__ = [
    "LoweringError",
    "MemoryOp",
    "DotOp",
    "LoopBounds",
    "IRFacts",
    "lower_to_ir",
    "read_ir",
    "lower_facts",
    "lower_facts_in_subprocess",
    "jit_function",
    "quiet_fds",
    "refusal_text",
]

#: Triton IR element types -> tiletune's dtype names.
_IR_DTYPES = {
    "f16": "fp16", "bf16": "bf16", "f32": "fp32", "f64": "fp64", "i1": "int1", "i8": "int8",
    "i16": "int16", "i32": "int32", "i64": "int64", "f8E4M3FN": "fp8e4nv", "f8E5M2": "fp8e5",
    "f8E4M3FNUZ": "fp8e4b8", "f8E5M2FNUZ": "fp8e5b16", "tf32": "tf32",
}

#: Memory operations read from the IR, by op name.
_MEMORY_OPS = {
    "tt.load": "load", "tt.store": "store", "tt.atomic_rmw": "atomic", "tt.atomic_cas": "atomic",
    "tt.descriptor_load": "load", "tt.descriptor_store": "store", "tt.descriptor_gather": "load",
    "tt.descriptor_scatter": "store", "tt.descriptor_reduce": "atomic",
}


class LoweringError(RuntimeError):
    """Triton's front end refused the kernel at this config (the message is Triton's, shortened)."""


@dataclass(frozen=True)
class MemoryOp:
    """One load/store/atomic: ``kind`` (load, store, atomic), the tile ``shape`` (``()`` scalar), ``dtype``."""

    kind: str
    shape: Tuple[int, ...]
    dtype: str


@dataclass(frozen=True)
class DotOp:
    """One ``tl.dot``: ``m``, ``n``, ``k`` and the operand element types."""

    m: int
    n: int
    k: int
    a_dtype: str
    b_dtype: str


@dataclass(frozen=True)
class LoopBounds:
    """One ``scf.for`` loop: constant lower bound, upper bound and step (None where not a constant)."""

    lower: Optional[int]
    upper: Optional[int]
    step: Optional[int]


@dataclass
class IRFacts:
    """What the IR of one kernel at one config says about its tiles."""

    memory: List[MemoryOp] = field(default_factory=list)
    dots: List[DotOp] = field(default_factory=list)
    loops: List[LoopBounds] = field(default_factory=list)
    tensor_shapes: List[Tuple[int, ...]] = field(default_factory=list)  # every tensor shape, registers too

    def tile_signature(self) -> tuple:
        """The distinct memory tiles, dot extents and tensor shapes (register tiles such as
        ``tl.zeros((B,))`` included); equal for configs with equal tiles (a ``tl.static_range``
        unrolled more times repeats the same tiles and leaves it equal)."""
        mem = sorted({(m.kind, m.shape, m.dtype) for m in self.memory})
        dots = sorted({(d.m, d.n, d.k) for d in self.dots})
        return tuple(mem), tuple(dots), tuple(sorted(set(self.tensor_shapes)))

    def loop_signature(self) -> tuple:
        """The loops' constant bounds, and how many memory ops and dots the unrolled IR holds
        (changes when a trip count does, ``scf.for`` or ``tl.static_range``)."""
        bounds = tuple(sorted(((lp.lower, lp.upper, lp.step) for lp in self.loops
                               if lp.lower is not None or lp.upper is not None or lp.step is not None),
                              key=lambda b: tuple((x is None, x or 0) for x in b)))  # None: a runtime bound
        return bounds, len(self.memory), len(self.dots)

    def to_json(self) -> dict:
        """A plain-JSON form (see :meth:`from_json`)."""
        return asdict(self)

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> "IRFacts":
        """Inverse of :meth:`to_json`."""
        return IRFacts(
            memory=[MemoryOp(m["kind"], tuple(m["shape"]), m["dtype"]) for m in data.get("memory", [])],
            dots=[DotOp(**d) for d in data.get("dots", [])],
            loops=[LoopBounds(**lp) for lp in data.get("loops", [])],
            tensor_shapes=[tuple(t) for t in data.get("tensor_shapes", [])],
        )


# ------------------------------------------------------------------------------------------ reading
_TENSOR = re.compile(r"tensor<((?:\d+x)*)(!tt\.ptr<[^<>]*>|[A-Za-z0-9]+)>")
_PTR = re.compile(r"!tt\.ptr<([A-Za-z0-9]+)>")
_DIMS = re.compile(r"tensor<((?:\d+x)+)")
_TENSOR_PTR = re.compile(r"!tt\.ptr<tensor<((?:\d+x)*)([A-Za-z0-9]+)>>")
_DESC = re.compile(r"!tt\.tensordesc<tensor<((?:\d+x)*)([A-Za-z0-9]+)>>")
_OP = re.compile(r"^\s*(?:%[\w.#:-]+(?:\s*,\s*%[\w.#:-]+)*\s*=\s*)?([a-z_]+\.[a-z_]+)\b")
_CONST = re.compile(r"^\s*(%[\w.-]+)\s*=\s*arith\.constant\s+(-?\d+)\s*:\s*(?:i\d+|index)\s*$")
_COPY = re.compile(r"^\s*(%[\w.-]+)\s*=\s*arith\.(?:bitcast|extsi|extui|trunci|index_cast)\s+(%[\w.-]+)\s*:")
_FOR = re.compile(r"scf\.for\s+%[\w.-]+\s*=\s*(%[\w.-]+)\s+to\s+(%[\w.-]+)\s+step\s+(%[\w.-]+)")


def _dtype(text: str) -> str:
    return _IR_DTYPES.get(text, text)


def _shape(dims: str) -> Tuple[int, ...]:
    return tuple(int(d) for d in dims.split("x") if d)


def _type_part(line: str) -> str:
    """The type annotation of an op line (after the last top-level `` : ``)."""
    line = re.sub(r"\s+loc\(.*\)\s*$", "", line.rstrip())
    idx = line.rfind(" : ")
    return line[idx + 3:] if idx >= 0 else ""


def _memory_tile(types: str) -> Optional[Tuple[Tuple[int, ...], str]]:
    """(shape, dtype) of the memory an op's types describe: a tensor of pointers, a block pointer,
    a tensor descriptor, a scalar pointer."""
    for pattern in (_TENSOR_PTR, _DESC):
        m = pattern.search(types)
        if m:
            return _shape(m.group(1)), _dtype(m.group(2))
    m = _TENSOR.search(types)
    if m:
        elem = m.group(2)
        p = _PTR.match(elem)
        return _shape(m.group(1)), _dtype(p.group(1) if p else elem)
    m = _PTR.search(types)
    if m:
        return (), _dtype(m.group(1))
    return None


def _dot(types: str) -> Optional[DotOp]:
    tensors = [(_shape(m.group(1)), m.group(2)) for m in _TENSOR.finditer(types)]
    if "->" not in types or len(tensors) < 2:
        return None
    (a_shape, a_t), (_, b_t) = tensors[0], tensors[1]
    out_shape = tensors[-1][0]
    if len(out_shape) < 2 or len(a_shape) < 2:
        return None
    return DotOp(m=out_shape[-2], n=out_shape[-1], k=a_shape[-1], a_dtype=_dtype(a_t), b_dtype=_dtype(b_t))


def read_ir(text: str) -> IRFacts:
    """The tiles of a printed Triton IR module: every load/store/atomic, dot and ``scf.for`` loop."""
    facts = IRFacts()
    consts: Dict[str, int] = {}
    shapes: set = set()
    for line in text.splitlines():
        for m in _DIMS.finditer(line):
            shapes.add(_shape(m.group(1)))
        c = _CONST.match(line)
        if c:
            consts[c.group(1)] = int(c.group(2))
            continue
        cp = _COPY.match(line)
        if cp and cp.group(2) in consts:
            consts[cp.group(1)] = consts[cp.group(2)]
            continue
        f = _FOR.search(line)
        if f:
            facts.loops.append(LoopBounds(*(consts.get(f.group(i)) for i in (1, 2, 3))))
            continue
        op = _OP.match(line)
        if not op:
            continue
        name = op.group(1)
        if name in _MEMORY_OPS:
            tile = _memory_tile(_type_part(line))
            if tile is not None:
                facts.memory.append(MemoryOp(_MEMORY_OPS[name], tile[0], tile[1]))
        elif name in ("tt.dot", "tt.dot_scaled"):
            d = _dot(_type_part(line))
            if d is not None:
                facts.dots.append(d)
    facts.tensor_shapes = sorted(shapes)
    return facts


# ------------------------------------------------------------------------------------------ lowering
def jit_function(obj: Any) -> Any:
    """The ``JITFunction`` under an autotuner/heuristics chain (``.fn`` links) or a ``functools.wraps``
    wrapper (``__wrapped__``), or None (e.g. an interpreter ``InterpretedFunction``, which Triton's code
    generator cannot lower)."""
    from triton.runtime.jit import JITFunction

    seen = 0
    while obj is not None and seen < 16:
        if isinstance(obj, JITFunction):
            return obj
        # __wrapped__ first: functools.wraps copies the JITFunction's own ``fn`` (the Python function) over
        inner = getattr(obj, "__wrapped__", None)
        obj = inner if inner is not None else getattr(obj, "fn", None)
        seen += 1
    return None


@contextlib.contextmanager
def quiet_fds():
    """Send file descriptors 1 and 2 to a temporary file while lowering or compiling: MLIR writes its
    diagnostics and Triton its compile-failure reproducer there, and they must not reach the user."""
    saved = []
    with tempfile.TemporaryFile() as sink:
        try:
            for fd in (1, 2):
                try:
                    sys.stdout.flush() if fd == 1 else sys.stderr.flush()
                except Exception:  # a closed stream: nothing to flush
                    pass
                saved.append((fd, os.dup(fd)))
                os.dup2(sink.fileno(), fd)
        except OSError:  # no such descriptor (embedded interpreters): leave the rest alone
            pass
        try:
            yield
        finally:
            for fd, copy in saved:
                os.dup2(copy, fd)
                os.close(copy)


def _short(exc: BaseException) -> str:
    """Triton's message, shortened: the innermost cause (a CompilationError wraps the real one),
    then where the outermost error points (``at 2:9: | def kernel(...)``)."""
    outer, seen = exc, 0
    while (exc.__cause__ is not None or exc.__context__ is not None) and seen < 8:
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
        seen += 1
    inner = [ln.strip() for ln in f"{type(exc).__name__}: {exc}".splitlines() if ln.strip()]
    text = " | ".join(inner[-4:])
    if exc is not outer:
        where = [ln.strip() for ln in str(outer).splitlines() if ln.strip()][:2]
        text += " (" + " | ".join(where) + ")"
    return text[-1200:]


def refusal_text(exc: BaseException) -> str:
    """How a front-end refusal is worded to the user (Triton's message, shortened): the same text whether the
    IR oracle's screen or a compile child met it."""
    return _short(exc)


def lower_to_ir(fn: Any, signature: Mapping[str, str], constexprs: Mapping[str, Any],
                attrs: Optional[Mapping] = None, arch: int = 90, num_warps: int = 4) -> str:
    """Triton IR (printed, without locations) of ``fn`` (a ``JITFunction``) at one config.

    ``signature`` maps every parameter to its Triton type (``"*fp16"``, ``"i32"``,
    ``"constexpr"``); ``constexprs`` gives the constexpr values by name.  Raises
    :class:`LoweringError` with Triton's message when the front end refuses the
    kernel (a ``tl.static_assert``, a dot under 16, a type error).
    """
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.compiler.compiler import make_backend
    from triton._C.libtriton import ir

    target = GPUTarget("cuda", arch, 32)
    backend = make_backend(target)
    options = backend.parse_options({"num_warps": num_warps})
    src = ASTSource(fn, dict(signature), dict(constexprs), dict(attrs or {}))
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    try:
        with quiet_fds():
            module = src.make_ir(target, options, backend.get_codegen_implementation(options),
                                 backend.get_module_map(), context)
    except Exception as exc:  # Triton's CompilationError and the errors it wraps
        raise LoweringError(_short(exc)) from None
    printer = getattr(module, "str_nodebug", None)
    return printer() if callable(printer) else str(module)


def lower_facts(fn: Any, signature: Mapping[str, str], constexprs: Mapping[str, Any],
                attrs: Optional[Mapping] = None) -> IRFacts:
    """:func:`read_ir` of :func:`lower_to_ir` (same arguments)."""
    return read_ir(lower_to_ir(fn, signature, constexprs, attrs))


# ------------------------------------------------------------------------------------------ subprocess
def _resolve(module_name: str, qualname: str) -> Any:
    obj: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        if part == "<locals>":
            raise LoweringError(f"{module_name}.{qualname} is defined inside a function; it cannot be "
                                "imported by name")
        obj = getattr(obj, part)
    return obj


def _serve(request: Mapping[str, Any]) -> dict:
    """Lower one kernel at several probes (the child process's work)."""
    from triton.runtime.jit import JITFunction

    for path in request.get("sys_path", []):
        if path not in sys.path:
            sys.path.append(path)
    try:
        obj = _resolve(request["module"], request["qualname"])
    except Exception as exc:  # the module does not import here: no facts
        return {"error": f"cannot import {request['module']}.{request['qualname']}: {_short(exc)}"}
    fn = jit_function(obj)
    if fn is None:
        return {"error": f"{request['module']}.{request['qualname']} is not a @triton.jit kernel"}
    live = request.get("src")
    if live and isinstance(fn, JITFunction) and fn.src != live:
        fn._unsafe_update_src(live)  # the running process's source, not the file's
    out = []
    for probe in request["probes"]:
        try:
            facts = lower_facts(fn, probe["signature"], probe["constexprs"])
            out.append({"facts": facts.to_json()})
        except LoweringError as exc:
            out.append({"error": str(exc)})
    return {"results": out}


def lower_facts_in_subprocess(module: str, qualname: str, probes: Sequence[Mapping[str, Any]],
                              src: Optional[str] = None, timeout: float = 120) -> List[Any]:
    """Lower ``module.qualname`` at each probe (``{"signature", "constexprs"}``) in a child process
    without ``TRITON_INTERPRET``; one :class:`IRFacts` or :class:`LoweringError` per probe.

    ``src`` (the live kernel's source) replaces the file's when they differ.
    Raises :class:`LoweringError` when the child cannot import the kernel.
    """
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    payload = json.dumps({"module": module, "qualname": qualname, "probes": list(probes), "src": src,
                          "sys_path": [p for p in sys.path if p]})
    try:
        proc = subprocess.run([sys.executable, "-m", "tiletune.runtime.triton_ir"], input=payload,
                              capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise LoweringError(f"lowering {module}.{qualname} took over {timeout:.0f} s") from None
    if proc.returncode != 0:
        raise LoweringError(f"lowering worker for {module}.{qualname} failed (exit {proc.returncode}): "
                            f"{proc.stderr.strip()[-800:]}")
    answer = json.loads(proc.stdout)
    if "error" in answer:
        raise LoweringError(answer["error"])
    return [IRFacts.from_json(r["facts"]) if "facts" in r else LoweringError(r["error"])
            for r in answer["results"]]


def main() -> int:
    """Child entry point: one JSON request on stdin, the facts as JSON on stdout."""
    request = json.load(sys.stdin)
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # what imported modules print must not corrupt the JSON
    try:
        answer = _serve(request)
    finally:
        sys.stdout = real_stdout
    json.dump(answer, real_stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
