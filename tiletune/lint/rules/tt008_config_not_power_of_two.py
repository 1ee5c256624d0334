"""TT008: a hand-written config gives a `tl.arange` extent a value that is not a power of two."""

from __future__ import annotations

from typing import Iterator

from ..diagnostic import Diagnostic
from ..rule import Invalid, LintContext, Rule
from ._kernel import param_by_name, target_family

__all__ = ["ConfigNotPowerOfTwo"]


class ConfigNotPowerOfTwo(Rule):
    code = "TT008"
    name = "config-not-power-of-two"
    summary = 'a hand-written config gives a `tl.arange` extent a value that is not a power of two'
    severity = "error"
    WHAT = """
        A literal `triton.Config({...})` sets a parameter that reaches a
        `tl.arange` extent (directly or through a block shape) to a value that is
        not a power of two.
        """
    WHY = """
        Triton requires `tl.arange(0, N)` ranges to be powers of two and fails to
        compile the kernel for that config ("arange's range must be a power of
        2"); the autotuner then drops or crashes on the config. Not reported
        for an Ascend `--target`: Triton-Ascend's `tl.arange` takes any extent.
        """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl


            @triton.autotune(
                configs=[triton.Config({"BLOCK_SIZE": 1000}), triton.Config({"BLOCK_SIZE": 2048})],
                key=["n_elements"],
            )
            @triton.jit
            def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
                pid = tl.program_id(axis=0)
                offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
                mask = offs < n_elements
                tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
            """
        ),
    ]
    VALID = [
        """
        import triton
        import triton.language as tl


        @triton.autotune(
            configs=[triton.Config({"BLOCK_SIZE": 1024}), triton.Config({"BLOCK_SIZE": 2048})],
            key=["n_elements"],
        )
        @triton.jit
        def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
            pid = tl.program_id(axis=0)
            offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            mask = offs < n_elements
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
        """,
    ]

    def needs_body(self, module, kernel) -> bool:
        """Which parameters are ``tl.arange`` extents, only when a config sets a parameter to an integer
        that is not a power of two."""
        at = kernel.autotune
        if at is None or not at.configs:
            return False
        names = set(kernel.param_names)
        return any(name in names and _not_pow2_int(value) for cfg in at.configs for name, value in cfg.kwargs.items())

    def check(self, ctx: LintContext) -> Iterator[Diagnostic]:
        configured = [k for k in ctx.module.kernels if k.autotune is not None and k.autotune.configs]
        if not configured or _target_takes_any_extent(ctx.target):
            return  # (the target's family is looked up only for a module with configs: it imports the synthesis)
        for k in configured:
            at = k.autotune
            for cfg in at.configs:
                for name, value in cfg.kwargs.items():
                    p = param_by_name(k, name)
                    if p is None or not p.power_of_two:
                        continue
                    if not _not_pow2_int(value):
                        continue
                    lo = 1 << max(value.bit_length() - 1, 0)
                    hint = f"{lo} or {lo * 2}" if value > 0 else "a power of two"
                    yield ctx.report(
                        "TT008",
                        cfg.value_spans.get(name, cfg.span),
                        f"config of kernel {k.name!r} sets {name}={value}, which is not a power of two, but {name!r} is a "
                        f"tl.arange extent (Triton requires a power of two): use {hint}",
                        k.name,
                        name,
                    )


def _not_pow2_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and not _is_pow2(value)


def _is_pow2(value: int) -> bool:
    return value > 0 and (value & (value - 1)) == 0


def _target_takes_any_extent(target: str) -> bool:
    """True for targets whose ``tl.arange`` takes any extent (Ascend: Triton-Ascend); an unknown target or no
    synthesis: stock Triton's rule."""
    family = target_family(target)
    return bool(family is not None and family.any_arange_extent)
