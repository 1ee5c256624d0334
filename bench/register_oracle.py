"""The model's register and shared-memory verdicts against Triton's own (compiled offline for sm_90, no GPU).

Triton is the oracle: every config of a grid over the matmul-family kernels (fixtures and dev-corpus
library GEMMs) is compiled with ``triton.compile(..., target=GPUTarget("cuda", 90, 32))`` in a worker
process without ``TRITON_INTERPRET``; the cubin's resource usage (``cuobjdump --dump-resource-usage``:
registers per thread, the stack frame that holds spills) and ``metadata.shared`` are read back.  For the same
config the synthesis model (target ``h100``) gives its verdicts: the register filter it applied until
it became a cost (the live-tile estimate against the register file, :func:`register_limit`) and the hard
shared-memory limit (its constraint, evaluated at the config).

    python bench/register_oracle.py                 # writes bench/results/register_oracle.{json,md}
    python bench/register_oracle.py --workers 2 --out /tmp/oracle
    python bench/register_oracle.py --render bench/results/register_oracle.json   # re-count, no compiles
    python bench/register_oracle.py --reuse bench/results/register_oracle.json     # the model now, old compiles reused
    python bench/register_oracle.py --reuse OLD.json --reuse-only                  # the same, compiling nothing new

The shared-memory count itself is compared too (equal / model over / model under the compiler's
``metadata.shared``): since issue 25 the model knows which ``tl.dot`` operand loads Triton pipelines at the
launch's strides (``tiletune.analysis.footprint.pipelined``).

Counts per kernel: *agree* (the model keeps a config that compiles within the chip, or rejects one that
does not), *false reject* (the model rejects a config Triton compiles and can launch, spilling or not) and
*false accept* (the model keeps a config Triton refuses or cannot launch: shared memory over the chip's
232448 B per block).  Spills are reported beside: a config that spills still runs, so the model prices it
(cost.py's spill term), it does not filter it.  Grid configs whose fp32 accumulators alone need more than
:data:`ACC_REGS_MAX` registers per thread are left out (they spill by construction and one compile takes
a minute or more); the report counts them.
"""

from __future__ import annotations

