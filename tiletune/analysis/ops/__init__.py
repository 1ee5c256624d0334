"""``tl.*`` operation handlers of the body interpreter, one module per family.

Each module holds a mixin class of :class:`~tiletune.analysis.shapes.Interpreter`;
:data:`HANDLERS` maps a ``tl`` function name to its handler.
"""

from __future__ import annotations

from typing import Callable

from .creation import CreationOps
from .dot import DotOps
from .layout import LayoutOps
from .mathcast import MathOps
from .memory import MemoryOps
from .reductions import ReductionOps

__all__ = ["HANDLERS", "CreationOps", "DotOps", "LayoutOps", "MathOps", "MemoryOps", "ReductionOps"]


def _h(method: str) -> Callable:
    return lambda self, a, pos, kws, node: getattr(self, method)(a, pos, kws, node)


HANDLERS: dict[str, Callable] = {
    "arange": _h("op_arange"),
    "zeros": _h("op_zeros"),
    "full": _h("op_full"),
    "zeros_like": _h("op_zeros_like"),
    "load": _h("op_load"),
    "store": _h("op_store"),
    "atomic_cas": lambda self, a, pos, kws, node: self.op_store(a, pos, kws, node, kind="atomic"),
    "dot": _h("op_dot"),
    "dot_scaled": _h("op_dot_scaled"),
    "where": _h("op_where"),
    "cast": lambda self, a, pos, kws, node: self.op_cast(a, node),
    "to": lambda self, a, pos, kws, node: self.op_cast(a, node),
    "program_id": _h("op_program_id"),
    "num_programs": _h("op_num_programs"),
    "cdiv": _h("op_cdiv"),
    "swizzle2d": _h("op_swizzle2d"),
    "extract_slice": _h("op_extract_slice"),
    "insert_slice": _h("op_insert_slice"),
    "next_power_of_2": _h("op_next_pow2"),
    "make_block_ptr": _h("op_make_block_ptr"),
    "make_tensor_descriptor": _h("op_make_tensor_descriptor"),
    "_experimental_make_tensor_descriptor": _h("op_make_tensor_descriptor"),
    "advance": _h("op_advance"),
    "load_tensor_descriptor": lambda self, a, pos, kws, node: self.op_descriptor_call("load", pos, kws, node),
    "store_tensor_descriptor": lambda self, a, pos, kws, node: self.op_descriptor_call("store", pos, kws, node),
    "expand_dims": _h("op_expand_dims"),
    "join": _h("op_join"),
    "cat": _h("op_cat"),
    "interleave": _h("op_interleave"),
    "split": _h("op_split"),
    "ravel": _h("op_ravel"),
    "flip": _h("op_same_shape"),
    "sort": _h("op_same_shape"),
    "gather": _h("op_gather"),
    "histogram": _h("op_histogram"),
    "broadcast": _h("op_broadcast"),
    "rand": _h("op_random"),
    "randn": _h("op_random"),
    "randint": _h("op_random"),
    "randint4x": _h("op_random"),
    "rand4x": _h("op_random"),
    "randn4x": _h("op_random"),
    "philox": _h("op_philox"),
    "philox_impl": _h("op_philox"),
    "uint_to_uniform_float": _h("op_philox"),
    "pair_uniform_to_normal": _h("op_philox"),
    "inline_asm_elementwise": _h("op_inline_asm"),
}


for _n in ("atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor", "atomic_xchg"):
    HANDLERS[_n] = lambda self, a, pos, kws, node: self.op_store(a, pos, kws, node, kind="atomic")
