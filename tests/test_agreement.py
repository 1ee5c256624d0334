"""The agreement check: with configs=[], candidates that compute different things stop the tune.

Real kernels under the interpreter (tests/data/meaning_kernels.py): a group-scaled matmul, a
routed GEMM whose rows the host padded to BLOCK_M, a per-program partial sum, a scale pointer
stepped once per BLOCK_K.  Each either tunes correctly or stops with an error naming the parameter;
the user's tensors come out as they went in.
"""

import sys
import warnings
from pathlib import Path

import pytest
import torch
import triton
import triton.language as tl

import tiletune
from tiletune.errors import TiletuneWarning, TuningError
from tiletune.runtime.agreement import (Checker, Fingerprint, MeaningError, SAMPLE_ELEMENTS, compare,
                                        differing, probe_indices)

sys.path.insert(0, str(Path(__file__).parent / "data"))
import meaning_kernels as mk  # noqa: E402

M, N, K, G = 64, 64, 512, 128


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(tmp_path / "cache"))


def _scaled_inputs():
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(M, K, generator=gen)
    b = torch.randn(K, N, generator=gen)
    s = torch.rand(M, K // G, generator=gen) + 0.5
    return a, b, s


def _launch_scaled(tuned, a, b, s, c, **kw):
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))  # noqa: E731
    tuned[grid](a, b, c, s, M, N, K, G, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                c.stride(0), c.stride(1), s.stride(0), s.stride(1), **kw)


def _rel(x, ref):
    return float((x - ref).norm() / ref.norm())


def test_group_scaled_matmul_stops_naming_block_k_and_leaves_the_output_untouched():
    a, b, s = _scaled_inputs()
    tuned = tiletune.autotune(configs=[], key=["M", "N", "K"])(mk.group_scaled_matmul_kernel)
    c = torch.full((M, N), 7.0)
    with pytest.raises(MeaningError) as err:
        _launch_scaled(tuned, a, b, s, c)
    msg = str(err.value)
    assert err.value.parameter == "BLOCK_K"
    assert "'group_scaled_matmul_kernel'" in msg and "BLOCK_K changes the output" in msg
    assert "hints=" in msg and "at launch" in msg
    assert bool((c == 7.0).all()), "the user's output must come out of a failed tune untouched"
    assert tuned.cache == {} and tuned._fast == {}  # nothing decided, nothing cached


def test_group_scaled_matmul_tunes_correctly_over_safe_hinted_values():
    a, b, s = _scaled_inputs()
    tuned = tiletune.autotune(configs=[], key=["M", "N", "K"], hints={"BLOCK_K": [32, 64, 128]})(
        mk.group_scaled_matmul_kernel)
    c = torch.empty(M, N)
    _launch_scaled(tuned, a, b, s, c)
    assert tuned.best_config.kwargs["BLOCK_K"] in (32, 64, 128)
    assert _rel(c, mk.reference_group_scaled(a, b, s, G)) < 1e-5


def test_hinted_values_that_disagree_are_reported_as_such():
    a, b, s = _scaled_inputs()
    tuned = tiletune.autotune(configs=[], key=["M", "N", "K"], hints={"BLOCK_K": [128, 256]})(
        mk.group_scaled_matmul_kernel)
    with pytest.raises(MeaningError, match=r"hints\['BLOCK_K'\] lists \(128, 256\) do not compute the same"):
        _launch_scaled(tuned, a, b, s, torch.empty(M, N))


def test_block_k_passed_at_launch_is_not_tuned_and_the_result_is_right():
    a, b, s = _scaled_inputs()
    tuned = tiletune.autotune(configs=[], key=["M", "N", "K"])(mk.group_scaled_matmul_kernel)
    c = torch.empty(M, N)
    _launch_scaled(tuned, a, b, s, c, BLOCK_K=64)
    assert "BLOCK_K" not in tuned.best_config.kwargs
    assert _rel(c, mk.reference_group_scaled(a, b, s, G)) < 1e-5


