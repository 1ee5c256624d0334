"""The launcher built beside the first compiles (tiletune.runtime.launcher_prebuild) is the one a launch
of any config would build: Triton keys its disk cache by the generated source, so that source must not
depend on what only the compile knows (constexpr values, the compiled metadata)."""

import pytest
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget

from tiletune.runtime.compile_workers import CompileSpec
from tiletune.runtime.launcher_prebuild import _LauncherMetadata, prepare_launcher_build

nvidia_driver = pytest.importorskip("triton.backends.nvidia.driver")
if not hasattr(nvidia_driver, "make_launcher"):  # Triton 3.7+: one generic launcher, nothing built per kernel
    pytest.skip("this Triton builds no launcher per signature", allow_module_level=True)


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


def spec(block: int, warps: int) -> CompileSpec:
    signature = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    attrs = {(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]}
    fn = triton.runtime.jit.JITFunction(scale_kernel.fn)  # a JITFunction also under TRITON_INTERPRET
    return CompileSpec(fn, signature, {(3,): block}, attrs, {"num_warps": warps, "num_stages": 1},
                       GPUTarget("cuda", 90, 32))


def launcher_source(src, metadata) -> str:
    """The C source Triton 3.6's CudaLauncher generates for ``src`` (an ASTSource) and ``metadata``."""
    arg_idx = lambda x: (src.fn.arg_names.index(x), ) if isinstance(x, str) else x  # noqa: E731 (as Triton)
    constants = {arg_idx(k): v for k, v in src.constants.items()}
    return nvidia_driver.make_launcher(constants, dict(src.signature), getattr(metadata, "tensordesc_meta", None))


def test_the_prebuilt_launcher_source_is_what_every_compiled_config_launches_with(tmp_path, monkeypatch):
    from triton.compiler import ASTSource

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    first = spec(256, 4)
    prebuilt = launcher_source(ASTSource(first.fn, first.signature, first.constexprs, first.attrs),
                               _LauncherMetadata())
    for block, warps in ((256, 4), (1024, 8), (64, 1)):
        kernel = spec(block, warps).compile()  # compile-only, for sm_90
        assert launcher_source(kernel.src, kernel.metadata) == prebuilt


def test_no_launcher_is_built_for_a_device_this_process_does_not_launch_on():
    """On a host without that GPU (CI) the first launch keeps building it, as without the prebuild."""
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    assert prepare_launcher_build(spec(256, 4)) is False
