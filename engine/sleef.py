"""Sleef's float32 functions, as PyTorch 2.13's AVX2 vector code computes them.

Where PyTorch's CPU kernels call `Vectorized<float>::exp()`, `::log()`, `::pow()`, `::expm1()`,
`::log1p()`, `::tanh()`, `::sinh()`, `::cosh()` or `::atan2()` (softmax, sigmoid and the
activations, tensor ** number, torch.expm1 and friends, torch.atan2) rather than MKL's VML
(engine/vml.py), the numbers come from
Sleef's `expf8_u10`, `logf8_u10`, `powf8_u10`, `expm1f8_u10`, and so on. Those are not correctly
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
_EXP_NORMAL_FROM, _EXP_NORMAL_TO = _F(-87), _F(88)  # e^x is a normal float in between

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


class _Fused:
    """The fused multiply-adds of one call, their halfway checks (see _fma) made all at once:
    each float64 sum lands in a row of one buffer and `exact` looks at every row together,
    which costs a third of checking each. A sum halfway between two floats is most often the
    exact value (a tie, which rounds as it should): only one that the float64 sum rounded
    (about one element in a billion) makes the caller run again with _fma itself."""

    def __init__(self, rows: int, shape: tuple):
        self._sums = np.empty((rows, *shape))
        self._terms: list[tuple] = []

    def __call__(self, x, y, z) -> np.ndarray:
        if len(self._terms) == len(self._sums):
            return _fma(x, y, z)
        total = self._sums[len(self._terms), ...]  # a view, a 0-d one too
        self._terms.append((x, y, z))
        np.multiply(x, y, out=total, dtype=np.float64)  # exact: 24 + 24 bits fit in 53
        total += z
        return total.astype(_F)

    def exact(self) -> bool:
        sums = self._sums[: len(self._terms)]
        halfway = (sums.view(np.uint64) & _LOW_BITS) == _HALFWAY
        if not halfway.any():
            return True
        for row in np.flatnonzero(halfway.reshape(len(sums), -1).any(axis=1)):
            at = halfway[row]
            x, y, z = (np.broadcast_to(np.float64(v), at.shape)[at] for v in self._terms[row])
            product = x * y
            total = product + z
            virtual = total - product
            if (((product - (total - virtual)) + (z - virtual)) != 0).any():  # two-sum's error
                return False
        return True


def _checked_once(rows: int):
    """Run a function of float32 arrays (the first sets the shape) with _Fused as its `fma`,
    and again with _fma where a sum landed halfway."""

    def wrap(compute):
        def function(x, *args):
            x = np.asarray(x, _F)
            fused = _Fused(rows, np.broadcast_shapes(x.shape, *(np.shape(a) for a in args)))
            with np.errstate(all="ignore"):
                result = compute(x, *args, fma=fused)
                return result if fused.exact() else compute(x, *args, fma=_fma)

        function.__name__, function.__doc__ = compute.__name__, compute.__doc__
        return function

    return wrap


def _exact_fma(x, y, z) -> np.ndarray:
    """_fma where the float64 sum is exact (an error term: a·b minus its rounding, 1 - d·(1/d)),
    so rounding it once to float32 is the fused result."""
    total = np.multiply(x, y, dtype=np.float64)
    total += z
    return total.astype(_F)


def _power_of_two(exponent: np.ndarray) -> np.ndarray:
    """2^exponent as a float32, built from its bits (Sleef's vpow2i)."""
    return ((exponent.astype(np.int32) + 127) << 23).view(_F)


@_checked_once(rows=6)
def exp(x: np.ndarray, fma=_fma) -> np.ndarray:
    """Sleef_expf8_u10: e^x for a float32 array, bit for bit."""
    ordinary = _within(x, _EXP_NORMAL_FROM, _EXP_NORMAL_TO)
    q = np.rint(x * _LOG2E)  # rounds half to even, as vcvtps2dq does
    if not ordinary:
        q = np.where(np.abs(q) < 2**24, q, _F(0))  # nan and huge: masked below
    s = _reduced(x, q)
    u = _EXP_POLYNOMIAL[0]
    for c in _EXP_POLYNOMIAL[1:]:
        u = fma(u, s, c)
    u = _F(1) + fma(s * s, u, s)
    q = q.astype(np.int32)
    if ordinary:  # a normal result: scaling by 2^q is exact however it is done
        return np.ldexp(u, q)
    # vldexp2: two multiplications by powers of two, so subnormal results round once
    half = q >> 1
    u = u * _power_of_two(half) * _power_of_two(q - half)
    u = np.where(x < _EXP_ZERO_BELOW, _F(0), u)
    u = np.where(x > _EXP_INF_ABOVE, _F(np.inf), u)
    return np.where(np.isnan(x), x, u).astype(_F, copy=False)


def _within(x: np.ndarray, low, high) -> bool:
    """Whether every element lies in [low, high] (none is nan): the edge cases can be skipped."""
    return bool(x.size) and bool(low <= x.min()) and bool(x.max() <= high)


def _reduced(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """x - q·ln2 as Sleef's two fused steps compute it (Cody and Waite), q a whole float32.

    ln2's high part has 15 bits, so q·high is exact and so is x minus it (x lies within
    [q - 1/2, q + 1/2]·ln2, where Sterbenz's lemma holds); q·low has 32 bits and the sum with
    that difference spans under 45, so its float64 sum is exact too: no halfway check."""
    return _exact_fma(q, -_LN2_LOW, x - q * _LN2_HIGH)


@_checked_once(rows=5)
def log(x: np.ndarray, fma=_fma) -> np.ndarray:
    """Sleef_logf8_u10: the natural log of a float32 array, bit for bit."""
    ordinary = _within(x, _TINY, _F(np.finfo(np.float32).max))  # normal, positive and finite
    scaled = x
    if not ordinary:
        small = x < _TINY
        scaled = np.where(small, x * _F(2.0**64), x)
    # the exponent of x·4/3, so the mantissa m = x / 2^e lies in [0.75, 1.5)
    e = ((((scaled * _F(1.0 / 0.75)).view(np.int32)) >> 23) & 0xFF) - 0x7F
    m = (scaled.view(np.int32) - (e << 23)).view(_F)
    if not ordinary:
        e = np.where(small, e - 64, e)
    e = e.astype(_F)
    # s = e·ln2 as a double-float (dfmul)
    s_hi = _LN2_PAIR[0] * e
    s_lo = fma(_LN2_PAIR[1], e, _exact_fma(_LN2_PAIR[0], e, -s_hi))
    # (m - 1) / (m + 1) as a double-float (dfadd2, dfdiv)
    n_hi, n_lo = _two_sum(_F(-1), m)
    d_hi, d_lo = _two_sum(_F(1), m)
    t = _F(1) / d_hi
    x_hi = n_hi * t
    u = _exact_fma(t, n_hi, -x_hi)
    # 1 - d·t and d's low part times t share a scale within 30 bits (d = 1 + m, m a float32
    # mantissa): their float64 sum is exact, and often a tie between two floats
    x_lo = _exact_fma(-d_lo, t, _exact_fma(-d_hi, t, _F(1)))
    x_lo = fma(x_hi, x_lo, fma(n_lo, t, u))
    x2 = x_hi * x_hi
    poly = fma(fma(_LOG_POLYNOMIAL[0], x2, _LOG_POLYNOMIAL[1]), x2, _LOG_POLYNOMIAL[2])
    # s += 2x (dfadd of two double-floats), then s += x³·poly (dfadd of a float)
    twice_hi, twice_lo = x_hi * _F(2), x_lo * _F(2)
    hi = s_hi + twice_hi
    lo = (((s_hi - hi) + twice_hi) + s_lo) + twice_lo
    tail = (x2 * x_hi) * poly
    total = hi + tail
    lo = ((hi - total) + tail) + lo
    r = total + lo
    if ordinary:
        return r
    r = np.where(np.isposinf(x), _F(np.inf), r)
    r = np.where((x < 0) | np.isnan(x), _F(np.nan), r)
    return np.where(x == 0, _F(-np.inf), r)


def _two_sum(a, b) -> tuple[np.ndarray, np.ndarray]:
    """a + b and its exact rounding error (Sleef's dfadd2 of two floats)."""
    total = a + b
    v = total - a
    return total, (a - (total - v)) + (b - v)


@_checked_once(rows=20)
def pow(x: np.ndarray, y, fma=_fma) -> np.ndarray:  # noqa: A001 - Sleef's name, as torch.pow's
    """Sleef_powf8_u10: x ** y for float32 arrays (y broadcasts), bit for bit."""
    y = np.asarray(y, _F)
    whole = np.trunc(y)
    y_is_int = (whole == y) | (np.abs(y) > _F(2**24))
    small = np.abs(y) < _F(2**24)
    y_is_odd = (np.where(small, whole, 0).astype(np.int32) & 1 == 1) & y_is_int & small
    log_hi, log_lo = _logk(np.abs(x), fma)
    # dfmul of the double-float log by y
    hi = log_hi * y
    lo = fma(log_lo, y, _exact_fma(log_hi, y, -hi))
    result = _expk(hi, lo, fma)
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


def _logk(x: np.ndarray, fma) -> tuple[np.ndarray, np.ndarray]:
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
    # 1 - d·t and d's low part times t share a scale within 30 bits (d = 1 + m, m a float32
    # mantissa): their float64 sum is exact, and often a tie between two floats
    x_lo = _exact_fma(-d_lo, t, _exact_fma(-d_hi, t, _F(1)))
    x_lo = fma(x_hi, x_lo, fma(n_lo, t, u))
    sq_hi = x_hi * x_hi  # dfsqu
    sq_lo = fma(x_hi + x_hi, x_lo, _exact_fma(x_hi, x_hi, -sq_hi))
    t = fma(fma(_LOGK_POLYNOMIAL[0], sq_hi, _LOGK_POLYNOMIAL[1]), sq_hi, _LOGK_LAST)
    s_hi = _LN2_PAIR[0] * e  # e·ln2 (dfmul)
    s_lo = fma(_LN2_PAIR[1], e, _exact_fma(_LN2_PAIR[0], e, -s_hi))
    s_hi, s_lo = _add_pairs(s_hi, s_lo, x_hi * _F(2), x_lo * _F(2))
    # x³·(x²·t + c)
    cube_hi, cube_lo = _mul_pairs(sq_hi, sq_lo, x_hi, x_lo, fma)
    p_hi = sq_hi * t
    p_lo = fma(sq_lo, t, _exact_fma(sq_hi, t, -p_hi))
    p_hi, p_lo = _add2_pairs(p_hi, p_lo, *_LOGK_PAIR)
    term_hi, term_lo = _mul_pairs(cube_hi, cube_lo, p_hi, p_lo, fma)
    return _add_pairs(s_hi, s_lo, term_hi, term_lo)


def _expk(d_hi: np.ndarray, d_lo: np.ndarray, fma) -> np.ndarray:
    """Sleef's expkf: e to a double-float power, as a float."""
    q = np.rint((d_hi + d_lo) * _LOG2E)
    q = np.where(np.abs(q) < 2**24, q, 0).astype(np.int32)
    qf = q.astype(_F)
    s_hi, s_lo = _add2_pair_float(d_hi, d_lo, qf * -_LN2_HIGH)
    s_hi, s_lo = _add2_pair_float(s_hi, s_lo, qf * -_LN2_LOW)
    s_hi, s_lo = _two_sum_fast(s_hi, s_lo)  # dfnormalize
    u = _EXPK_POLYNOMIAL[0]
    for c in _EXPK_POLYNOMIAL[1:]:
        u = fma(u, s_hi, c)
    sq_hi = s_hi * s_hi  # dfsqu
    sq_lo = fma(s_hi + s_hi, s_lo, _exact_fma(s_hi, s_hi, -sq_hi))
    m_hi = sq_hi * u  # dfmul by the float u
    m_lo = fma(sq_lo, u, _exact_fma(sq_hi, u, -m_hi))
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


def _mul_pairs(a_hi, a_lo, b_hi, b_lo, fma=_fma) -> tuple[np.ndarray, np.ndarray]:
    """dfmul of two double-floats, its error terms fused."""
    hi = a_hi * b_hi
    return hi, fma(a_hi, b_lo, fma(a_lo, b_hi, _exact_fma(a_hi, b_hi, -hi)))


# ***** the hyperbolic functions, expm1 and log1p: e^x carried as a double-float (expk2f) *****

_EXPK2_POLYNOMIAL = tuple(
    _F(c) for c in (0.1980960224e-3, 0.1394256484e-2, 0.8333456703e-2, 0.4166637361e-1)
)
_EXPK2_SIXTH = _F(0.166666659414234244790680580464)
_HYPERBOLIC_INF_ABOVE = _F(89)  # sinh and cosh overflow past it
_HYPERBOLIC_FINITE_TO = _F(88)  # e^x is finite up to here: no nan from inf - inf
_TANH_ONE_ABOVE = _F(8.664339742)  # tanh rounds to ±1 past it
_EXPM1_INF_ABOVE = _F(88.72283172607421875)
_EXPM1_MINUS_ONE_BELOW = _F(-16.635532333438687426013570)


@_checked_once(rows=13)
def tanh(x: np.ndarray, fma=_fma) -> np.ndarray:
    """Sleef_tanhf8_u10: (e^|x| - e^-|x|) / (e^|x| + e^-|x|) in double-floats, x's sign back."""
    y = np.abs(x)
    ordinary = _within(y, _F(0), _TANH_ONE_ABOVE)
    d_hi, d_lo = _expk2(y, fma, ordinary)
    e_hi, e_lo = _reciprocal_pair(d_hi, d_lo, fma)
    n_hi, n_lo = _add_pairs(d_hi, d_lo, -e_hi, -e_lo)
    q_hi, q_lo = _divide_pairs(n_hi, n_lo, *_add_pairs(d_hi, d_lo, e_hi, e_lo), fma=fma)
    y = q_hi + q_lo
    if not ordinary:
        y = np.where((np.abs(x) > _TANH_ONE_ABOVE) | np.isnan(y), _F(1), y)
        return np.where(np.isnan(x), x, _with_sign_of(y, x))
    return _with_sign_of(y, x)


@_checked_once(rows=12)
def sinh(x: np.ndarray, fma=_fma) -> np.ndarray:
    """Sleef_sinhf8_u10: (e^|x| - e^-|x|) / 2 in double-floats, x's sign back."""
    y = np.abs(x)
    ordinary = _within(y, _F(0), _HYPERBOLIC_FINITE_TO)
    d_hi, d_lo = _expk2(y, fma, ordinary)
    r_hi, r_lo = _reciprocal_pair(d_hi, d_lo, fma)
    hi = d_hi - r_hi  # dfsub of two double-floats
    lo = (((d_hi - hi) - r_hi) + d_lo) - r_lo
    y = (hi + lo) * _F(0.5)
    if not ordinary:
        y = np.where((np.abs(x) > _HYPERBOLIC_INF_ABOVE) | np.isnan(y), _F(np.inf), y)
        return np.where(np.isnan(x), x, _with_sign_of(y, x))
    return _with_sign_of(y, x)


@_checked_once(rows=12)
def cosh(x: np.ndarray, fma=_fma) -> np.ndarray:
    """Sleef_coshf8_u10: (e^|x| + e^-|x|) / 2 in double-floats."""
    y = np.abs(x)
    ordinary = _within(y, _F(0), _HYPERBOLIC_FINITE_TO)
    d_hi, d_lo = _expk2(y, fma, ordinary)
    hi, lo = _add_pairs(d_hi, d_lo, *_reciprocal_pair(d_hi, d_lo, fma))
    y = (hi + lo) * _F(0.5)
    if not ordinary:
        y = np.where((np.abs(x) > _HYPERBOLIC_INF_ABOVE) | np.isnan(y), _F(np.inf), y)
        return np.where(np.isnan(x), x, y)
    return y


@_checked_once(rows=11)
def expm1(x: np.ndarray, fma=_fma) -> np.ndarray:
    """Sleef_expm1f8_u10: e^x - 1, the 1 taken off the double-float e^x."""
    ordinary = _within(x, _EXPM1_MINUS_ONE_BELOW, _EXPM1_INF_ABOVE)
    hi, lo = _add2_pair_float(*_expk2(x, fma, ordinary), _F(-1))
    y = hi + lo
    if ordinary and x.min() != 0:
        return y
    y = np.where(x > _EXPM1_INF_ABOVE, _F(np.inf), y)
    y = np.where(x < _EXPM1_MINUS_ONE_BELOW, _F(-1), y)
    y = np.where((x == 0) & np.signbit(x), x, y)  # -0 stays -0
    return np.where(np.isnan(x), x, y)


@_checked_once(rows=3)
def log1p(x: np.ndarray, fma=_fma) -> np.ndarray:
    """Sleef_log1pf8_u10: log(1 + x) as logf8_u10 computes log, the mantissa taken from x itself
    (m = x·2^-e + 2^-e - 1, one fused step) so no bit of a small x is lost to 1 + x."""
    ordinary = _within(x, _F(-0.5), _F(1e38))  # 1 + x is normal, x is not huge: no edge case
    plus_one = x + _F(1)
    if not ordinary:
        small = plus_one < _TINY
        plus_one = np.where(small, plus_one * _F(2.0**64), plus_one)
    e = ((((plus_one * _F(1.0 / 0.75)).view(np.int32)) >> 23) & 0xFF) - 0x7F
    scale = ((0x7F - e) << 23).astype(np.int32).view(_F)  # 2^-e
    # m + 1 is the mantissa: x·2^-e and 2^-e - 1 share a scale, so their sum is exact
    m = _exact_fma(x, scale, scale - _F(1))
    if not ordinary:
        e = np.where(small, e - 64, e)
    e = e.astype(_F)
    # e·ln2 as a double-float (dfmul): e has 8 bits, so the low product and the error term sum
    # exactly in float64
    s_hi = _LN2_PAIR[0] * e
    s_lo = _exact_fma(_LN2_PAIR[1], e, _exact_fma(_LN2_PAIR[0], e, -s_hi))
    # m / (2 + m) as a double-float (dfadd of two floats, dfdiv of a float by a double-float);
    # 1 - d·t and d's low part times t sum exactly in float64 (d_lo is m's bits below 2 + m's
    # precision: where it is tiny, 2 + m is 2 and 1 - d·t is 0), as in log
    d_hi = _F(2) + m
    d_lo = (_F(2) - d_hi) + m
    t = _F(1) / d_hi
    x_hi = m * t
    x_lo = _exact_fma(-d_lo, t, _exact_fma(-d_hi, t, _F(1)))
    x_lo = fma(x_hi, x_lo, _exact_fma(t, m, -x_hi))
    x2 = x_hi * x_hi
    poly = fma(fma(_LOG_POLYNOMIAL[0], x2, _LOG_POLYNOMIAL[1]), x2, _LOG_POLYNOMIAL[2])
    hi, lo = _add_pairs(s_hi, s_lo, x_hi * _F(2), x_lo * _F(2))
    tail = (x2 * x_hi) * poly
    total = hi + tail
    lo = ((hi - total) + tail) + lo
    r = total + lo
    if ordinary and x.min() > 0:
        return r
    r = np.where((x < -1) | np.isnan(x), _F(np.nan), r)
    r = np.where(x == -1, _F(-np.inf), r)
    r = np.where((x == 0) & np.signbit(x), x, r)  # -0 stays -0
    huge = x > _F(1e38)  # where x + 1 is x: PyTorch's build gives log x there
    return np.where(huge, log(x), r) if huge.any() else r


def _expk2(x: np.ndarray, fma, ordinary: bool) -> tuple[np.ndarray, np.ndarray]:
    """Sleef's expk2f: e^x as a double-float, for a float x. `ordinary`: x lies within ±89, so
    no q needs clamping and no result flushing to 0."""
    q = np.rint(x * _LOG2E)
    if not ordinary:
        q = np.where(np.abs(q) < 2**24, q, _F(0))  # nan and huge: masked by callers
    s_hi, s_lo = _two_sum(x, q * -_LN2_HIGH)
    s_hi, s_lo = _add2_pair_float(s_hi, s_lo, q * -_LN2_LOW)
    u = _EXPK2_POLYNOMIAL[0]
    for c in _EXPK2_POLYNOMIAL[1:]:
        u = fma(u, s_hi, c)
    t_hi, t_lo = _add2_pair_float(*_mul_pair_float(s_hi, s_lo, u, fma), _EXPK2_SIXTH)
    t_hi, t_lo = _add2_pair_float(*_mul_pairs(s_hi, s_lo, t_hi, t_lo, fma), _F(0.5))
    square = _square_pair(s_hi, s_lo, fma)
    t_hi, t_lo = _add2_pairs(s_hi, s_lo, *_mul_pairs(*square, t_hi, t_lo, fma))
    total = _F(1) + t_hi  # dfadd of 1 and a double-float
    t_lo = ((_F(1) - total) + t_hi) + t_lo
    q = q.astype(np.int32)
    half = q >> 1  # vldexp2 on each half of the pair
    up, rest = _power_of_two(half), _power_of_two(q - half)
    if ordinary:
        return total * up * rest, t_lo * up * rest
    below = x < _EXP_ZERO_BELOW
    return (
        np.where(below, _F(0), total * up * rest),
        np.where(below, _F(0), t_lo * up * rest),
    )


def _with_sign_of(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """vmulsign: y with its sign flipped where x is negative (-0 included)."""
    return (y.view(np.int32) ^ (x.view(np.int32) & np.int32(-(2**31)))).view(_F)


def _mul_pair_float(a_hi, a_lo, b, fma) -> tuple[np.ndarray, np.ndarray]:
    """dfmul of a double-float by a float."""
    hi = a_hi * b
    return hi, fma(a_lo, b, _exact_fma(a_hi, b, -hi))


def _square_pair(a_hi, a_lo, fma) -> tuple[np.ndarray, np.ndarray]:
    """dfsqu: a double-float squared."""
    hi = a_hi * a_hi
    return hi, fma(a_hi + a_hi, a_lo, _exact_fma(a_hi, a_hi, -hi))


def _reciprocal_pair(d_hi, d_lo, fma) -> tuple[np.ndarray, np.ndarray]:
    """dfrec: 1 / a double-float, the error of 1/d_hi corrected by two fused steps."""
    t = _F(1) / d_hi
    return t, t * fma(-d_lo, t, _exact_fma(-d_hi, t, _F(1)))


def _divide_pairs(n_hi, n_lo, d_hi, d_lo, fma) -> tuple[np.ndarray, np.ndarray]:
    """dfdiv of two double-floats."""
    t = _F(1) / d_hi
    q = n_hi * t
    u = _exact_fma(t, n_hi, -q)
    lo = fma(-d_lo, t, _exact_fma(-d_hi, t, _F(1)))
    return q, fma(q, lo, fma(n_lo, t, u))


# ***** atan2: the angle as a double-float, its quadrant from the signs (atan2kf_u1) *****

_ATAN2_POLYNOMIAL = tuple(
    _F(c)
    for c in (
        -0.00176397908944636583328247,
        0.0107900900766253471374512,
        -0.0309564601629972457885742,
        0.0577365085482597351074219,
        -0.0838950723409652709960938,
        0.109463557600975036621094,
        -0.142626821994781494140625,
        0.199983194470405578613281,
    )
)
_ATAN2_THIRD = _F(-0.333332866430282592773438)
_HALF_PI_PAIR = (_F(1.5707963705062866211), _F(-4.3711388286737928865e-08))
_ATAN2_TINY = _F(2.9387372783541830947e-39)  # below it x and y are scaled up by 2^24 first
_PI = _F(np.pi)


@_checked_once(rows=16)
def atan2(y: np.ndarray, x: np.ndarray, fma=_fma) -> np.ndarray:
    """Sleef_atan2f8_u10: the angle of (x, y) for float32 arrays, bit for bit."""
    x = np.asarray(x, _F)
    tiny = np.abs(x) < _ATAN2_TINY
    if tiny.any():
        x = np.where(tiny, x * _F(1 << 24), x)
        y = np.where(tiny, y * _F(1 << 24), y)
    hi, lo = _atan2k(np.abs(y), x, fma)
    r = _with_sign_of(hi + lo, x)
    special = np.isinf(x) | (x == 0) | np.isinf(y) | (y == 0) | np.isnan(x) | np.isnan(y)
    if special.any():
        half_pi, quarter_pi = _F(np.pi / 2), _F(np.pi / 4)
        r = np.where(np.isinf(x) | (x == 0), half_pi - _inf_or_zero(x, half_pi), r)
        r = np.where(np.isinf(y), half_pi - _inf_or_zero(x, quarter_pi), r)
        r = np.where(y == 0, np.where(np.signbit(x), _PI, _F(0)), r)
        nan = np.isnan(x) | np.isnan(y)  # Sleef sets every bit: a negative nan
        return np.where(nan, np.uint32(0xFFFFFFFF).view(_F), _with_sign_of(r, y))
    return _with_sign_of(r, y)


def _atan2k(y: np.ndarray, x: np.ndarray, fma) -> tuple[np.ndarray, np.ndarray]:
    """atan2kf_u1 of y >= 0: x folded to |x| (quadrant -2 if it was negative), the smaller over
    the larger in double-floats, a polynomial in its square, the quadrants' pi/2s added back."""
    negative = x < 0
    q = np.where(negative, -2, 0)
    x = np.abs(x)  # the sign bit cleared, as Sleef's xor does for a negative x
    steep = x < y
    q = np.where(steep, q + 1, q)
    zero = np.zeros_like(x)  # the low halves of x and y (their signs never reach the result)
    s_hi, s_lo = _divide_pairs(np.where(steep, -x, y), zero, np.where(steep, y, x), zero, fma)
    t_hi, t_lo = _two_sum_fast(*_square_pair(s_hi, s_lo, fma))
    u = _ATAN2_POLYNOMIAL[0]
    for c in _ATAN2_POLYNOMIAL[1:]:
        u = fma(u, t_hi, c)
    t_hi, t_lo = _mul_pairs(t_hi, t_lo, *_two_sum_fast(_ATAN2_THIRD, u * t_hi), fma)
    t_hi, t_lo = _mul_pairs(s_hi, s_lo, *_add_pairs(_F(1), _F(0), t_hi, t_lo), fma)
    turn_hi, turn_lo = _mul_pair_float(*_HALF_PI_PAIR, q.astype(_F), fma)
    return _add_pairs(turn_hi, turn_lo, t_hi, t_lo)


def _inf_or_zero(d: np.ndarray, m) -> np.ndarray:
    """visinf2: m, negative if d is, where d is infinite; +0 elsewhere."""
    sign = np.signbit(d).astype(np.int32) << 31
    bits = np.where(np.isinf(d), sign | np.asarray(m, _F).view(np.int32), 0)
    return bits.astype(np.int32).view(_F)
