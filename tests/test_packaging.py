"""Packaging: installing tiletune (with its test extra) keeps the user's Triton.

The Triton pin the fixtures were checked with lives only in CI's script
(.ci/run), never in a dependency list that `pip install -e ".[test]"` reads.
"""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _requirements():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    project = data["project"]
    yield "dependencies", project["dependencies"]
    for extra, reqs in project.get("optional-dependencies", {}).items():
        yield f"optional-dependencies.{extra}", reqs


def test_no_dependency_list_pins_triton():
    for where, reqs in _requirements():
        for req in reqs:
            name = re.split(r"[<>=!~\[; ]", req, maxsplit=1)[0].strip().lower()
            if name == "triton":
                assert "==" not in req and "<" not in req, (
                    f"pyproject.toml {where} pins {req!r}: a user's newer Triton would be replaced; "
                    "pin Triton in .ci/run only")


def test_ci_installs_torch_first_then_pinned_triton():
    pinned, latest = (ROOT / ".ci" / "run").read_text().split("\ndeactivate\n", 1)

    def installs(text):
        return [ln.strip() for ln in text.splitlines() if ln.strip().startswith("python -m pip install")]

    first = [ln for ln in installs(pinned) if "--upgrade pip" not in ln]
    assert "torch==2.13.0" in first[0], first
    test_install = next(i for i, ln in enumerate(first) if '-e ".[test]"' in ln)
    pin = next(i for i, ln in enumerate(first) if "triton==3.6.0" in ln)
    assert pin > test_install, "the pinned Triton must be installed after tiletune so it wins"
    assert any("--upgrade triton" in ln for ln in installs(latest)), latest
