"""TT009: a hand-written config cannot fit the target chip."""

from __future__ import annotations

from typing import Any, Iterator, Optional

from ..diagnostic import Diagnostic
from ..rule import Invalid, LintContext, Rule


__all__ = ["ConfigDoesNotFit"]


class ConfigDoesNotFit(Rule):
    code = "TT009"
    name = "config-does-not-fit"
    summary = 'a hand-written config cannot fit the target chip'
    severity = "error"
    WHAT = """
        A literal `triton.Config({...}, num_warps=..., num_stages=...)` needs more
        on-chip memory (shared memory, registers, Unified Buffer...) or threads
        than the target (`--target`, default `h100`) has. The bytes it needs are
        computed from the kernel's footprint with the config's values, fp16
        elements for pointers that feed `tl.dot` and fp32 for the others.
        """
    WHY = """
        Such a config fails to compile or launch ("out of resource: shared
        memory"); Triton's autotuner prunes it at run time, after compiling it,
        and if every config is like that the kernel cannot run at all.
        """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl


            @triton.autotune(
                configs=[triton.Config({"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 256}, num_warps=8, num_stages=5)],
                key=["M", "N", "K"],
            )
            @triton.jit
            def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
                pid_m = tl.program_id(0)
                pid_n = tl.program_id(1)
                rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
                rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
                rk = tl.arange(0, BLOCK_K)
                acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
                for k in range(0, K, BLOCK_K):
                    a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
                    b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
                    acc += tl.dot(a, b)
                tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)
            """
        ),
    ]
    VALID = [
        """
        import triton
        import triton.language as tl


        @triton.autotune(
            configs=[triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=8, num_stages=3)],
            key=["M", "N", "K"],
        )
        @triton.jit
        def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
            pid_m = tl.program_id(0)
            pid_n = tl.program_id(1)
            rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
            rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
            rk = tl.arange(0, BLOCK_K)
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for k in range(0, K, BLOCK_K):
                a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
                b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
                acc += tl.dot(a, b)
            tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)
        """,
    ]

    def needs_body(self, module, kernel) -> bool:
        """The footprint and the accesses, for a kernel with a literal config to check."""
        at = kernel.autotune
        return at is not None and any(not cfg.unresolved for cfg in at.configs or ())

    def check(self, ctx: LintContext) -> Iterator[Diagnostic]:
        kernels = [k for k in ctx.module.kernels if k.autotune is not None and k.autotune.configs]
        if not kernels:
            return
        try:
            from tiletune.synthesis import check_config, get_target
        except ImportError:
            return  # synthesis not available: nothing to check against
        try:
            target = get_target(ctx.target)
        except Exception:
            return  # the front end validates --target; an unknown one here checks nothing
        for k in kernels:
            dtypes = _assumed_dtypes(k)
            for cfg in k.autotune.configs:
                if cfg.unresolved:
                    continue
                try:
                    violations = check_config(k, dict(cfg.kwargs), cfg.num_warps, cfg.num_stages, None, dtypes, target)
                except Exception:
                    continue  # not enough known about this config to check it
                for v in violations:
                    if "power of two" in v or "power of 2" in v:
                        continue  # TT008 reports those, with the nearest powers
                    yield ctx.report(
                        "TT009",
                        cfg.span,
                        f"config {_format_config(cfg)} of kernel {k.name!r} does not fit {getattr(target, 'name', ctx.target)}: {v}",
                        k.name,
                        _param_in(v, k),
                    )


def _assumed_dtypes(kernel: Any) -> dict[str, str]:
    """fp16 for pointers whose loads feed a ``tl.dot``, fp32 for every other pointer."""
    dot_fed = {a.pointer for a in kernel.accesses if a.feeds_dot and a.pointer}
    pointers = [p.name for p in kernel.params if p.is_pointer]
    for name in list(kernel.loaded_pointers) + list(kernel.stored_pointers) + list(kernel.atomic_pointers):
        if name not in pointers:
            pointers.append(name)
    for a in kernel.accesses:
        if a.pointer and a.pointer not in pointers:
            pointers.append(a.pointer)
    return {p: ("fp16" if p in dot_fed else "fp32") for p in pointers}


def _param_in(text: str, kernel: Any) -> Optional[str]:
    for p in kernel.params:
        if p.tiling and p.name in text:
            return p.name
    return None


def _format_config(cfg: Any) -> str:
    parts = [", ".join(f"{k!r}: {v!r}" for k, v in cfg.kwargs.items())]
    text = "{" + parts[0] + "}"
    if cfg.num_warps is not None:
        text += f", num_warps={cfg.num_warps}"
    if cfg.num_stages is not None:
        text += f", num_stages={cfg.num_stages}"
    return f"triton.Config({text})"
