"""TT002: a launch passes a name the autotuner supplies."""

from __future__ import annotations

import ast
import os
from typing import Any, Iterator, Optional

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ..diagnostic import Diagnostic
from ..rule import Invalid, LintContext, Rule
from ._kernel import autotuner_supplies, literal_configs, param_by_name, shape_like, tiletune_searches
from ._cst import launch_kernel_name, remove_arg, start_of

__all__ = ["FixedAtLaunch"]

_NOT_LITERAL = object()


class FixedAtLaunch(Rule):
    code = "TT002"
    name = "tiling-fixed-at-launch"
    summary = "a launch passes a name the autotuner supplies"
    severity = "error"
    WHAT = """
        A launch `kernel[grid](..., NAME=value)` of an autotuned kernel passes, as
        a keyword or positionally (bound by signature order, as Triton binds a
        call), in this module or in another module of the package (also from a
        function that imports the kernel in its body), a name the
        autotuner supplies: one the kernel's literal
        `triton.Config` list sets, or, under tiletune's `configs=[]` search, a
        tiling constexpr the search would choose (not in the autotune `key`, not
        set by `@triton.heuristics`, none when a heuristics mapping cannot be
        read, no default, and not a whole-extent block
        never masked against a runtime size, which is a shape). A name the configs never set
        (a head dimension, a chunk size in the `key`) is the caller's to pass and
        is not reported, nor is `NAME=meta["NAME"]` (it forwards the tuned value).
        Kernels whose configs are not a literal list are not checked: what they
        set is unknown.
        """
    WHY = """
        With hand-written configs, Triton raises at this launch ("Conflicting
        meta-parameters: NAME. Make sure that you don't re-define auto-tuned
        symbols."). Under `configs=[]`, tiletune keeps a tiling parameter passed
        at launch at that value ("passed at launch"), so it is never tuned.
        """
    FIX = """
        drop the keyword, offered only for a keyword in this module whose value is a literal equal to the
        value every config sets (the kernel then runs with exactly the values it
        would have had). Otherwise the finding has no fix: whether the launch's
        value or the search should win is the author's call.
        """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl


            @triton.autotune(
                configs=[triton.Config({"BLOCK_SIZE": 512}, num_warps=4), triton.Config({"BLOCK_SIZE": 512}, num_warps=8)],
                key=["n_elements"],
            )
            @triton.jit
            def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
                pid = tl.program_id(axis=0)
                offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
                mask = offs < n_elements
                tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


            def add(x, y, out):
                n = out.numel()
                add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, n, BLOCK_SIZE=512)
            """,
            fixed="""
            import triton
            import triton.language as tl


            @triton.autotune(
                configs=[triton.Config({"BLOCK_SIZE": 512}, num_warps=4), triton.Config({"BLOCK_SIZE": 512}, num_warps=8)],
                key=["n_elements"],
            )
            @triton.jit
            def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
                pid = tl.program_id(axis=0)
                offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
                mask = offs < n_elements
                tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


            def add(x, y, out):
                n = out.numel()
                add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, n)
            """,
        ),
        Invalid(
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
                tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


            def add(x, y, out, block):
                n = out.numel()
                add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, n, BLOCK_SIZE=block)
            """
        ),
        Invalid(
            """
            import triton
            import triton.language as tl


            @triton.autotune(
                configs=[triton.Config({"BLOCK_SIZE": 512}, num_warps=4), triton.Config({"BLOCK_SIZE": 1024}, num_warps=8)],
                key=["n_elements"],
            )
            @triton.jit
            def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
                pid = tl.program_id(axis=0)
                offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
                mask = offs < n_elements
                tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


            def add(x, y, out):
                n = out.numel()
                add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, n, 512)
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
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


        def add(x, y, out):
            n = out.numel()
            add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, n)
        """,
        # the configs never set HEAD_DIM, and it is in the key: the caller passes it
        """
        import triton
        import triton.language as tl


        @triton.autotune(
            configs=[triton.Config({"BLOCK_M": 32}), triton.Config({"BLOCK_M": 64})],
            key=["n_rows", "HEAD_DIM"],
        )
        @triton.jit
        def scale_rows_kernel(x_ptr, out_ptr, n_rows, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr):
            rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
            cols = tl.arange(0, HEAD_DIM)
            offs = rows[:, None] * HEAD_DIM + cols[None, :]
            mask = rows[:, None] < n_rows
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


        def scale_rows(x, out):
            n_rows, d = x.shape
            scale_rows_kernel[lambda meta: (triton.cdiv(n_rows, meta["BLOCK_M"]),)](x, out, n_rows, HEAD_DIM=d)
        """,
    ]

    def needs_body(self, module, kernel) -> bool:
        """The body only under tiletune's search (its tunability verdict, the shape-like blocks); literal
        configs name what they set."""
        return tiletune_searches(module, kernel)

    def check(self, ctx: LintContext) -> Iterator[Diagnostic]:
        from tiletune.analysis.tunability import is_meta_lookup

        for k in ctx.module.kernels:
            supplied = autotuner_supplies(ctx.module, k)
            if not supplied:
                continue
            configs = literal_configs(k)
            for launch in ctx.all_launches(k):
                elsewhere = bool(launch.file) and os.path.abspath(launch.file) != os.path.abspath(ctx.path)
                positional = launch.bound_positionally(k.params)
                for kw, text in {**positional, **launch.fixed}.items():
                    if kw not in supplied or is_meta_lookup(kw, text):
                        continue
                    if configs is None and _is_shape(k, kw):
                        continue  # configs=[]: a whole-extent, unmasked block is a shape the caller passes
                    by_position = kw not in launch.fixed
                    passed = f"{text} as {kw} (positionally)" if by_position else f"{kw}={text}"
                    where = f" in {os.path.basename(launch.file)}:{launch.span.line}" if elsewhere else ""
                    drop = "drop the argument" if by_position else "drop the keyword"
                    # a launch in another module is reported at the kernel, which is what this file holds
                    span = k.span if elsewhere else launch.keyword_spans.get(kw, launch.span)
                    if configs is not None:
                        msg = (
                            f"launch{where} of autotuned kernel {k.name!r} passes {passed}, which its configs also "
                            f'set: Triton raises "Conflicting meta-parameters: {kw}" there; {drop}, or remove '
                            f"{kw!r} from the configs if the launch must choose it"
                        )
                    else:
                        msg = (
                            f"launch{where} of kernel {k.name!r} passes {passed}, a tiling parameter its configs=[] "
                            f"search would choose: tiletune keeps it at this value and never tunes it; {drop} to "
                            f"let it be tuned (keep it if {kw!r} must be this value)"
                        )
                    fixable = not elsewhere and not by_position and _same_in_every_config(configs, kw, text)
                    fix = f"Remove {kw}= from this launch" if fixable else None
                    yield ctx.report(
                        "TT002",
                        span,
                        msg,
                        k.name,
                        kw,
                        fix=fix,
                        fix_data={"kernel": k.name, "param": kw, "line": span.line, "column": span.column},
                    )

    def fix(self, wrapper: MetadataWrapper, d: Diagnostic) -> cst.Module:
        from ..rule import FixError

        param = d.fix_data.get("param", d.param)
        line = d.fix_data.get("line", d.line)
        column = d.fix_data.get("column", d.column)
        t = _DropKeyword(param, line, column)
        new = wrapper.visit(t)
        if not t.done:
            raise FixError(f"launch keyword {param}= of kernel {d.kernel!r} not found at line {line}")
        return new


def _is_shape(k: Any, name: str) -> bool:
    p = param_by_name(k, name)
    return p is not None and shape_like(p)


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _NOT_LITERAL


def _same_in_every_config(configs: Optional[list[Any]], name: str, text: str) -> bool:
    """True when the launch's ``name=text`` is a literal that every config sets to the same value."""
    if not configs:
        return False
    value = _literal(text)
    if value is _NOT_LITERAL:
        return False
    for c in configs:
        if name not in c.kwargs:
            return False
        cv = c.kwargs[name]
        if type(cv) is not type(value) or cv != value:
            return False
    return True


class _DropKeyword(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, param: str, line: int, column: int):
        super().__init__()
        self.param, self.where = param, (line, column)
        self.done = False

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if self.done or launch_kernel_name(original) is None:
            return updated
        for i, arg in enumerate(original.args):
            if arg.keyword is None or arg.keyword.value != self.param:
                continue
            if start_of(self.metadata[PositionProvider], arg) != self.where:
                continue
            self.done = True
            return remove_arg(updated, i)
        return updated
