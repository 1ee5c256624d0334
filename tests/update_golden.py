"""Regenerate the golden analysis files ``fixtures/golden/<fixture>.json``.

Run ``python tests/update_golden.py`` (all fixtures) or ``python
tests/update_golden.py matmul softmax`` after a deliberate change to the
analysis, review the diff, and commit it with the change.
``tests/test_golden.py`` compares the analysis with these files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN_DIR = ROOT / "fixtures" / "golden"

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def fixture_names() -> list[str]:
    """The fixture names, from ``fixtures.NAMES``."""
    from fixtures import NAMES

    return list(NAMES)


def golden(name: str) -> dict:
    """The analysis of ``fixtures/<name>.py`` as stored in its golden file."""
    from tiletune.analysis import analyze_source

    path = ROOT / "fixtures" / f"{name}.py"
    # a repository-relative file name keeps the files identical on every machine
    return analyze_source(path.read_text(), f"fixtures/{name}.py").to_dict()


def dumps(data: dict) -> str:
    """The golden file text: stable key order, two-space indent, final newline."""
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    names = argv or fixture_names()
    GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
    for name in names:
        path = GOLDEN_DIR / f"{name}.json"
        text = dumps(golden(name))
        old = path.read_text() if path.exists() else None
        if old != text:
            path.write_text(text)
            print(f"{'updated' if old else 'created'} {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
