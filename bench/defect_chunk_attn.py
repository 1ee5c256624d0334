"""Which configs of the held-out chunked-attention kernel Triton runs wrongly on this GPU (one command, GPU).

Each config of a BK x BV x num_warps x num_stages grid runs in its own process (a fault kills only that
process) at the cold bench's shape and is compared with BK=64, BV=64, 8 warps.  Writes
bench/results/defect_chunk_attn.{json,md} (or --out DIR).  The evidence behind the multi-dot rule in
tiletune/synthesis/constraints/nvidia_defects.py.

    python bench/defect_chunk_attn.py [--out DIR]
"""
import itertools, json, os, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
ROOT = Path(__file__).resolve().parents[1]
if len(sys.argv) > 1 and sys.argv[1] == "one":
    import importlib.util, torch
    cfg = json.loads(sys.argv[2])
    spec = importlib.util.spec_from_file_location("m", ROOT / "bench/holdout/chunk_attn_out.py")
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
    shape = {"BH": 32, "T": 4096, "K": 128, "V": 128, "BT": 64}
    torch.manual_seed(0)
    a = m.make_args(shape, device="cuda")
    m.launch(m.KERNEL, a, BK=cfg["BK"], BV=cfg["BV"], num_warps=cfg["w"], num_stages=cfg["s"])
    torch.cuda.synchronize()
    o1 = a["o_ptr"].float().clone()
    ref = dict(a); ref["o_ptr"] = torch.empty_like(a["o_ptr"])
    m.launch(m.KERNEL, ref, BK=64, BV=64, num_warps=8, num_stages=2)
    torch.cuda.synchronize()
    print(json.dumps({"err": (o1 - ref["o_ptr"].float()).abs().max().item()}))
    sys.exit(0)
grid = [dict(BK=bk, BV=bv, w=w, s=s) for bk, bv, w, s in itertools.product((16, 32, 64, 128), (16, 32, 64, 128), (2, 4, 8), (1, 2, 3, 4))]
def run(c):
    try:
        p = subprocess.run([sys.executable, __file__, "one", json.dumps(c)], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return c, "timeout"
    if p.returncode:
        lines = [l for l in p.stderr.splitlines() if "Error" in l or "error" in l]
        return c, "CRASH " + " | ".join(lines[-2:])[-300:]
    err = json.loads(p.stdout.strip().splitlines()[-1])["err"]
    return c, "ok" if err < 5e-2 else f"WRONG {err:.3f}"
out = Path(sys.argv[sys.argv.index("--out") + 1]) if "--out" in sys.argv else ROOT / "bench" / "results"
out.mkdir(parents=True, exist_ok=True)
with ThreadPoolExecutor(14) as ex:
    res = list(ex.map(run, grid))
bad = [(c, r) for c, r in res if r != "ok"]
import torch, triton
head = (f"{len(grid)} configs, {len(bad)} wrong or faulting (Triton {triton.__version__}, "
        f"{torch.cuda.get_device_name()}, shape BH=32 T=4096 K=128 V=128 BT=64, fp16)")
print(head)
(out / "defect_chunk_attn.json").write_text(json.dumps({"summary": head, "rows": [
    {"config": c, "verdict": r} for c, r in res]}, indent=1))
lines = ["# Configs of a three-dot kernel Triton runs wrongly (bench/defect_chunk_attn.py)", "", head, "",
         "| BK | BV | num_warps | num_stages | verdict |", "|---|---|---|---|---|"]
lines += [f"| {c['BK']} | {c['BV']} | {c['w']} | {c['s']} | {r} |" for c, r in bad]
(out / "defect_chunk_attn.md").write_text("\n".join(lines) + "\n")
for c, r in bad:
    print(c, r)
