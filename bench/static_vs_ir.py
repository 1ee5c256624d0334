"""The static reader checked against Triton's own front end (issue 24, item 5).

For every kernel of the dev corpus with tiling parameters (as the static
analysis reads it), the harness imports the library module to get the live
``JITFunction`` (the analysis itself never imports), lowers it to Triton IR on
the CPU (:mod:`tiletune.runtime.triton_ir`, front end only) at a probe config
and with each integer constexpr doubled, and compares with the static answers:

* the tiling-parameter set: constexprs whose change changes a load/store/atomic
  tile, a dot extent or a loop's trip count (IR) against ``Param.tiling``;
* tile shapes: the multiset of (kind, shape) of the static ``accesses``
  evaluated at the probe values against the IR's loads/stores/atomics;
* dot extents: the static ``dots`` (M, N, K) evaluated against the IR's.

Probe values: the library's first autotune config, else 32 for each tiling
parameter; fixed values from the kernel's launches (literals) or defaults;
pointer types from the static analysis (fp16 where it has none); every other
runtime argument is an ``i32`` of 4096.  A kernel that does not import or that
Triton refuses at the probe is counted as not lowered, with the reason.

Run (without ``TRITON_INTERPRET``): ``python bench/static_vs_ir.py``; writes
``bench/results/static_vs_ir.{json,md}``.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import json
import os
import sys
import time
import types
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))
import corpus  # noqa: E402

from tiletune.analysis import analyze_file  # noqa: E402
from tiletune.runtime.triton_ir import LoweringError, jit_function, lower_facts, quiet_fds  # noqa: E402

LIBRARIES = ("liger_kernel", "torchao", "gemlite", "fla", "unsloth")
#: Third-party packages the libraries import for host code only; stood in for when not installed.
STUBS = ("einops", "transformers", "huggingface_hub", "accelerate", "peft", "bitsandbytes", "trl", "datasets",
         "safetensors", "xformers", "flash_attn", "unsloth_zoo")
TILE_PROBE = 32
SIZE = 4096
_SIG_DTYPE = {"fp16": "fp16", "bf16": "bf16", "fp32": "fp32", "fp64": "fp64", "int8": "i8", "int16": "i16",
              "int32": "i32", "int64": "i64", "uint8": "u8", "int1": "i1", "fp8e4nv": "fp8e4nv", "fp8e5": "fp8e5"}


def _literal(text: Optional[str]) -> Any:
    if text is None:
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return _NO_VALUE


_NO_VALUE = object()


class _StubMeta(type):
    """Any attribute of a stub is another stub class; calling a stub class gives a stub class."""

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _StubMeta(name, (), {})

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return _StubMeta(cls.__name__, (), {})

    def __getitem__(cls, item: Any) -> Any:
        return cls

    def __bool__(cls) -> bool:  # "is this feature available?" answers no
        return False


class _StubModule(types.ModuleType):
    """A missing third-party module: every attribute is a stub (host code only; kernels never use it)."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _StubMeta(name, (), {})


class StubFinder:
    """A meta-path finder, last in line, that stands in for third-party modules this machine lacks
    (``einops``, ``transformers``...), so a library module imports and its kernels can be lowered.
    Only the packages listed (:data:`STUBS`, ``--stub``) and only when they do not import for real.
    The analysis never sees this: only the harness imports."""

    def __init__(self, names: Sequence[str]):
        self.names = set(names)
        self.stubbed: set = set()

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        top = name.split(".")[0]
        if top not in self.names:  # only the listed packages: others' optional imports must still fail
            return None
        self.stubbed.add(top)
        return importlib.util.spec_from_loader(name, self, is_package=True)

    def create_module(self, spec: Any) -> Any:
        module = _StubModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module: Any) -> None:
        return None


