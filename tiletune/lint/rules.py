'''The lint rules TT001-TT009 (and TT000, "the file could not be analysed").

Every rule reads the module's analysis only (:class:`LintContext.module`);
none re-parses the source.  Messages name the kernel and the parameter.
Each rule's ``bad`` example triggers it and its ``good`` example does not
(tests/test_lint_rules.py runs both; docs/lint.md shows them).
'''

from __future__ import annotations

from typing import Any, Iterator, Optional

from .diagnostic import Diagnostic
from .registry import ANALYSIS_FAILED, RULES, LintContext, Rule, rule

__all__ = ["is_autotuned", "is_jitted"]

# TT000 is reported by the registry itself (lint_source) when analysis fails;
# registering it lets --select/--ignore and SARIF name it.
RULES.setdefault(
    ANALYSIS_FAILED,
    Rule(
        code=ANALYSIS_FAILED,
        name="analysis-failed",
        summary="the file could not be analysed (syntax error or unsupported construct)",
        severity="error",
        what="The analysis could not read this file, so no other rule ran on it.",
        why="A syntax error (or a construct the analysis does not follow) hides every other finding.",
        bad="""\
import triton

@triton.jit
def broken_kernel(x_ptr, BLOCK: tl.constexpr)
    pass
""",
        good="""\
import triton
import triton.language as tl


@triton.jit
def fixed_kernel(x_ptr, BLOCK: tl.constexpr):
    pass
""",
        check=None,
    ),
)


# ----- helpers -------------------------------------------------------------------


def is_autotuned(kernel: Any) -> bool:
    """True when the kernel has an ``autotune`` decorator (Triton's or tiletune's)."""
    return kernel.autotune is not None or any(d.kind == "autotune" for d in kernel.decorators)


def is_jitted(kernel: Any) -> bool:
    """True when the kernel is ``@triton.jit`` (or ``triton.jit(fn)``)."""
    return any(d.kind == "jit" for d in kernel.decorators)


def _fmt_names(names: list[str]) -> str:
    return ", ".join(repr(n) for n in names)


def _tiling_names(kernel: Any) -> list[str]:
    return [p.name for p in kernel.params if p.tiling]


def _tuned_names(kernel: Any) -> list[str]:
    """Tiling parameters the autotuner chooses (``@triton.heuristics`` computes the others)."""
    return [n for n in _tiling_names(kernel) if n not in kernel.heuristics]


def _config_keys(kernel: Any) -> set[str]:
    """Keys the hand-written configs set (empty when there are none or they are not literal)."""
    at = kernel.autotune
    keys: set[str] = set()
    if at is not None and at.configs:
        for c in at.configs:
            keys.update(c.kwargs)
            keys.update(c.unresolved)
    return keys


def _format_config(cfg: Any) -> str:
    parts = [", ".join(f"{k!r}: {v!r}" for k, v in cfg.kwargs.items())]
    text = "{" + parts[0] + "}"
    if cfg.num_warps is not None:
        text += f", num_warps={cfg.num_warps}"
    if cfg.num_stages is not None:
        text += f", num_stages={cfg.num_stages}"
    return f"triton.Config({text})"


def _is_pow2(value: int) -> bool:
    return value > 0 and (value & (value - 1)) == 0


def _param_by_name(kernel: Any, name: str) -> Optional[Any]:
    for p in kernel.params:
        if p.name == name:
            return p
    return None


# ----- TT001 -----------------------------------------------------------------------


