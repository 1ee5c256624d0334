#!/usr/bin/env bash
# The measured search's full H100 run (issue 11; bench/results/gpu_bench_search.md), one command:
#   bash bench/gpu_bench_search.sh OUT_DIR
# Four gpu_bench.py calls (42 fixture x shape pairs, default search, the committed exhaustive
# screenings reused), each under 10 minutes, then their merge into OUT_DIR/gpu_bench.{json,md}
# (about 400 s on one H100).  On the lent device machines run it as one call after
# `. bench/device_env.sh`, with OUT_DIR under $OUT.  GPU_BENCH_ARGS adds arguments to every call
# (GPU_BENCH_ARGS=--dry-run checks the plumbing on a CPU).
set -euo pipefail
out=${1:?usage: bash bench/gpu_bench_search.sh OUT_DIR}
cd "$(dirname "$0")/.."
py=${PYTHON:-python3}
extra=${GPU_BENCH_ARGS:-}
reuse=$(ls bench/results/gpu_bench_search_{r1,r2b,r3c,r4b,s16a,s16b,s16c,s16d,s16e}.json)
parts=$(mktemp -d)
# shellcheck disable=SC2086  # $reuse and $extra are lists of words
$py bench/gpu_bench.py --out "$parts/a" --parts tune --exhaustive-from $reuse $extra --budget-s 330 \
    --fixtures int8_gemv,sum_axis,softmax,vector_add,rms_norm,transpose,cross_entropy
$py bench/gpu_bench.py --out "$parts/b" --parts tune --exhaustive-from $reuse $extra --budget-s 100 --fixtures matmul --shapes 1,3,4
$py bench/gpu_bench.py --out "$parts/c" --parts tune --exhaustive-from $reuse $extra --budget-s 100 --fixtures layer_norm --shapes 0,2,4
$py bench/gpu_bench.py --out "$parts/d" --parts tune --exhaustive-from $reuse $extra --budget-s 100 --fixtures batched_matmul --shapes 3
$py bench/gpu_bench.py --merge "$parts"/{a,b,c,d}/gpu_bench.json --out "$out"
