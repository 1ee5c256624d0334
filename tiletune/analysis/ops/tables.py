"""Name tables of the ``tl.*`` operations the interpreter knows: signatures and families."""

from __future__ import annotations

TL_ROOTS = {"tl", "triton", "language", "libdevice", "math", "tle", "core"}


SIGS: dict[str, tuple[str, ...]] = {
    "arange": ("start", "end"),
    "zeros": ("shape", "dtype"),
    "full": ("shape", "value", "dtype"),
    "zeros_like": ("input", "dtype"),
    "load": ("pointer", "mask", "other", "boundary_check", "padding_option", "cache_modifier", "eviction_policy", "volatile"),
    "store": ("pointer", "value", "mask", "boundary_check", "cache_modifier", "eviction_policy"),
    "atomic_cas": ("pointer", "cmp", "val", "sem", "scope"),
    "dot": ("input", "other", "acc", "input_precision", "allow_tf32", "max_num_imprecise_acc", "out_dtype"),
    "dot_scaled": ("lhs", "lhs_scale", "lhs_format", "rhs", "rhs_scale", "rhs_format", "acc", "fast_math",
                   "lhs_k_pack", "rhs_k_pack", "out_dtype"),
    "sum": ("input", "axis", "keep_dims", "dtype"),
    "max": ("input", "axis", "return_indices", "return_indices_tie_break_left", "keep_dims"),
    "min": ("input", "axis", "return_indices", "return_indices_tie_break_left", "keep_dims"),
    "argmax": ("input", "axis", "tie_break_left", "keep_dims"),
    "argmin": ("input", "axis", "tie_break_left", "keep_dims"),
    "xor_sum": ("input", "axis", "keep_dims"),
    "reduce": ("input", "axis", "combine_fn", "keep_dims"),
    "reduce_or": ("input", "axis", "keep_dims"),
    "cumsum": ("input", "axis", "reverse"),
    "cumprod": ("input", "axis", "reverse"),
    "associative_scan": ("input", "axis", "combine_fn", "reverse"),
    "where": ("condition", "x", "y"),
    "maximum": ("x", "y", "propagate_nan"),
    "minimum": ("x", "y", "propagate_nan"),
    "clamp": ("x", "min", "max", "propagate_nan"),
    "expand_dims": ("input", "axis"),
    "join": ("a", "b"),
    "cat": ("input", "other", "can_reorder"),
    "split": ("a",),
    "interleave": ("a", "b"),
    "ravel": ("x", "can_reorder"),
    "flip": ("x", "dim"),
    "sort": ("x", "dim", "descending"),
    "gather": ("src", "index", "axis"),
    "histogram": ("input", "num_bins", "mask"),
    "broadcast": ("input", "other"),
    "make_block_ptr": ("base", "shape", "strides", "offsets", "block_shape", "order"),
    "advance": ("base", "offsets"),
    "make_tensor_descriptor": ("base", "shape", "strides", "block_shape"),
    "_experimental_make_tensor_descriptor": ("base", "shape", "strides", "block_shape"),  # its earlier, experimental name
    "program_id": ("axis",),
    "num_programs": ("axis",),
    "cdiv": ("x", "div"),
    "swizzle2d": ("i", "j", "size_i", "size_j", "size_g"),
    "extract_slice": ("ful", "offsets", "sizes", "strides"),
    "insert_slice": ("ful", "sub", "offsets", "sizes", "strides"),
    "next_power_of_2": ("n",),
    "cast": ("input", "dtype", "fp_downcast_rounding", "bitcast"),
    "to": ("input", "dtype", "fp_downcast_rounding", "bitcast"),
    "multiple_of": ("input", "values"),
    "max_contiguous": ("input", "values"),
    "max_constancy": ("input", "values"),
    "static_assert": ("cond", "msg"),
    "rand": ("seed", "offset"),
    "randn": ("seed", "offset"),
    "randint": ("seed", "offset"),
    "randint4x": ("seed", "offset"),
    "rand4x": ("seed", "offset"),
    "randn4x": ("seed", "offset"),
    "philox": ("seed", "c0", "c1", "c2", "c3", "n_rounds"),
    "philox_impl": ("c0", "c1", "c2", "c3", "k0", "k1", "n_rounds"),
    "uint_to_uniform_float": ("x",),
    "pair_uniform_to_normal": ("u1", "u2"),
    "inline_asm_elementwise": ("asm", "constraints", "args", "dtype", "is_pure", "pack"),
    "fma": ("x", "y", "z"),
    "umulhi": ("x", "y"),
    "fdiv": ("x", "y", "ieee_rounding"),
    "div_rn": ("x", "y"),
    "softmax": ("x", "ieee_rounding"),
}


for _a in ("atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor", "atomic_xchg"):
    SIGS[_a] = ("pointer", "val", "mask", "sem", "scope")


VARARG_SHAPE_OPS = {"reshape", "view", "broadcast_to", "trans", "permute"}


PASS_THROUGH = {"multiple_of", "max_contiguous", "max_constancy", "constexpr"}


#: Scalars the ``triton.language.extra.<backend>`` modules read off the device or the launch (one value per
#: program, never a tile): ``cuda.globaltimer``/``hip.memrealtime`` (clocks), ``cuda.smid`` (the multiprocessor
#: the program runs on), ``cuda.num_warps``/``cuda.num_threads`` (the launch's num_warps, a compile-time int).
DEVICE_SCALARS: dict[str, str] = {
    "globaltimer": "int64",
    "memrealtime": "int64",
    "smid": "int32",
    "num_warps": "int32",
    "num_threads": "int32",
}


NO_VALUE = {
    "gdc_wait",  # ``cuda.gdc_wait()``/``gdc_launch_dependents()``: grid dependency control, no value
    "gdc_launch_dependents",
    "device_assert",
    "static_print",
    "device_print",
    "debug_barrier",
    "assume",
    "print",
    "static_assert",
}


REDUCTIONS = {"sum", "max", "min", "argmax", "argmin", "xor_sum", "reduce", "reduce_or"}


SCANS = {"cumsum", "cumprod", "associative_scan"}


BOOL_MATH = {"isnan", "isinf", "signbit", "isfinited", "finitef", "isfinite"}


INT_KEEP_MATH = {"abs", "floor", "ceil", "trunc", "round", "rint", "umulhi"}


ELEMENTWISE = {
    "exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sqrt", "sqrt_rn", "rsqrt", "sin", "cos", "tan",
    "tanh", "sinh", "cosh", "asin", "acos", "atan", "atan2", "asinh", "acosh", "atanh", "abs", "sigmoid",
    "erf", "erfc", "floor", "ceil", "trunc", "round", "rint", "nearbyint", "pow", "fmod", "copysign",
    "fast_expf", "fast_exp", "fast_logf", "fast_dividef", "fast_tanhf", "fast_powf", "fma", "umulhi",
    "fdiv", "div_rn", "cbrt", "hypot", "isnan", "isinf", "signbit", "maximum", "minimum", "clamp", "softmax",
    "exp10", "rcp", "rcp_rn", "fmax", "fmin", "llrint", "neg", "square",
}
