"""Sleef's float32 exp, log and pow, as PyTorch 2.13's AVX2 vector code computes them.

Where PyTorch's CPU kernels call `Vectorized<float>::exp()`, `::log()` or `::pow()` (softmax,
log_softmax and their backwards, tensor ** number) rather than MKL's VML (engine/vml.py), the
numbers come from Sleef's `expf8_u10`, `logf8_u10` and `powf8_u10`. Those are not correctly
rounded: a float64 exp rounded once misses Sleef's bit in about 4% of inputs (a float64 pow in
about 2%), enough to change a printed loss. This
module reproduces Sleef's steps in float32 with numpy: the same range reduction, the same
polynomial and the same double-float arithmetic, each fused multiply-add rounded once (the AVX2
build uses FMA), so every bit matches (measured on millions of inputs by tests and by
tools/measure_numerics.py). Other dtypes are not Sleef's here: callers keep numpy for them.
"""

from __future__ import annotations

import numpy as np

from engine.numerics import fused_multiply_add

_F = np.float32

# exp: x = q·ln2 + s, ln2 split in two so q·ln2 is exact; e^s by a degree-6 polynomial
_LOG2E = _F(1.442695040888963407359924681001892137426645954152985934135449406931)
_LN2_HIGH = _F(0.693145751953125)
_LN2_LOW = _F(1.428606765330187045e-06)
_EXP_POLYNOMIAL = tuple(
    _F(c)
    for c in (
        0.000198527617612853646278381,
        0.00139304355252534151077271,
        0.00833336077630519866943359,
        0.0416664853692054748535156,
        0.166666671633720397949219,
        0.5,
    )
)
_EXP_ZERO_BELOW = _F(-104)  # e^x is 0 below this and inf above the next
_EXP_INF_ABOVE = _F(100)

# log: x = m·2^e with m in [0.75, 1.5); log m = 2·atanh((m-1)/(m+1)) in double-float
_LN2_PAIR = (_F(0.69314718246459960938), _F(-1.904654323148236017e-09))
_LOG_POLYNOMIAL = (_F(0.3027294874), _F(0.3996108174), _F(0.6666694880))
_TINY = np.finfo(np.float32).tiny  # below it the input is scaled up by 2^64 first

# pow's kernels: log and exp carried in double-floats (logkf, expkf) so x^y = e^(y·log x)
_LOGK_POLYNOMIAL = (_F(0.240320354700088500976562), _F(0.285112679004669189453125))
_LOGK_LAST = _F(0.400007992982864379882812)
_LOGK_PAIR = (_F(0.66666662693023681640625), _F(3.69183861259614332084311e-09))
_EXPK_POLYNOMIAL = tuple(
    _F(c)
    for c in (
        0.00136324646882712841033936,
        0.00836596917361021041870117,
        0.0416710823774337768554688,
        0.166665524244308471679688,
        0.499999850988388061523438,
    )
)


_LOW_BITS = np.uint64(0x1FFFFFFF)  # a float64's bits below float32's precision
_HALFWAY = np.uint64(0x10000000)


def _fma(x, y, z) -> np.ndarray:
    """x·y + z rounded once to float32, as AVX2's vfmadd does (called inside np.errstate).

    The float64 product of two floats is exact and the float64 sum rounds once; rounding that
    to float32 is right unless it landed halfway between two float32s (the values here are
    never subnormal), a rare case left to numerics.fused_multiply_add's careful path.
    """
    total = np.multiply(x, y, dtype=np.float64)
    total += z
    if ((total.view(np.uint64) & _LOW_BITS) == _HALFWAY).any():
        return fused_multiply_add(np.asarray(x, _F), np.asarray(y, _F), np.asarray(z, _F))
    return total.astype(_F)


def _exact_fma(x, y, z) -> np.ndarray:
    """_fma where the float64 sum is exact (an error term: a·b minus its rounding, 1 - d·(1/d)),
    so rounding it once to float32 is the fused result."""
    total = np.multiply(x, y, dtype=np.float64)
    total += z
    return total.astype(_F)


def _power_of_two(exponent: np.ndarray) -> np.ndarray:
    """2^exponent as a float32, built from its bits (Sleef's vpow2i)."""
    return ((exponent.astype(np.int32) + 127) << 23).view(_F)


def exp(x: np.ndarray) -> np.ndarray:
    """Sleef_expf8_u10: e^x for a float32 array, bit for bit."""
    x = np.asarray(x, _F)
    with np.errstate(all="ignore"):
        q = np.rint(x * _LOG2E)  # rounds half to even, as vcvtps2dq does
        q = np.where(np.abs(q) < 2**24, q, 0).astype(np.int32)  # nan and huge: masked below
        qf = q.astype(_F)
        s = _fma(qf, -_LN2_HIGH, x)
        s = _fma(qf, -_LN2_LOW, s)
        u = _EXP_POLYNOMIAL[0]
        for c in _EXP_POLYNOMIAL[1:]:
            u = _fma(u, s, c)
        u = _F(1) + _fma(s * s, u, s)
        # vldexp2: two multiplications by powers of two, so subnormal results round once
        half = q >> 1
        u = u * _power_of_two(half) * _power_of_two(q - half)
        u = np.where(x < _EXP_ZERO_BELOW, _F(0), u)
        u = np.where(x > _EXP_INF_ABOVE, _F(np.inf), u)
        return np.where(np.isnan(x), x, u).astype(_F, copy=False)


