"""Run by tests/test_launcher_prebuild.py in a process without TRITON_INTERPRET (the interpreter patches
triton.language, and real compiles then fail in that process).

Compiles a real kernel for sm_90 at three configs and prints JSON: whether the launcher source Triton
generates for each compiled kernel equals the one generated from the first captured spec, as
tiletune.runtime.launcher_prebuild builds it before anything compiled.
"""

import json
import sys

from triton.backends.nvidia import driver as nvidia_driver
from triton.compiler import ASTSource

from tiletune.runtime.launcher_prebuild import _LauncherMetadata

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from compile_children_worker import spec  # noqa: E402 (the same real kernel and specs)


def launcher_source(src, metadata) -> str:
    """The C source Triton 3.6's CudaLauncher generates for ``src`` (an ASTSource) and ``metadata``."""
    arg_idx = lambda x: (src.fn.arg_names.index(x), ) if isinstance(x, str) else x  # noqa: E731 (as Triton)
    constants = {arg_idx(k): v for k, v in src.constants.items()}
    return nvidia_driver.make_launcher(constants, dict(src.signature), getattr(metadata, "tensordesc_meta", None))


def main() -> None:
    first = spec(256, 4)
    prebuilt = launcher_source(ASTSource(first.fn, first.signature, first.constexprs, first.attrs),
                               _LauncherMetadata())
    same = {}
    for block, warps in ((256, 4), (1024, 8), (64, 1)):
        kernel = spec(block, warps).compile()  # compile-only, for sm_90
        same[f"{block}w{warps}"] = launcher_source(kernel.src, kernel.metadata) == prebuilt
    json.dump({"same_source": same}, sys.stdout)


if __name__ == "__main__":
    main()
