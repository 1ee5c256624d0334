"""TT007: benchmarking would repeat a side effect the caller sees."""

from __future__ import annotations

from typing import Any, Iterator, Optional

from ..diagnostic import Diagnostic
from ..rule import Invalid, LintContext, Rule
from ._kernel import IDEMPOTENT_ATOMICS, atomic_ops, literal_configs, tiletune_searches

__all__ = ["SideEffectsWithoutRestore"]


class SideEffectsWithoutRestore(Rule):
    code = "TT007"
    name = "side-effects-without-restore"
    summary = "an autotuned kernel's in-place update or accumulating atomic is not restored between benchmark runs"
    severity = "error"
    WHAT = """
        An autotuned kernel that is benchmarked (a literal list of more than one
        config) stores through a pointer it first loads from (an in-place update;
        a buffer the kernel writes before it reads it is scratch and is not
        reported), or updates one with an atomic whose repetition
        changes the result (`tl.atomic_add`, `atomic_xchg`, `atomic_cas`, ...),
        and that pointer is named neither in `restore_value` nor in
        `reset_to_zero`, and no `pre_hook` (the autotuner's or a config's) takes
        care of it. Idempotent atomics (`atomic_max`, `atomic_min`, `atomic_and`,
        `atomic_or`: repeating them leaves the same value) are not reported.
        Kernels tuned by tiletune's `configs=[]` search are not reported either:
        tiletune snapshots and restores those tensors around benchmarking by
        default; only `side_effects="error"` (tiletune then refuses to tune) is.
        Configs built by code (`configs=get_configs()`) are not checked: they may
        carry per-config `pre_hook`s (a common way to zero split-K outputs) that
        the source does not show.
        """
    WHY = """
        Tuning runs the kernel many times on the same arguments, once per config
        and several times per config. An in-place update then reads what the
        previous run wrote, and an atomic accumulation adds up every run: the
        result the caller receives is wrong. `restore_value=[...]` saves and
        restores the tensor around each run; `reset_to_zero=[...]` zeroes it
        first (right for accumulators the caller zeroed). A kernel with a single
        literal config is not benchmarked and is not reported.
        """
    INVALID = [
        Invalid(
            """
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
            """
        ),
        Invalid(
            """
            import triton
            import triton.language as tl


            @triton.autotune(
                configs=[triton.Config({"BLOCK_SIZE": 512}), triton.Config({"BLOCK_SIZE": 1024})],
                key=["n_elements"],
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
        # atomic_max into an amax buffer: repeating it changes nothing
        """
        import triton
        import triton.language as tl


        @triton.autotune(
            configs=[triton.Config({"BLOCK_SIZE": 512}), triton.Config({"BLOCK_SIZE": 1024})],
            key=["n_elements"],
        )
        @triton.jit
        def amax_kernel(x_ptr, amax_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
            pid = tl.program_id(axis=0)
            offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            x = tl.load(x_ptr + offs, mask=offs < n_elements, other=0.0)
            tl.atomic_max(amax_ptr, tl.max(tl.abs(x), axis=0))
        """,
        # configs=[] under tiletune: the accumulator is snapshotted and restored automatically
        """
        import tiletune
        import triton
        import triton.language as tl


        @tiletune.autotune(configs=[], key=["n_elements"])
        @triton.jit
        def sum_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
            pid = tl.program_id(axis=0)
            offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            x = tl.load(x_ptr + offs, mask=offs < n_elements, other=0.0)
            tl.atomic_add(out_ptr, tl.sum(x, axis=0))
        """,
    ]

    def needs_body(self, module, kernel) -> bool:
        """The memory accesses, only for a kernel whose runs the autotuner repeats on the caller's tensors."""
        return _benchmarked(module, kernel) is not None

    def check(self, ctx: LintContext) -> Iterator[Diagnostic]:
        for k in ctx.module.kernels:
            refuses = _benchmarked(ctx.module, k)
            if refuses is None:
                continue
            at = k.autotune
            covered = set(at.restore_value or []) | set(at.reset_to_zero or [])
            loaded = set(k.loaded_pointers)
            reported: set[str] = set()
            first = _first_access(k)
            for ptr in k.stored_pointers:
                if first.get(ptr) == "store":
                    continue  # written before it is read: each run overwrites it first (a scratch buffer)
                if ptr in loaded and ptr not in covered and ptr not in reported:
                    reported.add(ptr)
                    what = f"loads from and stores into {ptr!r} (an in-place update)"
                    yield ctx.report("TT007", at.span, _message(k, ptr, what, refuses, "restore_value"), k.name, ptr)
            for ptr, ops in atomic_ops(k).items():
                repeated = sorted(ops - IDEMPOTENT_ATOMICS)
                if not repeated or ptr in covered or ptr in reported:
                    continue
                reported.add(ptr)
                names = ", ".join("tl.atomic_" + o if o != "?" else "an atomic" for o in repeated)
                what = f"updates {ptr!r} with {names}, which each repeated run applies again"
                yield ctx.report("TT007", at.span, _message(k, ptr, what, refuses, "reset_to_zero"), k.name, ptr)


def _benchmarked(module: Any, k: Any) -> Optional[bool]:
    """For an autotuned kernel whose side effects this rule checks: True when tiletune refuses to tune it
    (``side_effects="error"``), False when Triton benchmarks its configs without restoring; None otherwise."""
    at = k.autotune
    if at is None:
        return None
    if tiletune_searches(module, k):
        if _literal_text(at.other.get("side_effects")) != "error":
            return None  # tiletune snapshots and restores them around benchmarking
        return True
    if at.configs_empty:
        return None  # plain Triton runs one empty config: nothing is benchmarked
    if literal_configs(k) is None:
        return None  # configs built by code: they may carry pre_hooks we cannot see
    if len(at.configs) == 1:
        return None  # one config: Triton does not benchmark
    if _has_pre_hook(at):
        return None  # a user pre_hook replaces restore/reset handling
    return False


def _message(k: Any, ptr: str, what: str, refuses: bool, hook: str) -> str:
    if refuses:
        return (
            f"kernel {k.name!r} {what}; with side_effects=\"error\" tiletune refuses to tune it: add "
            f"restore_value=[{ptr!r}] (or reset_to_zero), or drop side_effects=\"error\" to let tiletune "
            f"snapshot and restore it"
        )
    fix = f"restore_value=[{ptr!r}]" if hook == "restore_value" else (
        f"reset_to_zero=[{ptr!r}] if the caller zeroes it, else restore_value=[{ptr!r}]"
    )
    return (
        f"autotuned kernel {k.name!r} {what}: Triton benchmarks every config several times on the caller's "
        f"tensors, so the caller receives {ptr!r} changed by every run; add {fix}"
    )


def _literal_text(text: Optional[str]) -> Optional[str]:
    if text is None:
        return None
    t = text.strip()
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"":
        return t[1:-1]
    return t


def _has_pre_hook(at: Any) -> bool:
    if "pre_hook" in at.other or "**" in at.other:
        return True  # (``**kwargs`` may carry a pre_hook, restore_value or reset_to_zero)
    return any("pre_hook" in c.extra or "pre_hook" in c.unresolved for c in (at.configs or []))


def _first_access(k: Any) -> dict[str, str]:
    """For each pointer, the kind of its first access in program order (the
    analysis records accesses in the order it walks the body, helpers inlined)."""
    first: dict[str, str] = {}
    for a in k.accesses:
        if a.pointer is not None:
            first.setdefault(a.pointer, a.kind)
    return first
