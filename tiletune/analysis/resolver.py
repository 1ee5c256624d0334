"""Project-wide resolution: ``@triton.jit`` helpers and constexpr globals a
kernel imports from other modules, and launches of a kernel in other modules.

Everything is read statically: an import is resolved to a file from the
importing file's location (relative imports) or from the package roots above
it (absolute imports), and that file is parsed, never imported.  Each file is
parsed once per process while its size and mtime stay the same
(:func:`load_module`).

A name the kernel uses that comes from a module of the project but cannot be
followed (module missing, import cycle, not a jit function there) becomes an
``"unresolved helper: ..."`` reason; names imported from outside the project
(``triton``, ``torch``, ...) are not helpers and are left to the body
analysis.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import ChainMap
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, Optional

import libcst as cst

from ..errors import AnalysisError
from ..files import read_regular_bytes
from .source import ModuleScan, SourceInfo, dotted_name, is_compile_time_def, is_jit_def, iter_nodes, module_constants, parse, positions_of, read_source

__all__ = ["ModuleIndex", "load_module", "Resolution", "resolve_helpers", "package_root", "project_launch_calls",
           "remember_text", "last_index", "forget_text"]

_MAX_DEPTH = 8
#: Import roots that are never project helpers: the body analysis knows them.
_EXTERNAL_ROOTS = frozenset({"triton", "torch", "numpy", "math", "functools", "typing", "os", "sys"})


@dataclass
class ImportRef:
    """What a local name of a module was imported as: ``module`` (absolute
    dotted name, or relative with ``level`` leading dots) and ``name`` inside
    it (None for ``import x`` / ``from . import x`` of a module)."""

    level: int
    module: str
    name: Optional[str]


@dataclass
class ModuleIndex:
    """One parsed file: its jit functions, integer constants and imports."""

    path: str
    info: SourceInfo
    scan: ModuleScan
    jit_defs: dict[str, cst.FunctionDef] = field(default_factory=dict)
    constants: dict[str, int] = field(default_factory=dict)
    imports: dict[str, ImportRef] = field(default_factory=dict)
    star_imports: list[ImportRef] = field(default_factory=list)
    #: The text the module was parsed from.
    source: Optional[str] = field(default=None, repr=False, compare=False)

    #: Per function of this module, what was read of it once: ``(kind, id(func)) -> (func, value)``.
    _memo: dict = field(default_factory=dict, repr=False, compare=False)

    def _remembered(self, kind: str, func: cst.FunctionDef, compute: Any) -> Any:
        hit = self._memo.get((kind, id(func)))
        if hit is None or hit[0] is not func:
            hit = self._memo[(kind, id(func))] = (func, compute(func))
        return hit[1]

    def source_hash(self, func: cst.FunctionDef) -> str:
        """sha256 of a function's source text (decorators included); once per function (a helper is
        hashed for every kernel that reaches it)."""
        return self._remembered("hash", func,
                                lambda f: hashlib.sha256(self.info.module.code_for_node(f).encode()).hexdigest())

    def called_names(self, func: cst.FunctionDef) -> tuple[frozenset[str], frozenset[str]]:
        """(dotted names called, bare names read) in ``func``'s body and parameter defaults; once per
        function (the resolver follows a helper again for every kernel that reaches it)."""
        return self._remembered("calls", func, lambda f: tuple(frozenset(x) for x in _called_names(f)))


_CACHE: dict[str, tuple[tuple[int, int], ModuleIndex]] = {}
#: Parsed modules kept at most (least recently used dropped first).  A parsed module with its position
#: metadata is thousands of objects: unbounded, a process that read a few hundred files (a lint run in one
#: process, the LSP server, the test suite over the corpus: 6 million objects after one corpus test) kept
#: them all, and the interpreter's shutdown collections then walked them for tens of seconds.
MAX_CACHED_MODULES = 64


def _keep(path: str, entry: tuple[tuple[int, int], ModuleIndex]) -> None:
    """Put ``entry`` in the cache as its most recently used, dropping the least recently used beyond the bound."""
    _CACHE.pop(path, None)
    _CACHE[path] = entry
    while len(_CACHE) > MAX_CACHED_MODULES:
        del _CACHE[next(iter(_CACHE))]


def _stamp(path: str) -> Optional[tuple[int, int]]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns)


def cached_index(path: str) -> Optional[ModuleIndex]:
    """The index :func:`load_module` holds for ``path`` while the file is unchanged, else None."""
    key = os.path.abspath(path)
    hit = _CACHE.get(key)
    if hit is None or hit[0] != _stamp(key):
        return None
    _keep(key, hit)
    return hit[1]


def remember(path: str, index: ModuleIndex) -> None:
    """Keep an index the front end built from ``path`` on disk, so the resolver does not parse it again."""
    stamp = _stamp(os.path.abspath(path))
    if stamp is not None:
        _keep(os.path.abspath(path), (stamp, index))


_LAST_BUILT: list = [None]  # the ModuleIndex the front end built last


def remember_text(index: "ModuleIndex") -> None:
    """Keep the index the front end built from a text (a file's, or an editor's unsaved buffer), so a
    rule reading the same text again (:func:`last_index`) does not parse it again."""
    _LAST_BUILT[0] = index


def forget_text() -> None:
    """Drop the index :func:`remember_text` keeps (the lint calls it when a file is done: a syntax tree
    kept alive between files is memory, and work for the cyclic collector)."""
    _LAST_BUILT[0] = None


def last_index(source: str, path: Optional[str]) -> Optional["ModuleIndex"]:
    """The index the front end built last, when it was built from ``source`` at ``path``; else None."""
    index = _LAST_BUILT[0]
    if index is not None and index.path == (path or "<source>") and index.source == source:
        return index
    return None


def load_module(path: str) -> ModuleIndex:
    """Parse ``path`` once per (size, mtime); raises :class:`AnalysisError` when it cannot be read or parsed."""
    path = os.path.abspath(path)
    st = os.stat(path)
    stamp = (st.st_size, st.st_mtime_ns)
    hit = _CACHE.get(path)
    if hit is not None and hit[0] == stamp:
        _keep(path, hit)
        return hit[1]
    index = index_module(read_source(path), path)
    _keep(path, (stamp, index))
    return index


def index_module(source: str, path: Optional[str], module: Optional[cst.Module] = None,
                 positions: Any = None, scan: Optional[ModuleScan] = None) -> ModuleIndex:
    """Index already-read ``source`` (the front end passes its parse to avoid a second one)."""
    if module is None:
        module = parse(source, path)
    if positions is None:
        positions = positions_of(module, source)
    if scan is None:
        scan = ModuleScan(module)
    info = SourceInfo(module, positions, path, scan.imports)
    index = ModuleIndex(path=path or "<source>", info=info, scan=scan, constants=module_constants(module, scan, info),
                        source=source)
    for scope, func in scan.functions:
        if not scope and (is_jit_def(func) or is_compile_time_def(func)):
            index.jit_defs.setdefault(func.name.value, func)
    for name, entries in scan.assigns.get((), {}).items():
        # ``round_fn = round_fn_nvidia`` (often under if/else per platform): the first
        # jit function assigned stands for the name; the variants share a signature.
        for _, value in entries:
            if (isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "getattr"
                    and len(value.args) == 3):
                value = value.args[2].value  # ``f = getattr(libdevice, "lgamma", _lgamma_fallback)``: the fallback
            if isinstance(value, cst.Name) and value.value in index.jit_defs:
                index.jit_defs.setdefault(name, index.jit_defs[value.value])
                break
    _read_imports(module, index)
    return index


def _module_statements(body: Iterable[cst.CSTNode]) -> Iterator[cst.BaseSmallStatement]:
    """Small statements at module level, looking into ``if``/``try`` blocks (guarded imports)."""
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            yield from stmt.body
        elif isinstance(stmt, (cst.If, cst.Try)):
            yield from _module_statements(stmt.body.body)
            orelse = getattr(stmt, "orelse", None)
            if isinstance(stmt, cst.If) and orelse is not None:
                yield from _module_statements(getattr(orelse.body, "body", []) if isinstance(orelse, cst.Else) else [orelse])
            if isinstance(stmt, cst.Try):
                for handler in stmt.handlers:
                    yield from _module_statements(handler.body.body)


def _read_imports(module: cst.Module, index: ModuleIndex) -> None:
    for small in _module_statements(module.body):
        if isinstance(small, cst.Import):
            for alias in small.names:
                full = dotted_name(alias.name) or ""
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    index.imports.setdefault(alias.asname.name.value, ImportRef(0, full, None))
                else:
                    head = full.split(".")[0]
                    index.imports.setdefault(head, ImportRef(0, head, None))
        elif isinstance(small, cst.ImportFrom):
            level = len(small.relative)
            mod = dotted_name(small.module) if small.module is not None else ""
            if isinstance(small.names, cst.ImportStar):
                index.star_imports.append(ImportRef(level, mod or "", None))
                continue
            for alias in small.names:
                name = dotted_name(alias.name) or ""
                local = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else name
                index.imports.setdefault(local, ImportRef(level, mod or "", name))


# ----- module files -------------------------------------------------------------------
def package_root(path: str) -> str:
    """The folder that holds the outermost package containing ``path`` (its
    own folder when it is not in a package)."""
    folder = os.path.dirname(os.path.abspath(path))
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return folder


def _module_file(base: str, parts: list[str]) -> Optional[str]:
    target = os.path.join(base, *parts) if parts else base
    if parts and os.path.isfile(target + ".py"):
        return target + ".py"
    init = os.path.join(target, "__init__.py")
    return init if os.path.isfile(init) else None


def find_module(importer: str, level: int, module: str) -> tuple[Optional[str], bool]:
    """(file, in_project) for ``from <level dots><module> import ...`` written in ``importer``.

    ``in_project`` is True when the import names a module of the importer's
    project (relative, or under one of its roots), so failing to find the
    file is a gap rather than an external library.
    """
    parts = [p for p in module.split(".") if p]
    if level:
        base = os.path.dirname(os.path.abspath(importer))
        for _ in range(level - 1):
            base = os.path.dirname(base)
        return _module_file(base, parts), True
    if not parts or parts[0] in _EXTERNAL_ROOTS:
        return None, False
    for root in (package_root(importer), os.path.dirname(os.path.abspath(importer))):
        found = _module_file(root, parts)
        if found is not None:
            return found, True
    root = package_root(importer)
    top = os.path.basename(os.path.dirname(importer)) if root == os.path.dirname(os.path.abspath(importer)) else None
    in_project = os.path.isdir(os.path.join(root, parts[0])) or parts[0] == top
    return None, in_project


def _submodule_file(index: ModuleIndex, name: str) -> Optional[str]:
    """``from pkg import mod``: the file of submodule ``name`` next to a package ``__init__``."""
    if os.path.basename(index.path) != "__init__.py":
        return None
    return _module_file(os.path.dirname(index.path), [name])


# ----- helpers ---------------------------------------------------------------------------
@dataclass
class Resolution:
    """What :func:`resolve_helpers` found for one kernel.

    ``helpers`` maps each name as called (``swizzle`` or ``utils.swizzle``)
    to its definition; ``positions`` covers the nodes of every module that
    defines one; ``constants`` are integer globals imported from the
    project; ``hashes`` maps ``"<file>:<name>"`` to the helper's source hash
    (same-module helpers included); ``unresolved`` lists the gaps in words.
    """

    helpers: dict[str, cst.FunctionDef] = field(default_factory=dict)
    positions: Mapping = field(default_factory=dict)
    constants: dict[str, int] = field(default_factory=dict)
    hashes: dict[str, str] = field(default_factory=dict)
    unresolved: list[str] = field(default_factory=list)
    external: dict[str, str] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TritonAlias:
    """A module-level name bound to a Triton function: ``triton_tanh = libdevice.tanh``
    (``target`` is the full dotted name, ``triton.language.extra.libdevice.tanh``)."""

    target: str


def _is_stub(func: cst.FunctionDef) -> bool:
    """A function whose body only returns None (a docstring and ``pass`` aside): a
    placeholder for a platform that lacks the real operation."""
    body = func.body.body if isinstance(func.body, (cst.IndentedBlock, cst.SimpleStatementSuite)) else ()
    for stmt in body:
        smalls = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else [stmt]
        for small in smalls:
            if isinstance(small, cst.Pass) or (isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString)):
                continue
            if isinstance(small, cst.Return) and (small.value is None or (isinstance(small.value, cst.Name)
                                                                          and small.value.value == "None")):
                continue
            return False
    return True


def _triton_alias(index: ModuleIndex, name: str) -> Optional[TritonAlias]:
    """The Triton function a module-level ``name = <dotted name>`` binds (the first such
    assignment: platform variants under ``if``/``else`` share a meaning), else None.

    The value may also choose between Triton functions (``tl.exp if FAST else tldevice.exp``) or
    call a plain module-level function without arguments whose every return does
    (``exp = get_exp()``): the first choice stands for the name, as the variants share a meaning."""
    for _, value in index.scan.assigns.get((), {}).get(name, []):
        targets = _triton_targets(index, value, name)
        if targets:
            return TritonAlias(targets[0])
    return None


def _triton_targets(index: ModuleIndex, value: Optional[cst.BaseExpression], name: str,
                    follow_calls: bool = True) -> list[str]:
    """Full dotted names of the Triton functions ``value`` may be, in source order; empty unless
    every choice it makes is one."""
    if isinstance(value, cst.IfExp):
        body = _triton_targets(index, value.body, name, follow_calls)
        orelse = _triton_targets(index, value.orelse, name, follow_calls)
        return body + orelse if body and orelse else []
    if isinstance(value, cst.Call) and follow_calls and not value.args and isinstance(value.func, cst.Name):
        func = index.scan.defs.get((), {}).get(value.func.value)
        if func is None or is_jit_def(func) or func.decorators:
            return []
        returns = [n for n in iter_nodes(func.body) if isinstance(n, cst.Return)]
        out: list[str] = []
        for ret in returns:
            found = _triton_targets(index, ret.value, name, follow_calls=False)
            if not found:
                return []
            out.extend(found)
        return out
    dotted = dotted_name(value) if isinstance(value, (cst.Attribute, cst.Name)) else None
    if dotted is None or dotted == name:
        return []
    full, _ = index.info.resolve(dotted)
    return [full] if full.split(".")[0] == "triton" and "." in full else []


def _called_names(func: cst.FunctionDef) -> tuple[set[str], set[str]]:
    """(dotted names called, bare names read) in ``func``'s body and parameter defaults."""
    calls: set[str] = set()
    names: set[str] = set()
    roots: list[cst.CSTNode] = [func.body]
    roots.extend(p.default for p in func.params.params + func.params.kwonly_params if p.default is not None)
    for root in roots:
        for node in iter_nodes(root):  # type() is: both are leaf classes, isinstance goes through the ABC machinery
            if type(node) is cst.Call:
                q = dotted_name(node.func)
                if q is not None:
                    calls.add(q)
            elif type(node) is cst.Name:
                names.add(node.value)
    return calls, names


