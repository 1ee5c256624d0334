"""The lint's fast paths give the same answers as the slow ones: positions per statement, many processes."""

import textwrap
from pathlib import Path

import libcst as cst
import pytest

from tiletune.analysis.positions import LazyPositions, _nodes, whole_module_positions
from tiletune.lint.registry import all_rules
from tiletune.lint.runner import iter_python_files, lint_paths

ROOT = Path(__file__).resolve().parent.parent

#: Statement shapes whose first line is easy to get wrong: header comments, comments between decorators,
#: several statements on a line, one-line compound statements, continuations, a def after blank lines.
TRICKY = textwrap.dedent('''\
    #!/usr/bin/env python
    # a header comment

    """The module docstring."""
    import triton; import triton.language as tl
    X = (1 +
         2)
    Y = 3 \\
        + 4

    # a comment before the decorators
    @triton.autotune(configs=[], key=["n"])
    # a comment between decorators
    @triton.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
    if X: Z = 1
    class C:

        def f(self):   # trailing comment
            return k[(1,)](None, 4)
    \f
    def g():
    \treturn 1
    # a footer comment
''')


def _same_positions(source: str) -> int:
    module = cst.parse_module(source)
    full = whole_module_positions(module)
    lazy = LazyPositions(module, source)
    nodes = [n for stmt in reversed(module.body) for n in _nodes(stmt)]  # last statement first
    checked = 0
    for node in nodes:
        if node in full:
            assert lazy[node] == full[node], (type(node).__name__, cst.Module([]).code_for_node(node)[:60])
            checked += 1
    assert not lazy._all  # answered statement by statement, never by the whole-module pass
    # the ranges are kept by id(node): every id is one of a node the module holds (no node made by the codegen)
    assert set(lazy._raw) <= {id(n) for n in _nodes(module)}
    return checked


def test_positions_per_statement_equal_the_whole_module_pass_on_tricky_statements():
    assert _same_positions(TRICKY) > 100


@pytest.mark.parametrize("path", sorted((ROOT / "fixtures").glob("*.py")), ids=lambda p: p.stem)
def test_positions_per_statement_equal_the_whole_module_pass_on_the_fixtures(path):
    assert _same_positions(path.read_text(encoding="utf-8")) > 0


def test_a_source_the_statement_mapping_cannot_trust_falls_back_to_the_whole_pass():
    source = "x = 1\r\ny = 2\r\n"
    module = cst.parse_module(source)
    lazy = LazyPositions(module, source)
    assign = module.body[1].body[0]
    assert lazy[assign] == whole_module_positions(module)[assign]
    assert lazy._all


def test_a_node_of_another_module_is_not_there_and_costs_no_whole_pass():
    source = "x = 1\ny = 2\n"
    module, other = cst.parse_module(source), cst.parse_module(source)
    lazy = LazyPositions(module, source)
    with pytest.raises(KeyError):
        lazy[other.body[0]]
    assert other.body[0] not in lazy and not lazy._all  # the resolver asks each module of a chain in turn
    assert lazy[module.body[1]] == whole_module_positions(module)[module.body[1]]
    assert lazy[module] == whole_module_positions(module)[module] and lazy._all


def test_the_lint_says_the_same_in_one_process_and_in_many(tmp_path):
    # every rule's INVALID examples, one file each, and the fixtures: many files, many findings
    for rule in all_rules():
        for i, example in enumerate(rule.invalid_examples()):
            (tmp_path / f"{rule.code.lower()}_{i}.py").write_text(example.code, encoding="utf-8")
    paths = [str(tmp_path), str(ROOT / "fixtures")]
    assert len(list(iter_python_files(paths))) >= 32  # enough for the runner to start workers (8 files each)
    one = [d.format_text() for d in lint_paths(paths, jobs=1)]
    many = [d.format_text() for d in lint_paths(paths, jobs=2)]
    assert len({line.split(": ")[1].split()[0] for line in one}) >= 8  # findings of many rules
    assert one == many


def _cyclic_syntax_nodes_after(fn) -> int:
    """libcst nodes left for the cyclic collector (held by a reference cycle) once ``fn()`` is done."""
    import gc

    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        fn()
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        found = sum(1 for o in gc.garbage if isinstance(o, cst.CSTNode))
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_enabled:
            gc.enable()
    return found


@pytest.mark.parametrize("name", ["matmul.py", "flash_attention.py", "cross_entropy.py"])
def test_a_linted_file_leaves_no_syntax_tree_to_the_cyclic_collector(name):
    # A recursive closure in the launch reader (a reference cycle) kept every file's scan and the tree it
    # reaches alive until a collection: the lint of a 400-file library left 2.4 million objects to it.
    from tiletune.lint.registry import lint_file

    path = str(ROOT / "fixtures" / name)
    assert _cyclic_syntax_nodes_after(lambda: lint_file(path)) == 0


