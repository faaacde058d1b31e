"""The C library's float32 functions (expf, logf, tanhf, ...), as PyTorch's scalar code calls them.

PyTorch's elementwise kernels run whole pairs of vectors through Sleef (engine/sleef.py) and the
few elements left over through their scalar lambda, where `std::exp(float)` is glibc's expf, and
so on; binary_cross_entropy's kernel is scalar for every element. glibc's float functions are
not correctly rounded: a float64 function rounded once misses their last bit in 0.05% (expf),
0.5% (logf) and 5-26% (erff, log1pf, expm1f, tanhf, coshf, sinhf) of random inputs, enough to
change a printed loss. numpy cannot call them, so this module does through ctypes, one element
at a time (a call costs half a microsecond: the leftovers are never more than 15 elements).
binary_cross_entropy's logf and log1pf run over whole tensors, so past a few elements their
algorithms run in numpy instead (glibc's own steps, equal to it on millions of inputs).

libm is already loaded in every process that runs numpy, so opening it reads no file. Where it
cannot be opened, logf and log1pf keep their numpy algorithms and the other functions fall back
to the float64 function rounded once.
"""

from __future__ import annotations

import ctypes
import math

import numpy as np

_F = np.float32

# glibc's name -> the float64 function rounded once where the library is missing
_FALLBACKS = {
    "expf": np.exp,
    "logf": np.log,
    "log1pf": np.log1p,
    "expm1f": np.expm1,
    "tanhf": np.tanh,
    "sinhf": np.sinh,
    "coshf": np.cosh,
    "erff": np.vectorize(math.erf, otypes=[np.float64]),
}


def _load() -> dict:
    try:
        library = ctypes.CDLL("libm.so.6")
    except OSError:
        return {}
    functions = {}
    for name in (*_FALLBACKS, "powf", "atan2f"):
        function = getattr(library, name)
        function.restype = ctypes.c_float
        function.argtypes = (ctypes.c_float,) * (2 if name in ("powf", "atan2f") else 1)
        functions[name] = function
    return functions


_FUNCTIONS = _load()


def _unary(name: str, algorithm=None, longer_than: int = 0):
    """glibc's `name` elementwise; past `longer_than` elements (or without the library) its
    algorithm in numpy where there is one, which costs less than a call per element."""

    def call(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, _F)
        function = _FUNCTIONS.get(name)
        if algorithm is not None and (function is None or x.size > longer_than):
            with np.errstate(all="ignore"):
                return algorithm(x)
        if function is None:
            with np.errstate(all="ignore"):
                return _FALLBACKS[name](x.astype(np.float64)).astype(_F)
        return np.array([function(v) for v in x.ravel().tolist()], _F).reshape(x.shape)

    call.__name__ = name.removesuffix("f")
    call.__doc__ = f"glibc's {name} of each element of a float32 array."
    return call


