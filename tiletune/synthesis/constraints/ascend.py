"""Ascend rules (Triton-Ascend): what cannot fit is rejected, what is only slower is left to the cost.

The on-chip buffers are counted the way the Ascend compiler (BiShengIR, which
Triton-Ascend 3.2.0 calls as ``bishengir-compile``) allocates them.  Each
rule is in :data:`RULES` with its source; :mod:`..explain` quotes them.

Hard constraints (a config that breaks one cannot run):

* **UB** (``ub``): the vector buffers live at the same time, counted two
  ways (:mod:`.ascend_ub` ``ub_bounds``): ``certain`` (the whole tiles one
  operation reads and writes, with the loop-carried tiles around it; the
  largest single tile where the plan cannot be replayed) rejects;
  ``estimated`` (the full plan as BiShengIR makes it; the analysis'
  ``live_bytes`` where that cannot be done) only ranks
  (``footprint["ub_estimate"]``, :func:`..ascend_cost.overflow_risk_factor`)
  and ``explain`` says "may overflow".  For ``tl.dot`` (mix) kernels
  the cube tiles stay in L1/L0C, and the vector part is split over the two
  vector cores of an AI core (sub-block binding), so each UB holds half of it.
* **L1** (``l1``): the cube operand tiles.
* **multibuffer**: the hard limits count one copy of each buffer
  (bishengir-compile retries an overflowing Triton kernel without
  multibuffer, ``RULES["multibuffer"]``); ``ub.multibuffer`` /
  ``l1.multibuffer`` (``check=False``) steer the synthesis away from a
  multibuffer the compiler would drop.  With
  ``TILETUNE_ASCEND_MULTIBUFFER_RETRY=0`` (an older compiler that fails on
  the second copies, CANN 8.5.0) they count as hard.
* **L0C** (``l0c``): the dot accumulators.
* **cube fractals**: ``tl.dot``'s m, n, k are multiples of the cube fractal
  (16, k 32 for int8).

Not constraints:

* **L0A / L0B**: the compiler's memory planner does not place them; the
  cube operation reads its operands from L1 and moves them into L0A/L0B in
  fractal-sized steps of its own choosing (see ``RULES["l0"]``), so no
  Triton-level BLOCK_K is too large for L0A/L0B once its tiles fit L1;
* 32-byte UB alignment: a block whose contiguous bytes are not a multiple of
  32 is rounded UP to one (Triton-Ascend 3.2.0 moves the padded bytes; its
  tile generator emits such blocks, e.g. BLOCK=2461 fp32 for n=98432 on 40
  cores), so it costs bandwidth (:mod:`..ascend_cost`), it is not an error;
* powers of two: Triton-Ascend's ``tl.arange`` takes any extent up to
  ``TRITON_MAX_TENSOR_NUMEL`` (``triton/triton_patch/language/semantic.py``
  l.61-75, installed over ``triton.language.semantic.arange`` by
  ``triton/testing.py`` l.764; ``validate_block_shape``, ``triton/language/_utils.py``
  l.34-43, checks only the element count), so no tile size has to be one.
"""

from __future__ import annotations

import os
from typing import Optional

from ...analysis.expr import NUM_STAGES, Expr, const, emax, sym
from ...analysis.model import DTYPE_BYTES
from ..model import Target
from ..space import MULTIBUFFER
from .ascend_ub import ub_bounds, ub_certain_parts, ub_floor
from .core import Constraint, DotTerm
from .preds import Pred

__all__ = ["UB_ESTIMATE", "access_rules", "dot_rules", "capacity_rules", "buffer_stages", "sub_blocks", "RULES", "rule_of",
           "certain_detail"]

#: The model's footprint entry for the ``estimated`` UB bytes per vector core (the full plan), next to the
#: ``certain`` bytes the ``ub`` constraint rejects on.
UB_ESTIMATE = "ub_estimate"

