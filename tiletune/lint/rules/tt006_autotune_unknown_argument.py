"""TT006: `key`, `restore_value` or `reset_to_zero` names something that is not a kernel argument."""

from __future__ import annotations

from typing import Iterator

from ..diagnostic import Diagnostic
from ..rule import Invalid, LintContext, Rule


__all__ = ["AutotuneUnknownArgument"]


class AutotuneUnknownArgument(Rule):
    code = "TT006"
    name = "autotune-unknown-argument"
    summary = '`key`, `restore_value` or `reset_to_zero` names something that is not a kernel argument'
    severity = "error"
    WHAT = """
        A name in the autotune decorator's `key`, `restore_value` or
        `reset_to_zero` list is not a parameter of the kernel.
        """
    WHY = """
        Triton builds the tuning key from the arguments named in `key` and silently
        skips unknown names, so a typo makes one cached config serve every shape.
        `restore_value` / `reset_to_zero` look the name up among the call's
        arguments and fail (KeyError) the first time the kernel is tuned.
        """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl


            @triton.autotune(
                configs=[triton.Config({"BLOCK_SIZE": 512}), triton.Config({"BLOCK_SIZE": 1024})],
                key=["n"],
                reset_to_zero=["out"],
            )
            @triton.jit
            def sum_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
                pid = tl.program_id(axis=0)
                offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
                x = tl.load(x_ptr + offs, mask=offs < n_elements, other=0.0)
                tl.atomic_add(out_ptr, tl.sum(x, axis=0))
            """
        ),
    ]
    VALID = [
        """
        import triton
        import triton.language as tl


        @triton.autotune(
            configs=[triton.Config({"BLOCK_SIZE": 512}), triton.Config({"BLOCK_SIZE": 1024})],
            key=["n_elements"],
            reset_to_zero=["out_ptr"],
        )
        @triton.jit
        def sum_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
            pid = tl.program_id(axis=0)
            offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            x = tl.load(x_ptr + offs, mask=offs < n_elements, other=0.0)
            tl.atomic_add(out_ptr, tl.sum(x, axis=0))
        """,
    ]

    def needs_body(self, module, kernel) -> bool:
        """The autotune arguments and the parameter names only."""
        return False

    def check(self, ctx: LintContext) -> Iterator[Diagnostic]:
        for k in ctx.module.kernels:
            at = k.autotune
            if at is None:
                continue
            names = set(k.param_names)
            for field_name, values in (("key", at.key), ("restore_value", at.restore_value), ("reset_to_zero", at.reset_to_zero)):
                for n in values or []:
                    if n in names:
                        continue
                    consequence = (
                        "Triton silently leaves it out of the tuning key"
                        if field_name == "key"
                        else "tuning fails with a KeyError"
                    )
                    yield ctx.report(
                        "TT006",
                        at.arg_spans.get(field_name, at.span),
                        f"{field_name} of kernel {k.name!r} names {n!r}, which is not one of its arguments "
                        f"({', '.join(k.param_names)}): {consequence}",
                        k.name,
                        n,
                    )


