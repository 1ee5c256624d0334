"""Quick fixes (libcst transforms): the result parses, no longer triggers the
rule, and keeps the rest of the file as it was."""

from __future__ import annotations

import ast
import textwrap

import pytest

from tiletune.lint import all_rules, lint_source
from tiletune.lint.fixes import FixError, apply_fix, fix_all, minimal_edit

HEAD = """\
import tiletune
import triton
import triton.language as tl


@tiletune.autotune(configs=[], key=["n_elements"])
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def add(x, y, out):
    n = out.numel()  # keep this comment
"""


def only(source: str, code: str):
    found = [d for d in lint_source(source, "t.py") if d.code == code]
    assert len(found) == 1, found
    return found[0]


def fixed(source: str, code: str) -> str:
    d = only(source, code)
    assert d.fixable
    new = apply_fix(source, d)
    ast.parse(new)
    assert code not in [x.code for x in lint_source(new, "t.py")], new
    assert "# keep this comment" in new or "# keep this comment" not in source
    return new


@pytest.mark.parametrize("code", [r.code for r in all_rules() if r.fixable])
def test_rule_examples_fix_to_clean(code):
    rule = next(r for r in all_rules() if r.code == code)
    new = fixed(rule.bad, code)
    assert code not in [d.code for d in lint_source(new, "t.py")]


# Hand configs that all set BLOCK_SIZE=1024: a launch passing BLOCK_SIZE=1024
# conflicts (Triton raises) and dropping it keeps every value the kernel sees.
SAME = HEAD.replace(
    '@tiletune.autotune(configs=[], key=["n_elements"])',
    '@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 1024}, num_warps=4), '
    'triton.Config({"BLOCK_SIZE": 1024}, num_warps=8)], key=["n_elements"])',
)
GRID = '    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)\n'


def test_tt001_has_no_fix():
    # Dropping a default changes what the kernel runs with: never offered.
    src = HEAD.replace("BLOCK_SIZE: tl.constexpr)", "BLOCK_SIZE: tl.constexpr = 1024)")
    d = only(src, "TT001")
    assert not d.fixable
    with pytest.raises(FixError):
        apply_fix(src, d)


def test_tt002_drop_keyword_last_and_middle():
    src = SAME + GRID + "    add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024)\n"
    new = fixed(src, "TT002")
    assert new.endswith("add_kernel[grid](x, y, out, n)\n")
    src2 = SAME + GRID + "    add_kernel[grid](\n        x, y, out,\n        BLOCK_SIZE=1024,\n        n_elements=n,\n    )\n"
    new2 = fixed(src2, "TT002")
    assert new2.endswith("    add_kernel[grid](\n        x, y, out,\n        n_elements=n,\n    )\n")


def test_tt002_drop_trailing_keyword_multiline():
    src = SAME + GRID + "    add_kernel[grid](\n        x, y, out, n,\n        BLOCK_SIZE=1024,\n    )\n"
    new = fixed(src, "TT002")
    assert new.endswith("    add_kernel[grid](\n        x, y, out, n,\n    )\n")


def test_tt002_only_the_flagged_launch_changes():
    src = SAME + GRID + "    add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024)\n    add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024)\n"
    first, second = [d for d in lint_source(src, "t.py") if d.code == "TT002"]
    new = apply_fix(src, second)
    assert new.count("BLOCK_SIZE=1024)") == 1
    assert new.index("BLOCK_SIZE=1024)") < new.index("add_kernel[grid](x, y, out, n)\n")


@pytest.mark.parametrize(
    "kernel_source, launch",
    [
        (SAME, "add_kernel[grid](x, y, out, n, BLOCK_SIZE=512)"),  # another value than the configs'
        (SAME, "add_kernel[grid](x, y, out, n, BLOCK_SIZE=block)"),  # a value the lint cannot know
        (
            SAME.replace('triton.Config({"BLOCK_SIZE": 1024}, num_warps=8)', 'triton.Config({"BLOCK_SIZE": 512}, num_warps=8)'),
            "add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024)",
        ),  # the configs differ: the launch's value is not what every config supplies
        (HEAD, "add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024)"),  # configs=[]: the search would choose another
    ],
    ids=["other-value", "variable", "configs-differ", "configs-empty"],
)
def test_tt002_no_fix_when_it_could_change_meaning(kernel_source, launch):
    src = kernel_source + "    block = 1024\n" + GRID + "    " + launch + "\n"
    d = only(src, "TT002")
    assert not d.fixable


