"""Triton's cache-key digest computed ahead, in a real fresh process (tiletune.runtime.cache_key_warm)."""

import subprocess
import sys
import textwrap


def test_the_digest_is_computed_once_in_the_background_and_settled_before_a_fork():
    code = textwrap.dedent("""
        import threading
        from triton.runtime.cache import triton_key
        from tiletune.runtime import cache_key_warm
        assert triton_key.cache_info().currsize == 0
        assert cache_key_warm.start() is True
        assert cache_key_warm.start() is False  # once per process
        cache_key_warm.settled()
        assert not any(t.name == "tiletune-triton-key" for t in threading.enumerate())
        info = triton_key.cache_info()
        assert info.currsize == 1 and info.misses == 1, info
        triton_key()
        assert triton_key.cache_info().hits == 1  # the compile's own call finds it computed
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("ok")
