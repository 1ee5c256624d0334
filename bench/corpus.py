"""How well tiletune reads real kernel libraries (issue: read real kernels right).

For each library of the dev corpus (liger-kernel 0.8.5, torchao 0.18.0,
gemlite 0.6.0.post2, fla-core 0.6.0, unsloth 2026.10.9; ``bench/fetch_corpus.sh`` fetches them) it reports:

* kernels, kernels with tiling parameters, and the share analysed complete
  (``@triton.jit`` functions called with tiles, a parameter indexed as a
  tile, are device helpers, not kernels: counted apart, as "device functions");
* tiling recall against the library's own ``triton.autotune`` configs: of the
  names a literal config list sets that size a tile in the kernel (appear in
  a ``tl.arange`` extent, a block shape or a ``range`` step), the share the
  analysis classes as tiling parameters;
* kernels whose helpers, imported from a module inside the library, are left
  unread;
* ``synth-configs`` top-1 results (at the shapes below, on h100) with a tile
  over Triton's 1,048,576-element limit or a ``tl.dot`` operand under 16;
* tuned parameters that a launch anywhere in the library fixes (found by an
  independent scan of every ``name[grid](...)`` call, whatever the imports;
  keyword or positional, bound by signature order as Triton binds them), that
  the kernel's autotune ``key`` lists or that ``@triton.heuristics`` sets;
* crashes: files whose analysis raises, kernels where synth-configs' path
  raises anything but tiletune's own errors;
* whole-library analysis time.

Run: ``python bench/corpus.py`` (writes ``bench/results/corpus.{json,md}``);
``--time-only [--checkout DIR]`` prints the analysis time alone, of this
tree or of another checkout of tiletune (the baseline: ``git worktree add
/tmp/base <commit>``); run both back to back on a quiet machine.
"""

from __future__ import annotations

import argparse
import ast
import gc
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import corpus  # noqa: E402  (tests/corpus.py: where the libraries are unpacked)
from tiletune.analysis.tunability import is_meta_lookup  # noqa: E402  (the one definition of a forwarded value)

#: Sizes every runtime argument takes for the synthesis check (one realistic
#: large problem); constexprs left alone without a value get FIXED_DEFAULT.
SHAPE = 4096
FIXED_DEFAULT = 64
NUMEL_LIMIT = 1048576


def _module_path(base: Path, importer: Path, level: int, module: str) -> Optional[Path]:
    """The file ``from <level dots><module>`` names, from the library's top folder ``base``."""
    parts = [p for p in module.split(".") if p]
    if level:
        folder = importer.parent
        for _ in range(level - 1):
            folder = folder.parent
    else:
        folder = base
    target = folder.joinpath(*parts) if parts else folder
    for candidate in (target.with_suffix(".py"), target / "__init__.py"):
        if candidate.is_file():
            return candidate.resolve()
    return None


#: Prefix of the entry ``library_launch_keywords`` records for a launch's positional-argument count.
POSITIONAL = "#positional:"


def library_launch_keywords(files: list[Path], base: Path) -> dict[tuple[Path, str], set[str]]:
    """(defining file, kernel name) -> keywords any ``kernel[...](...)`` call in the library passes
    (lookups of the same name excluded), and ``"#positional:N"`` for each launch passing N
    positional arguments (no ``*args``): they fix the first N parameters, as Triton binds them.

    Independent of tiletune's resolver: Python's ``ast`` and a plain reading of
    each launching file's imports (``base`` is the folder above the package).
    """
    out: dict[tuple[Path, str], set[str]] = {}
    for path in files:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except (SyntaxError, ValueError):
            continue
        origin: dict[str, Optional[Path]] = {}  # local name -> file it was imported from
        modules: dict[str, Optional[Path]] = {}  # local name of an imported module -> its file
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                src = _module_path(base, path, node.level, node.module or "")
                for alias in node.names:
                    local = alias.asname or alias.name
                    sub = _module_path(base, path, node.level, f"{node.module or ''}.{alias.name}".strip("."))
                    if sub is not None and sub != src:
                        modules[local] = sub
                    origin[local] = src
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        modules[alias.asname] = _module_path(base, path, 0, alias.name)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)):
                continue
            target = node.func.value
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                name, where = target.attr, modules.get(target.value.id)
            elif isinstance(target, ast.Name):
                name, where = target.id, origin.get(target.id, path.resolve())
            else:
                continue
            if where is None:
                continue
            if not any(isinstance(a, ast.Starred) for a in node.args):  # positionals bind by signature order
                out.setdefault((where, name), set()).add(f"{POSITIONAL}{len(node.args)}")
            for kw in node.keywords:
                if kw.arg is None:
                    continue
                if is_meta_lookup(kw.arg, ast.unparse(kw.value)):
                    continue
                out.setdefault((where, name), set()).add(kw.arg)
    return out


