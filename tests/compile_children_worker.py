"""Run by tests/test_compile_workers.py in a process without TRITON_INTERPRET.

Compiles specs of a real kernel for sm_90 in forked children
(:class:`~tiletune.runtime.compile_workers.ProcessCompiles`), then compiles
each in this process, and prints JSON: what each child reported, whether this
process' compile read the child's binary back (same hash, no new cache
entry), and the error of the spec that cannot compile.
"""

import gc
import json
import os
import sys
import time

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget

from tiletune.runtime.compile_workers import CompileSession, CompileSpec, ProcessCompiles


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


def spec(block: int, warps: int) -> CompileSpec:
    signature = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    attrs = {(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]}
    return CompileSpec(scale_kernel, signature, {(3,): block}, attrs, {"num_warps": warps, "num_stages": 1},
                       GPUTarget("cuda", 90, 32))


def main() -> None:
    cache = os.environ["TRITON_CACHE_DIR"]
    specs = {"b256w4": spec(256, 4), "b1024w8": spec(1024, 8), "twin": spec(256, 4), "bad": spec(300, 4)}
    from tiletune.runtime.parallel_compile import CompileQueue

    queue = CompileQueue()
    before_batch = queue.mark()
    entered = time.perf_counter()
    with ProcessCompiles(specs, workers=2) as children:  # children for this batch alone
        queue.children = children
        got = {k: children.wait(k) for k in specs}
        slowest = children.slowest()
    after_batch = queue.mark()
    # the batch's wall time starts once the children exist: the warm-up and the forks before it are not in it
    setup = {"warm_s": children.session.warm_s,
             "wall_after_setup": children.wall_s() <= children.last_done_at - entered - children.session.warm_s,
             "typical_within_wall": 0 < children.typical_wall_s() <= children.wall_s()}
    spans = children.spans_s()
    contention = {"during_batch": queue.contended_since(before_batch),
                  "after_batch": queue.contended_since(after_batch),
                  "busy_after": children.busy()}
    # one session's children serve a second batch (a descent round): they were forked for the first
    with CompileSession(workers=3) as session:
        with ProcessCompiles({"b256w4": spec(256, 4)}, session):
            pids = set(session.child_pids())
            forked = {"pool_sizes": list(session._sizes), "size": session.size, "children": len(pids)}
        from tiletune.runtime.compile_workers import _frozen_in_child, _warmed_in_child

        frozen = session.pool.submit(_frozen_in_child).result()
        warmed = session.pool.submit(_warmed_in_child).result()
        heap_during = gc.get_freeze_count()
        with ProcessCompiles({"b512w2": spec(512, 2)}, session) as second:
            got["b512w2"] = second.wait("b512w2")
            same_children = set(session.child_pids()) == pids
        # a batch larger than the first child pool is spread over both pools, by their free children
        with ProcessCompiles({"w1": spec(64, 1), "w2": spec(128, 2), "w4": spec(128, 4)}, session) as third:
            spread = {"compiled": all(third.wait(k) is not None for k in ("w1", "w2", "w4")),
                      "dispatched": list(session.dispatched)}
    heap_after = gc.get_freeze_count()
    # a program that froze its heap itself: a session neither freezes nor unfreezes it
    gc.freeze()
    program_frozen = gc.get_freeze_count()
    with CompileSession(workers=1) as session:
        with ProcessCompiles({"b256w4": spec(256, 4)}, session):
            pass
    program_after = gc.get_freeze_count()
    gc.unfreeze()
    specs["b512w2"] = spec(512, 2)
    before = set(os.listdir(cache))
    out = {"children": {k: (None if v is None else {"cpu_s": v[0], "hash": v[1]}) for k, v in got.items()},
           "second_batch_same_children": same_children, "forked": forked, "spread": spread,
           "child_frozen_objects": frozen, "contention": contention,
           "spans": spans, "setup": setup, "slowest": [slowest[0], slowest[1]] if slowest else None,
           "child_warmed": {k: v is not None for k, v in warmed.items()},
           "heap": {"during": heap_during, "after": heap_after, "program_frozen": program_frozen,
                    "program_after": program_after}}
    for k, s in specs.items():
        try:
            kernel = s.compile()
            out[k] = {"hash": kernel.hash}
        except Exception as exc:
            out[k] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    out["new_cache_entries"] = sorted(set(os.listdir(cache)) - before)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
