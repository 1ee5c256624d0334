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


def test_text_output_reaches_a_pipe_file_by_file(tmp_path):
    """The first file's finding is read from the pipe while the lint is still stuck on a later file
    (a FIFO nobody writes to), so the output streams rather than arriving at the end."""
    (tmp_path / "a_kernel.py").write_text(KERNEL)
    fifo = tmp_path / "z_blocked.py"
    os.mkfifo(fifo)
    env = dict(os.environ, PYTHONPATH=str(ROOT), TILETUNE_LINT_CACHE="0")
    env.pop("PYTHONUNBUFFERED", None)
    proc = subprocess.Popen([sys.executable, "-m", "tiletune.lint", "-j", "1", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    first_line: list = []
    reader = threading.Thread(target=lambda: first_line.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout=120)
    read_while_stuck = list(first_line)  # what the pipe had delivered before the FIFO was unblocked
    finished_first = proc.poll() is not None
    # let the lint stuck on the FIFO go on: each open of it for reading waits for a writer
    deadline = 2400
    while proc.poll() is None and deadline:
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:  # no reader waiting right now
            pass
        try:
            proc.wait(timeout=0.1)
        except subprocess.TimeoutExpired:
            deadline -= 1
    proc.communicate(timeout=60)
    assert read_while_stuck and "a_kernel.py" in read_while_stuck[0] and "TT007" in read_while_stuck[0], first_line
    assert not finished_first  # read while the lint was still running
