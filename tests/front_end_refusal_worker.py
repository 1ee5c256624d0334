"""Run by tests/test_front_end_refusal_children.py in a process without TRITON_INTERPRET.

Compiles two tilings of a real kernel for sm_90 in forked compile children: one Triton's front end refuses (a
``tl.static_assert`` on a tile's shape), one it accepts.  Then, as :func:`~tiletune.runtime.parallel_compile.compiling`
does, each job goes to a compile thread that first waits for its child.  Prints JSON: what each child reported,
whether the thread's own compile ran, and what the compile queue recorded.
"""

import json
import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget

from tiletune.runtime.compile_workers import CompileSpec, FrontEndRefusal, ProcessCompiles
from tiletune.runtime.parallel_compile import CompileQueue, _from_child, _TimedPool


@triton.jit
def capped_copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.static_assert(x.shape[0] <= 256, "a tile of at most 256 elements")
    tl.store(y_ptr + offs, x, mask=mask)


def spec(block: int) -> CompileSpec:
    signature = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    attrs = {(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]}
    return CompileSpec(capped_copy, signature, {(3,): block}, attrs, {"num_warps": 4, "num_stages": 1},
                       GPUTarget("cuda", 90, 32))


def main() -> None:
    specs = {"accepted": spec(128), "refused": spec(1024)}
    queue = CompileQueue()
    ran = []  # the jobs this process compiled itself (the thread's compile, after the child's)
    with ProcessCompiles(specs, workers=2) as children:
        queue.children = children
        child = {k: {"compiled": children.wait(k) is not None, "refusal": children.refusal(k)} for k in specs}
        with _TimedPool(queue, max_workers=2) as pool:
            for k, s in specs.items():
                pool.child = lambda k=k: _from_child(children, k)
                queue.futures[k] = pool.submit(lambda k=k, s=s: (ran.append(k), s.compile())[1])
            pool.child = None
            reasons = {k: queue.wait(k) for k in specs}
            raised = {k: type(queue.futures[k].exception()).__name__ if queue.futures[k].exception() else None
                      for k in specs}
    json.dump({"child": child, "ran": ran, "reasons": reasons, "refused": queue.refused, "raised": raised,
               "refusal_type": FrontEndRefusal.__name__}, sys.stdout)


if __name__ == "__main__":
    main()