@pytest.mark.parametrize(
    "launch, expect",
    [
        (
            "    add_kernel[(triton.cdiv(n, BLOCK_SIZE),)](x, y, out, n)\n",
            'add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, n)',
        ),
        (
            "    grid = (triton.cdiv(n, BLOCK_SIZE),)\n    add_kernel[grid](x, y, out, n)\n",
            'grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)',
        ),
        (
            "    grid = triton.cdiv(n, BLOCK_SIZE), 1\n    add_kernel[grid](x, y, out, n)\n",
            'grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]), 1)',
        ),
        (
            "    add_kernel[triton.cdiv(n, BLOCK_SIZE), 1](x, y, out, n)\n",
            'add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]), 1)](x, y, out, n)',
        ),
        (
            "    add_kernel[lambda META: (triton.cdiv(n, BLOCK_SIZE),)](x, y, out, n)\n",
            'add_kernel[lambda META: (triton.cdiv(n, META["BLOCK_SIZE"]),)](x, y, out, n)',
        ),
        (
            "    def grid(meta):\n        return (triton.cdiv(n, BLOCK_SIZE),)\n    add_kernel[grid](x, y, out, n)\n",
            'return (triton.cdiv(n, meta["BLOCK_SIZE"]),)',
        ),
    ],
    ids=["tuple", "tuple-variable", "bare-tuple-variable", "subscript-tuple", "lambda", "def"],
)
def test_tt003_grid_to_lambda(launch, expect):
    src = HEAD + "    BLOCK_SIZE = 1024\n" + launch
    new = fixed(src, "TT003")
    assert expect in new, new


def test_tt003_meta_name_does_not_clash():
    src = HEAD + "    BLOCK_SIZE = 1024\n    meta = 3\n    add_kernel[(triton.cdiv(n, BLOCK_SIZE) * meta,)](x, y, out, n)\n"
    new = fixed(src, "TT003")
    assert 'lambda META: (triton.cdiv(n, META["BLOCK_SIZE"]) * meta,)' in new


def test_fix_all_then_clean():
    src = SAME + "    BLOCK_SIZE = 1024\n    add_kernel[(triton.cdiv(n, BLOCK_SIZE),)](x, y, out, n, BLOCK_SIZE=1024)\n"
    new, done = fix_all(src, "t.py")
    # TT002 first (drop the conflicting keyword), then the grid no longer
    # matches what the autotuner supplies: TT003 rewrites it.
    assert sorted(d.code for d in done) == ["TT002", "TT003"]
    assert lint_source(new, "t.py") == []
    assert 'add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, n)' in new
    ast.parse(new)


def test_unfixable_diagnostic_raises():
    rule = next(r for r in all_rules() if r.code == "TT005")
    d = only(rule.bad, "TT005")
    with pytest.raises(FixError):
        apply_fix(rule.bad, d)


def test_minimal_edit():
    old = "a\nb\nc\nd\n"
    new = "a\nB\nc2\nd\n"
    first, end, text = minimal_edit(old, new)
    assert (first, end, text) == (1, 3, "B\nc2\n")
    lines = old.splitlines(keepends=True)
    assert "".join(lines[:first]) + text + "".join(lines[end:]) == new
    assert minimal_edit("x\n", "x\n") == (1, 1, "")


def test_fixes_on_source_written_in_a_test():
    src = textwrap.dedent(
        """\
        import tiletune
        import triton
        import triton.language as tl


        @tiletune.autotune(configs=[], key=["M", "N"])
        @triton.jit
        def copy2d(src_ptr, dst_ptr, M, N, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
            pid_m = tl.program_id(0)
            pid_n = tl.program_id(1)
            rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
            rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
            mask = (rm[:, None] < M) & (rn[None, :] < N)
            x = tl.load(src_ptr + rm[:, None] * stride + rn[None, :], mask=mask)
            tl.store(dst_ptr + rm[:, None] * stride + rn[None, :], x, mask=mask)


        def copy(src, dst):
            M, N = src.shape
            BLOCK_M, BLOCK_N = 32, 64
            grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
            copy2d[grid](src, dst, M, N, src.stride(0))
        """
    )
    d = only(src, "TT003")
    assert set(d.fix_data["names"]) == {"BLOCK_M", "BLOCK_N"}
    new = apply_fix(src, d)
    assert 'grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))' in new
    assert lint_source(new, "t.py") == []
