"""Ascend rules (Triton-Ascend): what cannot fit is rejected, what is only slower is left to the cost.

Hard constraints (a config that breaks one cannot run):

* **UB**: the live tiles of a vector core (the analysis' ``live_bytes``, loads
  inside loops counted ``1 + multibuffer`` times: Triton-Ascend's
  ``multibuffer`` option double-buffers them; compiler default on for
  910B/910_93, off for 910_95: ``backends/ascend/compiler.py`` l.593) fit the
  Unified Buffer.  For ``tl.dot`` kernels the cube operands are staged in L1,
  not UB, so they are taken out.
* **L1**: the cube operand tiles, ``1 + multibuffer`` stages.
* **L0A / L0B**: one ``tl.dot``'s A (m x k) and B (k x n) operand tiles.
* **L0C**: the dot accumulators.
* **cube fractals**: ``tl.dot``'s m, n, k are multiples of the cube fractal
  (16, k 32 for int8).

Not constraints (preferences, in :mod:`tiletune.synthesis.ascend_cost`):

* 32-byte UB alignment: a block whose contiguous bytes are not a multiple of
  32 is rounded UP to one (Triton-Ascend 3.2.0 moves the padded bytes; its
  tile generator emits such blocks, e.g. BLOCK=2461 fp32 for n=98432 on 40
  cores), so it costs bandwidth, it is not an error;
* powers of two: Triton-Ascend's ``tl.arange`` takes any extent up to
  ``TRITON_MAX_TENSOR_NUMEL`` (``triton/triton_patch/language/semantic.py``
  l.61-75, installed over ``triton.language.semantic.arange`` by
  ``triton/testing.py`` l.764; ``validate_block_shape``, ``triton/language/_utils.py``
  l.34-43, checks only the element count), so no tile size has to be one.
"""

from __future__ import annotations

from ...analysis.expr import Expr, const, emax, sym
from ..space import MULTIBUFFER
from .core import Constraint, DotTerm
from .preds import Pred

__all__ = ["access_rules", "dot_rules", "capacity_rules", "buffer_stages"]


def access_rules(b, a, d: Expr, esize: int, bound) -> None:
    """No hard per-access rule on Ascend: alignment is a cost (see the module docstring)."""


def buffer_stages(b) -> Expr:
    """Copies of a multibuffered tile in flight: ``1 + multibuffer``."""
    if MULTIBUFFER in b.names:
        return const(1) + sym(MULTIBUFFER)
    return const(1 + int(b.space.env.get(MULTIBUFFER, 0)))


def dot_rules(b, i: int, m: Expr, n: Expr, k: Expr, adt: str, bdt: str) -> None:
    """Cube fractals and the L0A/L0B operand buffers of one ``tl.dot``."""
    from .build import esize

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
    for cname, label, need, cap in (
        ("l0a", "L0A", m * k * esize(adt), t.l0a_bytes),
        ("l0b", "L0B", k * n * esize(bdt), t.l0b_bytes),
    ):
        if cap:
            text = f"{label}: tl.dot operand {need} B <= {cap} B per cube core"
            b.add(Constraint.within(f"{cname}:dot{i}", "capacity", need, cap, text, label))


def capacity_rules(b, foot: dict[str, Expr], dots: list[DotTerm], tile_numels: list[Expr]) -> None:
    """UB (with multibuffer), L1 and L0C."""
    t = b.target
    stages = buffer_stages(b)
    if "live_bytes" in foot and t.ub_bytes:
        live = foot["live_bytes"]
        if dots and "dot_operand_bytes" in foot:
            vec = emax(live - foot["dot_operand_bytes"] * stages, foot.get("accumulator_bytes", const(0)))
            text = f"UB: vector tiles (live minus cube operands) {vec} <= {t.ub_bytes} B per vector core"
        else:
            vec = live
            text = (f"UB: live tiles {vec} <= {t.ub_bytes} B per vector core "
                    "(loads in loops counted 1 + multibuffer times)")
        b.add(Constraint.within("ub", "capacity", vec, t.ub_bytes, text, "UB"))
    if dots and "dot_operand_bytes" in foot and t.l1_bytes:
        need = foot["dot_operand_bytes"] * stages
        text = f"L1: cube operand tiles {need} <= {t.l1_bytes} B per cube core"
        b.add(Constraint.within("l1", "capacity", need, t.l1_bytes, text, "L1"))
    if dots and "accumulator_bytes" in foot and t.l0c_bytes:
        need = foot["accumulator_bytes"]
        text = f"L0C: accumulators {need} <= {t.l0c_bytes} B per cube core"
        b.add(Constraint.within("l0c", "capacity", need, t.l0c_bytes, text, "L0C"))
