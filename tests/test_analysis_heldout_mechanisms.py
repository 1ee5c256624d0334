"""The static reader on forms found in a second round of held-out libraries (bench/results/heldout_corpus.md,
round of tritonbench, applied-ai, flash-attention, FlagAttention): tensor descriptors made in the kernel over
a cast address, addresses cast to a type the kernel is given or picks, paths Triton refuses because a name is
None, and the scalar intrinsics of ``triton.language.extra.cuda``. Each test reads a small kernel written for it
(tests/data/heldout_mechanisms, never imported by the reader); the oracle tests lower the same kernels through
Triton's front end in a child process and compare the tile shapes."""

from __future__ import annotations

import sys
from pathlib import Path

from tiletune.analysis import analyze_file
from tiletune.runtime.triton_ir import LoweringError, lower_facts_in_subprocess
from tiletune.synthesis.constraints.nvidia_defects import triton_version

DATA = Path(__file__).resolve().parent / "data"
PATTERNS = DATA / "heldout_mechanisms"


def _kernel(module: str, name: str):
    """The analysed kernel ``name`` of ``tests/data/heldout_mechanisms/<module>.py``."""
    kernels = {k.name: k for k in analyze_file(PATTERNS / f"{module}.py").kernels}
    return kernels[name]


def _tiles(spec, values: dict) -> list:
    """(kind, shape) of the kernel's tiled accesses, the shapes evaluated at ``values``."""
    return [(a.kind, tuple(d.evaluate(values) for d in a.shape)) for a in spec.accesses if a.shape]


def _ir_tiles(module: str, name: str, probes: list) -> list:
    """Per probe: (kind, shape) of the tiled memory operations in Triton's IR, or the front end's refusal."""
    sys.path.insert(0, str(DATA))
    try:
        results = lower_facts_in_subprocess(f"heldout_mechanisms.{module}", name, probes)
    finally:
        sys.path.remove(str(DATA))
    return [r if isinstance(r, LoweringError) else [(m.kind, m.shape) for m in r.memory if m.shape] for r in results]


def test_descriptor_made_over_a_cast_address_reads_the_cast_type():
    spec = _kernel("descriptor_table", "grouped_scale_fp16_kernel")
    assert spec.complete, spec.incomplete
    tiled = [(a.kind, a.dtype, a.block_ptr, [str(d) for d in a.shape]) for a in spec.accesses if a.shape]
    assert tiled == [("load", "fp16", True, ["BLOCK_M", "BLOCK_N"]), ("store", "fp16", True, ["BLOCK_M", "BLOCK_N"])]
    assert [p.name for p in spec.tiling_params] == ["BLOCK_M", "BLOCK_N"]


def test_address_cast_to_a_type_the_kernel_is_given_has_an_open_element_type():
    # tl.pointer_type(dtype), dtype a constexpr parameter: the shape is known, the element type open (as for
    # tl.zeros(..., dtype=dtype)), never guessed
    spec = _kernel("descriptor_table", "grouped_scale_kernel")
    assert spec.complete, spec.incomplete
    assert [(a.kind, a.dtype, [str(d) for d in a.shape]) for a in spec.accesses if a.shape] == [
        ("load", None, ["BLOCK_M", "BLOCK_N"]), ("store", None, ["BLOCK_M", "BLOCK_N"])]


def test_address_cast_to_a_type_picked_at_compile_time():
    # elem = tl.float8e4nv if LOW_PRECISION else tl.float16: one of two types, open to the reader
    spec = _kernel("descriptor_table", "grouped_negate_kernel")
    assert spec.complete, spec.incomplete
    assert [(a.kind, a.dtype, [str(d) for d in a.shape]) for a in spec.accesses if a.shape] == [
        ("load", None, ["BLOCK"]), ("store", None, ["BLOCK"])]


def test_integer_used_as_an_address_without_a_cast_stays_a_gap():
    spec = _kernel("descriptor_table", "grouped_unknown_address_kernel")
    assert not spec.complete
    assert any("not traced to a parameter" in r for r in spec.incomplete), spec.incomplete


