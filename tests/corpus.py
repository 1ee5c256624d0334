"""Where the dev corpus (real kernel libraries, test data) lives.

``bench/fetch_corpus.sh`` downloads liger-kernel 0.8.5, torchao 0.18.0,
gemlite 0.6.0.post2, fla-core 0.6.0 (package ``fla``) and unsloth 2026.10.9 with
``pip download --no-deps`` and unpacks them under
``.corpus/`` (or ``$TILETUNE_CORPUS``).  They are read by the analyser, never
imported.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parent.parent
LIBRARIES = ("liger_kernel", "torchao", "gemlite", "fla", "unsloth")
#: The libraries the whole-corpus sweeps (every fix the lint offers, every explanation on four targets) walk:
#: fla-core's and unsloth's 580 files would make each sweep several minutes longer, and their analysis,
#: synthesis crashes and tuned-but-fixed counts are checked by tests/test_corpus_quality.py.
SWEEP_LIBRARIES = ("liger_kernel", "torchao", "gemlite")


def corpus_dir() -> Path:
    """The folder the corpus is unpacked into."""
    return Path(os.environ.get("TILETUNE_CORPUS", ROOT / ".corpus"))


def library_root(package: str) -> Optional[Path]:
    """The unpacked package folder of ``package`` (e.g. ``"torchao"``), or None if not fetched."""
    base = corpus_dir()
    if not base.is_dir():
        return None
    for init in sorted(base.glob(f"*/{package}/__init__.py")) + sorted(base.glob(f"*/*/{package}/__init__.py")):
        return init.parent
    return None


def library_files(package: str) -> list[Path]:
    """Every ``.py`` file of the unpacked ``package`` (empty when not fetched)."""
    root = library_root(package)
    if root is None:
        return []
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


class CorpusAnalyses:
    """``analyze_file`` of each corpus file, computed once and handed to every test that reads that file.

    Several slow tests read the same libraries (the explanation sweep, the liger read, the per-library
    quality goals); each used to analyse every file again.  The analysis is a pure function of the files,
    which do not change during a session, so the memo is keyed by the resolved path.  A failed analysis is
    kept as its exception and raised again, as the analyser itself would.  Held by the session fixture
    ``corpus_analyses`` (tests/conftest.py), which empties it when the session ends: a process that keeps
    every parsed module alive is slow to exit.
    """

    def __init__(self) -> None:
        self._done: dict[str, Any] = {}
        self.hits = 0

    def analyse(self, path: "os.PathLike[str] | str") -> Any:
        """The ``ModuleSpec`` of ``path`` (raises what ``analyze_file`` raised for it)."""
        from tiletune.analysis import analyze_file

        key = str(Path(path).resolve())
        if key in self._done:
            self.hits += 1
        else:
            try:
                self._done[key] = analyze_file(path)
            except Exception as exc:  # noqa: BLE001 - kept and raised again to every reader
                self._done[key] = exc.with_traceback(None)  # not the frames of the first reader
        result = self._done[key]
        if isinstance(result, Exception):
            raise result
        return result

    def clear(self) -> None:
        """Drop every analysis kept."""
        self._done.clear()
