"""Lint speed: the per-file result cache and streamed output (issue 28).

Real files and real ``tiletune lint`` processes.  The cache is shown to be
read (an entry's stored message comes back without re-analysis), keyed by the
file's content, the options and its package's other files; the text output
reaches a pipe file by file, before the run ends.
"""

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

from tiletune.lint.result_cache import LintCache
from tiletune.lint.runner import lint_paths

ROOT = Path(__file__).resolve().parent.parent

KERNEL = textwrap.dedent("""
    import triton
    import triton.language as tl


    @triton.autotune(configs=[triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 256})], key=["n"])
    @triton.jit
    def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
""")


def _package(tmp_path: Path) -> Path:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "kernels.py").write_text(KERNEL)
    (pkg / "ops.py").write_text("from .kernels import scale_kernel\n")
    return pkg


def _lint(*args, cache_dir: Path, cwd: Path = ROOT):
    env = dict(os.environ, PYTHONPATH=str(ROOT), TILETUNE_LINT_CACHE_DIR=str(cache_dir))
    env.pop("TILETUNE_LINT_CACHE", None)
    return subprocess.run([sys.executable, "-m", "tiletune.lint", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=300)


def test_a_second_run_reads_results_back_and_a_change_invalidates_them(tmp_path):
    pkg = _package(tmp_path)
    cache = tmp_path / "lint-cache"
    first = _lint(str(pkg), cache_dir=cache)
    assert first.returncode == 1 and "TT007" in first.stdout, first.stderr
    entries = sorted(cache.glob("*/*.json"))
    assert len(entries) == 3  # one per file, clean files included
    # mark the stored finding: a run that reads the cache prints the mark, one that re-analyses does not
    for entry in entries:
        entry.write_text(entry.read_text().replace("an in-place update", "MARKED"))
    second = _lint(str(pkg), cache_dir=cache)
    assert "MARKED" in second.stdout and second.stdout.replace("MARKED", "an in-place update") == first.stdout
    assert "MARKED" not in _lint(str(pkg), "--no-cache", cache_dir=cache).stdout
    assert "MARKED" not in _lint(str(pkg), "--select", "TT007,TT001", cache_dir=cache).stdout  # other options
    (pkg / "kernels.py").write_text(KERNEL + "\n# edited\n")
    assert "MARKED" not in _lint(str(pkg), cache_dir=cache).stdout  # other content


def test_a_change_to_the_tool_itself_invalidates_the_results(tmp_path):
    """A rule added or edited in a source checkout keeps the version string: the key covers tiletune's own files
    (a copy of the package is the tool here, so one of its rules can be edited)."""
    import shutil

    tool = tmp_path / "tool"
    shutil.copytree(ROOT / "tiletune", tool / "tiletune", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "src").mkdir()
    pkg = _package(tmp_path / "src")  # apart from the tool: the key's package state covers the package's folder
    cache = tmp_path / "lint-cache"

    def lint():
        env = dict(os.environ, PYTHONPATH=str(tool), TILETUNE_LINT_CACHE_DIR=str(cache))
        env.pop("TILETUNE_LINT_CACHE", None)
        return subprocess.run([sys.executable, "-m", "tiletune.lint", str(pkg)], capture_output=True, text=True,
                              env=env, cwd=tmp_path, timeout=300).stdout

    first = lint()
    assert "TT007" in first
    for entry in cache.glob("*/*.json"):
        entry.write_text(entry.read_text().replace("an in-place update", "MARKED"))
    assert "MARKED" in lint()  # read back
    rule = tool / "tiletune" / "lint" / "rules" / "tt007_side_effects_without_restore.py"
    rule.write_text(rule.read_text() + "\n# edited\n")
    assert "MARKED" not in lint()  # the tool changed: analysed again


def test_the_key_covers_the_other_files_of_the_package(tmp_path):
    pkg = _package(tmp_path)
    store = LintCache({"target": "h100"}, directory=tmp_path / "c")
    before = store.key(str(pkg / "kernels.py"))
    (pkg / "ops.py").write_text("from .kernels import scale_kernel\n\n\ndef run(x):\n    pass\n")
    assert LintCache({"target": "h100"}, directory=tmp_path / "c").key(str(pkg / "kernels.py")) != before
    assert LintCache({"target": "a100"}, directory=tmp_path / "c").key(str(pkg / "kernels.py")) != before


def test_cached_and_fresh_results_are_equal(tmp_path, monkeypatch):
    monkeypatch.setenv("TILETUNE_LINT_CACHE_DIR", str(tmp_path / "c"))
    files = [str(ROOT / "fixtures" / name) for name in ("matmul.py", "softmax.py", "histogram.py")]
    fresh = lint_paths(files, jobs=1)
    cold = lint_paths(files, jobs=1, cache=True)
    warm = lint_paths(files, jobs=1, cache=True)
    assert fresh == cold == warm
    assert [d.fix_data for d in warm] == [d.fix_data for d in fresh]


GATED_LINT = textwrap.dedent("""
    import os, sys, time

    import tiletune.lint.runner as runner
    from tiletune.lint.cli import main

    directory, go = sys.argv[1], sys.argv[2]
    real = runner.lint_file


    def gated(path, **kwargs):  # the real lint, held at the later file until the test says go
        if path.endswith("z_blocked.py"):
            while not os.path.exists(go):
                time.sleep(0.01)
        return real(path, **kwargs)


    runner.lint_file = gated
    sys.exit(main(["-j", "1", directory]))
""")


def test_text_output_reaches_a_pipe_file_by_file(tmp_path):
    """The first file's finding is read from the pipe while the lint is still held on a later file, so
    the output streams rather than arriving at the end.

    The lint is held by an event (a "go" file the test creates once it has read the first line), not
    by a FIFO: a FIFO is now refused at once (TT000), so "still running" became a race with the
    process's exit that a loaded machine could lose."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a_kernel.py").write_text(KERNEL)
    (tmp_path / "src" / "z_blocked.py").write_text("x = 1\n")
    go = tmp_path / "go"
    env = dict(os.environ, PYTHONPATH=str(ROOT), TILETUNE_LINT_CACHE="0")
    env.pop("PYTHONUNBUFFERED", None)
    proc = subprocess.Popen([sys.executable, "-c", GATED_LINT, str(tmp_path / "src"), str(go)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    got: list = []
    reader = threading.Thread(target=lambda: got.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout=300)  # the line arrives at once if it is flushed; the bound only ends a broken run
    finished_first = proc.poll() is not None  # cannot be: z_blocked.py waits for `go`
    go.touch()
    reader.join(timeout=300)
    rest, err = proc.communicate(timeout=300)
    first_line = got[0] if got else ""
    assert "a_kernel.py" in first_line and "TT007" in first_line, (first_line, rest, err)
    assert not finished_first
