"""Target descriptions: the public figures, lookup, overrides and detection."""

from types import SimpleNamespace

import pytest

from tiletune.errors import SynthesisError
from tiletune.synthesis import TARGETS, detect, get_target
from tiletune.synthesis.model import Target
from tiletune.synthesis.targets import target_from_cuda_properties, target_from_npu_name

KiB = 1024

ASCEND_910B_FULL = ["ascend910b1", "ascend910b2", "ascend910_93"]
ASCEND_910B_BINNED = ["ascend910b3", "ascend910b4"]


def test_all_names_present():
    assert set(TARGETS) == {
        "ascend910b1",
        "ascend910b2",
        "ascend910b3",
        "ascend910b4",
        "ascend910_93",
        "ascend910_95",
        "ascend310p",
        "a100",
        "h100",
        "h200",
    }
    for name, t in TARGETS.items():
        assert t.name == name
        assert t.family in ("nvidia", "ascend")


@pytest.mark.parametrize("name", ASCEND_910B_FULL + ASCEND_910B_BINNED)
def test_ascend_910b_family(name):
    t = get_target(name)
    assert t.family == "ascend"
    assert t.ub_bytes == 192 * KiB == 196608
    assert t.l1_bytes == 512 * KiB
    assert t.l0a_bytes == t.l0b_bytes == 64 * KiB
    assert t.l0c_bytes == 128 * KiB
    assert t.ub_align_bytes == 32
    assert t.fractal == 16 and t.fractal_k_int8 == 32
    if name in ASCEND_910B_FULL:
        assert (t.cores, t.vector_cores) == (24, 48)
    else:
        assert (t.cores, t.vector_cores) == (20, 40)


def test_ascend910_95():
    t = get_target("ascend910_95")
    assert t.family == "ascend"
    assert t.ub_bytes == 253952  # 248 KiB usable (GetRuntimeUBSize)
    assert (t.cores, t.vector_cores) == (32, 64)
    assert t.l0c_bytes == 256 * KiB
    assert t.l1_bytes is None and t.l0a_bytes is None  # not in the sources: no constraint rather than a guess
    assert t.multibuffer_default is False  # Triton-Ascend compiler.py: off when compiling for 910_95
    assert get_target("Ascend910_9589") is t and get_target("ascend950") is t


@pytest.mark.parametrize("name", [n for n, t in TARGETS.items() if t.family == "ascend"])
def test_every_ascend_figure_names_its_source(name):
    t = get_target(name)
    for field in ("ub_bytes", "cores", "vector_cores", "ub_align_bytes", "fractal", "max_tensor_numel", "multibuffer_default"):
        assert t.sources.get(field), (name, field)
    assert "Triton-Ascend" in t.sources["max_tensor_numel"]
    assert t.max_tensor_numel == 1048576 and t.ub_align_bytes == 32
    if name.startswith("ascend910"):
        assert "driver.py" in t.sources["vector_cores"]
        assert t.multibuffer_default is (name != "ascend910_95")


def test_ascend310p():
    t = get_target("ascend310p")
    assert t.ub_bytes == 256 * KiB
    assert t.l1_bytes == 1024 * KiB
    assert t.l0c_bytes == 256 * KiB
    assert t.cores == 8
    assert t.ub_align_bytes == 32


def test_a100():
    t = get_target("a100")
    assert t.family == "nvidia" and t.arch == 80
    assert t.shared_bytes == 166912  # 163 KiB
    assert t.registers_per_sm == 65536
    assert t.cores == 108
    assert 1.5e12 <= t.bandwidth <= 2.0e12
    assert t.flops["fp16"] == 312e12


def test_h100():
    t = get_target("h100")
    assert t.arch == 90
    assert t.shared_bytes == 232448  # 227 KiB
    assert t.registers_per_sm == 65536
    assert t.cores == 132
    assert t.bandwidth == 3.0e12
    assert t.flops["fp16"] == 989e12 and t.flops["bf16"] == 989e12