def test_the_lint_restores_the_cyclic_collector_as_it_found_it():
    import gc

    from tiletune.lint.registry import lint_file

    path = str(ROOT / "fixtures" / "matmul.py")
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            lint_file(path)
            assert gc.isenabled() is enabled
    finally:
        gc.enable()


def test_positions_are_the_providers_codeRange_objects():
    # the leaner codegen state keeps tuples; what a caller reads is libcst's own CodeRange, equal to the provider's
    from libcst.metadata import CodeRange

    module = cst.parse_module(TRICKY)
    lazy = LazyPositions(module, TRICKY)
    stmt = module.body[-1]
    assert isinstance(lazy[stmt], CodeRange) and lazy[stmt] == whole_module_positions(module)[stmt]


def test_a_helper_node_from_another_module_is_found_without_walking_the_kernels_module():
    from tiletune.analysis.resolver import index_module, load_module, resolve_helpers
    from tiletune.analysis.source import iter_nodes

    pkg = Path(__file__).parent / "data" / "helper_pkg"
    path = str((pkg / "kernels" / "matmul.py").resolve())
    home = index_module(Path(path).read_text(), path)  # fresh: nothing of its positions computed yet
    kernel = next(s for s in home.info.module.body if isinstance(s, cst.FunctionDef) and s.name.value == "matmul_kernel")
    found = resolve_helpers(home, kernel)
    helper = found.helpers["swizzle_tile"]
    utils = load_module(str((pkg / "utils.py").resolve()))
    whole = whole_module_positions(utils.info.module)
    for node in list(iter_nodes(helper))[::7]:
        assert found.positions[node] == whole[node]
        assert found.positions.file_of(node) == utils.path
    assert home.info.positions._indexed == 0  # the kernel's module was not walked to rule them out
    own = kernel.body.body[0]
    assert found.positions.file_of(own) is None
    assert found.positions[own] == whole_module_positions(home.info.module)[own]


@pytest.mark.parametrize("path", sorted((ROOT / "fixtures").glob("*.py")), ids=lambda p: p.stem)
def test_the_parse_without_node_checks_builds_the_tree_libcsts_own_parse_builds(path):
    from tiletune.analysis.source import parse

    source = path.read_text(encoding="utf-8")
    fast = parse(source, str(path))
    assert fast.deep_equals(cst.parse_module(source)) and fast.code == source


def test_nodes_built_by_hand_are_still_checked_after_a_parse_and_beside_one_in_another_thread():
    import threading

    from tiletune.analysis.source import parse

    parse(TRICKY, "tricky.py")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")  # an empty identifier: libcst's own check
    big = TRICKY * 40
    done = threading.Event()

    def parse_until_done() -> None:
        while not done.is_set():
            parse(big, "big.py")

    worker = threading.Thread(target=parse_until_done)
    worker.start()
    refused = 0
    try:
        for _ in range(2000):  # whenever the other thread is inside its parse, or not
            try:
                cst.Name("")
            except cst.CSTValidationError:
                refused += 1
    finally:
        done.set()
        worker.join()
    assert refused == 2000
    assert cst.CSTNode.__post_init__ is cst.CSTNode.__dict__["__post_init__"]  # restored on the class
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")


HOST = textwrap.dedent('''\
    import triton
    import triton.language as tl


    @triton.jit
    def scale(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


    @triton.jit
    def shift(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


    def run(x, n):
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
        scale[grid](x, n, BLOCK=64)
        if n > 4:
            shift[(triton.cdiv(n, 32),)](
                x, n,
                BLOCK=32)
''')


@pytest.mark.parametrize("source", [TRICKY, HOST], ids=["tricky", "host"])
def test_a_launch_site_is_placed_in_its_host_function_without_walking_the_statements_before_it(source):
    # The launch reader knows the def holding each launch (its scope); the positions used to look for the call
    # in every top-level statement before that def in turn, the kernels included (7% of a lint of fla-core).
    from tiletune.analysis.decorators import find_kernels
    from tiletune.analysis.launches import launches_by_kernel
    from tiletune.analysis.resolver import index_module

    index = index_module(source, "host.py")
    kernels = find_kernels(index.info, index.scan, None)
    sites = [s for found in launches_by_kernel(index.info, index.scan, kernels).values() for s in found]
    assert len(sites) == len(index.scan.launch_calls) >= 1
    assert index.info.positions._indexed == 0  # no statement was walked to find a launch
    whole = whole_module_positions(index.info.module)
    for (_, call, _), site in zip(index.scan.launch_calls, sites):
        r = whole[call]
        assert index.info.positions[call] == r
        assert (site.span.line, site.span.column, site.span.end_line, site.span.end_column) == (
            r.start.line, r.start.column, r.end.line, r.end.column)


