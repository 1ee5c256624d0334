import triton
import triton.language as tl

GROUP: tl.constexpr = 8


@triton.jit
def swizzle_tile(pid, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    width = GROUP * num_n
    group = pid // width
    first_m = group * GROUP
    size_m = tl.minimum(num_m - first_m, GROUP)
    pid_m = first_m + (pid % size_m)
    pid_n = (pid % width) // size_m
    return pid_m, pid_n


@triton.jit
def scale_rows(x, FACTOR: tl.constexpr):
    return x * FACTOR
