"""The cost model: a predicted time for every feasible point, and the top-K with variety.

All terms are computed with NumPy over every feasible point at once.  For a
point with ``P`` programs on a target with ``C`` cores (SMs; Ascend cube
cores for kernels with ``tl.dot``, vector cores otherwise):

``bytes``
    sum over memory accesses of tile bytes x trips x ``P`` -- re-reads
    included (a tile of A loaded by every program of a row counts every time).
    Tile dimensions that are a tiling parameter with a runtime bound are
    clipped to it (masked lanes move no data).  Each access is weighted by a
    transaction factor ``1 + 0.5 (1 - min(1, c / line))`` where ``c`` is the
    contiguous run in bytes (``line`` 128 B on NVIDIA, 512 B on Ascend).
``flops``
    sum over ``tl.dot`` of ``2 m n k`` x trips x ``P``.
``unique_bytes``
    ``bytes`` less re-reads: a load whose tile shape no parallel parameter
    sizes (B in ``A @ B`` along M, K/V in attention) is the same tile for
    ``cdiv(bound, BLOCK)`` programs, so it is divided by that count.
``t_memory = max(unique_bytes / bandwidth, bytes / l2_bandwidth) / eff_latency``
    DRAM moves every byte once; re-reads come from L2 (``l2_bandwidth``,
    :data:`L2_OVER_DRAM` x DRAM by default: 4 on NVIDIA, 2.5 on Ascend).
    ``eff_latency = min(1, in_flight / (bandwidth x latency))`` with
    ``in_flight = min(P, C x resident) x bytes loaded per iteration x depth``
    (Little's law; depth = ``num_stages - 1`` for loads in loops, the
    multibuffer depth on Ascend).  Penalises tiny tiles.
``t_compute = flops / (peak[dtype] x eff_mma)``
    ``eff_mma`` is 0.6 on sm_90 when the tile cannot use wgmma (``m < 64`` or
    fewer than 4 warps), else 1.
``roofline = max(t_memory, t_compute)``
``waves = ceil(P / C) / (P / C)``
    wave quantisation of ``t_compute`` from one wave on; below one wave
    ``t_compute`` is scaled by ``C / P`` (idle cores).  ``t_memory`` is
    scaled by :func:`memory_wave_factor`: full waves at full bandwidth, the
    tail wave's ``P mod C`` programs at ``f(tail / C)`` of it, with
    ``f(x) = (1 - exp(-a x)) / (1 - exp(-a))``, ``a`` = :data:`BW_SATURATION`
    (one SM can pull several times its fair share of DRAM bandwidth, and the
    share falls off smoothly as more SMs compete for it).
``stage``
    1.35 / 1.1 / 1.0 for ``num_stages`` 1 / 2 / >= 3 when a ``tl.dot`` is in
    a loop (no overlap of loads and MMA); 1 for loops of loads only on NVIDIA
    (Triton pipelines only what a loop's dot reaches, so ``num_stages`` is
    not even searched there: ``families/nvidia.py``'s ``stages_matter``); on
    Ascend 1.2 without multibuffer for loops of loads; 1 when the loop runs
    once (nothing to pipeline).  The share of the dot's
    operand bytes Triton does not pipeline (``unstaged_bytes``, an odd fp16
    row stride) counts one iteration in flight whatever ``num_stages`` (and,
    with weights now 0, stays at the one-stage factor and pays its latency
    per iteration: :data:`UNSTAGED_STAGE`, :data:`UNSTAGED_LATENCY`).
``warps``
    ``1 + w |log2(num_warps / ideal)|``; ``ideal`` = the sum of the dots'
    accumulator elements / 4096 (4..8 on sm_90, 1..8 elsewhere) with dots, else
    largest tile / :data:`ELEMENTS_PER_THREAD` / 32 (1..16); w = 0.15.
``registers``
    dots on NVIDIA: ``1 + 2 max(0, acc_regs / 255 - 0.5)`` with ``acc_regs`` the
    fp32 accumulator registers per thread of all dots (spills past half the file);
``spill``
    every NVIDIA kernel: ``1 + REG_LIVE_WEIGHT max(0, live_regs / file -
    REG_LIVE_FREE)`` with ``live_regs`` the live-tile estimate per thread (+ 32 for scalars) and
    ``file = min(255, 65536 / threads)`` (a price, not a filter: Triton compiles
    and runs what spills).
``overhead = prologues x t_wave + ceil(P / (C x resident)) x trips x t_iter``
    a prologue latency (1 us NVIDIA, 2 us Ascend), paid once when several
    programs are resident on a core (later programs start while earlier ones
    stream) and once per wave when one program runs at a time (Ascend), and
    a fixed cost per loop iteration of each resident wave (50 ns NVIDIA,
    200 ns Ascend) -- this is what makes a tiny ``BLOCK_K`` over a long
    ``K`` lose.

``cost = roofline(with waves) x stage x warps x registers x spill + overhead`` seconds.  ``resident``
(programs per SM at once) follows CUDA's occupancy rules from the thread,
register (estimated from ``live_bytes`` less what is staged in shared memory), shared-memory and block limits; it
is 1 on Ascend.

The model only ranks; the runtime benchmarks the top K.  To keep the top K
useful it keeps variety: at most 2 points per tiling (same kwargs) and at
most 4 per parallel tile (same parallel parameters and hints) before the
list is filled up in plain cost order.
"""