class FilePositions(ChainMap):
    """Positions of the nodes of several modules, the kernel's first; :meth:`file_of` names a node's file
    when it lies in another module than the kernel's (a helper's), else None.

    ``foreign`` gives, per module after the first, the helper definitions the kernel reaches there: a
    node inside one is sent straight to its module's positions, so neither the kernel's module nor the
    other helpers' modules are walked whole to learn that they do not hold it. A node outside them
    goes through the modules in order, as a plain chain would."""

    def __init__(self, maps: list, files: list, foreign: Optional[Mapping[str, list]] = None) -> None:
        super().__init__(*maps)
        self.files = list(files)
        self._foreign = {path: list(defs) for path, defs in (foreign or {}).items()}
        self._owner: Optional[dict[int, tuple[Any, int]]] = None  # id(node) -> (node, index into maps)

    def _module_index(self, node: Any) -> Optional[int]:
        """The index of the module holding ``node`` when it lies in a foreign helper definition."""
        if self._owner is None:
            self._owner = {}
            for i, path in enumerate(self.files[1:], 1):
                for fn in self._foreign.get(path, ()):
                    for n in iter_nodes(fn):
                        self._owner[id(n)] = (n, i)
        hit = self._owner.get(id(node))
        return hit[1] if hit is not None and hit[0] is node else None

    def __getitem__(self, node: Any) -> Any:
        i = self._module_index(node)
        if i is not None:
            return self.maps[i][node]
        return super().__getitem__(node)

    def __contains__(self, node: Any) -> bool:
        return self._module_index(node) is not None or super().__contains__(node)

    def get(self, node: Any, default: Any = None) -> Any:
        """The position of ``node``, else ``default``."""
        try:
            return self[node]
        except KeyError:
            return default

    def file_of(self, node: Any) -> Optional[str]:
        """The path of the module ``node`` belongs to, when not the kernel's own; else None."""
        i = self._module_index(node)
        if i is not None:
            return self.files[i]
        if node in self.maps[0]:
            return None
        for positions, path in zip(self.maps[1:], self.files[1:]):
            if node in positions:
                return path
        return None


