"""Candidates compiled in forked children land in Triton's cache, where this process reads them back."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from triton.backends.compiler import GPUTarget

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    cache = tmp_path_factory.mktemp("triton-cache")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.update(TRITON_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, str(ROOT / "tests" / "compile_children_worker.py")],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_a_child_compile_is_read_back_not_compiled_again(compiled):
    for k in ("b256w4", "b1024w8", "b512w2"):
        child = compiled["children"][k]
        assert child is not None and child["cpu_s"] > 0
        assert compiled[k]["hash"] == child["hash"]
    assert compiled["b256w4"]["hash"] != compiled["b1024w8"]["hash"]
    assert compiled["new_cache_entries"] == []  # the parent's compiles were cache hits


def test_a_sessions_first_batch_waits_for_its_own_forks_only(compiled):
    """The first batch (one compile) got one child, forked before it was handed over; the session's other
    two children were forked afterwards, while it compiled, and serve the later batches with it."""
    assert compiled["forked"] == {"pool_sizes": [1, 2], "size": 3, "children": 3}
    # batches of 1, 1 and 3 compiles, each handed to the pool with the most idle children: the second to the
    # second pool, the third's 3 over both
    assert compiled["spread"] == {"compiled": True, "dispatched": [2, 3]}


def test_a_sessions_children_compile_its_later_batches(compiled):
    assert compiled["second_batch_same_children"]
    assert compiled["child_frozen_objects"] > 1000  # the parent's heap is out of the child's collector's reach
    child = compiled["children"]["b512w2"]
    assert child is not None and compiled["b512w2"]["hash"] == child["hash"]


def test_children_are_forked_from_a_process_whose_compiler_is_warm(compiled):
    """Before the first fork the parent compiled a one-line kernel for the target: children inherit a compiler
    past its once-per-process set-up instead of each paying it in their first compile."""
    assert compiled["child_warmed"] == {repr(GPUTarget("cuda", 90, 32)): True}


def test_a_batchs_compile_latency_leaves_out_the_sessions_one_time_set_up(compiled):
    """The first batch prices every later wave of compiles: the warm-up and the forks it waited for are not
    part of a wave."""
    assert compiled["setup"]["warm_s"] > 0
    assert compiled["setup"]["wall_after_setup"]
    # the wave a descent round is priced with: until half the batch's compiles ended, not its slowest
    assert compiled["setup"]["typical_within_wall"]


def test_the_heap_is_frozen_while_children_share_it_and_unfrozen_after(compiled):
    """A full collection in this process while forked children share its pages would copy every page it
    touches (copy-on-write): the heap is frozen while a session's children live, unfrozen when it closes; a
    heap the program froze itself is left as it is."""
    heap = compiled["heap"]
    assert heap["during"] > 1000 and heap["after"] == 0
    # still frozen (a frozen object freed by its reference count leaves the count: not exactly equal)
    assert heap["program_frozen"] > 1000 and heap["program_after"] > heap["program_frozen"] // 2


def test_the_warm_up_compiles_once_per_process_and_target():
    from tiletune.runtime.compile_workers import warm_compiler

    target = GPUTarget("cuda", 80, 32)
    first = warm_compiler(target)
    assert first is not None and first > 0
    assert warm_compiler(target) is None


def test_a_batch_says_where_its_child_compiles_spent_their_wall_time(compiled):
    spans = compiled["spans"]
    assert {"dispatch", "compile"} <= set(spans) <= {"dispatch", "compile", "return"}
    assert spans["compile"] > 0 and spans["dispatch"] >= 0 and spans.get("return", 0.0) >= 0


def test_a_batch_names_its_slowest_child_compile(compiled):
    """A round that ran past its price shows which compile it waited for (search_facts["batches"])."""
    job, seconds = compiled["slowest"]
    assert job in ("b256w4", "b1024w8", "twin") and 0 < seconds <= compiled["spans"]["compile"] + 1e-9


def test_two_jobs_of_one_compile_share_the_child(compiled):
    assert compiled["children"]["twin"] == compiled["children"]["b256w4"]


def test_a_failing_compile_is_left_to_the_caller_who_sees_the_real_error(compiled):
    assert compiled["children"]["bad"] is None
    assert "power of 2" in compiled["bad"]["error"] or "arange" in compiled["bad"]["error"], compiled["bad"]


def test_a_timing_taken_while_children_compile_counts_as_contended(compiled):
    """A launch timed while the batch's children compile may fall behind the GPU (2.1x on the H100 host):
    the compile queue reports it contended, and a timing after the children finished as quiet."""
    assert compiled["contention"] == {"during_batch": True, "after_batch": False, "busy_after": False}


def test_processes_switch_off_by_environment(monkeypatch):
    from tiletune.runtime.compile_workers import processes_enabled

    monkeypatch.setenv("TILETUNE_COMPILE_PROCESSES", "0")
    assert not processes_enabled()
    monkeypatch.setenv("TILETUNE_COMPILE_PROCESSES", "1")
    assert processes_enabled() == (os.name == "posix")
