"""Command line: ``tiletune analyze|lint|lsp|cache|tune|synth-configs`` and ``synth-configs``.

Each subcommand registers itself in :func:`build_parser` through an
``_add_<name>(subparsers)`` function that sets ``func`` to a handler taking
the parsed arguments and returning the exit status.  Errors tiletune raises on
purpose (:class:`~tiletune.errors.TiletuneError`) print on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Callable, Optional, Sequence, TextIO

from .errors import TiletuneError

__all__ = ["main", "synth_configs_main", "build_parser", "format_module", "graph_to_dot"]

Handler = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    """The ``tiletune`` argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(prog="tiletune", description="Automatic tiling for Triton kernels.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_analyze(sub)
    sub.add_parser("synth-configs", add_help=False, help="ranked triton.Config candidates for a kernel "
                   "(the synth-configs command; see `tiletune synth-configs --help`)")
    from .lint.cli import add_lint_parser, add_lsp_parser
    from .runtime.cache_cli import add_cache_parser
    from .runtime.pretune import add_tune_parser

    add_lint_parser(sub)
    add_lsp_parser(sub)
    add_cache_parser(sub)
    _add_explain(sub)
    add_tune_parser(sub)
    return parser


def _add_explain(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser("explain", help="why a cached config was chosen: candidates predicted and measured, "
                       "the winner's margin, what was skipped")
    p.add_argument("name", help="kernel/function name, cache file stem or path")
    p.add_argument("--dir", default=None, help="cache directory (default: TILETUNE_CACHE_DIR or the user cache dir)")

    def run(args: argparse.Namespace) -> int:
        from .runtime.cache_cli import run_explain

        return run_explain(args.name, args.dir, sys.stdout)

    p.set_defaults(func=run)


def _version() -> str:
    from .version import installed_version

    return installed_version()


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``tiletune`` console script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "synth-configs":  # the synth-configs command as a subcommand, with its own parser
        return synth_configs_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Optional[Handler] = getattr(args, "func", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return handler(args)
    except TiletuneError as exc:
        print(f"tiletune {args.command}: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. piped into head
        return 0


def synth_configs_main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``synth-configs`` console script (see :mod:`tiletune.synthesis.cli`)."""
    from .synthesis.cli import main as synth_main

    return synth_main(argv)


# ----- tiletune analyze ------------------------------------------------------------
def _add_analyze(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "analyze",
        help="show what tiletune reads from a kernel file",
        description="Analyse a Python file's Triton kernels without running it.",
    )
    p.add_argument("file", help="Python source file, or a directory (every *.py under it; progress on a terminal)")
    p.add_argument("--kernel", metavar="NAME", help="only this kernel")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="ModuleSpec.to_dict() as JSON (docs/analysis-schema.md)")
    fmt.add_argument("--dot", action="store_true", help="the kernel's dataflow graph in Graphviz dot")
    p.set_defaults(func=_run_analyze)


def _run_analyze(args: argparse.Namespace) -> int:
    from .analysis import analyze_file

    if os.path.isdir(args.file):
        return _run_analyze_dir(args)
    module = analyze_file(args.file)
    kernels = module.kernels
    if args.kernel is not None:
        kernels = [k for k in kernels if k.name == args.kernel]
        if not kernels:
            names = ", ".join(k.name for k in module.kernels) or "none"
            print(f"tiletune analyze: no kernel {args.kernel!r} in {args.file} (kernels: {names})", file=sys.stderr)
            return 2
    out = sys.stdout
    if args.json:
        data = module.to_dict()
        data["kernels"] = [k.to_dict() for k in kernels]
        json.dump(data, out, indent=2)
        out.write("\n")
    elif args.dot:
        for k in kernels:
            out.write(graph_to_dot(k.graph, k.name))
    else:
        if not kernels:
            out.write(f"{args.file}: no Triton kernels found\n")
        format_module(module, kernels, out)
    return 0


def _run_analyze_dir(args: argparse.Namespace) -> int:
    """``tiletune analyze DIR``: every Python file under DIR; a file that cannot be analysed is reported
    on stderr and the others still are (exit 2 if any failed, else 0)."""
    from .analysis import analyze_file
    from .lint.cli import _progress
    from .lint.runner import iter_python_files

    files = list(iter_python_files([args.file]))
    out, failed, found, modules = sys.stdout, 0, 0, []
    with _progress(sys.stderr, len(files), "analyze") as advance:
        for path in files:
            try:
                module = analyze_file(path)
            except TiletuneError as exc:
                failed += 1
                print(f"tiletune analyze: {exc}", file=sys.stderr)
                continue
            finally:
                advance(path)
            kernels = [k for k in module.kernels if args.kernel is None or k.name == args.kernel]
            if not kernels:
                continue
            found += len(kernels)
            if args.json:
                data = module.to_dict()
                data["kernels"] = [k.to_dict() for k in kernels]
                modules.append(data)
            elif args.dot:
                for k in kernels:
                    out.write(graph_to_dot(k.graph, k.name))
            else:
                if found > len(kernels):
                    out.write("\n")
                format_module(module, kernels, out)
    if args.json:
        json.dump(modules, out, indent=2)
        out.write("\n")
    elif not found and not args.dot:
        what = f"no kernel {args.kernel!r}" if args.kernel else "no Triton kernels"
        out.write(f"{args.file}: {what} found in {len(files)} file(s)\n")
    if args.kernel is not None and not found:
        return 2
    return 2 if failed else 0


def format_module(module: Any, kernels: Sequence[Any], out: TextIO) -> None:
    """Write the readable report of ``kernels`` (KernelSpecs of ``module``) to ``out``."""
    if module.enables_tiletune:
        out.write(f"{module.file}: enables tiletune (tiletune.patch / tiletune.autotune)\n")
    for i, k in enumerate(kernels):
        if i:
            out.write("\n")
        _format_kernel(k, out)


def _format_kernel(k: Any, out: TextIO) -> None:
    w = out.write
    w(f"kernel {k.name}  ({k.file or '<source>'}:{k.span.line})\n")
    if k.complete:
        w("  analysis: complete\n")
    else:
        w(f"  analysis: INCOMPLETE ({len(k.incomplete)} gap(s); synthesis keeps only configs safe under them)\n")
        for reason in k.incomplete:
            w(f"    - {reason}\n")
    from .analysis.tunability import tunability

    verdict = tunability(k)
    if verdict.tuned or verdict.fixed:
        w("  tuned: " + (", ".join(verdict.tuned) or "none") + "\n")
        for name, why in verdict.fixed.items():
            w(f"  not tuned: {name} ({why})\n")
    for name, reasons in getattr(k, "meaning", {}).items():
        state = "tuned by configs=[] only over values the outputs agree on" if verdict.is_tuned(name) else "not tuned"
        w(f"  may carry meaning: {name} ({state}): {reasons[0]}\n")
    if k.helpers:
        w("  helpers followed: " + ", ".join(k.helpers) + "\n")
    if k.decorators:
        w("  decorators: " + ", ".join(f"@{d.qualname}{'(...)' if d.has_call else ''} [{d.kind}]" for d in k.decorators) + "\n")
    if k.autotune is not None:
        _format_autotune(k.autotune, w)
    if k.heuristics:
        w(f"  heuristics: {', '.join(k.heuristics)}\n")
    w("  params:\n")
    for p in k.params:
        bits = []
        if p.constexpr:
            bits.append("constexpr")
        if p.is_pointer:
            bits.append("pointer")
        if p.tiling:
            bits.append(f"tiling role={p.role.value}")
        elif p.constexpr:
            bits.append(f"role={p.role.value}")
        if p.axis is not None:
            bits.append(f"axis={p.axis}")
        if p.bound is not None:
            bits.append(f"bound={p.bound}")
        if p.tiling or p.min_value != 1:
            bits.append(f"min={p.min_value}")
        if p.power_of_two:
            bits.append("pow2")
        if p.default is not None:
            bits.append(f"default={p.default}")
        w(f"    {p.index:>2} {p.name:<20} {' '.join(bits)}\n".rstrip() + "\n")
    if k.accesses:
        w("  accesses:\n")
        for a in k.accesses:
            shape = "?" if a.shape is None else "[" + ", ".join(map(str, a.shape)) + "]"
            extra = []
            if a.in_loop:
                extra.append(f"in loop trips={a.trips}" if a.trips is not None else "in loop")
            if a.block_ptr:
                extra.append("block_ptr")
            if a.feeds_dot:
                extra.append("feeds dot")
            if a.contiguous_dim is not None:
                extra.append(f"contiguous dim {a.contiguous_dim}")
            w(f"    {a.span.where()}: {a.kind} {a.pointer or '?'} {shape} {a.dtype or '?'} {' '.join(extra)}".rstrip() + "\n")
    if k.dots:
        w("  dots:\n")
        for d in k.dots:
            types = f"{d.a_dtype or '?'} x {d.b_dtype or '?'} -> {d.acc_dtype or '?'}"
            loop = f" in loop trips={d.trips}" if d.in_loop else ""
            w(f"    {d.span.where()}: m={d.m} n={d.n} k={d.k}  {types}{loop}\n")
    if k.footprint is not None:
        w("  footprint:\n")
        for name, text in k.footprint.to_dict().items():
            w(f"    {name} = {text}\n")
    if k.static_asserts:
        w("  static asserts:\n")
        for s in k.static_asserts:
            w(f"    {s}\n")
    if k.launches:
        w("  launches:\n")
        for site in k.launches:
            _format_launch(site, w)
    if k.notes:
        w("  notes:\n")
        for n in k.notes:
            w(f"    {n}\n")


def _format_autotune(a: Any, w: Callable[[str], Any]) -> None:
    if a.configs is None:
        configs = f"configs={a.other.get('configs', '?')} (not a literal)"
    elif a.configs_empty:
        configs = "configs=[]"
    else:
        configs = f"{len(a.configs)} configs"
    parts = [configs]
    for name in ("key", "hints", "restore_value", "reset_to_zero"):
        value = getattr(a, name)
        if value is not None:
            parts.append(f"{name}={value}")
    parts += [f"{n}={t}" for n, t in a.other.items() if n != "configs"]
    w(f"  autotune (@{a.qualname}): {'; '.join(parts)}\n")
    for c in a.configs or []:
        opts = [f"num_warps={c.num_warps}"] if c.num_warps is not None else []
        opts += [f"num_stages={c.num_stages}"] if c.num_stages is not None else []
        opts += [f"{n}={v}" for n, v in c.extra.items()]
        unresolved = f"  unresolved: {c.unresolved}" if c.unresolved else ""
        w(f"    line {c.span.line}: {c.kwargs} {' '.join(opts)}{unresolved}\n")


def _format_launch(site: Any, w: Callable[[str], Any]) -> None:
    grid = "?" if site.grid is None else "(" + ", ".join(map(str, site.grid)) + ("," if len(site.grid) == 1 else "") + ")"
    w(f"    line {site.span.line}: grid {site.grid_kind} {grid}   <- {site.grid_source}\n")
    if site.grid_kind == "lambda" or site.meta_keys:
        w(f"      meta keys: {', '.join(site.meta_keys) or 'none'}{'' if site.reads_meta else ' (does not read meta)'}\n")
    w(f"      positional args: {site.positional_count}\n")
    if site.fixed:
        w("      fixed keywords: " + ", ".join(f"{n}={t}" for n, t in site.fixed.items()) + "\n")


# ----- dot ------------------------------------------------------------------------
def _dot_quote(text: Any) -> str:
    s = str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\r", "").replace("\n", "\\n")
    return f'"{s}"'


def graph_to_dot(graph: Any, name: str) -> str:
    """A networkx DiGraph as Graphviz dot text; node labels read ``kind: label [shape]``."""
    lines = [f"digraph {_dot_quote(name)} {{", "  node [shape=box, fontname=monospace];"]
    for node, data in graph.nodes(data=True):
        label = f"{data.get('kind', '?')}: {data.get('label', node)}"
        shape = data.get("shape")
        if shape is not None:
            label += " [" + (", ".join(map(str, shape)) if isinstance(shape, (list, tuple)) else str(shape)) + "]"
        lines.append(f"  {_dot_quote(node)} [label={_dot_quote(label)}];")
    for a, b, data in graph.edges(data=True):
        attr = f" [label={_dot_quote(data['label'])}]" if data.get("label") is not None else ""
        lines.append(f"  {_dot_quote(a)} -> {_dot_quote(b)}{attr};")
    lines.append("}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
