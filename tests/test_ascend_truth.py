"""The Ascend labelled set (tests/data/ascend_truth.json + liger's launch choices) and explanations.

* every config a public source reports as running on Ascend 910B is accepted;
* every config a public source reports as failing with UB overflow is rejected for UB where the
  certain count (the tiles one operation holds, with the loop-carried ones) is over; the one that is
  over only on the estimated plan is accepted with a "may overflow" explanation;
* a rejected Ascend config is explained with the buffer, the bytes over and the rule's source.
"""

import json

from bench.ascend_truth import TRUTH, check, entries, summary
from tiletune.analysis import analyze_file
from tiletune.synthesis import check_config
from tiletune.synthesis.constraints.ascend import RULES, rule_of
from tiletune.synthesis.explain import explain_config

KERNELS = "tests/data/ascend_truth_kernels.py"


def test_labelled_set_has_both_labels_and_sources():
    data = json.loads(TRUTH.read_text())
    labels = {e["label"] for e in data["entries"]}
    assert labels == {"runs", "fails"}
    assert all(e["source"] for e in data["entries"])


def test_known_to_run_accepted_and_known_failures_rejected():
    cache: dict = {}
    rows = [check(e, cache) for e in entries()]
    total = summary(rows)
    assert total["runs"] >= 3 and total["fails"] >= 2
    assert total["runs_rejected"] == 0, [r for r in rows if r["label"] == "runs" and r["result"] == "rejected"]
    # every known failure is rejected; masked_fill_one_block at 32768 fp32 on the certain count: its store
    # under `~fill & in_range` (a mask from loaded data) reads the fp32 destination back beside the kept
    # values and the mask (Triton-Ascend discrete-mask-access-conversion): 4 + 4 + 1 B per element
    assert total["fails_rejected"] == total["fails"] and total["fails_may_overflow"] == 0
    masked = next(r for r in rows if r["id"] == "ta-guide-masked-fill-one-block")
    assert masked["why"] == [f"UB: needs {9 * 32768} B > 196608 B on ascend910b3"]
    for r in rows:
        if r["label"] == "fails" and r["result"] == "rejected":
            assert all(w.startswith("UB") for w in r["why"]), r


def test_explain_names_buffer_bytes_over_and_rule():
    spec = analyze_file(KERNELS).kernel("masked_fill_one_block")
    dt = {"inp": "fp32", "fill_mask": "int32", "out": "fp32"}
    lines = explain_config(spec, {"BLOCK_SIZE": 65536}, {"N": 1 << 30}, dt, "ascend910b3")
    assert len(lines) == 1
    ub = lines[0]
    need = int(check_config(spec, {"BLOCK_SIZE": 65536}, None, None, {"N": 1 << 30}, dt, "ascend910b3")[0]
               .split("needs ")[1].split(" B")[0])
    assert ub.startswith(f"UB overflows by {need - 196608} B ({need} B > 196608 B on ascend910b3)")
    assert "PlanMemory" in ub  # the rule's source is quoted
    assert explain_config(spec, {"BLOCK_SIZE": 1024}, {"N": 1 << 30}, dt, "ascend910b3") == []
    # over on the estimated plan only (16384: the int32 mask's buffer, held in place by its int1 cast, kept to
    # the last store beside the values, the destination read back and the mask): accepted, explained as a risk
    b = 16384
    assert check_config(spec, {"BLOCK_SIZE": b}, None, None, {"N": 1 << 30}, dt, "ascend910b3") == []
    risk = explain_config(spec, {"BLOCK_SIZE": b}, {"N": 1 << 30}, dt, "ascend910b3")
    assert len(risk) == 1 and risk[0].startswith(
        f"UB may overflow: estimated {13 * b} B > 196608 B, certain {9 * b} B fits")


def test_every_capacity_rule_has_a_source():
    for name in ("ub", "ub:mix", "l1", "l0c"):
        assert rule_of(name) and ".cpp" in rule_of(name) or "compiler.py" in rule_of(name), name
    assert "mmadL1" in RULES["l0"]


def test_a_rejection_says_whether_one_tile_alone_overflows():
    """The bench's cause column: ``one tile`` only when a single UB tile is larger than the UB."""
    from bench.ascend_truth import cause, compiler

    kernels = "tests/data/ascend_ub_patterns.py"
    pow_spec = analyze_file(kernels).kernel("row_pow_helper")
    big = {"config": {"BLOCK_R": 64, "BLOCK_C": 1024}, "shapes": {}, "target": "ascend910b3",
           "dtypes": {"x_ptr": "fp16", "y_ptr": "fp16"}}
    why = check_config(pow_spec, big["config"], None, None, {}, big["dtypes"], "ascend910b3")
    assert why and cause(pow_spec, big, why) == "one tile"
    acc_spec = analyze_file(kernels).kernel("row_max_named_acc")
    peak = {"config": {"BLOCK_M": 16, "BLOCK_N": 2048}, "shapes": {}, "target": "ascend910b3",
            "dtypes": {"inp": "bf16", "out": "bf16"}}
    # 128 KiB + 2 x 64 KiB: fits with one copy, which the compiler's overflow retry falls back to
    assert check_config(acc_spec, peak["config"], None, None, {}, peak["dtypes"], "ascend910b3") == []
    older = {**peak, "multibuffer_retry": False}  # a compiler that does not retry: the copies count
    with compiler(older):
        why = check_config(acc_spec, peak["config"], None, None, {}, peak["dtypes"], "ascend910b3")
    assert why and cause(acc_spec, older, why) == "multibuffer"