from __future__ import annotations


import numpy as np

from ..analysis.expr import NUM_STAGES
from ..analysis.model import Role
from .constraints import Model, evaluate
from .ascend_cost import alignment_factor, overflow_risk_factor
from .enumerate import Table
from .space import MULTIBUFFER, NUM_WARPS

__all__ = ["cost_table", "rank", "memory_wave_factor", "LATENCY_S", "WAVE_S", "BW_SATURATION", "ELEMENTS_PER_THREAD"]

LATENCY_S = {"nvidia": 0.7e-6, "ascend": 1.0e-6}  # DRAM latency to cover (Little's law)
WAVE_S = {"nvidia": 1.0e-6, "ascend": 2.0e-6}  # per resident wave of programs
ITER_S = {"nvidia": 50e-9, "ascend": 200e-9}  # fixed cost of one loop iteration (barrier, address update)
LINE_BYTES = {"nvidia": 128, "ascend": 512}
# How fast the DRAM bandwidth a partial wave reaches saturates with its share of the cores:
# f(x) = (1 - exp(-a x)) / (1 - exp(-a)) of the full bandwidth with x = busy cores / cores.
# H100 (sum_axis, M=64 rows, fp32): 2 to 16 busy SMs moved 50-90 GB/s each against a fair
# share of 23 GB/s (f'(0) = a / (1 - e^-a) = 2.7 fair shares); 64 SMs reached ~0.76 of the
# copy bandwidth (f(64/132) = 0.77).  A linear ramp clipped at 1 (the model before) called
# 86 of 132 SMs full bandwidth; int8_gemv N=11008 measured its 86-program tile 1.19x the
# best many-program one (bench/results/gpu_bench_search_default.md).
BW_SATURATION = 2.5
# Elements of the largest tile per thread where a kernel without tl.dot is best served (the
# warps term's ideal).  The exhaustive screenings of the 36 non-dot (fixture, shape) pairs on
# the H100 put the winners at a median of 16-32 (int8_gemv 32, cross_entropy 32-64, rms_norm
# 16-32); 32 lifts the model's rank of the measured best (bench/model_recall.py: geomean
# 22.3 -> 18.4 over 42 pairs, with BW_SATURATION).
ELEMENTS_PER_THREAD = 32
# Warps against the work of a program (NVIDIA).  A dot's ideal warp count gives each thread
# DOT_ACC_PER_THREAD fp32 accumulator elements (a warpgroup's wgmma m64nN: N/2 of them per thread);
# more warps than that split the tile into narrower MMA instructions (32 warps on a 128x128 tile:
# 16 rows x 32 columns a warp), fewer leave each warp more of the tile in registers.  Without dots
# the ideal is ELEMENTS_PER_THREAD of the largest tile per thread.  Each doubling away from the
# ideal costs WARP_UNDER (fewer warps) or WARP_OVER (more warps: threads with too little to do
# still pay the barriers and the reductions across warps).  The constants of this block were
# swept on the fit half of the exhaustive H100 grids and judged on the held-out half
# (bench/results/model_recall.md); a constant moves only where the fit half's top-1/top-8
# recall improves, and none did, so they keep the model's earlier values (the new forms --
# warps above and below the ideal apart, the pipeline capped by the loop's trips, a dot's own
# bandwidth saturation -- are the mechanisms, ready for data that moves them).
DOT_ACC_PER_THREAD = 128
WARP_UNDER = 0.15
WARP_OVER = 0.15
# Software pipelining of loops (NVIDIA): the factor of a loop with a tl.dot is
# 1 + STAGE_DOT x exp(-STAGE_DECAY x ahead) (a loop of loads only is not pipelined by Triton: factor 1),
# where ahead = min(num_stages - 1, trips - 1) iterations are in flight beside the current one:
# stages beyond the loop's trip count buy nothing, and a long loop gains a little from every
# further stage (1.35 / 1.1 / 1.03 / 1.01 for 1-4 stages of a dot loop).  A stage the loop
# cannot use costs STAGE_WASTE (its prologue loads and shared memory, and its compile time).
STAGE_DOT = 0.35
STAGE_DECAY = 1.25
STAGE_WASTE = 0.0
# Loads Triton does not pipeline (tiletune.analysis.footprint.pipelined: an fp16 row stride or mask bound
# that is not a multiple of 16, an 8-bit wgmma operand not K-major) are loaded, waited for and staged
# every iteration: num_stages buys them nothing.  Three forms of that, each with its weight:
# UNSTAGED_IN_FLIGHT: their bytes count one iteration in flight, not min(num_stages - 1, trips) (Little's
# law: the latency term sees them exposed); UNSTAGED_STAGE: their share of the loop's operand bytes keeps the
# one-stage factor; UNSTAGED_LATENCY: LATENCY_S per iteration of each resident wave (over the programs
# resident on an SM), which a larger BLOCK_K amortises.  Judged on the model's rank of the H100's measured
# bests at odd strides (tie-aware, bench/results/model_recall.md and docs/search.md): block_ptr_matmul
# 200x3000x1500 / matmul 96x5000x4096 / batched 5x1000x999x257 rank 406/100/25 with none of them, 353/101/25
# with the in-flight form, 442/127/33 adding the stage form, 1028/152/70 adding the latency at 1.0 (it
# favours BLOCK_K=512 tiles the H100 does not): only the in-flight form is on.
UNSTAGED_LATENCY = 0.0
UNSTAGED_STAGE = 0.0
UNSTAGED_IN_FLIGHT = 1.0
# Memory-bound dot kernels below one wave: how fast the DRAM bandwidth a partial wave reaches
# saturates with its share of the SMs (memory_wave_factor's ``a``).  A program of a dot streams
# its operands through shared memory at the pace of its MMAs, so a few busy SMs pull less than a
# streaming kernel's (BW_SATURATION).
DOT_BW_SATURATION = 2.5
# L2 bandwidth over DRAM bandwidth where the target does not give it: the price of a re-read tile (B re-read
# by every row of programs).  An effective constant (re-reads that hit L1 or a neighbour's fetch are cheaper
# still), chosen on model_recall's fit half: 2.5/3/3.5/4/4.5/5/6/10 -> fit top-1 7,7,7,7,6,6,6,6 and geomean rank
# of the measured best 27.3/27.3/26.6/25.6/24.8/22.5/22.2/22.4; 4 is the cheapest re-read that keeps the fit
# half's top-1.  It is the skinny-M pattern: at M=96..300 against wide N, 32-row tiles fill more SMs and pay
# their re-reads of B from L2 (matmul M=96's measured best 201st -> 72nd, scaled_int8_mm M=128 31st -> 9th).
L2_OVER_DRAM = {"nvidia": 4.0, "ascend": 2.5}  # Ascend keeps its earlier 2.5 (fitted on no Ascend data here)
REG_PRESSURE = 0.5  # share of the 255 registers per thread the dot accumulators may take (128x256 fp32 on 8 warps: 128)
REG_SPILL_WEIGHT = 2.0  # slowdown per unit of excess (192 accumulator registers -> x1.5)
# Spills from the live tiles (NVIDIA): registers per thread estimated from the live tiles less what is staged
# in shared memory (constraints/nvidia.py's register_bytes).  Once a filter, now a price: Triton compiles every
# config the estimate rejected (bench/results/register_oracle.md), and the estimate, which counts pointer and
# index tiles at full width, runs 1.5-2x over ptxas' count for pointer-tile matmuls (torchao's block fp8 GEMM
# at 128x128, 8 warps: 260 estimated, 170 used, no spill).  Past REG_LIVE_FREE register files the slowdown
# grows by REG_LIVE_WEIGHT per further file.  A block's threads share the SM's 65536 registers, so 16 warps get
# 128 a thread and 32 warps 64 (ptxas caps them; the old filter's per-SM limit).  Chosen on model_recall's fit
# half (FREE 0.8/1.0/1.25 x WEIGHT 0.5-4): 1.25 / 2.0 keep its top-1/top-8 at 7/13 with the lowest geomean
# rank of the measured best (27.3); a weight of 0.5 let attention's 512-row tiles on 16 warps crowd out the
# tutorial's 64/128-row tiles (test_attention_keeps_the_tutorial_tiles).
REG_LIVE_FREE = 1.25
REG_SCALARS = 32  # registers per thread beside the tiles (scalars, addresses, loop state)
REG_LIVE_WEIGHT = 2.0