@rule(
    "TT001",
    "tiling-default",
    "a tiling constexpr has a default value",
    severity="warning",
    fixable=True,
    what="""
        A `tl.constexpr` parameter that sizes a tile (a `BLOCK_*` the analysis
        found in `tl.arange`, a block shape or a loop step) has a default value,
        in a kernel that is autotuned or could be (jitted, and the parameter is
        not computed by `@triton.heuristics`).
        """,
    why="""
        A default is a hard-coded tiling: every launch that does not pass the
        parameter silently gets it, whatever the shapes and the chip, and
        tiletune's `configs=[]` search keeps a defaulted tiling parameter at its
        default ("has a default") instead of searching it. Leave tiling parameters
        without defaults so the autotuner (or an explicit launch keyword in an
        untuned kernel) always supplies them. The quick fix drops the default; it
        is offered when that keeps every known launch valid (the kernel is
        autotuned, or every launch in the module passes the parameter).
        """,
    bad="""
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
        """,
    good="""
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
)
def check_tiling_default(ctx: LintContext) -> Iterator[Diagnostic]:
    for k in ctx.module.kernels:
        tuned = is_autotuned(k)
        if not (tuned or is_jitted(k)):
            continue
        for p in k.params:
            if not (p.tiling and p.default is not None) or p.name in k.heuristics:
                continue
            if tuned:
                msg = (
                    f"tiling parameter {p.name!r} of autotuned kernel {k.name!r} has a default value ({p.default}): "
                    f"a hard-coded tiling the search leaves alone; remove the default and let the autotuner choose it"
                )
            else:
                msg = (
                    f"tiling parameter {p.name!r} of kernel {k.name!r} has a default value ({p.default}): "
                    f"a hard-coded tiling that is never tuned; remove the default and autotune it "
                    f"(or pass it at every launch)"
                )
            fix = None
            if _can_drop_default(k, p):
                fix = f"Remove the default value of {p.name}"
            yield ctx.report("TT001", p.span, msg, k.name, p.name, fix=fix, fix_data={"kernel": k.name, "param": p.name})


def _can_drop_default(kernel: Any, param: Any) -> bool:
    # Dropping the default must keep the signature valid (no defaulted
    # parameter before it) and keep every known launch supplied.
    earlier = [q for q in kernel.params if q.index < param.index]
    if any(q.default is not None for q in earlier):
        return False
    if is_autotuned(kernel):
        return True
    for launch in kernel.launches:
        if param.name in launch.fixed:
            continue
        if launch.positional_count > param.index:
            continue
        return False
    return True


# ----- TT002 -----------------------------------------------------------------------


@rule(
    "TT002",
    "tiling-fixed-at-launch",
    "a tuned parameter is fixed at a launch site",
    severity="error",
    fixable=True,
    what="""
        A launch `kernel[grid](..., BLOCK_SIZE=...)` passes, as a keyword, a tiling
        parameter of an autotuned kernel (`configs=[]` included), or a parameter
        the kernel's hand-written configs set.
        """,
    why="""
        The autotuner supplies those values from each config. Triton refuses a
        launch that passes one too ("Conflicting meta-parameters: ... Make sure
        that you don't re-define auto-tuned symbols"); tiletune's `configs=[]`
        search keeps a parameter passed at launch at that value ("passed at
        launch"), so it is never tuned. The quick fix drops the keyword.
        """,
    bad="""
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


        def add(x, y, out):
            n = out.numel()
            grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)
            add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024)
        """,
    good="""
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


        def add(x, y, out):
            n = out.numel()
            grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)
            add_kernel[grid](x, y, out, n)
        """,
)
def check_fixed_at_launch(ctx: LintContext) -> Iterator[Diagnostic]:
    for k in ctx.module.kernels:
        if not is_autotuned(k):
            continue
        tiling = set(_tuned_names(k))
        configured = _config_keys(k) - set(k.heuristics)
        for launch in k.launches:
            for kw in launch.fixed:
                if kw not in tiling and kw not in configured:
                    continue
                why = "a tiling parameter" if kw in tiling else "a parameter its configs set"
                msg = (
                    f"launch of autotuned kernel {k.name!r} fixes {kw}={launch.fixed[kw]} ({why}): "
                    f"the autotuner should supply {kw!r} (Triton rejects the conflict, tiletune leaves it untuned); "
                    f"drop the keyword"
                )
                span = launch.keyword_spans.get(kw, launch.span)
                yield ctx.report(
                    "TT002",
                    span,
                    msg,
                    k.name,
                    kw,
                    fix=f"Remove {kw}= from this launch",
                    fix_data={"kernel": k.name, "param": kw, "line": span.line, "column": span.column},
                )


# ----- TT003 -----------------------------------------------------------------------


@rule(
    "TT003",
    "grid-ignores-meta",
    "the grid is sized by a tiling parameter but does not read `meta`",
    severity="error",
    fixable=True,
    what="""
        The grid of a launch of an autotuned kernel mentions a tiling parameter's
        name as a variable of the caller (`(triton.cdiv(n, BLOCK_SIZE),)`), instead
        of reading the tuned value from the grid lambda's argument
        (`lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)`).
        """,
    why="""
        The autotuner picks `BLOCK_SIZE` per config and calls the grid with the
        chosen values; a grid computed from a local variable launches the number of
        programs of *that* value, so every other config covers too little (wrong
        results) or too much (wasted programs) of the tensor. The quick fix turns
        the grid into a lambda over `meta` (rewriting the assignment when the grid
        is a variable).
        """,
    bad="""
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


        def add(x, y, out):
            n = out.numel()
            BLOCK_SIZE = 1024
            add_kernel[(triton.cdiv(n, BLOCK_SIZE),)](x, y, out, n)
        """,
    good="""
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


        def add(x, y, out):
            n = out.numel()
            add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, n)
        """,
)
def check_grid_ignores_meta(ctx: LintContext) -> Iterator[Diagnostic]:
    for k in ctx.module.kernels:
        if not is_autotuned(k):
            continue
        tiling = _tuned_names(k)
        for launch in k.launches:
            used = [n for n in tiling if n in launch.grid_names and n not in launch.meta_keys]
            if not used:
                continue
            if launch.grid_kind == "lambda" and launch.reads_meta:
                how = "its grid lambda reads the caller's variable"
            elif launch.grid_kind == "lambda":
                how = "its grid lambda ignores its meta argument and reads the caller's variable"
            else:
                how = f"its grid ({launch.grid_source}) is not a lambda over meta and reads the caller's variable"
            plural = "s" if len(used) > 1 else ""
            msg = (
                f"launch of autotuned kernel {k.name!r}: {how}{plural} {_fmt_names(used)}, so the grid does not follow "
                f"the tuned value{plural}; write the grid as a lambda reading "
                + ", ".join(f'meta["{n}"]' for n in used)
            )
            yield ctx.report(
                "TT003",
                launch.grid_span,
                msg,
                k.name,
                used[0],
                fix="Rewrite the grid as a lambda over meta",
                fix_data={
                    "kernel": k.name,
                    "names": used,
                    "line": launch.span.line,
                    "column": launch.span.column,
                    "grid_line": launch.grid_span.line,
                    "grid_column": launch.grid_span.column,
                },
            )


# ----- TT004 -----------------------------------------------------------------------


@rule(
    "TT004",
    "decorator-order",
    "decorators in an order that breaks tuning",
    severity="error",
    what="""
        An `autotune` (or `heuristics`) decorator is applied before `@triton.jit`
        (written below it), or a decorator that is neither `heuristics` nor
        `autotune` sits between `autotune` and `jit`. `@triton.autotune` over
        `@triton.heuristics` over `@triton.jit` is legal and not reported, and so
        is any decorator above `autotune`.
        """,
    why="""
        `triton.autotune` and `triton.heuristics` wrap a kernel object: they read
        `fn.arg_names` and call `fn.run(...)` (triton/runtime/autotuner.py), which
        a `JITFunction`, a `Heuristics` and an `Autotuner` provide and a plain
        function or an arbitrary wrapper does not. Below `@triton.jit` they fail at
        import; above an unknown wrapper they fail at import or bypass the wrapper
        when tuning.
        """,
    bad="""
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
        """,
    good="""
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
)
def check_decorator_order(ctx: LintContext) -> Iterator[Diagnostic]:
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
            if d.kind == "other":
                yield ctx.report(
                    "TT004",
                    d.span,
                    f"@{d.qualname} sits between @{tune.qualname} and @{jit.qualname} of kernel {k.name!r}: "
                    f"the autotuner wraps it instead of the jitted kernel (it needs fn.arg_names and fn.run); "
                    f"move @{d.qualname} above @{tune.qualname}",
                    k.name,
                )


