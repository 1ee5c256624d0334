"""``synth-configs``: print a pasteable ``configs=[triton.Config(...), ...]`` for a kernel.

Usage::

    synth-configs kernel.py --shape M=4096 --shape N=4096 --shape K=4096 --target h100
    synth-configs kernel.py --kernel softmax_kernel --shape n_cols=781 --dtype in_ptr=bf16 \\
        --target ascend910b2 --format json --explain

Pointers without ``--dtype`` are assumed fp16 when they feed ``tl.dot`` and
fp32 otherwise (a note on stderr names the assumption).  ``--explain``
prints the model (variables, domains, constraints), the number of feasible
points and each candidate's predicted cost.

Exit status: 0 configs printed, 1 nothing fits (the explanation goes to
stderr), 2 usage or input errors (bad file, unknown kernel or target,
missing shapes).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from typing import Any, Optional, Sequence

from ..errors import AnalysisError, InfeasibleError, SynthesisError, TiletuneError
from .constraints.ascend import UB_ESTIMATE
from .model import Candidate, SynthesisResult
from .space import normalize_dtype
from .targets import TARGETS

__all__ = ["main", "build_parser", "format_python", "format_json", "default_dtypes"]


def _version() -> str:
    from ..version import installed_version

    return installed_version()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``synth-configs``."""
    p = argparse.ArgumentParser(
        prog="synth-configs",
        description="Synthesize ranked triton.Config candidates for a Triton kernel from its source "
        "(no device needed): the tilings that fit the target chip, best predicted first.",
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    p.add_argument("file", help="Python file with the @triton.jit kernel")
    p.add_argument("--kernel", help="kernel name (default: the only tunable kernel in the file)")
    p.add_argument(
        "--shape",
        action="append",
        default=[],
        metavar="NAME=INT",
        help="runtime size, repeatable or comma separated: --shape M=4096 --shape N=4096",
    )
    p.add_argument(
        "--dtype",
        action="append",
        default=[],
        metavar="PTR=DTYPE",
        help="element type of a pointer argument (fp16, bf16, fp32, int8, ...); default fp16 for tl.dot inputs, else fp32",
    )
    p.add_argument("--target", help=f"target chip ({', '.join(TARGETS)}); default: the local device or $TILETUNE_TARGET")
    p.add_argument("--top-k", type=int, default=16, help="number of configs (default 16)")
    p.add_argument(
        "--hint",
        action="append",
        default=[],
        metavar="NAME=V1,V2",
        help="values of a non-tiling knob to try, e.g. --hint GROUP_SIZE_M=1,8",
    )
    p.add_argument(
        "--fixed",
        action="append",
        default=[],
        metavar="NAME=INT",
        help="a constexpr fixed at launch (not searched, not emitted), e.g. --fixed HEAD_DIM=64",
    )
    p.add_argument("--format", choices=("python", "json"), default="python", help="output format (default python)")
    p.add_argument("--explain", action="store_true", help="show the model, the feasible count and each candidate's predicted cost")
    p.add_argument("--import", dest="import_kernel", action="store_true",
                   help="import the file (runs its code; off by default) and check every config with Triton's own "
                   "front end on this machine (no GPU needed): configs Triton refuses are dropped")
    return p


class _UsageError(Exception):
    pass


def _cli_target(name: Optional[str], get_target, detect) -> tuple:
    """``(Target or None, problem or None)`` for ``--target NAME`` (else ``TILETUNE_TARGET``, else the local
    device), in the command line's words."""
    known = ", ".join(TARGETS)
    if name:
        try:
            return get_target(name), None
        except SynthesisError:
            return None, (f"--target {name}: unknown target; use one of {known}, or a JSON override such as "
                          "--target '{\"base\": \"h100\", \"shared_bytes\": 101376}'")
    try:
        return detect(), None
    except SynthesisError as exc:
        if "TILETUNE_TARGET" in str(exc) and "found" in str(exc):
            return None, f"no GPU or NPU here to read the target from: pass --target NAME ({known}) or set TILETUNE_TARGET"
        return None, f"TILETUNE_TARGET: {exc}"


def _pairs(items: Sequence[str], what: str) -> list[tuple[str, str]]:
    out = []
    for item in items:
        for part in item.split(",") if what != "hint" else [item]:
            part = part.strip()
            if not part:
                continue
            if "=" not in part:
                raise _UsageError(f"--{what} expects NAME=VALUE, got {part!r}")
            name, value = part.split("=", 1)
            name, value = name.strip(), value.strip()
            if not name.isidentifier():
                raise _UsageError(f"--{what}: {name!r} is not a parameter name")
            out.append((name, value))
    return out


#: Largest size ``--shape`` accepts (2**48: far past any tensor dimension, far below int64 overflow in products).
MAX_SHAPE = 1 << 48


def _int(value: str, what: str, name: str) -> int:
    try:
        number = int(value, 0)
    except ValueError:
        raise _UsageError(f"--{what} {name}={value!r}: not an integer") from None
    if number > MAX_SHAPE:  # (sizes below 1 are refused by the argument checks, naming that)
        raise _UsageError(f"--{what} {name}={value}: out of range; give a size of at most {MAX_SHAPE}")
    return number


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        low = text.lower()
        if low in ("true", "false"):
            return low == "true"
        return text


def default_dtypes(spec) -> dict[str, str]:
    """fp16 for pointers whose loads feed ``tl.dot``, fp32 for every other pointer the kernel uses."""
    from .space import _pointer_dtype_needs

    pointers: list[str] = []
    for p in spec.params:
        if p.is_pointer:
            pointers.append(p.name)
    for a in spec.accesses:
        if a.pointer and a.pointer not in pointers:
            pointers.append(a.pointer)
    for name in _pointer_dtype_needs(spec):
        if name not in pointers:
            pointers.append(name)
    dot_ptrs = {a.pointer for a in spec.accesses if a.feeds_dot and a.pointer}
    return {p: ("fp16" if p in dot_ptrs else "fp32") for p in pointers}


def _pick_kernel(module, name: Optional[str]):
    if name:
        try:
            return module.kernel(name)
        except KeyError as exc:
            raise _UsageError(str(exc).strip("'\"")) from None
    if not module.kernels:
        raise _UsageError(f"no Triton kernel found in {module.file}")
    if len(module.kernels) == 1:
        return module.kernels[0]
    tunable = [k for k in module.kernels if k.tiling_params]
    empty = [k for k in tunable if k.autotune is not None and k.autotune.configs_empty]
    for group in (empty, tunable):
        if len(group) == 1:
            return group[0]
    names = ", ".join(k.name for k in module.kernels)
    raise _UsageError(f"{module.file} has several kernels ({names}); pick one with --kernel NAME")


def format_python(result: SynthesisResult, explain: bool = False) -> str:
    """``configs = [triton.Config(...), ...]`` text (with cost comments under ``explain``)."""
    lines = []
    if explain:
        for line in result.model_summary:
            lines.append(f"# {line}")
        lines.append(f"# showing the best {len(result.candidates)} of {result.feasible_count} feasible points")
    lines.append("configs = [")
    for c in result.candidates:
        text = "    " + _config_text(c) + ","
        if explain:
            text += f"  # {_cost_text(c)}"
        lines.append(text)
    lines.append("]")
    return "\n".join(lines) + "\n"


def _config_text(c: Candidate) -> str:
    kw = {**c.kwargs, **c.extra}
    inner = ", ".join(f"{k!r}: {v!r}" for k, v in kw.items())
    opts = []
    if c.num_warps is not None:
        opts.append(f"num_warps={c.num_warps}")
    if c.num_stages is not None:
        opts.append(f"num_stages={c.num_stages}")
    return "triton.Config({" + inner + "}" + "".join(f", {o}" for o in opts) + ")"


def _cost_text(c: Candidate) -> str:
    t = c.cost_terms
    bound = "memory" if t.get("t_memory", 0) >= t.get("t_compute", 0) else "compute"
    risk = ""
    if t.get("overflow_risk_factor", 1.0) > 1.0:  # Ascend: the estimated UB plan over, the certain count within
        risk = f"; UB may overflow: estimated {int(c.footprint.get(UB_ESTIMATE, 0))} B, ranked lower"
    return (
        f"predicted {c.cost * 1e6:.1f} us ({bound}-bound, {int(t.get('programs', 0))} programs, "
        f"waves x{t.get('waves_factor', 1):.2f}, latency eff {t.get('latency_eff', 1):.2f}{risk})"
    )


def format_json(result: SynthesisResult, explain: bool = False, assumed: Optional[dict] = None) -> str:
    """A JSON object: kernel, target, feasible_count, configs (and the model under ``explain``)."""
    out: dict[str, Any] = {
        "kernel": result.kernel,
        "target": result.target,
        "feasible_count": result.feasible_count,
        "configs": [c.to_dict() for c in result.candidates],
    }
    if assumed:
        out["assumed_dtypes"] = assumed
    if explain:
        out["model"] = list(result.model_summary)
    return json.dumps(out, indent=2, default=str) + "\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run ``synth-configs``; returns the exit status (0 ok, 1 infeasible, 2 usage/input error)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        return int(exc.code or 0)
    out, err = sys.stdout, sys.stderr
    try:
        from ..analysis import analyze_file
        from .families import family_of
        from .request import RequestError, synthesis_request
        from .targets import detect, get_target

        shapes = {n: _int(v, "shape", n) for n, v in _pairs(args.shape, "shape")}
        fixed = {n: _literal(v) for n, v in _pairs(args.fixed, "fixed")}
        hints: dict[str, list] = {}
        for n, v in _pairs(args.hint, "hint"):
            hints[n] = [_literal(x.strip()) for x in v.split(",") if x.strip()]
            if not hints[n]:
                raise _UsageError(f"--hint {n}= needs values, e.g. --hint {n}=1,8")
        if args.top_k < 1:
            raise _UsageError("--top-k must be >= 1")
        module = analyze_file(args.file)
        spec = _pick_kernel(module, args.kernel)
        given = {}
        for n, v in _pairs(args.dtype, "dtype"):
            given[n] = normalize_dtype(v)
        from ..cli_checks import synth_argument_problems
        from .space import required_shapes

        target, target_problem = _cli_target(args.target, get_target, detect)
        any_extent = target is not None and family_of(target).any_arange_extent
        problems = synth_argument_problems(spec, shapes, given, fixed, hints, pow2_required=not any_extent)
        defaults = default_dtypes(spec)
        assumed = {p: d for p, d in defaults.items() if p not in given}
        dtypes = {**assumed, **given}
        tiling = {p.name for p in spec.tiling_params}
        as_fixed = [n for n in shapes if n in tiling and n not in fixed]
        for n in as_fixed:  # a shape-defining constexpr given as a size (HEAD_DIM=64) is fixed, not searched
            fixed[n] = shapes[n]
        # every missing input at once: the sizes, the target, the values of parameters that are not tuned
        required = required_shapes(spec)
        needed = [n for n in required if n not in shapes and n not in fixed and n not in hints]
        if needed:
            tiled = [p.name for p in spec.tiling_params if p.bound in needed]
            why = f" (the tile sizes {', '.join(tiled)} are bounded by them)" if tiled else ""
            problems.append(f"kernel {spec.name!r} needs the runtime sizes {', '.join(needed)}{why}; the tiling "
                            f"depends on {', '.join(required)}: pass "
                            + " ".join(f"--shape {n}={shapes.get(n, fixed.get(n, '<int>'))}" for n in required))
        if target_problem:
            problems.append(target_problem)
        try:  # every missing input at once: the caller's problems above and the request's guards
            request = synthesis_request(spec, shapes, dtypes, target, fixed=fixed, hints=hints, top_k=args.top_k,
                                        front="cli", earlier=problems)
        except RequestError as exc:
            raise _UsageError(str(exc)) from None
        if assumed and args.format != "json":  # the JSON output carries them as "assumed_dtypes"
            err.write(
                "note: assumed dtypes " + ", ".join(f"{p}={d}" for p, d in assumed.items())
                + " (fp16 for tl.dot inputs, else fp32; pass --dtype PTR=DTYPE to change)\n"
            )
        if as_fixed:
            err.write(f"note: {', '.join(as_fixed)} given with --shape: fixed, not searched (as --fixed)\n")
        if not spec.complete:
            err.write(
                f"warning: the analysis of kernel {spec.name!r} is incomplete: " + "; ".join(spec.incomplete)
                + ". Only configs safe under every unknown are printed (no two tiling values over Triton's "
                + "element limit, no tiling value under 16 where a tl.dot may hide, unknown tiles assumed live); "
                + "measure them before trusting the ranking.\n"
            )
        result = request.run()
        fixed = request.fixed
        if args.import_kernel:  # opt-in: imports user code (tiletune.runtime.import_oracle)
            from ..runtime.import_oracle import import_kernel, screen_candidates

            jf = import_kernel(args.file, spec.name)
            try:
                result, notes = screen_candidates(jf, spec, result, shapes, dtypes, fixed)
            except Exception as exc:  # the oracle is an extra check: the static result stands without it
                notes = [f"--import: Triton's front end could not check the configs ({type(exc).__name__}: {exc})"]
            err.write("".join(f"note: {n}\n" for n in notes))
            if not result.candidates:
                raise InfeasibleError(f"kernel {spec.name!r}: Triton refuses every synthesized config (see the "
                                      "notes above); fix the kernel or pass other --fixed/--shape values")
    except _UsageError as exc:
        err.write(f"synth-configs: error: {exc}\n")
        return 2
    except InfeasibleError as exc:
        err.write(f"synth-configs: {exc}\n")
        return 1
    except (AnalysisError, SynthesisError, OSError) as exc:
        err.write(f"synth-configs: error: {exc}\n")
        return 2
    except TiletuneError as exc:
        err.write(f"synth-configs: error: {exc}\n")
        return 2
    if args.format == "json":
        out.write(format_json(result, args.explain, assumed or None))
    else:
        out.write(format_python(result, args.explain))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