def test_h200_as_h100_but_faster_memory():
    h100, h200 = get_target("h100"), get_target("h200")
    assert h200.shared_bytes == h100.shared_bytes
    assert h200.cores == h100.cores == 132
    assert h200.registers_per_sm == h100.registers_per_sm
    assert h200.bandwidth == 4.3e12


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_every_figure_is_cited(name):
    t = TARGETS[name]
    keys = ["cores", "bandwidth", "flops"]
    keys += ["shared_bytes", "registers_per_sm"] if t.family == "nvidia" else ["ub_bytes", "l1_bytes", "l0a_bytes", "l0c_bytes"]
    for k in keys:
        assert t.sources.get(k), f"{name}: no source for {k}"


def test_lookup_is_forgiving_and_errors_list_names():
    assert get_target("H100") is TARGETS["h100"]
    assert get_target(" ascend910B2 ") is TARGETS["ascend910b2"]
    assert get_target("910b3") is TARGETS["ascend910b3"]
    t = TARGETS["a100"]
    assert get_target(t) is t
    with pytest.raises(SynthesisError) as err:
        get_target("v100")
    for name in TARGETS:
        assert name in str(err.value)


def test_dict_overrides_a_base():
    t = get_target({"base": "h100", "shared_bytes": 101376})
    assert t.shared_bytes == 101376 and t.cores == 132 and t.family == "nvidia"
    assert t.sources["shared_bytes"] == "user override"
    assert get_target('{"base": "a100", "cores": 100}').cores == 100
    with pytest.raises(SynthesisError, match="unknown target field"):
        get_target({"base": "h100", "smem": 1})
    with pytest.raises(SynthesisError, match="needs"):
        get_target({"shared_bytes": 1})
    full = get_target({"name": "mine", "family": "nvidia", "cores": 10, "bandwidth": 1e12, "shared_bytes": 49152})
    assert isinstance(full, Target) and full.cores == 10


def test_detect_env_var(monkeypatch):
    monkeypatch.setenv("TILETUNE_TARGET", "ascend910b4")
    assert detect() is TARGETS["ascend910b4"]
    monkeypatch.setenv("TILETUNE_TARGET", '{"base": "h100", "cores": 114}')
    assert detect().cores == 114


def test_detect_without_device_asks_for_target(monkeypatch):
    monkeypatch.delenv("TILETUNE_TARGET", raising=False)
    import torch

    if torch.cuda.is_available():  # pragma: no cover - CPU-only CI
        pytest.skip("a GPU is present")
    with pytest.raises(SynthesisError, match="target="):
        detect()


def test_cuda_properties_mapping():
    h200 = target_from_cuda_properties(SimpleNamespace(major=9, minor=0, name="NVIDIA H200", multi_processor_count=132))
    assert h200 is TARGETS["h200"]
    pcie = target_from_cuda_properties(SimpleNamespace(major=9, minor=0, name="NVIDIA H100 PCIe", multi_processor_count=114))
    assert pcie.cores == 114 and pcie.shared_bytes == 232448
    a100 = target_from_cuda_properties(SimpleNamespace(major=8, minor=0, name="NVIDIA A100-SXM4-80GB", multi_processor_count=108))
    assert a100 is TARGETS["a100"]
    ada = target_from_cuda_properties(
        SimpleNamespace(
            major=8,
            minor=9,
            name="NVIDIA L4",
            multi_processor_count=58,
            shared_memory_per_block_optin=101376,
            regs_per_multiprocessor=65536,
        )
    )
    assert ada.arch == 89 and ada.cores == 58 and ada.shared_bytes == 101376 and ada.family == "nvidia"


def test_npu_name_mapping():
    assert target_from_npu_name("Ascend910B2") is TARGETS["ascend910b2"]
    assert target_from_npu_name("Ascend910_9391") is TARGETS["ascend910_93"]
    assert target_from_npu_name("Ascend310P3") is TARGETS["ascend310p"]
    assert target_from_npu_name("Ascend910_9599") is TARGETS["ascend910_95"]
    assert target_from_npu_name("Ascend910B3", aicore=18).cores == 18
    assert target_from_npu_name("Ascend999") is None
