"""Activation kernels that use the re-exported math helpers of the package."""
import triton
import triton.language as tl

from . import exp, math_shim


@triton.jit
def softplus_cube_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    soft = tl.log(1.0 + exp(x))
    tl.store(y_ptr + offs, math_shim.pow(soft, 3.0), mask=offs < n)


@triton.jit
def _erf_fallback(x):
    # Abramowitz-Stegun 7.1.26 style approximation, for math libraries without erf
    t = 1.0 / (1.0 + 0.3275911 * tl.abs(x))
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    y = 1.0 - poly * tl.exp(-x * x)
    return tl.where(x >= 0, y, -y)


gauss_error = getattr(math_shim, "erf", _erf_fallback)


@triton.jit
def gelu_erf_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, 0.5 * x * (1.0 + gauss_error(x * 0.7071067811865476)), mask=offs < n)


_power = math_shim.pow


@triton.jit
def softsign_power_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, _power(x / (1.0 + tl.abs(x)), 1.5), mask=offs < n)
