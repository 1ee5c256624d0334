"""TT004: decorators in an order that breaks tuning."""

from __future__ import annotations

from typing import Iterator

from ..diagnostic import Diagnostic
from ..rule import Invalid, LintContext, Rule


__all__ = ["DecoratorOrder"]


class DecoratorOrder(Rule):
    code = "TT004"
    name = "decorator-order"
    summary = 'decorators in an order that breaks tuning'
    severity = "error"
    WHAT = """
        An `autotune` (or `heuristics`) decorator is applied before `@triton.jit`
        (written below it), or a decorator that is neither `heuristics` nor
        `autotune` sits between `autotune` and `jit` and is a plain function
        wrapper of this module (a `def` returning a function it defines) or of
        the standard library (`functools.lru_cache`, `functools.cache`). A
        decorator defined elsewhere or that is a class is not reported: it may be
        a `triton.KernelInterface` that provides what the autotuner needs. `@triton.autotune` over
        `@triton.heuristics` over `@triton.jit` is legal and not reported, and so
        is any decorator above `autotune`.
        """
    WHY = """
        `triton.autotune` and `triton.heuristics` wrap a kernel object: they read
        `fn.arg_names` and call `fn.run(...)` (triton/runtime/autotuner.py), which
        a `JITFunction`, a `Heuristics` and an `Autotuner` provide and a plain
        function or an arbitrary wrapper does not. Below `@triton.jit` they fail at
        import; above an unknown wrapper they fail at import or bypass the wrapper
        when tuning.
        """
    INVALID = [
        Invalid(
            """
            import functools

            import triton
            import triton.language as tl


            def traced(fn):
                @functools.wraps(fn)
                def wrapper(*args, **kwargs):
                    return fn(*args, **kwargs)
                return wrapper


            @triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 1024})], key=["n_elements"])
            @traced
            @triton.jit
            def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
                pid = tl.program_id(axis=0)
                offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
                mask = offs < n_elements
                tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
            """
        ),
        Invalid(
            """
            from functools import lru_cache

            import triton
            import triton.language as tl


            @triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 1024})], key=["n_elements"])
            @lru_cache(maxsize=None)
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
        import functools

        import triton
        import triton.language as tl


        def traced(fn):
            @functools.wraps(fn)
            def wrapper(*args, **kwargs):
                return fn(*args, **kwargs)
            return wrapper


        @traced
        @triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 1024})], key=["n_elements"])
        @triton.heuristics({"EVEN": lambda args: args["n_elements"] % args["BLOCK_SIZE"] == 0})
        @triton.jit
        def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, EVEN: tl.constexpr):
            pid = tl.program_id(axis=0)
            offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            mask = offs < n_elements
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
        """,
    ]

    def needs_body(self, module, kernel) -> bool:
        """Decorators only."""
        return False

    def check(self, ctx: LintContext) -> Iterator[Diagnostic]:
        for k in ctx.module.kernels:
            decs = k.decorators  # outermost first
            jit_at = [i for i, d in enumerate(decs) if d.kind == "jit"]
            if not jit_at:
                continue
            jit_i = jit_at[-1]  # the one nearest the def (a jit(fn) wrap is appended last)
            jit = decs[jit_i]
            # autotune / heuristics written below jit: they receive a plain function.
            for d in decs[jit_i + 1:]:
                if d.kind in ("autotune", "heuristics"):
                    yield ctx.report(
                        "TT004",
                        d.span,
                        f"@{d.qualname} of kernel {k.name!r} is applied before @{jit.qualname} (written below it): "
                        f"it needs a jitted kernel (fn.arg_names, fn.run); move it above @{jit.qualname}",
                        k.name,
                    )
            tune_at = [i for i, d in enumerate(decs) if d.kind == "autotune" and i < jit_i]
            if not tune_at:
                continue
            tune_i = tune_at[-1]
            tune = decs[tune_i]
            for d in decs[tune_i + 1 : jit_i]:
                if d.kind == "other" and (_plain_function_wrapper(ctx, d.qualname) or _stdlib_wrapper(ctx, d.qualname)):
                    yield ctx.report(
                        "TT004",
                        d.span,
                        f"@{d.qualname} sits between @{tune.qualname} and @{jit.qualname} of kernel {k.name!r}: "
                        f"the autotuner wraps it instead of the jitted kernel (it needs fn.arg_names and fn.run); "
                        f"move @{d.qualname} above @{tune.qualname}",
                        k.name,
                    )




#: Standard-library decorators that return a plain function wrapper (no ``arg_names``, no ``run``).
_STDLIB_WRAPPERS = frozenset({"functools.lru_cache", "functools.cache", "functools.wraps", "functools.singledispatch"})


def _stdlib_wrapper(ctx: LintContext, qualname: str) -> bool:
    """True when decorator ``qualname`` is a standard-library function wrapper
    (``functools.lru_cache``, ``functools.cache``...), however it was imported
    (``import functools as ft``, ``from functools import lru_cache as memo``)."""
    import ast

    head, _, rest = qualname.split("(")[0].partition(".")
    try:
        tree = ast.parse(ctx.source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    full = None
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if (alias.asname or alias.name.split(".")[0]) == head:
                    full = (alias.name if alias.asname else head) + (f".{rest}" if rest else "")
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            for alias in node.names:
                if (alias.asname or alias.name) == head:
                    full = f"{node.module}.{alias.name}" + (f".{rest}" if rest else "")
    return full in _STDLIB_WRAPPERS


def _plain_function_wrapper(ctx: LintContext, qualname: str) -> bool:
    """True when decorator ``qualname`` is a function of this module that returns
    a function it defines (``def traced(fn): def wrapper(...): ...; return
    wrapper``): such a wrapper has no ``arg_names`` or ``run``.  A decorator
    defined elsewhere, a class or a factory may well provide them (a
    ``triton.KernelInterface`` subclass such as FlagGems' ``libentry``), so
    it is not reported: the lint cannot see what it returns."""
    import ast

    name = qualname.split("(")[0]
    if "." in name:
        return False
    try:
        tree = ast.parse(ctx.source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            inner = {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
            returns = [n for n in ast.walk(node) if isinstance(n, ast.Return) and isinstance(n.value, ast.Name)]
            return bool(inner) and any(r.value.id in inner for r in returns)
    return False
