"""The footprint model (tiletune.analysis.footprint, tiletune.analysis.liveness)."""

from __future__ import annotations

import textwrap

from tiletune.analysis.footprint import assume_aligned
from tiletune.analysis import analyze_source
from tiletune.analysis.expr import parse_expr
from tiletune.analysis.liveness import LiveRanges

HEADER = "import triton\nimport triton.language as tl\n\n"

MATMUL = """
pid_m = tl.program_id(0)
pid_n = tl.program_id(1)
rm = pid_m * BM + tl.arange(0, BM)
rn = pid_n * BN + tl.arange(0, BN)
rk = tl.arange(0, BK)
a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
acc = tl.zeros((BM, BN), dtype=tl.float32)
for k in range(0, K, BK):
    a = tl.load(a_ptrs)
    b = tl.load(b_ptrs)
    acc += tl.dot(a, b)
    a_ptrs += BK
    b_ptrs += BK * N
tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))
"""
MATMUL_PARAMS = "a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr"


def kernel(body: str, params: str):
    src = HEADER + f"@triton.jit\ndef k({params}):\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"
    return analyze_source(src, "k.py").kernels[0]


#: The chip facts the footprint leaves symbolic, as on the sm_90 compiles the figures come from.
SM90 = {"wgmma": 1, "num_warps": 4}
ENV = {"BM": 128, "BN": 128, "BK": 64, "esize_a_ptr": 2, "esize_b_ptr": 2, "esize_c_ptr": 2, **SM90}


def test_matmul_shared_bytes_match_the_compiler():
    fp = kernel(MATMUL, MATMUL_PARAMS).footprint
    # 128x128x64 fp16 matmul: 32768 B per stage (checked against triton.compile on sm_90)
    for stages, expected in ((1, 32768), (2, 65536), (3, 98304), (4, 131072)):
        assert fp.shared_bytes.evaluate({**assume_aligned(fp.shared_bytes), **ENV, "num_stages": stages}) == expected


def test_matmul_operand_and_accumulator_bytes():
    fp = kernel(MATMUL, MATMUL_PARAMS).footprint
    assert fp.dot_operand_bytes == parse_expr("BK * BM * esize_a_ptr + BK * BN * esize_b_ptr")
    assert fp.accumulator_bytes == parse_expr("4 * BM * BN")
    live = fp.live_bytes.evaluate({**ENV, "num_stages": 3})
    # at least the accumulator plus three stages of both operands
    assert live >= 4 * 128 * 128 + 3 * 32768


def test_symbols_of_footprint():
    fp = kernel(MATMUL, MATMUL_PARAMS).footprint
    allowed = {"BM", "BN", "BK", "esize_a_ptr", "esize_b_ptr", "esize_c_ptr", "num_stages", "wgmma"}
    for e in (fp.live_bytes, fp.shared_bytes, fp.dot_operand_bytes, fp.accumulator_bytes):
        # and align16_<param> for the launch integers that decide which loads are pipelined
        assert {x for x in e.symbols() if not x.startswith("align16_")} <= allowed, e


def test_elementwise_kernel_has_no_dot_bytes():
    fp = kernel(
        """
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        tl.store(y_ptr + offs, x * 2, mask=offs < n)
        """,
        "x_ptr, y_ptr, n, BLOCK: tl.constexpr",
    ).footprint
    assert str(fp.dot_operand_bytes) == "0" and str(fp.accumulator_bytes) == "0"
    assert fp.shared_bytes.evaluate({**assume_aligned(fp.shared_bytes), "BLOCK": 1024, "esize_x_ptr": 4, "num_stages": 3}) == 0
    live = fp.live_bytes.evaluate({"BLOCK": 1024, "esize_x_ptr": 4, "esize_y_ptr": 4, "num_stages": 3})
    assert 1024 * 4 <= live <= 1024 * 4 * 6


def test_live_bytes_scale_with_num_stages_in_loops():
    fp = kernel(
        """
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for i in range(0, n, BLOCK):
            acc += tl.load(x_ptr + i + tl.arange(0, BLOCK))
        tl.store(y_ptr + tl.arange(0, BLOCK), acc)
        """,
        "x_ptr, y_ptr, n, BLOCK: tl.constexpr",
    ).footprint
    env = {"BLOCK": 256, "esize_x_ptr": 2, "esize_y_ptr": 4}
    one = fp.live_bytes.evaluate({**env, "num_stages": 1})
    four = fp.live_bytes.evaluate({**env, "num_stages": 4})
    assert four - one == 3 * 256 * 2


