"""The project's import graph has no cycle, and no layer imports the package face.

The graph is drawn from the source (``ast`` over ``tiletune/**``, every
``import``/``from ... import`` wherever it appears, function bodies included,
``if TYPE_CHECKING:`` blocks excluded): one node per module, one edge per
module it imports.  ``from pkg import name`` is an edge to ``pkg.name`` when
that is a module, else to ``pkg``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "tiletune"

#: Edges allowed to close a cycle (none: the project has no import cycle).
ALLOWED_EDGES: set = set()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    """Every Import/ImportFrom node, outside ``if TYPE_CHECKING:`` blocks."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def import_graph() -> nx.DiGraph:
    """Module -> imported module edges between the modules of ``tiletune``."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - node.level + 1]
                    stem = ".".join(base + ([node.module] if node.module else []))
                else:
                    stem = node.module or ""
                targets = [f"{stem}.{alias.name}" if f"{stem}.{alias.name}" in modules else stem
                           for alias in node.names]
            for target in targets:
                while target and target not in modules:  # import a.b.c of a module a.b: the edge goes to a.b
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph.add_edge(name, target)
    return graph


def test_the_graph_sees_the_packages_imports():
    graph = import_graph()
    assert graph.has_edge("tiletune.runtime.autotuner", "tiletune.runtime.candidates")
    assert graph.has_edge("tiletune.cli", "tiletune.lint.cli")  # an import inside a function counts
    assert len(graph) > 80


def test_no_import_cycle():
    graph = import_graph()
    graph.remove_edges_from(ALLOWED_EDGES)
    cycles = [c for c in nx.simple_cycles(graph)]
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c + [c[0]]) for c in cycles[:20])


def test_no_layer_imports_the_package_face():
    graph = import_graph()
    up = sorted(m for m in graph.predecessors("tiletune") if m != "tiletune")
    assert not up, f"modules importing tiletune/__init__.py (use tiletune.version for __version__): {up}"


def _external_imports(path: Path) -> set:
    """Top-level names of the packages a module imports from outside ``tiletune``."""
    names = set()
    for node in _imports(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif not node.level and node.module:
            names.add(node.module.split(".")[0])
    return names - {"tiletune"}


def test_analysis_holds_no_target_knowledge():
    """The analysis reads kernels; chips live in synthesis (families, constraints, Z3): the analysis
    layer imports none of synthesis, runtime or lint, nor the solver."""
    graph = import_graph()
    allowed = {"tiletune.deep_stack", "tiletune.errors", "tiletune.files"}
    outward = sorted({(a, b) for a, b in graph.edges()
                      if a.startswith("tiletune.analysis") and not b.startswith("tiletune.analysis")
                      and b not in allowed})
    assert not outward, f"analysis modules importing other layers: {outward}"
    solver = sorted(str(p.relative_to(ROOT)) for p in (PACKAGE / "analysis").rglob("*.py")
                    if "z3" in _external_imports(p))
    assert not solver, f"analysis modules importing z3 (the Z3 translation belongs in synthesis): {solver}"
