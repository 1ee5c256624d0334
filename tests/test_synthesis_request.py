"""One synthesis request for every caller: the runtime, synth-configs and config_space_from share its guards."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch
import triton

import tiletune
from tests.fixture_problems import fixture_problem
from tiletune.errors import TiletuneWarning
from tiletune.runtime.fits import config_space_from
from tiletune.synthesis import synthesize
from tiletune.synthesis.request import RequestError, synthesis_request

from tests.data import request_kernels as rk

KERNELS = Path(rk.__file__)
DTYPES = {"x_ptr": "fp32", "y_ptr": "fp32", "out_ptr": "fp32"}


def _cli(kernel: str, *extra: str):
    args = [sys.executable, "-m", "tiletune.synthesis.cli", str(KERNELS), "--kernel", kernel, "--shape", "n=4096",
            "--target", "h100", "--dtype", "x_ptr=fp32", "--dtype", f"{'y_ptr' if kernel == 'scale_kernel' else 'out_ptr'}=fp32",
            *extra]
    return subprocess.run(args, capture_output=True, text=True, timeout=300)


@pytest.fixture(autouse=True)
def _own_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(tmp_path / "cache"))


def test_an_untuned_parameter_without_a_value_is_refused_by_every_caller():
    # config_space_from used to search BLOCK (a parameter with a default) as if it were free
    with pytest.raises(RequestError, match=r"'scale_kernel': BLOCK is not tuned \(has a default\).*fixed=\{'BLOCK'"):
        config_space_from(rk.scale_kernel, {"n": 4096}, DTYPES, target="h100")
    proc = _cli("scale_kernel")
    assert proc.returncode == 2 and "BLOCK is not tuned (has a default)" in proc.stderr
    assert "--fixed BLOCK=<value>" in proc.stderr
    # at run time the live kernel's default is the value (the launch binds it): the search leaves BLOCK alone
    tuned = tiletune.autotune(configs=[], key=["n"])(rk.scale_kernel)
    x = torch.randn(4096)
    y = torch.empty_like(x)
    with pytest.warns(TiletuneWarning, match="nothing to tune"):
        tuned[lambda m: (triton.cdiv(4096, 128),)](x, y, 4096)
    torch.testing.assert_close(y, x * 2.0)
    assert all("BLOCK" not in c.kwargs for c in tuned.cache.values())


def test_a_value_for_the_untuned_parameter_lets_each_caller_through():
    space = config_space_from(rk.scale_kernel, {"n": 4096}, DTYPES, target="h100", fixed={"BLOCK": 256})
    assert space and all("BLOCK" not in c for c in space)
    proc = _cli("scale_kernel", "--fixed", "BLOCK=256")
    assert proc.returncode == 0, proc.stderr
    tuned = tiletune.autotune(configs=[], key=["n"])(rk.scale_kernel)
    x = torch.randn(4096)
    y = torch.empty_like(x)
    with pytest.warns(TiletuneWarning, match="passed at launch"):
        tuned[lambda m: (triton.cdiv(4096, 256),)](x, y, 4096, BLOCK=256)
    torch.testing.assert_close(y, x * 2.0)


def test_the_runtime_refuses_through_the_request_in_its_own_words():
    spec = tiletune.analysis.analyze_kernel(rk.scale_kernel)
    with pytest.raises(RequestError, match=r"BLOCK is not tuned \(has a default\).*BLOCK=\.\.\. at launch"):
        synthesis_request(spec, {"n": 4096}, DTYPES, "h100", front="runtime", known={"n": 4096}, meaning="measure")


def test_a_parameter_that_may_carry_meaning_is_refused_offline_and_measured_at_run_time():
    with pytest.raises(RequestError, match=r"BLOCK may carry meaning.*hints=\{'BLOCK'"):
        config_space_from(rk.block_sum_kernel, {"n": 4096}, DTYPES, target="h100")
    proc = _cli("block_sum_kernel")
    assert proc.returncode == 2 and "BLOCK may carry meaning" in proc.stderr
    space = config_space_from(rk.block_sum_kernel, {"n": 4096}, DTYPES, target="h100", hints={"BLOCK": [256]})
    assert space and {c["BLOCK"] for c in space} == {256}
    spec = tiletune.analysis.analyze_kernel(rk.block_sum_kernel)
    req = synthesis_request(spec, {"n": 4096}, DTYPES, "h100", front="runtime", meaning="measure")
    assert "BLOCK" in req.verdict.tuned


def test_all_problems_come_at_once_in_the_callers_words():
    spec = tiletune.analysis.analyze_kernel(rk.scale_kernel)
    with pytest.raises(RequestError) as err:
        synthesis_request(spec, {"n": 4096}, DTYPES, None, front="cli", earlier=["no target: pass --target NAME"])
    assert err.value.problems[0] == "no target: pass --target NAME"
    assert "--fixed BLOCK=<value>" in err.value.problems[1]
    assert str(err.value).startswith("2 problems:")
    with pytest.raises(ValueError, match="front='gui'"):
        synthesis_request(spec, {"n": 4096}, DTYPES, "h100", front="gui")


def test_the_request_runs_what_synthesize_would_for_a_complete_kernel():
    spec, shapes, dtypes, fixed = fixture_problem("matmul", {"M": 1024, "N": 1024, "K": 1024})
    req = synthesis_request(spec, shapes, dtypes, "h100", fixed=fixed, top_k=5)
    assert req.prune == []
    ref = synthesize(spec, shapes, dtypes, "h100", fixed=req.fixed, top_k=5)
    assert [c.to_dict() for c in req.run().candidates] == [c.to_dict() for c in ref.candidates]


def test_no_caller_in_the_package_asks_synthesize_directly():
    import ast

    root = Path(tiletune.__file__).resolve().parent
    allowed = {root / "synthesis" / "request.py", root / "synthesis" / "pipeline.py"}
    direct = []
    for path in sorted(root.rglob("*.py")):
        if path in allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
                if name == "synthesize":
                    direct.append(f"{path.relative_to(root)}:{node.lineno}")
    assert direct == []  # each goes through synthesis_request (the guards live there)
