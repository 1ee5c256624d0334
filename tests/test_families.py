"""Chip families: one object per family behind ``ChipFamily``, and no family branch outside that package."""

import dataclasses
import re
from pathlib import Path

import pytest

from tests.fixture_problems import fixture_problem
from tiletune.errors import SynthesisError
from tiletune.runtime.cache_validate import config_problems
from tiletune.synthesis import check_config, get_target, synthesize
from tiletune.synthesis.families import ASCEND, FAMILIES, NVIDIA, family_of
from tiletune.synthesis.families.nvidia import NvidiaFamily

PACKAGE = Path(__file__).resolve().parent.parent / "tiletune"
FAMILIES_DIR = PACKAGE / "synthesis" / "families"

#: What a family branch looks like: a test of the family's identity instead of a question to its object.
BRANCH = re.compile(r"\bis_(ascend|nvidia)\b|\.family\s*[!=]=|family\s+in\s*[\(\[\{]")


def _branches(root: Path, skip: Path) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        if skip in path.parents:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if BRANCH.search(line.split("#", 1)[0]):
                out.append(f"{path.relative_to(root.parent)}:{n}: {line.strip()}")
    return out


def test_no_family_branch_outside_the_families_package():
    assert _branches(PACKAGE, FAMILIES_DIR) == []


def test_the_branch_grep_finds_a_branch(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "families").mkdir(parents=True)
    (pkg / "a.py").write_text("if target.is_ascend:\n    pass\nok = t.family == 'nvidia'\n")
    (pkg / "families" / "b.py").write_text("if target.is_nvidia:\n    pass\n")
    found = _branches(pkg, pkg / "families")
    assert [f.split(":")[1] for f in found] == ["1", "3"]


def test_family_of_resolves_targets_names_and_refuses_an_unknown_family():
    assert family_of(get_target("h100")) is NVIDIA
    assert family_of("ascend910b3") is ASCEND
    alien = dataclasses.replace(get_target("h100"), name="alienchip", family="alien")
    with pytest.raises(SynthesisError, match=r"alienchip.*'alien'.*tiletune/synthesis/families"):
        family_of(alien)


class _RenamedNvidia(NvidiaFamily):
    """A third family that behaves like NVIDIA under another name (what a new family module adds)."""

    name = "testchip"
    fit_advice = "ask the testchip manual"


@pytest.fixture
def testchip(monkeypatch):
    monkeypatch.setitem(FAMILIES, "testchip", _RenamedNvidia())
    return dataclasses.replace(get_target("h100"), name="testchip-1", family="testchip")


def test_a_new_family_registered_in_one_place_synthesizes_like_the_family_it_copies(testchip):
    spec, shapes, dtypes, fixed = fixture_problem("matmul", {"M": 1024, "N": 1024, "K": 1024})
    ref = synthesize(spec, shapes, dtypes, "h100", fixed=fixed, top_k=5)
    new = synthesize(spec, shapes, dtypes, testchip, fixed=fixed, top_k=5)
    assert [c.to_dict() for c in new.candidates] == [c.to_dict() for c in ref.candidates]
    bad = check_config(spec, {"BLOCK_SIZE_M": 512, "BLOCK_SIZE_N": 512, "BLOCK_SIZE_K": 256}, 4, 4, shapes, dtypes,
                       testchip)
    assert bad and any("shared memory" in why for why in bad)


def test_the_families_differ_in_their_knobs():
    spec, shapes, dtypes, fixed = fixture_problem("matmul", {"M": 1024, "N": 1024, "K": 1024})
    nv = synthesize(spec, shapes, dtypes, "h100", fixed=fixed, top_k=3).candidates
    asc = synthesize(spec, shapes, dtypes, "ascend910b3", fixed=fixed, top_k=3).candidates
    assert all(c.num_warps and "registers_per_thread" in c.footprint and not c.extra for c in nv)
    assert all(c.num_warps is None and c.num_stages is None and "multibuffer" in c.extra for c in asc)
    assert all("registers_per_thread" not in c.footprint for c in asc)


def test_cache_validation_asks_the_family_for_its_config_knobs():
    kw = dict(kernel_name="k", arg_names=["x_ptr", "BLOCK"], spec=None, launch_names=["x_ptr"])
    cfg = {"kwargs": {"BLOCK": 64}, "num_warps": 4, "num_stages": 0, "extra": {}}
    assert any("num_stages=0" in p for p in config_problems(cfg, target="h100", **kw))
    assert not any("num_stages" in p for p in config_problems(cfg, target="ascend910b3", **kw))
    assert any("num_stages=0" in p for p in config_problems(cfg, target=None, **kw))  # stock Triton's rules
