"""PyTorch's CPU random number generator, re-implemented in numpy, bit for bit.

After ``manual_seed(s)`` the functions here return the very numbers that ``torch.rand``,
``torch.randn``, ``torch.randint``, ``torch.randperm``, ``Tensor.uniform_`` and
``Tensor.normal_`` give on a CPU after ``torch.manual_seed(s)``, for float32 and float64, and the
generator's state (including the cached second Box-Muller sample) carries from call to call as in
PyTorch. Checked against PyTorch 2.13.0 (x86-64 Linux wheel, glibc) by
``tests/engine/test_random.py``; every recorded case matches exactly, none needs a tolerance.

How PyTorch draws (and so how this module draws):

* The engine is the standard 32-bit mt19937 seeded with ``init_genrand(seed & 0xffffffff)``;
  ``initial_seed()`` still reports the whole 64-bit seed. numpy's ``MT19937`` bit generator
  produces that stream once its key is set, so the twister itself is not rewritten here.
* A 64-bit draw is two 32-bit draws, the first being the high half.
* ``rand``: float32 keeps the low 24 bits of a 32-bit draw times 2**-24; float64 the low 53 bits
  of a 64-bit draw times 2**-53. ``uniform_(a, b)`` then computes ``x * (b - a) + a``.
* ``randn`` with fewer than 16 elements draws element by element from a float64 Box-Muller
  sampler that keeps its unused sine sample for the next element, even across calls.
* ``randn`` with 16 or more elements fills uniforms first, transforms them 16 at a time (the
  first 8 give the radii, the last 8 the angles) and, when the size is not a multiple of 16,
  draws 16 fresh uniforms for the last 16 elements and transforms those again.
  For float32 on a CPU with AVX2 and FMA, PyTorch does that transform with its vectorised
  Cephes-style ``log256_ps``/``sincos256_ps``; it is replayed here step by step in float32,
  including the fused multiply-adds the compiler formed (the AVX512 build reuses this AVX2 kernel).
  Elsewhere, and always for float64, it calls the C library's ``log``/``cos``/``sin``.
* ``randint(low, high)`` is ``draw % (high - low) + low``, with a 32-bit draw while the range is
  below 2**28 and a 64-bit draw above. ``randperm(n)`` swaps position i with a position drawn as
  ``i + draw % (n - i)``.

Where exactness rests on the platform rather than on this file:

* float64 ``randn`` (and float32 ``randn`` of fewer than 16 elements, which goes through float64)
  calls the C library's ``log1p``/``log``/``sin``/``cos`` through Python's ``math`` module, the
  same functions PyTorch calls, so it is exact where both use one libm (glibc on Linux).
* On a CPU without AVX2+FMA, or with ``ATEN_CPU_CAPABILITY=default``, PyTorch takes its scalar
  kernels; they are reproduced too (``capability="default"``), calling libm's float ``logf``,
  ``sinf`` and ``cosf`` through ctypes. If no libm can be loaded, float64 math rounded to float32
  stands in, which may differ from PyTorch in the last bit.
* Not verified: non-x86 CPUs, macOS and Windows builds of PyTorch.

Default seed: ``67280421310721`` is what a freshly constructed ``torch.Generator()`` holds, and the
module-level ``default_generator`` starts from it so that a fresh process is reproducible.
PyTorch's own global generator does *not* start there: ``torch.initial_seed()`` in a fresh
process is a non-deterministic 64-bit value, so no fixed seed can match an unseeded torch process.
So the default generator says when that shows: ``drew_unseeded`` is set by the first draw made
before any ``manual_seed`` (``start_unseeded`` stands a fixed seed in for the random one).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import os
import platform
import struct
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

DEFAULT_SEED = 67280421310721  # c10's default_rng_seed_val, used by torch.Generator()

_U64_MASK = (1 << 64) - 1
_MT_STATE_WORDS = 624
_TWO_PI = 2.0 * math.pi  # folded to one double by the compiler, as in PyTorch's kernels
# randperm switches algorithm at uint32 max / 20 (integer division).
_RANDPERM_SMALL_LIMIT = 0xFFFFFFFF // 20
_RANDINT_64BIT_RANGE = 1 << 28  # from here on randint takes 64-bit draws
_STATE_BYTES = 5056  # sizeof(CPUGeneratorImplState)

Shape = int | Sequence[int]


# ---------------------------------------------------------------------------------------------
# CPU capability: which of PyTorch's kernels run here.
# ---------------------------------------------------------------------------------------------


def _cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    # Not Linux: numpy detects the same features at import time.
    for mod in ("numpy._core._multiarray_umath", "numpy.core._multiarray_umath"):
        try:
            features = __import__(mod, fromlist=["__cpu_features__"]).__cpu_features__
        except (ImportError, AttributeError):
            continue
        return {
            "avx2" if k == "AVX2" else "fma" if k == "FMA3" else k.lower()
            for k, on in features.items()
            if on
        }
    return set()


def detect_capability() -> str:
    """'avx2' when PyTorch would run its AVX2/AVX512 kernels here, else 'default'.

    Honours ``ATEN_CPU_CAPABILITY`` as PyTorch does. The two capabilities differ in the float32
    ``randn`` transform and in whether ``a * b + c`` is fused into one rounding.
    """
    forced = os.environ.get("ATEN_CPU_CAPABILITY", "").strip().lower()
    if forced == "default":
        return "default"
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return "default"
    # PyTorch asks for both AVX2 and FMA before it picks its AVX2 kernels.
    return "avx2" if {"avx2", "fma"} <= _cpu_flags() else "default"


# ---------------------------------------------------------------------------------------------
# Exact arithmetic helpers.
# ---------------------------------------------------------------------------------------------


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """s + e == a + b exactly, with s the rounded sum (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _round_to_odd(s: np.ndarray, err: np.ndarray) -> np.ndarray:
    """Of the two doubles around s + err (err != 0), the one with an odd last bit.

    Rounding to odd first and to nearest afterwards gives a correctly rounded result, which is
    how fused multiply-adds are emulated below without a hardware fma in numpy.
    """
    even = (s.view(np.uint64) & np.uint64(1)) == 0
    step = np.nextafter(s, np.where(err > 0, np.inf, -np.inf))
    return np.where((err != 0) & even, step, s)


def _fma32(a: Any, b: Any, c: Any) -> np.ndarray:
    """float32 fma(a, b, c): one rounding of a * b + c."""
    a64 = np.asarray(a, np.float32).astype(np.float64)
    b64 = np.asarray(b, np.float32).astype(np.float64)
    c64 = np.asarray(c, np.float32).astype(np.float64)
    s, err = _two_sum(a64 * b64, c64)  # a * b is exact in float64
    with np.errstate(invalid="ignore"):
        return _round_to_odd(s, err).astype(np.float32)


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Veltkamp split of a double into two 26-bit halves."""
    t = 134217729.0 * a  # 2**27 + 1
    hi = t - (t - a)
    return hi, a - hi


def _fma64(a: Any, b: Any, c: Any) -> np.ndarray:
    """float64 fma(a, b, c) by Boldo and Melquiond's emulation (exact products, round to odd).

    Exact for finite inputs whose product neither overflows nor underflows, which holds for the
    distribution parameters used here.
    """
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    c = np.asarray(c, np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        ph = a * b
        ah, al = _split(a)
        bh, bl = _split(b)
        pl = ((ah * bh - ph) + ah * bl + al * bh) + al * bl  # ph + pl == a * b (Dekker)
        th, tl = _two_sum(c, ph)
        out = th + _round_to_odd(*_two_sum(tl, pl))
        # Infinities and NaNs make the error terms NaN; a plain a * b + c is right for them.
        return np.where(np.isfinite(out), out, a * b + c)


fma64 = _fma64  # for the engine's other kernels that PyTorch compiles with FMA (arange)


def _load_libm_float() -> tuple[Callable[[float], float], ...] | None:
    """libm's logf, sinf, cosf: what PyTorch's scalar float32 kernel calls."""
    names = [ctypes.util.find_library("m"), None]  # None: symbols already in this process
    for name in names:
        try:
            lib = ctypes.CDLL(name)
            funcs = tuple(getattr(lib, f) for f in ("logf", "sinf", "cosf"))
        except (OSError, AttributeError, TypeError):  # TypeError: CDLL(None) on Windows
            continue
        for f in funcs:
            f.restype = ctypes.c_float
            f.argtypes = [ctypes.c_float]
        return funcs
    return None


_LIBM_FLOAT = _load_libm_float()


def _libm_map(fn: Callable[[float], float], x: np.ndarray) -> np.ndarray:
    return np.array([fn(v) for v in x.tolist()], dtype=x.dtype)


# ---------------------------------------------------------------------------------------------
# PyTorch's AVX2 float32 transcendental functions (avx_mathfun.h), replayed in numpy.
# GCC contracts each `a * b + c` whose product has no other use into a fused multiply-add, the
# first such product in a sum winning; _fma32 marks exactly those places.
# ---------------------------------------------------------------------------------------------

_F = np.float32
_LOG_POLY = [
    _F(v)
    for v in (
        7.0376836292e-2,
        -1.1514610310e-1,
        1.1676998740e-1,
        -1.2420140846e-1,
        1.4249322787e-1,
        -1.6668057665e-1,
        2.0000714765e-1,
        -2.4999993993e-1,
        3.3333331174e-1,
    )
]
_LOG_Q1 = _F(-2.12194440e-4)
_LOG_Q2 = _F(0.693359375)
_SQRT_HALF = _F(0.707106781186547524)
_MIN_NORM = np.array([0x00800000], np.uint32).view(np.float32)[0]
_FOUR_OVER_PI = _F(1.27323954473516)
_MINUS_DP = [_F(-0.78515625), _F(-2.4187564849853515625e-4), _F(-3.77489497744594108e-8)]
_SIN_POLY = [_F(-1.9515295891e-4), _F(8.3321608736e-3), _F(-1.6666654611e-1)]
_COS_POLY = [_F(2.443315711809948e-005), _F(-1.388731625493765e-003), _F(4.166664568298827e-002)]


def _log_avx2(x: np.ndarray) -> np.ndarray:
    """log256_ps for positive normal float32 inputs (here 1 - u, so in (2**-24, 1])."""
    x = np.maximum(x, _MIN_NORM)
    bits = x.view(np.uint32)
    # Split into exponent e and mantissa m in [0.5, 1).
    e = ((bits >> np.uint32(23)).astype(np.int32) - 127).astype(_F) + _F(1)
    m = ((bits & np.uint32(0x807FFFFF)) | np.uint32(0x3F000000)).view(np.float32)
    small = m < _SQRT_HALF  # then use 2m - 1 and e - 1, keeping m - 1 near zero
    x = (m - _F(1)) + np.where(small, m, _F(0))
    e = e - np.where(small, _F(1), _F(0))
    z = x * x
    y = np.full_like(x, _LOG_POLY[0])
    for p in _LOG_POLY[1:]:
        y = _fma32(y, x, p)
    y = y * x
    y = _fma32(y, z, e * _LOG_Q1)
    y = y - z * _F(0.5)  # z * 0.5 is exact: fused or not, the same
    return (x + y) + e * _LOG_Q2  # e * Q2 is exact too


def _sincos_avx2(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sincos256_ps for non-negative float32 inputs (here angles in [0, 2 pi))."""
    j = (x * _FOUR_OVER_PI).astype(np.int32)  # truncation, like cvttps
    j = (j + 1) & ~1  # octant, rounded up to even
    y = j.astype(_F)
    sin_sign = ((j & 4) << 29).astype(np.uint32)
    cos_sign = ((~(j - 2) & 4) << 29).astype(np.uint32)
    use_sin_poly = (j & 2) == 0
    for dp in _MINUS_DP:  # x - y * pi/4 in three pieces ("extended precision modular")
        x = _fma32(y, dp, x)
    z = x * x
    c = np.full_like(x, _COS_POLY[0])
    for p in _COS_POLY[1:]:
        c = _fma32(c, z, p)
    c = c * z
    c = _fma32(c, z, -(z * _F(0.5))) + _F(1)
    s = np.full_like(x, _SIN_POLY[0])
    for p in _SIN_POLY[1:]:
        s = _fma32(s, z, p)
    s = _fma32(s * z, x, x)
    # Blend the two polynomials with masks and additions, as the vector code does.
    zero = _F(0)
    sin_from_s, sin_from_c = np.where(use_sin_poly, s, zero), np.where(use_sin_poly, zero, c)
    sin_v = sin_from_c + sin_from_s
    cos_v = (c - sin_from_c) + (s - sin_from_s)
    return (
        (sin_v.view(np.uint32) ^ sin_sign).view(np.float32),
        (cos_v.view(np.uint32) ^ cos_sign).view(np.float32),
    )


# ---------------------------------------------------------------------------------------------
# The generator.
# ---------------------------------------------------------------------------------------------


def _numel(shape: Shape) -> tuple[tuple[int, ...], int]:
    dims = (int(shape),) if isinstance(shape, int | np.integer) else tuple(int(d) for d in shape)
    if any(d < 0 for d in dims):
        raise ValueError(f"negative dimension in shape {dims}")
    return dims, math.prod(dims)


def _float_dtype(dtype: Any) -> np.dtype:
    dt = (
        {"float": "float32", "double": "float64"}.get(dtype, dtype)
        if isinstance(dtype, str)
        else getattr(dtype, "np", dtype)
    )  # engine dtypes carry their numpy dtype
    dt = np.dtype(dt)
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"random floats are float32 or float64, not {dt}")
    return dt


