"""TT005: `configs=[]` in a module that never enables tiletune."""

from __future__ import annotations

from typing import Iterator

from ..diagnostic import Diagnostic
from ..rule import Invalid, LintContext, Rule
from ._kernel import fmt_names, param_by_name

__all__ = ["EmptyConfigsWithoutTiletune", "STOCK_AUTOTUNE_ARGS"]

#: Keywords of stock ``triton.autotune`` (Triton 3.6).
STOCK_AUTOTUNE_ARGS = frozenset(
    {"configs", "key", "prune_configs_by", "reset_to_zero", "restore_value", "pre_hook", "post_hook", "warmup", "rep",
     "use_cuda_graph", "do_bench", "cache_results"}
)


class EmptyConfigsWithoutTiletune(Rule):
    code = "TT005"
    name = "empty-configs-without-tiletune"
    summary = '`configs=[]` in a module that never enables tiletune'
    severity = "error"
    WHAT = """
        `@triton.autotune(configs=[], ...)` in a module that neither imports
        `tiletune.patch` nor uses `tiletune.autotune`. An autotune call with
        keywords stock Triton does not take (a vendor fork's
        `generate_configs=`) is not reported: that fork decides what an empty
        list means.
        """
    WHY = """
        `configs=[]` means "synthesise the configs" only once tiletune is enabled.
        Plain Triton replaces an empty list with one empty `Config({})`: nothing is
        tuned and the launch fails on the first tiling parameter nobody supplies.
        Add `import tiletune.patch` to the module (or use `@tiletune.autotune`).
        """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl


            @triton.autotune(configs=[], key=["n_elements"])
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
        import tiletune.patch  # noqa: F401  (makes configs=[] synthesise configs)
        import triton
        import triton.language as tl


        @triton.autotune(configs=[], key=["n_elements"])
        @triton.jit
        def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
            pid = tl.program_id(axis=0)
            offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            mask = offs < n_elements
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
        """,
    ]

    def needs_body(self, module, kernel) -> bool:
        """The tiling parameters, only for a kernel this rule reports."""
        return _reported(module, kernel)

    def check(self, ctx: LintContext) -> Iterator[Diagnostic]:
        for k in ctx.module.kernels:
            if not _reported(ctx.module, k):
                continue
            at = k.autotune
            span = at.arg_spans.get("configs", at.span)
            tiling = [p.name for p in k.params if p.tiling]
            missing = [n for n in tiling if param_by_name(k, n).default is None]
            consequence = (
                f"the launch fails on the missing {fmt_names(missing)}" if missing else "nothing is tuned"
            )
            yield ctx.report(
                "TT005",
                span,
                f"kernel {k.name!r} has configs=[] but this module never enables tiletune: plain Triton runs one empty "
                f"Config and {consequence}; add `import tiletune.patch` or use @tiletune.autotune",
                k.name,
                missing[0] if missing else None,
            )


def _reported(module, k) -> bool:
    """True for a kernel with stock Triton's ``autotune(configs=[])`` in a module that never enables tiletune."""
    at = k.autotune
    if module.enables_tiletune or at is None or not at.configs_empty or at.qualname.split(".")[0] == "tiletune":
        return False
    # a Triton fork's autotune (e.g. generate_configs=) is not stock Triton's behaviour
    return not ({n for n in at.other if not n.startswith("*")} - STOCK_AUTOTUNE_ARGS)