def test_vllm_triton_utils_imports_are_read_as_triton():
    """vllm-ascend imports Triton through vllm (``from vllm.triton_utils import tl, tldevice, triton``):
    its kernels are found and read completely, and checked like any other."""
    spec = analyze_file("tests/data/ascend_vllm_import.py").kernel("gated_rows")
    assert spec.incomplete == []
    assert [a.kind for a in spec.accesses] == ["load", "store"]
    assert [str(d) for d in spec.accesses[0].shape] == ["BLOCK_N"]
    dt = {"x_ptr": "bf16", "out_ptr": "bf16"}
    assert check_config(spec, {"BLOCK_N": 4096}, None, None, {"n_cols": 4096}, dt, "ascend910b3") == []
    why = check_config(spec, {"BLOCK_N": 65536}, None, None, {"n_cols": 65536}, dt, "ascend910b3")
    assert why and why[0].startswith("UB: needs")  # one fp32 row of 256 KiB is larger than the UB


def test_a_rejected_shipped_config_is_checked_again_on_another_target():
    """``--also-target``: a row-max accumulator beside its load, 2 x 16 x 1792 fp32 = 229376 B, is over
    910B3's 192 KiB UB but within Ascend 950's 248 KiB; 2 x 16 x 2048 fp32 is over both."""
    from bench.ascend_truth import markdown, recheck

    base = {"file": "tests/data/ascend_ub_patterns.py", "kernel": "row_max_named_acc", "shapes": {},
            "dtypes": {"inp": "fp32", "out": "fp32"}, "label": "shipped", "source": "test", "target": "ascend910b3"}
    todo = [dict(base, id=f"acc-{n}", config={"BLOCK_M": 16, "BLOCK_N": n}) for n in (1792, 2048)]
    cache: dict = {}
    rows = [check(e, cache) for e in todo]
    assert [r["result"] for r in rows] == ["rejected", "rejected"]
    recheck(rows, {e["id"]: e for e in todo}, "ascend910_95", cache)
    assert rows[0]["also"] == {"target": "ascend910_95", "result": "accepted", "why": []}
    assert rows[1]["also"]["result"] == "rejected"
    assert rows[1]["also"]["why"] == ["UB: needs 262144 B > 253952 B on ascend910_95"]
    total = summary(rows)
    assert total["shipped_rejected_accepted_on_also"] == 1
    assert "- the 2 rejected shipped configs on ascend910_95: accepted **1** (acc-1792)" in markdown(rows, total)


