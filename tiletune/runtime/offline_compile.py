"""Compile kernels for a GPU target without a GPU, the way a launch would.

``triton.compile`` produces a cubin for ``GPUTarget("cuda", 90, 32)`` on any
machine.  Its ``metadata.shared`` matches a real launch only when the kernel
is specialised as a launch specialises it: integer arguments equal to 1 become
the constexpr 1, and pointers and integers divisible by 16 carry the
``tt.divisibility`` attribute.  :func:`specialize` does that from a
description of the arguments.

Triton's interpreter (``TRITON_INTERPRET=1``) patches ``triton.language`` for
the whole process, after which compiling fails; :func:`compile_in_subprocess`
therefore runs the jobs in a fresh Python process without that variable,
compiling them on a thread pool.  Run as ``python -m
tiletune.runtime.offline_compile`` it reads a JSON list of jobs on stdin and
writes a JSON list of results on stdout.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping, Optional, Sequence

from tiletune.specialization import divisible_by_16

__all__ = [
    "CompileJob",
    "CompileResult",
    "describe_args",
    "specialize",
    "compile_job",
    "compile_jobs",
    "compile_in_subprocess",
]

_TORCH_TO_TRITON = {
    "float16": "fp16",
    "bfloat16": "bf16",
    "float32": "fp32",
    "float64": "fp64",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "bool": "i1",
    "float8_e4m3fn": "fp8e4nv",
    "float8_e5m2": "fp8e5",
}


@dataclass
class CompileJob:
    """One kernel at one config.

    ``file`` is a Python file defining the kernel as module attribute
    ``kernel``; ``args`` describes every non-constexpr argument and every
    non-tiling constexpr by name (see :func:`describe_args`); ``constexprs``
    holds the tiling values.
    """

    file: str
    kernel: str
    args: dict[str, Any]
    constexprs: dict[str, Any] = field(default_factory=dict)
    num_warps: int = 4
    num_stages: int = 3
    arch: int = 90


@dataclass
class CompileResult:
    """Outcome of one :class:`CompileJob`: shared-memory bytes or the error text."""

    ok: bool
    shared: Optional[int] = None
    error: Optional[str] = None
    out_of_resources: bool = False


def describe_args(args: Mapping[str, Any]) -> dict[str, Any]:
    """Describe launch arguments as JSON: tensors become ``{"ptr": "fp16"}``.

    Ints, floats, bools, strings and None are kept as they are.
    """
    out: dict[str, Any] = {}
    for name, value in args.items():
        dtype = getattr(value, "dtype", None)
        if dtype is not None and hasattr(value, "data_ptr"):
            key = str(dtype).replace("torch.", "")
            if key not in _TORCH_TO_TRITON:
                raise ValueError(f"argument {name!r}: unsupported tensor dtype {dtype}")
            out[name] = {"ptr": _TORCH_TO_TRITON[key]}
        elif value is None or isinstance(value, (bool, int, float, str)):
            out[name] = value
        else:
            out[name] = {"repr": repr(value)}
    return out


def specialize(params: Sequence[tuple[str, bool]], args: Mapping[str, Any], constexprs: Mapping[str, Any]):
    """Signature, constexpr values and attributes for ``ASTSource``, as a launch makes them.

    ``params`` lists ``(name, is_constexpr)`` in signature order.  Returns
    ``(signature, constexpr_values, attrs)``.
    """
    signature: dict[str, str] = {}
    values: dict[str, Any] = {}
    attrs: dict[tuple[int], list] = {}
    for index, (name, is_constexpr) in enumerate(params):
        if name in constexprs:
            signature[name] = "constexpr"
            values[name] = constexprs[name]
            continue
        if name not in args:
            raise KeyError(f"no value for kernel argument {name!r}")
        value = args[name]
        if is_constexpr:
            signature[name] = "constexpr"
            values[name] = value
        elif isinstance(value, dict) and "ptr" in value:
            signature[name] = "*" + value["ptr"]
            attrs[(index,)] = [["tt.divisibility", 16]]
        elif isinstance(value, bool):
            signature[name] = "i1"
        elif isinstance(value, int):
            if value == 1:
                signature[name] = "constexpr"
                values[name] = 1
            else:
                signature[name] = "i32" if -(2**31) <= value < 2**31 else "i64"
                if divisible_by_16(value):
                    attrs[(index,)] = [["tt.divisibility", 16]]
        elif isinstance(value, float):
            signature[name] = "fp32"
        elif value is None:
            signature[name] = "constexpr"
            values[name] = None
        else:
            raise TypeError(f"cannot specialise argument {name!r} = {value!r}")
    return signature, values, attrs


def _load_kernel(file: str, attr: str):
    spec = importlib.util.spec_from_file_location(f"_tiletune_compile_{abs(hash(file))}", file)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {file}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fn = getattr(module, attr)
    while not hasattr(fn, "params") and hasattr(fn, "fn"):
        fn = fn.fn  # unwrap autotune/heuristics
    return fn


_KERNELS: dict[tuple[str, str], Any] = {}

#: Largest dynamic shared memory per block by compute capability (bytes), from
#: the CUDA C Programming Guide's table of technical specifications.  The
#: compiler accepts more; the launch then fails with OutOfResources.
SHARED_LIMIT = {80: 166912, 86: 101376, 89: 101376, 90: 232448}


def compile_job(job: CompileJob) -> CompileResult:
    """Compile one job in this process (which must not be running the interpreter)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    try:
        key = (job.file, job.kernel)
        if key not in _KERNELS:
            try:
                _KERNELS[key] = _load_kernel(job.file, job.kernel)
            except SystemExit as exc:
                raise ImportError(f"{job.file} exited on import ({exc})") from None
        fn = _KERNELS[key]
        params = [(p.name, bool(p.is_constexpr)) for p in fn.params]
        signature, values, attrs = specialize(params, job.args, job.constexprs)
        src = ASTSource(fn=fn, signature=signature, constexprs=values, attrs=attrs)
        compiled = triton.compile(
            src,
            target=GPUTarget("cuda", job.arch, 32),
            options={"num_warps": job.num_warps, "num_stages": job.num_stages},
        )
        shared = int(compiled.metadata.shared)
        limit = SHARED_LIMIT.get(job.arch)
        if limit is not None and shared > limit:
            return CompileResult(
                ok=False,
                shared=shared,
                error=f"out of resources: shared memory {shared} B > {limit} B on sm_{job.arch}",
                out_of_resources=True,
            )
        return CompileResult(ok=True, shared=shared)
    except Exception as exc:  # a failing candidate is data, not a crash
        text = f"{type(exc).__name__}: {exc}"
        oor = "out of resource" in text.lower() or "OutOfResources" in text
        return CompileResult(ok=False, error=text[-2000:], out_of_resources=oor)


