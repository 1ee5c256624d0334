"""NVIDIA rules: shared memory (hard), warps and vector width (preferences); registers are a cost.

Figures come from the :class:`~tiletune.synthesis.model.Target` (CUDA
programming guide, see :mod:`tiletune.synthesis.targets`).  Preferences are
``soft``: synthesis relaxes them when nothing else fits, ``check_config``
does not report them.
"""

from __future__ import annotations

from ...analysis.expr import Expr, const, emax, sym
from ..space import NUM_WARPS
from .core import Constraint, DotTerm
from .preds import Pred

__all__ = ["access_rules", "dot_rules", "capacity_rules"]


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
    """No hard per-dot rule on NVIDIA beyond the analysis' minimum sizes (in the domains)."""


def capacity_rules(b, foot: dict[str, Expr], dots: list[DotTerm], tile_numels: list[Expr]) -> None:
    """Shared memory per block (hard), warps per tile (a preference); the register estimate is put in the
    footprint (``register_bytes``) for the cost model's spill term, never a filter."""
    t = b.target
    if "live_bytes" in foot:
        # Registers hold the live tiles except what is staged in shared memory
        # (pipelined tl.dot operands); never less than the accumulators.
        if dots and "shared_bytes" in foot:
            foot["register_bytes"] = emax(foot["live_bytes"] - foot["shared_bytes"], foot.get("accumulator_bytes", const(0)))
        else:
            foot["register_bytes"] = foot["live_bytes"]
    if "shared_bytes" in foot and t.shared_bytes:
        need = foot["shared_bytes"]
        text = f"shared memory: {need} <= {t.shared_bytes} B per block"
        b.add(Constraint.within("shared", "capacity", need, t.shared_bytes, text, "shared memory"))
    if dots and "accumulator_bytes" in foot and NUM_WARPS in b.names and t.registers_per_sm:
        b.add(_accumulator_rule(foot["accumulator_bytes"], t))
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


#: Registers per thread besides a dot's accumulators (addresses, indices, loop state), as the spill price
#: counts them (cost.py); ptxas asked for 154 where the accumulators take 128 (256x256 over 16 warps).
RESERVED_REGISTERS = 32


def _accumulator_rule(acc_bytes: Expr, t) -> Constraint:
    """The dots' accumulators, with :data:`RESERVED_REGISTERS` more per thread, must fit the block's share
    of the register file (``registers_per_sm``), counted in bytes per block.

    Past that share ptxas refuses: "Insufficient registers (128) to compile instruction" at 256x256 over 16
    warps (an mma accumulator fragment cannot spill).  Below it, up to the 255-register cap and past it,
    Triton compiles with spills (256x128 on 4 warps, 256x256 on 4: sm_90, offline), so the cap is left to
    the spill price.  Checked against ``triton.compile`` for sm_90: the 243 configs of
    bench/results/register_oracle.json all pass; 256x256 over 8 warps (256 accumulator registers a thread,
    which compiles with spills) is refused, a config the spill price never ranks anyway."""
    threads = sym(NUM_WARPS) * t.warp_size
    need = acc_bytes + threads * (4 * RESERVED_REGISTERS)
    text = (f"dot accumulators in registers: {acc_bytes} B + {RESERVED_REGISTERS} registers per thread <= "
            f"the block's share of the register file ({t.registers_per_sm} registers)")
    return Constraint.within("registers", "capacity", need, 4 * t.registers_per_sm, text, "accumulator registers")