def test_verify_false_turns_the_check_off():
    a, b, s = _scaled_inputs()
    tuned = tiletune.autotune(configs=[], key=["M", "N", "K"], verify=False)(mk.group_scaled_matmul_kernel)
    _launch_scaled(tuned, a, b, s, torch.empty(M, N))  # no error: the author asked for no check
    assert tuned.search_facts["check"] == "off"


def test_stepped_scale_pointer_stops_naming_block_k():
    a, b, _ = _scaled_inputs()
    s = torch.rand(M, K // 64) + 0.5
    tuned = tiletune.autotune(configs=[], key=["M", "N", "K"])(mk.stepped_scale_matmul_kernel)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))  # noqa: E731
    c = torch.empty(M, N)
    with pytest.raises(MeaningError) as err:
        tuned[grid](a, b, c, s, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                    c.stride(0), c.stride(1), s.stride(0), s.stride(1))
    assert err.value.parameter == "BLOCK_K"


def _routed(block_m):
    gen = torch.Generator().manual_seed(1)
    experts, rows_m = 4, 50
    expert = torch.randint(0, experts, (rows_m,), generator=gen)
    a = torch.randn(rows_m, K, generator=gen)
    w = torch.randn(experts, K, N, generator=gen)
    rows, block_expert, padded = mk.route_rows(expert, experts, block_m)
    ref = torch.stack([a[i] @ w[expert[i]] for i in range(rows_m)])
    return a, w, rows, block_expert, padded, ref, rows_m


def _launch_routed(tuned, a, w, rows, block_expert, padded, rows_m, c, **kw):
    grid = lambda meta: (triton.cdiv(padded, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))  # noqa: E731
    tuned[grid](a, w, c, rows, block_expert, padded, rows_m, N, K, a.stride(0), a.stride(1), w.stride(0),
                w.stride(1), w.stride(2), c.stride(0), c.stride(1), **kw)


def test_routed_gemm_padded_on_the_host_stops_naming_block_m():
    a, w, rows, block_expert, padded, _, rows_m = _routed(16)
    tuned = tiletune.autotune(configs=[], key=["N", "K"])(mk.routed_matmul_kernel)
    c = torch.zeros(rows_m, N)
    with pytest.raises(MeaningError) as err:
        _launch_routed(tuned, a, w, rows, block_expert, padded, rows_m, c)
    assert err.value.parameter == "BLOCK_M"
    assert bool((c == 0).all())


def test_routed_gemm_with_block_m_at_launch_is_right():
    a, w, rows, block_expert, padded, ref, rows_m = _routed(16)
    tuned = tiletune.autotune(configs=[], key=["N", "K"])(mk.routed_matmul_kernel)
    c = torch.zeros(rows_m, N)
    _launch_routed(tuned, a, w, rows, block_expert, padded, rows_m, c, BLOCK_M=16)
    assert _rel(c, ref) < 1e-5


def test_per_program_partial_sums_stop_naming_block():
    x = torch.randn(1000)
    out = torch.zeros(1000)
    tuned = tiletune.autotune(configs=[], key=["n"])(mk.block_partial_sum_kernel)
    with pytest.raises(MeaningError) as err:
        tuned[lambda meta: (triton.cdiv(1000, meta["BLOCK"]),)](x, out, 1000)
    assert err.value.parameter == "BLOCK"


@triton.jit
def _scale_rows(x_ptr, y_ptr, n_rows, n_cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    for start in range(0, n_cols, BLOCK_C):
        cols = start + tl.arange(0, BLOCK_C)
        mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
        x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask)
        tl.store(y_ptr + rows[:, None] * n_cols + cols[None, :], x * 2.0 + 1.0, mask=mask)


def test_a_correct_kernel_tunes_with_the_check_on_and_probes_every_parameter():
    x = torch.randn(100, 300)
    y = torch.empty_like(x)
    tuned = tiletune.autotune(configs=[], key=["n_rows", "n_cols"])(_scale_rows)
    tuned[lambda meta: (triton.cdiv(100, meta["BLOCK_R"]),)](x, y, 100, 300)
    assert torch.equal(y, x * 2.0 + 1.0)
    facts = tuned.search_facts
    assert facts["check"] == "agree"
    measured = [c for c in tuned.configs_timings]
    for name in ("BLOCK_R", "BLOCK_C"):  # both parameters were seen at two values at least
        assert len({c.kwargs[name] for c in measured}) >= 2


