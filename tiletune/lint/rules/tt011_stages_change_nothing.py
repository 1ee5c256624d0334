"""TT011: hand-written configs differ only in `num_stages` in a kernel with no `tl.dot` in a loop."""

from __future__ import annotations

from typing import Any, Iterator, Optional

from ..diagnostic import Diagnostic
from ..rule import Invalid, LintContext, Rule
from ._kernel import target_family

__all__ = ["StagesChangeNothing"]

#: ``num_stages`` when a config does not set it (Triton's default on NVIDIA).
DEFAULT_STAGES = 3


def _row_sum(first: str, second: str) -> str:
    """The rules' example: a row sum (a loop of loads, no dot) with two configs of BLOCK_SIZE=1024."""
    return f"""
        import triton
        import triton.language as tl


        @triton.autotune(
            configs=[
                triton.Config({{"BLOCK_SIZE": 1024}}, {first}),
                triton.Config({{"BLOCK_SIZE": 1024}}, {second}),
            ],
            key=["n_cols"],
        )
        @triton.jit
        def row_sum_kernel(x_ptr, out_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
            row = tl.program_id(axis=0)
            acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
            for start in range(0, n_cols, BLOCK_SIZE):
                cols = start + tl.arange(0, BLOCK_SIZE)
                acc += tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
            tl.store(out_ptr + row, tl.sum(acc, axis=0))
        """


class StagesChangeNothing(Rule):
    code = "TT011"
    name = "stages-change-nothing"
    summary = "hand-written configs differ only in `num_stages` in a kernel with no `tl.dot` in a loop"
    severity = "warning"
    WHAT = """
        Two or more literal `triton.Config`s of one kernel set the same values
        and `num_warps` and differ only in `num_stages`, and no loop of the
        kernel holds a `tl.dot` (NVIDIA targets).
        """
    WHY = """
        Triton's software pipeliner only pipelines the loads a loop's `tl.dot`
        reaches (a loop without one only through its own `tl.range(...,
        num_stages=k)`, which the config's `num_stages` does not change), so
        such configs compile to the same kernel: the autotuner compiles and
        times each copy, and picks among them by noise. Keep one of each
        (`python bench/stage_identity.py` compares the cubins for sm_90). Not
        reported when the analysis of the kernel is incomplete (a helper it
        could not follow may hold a dot).
        """
    INVALID = [Invalid(_row_sum("num_warps=4, num_stages=1", "num_warps=4, num_stages=3"))]
    VALID = [_row_sum("num_warps=4, num_stages=1", "num_warps=8, num_stages=1")]

    def needs_body(self, module: Any, kernel: Any) -> bool:
        """Whether the kernel has a loop with a dot, only when two of its configs differ in ``num_stages`` alone."""
        return bool(_stage_copies(kernel))

    def check(self, ctx: LintContext) -> Iterator[Diagnostic]:
        candidates = [(k, _stage_copies(k)) for k in ctx.module.kernels]
        candidates = [(k, groups) for k, groups in candidates if groups]
        if not candidates or not _nvidia(ctx.target):
            return
        from tiletune.synthesis.families.nvidia import stages_matter

        for k, groups in candidates:
            if not k.complete or stages_matter(k):
                continue
            for configs in groups:
                first, copies = configs[0], configs[1:]
                stages = ", ".join(str(_stages(c)) for c in configs)
                for cfg in copies:
                    yield ctx.report(
                        "TT011",
                        cfg.span,
                        f"configs of kernel {k.name!r} at {_label(first)} differ only in num_stages ({stages}), but "
                        f"{k.name!r} has no tl.dot in a loop: Triton pipelines only what a loop's dot reaches, so "
                        f"they compile to one kernel and the autotuner compiles and times it {len(configs)} times; "
                        f"keep one of them",
                        k.name,
                    )


def _stages(cfg: Any) -> int:
    return cfg.num_stages if cfg.num_stages is not None else DEFAULT_STAGES


def _label(cfg: Any) -> str:
    values = ", ".join(f"{k}={v}" for k, v in cfg.kwargs.items())
    return f"{{{values}}}, num_warps={cfg.num_warps}"


def _stage_copies(kernel: Any) -> list[list[Any]]:
    """The kernel's literal configs grouped by everything but ``num_stages``: the groups holding more than one
    stage count (configs with values the analysis could not read are left out)."""
    at = kernel.autotune
    if at is None or not at.configs:
        return []
    groups: dict[tuple, list[Any]] = {}
    for cfg in at.configs:
        if cfg.unresolved:
            continue
        key = (tuple(sorted(cfg.kwargs.items(), key=lambda kv: kv[0])), cfg.num_warps,
               tuple(sorted(cfg.extra.items(), key=lambda kv: kv[0])))
        groups.setdefault(key, []).append(cfg)
    return [g for g in groups.values() if len({_stages(c) for c in g}) > 1]


def _nvidia(target: Optional[str]) -> bool:
    """True when ``target`` is an NVIDIA chip (stock Triton's pipeliner; Ascend's stages are its own); an unknown
    target or no synthesis: say nothing."""
    family = target_family(target)
    return family is not None and family.name == "nvidia"