class _Walker:
    def __init__(self, home: ModuleIndex):
        self.home = home
        self.out = Resolution()
        self.chain: list[Mapping] = [home.info.positions]
        self.chain_files: list[str] = [home.path]
        self.foreign: dict[str, list[cst.FunctionDef]] = {}  # module path -> the helpers used from it
        self.seen: set[tuple[str, str]] = set()
        self.modules: dict[str, ModuleIndex] = {home.path: home}
        self.visiting: set[tuple[str, str]] = set()

    def module(self, path: str) -> Optional[ModuleIndex]:
        if path not in self.modules:
            try:
                self.modules[path] = load_module(path)
            except (AnalysisError, OSError):
                return None
            self.chain.append(self.modules[path].info.positions)
            self.chain_files.append(path)
        return self.modules[path]

    def lookup(self, index: ModuleIndex, name: str, depth: int = 0) -> tuple[Optional[tuple[ModuleIndex, Any]], Optional[str]]:
        """Find ``name`` as seen from ``index``: ((module, FunctionDef | int | ModuleIndex), None)
        or (None, reason) when it is a project name that cannot be followed; (None, None) when external."""
        if (index.path, name) in self.visiting:
            return None, f"{name}: import cycle through {os.path.basename(index.path)}"
        if depth > _MAX_DEPTH:
            return None, f"{name}: import chain deeper than {_MAX_DEPTH}"
        self.visiting.add((index.path, name))
        try:
            return self._lookup(index, name, depth)
        finally:
            self.visiting.discard((index.path, name))

    def _lookup(self, index: ModuleIndex, name: str, depth: int) -> tuple[Optional[tuple[ModuleIndex, Any]], Optional[str]]:
        if name in index.jit_defs:
            if _is_stub(index.jit_defs[name]):  # ``def gather(...): return None`` for old Tritons
                alias = _triton_alias(index, name)
                if alias is not None:  # ... else ``gather = tl.gather``: the real one
                    return (index, alias), None
            return (index, index.jit_defs[name]), None
        if name in index.constants:
            return (index, index.constants[name]), None
        ref = index.imports.get(name)
        if ref is None:
            alias = _triton_alias(index, name) or self._alias_through_import(index, name, depth)
            if alias is not None:
                return (index, alias), None
        refs = [ref] if ref is not None else []
        if ref is None:
            refs = [r for r in index.star_imports]
        for r in refs:
            path, in_project = find_module(index.path, r.level, r.module)
            if path is None:
                if in_project:
                    where = "." * r.level + r.module
                    return None, f"{name}: module {where!r} not found from {os.path.basename(index.path)}"
                continue
            target = self.module(path)
            if target is None:
                return None, f"{name}: {os.path.basename(path)} cannot be parsed"
            if r.name is None and ref is not None:  # import mod / from . import mod
                return (target, target), None
            inner = r.name if ref is not None else name
            found, why = self.lookup(target, inner, depth + 1)
            if found is not None or why is not None:
                return found, why
            sub = _submodule_file(target, inner) if ref is not None else None
            if sub is not None:
                sub_index = self.module(sub)
                if sub_index is not None:
                    return (sub_index, sub_index), None
            if ref is not None:
                return None, f"{name}: not a @triton.jit function or integer constant in {os.path.basename(path)}"
        return None, None

    def _alias_through_import(self, index: ModuleIndex, name: str, depth: int) -> Optional[TritonAlias]:
        """``_pow = shim.pow`` where ``shim``, imported from the project, is bound to a Triton module
        (``shim = triton.language.extra.libdevice``): Triton's ``libdevice.pow``."""
        for _, value in index.scan.assigns.get((), {}).get(name, []):
            dotted = dotted_name(value) if isinstance(value, cst.Attribute) else None
            head, _, rest = (dotted or "").partition(".")
            if not rest or head not in index.imports:
                continue
            found, _ = self.lookup(index, head, depth + 1)
            if found is not None and isinstance(found[1], TritonAlias):
                return TritonAlias(f"{found[1].target}.{rest}")
        return None

    def follow(self, index: ModuleIndex, func: cst.FunctionDef, depth: int) -> None:
        calls, names = index.called_names(func)
        local_params = {p.name.value for p in func.params.params + func.params.kwonly_params}
        for q in sorted(calls):
            parts = q.split(".")
            if parts[0] in local_params:
                continue
            found, why = self.lookup(index, parts[0])
            if found is None:
                if why is not None:
                    self._gap(why)
                elif parts[0] in index.imports:
                    ref = index.imports[parts[0]]
                    self.out.external.setdefault(parts[0], ref.module if ref.level == 0 else "." * ref.level + ref.module)
                    full, _ = index.info.resolve(q)
                    if ref.level == 0 and full.split(".")[0] == "triton" and full != q:
                        # ``import triton.language.extra.libdevice as tldevice``: the body knows Triton's names
                        self.out.aliases.setdefault(q, full)
                continue
            mod, value = found
            if isinstance(value, ModuleIndex):
                for attr in parts[1:-1]:  # pkg.sub.fn
                    sub = _submodule_file(value, attr)
                    value = self.module(sub) if sub else None
                    if value is None:
                        break
                if value is None or len(parts) < 2:
                    continue
                fn = value.jit_defs.get(parts[-1])
                if fn is None:
                    found2, why2 = self.lookup(value, parts[-1])
                    if found2 is not None and isinstance(found2[1], TritonAlias):
                        self.out.aliases.setdefault(q, found2[1].target)
                        continue
                    fn = found2[1] if found2 is not None and isinstance(found2[1], cst.FunctionDef) else None
                    if fn is None:
                        self._gap(why2 or f"{q}: not a @triton.jit function in {os.path.basename(value.path)}")
                        continue
                    value = found2[0]
                self._add(q, value, fn, depth)
            elif isinstance(value, cst.FunctionDef) and len(parts) == 1:
                self._add(q, mod, value, depth)
            elif isinstance(value, TritonAlias) and len(parts) == 1:
                self.out.aliases.setdefault(q, value.target)
            elif isinstance(value, TritonAlias):  # ``shim = triton.language.extra.libdevice``; ``shim.pow(x, 3)``
                self.out.aliases.setdefault(q, ".".join([value.target] + parts[1:]))
        for n in sorted(names - local_params):
            if n in index.jit_defs or n in self.out.constants:
                continue
            if index is self.home and n in index.constants:
                continue
            ref = index.imports.get(n)
            if ref is None and index is self.home:
                continue
            found, _ = self.lookup(index, n)
            if found is not None and isinstance(found[1], int) and not isinstance(found[1], bool):
                self.out.constants.setdefault(n, found[1])

    def _add(self, called: str, mod: ModuleIndex, fn: cst.FunctionDef, depth: int) -> None:
        key = (mod.path, fn.name.value)
        self.out.helpers.setdefault(called, fn)
        if key in self.seen:
            return
        self.seen.add(key)
        if mod is not self.home:
            self.foreign.setdefault(mod.path, []).append(fn)
        self.out.hashes[f"{_short(mod.path)}:{fn.name.value}"] = mod.source_hash(fn)
        if depth >= _MAX_DEPTH:
            self._gap(f"{fn.name.value}: helper calls nested deeper than {_MAX_DEPTH}")
            return
        self.follow(mod, fn, depth + 1)

    def _gap(self, why: str) -> None:
        text = f"unresolved helper: {why}"
        if text not in self.out.unresolved:
            self.out.unresolved.append(text)