#: Each capacity rule: what is counted, and where that comes from.
RULES: dict[str, str] = {
    "ub": (
        "UB holds the peak of the vector buffers live at the same time "
        "(BiShengIR PlanMemory, lib/Dialect/HIVM/Transforms/PlanMemory.cpp: MemLivenessAnalysis over the "
        "buffers, ubSpaceSize = 192 KiB; Triton-Ascend issue #302, maintainer: 'the concurrent peak of all "
        "memrefs alive at once on one core'); the local buffer of a GM<->UB copy inside an scf.for loop is "
        "marked multi_buffer = 2 when multibuffer is on (MarkMultiBuffer.cpp, MarkMultiBuffer<LoadOp/StoreOp>; "
        "issue #302: 'requires 3072000 bits' = 48000 x 32 bit x 2 with the default multibuffer=True)"
    ),
    "ub.floor": (
        "where the compiler's plan cannot be replayed (a helper the analysis does not follow, a tile of "
        "unknown shape), only a lower bound rejects: every vector tile is one memref allocated whole in UB "
        "(PlanMemory.cpp: one offset per memref.alloc, no spilling; 'ub overflow, requires N bits', l.1534), "
        "and nothing splits a Triton tile into UB-sized pieces: for a Triton kernel (enable-triton-kernel-"
        "compile) the HFusion auto-schedule, BiShengIR's tiling of vector ops, is skipped (AscendNPU-IR "
        "lib/Dialect/HFusion/Pipelines/HFusionPipelines.cpp buildHFusionPipelines l.292-303), so the user "
        "splits (Triton-Ascend programming_guide.md 'How Do I Avoid UB Overflow': 'reduce the amount of data "
        "transferred at a time and use the for loop'); the passes that do split run elsewhere: TileAndBindSubBlock "
        "halves only a mix (cube+vector) function over its two vector cores (TileAndBindSubBlock.cpp header), "
        "TileCubeVectorLoop only a loop CV pipelining marked hivm.loop_core_type in a mix kernel "
        "(TileCubeVectorLoop.cpp processCandidateLoop), AutoBlockify loops over programs, not tiles "
        "(docs AutoBlockify.md); AscendNPU-IR at 52f96a130, 2026-08; observed: Triton-Ascend's own CI test "
        "test_atomic_and_ub_overflow (unittest/generalization_cases/test_atomic_and.py l.130-148, run on every "
        "PR by run_prtest.sh) expects MLIRCompilationError 'ub overflow' for one load tile of 500000 int8 to "
        "int64 elements, so a tile over the UB is not split, it fails; the analysis' live tiles without reuse "
        "over-count and only steer the synthesis"
    ),
    "ub.certain": (
        "a config is rejected only on what certainly does not fit: the whole tiles one vector operation "
        "reads and writes (its operands cannot be freed before it runs, whatever the plan: PlanMemory.cpp "
        "MemLivenessAnalysis keeps an operand live to its last use) plus the loop-carried tiles of the loops "
        "around it (an scf.for iter arg is live through every iteration; PlanMemory.cpp UpdateForOpBufferAlias), "
        "each tile allocated whole (no spilling); a tile no operation reads is not certain (unused, the "
        "compiler erases the op that made it, MLIR isOpTriviallyDead); the rest of the plan (which other tiles overlap, per-row "
        "vectors, implicit widening copies) depends on code motion and reuse the compiler may do differently "
        "(bishengir-compile retries an overflow with enable-code-motion=false, OverFlowPolicyBase.cpp), so it "
        "only ranks.  That the operands of one operation are not split to fit is seen, not only read: a tile "
        "over the UB fails (Triton-Ascend CI test_atomic_and_ub_overflow, see ub.floor), Triton-Ascend's "
        "fused-attention tutorial updates its fp32 accumulator in four slices 'to avoid ub overflow' "
        "(tutorials/04-fused-attention.py l.125), and its reduction tests skip an input tile of 1/6 of the UB "
        "or more as a 'mem overflow' (unittest/generalization_cases/test_sum.py reduce_check_ub_mem_overflow), "
        "a bound stricter than this count"
    ),
    "ub.estimate": (
        "the estimated UB (the full replayed plan: every buffer live at one statement, per-row vectors, the "
        "fp32 copy Triton's binary_op_type_checking_impl makes of a narrower operand; the analysis' live tiles "
        "where no plan can be replayed) is a risk, not a limit: a config whose estimate overflows while its "
        "certain tiles fit is kept and ranked lower (ascend_cost.overflow_risk_factor)"
    ),
    "ub.mix": (
        "in a tl.dot (mix cube+vector) kernel the operands are moved GM->L1 for the cube (ND2NZ, "
        "MarkMultiBuffer.cpp) and never sit in UB, and the vector part is tiled over the 2 vector cores "
        "of the AI core (TileAndBindSubBlock, on by default: Triton-Ascend 3.2.0 compiler.py l.594 "
        "enable_auto_bind_sub_block = not 910_95; its UB checker halves dim 0 for it, triton-ascend PR #1458; "
        "tutorial 05-matrix-multiplication.py splits the epilogue the same way with bind_sub_block=True)"
    ),
    "l1": (
        "L1 holds the cube operand tiles (PlanMemory.cpp l1SpaceSize = 512 KiB); the GM->L1 (ND2NZ) "
        "buffers of loads in a loop are double-buffered with multibuffer (MarkMultiBuffer.cpp, "
        "MarkMultiBuffer<ND2NZOp>)"
    ),
    "multibuffer": (
        "a multibuffer copy alone never makes a config fail: bishengir-compile retries a Triton kernel "
        "whose plan overflows with enable-code-motion=false, then enable-auto-multi-buffer=false "
        "(AscendNPU-IR lib/Tools/bishengir-compile/BiShengIRCompileMain.cpp registers UbOverflowRetryPolicy, "
        "CbufOverflowRetryPolicy and CcOverflowRetryPolicy when enable-triton-kernel-compile, which "
        "Triton-Ascend 3.2.0 always passes, compiler.py l.420; lib/Tools/RetriablePassManager/"
        "OverFlowPolicyBase.cpp onFailure; in AscendNPU-IR since 4838854c6, 2026-05-19, released in v1.2.0; "
        "the message 'Due to Ub overflow, automatically set enable-code-motion to false, set "
        "enable-auto-multi-buffer to false' is RetriablePassManager.cpp's, seen from a shipped CANN in "
        "modelscope/mcore-bridge issue #188), so only one copy of each buffer is a hard need.  An older "
        "bishengir-compile (CANN 8.5.0 with Triton-Ascend 3.2.0) fails on the second copies: issue #302's "
        "'requires 3072000 bits' = 48000 x 32 bit x 2, sgl-kernel-npu #477's 2097152 bits; for it "
        "TILETUNE_ASCEND_MULTIBUFFER_RETRY=0 counts them.  A shipped autotune config proves nothing either way: "
        "Triton-Ascend 3.2.0's Autotuner._bench scores a config that fails with MLIRCompilationError "
        "(UB overflow) as inf and moves on (runtime/autotuner.py l.191)"
    ),
    "l0c": (
        "L0C holds the tl.dot accumulators whole: the result (mC) of a local matmul is allocated in L0C "
        "(AscendNPU-IR lib/Dialect/HIVM/Transforms/InferHIVMMemScope.cpp, inferAndPropagateMemScopeForLocalMatmulLike: "
        "'operand mC should be in L0C') and planned there (PlanMemory.cpp l0cSpaceSize = 128 KiB on 910B, "
        "'cc overflow' otherwise); no pass splits an accumulating dot's M x N into L0C-sized steps "
        "(TileBatchMMIntoLoop.cpp loops over the batch only; TileCubeVectorLoop, on by default since AscendNPU-IR "
        "v1.2.0 with tile-mix-cube-loop=2, splits only a CV-pipelined cube loop of a mix kernel and skips one whose "
        "mmadL1 accumulates in L0C, TileCubeVectorLoop.cpp hasL0CAccumulation: a K loop's acc += tl.dot), and the "
        "overflow retry only drops multibuffer (OverFlowPolicyBase.cpp onFailure); argued from that source, no "
        "public report of a 'cc overflow' for a given tile was found, and every shipped-and-run Triton-Ascend "
        "matmul stays within it: tutorial 13-matrix-multiplication-optimized.py runs 128 x 256 (or 256 x 128) "
        "fp32 accumulators, 131072 B, exactly the 910B's L0C, and vllm-ascend's linear_persistent (nightly "
        "test_batch_invariant_ops.py) caps BLOCK_M x BLOCK_N at 256 x 128"
    ),
    "l0": (
        "L0A/L0B are not planned per Triton tile: PlanMemory.cpp plans UB, L1 and L0C only "
        "(MemPlan::GetBufferSpaceInfo; AscendNPU-IR docs PlanMemory.md: 'allocation is mainly for L1 and L0C'), and the cube "
        "op (hivm mmadL1, operands in L1: AscendNPU-IR test 'test_mmadL1_no_loop' allocates a 256x128 "
        "fp16 A tile in L1) feeds L0A/L0B in fractal steps; Triton-Ascend's matmul tutorial "
        "(third_party/ascend/tutorials/05-matrix-multiplication.py l.38) runs BLOCK 128x128x128, whose fp32 "
        "operand tile (65536 B) fills L0A whole, so L0A cannot also hold the next step unless K is split"
    ),
}


