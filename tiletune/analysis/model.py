"""Public types of the analysis layer: what tiletune knows about a kernel's source.

The front end (:mod:`tiletune.analysis.frontend`) fills these from source text
without importing or running it.  Synthesis, runtime and lint read them; none
of those layers reaches into libcst.

Positions: ``line`` is 1-based, ``column`` is 0-based (libcst's convention);
``end_line``/``end_column`` point just past the node.

Dtypes are strings: a concrete Triton element type (``"fp16"``, ``"bf16"``,
``"fp32"``, ``"fp64"``, ``"int8"``, ``"int16"``, ``"int32"``, ``"int64"``,
``"uint8"``, ``"int1"``, ``"fp8e4nv"``, ``"fp8e5"``), ``"elem:<param>"`` for the
element type of pointer parameter ``<param>`` (known only once arguments are
bound), or ``None`` when unknown.

Every ``to_dict`` result is JSON-serialisable and stable; the schema is
documented in ``docs/analysis-schema.md`` and versioned by
:data:`SCHEMA_VERSION`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Optional

import networkx as nx

from .expr import Expr, const

SCHEMA_VERSION = 1

#: Bytes per element of each concrete dtype name.
DTYPE_BYTES: dict[str, int] = {
    "int1": 1,
    "int8": 1,
    "uint8": 1,
    "fp8e4nv": 1,
    "fp8e5": 1,
    "fp8e4b15": 1,
    "int16": 2,
    "uint16": 2,
    "fp16": 2,
    "bf16": 2,
    "int32": 4,
    "uint32": 4,
    "fp32": 4,
    "int64": 8,
    "uint64": 8,
    "fp64": 8,
}

Shape = Optional[tuple[Expr, ...]]
"""A tile shape: a tuple of dimension expressions, ``()`` for a scalar, ``None`` if unknown."""


@dataclass(frozen=True)
class Span:
    """A source range.  ``line`` 1-based, ``column`` 0-based; ``file`` is set only for a range in another
    file than the kernel's (a helper's load, inlined from another module)."""

    line: int
    column: int
    end_line: int
    end_column: int
    file: Optional[str] = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``file`` only when set)."""
        out: dict[str, Any] = {"line": self.line, "column": self.column, "end_line": self.end_line,
                               "end_column": self.end_column}
        if self.file is not None:
            out["file"] = self.file
        return out

    def where(self) -> str:
        """``line N``, or ``path:N`` for a range in another file."""
        return f"{self.file}:{self.line}" if self.file else f"line {self.line}"


class Role(str, Enum):
    """What a constexpr parameter does to the kernel's tiling."""

    PARALLEL = "parallel"  # tiles a dimension split across programs (program_id axis)
    REDUCTION = "reduction"  # step of a loop over a runtime extent (e.g. BLOCK_K over K)
    INNER = "inner"  # sizes a tile but is neither of the above (e.g. a whole-row block)
    NON_TILING = "non_tiling"  # flags, group sizes, dtypes, NUM_SMS-like values


@dataclass
class Param:
    """One kernel parameter.

    ``bound`` names the runtime argument a tiling parameter's extent is tied
    to (``BLOCK_M`` -> ``"M"`` through ``offs_m < M``), or ``None``.
    ``axis`` is the ``tl.program_id`` axis of a parallel parameter.
    ``min_value`` is the smallest legal value (16 for ``tl.dot`` operand
    dimensions, else 1).  ``power_of_two`` is True when the value reaches a
    ``tl.arange`` extent (Triton requires powers of two there).
    ``uses`` lists, in words, why the parameter was classified as it was.
    """

    name: str
    index: int
    span: Span
    constexpr: bool = False
    annotation: Optional[str] = None
    default: Optional[str] = None  # source text of the default value, if any
    tiling: bool = False
    role: Role = Role.NON_TILING
    axis: Optional[int] = None
    bound: Optional[str] = None
    min_value: int = 1
    power_of_two: bool = False
    is_pointer: bool = False  # used as a pointer (loaded from / stored to / offset)
    uses: list[str] = field(default_factory=list)

    @property
    def has_default(self) -> bool:
        """True when the signature gives a default value."""
        return self.default is not None

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "name": self.name,
            "index": self.index,
            "span": self.span.to_dict(),
            "constexpr": self.constexpr,
            "annotation": self.annotation,
            "default": self.default,
            "tiling": self.tiling,
            "role": self.role.value,
            "axis": self.axis,
            "bound": self.bound,
            "min_value": self.min_value,
            "power_of_two": self.power_of_two,
            "is_pointer": self.is_pointer,
            "uses": list(self.uses),
        }