def _short(path: str) -> str:
    """A path relative to its package root (stable across checkouts)."""
    if path == "<source>":
        return path
    root = package_root(path)
    return os.path.relpath(path, root).replace(os.sep, "/")


def resolve_helpers(home: ModuleIndex, func: cst.FunctionDef) -> Resolution:
    """Every jit helper and project constant ``func`` (a kernel of ``home``) reaches."""
    walker = _Walker(home)
    walker.follow(home, func, 0)
    out = walker.out
    out.positions = FilePositions(walker.chain, walker.chain_files, walker.foreign) if len(walker.chain) > 1 else home.info.positions
    for path, index in walker.modules.items():  # a helper reads its own module's constants
        if index is not home:
            for name, value in index.constants.items():
                out.constants.setdefault(name, value)
    return out


# ----- launches in other modules ---------------------------------------------------------
_PROJECT_FILES: dict[str, list[str]] = {}


def _project_files(root: str) -> list[str]:
    files = _PROJECT_FILES.get(root)
    if files is None:
        files = []
        for folder, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
            files.extend(os.path.join(folder, n) for n in names if n.endswith(".py"))
        files.sort()
        _PROJECT_FILES[root] = files
    return files


_NAMES_CACHE: dict[str, tuple[tuple[int, int], frozenset[str]]] = {}