def rule_of(name: str) -> Optional[str]:
    """The rule (with its source) behind an Ascend constraint name (``ub``, ``l1``, ``l0c``...), or None."""
    base = name.split("#")[0]
    extra = ""
    if base.endswith(".multibuffer"):
        base, extra = base[: -len(".multibuffer")], "; " + RULES["multibuffer"]
    if base.endswith(".estimate"):
        base, extra = base[: -len(".estimate")], "; " + RULES["ub.estimate"]
    if base == "ub:mix":
        return RULES["ub"] + "; " + RULES["ub.mix"] + extra
    rule = RULES.get(base.split(":")[0])
    return rule + extra if rule else None


def esize(dt: Optional[str]) -> int:
    """Bytes per element of a resolved dtype (4 when unknown)."""
    return DTYPE_BYTES.get(dt or "fp32", 4)


def access_rules(b, a, d: Expr, esize: int, bound) -> None:
    """No hard per-access rule on Ascend: alignment is a cost (see the module docstring)."""


def buffer_stages(b) -> Expr:
    """Copies of a multibuffered tile in flight: ``1 + multibuffer``."""
    if MULTIBUFFER in b.names:
        return const(1) + sym(MULTIBUFFER)
    return const(1 + int(b.space.env.get(MULTIBUFFER, 0)))