def _module_name(root: Path, path: Path) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _probe_values(spec: Any, jf: Any) -> Dict[str, Any]:
    """Constexpr values for the base probe (see the module docstring)."""
    values: Dict[str, Any] = {}
    if spec.autotune and spec.autotune.configs:
        values.update({k: v for k, v in spec.autotune.configs[0].kwargs.items()})
    fixed: Dict[str, Any] = {}
    for site in list(spec.launches) + list(spec.project_launches):
        for name, text in site.fixed.items():
            v = _literal(text)
            if v is not _NO_VALUE and name not in fixed:
                fixed[name] = v
    for p in jf.params:
        if not p.is_constexpr or p.name in values:
            continue
        sp = spec.param(p.name) if any(q.name == p.name for q in spec.params) else None
        if sp is not None and sp.tiling:
            values[p.name] = fixed.get(p.name, TILE_PROBE)
        elif p.name in fixed:
            values[p.name] = fixed[p.name]
        elif getattr(p, "has_default", False):
            values[p.name] = p.default
        else:
            values[p.name] = 1  # a flag on, a unit size: a value most kernels accept
    return values


def _signature(spec: Any, jf: Any, values: Dict[str, Any]) -> Dict[str, str]:
    dtypes = {a.pointer: a.dtype for a in spec.accesses if a.pointer and a.dtype}
    sig: Dict[str, str] = {}
    for p in jf.params:
        if p.is_constexpr or p.name in values:
            sig[p.name] = "constexpr"
            continue
        sp = next((q for q in spec.params if q.name == p.name), None)
        if sp is not None and sp.is_pointer:
            sig[p.name] = "*" + _SIG_DTYPE.get(dtypes.get(p.name) or "fp16", "fp16")
        else:
            sig[p.name] = "i32"
    return sig


def _static_shapes(spec: Any, env: Dict[str, Any]) -> Optional[set]:
    out: set = set()
    ienv = {k: v for k, v in env.items() if isinstance(v, int) and not isinstance(v, bool)}
    for a in spec.accesses:
        if a.shape is None:
            return None
        try:
            shape = tuple(int(d.evaluate(ienv)) for d in a.shape)
        except Exception:  # a symbol without a value: no static answer
            return None
        out.add((a.kind, shape))
    return out


def _static_dots(spec: Any, env: Dict[str, Any]) -> Optional[List[tuple]]:
    ienv = {k: v for k, v in env.items() if isinstance(v, int) and not isinstance(v, bool)}
    out = set()
    for d in spec.dots:
        try:
            out.add(tuple(int(e.evaluate(ienv)) for e in (d.m, d.n, d.k)))
        except Exception:  # unknown extent
            return None
    return sorted(out)


def _ir_shapes(facts: Any) -> set:
    # a set: the IR unrolls tl.static_range loops, the static reading lists each access once
    return {(m.kind, m.shape) for m in facts.memory}


def _steps(facts: Any) -> list:
    """The constant steps of the ``scf.for`` loops (a tile walked by a loop); bounds and unrolled
    copies are sizes and counts, not tiles."""
    return sorted({lp.step for lp in facts.loops if lp.step is not None})


