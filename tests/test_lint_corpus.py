"""The lint on the dev corpus (liger-kernel, torchao, gemlite: real code, read
never imported): every quick fix it offers, and every fix offered on defects
seeded into the corpus's own launches, leaves the kernel's analysis as it was
except for what the finding was about.

Seeded defects (the corpus itself offers few fixable findings):

* TT003: a grid lambda reading ``meta["X"]`` for a tuned ``X`` is made to read
  a caller variable ``X`` instead; the lint must report it, and its fix must
  give back the original analysis.
* TT002: a launch of a kernel with literal configs is made to pass a name the
  configs set; the lint must report it, with a fix only when every config sets
  that same value, and that fix must give back the original analysis.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Iterator

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from corpus import SWEEP_LIBRARIES as LIBRARIES, library_root
from tiletune.analysis import analyze_source
from tiletune.lint import lint_source
from tiletune.lint.fixes import apply_fix
from tiletune.lint.prefilter import might_have_kernels
from tiletune.lint.registry import read_python_source
from tiletune.lint.rules._kernel import autotuner_supplies, literal_configs
from tiletune.lint.runner import iter_python_files

pytestmark = pytest.mark.slow

#: Seeded defects per file (each re-analyses the whole file twice).
SEEDS_PER_FILE = 3
_POSITION_KEYS = {"span", "grid_span", "line", "column", "end_line", "end_column"}


@functools.lru_cache(maxsize=None)
def kernel_files() -> tuple[tuple[str, str, Any], ...]:
    """(path, source, analysis) of every corpus file with a kernel."""
    roots = [library_root(lib) for lib in LIBRARIES]
    if any(r is None for r in roots):
        pytest.skip("dev corpus not fetched (bench/fetch_corpus.sh)")
    out = []
    for root in roots:
        for path in iter_python_files([str(root)]):
            source = read_python_source(path)
            if not might_have_kernels(source):
                continue
            try:
                module = analyze_source(source, path)
            except Exception:  # noqa: BLE001 - the lint reports these as TT000
                continue
            if module.kernels:
                out.append((path, source, module))
    return tuple(out)


@pytest.fixture(scope="module", autouse=True)
def _forget_kernel_files():
    """The corpus's analyses are shared by this module's tests only: not kept through the rest of the session."""
    yield
    kernel_files.cache_clear()


def _strip(value: Any) -> Any:
    """``to_dict`` output without positions (a fix moves the text after it)."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in _POSITION_KEYS}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    if isinstance(value, str):  # "load address at line 1684", "passed at launch (m.py:77)"
        return re.sub(r"(line |\.py:)\d+", r"\1N", value)
    return value


def _launch_view(launch: dict, code: str) -> dict:
    """What of a launch a fix of ``code`` may change is left out."""
    launch = dict(launch)
    if code == "TT003":  # the grid, and only the grid
        for k in ("grid_kind", "grid_source", "reads_meta", "meta_keys", "grid", "grid_names"):
            launch.pop(k, None)
    return launch


def assert_analysis_kept(before_src: Any, after_src: str, path: str, code: str, kernel: str, param: str) -> None:
    """The analysis of ``after_src`` equals that of ``before_src`` (source text,
    or its analysis) except for the fixed finding's launch (its dropped
    keyword, or its grid)."""
    module = analyze_source(before_src, path) if isinstance(before_src, str) else before_src
    before = {k.name: _strip(k.to_dict()) for k in module.kernels}
    after = {k.name: _strip(k.to_dict()) for k in analyze_source(after_src, path).kernels}
    assert before.keys() == after.keys()
    for name in before:
        b, a = dict(before[name]), dict(after[name])
        bl, al = b.pop("launches"), a.pop("launches")
        changed = {k: (b.get(k), a.get(k)) for k in set(b) | set(a) if b.get(k) != a.get(k)}
        if "params" in changed:
            changed["params"] = [(x, y) for x, y in zip(*changed["params"]) if x != y]
        assert not changed, f"{path}: fixing {code} changed the analysis of kernel {name!r}: {changed}"
        assert len(bl) == len(al)
        for x, y in zip(bl, al):
            if code == "TT002" and name == kernel:
                x = dict(x, fixed={k: v for k, v in x["fixed"].items() if k != param})
                y = dict(y, fixed={k: v for k, v in y["fixed"].items() if k != param})
            assert _launch_view(x, code) == _launch_view(y, code), f"{path}: fixing {code} changed a launch of {name!r}"


def fix_and_check(source: str, path: str, d) -> str:
    """Apply ``d``'s fix, check the analysis is kept and the finding gone; the new source."""
    new = apply_fix(source, d)
    assert_analysis_kept(source, new, path, d.code, d.kernel, d.param)
    again = [(x.code, x.kernel, x.param) for x in lint_source(new, path)]
    assert (d.code, d.kernel, d.param) not in again, f"{path}: {d.code} still reported after its fix"
    return new


def test_every_fix_offered_on_the_corpus_keeps_the_analysis():
    offered = 0
    for path, source, module in kernel_files():
        for d in lint_source(source, path, module=module):
            if d.fixable:
                offered += 1
                fix_and_check(source, path, d)
    print(f"fixes offered on the corpus: {offered}")


