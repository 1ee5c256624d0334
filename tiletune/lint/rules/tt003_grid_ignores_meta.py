"""TT003: the grid reads a caller variable named like a tuned parameter."""

from __future__ import annotations

from typing import Any, Iterator, Optional, Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from ..diagnostic import Diagnostic
from ..rule import Invalid, LintContext, Rule
from ._cst import ReplaceNode, launch_kernel_name
from ._kernel import autotuner_supplies, fmt_names, passes, tunability_of, tiletune_searches

__all__ = ["GridIgnoresMeta"]


class GridIgnoresMeta(Rule):
    code = "TT003"
    name = "grid-ignores-meta"
    summary = "the grid is sized by a tuned parameter but does not read `meta`"
    severity = "error"
    WHAT = """
        The grid of a launch of an autotuned kernel mentions, as a variable of the
        caller, the name of a parameter the autotuner chooses for that launch
        (`(triton.cdiv(n, BLOCK_SIZE),)`), instead of reading the chosen value
        from the grid lambda's argument
        (`lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)`). Tuned for the
        launch: set by the kernel's literal configs; under tiletune's `configs=[]`
        search, a name the search chooses (`Tunability.tuned`); with configs that
        are not literal, a parameter this launch does not pass and that has no
        default (only the configs can supply it). A name the launch passes itself,
        or that is in the `key`, set by `@triton.heuristics` or defaulted, is not
        tuned and is not reported. Also reported: a grid that does not read
        `meta` and divides by a literal (`(triton.cdiv(n, 128),)`) while the
        autotuner chooses a parameter that splits the work across programs; that
        finding has no quick fix (which parameter the literal stands for is the
        author's call).
        """
    WHY = """
        The autotuner picks the value per config and calls the grid with the
        chosen values; a grid computed from a local variable launches the number
        of programs of *that* value, so every other config covers too little
        (wrong results) or too much (wasted programs) of the tensor.
        """
    FIX = """
        turn the grid into a lambda over `meta` (rewriting the assignment when the
        grid is a variable): the grid then reads the value the kernel actually
        receives. Where the local variable equals every config's value this
        changes nothing; otherwise it makes the grid cover what the kernel
        covers.
        """
    INVALID = [
        Invalid(
            """
                import tiletune
                import triton
                import triton.language as tl


                @tiletune.autotune(configs=[], key=["n_elements"])
                @triton.jit
                def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
                    pid = tl.program_id(axis=0)
                    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
                    mask = offs < n_elements
                    x = tl.load(x_ptr + offs, mask=mask)
                    y = tl.load(y_ptr + offs, mask=mask)
                    tl.store(out_ptr + offs, x + y, mask=mask)


                def add(x, y, out):
                    n = out.numel()
                    BLOCK_SIZE = 1024
                    add_kernel[(triton.cdiv(n, BLOCK_SIZE),)](x, y, out, n)
            """,
            fixed="""
                import tiletune
                import triton
                import triton.language as tl


                @tiletune.autotune(configs=[], key=["n_elements"])
                @triton.jit
                def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
                    pid = tl.program_id(axis=0)
                    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
                    mask = offs < n_elements
                    x = tl.load(x_ptr + offs, mask=mask)
                    y = tl.load(y_ptr + offs, mask=mask)
                    tl.store(out_ptr + offs, x + y, mask=mask)


                def add(x, y, out):
                    n = out.numel()
                    BLOCK_SIZE = 1024
                    add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, n)
            """,
        ),
        Invalid(
            """
                import tiletune
                import triton
                import triton.language as tl


                @tiletune.autotune(configs=[], key=["n_elements"])
                @triton.jit
                def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
                    pid = tl.program_id(axis=0)
                    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
                    mask = offs < n_elements
                    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


                def add(x, y, out):
                    n = out.numel()
                    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n)
            """
        ),
    ]
    VALID = [
        """
        import tiletune
        import triton
        import triton.language as tl


        @tiletune.autotune(configs=[], key=["n_elements"])
        @triton.jit
        def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
            pid = tl.program_id(axis=0)
            offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            mask = offs < n_elements
            x = tl.load(x_ptr + offs, mask=mask)
            y = tl.load(y_ptr + offs, mask=mask)
            tl.store(out_ptr + offs, x + y, mask=mask)


        def add(x, y, out):
            n = out.numel()
            add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, n)
        """,
        # the launch passes BLOCK_SIZE itself: the grid and the kernel agree
        """
        import triton
        import triton.language as tl


        @triton.autotune(configs=[triton.Config({}, num_warps=4), triton.Config({}, num_warps=8)], key=["n_elements"])
        @triton.jit
        def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
            pid = tl.program_id(axis=0)
            offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            mask = offs < n_elements
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


        def add(x, y, out):
            n = out.numel()
            BLOCK_SIZE = 1024
            add_kernel[(triton.cdiv(n, BLOCK_SIZE),)](x, y, out, n, BLOCK_SIZE=BLOCK_SIZE)
        """,
    ]

    def needs_body(self, module, kernel) -> bool:
        """An autotuned kernel's launches here: the body for tiletune's verdict, or for the roles of the
        tuned parameters a grid that does not read meta may divide by."""
        if kernel.autotune is None or not kernel.launches:
            return False
        if tiletune_searches(module, kernel):
            return True
        return any(not l.reads_meta and l.grid is not None and _tuned_at(module, kernel, l) for l in kernel.launches)

    def check(self, ctx: LintContext) -> Iterator[Diagnostic]:
        for k in ctx.module.kernels:
            if k.autotune is None:
                continue
            for launch in k.launches:
                tuned = _tuned_at(ctx.module, k, launch)
                used = [n for n in tuned if n in launch.grid_names and n not in launch.meta_keys]
                if not used:
                    literal = _literal_divisor(k, launch, tuned)
                    if literal is not None:
                        yield ctx.report("TT003", launch.grid_span, _literal_message(k, launch, tuned, literal), k.name,
                                         _parallel(k, tuned)[0])
                    continue
                yield ctx.report(
                    "TT003",
                    launch.grid_span,
                    _message(k, launch, used),
                    k.name,
                    used[0],
                    fix="Rewrite the grid as a lambda over meta",
                    fix_data={
                        "kernel": k.name,
                        "names": used,
                        "line": launch.span.line,
                        "column": launch.span.column,
                    },
                )

    def fix(self, wrapper: MetadataWrapper, d: Diagnostic) -> cst.Module:
        return fix_grid(wrapper, d)