def check_kernel(spec: Any, jf: Any) -> Dict[str, Any]:
    """Lower one kernel and compare it with its static reading (the JSON row)."""
    values = _probe_values(spec, jf)
    sig = _signature(spec, jf, values)
    row: Dict[str, Any] = {"kernel": spec.name, "complete": not spec.incomplete, "probe": {
        k: v for k, v in values.items() if isinstance(v, (int, float, str, bool)) or v is None}}
    t0 = time.perf_counter()
    try:
        base = lower_facts(jf, sig, values)
    except LoweringError as exc:
        row["lowered"] = False
        row["reason"] = str(exc)[:300]
        return row
    row["lowered"] = True
    ir_tiling = set()
    for p in jf.params:
        v = values.get(p.name)
        if not p.is_constexpr or isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            continue
        try:
            other = lower_facts(jf, sig, {**values, p.name: v * 2})
        except LoweringError:
            continue
        # a tile (memory or register), a dot or a loop's step: a loop bound alone is a size (static's definition)
        if other.tile_signature() != base.tile_signature() or _steps(other) != _steps(base):
            ir_tiling.add(p.name)
    row["lower_ms"] = round((time.perf_counter() - t0) * 1e3, 1)
    static_tiling = {p.name for p in spec.params if p.tiling}
    # only constexprs the probe could move are comparable
    movable = {p.name for p in jf.params if p.is_constexpr and isinstance(values.get(p.name), int)
               and not isinstance(values.get(p.name), bool)}
    row["static_tiling"] = sorted(static_tiling & movable)
    row["ir_tiling"] = sorted(ir_tiling)
    problems = []
    if set(row["static_tiling"]) != ir_tiling:
        problems.append(f"tiling set: static {row['static_tiling']}, IR {row['ir_tiling']}")
    st = _static_shapes(spec, values)
    ir = _ir_shapes(base)
    sd = _static_dots(spec, values)
    idots = sorted({(d.m, d.n, d.k) for d in base.dots})
    if (st is not None and st != ir) or (sd is not None and sd != idots):
        # the static reading specialised with the probe's fixed values, as a launch specialises it
        # (only on a mismatch: analysing a whole file again per kernel is the harness's slowest step)
        fixed = {k: v for k, v in values.items() if k not in static_tiling and (v is None or isinstance(v, (bool, int)))}
        try:
            from tiletune.analysis.frontend import analyze_source

            spec = analyze_source(Path(spec.file).read_text(), spec.file, constants=fixed).kernel(spec.name)
            st, sd = _static_shapes(spec, values), _static_dots(spec, values)
        except Exception:  # the unspecialised reading stands
            pass
    if st is not None and st != ir:
        problems.append(f"tile shapes: static {sorted(st)}, IR {sorted(ir)}")
    if sd is not None and sd != idots:
        problems.append(f"dot extents: static {sd}, IR {idots}")
    row["static_unknown"] = [w for w, v in (("tile shapes", st), ("dot extents", sd)) if v is None]
    row["problems"] = problems
    return row


def run(libraries: List[str], stubs: Sequence[str] = ()) -> Dict[str, Any]:
    """Check every kernel with tiling parameters of ``libraries``; the report as a dict."""
    rows: List[Dict[str, Any]] = []
    finder = StubFinder(stubs)
    sys.meta_path.append(finder)  # last: every real module wins
    for lib in libraries:
        root = corpus.library_root(lib)
        if root is None:
            continue
        sys.path.insert(0, str(root.parent))
        # Ascend backends last: importing them switches some libraries' process-wide device checks to NPU
        for path in sorted(corpus.library_files(lib), key=lambda f: ("ascend" in str(f), str(f))):
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if "triton" not in text or ".jit" not in text:
                continue
            try:
                module_spec = analyze_file(path)
            except Exception as exc:  # the static side failed: the corpus bench counts it
                rows.append({"library": lib, "file": str(path.relative_to(root.parent)), "kernel": "*",
                             "lowered": False, "reason": f"analysis failed: {type(exc).__name__}"})
                continue
            kernels = [k for k in module_spec.kernels if any(p.tiling for p in k.params)]
            if not kernels:
                continue
            name = _module_name(root, path)
            try:
                with quiet_fds():
                    module = importlib.import_module(name)
                import_error = None
            except BaseException as exc:  # noqa: BLE001 - a library module that needs more than this machine has
                module, import_error = None, f"import failed: {type(exc).__name__}: {str(exc)[:120]}"
            for spec in kernels:
                row: Dict[str, Any] = {"library": lib, "file": str(path.relative_to(root.parent))}
                jf = jit_function(getattr(module, spec.name, None)) if module is not None else None
                if jf is None:
                    row.update({"kernel": spec.name, "lowered": False, "complete": not spec.incomplete,
                                "reason": import_error or "no JITFunction of that name in the module"})
                else:
                    try:
                        row.update(check_kernel(spec, jf))
                    except Exception as exc:  # a probe the harness cannot build: not lowered, with why
                        row.update({"kernel": spec.name, "lowered": False, "complete": not spec.incomplete,
                                    "reason": f"harness: {type(exc).__name__}: {str(exc)[:160]}"})
                rows.append(row)
    summary = summarize(rows, libraries)
    summary["stubbed_modules"] = sorted(finder.stubbed)
    return {"summary": summary, "rows": rows}