def test_liveness_scan():
    lr = LiveRanges()
    b = parse_expr
    lr.tick(); lr.define("a", b("A"))
    lr.tick(); lr.define("t", b("T")); lr.use("a")
    lr.tick(); lr.use("t")  # a is dead from here
    lr.tick(); lr.define("c", b("C")); lr.use("t")
    assert lr.peak() == parse_expr("max(A + T, C + T)")


def test_liveness_loop_carried():
    lr = LiveRanges()
    b = parse_expr
    lr.tick(); lr.define("acc", b("ACC"))
    lr.enter_loop()
    lr.tick(); lr.define("x", b("X"))
    lr.tick(); lr.use("acc"); lr.use("x"); lr.define("acc", b("ACC"), augmented=True)
    lr.tick(); lr.define("y", b("Y"))  # x dead, acc still live (carried)
    lr.exit_loop()
    lr.tick(); lr.define("z", b("Z"))
    assert lr.peak() == parse_expr("max(ACC + X, ACC + Y, Z)")


def test_footprint_serialises():
    spec = kernel(MATMUL, MATMUL_PARAMS)
    d = spec.footprint.to_dict()
    for text in d.values():
        parse_expr(text)


def test_small_dots_stage_one_buffer_less():
    # M < 64: mma.sync (MMAv2) keeps num_stages - 1 buffers; at 1 stage the dot's own operands
    fp = kernel(MATMUL, MATMUL_PARAMS).footprint
    env = {"BM": 32, "BN": 64, "BK": 32, "esize_a_ptr": 2, "esize_b_ptr": 2, "esize_c_ptr": 2, **SM90}
    got = [fp.shared_bytes.evaluate({**assume_aligned(fp.shared_bytes), **env, "num_stages": s}) for s in (1, 2, 3, 4)]
    assert got == [6144, 6144, 12288, 18432]


def test_without_wgmma_a_large_dot_stages_one_buffer_less_and_the_target_says_which():
    from tiletune.synthesis import get_target
    from tiletune.synthesis.families import family_of

    fp = kernel(MATMUL, MATMUL_PARAMS).footprint
    # sm_80 has only mma.sync: num_stages - 1 buffers of 32768 B even at M = 128
    got = [fp.shared_bytes.evaluate({**assume_aligned(fp.shared_bytes), **ENV, "wgmma": 0, "num_stages": s}) for s in (1, 2, 3, 4)]
    assert got == [32768, 32768, 65536, 98304]
    assert [family_of(get_target(n)).model_constants(get_target(n))["wgmma"] for n in ("a100", "h100")] == [0, 1]


def test_flash_attention_shared_bytes():
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    spec = analyze_source((root / "fixtures" / "flash_attention.py").read_text()).kernels[0]
    env = {"HEAD_DIM": 64, "esize_q_ptr": 2, "esize_k_ptr": 2, "esize_v_ptr": 2, "esize_o_ptr": 2, **SM90}
    sb = spec.footprint.shared_bytes
    # compiler figures (sm_90, 4 warps): Q once, K and V staged, P through shared memory for mma.sync
    assert [sb.evaluate({**assume_aligned(sb), **env, "BLOCK_M": 16, "BLOCK_N": 16, "num_stages": s}) for s in (1, 2, 3)] == [4608, 6656, 10752]
    assert [sb.evaluate({**assume_aligned(sb), **env, "BLOCK_M": 128, "BLOCK_N": 64, "num_stages": s}) for s in (1, 2)] == [24576, 49152]


def test_tensor_descriptor_blocks_are_staged_in_shared_memory():
    spec = kernel(
        """
        pid = tl.program_id(0)
        x_desc = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
        y_desc = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
        x = x_desc.load([pid * BM, 0])
        y_desc.store([pid * BM, 0], x.to(tl.float16))
        """,
        "x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr",
    )
    env = {"BM": 64, "BN": 64, "esize_x_ptr": 4, "esize_y_ptr": 2, "num_stages": 3}
    assert spec.footprint.shared_bytes.evaluate({**assume_aligned(spec.footprint.shared_bytes), **env}) == 64 * 64 * 4 + 8  # the load's block and its barrier
    assert all(a.block_ptr for a in spec.accesses)
