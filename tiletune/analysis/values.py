"""The abstract values the body interpreter (:mod:`.shapes`) computes with.

A :class:`Val` describes what is known about one Python/Triton value in a
kernel body: its tile shape and dtype, its integer value as an
:class:`~tiletune.analysis.expr.Expr` when it is a scalar the analysis can
follow, and a few taints the classifier needs (which parameters it depends
on, which ``tl.arange`` extents and ``tl.program_id`` axes flow into it,
which pointer parameter it addresses, which of its dimensions step by one).

Also here: dtype names, dtype promotion and shape broadcasting.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Iterable, Optional

from .expr import Expr, const, emax, esize_symbol
from .model import DTYPE_BYTES, Shape

__all__ = [
    "Val",
    "ValMap",
    "UNKNOWN",
    "NONE",
    "OPEN_POINTEE",
    "TL_DTYPES",
    "broadcast_shapes",
    "promote",
    "dtype_size",
    "shape_bytes",
    "is_float",
    "collect",
]

EMPTY: frozenset = frozenset()

#: ``tl.<name>`` dtype attributes -> the dtype names of :mod:`.model`.
TL_DTYPES = {
    "float16": "fp16",
    "bfloat16": "bf16",
    "float32": "fp32",
    "float64": "fp64",
    "int1": "int1",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint8",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
    "float8e4nv": "fp8e4nv",
    "float8e5": "fp8e5",
    "float8e4b15": "fp8e4b15",
    "float8e4b8": "fp8e4nv",
    "float8e5b16": "fp8e5",
    "fp16": "fp16",
    "bf16": "bf16",
    "fp32": "fp32",
    "fp64": "fp64",
}


@dataclass(frozen=True, eq=False)
class Val:
    """What the analysis knows about one value.

    ``kind``: ``"value"`` (a tensor: tile or scalar), ``"tuple"`` (``items``),
    ``"dtype"`` (a dtype object; ``dtype`` holds its name, ``"ptr:<p>"`` for
    the pointer type of parameter ``<p>``), ``"blockptr"`` (from
    ``tl.make_block_ptr``/``tl.advance``), ``"desc"`` (a tensor descriptor),
    ``"none"`` (Python ``None``), ``"slice"`` (a ``:`` in a subscript),
    ``"alternatives"`` (tuples of different lengths from two paths, in
    ``items``: only unpacking into names picks one) or ``"other"``
    (strings, functions, anything opaque).
    """

    kind: str = "value"
    shape: Shape = ()
    dtype: Optional[str] = None
    expr: Optional[Expr] = None  # integer value of a scalar, if known
    node: Optional[str] = None  # graph node that produced the value
    weak: bool = False  # Python literal / constexpr / untyped scalar: no say in dtype promotion
    params: frozenset = EMPTY  # parameters the value depends on
    tiles: frozenset = EMPTY  # constexprs whose tl.arange flows in by arithmetic
    pids: frozenset = EMPTY  # tl.program_id axes the value depends on
    loopvars: frozenset = EMPTY  # loops (indices into Trace.loops) whose induction variable flows in
    anchors: frozenset = EMPTY  # names a tile's offsets are positioned by, other than program ids and itself
    ptrs: frozenset = EMPTY  # parameters that flow in additively (pointer candidates)
    unit: frozenset = EMPTY  # dimensions along which the value steps by one
    varying: frozenset = EMPTY  # dimensions along which the value varies at all
    loads: frozenset = EMPTY  # load nodes this value is computed from (elementwise only)
    direct: frozenset = EMPTY  # load nodes this value is, up to layout-only ops (trans, reshape, ...)
    accs: frozenset = EMPTY  # dot nodes whose result this value is computed from (elementwise only)
    reduced: bool = False  # computed from a reduction result (elementwise only)
    items: tuple = ()
    block_shape: Shape = None  # block pointers and descriptors
    order: Optional[tuple] = None  # block pointers
    base: Optional[str] = None  # pointer parameter of a block pointer / descriptor
    pointer: bool = False  # an address (tile of pointers)
    pointee: Optional[str] = None  # element dtype of an address cast with ``tl.pointer_type(...)`` (or OPEN_POINTEE)
    literal: object = None  # Python value of a literal (float, str, bool)
    # alignment evidence for Triton's AxisInfo (footprint.py: which loads the pipeliner can turn into async
    # copies): ``strides`` the parameters that multiply a varying index (a row stride: its divisibility by 16
    # decides the address's alignment), ``bounds`` (dimension, parameter) pairs of a mask compared against
    # a parameter or an index wrapped with ``%`` along that dimension (the mask's alignment / the index's
    # contiguity follow the parameter's divisibility)
    strides: frozenset = EMPTY
    bounds: frozenset = EMPTY

    def with_(self, **kw) -> "Val":
        """A copy with some fields changed (``dataclasses.replace``'s result, without its walk over the 26
        fields and the frozen ``__init__``: the interpreter makes about 90k copies on a large library)."""
        unknown = kw.keys() - _VAL_FIELDS
        if unknown:
            raise TypeError(f"Val has no field {', '.join(sorted(unknown))}")
        copy = object.__new__(type(self))
        state = copy.__dict__
        state.update(self.__dict__)
        state.update(kw)
        return copy

    @property
    def is_tile(self) -> bool:
        """A tensor with at least one dimension (or unknown shape)."""
        return self.kind == "value" and self.shape != ()


_VAL_FIELDS = frozenset(f.name for f in fields(Val))
UNKNOWN = Val(kind="value", shape=None)
NONE = Val(kind="none", shape=None)

#: The ``pointee`` of an address cast to ``tl.pointer_type(dtype)`` with ``dtype`` a constexpr parameter or a type
#: the kernel picks at compile time: an address whose element type Triton knows when it compiles, the reader not
#: (left open, as for ``tl.zeros(..., dtype=dtype)``; never guessed).
OPEN_POINTEE = "open"


class ValMap:
    """A mapping keyed by the identity of a :class:`Val` (``is``, never ``==``), that holds each key.

    ``Val`` compares by identity (two copies with equal fields are different values), so a map of
    what is known about one particular value goes by ``id()``; an ``id`` is only unique while its
    object lives, and the interpreter drops values as soon as a name is rebound (``p += off``).
    Holding the key keeps its ``id`` from going to a later value, and every read checks ``is``.
    """

    def __init__(self) -> None:
        self._items: dict[int, tuple[Val, object]] = {}

    def __setitem__(self, key: Val, value: object) -> None:
        self._items[id(key)] = (key, value)

    def get(self, key: Val, default: object = None) -> object:
        """The value stored for this very ``key`` object, else ``default``."""
        hit = self._items.get(id(key))
        return hit[1] if hit is not None and hit[0] is key else default

    def __contains__(self, key: object) -> bool:
        hit = self._items.get(id(key))
        return hit is not None and hit[0] is key

    def __len__(self) -> int:
        return len(self._items)

_FLOAT_RANK = {"fp8e4nv": 1, "fp8e5": 1, "fp8e4b15": 1, "fp16": 2, "bf16": 2, "fp32": 3, "fp64": 4}
_INT_RANK = {"int1": 0, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "int32": 3, "uint32": 3, "int64": 4, "uint64": 4}


def is_float(dtype: Optional[str]) -> bool:
    """True for floating dtypes and for ``elem:`` (loaded data, assumed floating)."""
    return dtype is not None and (dtype in _FLOAT_RANK or dtype.startswith("elem:"))


def promote(a: Val, b: Val) -> Optional[str]:
    """Result dtype of arithmetic between ``a`` and ``b`` (Triton's rules, simplified).

    A weak operand (a Python literal or constexpr) does not widen the other,
    except that a float literal makes an integer tile ``fp32``.  ``elem:<p>``
    is treated as a floating type no wider than ``fp32``.
    """
    da, db = a.dtype, b.dtype
    if a.weak and not b.weak:
        return _weak_with(da, db)
    if b.weak and not a.weak:
        return _weak_with(db, da)
    if da is None:
        return db if b.weak or a.weak else None
    if db is None:
        return da if a.weak or b.weak else None
    return promote_names(da, db)


def _weak_with(weak_dtype: Optional[str], strong: Optional[str]) -> Optional[str]:
    if strong is None:
        return None
    if weak_dtype == "fp32" and strong in _INT_RANK:
        return "fp32"
    return strong


def promote_names(da: str, db: str) -> Optional[str]:
    """Promotion between two concrete (or ``elem:``) dtype names."""
    if da == db:
        return da
    ea, eb = da.startswith("elem:"), db.startswith("elem:")
    if ea or eb:
        elem, other = (da, db) if ea else (db, da)
        if ea and eb:
            return da
        if other in ("fp32", "fp64"):
            return other
        return elem
    fa, fb = da in _FLOAT_RANK, db in _FLOAT_RANK
    if fa and fb:
        if {da, db} == {"fp16", "bf16"}:
            return "fp32"
        return da if _FLOAT_RANK[da] >= _FLOAT_RANK[db] else db
    if fa:
        return da
    if fb:
        return db
    if da in _INT_RANK and db in _INT_RANK:
        return da if _INT_RANK[da] >= _INT_RANK[db] else db
    return None


def broadcast_shapes(shapes: Iterable[Shape]) -> Shape:
    """Numpy-style broadcast of symbolic shapes (``None`` if any is unknown).

    Dimensions equal to the constant 1 stretch; two different symbolic
    extents cannot be told apart statically, so the first one wins.
    """
    shapes = list(shapes)
    if any(s is None for s in shapes):
        return None
    rank = max((len(s) for s in shapes), default=0)
    one = const(1)
    out = []
    for i in range(rank):
        dim = one
        for s in shapes:
            j = i - (rank - len(s))
            if j < 0:
                continue
            d = s[j]
            if d == one:
                continue
            if dim == one:
                dim = d
        out.append(dim)
    return tuple(out)


def align_dims(dims: frozenset, rank: int, out_rank: int) -> frozenset:
    """Renumber dimension indices of a rank-``rank`` value broadcast to ``out_rank``."""
    if not dims or rank == out_rank:
        return dims
    shift = out_rank - rank
    return frozenset(d + shift for d in dims)


def align_pairs(pairs: frozenset, rank: int, out_rank: int) -> frozenset:
    """Renumber the dimensions of (dimension, parameter) pairs of a rank-``rank`` value broadcast to ``out_rank``."""
    if not pairs or rank == out_rank:
        return pairs
    shift = out_rank - rank
    return frozenset((d + shift, p) for d, p in pairs)


def remap_pairs(pairs: frozenset, mapping) -> frozenset:
    """(dimension, parameter) pairs through a dimension map (``mapping[d]``; dimensions it drops are dropped)."""
    out = set()
    for d, p in pairs:
        try:
            out.add((mapping[d], p))
        except (KeyError, IndexError):
            continue
    return frozenset(out)


def dtype_size(dtype: Optional[str], default: int = 4) -> Expr:
    """Bytes per element: a constant, ``esize_<p>`` for ``elem:<p>``, ``default`` if unknown."""
    if dtype is not None:
        if dtype.startswith("elem:"):
            return Expr("sym", (esize_symbol(dtype[5:]),))
        if dtype in DTYPE_BYTES:
            return const(DTYPE_BYTES[dtype])
    return const(default)


def collect(e: Expr) -> Expr:
    """``e`` with like terms of a sum combined: ``4*B + 4*B + B`` -> ``9*B``."""
    if e.op != "add":
        return e
    coefs: dict[Expr, int] = {}
    for t in e.args:
        if t.op == "const":
            coef, rest = t.value, const(1)
        elif t.op == "mul" and t.args[0].is_const:
            coef = t.args[0].value
            rest = t.args[1] if len(t.args) == 2 else Expr("mul", t.args[1:])
        else:
            coef, rest = 1, t
        coefs[rest] = coefs.get(rest, 0) + coef
    out = const(0)
    for rest, coef in coefs.items():
        out = out + (const(coef) * rest)
    return out


def shape_elems(shape: Shape) -> Optional[Expr]:
    """Number of elements of a known shape."""
    if shape is None:
        return None
    out = const(1)
    for d in shape:
        out = out * d
    return out


def shape_bytes(shape: Shape, dtype: Optional[str]) -> Optional[Expr]:
    """Bytes of a tile of ``shape`` and ``dtype`` (``None`` for an unknown shape)."""
    n = shape_elems(shape)
    return None if n is None else n * dtype_size(dtype)


def _alternatives(a: Val, b: Val) -> Val:
    """Tuples of different lengths from two paths (``return x, y`` / ``return x, y, z``): kept
    apart, by length, so that unpacking into N names takes the N-tuple (the other path would
    not compile); anything else done with them is unknown."""
    by_len: dict[int, Val] = {}
    for v in (a.items if a.kind == "alternatives" else (a,)) + (b.items if b.kind == "alternatives" else (b,)):
        n = len(v.items)
        by_len[n] = join_vals(by_len[n], v) if n in by_len else v
    if len(by_len) == 1:
        return next(iter(by_len.values()))
    return Val(kind="alternatives", shape=None, items=tuple(by_len[n] for n in sorted(by_len)))


def join_vals(a: Val, b: Val) -> Val:
    """The value of a variable after two control-flow paths that set it to ``a`` and ``b``."""
    if a is b:
        return a
    if {a.kind, b.kind} <= {"tuple", "alternatives"} and "alternatives" in (a.kind, b.kind) or (
            a.kind == b.kind == "tuple" and len(a.items) != len(b.items)):
        return _alternatives(a, b)
    if a.kind != b.kind:
        if a.kind == "none":
            return b
        if b.kind == "none":
            return a
        return UNKNOWN
    if a.kind == "tuple":
        return a.with_(items=tuple(join_vals(x, y) for x, y in zip(a.items, b.items)))
    if a.kind == "dtype":
        # two paths that name different element types leave the type open (``tl.float32 if dtype is
        # tl.bfloat16 else dtype`` with the pointer's type unknown here): never pick one of them; it is
        # still a type (Triton picks one at compile time), e.g. for ``tl.pointer_type(...)``
        return a if a.dtype == b.dtype else a.with_(dtype=None)
    if a.kind in ("desc", "blockptr") and a.block_shape != b.block_shape:
        # two paths that make blocks of different shapes (``if TRANSPOSE: make_block_ptr(.., (BK, BM)) else
        # make_block_ptr(.., (BM, BK))``; a descriptor the host shaped, one made in the kernel): Triton compiles
        # one of them, the reader does not know which; never pick one
        return a.with_(block_shape=None)
    if a.kind != "value":
        return a
    if a.shape == b.shape:
        shape = a.shape
    elif a.shape is None or b.shape is None:
        shape = None
    else:
        shape = broadcast_shapes([a.shape, b.shape])
    if a.dtype == b.dtype:
        dtype = a.dtype
    else:
        dtype = promote(a, b)
    return a.with_(
        shape=shape,
        dtype=dtype,
        expr=_join_expr(a.expr, b.expr),
        params=a.params | b.params,
        tiles=a.tiles | b.tiles,
        pids=a.pids | b.pids,
        loopvars=a.loopvars | b.loopvars,
        anchors=a.anchors | b.anchors,
        ptrs=a.ptrs | b.ptrs,
        loads=a.loads | b.loads,
        direct=a.direct | b.direct,
        accs=a.accs | b.accs,
        reduced=a.reduced or b.reduced,
        strides=a.strides | b.strides,
        bounds=a.bounds | b.bounds if a.shape == b.shape else EMPTY,
        unit=a.unit & b.unit if a.shape == b.shape else EMPTY,
        varying=a.varying | b.varying if a.shape == b.shape else EMPTY,
        literal=a.literal if a.literal == b.literal else None,
    )


def _join_expr(a: Optional[Expr], b: Optional[Expr]) -> Optional[Expr]:
    """An integer set to ``a`` on one path and ``b`` on the other: their maximum.

    The maximum is what sizes and trip counts need (the larger tile, the longer
    loop); ``max(min(x, b), b)`` simplifies to ``b``.
    """
    if a is None or b is None:
        return None
    if a == b:
        return a
    if a.op == "min" and b in a.args:
        return b
    if b.op == "min" and a in b.args:
        return a
    return emax(a, b)


def join_envs(a: dict[str, Val], b: dict[str, Val]) -> dict[str, Val]:
    """Join the environments after the two branches of an ``if``."""
    out = dict(a)
    for k, v in b.items():
        cur = out.get(k)
        out[k] = v if cur is None else join_vals(cur, v)
    return out
