"""Issue 28 items that had no test of their own: a host function tuned by ``tiletune.tune.autotune``
is no kernel, and the user guide holds the sections a newcomer asked for."""

import textwrap
from pathlib import Path

from tiletune.analysis import analyze_source
from tiletune.lint.registry import lint_source

ROOT = Path(__file__).resolve().parent.parent

HOST_AND_KERNEL = textwrap.dedent('''\
    import triton
    import triton.language as tl
    import tiletune.tune
    from tiletune import tune
    from tiletune.tune import autotune


    @triton.jit
    def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


    @tiletune.tune.autotune(configs=[{"chunk": 1}, {"chunk": 2}], key=["n"])
    def host_dotted(x, n, chunk=1):
        return x * chunk


    @tune.autotune(configs=[{"chunk": 1}], key=["n"])
    def host_module(x, n, chunk=1):
        return x * chunk


    @autotune(configs=[{"chunk": 1}], key=["n"])
    def host_bare(x, n, chunk=1):
        return x * chunk
''')


def test_a_host_function_tuned_by_tiletune_tune_is_no_kernel():
    module = analyze_source(HOST_AND_KERNEL, file="host.py")
    assert [k.name for k in module.kernels] == ["scale_kernel"]  # the jit kernel is found, the host functions not
    assert not [d for d in lint_source(HOST_AND_KERNEL, "host.py") if d.kernel and d.kernel.startswith("host_")]


def test_the_user_guide_holds_what_a_newcomer_needs():
    guide = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    headings = [line.lstrip("#").strip().lower() for line in guide.splitlines() if line.startswith("## ")]
    for topic in ("getting started", "configs=[]", "knobs", "caching", "why was this config chosen", "troubleshooting"):
        assert any(topic in h for h in headings), (topic, headings)
    assert "tiletune explain" in guide and "TRITON_INTERPRET=1" in guide