def summarize(rows: List[Dict[str, Any]], libraries: Sequence[str]) -> Dict[str, Any]:
    """Agreement counts over the rows (per library, overall) and the commonest reasons for not lowering."""
    lowered = [r for r in rows if r.get("lowered")]
    agree = [r for r in lowered if not r["problems"]]
    confident_wrong = [r for r in lowered if r["problems"] and r["complete"]]
    return {
        "kernels_with_tiling": len(rows),
        "lowered": len(lowered),
        "agree": len(agree),
        "agreement_pct": round(100.0 * len(agree) / len(lowered), 1) if lowered else None,
        "disagree_where_static_complete": len(confident_wrong),
        "by_library": {lib: {"kernels": sum(r["library"] == lib for r in rows),
                             "lowered": sum(r["library"] == lib and bool(r.get("lowered")) for r in rows),
                             "agree": sum(r["library"] == lib for r in agree)} for lib in libraries},
        "not_lowered_reasons": Counter((r.get("reason") or "")[:60] for r in rows if not r.get("lowered")).most_common(8),
    }


def write_md(report: Dict[str, Any], path: Path, command: str) -> None:
    """The Markdown report: the summary, per library, then every disagreement."""
    s = report["summary"]
    lines = ["# Static reader vs Triton IR (dev corpus)", "", f"Command: `{command}`", "",
             f"- kernels with tiling parameters: {s['kernels_with_tiling']}",
             f"- lowered by Triton on the CPU: {s['lowered']}",
             f"- agree (tiling set, tile shapes, dot extents): {s['agree']} ({s['agreement_pct']}%)",
             f"- disagreements where the static verdict says complete: {s['disagree_where_static_complete']}", "",
             "| library | kernels | lowered | agree |", "|---|---|---|---|"]
    for lib, v in s["by_library"].items():
        lines.append(f"| {lib} | {v['kernels']} | {v['lowered']} | {v['agree']} |")
    lines += ["", "## Not lowered (most common reasons)", ""]
    lines += [f"- {n} x `{why}`" for why, n in s["not_lowered_reasons"]]
    lines += ["", "## Disagreements", ""]
    for r in report["rows"]:
        if r.get("lowered") and r["problems"]:
            verdict = "complete" if r["complete"] else "incomplete"
            lines.append(f"- `{r['file']}` `{r['kernel']}` (static: {verdict}; probe {r['probe']}):")
            lines += [f"  - {p}" for p in r["problems"]]
    path.write_text("\n".join(lines) + "\n")


def main() -> int:
    """CLI: run the harness and write the results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", action="append", help="only these libraries (default: all five)")
    parser.add_argument("--merge", nargs="+", metavar="PART.json", help="join the JSON of parts run separately")
    parser.add_argument("--stub", action="append", help="another missing third-party package to stand in for")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "static_vs_ir"))
    args = parser.parse_args()
    if os.environ.get("TRITON_INTERPRET"):
        print("run without TRITON_INTERPRET: the interpreter cannot lower kernels", file=sys.stderr)
        return 2
    libs = args.library or list(LIBRARIES)
    t0 = time.perf_counter()
    if args.merge:  # parts run side by side (--library ... --out PART), joined into one report
        parts = [json.loads(Path(m).read_text()) for m in args.merge]
        rows = [r for part in parts for r in part["rows"]]
        report = {"summary": summarize(rows, libs), "rows": rows}
        report["summary"]["seconds"] = round(sum(p["summary"].get("seconds", 0) for p in parts), 1)
        report["summary"]["stubbed_modules"] = sorted({m for p in parts for m in p["summary"].get("stubbed_modules", [])})
    else:
        report = run(libs, list(STUBS) + (args.stub or []))
        report["summary"]["seconds"] = round(time.perf_counter() - t0, 1)
    out = Path(args.out)
    command = "python bench/static_vs_ir.py" + "".join(f" --library {x}" for x in args.library or [])
    if args.merge:
        command = "; ".join([*(p["summary"].get("command", "a part") for p in parts), command + " --merge " +
                             " ".join(args.merge)])
    report["summary"]["command"] = command
    out.with_suffix(".json").write_text(json.dumps(report, indent=1, default=str))
    write_md(report, out.with_suffix(".md"), command)
    print(json.dumps(report["summary"], indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
