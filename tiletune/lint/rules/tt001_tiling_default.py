"""TT001: a tiling constexpr's default value is what the kernel actually runs with."""

from __future__ import annotations

import os
from typing import Iterator, Optional

from ..diagnostic import Diagnostic
from ..rule import Invalid, LintContext, Rule
from ._kernel import autotuner_supplies, is_autotuned, is_jitted, passes, shape_like, tiletune_searches

__all__ = ["TilingDefault"]


class TilingDefault(Rule):
    code = "TT001"
    name = "tiling-default"
    summary = "a tiling constexpr runs with its default value"
    severity = "warning"
    WHAT = """
        A `tl.constexpr` parameter that sizes a tile (a `BLOCK_*` the analysis
        found in `tl.arange`, a block shape or a loop step) has a default value,
        and the default is what the kernel runs with: no config sets it, it is
        not computed by `@triton.heuristics`, it is not in the autotune `key`
        (a per-call input such as a head dimension), and some launch the analysis
        sees does not pass it (for an autotuned kernel: or it sees no launch).
        The launches are those of the kernel's module, or, when it has none
        there, those in the other modules of its package.
        A default that every config or every launch overrides is dead code and
        is not reported, nor is a kernel under a decorator whose definition
        (followed across the package's modules) calls `autotune`: its configs
        may come from a data file and set anything; nor is a jitted kernel no launch of which is seen (its
        callers are elsewhere), nor a whole-extent block never masked against a
        runtime size (it must equal the tensor's dimension: a shape, not a tile).
        """
    WHY = """
        A default is a hard-coded tiling: every launch that does not pass the
        parameter gets it, whatever the shapes and the chip. Triton's autotuner
        only varies what its configs set, and tiletune's `configs=[]` search
        keeps a defaulted tiling parameter at its default ("has a default").
        """
    FIX = """
        none: removing the default changes what the kernel runs with (the search
        picks another tile, which can change results when the parameter also
        carries meaning, e.g. a quantisation group; a launch that relied on it
        fails), so the author decides.
        """
    INVALID = [
        Invalid(
            """
            import tiletune
            import triton
            import triton.language as tl


            @tiletune.autotune(configs=[], key=["n_elements"])
            @triton.jit
            def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr = 1024):
                pid = tl.program_id(axis=0)
                offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
                mask = offs < n_elements
                x = tl.load(x_ptr + offs, mask=mask)
                y = tl.load(y_ptr + offs, mask=mask)
                tl.store(out_ptr + offs, x + y, mask=mask)
            """
        ),
        Invalid(
            """
            import triton
            import triton.language as tl


            @triton.jit
            def row_sum_kernel(x_ptr, out_ptr, n_cols, BLOCK_N: tl.constexpr = 1024):
                row = tl.program_id(0)
                offs = tl.arange(0, BLOCK_N)
                x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0)
                tl.store(out_ptr + row, tl.sum(x, axis=0))


            def row_sum(x, out):
                row_sum_kernel[(x.shape[0],)](x, out, x.shape[1])
            """
        ),
    ]
    VALID = [
        """
        import tiletune
        import triton
        import triton.language as tl


        @tiletune.autotune(configs=[], key=["n_elements"])
        @triton.jit
        def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
            pid = tl.program_id(axis=0)
            offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            mask = offs < n_elements
            x = tl.load(x_ptr + offs, mask=mask)
            y = tl.load(y_ptr + offs, mask=mask)
            tl.store(out_ptr + offs, x + y, mask=mask)
        """,
        # every launch passes it: the default is never used
        """
        import triton
        import triton.language as tl


        @triton.jit
        def row_sum_kernel(x_ptr, out_ptr, n_cols, BLOCK_N: tl.constexpr = 1024):
            row = tl.program_id(0)
            offs = tl.arange(0, BLOCK_N)
            x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0)
            tl.store(out_ptr + row, tl.sum(x, axis=0))


        def row_sum(x, out):
            row_sum_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK_N=triton.next_power_of_2(x.shape[1]))
        """,
        # every config sets it
        """
        import triton
        import triton.language as tl


        @triton.autotune(configs=[triton.Config({"BLOCK_N": 512}), triton.Config({"BLOCK_N": 1024})], key=["n_cols"])
        @triton.jit
        def row_sum_kernel(x_ptr, out_ptr, n_cols, BLOCK_N: tl.constexpr = 1024):
            row = tl.program_id(0)
            offs = tl.arange(0, BLOCK_N)
            x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0)
            tl.store(out_ptr + row, tl.sum(x, axis=0))
        """,
        # no launch of this jitted kernel is seen: its callers may pass BLOCK_N
        """
        import triton
        import triton.language as tl


        @triton.jit
        def row_sum_kernel(x_ptr, out_ptr, n_cols, BLOCK_N: tl.constexpr = 1024):
            row = tl.program_id(0)
            offs = tl.arange(0, BLOCK_N)
            x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0)
            tl.store(out_ptr + row, tl.sum(x, axis=0))
        """,
        # HEAD_DIM covers a whole row and is never masked: a shape, not a tile
        """
        import triton
        import triton.language as tl


        @triton.jit
        def scale_rows_kernel(x_ptr, out_ptr, stride, HEAD_DIM: tl.constexpr = 64):
            row = tl.program_id(0)
            offs = tl.arange(0, HEAD_DIM)
            x = tl.load(x_ptr + row * stride + offs)
            tl.store(out_ptr + row * stride + offs, x * 2)


        def scale_rows(x, out):
            scale_rows_kernel[(x.shape[0],)](x, out, x.stride(0))
        """,
        # in the key: a per-call input
        """
        import triton
        import triton.language as tl


        @triton.autotune(configs=[triton.Config({}, num_warps=4), triton.Config({}, num_warps=8)], key=["HEAD_DIM"])
        @triton.jit
        def scale_kernel(x_ptr, out_ptr, HEAD_DIM: tl.constexpr = 64):
            row = tl.program_id(0)
            offs = tl.arange(0, HEAD_DIM)
            x = tl.load(x_ptr + row * HEAD_DIM + offs)
            tl.store(out_ptr + row * HEAD_DIM + offs, x * 2)
        """,
        # an autotuner in disguise: the decorator calls triton.autotune with configs read from a file
        """
        import json

        import triton
        import triton.language as tl


        def tuned_from_table(key):
            with open("configs.json") as f:
                configs = [triton.Config(c) for c in json.load(f)]
            return triton.autotune(configs=configs, key=key)


        @tuned_from_table(["n_elements"])
        @triton.jit
        def scale_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr = 1024):
            offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            mask = offs < n_elements
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


        def scale(x, out):
            n = out.numel()
            scale_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, out, n)
        """,
    ]

    def needs_body(self, module, kernel) -> bool:
        """Which parameters tile (and their roles) come from the body: asked only for a jitted or
        autotuned kernel with a defaulted constexpr that no heuristic computes."""
        return bool(_candidates(kernel))

    def check(self, ctx: LintContext) -> Iterator[Diagnostic]:
        for k in ctx.module.kernels:
            tuned = is_autotuned(k)
            if not _candidates(k):
                continue  # no parameter that could be a defaulted tiling constexpr
            supplied = autotuner_supplies(ctx.module, k)
            if supplied is None:
                continue  # configs we cannot read may set it
            if _disguised_autotuner(ctx, k):
                continue  # a decorator that calls autotune: its configs (a data file, a table) may set anything
            key = set(k.autotune.key or ()) if k.autotune is not None else set()
            launches: Optional[list] = None
            for p in k.params:
                if not (p.tiling and p.default is not None) or p.name in k.heuristics:
                    continue
                if p.name in supplied or p.name in key or shape_like(p):
                    continue
                if not tuned and not k.launches and not ctx.all_launches(k):
                    continue  # a kernel for callers the analysis does not see: its default may be theirs
                if k.launches:
                    if all(passes(l, p) for l in k.launches):
                        continue  # every launch in the kernel's own module passes it
                else:
                    # Launched only from other modules of the package: read those
                    # launches (costly; once per kernel, only now).
                    if launches is None:
                        launches = ctx.all_launches(k)
                    if launches and all(passes(l, p) for l in launches):
                        continue
                launched = bool(k.launches) or bool(launches)
                yield ctx.report("TT001", p.span, self._message(ctx, k, p, tuned, launched), k.name, p.name)

    @staticmethod
    def _message(ctx: LintContext, k, p, tuned: bool, launched: bool) -> str:
        who = "a launch the analysis sees does not pass it" if launched else "no launch the analysis sees passes it"
        if tuned and tiletune_searches(ctx.module, k):
            then = "tiletune's configs=[] search keeps it at that value"
        elif tuned:
            then = "no config of the autotuner sets it"
        else:
            then = "the kernel is not autotuned"
        return (
            f"tiling parameter {p.name!r} of kernel {k.name!r} runs with its default value ({p.default}): "
            f"{then} and {who}, so this tile size is hard-coded; remove the default and let the "
            f"autotuner (or every launch) choose it"
        )



def _candidates(k) -> list:
    """The parameters of a jitted or autotuned kernel that may be a tiling constexpr running with
    its default: constexprs with a default that no heuristic computes (which of them tile, the body
    says)."""
    if not (is_autotuned(k) or is_jitted(k)):
        return []
    return [p for p in k.params if p.constexpr and p.default is not None and p.name not in k.heuristics]


def _disguised_autotuner(ctx: LintContext, k) -> bool:
    """True when a decorator of ``k`` that is not Triton's or tiletune's calls ``autotune``."""
    from tiletune.analysis.autotuners import wraps_autotune

    path = ctx.path if ctx.path != "<source>" and os.path.isfile(ctx.path) else None
    return any(d.kind == "other" and wraps_autotune(ctx.source, path, d.qualname) for d in k.decorators)
