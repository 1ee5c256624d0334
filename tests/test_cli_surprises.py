"""The command line and the first tune without surprises (issue 28).

* on a CPU without ``TRITON_INTERPRET=1`` the error names ``TRITON_INTERPRET=1``
  (whether or not ``target=`` is given);
* synth-configs reports every missing input at once (sizes, target, values of
  untuned parameters), in the CLI's words (``--target``, never ``target=`` or
  "a dict"), answers ``--version``, prints the dtype note once with
  ``--format json`` and a readable ``--explain``;
* ``tiletune analyze`` names the file of a load inlined from a helper in
  another module.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tiletune.cli import main as tiletune_main
from tiletune.synthesis.cli import main as synth_main

ROOT = Path(__file__).resolve().parent.parent
MATMUL = str(ROOT / "fixtures" / "matmul.py")
QUICKSTART = str(ROOT / "examples" / "quickstart.py")


def synth(capsys, *argv):
    code = synth_main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def no_device(monkeypatch):
    """No TILETUNE_TARGET: the target must come from --target (this machine has no GPU)."""
    monkeypatch.delenv("TILETUNE_TARGET", raising=False)
    from tiletune.synthesis import targets

    try:
        targets.detect()
    except Exception:
        return
    pytest.skip("a GPU or NPU is present: the target is detected")


@pytest.mark.parametrize("target", [None, "h100"])
def test_tuning_on_a_cpu_without_the_interpreter_names_triton_interpret(tmp_path, target):
    script = tmp_path / "tune.py"
    script.write_text(textwrap.dedent(f"""
        import tiletune
        import fixtures.vector_add as m
        tuned = tiletune.autotune(configs=[], key=m.KEY, target={target!r})(m.KERNEL)
        m.launch(tuned, m.make_args({{"n_elements": 1000}}))
    """))
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "TILETUNE_TARGET")}
    env.update(PYTHONPATH=str(ROOT), TILETUNE_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=300)
    if done.returncode == 0:
        pytest.skip("a GPU is present: the kernel ran")
    last = done.stderr.strip().splitlines()[-1]
    assert "TuningError" in last and "add_kernel" in last and "TRITON_INTERPRET=1" in last, done.stderr[-2000:]
    assert "pass target=" not in done.stderr and "0 active drivers" not in done.stderr


def test_synth_configs_reports_every_missing_input_at_once(capsys, tmp_path, no_device):
    src = tmp_path / "k.py"
    src.write_text(textwrap.dedent("""
        import triton
        import triton.language as tl

        @triton.jit
        def rows_kernel(x_ptr, y_ptr, m, n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
            rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
            cols = tl.arange(0, BLOCK_N)
            mask = (rows[:, None] < m) & (cols[None, :] < n)
            offs = rows[:, None] * n + cols[None, :]
            tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)

        def run(x, y, m, n, block_n):
            rows_kernel[lambda meta: (triton.cdiv(m, meta["BLOCK_M"]),)](x, y, m, n, BLOCK_N=block_n)
    """))
    code, out, err = synth(capsys, str(src))
    assert code == 2 and out == ""
    assert "3 problems" in err, err
    assert "--shape m=<int> --shape n=<int>" in err  # the sizes
    assert "--target NAME" in err and "TILETUNE_TARGET" in err  # the target
    assert "--fixed BLOCK_N=<value>" in err  # the value of a parameter passed at launch
    assert "target=" not in err.replace("--target", "") and "pass a dict" not in err


def test_synth_configs_unknown_target_speaks_of_the_flag(capsys):
    code, _, err = synth(capsys, MATMUL, "--shape", "M=512,N=512,K=512", "--target", "tpu")
    assert code == 2
    assert "--target tpu: unknown target" in err and "h100" in err
    assert "pass a dict" not in err and "pass target=" not in err


def test_version_flags(capsys):
    assert synth_main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("synth-configs ")
    with pytest.raises(SystemExit) as exc:
        tiletune_main(["--version"])
    assert exc.value.code == 0
    from tiletune.version import installed_version

    assert installed_version() in capsys.readouterr().out


def test_synth_configs_cli_version_exits_0():
    done = subprocess.run([sys.executable, "-m", "tiletune.cli", "synth-configs", "--version"], capture_output=True,
                          text=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("synth-configs "), done.stderr


def test_json_output_carries_the_dtype_note_once(capsys):
    code, out, err = synth(capsys, QUICKSTART, "--shape", "M=512,N=512,K=512", "--target", "h100", "--format",
                           "json", "--top-k", "1")
    assert code == 0
    assert json.loads(out)["assumed_dtypes"] == {"a_ptr": "fp16", "b_ptr": "fp16", "c_ptr": "fp32"}
    assert "assumed dtypes" not in err
    code, out, err = synth(capsys, QUICKSTART, "--shape", "M=512,N=512,K=512", "--target", "h100", "--top-k", "1")
    assert err.count("assumed dtypes") == 1


def test_explain_is_readable(capsys):
    code, out, _ = synth(capsys, MATMUL, "--shape", "M=512,N=4096,K=11008", "--target", "h100", "--explain",
                         "--top-k", "2")
    assert code == 0
    comments = [line for line in out.splitlines() if line.startswith("#")]
    assert comments and max(len(line) for line in comments) <= 300, max(comments, key=len)
    assert "partial points" not in out
    assert "[shared] shared memory: f(BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, num_stages) <= 232448 B" in out
    assert "tiletune analyze FILE" in out
    # the configs still paste
    scope: dict = {}
    exec("import triton\n" + out, scope)
    assert len(scope["configs"]) == 2


def test_analyze_names_the_file_of_a_load_in_a_helper_of_another_module(tmp_path, capsys, monkeypatch):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text(textwrap.dedent("""
        import triton
        import triton.language as tl


        @triton.jit
        def load_block(ptr, offs, n):
            return tl.load(ptr + offs, mask=offs < n)
    """))
    (pkg / "kernels.py").write_text(textwrap.dedent("""
        import triton
        import triton.language as tl

        from .helpers import load_block


        @triton.jit
        def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(y_ptr + offs, load_block(x_ptr, offs, n), mask=offs < n)
    """))
    monkeypatch.chdir(tmp_path)
    assert tiletune_main(["analyze", "pkg/kernels.py"]) == 0
    out = capsys.readouterr().out
    load = next(line for line in out.splitlines() if ": load x_ptr" in line)
    assert load.strip().startswith(f"{os.path.join('pkg', 'helpers.py')}:8: load"), out
    store = next(line for line in out.splitlines() if ": store y_ptr" in line)
    assert store.strip().startswith("line 11: store"), out
    assert tiletune_main(["analyze", "pkg/kernels.py", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    kernel = data["kernels"][0] if "kernels" in data else data
    spans = [a["span"] for a in kernel["accesses"]]
    assert {s.get("file") for s in spans} == {os.path.join("pkg", "helpers.py"), None}


@pytest.mark.parametrize("command", ["lint", "lsp"])
def test_lint_and_lsp_unknown_target_speak_of_the_flag(command):
    args = [command, "--target", "tpu"] + (["fixtures/matmul.py"] if command == "lint" else [])
    done = subprocess.run([sys.executable, "-m", "tiletune.cli", *args], capture_output=True, text=True, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert "--target tpu: unknown target" in done.stderr and "h100" in done.stderr
    assert "pass a dict" not in done.stderr and "pass target=" not in done.stderr