# ----- TT005 -----------------------------------------------------------------------


@rule(
    "TT005",
    "empty-configs-without-tiletune",
    "`configs=[]` in a module that never enables tiletune",
    severity="error",
    what="""
        `@triton.autotune(configs=[], ...)` in a module that neither imports
        `tiletune.patch` nor uses `tiletune.autotune`.
        """,
    why="""
        `configs=[]` means "synthesise the configs" only once tiletune is enabled.
        Plain Triton replaces an empty list with one empty `Config({})`: nothing is
        tuned and the launch fails on the first tiling parameter nobody supplies.
        Add `import tiletune.patch` to the module (or use `@tiletune.autotune`).
        """,
    bad="""
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
    good="""
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
)
def check_empty_configs(ctx: LintContext) -> Iterator[Diagnostic]:
    if ctx.module.enables_tiletune:
        return
    for k in ctx.module.kernels:
        at = k.autotune
        if at is None or not at.configs_empty or at.qualname.split(".")[0] == "tiletune":
            continue
        span = at.arg_spans.get("configs", at.span)
        tiling = _tiling_names(k)
        missing = [n for n in tiling if _param_by_name(k, n).default is None]
        consequence = (
            f"the launch fails on the missing {_fmt_names(missing)}" if missing else "nothing is tuned"
        )
        yield ctx.report(
            "TT005",
            span,
            f"kernel {k.name!r} has configs=[] but this module never enables tiletune: plain Triton runs one empty "
            f"Config and {consequence}; add `import tiletune.patch` or use @tiletune.autotune",
            k.name,
            missing[0] if missing else None,
        )


