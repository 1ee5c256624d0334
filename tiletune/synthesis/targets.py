"""Target chips: on-chip capacities, core counts and rates, with public sources.

Every figure below has a comment naming where it comes from; the same
citations are kept in each :class:`~tiletune.synthesis.model.Target`'s
``sources`` so that ``synth-configs --explain`` and the docs can show them.

Figures that vendors do not publish per chip (HBM bandwidth of the Ascend
910B variants, their cube clock) are marked "approximate" and only feed the
cost model, never a feasibility constraint.

:func:`get_target` resolves a name, a ``{"base": ..., field: value}`` dict of
overrides, or a :class:`Target`; :func:`detect` describes the device of the
current process (CUDA through torch, Ascend through torch_npu / the
Triton-Ascend driver), imported lazily so that synthesis never needs torch.
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any, Mapping, Union

from ..errors import SynthesisError
from .model import Target

__all__ = ["TARGETS", "get_target", "detect", "target_names"]

KiB = 1024
MiB = 1024 * 1024

# ----- citations ---------------------------------------------------------------
_CUDA_GUIDE = (
    "CUDA C++ Programming Guide, 'Technical Specifications per Compute Capability' "
    "(max shared memory per block opt-in: 163 KiB on 8.0, 227 KiB on 9.0; 64K 32-bit "
    "registers per SM; 255 registers per thread; 2048 threads and 32 blocks per SM; "
    "shared memory per SM 164 KiB on 8.0, 228 KiB on 9.0)"
)
_A100_WP = (
    "NVIDIA A100 Tensor Core GPU Architecture whitepaper / A100 datasheet "
    "(108 SMs; FP16/BF16 tensor 312 TFLOP/s dense, TF32 156, INT8 624; FP32 19.5; "
    "HBM2e 1555 GB/s (40 GB) to 2039 GB/s (80 GB SXM))"
)
_H100_DS = (
    "NVIDIA H100 Tensor Core GPU datasheet / Hopper architecture whitepaper "
    "(H100 SXM5: 132 SMs; FP16/BF16 tensor 989 TFLOP/s dense (1979 with sparsity), "
    "TF32 495, FP8/INT8 1979; FP32 67; HBM3 3.35 TB/s)"
)
_H200_DS = (
    "NVIDIA H200 Tensor Core GPU datasheet (GH100 die as H100 SXM: 132 SMs, same "
    "tensor rates; HBM3e 4.8 TB/s)"
)
_MEASURED = (
    "tiletune DESIGN.md 'Facts to build on': measured on an H100 / H200 with Triton 3.6, "
    "PyTorch 2.11 (device copy 3.0 TB/s on H100, 4.3 TB/s on H200; bf16 8192^3 torch "
    "matmul ~800 TFLOP/s)"
)
_ASCENDC_MEM = (
    "Ascend C operator development guide, 'Storage units' and 'General restrictions' "
    "(hiascend.com, CANN 8.0): Unified Buffer holds vector inputs/outputs and is "
    "32-byte aligned; L1 stages cube inputs; L0A/L0B hold cube inputs, L0C cube outputs"
)
_ASCEND_SOC = (
    "CANN platform_config SoC ini as quoted in the ATC '--aicore_num' reference "
    "(hiascend.com, CANN 8.5): ai_core_cnt=24 cube_core_cnt=24 vector_core_cnt=48 for "
    "Atlas A2/A3; Ascend 910B3/B4 are the 20-cube / 40-vector bins"
)
_TA_CORES = (
    "Triton-Ascend 3.2.0 triton/backends/ascend/driver.py get_device_properties (l.80-86): "
    "num_vectorcore = num_aicore * 2; triton/runtime/utils.py l.32-36: the tile generator's "
    "num_vector_core is 2 x num_aicore only when the arch names 'Ascend910B' (on Ascend910_93xx "
    "it keeps num_aicore: a Triton-Ascend quirk; tiletune follows the CANN ini, 48 vector cores)"
)
_ASCEND_SIZES = (
    "Triton-Ascend programming guide and Ascend C GetCoreMemSize/GetUBSizeInBytes "
    "(Atlas A2/A3 training products: UB 192 KiB per vector core, L1 512 KiB, "
    "L0A/L0B 64 KiB, L0C 128 KiB per cube core); CANN aclrtGetDeviceInfo "
    "ACL_PLATFORM_AICORE_UB_SIZE / L1_SIZE / L0_A_SIZE / L0_B_SIZE / L0_C_SIZE report them per device; "
    "liger-kernel 0.8.5 _ascend/ub_manager.py reads get_soc_spec('UB_SIZE') ('A3=192KB')"
)
_TA_NUMEL = (
    "Triton-Ascend 3.2.0 triton/language/_utils.py l.32: TRITON_MAX_TENSOR_NUMEL = 1048576 "
    "(its tl.arange, triton_patch/language/semantic.py l.61-75, checks only this bound: no power of two)"
)
_TA_MULTIBUFFER = (
    "Triton-Ascend 3.2.0 triton/backends/ascend/compiler.py l.593: multibuffer = not "
    "is_compile_on_910_95 (double-buffering on by default, off on 910_95); runtime/autotuner.py "
    "l.359 passes a config's multibuffer to the compiler"
)
_TA_ARCHS = (
    "Triton-Ascend 3.2.0 triton/backends/ascend/utils.py get_ascend_arch_from_env (l.508-535): "
    "Ascend910B1-B4, Ascend910_9362/9372/9381/9382/9391/9392 (910_93), "
    "Ascend910_9579/9581/9589/9599 (910_95), Ascend310B1-B4"
)
_950 = (
    "CANN Ascend C GetRuntimeUBSize (hiascend.com, CANN 9.x): Ascend 950PR/950DT runtime UB 248 KiB "
    "(216 KiB in mixed SIMD+SIMT kernels); the CANN ops-cv cross-platform migration guide and its "
    "issue #997 (platform_config ini ub_size=253952, 32 AI cores with 2 vector cores each, "
    "L0C 256 KiB); L1/L0A/L0B sizes of 950 are not in these sources: left unset (no L1/L0A/L0B "
    "constraint on this target until a source gives them)"
)
_DAVINCI = (
    "Huawei Da Vinci architecture (Hot Chips 31, 2019): a cube unit does 16x16x16 "
    "fp16 MACs per cycle (fractal 16x16 for fp16/bf16, 16x32 for int8)"
)
_ASCEND_RATE = (
    "approximate: 24 cubes x 4096 fp16 MAC/cycle x 2 x ~1.8 GHz ~= 354 TFLOP/s "
    "(20 cubes: ~295); HBM2e ~1.6 TB/s per 910B die (Atlas 800T A2 public material); "
    "cost model only"
)
_310P = (
    "Atlas 300I Pro (Ascend 310P3) product page: 8 AI cores (coupled cube+vector), "
    "70 TFLOP/s fp16, 140 TOPS int8, LPDDR4X 204.8 GB/s; UB 256 KiB, L1 1 MiB, "
    "L0A/L0B 64 KiB, L0C 256 KiB per core (tiletune DESIGN.md target table); "
    "not in Triton-Ascend 3.2.0's arch list (which has 310B, not 310P)"
)


def _nvidia(name: str, **kw: Any) -> Target:
    return Target(name=name, family="nvidia", **kw)


def _ascend(name: str, **kw: Any) -> Target:
    return Target(name=name, family="ascend", **kw)


def _a100() -> Target:
    return _nvidia(
        "a100",
        arch=80,
        cores=108,  # SMs, A100 whitepaper
        bandwidth=1.7e12,  # B/s: ~85% of 2.039 TB/s (80 GB SXM) spec, the usual achieved copy rate
        flops={  # dense tensor-core FLOP/s, A100 datasheet
            "fp16": 312e12,
            "bf16": 312e12,
            "fp32": 156e12,  # TF32 (Triton's default input_precision for fp32 tl.dot)
            "tf32": 156e12,
            "int8": 624e12,
        },
        vector_flops=19.5e12,  # FP32 non-tensor, A100 datasheet
        shared_bytes=166912,  # 163 KiB opt-in shared memory per block, CUDA guide (cc 8.0)
        shared_bytes_per_sm=167936,  # 164 KiB per SM, CUDA guide (cc 8.0)
        registers_per_sm=65536,  # 64K 32-bit registers per SM, CUDA guide
        max_registers_per_thread=255,  # CUDA guide
        max_threads_per_block=1024,  # CUDA guide
        max_threads_per_sm=2048,  # CUDA guide (cc 8.0)
        max_blocks_per_sm=32,  # CUDA guide (cc 8.0)
        sources={
            "shared_bytes": _CUDA_GUIDE,
            "registers_per_sm": _CUDA_GUIDE,
            "cores": _A100_WP,
            "flops": _A100_WP,
            "bandwidth": _A100_WP + "; 1.7 TB/s is ~85% of the 80 GB SXM figure (typical achieved copy)",
        },
    )


def _h100() -> Target:
    return _nvidia(
        "h100",
        arch=90,
        cores=132,  # SMs, H100 SXM5 datasheet
        bandwidth=3.0e12,  # B/s, measured device copy (DESIGN.md); spec 3.35 TB/s
        flops={  # dense tensor-core FLOP/s, H100 SXM datasheet (measured bf16 8192^3: ~800e12)
            "fp16": 989e12,
            "bf16": 989e12,
            "fp32": 495e12,  # TF32
            "tf32": 495e12,
            "fp8e4nv": 1979e12,
            "fp8e5": 1979e12,
            "int8": 1979e12,
        },
        vector_flops=67e12,  # FP32 non-tensor, H100 SXM datasheet
        shared_bytes=232448,  # 227 KiB opt-in shared memory per block, CUDA guide (cc 9.0)
        shared_bytes_per_sm=233472,  # 228 KiB per SM, CUDA guide (cc 9.0)
        registers_per_sm=65536,  # 64K 32-bit registers per SM, CUDA guide
        max_registers_per_thread=255,  # CUDA guide
        max_threads_per_block=1024,  # CUDA guide
        max_threads_per_sm=2048,  # CUDA guide (cc 9.0)
        max_blocks_per_sm=32,  # CUDA guide (cc 9.0)
        sources={
            "shared_bytes": _CUDA_GUIDE,
            "registers_per_sm": _CUDA_GUIDE,
            "cores": _H100_DS,
            "flops": _H100_DS + "; " + _MEASURED,
            "bandwidth": _MEASURED + " (spec: " + _H100_DS + ")",
        },
    )


def _h200() -> Target:
    h = _h100()
    return dataclasses.replace(
        h,
        name="h200",
        bandwidth=4.3e12,  # B/s, measured device copy (DESIGN.md); spec 4.8 TB/s
        sources={**h.sources, "cores": _H200_DS, "flops": _H200_DS, "bandwidth": _MEASURED + " (spec: " + _H200_DS + ")"},
    )


def _ascend_common(**kw: Any) -> dict[str, Any]:
    """Rules every Ascend target shares, with their sources."""
    out: dict[str, Any] = dict(
        ub_align_bytes=32,  # UB transfers in 32-byte blocks, Ascend C general restrictions (a cost, not a rule)
        fractal=16,  # cube fractal 16x16 (fp16/bf16), Da Vinci architecture
        fractal_k_int8=32,  # 16x32 for int8
        max_tensor_numel=1048576,  # TRITON_MAX_TENSOR_NUMEL, Triton-Ascend triton/language/_utils.py l.32
    )
    out.update(kw)
    return out


def _ascend_sources(sizes: str, cores: str, **extra: str) -> dict[str, str]:
    src = {
        "ub_bytes": sizes,
        "l1_bytes": sizes,
        "l0a_bytes": sizes,
        "l0b_bytes": sizes,
        "l0c_bytes": sizes,
        "cores": cores,
        "vector_cores": cores,
        "ub_align_bytes": _ASCENDC_MEM,
        "fractal": _DAVINCI,
        "max_tensor_numel": _TA_NUMEL,
        "multibuffer_default": _TA_MULTIBUFFER,
        "name": _TA_ARCHS,
    }
    src.update(extra)
    return src


def _ascend910b(name: str, cubes: int, vectors: int, fp16_flops: float) -> Target:
    return _ascend(
        name,
        cores=cubes,  # cube cores (AI cores), CANN SoC ini
        vector_cores=vectors,  # 2 vector cores per cube core: CANN SoC ini; Triton-Ascend driver.py l.85
        bandwidth=1.6e12,  # B/s, approximate HBM2e figure (cost model only)
        flops={"fp16": fp16_flops, "bf16": fp16_flops, "int8": 2 * fp16_flops, "fp32": fp16_flops / 2},
        vector_flops=fp16_flops / 16,  # approximate (cost model only)
        ub_bytes=192 * KiB,  # Unified Buffer per vector core: 196608 B
        l1_bytes=512 * KiB,  # L1 per cube core: 524288 B
        l0a_bytes=64 * KiB,  # L0A per cube core: 65536 B
        l0b_bytes=64 * KiB,  # L0B per cube core: 65536 B
        l0c_bytes=128 * KiB,  # L0C per cube core: 131072 B
        multibuffer_default=True,  # Triton-Ascend compiler.py l.593
        **_ascend_common(),
        sources=_ascend_sources(
            _ASCEND_SIZES, _ASCEND_SOC + "; " + _TA_CORES, flops=_ASCEND_RATE, bandwidth=_ASCEND_RATE
        ),
    )


def _ascend910_95() -> Target:
    return _ascend(
        "ascend910_95",
        cores=32,  # AI (cube) cores, ops-cv migration guide / ini (see _950)
        vector_cores=64,  # 2 vector cores per AI core (driver.py l.85; _950)
        bandwidth=1.6e12,  # B/s, approximate (migration guide table; cost model only)
        flops={"fp16": 432e12, "bf16": 432e12, "int8": 865e12, "fp32": 216e12},  # approximate (issue #997: server bin)
        vector_flops=54e12 / 2,  # approximate: 54 TFLOP/s fp16 vector (cost model only)
        ub_bytes=253952,  # 248 KiB usable UB per vector core: GetRuntimeUBSize, ini ub_size
        l0c_bytes=256 * KiB,  # L0C per cube core (_950)
        multibuffer_default=False,  # Triton-Ascend compiler.py l.593: off when compiling for 910_95
        **_ascend_common(),
        sources=_ascend_sources(_950, _950 + "; " + _TA_CORES, flops=_950, bandwidth=_950),
    )


def _ascend310p() -> Target:
    return _ascend(
        "ascend310p",
        cores=8,  # AI cores, Atlas 300I Pro (310P3)
        vector_cores=8,  # coupled architecture: the vector unit sits in each AI core
        bandwidth=204.8e9,  # B/s, LPDDR4X, Atlas 300I Pro product page
        flops={"fp16": 70e12, "bf16": 70e12, "int8": 140e12, "fp32": 35e12},  # Atlas 300I Pro
        vector_flops=70e12 / 16,  # approximate (cost model only)
        ub_bytes=256 * KiB,  # 262144 B, DESIGN.md target table
        l1_bytes=1 * MiB,  # 1048576 B
        l0a_bytes=64 * KiB,  # 65536 B
        l0b_bytes=64 * KiB,  # 65536 B
        l0c_bytes=256 * KiB,  # 262144 B
        multibuffer_default=True,
        **_ascend_common(),
        sources=_ascend_sources(_310P, _310P, flops=_310P, bandwidth=_310P),
    )


def _build_targets() -> dict[str, Target]:
    b2 = 354e12  # approximate fp16 cube rate for 24 cube cores (see _ASCEND_RATE)
    b3 = 295e12  # approximate fp16 cube rate for 20 cube cores
    return {
        "ascend910b1": _ascend910b("ascend910b1", 24, 48, b2),
        "ascend910b2": _ascend910b("ascend910b2", 24, 48, b2),
        "ascend910b3": _ascend910b("ascend910b3", 20, 40, b3),
        "ascend910b4": _ascend910b("ascend910b4", 20, 40, b3),
        "ascend910_93": _ascend910b("ascend910_93", 24, 48, b2),
        "ascend910_95": _ascend910_95(),
        "ascend310p": _ascend310p(),
        "a100": _a100(),
        "h100": _h100(),
        "h200": _h200(),
    }


#: Every built-in target by name.
TARGETS: dict[str, Target] = _build_targets()

_ALIASES = {
    "910b1": "ascend910b1",
    "910b2": "ascend910b2",
    "910b3": "ascend910b3",
    "910b4": "ascend910b4",
    "910_93": "ascend910_93",
    "ascend910_9391": "ascend910_93",
    "ascend910_9392": "ascend910_93",
    "910_95": "ascend910_95",
    "ascend910_9579": "ascend910_95",
    "ascend910_9581": "ascend910_95",
    "ascend910_9589": "ascend910_95",
    "ascend910_9599": "ascend910_95",
    "ascend950": "ascend910_95",
    "310p": "ascend310p",
    "ascend310p3": "ascend310p",
    "sm80": "a100",
    "sm90": "h100",
    "h100_sxm": "h100",
}


def target_names() -> list[str]:
    """Names :func:`get_target` accepts (aliases aside)."""
    return list(TARGETS)


def _lookup(name: str) -> Target:
    key = name.strip().lower().replace("-", "_").replace(" ", "")
    key = _ALIASES.get(key, key)
    if key not in TARGETS:
        raise SynthesisError(
            f"unknown target {name!r}; known targets: {', '.join(TARGETS)} "
            "(or pass a dict such as {'base': 'h100', 'shared_bytes': 101376})"
        )
    return TARGETS[key]


_FIELDS = {f.name for f in dataclasses.fields(Target)}


def get_target(target: Union[str, Mapping[str, Any], Target]) -> Target:
    """Resolve a target name, an override dict or a :class:`Target`.

    A dict overrides fields of a base target: ``{"base": "h100",
    "shared_bytes": 101376}``; without ``base`` it must give at least
    ``name``, ``family``, ``cores`` and ``bandwidth``.  Unknown names and
    fields raise :class:`SynthesisError` listing what is accepted.
    """
    if isinstance(target, Target):
        return target
    if isinstance(target, str):
        text = target.strip()
        if text.startswith("{"):
            try:
                return get_target(json.loads(text))
            except json.JSONDecodeError as exc:
                raise SynthesisError(f"target {target!r} is not valid JSON: {exc}") from None
        return _lookup(text)
    if isinstance(target, Mapping):
        fields = dict(target)
        base_name = fields.pop("base", None)
        unknown = sorted(set(fields) - _FIELDS)
        if unknown:
            raise SynthesisError(
                f"unknown target field(s) {', '.join(unknown)}; fields: {', '.join(sorted(_FIELDS))}"
            )
        if base_name is not None:
            base = get_target(base_name)
            if "name" not in fields:
                fields["name"] = f"{base.name}*"
            if "sources" not in fields:
                fields["sources"] = {**base.sources, **{k: "user override" for k in fields if k != "name"}}
            return dataclasses.replace(base, **fields)
        missing = [f for f in ("name", "family", "cores", "bandwidth") if f not in fields]
        if missing:
            raise SynthesisError(
                f"a target dict without 'base' needs {', '.join(missing)}; or give base=<one of {', '.join(TARGETS)}>"
            )
        if fields["family"] not in ("nvidia", "ascend"):
            raise SynthesisError(f"target family must be 'nvidia' or 'ascend', got {fields['family']!r}")
        return Target(**fields)
    raise SynthesisError(f"cannot make a target of {target!r}; pass a name ({', '.join(TARGETS)}), a dict or a Target")


# ----- detection ---------------------------------------------------------------
def detect() -> Target:
    """The target of the current process's device.

    ``TILETUNE_TARGET`` (a name or a JSON dict) wins.  Then a CUDA device
    through torch (compute capability 9.0 -> ``h200`` when the name says
    H200, else ``h100``; 8.0 -> ``a100``; the SM count is taken from the
    device; other GPUs get a target built from the device properties), then
    an Ascend NPU through ``torch_npu`` or the Triton-Ascend driver.  Raises
    :class:`SynthesisError` when there is no device: pass ``target=`` then.
    """
    env = os.environ.get("TILETUNE_TARGET")
    if env:
        return get_target(env)
    cuda = _detect_cuda()
    if cuda is not None:
        return cuda
    npu = _detect_ascend()
    if npu is not None:
        return npu
    raise SynthesisError(
        "no GPU or NPU found to describe; pass target= (one of "
        f"{', '.join(TARGETS)}) or set TILETUNE_TARGET"
    )


def _detect_cuda():
    try:
        import torch  # noqa: PLC0415 - lazy on purpose: synthesis does not need torch
    except Exception:  # noqa: BLE001
        return None
    try:
        if not torch.cuda.is_available() or getattr(torch.version, "hip", None):
            return None
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
    except Exception:  # noqa: BLE001
        return None
    return target_from_cuda_properties(props)


def target_from_cuda_properties(props: Any) -> Target:
    """A target for CUDA device properties (``torch.cuda.get_device_properties``)."""
    major, minor = int(getattr(props, "major", 0)), int(getattr(props, "minor", 0))
    name = str(getattr(props, "name", "cuda"))
    sms = int(getattr(props, "multi_processor_count", 0) or 0)
    base = None
    if (major, minor) == (9, 0):
        base = TARGETS["h200"] if "H200" in name.upper() else TARGETS["h100"]
    elif (major, minor) == (8, 0):
        base = TARGETS["a100"]
    if base is not None:
        if sms and sms != base.cores:
            return dataclasses.replace(
                base, name=f"{base.name}:{sms}sm", cores=sms, sources={**base.sources, "cores": f"device properties of {name}"}
            )
        return base
    shared = int(getattr(props, "shared_memory_per_block_optin", 0) or getattr(props, "shared_memory_per_block", 0) or 49152)
    shared_sm = int(getattr(props, "shared_memory_per_multiprocessor", 0) or shared)
    regs = int(getattr(props, "regs_per_multiprocessor", 0) or 65536)
    threads_sm = int(getattr(props, "max_threads_per_multi_processor", 0) or 2048)
    clock_khz = getattr(props, "memory_clock_rate", 0) or 0
    bus_bits = getattr(props, "memory_bus_width", 0) or 0
    bandwidth = 2.0 * clock_khz * 1e3 * bus_bits / 8 * 0.85 if clock_khz and bus_bits else 1.0e12
    # Tensor-core rate estimate: 1024 dense fp16 FLOP/clock/SM (sm80 class) at ~1.5 GHz.
    fp16 = max(sms, 1) * 1024 * 1.5e9
    src = f"device properties of {name} (sm_{major}{minor}); rates estimated"
    return Target(
        name=f"sm{major}{minor}",
        family="nvidia",
        arch=major * 10 + minor,
        cores=max(sms, 1),
        bandwidth=bandwidth,
        flops={"fp16": fp16, "bf16": fp16, "fp32": fp16 / 2, "tf32": fp16 / 2, "int8": 2 * fp16},
        vector_flops=fp16 / 16,
        shared_bytes=shared,
        shared_bytes_per_sm=shared_sm,
        registers_per_sm=regs,
        max_threads_per_sm=threads_sm,
        sources={k: src for k in ("shared_bytes", "registers_per_sm", "cores", "bandwidth", "flops")},
    )


_NPU_NAMES = {
    "910b1": "ascend910b1",
    "910b2": "ascend910b2",
    "910b3": "ascend910b3",
    "910b4": "ascend910b4",
    "910_93": "ascend910_93",
    "910_9391": "ascend910_93",
    "910_9392": "ascend910_93",
    "910_9381": "ascend910_93",
    "910_9382": "ascend910_93",
    "910_9362": "ascend910_93",
    "910_9372": "ascend910_93",
    "910_95": "ascend910_95",
    "910_9579": "ascend910_95",
    "910_9581": "ascend910_95",
    "910_9589": "ascend910_95",
    "910_9599": "ascend910_95",
    "310p": "ascend310p",
}


def target_from_npu_name(name: str, aicore: int | None = None, vector: int | None = None) -> Target | None:
    """A target for an Ascend SoC name such as ``"Ascend910B2"`` (None if unknown)."""
    key = name.lower().replace("ascend", "").strip()
    base_name = None
    for prefix, tname in sorted(_NPU_NAMES.items(), key=lambda kv: -len(kv[0])):
        if key.startswith(prefix):
            base_name = tname
            break
    if base_name is None:
        return None
    base = TARGETS[base_name]
    changes: dict[str, Any] = {}
    if aicore and aicore != base.cores:
        changes["cores"] = int(aicore)
    if vector and vector != base.vector_cores:
        changes["vector_cores"] = int(vector)
    if changes:
        changes["name"] = f"{base.name}:{changes.get('cores', base.cores)}c"
        changes["sources"] = {**base.sources, "cores": f"device properties of {name}"}
        return dataclasses.replace(base, **changes)
    return base


def _detect_ascend():
    name = None
    aicore = vector = None
    try:
        import torch  # noqa: PLC0415
        import torch_npu  # noqa: F401, PLC0415

        if torch.npu.is_available():
            name = str(torch.npu.get_device_name(torch.npu.current_device()))
    except Exception:  # noqa: BLE001
        name = None
    if name is None:
        return None
    try:
        from triton.runtime import driver  # noqa: PLC0415

        props = driver.active.utils.get_device_properties(0)
        aicore = props.get("num_aicore")
        vector = props.get("num_vectorcore")
    except Exception:  # noqa: BLE001
        pass
    return target_from_npu_name(name, aicore, vector)