import argparse
import inspect
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
for _p in (ROOT, ROOT / "bench", ROOT / "tests"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

TARGET = "h100"
ARCH = 90
#: Largest fp32 accumulator registers per thread a grid config may need to be compiled (see the docstring).
ACC_REGS_MAX = 128
#: Configs compiled per kernel and per model verdict (register reject, shared reject, kept), evenly spaced
#: over the grid's order: the machine's two cores cannot compile every grid in a session.
PER_VERDICT = 12
TILES = (32, 64, 128, 256)
K_TILES = (32, 64, 128)
WARPS = (4, 8)
STAGES = (3, 5)

#: (kernel, source, shape): the matmul family of the cold bench (bench/cold_pairs.py) at its shapes.
PROBLEMS: List[Dict[str, Any]] = [
    {"kernel": "blockwise_fp8_gemm", "source": "torchao", "shape": {"M": 300, "N": 4096, "K": 4096}},
    {"kernel": "scaled_int8_mm", "source": "torchao", "shape": {"M": 128, "N": 4096, "K": 4096}},
    {"kernel": "block_ptr_matmul", "source": "fixture", "shape": {"M": 200, "N": 3000, "K": 1500}},
    {"kernel": "batched_matmul", "source": "fixture", "shape": {"B": 5, "M": 1000, "N": 999, "K": 257}},
    {"kernel": "matmul", "source": "fixture", "shape": {"M": 512, "N": 4096, "K": 11008}},
    # the two above whose shared memory the model over-counts, at sizes that are multiples of 16: Triton
    # pipelines their loads (num_stages buffers) only when it can prove 16-element row strides
    {"kernel": "block_ptr_matmul", "source": "fixture", "shape": {"M": 200, "N": 3072, "K": 1536}},
    {"kernel": "batched_matmul", "source": "fixture", "shape": {"B": 5, "M": 1000, "N": 1024, "K": 256}},
    # and the plain matmul at block_ptr_matmul's unaligned sizes: the alignment decides, not the kernel's form
    {"kernel": "matmul", "source": "fixture", "shape": {"M": 200, "N": 3000, "K": 1500}},
    # issue 25: odd strides decide which loads Triton pipelines (one shared buffer for an unpipelined operand):
    # a skinny matmul whose B row stride (N=5000) is odd and A's is not, and a kernel without dots
    {"kernel": "matmul", "source": "fixture", "shape": {"M": 96, "N": 5000, "K": 4096}},
    {"kernel": "layer_norm", "source": "fixture", "shape": {"M": 4096, "N": 1151}},
]


# ---------------------------------------------------------------- the model's side


def _jit_of(kernel: Any) -> Any:
    """The JITFunction (or the interpreter's function) under autotune/heuristics wrappers."""
    while hasattr(kernel, "fn") and not inspect.isfunction(kernel.fn):
        kernel = kernel.fn
    return kernel


def register_limit(target, num_warps: int) -> int:
    """The register filter synthesis applied until it became a cost: the live-tile estimate in bytes against
    ``min(num_warps x 32 threads x 255 registers, the SM's file less 1K)`` x 4 B."""
    per_thread = target.max_registers_per_thread * 4
    per_sm = ((target.registers_per_sm or 65536) - 1024) * 4
    return min(num_warps * target.warp_size * per_thread, per_sm)


def _grid(spec, space) -> List[Dict[str, Any]]:
    """The configs compiled: every tiling parameter over :data:`TILES` (K-like ones over :data:`K_TILES`),
    within the space's own domain, by warps and stages."""
    from tiletune.analysis.model import Role

    axes = []
    for p in spec.tiling_params:
        if not space.has_var(p.name):
            continue
        values = set(space.var(p.name).values)
        pick = K_TILES if p.role != Role.PARALLEL else TILES
        axes.append((p.name, [v for v in pick if v in values]))
    out = []
    for combo in itertools.product(*[vals for _, vals in axes], WARPS, STAGES):
        kwargs = {name: combo[i] for i, (name, _) in enumerate(axes)}
        out.append({"kwargs": kwargs, "num_warps": combo[-2], "num_stages": combo[-1]})
    return out


def model_side(pair: Dict[str, Any], grid: Optional[Any] = None, per_verdict: int = PER_VERDICT) -> Dict[str, Any]:
    """The model's verdicts on the grid of one problem (``grid(spec, space)``, default :func:`_grid`), and the
    compile jobs for it (up to ``per_verdict`` configs per model verdict, :func:`_sample`)."""
    import cold_pairs
    from model_recall import launch_grid_shapes
    from tiletune.analysis import analyze_kernel
    from tiletune.analysis.expr import NUM_STAGES, NUM_WARPS
    from tiletune.runtime.binding import synthesis_shapes, tensor_dtypes
    from tiletune.runtime.offline_compile import describe_args
    from tiletune.synthesis import required_shapes
    from tiletune.synthesis.constraints import evaluate, evaluate_pred
    from tiletune.synthesis.pipeline import build

    problem = cold_pairs.load(pair)
    kernel = problem.KERNEL
    jit = _jit_of(kernel)
    spec = analyze_kernel(kernel)
    args = problem.make_args(pair["shape"], device="meta")
    from tiletune.synthesis.alignment import alignment_shapes

    shapes = {**alignment_shapes(spec, args), **synthesis_shapes(spec.name, required_shapes(spec), args)}
    shapes.update(launch_grid_shapes(problem, args, [p.name for p in spec.tiling_params]))
    dtypes = tensor_dtypes(list(jit.arg_names), args)
    fixed = {p.name: args[p.name] for p in spec.tiling_params if p.name in args} or None
    model = build(spec, shapes, dtypes, TARGET, fixed=fixed)
    space = model.space
    heuristics = getattr(kernel, "values", None) or {}  # triton.heuristics: constexprs computed from the args
    described = describe_args({k: v for k, v in args.items()})
    rows = []
    for cfg in (grid or _grid)(spec, space):
        env = dict(space.env)
        env.update(cfg["kwargs"])
        env[NUM_WARPS] = cfg["num_warps"]
        env[NUM_STAGES] = cfg["num_stages"]
        broken = {"registers": False, "shared": False, "other": []}
        for c in model.constraints:
            if c.implicit or not c.symbols <= set(env):
                continue
            if bool(evaluate_pred(c.pred, env)):
                continue
            if c.name == "shared":
                broken["shared"] = True
            elif not c.soft:
                broken["other"].append(c.name)
        foot = {k: int(evaluate(e, env)) for k, e in model.footprint.items() if e.symbols() <= set(env)}
        threads = cfg["num_warps"] * 32
        broken["registers"] = foot.get("register_bytes", 0) > register_limit(space.target, cfg["num_warps"])
        acc_regs = foot.get("accumulator_bytes", 0) / (threads * 4)
        constexprs = {name: p.default for name, p in inspect.signature(jit.fn).parameters.items()
                      if name not in args and p.default is not inspect.Parameter.empty}
        constexprs.update(cfg["kwargs"])
        for name, fn in heuristics.items():
            constexprs[name] = fn({**args, **cfg["kwargs"]})
        rows.append({**cfg, "model": broken, "footprint": foot,
                     "model_regs_per_thread": foot.get("register_bytes", 0) / (threads * 4),
                     "acc_regs_per_thread": acc_regs, "compiled": acc_regs <= ACC_REGS_MAX, "sampled": False,
                     "job": {"file": jit.fn.__code__.co_filename, "kernel": jit.fn.__name__, "args": described,
                             "constexprs": constexprs, "num_warps": cfg["num_warps"],
                             "num_stages": cfg["num_stages"], "arch": ARCH}})
    _sample(rows, per_verdict)
    return {"pair": pair, "spec_name": spec.name, "rows": rows}


def _sample(rows: List[Dict[str, Any]], per_verdict: int = PER_VERDICT) -> None:
    """Mark up to ``per_verdict`` configs of each model verdict for compiling, evenly spaced."""
    classes: Dict[str, List[Dict[str, Any]]] = {}
    for r in rows:
        if not r["compiled"]:
            continue
        m = r["model"]
        key = "shared" if m["shared"] else "registers" if m["registers"] else "other" if m["other"] else "kept"
        classes.setdefault(key, []).append(r)
    for members in classes.values():
        step = max(1.0, len(members) / per_verdict)
        for i in range(min(per_verdict, len(members))):
            members[int(i * step)]["sampled"] = True
    for r in rows:
        r["compiled"] = r["compiled"] and r["sampled"]


# ---------------------------------------------------------------- Triton's side (worker process)

_USAGE = re.compile(r"REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)")


def _cuobjdump() -> str:
    import triton

    return os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")


def compile_one(job: Dict[str, Any]) -> Dict[str, Any]:
    """Compile one job for sm_90; registers, stack (spills), shared memory and a digest of the cubin, or the
    error."""
    from gpu_bench_lib import binary_digest
    from tiletune.runtime.offline_compile import SHARED_LIMIT, CompileJob, _load_kernel, specialize
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    j = CompileJob(**job)
    start = time.perf_counter()
    try:
        fn = _load_kernel(j.file, j.kernel)
        signature, values, attrs = specialize([(p.name, bool(p.is_constexpr)) for p in fn.params], j.args,
                                              j.constexprs)
        compiled = triton.compile(ASTSource(fn=fn, signature=signature, constexprs=values, attrs=attrs),
                                  target=GPUTarget("cuda", j.arch, 32),
                                  options={"num_warps": j.num_warps, "num_stages": j.num_stages})
    except Exception as exc:  # a refused config is data
        text = f"{type(exc).__name__}: {exc}"
        return {"ok": False, "error": text[-500:], "seconds": time.perf_counter() - start}
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(compiled.asm["cubin"])
    try:
        out = subprocess.run([_cuobjdump(), "--dump-resource-usage", f.name], capture_output=True, text=True).stdout
    finally:
        os.unlink(f.name)
    m = _USAGE.search(out)
    shared = int(compiled.metadata.shared)
    res = {"ok": True, "shared": shared, "launchable": shared <= SHARED_LIMIT[j.arch],
           "seconds": time.perf_counter() - start, "binary_digest": binary_digest(compiled)}
    if m:
        res.update(regs=int(m.group(1)), stack=int(m.group(2)), local=int(m.group(4)))
    return res


def worker_main() -> int:
    """``--worker``: JSON {"workers", "jobs"} on stdin, JSON results on stdout (jobs in order)."""
    request = json.load(sys.stdin)
    real_stdout = sys.stdout
    sys.stdout = sys.stderr
    jobs = request["jobs"]
    for j in jobs:  # import each kernel's module once before the threads
        from tiletune.runtime.offline_compile import _load_kernel

        _load_kernel(j["file"], j["kernel"])
    with ThreadPoolExecutor(max_workers=max(1, int(request.get("workers") or 1))) as pool:
        results = list(pool.map(compile_one, jobs))
    sys.stdout = real_stdout
    json.dump(results, real_stdout)
    return 0


def compile_bench_main(name: str, doc: str, measure, summarise, to_markdown, argv: Optional[Sequence[str]] = None,
                       shown: Optional[int] = None) -> int:
    """The command line of an offline compile bench (``register_share.py``, ``stage_identity.py``): ``--workers``
    and ``--out``; ``measure(workers)`` gives the rows, ``summarise(rows)`` their summary, and
    ``<out>/<name>.{json,md}`` are written (``to_markdown(res)``), the report printed (its first ``shown``
    characters)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2, help="compile threads")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    opts = ap.parse_args(argv)
    import triton

    rows = measure(opts.workers)
    res = {"arch": ARCH, "triton": triton.__version__, "rows": rows, "summary": summarise(rows)}
    opts.out.mkdir(parents=True, exist_ok=True)
    (opts.out / f"{name}.json").write_text(json.dumps(res, indent=1) + "\n")
    md = to_markdown(res)
    (opts.out / f"{name}.md").write_text(md)
    print(md if shown is None else md[:shown])
    return 0


def compile_all(jobs: Sequence[Dict[str, Any]], workers: int) -> List[Dict[str, Any]]:
    """Compile ``jobs`` in a fresh process without the interpreter."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="register-oracle-")  # every compile timed, none cached
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker"],
                          input=json.dumps({"workers": workers, "jobs": list(jobs)}), capture_output=True,
                          text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"register_oracle worker failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout)


# ---------------------------------------------------------------- comparison


def verdicts(row: Dict[str, Any], register_filter: bool) -> Dict[str, Any]:
    """The model's keep/reject (with or without the register filter) against Triton's compiles-and-launches."""
    t = row["triton"]
    triton_ok = bool(t["ok"] and t.get("launchable"))
    rejected = row["model"]["shared"] or bool(row["model"]["other"]) or (register_filter and row["model"]["registers"])
    if rejected == (not triton_ok):
        return {"verdict": "agree"}
    return {"verdict": "false reject" if rejected else "false accept"}


def summarise(problems: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Counts per kernel and over all: agree / false reject / false accept, register filter on and off."""
    out: Dict[str, Any] = {}
    for mode, reg in (("register_filter", True), ("register_cost", False)):
        total = {"agree": 0, "false reject": 0, "false accept": 0}
        per: Dict[str, Dict[str, int]] = {}
        for p in problems:
            counts = {"agree": 0, "false reject": 0, "false accept": 0}
            for r in p["rows"]:
                if not r["compiled"]:
                    continue
                counts[verdicts(r, reg)["verdict"]] += 1
            per[_name(p["pair"])] = counts
            for k, v in counts.items():
                total[k] += v
        out[mode] = {"per_kernel": per, "all": total}
    compiled = [r for p in problems for r in p["rows"] if r["compiled"]]
    spilled = [r for r in compiled if r["triton"].get("ok") and r["triton"].get("stack", 0) > 0]
    reg_rejects = [r for r in compiled if r["model"]["registers"]]
    out["compiled"] = len(compiled)
    out["skipped_accumulators"] = sum(1 for p in problems for r in p["rows"] if r["acc_regs_per_thread"] > ACC_REGS_MAX)
    out["not_sampled"] = sum(1 for p in problems for r in p["rows"]
                             if r["acc_regs_per_thread"] <= ACC_REGS_MAX and not r["sampled"])
    out["spilled"] = len(spilled)
    out["register_rejects"] = len(reg_rejects)
    out["register_rejects_spilling"] = sum(1 for r in reg_rejects if r["triton"].get("stack", 0) > 0)
    out["spilling_kept_by_register_filter"] = sum(1 for r in spilled if not r["model"]["registers"])
    ok = [r for r in compiled if r["triton"].get("ok")]
    out["spill_price"] = {f"{'priced' if spill_files(r) > _free() else 'free'} / "
                          f"{'spills' if r['triton'].get('stack', 0) > 0 else 'no spill'}":
                          0 for r in ok}
    for r in ok:
        key = (f"{'priced' if spill_files(r) > _free() else 'free'} / "
               f"{'spills' if r['triton'].get('stack', 0) > 0 else 'no spill'}")
        out["spill_price"][key] += 1
    # the shared-memory count itself: the model's figure against the compiler's, config by config
    shared = {"equal": 0, "model over": 0, "model under": 0}
    for r in ok:
        model, got = r.get("footprint", {}).get("shared_bytes"), r["triton"].get("shared")
        if model is not None and got is not None:
            shared["equal" if model == got else "model over" if model > got else "model under"] += 1
    out["shared_count"] = shared
    return out


def _free() -> float:
    from tiletune.synthesis.cost import REG_LIVE_FREE

    return REG_LIVE_FREE


def spill_files(row: Dict[str, Any]) -> float:
    """The cost model's register files a config needs (cost.py's spill term): live-tile registers per thread
    plus scalars, over a thread's share of the file; above ``REG_LIVE_FREE`` it is priced."""
    from tiletune.synthesis.cost import REG_SCALARS

    threads = row["num_warps"] * 32
    share = min(255.0, 65536.0 / threads)
    return (row["footprint"].get("register_bytes", 0) / (threads * 4) + REG_SCALARS) / share


def _name(pair: Dict[str, Any]) -> str:
    """``kernel@size=value,...``: one problem of :data:`PROBLEMS`."""
    return pair["kernel"] + "@" + ",".join(f"{a}={b}" for a, b in pair["shape"].items())


def _cfg_label(r: Dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in r["kwargs"].items()) + f" w{r['num_warps']} s{r['num_stages']}"


def to_markdown(res: Dict[str, Any]) -> str:
    """The report."""
    s = res["summary"]
    lines = ["# The model's register and shared-memory verdicts against Triton (bench/register_oracle.py)", "",
             f"Each config compiled offline for sm_{ARCH} (Triton {res['triton']}); registers and spills from the "
             "cubin (cuobjdump), shared memory from the metadata; a config Triton compiles with shared memory "
             "within 232448 B per block can launch. Model: target h100, the verdicts of synthesis's constraints.",
             "",
             f"- configs compiled: {s['compiled']} (left out: {s['skipped_accumulators']} whose fp32 accumulators "
             f"alone need > {ACC_REGS_MAX} registers per thread; not sampled: {s['not_sampled']}, at most "
             f"{PER_VERDICT} configs per kernel and model verdict are compiled); spilled (stack frame > 0): "
             f"{s['spilled']}",
             "- shared bytes, the model's count against the compiler's (compiled configs): "
             + ", ".join(f"{k}: {v}" for k, v in s.get("shared_count", {}).items()),
             f"- rejected by the register estimate: {s['register_rejects']}, of which Triton spills "
             f"{s['register_rejects_spilling']} (all of them compile); spilling configs the estimate let through: "
             f"{s['spilling_kept_by_register_filter']}",
             "- the spill price now (cost.py: live-tile registers + 32 over a thread's share of the file, "
             "priced above REG_LIVE_FREE files) against ptxas' spills, compiled configs: "
             + ", ".join(f"{k}: {v}" for k, v in sorted(s["spill_price"].items())),
             "", "| kernel | shape | register estimate as a filter: agree / false reject / false accept "
             "| as a cost (shared memory the only filter): agree / false reject / false accept |",
             "|---|---|---|---|"]
    for p in res["problems"]:
        k = p["pair"]["kernel"]
        shape = ",".join(f"{a}={b}" for a, b in p["pair"]["shape"].items())
        a = s["register_filter"]["per_kernel"][_name(p["pair"])]
        b = s["register_cost"]["per_kernel"][_name(p["pair"])]
        lines.append(f"| {k} | {shape} | {a['agree']} / {a['false reject']} / {a['false accept']} | "
                     f"{b['agree']} / {b['false reject']} / {b['false accept']} |")
    a, b = s["register_filter"]["all"], s["register_cost"]["all"]
    lines.append(f"| all | | {a['agree']} / {a['false reject']} / {a['false accept']} | "
                 f"{b['agree']} / {b['false reject']} / {b['false accept']} |")
    lines += ["", "Per config (compiled ones): the model's register estimate and the accumulators' share against "
              "ptxas' count.", "",
              "| kernel | config | model regs/thread (estimate) | accumulator regs | model: registers / shared "
              "| Triton regs | stack (spill) B | shared B | launchable | compile s |",
              "|---|---|---:|---:|---|---:|---:|---:|---|---:|"]
    for p in res["problems"]:
        for r in p["rows"]:
            if not r["compiled"]:
                continue
            t = r["triton"]
            mv = f"{'reject' if r['model']['registers'] else 'keep'} / {'reject' if r['model']['shared'] else 'keep'}"
            if t.get("ok"):
                lines.append(f"| {_name(p['pair'])} | {_cfg_label(r)} | {r['model_regs_per_thread']:.0f} | "
                             f"{r['acc_regs_per_thread']:.0f} | {mv} | {t.get('regs', '-')} | {t.get('stack', '-')} | "
                             f"{t['shared']} | {'yes' if t['launchable'] else 'no'} | {t['seconds']:.1f} |")
            else:
                lines.append(f"| {_name(p['pair'])} | {_cfg_label(r)} | {r['model_regs_per_thread']:.0f} | "
                             f"{r['acc_regs_per_thread']:.0f} | {mv} | refused: {t['error'][:80]} | | | no | "
                             f"{t['seconds']:.1f} |")
    return "\n".join(lines) + "\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command line: see the module docstring."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--workers", type=int, default=2, help="compile threads")
    ap.add_argument("--kernels", nargs="*", default=None, help="only these kernels of PROBLEMS")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    ap.add_argument("--reuse", type=Path, default=None,
                    help="a previous run's JSON: its configs are compiled again (same problem and config: its "
                         "Triton result is reused, no compile), besides this run's sample")
    ap.add_argument("--reuse-only", action="store_true",
                    help="with --reuse: compile nothing, count only the configs the previous run compiled")
    ap.add_argument("--render", type=Path, default=None,
                    help="re-count and re-write the report from this script's JSON (no compiles)")
    opts = ap.parse_args(argv)
    if opts.worker:
        return worker_main()
    if opts.render is not None:
        res = json.loads(opts.render.read_text())
        res["summary"] = summarise(res["problems"])
        return _write(res, opts.out)
    import triton

    problems = [model_side(p) for p in PROBLEMS if not opts.kernels or p["kernel"] in opts.kernels]
    done = _previous(opts.reuse) if opts.reuse is not None else {}
    for p in problems:
        for r in p["rows"]:
            old = done.get((_name(p["pair"]), _cfg_label(r)))
            if old is not None:
                r["compiled"] = r["sampled"] = True
                r["triton"] = old
    if opts.reuse_only:
        for p in problems:
            for r in p["rows"]:
                r["compiled"] = r["compiled"] and "triton" in r
    jobs = [(p, r) for p in problems for r in p["rows"] if r["compiled"] and "triton" not in r]
    # the cheapest first in the log; results land in job order either way
    results = compile_all([r["job"] for _, r in jobs], opts.workers)
    for (_, r), t in zip(jobs, results):
        r["triton"] = t
    for p in problems:
        for r in p["rows"]:
            r.pop("job", None)
            r.setdefault("triton", {"ok": None})
    res = {"target": TARGET, "arch": ARCH, "triton": triton.__version__, "problems": problems,
           "summary": summarise(problems)}
    return _write(res, opts.out)


def _previous(path: Path) -> Dict[Any, Dict[str, Any]]:
    """(problem, config label) -> Triton's result, for every config compiled in a previous run's JSON."""
    res = json.loads(path.read_text())
    out = {}
    for p in res["problems"]:
        for r in p["rows"]:
            if r.get("compiled") and r.get("triton", {}).get("ok") is not None:
                out[(_name(p["pair"]), _cfg_label(r))] = r["triton"]
    return out


def _write(res: Dict[str, Any], out: Path) -> int:
    """``register_oracle.json`` and ``.md`` under ``out``; the markdown printed."""
    out.mkdir(parents=True, exist_ok=True)
    for p in res["problems"]:  # configs not compiled keep only what the counts read
        for r in p["rows"]:
            if not r["compiled"]:
                for key in ("footprint", "model_regs_per_thread", "triton"):
                    r.pop(key, None)
    (out / "register_oracle.json").write_text(json.dumps(res, indent=None, separators=(",", ":"))
                                              .replace('{"kwargs"', '\n{"kwargs"') + "\n")
    md = to_markdown(res)
    (out / "register_oracle.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
