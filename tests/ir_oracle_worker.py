"""Run by tests/test_triton_ir.py in a process without TRITON_INTERPRET: lowers the tests/data/ir_kernels
kernels in this process (real JITFunctions) and prints the oracle's readings as JSON."""

import json
import sys
import time

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/data")

from ir_kernels import kernels  # noqa: E402

from tiletune.runtime import ir_oracle  # noqa: E402
from tiletune.runtime.triton_ir import lower_facts, LoweringError  # noqa: E402


class _Tensor:
    """A stand-in with the two attributes argument description reads (dtype, data_ptr)."""

    def __init__(self, dtype):
        self.dtype = dtype

    def data_ptr(self):
        return 0


def main() -> None:
    import torch

    out = {}
    x = _Tensor(torch.float16)
    bound = {"x_ptr": x, "y_ptr": x, "n": 4096}
    shapes = {}
    for bt, bs in ((16, 32), (32, 32), (16, 64)):
        probe = ir_oracle.signature_of(kernels.tiled_exp_kernel, bound, {"BT": bt, "BS": bs})
        t0 = time.perf_counter()
        facts = lower_facts(kernels.tiled_exp_kernel, probe["signature"], probe["constexprs"])
        shapes[f"{bt}x{bs}"] = {"memory": [[m.kind, list(m.shape), m.dtype] for m in facts.memory],
                                "ms": (time.perf_counter() - t0) * 1e3}
    out["tiled_exp"] = shapes
    reading = ir_oracle.read_kernel(kernels.tiled_exp_kernel, bound, {"BT": 16, "BS": 32}, ["BT", "BS"])
    out["tiled_exp_tiling"] = sorted(reading.tiling)
    dot_bound = {"a_ptr": x, "b_ptr": x, "c_ptr": _Tensor(torch.float32)}
    out["dot_refused"] = ir_oracle.refused_configs(
        kernels.small_dot_kernel, dot_bound,
        [{"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16}, {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 8}])
    probe = ir_oracle.signature_of(kernels.small_dot_kernel, dot_bound, {"BLOCK_M": 64, "BLOCK_N": 32, "BLOCK_K": 16})
    d = lower_facts(kernels.small_dot_kernel, probe["signature"], probe["constexprs"]).dots[0]
    out["dot"] = [d.m, d.n, d.k, d.a_dtype]
    sum_bound = {"x_ptr": _Tensor(torch.float32), "out_ptr": _Tensor(torch.float32), "n": 4096}
    r = ir_oracle.read_kernel(kernels.looped_sum_kernel, sum_bound, {"BLOCK": 64, "CHUNK": 64}, ["BLOCK", "CHUNK"])
    out["looped"] = {"tiling": sorted(r.tiling), "trip": sorted(r.trip_count)}
    # each distinct probe of a kernel is lowered once per process; another source is another kernel
    probe = ir_oracle.signature_of(kernels.tiled_exp_kernel, bound, {"BT": 16, "BS": 128})
    first, again = ir_oracle.lower_many(kernels.tiled_exp_kernel, [probe, probe])
    other = ir_oracle.lower_many(kernels.tiled_exp_kernel, [{**probe, "constexprs": {"BT": 32, "BS": 128}}])[0]
    jf = kernels.tiled_exp_kernel
    src = jf.src
    jf._unsafe_update_src(src.replace("exp(x)", "exp(x + 1.0)"))
    try:
        edited = ir_oracle.lower_many(jf, [probe])[0]
    finally:
        jf._unsafe_update_src(src)
    out["memo"] = {"same": first is again, "other_probe": other is not first,
                   "edited_source": edited is not first and edited.memory == first.memory}
    try:
        lower_facts(kernels.small_dot_kernel, {"a_ptr": "*fp16"}, {})
        out["bad_signature"] = None
    except LoweringError as exc:
        out["bad_signature"] = str(exc)[:200]
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
