"""The search space: which values each variable of a tiling may take.

A :class:`Space` holds, for one (kernel, shapes, dtypes, target):

* the *variables* searched: each tiling parameter not fixed (a power of two
  between its lower bound and its upper bound), hinted non-tiling values,
  ``num_warps`` / ``num_stages`` on NVIDIA and ``multibuffer`` on Ascend;
* the *constants* every expression is specialised with: runtime sizes,
  fixed and default constexpr values, element sizes ``esize_<ptr>``.

Bounds of a tiling parameter ``P``:

* lower: ``P.min_value`` (16 for ``tl.dot`` operand dimensions), rounded up
  to a power of two; for an *inner* parameter with a runtime bound (a tile
  that must hold the whole extent, e.g. a softmax row) the next power of two
  of that extent;
* upper: the next power of two of its bound's value (no point tiling past
  the data), else ``target.max_unbound_tile``; never above Triton's largest
  tensor (``target.max_tensor_numel`` elements).

Each bound keeps the reason in words; the Z3 model tracks them so that an
unsatisfiable core reads as sentences (see :mod:`.explain`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

from ..analysis.expr import ALIGN16_PREFIX, NUM_STAGES, NUM_WARPS, WGMMA, Expr, esize_symbol
from ..analysis.model import DTYPE_BYTES, KernelSpec, Param, Role
from ..errors import SynthesisError
from .alignment import bind_alignment, spec_alignment_params
from .model import Target

__all__ = [
    "Var",
    "Space",
    "build_space",
    "required_shapes",
    "normalize_dtype",
    "dtype_bytes",
    "next_pow2",
    "NUM_WARPS",
    "MULTIBUFFER",
]

MULTIBUFFER = "multibuffer"

_DTYPE_ALIASES = {
    "float16": "fp16",
    "half": "fp16",
    "f16": "fp16",
    "bfloat16": "bf16",
    "float32": "fp32",
    "float": "fp32",
    "f32": "fp32",
    "tf32": "fp32",
    "float64": "fp64",
    "double": "fp64",
    "f64": "fp64",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "bool": "int1",
    "i1": "int1",
    "float8_e4m3fn": "fp8e4nv",
    "fp8e4m3": "fp8e4nv",
    "float8_e5m2": "fp8e5",
    "fp8e5m2": "fp8e5",
}


def normalize_dtype(name: Any) -> str:
    """A dtype name in tiletune's spelling (``"torch.float16"`` -> ``"fp16"``).

    Raises :class:`SynthesisError` for names it does not know.
    """
    text = str(name).strip().lower()
    for prefix in ("torch.", "tl.", "triton.language.", "np.", "numpy."):
        if text.startswith(prefix):
            text = text[len(prefix):]
    text = _DTYPE_ALIASES.get(text, text)
    if text not in DTYPE_BYTES:
        raise SynthesisError(f"unknown dtype {name!r}; known: {', '.join(DTYPE_BYTES)}")
    return text


def dtype_bytes(name: str) -> int:
    """Bytes per element of a (normalised) dtype name."""
    return DTYPE_BYTES[normalize_dtype(name)]


def next_pow2(n: int) -> int:
    """Smallest power of two >= n (1 for n <= 1)."""
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def _pow2_between(lo: int, hi: int) -> list[int]:
    out = []
    v = next_pow2(max(lo, 1))
    while v <= hi:
        out.append(v)
        v *= 2
    return out


@dataclass
class Var:
    """One searched variable.

    ``values`` are the Python values in search order; ``codes`` their
    integer form inside expressions (``True`` -> 1).  For a tiling
    parameter, ``lo``/``hi`` bound the powers of two with reasons in
    ``lo_why``/``hi_why``; ``hi_cap``/``hi_cap_why`` is a second upper
    bound from the target (Triton's tensor size) when it binds.
    """

    name: str
    kind: str  # "tile", "hint", "num_warps", "num_stages", "multibuffer"
    values: list
    codes: Optional[list[int]] = None
    param: Optional[Param] = None
    lo: Optional[int] = None
    hi: Optional[int] = None
    lo_why: str = ""
    hi_why: str = ""
    pow2: bool = False
    pow2_why: str = ""

    @property
    def numeric(self) -> bool:
        """True when every value can appear in an integer expression."""
        return self.codes is not None

    def describe(self) -> str:
        """The domain in words."""
        vals = ", ".join(repr(v) for v in self.values)
        text = f"{self.name} in {{{vals}}}"
        reasons = [r for r in (self.lo_why, self.hi_why) if r]
        if reasons:
            text += f"  ({'; '.join(reasons)})"
        return text


@dataclass
class Space:
    """Variables, constants and bookkeeping for one synthesis problem."""

    spec: KernelSpec
    target: Target
    family: Any  # the target's ChipFamily (tiletune.synthesis.families)
    vars: list[Var]
    env: dict[str, int]  # constants: runtime sizes, fixed/default constexprs, esize_*
    dtypes: dict[str, str]
    shapes: dict[str, int]
    fixed: dict[str, Any]
    hints: dict[str, list]
    bound_values: dict[str, int] = field(default_factory=dict)  # tiling param -> value of its bound
    notes: list[str] = field(default_factory=list)
    missing_dtypes: list[str] = field(default_factory=list)  # partial mode only

    def var(self, name: str) -> Var:
        """The variable called ``name``."""
        for v in self.vars:
            if v.name == name:
                return v
        raise KeyError(name)

    @property
    def var_names(self) -> list[str]:
        """Names of all variables, in enumeration order."""
        return [v.name for v in self.vars]

    @property
    def tile_vars(self) -> list[Var]:
        """The searched tiling parameters."""
        return [v for v in self.vars if v.kind == "tile"]

    def bind(self, expr: Expr) -> Expr:
        """Specialise an expression with the constants (and ``num_stages`` as the family binds it)."""
        env: dict[str, Any] = {k: v for k, v in self.env.items()}
        stages = self.family.stage_binding(self)
        if stages is not None:
            env[NUM_STAGES] = stages
        return expr.substitute(env)

    def has_var(self, name: str) -> bool:
        """True when ``name`` is searched."""
        return any(v.name == name for v in self.vars)

    def unknown_symbols(self, expr: Expr) -> set[str]:
        """Symbols of a bound expression that are neither variables nor constants."""
        names = set(self.var_names)
        return {s for s in expr.symbols() if s not in names and s not in self.env}


# ----- helpers over the spec ------------------------------------------------------
def _param_map(spec: KernelSpec) -> dict[str, Param]:
    return {p.name: p for p in spec.params}


def _literal_default(p: Param) -> Optional[int]:
    if p.default is None:
        return None
    try:
        value = ast.literal_eval(p.default)
    except (ValueError, SyntaxError):
        return None
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    return None


def _spec_exprs(spec: KernelSpec, with_grid: bool = True) -> list[Expr]:
    out: list[Expr] = []
    if with_grid:
        for launch in spec.launches:
            if launch.grid:
                out.extend(g for g in launch.grid if g is not None)
    for a in spec.accesses:
        if a.trips is not None:
            out.append(a.trips)
        if a.shape:
            out.extend(d for d in a.shape if d is not None)
    for d in spec.dots:
        for e in (d.m, d.n, d.k, d.trips):
            if e is not None:
                out.append(e)
    fp = spec.footprint
    if fp is not None:
        out.extend([fp.live_bytes, fp.shared_bytes, fp.dot_operand_bytes, fp.accumulator_bytes, fp.unstaged_bytes])
    return out


def _is_derived(name: str) -> bool:
    return name.startswith(("esize_", ALIGN16_PREFIX)) or name in (NUM_STAGES, NUM_WARPS, MULTIBUFFER, WGMMA)


def required_shapes(spec: KernelSpec) -> list[str]:
    """Runtime argument names synthesis needs values for, in a stable order.

    The ``bound`` of every tiling parameter, then every kernel parameter (not
    a tiling parameter, not a pointer, not a constexpr with a default) that a
    grid, trip count, tile shape or footprint expression mentions.  Grid
    symbols that are not kernel parameters (locals of the launching code) are
    not required: they are used when given and the grid falls back to the
    parallel tiling parameters otherwise.
    """
    params = _param_map(spec)
    tiling = {p.name for p in spec.tiling_params}
    names: list[str] = []

    def add(n: str) -> None:
        if n not in names:
            names.append(n)

    for p in spec.tiling_params:
        if p.bound:
            b = params.get(p.bound)
            if b is not None and b.constexpr and b.has_default:
                continue
            add(p.bound)
    for e in _spec_exprs(spec):
        for s in sorted(e.symbols()):
            if s in tiling or _is_derived(s):
                continue
            p = params.get(s)
            if p is None or p.is_pointer:
                continue
            if p.constexpr and p.has_default:
                continue
            add(s)
    return names


def _pointer_dtype_needs(spec: KernelSpec) -> list[str]:
    """Pointer parameters whose element type synthesis needs."""
    names: list[str] = []
    params = _param_map(spec)

    def add(n: Optional[str]) -> None:
        if n and n not in names:
            names.append(n)

    for e in _spec_exprs(spec, with_grid=False):
        for s in sorted(e.symbols()):
            if s.startswith("esize_"):
                add(s[len("esize_"):])
    for a in spec.accesses:
        if a.pointer and (a.dtype is None or str(a.dtype).startswith("elem:")):
            add(a.pointer)
    for d in spec.dots:
        for t in (d.a_dtype, d.b_dtype):
            if t and str(t).startswith("elem:"):
                add(str(t)[len("elem:"):])
    return [n for n in names if n in params or not params]


def resolve_dtype(dtype: Optional[str], dtypes: Mapping[str, str], default: Optional[str] = None) -> Optional[str]:
    """A concrete dtype for an analysis dtype (``"elem:<ptr>"`` through ``dtypes``)."""
    if dtype is None:
        return default
    text = str(dtype)
    if text.startswith("elem:"):
        return dtypes.get(text[len("elem:"):], default)
    try:
        return normalize_dtype(text)
    except SynthesisError:
        return default


# ----- building the space -----------------------------------------------------------
def build_space(
    spec: KernelSpec,
    shapes: Optional[Mapping[str, int]],
    dtypes: Mapping[str, str],
    target: Target,
    hints: Optional[Mapping[str, Sequence]] = None,
    fixed: Optional[Mapping[str, int]] = None,
    *,
    family: Any,
    partial: bool = False,
) -> Space:
    """Variables and constants for ``spec`` (see the module docstring).

    ``family`` is ``target``'s chip family (``tiletune.synthesis.families.family_of(target)``):
    it gives the launch knobs searched and the values tiles may take.

    Raises :class:`SynthesisError` when runtime sizes or pointer dtypes are
    missing, naming the kernel and exactly what to pass.  With
    ``partial=True`` (used by :func:`~tiletune.synthesis.check_config`)
    missing values are tolerated: constraints that need them are skipped.
    """
    shapes = {k: int(v) for k, v in (shapes or {}).items() if isinstance(v, (int, bool)) or _intlike(v)}
    fixed = dict(fixed or {})
    hints = {k: list(v) for k, v in (hints or {}).items()}
    params = _param_map(spec)
    kname = spec.name

    for k, vals in hints.items():
        if not vals:
            raise SynthesisError(f"kernel {kname!r}: hint {k!r} has no values; give a list such as [1, 8]")
        if k in fixed:
            raise SynthesisError(
                f"kernel {kname!r}: {k!r} is both fixed (={fixed[k]!r}) and hinted ({vals!r}); drop one of them"
            )

    # dtypes
    norm_dtypes: dict[str, str] = {}
    for ptr, dt in (dtypes or {}).items():
        norm_dtypes[ptr] = normalize_dtype(dt)
    needed = _pointer_dtype_needs(spec)
    missing_dt = [p for p in needed if p not in norm_dtypes]
    if missing_dt and not partial:
        raise SynthesisError(
            f"kernel {kname!r}: no dtype for pointer(s) {', '.join(missing_dt)}; pass dtypes="
            + "{" + ", ".join(f"{p!r}: 'fp16'" for p in missing_dt) + "} (or --dtype PTR=fp16)"
        )

    # constants
    env: dict[str, int] = {}
    for p in spec.params:
        if p.constexpr and not p.tiling and p.name not in hints:
            d = _literal_default(p)
            if d is not None:
                env[p.name] = d
    for k, v in shapes.items():
        env[k] = int(v)
    for k, v in fixed.items():
        if isinstance(v, bool) or isinstance(v, int) or _intlike(v):
            env[k] = int(v)
    for ptr, dt in norm_dtypes.items():
        env[esize_symbol(ptr)] = DTYPE_BYTES[dt]
    # constexprs (tile sizes included) are constants to AxisInfo, divisible by their power-of-two factor:
    # only the launch's integers are specialised by the 16 rule (unknown -> aligned)
    constexpr_names = {p.name for p in spec.params if p.constexpr} | {p.name for p in spec.tiling_params}
    align_names = spec_alignment_params(spec)
    align_env, align_notes = bind_alignment(align_names, {k: v for k, v in env.items() if k not in constexpr_names},
                                            kname, constexpr_names)
    env.update(align_env)

    # missing runtime sizes
    req = required_shapes(spec)
    missing = [n for n in req if n not in env and n not in hints]
    if missing and not partial:
        tiled = [p.name for p in spec.tiling_params if p.bound in missing]
        why = f" (the tile sizes {', '.join(tiled)} are bounded by them)" if tiled else ""
        raise SynthesisError(
            f"kernel {kname!r}: synthesis needs the runtime sizes {', '.join(missing)}{why}; the tiling depends "
            f"on {', '.join(req)}. Pass shapes=" + "{" + ", ".join(f"{n!r}: ..." for n in req) + "}"
            + " (synth-configs: " + " ".join(f"--shape {n}=..." for n in req) + ")"
        )

    notes: list[str] = list(align_notes)
    vars_: list[Var] = []
    bound_values: dict[str, int] = {}
    numel_cap = target.max_tensor_numel

    for p in spec.tiling_params:
        bound_val = env.get(p.bound) if p.bound else None
        if bound_val is not None:
            bound_values[p.name] = int(bound_val)
        if p.name in fixed:
            continue
        if p.name in hints:  # the user's own list replaces the search domain
            vals = [int(v) for v in hints[p.name]]
            vars_.append(Var(p.name, "tile", vals, codes=list(vals), param=p, lo_why=f"{p.name} from hints"))
            continue
        lo = max(int(p.min_value or 1), 1)
        lo_why = f"{p.name} >= {lo} (tl.dot operand dimension)" if lo > 1 else ""
        if p.role == Role.INNER and bound_val is not None:
            cover = next_pow2(bound_val)
            if cover > lo:
                lo = cover
                lo_why = f"{p.name} >= {cover} (the tile holds the whole {p.bound}={bound_val} extent in one block)"
        lo = next_pow2(lo)
        if bound_val is not None:
            hi = max(next_pow2(bound_val), lo)
            hi_why = f"{p.name} <= {hi} (next power of two of {p.bound}={bound_val})"
            if hi == lo and next_pow2(bound_val) < lo:
                hi_why = f"{p.name} <= {hi} ({p.bound}={bound_val} is below the minimum {lo})"
        else:
            hi = target.max_unbound_tile
            hi_why = f"{p.name} <= {hi} (no runtime bound; cap for {target.name})"
        if numel_cap < hi:
            hi = numel_cap
            hi_why = f"{p.name} <= {numel_cap} (Triton's largest tensor)"
        values = _pow2_between(lo, hi)
        if not family.pow2_tiles:
            min_esize = min((DTYPE_BYTES[d] for d in norm_dtypes.values()), default=4)
            values = family.tile_values(spec, p, values, bound_val, target, lo, hi, min_esize)
            vars_.append(Var(p.name, "tile", values, codes=list(values), param=p, lo=lo, hi=hi, lo_why=lo_why, hi_why=hi_why))
            continue
        vars_.append(
            Var(
                p.name,
                "tile",
                values,
                codes=list(values),
                param=p,
                lo=lo,
                hi=hi,
                lo_why=lo_why,
                hi_why=hi_why,
                pow2=True,
                pow2_why=f"{p.name} is a power of two" + (" (tl.arange extent)" if p.power_of_two else " (searched over powers of two)"),
            )
        )

    # hinted non-tiling values
    tiling_names = {p.name for p in spec.tiling_params}
    for k, vals in hints.items():
        if k in tiling_names or k in (NUM_WARPS, NUM_STAGES, MULTIBUFFER):
            continue
        codes = [int(v) for v in vals] if all(isinstance(v, (bool, int)) for v in vals) else None
        vars_.append(Var(k, "hint", list(vals), codes=codes, lo_why=f"{k} from hints"))
        if k not in params:
            notes.append(f"hint {k!r} is not a parameter of {kname}; it is passed through to the configs")

    # target knobs and the chip facts the analysis leaves symbolic
    env.update(family.model_constants(target))
    plan = family.knob_plan(spec, target, fixed, hints)
    for d in plan.domains:
        codes = [int(v) for v in d.values]
        vars_.append(Var(d.name, d.kind, list(d.values), codes=codes, lo_why=d.why))
    env.update(plan.env)
    notes.extend(plan.notes)

    space = Space(
        spec=spec,
        target=target,
        family=family,
        vars=vars_,
        env=env,
        dtypes=norm_dtypes,
        shapes=dict(shapes),
        fixed=fixed,
        hints=hints,
        bound_values=bound_values,
        notes=notes,
        missing_dtypes=missing_dt,
    )
    return space


def _intlike(v: Any) -> bool:
    try:
        return int(v) == v
    except (TypeError, ValueError):
        return False
