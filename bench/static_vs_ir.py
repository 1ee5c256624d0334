"""The static reader checked against Triton's own front end (issue 24, item 5).

For every kernel of the dev corpus with tiling parameters (as the static
analysis reads it), the harness imports the library module to get the live
``JITFunction`` (the analysis itself never imports; :mod:`ir_imports` works
around the harness's own import limits), lowers it to Triton IR on the CPU
(:mod:`tiletune.runtime.triton_ir`, front end only) at realistic probe points
(:mod:`ir_probes`) and with each integer constexpr doubled (and halved), and
compares with the static answers:

* the tiling-parameter set: constexprs whose change changes a load/store/atomic
  tile, a register tile or a dot extent (IR) against ``Param.tiling``; a
  parameter that only changes a loop's bounds on the IR side and only acts
  through a loop on the static side (rows per program) agrees;
* tile shapes: the set of (kind, shape) of the static ``accesses`` evaluated
  at the probe values (specialised with the point's fixed values) against the
  IR's loads/stores/atomics;
* dot extents: the static ``dots`` (M, N, K) evaluated against the IR's.

Pointer types come from the static analysis (fp16 where it has none); every
runtime scalar is an ``i32``.  A kernel that does not import or that Triton
refuses at every probe point is counted as not lowered, with the reason; a
disagreement no second probe point confirms is *probe-limited*.

Run (without ``TRITON_INTERPRET``): ``python bench/static_vs_ir.py``; writes
``bench/results/static_vs_ir.{json,md}``.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import re
import sys
import time
import types
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.append(str(ROOT / "bench"))  # after tests/: bench/corpus.py is another module
sys.path.insert(0, str(ROOT))
import corpus  # noqa: E402

from tiletune.analysis import analyze_file  # noqa: E402
from tiletune.runtime.triton_ir import LoweringError, jit_function, lower_facts, quiet_fds  # noqa: E402

from ir_imports import import_module, kernel_object  # noqa: E402
from ir_probes import probe_points  # noqa: E402

LIBRARIES = ("liger_kernel", "torchao", "gemlite", "fla", "unsloth")
#: Third-party packages the libraries import for host code only; stood in for when not installed.
STUBS = ("einops", "transformers", "huggingface_hub", "accelerate", "peft", "bitsandbytes", "trl", "datasets",
         "safetensors", "xformers", "flash_attn", "unsloth_zoo")
_SIG_DTYPE = {"fp16": "fp16", "bf16": "bf16", "fp32": "fp32", "fp64": "fp64", "int8": "i8", "int16": "i16",
              "int32": "i32", "int64": "i64", "uint8": "u8", "int1": "i1", "fp8e4nv": "fp8e4nv", "fp8e5": "fp8e5"}


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


#: Triton's type errors that a pointer typed fp16 for want of a static dtype can cause (an index pointer).
_TYPE_ERROR = re.compile(r"pointer<|float16|fp16|Loop-carried|loop bounds|Mismatched type|Ternary|unexpected type")


def _signatures(spec: Any, jf: Any, values: Dict[str, Any], sig: Dict[str, str]) -> List[Dict[str, str]]:
    """Other signatures to try when Triton refuses ``sig`` with a type error: each pointer the static
    reading gives no element type taken as an ``int32`` pointer (indices, offsets), then all of them."""
    typed = {a.pointer for a in spec.accesses if a.pointer and a.dtype in _SIG_DTYPE}  # not "elem:<ptr>"
    untyped = [n for n, t in sig.items() if t.startswith("*") and n not in typed]
    out = [{**sig, n: "*i32"} for n in untyped]
    if len(untyped) > 1:
        out.append({**sig, **{n: "*i32" for n in untyped}})
    return out[:8]


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


def _specialised(spec: Any, fixed: Dict[str, Any]) -> Any:
    """The static reading specialised with a probe's fixed values, as a launch specialises it (cached:
    analysing a whole file again is the harness's slowest step)."""
    key = (spec.file, spec.name, tuple(sorted((k, repr(v)) for k, v in fixed.items())))
    if key not in _SPECIALISED:
        from tiletune.analysis.frontend import analyze_source

        try:
            _SPECIALISED[key] = analyze_source(Path(spec.file).read_text(), spec.file, constants=fixed).kernel(spec.name)
        except Exception:  # the unspecialised reading stands
            _SPECIALISED[key] = spec
    return _SPECIALISED[key]


