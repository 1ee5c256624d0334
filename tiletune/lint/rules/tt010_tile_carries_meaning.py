"""TT010: `configs=[]` would tune a tile parameter that may carry meaning."""

from __future__ import annotations

from typing import Iterator

from ..diagnostic import Diagnostic
from ..rule import Invalid, LintContext, Rule
from ._kernel import param_by_name, tiletune_searches, tunability_of

__all__ = ["TileCarriesMeaning"]


class TileCarriesMeaning(Rule):
    code = "TT010"
    name = "tile-carries-meaning"
    summary = "`configs=[]` would tune a tile parameter that may carry meaning"
    severity = "warning"
    WHAT = """
        A kernel tuned by tiletune's `configs=[]` search has a tiling constexpr
        that the search would choose, and the body ties it to the data rather
        than to how the work is cut: a scalar that grows by the block is divided
        by another parameter and addresses memory (one scale per `BLOCK_K` step
        against a `group_size`), a pointer advances by one entry per block while
        the loop advances the others by the block, or a buffer is indexed by the
        block number itself (`tl.load(expert_ids + pid_m)` where
        `pid_m * BLOCK_M` starts the block). Not reported when a launch passes
        the parameter or `hints=` lists its values.
        """
    WHY = """
        A value other than the one the data was built for computes something
        else: a block-scaled matmul with `BLOCK_K` larger than the scale group, a
        routed GEMM at another `BLOCK_M` than the host padded for. tiletune's
        agreement check stops such a tune at run time (MeaningError); the lint
        says so before it runs.
        """
    FIX = None
    INVALID = [
        Invalid(
            """
            import tiletune
            import triton
            import triton.language as tl


            @tiletune.autotune(configs=[], key=["M", "N", "K"])
            @triton.jit
            def scaled_mm(a_ptr, b_ptr, c_ptr, s_ptr, M, N, K, group_k,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
                offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
                offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
                offs_k = tl.arange(0, BLOCK_K)
                acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
                for k in range(0, tl.cdiv(K, BLOCK_K)):
                    kk = k * BLOCK_K + offs_k
                    a = tl.load(a_ptr + offs_m[:, None] * K + kk[None, :], mask=kk[None, :] < K, other=0.0)
                    b = tl.load(b_ptr + kk[:, None] * N + offs_n[None, :], mask=kk[:, None] < K, other=0.0)
                    s = tl.load(s_ptr + offs_m * (K // group_k) + (k * BLOCK_K) // group_k)
                    acc += tl.dot(a, b) * s[:, None]
                tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc)
            """
        ),
    ]
    VALID = [
        """
        import tiletune
        import triton
        import triton.language as tl


        @tiletune.autotune(configs=[], key=["M", "N", "K"], hints={"BLOCK_K": [32, 64, 128]})
        @triton.jit
        def scaled_mm(a_ptr, b_ptr, c_ptr, s_ptr, M, N, K, group_k,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
            offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
            offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
            offs_k = tl.arange(0, BLOCK_K)
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for k in range(0, tl.cdiv(K, BLOCK_K)):
                kk = k * BLOCK_K + offs_k
                a = tl.load(a_ptr + offs_m[:, None] * K + kk[None, :], mask=kk[None, :] < K, other=0.0)
                b = tl.load(b_ptr + kk[:, None] * N + offs_n[None, :], mask=kk[:, None] < K, other=0.0)
                s = tl.load(s_ptr + offs_m * (K // group_k) + (k * BLOCK_K) // group_k)
                acc += tl.dot(a, b) * s[:, None]
            tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc)
        """,
        """
        import tiletune
        import triton
        import triton.language as tl


        @tiletune.autotune(configs=[], key=["n"])
        @triton.jit
        def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)
        """,
    ]

    def needs_body(self, module, kernel) -> bool:
        """The meaning and the verdict, only for a kernel tiletune's search tunes."""
        return tiletune_searches(module, kernel)

    def check(self, ctx: LintContext) -> Iterator[Diagnostic]:
        for k in ctx.module.kernels:
            meaning = getattr(k, "meaning", None)
            if not meaning or not tiletune_searches(ctx.module, k):
                continue
            verdict = tunability_of(k)
            hinted = set((k.autotune.hints or {}) if k.autotune is not None else {})
            for name, reasons in meaning.items():
                p = param_by_name(k, name)
                if p is None or not verdict.is_tuned(name) or name in hinted:
                    continue
                yield ctx.report(
                    "TT010",
                    p.span,
                    f"kernel {k.name!r}: configs=[] would tune {name}, which may carry meaning ({reasons[0]}); "
                    f"pass {name}=<the value your data is built for> at launch, or list its safe values in "
                    f"hints={{{name!r}: [...]}}",
                    k.name,
                    name,
                )