def _mt_key(seed: int) -> np.ndarray:
    """mt19937 init_genrand on the low 32 bits of the seed."""
    key = [seed & 0xFFFFFFFF]
    for i in range(1, _MT_STATE_WORDS):
        prev = key[-1]
        key.append((1812433253 * (prev ^ (prev >> 30)) + i) & 0xFFFFFFFF)
    return np.array(key, dtype=np.uint32)


class Generator:
    """A CPU random generator that draws exactly as ``torch.Generator()`` does."""

    def __init__(self, seed: int = DEFAULT_SEED, capability: str | None = None) -> None:
        if capability not in (None, "avx2", "default"):
            raise ValueError("capability is 'avx2', 'default' or None (detect)")
        # Which of PyTorch's kernels to mirror; see detect_capability().
        self.capability = capability or detect_capability()
        self._bits = np.random.MT19937(0)
        self._seed = 0
        self._next_normal: float | None = None  # Box-Muller's spare sample
        self._fresh = True
        # False while the seed is a stand-in for the random one PyTorch's default generator
        # picks (start_unseeded); drew_unseeded: something was drawn meanwhile, so PyTorch
        # would have printed other numbers, and other ones again on the next run
        self.seeded = True
        self.drew_unseeded = False
        self.draws = 0  # 32-bit draws made: a DataLoader's emulated workers check none were
        self.manual_seed(seed)

    # --- seeding and state --------------------------------------------------------------------

    def manual_seed(self, seed: int) -> Generator:
        """Reseed; like PyTorch, seeds in [-2**63, 2**64) are taken modulo 2**64."""
        seed = int(seed)
        if not -(1 << 63) <= seed <= _U64_MASK:
            raise ValueError(f"seed must be in [-2**63, 2**64), got {seed}")
        self._seed = seed & _U64_MASK
        self._bits.state = {
            "bit_generator": "MT19937",
            "state": {"key": _mt_key(self._seed), "pos": _MT_STATE_WORDS},
        }
        self._next_normal = None
        self._fresh = True  # seeded and not drawn from: PyTorch's state says so (state_bytes)
        self.seeded = True
        return self

    def start_unseeded(self, seed: int) -> Generator:
        """Seed with `seed` standing in for a random one, as PyTorch's default generator starts
        and as torch.seed() reseeds it: draws count as unseeded until the next manual_seed."""
        self.manual_seed(seed)
        self.seeded = False
        return self

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> dict[str, Any]:
        """A snapshot to hand back to set_state (state_bytes() is PyTorch's byte layout)."""
        return {
            "seed": self._seed,
            "mt19937": self._bits.state,
            "next_normal": self._next_normal,
            "fresh": self._fresh,
        }

    def set_state(self, state: dict[str, Any]) -> Generator:
        self._seed = state["seed"]
        self._bits.state = state["mt19937"]
        self._next_normal = state["next_normal"]
        self._fresh = state["fresh"]
        return self

    def state_bytes(self) -> np.ndarray:
        """torch.get_rng_state()'s 5056 bytes: PyTorch's CPUGeneratorImplState, field for field.

        mt19937 counts `left` (draws before the next twist) and `next` (the word to read) where
        numpy keeps one position; a freshly seeded twister (not yet twisted) has left 1, next 0.
        """
        numpy_state = self._bits.state["state"]
        pos = int(numpy_state["pos"])
        left, position = (1, 0) if self._fresh else (_MT_STATE_WORDS + 1 - pos, pos)
        spare = self._next_normal
        fields = (
            ("<Q", self._seed),
            ("<i", left),
            ("<i", 1),  # seeded
            ("<Q", position),
            (f"<{_MT_STATE_WORDS}Q", *numpy_state["key"].tolist()),
            ("<d", 0.0),  # normal_x: unused since PyTorch 1.x
            ("<d", spare or 0.0),
            ("<d", 0.0),  # normal_rho: unused
            ("<i4x", spare is not None),
            ("<f?3x", 0.0, False),  # float normal spare: never used by the CPU kernels here
        )
        data = b"".join(struct.pack(fmt, *values) for fmt, *values in fields)
        return np.frombuffer(data, np.uint8).copy()

    def load_state_bytes(self, data: np.ndarray) -> Generator:
        """torch.set_rng_state(state): the inverse of state_bytes()."""
        raw = np.ascontiguousarray(data, np.uint8).tobytes()
        if len(raw) != _STATE_BYTES:
            raise RuntimeError(
                "Expected either a THGeneratorState of size 5048 or a CPUGeneratorImplState of "
                f"size 5056 but found the input RNG state size to be {len(raw)}"
            )
        seed, left, _, position = struct.unpack_from("<QiiQ", raw, 0)
        key = np.frombuffer(raw, "<u8", _MT_STATE_WORDS, 24).astype(np.uint32)
        _, spare, _, spare_valid = struct.unpack_from("<dddi", raw, 24 + 8 * _MT_STATE_WORDS)
        self._seed = seed
        self._fresh = position == 0 and left == 1
        pos = _MT_STATE_WORDS if self._fresh else position
        self._bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}
        self._next_normal = spare if spare_valid else None
        return self

    # --- raw draws ----------------------------------------------------------------------------

    def _draw32(self, n: int) -> np.ndarray:
        """n 32-bit draws (held in uint64)."""
        if not n:
            return np.zeros(0, np.uint64)
        self._fresh = False
        if not self.seeded:  # every draw comes through here, so this is the one check
            self.drew_unseeded = True
        self.draws += n
        return self._bits.random_raw(n)

    def _draw64(self, n: int) -> np.ndarray:
        """n 64-bit draws, each the high then the low half."""
        raw = self._draw32(2 * n)
        return (raw[0::2] << np.uint64(32)) | raw[1::2]

    def _unit(self, n: int, dt: np.dtype) -> np.ndarray:
        """n uniforms in [0, 1): all the mantissa bits, exactly as PyTorch scales them."""
        if dt == np.float32:
            return (self._draw32(n) & np.uint64(0xFFFFFF)).astype(np.float32) * _F(2.0**-24)
        return (self._draw64(n) & np.uint64((1 << 53) - 1)).astype(np.float64) * 2.0**-53

    # --- uniform ------------------------------------------------------------------------------

    def rand(self, shape: Shape, dtype: Any = "float32") -> np.ndarray:
        """torch.rand: uniform on [0, 1)."""
        dims, n = _numel(shape)
        return self._unit(n, _float_dtype(dtype)).reshape(dims)

    def uniform(
        self, shape: Shape, low: float = 0.0, high: float = 1.0, dtype: Any = "float32"
    ) -> np.ndarray:
        """Tensor.uniform_(low, high) on a fresh tensor of this shape."""
        dims, n = _numel(shape)
        dt = _float_dtype(dtype)
        lo, hi = dt.type(low), dt.type(high)
        if not lo <= hi:
            raise ValueError(
                f"uniform_ expects to return a [from, to) range, but found from={low} > to={high}"
            )
        x = self._unit(n, dt)
        fused = self.capability == "avx2"  # compiled with FMA, so x * span + lo is fused
        span = dt.type(hi - lo)
        if dt == np.float32:
            out = _fma32(x, span, lo) if fused else x * span + lo
        else:
            out = _fma64(x, span, lo) if fused else x * span + lo
        # A value rounded up onto the excluded upper bound is replaced by the lower one.
        return np.where(out == hi, lo, out).astype(dt).reshape(dims)

    # --- normal -------------------------------------------------------------------------------

    def randn(self, shape: Shape, dtype: Any = "float32") -> np.ndarray:
        """torch.randn: standard normal samples."""
        return self.normal(shape, 0.0, 1.0, dtype)

    def normal(
        self, shape: Shape, mean: float = 0.0, std: float = 1.0, dtype: Any = "float32"
    ) -> np.ndarray:
        """Tensor.normal_(mean, std) on a fresh contiguous tensor of this shape."""
        dims, n = _numel(shape)
        dt = _float_dtype(dtype)
        if std < 0:
            raise ValueError(f"normal expects std >= 0.0, but found std {std}")
        if n >= 16:
            out = self._normal_fill(n, dt, mean, std)
        else:
            out = np.array([self._normal_one(mean, std) for _ in range(n)], np.float64)
        return out.astype(dt).reshape(dims)

    def _normal_one(self, mean: float, std: float) -> float:
        """One float64 Box-Muller sample, using the spare one when there is one."""
        if self._next_normal is not None:
            value, self._next_normal = self._next_normal, None
        else:
            u1, u2 = self._unit(2, np.dtype(np.float64)).tolist()
            radius = math.sqrt(-2.0 * math.log1p(-u2))
            theta = _TWO_PI * u1
            self._next_normal = radius * math.sin(theta)
            value = radius * math.cos(theta)
        if self.capability == "avx2" and std != 1.0:
            # The compiler fused value * std + mean; with std == 1 the product is exact anyway.
            return float(_fma64(value, std, mean))
        return value * std + mean

    def _normal_fill(self, n: int, dt: np.dtype, mean: float, std: float) -> np.ndarray:
        """The 16-at-a-time fill used for 16 or more elements."""
        data = self._unit(n, dt)
        whole = n - n % 16
        out = data.copy()
        out[:whole] = self._box_muller_16(data[:whole], dt, mean, std)
        if n % 16:
            # The ragged tail: the last 16 elements are redone from 16 fresh uniforms.
            out[n - 16 :] = self._box_muller_16(self._unit(16, dt), dt, mean, std)
        return out

    def _box_muller_16(self, data: np.ndarray, dt: np.dtype, mean: float, std: float) -> np.ndarray:
        """Each block of 16 uniforms: the first 8 give radii, the last 8 angles."""
        blocks = data.reshape(-1, 16)
        u1 = (1 - blocks[:, :8]).ravel()  # [0, 1) -> (0, 1] for the log; exact
        u2 = blocks[:, 8:].ravel()
        if dt == np.float32 and self.capability == "avx2":
            radius = np.sqrt(_F(-2) * _log_avx2(u1))
            sin_t, cos_t = _sincos_avx2(_F(_TWO_PI) * u2)
            mean_t, std_t = _F(mean), _F(std)
            first = _fma32(radius * cos_t, std_t, mean_t)
            second = _fma32(radius * sin_t, std_t, mean_t)
        elif dt == np.float32:
            # The angle is formed in double and rounded to float before sinf/cosf.
            theta = (_TWO_PI * u2.astype(np.float64)).astype(np.float32)
            if _LIBM_FLOAT is not None:
                logf, sinf, cosf = _LIBM_FLOAT
                log_u1 = _libm_map(logf, u1)
                sin_t, cos_t = _libm_map(sinf, theta), _libm_map(cosf, theta)
            else:  # no libm to call: nearly always the same float, not guaranteed
                log_u1 = np.log(u1.astype(np.float64)).astype(np.float32)
                sin_t = np.sin(theta.astype(np.float64)).astype(np.float32)
                cos_t = np.cos(theta.astype(np.float64)).astype(np.float32)
            radius = np.sqrt(_F(-2) * log_u1)
            mean_t, std_t = _F(mean), _F(std)
            first = _fma32(radius * cos_t, std_t, mean_t)
            second = _fma32(radius * sin_t, std_t, mean_t)
        else:
            # libm's double log/sin/cos via math (numpy's own SIMD versions may differ).
            log_u1 = np.array([math.log(v) for v in u1.tolist()])
            theta = _TWO_PI * u2
            radius = np.sqrt(-2.0 * log_u1)
            cos_t = np.array([math.cos(v) for v in theta.tolist()])
            sin_t = np.array([math.sin(v) for v in theta.tolist()])
            first = _fma64(radius * cos_t, std, mean)
            second = _fma64(radius * sin_t, std, mean)
        halves = [first.reshape(-1, 8), second.reshape(-1, 8)]
        return np.concatenate(halves, axis=1).astype(dt).ravel()

    # --- exponential --------------------------------------------------------------------------

    def exponential(self, shape: Shape, lambd: float = 1.0, dtype: Any = "float32") -> np.ndarray:
        """Tensor.exponential_(lambd): -1/lambd * log1p(-u) from a 53-bit double uniform each,
        in double whatever the dtype (PyTorch's CPU kernel, MKL's being off in its builds)."""
        if not (lambd > 0 and math.isfinite(lambd)):
            raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
        dims, n = _numel(shape)
        scale = -1.0 / lambd
        drawn = [scale * math.log1p(-u) for u in self._unit(n, np.dtype(np.float64)).tolist()]
        return np.array(drawn, np.float64).astype(_float_dtype(dtype)).reshape(dims)

    # --- multinomial --------------------------------------------------------------------------

    def multinomial(self, probs: np.ndarray, n_sample: int, replacement: bool) -> np.ndarray:
        """torch.multinomial on a 1-d or 2-d array of (unnormalised) probabilities.

        One sample, or sampling without replacement: PyTorch divides the probabilities by
        exponential draws and takes the largest (argmax, or topk in order). Several samples with
        replacement: a cumulative sum in the input's dtype, normalised, searched for one double
        uniform per sample.
        """
        rows = probs.reshape(-1, probs.shape[-1])
        if not replacement or n_sample == 1:
            keys = rows / self.exponential(rows.shape, 1.0, rows.dtype)
            # a stable sort on the negated keys: the largest first, ties by position
            picked = np.argsort(-keys, axis=-1, kind="stable")[:, :n_sample]
        else:
            picked = np.empty((rows.shape[0], n_sample), np.int64)
            for i, row in enumerate(rows):
                cumulative = np.cumsum(row, dtype=row.dtype)  # one rounding per step, in order
                cumulative = cumulative / cumulative[-1]
                cumulative[-1] = 1
                uniforms = self._unit(n_sample, np.dtype(np.float64))
                picked[i] = np.searchsorted(cumulative.astype(np.float64), uniforms, "left")
        return picked.reshape((*probs.shape[:-1], n_sample)).astype(np.int64)

    # --- bernoulli ----------------------------------------------------------------------------

    def bernoulli(self, p: np.ndarray) -> np.ndarray:
        """torch.bernoulli(p): 1 where a fresh uniform falls below p, element by element.

        Float probabilities are compared with a 24-bit float uniform, double ones with a 53-bit
        double uniform (PyTorch's bernoulli_distribution<float> and <double>).
        """
        p = np.asarray(p)
        dt = np.dtype(np.float64) if p.dtype == np.float64 else np.dtype(np.float32)
        if p.size and not ((p >= 0) & (p <= 1)).all():
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
        return self._unit(p.size, dt).reshape(p.shape) < p.astype(dt)

    def bernoulli_scalar(self, shape: Shape, p: float) -> np.ndarray:
        """Tensor.bernoulli_(p) with one probability, as dropout draws its mask.

        PyTorch's CPU kernel (the scalar one, whatever the tensor's dtype) compares a 53-bit
        double uniform per element with p, in order. A bool array: cast it to the tensor's dtype.
        """
        dims, n = _numel(shape)
        return (self._unit(n, np.dtype(np.float64)) < p).reshape(dims)

    # --- integers -----------------------------------------------------------------------------

    def randint(self, low: int, high: int, shape: Shape) -> np.ndarray:
        """torch.randint(low, high, shape): int64 in [low, high)."""
        dims, n = _numel(shape)
        low, high = int(low), int(high)
        if not low < high:
            raise ValueError(
                f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
            )
        span = high - low
        draws = self._draw64(n) if span >= _RANDINT_64BIT_RANGE else self._draw32(n)
        offset = draws % np.uint64(span)
        # uint64 arithmetic wraps exactly as the C++ does before the cast to int64.
        return (offset + np.uint64(low & _U64_MASK)).view(np.int64).reshape(dims)

    def random(self, shape: Shape, dtype: Any = "int64") -> np.ndarray:
        """Tensor.random_() with no bounds: each element a draw modulo the number of whole
        values the dtype holds from 0 up (2**63 for int64, 2**24 + 1 for float32, ...), a
        64-bit draw for int64 and float64 and a 32-bit one for the rest."""
        dims, n = _numel(shape)
        dt = np.dtype(dtype)
        if dt == np.bool_:
            return (self._draw32(n) & np.uint64(1)).astype(np.bool_).reshape(dims)
        # the float's whole numbers run to 2**(mantissa bits + 1), an int's to its max
        span = (1 << np.finfo(dt).nmant + 1) + 1 if dt.kind == "f" else int(np.iinfo(dt).max) + 1
        wide = dt in (np.dtype(np.int64), np.dtype(np.float64))
        draws = self._draw64(n) if wide else self._draw32(n)
        return (draws % np.uint64(span)).astype(dt).reshape(dims)

    def randperm(self, n: int) -> np.ndarray:
        """torch.randperm(n): int64 permutation of range(n)."""
        n = int(n)
        if n < 0:
            raise ValueError(f"n must be non-negative, got {n}")
        if n < _RANDPERM_SMALL_LIMIT:
            # Swap position i with i + draw % (n - i), for i up to n - 2.
            perm = list(range(n))
            if n > 1:
                draws = self._draw32(n - 1) % np.arange(n, 1, -1, dtype=np.uint64)
                for i, z in enumerate(draws.tolist()):
                    perm[i], perm[i + z] = perm[i + z], perm[i]
            return np.array(perm, dtype=np.int64)
        # Huge n: PyTorch's inside-out shuffle with 64-bit draws.
        perm_arr = np.empty(n, dtype=np.int64)
        draws = self._draw64(n)
        for i in range(n):
            z = int(draws[i]) % (i + 1)
            perm_arr[i] = perm_arr[z]
            perm_arr[z] = i
        return perm_arr


