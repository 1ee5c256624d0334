"""``tiletune lint`` front end (``python -m tiletune.lint``): formats, exit
status, directory walking, select/ignore, --fix."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tiletune.lint import all_rules
from tiletune.lint.cli import add_lint_parser, add_lsp_parser, main, run_lint

ROOT = Path(__file__).resolve().parent.parent

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


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "bad.py").write_text(BAD)
    (tmp_path / "pkg" / "clean.py").write_text((ROOT / "fixtures" / "vector_add.py").read_text())
    (tmp_path / "pkg" / "notes.txt").write_text("@triton.jit\n")
    (tmp_path / "pkg" / ".hidden").mkdir()
    (tmp_path / "pkg" / ".hidden" / "bad.py").write_text(BAD)
    return tmp_path


def lint(capsys, *argv):
    rc = main(["lint", *map(str, argv)])
    out, err = capsys.readouterr()
    return rc, out, err


def test_text_output_and_exit_1(tree, capsys):
    rc, out, _ = lint(capsys, tree / "pkg", "-j", "1")
    assert rc == 1
    lines = out.splitlines()
    assert lines and all(line.startswith(str(tree / "pkg" / "bad.py") + ":") for line in lines)
    found = {line.split(": ", 1)[1].split()[0] for line in lines}
    assert found == {"TT001", "TT005", "TT006"}
    # column is 1-based: the BLOCK_SIZE parameter starts at 0-based column 51
    tt001 = next(line for line in lines if " TT001 " in line)
    assert tt001.split(":")[1:3] == ["7", str(BAD.splitlines()[6].index("BLOCK_SIZE") + 1)]
    assert "'add_kernel'" in tt001 and "'BLOCK_SIZE'" in tt001


def test_clean_exit_0(capsys):
    rc, out, err = lint(capsys, ROOT / "fixtures")
    assert (rc, out) == (0, ""), out


def test_select_ignore(tree, capsys):
    rc, out, _ = lint(capsys, tree / "pkg" / "bad.py", "--select", "TT001,TT006")
    assert {line.split()[1] for line in out.splitlines()} == {"TT001", "TT006"}
    rc, out, _ = lint(capsys, tree / "pkg" / "bad.py", "--ignore", "TT00")
    assert (rc, out) == (0, "")
    rc, out, _ = lint(capsys, tree / "pkg" / "bad.py", "--select", "TT005", "--select", "TT006")
    assert {line.split()[1] for line in out.splitlines()} == {"TT005", "TT006"}


@pytest.mark.parametrize(
    "argv",
    [["--select", "XX9"], ["--ignore", "TT999"], ["--format", "xml"], [], ["--target", "no-such-chip"]],
    ids=["bad-select", "bad-ignore", "bad-format", "no-path", "bad-target"],
)
def test_usage_errors_exit_2(tree, capsys, argv):
    paths = [] if argv == [] else [tree / "pkg"]
    if argv[:1] == ["--target"]:
        pytest.importorskip("tiletune.synthesis").get_target  # validated only when synthesis is there
    with pytest.raises(SystemExit) as exc:
        raise SystemExit(main(["lint", *map(str, paths), *argv]))
    assert exc.value.code == 2


def test_missing_path_exit_2(tmp_path, capsys):
    rc, out, err = lint(capsys, tmp_path / "nope.py")
    assert rc == 2 and "no such file" in err


def test_json(tree, capsys):
    rc, out, _ = lint(capsys, tree / "pkg", "--format", "json")
    data = json.loads(out)
    assert rc == 1 and isinstance(data, list)
    d = next(x for x in data if x["code"] == "TT001")
    assert d["kernel"] == "add_kernel" and d["param"] == "BLOCK_SIZE" and d["line"] == 7
    assert d["column"] == BAD.splitlines()[6].index("BLOCK_SIZE") + 1
    assert d["fix"] is None  # dropping a default changes what the kernel runs with


def test_sarif(tree, capsys):
    rc, out, _ = lint(capsys, tree / "pkg", "--format", "sarif")
    log = json.loads(out)
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.code for r in all_rules()]
    assert run["tool"]["driver"]["name"] == "tiletune"
    assert {r["ruleId"] for r in run["results"]} == {"TT001", "TT005", "TT006"}
    for r in run["results"]:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
        assert r["level"] in ("error", "warning", "note", "none")
        assert r["message"]["text"]
        loc = r["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"].endswith("pkg/bad.py")
        region = loc["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        assert (region["endLine"], region["endColumn"]) >= (region["startLine"], region["startColumn"])


def test_sarif_clean_is_still_a_log(capsys):
    rc, out, _ = lint(capsys, ROOT / "fixtures" / "vector_add.py", "--format", "sarif")
    assert rc == 0 and json.loads(out)["runs"][0]["results"] == []


def test_fix_in_place(tmp_path, capsys):
    src = BAD.replace(
        '@triton.autotune(configs=[], key=["n"])',
        '@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 256}, num_warps=4), '
        'triton.Config({"BLOCK_SIZE": 256}, num_warps=8)], key=["n_elements"])',
    ).replace("BLOCK_SIZE: tl.constexpr = 1024", "BLOCK_SIZE: tl.constexpr")
    src += '\n\ndef add(x, y, out):\n    n = out.numel()\n    add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, n, BLOCK_SIZE=256)\n'
    f = tmp_path / "k.py"
    f.write_text(src)
    rc, out, err = lint(capsys, f, "--fix")
    assert rc == 0, out
    assert "fixed TT002" in err
    assert "(x, y, out, n)\n" in f.read_text()


def test_list_rules(capsys):
    rc = main(["lint", "--list-rules"])
    out = capsys.readouterr().out
    assert rc == 0
    for r in all_rules():
        assert out.count(r.code) == 1


def test_parsers_plug_into_another_cli(tree, capsys):
    parser = argparse.ArgumentParser(prog="tiletune")
    sub = parser.add_subparsers(dest="command")
    add_lint_parser(sub)
    add_lsp_parser(sub)
    args = parser.parse_args(["lint", str(tree / "pkg" / "bad.py"), "--select", "TT006"])
    assert args.func is run_lint
    assert args.func(args) == 1
    assert " TT006 " in capsys.readouterr().out
    lsp_args = parser.parse_args(["lsp", "--target", "a100"])
    assert lsp_args.target == "a100" and callable(lsp_args.func)


def test_module_entry_point_subprocess(tree):
    r = subprocess.run(
        [sys.executable, "-m", "tiletune.lint", "lint", str(tree / "pkg"), "--select", "TT005"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )
    assert r.returncode == 1, r.stderr
    assert r.stdout.count(" TT005 ") == 1
    r = subprocess.run([sys.executable, "-m", "tiletune.lint", "lint", "--select", "nope", "x.py"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 2


def test_parallel_matches_serial(tree, capsys):
    for i in range(20):
        (tree / "pkg" / f"bad{i}.py").write_text(BAD)
    _, serial, _ = lint(capsys, tree / "pkg", "-j", "1")
    _, parallel, _ = lint(capsys, tree / "pkg", "-j", "2")
    assert serial == parallel and serial.count(" TT001 ") == 21


def test_target_changes_tt009(tmp_path, capsys):
    pytest.importorskip("tiletune.synthesis")
    src = next(r for r in all_rules() if r.code == "TT009").good.replace("num_stages=3", "num_stages=7")
    f = tmp_path / "mm.py"
    f.write_text(src)
    # 128x64 + 64x128 fp16 tiles: 32 KiB per stage; 7 stages: 7 buffers on h100 (wgmma: 224 KiB of 227 KiB fit),
    # 6 on a100 (mma.sync stages num_stages - 1: 192 KiB of 163 KiB do not; sm_80 compiles: 5 x 24 KiB at 6 stages)
    rc_h100, out_h100, _ = lint(capsys, f, "--select", "TT009", "--target", "h100")
    rc_a100, out_a100, _ = lint(capsys, f, "--select", "TT009", "--target", "a100")
    assert (rc_h100, out_h100) == (0, "")
    assert rc_a100 == 1 and "a100" in out_a100 and " B" in out_a100


class _Terminal(io.StringIO):
    """A text stream that says it is a terminal (rich then draws its progress bar)."""

    def isatty(self) -> bool:
        return True


def test_directory_findings_stream_in_file_order_with_progress_on_a_terminal(tree):
    from tiletune.lint import iter_lint_paths

    for i in range(3):
        (tree / "pkg" / f"bad{i}.py").write_text(BAD)
    order = [path for path, _ in iter_lint_paths([str(tree / "pkg")], jobs=2)]
    assert order == sorted(order) and len(order) == 5  # every file once, clean ones too, in file order
    args = argparse.ArgumentParser()
    add_lint_parser(args.add_subparsers())
    out, err = io.StringIO(), _Terminal()
    rc = run_lint(args.parse_args(["lint", str(tree / "pkg"), "--timing"]), stdout=out, stderr=err)
    assert rc == 1 and out.getvalue().count(" TT001 ") == 4
    assert "tiletune lint" in err.getvalue()  # the progress bar (rich, stderr)
    assert "5 files, " in err.getvalue() and " s\n" in err.getvalue()


def test_no_progress_bar_when_stderr_is_not_a_terminal(tree, capsys):
    rc, out, err = lint(capsys, tree / "pkg")
    assert rc == 1 and err == ""
