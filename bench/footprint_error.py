"""How close is the predicted shared memory to what the compiler allocates?

For every fixture, a few tilings (EXAMPLE_CONFIG and larger ones from its
HAND_CONFIGS) at num_stages 1-4 and num_warps 4 are compiled for sm_90 on the
CPU (``tiletune.runtime.offline_compile``, specialised as a launch with the
fixture's first BENCH_SHAPES arguments), and ``metadata.shared`` is compared
with ``KernelSpec.footprint.shared_bytes`` evaluated at the same values.

Run ``python bench/footprint_error.py`` to print the table and write
``bench/results/footprint_error.json`` and ``.md``;
``tests/test_footprint_compile.py`` runs the same code and bounds the error.

Relative error is ``|predicted - actual| / max(actual, 1024)``: kernels that
use no shared memory are judged in units of 1 KiB rather than divided by 0.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterable, Optional

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

RESULTS = ROOT / "bench" / "results"
STAGES = (1, 2, 3, 4)
NUM_WARPS = 4
#: Tilings per fixture: EXAMPLE_CONFIG plus up to this many distinct HAND_CONFIGS tilings.
HAND_PER_FIXTURE = 3
#: Bytes per element of the dtype names ``describe_args`` produces.
ARG_DTYPE_BYTES = {
    "fp16": 2, "bf16": 2, "fp32": 4, "fp64": 8, "i8": 1, "u8": 1, "i16": 2, "i32": 4, "i64": 8,
    "i1": 1, "fp8e4nv": 1, "fp8e5": 1,
}


@dataclass
class Case:
    """One compile: fixture, tiling, stages, the prediction and the compiler's figure."""

    fixture: str
    kernel: str
    config: dict
    num_stages: int
    num_warps: int
    has_dot: bool
    predicted: Optional[int] = None
    actual: Optional[int] = None
    error: Optional[str] = None

    @property
    def abs_error(self) -> Optional[int]:
        if self.predicted is None or self.actual is None:
            return None
        return self.predicted - self.actual

    @property
    def rel_error(self) -> Optional[float]:
        if self.abs_error is None:
            return None
        return abs(self.abs_error) / max(self.actual, 1024)


def tilings(fixture: Any, per_fixture: int = HAND_PER_FIXTURE) -> list[dict]:
    """EXAMPLE_CONFIG, then ``per_fixture`` distinct HAND_CONFIGS tilings: the two largest, then the smallest."""
    out = [dict(fixture.EXAMPLE_CONFIG)]
    hand = []
    for c in fixture.HAND_CONFIGS:
        kw = {k: v for k, v in c.kwargs.items() if k in fixture.EXAMPLE_CONFIG}
        if kw and kw not in hand and kw not in out:
            hand.append(kw)
    hand.sort(key=lambda kw: -_volume(kw))
    # the largest two (where shared memory matters), then the smallest
    order = hand[:2] + hand[-1:] + hand[2:-1]
    picked: list[dict] = []
    for kw in order:
        if len(picked) < per_fixture and kw not in picked:
            picked.append(kw)
    return out + picked


def _volume(kw: dict) -> int:
    v = 1
    for x in kw.values():
        v *= int(x)
    return v


def _prepare(names: Iterable[str], stages: Iterable[int], per_fixture: int):
    import fixtures
    from tiletune.analysis import analyze_file
    from tiletune.synthesis.alignment import alignment_params, bind_alignment
    from tiletune.runtime.offline_compile import CompileJob, describe_args

    cases: list[Case] = []
    jobs = []
    for name in names:
        fx = fixtures.load(name)
        kernel_name = fx.KERNEL.__name__ if hasattr(fx.KERNEL, "__name__") else fx.KERNEL.fn.__name__
        file = str(ROOT / "fixtures" / f"{name}.py")
        spec = analyze_file(file).kernel(kernel_name)
        args = describe_args(fx.make_args(fx.BENCH_SHAPES[0], device="meta"))
        env_base: dict[str, int] = {}
        for k, v in args.items():
            if isinstance(v, dict) and "ptr" in v:
                env_base[f"esize_{k}"] = ARG_DTYPE_BYTES[v["ptr"]]
            elif isinstance(v, bool):
                env_base[k] = int(v)
            elif isinstance(v, int):
                env_base[k] = v
        attr = _module_attr(fx)
        for config in tilings(fx, per_fixture):
            for s in stages:
                case = Case(name, kernel_name, config, s, NUM_WARPS, bool(spec.dots))
                try:
                    env = {**env_base, **config, "num_stages": s, "wgmma": 1, "num_warps": NUM_WARPS}  # sm_90
                    # which loads Triton pipelines at the fixture's integers (tiletune.synthesis.alignment)
                    env.update(bind_alignment(alignment_params([spec.footprint.shared_bytes]), env_base, name)[0])
                    case.predicted = spec.footprint.shared_bytes.evaluate(env)
                except KeyError as exc:
                    case.error = f"prediction needs symbol {exc}"
                cases.append(case)
                jobs.append(CompileJob(file=file, kernel=attr, args=args, constexprs=config, num_warps=NUM_WARPS, num_stages=s))
    return cases, jobs


