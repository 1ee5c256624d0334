"""Broken source never crashes the analyzer: ``analyze_source`` returns a
ModuleSpec or raises AnalysisError naming the file and a line.

Sources: the kernels in this file, the project's fixtures and, when
installed, a few liger-kernel files.  Mutations: a fixed list (truncations,
deleted lines, unbalanced brackets, bad indentation, garbage, a ``def``
without a body, non-UTF-8 bytes) plus hypothesis-driven truncations and
line deletions.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiletune.analysis import ModuleSpec, analyze_file, analyze_source
from tiletune.errors import AnalysisError

ROOT = Path(__file__).resolve().parent.parent
FILE = "mutant.py"

MATMUL = '''
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, num_stages=3)],
    key=["M", "N", "K"],
)
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(tl.float16)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, c, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def matmul(a, b, c):
    M, K = a.shape
    K, N = b.shape
    grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]), triton.cdiv(N, META["BLOCK_N"]))
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1))
    return c
'''

SOFTMAX = '''
import triton
import triton.language as tl

BLOCK: tl.constexpr = 1024


@triton.heuristics({"EVEN": lambda args: args["n_cols"] % args["BLOCK_SIZE"] == 0})
@triton.jit
def softmax_kernel(out_ptr, in_ptr, stride, n_cols, BLOCK_SIZE: tl.constexpr, EVEN: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    x = tl.load(in_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * stride + cols, num / tl.sum(num, axis=0), mask=cols < n_cols)


def softmax(x, y):
    softmax_kernel[(x.shape[0],)](y, x, x.stride(0), x.shape[1], BLOCK_SIZE=triton.next_power_of_2(x.shape[1]))
'''


def _sources() -> list[tuple[str, str]]:
    out = [("matmul", MATMUL), ("softmax", SOFTMAX)]
    for p in sorted((ROOT / "fixtures").glob("*.py"))[:6]:
        if p.name != "__init__.py":
            out.append((p.stem, p.read_text()))
    try:
        import liger_kernel

        base = Path(os.path.dirname(liger_kernel.__file__)) / "ops"
        for name in ("swiglu.py", "geglu.py", "dyt.py"):
            if (base / name).exists():
                out.append((f"liger_{name[:-3]}", (base / name).read_text()))
    except ImportError:
        pass
    return out


SOURCES = _sources()
_LOCATED = re.compile(r"^mutant\.py:\d+(:\d+)?: ")


def check(text: str) -> None:
    """analyze_source either works or raises a located AnalysisError; nothing else."""
    try:
        module = analyze_source(text, FILE)
    except AnalysisError as err:
        assert err.file == FILE
        assert isinstance(err.line, int) and err.line >= 1, str(err)
        assert _LOCATED.match(str(err)), str(err)
        return
    assert isinstance(module, ModuleSpec)
    for k in module.kernels:
        front = [n for n in k.notes if n.startswith("internal") and "front end" in n]
        assert not front, front  # the front end itself must not fail on parseable source


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _mutations(text: str) -> list[tuple[str, str]]:
    lines = _lines(text)
    n = len(lines)
    def_lines = [i for i, l in enumerate(lines) if l.lstrip().startswith("def ")]
    first_def = def_lines[0] if def_lines else 0
    out = []
    for frac in (0.1, 0.25, 0.5, 0.75, 0.9):
        out.append((f"truncate chars {frac}", text[: int(len(text) * frac)]))
        out.append((f"truncate lines {frac}", "".join(lines[: int(n * frac)])))
    for i in (first_def, first_def + 1, n // 2, n - 1):
        if 0 <= i < n:
            out.append((f"delete line {i + 1}", "".join(lines[:i] + lines[i + 1 :])))
    out += [
        ("unbalanced open paren", text.replace("(", "((", 1)),
        ("unbalanced close paren", text.replace(")", "))", 1)),
        ("unclosed bracket at end", text + "\nx = [1, 2\n"),
        ("unclosed string", text + '\ns = "abc\n'),
        ("unclosed triple string", text + '\ns = """abc\n'),
        ("indent a def line", "".join(l if i != first_def else "   " + l for i, l in enumerate(lines))),
        ("dedent body", "".join(l.lstrip() if i == first_def + 2 else l for i, l in enumerate(lines))),
        ("tabs and spaces", "".join(("\t" + l.lstrip()) if i == first_def + 3 and l.startswith("    ") else l for i, l in enumerate(lines))),
        ("garbage bytes", text[: len(text) // 2] + "\x00\x01\x7f@@@$$$" + text[len(text) // 2 :]),
        ("garbage line", text + "\n@#$%^&*\n"),
        ("def with no body", text + "\n@triton.jit\ndef empty(x, B: tl.constexpr):\n"),
        ("def with no body mid file", "".join(lines[: first_def + 1]) + "\n" + "".join(lines[first_def + 1 :]).replace("    ", "", 0) + "\ndef nobody():\n"),
        ("decorator without def", text + "\n@triton.jit\n"),
        ("lone backslash", text + "\nx = 1 + \\\n"),
        ("unicode identifiers", text.replace("pid", "π", 1)),
        ("bom", "\ufeff" + text),
        ("crlf", text.replace("\n", "\r\n")),
        ("empty", ""),
        ("only comment", "# nothing\n"),
        ("deep nesting", "x = " + "(" * 300 + "1" + ")" * 300 + "\n" + text),
        ("very deep nesting", "x = " + "[" * 5000 + "]" * 5000 + "\n"),
    ]
    return out


CASES = [(f"{name}: {m}", mutated) for name, text in SOURCES for m, mutated in _mutations(text)]


@pytest.mark.parametrize("case, text", CASES, ids=[c for c, _ in CASES])
def test_fixed_mutations(case, text):
    check(text)


@pytest.mark.parametrize("name, text", SOURCES, ids=[n for n, _ in SOURCES])
def test_originals_analyse_cleanly(name, text):
    module = analyze_source(text, FILE)
    assert module.kernels, name
    for k in module.kernels:
        assert not [n for n in k.notes if n.startswith("internal")], (k.name, k.notes)


def test_syntax_error_position_is_precise():
    broken = MATMUL.replace("pid_n = tl.program_id(1)", "pid_n = tl.program_id(1")
    with pytest.raises(AnalysisError) as info:
        analyze_source(broken, FILE)
    lineno = next(i for i, l in enumerate(MATMUL.splitlines(), 1) if "pid_n = tl.program_id(1)" in l)
    assert lineno <= info.value.line <= lineno + 1
    assert "invalid syntax" in info.value.message


def test_non_utf8_file(tmp_path):
    p = tmp_path / "mutant.py"
    p.write_bytes(MATMUL.encode()[:200] + b"\xff\xfe\xfa" + MATMUL.encode()[200:])
    with pytest.raises(AnalysisError) as info:
        analyze_file(p)
    assert info.value.file == str(p) and info.value.line is not None and info.value.line >= 1
    p.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")
    with pytest.raises(AnalysisError) as info:
        analyze_file(p)
    assert info.value.line is not None
    p.write_bytes(b"# -*- coding: no-such-codec -*-\nx = 1\n")
    with pytest.raises(AnalysisError) as info:
        analyze_file(p)
    assert info.value.line is not None


_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(data=st.data())
def test_random_truncations(data):
    _, text = data.draw(st.sampled_from(SOURCES))
    cut = data.draw(st.integers(min_value=0, max_value=len(text)))
    check(text[:cut])


@_SETTINGS
@given(data=st.data())
def test_random_line_deletions(data):
    _, text = data.draw(st.sampled_from(SOURCES))
    lines = _lines(text)
    drop = data.draw(st.sets(st.integers(min_value=0, max_value=max(len(lines) - 1, 0)), max_size=4))
    check("".join(l for i, l in enumerate(lines) if i not in drop))


@_SETTINGS
@given(data=st.data())
def test_random_character_edits(data):
    _, text = data.draw(st.sampled_from(SOURCES))
    pos = data.draw(st.integers(min_value=0, max_value=len(text)))
    insert = data.draw(st.text(alphabet="()[]{}:,=@#'\"\\\n\t x", max_size=3))
    check(text[:pos] + insert + text[pos + 1 :])
