"""NVIDIA rules: shared memory (hard), warps and vector width (preferences); registers are a cost.

Figures come from the :class:`~tiletune.synthesis.model.Target` (CUDA
programming guide, see :mod:`tiletune.synthesis.targets`).  Preferences are
``soft``: synthesis relaxes them when nothing else fits, ``check_config``
does not report them.
"""

from __future__ import annotations

from ...analysis.expr import Expr, const, emax, emin, sym
from ..space import NUM_WARPS
from .core import PIPELINED_SHARED, Constraint, DotTerm
from .nvidia_defects import defect_rules
from .preds import Pred

__all__ = ["access_rules", "dot_rules", "capacity_rules", "FUSED_REGISTER_SHARE"]

#: The share of the live-tile bytes a kernel without ``tl.dot`` keeps in registers.  The liveness scan counts
#: every named step of an elementwise chain as a whole tile (``x``, ``x - max``, ``exp(...)``: three tiles);
#: ptxas computes such a chain element by element and keeps what a reduction or a later statement needs, 16-bit
#: loads packed two to a register, one address per vectorised access.  Against ptxas' count for sm_90 (Triton
#: 3.6, ``python bench/register_share.py``: 8 kernels without dots, 34 configs estimated at 40 or more registers
#: a thread that do not spill) ptxas used a median 0.62 of the estimate (10th-90th percentile 0.36-1.22;
#: bench/results/register_share.md).  Unscaled, a wide row's estimate on 8 warps (136 registers, where ptxas
#: used 48) left one program an SM, and the latency term ranked 4 warps first by 2.7x where an H200 measured
#: 8 warps 6% faster (bench/holdout/rows_log_softmax.py).  Kernels with dots keep the unscaled estimate: ptxas
#: spends registers freely on them (bench/results/register_oracle.md: often more than the estimate).
FUSED_REGISTER_SHARE = (3, 5)  # 0.6, as a fraction: footprint expressions are integer


def access_rules(b, a, d: Expr, esize: int, bound) -> None:
    """Vector width of the contiguous tile dim ``d``: >= 16 B per access (a preference).

    When the kernel streams its data through a loop, an access outside the
    loop (a per-program store of BLOCK_M row sums, a scale vector loaded once)
    moves a negligible share of the bytes: its width is left to the cost's
    transaction factor instead of removing narrow parallel tiles (BLOCK_M = 1
    row per program) that can be the fastest.
    """
    if not a.in_loop and any(x.in_loop and x.kind == "load" for x in b.spec.accesses):
        return
    who = a.pointer or a.node
    base = Pred.ge(d * esize, const(16))
    text = f"{who}: contiguous tile dim {d} x {esize} B >= 16 B (vectorised access)"
    if bound is not None:
        base = Pred.any_of(base, Pred.ge(d, const(bound[1])))
        text += f", unless it covers {bound[0]}'s whole extent ({bound[1]})"
    b.add(Constraint(f"align:{who}", "align", base, text, check=False, soft=True))


def dot_rules(b, i: int, m: Expr, n: Expr, k: Expr, adt: str, bdt: str) -> None:
    """On wgmma targets (sm_90), the accumulator fragment's registers (:func:`_wgmma_fragment_rule`) and the
    known Triton defects (:mod:`.nvidia_defects`); no other hard per-dot rule beyond the analysis' minimum
    sizes (in the domains)."""
    if m is not None and n is not None and NUM_WARPS in b.names and (b.target.arch or 0) >= 90 \
            and b.target.registers_per_sm:
        _wgmma_fragment_rule(b, i, m, n)
    if m is not None and n is not None:
        defect_rules(b, i, m, n, adt, bdt)


