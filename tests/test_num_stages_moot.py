"""``num_stages`` only matters where a loop holds a ``tl.dot``: Triton pipelines what a loop's dot reaches, so a
kernel without one compiles to the same machine code at every stage count.  Synthesis searches ``num_stages=1``
alone for such kernels (no compile, no timing, no descent move is spent on a copy of one binary); the rule is
checked against the cubins Triton produces for sm_90 (compiled offline, no GPU)."""

from pathlib import Path

import pytest

import fixtures
from tiletune.analysis import analyze_kernel
from tiletune.synthesis import synthesize
from tiletune.synthesis.families.nvidia import stage_domain, stages_matter
from bench_scripts import load_bench

ROOT_DIR = Path(__file__).resolve().parent.parent
stage_identity = load_bench("stage_identity")
register_oracle = stage_identity.register_oracle


def _spec_of(name: str):
    return analyze_kernel(fixtures.load(name).KERNEL)


def test_a_kernel_without_a_dot_in_a_loop_searches_one_stage_count():
    # layer_norm and cross_entropy walk their rows in loops of loads; softmax has no loop at all
    for name in ("layer_norm", "cross_entropy", "sum_axis", "softmax"):
        assert not stages_matter(_spec_of(name)), name
        assert stage_domain(_spec_of(name)) == [1], name
    # a K-loop of tl.dot: the pipeliner's depth is num_stages
    for name in ("matmul", "flash_attention"):
        assert stages_matter(_spec_of(name)), name
        assert stage_domain(_spec_of(name)) == [1, 2, 3, 4, 5, 6], name


def test_synthesis_ranks_each_binary_of_a_dot_free_kernel_once():
    spec = _spec_of("layer_norm")
    res = synthesize(spec, {"M": 1000, "N": 777}, {"x_ptr": "fp32", "y_ptr": "fp32", "w_ptr": "fp32", "b_ptr": "fp32",
                                                   "mean_ptr": "fp32", "rstd_ptr": "fp32"}, "h100", top_k=16)
    assert {c.num_stages for c in res.candidates} == {1}
    tilings = [(c.kwargs["BLOCK_SIZE"], c.num_warps) for c in res.candidates]
    assert len(tilings) == len(set(tilings))  # no two candidates of one binary
    matmul = synthesize(_spec_of("matmul"), {"M": 512, "N": 4096, "K": 11008},
                        {"a_ptr": "fp16", "b_ptr": "fp16", "c_ptr": "fp16"}, "h100", top_k=10**6)
    assert len({c.num_stages for c in matmul.candidates}) > 1


def _digests(pair: dict, configs: list) -> list:
    side = register_oracle.model_side(pair, grid=lambda spec, space: configs, per_verdict=10**6)
    got = register_oracle.compile_all([r["job"] for r in side["rows"]], workers=2)
    assert all(g["ok"] for g in got), [g.get("error") for g in got]
    return [g["binary_digest"] for g in got]


@pytest.mark.slow
def test_the_compiler_gives_one_binary_at_every_stage_count_without_a_dot():
    pair = {"kernel": "layer_norm", "source": "fixture", "shape": {"M": 1000, "N": 777}}
    for block, warps in ((256, 4), (1024, 1)):
        configs = [{"kwargs": {"BLOCK_SIZE": block}, "num_warps": warps, "num_stages": s} for s in (1, 3)]
        one, three = _digests(pair, configs)
        assert one == three, (block, warps)
    # the contrast: a matmul's K-loop is pipelined num_stages - 1 deep
    pair = {"kernel": "matmul", "source": "fixture", "shape": {"M": 512, "N": 4096, "K": 11008}}
    tiles = {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32}
    two, four = _digests(pair, [{"kwargs": tiles, "num_warps": 4, "num_stages": s} for s in (2, 4)])
    assert two != four


def test_the_lint_reports_the_stage_copies_of_a_real_librarys_hand_list():
    """gemlite 0.6.0.post2's scale_activations_*_v3 kernels (no loop at all) list BLOCK_SIZE_M=16 at 1 and 2 stages
    and 64 at 1 and 3: TT011 reports the second of each pair, and nothing on a kernel whose loop holds a dot."""
    from tests.corpus import library_root  # (bench/ has a corpus module of its own on the path)
    from tiletune.lint import lint_source

    root = library_root("gemlite")
    if root is None:
        pytest.skip("the dev corpus is not fetched (bash bench/fetch_corpus.sh)")
    path = root / "quant_utils.py"
    found = [d for d in lint_source(path.read_text(), str(path)) if d.code == "TT011"]
    kernels = {d.kernel for d in found}
    assert {"scale_activations_mxfp8_triton_kernel_v3", "scale_activations_mxfp4_triton_kernel_v3",
            "scale_activations_nvfp4_triton_kernel_v3"} <= kernels
    assert all("num_stages" in d.message and d.kernel in d.message for d in found)
    assert len([d for d in found if d.kernel == "scale_activations_mxfp8_triton_kernel_v3"]) == 2
    # a matmul's stage variants are real: the rule stays quiet on the fixture's pipelined K-loop
    matmul = (ROOT_DIR / "fixtures" / "matmul.py").read_text()
    tiles = '{"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32}'
    listed = matmul.replace("@triton.jit\ndef matmul_kernel",
                            f"@triton.autotune(configs=[triton.Config({tiles}, num_warps=4, num_stages=2), "
                            f"triton.Config({tiles}, num_warps=4, num_stages=4)], key=['M'])\n"
                            "@triton.jit\ndef matmul_kernel")
    assert listed != matmul
    assert [d for d in lint_source(listed, "matmul.py") if d.code == "TT011"] == []


@pytest.mark.slow
def test_the_lints_example_compiles_to_one_binary_at_both_stage_counts(tmp_path):
    from tiletune.lint import all_rules

    rule = next(r for r in all_rules() if r.code == "TT011")
    src = tmp_path / "row_sum.py"
    src.write_text(rule.invalid_examples()[0].code)
    args = {"x_ptr": {"ptr": "fp32"}, "out_ptr": {"ptr": "fp32"}, "n_cols": 1000}
    jobs = [{"file": str(src), "kernel": "row_sum_kernel", "args": args, "constexprs": {"BLOCK_SIZE": 1024},
             "num_warps": 4, "num_stages": s, "arch": 90} for s in (1, 3)]
    one, three = register_oracle.compile_all(jobs, workers=2)
    assert one["ok"] and three["ok"], (one.get("error"), three.get("error"))
    assert one["binary_digest"] == three["binary_digest"]
