"""tiletune's Ascend model side by side with Triton-Ascend's own tile generator.

What it does:

1. ``pip download --no-deps triton-ascend==3.2.0`` (the cp311 manylinux
   x86_64 wheel) into a temporary folder and unzips ONLY the pure-Python files
   of its tile generator -- ``triton/runtime/{tile_generator,autoparser,
   autotiling_tuner,utils}.py`` and ``triton/backends/ascend/utils.py`` -- into
   that folder.  Nothing is installed; the local Triton is untouched.
2. Loads ``utils.py``, ``autoparser.py`` and ``tile_generator.py`` by path
   under a private package name.  Only the device query is stubbed: a
   ``driver`` whose ``get_current_target().arch`` is the chip's SoC name and
   whose ``get_device_properties`` reports the chip's AI-core count
   (Triton-Ascend's ``utils.py`` derives ``num_vector_core`` from it).
   ``Config`` is a plain record (Triton-Ascend's ``autotuner.py`` needs the
   NPU compiler to import).
3. Runs Triton-Ascend's parsers (``SplitAxesParser``, ``TilingAxesParser``,
   ``LowDimsAxesParser``) on each kernel's source and ``TileGenerator.
   descend_split_tiling()`` at each shape, as ``AutoTilingTuner`` does for
   ``@triton.autotune(configs=[], key=[...])``.
4. For the same kernel and shape: the share of those configs that tiletune's
   model accepts (``check_config``), the share of liger-kernel's ``_ascend``
   launch-time block choices it accepts (computed below from liger's launcher
   code, transcribed with file and line), tiletune's candidate count and
   whether its top-1 lies in Triton-Ascend's set.

Writes ``bench/results/ascend_anchor.{json,md}`` and, with ``--test-data``,
``tests/data/ascend_anchor_configs.json`` (the configs, so CI checks
acceptance without the wheel).

    python bench/ascend_anchor.py [--target ascend910b3] [--wheel-dir DIR] [--test-data]
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import subprocess
import sys
import tempfile
import types
import zipfile
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import fixtures  # noqa: E402
from tests.corpus import library_root  # noqa: E402
from tests.fixture_problems import fixture_problem  # noqa: E402
from tiletune.analysis import analyze_file  # noqa: E402
from tiletune.errors import TiletuneError  # noqa: E402
from tiletune.synthesis import check_config, get_target, synthesize  # noqa: E402
from tiletune.synthesis.explain import explain_config  # noqa: E402
from tiletune.synthesis.space import dtype_bytes, normalize_dtype  # noqa: E402

WHEEL = "triton-ascend==3.2.0"
MEMBERS = (
    "triton/runtime/tile_generator.py",
    "triton/runtime/autoparser.py",
    "triton/runtime/autotiling_tuner.py",
    "triton/runtime/utils.py",
    "triton/backends/ascend/utils.py",
)
#: SoC name Triton-Ascend's driver reports (``rtGetSocVersion``) and AI-core count per target.
SOC = {
    "ascend910b1": ("Ascend910B1", 24),
    "ascend910b2": ("Ascend910B2", 24),
    "ascend910b3": ("Ascend910B3", 20),
    "ascend910b4": ("Ascend910B4", 20),
    "ascend910_93": ("Ascend910_9391", 24),
}
NEAR = 1.2  # candidates predicted within 20% of the best are the ones worth benchmarking
AXES = ["x", "y", "z", "w", "v", "t", "rx", "ry", "rz", "rw", "rv", "rt"]  # runtime/utils.py valid_axis_names


# ----- the anchor: Triton-Ascend's generator, unpacked, never installed ---------------------
def fetch_wheel(folder: Path) -> Path:
    """Download the triton-ascend wheel and unzip its pure-Python tile generator into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    wheels = sorted(folder.glob("triton_ascend-3.2.0-*.whl"))
    if not wheels:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", WHEEL, "--python-version", "3.11",
             "--only-binary=:all:", "--platform", "manylinux_2_27_x86_64", "-d", str(folder)],
            check=True, capture_output=True,
        )
        wheels = sorted(folder.glob("triton_ascend-3.2.0-*.whl"))
    out = folder / "unpacked"
    with zipfile.ZipFile(wheels[0]) as zf:
        for member in MEMBERS:
            zf.extract(member, out)
    return out