# ---------------------------------------------------------------------------------------------
# The process-wide generator and torch-style module functions.
# ---------------------------------------------------------------------------------------------


class TorchGenerator(Generator):
    """`torch.Generator(device="cpu")`: a fresh generator holding PyTorch's default seed."""

    def __init__(self, device: Any = "cpu") -> None:
        from engine.devices import check  # device knows nothing of random numbers: no cycle

        check(device)
        super().__init__(DEFAULT_SEED)

    @property
    def device(self):
        from engine.devices import CPU

        return CPU

    def get_state(self):
        """PyTorch's 5056 bytes, as a uint8 tensor (torch.get_rng_state for this generator)."""
        from engine.record import leaf  # tensors build on this module, not it on them

        return leaf(self.state_bytes(), False, "get_state")

    def set_state(self, new_state) -> TorchGenerator:
        return self.load_state_bytes(new_state._array)


# the name PyTorch's class prints with: <torch._C.Generator object at 0x...>
TorchGenerator.__module__, TorchGenerator.__qualname__ = "torch._C", "Generator"

default_generator = TorchGenerator()
default_generator.start_unseeded(DEFAULT_SEED)  # PyTorch's starts from a random seed


def manual_seed(seed: int) -> Generator:
    """torch.manual_seed: reseed the default generator and return it."""
    return default_generator.manual_seed(seed)


def initial_seed() -> int:
    return default_generator.initial_seed()


def rand(shape: Shape, dtype: Any = "float32") -> np.ndarray:
    return default_generator.rand(shape, dtype)


def randn(shape: Shape, dtype: Any = "float32") -> np.ndarray:
    return default_generator.randn(shape, dtype)


def randint(low: int, high: int, shape: Shape) -> np.ndarray:
    return default_generator.randint(low, high, shape)


def randperm(n: int) -> np.ndarray:
    return default_generator.randperm(n)