def _exact_type_tests(path: Path) -> set[str]:
    """The libcst classes ``path`` tests with ``type(x) is cst.X`` / ``type(x) in (cst.X, ...)``."""
    import ast

    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Call) and getattr(node.left.func, "id", "") == "type":
            for right in node.comparators:
                for el in (right.elts if isinstance(right, ast.Tuple) else [right]):
                    if isinstance(el, ast.Attribute) and getattr(el.value, "id", "") == "cst":
                        found.add(el.attr)
    return found


@pytest.mark.parametrize("module", ["meaning", "cst_text", "static", "resolver"])
def test_exact_type_tests_name_only_libcst_classes_nothing_derives_from(module):
    # ``type(node) is cst.Name`` answers as ``isinstance`` (which goes through the ABC machinery: 7 million
    # checks in a lint of fla-core) only while no class derives from cst.Name: checked with all of tiletune loaded.
    import tiletune.analysis  # noqa: F401
    import tiletune.lint.rules  # noqa: F401

    names = _exact_type_tests(ROOT / "tiletune" / "analysis" / f"{module}.py")
    assert names
    derived = {n: [c.__name__ for c in getattr(cst, n).__subclasses__()] for n in names}
    assert {n: d for n, d in derived.items() if d} == {}


def test_a_values_copy_equals_dataclasses_replace():
    import dataclasses

    from tiletune.analysis.values import UNKNOWN, Val

    base = Val(kind="value", shape=(4, 8), dtype="fp16", params=frozenset({"n"}), weak=True)
    for changes in ({}, {"shape": (8,)}, {"dtype": "fp32", "pids": frozenset({0})}, {"kind": "none", "shape": None}):
        fast, slow = base.with_(**changes), dataclasses.replace(base, **changes)
        assert type(fast) is Val and fast is not base
        assert dataclasses.asdict(fast) == dataclasses.asdict(slow)
    assert UNKNOWN.with_(dtype="fp32").dtype == "fp32" and UNKNOWN.dtype is None
    with pytest.raises(TypeError, match="no field colour"):
        base.with_(colour="red")
    with pytest.raises(dataclasses.FrozenInstanceError):
        base.with_(dtype="bf16").dtype = "fp8"


def test_a_texts_nesting_is_walked_once_for_both_depth_limits():
    # The front end asks whether a text nests 100 levels deep (run on a deeper stack) and 3000 (refuse it):
    # a text under the first cannot exceed the second, so only the first walks the tree.
    import tiletune.analysis.positions as positions
    from tiletune.deep_stack import MAX_EXPRESSION_DEPTH

    walks: list[int] = []
    real = positions.too_deep
    positions.too_deep = lambda tree, source, limit: walks.append(limit) or real(tree, source, limit)
    try:
        shallow = TRICKY
        deep = "x = " + " + ".join(["1"] * 150) + "\n"  # a left-nested sum: 150 levels
        assert positions.nested_deeper_than(shallow, 100) is None
        assert positions.nested_deeper_than(shallow, MAX_EXPRESSION_DEPTH) is None
        assert walks == [100]  # the second answer needed no walk
        assert positions.nested_deeper_than(deep, 100) is not None  # a new text: walked again
        assert positions.nested_deeper_than(deep, MAX_EXPRESSION_DEPTH) is None
        assert positions.nested_deeper_than(deep, 120)[2] > 120  # deeper than 120 but not than 3000
        assert walks == [100, 100, MAX_EXPRESSION_DEPTH, 120]
    finally:
        positions.too_deep = real
        positions.forget_tree()


def test_the_fast_codegen_hooks_leave_every_other_codegen_as_libcsts_and_are_put_back():
    from libcst._nodes.expression import _BaseParenthesizedNode

    from tiletune.analysis import positions

    own_codegen, own_parenthesize = cst.CSTNode._codegen, _BaseParenthesizedNode._parenthesize
    module = cst.parse_module(TRICKY)
    code, ranges = module.code, dict(whole_module_positions(module))
    with positions._fast_codegen():
        assert cst.CSTNode._codegen is not own_codegen  # installed while positions are computed
        with positions._fast_codegen():  # nested users share it
            pass
        assert cst.CSTNode._codegen is not own_codegen
        # another codegen state meanwhile (module.code, libcst's own position pass) goes to libcst's methods
        assert module.code == code
        assert dict(whole_module_positions(module)) == ranges
    assert cst.CSTNode._codegen is own_codegen and _BaseParenthesizedNode._parenthesize is own_parenthesize
    assert _same_positions(TRICKY) > 100  # and the per-statement pass through them equals libcst's