# logf: x = 2^k·z, z near one of 16 centres c, log x = log1p(z/c - 1) + log c + k·ln2 in double
_LOGF_TABLE = np.array(
    [
        [float.fromhex(invc), float.fromhex(logc)]
        for invc, logc in (
            ("0x1.661ec79f8f3bep+0", "-0x1.57bf7808caadep-2"),
            ("0x1.571ed4aaf883dp+0", "-0x1.2bef0a7c06ddbp-2"),
            ("0x1.49539f0f010bp+0", "-0x1.01eae7f513a67p-2"),
            ("0x1.3c995b0b80385p+0", "-0x1.b31d8a68224e9p-3"),
            ("0x1.30d190c8864a5p+0", "-0x1.6574f0ac07758p-3"),
            ("0x1.25e227b0b8eap+0", "-0x1.1aa2bc79c81p-3"),
            ("0x1.1bb4a4a1a343fp+0", "-0x1.a4e76ce8c0e5ep-4"),
            ("0x1.12358f08ae5bap+0", "-0x1.1973c5a611cccp-4"),
            ("0x1.0953f419900a7p+0", "-0x1.252f438e10c1ep-5"),
            ("0x1p+0", "0x0p+0"),
            ("0x1.e608cfd9a47acp-1", "0x1.aa5aa5df25984p-5"),
            ("0x1.ca4b31f026aap-1", "0x1.c5e53aa362eb4p-4"),
            ("0x1.b2036576afce6p-1", "0x1.526e57720db08p-3"),
            ("0x1.9c2d163a1aa2dp-1", "0x1.bc2860d22477p-3"),
            ("0x1.886e6037841edp-1", "0x1.1058bc8a07ee1p-2"),
            ("0x1.767dcf5534862p-1", "0x1.4043057b6ee09p-2"),
        )
    ]
)
_LOGF_LN2 = float.fromhex("0x1.62e42fefa39efp-1")
_LOGF_POLYNOMIAL = tuple(
    float.fromhex(c)
    for c in ("-0x1.00ea348b88334p-2", "0x1.5575b0be00b6ap-2", "-0x1.ffffef20a4123p-2")
)
_LOGF_CENTRE = 0x3F330000
_TINY, _HUGE = np.finfo(_F).tiny, np.finfo(_F).max
_INVALID = np.array([0xFFC00000], np.uint32).view(_F)[0]  # 0/0 on x86: a nan with its sign set


def _logf(x: np.ndarray) -> np.ndarray:
    """glibc's logf (2.28 on) in numpy: its steps are double, and they give glibc's float on
    96M random inputs (its FMA build fuses some; the rounding to float never shows it)."""
    ordinary = bool(x.size) and x.min() >= _TINY and x.max() <= _HUGE  # no nan, no edge
    bits = x.view(np.int32).astype(np.int64)
    subnormal = (bits > 0) & (bits < 0x00800000)
    if not ordinary and subnormal.any():  # scaled up by 2^23 first
        scaled = (x * _F(2**23)).view(np.int32).astype(np.int64) - (23 << 23)
        bits = np.where(subnormal, scaled, bits)
    offset = bits - _LOGF_CENTRE
    entry = _LOGF_TABLE[(offset >> 19) % 16]
    k = ((offset & 0xFFFFFFFF).astype(np.uint32).view(np.int32) >> 23).astype(np.float64)
    z = (bits - (offset & (0x1FF << 23))).astype(np.int32).view(_F).astype(np.float64)
    r = z * entry[..., 0] - 1
    y0 = entry[..., 1] + k * _LOGF_LN2
    r2 = r * r
    a0, a1, a2 = _LOGF_POLYNOMIAL
    y = a1 * r + a2
    y = a0 * r2 + y
    y = (y * r2 + (y0 + r)).astype(_F)
    if ordinary:
        return y
    y = np.where(x == 0, _F(-np.inf), y)
    y = np.where(x < 0, _INVALID, y)
    return np.where(np.isposinf(x) | np.isnan(x), x, y)


# log1pf: fdlibm's float code (Sun, 1993), as glibc up to 2.40 carries it
_LN2_HIGH, _LN2_LOW = _F(6.9313812256e-01), _F(9.0580006145e-06)
_LOG1PF_POLYNOMIAL = tuple(
    _F(c)
    for c in (
        1.4798198640e-01,
        1.5313838422e-01,
        1.8183572590e-01,
        2.2222198546e-01,
        2.8571429849e-01,
        4.0000000596e-01,
        6.6666668653e-01,
    )
)