def log(x: np.ndarray) -> np.ndarray:
    """Sleef_logf8_u10: the natural log of a float32 array, bit for bit."""
    x = np.asarray(x, _F)
    with np.errstate(all="ignore"):
        small = x < _TINY
        scaled = np.where(small, x * _F(2.0**64), x)
        # the exponent of x·4/3, so the mantissa m = x / 2^e lies in [0.75, 1.5)
        e = ((((scaled * _F(1.0 / 0.75)).view(np.int32)) >> 23) & 0xFF) - 0x7F
        m = (scaled.view(np.int32) - (e << 23)).view(_F)
        e = np.where(small, e - 64, e).astype(_F)
        # s = e·ln2 as a double-float (dfmul)
        s_hi = _LN2_PAIR[0] * e
        s_lo = _fma(_LN2_PAIR[1], e, _exact_fma(_LN2_PAIR[0], e, -s_hi))
        # (m - 1) / (m + 1) as a double-float (dfadd2, dfdiv)
        n_hi, n_lo = _two_sum(_F(-1), m)
        d_hi, d_lo = _two_sum(_F(1), m)
        t = _F(1) / d_hi
        x_hi = n_hi * t
        u = _exact_fma(t, n_hi, -x_hi)
        x_lo = _fma(-d_lo, t, _exact_fma(-d_hi, t, _F(1)))
        x_lo = _fma(x_hi, x_lo, _fma(n_lo, t, u))
        x2 = x_hi * x_hi
        poly = _fma(_fma(_LOG_POLYNOMIAL[0], x2, _LOG_POLYNOMIAL[1]), x2, _LOG_POLYNOMIAL[2])
        # s += 2x (dfadd of two double-floats), then s += x³·poly (dfadd of a float)
        twice_hi, twice_lo = x_hi * _F(2), x_lo * _F(2)
        hi = s_hi + twice_hi
        lo = (((s_hi - hi) + twice_hi) + s_lo) + twice_lo
        tail = (x2 * x_hi) * poly
        total = hi + tail
        lo = ((hi - total) + tail) + lo
        r = total + lo
        r = np.where(np.isposinf(x), _F(np.inf), r)
        r = np.where((x < 0) | np.isnan(x), _F(np.nan), r)
        return np.where(x == 0, _F(-np.inf), r).astype(_F, copy=False)


def _two_sum(a, b) -> tuple[np.ndarray, np.ndarray]:
    """a + b and its exact rounding error (Sleef's dfadd2 of two floats)."""
    total = a + b
    v = total - a
    return total, (a - (total - v)) + (b - v)


def pow(x: np.ndarray, y) -> np.ndarray:  # noqa: A001 - Sleef's name, as torch.pow's
    """Sleef_powf8_u10: x ** y for float32 arrays (y broadcasts), bit for bit."""
    x = np.asarray(x, _F)
    y = np.asarray(y, _F)
    with np.errstate(all="ignore"):
        whole = np.trunc(y)
        y_is_int = (whole == y) | (np.abs(y) > _F(2**24))
        small = np.abs(y) < _F(2**24)
        y_is_odd = (np.where(small, whole, 0).astype(np.int32) & 1 == 1) & y_is_int & small
        log_hi, log_lo = _logk(np.abs(x))
        # dfmul of the double-float log by y
        hi = log_hi * y
        lo = _fma(log_lo, y, _exact_fma(log_hi, y, -hi))
        result = _expk(hi, lo)
        result = np.where(np.isnan(result), _F(np.inf), result)
        sign = np.where(y_is_int, np.where(y_is_odd, _F(-1), _F(1)), _F(np.nan))
        result = result * np.where(x > 0, _F(1), sign)
        away = np.copysign(np.abs(x) - _F(1), y)  # how |x| sits from 1, signed by y
        at_infinity = np.where(away < 0, _F(0), np.where(away == 0, _F(1), _F(np.inf)))
        result = np.where(np.isinf(y), at_infinity, result)
        edge = np.where(np.signbit(y) ^ (x == 0), _F(0), _F(np.inf))
        edge = np.copysign(edge, np.where(y_is_odd, x, _F(1)))
        result = np.where(np.isinf(x) | (x == 0), edge, result)
        result = np.where(np.isnan(x) | np.isnan(y), _F(np.nan), result)
        return np.where((y == 0) | (x == 1), _F(1), result).astype(_F, copy=False)