@dataclass
class ConfigLiteral:
    """A ``triton.Config({...}, num_warps=..., ...)`` written in the source.

    ``kwargs`` holds literal values (ints, floats, bools, strings); a value
    that is not a literal is kept as its source text in ``unresolved``.
    """

    span: Span
    kwargs: dict[str, Any] = field(default_factory=dict)
    num_warps: Optional[int] = None
    num_stages: Optional[int] = None
    extra: dict[str, Any] = field(default_factory=dict)  # other keywords, e.g. num_ctas, maxnreg
    unresolved: dict[str, str] = field(default_factory=dict)
    value_spans: dict[str, Span] = field(default_factory=dict)  # span of each kwargs value

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "span": self.span.to_dict(),
            "kwargs": dict(self.kwargs),
            "num_warps": self.num_warps,
            "num_stages": self.num_stages,
            "extra": dict(self.extra),
            "unresolved": dict(self.unresolved),
        }


@dataclass
class AutotuneArgs:
    """The arguments of a ``@triton.autotune`` / ``@tiletune.autotune`` decorator.

    ``configs`` is ``None`` when the list is not a literal (e.g. a variable);
    ``configs_empty`` is True for a literal ``[]``.  Name lists are ``None``
    when absent.  ``arg_spans`` gives the span of each keyword's value.
    ``qualname`` is the decorator as written (``"triton.autotune"``).
    """

    span: Span
    qualname: str
    configs: Optional[list[ConfigLiteral]] = None
    configs_empty: bool = False
    key: Optional[list[str]] = None
    hints: Optional[dict[str, list[Any]]] = None
    restore_value: Optional[list[str]] = None
    reset_to_zero: Optional[list[str]] = None
    other: dict[str, str] = field(default_factory=dict)  # any other keyword: source text
    arg_spans: dict[str, Span] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "span": self.span.to_dict(),
            "qualname": self.qualname,
            "configs": None if self.configs is None else [c.to_dict() for c in self.configs],
            "configs_empty": self.configs_empty,
            "key": self.key,
            "hints": self.hints,
            "restore_value": self.restore_value,
            "reset_to_zero": self.reset_to_zero,
            "other": dict(self.other),
        }


@dataclass
class Decorator:
    """One decorator of a kernel, outermost first in :attr:`KernelSpec.decorators`."""

    qualname: str  # "triton.jit", "jit", "triton.autotune", "tiletune.autotune", "triton.heuristics", ...
    kind: str  # "jit", "autotune", "heuristics", "other"
    span: Span
    has_call: bool = False  # written with arguments: @triton.jit(...)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"qualname": self.qualname, "kind": self.kind, "span": self.span.to_dict(), "has_call": self.has_call}


