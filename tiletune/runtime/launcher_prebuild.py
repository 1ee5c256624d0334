"""Build a kernel's host launcher while its first candidates compile.

Triton 3.6 on CUDA launches each kernel signature through a small C module
that it generates and compiles with the host C compiler on the first launch
(``CudaLauncher`` -> ``compile_module_from_src``), then keeps in its disk
cache.  In a fresh cache the first candidate a tuning search timed waited
for that build: on the H100 host, the first measurement of a first tune took
0.25-0.32 s against 13 ms for the next ones.  The module's source depends
only on the signature (which arguments are pointers, integers or
constexprs), the same for every config of a launch, so one of the search's
compile children builds it from the first captured compile, beside the
compiles, and the first launch reads it from the cache.

In a child, not on a thread of the tuning process: the build runs the C
compiler as a subprocess, and the pipes of a subprocess started by a thread
while the tuning process forks its compile children leak into those
children, so the thread waits for an end of file that comes only when they
exit.

Only an optimisation: any failure (another backend, a Triton without this
API, a signature with tensor descriptors, whose launcher depends on the
compiled kernel) leaves the build to the first launch, as before.  Triton
3.7+ launches through one generic module and builds nothing per signature.
"""

from __future__ import annotations

from typing import Any

__all__ = ["prepare_launcher_build", "build_launcher"]


class _LauncherMetadata:
    """What ``CudaLauncher`` reads from a compiled kernel's metadata, at the values of a kernel without
    tensor descriptors, scratch memory or cooperative launch (only the build is kept, not the launcher)."""

    tensordesc_meta = None
    num_ctas = 1
    global_scratch_size = 0
    global_scratch_align = 1
    profile_scratch_size = 0
    profile_scratch_align = 1
    launch_cooperative_grid = False
    launch_pdl = False


def prepare_launcher_build(spec: Any) -> bool:
    """True when this process launches ``spec`` (a :class:`~tiletune.runtime.compile_workers.CompileSpec`)
    on its active device and its launcher can be built before the kernel is compiled.

    Called before the children are forked: it also looks up here what the
    build looks up once per process (the CUDA library directories, with
    ``ldconfig``), so the child that builds inherits the answer.
    """
    if any("tensordesc" in str(t) for t in spec.signature.values()):
        return False
    try:
        from triton.runtime.driver import driver

        if driver.active.get_current_target() != spec.target:
            return False
    except Exception:  # no active device (a CPU-only host, the interpreter)
        return False
    try:
        from triton.backends.nvidia.driver import library_dirs

        library_dirs()
    except Exception:  # another backend or Triton: the child looks them up itself
        pass
    return True


def build_launcher(spec: Any) -> bool:
    """Build the launcher a launch of ``spec`` loads, into Triton's cache; True when built (or found there).
    Run where :func:`prepare_launcher_build` said yes, or in a child forked from there (no device call is made)."""
    try:
        from triton.compiler import ASTSource
        from triton.runtime.driver import driver

        ast_source = getattr(spec.fn, "ASTSource", ASTSource)
        driver.active.launcher_cls(ast_source(spec.fn, spec.signature, spec.constexprs, spec.attrs),
                                   _LauncherMetadata())
        return True
    except Exception:  # the first launch builds it, as without this
        return False
