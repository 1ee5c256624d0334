"""bench/gpu_bench_lib.py's reference of a pair (the best known config), on hand-made round timings."""


import pytest
import triton
from bench_scripts import load_bench

lib = load_bench("gpu_bench_lib")


def _cfg(block):
    return triton.Config({"BLOCK": block}, num_warps=4, num_stages=2)


def test_the_reference_is_chosen_on_some_rounds_and_timed_on_the_others():
    a, b = _cfg(64), _cfg(128)
    timings = {"a": {"samples_ms": [1.00, 1.10, 1.00, 1.10]}, "b": {"samples_ms": [1.05, 1.05, 1.05, 1.05]}}
    got = lib.best_known(timings, {"a": ("exhaustive", a), "b": ("tiletune", b)})
    assert got["best"] == lib.config_label(a)  # chosen on the even rounds (1.00 < 1.05)
    assert got["ms"] == pytest.approx(1.10)  # timed on the odd ones, not the 1.00 that chose it
    assert got["split"] and not got["unstable"]


def test_a_disturbed_round_of_the_chosen_config_is_not_reported_as_its_time():
    """Two of three reporting rounds five times slower than the choosing rounds: a disturbance, not the
    config's time; the median of all rounds stands and the pair is flagged."""
    a, b = _cfg(64), _cfg(128)
    timings = {"a": {"samples_ms": [6.5, 33.0, 6.6, 6.7, 6.4, 33.0]}, "b": {"samples_ms": [6.9] * 6}}
    got = lib.best_known(timings, {"a": ("exhaustive", a), "b": ("tiletune", b)})
    assert got["best"] == lib.config_label(a) and got["unstable"]
    assert got["ms"] == pytest.approx(6.65)


def test_the_final_rounds_move_every_config_through_every_part_of_a_round():
    """No group is timed at the head of every round (where interference from the tunes just before lands)."""
    round_order = lib.round_order
    keys = [f"c{i}" for i in range(12)]
    orders = [round_order(keys, r, 6) for r in range(6)]
    assert all(sorted(o) == sorted(keys) for o in orders)
    for k in keys:  # each key once in each sixth of a round
        assert sorted(o.index(k) * 6 // len(keys) for o in orders) == list(range(6))
    assert round_order([], 0, 6) == [] and round_order(["a"], 3, 6) == ["a"]


def test_checkout_commit_names_head_only_when_its_files_are_what_ran(tmp_path):
    """A copy of a working tree whose git metadata is older than its files (the GPU host's copy) must not
    label its results with the old commit."""
    import subprocess

    checkout_commit = lib.checkout_commit

    (tmp_path / "tiletune").mkdir()
    (tmp_path / "tiletune" / "a.py").write_text("x = 1\n")
    git = lambda *a: subprocess.run(["git", *a], cwd=tmp_path, check=True, capture_output=True, text=True)  # noqa: E731
    git("init", "-q")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    head = git("rev-parse", "--short", "HEAD").stdout.strip()
    assert checkout_commit(tmp_path) == head
    (tmp_path / "tiletune" / "a.py").write_text("x = 2\n")
    assert checkout_commit(tmp_path) is None


def test_the_reference_times_a_short_kernel_from_a_graph_when_events_read_its_launch():
    """A flushed event pair around a few-us kernel can read the launch (the H200 reference read l2norm_fwd's
    3.5 us configs at 11-91 us): an event reading under SHORT_PROBE_MS is checked against a CUDA-graph timing
    (here an injected one: no GPU here), and a graph under GRAPH_BELOW_MS is the config's time."""
    import argparse

    graphs = []

    class Graphed(lib.Timer):
        def _graph(self, fn, rep_ms):
            graphs.append(rep_ms)
            return fn()

    t = Graphed(lib.Device(True), argparse.Namespace(screen_rep_ms=10.0, final_rep_ms=25.0))
    assert t._short(lambda: 0.0035, 0.040, 10.0) == 0.0035  # events read the launch: the graph decides
    assert t._short(lambda: 0.0150, 0.012, 10.0) == 0.0150  # under GRAPH_BELOW_MS by events: as before
    assert t._short(lambda: 0.030, 0.045, 10.0) is None  # the graph too says long enough for events
    assert t._short(lambda: None, 0.010, 10.0) is None  # not capturable: events
    assert len(graphs) == 4
    assert t._short(lambda: 0.001, lib.SHORT_PROBE_MS * 2, 10.0) is None and len(graphs) == 4  # long: no graph