@triton.jit
def _racy_when_square(x_ptr, y_ptr, n, BLOCK_A: tl.constexpr, BLOCK_B: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_A + tl.arange(0, BLOCK_A)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if BLOCK_A == 32 and BLOCK_B == 32:  # only the combination is wrong: no single parameter explains it
        x = x + 1.0
    tl.store(y_ptr + offs, x, mask=offs < n)


def test_a_disagreement_no_single_parameter_explains_drops_that_candidate_with_a_warning():
    x = torch.randn(256)
    y = torch.empty_like(x)
    base = triton.Config({"BLOCK_A": 16, "BLOCK_B": 16})
    square = triton.Config({"BLOCK_A": 32, "BLOCK_B": 32})
    tuned = tiletune.autotune(configs=[base, triton.Config({"BLOCK_A": 32, "BLOCK_B": 16}), square],
                              key=["n"], verify=True)(_racy_when_square)
    with pytest.warns(TiletuneWarning, match="no single parameter explains it"):
        tuned[lambda meta: (triton.cdiv(256, meta["BLOCK_A"]),)](x, y, 256)
    assert torch.equal(y, x)
    assert tuned.best_config.kwargs != {"BLOCK_A": 32, "BLOCK_B": 32}


def test_a_config_wrong_alone_is_dropped_not_taken_for_a_parameter_that_carries_meaning():
    """Only (32, 32) computes wrong, as a config the compiler miscompiles does (Triton 3.6 on the H100 at
    BK=128, BV=32, 4 warps of a chunked-attention kernel): against (32, 16) the difference is BLOCK_B alone,
    but at BLOCK_A=16 BLOCK_B changes nothing, so BLOCK_B carries no meaning and the tune goes on without
    the wrong config (it raised MeaningError naming BLOCK_B before)."""
    x = torch.randn(256)
    y = torch.empty_like(x)
    configs = [triton.Config({"BLOCK_A": 32, "BLOCK_B": 16}), triton.Config({"BLOCK_A": 32, "BLOCK_B": 32}),
               triton.Config({"BLOCK_A": 16, "BLOCK_B": 16})]
    tuned = tiletune.autotune(configs=configs, key=["n"], verify=True)(_racy_when_square)
    with pytest.warns(TiletuneWarning, match="in every setting tried"):
        tuned[lambda meta: (triton.cdiv(256, meta["BLOCK_A"]),)](x, y, 256)
    assert torch.equal(y, x)
    assert tuned.best_config.kwargs != {"BLOCK_A": 32, "BLOCK_B": 32}


def test_witnesses_change_the_warps_then_each_other_parameter():
    from tiletune.runtime.agreement import witnesses

    config = triton.Config({"BK": 128, "BV": 32, "BT": 1}, num_warps=8, num_stages=2)
    got = [(w.kwargs, w.num_warps) for w in witnesses(config, "BV")]
    assert got == [({"BK": 128, "BV": 32, "BT": 1}, 4), ({"BK": 64, "BV": 32, "BT": 1}, 8),
                   ({"BK": 128, "BV": 32, "BT": 2}, 8)]
    assert [w.num_warps for w in witnesses(config, "num_warps")] == [8, 8, 8]


def test_hand_lists_are_not_checked_by_default():
    x = torch.randn(256)
    y = torch.empty_like(x)
    hand = [triton.Config({"BLOCK_A": 16, "BLOCK_B": 16}), triton.Config({"BLOCK_A": 32, "BLOCK_B": 32})]
    tuned = tiletune.autotune(configs=hand, key=["n"])(_racy_when_square)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TiletuneWarning)  # no check, so no warning about the pair
        tuned[lambda meta: (triton.cdiv(256, meta["BLOCK_A"]),)](x, y, 256)
    assert tuned.search_facts["check"] == "off"


def test_verify_must_be_understood():
    with pytest.raises(TuningError, match="verify='yes' is not understood"):
        tuned = tiletune.autotune(configs=[], key=["n"], verify="yes")(mk.block_partial_sum_kernel)
        tuned[lambda meta: (triton.cdiv(10, meta["BLOCK"]),)](torch.randn(10), torch.zeros(10), 10)