def file_config_names(path: Path) -> set[str]:
    """Keys of every ``Config({...})`` dict literal in a file (config lists built in variables,
    comprehensions or helper functions included)."""
    names: set[str] = set()
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (SyntaxError, ValueError):
        return names
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Dict):
            func = node.func
            fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if fname == "Config":
                names.update(k.value for k in node.args[0].keys if isinstance(k, ast.Constant) and isinstance(k.value, str))
    return names


def file_heuristic_names(path: Path, kernel: str) -> set[str]:
    """Keys of every ``@...heuristics({...})`` dict on a function named ``kernel`` in a file
    (independent of tiletune: Python's ``ast``)."""
    names: set[str] = set()
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (SyntaxError, ValueError):
        return names
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name != kernel:
            continue
        for dec in node.decorator_list:
            if not (isinstance(dec, ast.Call) and dec.args and isinstance(dec.args[0], ast.Dict)):
                continue
            func = dec.func
            if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")) == "heuristics":
                names.update(k.value for k in dec.args[0].keys if isinstance(k, ast.Constant) and isinstance(k.value, str))
    return names


def _sizes_tiles(spec: Any, name: str) -> bool:
    """True when ``name`` sizes a tile in the kernel's graph or accesses (ground truth for recall)."""
    for a in spec.accesses:
        if a.shape and any(name in d.symbols() for d in a.shape if d is not None):
            return True
    for d in spec.dots:
        if any(e is not None and name in e.symbols() for e in (d.m, d.n, d.k)):
            return True
    return any(name in str(data.get("shape") or "") for _, data in spec.graph.nodes(data=True))


def _top1_problems(spec: Any, verdict: Any) -> tuple[Optional[str], Optional[dict]]:
    """Run synth-configs' path at the bench shapes; return (problem or None, top-1 kwargs).

    A crash (any exception but tiletune's own errors) is a problem whose text starts with ``crash:``."""
    try:
        return _top1_problems_unguarded(spec, verdict)
    except Exception as exc:  # noqa: BLE001 - a crash of synth-configs' path is what is reported
        return f"crash: {type(exc).__name__}: {exc}", None