def _text(path: str) -> Optional[str]:
    """A project file's text for the cheap name filter (None when it is not a readable regular file)."""
    try:
        return read_regular_bytes(path).decode("utf-8", errors="replace")
    except OSError:  # missing, a FIFO, a device, too big: not a module to look into
        return None


_SUBSCRIPTED = re.compile(r"\b([A-Za-z_]\w*)\s*\[")


def _subscripted_names(path: str) -> frozenset[str]:
    """Names written ``name[`` in a file (a cheap filter before parsing it), cached per (size, mtime)."""
    try:
        st = os.stat(path)
    except OSError:
        return frozenset()
    stamp = (st.st_size, st.st_mtime_ns)
    hit = _NAMES_CACHE.get(path)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    text = _text(path)
    names = frozenset(_SUBSCRIPTED.findall(text)) if text is not None else frozenset()
    _NAMES_CACHE[path] = (stamp, names)
    return names


def project_launch_calls(kernel_file: str, kernel_name: str) -> Iterator[tuple[ModuleIndex, cst.Call]]:
    """``kernel_name[grid](...)`` calls in the other modules of ``kernel_file``'s
    package whose ``kernel_name`` is imported from ``kernel_file``."""
    if not kernel_file or not os.path.isfile(kernel_file) or package_root(kernel_file) == os.path.dirname(os.path.abspath(kernel_file)):
        return
    me = os.path.abspath(kernel_file)
    for path in _project_files(package_root(kernel_file)):
        if path == me or kernel_name not in _subscripted_names(path):
            continue
        try:
            index = load_module(path)
        except (AnalysisError, OSError):
            continue
        local = _imported_as(index, kernel_name, me, index.imports.items())
        scoped = [(scope, name, ImportRef(level, mod, what)) for scope, name, level, mod, what in index.scan.scoped_imports]
        if not local and not scoped:
            continue
        for scope, call, _ in index.scan.launch_calls:  # every ``x[...](...)`` of the module
            q = dotted_name(call.func.value)
            if q is None:
                continue
            # an import inside the launching function (or a function around it) binds the name there
            inner = [(name, ref) for where, name, ref in scoped if scope[:len(where)] == where]
            if q in local or (inner and q in _imported_as(index, kernel_name, me, inner)):
                yield index, call


def _imported_as(index: ModuleIndex, kernel_name: str, kernel_file: str,
                 imports: Iterable[tuple[str, ImportRef]]) -> set[str]:
    """Local names (``k`` or ``mod.k``) by which ``imports`` (of ``index``) reach ``kernel_name`` of ``kernel_file``."""
    names: set[str] = set()
    for local, ref in imports:
        path, _ = find_module(index.path, ref.level, ref.module)
        if ref.name is None:
            if path is not None and os.path.abspath(path) == kernel_file:
                names.add(f"{local}.{kernel_name}")
            continue
        if ref.name == kernel_name and path is not None and os.path.abspath(path) == kernel_file:
            names.add(local)
        elif path is not None and os.path.basename(path) == "__init__.py":
            sub = _module_file(os.path.dirname(path), [ref.name])
            if sub is not None and os.path.abspath(sub) == kernel_file:
                names.add(f"{local}.{kernel_name}")
    return names
