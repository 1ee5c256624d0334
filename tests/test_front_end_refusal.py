"""Candidates Triton's front end refuses are never timed, with the screen moved into the compile children.

Where compile children compile every batch of a tune, the candidates stage lowers nothing (issue 25: the
screen was 75% of a first tune's candidates stage, serial, before any compile began): each child runs
Triton's front end first and reports a refusal before any backend work (``tests/front_end_refusal_worker.py``
runs real children compiling for sm_90), and the measure stage drops the candidate with Triton's message and
measures the next ranked one instead.

Here (TRITON_INTERPRET=1, conftest.py) nothing compiles and there are no children, so the measure stage is
given the children's verdicts from the same front end: each job of a batch is lowered by the IR oracle (a
subprocess without the interpreter, ``TILETUNE_IR_ORACLE=1``), and a refused one's compile future carries the
:class:`~tiletune.runtime.compile_workers.FrontEndRefusal` a child's would.  The kernels are real
(``tests/data/ir_kernels/kernels.py``): a ``tl.static_assert`` on a tile's shape that the static reading
cannot evaluate, so synthesis proposes tiles Triton refuses.
"""

from __future__ import annotations

import contextlib
import sys
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path

import pytest
import torch
import triton

from tiletune.errors import TuningError

DATA = Path(__file__).resolve().parent / "data"


def _grid(n):
    return lambda meta: (triton.cdiv(n, meta["BLOCK"]),)


@pytest.fixture
def kernels(monkeypatch, tmp_path):
    monkeypatch.setenv("TILETUNE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TILETUNE_IR_ORACLE", "1")  # an interpreted kernel is lowered in a child process
    monkeypatch.delenv("TILETUNE_SEARCH", raising=False)
    monkeypatch.syspath_prepend(str(DATA))
    from ir_kernels import kernels as mod

    for tuner in (mod.shape_capped_copy_kernel, mod.tiny_tile_copy_kernel):  # module-level: each test tunes anew
        tuner.cache.clear()
        tuner._fast.clear()
        monkeypatch.setattr(tuner, "search", None)
        monkeypatch.setattr(tuner, "verbose", False)
    return mod


@pytest.fixture
def children(monkeypatch):
    """The compile children's verdicts (see the module docstring); returns the configs each batch compiled."""
    from tiletune.runtime import ir_oracle, measure, parallel_compile
    from tiletune.runtime.compile_workers import FrontEndRefusal

    monkeypatch.setattr(parallel_compile, "front_end_in_children", lambda: True)
    real = measure.compiling
    compiled: list = []
    state: dict = {}

    @contextlib.contextmanager
    def compiling(jobs, **kwargs):
        with real(jobs, **kwargs) as queue:
            configs = {k: job.__defaults__[0] for k, job in jobs.items()}  # each job's config (measure.py)
            refused = ir_oracle.refused_configs(state["kernel"], state["bound"],
                                                [dict(c.kwargs) for c in configs.values()])
            for pos, (k, config) in enumerate(configs.items()):
                compiled.append(config)
                if pos in refused:
                    fut: Future = Future()
                    fut.set_exception(FrontEndRefusal(refused[pos]))
                    queue.futures[k] = fut
            yield queue

    monkeypatch.setattr(measure, "compiling", compiling)
    return compiled, state


def _policy():
    from tiletune.runtime.search import SEARCH_MODES

    # a first batch of 3 and no descent (interpreter times mean nothing): the refills are what this shows
    return replace(SEARCH_MODES["default"], name="first-batch", first_min=3, first_max=3, descent=False)


def test_refused_candidates_are_never_timed_and_the_next_ranked_are_measured_instead(kernels, children, capsys):
    compiled, state = children
    tuner = kernels.shape_capped_copy_kernel
    tuner.verbose, tuner.search = True, _policy()
    n = 16384  # ranked BLOCK 128, 64, 32, 16, 256, ...: the model's first tile is one Triton refuses
    x = torch.arange(n, dtype=torch.float32)
    y = torch.zeros(n, dtype=torch.float32)
    state.update(kernel=tuner, bound={"x_ptr": x, "y_ptr": y, "n": n})
    tuner[_grid(n)](x, y, n)
    assert torch.equal(y, x)  # the tune succeeded and the winner ran
    out = capsys.readouterr().out
    # the candidates stage lowered nothing: the children screen
    assert "front end screens each candidate in its compile child" in out
    assert "front end lowered" not in out
    timed = [c.kwargs["BLOCK"] for c in tuner.configs_timings]
    assert timed and max(timed) <= 64  # nothing Triton refuses was timed
    refused = [c for c in compiled if c.kwargs["BLOCK"] > 64]
    assert refused, "synthesis proposed no tile Triton refuses: the test shows nothing"
    assert "before timing: Triton refuses it" in out and "a tile of at most 64 elements" in out
    # the first batch (3 tilings, one refused) was refilled with the next ranked candidate: 3 were timed
    assert len({(c.kwargs["BLOCK"], c.num_warps) for c in tuner.configs_timings}) >= 3
    # a refused tile is dropped with every candidate of that tile: none of them compiled a second time
    blocks = [c.kwargs["BLOCK"] for c in refused]
    assert len(blocks) == len(set(blocks))
    assert tuner.search_facts["refused"] >= len(refused)  # the log's search_facts count them


def test_every_candidate_refused_is_the_same_clear_error(kernels, children):
    _, state = children
    tuner = kernels.tiny_tile_copy_kernel
    tuner.search = _policy()
    n = 4096
    x = torch.arange(n, dtype=torch.float32)
    y = torch.zeros(n, dtype=torch.float32)
    state.update(kernel=tuner, bound={"x_ptr": x, "y_ptr": y, "n": n})
    with pytest.raises(TuningError, match=r"Triton refuses every synthesized candidate \(first: .*at most 2 elements"):
        tuner[_grid(n)](x, y, n)


def test_without_compile_children_the_candidates_stage_still_screens(kernels, capsys):
    # the interpreter: no children compile, so the screen runs here, before anything is measured
    tuner = kernels.shape_capped_copy_kernel
    tuner.verbose = True
    n = 16384
    x = torch.arange(n, dtype=torch.float32)
    y = torch.zeros(n, dtype=torch.float32)
    tuner[_grid(n)](x, y, n)
    assert torch.equal(y, x)
    out = capsys.readouterr().out
    assert "front end lowered" in out and "before timing: Triton refuses it" in out
    assert "front end screens each candidate in its compile child" not in out
    assert max(c.kwargs["BLOCK"] for c in tuner.configs_timings) <= 64


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