def _tuned_at(module: Any, k: Any, launch: Any) -> list[str]:
    """Parameters the autotuner chooses at ``launch``, in signature order."""
    supplied = autotuner_supplies(module, k)
    if supplied is None:
        # configs we cannot read: a parameter this launch leaves unset, with no
        # default and no heuristic, can only come from them.
        names = [p.name for p in k.params if p.constexpr and p.default is None and p.name not in k.heuristics]
    elif tiletune_searches(module, k):
        # what tiletune tunes for this launch: the shared verdict given what it passes
        passed = list(launch.fixed) + list(launch.bound_positionally(k.params))
        names = list(tunability_of(k, launch_kwargs=passed).tuned)
    else:
        names = [p.name for p in k.params if p.name in supplied]
    by_name = {p.name: p for p in k.params}
    return [n for n in names if n in by_name and not passes(launch, by_name[n])]


def _parallel(k: Any, tuned: list[str]) -> list[str]:
    """The tuned parameters that split a dimension across programs (their value sizes the grid)."""
    from tiletune.analysis.model import Role

    return [p.name for p in k.params if p.name in tuned and p.role == Role.PARALLEL]


def _literal_divisor(k: Any, launch: Any, tuned: list[str]) -> Optional[int]:
    """The literal a grid that does not read meta divides by (``triton.cdiv(n, 128)``,
    ``n // 128``) while the autotuner chooses a parameter that splits the work across
    programs, else None."""
    if launch.reads_meta or launch.grid is None or not _parallel(k, tuned):
        return None
    for dim in launch.grid:
        found = _const_divisor(dim)
        if found is not None:
            return found
    return None


def _const_divisor(e: Any) -> Optional[int]:
    if e.op in ("cdiv", "floordiv") and e.args[1].is_const and e.args[1].value > 1:
        return int(e.args[1].value)
    for a in e.args if e.op not in ("const", "sym") else ():
        found = _const_divisor(a)
        if found is not None:
            return found
    return None