def _module_attr(fx: Any) -> str:
    for k, v in vars(fx).items():
        if v is fx.KERNEL and k != "KERNEL":
            return k
    return "KERNEL"


def run(names: Optional[Iterable[str]] = None, stages: Iterable[int] = STAGES, per_fixture: int = HAND_PER_FIXTURE) -> list[Case]:
    """Compile every case in one worker process and fill in ``actual``."""
    import fixtures
    from tiletune.runtime.offline_compile import compile_in_subprocess

    cases, jobs = _prepare(list(names or fixtures.NAMES), list(stages), per_fixture)
    results = compile_in_subprocess(jobs)
    for case, res in zip(cases, results):
        if res.shared is not None:
            case.actual = res.shared
        if not res.ok and res.shared is None:
            case.error = (res.error or "compile failed").splitlines()[-1][:200]
    return cases


def _quantile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    if not xs:
        return float("nan")
    i = min(len(xs) - 1, max(0, int(round(q * (len(xs) - 1)))))
    return xs[i]


def summarize(cases: list[Case]) -> dict:
    """Error distribution overall, for dot kernels and per fixture."""

    def stats(cs: list[Case]) -> dict:
        rel = [c.rel_error for c in cs if c.rel_error is not None]
        ab = [abs(c.abs_error) for c in cs if c.abs_error is not None]
        return {
            "cases": len(cs),
            "compared": len(rel),
            "median_rel": statistics.median(rel) if rel else None,
            "p90_rel": _quantile(rel, 0.9) if rel else None,
            "max_rel": max(rel) if rel else None,
            "median_abs": statistics.median(ab) if ab else None,
            "max_abs": max(ab) if ab else None,
        }

    per = {}
    for name in dict.fromkeys(c.fixture for c in cases):
        per[name] = stats([c for c in cases if c.fixture == name])
    return {
        "all": stats(cases),
        "dot_kernels": stats([c for c in cases if c.has_dot]),
        "other_kernels": stats([c for c in cases if not c.has_dot]),
        "per_fixture": per,
    }


def table(cases: list[Case]) -> str:
    """A Markdown table of every case."""
    lines = [
        "| fixture | tiling | stages | predicted B | compiler B | error B | rel |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for c in cases:
        cfg = ",".join(f"{k}={v}" for k, v in c.config.items())
        rel = "" if c.rel_error is None else f"{c.rel_error:.1%}"
        err = "" if c.abs_error is None else str(c.abs_error)
        actual = c.actual if c.actual is not None else (c.error or "")
        lines.append(f"| {c.fixture} | {cfg} | {c.num_stages} | {c.predicted} | {actual} | {err} | {rel} |")
    return "\n".join(lines)


def report(cases: list[Case], seconds: float) -> str:
    """The summary as text (also the head of the Markdown file)."""
    s = summarize(cases)

    def fmt(d: dict) -> str:
        if not d["compared"]:
            return "no cases"
        return (
            f"{d['compared']}/{d['cases']} compared; rel median {d['median_rel']:.1%}, p90 {d['p90_rel']:.1%}, "
            f"max {d['max_rel']:.1%}; abs median {d['median_abs']:.0f} B, max {d['max_abs']:.0f} B"
        )

    out = [
        f"shared-memory prediction vs triton.compile (sm_90, num_warps {NUM_WARPS}, {seconds:.0f} s)",
        f"  all:   {fmt(s['all'])}",
        f"  dot:   {fmt(s['dot_kernels'])}",
        f"  other: {fmt(s['other_kernels'])}",
    ]
    for name, d in s["per_fixture"].items():
        out.append(f"  {name:18} {fmt(d)}")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    names = argv or None
    t0 = time.perf_counter()
    cases = run(names)
    seconds = time.perf_counter() - t0
    text = report(cases, seconds)
    print(text)
    print()
    print(table(cases))
    RESULTS.mkdir(parents=True, exist_ok=True)
    data = {
        "summary": summarize(cases),
        "seconds": seconds,
        "cases": [{**asdict(c), "abs_error": c.abs_error, "rel_error": c.rel_error} for c in cases],
    }
    (RESULTS / "footprint_error.json").write_text(json.dumps(data, indent=2) + "\n")
    (RESULTS / "footprint_error.md").write_text(
        "# Shared-memory footprint error\n\nGenerated by `python bench/footprint_error.py`.\n\n```\n"
        + text
        + "\n```\n\n"
        + table(cases)
        + "\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
