"""How candidates are screened and re-timed: the screening's budgets, the short late screening past a
search's deadline, which leaders are re-timed interleaved and in how many rounds.

Constants and small pure functions only; :mod:`~tiletune.runtime.measure` applies them.
"""

from __future__ import annotations

from typing import List, Mapping, Sequence

from . import bench as _bench

__all__ = ["RETIME_TOP", "RETIME_MAX", "RETIME_GAP", "RETIME_ROUNDS", "GRAPH_RESCREEN_GAP", "GRAPH_RESCREEN_MAX",
           "graph_rescreen_set", "SCREEN_WARMUP_MS", "SCREEN_REP_MS",
           "LATE_WARMUP_MS", "LATE_REP_MS", "OVER_SHARE", "RESCREEN_FACTOR", "retime_set", "retime_rounds"]

#: How many leading candidates are re-timed interleaved, and how many rounds
#: (``TILETUNE_RETIME_ROUNDS`` overrides; one round under the interpreter).  Beyond the leading
#: RETIME_TOP, up to RETIME_MAX are re-timed when their screening time is within RETIME_GAP of the best:
#: one screening cannot tell them apart.  Over six full H100 runs (bench/results/gpu_bench_search.md),
#: in 24 of 252 (pair, run)s the config the final interleaved timing found fastest among the search's
#: five best had screened 4th or 5th, within 7% of the best (int8_gemv 1000x1000: 6.02 us against
#: 5.86 us screened, 5.68 against 6.35 re-timed).
RETIME_TOP = 3
RETIME_MAX = 5
RETIME_GAP = 0.08
RETIME_ROUNDS = 4

#: Budgets (ms) of every measurement -- the first batch, the descent and the re-timing -- when the user
#: set none (``warmup=``/``rep=``/``do_bench=``): a tenth of ``do_bench``'s.  A search is priced in hand
#: lists (search.time_budget), so every millisecond of screening is one the descent cannot spend on
#: moves; at 10 ms a 6 us kernel still gets ~100 timed runs (do_bench clears the L2 between runs).
#: Precision comes from repetition instead: the leading RETIME_TOP are re-timed in RETIME_ROUNDS
#: interleaved rounds (A B C A B C ...), so a drift of the device's clocks moves all of them alike, and
#: each keeps the median of its times.
SCREEN_WARMUP_MS = 2.5
SCREEN_REP_MS = 10.0

#: Past the deadline, a candidate whose compile has already finished is still timed, with a short screening
#: (these budgets, a quarter of the screening's), as long as the first tune stays within OVER_SHARE over its
#: time budget (issue 25 allows 10%); a candidate still compiling is abandoned, its compile not awaited.  A
#: compile is the dear part of a candidate: one finished and never timed was paid for and tells nothing, and
#: leaves the pick to the model (H100, cold first tunes: sum_axis and int8_gemv compiled 9 and timed 1, and
#: matmul M=96 compiled 6 and timed 2, because the deadline came while the first batch compiled).  A late
#: candidate is priced by what one costs, measured on this tune: its launcher wait and agreement check (on the
#: H100 ~0.13 s, against ~0.02 s for a screening) plus a short screening, and the short re-timing that follows
#: is kept back (_Trial.may_time_late).  The leaders are re-timed interleaved afterwards, so a short screening
#: only has to rank.
LATE_WARMUP_MS = 0.5
LATE_REP_MS = 2.5
OVER_SHARE = 0.10


def retime_set(order: Sequence[int], timings: Mapping[int, float]) -> List[int]:
    """The candidates to re-time: the leading RETIME_TOP of ``order`` (fastest first), and those after
    them, up to RETIME_MAX in all, whose time is within RETIME_GAP of the fastest."""
    if not order:
        return []
    limit = timings[order[0]] * (1.0 + RETIME_GAP)
    return list(order[:RETIME_TOP]) + [i for i in order[RETIME_TOP:RETIME_MAX] if timings[i] <= limit]


#: A short kernel's screening (a flushed event pair around each call) reads 5-7% of noise at 5 us, more than
#: the gaps between its best candidates, so the leading few by screening need not hold the best.  When the
#: leaders are re-timed from CUDA graphs (bench.short_kernel_bench), every candidate the screening put within
#: GRAPH_RESCREEN_GAP of the fastest, up to GRAPH_RESCREEN_MAX of them, is first timed once from a graph (a few
#: ms each), and the re-timed leaders are chosen from those times.  H200, 2026-11-29, cold first tunes of
#: layer_norm M=1000,N=777 (4.1-4.6 us): two runs of the same commit picked 256 w4 s4 (the best known) and
#: 1024 w2 s1 (10% slower) after 19 and 17 candidates screened.
GRAPH_RESCREEN_GAP = 0.25
GRAPH_RESCREEN_MAX = 12


def graph_rescreen_set(order: Sequence[int], timings: Mapping[int, float]) -> List[int]:
    """The candidates a short kernel's re-timing times once from a CUDA graph before choosing its leaders:
    those of ``order`` (fastest first) within GRAPH_RESCREEN_GAP of the fastest, at most GRAPH_RESCREEN_MAX."""
    if not order:
        return []
    limit = timings[order[0]] * (1.0 + GRAPH_RESCREEN_GAP)
    return [i for i in order if timings[i] <= limit][:GRAPH_RESCREEN_MAX]


def retime_rounds() -> int:
    """Re-timing rounds: ``TILETUNE_RETIME_ROUNDS``, else RETIME_ROUNDS (one under the interpreter)."""
    from .env import env_int

    rounds = env_int("TILETUNE_RETIME_ROUNDS", None, minimum=0, maximum=100)
    if rounds is not None:
        return rounds
    return 1 if _bench.interpreting() else RETIME_ROUNDS


#: Candidates timed while others compiled are timed again, once nothing compiles, when within this
#: factor of the best time known (see _Trial._rescreen).  Contention can more than double a short
#: kernel's time (2.1x measured on the H100 host), so the factor leaves room for that.
RESCREEN_FACTOR = 2.5
