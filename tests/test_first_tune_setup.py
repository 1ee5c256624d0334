"""A first tune's fixed cost: the kernel is analysed once when the launch's constexpr values decide no
branch (runtime/autotuner.py ``spec``, analysis ``KernelSpec.static_params``)."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

import tiletune


@triton.jit
def scale_plain(x_ptr, y_ptr, n, FACTOR: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * FACTOR, mask=mask)


@triton.jit
def scale_branching(x_ptr, y_ptr, n, SQUARE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if SQUARE:
        x = x * x
    tl.store(y_ptr + offs, x, mask=mask)


def test_constants_no_branch_reads_reuse_the_unspecialised_analysis():
    tuned = tiletune.autotune(configs=[], key=["n"])(scale_plain)
    plain = tuned.spec()
    assert plain is not None and "FACTOR" not in plain.static_params
    assert tuned.spec({"FACTOR": 3}) is plain


def test_a_constant_a_branch_reads_is_analysed_specialised():
    tuned = tiletune.autotune(configs=[], key=["n"])(scale_branching)
    plain = tuned.spec()
    assert "SQUARE" in plain.static_params
    special = tuned.spec({"SQUARE": 0})
    assert special is not plain and special is tuned.spec({"SQUARE": 0})  # once per distinct set


def test_a_first_tune_with_a_launch_constexpr_analyses_the_kernel_once(monkeypatch):
    from tiletune.runtime import live_kernel

    calls: list = []
    real = live_kernel.analyze_live
    monkeypatch.setattr(live_kernel, "analyze_live", lambda *a, **k: calls.append(a[2:] or k) or real(*a, **k))
    tuned = tiletune.autotune(configs=[], key=["n"], cache_results=False)(scale_plain)
    x = torch.randn(100)
    y = torch.empty_like(x)
    tuned[lambda meta: (triton.cdiv(100, meta["BLOCK"]),)](x, y, 100, FACTOR=3)
    torch.testing.assert_close(y, x * 3)
    assert len(calls) == 1


@triton.jit
def scale_derived(x_ptr, y_ptr, n, GROUP: tl.constexpr, SQUARE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    width = GROUP * BLOCK  # bound from a constexpr, read by no branch test
    twice = SQUARE and BLOCK > 0  # bound from a constexpr, read by the test below
    x = tl.load(x_ptr + offs, mask=mask) * width
    if twice:
        x = x * x
    tl.store(y_ptr + offs, x, mask=mask)


def test_a_constant_only_an_assignment_reads_needs_no_specialised_analysis():
    # a local bound from GROUP decides no branch: GROUP is not a static parameter (it was, before)
    tuned = tiletune.autotune(configs=[], key=["n"])(scale_derived)
    plain = tuned.spec()
    assert "GROUP" not in plain.static_params
    assert tuned.spec({"GROUP": 8}) is plain


def test_a_constant_a_test_reads_through_a_local_is_a_static_parameter():
    tuned = tiletune.autotune(configs=[], key=["n"])(scale_derived)
    plain = tuned.spec()
    assert "SQUARE" in plain.static_params
    special = tuned.spec({"SQUARE": 0})
    assert special is not plain


def test_a_specialised_analysis_reuses_the_parse_of_the_plain_one(monkeypatch):
    # a launch constant a test reads costs a second analysis: of the same text, parsed once
    from tiletune.analysis import analyze_kernel, frontend
    from tiletune.analysis.resolver import forget_text

    parses: list = []
    real = frontend.parse
    monkeypatch.setattr(frontend, "parse", lambda *a, **k: parses.append(1) or real(*a, **k))
    forget_text()
    analyze_kernel(scale_branching)
    special = analyze_kernel(scale_branching, constants={"SQUARE": 0})
    assert len(parses) == 1
    forget_text()
    fresh = analyze_kernel(scale_branching, constants={"SQUARE": 0})
    assert len(parses) == 2
    assert special.to_dict() == fresh.to_dict()
