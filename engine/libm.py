"""The C library's float32 functions (expf, logf, tanhf, ...), as PyTorch's scalar code calls them.

PyTorch's elementwise kernels run whole pairs of vectors through Sleef (engine/sleef.py) and the
few elements left over through their scalar lambda, where `std::exp(float)` is glibc's expf, and
so on; binary_cross_entropy's kernel is scalar for every element. glibc's float functions are
not correctly rounded: a float64 function rounded once misses their last bit in 0.05% (expf),
0.5% (logf) and 5-26% (erff, log1pf, expm1f, tanhf, coshf, sinhf) of random inputs, enough to
change a printed loss. numpy cannot call them, so this module does through ctypes, one element
at a time (a call costs half a microsecond: the leftovers are never more than 15 elements).

libm is already loaded in every process that runs numpy, so opening it reads no file. Where it
cannot be opened the functions fall back to the float64 function rounded once.
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
    for name in (*_FALLBACKS, "powf"):
        function = getattr(library, name)
        function.restype = ctypes.c_float
        function.argtypes = (ctypes.c_float,) * (2 if name == "powf" else 1)
        functions[name] = function
    return functions


_FUNCTIONS = _load()


def _unary(name: str):
    def call(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, _F)
        function = _FUNCTIONS.get(name)
        if function is None:
            with np.errstate(all="ignore"):
                return _FALLBACKS[name](x.astype(np.float64)).astype(_F)
        return np.array([function(v) for v in x.ravel().tolist()], _F).reshape(x.shape)

    call.__name__ = name.removesuffix("f")
    call.__doc__ = f"glibc's {name} of each element of a float32 array."
    return call


exp, log, log1p, expm1, tanh, sinh, cosh, erf = map(_unary, _FALLBACKS)


def pow(x: np.ndarray, y) -> np.ndarray:  # noqa: A001 - C's name, as torch.pow's
    """glibc's powf, elementwise over float32 arrays (y broadcasts)."""
    x, y = np.broadcast_arrays(np.asarray(x, _F), np.asarray(y, _F))
    function = _FUNCTIONS.get("powf")
    if function is None:
        with np.errstate(all="ignore"):
            return (x.astype(np.float64) ** y.astype(np.float64)).astype(_F)
    values = [function(a, b) for a, b in zip(x.ravel().tolist(), y.ravel().tolist(), strict=True)]
    return np.array(values, _F).reshape(x.shape)


def available() -> bool:
    """Whether glibc's functions are called (else their float64 twins rounded once)."""
    return bool(_FUNCTIONS)