def _arr(model: Model, e, env: dict, n: int) -> np.ndarray:
    v = evaluate(e, env)
    return np.broadcast_to(np.asarray(v, dtype=np.float64), (n,)).astype(np.float64)


def memory_wave_factor(programs: np.ndarray, cores: float, saturation: float = BW_SATURATION) -> np.ndarray:
    """How much longer the memory half of the roofline takes than at full bandwidth, from the program count.

    Programs run in waves of ``cores``; the full waves move their bytes at
    the full bandwidth, the tail wave's ``P mod C`` programs at ``f(tail / C)``
    of it, ``f(x) = (1 - exp(-a x)) / (1 - exp(-a))`` (``a`` = ``saturation``):
    a few busy cores each pull several times their fair share, and the
    share shrinks smoothly as more of them compete.  Below one wave that is
    ``1 / f(P / C)``; a tail of a few programs after many full waves costs
    little, a tail after one wave up to a wave.
    """
    p = np.maximum(programs, 1.0)
    full_waves = np.floor(p / cores)
    tail = p - full_waves * cores
    x = np.maximum(tail, 1e-9) / cores
    tail_bw = -np.expm1(-saturation * x) / -np.expm1(-saturation)
    return np.where(tail > 0, (full_waves * cores + tail / tail_bw) / p, 1.0)


