"""A grouped matmul: each group's operands live at addresses read from tables and cast to a
pointer type, walked with block pointers (``tl.make_block_ptr`` and the ``.advance`` method)."""
import triton
import triton.language as tl


@triton.jit
def grouped_matmul_kernel(a_table, b_table, c_table, m, n, k, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                          BLOCK_K: tl.constexpr):
    g = tl.program_id(1)
    a_base = tl.load(a_table + g).to(tl.pointer_type(tl.float16))
    b_base = tl.load(b_table + g).to(tl.pointer_type(tl.float16))
    c_base = tl.load(c_table + g).to(tl.pointer_type(tl.float32))
    pid_m = tl.program_id(0) // tl.cdiv(n, BLOCK_N)
    pid_n = tl.program_id(0) % tl.cdiv(n, BLOCK_N)
    a_blocks = tl.make_block_ptr(a_base, (m, k), (k, 1), (pid_m * BLOCK_M, 0), (BLOCK_M, BLOCK_K), (1, 0))
    b_blocks = tl.make_block_ptr(b_base, (k, n), (n, 1), (0, pid_n * BLOCK_N), (BLOCK_K, BLOCK_N), (1, 0))
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, tl.cdiv(k, BLOCK_K)):
        a = tl.load(a_blocks, boundary_check=(0, 1))
        b = tl.load(b_blocks, boundary_check=(0, 1))
        acc += tl.dot(a, b)
        a_blocks = a_blocks.advance([0, BLOCK_K])
        b_blocks = b_blocks.advance([BLOCK_K, 0])
    c_blocks = tl.make_block_ptr(c_base, (m, n), (n, 1), (pid_m * BLOCK_M, pid_n * BLOCK_N), (BLOCK_M, BLOCK_N), (1, 0))
    tl.store(c_blocks, acc, boundary_check=(0, 1))