_SPECIALISED: Dict[tuple, Any] = {}


def _lower_point(jf: Any, sig: Dict[str, str], values: Dict[str, Any], halve: bool) -> Dict[str, Any]:
    """Lower at ``values`` and with each integer constexpr doubled (and halved): which change a tile,
    a dot or a loop's step.  Raises LoweringError when the point itself is refused."""
    base = lower_facts(jf, sig, values)
    changed, looped, refused = set(), set(), set()
    for p in jf.params:
        v = values.get(p.name)
        if not p.is_constexpr or isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            continue
        others = [v * 2] + ([v // 2] if halve and v // 2 >= 1 else [])
        moved = False
        for other in others:
            try:
                facts = lower_facts(jf, sig, {**values, p.name: other})
            except LoweringError:
                continue
            moved = True
            # a tile (memory or register) or a dot; a loop's bounds, step or unrolled count alone is work per
            # program (a trip count), not a tile: a grid-stride step is no tile size (static's definition)
            if facts.tile_signature() != base.tile_signature():
                changed.add(p.name)
            elif facts.loop_signature() != base.loop_signature():
                looped.add(p.name)
        if not moved:
            refused.add(p.name)
    together = _move_together(jf, sig, values, base, refused)
    changed |= together
    return {"base": base, "tiling": changed, "looped": looped - changed, "refused": refused - together,
            "together": sorted(together)}


def _move_together(jf: Any, sig: Dict[str, str], values: Dict[str, Any], base: Any, refused: set) -> set:
    """Constexprs Triton refuses to move one at a time but accepts moved together (tiles that must
    match, ``BK == BV``): all of them when the joint move changes a tile, else none."""
    if len(refused) < 2:
        return set()
    for factor in (2, 0.5):
        moved = {n: int(values[n] * factor) for n in refused}
        if min(moved.values()) < 1:
            continue
        try:
            facts = lower_facts(jf, sig, {**values, **moved})
        except LoweringError:
            continue
        return set(refused) if facts.tile_signature() != base.tile_signature() else set()
    return set()


def _shape_problems(spec: Any, static_tiling: set, values: Dict[str, Any], base: Any) -> List[str]:
    st, sd = _static_shapes(spec, values), _static_dots(spec, values)
    ir, idots = _ir_shapes(base), sorted({(d.m, d.n, d.k) for d in base.dots})
    if (st is not None and st != ir) or (sd is not None and sd != idots):
        # every value of the point, tiling parameters too: a branch on a tile size (``if BN == 1:``) is
        # decided as Triton decides it
        special = _specialised(spec, {k: v for k, v in values.items() if v is None or isinstance(v, (bool, int, str))})
        st, sd = _static_shapes(special, values), _static_dots(special, values)
    out = []
    if st is not None and st != ir:
        out.append(f"tile shapes: static {sorted(st)}, IR {sorted(ir)}")
    if sd is not None and sd != idots:
        out.append(f"dot extents: static {sd}, IR {idots}")
    return out


def _plain(values: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in values.items() if isinstance(v, (int, float, str, bool)) or v is None}


def check_kernel(spec: Any, jf: Any, module_globals: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Lower one kernel at realistic probe points and compare it with its static reading (the JSON row).

    The first point (flags on) decides when it agrees.  Otherwise the second
    point (flags off, other sizes; each constexpr doubled and halved) is lowered
    too: a constexpr is a tiling parameter for the IR when it changes a tile at
    any point.  A tiling-set disagreement is *real* when it holds at every point
    lowered (two at least); one seen at one point only, or about a parameter no
    probe could move (every move refused), is *probe-limited*.  Tile shapes and
    dot extents are compared exactly at each point.
    """
    src = getattr(jf, "src", "") or ""
    points = probe_points(spec, jf, src, module_globals)
    sig = _signature(spec, jf, points[0])
    row: Dict[str, Any] = {"kernel": spec.name, "complete": not spec.incomplete, "probe": _plain(points[0])}
    static_tiling = {p.name for p in spec.params if p.tiling}
    t0 = time.perf_counter()
    readings, reasons = [], []
    for index, values in enumerate(points):
        try:
            reading = _lower_point(jf, sig, values, halve=index > 0)
        except LoweringError as exc:
            reasons.append(str(exc)[:300])
            if readings or not _TYPE_ERROR.search(str(exc)):
                continue
            for other in _signatures(spec, jf, values, sig):  # the probe's pointer types, not the kernel
                try:
                    lower_facts(jf, other, values)
                except LoweringError:
                    continue
                sig = other
                row["pointer_types"] = {k: v for k, v in sig.items() if v == "*i32"}
                break
            else:
                continue
            reading = _lower_point(jf, sig, values, halve=index > 0)
        reading["values"] = values
        reading["shapes"] = _shape_problems(spec, static_tiling, values, reading["base"])
        readings.append(reading)
        fields, problems, limited = _compare(spec, jf, readings, static_tiling)
        if not problems and not limited:
            break  # agreement: no more evidence needed
    row["lower_ms"] = round((time.perf_counter() - t0) * 1e3, 1)
    if not readings:
        row["lowered"] = False
        row["reason"] = reasons[0]
        return row
    row.update({"lowered": True, "points": len(readings), **fields})
    if len(readings) > 1:
        row["probe_b"] = _plain(readings[1]["values"])
    row["static_unknown"] = [w for w, v in (("tile shapes", _static_shapes(spec, points[0])),
                                            ("dot extents", _static_dots(spec, points[0]))) if v is None]
    row["problems"] = problems
    row["probe_limited"] = limited
    return row


def _compare(spec: Any, jf: Any, readings: List[Dict[str, Any]], static_tiling: set) -> tuple:
    """``(row fields, problems, probe-limited)`` of the readings so far (see :func:`check_kernel`)."""
    movable = set.union(*(_movable(jf, r["values"]) for r in readings))
    measured = movable - set.intersection(*(r["refused"] for r in readings))
    ir_union = set.union(*(r["tiling"] for r in readings))
    static_cmp = static_tiling & movable
    fields: Dict[str, Any] = {"static_tiling": sorted(static_cmp), "ir_tiling": sorted(ir_union)}
    problems: List[str] = []
    limited: List[str] = []
    several = len(readings) > 1
    # a parameter both readers see acting through a loop (static: rows per program, a trip count; IR: it
    # changes a loop's bounds only) is work per program on both sides: no disagreement
    ir_looped = set.union(*(r["looped"] for r in readings)) - ir_union
    by_loop = {n for n in static_cmp - ir_union if n in ir_looped and _static_loop_only(spec, n)}
    if by_loop:
        fields["trip_count_both"] = sorted(by_loop)
    together = sorted({n for r in readings for n in r["together"]})
    if together:
        fields["moved_together"] = together
    static_extra = static_cmp - ir_union - by_loop
    ir_extra = ir_union - static_tiling
    ir_everywhere = {n for n in ir_extra if all(n in r["tiling"] for r in readings)}
    # a parameter that sizes tiles only under values no probe point took (``if BN == 1:``): the static
    # reading specialised with every other value of the point agrees with the IR there
    unreached = {n for n in static_extra if n in measured and all(not _static_tiling_at(spec, r["values"], n)
                                                                  for r in readings)}
    if unreached:
        fields["tiling_only_elsewhere"] = sorted(unreached)
    real = {n for n in static_extra if n in measured and n not in unreached} | ir_everywhere
    if static_extra or ir_extra:
        text = f"tiling set: static {sorted(static_cmp)}, IR {sorted(ir_union)}"
        if several and real:
            problems.append(text)
        elif not several:
            limited.append(text + " (at one probe point)")
        else:
            why = [f"{sorted(names)} {what}" for names, what in (
                (ir_extra - ir_everywhere, "sizes tiles in the IR at some probe points only"),
                (static_extra - measured, "never moved (Triton refused every move)"),
                (unreached, "sizes tiles only under values no probe point took (the static reading at the "
                            "probe values agrees with the IR)")) if names]
            limited.append(text + " (" + "; ".join(why) + ")")
    # shapes are compared exactly at each point (the static reading specialised with the point's values)
    for r in readings:
        if r["shapes"]:
            problems += r["shapes"]
            break
    return fields, problems, limited


def _static_tiling_at(spec: Any, values: Dict[str, Any], name: str) -> bool:
    """Whether the static reading, specialised with every value of the point but ``name``'s, still
    calls ``name`` a tiling parameter."""
    fixed = {k: v for k, v in values.items() if k != name and (v is None or isinstance(v, (bool, int, str)))}
    special = _specialised(spec, fixed)
    return any(p.name == name and p.tiling for p in special.params)


def _static_loop_only(spec: Any, name: str) -> bool:
    """True when every reason the static reader gives for ``name`` being a tiling parameter is a loop
    (rows per program, a trip count, a loop bound) and none a tile extent or a shape."""
    uses = spec.param(name).uses if any(q.name == name for q in spec.params) else []
    return any("loop" in u for u in uses) and not any("extent" in u or "shape" in u for u in uses)


def _movable(jf: Any, values: Dict[str, Any]) -> set:
    """The constexprs a probe can move (integer values)."""
    return {p.name for p in jf.params if p.is_constexpr and isinstance(values.get(p.name), int)
            and not isinstance(values.get(p.name), bool) and values[p.name] > 0}


def _library_roots(libraries: Sequence[str], paths: Sequence[str]) -> List[tuple]:
    roots = [(lib, corpus.library_root(lib)) for lib in libraries]
    roots += [(Path(p).resolve().name, Path(p).resolve()) for p in paths]
    return [(lib, root) for lib, root in roots if root is not None]


def run(libraries: List[str], stubs: Sequence[str] = (), paths: Sequence[str] = (),
        only: Optional[str] = None, progress: Any = None, shard: Optional[tuple] = None) -> Dict[str, Any]:
    """Check every kernel with tiling parameters of ``libraries`` (corpus names) and ``paths`` (package
    folders), only in files whose path contains ``only`` when given; the report as a dict.  One JSON
    line per file goes to ``progress`` (a text stream) when given; ``shard`` ``(i, n)`` keeps every n-th
    file from the i-th (parts run side by side, then ``--merge``)."""
    rows: List[Dict[str, Any]] = []
    finder = StubFinder(stubs)
    sys.meta_path.append(finder)  # last: every real module wins
    for lib, root in _library_roots(libraries, paths):
        sys.path.insert(0, str(root.parent))
        files = sorted((p for p in root.rglob("*.py") if "__pycache__" not in p.parts),
                       key=lambda f: ("ascend" in str(f), str(f)))
        # Ascend backends last: importing them switches some libraries' process-wide device checks to NPU
        for i, path in enumerate(files):
            if only and not any(o in str(path) for o in only.split(",")):
                continue
            if shard and i % shard[1] != shard[0]:
                continue
            t0 = time.perf_counter()
            new = _check_file(lib, root, path)
            rows += new
            if progress is not None and new:
                progress.write(json.dumps({"file": str(path.relative_to(root.parent)), "rows": len(new),
                                           "seconds": round(time.perf_counter() - t0, 1)}) + "\n")
                progress.flush()
    summary = summarize(rows, [lib for lib, _ in _library_roots(libraries, paths)])
    summary["stubbed_modules"] = sorted(finder.stubbed)
    return {"summary": summary, "rows": rows}


def _check_file(lib: str, root: Path, path: Path) -> List[Dict[str, Any]]:
    """The rows of one library file: every kernel with tiling parameters, lowered or why not."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    if "triton" not in text or ".jit" not in text:
        return []
    rel = str(path.relative_to(root.parent))
    try:
        module_spec = analyze_file(path)
    except Exception as exc:  # the static side failed: the corpus bench counts it
        return [{"library": lib, "file": rel, "kernel": "*", "lowered": False,
                 "reason": f"analysis failed: {type(exc).__name__}"}]
    kernels = [k for k in module_spec.kernels if any(p.tiling for p in k.params)]
    if not kernels:
        return []
    try:
        with quiet_fds():
            module, used = import_module(_module_name(root, path), root)
        import_error = None
    except BaseException as exc:  # noqa: BLE001 - a library module that needs more than this machine has
        module, used, import_error = None, [], f"import failed: {type(exc).__name__}: {str(exc)[:120]}"
    rows = []
    for spec in kernels:
        row: Dict[str, Any] = {"library": lib, "file": rel, "kernel": spec.name, "complete": not spec.incomplete}
        if used:
            row["imported_with"] = list(used)
        jf, how = None, import_error
        if module is not None:
            with quiet_fds():
                obj, how = kernel_object(module, spec.name, path)
            jf = jit_function(obj)
            if obj is not None and jf is None:
                how = f"not a JITFunction under its decorators ({type(obj).__name__})"
            elif how and jf is not None:
                row["found"] = how
        if jf is None:
            row.update({"lowered": False, "reason": how or "no JITFunction of that name in the module"})
        else:
            try:
                row.update(check_kernel(spec, jf, vars(module)))
            except Exception as exc:  # a probe the harness cannot build: not lowered, with why
                row.update({"lowered": False, "reason": f"harness: {type(exc).__name__}: {str(exc)[:160]}"})
        rows.append(row)
    return rows


def summarize(rows: List[Dict[str, Any]], libraries: Sequence[str]) -> Dict[str, Any]:
    """Agreement counts over the rows (per library, overall) and the commonest reasons for not lowering.

    A probe-limited row (a disagreement no realistic probe confirms) is neither an agreement nor a
    disagreement: the agreement is over the lowered rows that are not probe-limited."""
    lowered = [r for r in rows if r.get("lowered")]
    limited = [r for r in lowered if not r["problems"] and r.get("probe_limited")]
    agree = [r for r in lowered if not r["problems"] and not r.get("probe_limited")]
    judged = len(lowered) - len(limited)
    confident_wrong = [r for r in lowered if r["problems"] and r["complete"]]
    return {
        "kernels_with_tiling": len(rows),
        "lowered": len(lowered),
        "probe_limited": len(limited),
        "agree": len(agree),
        "agreement_pct": round(100.0 * len(agree) / judged, 1) if judged else None,
        "disagree": len(lowered) - len(limited) - len(agree),
        "disagree_where_static_complete": len(confident_wrong),
        "by_library": {lib: {"kernels": sum(r["library"] == lib for r in rows),
                             "lowered": sum(r["library"] == lib and bool(r.get("lowered")) for r in rows),
                             "probe_limited": sum(r["library"] == lib for r in limited),
                             "agree": sum(r["library"] == lib for r in agree)} for lib in libraries},
        "imported_with": dict(Counter(u for r in rows for u in r.get("imported_with", []))),
        "nested_kernels_found": sum(bool(r.get("found")) for r in rows),
        "not_lowered_reasons": Counter((r.get("reason") or "")[:60] for r in rows if not r.get("lowered")).most_common(10),
    }


def write_md(report: Dict[str, Any], path: Path, command: str) -> None:
    """The Markdown report: the summary, per library, every disagreement, every probe-limited row."""
    s = report["summary"]
    shown = re.sub(r"--file (\S{200,})", lambda m: f"--file <{m.group(1).count(',') + 1} files: the JSON's command>",
                   command)
    lines = ["# Static reader vs Triton IR (dev corpus)", "", f"Command: `{shown}`", "",
             f"- kernels with tiling parameters: {s['kernels_with_tiling']}",
             f"- lowered by Triton on the CPU: {s['lowered']}",
             f"- probe-limited (a difference no realistic probe point confirms): {s.get('probe_limited', 0)}",
             f"- agree (tiling set, tile shapes, dot extents), of the rest: {s['agree']} ({s['agreement_pct']}%)",
             f"- disagreements where the static verdict says complete: {s['disagree_where_static_complete']}",
             f"- imports that needed a harness stand-in: {s.get('imported_with', {})}; kernels defined under a "
             f"function or guard, re-run at module level: {s.get('nested_kernels_found', 0)}", "",
             "| library | kernels | lowered | probe-limited | agree |", "|---|---|---|---|---|"]
    for lib, v in s["by_library"].items():
        lines.append(f"| {lib} | {v['kernels']} | {v['lowered']} | {v.get('probe_limited', 0)} | {v['agree']} |")
    lines += ["", "Probes (bench/ir_probes.py, docs/runtime-oracle.md): two base points per kernel, flags on with "
              "size constexprs at 64 and static_range counts at 4, then flags off with 128 and 8; tiling parameters "
              "from the first autotune config, the kernel's launches (evaluated over the point's sizes and the "
              "launcher's assignments) or 32; each integer constexpr doubled (and halved at the second point), "
              "constexprs Triton refuses to move alone moved together.  The second point is lowered only when the "
              "first disagrees.  A loop bound or step alone is work per program, not a tile.", "",
              "## Not lowered (most common reasons)", ""]
    lines += [f"- {n} x `{why}`" for why, n in s["not_lowered_reasons"]]
    for title, key in (("Disagreements", "problems"), ("Probe-limited", "probe_limited")):
        lines += ["", f"## {title}", ""]
        for r in report["rows"]:
            if r.get("lowered") and r.get(key) and (key == "problems" or not r["problems"]):
                verdict = "complete" if r["complete"] else "incomplete"
                lines.append(f"- `{r['file']}` `{r['kernel']}` (static: {verdict}; probe {r['probe']}):")
                lines += [f"  - {p}" for p in r[key]]
    path.write_text("\n".join(lines) + "\n")


_DEFAULT_OUT = str(ROOT / "bench" / "results" / "static_vs_ir")


def main() -> int:
    """CLI: run the harness and write the results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", action="append", help="only these libraries (default: all five)")
    parser.add_argument("--merge", nargs="+", metavar="PART.json",
                        help="join the JSON of parts run separately (a later part's rows replace an earlier one's)")
    parser.add_argument("--stub", action="append", help="another missing third-party package to stand in for")
    parser.add_argument("--path", action="append", default=[], help="a package folder to check (any library)")
    parser.add_argument("--file", help="only files whose path contains this text (several: comma-separated)")
    parser.add_argument("--shard", help="I/N: every N-th file from the I-th (run the N parts side by side, then --merge)")
    parser.add_argument("--out", default=_DEFAULT_OUT)
    args = parser.parse_args()
    if os.environ.get("TRITON_INTERPRET"):
        print("run without TRITON_INTERPRET: the interpreter cannot lower kernels", file=sys.stderr)
        return 2
    libs = args.library or ([] if args.path else list(LIBRARIES))
    t0 = time.perf_counter()
    if args.merge:  # parts run side by side (--library ... --out PART), joined into one report
        parts = [json.loads(Path(m).read_text()) for m in args.merge]
        by_key: Dict[tuple, Dict[str, Any]] = {}
        for part in parts:  # a later part's row for the same kernel replaces an earlier one (a partial re-run)
            for r in part["rows"]:
                by_key[(r["library"], r["file"], r["kernel"])] = r
        rows = list(by_key.values())
        report = {"summary": summarize(rows, sorted({r["library"] for r in rows}, key=str)), "rows": rows}
        report["summary"]["seconds"] = round(sum(p["summary"].get("seconds", 0) for p in parts), 1)
        report["summary"]["stubbed_modules"] = sorted({m for p in parts for m in p["summary"].get("stubbed_modules", [])})
    else:
        shard = tuple(int(x) for x in args.shard.split("/")) if args.shard else None
        report = run(libs, list(STUBS) + (args.stub or []), args.path, args.file, sys.stderr, shard)
        report["summary"]["seconds"] = round(time.perf_counter() - t0, 1)
    out = Path(args.out)
    command = "python bench/static_vs_ir.py" + "".join(f" --library {x}" for x in args.library or []) + \
        "".join(f" --path {x}" for x in args.path) + (f" --file {args.file}" if args.file else "") + \
        (f" --shard {args.shard}" if args.shard else "") + (f" --out {args.out}" if args.out != _DEFAULT_OUT else "")
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