def load_generator(unpacked: Path, soc: str, aicore: int) -> dict[str, types.ModuleType]:
    """Triton-Ascend's utils, autoparser and tile_generator modules, with the device query stubbed."""
    pkg_name = f"_ta_{soc.lower()}"
    pkg = types.ModuleType(pkg_name)
    pkg.__path__ = []
    sys.modules[pkg_name] = pkg

    class _Utils:
        def get_device_properties(self, device):
            # backends/ascend/driver.py get_device_properties: num_vectorcore = num_aicore * 2
            return {"max_shared_mem": 1, "num_aicore": aicore, "num_vectorcore": 2 * aicore}

    class _Active:
        utils = _Utils()

        def get_current_target(self):
            return types.SimpleNamespace(arch=soc)

        def get_current_device(self):
            return 0

    drv = types.ModuleType(f"{pkg_name}.driver")
    drv.driver = types.SimpleNamespace(active=_Active())
    sys.modules[drv.__name__] = drv

    class Config:  # a record: autotuner.py itself needs the NPU compiler
        def __init__(self, kwargs, num_warps=None, num_stages=None, **_):
            self.kwargs, self.num_warps, self.num_stages = dict(kwargs), num_warps, num_stages

    tuner = types.ModuleType(f"{pkg_name}.autotuner")
    tuner.Config = Config
    sys.modules[tuner.__name__] = tuner
    mods = {}
    for name in ("utils", "autoparser", "tile_generator"):
        spec = importlib.util.spec_from_file_location(f"{pkg_name}.{name}", unpacked / "triton/runtime" / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)
        mods[name] = mod
    return mods


