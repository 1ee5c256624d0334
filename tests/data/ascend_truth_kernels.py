"""Kernels of the Ascend labelled set (``tests/data/ascend_truth.json``), written for tiletune.

Each one follows the structure of a kernel that a public source reports as
running or failing on Ascend 910B (the source is cited in the JSON entry and
next to the kernel): same loads, stores, loops and element types, so the UB
model sees the same live tiles.  Data for the analyser: never imported by it.
"""

import triton
import triton.language as tl


@triton.jit
def masked_fill_one_block(inp, fill_mask, value, out, N, BLOCK_SIZE: tl.constexpr):
    """One block, no loop: Triton-Ascend migration guide (docs/en/migration_guide/migrate_from_gpu.md,
    'Handling the Compound Issue: coreDim + UB Overflow'): UB overflow at BLOCK_SIZE=32768."""
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    in_range = offs < N
    fill = tl.load(fill_mask + offs, mask=in_range, other=0).to(tl.int1)
    keep = tl.load(inp + offs, mask=(~fill) & in_range, other=0)
    tl.store(out + offs, keep, (~fill) & in_range)
    tl.store(out + offs, value, fill & in_range)


@triton.jit
def masked_fill_sub_blocks(inp, fill_mask, value, out, N, BLOCK_SIZE: tl.constexpr, BLOCK_SIZE_SUB: tl.constexpr):
    """The guide's fix: a loop over BLOCK_SIZE_SUB pieces (runs at BLOCK_SIZE=32768, BLOCK_SIZE_SUB=1024)."""
    pid = tl.program_id(axis=0)
    start = pid * BLOCK_SIZE
    for j in range(tl.cdiv(BLOCK_SIZE, BLOCK_SIZE_SUB)):
        offs = start + j * BLOCK_SIZE_SUB + tl.arange(0, BLOCK_SIZE_SUB)
        in_range = offs < N
        vals = tl.load(inp + offs, mask=in_range, other=0)
        fill = tl.load(fill_mask + offs, mask=in_range, other=0).to(tl.int1)
        tl.store(out + offs, vals, mask=in_range)
        filled = tl.where(fill, tl.full([BLOCK_SIZE_SUB], value, dtype=vals.dtype), vals)
        tl.store(out + offs, filled, mask=in_range)


@triton.jit
def bias_silu_rows(io_ptr, bias_ptr, y0_numel, x1_numel, Y0BLOCK: tl.constexpr, Y0BLOCK_SUB: tl.constexpr,
                   X1BLOCK_SUB: tl.constexpr):
    """Inductor-style bias + SiLU over rows of 16384 (Ascend/pytorch issue #102, HSTU addmm_silu):
    'ub overflow' on Ascend910B3 at Y0BLOCK=48, Y0BLOCK_SUB=1, X1BLOCK_SUB=16384, bf16."""
    y0_offset = tl.program_id(0) * Y0BLOCK
    base_y0 = tl.arange(0, Y0BLOCK_SUB)
    base_x1 = tl.arange(0, X1BLOCK_SUB)
    loops_y0 = (Y0BLOCK + Y0BLOCK_SUB - 1) // Y0BLOCK_SUB
    loops_x1 = (x1_numel + X1BLOCK_SUB - 1) // X1BLOCK_SUB
    for ly in range(loops_y0):
        y0 = y0_offset + ly * Y0BLOCK_SUB + base_y0[:, None]
        y0_mask = y0 < y0_numel
        for lx in range(loops_x1):
            x1 = lx * X1BLOCK_SUB + base_x1[None, :]
            x1_mask = x1 < x1_numel
            a = tl.load(io_ptr + (x1 + 16384 * y0), x1_mask & y0_mask).to(tl.float32)
            b = tl.load(bias_ptr + x1, x1_mask).to(tl.float32)
            s = a + b
            out = s * tl.sigmoid(s)
            tl.store(io_ptr + (x1 + 16384 * y0), out, x1_mask & y0_mask)


