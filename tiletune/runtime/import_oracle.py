"""``synth-configs --import``: the run-time oracle for a kernel file, on a machine without a GPU.

Opt-in: ``synth-configs`` never imports user code unless ``--import`` is given.
With it, :func:`import_kernel` imports the file (as part of its package when it
sits in one, so relative imports work) and takes the kernel's ``JITFunction``;
:func:`screen_candidates` lowers each synthesized candidate with Triton's front
end (:mod:`tiletune.runtime.ir_oracle`), drops the ones Triton refuses and says
where the IR and the static reading disagree on the tiling parameters.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any, Dict, List, Mapping, Tuple

from tiletune.errors import TiletuneError

from .ir_oracle import read_kernel, refused_configs
from .triton_ir import jit_function, quiet_fds

__all__ = ["import_kernel", "described_arguments", "screen_candidates"]

#: tiletune dtype names -> Triton signature names (pointers are ``"*" + name``).
_SIGNATURE_DTYPE = {"int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8", "int1": "i1"}

#: A runtime size the command line did not give (it changes no tile shape).
DEFAULT_SIZE = 4096


class ImportKernelError(TiletuneError):
    """The file does not import here, or holds no jit kernel of that name (the message says which)."""


__all__.append("ImportKernelError")


def _module_name(path: Path) -> Tuple[Path, str]:
    """(folder to put on sys.path, dotted module name) for ``path``, its package included."""
    parts = [path.stem]
    folder = path.parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    return folder, ".".join(parts)


def import_kernel(file: str, name: str) -> Any:
    """Import ``file`` (user code: only on ``--import``) and return its kernel ``name``'s JITFunction."""
    if os.environ.get("TRITON_INTERPRET"):
        raise ImportKernelError("--import lowers kernels with Triton's front end, which TRITON_INTERPRET=1 "
                                "replaces; unset TRITON_INTERPRET")
    path = Path(file).resolve()
    folder, module_name = _module_name(path)
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    try:
        with quiet_fds():
            module = importlib.import_module(module_name)
    except BaseException as exc:  # noqa: BLE001 - whatever the user's module raises, say so and go on without
        raise ImportKernelError(f"importing {file} as {module_name} failed ({type(exc).__name__}: {exc}); "
                                "install what it needs, or drop --import to use the static reading alone") from None
    jf = jit_function(getattr(module, name, None))
    if jf is None:
        raise ImportKernelError(f"{file} has no @triton.jit kernel {name!r} once imported; check --kernel")
    return jf


def described_arguments(jf: Any, dtypes: Mapping[str, str], shapes: Mapping[str, int],
                        fixed: Mapping[str, Any]) -> Tuple[Dict[str, Any], List[str]]:
    """The kernel's arguments as a launch would describe them, and the names given a default size."""
    out: Dict[str, Any] = {}
    assumed: List[str] = []
    for p in jf.params:
        if p.name in fixed:
            out[p.name] = fixed[p.name]
        elif p.name in dtypes:
            out[p.name] = {"ptr": _SIGNATURE_DTYPE.get(dtypes[p.name], dtypes[p.name])}
        elif p.name in shapes:
            out[p.name] = int(shapes[p.name])
        elif getattr(p, "has_default", False):
            out[p.name] = p.default
        elif not p.is_constexpr:
            out[p.name] = DEFAULT_SIZE
            assumed.append(p.name)
    return out, assumed


def _ir_tiling(jf: Any, bound: Mapping[str, Any], candidates: List[Any], unset: List[str],
               notes: List[str]) -> List[Any]:
    """Constexprs the static reading left without a value that Triton's IR shows sizing tiles: searched
    over the run time's values with the leading candidates (as :mod:`tiletune.runtime.candidates`)."""
    from .candidates import IR_TILE_BASES, IR_TILE_VALUES

    base = {**candidates[0].kwargs, **{n: IR_TILE_VALUES[0] for n in unset}}
    reading = read_kernel(jf, bound, base, unset, described=True)
    found = [n for n in unset if n in reading.tiling or n in reading.trip_count]
    if not found:
        return candidates
    notes.append(f"--import: Triton's IR shows {', '.join(found)} sizing tiles, which the static reading missed: "
                 f"searched over {list(IR_TILE_VALUES)}")
    out = []
    for cand in candidates[:IR_TILE_BASES]:
        combos: List[Dict[str, Any]] = [{}]
        for name in found:
            combos = [{**c, name: v} for c in combos for v in IR_TILE_VALUES]
        out += [dataclasses.replace(cand, kwargs={**cand.kwargs, **combo}) for combo in combos]
    return out


def screen_candidates(jf: Any, spec: Any, result: Any, shapes: Mapping[str, int], dtypes: Mapping[str, str],
                      fixed: Mapping[str, Any]) -> Tuple[Any, List[str]]:
    """``(result without the candidates Triton refuses, notes for stderr)``."""
    bound, assumed = described_arguments(jf, dtypes, shapes, fixed)
    notes: List[str] = []
    if assumed:
        notes.append(f"--import: {', '.join(assumed)} lowered at {DEFAULT_SIZE} (not given with --shape)")
    candidates = list(result.candidates)
    unset = [p.name for p in jf.params if p.is_constexpr and p.name not in bound
             and not (candidates and p.name in candidates[0].kwargs)]
    if unset and candidates:
        candidates = _ir_tiling(jf, bound, candidates, unset, notes)
    result = dataclasses.replace(result, candidates=candidates)
    configs = [{**c.kwargs, **{k: v for k, v in c.extra.items() if k not in ("num_ctas", "maxnreg")}}
               for c in result.candidates]
    unique: List[Dict[str, Any]] = []
    for c in configs:  # candidates differing only in num_warps/num_stages lower alike
        if c not in unique:
            unique.append(c)
    refused_unique = refused_configs(jf, bound, unique, described=True)
    by_reason: Dict[str, List[Dict[str, Any]]] = {}
    for i, why in sorted(refused_unique.items()):
        by_reason.setdefault(why, []).append(unique[i])
    for why, cfgs in by_reason.items():
        notes.append(f"--import: dropped {', '.join(map(str, cfgs))}: Triton refuses {'it' if len(cfgs) == 1 else 'them'} "
                     f"({why})")
    refused_set = [unique[i] for i in refused_unique]
    refused = {i for i, c in enumerate(configs) if c in refused_set}
    kept = [c for i, c in enumerate(result.candidates) if i not in refused]
    if kept:
        names = list(kept[0].kwargs)
        reading = read_kernel(jf, bound, configs[result.candidates.index(kept[0])], names, described=True)
        ir_set = set(reading.tiling) | set(reading.trip_count)
        static_set = {p.name for p in spec.tiling_params} & set(names)
        if reading.base is not None and ir_set != static_set:
            notes.append(f"--import: the static reading and Triton's IR disagree on the tiling parameters: "
                         f"static {sorted(static_set)}, IR {sorted(ir_set)}; the IR is what Triton compiles")
        if not spec.complete:
            notes.append(f"--import: Triton's front end lowers the {len(kept)} printed config(s)")
    return dataclasses.replace(result, candidates=kept), notes