def _literal_message(k: Any, launch: Any, tuned: list[str], literal: int) -> str:
    names = _parallel(k, tuned)
    return (
        f"launch of autotuned kernel {k.name!r}: its grid ({launch.grid_source}) divides by the literal {literal}, "
        f"but the autotuner chooses {fmt_names(names)} per config, so the grid launches the programs of a "
        f"{literal}-wide tile whatever the tuned value is (too few programs: part of the tensor is never "
        f"computed; too many: wasted programs); write the grid as a lambda reading "
        + ", ".join(f'meta["{n}"]' for n in names)
    )


def _message(k: Any, launch: Any, used: list[str]) -> str:
    if launch.grid_kind == "lambda" and launch.reads_meta:
        how = "its grid lambda reads the caller's variable"
    elif launch.grid_kind == "lambda":
        how = "its grid lambda ignores its meta argument and reads the caller's variable"
    else:
        how = f"its grid ({launch.grid_source}) is not a lambda over meta and reads the caller's variable"
    plural = "s" if len(used) > 1 else ""
    return (
        f"launch of autotuned kernel {k.name!r}: {how}{plural} {fmt_names(used)}, but the autotuner chooses "
        f"{'them' if plural else 'it'} per config, so the grid does not follow the tuned value{plural}; write the "
        f"grid as a lambda reading " + ", ".join(f'meta["{n}"]' for n in used)
    )


# ----- the fix: grid -> lambda over meta -------------------------------------------


class _MetaNames(cst.CSTTransformer):
    """Replace ``NAME`` (read as a value) by ``meta["NAME"]`` for the given names."""

    def __init__(self, names: Sequence[str], meta: str):
        super().__init__()
        self.names, self.meta = set(names), meta
        self.count = 0

    # Names that are not values: attribute names, keyword names, parameters.
    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return False

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        return updated.with_changes(value=original.value.visit(self))

    def visit_Arg(self, node: cst.Arg) -> bool:
        return False

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(value=original.value.visit(self))

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def leave_Lambda(self, original: cst.Lambda, updated: cst.Lambda) -> cst.BaseExpression:
        inner = {p.name.value for p in original.params.params}
        sub = _MetaNames([n for n in self.names if n not in inner], self.meta)
        body = original.body.visit(sub)
        self.count += sub.count
        return updated.with_changes(body=body)

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        if updated.value not in self.names:
            return updated
        self.count += 1
        return cst.Subscript(
            value=cst.Name(self.meta),
            slice=[cst.SubscriptElement(slice=cst.Index(value=cst.SimpleString(f'"{updated.value}"')))],
            lpar=updated.lpar,
            rpar=updated.rpar,
        )