@dataclass
class LaunchSite:
    """A ``kernel[grid](...)`` launch in the same module.

    ``grid_kind``: ``"lambda"`` (a lambda), ``"tuple"`` (a literal tuple or
    list), ``"name"`` (a variable or function name), ``"call"`` (a call
    expression) or ``"other"``.  For a lambda, ``meta_keys`` are the keys it
    reads as ``meta["..."]`` (its parameter may have any name) and
    ``reads_meta`` says whether it reads its parameter at all.  ``grid`` holds
    one expression per grid dimension when they can be read (``meta[...]``
    becomes the symbol of that key), else ``None``.  ``grid_names`` are the
    names the grid expression mentions.  ``fixed`` maps each keyword argument
    to its source text; ``keyword_spans`` gives each keyword argument's span
    (the whole ``name=value``).
    """

    span: Span
    grid_span: Span
    grid_kind: str
    grid_source: str
    reads_meta: bool = False
    meta_keys: list[str] = field(default_factory=list)
    grid: Optional[list[Expr]] = None
    grid_names: list[str] = field(default_factory=list)
    positional_count: int = 0
    fixed: dict[str, str] = field(default_factory=dict)
    keyword_spans: dict[str, Span] = field(default_factory=dict)
    file: Optional[str] = None  # set for a launch found in another module of the project
    # Source of each ``*args`` / ``**kwargs`` argument: the launch may pass any name through them.
    star_args: list[str] = field(default_factory=list)
    # Source of each positional argument before any ``*args``, in order: they bind the kernel's
    # parameters by signature order, as Triton binds them.
    positional: list[str] = field(default_factory=list)

    def bound_positionally(self, params: Any) -> dict[str, str]:
        """``{parameter name: source text}`` of the parameters (``Param`` objects, in signature
        order) this launch passes positionally."""
        return {p.name: text for p, text in zip(sorted(params, key=lambda p: p.index), self.positional)}

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "span": self.span.to_dict(),
            "file": self.file,
            "grid_kind": self.grid_kind,
            "grid_source": self.grid_source,
            "reads_meta": self.reads_meta,
            "meta_keys": list(self.meta_keys),
            "grid": None if self.grid is None else [str(g) for g in self.grid],
            "grid_names": list(self.grid_names),
            "positional_count": self.positional_count,
            "fixed": dict(self.fixed),
        }


@dataclass
class MemoryAccess:
    """A ``tl.load``/``tl.store``/``tl.atomic_*`` of a tile.

    ``pointer`` is the pointer parameter the address derives from (``None``
    if unknown); ``contiguous_dim`` is the index of the dimension whose
    offsets step by 1 (the last one unless the code says otherwise), or
    ``None`` if unknown.  ``trips`` is how many times the access runs per
    program (product of enclosing loop trip counts; 1 outside loops).
    """

    node: str  # graph node id
    kind: str  # "load", "store", "atomic"
    span: Span
    pointer: Optional[str]
    shape: Shape
    dtype: Optional[str]
    in_loop: bool = False
    trips: Optional[Expr] = None
    contiguous_dim: Optional[int] = None
    block_ptr: bool = False
    feeds_dot: bool = False  # a load whose tile is a tl.dot operand

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "node": self.node,
            "kind": self.kind,
            "span": self.span.to_dict(),
            "pointer": self.pointer,
            "shape": shape_to_json(self.shape),
            "dtype": self.dtype,
            "in_loop": self.in_loop,
            "trips": None if self.trips is None else str(self.trips),
            "contiguous_dim": self.contiguous_dim,
            "block_ptr": self.block_ptr,
            "feeds_dot": self.feeds_dot,
        }


@dataclass
class DotInfo:
    """A ``tl.dot(a, b[, acc])``: extents ``m x k`` times ``k x n``."""

    node: str
    span: Span
    m: Optional[Expr]
    n: Optional[Expr]
    k: Optional[Expr]
    a_dtype: Optional[str] = None
    b_dtype: Optional[str] = None
    acc_dtype: Optional[str] = None
    in_loop: bool = False
    trips: Optional[Expr] = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "node": self.node,
            "span": self.span.to_dict(),
            "m": _opt(self.m),
            "n": _opt(self.n),
            "k": _opt(self.k),
            "a_dtype": self.a_dtype,
            "b_dtype": self.b_dtype,
            "acc_dtype": self.acc_dtype,
            "in_loop": self.in_loop,
            "trips": _opt(self.trips),
        }


