"""oneDNN's gelu (the erf form), as PyTorch 2.13 hands a contiguous float32 gelu to it.

PyTorch's CPU gelu and gelu_backward skip their own kernel where oneDNN (MKL-DNN) can take the
tensor (`use_mkldnn`: float32, contiguous, more than one element, approximate='none') and call
its JIT-compiled eltwise primitive instead. On an AVX2 machine that code approximates erf by
Abramowitz and Stegun's formula 7.1.26 around an exp of its own (a degree-5 polynomial after
the usual range reduction, the power of two built from its bits), every step in float32 and
the multiply-adds fused. This module follows the instructions one by one (oneDNN v3's
jit_uni_eltwise_injector: gelu_erf and exp, forward and backward), which gives PyTorch's bits
for every input; the AVX-512 build uses another polynomial, which this does not reproduce.
"""

from __future__ import annotations

import numpy as np

from engine.numerics import fused_multiply_add as _fma

_F = np.float32


def _constant(bits: int) -> np.float32:
    """A float32 from its bits, as oneDNN's table lists them."""
    return np.array([bits], np.uint32).view(_F)[0]


_HALF, _ONE, _TWO = _F(0.5), _F(1), _F(2)
_LN_FLT_MIN = _constant(0xC2AEAC50)  # below it, exp's result is 0
_LN_FLT_MAX = _constant(0x42B17218)
_LOG2E = _constant(0x3FB8AA3B)
_LN2 = _constant(0x3F317218)
_EXP_POLYNOMIAL = tuple(  # p4 first, p0 last: Horner's order; then the constant 1
    _constant(b) for b in (0x3C07CFCE, 0x3D2B9D0D, 0x3E2AAD40, 0x3EFFFEE3, 0x3F7FFFFB)
)
_ERF_P = _constant(0x3EA7BA05)  # t = 1 / (1 + p·|x|)
_ONE_OVER_SQRT2 = _constant(0x3F3504F3)
_ONE_OVER_SQRT_PI = _constant(0x3F106EBA)
_ERF_POLYNOMIAL = tuple(  # a5 first, a1 last
    _constant(b) for b in (0x3F87DC22, 0xBFBA00E3, 0x3FB5F0E3, 0xBE91A98E, 0x3E827906)
)


def gelu(x: np.ndarray) -> np.ndarray:
    """oneDNN's eltwise_gelu_erf: s/2 · (1 + erf(s/√2)), as (s/2)·erf + s/2 in one fused step."""
    with np.errstate(all="ignore"):
        r = x * _ONE_OVER_SQRT2
        erf = _erf(r, _exp(-(r * r)))
        half = x * _HALF
        return _fma(erf, half, half)


def gelu_backward(grad: np.ndarray, x: np.ndarray) -> np.ndarray:
    """oneDNN's gelu_erf backward: (1/2 + r/√π · e^-r²) + erf(r)/2 with r = s/√2, times grad."""
    with np.errstate(all="ignore"):
        r = x * _ONE_OVER_SQRT2
        q = _exp(-(r * r))
        slope = _fma(_erf(r, q), _HALF, r * _ONE_OVER_SQRT_PI * q + _HALF)
        return slope * grad


def _erf(r: np.ndarray, q: np.ndarray) -> np.ndarray:
    """erf(r) = ±(1 - poly(t)·t·e^-r²), t = 1 / (1 + p|r|), given q = e^-r² from _exp."""
    t = _ONE / _fma(_ERF_P, np.abs(r), _ONE)
    poly = _ERF_POLYNOMIAL[0]
    for c in _ERF_POLYNOMIAL[1:]:
        poly = _fma(poly, t, c)
    erf = _fma(-q * t, poly, _ONE)
    return np.where(np.signbit(r), -erf, erf)


def _exp(x: np.ndarray) -> np.ndarray:
    """oneDNN's exp: x = n·ln2 + r with n = floor(x·log2e + 1/2), then 2·2^(n-1)·poly(r)."""
    below = x < _LN_FLT_MIN
    x = np.maximum(np.minimum(x, _LN_FLT_MAX), _LN_FLT_MIN)
    n = np.floor(x * _LOG2E + _HALF)
    r = _fma(-n, _LN2, x)
    scale = ((n - _ONE).astype(np.int32) + 127) << 23
    scale = np.where(below, _F(0), scale.astype(np.int32).view(_F))
    poly = _EXP_POLYNOMIAL[0]
    for c in (*_EXP_POLYNOMIAL[1:], _ONE):
        poly = _fma(poly, r, c)
    return poly * scale * _TWO