def test_explain_names_the_tiles_of_each_ub_rejection():
    """``explain`` for a rejected Ascend config says which buffer overflowed, by how much, under which rule,
    and, for the UB, which tiles: the operation whose tiles add up to the need (a data-masked store's
    read back included), the one tile where one tile is over, the floor's rule where no plan is replayed."""
    spec = analyze_file(KERNELS).kernel("masked_fill_one_block")
    dt = {"inp": "fp32", "fill_mask": "int32", "out": "fp32"}
    line = explain_config(spec, {"BLOCK_SIZE": 32768}, {"N": 1 << 30}, dt, "ascend910b3")[0]
    assert line.startswith(f"UB overflows by {9 * 32768 - 196608} B ({9 * 32768} B > 196608 B on ascend910b3), "
                           "at line 22 `select(mask, value, destination read back)")
    assert "`~fill & in_range` 32768 B + `tl.load(inp + offs, mask=~fill & in_range, other=0)` 131072 B + " \
           "`destination read back for tl.store(out + offs, keep, ~fill & in_range)` 131072 B" in line
    assert "DiscreteMaskStoreConversion" in line and "under the rule: UB holds the peak" in line
    # one tile alone over the UB (a planned kernel): that tile is named
    rect = analyze_file("tests/data/ascend_ub_patterns.py").kernel("copy_from_start")
    f32 = {"x_ptr": "fp32", "out_ptr": "fp32"}
    one = explain_config(rect, {"BLOCK": 65536}, {}, f32, "ascend910b3")
    assert len(one) == 1 and "`tl.load(x_ptr + offs, mask=offs < N, other=0.0)` 262144 B" in one[0]
    # no replayed plan (a helper the analysis does not follow): the largest tile, with the floor's rule
    helper = analyze_file("tests/data/ascend_ub_patterns.py").kernel("row_pow_helper")
    floor = explain_config(helper, {"BLOCK_R": 64, "BLOCK_C": 1024}, {}, {"x_ptr": "fp16", "y_ptr": "fp16"},
                           "ascend910b3")
    assert len(floor) == 1 and "the largest single tile, the plan being unknown" in floor[0]
    assert "no spilling" in floor[0] and floor[0].startswith("UB overflows by 65536 B")
    # the cube path: an fp32 accumulator of 256 x 256 over L0C, with the L0C rule and its source
    dot = analyze_file("tests/data/ascend_ub_patterns.py").kernel("dot_even_or_masked")
    cube = explain_config(dot, {"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 64, "EVEN_K": 1},
                          {"M": 4096, "N": 4096, "K": 4096}, {"a_ptr": "fp16", "b_ptr": "fp16", "c_ptr": "fp16"},
                          "ascend910b3")
    assert cube and cube[0].startswith("L0C overflows by 131072 B (262144 B > 131072 B on ascend910b3) under the rule")
    assert "InferHIVMMemScope.cpp" in cube[0]


def test_explain_says_which_tile_is_counted_with_its_multibuffer_copies(monkeypatch):
    """On a compiler without the overflow retry (TILETUNE_ASCEND_MULTIBUFFER_RETRY=0) sgl-kernel-npu #477's
    state tile is counted with its second copy, and the explanation says so."""
    monkeypatch.setenv("TILETUNE_ASCEND_MULTIBUFFER_RETRY", "0")
    spec = analyze_file(KERNELS).kernel("state_copy_h_blocks")
    dt = {"dst_ptr": "fp32", "src_ptr": "fp32", "src_rows": "int32", "dst_rows": "int32"}
    lines = explain_config(spec, {"H_BLOCK": 2, "BLOCK_V": 128, "BLOCK_K": 128}, {}, dt, "ascend910b3")
    assert len(lines) == 1 and lines[0].startswith("UB overflows by 65536 B (262144 B > 196608 B on ascend910b3)")
    assert "`tl.load(src + offs, mask=mask, other=0) (x 2 multibuffer slots)` 262144 B" in lines[0]


def test_one_tile_over_the_ub_fails_as_triton_ascends_own_ci_expects():
    """Triton-Ascend's CI test ``test_atomic_and_ub_overflow`` expects 'ub overflow' for one load tile of
    500000 elements in int8, int16, int32 and int64: each is rejected as one tile alone over the UB, and the
    same kernel at the test's own passing sizes (a tile of 3 x 2 x 257 elements) is accepted."""
    from bench.ascend_truth import cause

    spec = analyze_file(KERNELS).kernel("atomic_and_one_block")
    for dt, size in (("int8", 1), ("int16", 2), ("int32", 4), ("int64", 8)):
        dtypes = {"in_ptr0": dt, "out_ptr0": dt}
        entry = {"config": {"BLOCK_SIZE": 500000, "BLOCK_NUM": 1}, "shapes": {"n_elements": 1000000},
                 "target": "ascend910b3", "dtypes": dtypes}
        why = check_config(spec, entry["config"], None, None, entry["shapes"], dtypes, "ascend910b3")
        assert why == [f"UB: needs {500000 * size} B > 196608 B on ascend910b3"], dt
        assert cause(spec, entry, why) == "one tile"
        small = {"BLOCK_SIZE": 3 * 2 * 257, "BLOCK_NUM": 1}
        assert check_config(spec, small, None, None, {"n_elements": 2 * 3 * 2 * 257}, dtypes, "ascend910b3") == []


def test_a_dot_accumulator_of_exactly_the_l0c_runs_and_one_over_it_is_rejected():
    """Triton-Ascend's tutorial 13 runs 128 x 256 and 256 x 128 fp32 accumulators (131072 B, the 910B's L0C
    exactly) with BLOCK_K 256 bf16 operands: accepted; 256 x 256 on the same kernel is over the L0C."""
    spec = analyze_file(KERNELS).kernel("matmul_rows_of_tasks")
    dt = {"mat_a": "bf16", "mat_b": "bf16", "mat_c": "bf16"}
    fixed = {"BLOCK_K": 256, "BLOCK_TRESHHOLD": 4, "M": 2048, "N": 16384, "K": 7168, "num_cores": 20}
    for bm, bn in ((128, 256), (256, 128)):
        assert check_config(spec, {**fixed, "BLOCK_M": bm, "BLOCK_N": bn}, None, None, {}, dt, "ascend910b3") == []
    why = check_config(spec, {**fixed, "BLOCK_M": 256, "BLOCK_N": 256}, None, None, {}, dt, "ascend910b3")
    assert why == ["L0C: needs 262144 B > 131072 B on ascend910b3"]