@dataclass
class Footprint:
    """On-chip bytes a tiling needs, as expressions.

    Symbols: tiling parameters, ``esize_<ptr>`` element sizes and
    ``num_stages``.

    * ``live_bytes``: peak bytes of tiles live at once (registers on NVIDIA,
      the Unified Buffer on Ascend).  Loads inside loops count
      ``num_stages`` times (the pipelining / multibuffer depth).
    * ``shared_bytes``: NVIDIA shared memory as Triton 3.6 allocates it on
      sm_90 (4 warps): ``tl.dot`` operand tiles loaded in a loop staged
      ``num_stages`` deep for wgmma-sized dots (M a multiple of 64),
      ``num_stages - 1`` deep for smaller ones, unpipelined at one stage; or
      the largest layout conversion / reduction / atomic scratch, whichever
      is larger.  The rules are in :func:`tiletune.analysis.footprint.shared_bytes`;
      the tests compare them with ``triton.compile(...).metadata.shared``.
    * ``dot_operand_bytes``: bytes of one stage of dot operand tiles (Ascend
      L1 / L0A+L0B), ``accumulator_bytes``: bytes of dot accumulators
      (Ascend L0C).
    """

    live_bytes: Expr
    shared_bytes: Expr
    dot_operand_bytes: Expr
    accumulator_bytes: Expr
    #: bytes per loop iteration of ``tl.dot`` operand loads Triton does not pipeline (their latency is not
    #: hidden by ``num_stages``; :func:`tiletune.analysis.footprint.pipelined`); the NVIDIA cost model's term
    unstaged_bytes: Expr = const(0)

    def to_dict(self) -> dict[str, str]:
        """JSON form: each expression as text."""
        return {
            "live_bytes": str(self.live_bytes),
            "shared_bytes": str(self.shared_bytes),
            "dot_operand_bytes": str(self.dot_operand_bytes),
            "accumulator_bytes": str(self.accumulator_bytes),
        }


