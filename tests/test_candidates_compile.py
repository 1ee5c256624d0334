"""Every h100 candidate synthesised for every fixture compiles for sm_90 without running out of resources.

All jobs go to :func:`~tiletune.runtime.offline_compile.compile_in_subprocess`
in one call (identical jobs deduplicated), compiled on the CPU for
``GPUTarget("cuda", 90, 32)``, specialised as a launch would be, from each
fixture's ``BENCH_SHAPES`` with ``make_args(shape, device="meta")``.

``TILETUNE_COMPILE_TOP_K`` sets how many candidates per kernel and shape are
compiled (default 16, all of them: 701 distinct jobs for 16 fixtures x 3
shapes, ~280 s on 2 cores with a cold Triton cache, ~110 s warm).
"""

import os

import pytest

import fixtures
from tiletune.runtime.offline_compile import CompileJob, compile_in_subprocess
from tiletune.synthesis import synthesize
from tests.fixture_problems import kernel_spec, launch_constants, synthesis_inputs

TOP_K = int(os.environ.get("TILETUNE_COMPILE_TOP_K", "16"))


def _jobs():
    jobs, origin, seen = [], [], set()
    for name in fixtures.NAMES:
        fx = fixtures.load(name)
        kname, spec = kernel_spec(fx)
        for shape in fx.BENCH_SHAPES:
            constants = launch_constants(fx, shape)
            shape_spec = kernel_spec(fx, constants)[1] if constants else spec
            args, shapes, dtypes, fixed = synthesis_inputs(fx, shape_spec, shape)
            result = synthesize(shape_spec, shapes, dtypes, "h100", fixed=fixed, top_k=TOP_K)
            for c in result.candidates:
                job = CompileJob(
                    file=fx.__file__,
                    kernel=kname,
                    args=args,
                    constexprs=dict(c.kwargs),
                    num_warps=c.num_warps,
                    num_stages=c.num_stages,
                )
                key = (fx.__file__, kname, repr(sorted(args.items())), repr(sorted(c.kwargs.items())), c.num_warps, c.num_stages)
                if key in seen:
                    continue
                seen.add(key)
                jobs.append(job)
                origin.append((name, shape, c))
    return jobs, origin


@pytest.mark.slow
def test_every_h100_candidate_compiles_for_sm90():
    jobs, origin = _jobs()
    assert jobs
    results = compile_in_subprocess(jobs)
    assert len(results) == len(jobs)
    oor = [(o[0], o[1], o[2].kwargs, o[2].num_warps, o[2].num_stages, r.shared, r.error) for o, r in zip(origin, results) if r.out_of_resources]
    assert not oor, f"{len(oor)} of {len(jobs)} candidates run out of resources: {oor[:5]}"
    failed = [(o[0], o[2].kwargs, o[2].num_warps, o[2].num_stages, (r.error or "")[-300:]) for o, r in zip(origin, results) if not r.ok]
    assert not failed, f"{len(failed)} of {len(jobs)} candidates fail to compile: {failed[:5]}"
    for r in results:
        assert r.shared is not None and r.shared <= 232448  # sm_90's opt-in shared memory per block
