"""PyTorch's elementwise float32 kernels where a numpy formula misses its bits: sigmoid, the
activations (silu, softplus, gelu, elu, logsigmoid, mish) and their backwards, sinh, cosh,
expm1, log1p and tensor ** tensor.

Each follows PyTorch 2.13's CPU kernel: its vector lambda (Sleef's functions, engine/sleef.py)
over whole pairs of 8-float vectors and its scalar lambda (glibc's, engine/libm.py) over the
elements left over, split as cpu_kernel_vec splits them (numerics.vectorized_loop). Where GCC
fused a multiply into the add after it (the build has FMA), so does the formula here; which
one it fused differs between a kernel's two lambdas, and was measured. logsigmoid, expm1 and
log1p run vectors throughout (a partial vector takes the tail); a contiguous float32 gelu is
oneDNN's (engine/onednn.py). On random inputs of 1 to 40000 elements every bit matches
(tests/engine/test_numerics.py keeps such cases). Other dtypes keep the numpy formulas.
"""

from __future__ import annotations

import math

import numpy as np

from engine import libm, onednn, sleef
from engine.numerics import fused_multiply_add as _fma
from engine.numerics import vectorized_loop

_F = np.float32
_ONE = _F(1)
_HALF = _F(0.5)


def sigmoid(a: np.ndarray) -> np.ndarray:
    """1 / (1 + e^-x): for very negative x, e^-x overflows and the result is exactly 0."""
    with np.errstate(over="ignore"):
        if a.dtype != np.float32:
            return (1 / (1 + np.exp(-a))).astype(a.dtype, copy=False)
        return vectorized_loop(
            lambda x: _ONE / (_ONE + sleef.exp(-x)), lambda x: _ONE / (_ONE + libm.exp(-x)), a
        )


def silu(a: np.ndarray) -> np.ndarray:
    """x / (1 + e^-x), one division (not x · sigmoid(x))."""
    with np.errstate(over="ignore"):
        if a.dtype != np.float32:
            return a / (a.dtype.type(1) + np.exp(-a))
        return vectorized_loop(
            lambda x: x / (_ONE + sleef.exp(-x)), lambda x: x / (_ONE + libm.exp(-x)), a
        )


def silu_backward(grad: np.ndarray, a: np.ndarray) -> np.ndarray:
    """grad · σ · (1 + x(1 - σ)), the inner multiply-add fused in both lambdas."""
    if a.dtype != np.float32:
        s = sigmoid(a)
        return grad * s * (1 + a * (1 - s))

    def kernel(exp):
        def slope(g, x):
            s = _ONE / (_ONE + exp(-x))
            return g * s * _fma(x, _ONE - s, _ONE)

        return slope

    with np.errstate(over="ignore"):
        return vectorized_loop(kernel(sleef.exp), kernel(libm.exp), grad, a)


def softplus(a: np.ndarray, beta, threshold) -> np.ndarray:
    """log(1 + e^(βx)) / β, or x itself where βx is past the threshold."""
    kind = a.dtype.type
    beta, threshold = kind(beta), kind(threshold)

    def kernel(exp, log1p):
        def soft(x):
            scaled = x * beta
            return np.where(scaled > threshold, x, log1p(exp(scaled)) / beta)

        return soft

    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        if a.dtype != np.float32:
            return kernel(np.exp, np.log1p)(a)
        return vectorized_loop(kernel(sleef.exp, sleef.log1p), kernel(libm.exp, libm.log1p), a)


def softplus_backward(grad: np.ndarray, a: np.ndarray, beta, threshold) -> np.ndarray:
    """grad · z / (z + 1) with z = e^(βx), or grad where βx is past the threshold."""
    kind = a.dtype.type
    beta, threshold = kind(beta), kind(threshold)

    def kernel(exp):
        def slope(g, x):
            scaled = x * beta
            z = exp(scaled)
            return np.where(scaled > threshold, g, g * z / (z + kind(1)))

        return slope

    with np.errstate(over="ignore", invalid="ignore"):
        if a.dtype != np.float32:
            return kernel(np.exp)(grad, a)
        return vectorized_loop(kernel(sleef.exp), kernel(libm.exp), grad, a)


# gelu's constants, as PyTorch rounds them to float
_SQRT_HALF = _F(math.sqrt(0.5))
_PDF_SCALE = _F(2 / math.sqrt(math.pi) * math.sqrt(0.5) * 0.5)  # 1/√(2π)
_GELU_BETA = math.sqrt(2 / math.pi)  # tanh form: β(x + κx³); Python floats for other dtypes
_GELU_KAPPA = 0.044715
_BETA, _KAPPA = _F(_GELU_BETA), _F(_GELU_KAPPA)
_THREE_KAPPA = _F(3) * _KAPPA