def compile_jobs(jobs: Sequence[CompileJob], workers: Optional[int] = None) -> list[CompileResult]:
    """Compile jobs on a thread pool in this process; results in job order."""
    workers = workers or max(1, os.cpu_count() or 1)
    if workers == 1 or len(jobs) <= 1:
        return [compile_job(j) for j in jobs]
    # Load each kernel once up front: module import is not thread safe.
    for j in jobs:
        key = (j.file, j.kernel)
        if key not in _KERNELS:
            try:
                _KERNELS[key] = _load_kernel(j.file, j.kernel)
            except BaseException:  # noqa: BLE001 - compile_job reports it per job
                pass
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(compile_job, jobs))


def compile_in_subprocess(jobs: Sequence[CompileJob], workers: Optional[int] = None, timeout: float = 1800) -> list[CompileResult]:
    """Compile jobs in a fresh Python process without ``TRITON_INTERPRET``."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    payload = json.dumps({"workers": workers, "jobs": [asdict(j) for j in jobs]})
    proc = subprocess.run(
        [sys.executable, "-m", "tiletune.runtime.offline_compile"],
        input=payload,
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"offline compile worker failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    return [CompileResult(**r) for r in json.loads(proc.stdout)]


def main() -> int:
    """Worker entry point: JSON jobs on stdin, JSON results on stdout."""
    request = json.load(sys.stdin)
    jobs = [CompileJob(**j) for j in request["jobs"]]
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # whatever the kernel modules print must not corrupt the JSON
    try:
        results = compile_jobs(jobs, request.get("workers"))
    finally:
        sys.stdout = real_stdout
    json.dump([asdict(r) for r in results], real_stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
