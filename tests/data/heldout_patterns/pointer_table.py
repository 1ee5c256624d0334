"""A kernel that reads rows through a table of base addresses, each cast to the element type of
another parameter (a per-device buffer list gathered into one output)."""
import triton
import triton.language as tl


@triton.jit
def gather_rows_kernel(bases_ptr, which_ptr, out_ptr, row_len, n_rows, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    src_index = tl.load(which_ptr + pid)
    row_base = tl.load(bases_ptr + src_index).to(tl.pointer_type(out_ptr.dtype.element_ty))
    for start in range(0, row_len, BLOCK):
        offs = start + cols
        vals = tl.load(row_base + offs, mask=offs < row_len)
        tl.store(out_ptr + pid * row_len + offs, vals, mask=offs < row_len)
