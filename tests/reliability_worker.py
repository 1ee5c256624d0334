"""A user's process for tests/test_reliability.py: tune a ``configs=[]`` kernel, launch it, report.

``python tests/reliability_worker.py SIZES...`` (with ``TRITON_INTERPRET=1``
and ``TILETUNE_CACHE_DIR`` set) launches ``add_kernel`` once per size, checks
each output against ``x + y`` and prints one JSON line: per size whether the
output was right and whether the launch was a cache hit, the cache file's
path, and every warning raised (category and text).
"""

import json
import sys
import warnings

import torch
import triton
import triton.language as tl

import tiletune


@tiletune.autotune(configs=[], key=["n"])
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def main(sizes):
    results = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in sizes:
            x = torch.arange(n, dtype=torch.float32)
            y = torch.full((n,), 0.5)
            out = torch.full((n,), float("nan"))
            add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, n)
            results[str(n)] = {"ok": bool(torch.equal(out, x + y)), "config": str(add_kernel.best_config)}
    print(json.dumps({
        "results": results,
        "cache": str(add_kernel._disk.path) if add_kernel._disk is not None else None,
        "warnings": [[w.category.__name__, str(w.message)] for w in caught],
    }))


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]])