def capacity_rules(b, foot: dict[str, Expr], dots: list[DotTerm], tile_numels: list[Expr]) -> None:
    """Shared memory per block (hard), warps per tile (a preference); the register estimate is put in the
    footprint (``register_bytes``) for the cost model's spill term, never a filter."""
    t = b.target
    if "live_bytes" in foot:
        # Registers hold the live tiles except what is staged in shared memory
        # (pipelined tl.dot operands); never less than the accumulators.
        if dots and "shared_bytes" in foot:
            # the live estimate counts every loop load num_stages times; what the pipeliner stages is taken out,
            # counted as if every operand load were pipelined (an unpipelined one holds its single copy in
            # registers and its one shared buffer besides: the estimate stays what it was fitted as)
            staged = foot.pop(PIPELINED_SHARED, foot["shared_bytes"])
            # an operand load Triton does not pipeline is loaded into registers before its shared buffer
            unstaged = foot.get("unstaged_bytes", const(0)) * UNSTAGED_REGISTERS
            foot["register_bytes"] = emax(foot["live_bytes"] - staged + unstaged, foot.get("accumulator_bytes", const(0)))
        elif dots:
            foot["register_bytes"] = foot["live_bytes"]
        else:
            foot["register_bytes"] = foot["live_bytes"] * FUSED_REGISTER_SHARE[0] // FUSED_REGISTER_SHARE[1]
    if "shared_bytes" in foot and t.shared_bytes:
        need = foot["shared_bytes"]
        text = f"shared memory: {need} <= {t.shared_bytes} B per block"
        b.add(Constraint.within("shared", "capacity", need, t.shared_bytes, text, "shared memory"))
    # The register estimate is no filter: Triton compiles every config it would reject (bench/
    # register_oracle.py: 103 of 103 it rejected compiled for sm_90, 47 of them with spills), so it is a
    # cost (cost.py's spill term); spilling still runs, shared memory over the block's limit does not.
    if NUM_WARPS in b.names and tile_numels:
        biggest = emax(*tile_numels)
        b.add(
            Constraint(
                "warps", "warps",
                Pred.any_of(Pred.le(sym(NUM_WARPS) * t.warp_size, biggest), Pred.cmp("==", sym(NUM_WARPS), const(1))),
                f"num_warps x {t.warp_size} threads <= the largest tile ({biggest} elements): no idle threads",
                check=False, soft=True,
            )
        )


#: Copies of an unpipelined operand tile the register estimate adds (it is loaded into registers, then stored
#: to its one shared buffer; a pipelined one goes global -> shared by cp.async)
UNSTAGED_REGISTERS = 1

#: Registers per thread a wgmma needs beside its accumulator fragment: ptxas asked for 154 ("Try to compile
#: with register target of 154 or higher") where the m64n256 fragment takes 128.
WGMMA_EXTRA_REGISTERS = 26


def _wgmma_fragment_rule(b, i: int, m: Expr, n: Expr) -> None:
    """A wgmma's accumulator fragment cannot spill: with :data:`WGMMA_EXTRA_REGISTERS` more it must fit a
    thread's registers, ``min(max_registers_per_thread, registers_per_sm / threads)`` (hard; sm_90).

    Triton 3.6 lays a dot's warps along M first (16 rows a warp, ``warpsPerTileV3``), then along N, and the
    instruction is m64nN with N = min(256, BLOCK_N / warps along N): a fragment of N / 2 fp32 registers a
    thread.  Only at 16 warps and more does the fragment outgrow the thread's share: ptxas refuses
    256x256 over 16 warps ("Insufficient registers (128) to compile instruction"); 256x256 on 4 and 8 warps
    and 128x256 on 16 compile (sm_90 offline).  Without division: with W warps,
    ``min(4096 W, n min(16 W, m)) + 2 x 16 x 26 W <= 32 min(255 W, registers_per_sm / 32)``."""
    t = b.target
    w = sym(NUM_WARPS)
    frag_x32 = emin(w * (256 * 16), n * emin(w * 16, m))  # 32 x fragment registers x W
    need = frag_x32 + w * (32 * WGMMA_EXTRA_REGISTERS)
    limit = emin(w * (32 * t.max_registers_per_thread), const(t.registers_per_sm))
    text = (f"tl.dot {i}: a wgmma accumulator fragment (m64 x min(256, {n} / warps along N), fp32) + "
            f"{WGMMA_EXTRA_REGISTERS} registers must fit a thread's share of the register file")
    wgmma = emin(const(1), m // 64)  # 0 below M = 64: Triton uses mma.sync, whose fragments are small
    b.add(Constraint.within(f"wgmma_regs:dot{i}", "capacity", wgmma * need, limit, text,
                            "wgmma accumulator fragments", unit="registers per block"))