@dataclass
class KernelSpec:
    """Everything tiletune knows about one Triton kernel from its source.

    ``graph`` is a ``networkx.DiGraph`` whose nodes carry ``kind`` (``param``,
    ``load``, ``store``, ``atomic``, ``dot``, ``reduce``, ``elementwise``,
    ``arange``, ``alloc``, ``scan``, ``other``), ``label`` (source text,
    shortened), ``shape`` (text list or None), ``dtype`` and ``line``; edges
    are data flow.  ``static_asserts`` are ``tl.static_assert`` conditions
    over constexprs, as source text.  ``stored_pointers`` / ``loaded_pointers``
    / ``atomic_pointers`` name pointer parameters by how they are used.
    ``notes`` lists constructs the analysis could not follow (the value got an
    unknown shape; analysis went on).  ``incomplete`` lists, as
    ``"<kind>: <detail>"``, every gap that can change what the kernel needs
    on chip (kinds: ``unresolved helper``, ``unknown op``, ``unknown access
    shape``, ``unknown dot extent``); :attr:`complete` is True when it is
    empty.  ``helpers`` maps every ``@triton.jit`` helper the kernel calls,
    transitively and across modules, as ``"<file>:<name>"`` to the sha256 of
    its source text (the runtime cache key covers them).  ``meaning`` maps
    tiling parameters that may carry meaning (a value other than the one the
    data was built for computes something else) to the reasons, in words
    (:mod:`tiletune.analysis.meaning`).
    """

    name: str
    span: Span
    file: Optional[str] = None
    decorators: list[Decorator] = field(default_factory=list)
    params: list[Param] = field(default_factory=list)
    autotune: Optional[AutotuneArgs] = None
    heuristics: list[str] = field(default_factory=list)  # params set by @triton.heuristics
    launches: list[LaunchSite] = field(default_factory=list)
    project_launches: list[LaunchSite] = field(default_factory=list)  # in other modules of the package
    accesses: list[MemoryAccess] = field(default_factory=list)
    dots: list[DotInfo] = field(default_factory=list)
    footprint: Optional[Footprint] = None
    static_asserts: list[str] = field(default_factory=list)
    stored_pointers: list[str] = field(default_factory=list)
    loaded_pointers: list[str] = field(default_factory=list)
    atomic_pointers: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    incomplete: list[str] = field(default_factory=list)
    helpers: dict[str, str] = field(default_factory=dict)
    meaning: dict[str, list[str]] = field(default_factory=dict)  # tiling params that may carry meaning
    # parameters a compile-time branch test looked up: only a launch value of one of these can change
    # what a specialised analysis (``constants=``) finds
    static_params: list[str] = field(default_factory=list)
    graph: nx.DiGraph = field(default_factory=nx.DiGraph, repr=False)
    # Parameters the body uses as tiles (indexed ``x[:, None]``, ``x.shape``), or that another jit function of
    # the module passes a tile, a block pointer or a descriptor made in the kernel (and the package never
    # launches it): a launch passes scalars, pointers and host descriptors only, so such a function is a device
    # helper, not a kernel.
    tile_arguments: list[str] = field(default_factory=list)
    # Lines of ``@triton.heuristics`` decorators whose mapping's keys cannot be read: any tiling
    # parameter may be one a heuristic sets, so the static reading tunes none.
    heuristics_unread: list[int] = field(default_factory=list)

    @property
    def device_function(self) -> bool:
        """True for a ``@triton.jit`` function called with tiles or other device values (see ``tile_arguments``):
        only other jit functions call it, where its body is analysed with their values."""
        return bool(self.tile_arguments)

    # ----- convenience ----------------------------------------------------
    def param(self, name: str) -> Param:
        """The parameter called ``name`` (KeyError naming the kernel otherwise)."""
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(f"kernel {self.name!r} has no parameter {name!r}")

    @property
    def tiling_params(self) -> list[Param]:
        """Constexpr parameters that size tiles, in signature order."""
        return [p for p in self.params if p.tiling]

    @property
    def complete(self) -> bool:
        """True when the analysis followed everything that sizes the kernel's tiles."""
        return not self.incomplete

    @property
    def param_names(self) -> list[str]:
        """All parameter names in signature order."""
        return [p.name for p in self.params]

    def to_dict(self) -> dict[str, Any]:
        """JSON form (see ``docs/analysis-schema.md``)."""
        return {
            "name": self.name,
            "file": self.file,
            "complete": self.complete,
            "incomplete": list(self.incomplete),
            "span": self.span.to_dict(),
            "decorators": [d.to_dict() for d in self.decorators],
            "params": [p.to_dict() for p in self.params],
            "autotune": None if self.autotune is None else self.autotune.to_dict(),
            "heuristics": list(self.heuristics),
            "launches": [l.to_dict() for l in self.launches],
            "project_launches": [l.to_dict() for l in self.project_launches],
            "accesses": [a.to_dict() for a in self.accesses],
            "dots": [d.to_dict() for d in self.dots],
            "footprint": None if self.footprint is None else self.footprint.to_dict(),
            "static_asserts": list(self.static_asserts),
            "stored_pointers": list(self.stored_pointers),
            "loaded_pointers": list(self.loaded_pointers),
            "atomic_pointers": list(self.atomic_pointers),
            "notes": list(self.notes),
            "helpers": dict(self.helpers),
            "meaning": {k: list(v) for k, v in self.meaning.items()},
        }


@dataclass
class ModuleSpec:
    """All kernels of one source file, plus module facts the lint needs.

    ``enables_tiletune`` is True when the module imports ``tiletune.patch``
    or uses ``tiletune.autotune``.
    """

    file: Optional[str]
    kernels: list[KernelSpec] = field(default_factory=list)
    enables_tiletune: bool = False

    def kernel(self, name: str) -> KernelSpec:
        """The kernel called ``name`` (KeyError listing the kernels otherwise)."""
        for k in self.kernels:
            if k.name == name:
                return k
        names = ", ".join(k.name for k in self.kernels) or "none"
        raise KeyError(f"no kernel {name!r} in {self.file or '<source>'} (kernels: {names})")

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "schema_version": SCHEMA_VERSION,
            "file": self.file,
            "enables_tiletune": self.enables_tiletune,
            "kernels": [k.to_dict() for k in self.kernels],
        }


def shape_to_json(shape: Shape) -> Optional[list[str]]:
    """JSON form of a shape: a list of dimension texts, or None if unknown."""
    return None if shape is None else [str(d) for d in shape]


def _opt(e: Optional[Expr]) -> Optional[str]:
    return None if e is None else str(e)