def gelu(a: np.ndarray, approximate: str) -> np.ndarray:
    """x/2 · (1 + erf(x/√2)), or x/2 · (1 + tanh(β(x + κx³))) with approximate='tanh'."""
    if a.dtype != np.float32:
        if approximate == "tanh":
            return 0.5 * a * (1 + np.tanh(_GELU_BETA * (a + _GELU_KAPPA * a**3)))
        return (a * 0.5 * (1 + _erf64(a * math.sqrt(0.5)))).astype(a.dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        if approximate == "tanh":
            return vectorized_loop(_gelu_tanh(sleef.tanh), _gelu_tanh(libm.tanh), a)
        if _onednn_takes(a):
            return onednn.gelu(a)
        return vectorized_loop(
            lambda x: x * _HALF * (_ONE + _vector_erf(x * _SQRT_HALF)),
            lambda x: x * _HALF * (_ONE + libm.erf(x * _SQRT_HALF)),
            a,
        )


def _gelu_tanh(tanh):
    def gelu(x):
        inner = _BETA * _fma(_KAPPA, x * x * x, x)
        return _HALF * x * (_ONE + tanh(inner))

    return gelu


def gelu_backward(grad: np.ndarray, a: np.ndarray, approximate: str) -> np.ndarray:
    """gelu's slope times grad: Φ(x) + x·φ(x), or the tanh form's derivative."""
    if a.dtype != np.float32:
        if approximate == "tanh":
            inner = np.tanh(_GELU_BETA * (a + _GELU_KAPPA * a**3))
            slope = 0.5 * (1 + inner) + 0.5 * a * (1 - inner * inner) * _GELU_BETA * (
                1 + 3 * _GELU_KAPPA * a * a
            )
        else:
            cdf = 0.5 * (1 + _erf64(a * math.sqrt(0.5)))
            slope = cdf + a * np.exp(-0.5 * a * a) / math.sqrt(2 * math.pi)
        return grad * slope.astype(a.dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        if approximate == "tanh":
            return vectorized_loop(
                _gelu_tanh_slope(sleef.tanh, vector=True),
                _gelu_tanh_slope(libm.tanh, vector=False),
                grad,
                a,
            )
        if _onednn_takes(a):
            return onednn.gelu_backward(grad, a)

        def vector(g, x):
            cdf = _HALF * (_ONE + _vector_erf(x * _SQRT_HALF))
            pdf = _PDF_SCALE * sleef.exp(x * x * _F(-0.5))
            return g * _fma(x, pdf, cdf)

        def scalar(g, x):  # here GCC fused the cdf's halving instead
            pdf = _PDF_SCALE * libm.exp(x * x * _F(-0.5))
            return g * _fma(_HALF, _ONE + libm.erf(x * _SQRT_HALF), x * pdf)

        return vectorized_loop(vector, scalar, grad, a)


def _gelu_tanh_slope(tanh, vector: bool):
    def slope(g, x):
        square = x * x
        cube = x * x * x if vector else square * x
        t = tanh(_BETA * _fma(_KAPPA, cube, x))
        inner_slope = _BETA * _fma(_THREE_KAPPA, square, _ONE)
        tanh_slope = _fma(-t, t, _ONE)
        return g * (_HALF * (_ONE + t) + _HALF * x * tanh_slope * inner_slope)

    return slope


def _onednn_takes(a: np.ndarray) -> bool:
    """PyTorch's use_mkldnn: a contiguous float32 tensor of more than one element."""
    return a.flags.c_contiguous and a.size > 1


_ERF_A = tuple(_F(c) for c in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592))
_ERF_P = _F(0.3275911)


def _vector_erf(x: np.ndarray) -> np.ndarray:
    """Vectorized<float>::erf (PyTorch's AVX2 code): Abramowitz and Stegun 7.1.26 around
    Sleef's exp, each multiply-add fused."""
    t = _ONE / _fma(_ERF_P, np.abs(x), _ONE)
    poly = _ERF_A[0]
    for c in _ERF_A[1:]:
        poly = _fma(poly, t, c)
    value = _fma(-sleef.exp(-(x * x)) * t, poly, _ONE)
    return np.where(np.signbit(x), -value, value)


_erf_each = np.frompyfunc(math.erf, 1, 1)  # numpy has no erf; math.erf is the C library's


def _erf64(a):
    return np.asarray(_erf_each(np.asarray(a, dtype=np.float64)), dtype=np.float64)


def elu(a: np.ndarray, alpha, scale, input_scale) -> np.ndarray:
    """x·scale above 0, (e^(x·input_scale) - 1)·alpha·scale at and below (expm1, not exp - 1)."""
    kind = a.dtype.type
    negative, positive, inner = kind(alpha) * kind(scale), kind(scale), kind(input_scale)
    if a.dtype != np.float32:
        # only the negative side goes through exp: the positive one would overflow for nothing
        below = np.expm1(np.minimum(a, 0) * inner) * kind(alpha * scale)
        return np.where(a > 0, a * positive, below)

    def kernel(expm1):
        return lambda x: np.where(x > 0, x * positive, expm1(x * inner) * negative)

    with np.errstate(over="ignore"):
        return vectorized_loop(kernel(sleef.expm1), kernel(libm.expm1), a)


def elu_backward(grad: np.ndarray, a: np.ndarray, alpha, scale, input_scale) -> np.ndarray:
    """grad·scale above 0, grad·input_scale·alpha·scale·e^(x·input_scale) at and below."""
    kind = a.dtype.type
    negative, positive, inner = kind(alpha) * kind(scale), kind(scale), kind(input_scale)
    if a.dtype != np.float32:
        coefficient = kind(input_scale * alpha * scale)
        slope = np.exp(np.minimum(a, 0) * inner) * coefficient
        return grad * np.where(a > 0, positive, slope)

    def kernel(exp):
        return lambda g, x: np.where(x > 0, g * positive, g * inner * negative * exp(x * inner))

    with np.errstate(over="ignore"):
        return vectorized_loop(kernel(sleef.exp), kernel(libm.exp), grad, a)


def elu_backward_of_result(grad: np.ndarray, result: np.ndarray, alpha, scale, input_scale):
    """elu_'s backward from the result: grad·input_scale·(result + alpha·scale) at and below 0."""
    kind = result.dtype.type
    negative, positive, inner = kind(alpha) * kind(scale), kind(scale), kind(input_scale)
    return np.where(result > 0, grad * positive, grad * inner * (result + negative))


def log_sigmoid(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """min(x, 0) - log1p(e^-|x|) and the buffer e^-|x| the backward reads, in vectors only."""
    with np.errstate(over="ignore"):
        if a.dtype != np.float32:
            buffer = np.exp(-np.abs(a))
            return np.minimum(a, 0) - np.log1p(buffer), buffer
        buffer = sleef.exp(-np.abs(a))
        return np.minimum(a, _F(0)) - sleef.log1p(buffer), buffer


def log_sigmoid_backward(grad: np.ndarray, a: np.ndarray, buffer: np.ndarray) -> np.ndarray:
    """(1 - b/(1 + b)) below 0, b/(1 + b) from 0 on, with b = e^-|x|; times grad."""
    kind = a.dtype.type
    negative = a < 0
    rise = np.where(negative, kind(1), kind(0)) - np.where(negative, kind(1), kind(-1)) * (
        buffer / (kind(1) + buffer)
    )
    return rise * grad


def mish(a: np.ndarray) -> np.ndarray:
    """x · tanh(log1p(e^x))."""
    if a.dtype != np.float32:
        return a * np.tanh(np.logaddexp(0, a))  # logaddexp(0, x) is softplus, overflow-free
    with np.errstate(over="ignore"):
        return vectorized_loop(
            lambda x: x * sleef.tanh(sleef.log1p(sleef.exp(x))),
            lambda x: x * libm.tanh(libm.log1p(libm.exp(x))),
            a,
        )


def mish_backward(grad: np.ndarray, a: np.ndarray) -> np.ndarray:
    """grad · (t + x·σ(x)·(1 - t²)), t = tanh(softplus(x)), both multiply-adds fused."""
    if a.dtype != np.float32:
        t = np.tanh(np.logaddexp(0, a))
        return grad * (t + a * sigmoid(a) * (1 - t * t))

    def kernel(exp, log1p, tanh):
        def slope(g, x):
            s = _ONE / (_ONE + exp(-x))
            t = tanh(log1p(exp(x)))
            return g * _fma(x * s, _fma(-t, t, _ONE), t)

        return slope

    with np.errstate(over="ignore"):
        return vectorized_loop(
            kernel(sleef.exp, sleef.log1p, sleef.tanh),
            kernel(libm.exp, libm.log1p, libm.tanh),
            grad,
            a,
        )


def sinh(a: np.ndarray) -> np.ndarray:
    """torch.sinh: Sleef's sinhf over vectors, glibc's over the rest."""
    return _vector_or_libm(sleef.sinh, libm.sinh, np.sinh, a)


def cosh(a: np.ndarray) -> np.ndarray:
    """torch.cosh: Sleef's coshf over vectors, glibc's over the rest."""
    return _vector_or_libm(sleef.cosh, libm.cosh, np.cosh, a)


def expm1(a: np.ndarray) -> np.ndarray:
    """torch.expm1: vector code throughout (vml's map takes the tail as a partial vector)."""
    return sleef.expm1(a) if a.dtype == np.float32 else np.expm1(a)


def log1p(a: np.ndarray) -> np.ndarray:
    """torch.log1p: vector code throughout, as expm1."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return sleef.log1p(a) if a.dtype == np.float32 else np.log1p(a)


def _vector_or_libm(vector, scalar, numpy_function, a: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        if a.dtype != np.float32:
            return numpy_function(a)
        return vectorized_loop(vector, scalar, a)


def power(base: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """tensor ** tensor for float32: Sleef's powf over vectors, glibc's over the rest (the
    exponent may broadcast, a number among them)."""
    with np.errstate(all="ignore"):
        return vectorized_loop(sleef.pow, libm.pow, base, exponent)