def sub_blocks(t: Target) -> int:
    """Vector cores that share the vector part of one mix (``tl.dot``) program: 2 on 910B/910_93, else 1.

    Triton-Ascend 3.2.0 ``compiler.py`` l.593-594 sets ``multibuffer`` and
    ``enable_auto_bind_sub_block`` from the same expression (``not
    is_compile_on_910_95``); the pairing needs two vector cores per cube core
    (Triton-Ascend programming guide: 'each cube core paired with two vector cores').
    """
    if t.vector_cores and t.vector_cores == 2 * t.cores and t.multibuffer_default:
        return 2
    return 1


def dot_rules(b, i: int, m: Expr, n: Expr, k: Expr, adt: str, bdt: str) -> None:
    """Cube fractals of one ``tl.dot`` (L0A/L0B are no limit per Triton tile: ``RULES["l0"]``)."""
    t = b.target
    frac_k = t.fractal_k_int8 if adt in ("int8", "uint8") else t.fractal
    for label, dim, f in (("m", m, t.fractal), ("n", n, t.fractal), ("k", k, frac_k)):
        if dim.symbols() & b.names or (dim.is_const and dim.value % f):
            b.add(
                Constraint(
                    f"fractal:dot{i}.{label}", "fractal", Pred.multiple_of(dim, f),
                    f"tl.dot {label} = {dim} is a multiple of {f} (cube fractal {t.fractal}x{frac_k} for {adt})",
                )
            )


