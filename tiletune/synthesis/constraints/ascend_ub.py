"""Unified Buffer bytes of a vector kernel, counted the way the Ascend compiler plans them.

The analysis' ``live_bytes`` counts every named tile from its definition to
its last use.  Triton-Ascend 3.2.0 and BiShengIR allocate less; this module
replays their rules over the kernel's dataflow graph (``KernelSpec.graph``,
nodes in trace order) and returns the peak as an expression:

1. **index and mask tiles take no buffer.**  Tiles computed only from
   ``tl.arange``, program ids and scalars, and used only as addresses or masks
   of loads and stores, are folded into the copies' offsets, strides and
   sizes: Triton-Ascend ``third_party/ascend/include/TritonToLinalg/UseAnalysis.h``
   (``UseType::MetaUse``, ``MetaUseEraser``) and ``MaskAnalysis.h``
   (``MaskState``: start/end/dims of a mask).  Pointer tiles likewise, also
   where the base is a scalar the kernel loaded (an index): a scalar is no tile.
2. **in-place reuse.**  An elementwise result takes the buffer of an operand
   of the same shape whose last use it is, when the operand's element is as
   wide as the result's or a multiple of it (a narrowing cast only for 1-D
   tiles): BiShengIR ``lib/Dialect/HIVM/Transforms/PlanMemory.cpp``
   ``isReusableOperands`` / ``isReusableCastOp``.  A loop-carried value and
   its update share one buffer (``UpdateForOpBufferAlias``: yielded values
   alias the region's iter args).  Views (``[:, None]``, reshapes) alias.
3. **liveness.**  A buffer lives from its definition to its last use; one
   defined before a loop and used in it lives to the loop's end, one defined in
   a loop and used after it lives from the loop's start
   (``MemLivenessAnalysis``: ``GetLiveBuffersInLoop``).
4. **multibuffer.**  The UB buffer of a GM->UB load or of a UB->GM store
   allocated inside a loop is marked ``multi_buffer = 2`` when multibuffer is
   on (``MarkMultiBuffer.cpp``: ``MarkMultiBuffer<hivm::LoadOp/StoreOp>``,
   only when every parent loop is an ``scf.for``).

5. **the cube path keeps its tiles out of UB** (``tl.dot`` kernels): a load
   used only by ``tl.dot`` goes GM->L1 (``ND2NZ``); the dot result and its
   accumulator stay in L0C (``acc += tl.dot(a, b)`` is ``tl.dot(a, b, acc)``
   after Triton's combine pass, ``lib/Dialect/Triton/Transforms/Combine.td``
   ``CombineDotAddFPattern``; an accumulator chained into the next dot stays
   in the local buffer, BiShengIR ``InlineFixpipe.cpp`` ``isLocalMatmulInit``);
   a dot result that is stored, cast to fp16/bf16/int8 and stored, or carried
   out of a loop leaves L0C through the fixpipe, which does the cast and the
   store (``InlineFixpipe.cpp``: ``getQuantMode``, ``inlineFixPipeWithStoreOp``,
   ``moveFixpipeOutOfScfFor``).  Only a dot result read by a vector op is
   copied into UB.

6. **common subexpressions are one value**: the same operation on the same
   operands twice (``(x - m)`` written in two statements) is computed once:
   Triton's ``make_ttir`` runs ``passes.common.add_cse`` (MLIR CSE) before the
   backend sees the kernel (``triton/backends/*/compiler.py``; Triton-Ascend's
   ``make_ttir`` keeps the pass).

7. **an ``if`` on dtypes keeps one side**: ``if a.dtype != b.dtype:`` or
   ``if dtype is tl.int64:`` is decided at compile time for the given pointer
   dtypes and only the taken side is generated (``code_generator.py``
   ``visit_If`` on a constant condition); so is an ``if`` on a constexpr the
   config fixes (``if SPLIT_K == 1:``, ``consts``: :func:`.ascend_graph.eval_const_condition`).

8. **a tile no node reads is not certain** (only estimated): unused, the
   compiler erases the read-only op that made it (MLIR ``isOpTriviallyDead``);
   used where the graph lost the edge (a name loaded on both sides of an
   ``if``), its memory is unknown (L1 when the use is ``tl.dot``).

9. **a store under a mask from loaded data reads its destination back**: Triton-Ascend's
   ``discrete-mask-access-conversion`` (the first pass of its TTIR->linalg lowering) turns a store
   whose mask is not a rectangle into a load of the whole destination tile, a select and a store
   (:func:`.ascend_graph.discrete_stores`), so the destination tile is a UB buffer beside the value
   and the mask.  A narrower value that took a wider buffer in place (an int1 mask in its int32
   tile) counts at its own width in the certain count, and a select's int1 condition is not widened.

Not modelled (left to the analysis' figure by :func:`ub_bytes` returning None):
kernels the analysis
could not follow completely (``KernelSpec.incomplete`` other than unknown
ops; a data tile of unknown shape), nodes from helper
functions in other files or outside the kernel's lines (scalars from them are fine), tiles of unknown
shape.  Extra scratch some vector instructions allocate (``ExtraBufferOpInterface``)
is not counted.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path
from typing import Mapping, Optional

from ...analysis.expr import Expr, ExprParseError, const, emax, esize_symbol, parse_expr, product, total
from ...analysis.model import DTYPE_BYTES, KernelSpec
from ..space import resolve_dtype
from .ascend_dtypes import dtype_names, eval_dtype, label_dtype, line_dtypes, promoted
from .ascend_graph import discrete_stores, drop_untaken, merge_common, order_key, side

__all__ = ["ub_bytes", "ub_bounds", "ub_certain", "ub_certain_parts", "ub_floor"]

_DATA_SOURCES = ("load", "dot", "reduce", "scan", "alloc", "atomic")
_COPIES = ("load", "store", "atomic")
_VIEW_MARKS = ("[:, None]", "[None, :]", "[None]", "reshape(", "expand_dims(", "view(", ".T", "permute(", "trans(")


def _structure(spec: KernelSpec) -> Optional[tuple[list, list, dict]]:
    """The kernel body's loops, ``(first line, last line)``, its ``if`` statements,
    ``(then lines, else lines)``, and its names bound once (for dtypes); None without the source.

    Read once per kernel of a file version (:func:`_structure_of`): every shape and target a kernel is
    synthesised for asks again, and the walks of its syntax tree were most of an Ascend synthesis (the
    dev corpus' explanation sweep: 10.7 of 50 s profiled on gemlite, ``load_sources`` 26.8 more).  The
    result is shared: callers only read it."""
    if not spec.file or not Path(spec.file).is_file():
        return None
    return _structure_of(str(spec.file), Path(spec.file).stat().st_mtime_ns, spec.name)


@functools.lru_cache(maxsize=256)
def _structure_of(path: str, mtime_ns: int, name: str) -> Optional[tuple[list, list, dict]]:
    """:func:`_structure` of the function ``name`` in ``path`` as of ``mtime_ns``."""
    tree = _parse(path, mtime_ns)
    if tree is None:
        return None

    def lines(stmts) -> tuple[int, int]:
        return (stmts[0].lineno, stmts[-1].end_lineno or stmts[-1].lineno) if stmts else (0, -1)

    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef) and fn.name == name:
            loops = [(n.lineno, n.end_lineno or n.lineno) for n in ast.walk(fn) if isinstance(n, (ast.For, ast.While))]
            ifs = [(lines(n.body), lines(n.orelse)) for n in ast.walk(fn) if isinstance(n, ast.If) and n.orelse]
            tests = [(n.test, lines(n.body), lines(n.orelse)) for n in ast.walk(fn) if isinstance(n, ast.If)]
            return loops, ifs, (dtype_names(fn), line_dtypes(fn), tests, fn)
    return None


@functools.lru_cache(maxsize=32)
def _parse(path: str, mtime_ns: int) -> Optional[ast.Module]:
    """The parsed source of a kernel file (cached per path and modification time; never run)."""
    try:
        return ast.parse(Path(path).read_text())
    except (SyntaxError, OSError, UnicodeDecodeError):
        return None


def _bytes_of(shape, dtype, dtypes) -> Optional[tuple[Expr, int, Optional[int]]]:
    """(tile bytes, rank, element bytes or None when symbolic) of a graph node."""
    if shape is None:
        return None
    try:
        numel = product(parse_expr(str(d)) for d in shape) if shape else const(1)
    except ExprParseError:
        return None
    dt = resolve_dtype(dtype, dtypes)
    if dt is not None and dt in DTYPE_BYTES:
        return numel * DTYPE_BYTES[dt], len(shape), DTYPE_BYTES[dt]
    if isinstance(dtype, str) and dtype.startswith("elem:"):
        return numel * esize_symbol(dtype[len("elem:"):]), len(shape), None
    return numel * 4, len(shape), 4


def ub_bytes(spec: KernelSpec, dtypes: dict, stages: Expr, consts: Optional[Mapping[str, int]] = None) -> Optional[Expr]:
    """Peak UB bytes of a kernel's vector part as the compiler plans it (see the module docstring),
    or None when not modelled: the ``estimated`` side of :func:`ub_bounds`.

    ``stages`` is the copies of a multibuffered buffer (``1 + multibuffer``).
    """
    bounds = ub_bounds(spec, dtypes, stages, consts)
    return bounds[1] if bounds is not None else None


def ub_certain(spec: KernelSpec, dtypes: dict, stages: Expr, consts: Optional[Mapping[str, int]] = None) -> Optional[Expr]:
    """UB bytes no compiler plan goes below (the ``certain`` side of :func:`ub_bounds`), or None."""
    bounds = ub_bounds(spec, dtypes, stages, consts)
    return bounds[0] if bounds is not None else None


def ub_certain_parts(spec: KernelSpec, dtypes: dict, stages: Expr,
                     consts: Optional[Mapping[str, int]] = None) -> Optional[list[tuple[int, str, list[tuple[str, Expr]]]]]:
    """The sets of tiles the ``certain`` count takes its maximum over, as ``(line, operation's source text,
    [(tile's source text, bytes)...])``, or None when not modelled: what ``explain`` names."""
    parts: list = []
    return parts if ub_bounds(spec, dtypes, stages, consts, parts) is not None else None


def ub_bounds(spec: KernelSpec, dtypes: dict, stages: Expr,
              consts: Optional[Mapping[str, int]] = None, parts: Optional[list] = None) -> Optional[tuple[Expr, Expr]]:
    """``(certain, estimated)`` UB bytes of a kernel's vector part, or None when not modelled.

    ``estimated`` is the full replayed plan (rules 1-7): every buffer live at
    the same statement, per-row vectors and the fp32 copy of a narrower tile an
    operation widens implicitly (``acc += x`` with ``x`` fp16 and ``acc`` fp32:
    Triton's ``binary_op_type_checking_impl`` inserts the ``arith.extf``, whose
    result is a tile of its own) included.  ``certain`` counts only what every
    compiler path must hold at one moment (:func:`_certain`): the whole tiles
    one operation reads and writes (they are its operands: no plan frees them
    before it runs) and the loop-carried tiles of the loops around it (an
    ``scf.for`` iter arg is live through every iteration); each single tile
    alone.  A rejection rests on ``certain``; ``estimated`` only ranks.

    ``consts`` are the values of constexpr parameters the config fixes (``SPLIT_K=1``): an ``if``
    on them is decided like one on dtypes (rule 7).  ``parts``, when a list, is filled with the certain
    sets (:func:`ub_certain_parts`).
    """
    g = spec.graph
    gaps = [x for x in spec.incomplete if not x.startswith("unknown op")]  # unknown ops: nodes of unknown shape
    if gaps or g is None or g.number_of_nodes() == 0 or spec.span is None:
        return None  # a graph with gaps would undercount: keep the analysis' figure
    structure = _structure(spec)
    if structure is None:
        return None
    loops, ifs, names = structure
    g = discrete_stores(merge_common(drop_untaken(g, names, dtypes, consts), loops, ifs))
    lo, hi = spec.span.line, spec.span.end_line
    order = sorted((n for n in g.nodes if not str(n).startswith("param:")), key=order_key)
    pos = {n: i for i, n in enumerate(order)}
    attrs = g.nodes
    data: dict = {}
    for n in order:
        a = attrs[n]
        if not (lo <= (a.get("line") or 0) <= hi) and a.get("shape") != []:
            return None  # a tile from a helper: its lines say nothing about this kernel's loops (scalars hold no UB)
        data[n] = _is_data(a, [data.get(p, False) for p in g.predecessors(n)])

    lines = {n: attrs[n].get("line") or 0 for n in order}
    enclosing = {n: [L for L in loops if L[0] <= lines[n] <= L[1]] for n in order}
    bounds = {L: [pos[m] for m in order if L[0] <= lines[m] <= L[1]] or [0] for L in loops}

    def in_loops(n) -> list[tuple[int, int]]:
        return enclosing.get(n, [])

    def last_index(L) -> int:
        return max(bounds[L])

    def first_index(L) -> int:
        return min(bounds[L])

    cube = _cube_nodes(g, order, attrs)
    shp: dict = {}
    dt: dict = {}
    for n in order:
        shp[n] = _shape(g, n, attrs[n], shp)
        dt[n] = _dtype(g, n, attrs[n], dt, names, dtypes)
    root: dict = {}  # node -> buffer id (its root node)
    own: dict = {}  # node -> (its own tile bytes, rank, element bytes, shape), before any reuse
    members: dict = {}  # buffer id -> nodes sharing it
    info: dict = {}  # buffer id -> (bytes, rank, element bytes)
    for n in order:
        a = attrs[n]
        if not data[n] or a["kind"] in ("store",) or n in cube:
            continue
        if shp[n] is None:
            return None  # a data tile of unknown shape: nothing safe to say
        if not shp[n]:
            continue  # a scalar
        b = _bytes_of(shp[n], dt[n], dtypes)
        if b is None:
            return None
        if a["kind"] == "reduce" and "return_indices=True" in (a.get("label") or ""):
            b = (b[0] + _bytes_of(shp[n], "int32", dtypes)[0], b[1], None)  # the index tile beside the values
        own[n] = (*b, str(shp[n]))
        preds = [p for p in g.predecessors(n) if p in root]
        label = a.get("label") or ""
        target = None
        if a["kind"] in ("elementwise", "other") and any(m in label for m in _VIEW_MARKS) and len(preds) == 1:
            target = root[preds[0]]  # a view aliases its source
        elif a["kind"] == "elementwise":
            for p in preds:
                r = root[p]
                rb, rrank, rw = info[r]
                if shp.get(p) != shp[n]:
                    continue
                # loop-carried: the value before the loop and its update in it share the iter arg's buffer
                carried = list(g.successors(p)) == [n] and set(in_loops(n)) > set(in_loops(p))
                if not carried and _last_use(g, members[r], pos, in_loops, last_index) != pos[n]:
                    continue
                w = b[2]
                if rw is not None and w is not None and (rw < w or rw % w):
                    continue
                if rw is not None and w is not None and rw > w and b[1] > 1 and _is_cast(g, n, label, dt, dtypes):
                    continue  # a narrowing cast reuses its input only for 1-D tiles
                target = r
                break
        if target is None:
            root[n] = n
            members[n] = [n]
            info[n] = b
        else:
            root[n] = target
            members[target].append(n)
    if not members:
        return const(0), const(0)
    spans = []
    copies: dict = {}  # buffer id -> slots (1, or `stages` for a multibuffered copy)
    multi: set = set()  # buffers whose GM<->UB copy in a loop takes `stages` slots
    for r, ms in members.items():
        start = pos[r]
        end = _last_use(g, ms, pos, in_loops, last_index)
        for L in in_loops(r):
            if any(pos[s] > last_index(L) for m in ms for s in g.successors(m)):
                start = min(start, first_index(L))  # carried out of the loop: live from its start
        mult = const(1)
        copied = attrs[r]["kind"] == "load" or any(attrs[s]["kind"] in _COPIES for m in ms for s in g.successors(m))
        if copied and in_loops(r):
            mult = stages
            multi.add(r)
        copies[r] = mult
        spans.append((start, max(start, end), info[r][0] * mult))
    # the two sides of an `if` never run together (scf.if results alias both sides' buffers,
    # PlanMemory.cpp UpdateIfOpBufferAlias): a live set holds one side's buffers
    sides = [[side(attrs[r].get("line") or 0, br) for br in ifs] for r in members]
    sums: list[Expr] = []
    seen: set = set()
    sets = []
    for t in range(len(order)):
        here = [side(attrs[order[t]].get("line") or 0, br) for br in ifs]
        live = [i for i, (s0, e, _) in enumerate(spans) if s0 <= t <= e
                and not any(h is not None and sides[i][k] is not None and sides[i][k] != h for k, h in enumerate(here))]
        for one in _one_side_each(live, sides, len(ifs)):
            if one and one not in seen:
                seen.add(one)
                sets.append(one)
    widened = _widened(g, order, attrs, root, shp, dt, dtypes, cube)
    for s in (x for x in sets if not any(x < o for o in sets)):
        e = total(spans[i][2] for i in sorted(s))
        at = [t for t in range(len(order)) if all(spans[i][0] <= t <= spans[i][1] for i in s)]
        extra = [w for t, _, _, w in widened if t in at]
        if extra:
            e = e + emax(*extra)  # the implicit widened copy lives only at its own statement
        if e not in sums:
            sums.append(e)
    roots = list(members)
    hoisted = multi if not (stages.is_const and stages.value == 1) else set()
    widens: dict = {}
    for _, n, p, _ in widened:
        widens.setdefault(n, set()).add(p)
    certain = _certain(g, order, pos, root, roots, spans, in_loops, first_index, last_index, cube,
                       hoisted, stages, widens, (own, copies), parts)
    if parts is not None:  # the tiles of each certain set, named by their source text (ub_certain_parts)
        named = [(attrs[n].get("line") or 0, attrs[n].get("label") or "",
                  [(_tile_name(attrs[m].get("label") or "", c), b) for m, b, c in ps]) for n, ps in parts]
        parts[:] = named
    return certain, emax(certain, *sums)  # the estimate is never below what is certain


def _tile_name(label: str, copies: Optional[Expr]) -> str:
    """A tile's source text, with its multibuffer slots where it has more than one."""
    if copies is None:
        return f"{label} (its multibuffered allocation, hoisted before the loop)"
    if copies.is_const and copies.value == 1:
        return label
    return f"{label} (x {copies} multibuffer slots)"


def _widened(g, order, attrs, root, shp, dt, dtypes, cube) -> list[tuple[int, str, str, Expr]]:
    """(statement index, node, widened operand, bytes) of each implicit widening copy: an elementwise operation whose result
    element is wider than a tile operand's (``acc += x``, fp16 ``x`` into an fp32 ``acc``) reads the
    operand through an ``arith.extf`` / ``arith.extsi`` of the operand's shape at the result's width
    (Triton ``semantic.binary_op_type_checking_impl`` casts both operands to the promoted type)."""
    out = []
    for t, n in enumerate(order):
        a = attrs[n]
        if a["kind"] != "elementwise" or n in cube or n not in root or _is_cast(g, n, a.get("label") or "", dt, dtypes):
            continue
        wide = _bytes_of(shp[n], dt[n], dtypes)
        if wide is None or wide[2] is None:
            continue
        select = (a.get("label") or "").startswith(("tl.where(", "where(", "select("))
        for p in g.predecessors(n):
            if p not in root or not shp.get(p):
                continue
            if select and resolve_dtype(dt.get(p), dtypes) == "int1":
                continue  # a select reads its condition as it is (semantic.where casts only the two values)
            narrow = _bytes_of(shp[p], dt[p], dtypes)
            if narrow is None or narrow[2] is None or narrow[2] >= wide[2]:
                continue
            numel = product(parse_expr(str(d)) for d in shp[p])
            out.append((t, n, p, numel * wide[2]))
    return out


def _is_cast(g, n, label: str, dt: dict, dtypes: dict) -> bool:
    """Whether an elementwise node is an explicit cast (``x.to(tl.float32)``), not an implicit widening.

    Its label says so, or, where the label was shortened (``...``: ``tl.load(x_ptr + offs,
    mask=...).to(tl.float32)`` loses its tail), it reads one value only, a tile of another element
    width: no other one-operand elementwise operation changes the element type (an implicit widening
    needs a second, wider operand: Triton ``semantic.binary_op_type_checking_impl``).
    """
    if ".to(" in label:
        return True
    preds = list(g.predecessors(n))
    if not label.endswith("...") or len(preds) != 1:
        return False
    src, out = resolve_dtype(dt.get(preds[0]), dtypes), resolve_dtype(dt.get(n), dtypes)
    if src is None or out is None or out == "int1":  # a comparison with a literal (x > 0) makes int1
        return False
    return DTYPE_BYTES.get(src) != DTYPE_BYTES.get(out)


def _certain(g, order, pos, root, roots, spans, in_loops, first_index, last_index, cube,
             hoisted: set, stages: Expr, widens: dict, sized: tuple = ({}, {}),
             detail: Optional[list] = None) -> Expr:
    """The ``certain`` side of :func:`ub_bounds`: the largest sum of whole tiles that are live together
    on every compiler path.

    At an operation, the buffers of its tile operands and of its result are all live (an operand is
    read while the result is written; where the result may take an operand's buffer, rule 2, they are
    one buffer).  Around it, a buffer written in an enclosing loop and live from before the loop to its
    end is the loop's iter arg: live through every iteration.  A multibuffered copy's buffer
    (``hoisted``, only where ``stages`` may exceed 1) is one allocation of ``stages`` slots made
    before the loop (MLIR ``memref::multiBuffer``, mlir/lib/Dialect/MemRef/Transforms/MultiBuffer.cpp:
    the alloc is hoisted out of the loop with a leading dimension of the buffer count), so it is live
    through the loop too; it is counted as ``bytes x (stages - 1)``, nothing when multibuffer is off.
    An operation that widens an operand implicitly (``widens``: node -> operands) is two steps, the
    cast and the operation on the cast's copy; the copy, and a result that may be that copy reused in
    place, are ``estimated`` only: the certain sets are the narrow operand (at the cast) and the other
    operands with a result that is one of theirs in place (at the operation).
    Each tile counts its elements only (no 32-byte padding, no instruction scratch); a per-row vector
    counts only where it is an operand or carried, never for living beside others; code motion, which could shorten other
    live ranges (the compiler's enable-code-motion, one of its overflow retries), cannot separate an
    operation from its operands.  A narrower value that took a wider buffer in place (rule 2: an int1
    mask in the int32 tile it was compared from) counts at its own width (``sized``: each node's own
    bytes and each buffer's slots): a plan that does not reuse holds only that.  ``detail``, when a
    list, gets each candidate set as ``(node, [(member node, bytes, copies)...])``: the operation it is at and
    its tiles (``copies`` None for a multibuffered buffer live through the loop as its hoisted allocation).
    """
    own, copies = sized

    users: dict = {}
    for m in order:
        if m in root:
            users.setdefault(root[m], set()).update(s for s in g.successors(m) if s in pos)

    def dies_at(p, n) -> bool:
        """Whether operand ``p``'s buffer has no use after ``n``."""
        return all(pos[s] <= pos[n] for s in users.get(root[p], ()))

    def _hosts(op, res) -> bool:
        """Whether an operand's tile could hold the result in place (same shape, an element as wide)."""
        return (op is not None and res is not None and op[3] == res[3] and op[2] is not None
                and res[2] is not None and op[2] >= res[2])

    def narrowest(r, ms) -> object:
        """The member of buffer ``r`` whose size counts at an operation that touches ``ms``: the buffer
        itself unless every one of them is narrower than it."""
        rw = own.get(r, (None, None, None))[2]
        widths = [own.get(m, (None, None, None))[2] for m in ms]
        if rw is None or any(w is None or w >= rw for w in widths):
            return r
        return max(ms, key=lambda m: own[m][2])

    def size(r, m) -> Expr:
        return spans[index[r]][2] if m == r else own[m][0] * copies.get(r, const(1))

    index = {r: i for i, r in enumerate(roots)}
    # a buffer no node reads (no use the graph shows) is not certain: unused, the compiler erases the
    # read-only op that made it (MLIR isOpTriviallyDead); used where the graph lost the edge (a name
    # bound on both sides of an `if`), its memory is unknown (UB for a vector use, L1 for tl.dot)
    whole = {r for r in roots if any(g.out_degree(m) for m in order if root.get(m) == r)}
    carried: dict = {}
    slots: dict = {}
    for r in whole:
        i = index[r]
        loops = {L for m in order if root.get(m) == r for L in in_loops(m)}
        for L in loops:
            if spans[i][0] <= first_index(L) and spans[i][1] >= last_index(L) and pos[r] < first_index(L):
                carried.setdefault(L, set()).add(r)
            elif r in hoisted:
                slots.setdefault(L, set()).add(r)
    sizes = [spans[index[r]][2] for r in roots if r in whole]
    if detail is not None:
        detail.extend((r, [(r, spans[index[r]][2], copies.get(r, const(1)))]) for r in roots if r in whole)
    seen: dict = {}
    for n in order:
        if n in cube:
            continue
        wide = widens.get(n, set())
        touched = [p for p in g.predecessors(n) if p in root and p not in wide]
        in_place = n in root and root[n] in {root[p] for p in touched}
        if n in root and (not wide or in_place):
            if not (in_place and any(_hosts(own.get(p), own.get(n)) and dies_at(p, n) for p in touched)):
                touched.append(n)  # else the result may take the buffer of a dying operand as wide (rule 2)
        groups = [touched] + [[p] for p in sorted(wide, key=str)]
        around: set = set()
        extra: set = set()
        for L in in_loops(n):
            around |= carried.get(L, set())
            extra |= slots.get(L, set())
        for grp in groups:
            bufs = {root[m] for m in grp} & whole
            pairs = {(r, narrowest(r, [m for m in grp if root[m] == r])) for r in bufs - around}
            pairs |= {(r, r) for r in around}
            if len(pairs) + len(extra - bufs - around) > 1:
                seen.setdefault((frozenset(pairs), frozenset(extra - bufs - around)), n)
    key = lambda rm: (index[rm[0]], str(rm[1]))  # noqa: E731
    for here, extra in seen:
        if any(here <= h and extra <= x and (here, extra) != (h, x) for h, x in seen):
            continue
        parts = [(m, size(r, m), copies.get(r, const(1))) for r, m in sorted(here, key=key)]
        parts += [(r, spans[index[r]][2] * (stages - const(1)), None) for r in sorted(extra, key=index.get)]
        sizes.append(total(b for _, b, _ in parts))
        if detail is not None:
            detail.append((seen[(here, extra)], parts))
    return emax(*sizes) if sizes else const(0)


def _dtype(g, n, a: dict, known: dict, names: dict, dtypes: dict) -> Optional[str]:
    """A node's element type; where the analysis left it open, the type its source names
    (``dtype=acc_type`` with ``acc_type`` bound in the kernel; ``names`` is the kernel's
    (names bound once, type expression per line)) or the promotion of its tile
    operands' types (:mod:`.ascend_dtypes`, Triton's compile-time folding and promotion)."""
    if a.get("dtype") is not None:
        return a["dtype"]
    names, by_line = names[0], names[1]
    named = label_dtype(a.get("label") or "", names, dtypes)
    if named is None and a.get("line") in by_line:
        named = eval_dtype(by_line[a["line"]], names, dtypes)
    if named is not None or a["kind"] not in ("elementwise", "reduce", "other"):
        return named
    tiles = [p for p in g.predecessors(n) if not str(p).startswith("param:") and p in known]
    return promoted([known[p] for p in tiles], dtypes) if tiles else None


def ub_floor(spec: KernelSpec, dtypes: dict, stages: Expr, consts: Optional[Mapping[str, int]] = None) -> Optional[Expr]:
    """A lower bound of the UB bytes for a kernel :func:`ub_bytes` cannot plan, or None.

    Whatever else the compiler does, each vector tile is one memref allocated
    whole in UB (PlanMemory.cpp gives every memref.alloc in the UB address
    space one offset; there is no spilling), and the buffer of a GM->UB load in
    an ``scf.for`` takes ``stages`` slots (rule 4).  So the largest such tile is
    a need no plan goes below; tiles of unknown shape or element type are left
    out (that only lowers the bound).
    """
    g = spec.graph
    if g is None or g.number_of_nodes() == 0 or spec.span is None:
        return _load_floor(spec, dtypes, stages)
    structure = _structure(spec)
    loops, names = (structure[0], structure[2]) if structure is not None else ([], ({}, {}, [], None))
    if structure is not None:
        g = drop_untaken(g, names, dtypes, consts)
    g = discrete_stores(g)
    order = sorted((n for n in g.nodes if not str(n).startswith("param:")),
                   key=order_key)
    attrs = g.nodes
    cube = _cube_nodes(g, order, attrs)
    data: dict = {}
    shp: dict = {}
    dt: dict = {}
    sizes: list[Expr] = []
    for n in order:
        a = attrs[n]
        data[n] = _is_data(a, [data.get(p, False) for p in g.predecessors(n)])
        shp[n] = _shape(g, n, a, shp)
        dt[n] = _dtype(g, n, a, dt, names, dtypes)
        if not data[n] or a["kind"] == "store" or n in cube or not shp[n] or not _known_type(dt[n], dtypes):
            continue
        if not g.out_degree(n):  # no use the graph shows: not a certain buffer (see _certain)
            continue
        b = _bytes_of(shp[n], dt[n], dtypes)
        if b is None:
            continue
        line = a.get("line") or 0
        looped = a["kind"] == "load" and any(L[0] <= line <= L[1] for L in loops)
        sizes.append(b[0] * stages if looped else b[0])
    if not sizes:
        return None
    return emax(*sizes)


def _load_floor(spec: KernelSpec, dtypes: dict, stages: Expr) -> Optional[Expr]:
    """:func:`ub_floor` from the kernel's loads alone, for a spec without a dataflow graph: each vector
    load's tile is a UB buffer (a GM->UB copy; ``stages`` slots in a loop), whatever the plan."""
    sizes: list[Expr] = []
    for a in spec.accesses:
        if a.kind != "load" or a.feeds_dot or not a.shape or not _known_type(a.dtype, dtypes):
            continue
        b = _bytes_of(a.shape, a.dtype, dtypes)
        if b is not None:
            sizes.append(b[0] * stages if a.in_loop else b[0])
    if not sizes:
        return None
    return emax(*sizes)


def _is_data(a: dict, preds_data: list) -> bool:
    """Whether a node is a data tile (rule 1): made by a load, dot, reduction... or from one.

    A scalar (a loaded index, a reduced total) is no tile: it sits in a scalar register and
    addresses built from it with ``tl.arange`` are metadata like any other (the scalar
    operand of an address is folded into the copy's offset, ``UseAnalysis.h`` MetaUse).
    """
    if a.get("shape") == []:
        return False
    return a["kind"] in _DATA_SOURCES or any(preds_data)


def _known_type(dtype, dtypes: dict) -> bool:
    """Whether a tile's element width is known (a dtype, or the element of a pointer parameter)."""
    return dtype is not None and (resolve_dtype(dtype, dtypes) is not None or str(dtype).startswith("elem:"))


def _shape(g, n, a: dict, known: dict) -> Optional[list]:
    """A node's tile shape; where the analysis left it unknown, from its operands.

    An elementwise op has the broadcast shape of its operands (when the graph
    knows them all); a reduction drops its ``axis=k`` dimension (no axis: a scalar).
    """
    if a.get("shape") is not None or str(n).startswith("param:"):
        return a.get("shape")
    preds = [known.get(p) for p in g.predecessors(n) if not str(p).startswith("param:")]
    if not preds or any(x is None for x in preds):
        return None
    if a["kind"] == "elementwise":
        rank = max(len(x) for x in preds)
        if any(len(x) not in (0, rank) for x in preds):
            return None
        out = []
        for i in range(rank):
            dims = {str(x[i]) for x in preds if x and str(x[i]) != "1"}
            if len(dims) > 1:
                return None
            out.append(dims.pop() if dims else "1")
        return out
    if a["kind"] == "reduce" and len(preds) == 1:
        m = re.search(r"axis\s*=\s*(-?\d+)", a.get("label") or "")
        if not m:
            return []
        k = int(m.group(1)) % max(1, len(preds[0]))
        return [d for i, d in enumerate(preds[0]) if i != k]
    return None


#: At most this many live sets per statement from splitting ``if`` sides (beyond: not split, an overcount).
MAX_SPLITS = 16


def _one_side_each(live: list, sides: list, n_ifs: int) -> list:
    """The live set split so that no set holds buffers of both sides of one ``if`` (up to :data:`MAX_SPLITS`)."""
    out = [frozenset(live)]
    for k in range(n_ifs):
        if len(out) * 2 > MAX_SPLITS:
            break
        nxt = []
        for s in out:
            both = {sides[i][k] for i in s} - {None}
            if len(both) < 2:
                nxt.append(s)
                continue
            for keep in sorted(both):
                nxt.append(frozenset(i for i in s if sides[i][k] in (None, keep)))
        out = nxt
    return out


def _cube_nodes(g, order, attrs) -> set:
    """Nodes whose tiles stay on the cube path (L1 / L0C / fixpipe), never in UB (rule 5)."""
    kind = lambda n: attrs[n]["kind"]  # noqa: E731
    label = lambda n: attrs[n].get("label") or ""  # noqa: E731
    acc = {n for n in order if kind(n) == "dot"}
    if not acc:
        return set()
    for n in order:  # acc += tl.dot(a, b): folded into the dot's accumulator
        if kind(n) == "elementwise" and "+" in label(n) and any(p in acc for p in g.predecessors(n)):
            acc.add(n)
    for n in order:  # the initial accumulator (tl.zeros) used only by the dot chain
        if kind(n) == "alloc" and g.out_degree(n) and all(s in acc for s in g.successors(n)):
            acc.add(n)
    out: set = set()
    for n in acc:
        casts = []
        ok = True
        for s in g.successors(n):
            if s in acc or kind(s) == "store":
                continue
            if kind(s) == "elementwise" and ".to(" in label(s) and all(kind(t) == "store" for t in g.successors(s)):
                casts.append(s)  # cast on the fixpipe's way out
                continue
            ok = False
        if ok:
            out.add(n)
            out.update(casts)
    for n in order:  # a load used only by tl.dot: GM -> L1
        if kind(n) == "load" and g.out_degree(n) and all(kind(s) == "dot" for s in g.successors(n)):
            out.add(n)
    return out


def _last_use(g, ms, pos, in_loops, last_index) -> int:
    """Index of the last use of a buffer shared by nodes ``ms`` (a loop's end when used in a later loop)."""
    end = max(pos[m] for m in ms)
    for m in ms:
        for s in g.successors(m):
            if s not in pos:
                continue
            end = max(end, pos[s])
            for L in in_loops(s):
                if not any(L == M for M in in_loops(m)):
                    end = max(end, last_index(L))  # defined before the loop, read in it
    return end