def _log1pf(x: np.ndarray) -> np.ndarray:
    """glibc's log1pf in numpy, float step by float step, each branch a mask: equal to glibc's
    own on 8M inputs over the whole range and its edges."""
    one, half = _F(1), _F(0.5)
    hx = x.view(np.int32)
    ax = hx & 0x7FFFFFFF
    # 1 + x = 2^k·u with u in [sqrt(2)/2, sqrt(2)), c correcting 1 + x's rounding
    big = hx >= 0x5A000000
    u = np.where(big, x, one + x)
    hu = u.view(np.int32)
    k = (hu >> 23) - 127
    c = np.where(big, _F(0), np.where(k > 0, one - (u - x), x - (u - one)) / u)
    hu = hu & 0x007FFFFF
    upper = hu >= 0x3504F7
    u = np.where(upper, (hu | 0x3F000000).view(_F), (hu | 0x3F800000).view(_F))
    k = np.where(upper, k + 1, k)
    hu = np.where(upper, (0x00800000 - hu) >> 2, hu)
    f = u - one
    # -0.2929 < x < 0.41422 takes x as it is
    near = (hx < 0x3ED413D7) & ((hx > 0) | (hx <= np.int32(-0x416A09E1)))  # 0xbe95f61f
    k = np.where(near, 0, k)
    f = np.where(near, x, f)
    hu = np.where(near, 1, hu)
    c = np.where(near, _F(0), c)
    kf = k.astype(_F)
    hfsq = half * f * f
    tiny_r = hfsq * (one - _F(0.66666666666666666) * f)  # |f| < 2^-20
    tiny_f = np.where(
        f == 0,
        np.where(k == 0, _F(0), kf * _LN2_HIGH + (c + kf * _LN2_LOW)),
        np.where(k == 0, f - tiny_r, kf * _LN2_HIGH - ((tiny_r - (kf * _LN2_LOW + c)) - f)),
    )
    s = f / (_F(2) + f)
    z = s * s
    poly = _LOG1PF_POLYNOMIAL[0]
    for coefficient in _LOG1PF_POLYNOMIAL[1:]:
        poly = coefficient + z * poly
    poly = z * poly
    general = np.where(
        k == 0,
        f - (hfsq - s * (hfsq + poly)),
        kf * _LN2_HIGH - ((hfsq - (s * (hfsq + poly) + (kf * _LN2_LOW + c))) - f),
    )
    r = np.where(hu == 0, tiny_f, general)
    tiny = (hx < 0x3ED413D7) & (ax < 0x31000000)  # |x| < 2^-29: x, or x - x²/2
    r = np.where(tiny, np.where(ax < 0x24800000, x, x - x * x * half), r)
    r = np.where(hx >= 0x7F800000, x + x, r)
    below = (hx < 0x3ED413D7) & (ax >= 0x3F800000)  # x <= -1
    invalid = np.where(np.isnan(x), x, _INVALID)
    return np.where(below, np.where(x == -one, _F(-np.inf), invalid), r)


exp, expm1, tanh, sinh, cosh, erf = (
    _unary(name) for name in ("expf", "expm1f", "tanhf", "sinhf", "coshf", "erff")
)
log = _unary("logf", _logf, longer_than=16)
log1p = _unary("log1pf", _log1pf, longer_than=250)


def pow(x: np.ndarray, y) -> np.ndarray:  # noqa: A001 - C's name, as torch.pow's
    """glibc's powf, elementwise over float32 arrays (y broadcasts)."""
    x, y = np.broadcast_arrays(np.asarray(x, _F), np.asarray(y, _F))
    function = _FUNCTIONS.get("powf")
    if function is None:
        with np.errstate(all="ignore"):
            return (x.astype(np.float64) ** y.astype(np.float64)).astype(_F)
    values = [function(a, b) for a, b in zip(x.ravel().tolist(), y.ravel().tolist(), strict=True)]
    return np.array(values, _F).reshape(x.shape)


def atan2(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """glibc's atan2f, elementwise over float32 arrays of one shape."""
    y, x = np.asarray(y, _F), np.asarray(x, _F)
    function = _FUNCTIONS.get("atan2f")
    if function is None:
        return np.arctan2(y.astype(np.float64), x.astype(np.float64)).astype(_F)
    values = [function(a, b) for a, b in zip(y.ravel().tolist(), x.ravel().tolist(), strict=True)]
    return np.array(values, _F).reshape(y.shape)


def available() -> bool:
    """Whether glibc's functions are called (else their float64 twins rounded once)."""
    return bool(_FUNCTIONS)
