"""The lint reads what its rules read: a kernel's body only when a selected rule needs it
(``Rule.needs_body``), a span's position only when it is read (``source.lazy_spans``); either
way the findings are those of the whole analysis."""

import pickle
import textwrap
from pathlib import Path

import pytest

from tiletune.analysis import analyze_source
from tiletune.analysis.positions import _nodes
from tiletune.analysis.source import SourceInfo, lazy_spans, parse, positions_of
from tiletune.lint.registry import all_rules, body_wanted, lint_source, select_codes
from tiletune.analysis.model import Span

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = sorted((ROOT / "fixtures").glob("*.py"))

EXAMPLES = [
    pytest.param(text, id=f"{r.code}-{kind}{i}")
    for r in all_rules()
    for kind, texts in (("valid", r.valid_examples()), ("invalid", [e.code for e in r.invalid_examples()]))
    for i, text in enumerate(texts)
] + [pytest.param(p.read_text(), id=f"fixture-{p.stem}") for p in FIXTURES]


@pytest.mark.parametrize("source", EXAMPLES)
def test_the_findings_with_lazy_bodies_and_spans_are_those_of_the_whole_analysis(source):
    try:
        whole = analyze_source(source, file="<source>")  # every body, eager spans
    except Exception:  # noqa: BLE001 - TT000's example: the lint reports the rejection itself
        pytest.skip("the analysis rejects this text")
    assert lint_source(source) == lint_source(source, module=whole)
    for rule in all_rules():  # each rule alone: its own needs_body decides which bodies are read
        assert lint_source(source, select=[rule.code]) == lint_source(source, select=[rule.code], module=whole), rule.code


TWO_KERNELS = textwrap.dedent(
    """
    import triton
    import triton.language as tl


    @triton.jit
    def plain(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


    @triton.autotune(configs=[triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 256})], key=["n"])
    @triton.jit
    def tuned(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
    """
)


def test_a_kernel_no_selected_rule_reads_keeps_its_body_unread():
    every = analyze_source(TWO_KERNELS, wants_body=body_wanted(select_codes()))
    plain, tuned = every.kernel("plain"), every.kernel("tuned")
    # nothing of the plain kernel's body is read by any rule (no default, no autotuner) ...
    assert plain.accesses == [] and plain.tiling_params == []
    # ... the autotuned one's accesses are (TT007: Triton benchmarks its two configs in place)
    assert {a.kind for a in tuned.accesses} == {"load", "store"} and [p.name for p in tuned.tiling_params] == ["BLOCK"]
    assert [d.code for d in lint_source(TWO_KERNELS)] == ["TT007"]
    # a lint of the decorators alone reads no body at all
    decorators_only = analyze_source(TWO_KERNELS, wants_body=body_wanted(select_codes(["TT004"])))
    assert all(k.accesses == [] for k in decorators_only.kernels)
    # without wants_body the analysis reads every body, as before
    assert analyze_source(TWO_KERNELS).kernel("plain").accesses


@pytest.mark.parametrize("path", FIXTURES[:4], ids=lambda p: p.stem)
def test_a_lazy_span_equals_hashes_prints_and_pickles_as_the_eager_one(path):
    source = path.read_text()
    module = parse(source, str(path))
    eager = SourceInfo(module, positions_of(module, source), str(path), {})
    lazy = SourceInfo(module, positions_of(module, source), str(path), {})  # its own positions, none computed
    nodes = list(_nodes(module))
    with lazy_spans():
        spans = [lazy.span(n) for n in nodes]
        joined = [lazy.span(a, b) for a, b in zip(nodes, nodes[1:]) if a is not module and b is not module][:500]
    assert not lazy.positions._raw  # nothing computed before a span is read
    for node, span in zip(nodes, spans):
        want = eager.span(node)
        assert span == want and want == span and hash(span) == hash(want) and repr(span) == repr(want)
        back = pickle.loads(pickle.dumps(span))
        assert type(back) is Span and back == want
    for (a, b), span in zip([(a, b) for a, b in zip(nodes, nodes[1:]) if a is not module and b is not module], joined):
        assert span == eager.span(a, b) == Span(eager.span(a).line, eager.span(a).column, eager.span(b).end_line,
                                                 eager.span(b).end_column)
    outside = lazy.span(nodes[-1])  # no lazy_spans(): a plain Span, read now
    assert type(outside) is Span