def _top1_problems_unguarded(spec: Any, verdict: Any) -> tuple[Optional[str], Optional[dict]]:
    """:func:`_top1_problems` without the crash guard."""
    from tiletune.analysis.tunability import fixed_values
    from tiletune.errors import TiletuneError
    from tiletune.synthesis import required_shapes, synthesize
    from tiletune.synthesis.cli import default_dtypes
    from tiletune.synthesis.incomplete import unknown_guards
    from tiletune.synthesis.targets import get_target

    target = get_target("h100")
    shapes = {n: SHAPE for n in required_shapes(spec)}
    fixed, missing = fixed_values(spec, verdict, {})
    fixed.update({n: FIXED_DEFAULT for n in missing})
    try:
        result = synthesize(spec, shapes, default_dtypes(spec), target, fixed=fixed or None, top_k=1,
                            prune=unknown_guards(spec, target, verdict.tuned, fixed) or None)
    except TiletuneError:
        return None, None
    if not result.candidates:
        return None, None
    top = result.candidates[0]
    env = {**shapes, **fixed, **top.kwargs}
    for a in spec.accesses:
        if a.shape:
            try:
                numel = 1
                for d in a.shape:
                    numel *= int(d.evaluate(env))
            except Exception:  # noqa: BLE001 - a dimension over unknown symbols
                continue
            if numel > NUMEL_LIMIT:
                return f"tile of {numel} elements at line {a.span.line}", dict(top.kwargs)
    values = [v for n, v in top.kwargs.items() if n in verdict.tuned and isinstance(v, int)]
    if len(values) >= 2:
        biggest = sorted(values)[-2:]
        if biggest[0] * biggest[1] > NUMEL_LIMIT and not spec.complete:
            return f"two tiling values multiply to {biggest[0] * biggest[1]}", dict(top.kwargs)
    for d in spec.dots:
        for e in (d.m, d.n, d.k):
            if e is None:
                continue
            try:
                v = int(e.evaluate(env))
            except Exception:  # noqa: BLE001
                continue
            if v < 16:
                return f"tl.dot operand dimension {e}={v} at line {d.span.line}", dict(top.kwargs)
    return None, dict(top.kwargs)


def measure_library(package: str, synth: bool = True, analyse: Optional[Callable[[Path], Any]] = None) -> dict[str, Any]:
    """All metrics of one library (see the module docstring).

    ``analyse``: what reads a file (default ``analyze_file``); the tests pass one that shares its
    analyses with the other corpus tests of the session."""
    from tiletune.analysis import analyze_file

    analyse = analyse or analyze_file
    from tiletune.analysis.tunability import tunability

    files = corpus.library_files(package)
    launch_kw = library_launch_keywords(files, corpus.library_root(package).parent)
    row: dict[str, Any] = {"library": package, "files": len(files), "kernels": 0, "with_tiling": 0, "complete": 0,
                           "config_names": 0, "config_names_found": 0, "helpers_unread": 0, "top1_checked": 0,
                           "top1_bad": 0, "tuned_but_fixed": 0, "errors": 0, "synth_crashes": 0,
                           "device_functions": 0}
    incomplete, misses, unread, bad, fixed_tuned, errors = [], [], [], [], [], []
    t0 = time.perf_counter()
    specs = []
    for path in files:
        try:
            specs.extend((path, k) for k in analyse(path).kernels)
        except Exception as exc:  # noqa: BLE001 - reported
            errors.append(f"{path.name}: {type(exc).__name__}: {exc}")
    row["analysis_s"] = round(time.perf_counter() - t0, 2)
    root = corpus.library_root(package)
    for path, spec in specs:
        rel = str(path.relative_to(root.parent))
        row["kernels"] += 1
        where = f"{rel}:{spec.name}"
        if getattr(spec, "device_function", False):  # called with tiles: a device helper, not a kernel
            row["device_functions"] += 1
        elif spec.tiling_params:
            row["with_tiling"] += 1
            if spec.complete:
                row["complete"] += 1
            else:
                incomplete.append((where, spec.incomplete[:3]))
        lost = [r for r in spec.incomplete if r.startswith("unresolved helper: ") and
                ("not found" in r or "cycle" in r or "not a @triton.jit" in r or "cannot be parsed" in r)]
        if lost:
            row["helpers_unread"] += 1
            unread.append((where, lost))
        tiling = {p.name for p in spec.tiling_params}
        at = spec.autotune
        if at is not None and not at.configs_empty:
            names = set()
            for c in at.configs or ():
                names.update(c.kwargs)
            if at.configs is None:  # a list built elsewhere in the file: every Config key there
                names = file_config_names(path)
            sizing = {n for n in names if n in spec.param_names and _sizes_tiles(spec, n)}
            row["config_names"] += len(sizing)
            row["config_names_found"] += len(sizing & tiling)
            if sizing - tiling:
                misses.append((where, sorted(sizing - tiling)))
        verdict = tunability(spec)
        passed = launch_kw.get((path.resolve(), spec.name), set())
        forbidden = {n for n in passed if not n.startswith(POSITIONAL)}
        forbidden |= set(at.key or () if at is not None else ()) | file_heuristic_names(path, spec.name)
        n_pos = max((int(n[len(POSITIONAL):]) for n in passed if n.startswith(POSITIONAL)), default=0)
        forbidden |= {p.name for p in spec.params if p.index < n_pos}
        wrong = sorted(set(verdict.tuned) & forbidden)
        if wrong:
            row["tuned_but_fixed"] += 1
            fixed_tuned.append((where, wrong))
        if synth and verdict.tuned:
            problem, top = _top1_problems(spec, verdict)
            if top is not None:
                row["top1_checked"] += 1
            if problem and problem.startswith("crash:"):
                row["synth_crashes"] += 1
                errors.append(f"{where}: synth-configs {problem}")
            elif problem:
                row["top1_bad"] += 1
                bad.append((where, problem, top))
    row["errors"] = len(errors)
    with_tiling = row["with_tiling"] or 1
    row["complete_pct"] = round(100.0 * row["complete"] / with_tiling, 1)
    row["recall_pct"] = round(100.0 * row["config_names_found"] / (row["config_names"] or 1), 1)
    row["details"] = {"incomplete": incomplete, "recall_misses": misses, "helpers_unread": unread,
                      "top1_bad": bad, "tuned_but_fixed": fixed_tuned, "errors": errors}
    return row