def _all_names(node: cst.CSTNode) -> set[str]:
    out: set[str] = set()

    class V(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            out.add(n.value)

    node.visit(V())
    return out


def _meta_name(node: cst.CSTNode) -> str:
    used = _all_names(node)
    for cand in ("meta", "META", "meta_", "_meta"):
        if cand not in used:
            return cand
    return "meta__"


def _parenthesize_tuple(expr: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(expr, cst.Tuple) and not expr.lpar:
        return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return expr


def _to_lambda(expr: cst.BaseExpression, names: Sequence[str]) -> cst.BaseExpression:
    """``expr`` as a grid lambda over meta (an existing lambda is fixed in place)."""
    if isinstance(expr, cst.Lambda):
        ps = expr.params
        first = (list(ps.posonly_params) + list(ps.params))[:1]
        if first:
            meta = first[0].name.value
            t = _MetaNames(names, meta)
            return expr.with_changes(body=expr.body.visit(t))
        meta = _meta_name(expr)
        t = _MetaNames(names, meta)
        return expr.with_changes(
            params=ps.with_changes(params=[cst.Param(name=cst.Name(meta))]),
            body=expr.body.visit(t),
            whitespace_after_lambda=cst.SimpleWhitespace(" "),
        )
    meta = _meta_name(expr)
    body = _parenthesize_tuple(expr.visit(_MetaNames(names, meta)))
    template = cst.parse_expression(f"lambda {meta}: 0")
    assert isinstance(template, cst.Lambda)
    return template.with_changes(body=body)


def _fix_def(func: cst.FunctionDef, names: Sequence[str]) -> cst.FunctionDef:
    ps = func.params
    first = (list(ps.posonly_params) + list(ps.params))[:1]
    if not first:
        from ..rule import FixError

        raise FixError(f"grid function {func.name.value!r} takes no meta argument")
    meta = first[0].name.value
    return func.with_changes(body=func.body.visit(_MetaNames(names, meta)))


class _FindLaunch(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider, ParentNodeProvider)

    def __init__(self, line: int, column: int, kernel: Optional[str]):
        super().__init__()
        self.where, self.kernel = (line, column), kernel
        self.call: Optional[cst.Call] = None
        self.scope: Optional[cst.CSTNode] = None
        self._scopes: list[cst.CSTNode] = []
        self.fallback: Optional[tuple[cst.Call, Optional[cst.CSTNode]]] = None

    def visit_Module(self, node: cst.Module) -> None:
        self._scopes.append(node)

    def leave_Module(self, node: cst.Module) -> None:
        self._scopes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.append(node)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.pop()

    def visit_Call(self, node: cst.Call) -> None:
        if self.call is not None or not isinstance(node.func, cst.Subscript):
            return
        pos = self.metadata[PositionProvider][node].start
        if (pos.line, pos.column) == self.where:
            self.call, self.scope = node, self._scopes[-1]
        elif self.fallback is None and pos.line == self.where[0] and launch_kernel_name(node) == self.kernel:
            self.fallback = (node, self._scopes[-1])


def _grid_assignment(scope: cst.CSTNode, name: str, before_line: int, positions) -> Optional[cst.CSTNode]:
    """The last ``name = value`` (or ``def name``) directly in ``scope`` before ``before_line``."""
    found: Optional[cst.CSTNode] = None

    class V(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            nonlocal found
            if node is scope:
                return True
            if node.name.value == name and positions[node].start.line < before_line:
                found = node
            return False  # other scopes

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_Assign(self, node: cst.Assign) -> None:
            nonlocal found
            if positions[node].start.line >= before_line:
                return
            if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) and node.targets[0].target.value == name:
                found = node

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            nonlocal found
            if positions[node].start.line >= before_line or node.value is None:
                return
            if isinstance(node.target, cst.Name) and node.target.value == name:
                found = node

    scope.visit(V())
    return found


def fix_grid(wrapper: MetadataWrapper, d: Diagnostic) -> cst.Module:
    """The TT003 fix: the launch's grid as a lambda over meta."""
    from ..rule import FixError

    names = list(d.fix_data.get("names") or ([d.param] if d.param else []))
    if not names:
        raise FixError("no tiling parameter to read from meta")
    line = d.fix_data.get("line", d.line)
    column = d.fix_data.get("column", d.column)
    finder = _FindLaunch(line, column, d.kernel)
    wrapper.visit(finder)
    call, scope = finder.call, finder.scope
    if call is None and finder.fallback is not None:
        call, scope = finder.fallback
    if call is None:
        raise FixError(f"launch of kernel {d.kernel!r} not found at line {line}")
    module = wrapper.module
    positions = wrapper.resolve(PositionProvider)
    sub = call.func
    assert isinstance(sub, cst.Subscript)
    elements = list(sub.slice)
    single = len(elements) == 1 and isinstance(elements[0].slice, cst.Index) and not isinstance(elements[0].comma, cst.Comma)
    if not single:
        values = []
        for e in elements:
            if not isinstance(e.slice, cst.Index):
                raise FixError("grid with a slice cannot be rewritten")
            values.append(cst.Element(value=e.slice.value))
        grid = cst.Tuple(elements=values)
        lam = _to_lambda(grid, names)
        new_sub = sub.with_changes(slice=[cst.SubscriptElement(slice=cst.Index(value=lam))])
        return module.visit(ReplaceNode(sub, new_sub))
    grid = elements[0].slice.value  # type: ignore[union-attr]
    if isinstance(grid, cst.Name):
        assert scope is not None
        target = _grid_assignment(scope, grid.value, positions[call].start.line, positions)
        if target is None:
            raise FixError(f"assignment of grid variable {grid.value!r} not found in the launch's scope")
        if isinstance(target, cst.FunctionDef):
            return module.visit(ReplaceNode(target, _fix_def(target, names)))
        value = target.value  # Assign / AnnAssign
        new_value = _to_lambda(value, names)
        return module.visit(ReplaceNode(value, new_value))
    return module.visit(ReplaceNode(grid, _to_lambda(grid, names)))