#: Environment switch: "0" for a bishengir-compile that does not retry an overflow without multibuffer
#: (before AscendNPU-IR v1.2.0); unset or "1": the retrying compiler.
RETRY_ENV = "TILETUNE_ASCEND_MULTIBUFFER_RETRY"


def multibuffer_retry() -> bool:
    """Whether the compiler drops multibuffer when a plan overflows (``RULES["multibuffer"]``): on (the
    bishengir-compile of AscendNPU-IR v1.2.0 and later) unless ``TILETUNE_ASCEND_MULTIBUFFER_RETRY=0``.

    Any other value is an error naming the variable and the values it takes.
    """
    value = os.environ.get(RETRY_ENV, "1").strip()
    if value not in ("0", "1"):
        raise ValueError(f"{RETRY_ENV}={value!r}: use 1 for a bishengir-compile that retries an overflowing "
                         "plan without multibuffer (AscendNPU-IR v1.2.0 and later, the default) or 0 for an "
                         "older one (CANN 8.5.0)")
    return value == "1"


def _ub_need(b, foot: dict[str, Expr], dots: list[DotTerm], stages: Expr) -> tuple[Expr, str, Expr, bool]:
    """UB bytes per vector core with ``stages`` copies of the multibuffered buffers: ``(certain, how they
    were counted, estimated, planned)``.

    ``certain`` rejects: with a replayed plan, the tiles every compiler path holds at one moment
    (:func:`.ascend_ub.ub_bounds`); without one, the largest single tile (:func:`.ascend_ub.ub_floor`,
    ``RULES["ub.floor"]``).  ``estimated`` only ranks (``RULES["ub.estimate"]``): the full plan, or
    the analysis' live tiles without reuse where there is none (``planned`` False).
    """
    t = b.target
    halves = sub_blocks(t) if (dots and "dot_operand_bytes" in foot) else 1
    mix = f"; a mix kernel's vector part over {halves} sub-blocks" if halves > 1 else ""

    def per_core(e: Expr) -> Expr:
        return e // halves if halves > 1 else e

    consts = {p.name: b.space.env[p.name] for p in b.spec.params
              if p.constexpr and not p.tiling and isinstance(b.space.env.get(p.name), int)}
    bounds = ub_bounds(b.spec, b.space.dtypes, stages, consts)
    bound = (b.bind(bounds[0]), b.bind(bounds[1])) if bounds is not None else (None, None)
    if bound[0] is not None and bound[1] is not None:
        return per_core(bound[0]), "the tiles live together on every plan" + mix, per_core(bound[1]), True
    raw = b.spec.footprint.live_bytes if b.spec.footprint is not None else None
    live = b.bind(raw.substitute({NUM_STAGES: stages})) if raw is not None else None
    live = live if live is not None else foot["live_bytes"]
    if halves > 1:
        live = emax(live - foot["dot_operand_bytes"] * stages, foot.get("accumulator_bytes", const(0))) // halves
    floor = ub_floor(b.spec, b.space.dtypes, stages, consts)
    floor = b.bind(floor) if floor is not None else None
    floor = per_core(floor) if floor is not None else const(0)
    return floor, "the largest single tile: the plan is unknown" + mix, live, False