# ----- fingerprints ------------------------------------------------------------------------------
def test_a_sampled_fingerprint_catches_a_tenth_of_the_elements_wrong():
    gen = torch.Generator().manual_seed(3)
    ref = torch.randn(1 << 21, generator=gen)
    bad = ref.clone()
    bad[: ref.numel() // 10] *= 1.5
    fp_ref, fp_bad = Fingerprint.of({"y": ref}), Fingerprint.of({"y": bad})
    assert not fp_ref.prints["y"].full and fp_ref.prints["y"].values.numel() == SAMPLE_ELEMENTS
    d = compare(fp_ref, fp_bad)
    assert d is not None and d.tensor == "y" and d.rel_err > 0.05


def test_rounding_noise_of_another_reduction_order_agrees():
    gen = torch.Generator().manual_seed(4)
    a = torch.randn(256, 2048, generator=gen)
    b = torch.randn(2048, 256, generator=gen)
    exact = a.double() @ b.double()
    tf32ish = (a.to(torch.bfloat16).float() @ b.float()).double()  # coarser products: ~1e-3 relative
    assert compare(Fingerprint.of({"c": exact.float()}), Fingerprint.of({"c": tf32ish.float()})) is None
    half = compare(Fingerprint.of({"c": exact.half()}), Fingerprint.of({"c": (exact * 1.001).half()}))
    assert half is None


def test_nan_in_one_output_only_disagrees_and_nan_in_both_agrees():
    x = torch.ones(10)
    y = x.clone()
    y[3] = float("nan")
    assert compare(Fingerprint.of({"x": x}), Fingerprint.of({"x": y})) is not None
    assert compare(Fingerprint.of({"x": y}), Fingerprint.of({"x": y.clone()})) is None


def test_full_mode_compares_element_by_element():
    checker = Checker("full")
    x = torch.zeros(1000)
    y = x.clone()
    y[0] = 1.0  # norm-wise small against nothing: the element check still sees it
    assert checker.differs(checker.take({"x": x}), checker.take({"x": y})) is not None
    assert checker.differs(checker.take({"x": x}), checker.take({"x": x.clone()})) is None


def test_warming_the_checker_reads_the_tensors_only():
    """Checker.warm_up records and compares once (both paths: a whole copy and a sample) and keeps nothing."""
    x = torch.randn(1000)
    x[3] = float("nan")
    big = torch.randn((1 << 20) + 7)  # over FULL_COPY_ELEMENTS: the sampled record
    before = {"x": x.clone(), "big": big.clone()}
    for mode in ("agree", "full"):
        Checker(mode).warm_up({"x": x, "big": big})
        assert torch.equal(big, before["big"]) and torch.equal(x.isnan(), before["x"].isnan())
        assert torch.equal(x.nan_to_num(), before["x"].nan_to_num())


def test_the_first_batch_warms_the_checks_before_the_first_check():
    """A configs=[] tune (its candidates checked for agreement): the snapshot and the checker's first record are
    taken while the first batch compiles (the "prepare" span says so), before the first check; the result is
    right."""
    from tiletune.runtime import timeline

    a, b, s = _scaled_inputs()
    c = torch.zeros(M, N)
    tuned = tiletune.autotune(configs=[], key=["M", "N", "K"], hints={"BLOCK_K": [32, 64, 128]})(
        mk.group_scaled_matmul_kernel)
    timeline.start()
    try:
        _launch_scaled(tuned, a, b, s, c)
    finally:
        events = timeline.stop()
    prepare = [e for e in events if e["kind"] == "prepare"]
    checks = [e for e in events if e["kind"] == "check"]
    assert prepare[0]["label"].endswith("checks warmed") and checks
    assert prepare[0]["end_s"] <= checks[0]["start_s"]
    assert not any(e["label"].endswith("checks warmed") for e in prepare[1:])  # the first batch only
    assert _rel(c, mk.reference_group_scaled(a, b, s, G)) < 1e-5


def test_probes_add_the_reference_with_one_parameter_changed():
    pool = [triton.Config({"BM": 64, "BK": 256}), triton.Config({"BM": 32, "BK": 256}),
            triton.Config({"BM": 128, "BK": 512}), triton.Config({"BM": 64, "BK": 128})]
    added = probe_indices(pool, [0, 1])
    assert added == [3]  # BK took one value in the batch; the pool's BM=64, BK=128 differs only in BK
    assert differing(pool[0], pool[3]) == ["BK"]
    assert probe_indices(pool, [0, 1, 3]) == []


# ----- a dev-corpus library kernel, launched as its library launches it ---------------------------
from library_kernels import CORPUS, library_kernel  # noqa: E402

_TORCHAO_FP8 = CORPUS / "torchao/torchao/kernel/blockwise_quantization.py"


def _torchao_gemm(tmp_path, *, key):
    if not _TORCHAO_FP8.exists():
        pytest.skip("dev corpus not fetched (bash bench/fetch_corpus.sh)")
    kernel = library_kernel(_TORCHAO_FP8, "blockwise_fp8_gemm_kernel", tmp_path)
    gen = torch.Generator().manual_seed(5)
    m, n, k, block = 48, 256, 384, 128
    a, b = torch.randn(m, k, generator=gen), torch.randn(n, k, generator=gen)
    a_s = torch.rand(m, k // block, generator=gen) + 0.5
    b_s = torch.rand(n // block, k // block, generator=gen) + 0.5
    ref = (a * a_s.repeat_interleave(block, 1)) @ (b * b_s.repeat_interleave(block, 0).repeat_interleave(block, 1)).T
    tuned = tiletune.autotune(configs=[], key=key)(kernel)
    c = torch.full((m, n), 3.0)
    grid = lambda meta: (triton.cdiv(m, meta["BLOCK_SIZE_M"]), triton.cdiv(n, meta["BLOCK_SIZE_N"]))  # noqa: E731
    return tuned, grid, (a, b, c, a_s, b_s, m, n, k, 6), ref, block


def test_torchao_block_fp8_gemm_launched_as_torchao_does_tunes_correctly(tmp_path):
    tuned, grid, args, ref, block = _torchao_gemm(tmp_path, key=["N", "K", "M_BUCKET", "BLOCK_SIZE_K"])
    tuned[grid](*args, BLOCK_SIZE_K=block)  # torchao passes the scale block at launch
    assert _rel(args[2], ref) < 1e-5


def test_torchao_block_fp8_gemm_without_its_launch_value_refuses(tmp_path):
    tuned, grid, args, _, _ = _torchao_gemm(tmp_path, key=["N", "K", "M_BUCKET"])
    with pytest.raises(MeaningError) as err:
        tuned[grid](*args)
    assert err.value.parameter == "BLOCK_SIZE_K"
    assert bool((args[2] == 3.0).all())


@pytest.mark.slow
def test_the_cost_bench_runs_both_sides_in_fresh_processes(tmp_path):
    import subprocess

    root = Path(__file__).resolve().parent.parent
    proc = subprocess.run([sys.executable, str(root / "bench" / "agreement_cost.py"), "--dry-run", "--reps", "1",
                           "--pairs", "vector_add:0", "--out", str(tmp_path)], capture_output=True, text=True,
                          cwd=root, timeout=600)
    assert proc.returncode == 0, proc.stderr
    import json

    data = json.loads((tmp_path / "agreement_cost.json").read_text())
    assert {r["verify"] for r in data["rows"]} == {"on", "off"}
    assert [r["check"] for r in data["rows"] if r["verify"] == "on"] == ["agree"]
    assert "| vector_add |" in (tmp_path / "agreement_cost.md").read_text()


_UNSLOTH_FP8 = CORPUS / "unsloth/unsloth/kernels/fp8.py"


def _unsloth_w8a8(tmp_path, gk):
    """unsloth's block-fp8 matmul on float32 data: scale blocks of 128 along N and ``gk`` along K."""
    if not _UNSLOTH_FP8.exists():
        pytest.skip("dev corpus not fetched (bash bench/fetch_corpus.sh)")
    kernel = library_kernel(_UNSLOTH_FP8, "_w8a8_block_fp8_matmul", tmp_path)
    gen = torch.Generator().manual_seed(6)
    m, n, k, gn = 48, 256, 384, 128
    a, b = torch.randn(m, k, generator=gen), torch.randn(n, k, generator=gen)
    a_s = torch.rand(m, k // gk, generator=gen) + 0.5
    b_s = torch.rand(n // gn, k // gk, generator=gen) + 0.5
    ref = (a * a_s.repeat_interleave(gk, 1)) @ (b * b_s.repeat_interleave(gn, 0).repeat_interleave(gk, 1)).T
    c = torch.full((m, n), 3.0)
    args = (a, b, c, a_s, b_s, m, n, k, gn, gk, a.stride(-2), a.stride(-1), b.stride(1), b.stride(0),
            c.stride(-2), c.stride(-1), a_s.stride(-2), a_s.stride(-1), b_s.stride(1), b_s.stride(0))
    grid = lambda meta: (triton.cdiv(m, meta["BLOCK_SIZE_M"]) * triton.cdiv(n, meta["BLOCK_SIZE_N"]),)  # noqa: E731
    return tiletune.autotune(configs=[], key=["M", "N", "K"])(kernel), grid, args, ref, gn


def test_unsloth_w8a8_block_fp8_matmul_with_its_blocks_at_launch_tunes_block_m_correctly(tmp_path):
    tuned, grid, args, ref, g = _unsloth_w8a8(tmp_path, 128)
    tuned[grid](*args, BLOCK_SIZE_N=g, BLOCK_SIZE_K=g, GROUP_SIZE_M=8)  # as unsloth launches it, BLOCK_SIZE_M left free
    assert _rel(args[2], ref) < 1e-5


def test_unsloth_w8a8_block_fp8_matmul_with_block_k_free_is_right_or_refused(tmp_path):
    """With scale blocks of 128 along K every BLOCK_SIZE_K the model allows here (<= 128) is right: the
    tune must then be correct; with blocks of 32 along K (next test) most are wrong: it must refuse."""
    tuned, grid, args, ref, g = _unsloth_w8a8(tmp_path, 128)
    try:
        tuned[grid](*args, BLOCK_SIZE_N=g, GROUP_SIZE_M=8)
    except MeaningError as err:
        assert err.parameter == "BLOCK_SIZE_K"
        return
    assert _rel(args[2], ref) < 1e-5


def test_unsloth_w8a8_block_fp8_matmul_with_block_k_free_over_a_finer_scale_group_refuses(tmp_path):
    tuned, grid, args, _, g = _unsloth_w8a8(tmp_path, 32)
    with pytest.raises(MeaningError) as err:
        tuned[grid](*args, BLOCK_SIZE_N=g, GROUP_SIZE_M=8)
    assert err.value.parameter == "BLOCK_SIZE_K"
    assert bool((args[2] == 3.0).all())


def test_contextual_tuning_stops_when_a_kernels_candidates_disagree():
    a, b, s = _scaled_inputs()
    tuned = tiletune.autotune(configs=[], key=["M", "N", "K"])(mk.group_scaled_matmul_kernel)

    @tiletune.contextual_autotune(n_repeat=1, n_warmup=0)
    def scaled(a, b, s, c):
        _launch_scaled(tuned, a, b, s, c)
        return c

    c = torch.full((M, N), 7.0)
    with pytest.raises(TuningError, match=r"compute different outputs .*BLOCK_K") as err:
        scaled(a, b, s, c)
    assert "'group_scaled_matmul_kernel'" in str(err.value)
    assert bool((c == 7.0).all()), "the caller's tensors come back as the call found them"


def test_contextual_tuning_of_a_correct_kernel_checks_and_tunes():
    x = torch.randn(100, 300)
    tuned = tiletune.autotune(configs=[], key=["n_rows", "n_cols"])(_scale_rows)

    @tiletune.contextual_autotune(n_repeat=1, n_warmup=0)
    def run(x, y):
        tuned[lambda meta: (triton.cdiv(100, meta["BLOCK_R"]),)](x, y, 100, 300)
        return y

    assert torch.equal(run(x, torch.empty_like(x)), x * 2.0 + 1.0)