@triton.jit
def state_copy_h_blocks(dst_ptr, src_ptr, src_rows, dst_rows, n_layers, layer_stride, h_dim, dim_v, dim_k,
                        H_BLOCK: tl.constexpr, BLOCK_V: tl.constexpr, BLOCK_K: tl.constexpr):
    """Copy one [h, v, k] state per program and layer, H_BLOCK heads at a time, all of v and k in one tile
    (the structure of sgl-kernel-npu's move_cache_dynamic_last_kernel_h_block before its fix)."""
    i = tl.program_id(0)
    src_row = tl.load(src_rows + i)
    dst_row = tl.load(dst_rows + i)
    hs = tl.arange(0, H_BLOCK)
    vs = tl.arange(0, BLOCK_V)
    ks = tl.arange(0, BLOCK_K)
    for layer in range(n_layers):
        src = src_ptr + layer * layer_stride + src_row * h_dim * dim_v * dim_k
        dst = dst_ptr + layer * layer_stride + dst_row * h_dim * dim_v * dim_k
        for h0 in range(0, h_dim, H_BLOCK):
            h = h0 + hs
            mask = (h < h_dim)[:, None, None] & (vs < dim_v)[None, :, None] & (ks < dim_k)[None, None, :]
            offs = h[:, None, None] * dim_v * dim_k + vs[None, :, None] * dim_k + ks[None, None, :]
            block = tl.load(src + offs, mask=mask, other=0)
            tl.store(dst + offs, block, mask=mask)


@triton.jit
def atomic_and_one_block(in_ptr0, out_ptr0, n_elements, BLOCK_SIZE: tl.constexpr, BLOCK_NUM: tl.constexpr):
    """One load tile of BLOCK_SIZE elements and an atomic AND of it into the output, per program (the
    structure of Triton-Ascend's CI test ``test_atomic_and_ub_overflow``,
    third_party/ascend/unittest/generalization_cases/test_atomic_and.py, which expects this to fail to
    compile with 'ub overflow' at BLOCK_SIZE = 10 x 50 x 1000 for int8 to int64)."""
    in_offset = tl.program_id(0) * BLOCK_SIZE
    out_offset = (tl.program_id(0) % BLOCK_NUM) * BLOCK_SIZE
    in_index = in_offset + tl.arange(0, BLOCK_SIZE)
    out_index = out_offset + tl.arange(0, BLOCK_SIZE)
    in_range = in_index < n_elements
    tile = tl.load(in_ptr0 + in_index, in_range)
    tl.atomic_and(out_ptr0 + out_index, tile, in_range)


@triton.jit
def matmul_rows_of_tasks(mat_a, mat_b, mat_c, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                         num_cores: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                         BLOCK_K: tl.constexpr, BLOCK_TRESHHOLD: tl.constexpr):
    """A K-loop matmul over output blocks taken in turn by each core, bf16 in, fp32 accumulator, bf16 out
    (the structure of the sequential branch of Triton-Ascend's tutorial
    third_party/ascend/tutorials/13-matrix-multiplication-optimized.py; its diagonal branch loads and
    accumulates the same tiles in another order, and its ``tl.compile_hint(..., "dot_pad_only_k")`` on the
    operands is a hint that allocates nothing, so both are left out)."""
    pid = tl.program_id(axis=0)
    NUM_BLOCKS_M = triton.cdiv(M, BLOCK_M)
    NUM_BLOCKS_N = triton.cdiv(N, BLOCK_N)
    NUM_BLOCKS = NUM_BLOCKS_M * NUM_BLOCKS_N
    for block_idx in range(pid, NUM_BLOCKS, num_cores):
        m_start = (block_idx // NUM_BLOCKS_N) * BLOCK_M
        n_start = (block_idx % NUM_BLOCKS_N) * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k_start in range(0, K, BLOCK_K):
            rows = m_start + tl.arange(0, BLOCK_M)
            cols = n_start + tl.arange(0, BLOCK_N)
            ks = k_start + tl.arange(0, BLOCK_K)
            a = tl.load(mat_a + (rows * K)[:, None] + ks[None, :], mask=(rows < M)[:, None] & (ks < K)[None, :],
                        other=0.0)
            b = tl.load(mat_b + (ks * N)[:, None] + cols[None, :], mask=(ks < K)[:, None] & (cols < N)[None, :],
                        other=0.0)
            acc = tl.dot(a, b, acc)
        rows = m_start + tl.arange(0, BLOCK_M)
        cols = n_start + tl.arange(0, BLOCK_N)
        tl.store(mat_c + (rows * N)[:, None] + cols[None, :], acc.to(tl.bfloat16),
                 mask=(rows < M)[:, None] & (cols < N)[None, :])
