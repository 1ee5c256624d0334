"""The flake8 plugin reports the tiletune codes through flake8 itself
(subprocess, entry point ``TT`` from pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tiletune.lint import lint_source
from tiletune.lint.flake8_plugin import TiletunePlugin

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = sorted(p for p in (ROOT / "fixtures").glob("*.py") if not p.name.startswith("_"))

BAD = '''\
import triton
import triton.language as tl


@triton.autotune(configs=[], key=["n"])
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr = 1024):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
'''


def _entry_point_installed() -> bool:
    from importlib.metadata import entry_points

    return any(ep.name == "TT" for ep in entry_points(group="flake8.extension"))


needs_plugin = pytest.mark.skipif(
    not _entry_point_installed(), reason="tiletune not installed (pip install -e . --no-deps registers the TT entry point)"
)


def flake8(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", *args], capture_output=True, text=True, cwd=ROOT, timeout=300
    )


def test_plugin_in_process_matches_lint():
    lines = BAD.splitlines(keepends=True)
    got = [(line, col, msg.split()[0]) for line, col, msg, _ in TiletunePlugin(None, "bad.py", lines).run()]
    want = [(d.line, d.column, d.code) for d in lint_source(BAD, "bad.py")]
    assert got == want and {c for _, _, c in got} == {"TT001", "TT005", "TT006"}


def test_plugin_reports_tt000_for_a_file_it_cannot_analyse():
    # flake8 hands a plugin only files Python parses; whatever the tiletune
    # analysis then rejects is reported as TT000 with its line and column.
    lines = ["import triton\n", "\n", "@triton.jit\n", "def k(x_ptr, BLOCK: tl.constexpr)\n", "    pass\n"]
    ((line, col, msg, _),) = list(TiletunePlugin(None, "x.py", lines).run())
    assert msg.startswith("TT000 could not analyse this file") and line == 4 and col > 0


def test_plugin_skips_files_without_kernels():
    assert list(TiletunePlugin(None, "x.py", ["def f(:\n"]).run()) == []


@needs_plugin
def test_flake8_syntax_error_is_not_silent(tmp_path):
    # flake8 runs no plugin on a file Python cannot parse; E999 says where.
    f = tmp_path / "broken.py"
    f.write_text("import triton\n\n@triton.jit\ndef k(x_ptr, BLOCK: tl.constexpr)\n    pass\n")
    r = flake8("--select", "TT,E999", str(f))
    assert r.returncode == 1 and f"{f}:4:" in r.stdout and "E999" in r.stdout, r.stdout + r.stderr


@needs_plugin
def test_flake8_reports_bad_file(tmp_path):
    f = tmp_path / "bad_kernel.py"
    f.write_text(BAD)
    r = flake8("--select", "TT", str(f))
    assert r.returncode == 1, r.stderr
    out = r.stdout.splitlines()
    codes = sorted(line.split(": ", 1)[1].split()[0] for line in out)
    assert codes == ["TT001", "TT005", "TT006"], r.stdout
    col = BAD.splitlines()[6].index("BLOCK_SIZE") + 1
    assert any(line.startswith(f"{f}:7:{col}: TT001 ") for line in out), r.stdout


@needs_plugin
def test_flake8_noqa_and_ignore(tmp_path):
    f = tmp_path / "bad_kernel.py"
    f.write_text(BAD.replace("= 1024):", "= 1024):  # noqa: TT001"))
    r = flake8("--select", "TT", "--extend-ignore", "TT006", str(f))
    codes = sorted(line.split(": ", 1)[1].split()[0] for line in r.stdout.splitlines())
    assert codes == ["TT005"], r.stdout


@needs_plugin
def test_flake8_fixtures_clean():
    r = flake8("--select", "TT", *map(str, FIXTURES))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout == ""


@needs_plugin
def test_flake8_lists_plugin():
    r = flake8("--version")
    assert "tiletune" in r.stdout