def time_only(checkout: str = "") -> None:
    """Print whole-library analysis time per library, of ``checkout``'s tiletune when given."""
    if checkout:
        # an editable install's import hook would win over sys.path: drop it for this process
        sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
        sys.path.insert(0, str(Path(checkout).resolve()))
        for name in [m for m in sys.modules if m == "tiletune" or m.startswith("tiletune.")]:
            del sys.modules[name]  # imported above from wherever came first: time the checkout's
    from tiletune.analysis import analyze_file

    for package in corpus.LIBRARIES:
        files = corpus.library_files(package)
        gc.collect()
        t0 = time.perf_counter()
        for path in files:
            try:
                analyze_file(path)
            except Exception:  # noqa: BLE001
                pass
        print(f"{package}={time.perf_counter() - t0:.2f}")


def _before_table(before: list[dict[str, Any]], label: str) -> list[str]:
    """The headline numbers of an earlier run (``--before corpus.json``) for comparison."""
    lines = ["", f"Before ({label}), same bench on the same corpus:", "",
             "| library | with tiling | complete | helpers unread | tuned but fixed | analyze / synth crashes |",
             "|---|---|---|---|---|---|"]
    for r in before:
        crashes = r.get("synth_crashes", 0)
        lines.append(f"| {r['library']} | {r['with_tiling']} | {r['complete']} ({r['complete_pct']}%) | "
                     f"{r['helpers_unread']} | {r['tuned_but_fixed']} | {r['errors'] - crashes} / {crashes} |")
    return lines