def cost_table(model: Model, table: Table) -> dict[str, np.ndarray]:
    """Every cost term for every point of ``table`` (arrays of length ``table.n``)."""
    t = model.target
    fam = model.space.family.cost_profile  # the row of LATENCY_S, WAVE_S, ITER_S, LINE_BYTES
    family_terms = model.space.family.cost_terms  # which family-specific terms apply
    n = table.n
    env = table.env()
    for k, v in model.space.env.items():
        env.setdefault(k, v)
    one = np.ones(n, dtype=np.float64)

    programs = np.maximum(_arr(model, model.programs, env, n), 1.0)
    has_dots = bool(model.dots)
    cores = model.space.family.cost_cores(t, has_dots)

    # --- knobs ---
    if "warps_stages" in family_terms:
        warps = env.get(NUM_WARPS, 4) * one
        stages = env.get(NUM_STAGES, 1) * one
        depth_loop = np.maximum(stages - 1, 1)
    else:
        mb = env.get(MULTIBUFFER, 0) * one
        warps = one
        stages = 1 + mb
        depth_loop = stages

    # --- bytes ---
    line = LINE_BYTES[fam]
    total_bytes = np.zeros(n)
    unique_bytes = np.zeros(n)
    weighted = np.zeros(n)
    load_iter = np.zeros(n)
    for at in model.accesses:
        b = _arr(model, at.bytes, env, n)
        moved = b * _arr(model, at.trips, env, n) * programs
        total_bytes += moved
        unique_bytes += moved / np.maximum(_arr(model, at.reuse, env, n), 1.0)
        if at.contiguous_bytes is not None:
            c = _arr(model, at.contiguous_bytes, env, n)
            weighted += moved * (1.0 + 0.5 * (1.0 - np.minimum(1.0, c / line)))
        else:
            weighted += moved
        if at.kind == "load":
            # pipelining keeps depth iterations in flight, but never more than the loop has
            load_iter += b * (np.minimum(depth_loop, np.maximum(_arr(model, at.trips, env, n), 1.0)) if at.in_loop else 1.0)
    # dot operand bytes of one iteration that the pipeliner leaves alone (their share of the loop's operands)
    unstaged_frac = np.zeros(n)
    if "warps_stages" in family_terms and "unstaged_bytes" in model.footprint and "dot_operand_bytes" in model.footprint:
        unstaged = _arr(model, model.footprint["unstaged_bytes"], env, n)
        operand = _arr(model, model.footprint["dot_operand_bytes"], env, n)
        unstaged_frac = np.clip(unstaged / np.maximum(operand, 1.0), 0.0, 1.0)
        # only the current iteration of an unpipelined load is in flight
        depth_all = np.maximum(_arr(model, model.dots[0].trips, env, n), 1.0) if model.dots else one
        load_iter -= UNSTAGED_IN_FLIGHT * unstaged * np.maximum(np.minimum(depth_loop, depth_all) - 1.0, 0.0)
    # a dot loop none of whose operand loads Triton pipelines compiles to the same kernel at every num_stages
    stages_moot = np.where((unstaged_frac >= 1.0 - 1e-9) & bool(model.dots), 1.0, 0.0)
    tx = np.where(total_bytes > 0, weighted / np.maximum(total_bytes, 1.0), 1.0)
    if "ub_alignment" in family_terms:  # 32-byte rounding of unaligned UB transfers (ascend_cost.py)
        tx = tx * alignment_factor(model, env, n)

    # --- flops ---
    total_flops = np.zeros(n)
    t_compute = np.zeros(n)
    mma_eff = one.copy()
    for d in model.dots:
        fl = _arr(model, d.flops, env, n) * _arr(model, d.trips, env, n) * programs
        total_flops += fl
        rate = t.flops.get(d.dtype) or t.flops.get("fp16") or 1e14
        t_compute += fl / rate
    if has_dots and "wgmma_efficiency" in family_terms and (t.arch or 0) >= 90:
        m_dim = np.minimum.reduce([_arr(model, d.m, env, n) for d in model.dots])
        mma_eff = np.where((m_dim >= 64) & (warps >= 4), 1.0, 0.6)
    t_compute = t_compute / mma_eff

    # --- residency (programs per core at once) ---
    if "residency" in family_terms:
        threads = warps * t.warp_size
        live = _arr(model, model.footprint["register_bytes"], env, n) if "register_bytes" in model.footprint else np.zeros(n)
        shared = _arr(model, model.footprint["shared_bytes"], env, n) if "shared_bytes" in model.footprint else np.zeros(n)
        regs = np.clip(np.ceil(live / (threads * 4)) + REG_SCALARS, REG_SCALARS, t.max_registers_per_thread)
        r_thr = np.floor(t.max_threads_per_sm / threads)
        r_reg = np.floor((t.registers_per_sm or 65536) / (regs * threads))
        smem_sm = t.shared_bytes_per_sm or t.shared_bytes or 49152
        r_smem = np.where(shared > 0, np.floor(smem_sm / np.maximum(shared, 1)), t.max_blocks_per_sm)
        resident = np.clip(np.minimum(np.minimum(r_thr, r_reg), np.minimum(r_smem, t.max_blocks_per_sm)), 1, None)
    else:
        regs = np.zeros(n)
        resident = one.copy()
    # Register pressure of dot kernels: the fp32 accumulators of every tl.dot (a matmul's C;
    # attention's score tile BLOCK_M x BLOCK_N and its output BLOCK_M x HEAD_DIM, live together)
    # stay in registers for the whole loop.  They need company (operand fragments, the fp16
    # copy of the scores, addresses, masks), so past REG_PRESSURE of a thread's 255 registers
    # ptxas spills or serialises; the slowdown grows with the excess.  (The live-tile estimate
    # is too rough for this: pointer tiles make it pessimistic for plain matmuls.)
    reg_f = one.copy()
    if "register_pressure" in family_terms and has_dots and "accumulator_bytes" in model.footprint:
        acc_regs = _arr(model, model.footprint["accumulator_bytes"], env, n) / (warps * t.warp_size * 4)
        pressure = acc_regs / float(t.max_registers_per_thread or 255)
        reg_f = 1.0 + REG_SPILL_WEIGHT * np.maximum(0.0, pressure - REG_PRESSURE)
    spill_f = one.copy()
    if "register_pressure" in family_terms and "register_bytes" in model.footprint:
        live_b = _arr(model, model.footprint["register_bytes"], env, n)
        # a block's threads share one SM's file: 16 warps get 128 registers each, 32 warps 64 (ptxas caps them)
        file_regs = np.minimum(float(t.max_registers_per_thread or 255), (t.registers_per_sm or 65536) / (warps * t.warp_size))
        files = (live_b / (warps * t.warp_size * 4) + REG_SCALARS) / file_regs
        spill_f = 1.0 + REG_LIVE_WEIGHT * np.maximum(0.0, files - REG_LIVE_FREE)

    # --- memory time with latency efficiency ---
    need_in_flight = t.bandwidth * LATENCY_S[fam]
    in_flight = np.minimum(programs, cores * resident) * load_iter
    eff_lat = np.where(load_iter > 0, np.minimum(1.0, in_flight / need_in_flight), 1.0)
    eff_lat = np.maximum(eff_lat, 1e-3)
    l2 = t.l2_bandwidth or L2_OVER_DRAM[fam] * t.bandwidth
    t_memory = np.maximum(unique_bytes / t.bandwidth, total_bytes / l2) * tx / eff_lat

    # Wave quantisation.  From one full wave on, the last partial wave costs a whole wave.
    # Below one wave (P < C) the cores without a program idle, but the two halves of the
    # roofline do not suffer alike: a core's math units are its own (compute time scales by
    # C / P), whereas one SM can pull several times its fair share of DRAM bandwidth
    # (bandwidth / C), so P programs reach min(1, P x share / C) of the bandwidth.
    full = programs >= cores
    waves_f = np.where(full, np.ceil(programs / cores) / (programs / cores), cores / programs)
    mem_f = memory_wave_factor(programs, cores, DOT_BW_SATURATION if (has_dots and "dot_wave_saturation" in family_terms) else BW_SATURATION)
    roofline = np.maximum(t_memory * mem_f, t_compute * waves_f)
    # reported: the factor the roofline actually got
    waves_f = roofline / np.maximum(np.maximum(t_memory, t_compute), 1e-30)

    # --- stages ---
    loads_in_loop = any(a.in_loop and a.kind == "load" for a in model.accesses)
    dots_in_loop = any(d.in_loop for d in model.dots)
    # the longest loop's trips; a loop that runs once has nothing to pipeline
    trips = np.ones(n)
    for at in model.accesses:
        if at.in_loop:
            trips = np.maximum(trips, _arr(model, at.trips, env, n))
    stage_f = one.copy()
    if "warps_stages" in family_terms:
        ahead = np.minimum(stages - 1, trips - 1)
        wasted = np.maximum(0.0, stages - np.maximum(trips, 1.0))
        if dots_in_loop:
            share = UNSTAGED_STAGE * unstaged_frac  # the unstaged share stays at one stage's factor
            hidden = (1.0 - share) * np.exp(-STAGE_DECAY * ahead) + share
            stage_f = (1.0 + STAGE_DOT * hidden) * (1.0 + STAGE_WASTE * wasted)
    elif loads_in_loop:
        stage_f = np.where(stages <= 1, 1.2, 1.0)
    stage_f = np.where(trips <= 1, 1.0, stage_f)

    # --- warps ---
    warp_f = one.copy()
    if "warp_fit" in family_terms:
        if has_dots:
            # the accumulators of a chain of dots (attention: scores and output) are live together
            acc = np.add.reduce([_arr(model, d.mn, env, n) for d in model.dots])
            lo_w = 4 if (t.arch or 0) >= 90 else 1  # wgmma needs a warpgroup
            ideal = np.clip(acc / (DOT_ACC_PER_THREAD * t.warp_size), lo_w, 8)
        else:
            big = _arr(model, model.max_tile_numel, env, n)
            ideal = np.clip(big / (ELEMENTS_PER_THREAD * t.warp_size), 1, 16)
        steps = np.log2(warps / ideal)
        warp_f = 1.0 + np.where(steps > 0, WARP_OVER * steps, -WARP_UNDER * steps)

    # fixed costs: the first wave's prologue, and the loop's own iterations
    resident_waves = np.ceil(programs / (cores * resident))
    # With several programs resident on a core, the first wave's prologue is paid once: later
    # programs start while earlier ones still stream (their latency is the in-flight term's
    # business).  One program at a time (Ascend; NVIDIA at full shared memory) pays it per wave.
    # A loop iteration's fixed cost (barrier, address update) is paid by every resident wave.
    prologues = np.where(resident > 1, 1.0, resident_waves)
    overhead = prologues * WAVE_S[fam] + resident_waves * trips * ITER_S[fam]
    # an unpipelined operand load's latency, every iteration, shared by the programs resident on an SM
    overhead = overhead + resident_waves * trips * UNSTAGED_LATENCY * LATENCY_S[fam] * (unstaged_frac > 0) / resident
    risk_f = overflow_risk_factor(model, env, n) if "ub_overflow_risk" in family_terms else one
    slow = stage_f * warp_f * reg_f * spill_f * risk_f  # risk: estimated UB over, certain within (ascend_cost.py)
    cost = roofline * slow + overhead
    return {
        "cost": cost,
        "programs": programs,
        "bytes": total_bytes,
        "unique_bytes": unique_bytes,
        "flops": total_flops,
        "t_memory": t_memory,
        "t_compute": t_compute,
        "latency_eff": eff_lat,
        "transaction_factor": tx,
        "mma_eff": mma_eff,
        "waves_factor": waves_f,
        "stage_factor": stage_f,
        "warp_factor": warp_f,
        "register_factor": reg_f,
        "spill_factor": spill_f,
        "overflow_risk_factor": risk_f,
        "resident": resident,
        "overhead": overhead,
        "regs_per_thread": regs,
        "stages_moot": stages_moot,
    }