def test_cast_addresses_agree_with_tritons_ir():
    sig = {"table_ptr": "*i64", "rows_ptr": "*i32", "N": "i32", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"}
    probe = {"BLOCK_M": 64, "BLOCK_N": 32}
    [ir] = _ir_tiles("descriptor_table", "grouped_scale_fp16_kernel", [{"signature": sig, "constexprs": probe}])
    assert ir == _tiles(_kernel("descriptor_table", "grouped_scale_fp16_kernel"), probe) == [
        ("load", (64, 32)), ("store", (64, 32))]
    sig = {"table_ptr": "*i64", "sizes_ptr": "*i32", "n_groups": "i32", "LOW_PRECISION": "constexpr",
           "BLOCK": "constexpr"}
    probes = [{"signature": sig, "constexprs": {"LOW_PRECISION": flag, "BLOCK": 256}} for flag in (True, False)]
    static = _tiles(_kernel("descriptor_table", "grouped_negate_kernel"), {"BLOCK": 256})
    assert _ir_tiles("descriptor_table", "grouped_negate_kernel", probes) == [static, static]
    refused = _ir_tiles("descriptor_table", "grouped_unknown_address_kernel",
                        [{"signature": {"table_ptr": "*i64", "n": "i32", "BLOCK": "constexpr"},
                          "constexprs": {"BLOCK": 256}}])
    assert isinstance(refused[0], LoweringError)  # the gap above is a kernel Triton refuses too


def test_access_through_none_is_a_path_triton_refuses_not_a_gap():
    spec = _kernel("refused_paths", "copy_either_way_kernel")
    assert spec.complete, spec.incomplete
    assert [(a.kind, a.pointer, [str(d) for d in a.shape]) for a in spec.accesses] == [
        ("load", "x_ptr", ["BLOCK_M", "BLOCK_N"]), ("store", "out_ptr", ["BLOCK_M", "BLOCK_N"])]
    refused = [n for n in spec.notes if "on None: Triton refuses this path" in n]
    assert [n.split(":")[0] for n in refused] == ["line 15", "line 16", "line 22"]


def test_path_through_none_agrees_with_tritons_ir():
    sig = {"x_ptr": "*fp16", "out_ptr": "*fp16", "M": "i32", "N": "i32", "USE_DESC": "constexpr",
           "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"}
    probes = [{"signature": sig, "constexprs": {"USE_DESC": flag, "BLOCK_M": 64, "BLOCK_N": 32}} for flag in (True, False)]
    taken, refused = _ir_tiles("refused_paths", "copy_either_way_kernel", probes)
    assert taken == _tiles(_kernel("refused_paths", "copy_either_way_kernel"), {"BLOCK_M": 64, "BLOCK_N": 32})
    assert isinstance(refused, LoweringError) and "NoneType" in str(refused)


def test_cuda_intrinsics_are_scalars_per_program():
    # tl.extra.cuda.globaltimer() (int64), smid() imported by name (int32), num_warps(), gdc_launch_dependents()
    spec = _kernel("device_clock", "timed_scale_kernel")
    assert spec.complete, spec.incomplete
    assert [(a.kind, a.pointer, [str(d) for d in a.shape]) for a in spec.accesses] == [
        ("load", "x_ptr", ["BLOCK"]), ("store", "out_ptr", ["BLOCK"]),
        ("store", "prof_ptr", []), ("store", "prof_ptr", []), ("store", "prof_ptr", [])]
    assert [p.name for p in spec.tiling_params] == ["BLOCK"]
    sig = {"x_ptr": "*fp32", "out_ptr": "*fp32", "prof_ptr": "*i64", "n": "i32", "BLOCK": "constexpr"}
    [ir] = _ir_tiles("device_clock", "timed_scale_kernel", [{"signature": sig, "constexprs": {"BLOCK": 128}}])
    assert ir == _tiles(spec, {"BLOCK": 128})


def test_helpers_called_with_values_only_jit_code_holds_are_device_functions():
    specs = {k.name: k for k in analyze_file(PATTERNS / "device_helpers.py").kernels}
    # a descriptor and a block pointer made in the caller; a tile the caller computed
    assert specs["_row_block_sum"].device_function and specs["_row_block_sum"].tile_arguments == ["acc_block", "x_desc"]
    assert specs["_scaled"].device_function and specs["_scaled"].tile_arguments == ["tile"]
    # called with scalars and pointers only (a launch could pass those), or launched by the module: kernels
    assert not specs["_copy_rows"].device_function
    assert not specs["_copy_launched"].device_function and specs["_copy_launched"].launches
    caller = specs["row_sum_kernel"]  # reads the helpers' bodies with its own values
    assert not caller.device_function and caller.complete, caller.incomplete
    assert [(a.kind, [str(d) for d in a.shape]) for a in caller.accesses if len(a.shape) == 2] == [
        ("load", ["BLOCK_M", "BLOCK_N"]), ("load", ["BLOCK_M", "BLOCK_N"]), ("store", ["BLOCK_M", "BLOCK_N"])]


def test_isinstance_tensor_descriptor_reads_the_host_descriptor_where_it_holds():
    # the tutorial form: a helper returns the host's descriptor as is, or makes one over the pointer
    spec = _kernel("maybe_descriptor", "scale_rows_kernel")
    assert spec.complete, spec.incomplete
    assert [(a.kind, a.pointer, [str(d) for d in a.shape]) for a in spec.accesses] == [
        ("load", "x_desc", ["BLOCK_M", "BLOCK_N"]), ("store", "out_ptr", ["BLOCK_M", "BLOCK_N"])]
    sig = {"x_desc": "*fp16", "out_ptr": "*fp16", "M": "i32", "N": "i32", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"}
    probes = [{"signature": dict(sig, x_desc=kind), "constexprs": {"BLOCK_M": 64, "BLOCK_N": 32}}
              for kind in ("*fp16", "tensordesc<fp16[64, 32]>")]
    static = _tiles(spec, {"BLOCK_M": 64, "BLOCK_N": 32})
    assert _ir_tiles("maybe_descriptor", "scale_rows_kernel", probes) == [static, static]


def test_paths_that_shape_a_descriptor_differently_leave_its_block_unknown():
    # not isinstance(...): the kernel makes a [BLOCK_N, BLOCK_M] descriptor, the pre-hook shapes [BLOCK_M, BLOCK_N]
    spec = _kernel("maybe_descriptor", "transposed_rows_kernel")
    assert not spec.complete
    assert spec.incomplete == ["unknown access shape: load of x_desc at line 35"]


def test_block_pointers_of_different_shapes_on_two_paths_are_not_guessed():
    # TRANSPOSED picks a [BLOCK_N, BLOCK_M] or a [BLOCK_M, BLOCK_N] block: Triton compiles one, the reader picks none
    spec = _kernel("maybe_descriptor", "flipped_block_kernel")
    assert not spec.complete
    assert spec.incomplete == ["unknown access shape: load of x_ptr at line 45"]


def test_triton_compiles_one_block_shape_per_path_of_the_flipped_block_kernel():
    sig = {"x_ptr": "*fp16", "out_ptr": "*fp16", "M": "i32", "N": "i32", "TRANSPOSED": "constexpr",
           "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"}
    probes = [{"signature": sig, "constexprs": {"TRANSPOSED": flag, "BLOCK_M": 64, "BLOCK_N": 32}}
              for flag in (True, False)]
    results = _ir_tiles("maybe_descriptor", "flipped_block_kernel", probes)
    if (triton_version() or (0, 0)) >= (3, 9):  # Triton 3.9 removed block pointers: its front end refuses both
        assert all(isinstance(r, LoweringError) and "Block pointers" in str(r) for r in results), results
        return
    loads = [[t for t in tiles if t[0] == "load"] for tiles in results]
    assert loads == [[("load", (32, 64))], [("load", (64, 32))]]
