"""Does a candidate that faults the GPU cost the search that candidate, or the process?  (GPU only.)

``python bench/fault_isolation.py`` tunes ``bench/fault_kernels.py::wild_copy``
(``configs=[]``; every candidate with BLOCK >= 512 makes an illegal memory
access) once and prints one line: the winner, how many candidates the worker
screened out, the tuning time, and whether the output is right.  With
``TILETUNE_ISOLATE_FIRST_LAUNCH=1`` the process must survive and print
``ok``; without it, the first faulting candidate kills it (CUDA error: an
illegal memory access), which ``--expect-crash`` checks from a child process.
"""

import argparse
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))


def tune_once(n: int) -> int:
    import torch
    import triton

    import tiletune
    from fault_kernels import wild_copy

    x = torch.randn(n, device="cuda")
    out = torch.zeros_like(x)
    kernel = tiletune.autotune(configs=[], key=["n"])(wild_copy)
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kernel[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, out, n)
        torch.cuda.synchronize()
    seconds = time.perf_counter() - t0
    faulted = [w for w in caught if "killed the worker process" in str(w.message)]
    right = bool(torch.equal(out, x * 2))
    print(f"winner [{kernel.best_config}]  screened out {len(faulted)}  tuned in {seconds:.2f} s  "
          f"output {'ok' if right else 'WRONG'}  isolation={os.environ.get('TILETUNE_ISOLATE_FIRST_LAUNCH', '0')}")
    from fault_kernels import FAULT_FROM

    return 0 if right and kernel.best_config.kwargs["BLOCK"] < FAULT_FROM.value else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1 << 20)
    parser.add_argument("--expect-crash", action="store_true",
                        help="run without isolation in a child and check that the fault kills it")
    args = parser.parse_args()
    if args.expect_crash:
        env = {k: v for k, v in os.environ.items() if k != "TILETUNE_ISOLATE_FIRST_LAUNCH"}
        env["TILETUNE_ALWAYS_TUNE"] = "1"
        child = subprocess.run([sys.executable, __file__, "--n", str(args.n)], env=env, capture_output=True, text=True)
        died = child.returncode != 0 and "illegal memory access" in (child.stderr + child.stdout)
        print(f"without isolation: exit {child.returncode}, {'died of the fault' if died else 'did NOT die'}")
        return 0 if died else 1
    return tune_once(args.n)


if __name__ == "__main__":
    sys.exit(main())