def rank(model: Model, table: Table, costs: dict[str, np.ndarray], top_k: int, per_tiling: int = 2, per_tile: int = 4) -> list[int]:
    """Indices of the top ``top_k`` points, best first, with variety (see module docstring)."""
    if table.n == 0 or top_k <= 0:
        return []
    sp = model.space
    tiling_vars = [v.name for v in sp.vars if v.kind in ("tile", "hint")]
    parallel = {p.name for p in sp.spec.tiling_params if p.role == Role.PARALLEL}
    tile_vars = [v.name for v in sp.vars if (v.kind == "tile" and v.name in parallel) or v.kind == "hint"]
    # deterministic order: cost, then the variables' value indices (np.lexsort: last key is primary)
    order = np.lexsort(tuple(table.idx[name] for name in reversed(sp.var_names)) + (costs["cost"],))
    chosen: list[int] = []
    per_k: dict[tuple, int] = {}
    per_t: dict[tuple, int] = {}
    tiling_cols = [table.idx[nm] for nm in tiling_vars]
    tile_cols = [table.idx[nm] for nm in tile_vars]
    # where nothing is pipelined, points that differ only in num_stages are one kernel: keep the first
    moot = costs.get("stages_moot")
    knob_cols = [table.idx[nm] for nm in sp.var_names if nm != NUM_STAGES and nm not in tiling_vars]
    seen_kernels: set = set()
    for i in order:
        i = int(i)
        k1 = tuple(int(c[i]) for c in tiling_cols)
        k2 = tuple(int(c[i]) for c in tile_cols)
        if moot is not None and moot[i] > 0:
            kernel = k1 + tuple(int(c[i]) for c in knob_cols)
            if kernel in seen_kernels:
                continue
            seen_kernels.add(kernel)
        if per_k.get(k1, 0) >= per_tiling or (tile_vars and per_t.get(k2, 0) >= per_tile):
            continue
        per_k[k1] = per_k.get(k1, 0) + 1
        per_t[k2] = per_t.get(k2, 0) + 1
        chosen.append(i)
        if len(chosen) >= top_k:
            return chosen
    taken = set(chosen)
    for i in order:
        i = int(i)
        if i not in taken:
            chosen.append(i)
            taken.add(i)
            if len(chosen) >= top_k:
                break
    # keep the final list in cost order
    position = np.empty(table.n, dtype=np.int64)
    position[order] = np.arange(table.n)
    chosen.sort(key=lambda j: int(position[j]))
    return chosen


def point_terms(costs: dict[str, np.ndarray], i: int) -> dict[str, float]:
    """The cost terms of point ``i`` as plain floats."""
    return {k: float(v[i]) for k, v in costs.items()}