def capacity_rules(b, foot: dict[str, Expr], dots: list[DotTerm], tile_numels: list[Expr]) -> None:
    """UB, L1 and L0C (``RULES``); multibuffered copies hard unless the compiler retries without them.

    With :func:`multibuffer_retry` a tiling that fits single-buffered runs;
    one that fits only single-buffered gets no overlap, which the synthesis
    avoids (the ``check=False`` constraints) rather than rejects.
    """
    t = b.target
    stages = buffer_stages(b)
    retry = multibuffer_retry()
    hard = const(1) if retry else stages
    mix = bool(dots and "dot_operand_bytes" in foot)
    if "live_bytes" in foot and t.ub_bytes:
        name = "ub:mix" if mix else "ub"
        one, how, estimate, planned = _ub_need(b, foot, dots, hard)
        copies = "one copy of each buffer" if retry else "multibuffered copies counted"
        text = f"UB: live tiles {one} <= {t.ub_bytes} B per vector core ({how}; {copies})"
        b.add(Constraint.within(name, "capacity", one, t.ub_bytes, text, "UB"))
        foot[UB_ESTIMATE] = estimate  # ranks (ascend_cost.overflow_risk_factor) and explains; rejects nothing
        if retry and (MULTIBUFFER in b.names or b.space.env.get(MULTIBUFFER, 0)):
            two, how, est2, planned = _ub_need(b, foot, dots, stages)
            two = est2 if planned else two
            if MULTIBUFFER in b.names:
                two = two * sym(MULTIBUFFER)  # steers only the multibuffered points: the others are ranked
            text = f"UB with multibuffer: {two} <= {t.ub_bytes} B (else the compiler drops the second copy)"
            b.add(Constraint.within(f"{name}.multibuffer", "capacity", two, t.ub_bytes, text, "UB with multibuffer",
                                    check=False, soft=True))
    if mix and t.l1_bytes:
        need = foot["dot_operand_bytes"] * hard
        text = f"L1: cube operand tiles {need} <= {t.l1_bytes} B per cube core"
        b.add(Constraint.within("l1", "capacity", need, t.l1_bytes, text, "L1"))
        if retry and (MULTIBUFFER in b.names or b.space.env.get(MULTIBUFFER, 0)):
            two = foot["dot_operand_bytes"] * stages
            text = f"L1 with multibuffer: {two} <= {t.l1_bytes} B (else the compiler drops the second copy)"
            b.add(Constraint.within("l1.multibuffer", "capacity", two, t.l1_bytes, text, "L1 with multibuffer",
                                    check=False, soft=True))
    if dots and "accumulator_bytes" in foot and t.l0c_bytes:
        need = foot["accumulator_bytes"]
        text = f"L0C: accumulators {need} <= {t.l0c_bytes} B per cube core"
        b.add(Constraint.within("l0c", "capacity", need, t.l0c_bytes, text, "L0C"))


def certain_detail(spec, dtypes: dict, env: dict, need: int) -> Optional[str]:
    """The tiles behind a ``ub`` rejection of one config: ``"at line L `op`: tile A N B + tile B M B"``,
    the operation whose whole tiles (the certain count, :func:`.ascend_ub.ub_certain_parts`) add up to
    ``need``; where no plan is replayed, the floor's rule (``RULES["ub.floor"]``); None when no set adds
    up to ``need``."""
    stages = const(1) if multibuffer_retry() else const(1 + int(env.get(MULTIBUFFER, 0)))
    consts = {p.name: env[p.name] for p in spec.params
              if p.constexpr and not p.tiling and isinstance(env.get(p.name), int)}
    sets = ub_certain_parts(spec, dtypes, stages, consts)
    if sets is None:
        return f"counted as the largest single tile, the plan being unknown: {RULES['ub.floor']}"
    for line, op, tiles in sets:
        try:
            sizes = [(name, int(b.evaluate(env))) for name, b in tiles]
        except KeyError:  # a symbol the config does not fix (an element size left open): no figure
            continue
        if sum(b for _, b in sizes) == need:
            listed = " + ".join(f"`{name}` {b} B" for name, b in sizes)
            return f"at line {line} `{op}`: {listed}"
    return None