# ----- seeded TT003: a grid lambda that stops reading meta ----------------------------


def _seeded_grids() -> Iterator[tuple[str, str, str, str]]:
    """(path, mutated source, kernel, name) for each launch whose grid lambda reads a tuned name from meta."""
    for path, source, module in kernel_files():
        per_file = 0
        for k in module.kernels:
            supplied = autotuner_supplies(module, k)
            if not supplied or per_file == SEEDS_PER_FILE:
                continue
            for launch in k.launches:
                if launch.grid_kind != "lambda":
                    continue
                names = [n for n in launch.meta_keys if n in supplied and n not in launch.fixed]
                m = re.match(r"\s*lambda\s+(\w+)\s*:", launch.grid_source)
                if not names or m is None:
                    continue
                meta, name = m.group(1), names[0]
                grid = re.sub(rf"\b{meta}\[\s*(['\"]){name}\1\s*\]", name, launch.grid_source)
                # The lambda as written at the launch, or the last one before it (assigned to the grid variable).
                launch_at = _offset(source, launch.span.line, launch.span.column)
                at = source.rfind(launch.grid_source, 0, launch_at + len(source.splitlines(keepends=True)[launch.span.line - 1]))
                if at == -1:
                    continue
                per_file += 1
                yield path, source[:at] + grid + source[at + len(launch.grid_source):], k.name, name
                break


def _original(path: str) -> Any:
    return next(module for p, _, module in kernel_files() if p == path)


def _offset(source: str, line: int, column: int) -> int:
    lines = source.splitlines(keepends=True)
    return sum(len(x) for x in lines[: line - 1]) + column


def test_seeded_grid_defects_are_found_and_fixed_back():
    seeded = found = 0
    for path, mutated, kernel, name in _seeded_grids():
        seeded += 1
        hits = [d for d in lint_source(mutated, path, select=["TT003"]) if d.code == "TT003" and d.kernel == kernel and name in (d.fix_data.get("names") or [])]
        if not hits:
            continue
        found += 1
        (d,) = hits[:1]
        assert d.fixable
        fixed = apply_fix(mutated, d)
        assert_analysis_kept(_original(path), fixed, path, "TT003", kernel, name)
    print(f"seeded TT003: {found}/{seeded} found and fixed back")
    assert seeded >= 3, "the corpus should offer grid lambdas to seed"
    assert found == seeded


# ----- seeded TT002: a launch passing a name the configs set -------------------------


class _AddKeyword(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, line: int, column: int, name: str, value: str):
        super().__init__()
        self.where, self.name, self.value = (line, column), name, value

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        pos = self.metadata[PositionProvider][original].start
        if (pos.line, pos.column) != self.where:
            return updated
        arg = cst.Arg(keyword=cst.Name(self.name), value=cst.parse_expression(self.value), equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))
        args = list(updated.args)
        if args and args[-1].comma is cst.MaybeSentinel.DEFAULT:
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return updated.with_changes(args=args + [arg])


def _seeded_conflicts() -> Iterator[tuple[str, str, str, str, bool]]:
    """(path, mutated source, kernel, name, fix expected) per kernel with literal
    configs and a launch; per file, kernels whose configs all agree on the name
    first (those are the fixable seeds)."""
    for path, source, module in kernel_files():
        candidates = []
        for k in module.kernels:
            configs = literal_configs(k)
            if not configs or not k.launches or k.launches[0].star_args:
                continue
            launch = k.launches[0]
            names = sorted({n for c in configs for n in c.kwargs if n in k.param_names and n not in k.heuristics})
            for name in [n for n in names if n not in launch.fixed]:
                values = [c.kwargs.get(name) for c in configs]
                same = all(type(v) is type(values[0]) and v == values[0] for v in values)
                candidates.append((not same, k.name, launch, name, values[0], same))
        seen: set[str] = set()
        taken = 0
        wrapper = None  # the file parsed once for all its seeds (a transformer leaves the tree it visits as it was)
        for _, kname, launch, name, value, same in sorted(candidates, key=lambda c: (c[0], c[1], c[3])):
            if kname in seen or taken == SEEDS_PER_FILE:
                continue
            if wrapper is None:
                wrapper = MetadataWrapper(cst.parse_module(source))
            mutated = wrapper.visit(_AddKeyword(launch.span.line, launch.span.column, name, repr(value))).code
            if mutated != source:
                seen.add(kname)
                taken += 1
                yield path, mutated, kname, name, same


def test_seeded_launch_conflicts_are_found_and_fixed_only_when_safe():
    seeded = found = fixable = 0
    for path, mutated, kernel, name, same in _seeded_conflicts():
        seeded += 1
        hits = [d for d in lint_source(mutated, path, select=["TT002"]) if d.code == "TT002" and d.kernel == kernel and d.param == name]
        if not hits:
            continue
        found += 1
        d = hits[0]
        assert "Conflicting meta-parameters" in d.message
        assert d.fixable == same, (path, kernel, name)
        if d.fixable:
            fixable += 1
            fixed = apply_fix(mutated, d)
            assert_analysis_kept(_original(path), fixed, path, "TT002", kernel, name)
    print(f"seeded TT002: {found}/{seeded} found, {fixable} with a fix")
    assert seeded >= 5 and fixable >= 1
    assert found == seeded
