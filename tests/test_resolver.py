"""Project-wide resolution: helpers, aliases and constants imported from other
modules are followed statically; gaps are named; launches in other modules count.

Test data: ``tests/data/helper_pkg`` (a package written for these tests).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tiletune.analysis import analyze_file
from tiletune.analysis.tunability import is_meta_lookup, tunability

PKG = Path(__file__).resolve().parent / "data" / "helper_pkg"


def _kernel(path: Path, name: str):
    return analyze_file(path).kernel(name)


def _shapes(spec):
    return {(a.kind, a.pointer): [str(d) for d in a.shape] for a in spec.accesses}


def test_helper_imported_from_another_module_is_followed():
    spec = _kernel(PKG / "kernels" / "matmul.py", "matmul_kernel")
    assert spec.complete, spec.incomplete
    assert _shapes(spec) == {
        ("load", "a_ptr"): ["BLOCK_M", "BLOCK_K"],
        ("load", "b_ptr"): ["BLOCK_K", "BLOCK_N"],
        ("store", "c_ptr"): ["BLOCK_M", "BLOCK_N"],
    }
    (dot,) = spec.dots
    assert (str(dot.m), str(dot.n), str(dot.k)) == ("BLOCK_M", "BLOCK_N", "BLOCK_K")
    # relative `from ..utils import` and module attribute `utils.scale_rows(...)` both followed
    assert set(spec.helpers) == {"helper_pkg/utils.py:swizzle_tile", "helper_pkg/utils.py:scale_rows"}
    assert {p.name: p.role.value for p in spec.tiling_params} == {
        "BLOCK_M": "parallel", "BLOCK_N": "parallel", "BLOCK_K": "reduction"}


def test_absolute_import_constants_and_transitive_renamed_helpers():
    spec = _kernel(PKG / "kernels" / "matmul.py", "rows_kernel")
    assert spec.complete, spec.incomplete
    # ROWS is an integer constexpr global of helper_pkg.common.index
    assert _shapes(spec)[("load", "x_ptr")] == ["4", "BLOCK_N"]
    # doubled() calls scale_rows imported there as _scale: followed transitively
    assert set(spec.helpers) == {
        "helper_pkg/common/index.py:unflatten_program_id",
        "helper_pkg/common/index.py:doubled",
        "helper_pkg/utils.py:scale_rows",
    }


def test_missing_module_and_import_cycle_are_named_gaps():
    lost = _kernel(PKG / "kernels" / "broken.py", "lost_kernel")
    assert not lost.complete
    assert lost.incomplete == ["unresolved helper: vanished_helper: module '..missing_module' not found from broken.py"]
    cycle = _kernel(PKG / "kernels" / "broken.py", "cycle_kernel")
    assert not cycle.complete
    assert len(cycle.incomplete) == 1 and "import cycle" in cycle.incomplete[0]


def test_editing_an_imported_helper_changes_its_hash(tmp_path):
    copy = tmp_path / "helper_pkg"
    shutil.copytree(PKG, copy)
    before = _kernel(copy / "kernels" / "matmul.py", "matmul_kernel").helpers
    utils = copy / "utils.py"
    utils.write_text(utils.read_text().replace("return x * FACTOR", "return x * FACTOR + 0"))
    after = _kernel(copy / "kernels" / "matmul.py", "matmul_kernel").helpers
    assert before.keys() == after.keys()
    assert before["helper_pkg/utils.py:scale_rows"] != after["helper_pkg/utils.py:scale_rows"]
    assert before["helper_pkg/utils.py:swizzle_tile"] == after["helper_pkg/utils.py:swizzle_tile"]


def test_launch_in_another_module_fixes_a_parameter():
    spec = _kernel(PKG / "kernels" / "matmul.py", "matmul_kernel")
    assert [(Path(l.file).name, l.fixed) for l in spec.project_launches] == [("ops.py", {"BLOCK_K": "block_size_k"})]
    t = tunability(spec)
    assert t.tuned == ("BLOCK_M", "BLOCK_N")
    assert t.fixed["BLOCK_K"].startswith("passed at launch (") and "ops.py:12" in t.fixed["BLOCK_K"]


def test_launch_forwarding_a_config_value_does_not_fix_it():
    spec = _kernel(PKG / "kernels" / "matmul.py", "rows_kernel")
    assert [l.fixed for l in spec.project_launches] == [{"BLOCK_N": 'config["BLOCK_N"]'}]
    assert tunability(spec).tuned == ("BLOCK_N",)


@pytest.mark.parametrize(
    "name,text,expected",
    [
        ("BLOCK", 'meta["BLOCK"]', True),
        ("BLOCK", "cfg.kwargs['BLOCK']", True),
        ("BLOCK", 'kwargs.get("BLOCK", 64)', True),
        ("BLOCK", 'meta["OTHER"]', False),
        ("BLOCK", "block", False),
        ("BLOCK", "64", False),
    ],
)
def test_meta_lookup(name, text, expected):
    assert is_meta_lookup(name, text) is expected


# ----- the verdict at the command line ---------------------------------------------------
def _run(*argv: str):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "tiletune.synthesis.cli", *argv], capture_output=True, text=True,
                          timeout=300)


def test_synth_configs_warns_on_an_incomplete_kernel_and_stays_safe():
    proc = _run(str(PKG / "kernels" / "broken.py"), "--kernel", "lost_kernel", "--shape", "n=1000000",
                "--target", "h100", "--top-k", "64", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert "warning: the analysis of kernel 'lost_kernel' is incomplete: unresolved helper: vanished_helper" in proc.stderr
    import json

    configs = json.loads(proc.stdout)["configs"]
    assert configs and all(c["kwargs"]["BLOCK"] >= 16 for c in configs)  # a tl.dot may hide in the helper


def test_synth_configs_asks_for_a_launch_fixed_value_and_never_emits_it():
    args = [str(PKG / "kernels" / "matmul.py"), "--kernel", "matmul_kernel", "--shape", "M=512", "--shape", "N=512",
            "--shape", "K=512", "--target", "h100"]
    proc = _run(*args)
    assert proc.returncode == 2
    assert "kernel 'matmul_kernel': BLOCK_K is not tuned (passed at launch" in proc.stderr
    assert "--fixed BLOCK_K=<value>" in proc.stderr
    proc = _run(*args, "--fixed", "BLOCK_K=64")
    assert proc.returncode == 0, proc.stderr
    assert "BLOCK_M" in proc.stdout and "BLOCK_K" not in proc.stdout


def test_flag_defaults_no_launch_overrides_are_specialised(tmp_path):
    pkg = tmp_path / "flagpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "kernels.py").write_text(
        "import triton\nimport triton.language as tl\n\n\n"
        "@triton.jit\n"
        "def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, USE_FANCY: tl.constexpr = False):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    x = tl.load(x_ptr + offs, mask=offs < n)\n"
        "    if USE_FANCY:\n"
        "        x = fancy_path_not_written_yet(x)\n"
        "    tl.store(y_ptr + offs, x, mask=offs < n)\n"
    )
    ops = pkg / "ops.py"
    ops.write_text("import triton\nfrom .kernels import copy_kernel\n\n\ndef copy(x, y, n):\n"
                   "    copy_kernel[lambda m: (triton.cdiv(n, m['BLOCK']),)](x, y, n, BLOCK=1024)\n")
    spec = _kernel(pkg / "kernels.py", "copy_kernel")
    assert spec.complete, spec.incomplete  # USE_FANCY=False is what every launch runs: the branch is dead
    assert any(n.startswith("specialised on defaults") and "USE_FANCY=False" in n for n in spec.notes)
    ops.write_text(ops.read_text().replace("BLOCK=1024)", "BLOCK=1024, USE_FANCY=True)"))
    spec = _kernel(pkg / "kernels.py", "copy_kernel")
    assert not spec.complete and "fancy_path_not_written_yet" in " ".join(spec.incomplete)