def to_markdown(rows: list[dict[str, Any]], baseline: dict[str, float],
                before: Optional[list[dict[str, Any]]] = None, before_label: str = "",
                title: str = "Real kernel libraries: analysis quality", note: str = "") -> str:
    """The committed report (``note``: a paragraph under the title, e.g. where the libraries came from)."""
    lines = [
        f"# {title}",
        "",
        "Produced by `python bench/corpus.py` (after `bash bench/fetch_corpus.sh`) on the 2-core CPU machine; "
        "synthesis checks on target h100 with every runtime size = "
        f"{SHAPE} (fixed constexprs with no value: {FIXED_DEFAULT}).",
        "",
    ]
    if note:
        lines += [note, ""]
    lines += [
        "| library | files | kernels | device functions | with tiling | complete | tiling recall | helpers unread | "
        "top-1 bad / checked | tuned but fixed | analyze / synth crashes | analysis s | baseline s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        base = baseline.get(r["library"])
        lines.append(
            f"| {r['library']} | {r['files']} | {r['kernels']} | {r['device_functions']} | {r['with_tiling']} | {r['complete']} "
            f"({r['complete_pct']}%) | {r['config_names_found']}/{r['config_names']} ({r['recall_pct']}%) | "
            f"{r['helpers_unread']} | {r['top1_bad']} / {r['top1_checked']} | {r['tuned_but_fixed']} | "
            f"{r['errors'] - r['synth_crashes']} / {r['synth_crashes']} | "
            f"{r['analysis_s']} | {base if base is not None else 'n/a'} |"
        )
    if before:
        lines += _before_table(before, before_label or "an earlier run")
    lines += ["", "Goals: complete >= 99% (fla-core, unsloth: >= 97%), recall >= 98%, 0 helpers unread, 0 top-1 bad, "
              "0 tuned but fixed, 0 crashes, "
              "analysis time <= 1.5x baseline. `analysis s` is timed inside this run; `baseline s` comes from "
              "`python bench/corpus.py --time-only --checkout <worktree of the commit before this work>` "
              "(pass it as --baseline LIB=S,...). Compare times taken back to back on the same machine state.", ""]
    for r in rows:
        d = r["details"]
        lines.append(f"## {r['library']}")
        for title, key in (("Incomplete", "incomplete"), ("Recall misses", "recall_misses"),
                           ("Helpers unread", "helpers_unread"), ("Top-1 problems", "top1_bad"),
                           ("Tuned but fixed", "tuned_but_fixed"), ("Errors", "errors")):
            items = d[key]
            if not items:
                continue
            lines.append(f"- {title} ({len(items)}):")
            for item in items[:40]:
                lines.append(f"  - {item if isinstance(item, str) else ' — '.join(map(str, item))}")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    """Command line: see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-only", action="store_true")
    parser.add_argument("--checkout", default="", help="with --time-only: time this checkout's tiletune")
    parser.add_argument("--baseline", default="", help="LIB=SECONDS,... from --time-only on the baseline checkout")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results"))
    parser.add_argument("--before", default="", help="corpus.json of an earlier run, shown for comparison")
    parser.add_argument("--before-label", default="", help="what --before measured (a commit)")
    parser.add_argument("--root", default="", help="measure the libraries unpacked under this folder "
                        "(each as <root>/<anything>/[<anything>/]<package>/__init__.py) instead of the dev corpus")
    parser.add_argument("--library", action="append", default=[],
                        help="package name to measure (repeatable; default: the dev corpus's five)")
    parser.add_argument("--stem", default="corpus", help="file name stem of the report: <out>/<stem>.{json,md}")
    parser.add_argument("--no-synth", action="store_true", help="skip the synth-configs top-1 check")
    parser.add_argument("--title", default="Real kernel libraries: analysis quality", help="the report's title")
    parser.add_argument("--note", default="", help="a paragraph under the title (where the libraries came from)")
    args = parser.parse_args()
    if args.root:
        os.environ["TILETUNE_CORPUS"] = str(Path(args.root).resolve())
    if args.time_only:
        time_only(args.checkout)
        return
    libraries = args.library or list(corpus.LIBRARIES)
    missing = [p for p in libraries if corpus.library_root(p) is None]
    if missing:
        sys.exit(f"libraries not found under {corpus.corpus_dir()} ({', '.join(missing)}): run bash "
                 "bench/fetch_corpus.sh, or pass --root DIR holding <DIR>/<name>/<package>/__init__.py")
    baseline = {k: float(v) for k, v in (x.split("=") for x in args.baseline.split(",") if x)}
    rows = [measure_library(p, synth=not args.no_synth) for p in libraries]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{args.stem}.json").write_text(json.dumps({"rows": rows, "baseline_s": baseline}, indent=1, default=str) + "\n")
    before = json.loads(Path(args.before).read_text())["rows"] if args.before else None
    (out / f"{args.stem}.md").write_text(to_markdown(rows, baseline, before, args.before_label,
                                                    title=args.title, note=args.note) + "\n")
    for r in rows:
        print({k: v for k, v in r.items() if k != "details"})


if __name__ == "__main__":
    main()
