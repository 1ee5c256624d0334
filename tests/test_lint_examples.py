"""Every rule's own VALID/INVALID examples (Fixit-style: the examples in the
rule's module are its tests): VALID sources are clean, INVALID ones trigger
the rule, and an INVALID example's ``fixed`` text is exactly what the rule's
quick fix makes of it (no ``fixed``: the finding must carry no fix)."""

from __future__ import annotations

import ast

import pytest

from tiletune.lint import all_rules, lint_source
from tiletune.lint.fixes import apply_fix


def has_synthesis_check() -> bool:
    try:
        from tiletune.synthesis import check_config, get_target  # noqa: F401
    except ImportError:
        return False
    return True


VALID = [(r.code, i, src) for r in all_rules() for i, src in enumerate(r.valid_examples())]
INVALID = [(r.code, i, ex) for r in all_rules() for i, ex in enumerate(r.invalid_examples())]


def _needs(code: str) -> None:
    if code == "TT009" and not has_synthesis_check():
        pytest.skip("tiletune.synthesis.check_config not available")


@pytest.mark.parametrize("code, index, source", VALID, ids=[f"{c}-valid{i}" for c, i, _ in VALID])
def test_valid_example_is_clean(code, index, source):
    _needs(code)
    found = lint_source(source, "valid.py")
    assert found == [], "\n".join(d.format_text() for d in found)


@pytest.mark.parametrize("code, index, example", INVALID, ids=[f"{c}-invalid{i}" for c, i, _ in INVALID])
def test_invalid_example_triggers_rule_and_fixes_as_documented(code, index, example):
    _needs(code)
    found = [d for d in lint_source(example.code, "invalid.py") if d.code == code]
    assert found, f"{code} INVALID example {index} not reported"
    for d in found:
        if code != "TT000":
            assert d.kernel and d.kernel in d.message, d.message
        if d.param:
            assert d.param in d.message, d.message
    if example.fixed is None:
        assert not any(d.fixable for d in found), [d.fix for d in found]
        return
    (d,) = [d for d in found if d.fixable]
    new = apply_fix(example.code, d)
    ast.parse(new)
    assert new == example.fixed
    assert code not in [x.code for x in lint_source(new, "fixed.py")]


def test_every_rule_has_examples_and_docs():
    for r in all_rules():
        assert r.VALID and r.INVALID, r.code
        assert r.what and r.why and r.summary, r.code
        if r.fixable:
            assert r.FIX and any(i.fixed for i in r.INVALID), f"{r.code}: a fixable rule shows a fix in its examples"