# ----- TT006 -----------------------------------------------------------------------


@rule(
    "TT006",
    "autotune-unknown-argument",
    "`key`, `restore_value` or `reset_to_zero` names something that is not a kernel argument",
    severity="error",
    what="""
        A name in the autotune decorator's `key`, `restore_value` or
        `reset_to_zero` list is not a parameter of the kernel.
        """,
    why="""
        Triton builds the tuning key from the arguments named in `key` and silently
        skips unknown names, so a typo makes one cached config serve every shape.
        `restore_value` / `reset_to_zero` look the name up among the call's
        arguments and fail (KeyError) the first time the kernel is tuned.
        """,
    bad="""
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
        """,
    good="""
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
)
def check_unknown_names(ctx: LintContext) -> Iterator[Diagnostic]:
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


# ----- TT007 -----------------------------------------------------------------------


@rule(
    "TT007",
    "side-effects-without-restore",
    "an autotuned kernel writes into its inputs or uses atomics without `restore_value`/`reset_to_zero`",
    severity="error",
    what="""
        An autotuned kernel stores through a pointer it also loads from (updates
        a tensor in place), or updates one with `tl.atomic_*`, and that pointer is
        named neither in `restore_value` nor in `reset_to_zero` (and no `pre_hook`
        takes care of it).
        """,
    why="""
        Tuning runs the kernel many times on the same arguments, once per config
        and several times per config. An in-place update then reads what the
        previous run wrote, and an atomic accumulation adds up every run: the
        result the caller receives is wrong. `restore_value=[...]` saves and
        restores the tensor around each run; `reset_to_zero=[...]` zeroes it first.
        A kernel with a single literal config is not benchmarked and is not
        reported.
        """,
    bad="""
        import triton
        import triton.language as tl


        @triton.autotune(
            configs=[triton.Config({"BLOCK_SIZE": 512}), triton.Config({"BLOCK_SIZE": 1024})],
            key=["n_elements"],
        )
        @triton.jit
        def scale_kernel(x_ptr, n_elements, alpha, BLOCK_SIZE: tl.constexpr):
            pid = tl.program_id(axis=0)
            offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            mask = offs < n_elements
            x = tl.load(x_ptr + offs, mask=mask)
            tl.store(x_ptr + offs, x * alpha, mask=mask)
        """,
    good="""
        import triton
        import triton.language as tl


        @triton.autotune(
            configs=[triton.Config({"BLOCK_SIZE": 512}), triton.Config({"BLOCK_SIZE": 1024})],
            key=["n_elements"],
            restore_value=["x_ptr"],
        )
        @triton.jit
        def scale_kernel(x_ptr, n_elements, alpha, BLOCK_SIZE: tl.constexpr):
            pid = tl.program_id(axis=0)
            offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            mask = offs < n_elements
            x = tl.load(x_ptr + offs, mask=mask)
            tl.store(x_ptr + offs, x * alpha, mask=mask)
        """,
)
def check_side_effects(ctx: LintContext) -> Iterator[Diagnostic]:
    for k in ctx.module.kernels:
        at = k.autotune
        if at is None:
            continue
        if at.configs is not None and not at.configs_empty and len(at.configs) == 1:
            continue  # one config: Triton does not benchmark
        if "pre_hook" in at.other:
            continue  # a user pre_hook replaces restore/reset handling
        covered = set(at.restore_value or []) | set(at.reset_to_zero or [])
        loaded = set(k.loaded_pointers)
        reported: set[str] = set()
        for ptr in k.stored_pointers:
            if ptr in loaded and ptr not in covered and ptr not in reported:
                reported.add(ptr)
                yield ctx.report(
                    "TT007",
                    at.span,
                    f"autotuned kernel {k.name!r} loads from and stores into {ptr!r}: every benchmarked run reads "
                    f"what the previous one wrote; add restore_value=[{ptr!r}]",
                    k.name,
                    ptr,
                )
        for ptr in k.atomic_pointers:
            if ptr not in covered and ptr not in reported:
                reported.add(ptr)
                yield ctx.report(
                    "TT007",
                    at.span,
                    f"autotuned kernel {k.name!r} updates {ptr!r} with atomics: every benchmarked run adds to the "
                    f"result; add reset_to_zero=[{ptr!r}] (or restore_value=[{ptr!r}])",
                    k.name,
                    ptr,
                )


# ----- TT008 -----------------------------------------------------------------------


@rule(
    "TT008",
    "config-not-power-of-two",
    "a hand-written config gives a `tl.arange` extent a value that is not a power of two",
    severity="error",
    what="""
        A literal `triton.Config({...})` sets a parameter that reaches a
        `tl.arange` extent (directly or through a block shape) to a value that is
        not a power of two.
        """,
    why="""
        Triton requires `tl.arange(0, N)` ranges to be powers of two and fails to
        compile the kernel for that config ("arange's range must be a power of
        2"); the autotuner then drops or crashes on the config.
        """,
    bad="""
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
        """,
    good="""
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
)
def check_power_of_two(ctx: LintContext) -> Iterator[Diagnostic]:
    for k in ctx.module.kernels:
        at = k.autotune
        if at is None or not at.configs:
            continue
        for cfg in at.configs:
            for name, value in cfg.kwargs.items():
                p = _param_by_name(k, name)
                if p is None or not p.power_of_two:
                    continue
                if isinstance(value, bool) or not isinstance(value, int) or _is_pow2(value):
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


# ----- TT009 -----------------------------------------------------------------------


@rule(
    "TT009",
    "config-does-not-fit",
    "a hand-written config cannot fit the target chip",
    severity="error",
    what="""
        A literal `triton.Config({...}, num_warps=..., num_stages=...)` needs more
        on-chip memory (shared memory, registers, Unified Buffer...) or threads
        than the target (`--target`, default `h100`) has. The bytes it needs are
        computed from the kernel's footprint with the config's values, fp16
        elements for pointers that feed `tl.dot` and fp32 for the others.
        """,
    why="""
        Such a config fails to compile or launch ("out of resource: shared
        memory"); Triton's autotuner prunes it at run time, after compiling it,
        and if every config is like that the kernel cannot run at all.
        """,
    bad="""
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
        """,
    good="""
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
)
def check_config_fits(ctx: LintContext) -> Iterator[Diagnostic]:
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