def _logk(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sleef's logkf: log x as a double-float, for x > 0."""
    small = x < _TINY
    scaled = np.where(small, x * _F(2.0**64), x)
    e = ((((scaled * _F(1.0 / 0.75)).view(np.int32)) >> 23) & 0xFF) - 0x7F
    m = (scaled.view(np.int32) - (e << 23)).view(_F)
    e = np.where(small, e - 64, e).astype(_F)
    n_hi, n_lo = _two_sum(_F(-1), m)
    d_hi, d_lo = _two_sum(_F(1), m)
    t = _F(1) / d_hi  # dfdiv
    x_hi = n_hi * t
    u = _exact_fma(t, n_hi, -x_hi)
    x_lo = _fma(-d_lo, t, _exact_fma(-d_hi, t, _F(1)))
    x_lo = _fma(x_hi, x_lo, _fma(n_lo, t, u))
    sq_hi = x_hi * x_hi  # dfsqu
    sq_lo = _fma(x_hi + x_hi, x_lo, _exact_fma(x_hi, x_hi, -sq_hi))
    t = _fma(_fma(_LOGK_POLYNOMIAL[0], sq_hi, _LOGK_POLYNOMIAL[1]), sq_hi, _LOGK_LAST)
    s_hi = _LN2_PAIR[0] * e  # e·ln2 (dfmul)
    s_lo = _fma(_LN2_PAIR[1], e, _exact_fma(_LN2_PAIR[0], e, -s_hi))
    s_hi, s_lo = _add_pairs(s_hi, s_lo, x_hi * _F(2), x_lo * _F(2))
    # x³·(x²·t + c)
    cube_hi, cube_lo = _mul_pairs(sq_hi, sq_lo, x_hi, x_lo)
    p_hi = sq_hi * t
    p_lo = _fma(sq_lo, t, _exact_fma(sq_hi, t, -p_hi))
    p_hi, p_lo = _add2_pairs(p_hi, p_lo, *_LOGK_PAIR)
    term_hi, term_lo = _mul_pairs(cube_hi, cube_lo, p_hi, p_lo)
    return _add_pairs(s_hi, s_lo, term_hi, term_lo)


def _expk(d_hi: np.ndarray, d_lo: np.ndarray) -> np.ndarray:
    """Sleef's expkf: e to a double-float power, as a float."""
    q = np.rint((d_hi + d_lo) * _LOG2E)
    q = np.where(np.abs(q) < 2**24, q, 0).astype(np.int32)
    qf = q.astype(_F)
    s_hi, s_lo = _add2_pair_float(d_hi, d_lo, qf * -_LN2_HIGH)
    s_hi, s_lo = _add2_pair_float(s_hi, s_lo, qf * -_LN2_LOW)
    s_hi, s_lo = _two_sum_fast(s_hi, s_lo)  # dfnormalize
    u = _EXPK_POLYNOMIAL[0]
    for c in _EXPK_POLYNOMIAL[1:]:
        u = _fma(u, s_hi, c)
    sq_hi = s_hi * s_hi  # dfsqu
    sq_lo = _fma(s_hi + s_hi, s_lo, _exact_fma(s_hi, s_hi, -sq_hi))
    m_hi = sq_hi * u  # dfmul by the float u
    m_lo = _fma(sq_lo, u, _exact_fma(sq_hi, u, -m_hi))
    t_hi, t_lo = _add_pairs(s_hi, s_lo, m_hi, m_lo)
    total = _F(1) + t_hi  # dfadd of 1 and a double-float
    t_lo = ((_F(1) - total) + t_hi) + t_lo
    u = _ldexp(total + t_lo, q)
    return np.where(d_hi < _EXP_ZERO_BELOW, _F(0), u)


def _ldexp(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Sleef's vldexp: x·2^q by four equal steps of at most 2^±63 and the rest, as its bits do."""
    m = q >> 31
    m = (((m + q) >> 6) - m) << 4
    q = q - (m << 2)
    m = np.clip(m + 0x7F, 0, 0xFF)
    u = (m << 23).astype(np.int32).view(_F)
    x = x * u * u * u * u
    return x * ((q + 0x7F) << 23).astype(np.int32).view(_F)


def _two_sum_fast(a, b) -> tuple[np.ndarray, np.ndarray]:
    """a + b and its error when |a| >= |b| (dfnormalize, dfadd of two floats)."""
    total = a + b
    return total, (a - total) + b


def _add_pairs(a_hi, a_lo, b_hi, b_lo) -> tuple[np.ndarray, np.ndarray]:
    """dfadd of two double-floats, the first the larger."""
    hi = a_hi + b_hi
    return hi, (((a_hi - hi) + b_hi) + a_lo) + b_lo


def _add2_pairs(a_hi, a_lo, b_hi, b_lo) -> tuple[np.ndarray, np.ndarray]:
    """dfadd2 of two double-floats, either the larger."""
    hi, lo = _two_sum(a_hi, b_hi)
    return hi, lo + (a_lo + b_lo)


def _add2_pair_float(a_hi, a_lo, b) -> tuple[np.ndarray, np.ndarray]:
    """dfadd2 of a double-float and a float."""
    hi, lo = _two_sum(a_hi, b)
    return hi, lo + a_lo


def _mul_pairs(a_hi, a_lo, b_hi, b_lo) -> tuple[np.ndarray, np.ndarray]:
    """dfmul of two double-floats, its error terms fused."""
    hi = a_hi * b_hi
    return hi, _fma(a_hi, b_lo, _fma(a_lo, b_hi, _exact_fma(a_hi, b_hi, -hi)))
