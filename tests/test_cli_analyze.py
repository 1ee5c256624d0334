"""``tiletune analyze`` run as a subprocess (python -m tiletune.cli)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tiletune.analysis.model import SCHEMA_VERSION
from tiletune.cli import graph_to_dot, main

ROOT = Path(__file__).resolve().parent.parent

KERNELS = textwrap.dedent(
    '''
    import triton
    import triton.language as tl


    @triton.autotune(configs=[], key=["M", "N"])
    @triton.jit
    def scale_kernel(x_ptr, out_ptr, M, N, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        mask = (rm[:, None] < M) & (rn[None, :] < N)
        x = tl.load(x_ptr + rm[:, None] * stride + rn[None, :], mask=mask)
        tl.store(out_ptr + rm[:, None] * stride + rn[None, :], x * 2, mask=mask)


    @triton.jit
    def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


    def scale(x, out):
        M, N = x.shape
        grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))
        scale_kernel[grid](x, out, M, N, x.stride(0))
        copy_kernel[(triton.cdiv(M * N, 1024),)](x, out, M * N, BLOCK=1024)
    '''
).lstrip()


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tiletune.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def kernel_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "kernels.py"
    path.write_text(KERNELS)
    return path


def test_text(kernel_file):
    r = run_cli("analyze", str(kernel_file))
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "kernel scale_kernel" in out and "kernel copy_kernel" in out
    assert "@triton.autotune(...) [autotune]" in out and "@triton.jit [jit]" in out
    assert "configs=[]" in out and "key=['M', 'N']" in out
    assert "BLOCK_M" in out and "constexpr" in out
    assert "grid lambda (cdiv(M, BLOCK_M), cdiv(N, BLOCK_N))" in out
    assert "meta keys: BLOCK_M, BLOCK_N" in out
    assert "fixed keywords: BLOCK=1024" in out


def test_json(kernel_file):
    r = run_cli("analyze", str(kernel_file), "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["schema_version"] == SCHEMA_VERSION
    assert [k["name"] for k in data["kernels"]] == ["scale_kernel", "copy_kernel"]
    scale = data["kernels"][0]
    assert scale["autotune"]["configs_empty"] is True
    assert scale["launches"][0]["grid"] == ["cdiv(M, BLOCK_M)", "cdiv(N, BLOCK_N)"]
    assert scale["launches"][0]["meta_keys"] == ["BLOCK_M", "BLOCK_N"]


def test_json_one_kernel(kernel_file):
    r = run_cli("analyze", str(kernel_file), "--json", "--kernel", "copy_kernel")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert [k["name"] for k in data["kernels"]] == ["copy_kernel"]
    assert data["kernels"][0]["launches"][0]["fixed"] == {"BLOCK": "1024"}


def test_dot(kernel_file):
    r = run_cli("analyze", str(kernel_file), "--dot", "--kernel", "scale_kernel")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith('digraph "scale_kernel" {')
    assert r.stdout.rstrip().endswith("}")


def test_unknown_kernel(kernel_file):
    r = run_cli("analyze", str(kernel_file), "--kernel", "nope")
    assert r.returncode == 2
    assert "nope" in r.stderr and "scale_kernel" in r.stderr and "copy_kernel" in r.stderr
    assert r.stdout == ""


def test_errors_exit_2(tmp_path):
    r = run_cli("analyze", str(tmp_path / "missing.py"))
    assert r.returncode == 2 and "no such file" in r.stderr and "Traceback" not in r.stderr
    bad = tmp_path / "bad.py"
    bad.write_text("import triton\n@triton.jit\ndef k(x:\n    pass\n")
    r = run_cli("analyze", str(bad))
    assert r.returncode == 2 and f"{bad}:3:" in r.stderr and "invalid syntax" in r.stderr
    assert "Traceback" not in r.stderr


def test_fixture_file():
    fixtures = sorted(p for p in (ROOT / "fixtures").glob("*.py") if p.name != "__init__.py")
    if not fixtures:
        pytest.skip("no fixtures yet")
    r = run_cli("analyze", str(fixtures[0].relative_to(ROOT)), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["kernels"]


def test_no_command_prints_help_and_synth_configs_needs_a_file(capsys):
    assert main([]) == 2
    from tiletune.cli import synth_configs_main

    assert synth_configs_main([]) == 2
    assert "file" in capsys.readouterr().err


def test_graph_to_dot_quoting():
    import networkx as nx

    g = nx.DiGraph()
    g.add_node('a"1', kind="load", label='tl.load(p + "x")\\n', shape=["BLOCK_M", "BLOCK_K"])
    g.add_node("b", kind="dot", label="tl.dot(a, b)\nnext", shape=None)
    g.add_edge('a"1', "b", label="lhs")
    text = graph_to_dot(g, 'k"')
    assert text.startswith('digraph "k\\"" {')
    assert '"a\\"1" [label="load: tl.load(p + \\"x\\")\\\\n [BLOCK_M, BLOCK_K]"];' in text
    assert '"b" [label="dot: tl.dot(a, b)\\nnext"];' in text
    assert '"a\\"1" -> "b" [label="lhs"];' in text
