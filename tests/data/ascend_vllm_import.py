"""A kernel written the way vllm-ascend writes its Triton ops: Triton comes through vllm.

vllm-ascend's files import ``from vllm.triton_utils import tl, triton`` (vllm's
``triton_utils`` re-exports ``triton``, ``triton.language`` and libdevice).  Read
by the static analysis only; never imported (vllm is not installed here).
"""

from vllm.triton_utils import tl, tldevice, triton


@triton.jit
def _gate(x):
    return x * tl.sigmoid(x)


@triton.jit
def gated_rows(x_ptr, out_ptr, n_cols, stride, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    y = _gate(x) + tldevice.pow(x, 2.0)
    tl.store(out_ptr + row * stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)
