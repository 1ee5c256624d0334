"""Distributed tuning on several GPUs: sharded tuning time, and agreement on a communicating function.

(a) **Sharded tuning.**  The matmul fixture with ``configs=[]`` (``--top-k``
    synthesized candidates, 16 by default) tuned for one shape, in fresh
    processes each time, three ways:

    * ``single``: one process, one GPU, no process group;
    * ``agreed``: ``--world`` ranks with ``pg=`` (every rank times every
      candidate, times combined: what agreement costs);
    * ``sharded``: ``--world`` ranks with ``pg=``, ``shard=True`` (each rank
      compiles and times its share; the leading three re-timed on every rank).

    The time is the wall time of the first launch (tuning included; the
    slowest rank's for a group).  A warm-up process fills Triton's compile
    cache first (``TRITON_CACHE_DIR`` under a temporary directory), so the
    three compare benchmarking, not compiling; ``--cold`` skips it.  Every
    mode has its own empty tiletune cache.

(b) **Agreement on a communicating function**: an all-gather + GEMM.  Each rank
    holds a row shard of A; ``dist.all_gather_into_tensor`` (``all_gather_single``
    where torch has it: the same op) assembles A, and the tiletune-autotuned
    matmul fixture kernel (``configs=[]``, ``pg=``) multiplies it by B.  The
    function is tuned with ``tiletune.tune.autotune(..., autotune_pg=pg)`` over
    the number of all-gather chunks.  Recorded: each rank's function config and
    kernel config (they must be equal), the error against ``torch`` and the
    time of one tuned call.

Processes are spawned here (no torchrun): ranks join through a ``file://``
init, NCCL on GPUs (``cuda:<rank>``), with NVLink multicast off
(``NCCL_NVLS_ENABLE=0``, ``TORCH_SYMM_MEM_DISABLE_MULTICAST=1``).

    python bench/dist_bench.py --out bench/results/dist            # 2 GPUs
    python bench/dist_bench.py --dry-run --out /tmp/dist            # CPU: gloo + TRITON_INTERPRET=1

Writes ``<out>/dist_bench.json`` and ``<out>/dist_bench.md`` and prints the
tables.  ``--dry-run`` checks the plumbing on a CPU with small shapes; its
times mean nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Dict, List, Optional

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SAFE_ENV = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1"}
GPU_TUNE_SHAPE = {"M": 512, "N": 4096, "K": 11008}
GPU_AG_SHAPE = {"M": 4096, "N": 4096, "K": 4096}
DRY_TUNE_SHAPE = {"M": 64, "N": 64, "K": 64}
DRY_AG_SHAPE = {"M": 64, "N": 32, "K": 32}


# =============================================================================== one rank


def _sync(dry: bool) -> None:
    if not dry:
        import torch

        torch.cuda.synchronize()


def _tuning_record(kernel_name: str) -> Optional[dict]:
    """This process's last record in the kernel's tuning log (under TILETUNE_CACHE_DIR)."""
    from tiletune.runtime.cache import cache_dir
    from tiletune.runtime.tuning_log import read_tuning_log

    for path in Path(cache_dir(), "logs").glob(f"{kernel_name}-*.jsonl"):
        mine = [r for r in read_tuning_log(path) if r.get("pid") == os.getpid()]
        if mine:
            return mine[-1]
    return None


def part_tune(opts: dict, pg: Any, rank: int) -> dict:
    """Tune the matmul fixture once (mode single / agreed / sharded); time the first launch."""
    import torch

    import fixtures
    import tiletune
    from tiletune.runtime import distributed as dd

    mm = fixtures.load("matmul")
    dry = opts["dry_run"]
    device = "cpu" if dry else f"cuda:{torch.cuda.current_device()}"
    mode = opts["mode"]
    tuned = tiletune.autotune(
        configs=[], key=mm.KEY, top_k=opts["top_k"], target="h100" if dry else None,
        pg=pg if mode in ("agreed", "sharded") else None, shard=mode == "sharded",
    )(mm.KERNEL)
    torch.manual_seed(0)
    args = mm.make_args(opts["shape"], device=device)
    dd.barrier(pg)
    _sync(dry)
    t0 = time.perf_counter()
    mm.launch(tuned, args)
    _sync(dry)
    wall = time.perf_counter() - t0
    ref = mm.reference(args)[0]
    err = float((args["c_ptr"].float() - ref).abs().max().item())
    rec = _tuning_record(tuned.kernel_name) or {}
    n_cand = len(tuned.configs_timings)  # agreed (or gathered) times of every candidate that ran
    timed_first = sum(1 for c in rec.get("candidates", []) if c.get("ms") is not None)  # timed on this rank
    return {
        "mode": mode,
        "rank": rank,
        "wall_s": wall,
        "winner": tuned.best_config.kwargs | {"num_warps": tuned.best_config.num_warps,
                                              "num_stages": tuned.best_config.num_stages},
        "candidates": n_cand,
        "benchmarked_here": timed_first,
        "max_abs_err": err,
        "method": rec.get("method"),
    }


def part_ag_gemm(opts: dict, pg: Any, rank: int, world: int) -> dict:
    """All-gather + GEMM, tuned as a function over the chunk count, the GEMM kernel with pg=."""
    import torch
    import torch.distributed as dist

    import fixtures
    import tiletune
    from tiletune.tune import autotune as tune_function

    mm = fixtures.load("matmul")
    dry = opts["dry_run"]
    device = torch.device("cpu") if dry else torch.device("cuda", torch.cuda.current_device())
    dtype = torch.float16
    shape = opts["ag_shape"]
    m, n, k = shape["M"], shape["N"], shape["K"]
    if m % world:
        raise SystemExit(f"M={m} must be a multiple of the world size {world}")
    gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
    kernel = tiletune.autotune(configs=[], key=mm.KEY, top_k=opts["ag_top_k"], target="h100" if dry else None,
                               pg=pg)(mm.KERNEL)

    def ag_gemm(a_shard: torch.Tensor, b: torch.Tensor, *, chunks: int) -> torch.Tensor:
        m_local = a_shard.shape[0]
        a_full = torch.empty(world, m_local, a_shard.shape[1], device=a_shard.device, dtype=a_shard.dtype)
        rows = torch.arange(m_local).chunk(chunks)
        for r in rows:  # chunk c gathers rows r of every rank's shard (rank-major, as one 2-D tensor)
            part = torch.empty(world * len(r), a_shard.shape[1], device=a_shard.device, dtype=a_shard.dtype)
            gather(part, a_shard[r[0]:r[-1] + 1].contiguous(), group=pg)
            a_full[:, r[0]:r[-1] + 1] = part.view(world, len(r), -1)
        a = a_full.reshape(world * m_local, -1)
        c = torch.empty(a.shape[0], b.shape[1], device=a.device, dtype=a.dtype)
        args = {
            "a_ptr": a, "b_ptr": b, "c_ptr": c, "M": a.shape[0], "N": b.shape[1], "K": a.shape[1],
            "stride_am": a.stride(0), "stride_ak": a.stride(1), "stride_bk": b.stride(0),
            "stride_bn": b.stride(1), "stride_cm": c.stride(0), "stride_cn": c.stride(1), "GROUP_SIZE_M": 8,
        }
        mm.launch(kernel, args)
        return c

    tuned = tune_function(
        config_space=[{"chunks": 1}, {"chunks": 2}, {"chunks": 4}],
        key_fn=lambda a_shard, b: (a_shard.shape, b.shape, a_shard.dtype),
        warmup=1 if dry else 3, rep=2 if dry else 10, name="dist_bench.ag_gemm",
        cache_dir=opts["cache_dir"],
    )(ag_gemm)
    gen = torch.Generator().manual_seed(1)
    a_all = torch.randn(m, k, generator=gen, dtype=torch.float32).to(dtype)
    b = torch.randn(k, n, generator=gen, dtype=torch.float32).to(dtype).to(device)
    rows = m // world
    a_shard = a_all[rank * rows:(rank + 1) * rows].to(device)
    c = tuned(a_shard, b, autotune_pg=pg)
    _sync(dry)
    ref = a_all.float() @ b.float().cpu()
    err = float((c.float().cpu() - ref).abs().max().item())
    times = []
    for _ in range(2 if dry else 20):
        _sync(dry)
        t0 = time.perf_counter()
        tuned(a_shard, b, autotune_pg=pg)
        _sync(dry)
        times.append((time.perf_counter() - t0) * 1e3)
    (fconfig,) = tuned.best_configs.values()
    best = kernel.best_config
    return {
        "rank": rank,
        "function_config": dict(fconfig),
        "kernel_config": best.kwargs | {"num_warps": best.num_warps, "num_stages": best.num_stages},
        "max_abs_err": err,
        "tolerance": mm.TOLERANCE,
        "correct": bool(torch.allclose(c.float().cpu(), ref, **mm.TOLERANCE)),
        "call_ms": statistics.median(times),
    }


def worker(argv: List[str]) -> None:
    """``--worker PART RANK WORLD INIT OUT_JSON OPTS_JSON``: run one rank and write its result."""
    part, rank, world, init, out, opts_text = argv
    rank, world = int(rank), int(world)
    opts = json.loads(opts_text)
    dry = opts["dry_run"]
    if dry:
        os.environ["TRITON_INTERPRET"] = "1"
    import torch
    import torch.distributed as dist

    pg = None
    result: Dict[str, Any]
    try:
        if not dry:
            torch.cuda.set_device(rank)
        if world > 1:
            kw = {} if dry else {"device_id": torch.device("cuda", rank)}
            dist.init_process_group("gloo" if dry else "nccl", init_method=f"file://{init}", rank=rank,
                                    world_size=world, **kw)
            pg = dist.group.WORLD
        result = part_tune(opts, pg, rank) if part == "tune" else part_ag_gemm(opts, pg, rank, world)
    except Exception as exc:
        result = {"rank": rank, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
    Path(out).write_text(json.dumps(result, indent=1))
    if pg is not None:
        dist.destroy_process_group()


# =============================================================================== the driver


def spawn(part: str, world: int, opts: dict, env: dict, work: Path, timeout: float) -> List[dict]:
    """Run ``world`` fresh rank processes of ``part``; their results in rank order."""
    tag = f"{part}-{opts.get('mode', 'ag')}-{time.monotonic_ns()}"
    init = work / f"{tag}.init"
    outs = [work / f"{tag}.rank{r}.json" for r in range(world)]
    procs = [
        subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--worker", part, str(r), str(world), str(init),
             str(outs[r]), json.dumps(opts)],
            cwd=str(ROOT), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        for r in range(world)
    ]
    deadline = time.monotonic() + timeout
    logs = []
    for p in procs:
        try:
            logs.append(p.communicate(timeout=max(1.0, deadline - time.monotonic()))[0])
        except subprocess.TimeoutExpired:
            for q in procs:
                if q.poll() is None:
                    q.kill()
                    q.wait()
            raise SystemExit(f"{tag}: a rank did not finish in {timeout:.0f} s (hang?)")
    results = []
    for r, p in enumerate(procs):
        if p.returncode != 0 or not outs[r].exists():
            raise SystemExit(f"{tag}: rank {r} crashed (rc={p.returncode}):\n{logs[r]}")
        res = json.loads(outs[r].read_text())
        if "error" in res:
            raise SystemExit(f"{tag}: rank {r} failed: {res['error']}\n{res.get('traceback', '')}")
        results.append(res)
    return results


def markdown(report: dict) -> str:
    lines = [
        "# Distributed tuning benchmark (`bench/dist_bench.py`)",
        "",
        f"Device: {report['device']}; world size {report['world']}; backend {report['backend']}; "
        f"torch {report['torch']}, triton {report['triton']}."
        + (" **Dry run (CPU, gloo, TRITON_INTERPRET=1): times mean nothing.**" if report["dry_run"] else ""),
        "",
        f"## (a) Tuning the matmul fixture, `configs=[]`, top_k {report['top_k']}, shape {report['shape']}",
        "",
        "Wall time of the first launch (tuning included; a group's slowest rank), each mode in fresh processes"
        + (" with a warm Triton compile cache." if report["warm_compile_cache"] else ", cold compile cache."),
        "",
        "| mode | ranks | candidates | benchmarked per rank | wall (s) | vs single | winner (all ranks) |",
        "|---|---|---|---|---|---|---|",
    ]
    single = report["tune"]["single"]["wall_s"]
    for mode in ("single", "agreed", "sharded"):
        row = report["tune"][mode]
        speed = single / row["wall_s"] if row["wall_s"] else float("nan")
        lines.append(
            f"| {mode} | {row['ranks']} | {row['candidates']} | {row['benchmarked_per_rank']} | "
            f"{row['wall_s']:.2f} | {speed:.2f}x | {row['winner']}{'' if row['same_winner'] else ' (DIFFER)'} |"
        )
    ag = report["ag_gemm"]
    lines += [
        "",
        f"## (b) All-gather + GEMM, shape {ag['shape']} (A row-sharded over {report['world']} ranks)",
        "",
        "Function tuned with `tiletune.tune.autotune(..., autotune_pg=pg)` over the all-gather chunk count; "
        "its GEMM is the matmul fixture under `tiletune.autotune(configs=[], pg=pg)`.",
        "",
        "| rank | function config | kernel config | max abs err | correct | call (ms) |",
        "|---|---|---|---|---|---|",
    ]
    for r in ag["ranks"]:
        lines.append(f"| {r['rank']} | {r['function_config']} | {r['kernel_config']} | {r['max_abs_err']:.3g} | "
                     f"{r['correct']} | {r['call_ms']:.3f} |")
    lines += ["", f"All ranks chose the same configs: **{ag['same_configs']}**; outputs correct on every rank: "
              f"**{ag['all_correct']}**.", ""]
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "--worker":
        worker(argv[1:])
        # Skip interpreter finalisation: torch's gloo can abort at exit ("terminate called without an
        # active exception") after the work is done and the result written.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results", help="directory for the JSON and md")
    ap.add_argument("--world", type=int, default=2, help="ranks (GPUs)")
    ap.add_argument("--top-k", type=int, default=None, help="candidates for (a) (default 16; dry run 4)")
    ap.add_argument("--dry-run", action="store_true", help="CPU: gloo and TRITON_INTERPRET=1, small shapes")
    ap.add_argument("--cold", action="store_true", help="no warm-up of Triton's compile cache before (a)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per set of processes")
    args = ap.parse_args(argv)
    dry = args.dry_run
    top_k = args.top_k or (4 if dry else 16)

    env = dict(os.environ, **SAFE_ENV)
    env.pop("TILETUNE_DIST", None)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["OMP_NUM_THREADS"] = env.get("OMP_NUM_THREADS", "1")
    if dry:
        env["TRITON_INTERPRET"] = "1"
    import torch
    import triton

    if not dry and torch.cuda.device_count() < args.world:
        raise SystemExit(f"need {args.world} GPUs, found {torch.cuda.device_count()} (use --dry-run on a CPU)")
    device = "CPU (interpreter)" if dry else torch.cuda.get_device_name(0)

    with tempfile.TemporaryDirectory(prefix="tiletune-dist-bench-") as tmp:
        work = Path(tmp)
        env["TRITON_CACHE_DIR"] = str(work / "triton-cache")
        base = {"dry_run": dry, "top_k": top_k, "shape": DRY_TUNE_SHAPE if dry else GPU_TUNE_SHAPE}

        def run_mode(mode: str, world: int) -> List[dict]:
            mode_env = dict(env, TILETUNE_CACHE_DIR=str(work / f"cache-{mode}-{time.monotonic_ns()}"))
            return spawn("tune", world, {**base, "mode": mode}, mode_env, work, args.timeout)

        if not args.cold:
            print("warming Triton's compile cache (one untimed tuning)...", flush=True)
            run_mode("single", 1)
        tune: Dict[str, Any] = {}
        for mode, world in (("single", 1), ("agreed", args.world), ("sharded", args.world)):
            print(f"(a) {mode} on {world} rank(s)...", flush=True)
            ranks = run_mode(mode, world)
            winners = [json.dumps(r["winner"], sort_keys=True) for r in ranks]
            tune[mode] = {
                "ranks": world,
                "wall_s": max(r["wall_s"] for r in ranks),
                "candidates": ranks[0]["candidates"],
                "benchmarked_per_rank": [r["benchmarked_here"] for r in ranks],
                "winner": ranks[0]["winner"],
                "same_winner": len(set(winners)) == 1,
                "max_abs_err": max(r["max_abs_err"] for r in ranks),
                "per_rank": ranks,
            }
        print("(b) all-gather + GEMM...", flush=True)
        ag_opts = {"dry_run": dry, "ag_shape": DRY_AG_SHAPE if dry else GPU_AG_SHAPE, "ag_top_k": 4 if dry else 8,
                   "cache_dir": str(work / "function-cache")}
        ag_env = dict(env, TILETUNE_CACHE_DIR=str(work / "cache-ag"))
        ranks = spawn("ag_gemm", args.world, ag_opts, ag_env, work, args.timeout)
        same = len({json.dumps([r["function_config"], r["kernel_config"]], sort_keys=True) for r in ranks}) == 1
        report = {
            "dry_run": dry,
            "device": device,
            "world": args.world,
            "backend": "gloo" if dry else "nccl",
            "torch": torch.__version__,
            "triton": triton.__version__,
            "env": SAFE_ENV,
            "top_k": top_k,
            "shape": base["shape"],
            "warm_compile_cache": not args.cold,
            "tune": tune,
            "ag_gemm": {"shape": ag_opts["ag_shape"], "ranks": ranks, "same_configs": same,
                        "all_correct": all(r["correct"] for r in ranks)},
        }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "dist_bench.json").write_text(json.dumps(report, indent=1) + "\n")
    md = markdown(report)
    (args.out / "dist_bench.md").write_text(md)
    print(md)
    ok = all(t["same_winner"] for t in tune.values()) and report["ag_gemm"]["same_configs"] \
        and report["ag_gemm"]["all_correct"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