def _function_ast(path: str, name: str) -> ast.Module:
    """The kernel's ``def`` as JITFunction.parse() gives it (decorators dropped)."""
    tree = ast.parse(Path(path).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            node.decorator_list = []
            return ast.Module(body=[node], type_ignores=[])
    raise KeyError(name)


def anchor_configs(mods, path: str, kernel: str, key: list[str], shapes: dict, candidates: list[str], dtype: str):
    """Triton-Ascend's configs for a kernel, as AutoTilingTuner.run builds them; (configs, parse, error)."""
    import torch

    ap, tg = mods["autoparser"], mods["tile_generator"]
    keys = dict(zip(AXES, key))
    func = _function_ast(path, kernel)
    try:
        low = ap.LowDimsAxesParser(func, keys).parse()
        split = ap.SplitAxesParser(func, keys, list(candidates)).parse()
        rest = [c for c in candidates if c not in split.values()]
        tiling = ap.TilingAxesParser(func, keys, rest).parse()
    except (RecursionError, AttributeError, KeyError) as exc:  # its parser's own failures
        return [], {}, f"Triton-Ascend's parser fails: {type(exc).__name__}"
    rest = [c for c in rest if c not in tiling.values()]
    parse = {"split": split, "tiling": tiling, "low_dims": low}
    if rest:  # autotiling_tuner.py run(): "Missing required arguments"
        return [], parse, f"Triton-Ascend's parser finds no axis for {rest} (AutoTilingTuner raises 'Missing required arguments')"
    sizes = {axis: int(shapes[arg]) for axis, arg in keys.items()}
    tdt = getattr(torch, {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}.get(dtype, "int8"))
    tdt = {"int32": torch.int32, "int16": torch.int16, "int64": torch.int64, "fp64": torch.float64}.get(dtype, tdt)
    meta = tg.KernelMeta(sizes, split, tiling, low, tdt, False, False)
    gen = tg.TileGenerator(kernel_meta=meta)
    gen.descend_split_tiling()
    return [dict(c.kwargs) for c in gen.configs.values()], parse, None


# ----- liger-kernel's _ascend launchers, transcribed --------------------------------------
def next_pow2(n: int) -> int:
    """triton.next_power_of_2."""
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


def liger_strategy(ub_bytes: int, safety: float, dtype_size: int, mult: float, shape: tuple, dim: int = 0) -> int:
    """ub_manager.py compute_default_tiling_strategy + _default_strategy for one shape, one tiled dim."""
    bits = ub_bytes * 8
    unit = 1.0
    for i, d in enumerate(shape):
        if i != dim:
            unit *= float(d)
    per = mult * unit * dtype_size * 8
    block = int(int(bits * safety) // per)
    block = min(block, int(bits // (per * 4.0 / 3.0)))  # ub_manager.py: auto-multi-buffer 4/3
    block = max(1, block)
    safe = next_pow2(block + 1) // 2
    return max(1, min(next_pow2(shape[dim]), safe))


def _far(n_cols: int, ub: int, forward: bool) -> dict:
    """ops/fused_add_rms_norm.py get_optimal_block_size (l.509) and the launchers (l.126, l.200)."""
    if n_cols <= 2048:
        b = next_pow2(n_cols)
        return {"BLOCK_SIZE_M": 2048 // b, "BLOCK_SIZE_N": b}
    return {"BLOCK_SIZE": max(2048, liger_strategy(ub, 0.9, 4, 8.0 if forward else 12.0, (n_cols,)))}


def _flat(total: int, ub: int, mult: float, floor: int) -> dict:
    """ops/geglu.py l.93 / ops/swiglu.py l.74 get_optimal_block_size."""
    return {"BLOCK_SIZE": max(floor, liger_strategy(ub, 0.9, 4, mult, (total,)))}


def _softmax(n_cols: int) -> dict:
    """ops/softmax.py _softmax_forward (l.230)."""
    block = min(next_pow2(n_cols), 8192)
    if n_cols <= block:
        return {"BLOCK_SIZE": block, "ROWS_PER_BLOCK": next_pow2(min(8192 // block, 32))}
    return {"BLOCK_SIZE": block}


def _rms_tile(n_cols: int, ub: int) -> tuple[int, int, bool]:
    """ops/rms_norm.py _fused_tile (l.564) for the forward pass, with _safe_column_block (l.536),
    _safe_fused_rows_per_block (l.549) and the constants of l.29-33."""
    mem = 4.0 if n_cols >= 2048 else 5.0
    col = min(next_pow2(n_cols), max(128, liger_strategy(ub, 0.85, 4, mem, (n_cols,))))
    if col < n_cols:
        return max(128, liger_strategy(ub, 0.85, 4, 8.0, (n_cols,))), 1, False
    return col, max(1, liger_strategy(ub, 0.85, 4, 4.0, (8, col), 0)), True


def _rms(kind: str):
    """ops/rms_norm.py rms_norm_forward (l.607): which kernel runs and with which blocks (None: not this one)."""
    def choice(s: dict, ub: int) -> Optional[dict]:
        col, rows, fused = _rms_tile(s["n_cols"], ub)
        launched = "tiled" if not fused else ("row" if rows <= 1 else "fused_2d")
        if launched != kind:
            return None
        return {"BLOCK_SIZE": col, "ROWS_PER_BLOCK": rows} if kind == "fused_2d" else {"BLOCK_SIZE": col}
    return choice


LIGER_DIR = "liger_kernel/ops/backends/_ascend/ops"
#: (file, kernel, key (TA), shapes list, pointer dtypes, launch choice(shapes, ub) -> kwargs, when(shapes))
LIGER = [
    ("fused_add_rms_norm.py", "_fused_add_rms_norm_forward_kernel_no_tiling", ["n_rows", "n_cols"],
     [{"n_rows": 4096, "n_cols": 1024}, {"n_rows": 8192, "n_cols": 2048}, {"n_rows": 16384, "n_cols": 1536}],
     "bf16", lambda s, ub: _far(s["n_cols"], ub, True)),
    ("fused_add_rms_norm.py", "_fused_add_rms_norm_forward_kernel_npu", ["n_cols"],
     [{"n_rows": 4096, "n_cols": 4096}, {"n_rows": 8192, "n_cols": 8192}, {"n_rows": 2048, "n_cols": 16384}],
     "bf16", lambda s, ub: _far(s["n_cols"], ub, True)),
    ("fused_add_rms_norm.py", "_fused_add_rms_norm_backward_kernel_no_tiling", ["n_rows", "n_cols"],
     [{"n_rows": 4096, "n_cols": 1024}, {"n_rows": 8192, "n_cols": 2048}],
     "bf16", lambda s, ub: _far(s["n_cols"], ub, False)),
    ("fused_add_rms_norm.py", "_fused_add_rms_norm_backward_kernel_npu", ["n_cols"],
     [{"n_rows": 4096, "n_cols": 4096}, {"n_rows": 8192, "n_cols": 8192}],
     "bf16", lambda s, ub: _far(s["n_cols"], ub, False)),
    ("geglu.py", "_geglu_forward_kernel_flat", ["total_elements"],
     [{"total_elements": 4096 * 11008}, {"total_elements": 8192 * 14336}, {"total_elements": 1000003}],
     "bf16", lambda s, ub: _flat(s["total_elements"], ub, 3.0, 256)),
    ("geglu.py", "_geglu_backward_kernel_flat", ["total_elements"],
     [{"total_elements": 4096 * 11008}, {"total_elements": 1000003}],
     "bf16", lambda s, ub: _flat(s["total_elements"], ub, 6.0, 256)),
    ("swiglu.py", "_swiglu_forward_kernel_flat", ["total_elements"],
     [{"total_elements": 4096 * 11008}, {"total_elements": 8192 * 14336}],
     "bf16", lambda s, ub: _flat(s["total_elements"], ub, 3.0, 256)),
    ("swiglu.py", "_swiglu_backward_kernel_flat", ["total_elements"],
     [{"total_elements": 4096 * 11008}],
     "bf16", lambda s, ub: _flat(s["total_elements"], ub, 6.0, 256)),
    ("softmax.py", "_softmax_single_block_forward_kernel", ["n_rows", "n_cols"],
     [{"n_rows": 4096, "n_cols": 1024}, {"n_rows": 8192, "n_cols": 4096}, {"n_rows": 2048, "n_cols": 781}],
     "fp32", lambda s, ub: _softmax(s["n_cols"])),
    ("softmax.py", "_softmax_multi_block_forward_kernel", ["n_cols"],
     [{"n_rows": 4096, "n_cols": 32000}, {"n_rows": 1024, "n_cols": 128256}],
     "fp32", lambda s, ub: _softmax(s["n_cols"])),
    ("jsd.py", "_jsd_kernel", ["n_cols"],
     [{"n_rows": 4096, "n_cols": 32000}, {"n_rows": 1024, "n_cols": 128256}],
     "fp32", lambda s, ub: {"BLOCK_SIZE": liger_strategy(ub, 0.9, 4, 8.0, (s["n_cols"],))}),
    ("dyt.py", "_dyt_fwd_kernel", ["N"],
     [{"M": 4096, "N": 4096}, {"M": 8192, "N": 8192}, {"M": 2048, "N": 1000}],
     "bf16", lambda s, ub: {"BLOCK_N": liger_strategy(ub, 0.9, 4, 4.0, (s["N"],))}),
    ("rms_norm.py", "_rms_norm_forward_row", ["n_cols"],
     [{"n_rows": 4096, "n_cols": 5120}, {"n_rows": 8192, "n_cols": 8192}],
     "bf16", _rms("row")),
    ("rms_norm.py", "_rms_norm_forward_fused_2d", ["n_rows", "n_cols"],
     [{"n_rows": 4096, "n_cols": 1000}, {"n_rows": 8192, "n_cols": 2048}, {"n_rows": 4096, "n_cols": 4096}],
     "bf16", _rms("fused_2d")),
    ("rms_norm.py", "_rms_norm_forward_tiled", ["n_cols"],
     [{"n_rows": 2048, "n_cols": 16384}, {"n_rows": 1024, "n_cols": 32768}],
     "bf16", _rms("tiled")),
    ("dyt.py", "_dyt_bwd_kernel", ["N"],
     [{"M": 4096, "N": 4096}, {"M": 2048, "N": 1000}],
     "bf16", lambda s, ub: {"BLOCK_N": liger_strategy(ub, 0.9, 4, 8.0, (s["N"],))}),
]


# ----- tiletune's side ------------------------------------------------------------------------
def _int_args(spec, shapes: dict) -> dict:
    """Runtime integer arguments the model may need: the given sizes, strides as the row length."""
    out = dict(shapes)
    widest = max(shapes.values())
    for p in spec.params:
        if p.name in out or p.is_pointer or p.constexpr:
            continue
        if "stride" in p.name.lower():
            out[p.name] = widest
    return out


def _accepted(spec, kwargs, shapes, dtypes, target) -> tuple[bool, list[str]]:
    why = check_config(spec, kwargs, None, None, shapes, dtypes, target)
    return not why, why


def _tiletune(spec, shapes, dtypes, target, fixed, top_k):
    try:
        res = synthesize(spec, shapes, dtypes, target, fixed=fixed or None, top_k=top_k)
    except TiletuneError as exc:
        return None, str(exc).splitlines()[0]
    return res, None


def _in_set(cand_kwargs: dict, anchor: list[dict]) -> bool:
    return any(all(cand_kwargs.get(k) == v for k, v in cfg.items()) for cfg in anchor)


def run_kernel(mods, target, label, path, kernel, spec, key, shapes, dtypes, max_dtype, liger_choice, fixed):
    """One row of the report for a kernel at one shape."""
    tuned = [p.name for p in spec.tiling_params if p.name not in fixed]
    configs, parse, error = anchor_configs(mods, path, kernel, key, shapes, tuned, max_dtype)
    where = Path(path).resolve()
    corpus = library_root("liger_kernel")
    corpus = corpus.resolve() if corpus is not None else None  # .corpus may be a symlink
    if corpus is not None and where.is_relative_to(corpus.parent):
        file_label = "corpus:" + str(where.relative_to(corpus.parent))
    else:
        file_label = str(where.relative_to(ROOT))
    row: dict[str, Any] = {"kernel": label, "file": file_label,
                           "name": kernel, "shape": shapes, "check_shapes": _int_args(spec, shapes), "dtypes": dtypes,
                           "fixed": fixed, "anchor_parse": parse, "anchor_configs": configs}
    if error:
        row["anchor_error"] = error
    accepted = []
    for cfg in configs:
        full = {**fixed, **cfg}
        ok, why = _accepted(spec, full, _int_args(spec, shapes), dtypes, target)
        item = {"config": cfg, "accepted": ok, "why": why}
        if not ok:  # Triton-Ascend leaves multibuffer at the compiler default (on): would off fit?
            item["fits_without_multibuffer"] = _accepted(spec, {**full, "multibuffer": False}, _int_args(spec, shapes), dtypes, target)[0]
            # the buffer, the bytes over and the cited rule (Triton-Ascend's own check: one tile <= 64 KiB)
            item["rule"] = explain_config(spec, full, _int_args(spec, shapes), dtypes, target)
        accepted.append(item)
    row["anchor_checked"] = accepted
    row["anchor_accepted"] = sum(a["accepted"] for a in accepted)
    if liger_choice is not None:
        ok, why = _accepted(spec, liger_choice, _int_args(spec, shapes), dtypes, target)
        row["liger_choice"] = {"config": liger_choice, "accepted": ok, "why": why}
    res, err = _tiletune(spec, _int_args(spec, shapes), dtypes, target, fixed, 16)
    if res is None:
        row["tiletune_error"] = err
    else:
        best = res.candidates[0]
        # what a tuner would benchmark: the candidates predicted within NEAR of the best
        row["tiletune_count"] = sum(1 for c in res.candidates if c.cost <= NEAR * best.cost)
        row["tiletune_top16"] = len(res.candidates)
        row["tiletune_feasible"] = res.feasible_count
        row["tiletune_top1"] = {**best.kwargs, **best.extra}
        row["top1_in_anchor"] = _in_set(best.kwargs, configs) if configs else None
        if configs and not row["top1_in_anchor"]:
            row["top1_note"] = _why_not(spec, shapes, dtypes, target, fixed, best, configs, accepted)
    return row


def _why_not(spec, shapes, dtypes, target, fixed, best, configs, accepted) -> str:
    """tiletune's predicted time of its pick against the best of Triton-Ascend's configs it accepts."""
    mine = f"tiletune's pick {best.kwargs} is predicted {best.cost * 1e6:.1f} us ({int(best.cost_terms.get('programs', 0))} programs)"
    theirs = []
    for a in accepted:
        if not a["accepted"]:
            continue
        res, _ = _tiletune(spec, _int_args(spec, shapes), dtypes, target, {**fixed, **a["config"]}, 1)
        if res is not None:
            c = res.candidates[0]
            theirs.append((c.cost, a["config"], int(c.cost_terms.get("programs", 0))))
    if not theirs:
        return mine + "; every Triton-Ascend config here exceeds the UB estimate"
    cost, cfg, progs = min(theirs, key=lambda x: x[0])
    return (mine + f"; the best of Triton-Ascend's {len(configs)} configs by tiletune's model, {cfg}, is predicted "
            f"{cost * 1e6:.1f} us ({progs} programs); tiletune's pick is not among them")


def fixture_rows(mods, target) -> list[dict]:
    """Every fixture at its BENCH_SHAPES."""
    rows = []
    for name in fixtures.NAMES:
        fx = fixtures.load(name)
        for shape in fx.BENCH_SHAPES:
            spec, shapes, dtypes, fixed = fixture_problem(name, shape)
            dtypes = {k: normalize_dtype(v) for k, v in dtypes.items()}
            widest = max(dtypes.values(), key=dtype_bytes)
            key = [k for k in fx.KEY if k in shapes]
            rows.append(run_kernel(mods, target, f"fixtures/{name}", fx.__file__, spec.name, spec, key,
                                   {**shape, **shapes}, dtypes, widest, None, fixed))
    return rows


def liger_rows(mods, target) -> list[dict]:
    """liger-kernel's _ascend kernels at realistic shapes, with the launcher's block choice."""
    root = library_root("liger_kernel")
    if root is None:
        return []
    t = get_target(target)
    rows = []
    for fname, kernel, key, shape_list, dtype, choice in LIGER:
        path = root.parent / LIGER_DIR / fname
        spec = analyze_file(str(path)).kernel(kernel)
        dtypes = {p.name: dtype for p in spec.params if p.is_pointer}
        for shapes in shape_list:
            picked = choice(shapes, t.ub_bytes)
            params = {p.name for p in spec.tiling_params}
            picked = None if picked is None else {k: v for k, v in picked.items() if k in params}
            fixed = {}
            rows.append(run_kernel(mods, target, f"liger/{fname}:{kernel}", str(path), kernel, spec, key,
                                   shapes, dtypes, dtype, picked, fixed))
    return rows


def summary(rows: list[dict]) -> dict:
    """Totals over all rows."""
    gen = sum(len(r["anchor_configs"]) for r in rows)
    acc = sum(r["anchor_accepted"] for r in rows)
    lig = [r["liger_choice"] for r in rows if "liger_choice" in r]
    with_top = [r for r in rows if r.get("top1_in_anchor") is not None]
    counted = [r for r in rows if r["anchor_configs"] and "tiletune_count" in r]
    rejected = [a for r in rows for a in r["anchor_checked"] if not a["accepted"]]
    return {
        "anchor_configs": gen,
        "anchor_accepted": acc,
        "anchor_accepted_share": acc / gen if gen else None,
        "anchor_fit_without_multibuffer": sum(1 for a in rejected if a.get("fits_without_multibuffer")),
        "liger_choices": len(lig),
        "liger_accepted": sum(c["accepted"] for c in lig),
        "kernels_shapes": len(rows),
        "anchor_unsupported": sum(1 for r in rows if r.get("anchor_error")),
        "count_le_anchor": sum(1 for r in counted if r["tiletune_count"] <= len(r["anchor_configs"])),
        "count_compared": len(counted),
        "top1_in_anchor": sum(1 for r in with_top if r["top1_in_anchor"]),
        "top1_compared": len(with_top),
        "tiletune_errors": sum(1 for r in rows if "tiletune_error" in r),
    }


def markdown(target: str, rows: list[dict], total: dict) -> str:
    """The report as a Markdown table."""
    out = [f"# tiletune vs Triton-Ascend 3.2.0's tile generator on {target}", "",
           "Generated by `python bench/ascend_anchor.py --target " + target + "` (see its docstring).", ""]
    share = total["anchor_accepted_share"]
    out.append(f"- Triton-Ascend configs accepted by tiletune: {total['anchor_accepted']}/{total['anchor_configs']}"
               + (f" ({share:.0%})" if share is not None else ""))
    out.append(f"- liger `_ascend` launch choices accepted: {total['liger_accepted']}/{total['liger_choices']}")
    out.append(f"- tiletune candidates worth benchmarking (predicted within {NEAR:.1f}x of its best) <= "
               f"Triton-Ascend's count: {total['count_le_anchor']}/{total['count_compared']}")
    out.append(f"- rejected Triton-Ascend configs that fit with multibuffer=False (compiler default is on): "
               f"{total['anchor_fit_without_multibuffer']}")
    out.append(f"- tiletune top-1 in Triton-Ascend's set: {total['top1_in_anchor']}/{total['top1_compared']}")
    out.append(f"- kernel x shape rows: {total['kernels_shapes']}; Triton-Ascend's parser cannot tune "
               f"{total['anchor_unsupported']}; tiletune errors: {total['tiletune_errors']}")
    out += ["", "TA = Triton-Ascend 3.2.0's `TileGenerator`; n = tiletune candidates within "
            f"{NEAR:.1f}x of its best predicted time (of its top 16).", "",
            "| kernel | shape | TA configs | accepted | liger choice | tiletune n | top-1 | in TA set |",
            "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        shape = ", ".join(f"{k}={v}" for k, v in r["shape"].items() if "stride" not in k)
        ta = "; ".join(",".join(f"{k}={v}" for k, v in c.items()) for c in r["anchor_configs"])
        ta = ta or r.get("anchor_error", "none generated")
        acc = f"{r['anchor_accepted']}/{len(r['anchor_configs'])}"
        lc = r.get("liger_choice")
        lig = "-" if lc is None else (",".join(f"{k}={v}" for k, v in lc["config"].items()) + (" ok" if lc["accepted"] else " REJECTED"))
        n = r.get("tiletune_count", r.get("tiletune_error", "-"))
        top = ",".join(f"{k}={v}" for k, v in r.get("tiletune_top1", {}).items())
        ins = {True: "yes", False: "no", None: "-"}[r.get("top1_in_anchor")]
        out.append(f"| {r['kernel']} | {shape} | {ta} | {acc} | {lig} | {n} | {top} | {ins} |")
    rejected = [(r, a) for r in rows for a in r["anchor_checked"] if not a["accepted"]]
    rejected += [(r, r["liger_choice"]) for r in rows if "liger_choice" in r and not r["liger_choice"]["accepted"]]
    if rejected:
        out += ["", "## Rejected", "",
                "Triton-Ascend's generator accepts each of these by its own check (one tile <= 64 KiB, "
                "`TileGenerator.max_tile_bytes`, `tile_generator.py`), which counts neither the other live "
                "tiles nor multibuffer's copies; the rule under each says why the compiler cannot place it.", ""]
        for r, a in rejected:
            extra = " (fits with multibuffer=False)" if a.get("fits_without_multibuffer") else ""
            out.append(f"- {r['kernel']} {_short(r['shape'])} {a['config']}: {'; '.join(a['why'])}{extra}")
            for line in a.get("rule", []):
                out.append(f"  - {line}")
    notes = [r for r in rows if r.get("top1_note")]
    if notes:
        out += ["", "## Top-1 outside Triton-Ascend's set", ""]
        for r in notes:
            out.append(f"- {r['kernel']} {_short(r['shape'])}: {r['top1_note']}")
    return "\n".join(out) + "\n"


def _short(shape: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in shape.items() if "stride" not in k)


def test_data(target: str, rows: list[dict]) -> dict:
    """The small JSON CI reads: per kernel and shape, the configs tiletune accepts and those over UB."""
    items = []
    for r in rows:
        ok = [a["config"] for a in r["anchor_checked"] if a["accepted"]]
        over = [{"config": a["config"], "why": a["why"]} for a in r["anchor_checked"] if not a["accepted"]]
        liger = [r["liger_choice"]["config"]] if "liger_choice" in r else []
        if ok or over or liger:
            items.append({"kernel": r["kernel"], "file": r["file"], "name": r["name"], "shapes": r["check_shapes"],
                          "dtypes": r["dtypes"], "fixed": r["fixed"], "anchor": ok, "anchor_over_ub": over,
                          "liger": liger})
    return {"target": target, "source": WHEEL + " TileGenerator and liger-kernel 0.8.5 _ascend launchers "
            "(bench/ascend_anchor.py --test-data)", "items": items}


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="ascend910b3", choices=sorted(SOC))
    ap.add_argument("--wheel-dir", help="folder for the wheel (default: a temporary folder)")
    ap.add_argument("--test-data", action="store_true", help="also write tests/data/ascend_anchor_configs.json")
    ap.add_argument("--out", default=str(ROOT / "bench/results"))
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        unpacked = fetch_wheel(Path(args.wheel_dir) if args.wheel_dir else Path(tmp))
        soc, aicore = SOC[args.target]
        mods = load_generator(unpacked, soc, aicore)
        print(f"Triton-Ascend num_vector_core for {soc}: {mods['utils'].num_vector_core}")
        rows = fixture_rows(mods, args.target) + liger_rows(mods, args.target)
    total = summary(rows)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "ascend_anchor.json").write_text(json.dumps({"target": args.target, "summary": total, "rows": rows}, indent=1, default=str) + "\n")
    text = markdown(args.target, rows, total)
    (out / "ascend_anchor.md").write_text(text)
    if args.test_data:
        data = ROOT / "tests/data/ascend_anchor_configs.json"
        data.parent.mkdir(parents=True, exist_ok=True)
        data.write_text(json.dumps(test_data(args.target, rows), indent=1) + "\n")
    print(text)
    return 0 if total["anchor_accepted"] == total["anchor_configs"] and total["liger_accepted"] == total["liger_choices"] else 1


if __name__ == "__main__":
    sys.exit(main())
