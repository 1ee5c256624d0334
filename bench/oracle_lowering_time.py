"""Time the run-time oracle on 36 matmul tilings in-process (no interpreter), as the candidates screen runs it.

Run: `TRITON_ALLOW_NON_CONSTEXPR_GLOBALS=1 python bench/oracle_lowering_time.py` (the test kernel reads a
module-level `GROUP: tl.constexpr = 8`, which Triton 3.6 refuses without that variable)."""
import itertools
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "data")]
from helper_pkg.kernels.matmul import matmul_kernel  # noqa: E402
from tiletune.runtime import ir_oracle  # noqa: E402
import torch  # noqa: E402

class T:
    def __init__(self, d): self.dtype = d
    def data_ptr(self): return 0

bound = {"a_ptr": T(torch.float16), "b_ptr": T(torch.float16), "c_ptr": T(torch.float16), "M": 4096, "N": 4096,
         "K": 4096, "stride_am": 4096, "stride_ak": 1, "stride_bk": 4096, "stride_bn": 1, "stride_cm": 4096, "stride_cn": 1}
configs = [{"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k} for m, n, k in itertools.product((32, 64, 128), (32, 64, 128), (16, 32, 64, 128))]
t0 = time.perf_counter(); refused = ir_oracle.refused_configs(matmul_kernel, bound, configs); t1 = time.perf_counter()
reading = ir_oracle.read_kernel(matmul_kernel, bound, configs[0], list(configs[0])); t2 = time.perf_counter()
print(f"{len(configs)} candidates lowered in {t1-t0:.2f} s ({(t1-t0)/len(configs)*1e3:.1f} ms each; first includes Triton's set-up), "
      f"{len(refused)} refused; tiling probes {t2-t1:.2f} s -> tiling {reading.tiling}, trip {reading.trip_count}")
t0 = time.perf_counter(); ir_oracle.refused_configs(matmul_kernel, bound, configs); t1 = time.perf_counter()
print(f"again (warm): {t1-t0:.2f} s, {(t1-t0)/len(configs)*1e3:.1f} ms each")
