"""MKL's vector math library (VML), called the way PyTorch 2.13's CPU kernels call it.

PyTorch computes sin, cos, tan, exp, log, log2, log10, sqrt, tanh, atan, asin and acos of
contiguous float32 and float64 runs with MKL's vms*/vmd* functions in high-accuracy mode
(aten/src/ATen/cpu/vml.h, reached from UnaryOpsKernel.cpp for every size and stride: strided
inputs are copied into a buffer first). VML is not correctly rounded: its last bit differs from
numpy's in 5-30% of float32 inputs, which is enough to change the digits a lesson prints. The
`mkl` wheel from PyPI ships the same library, so this module calls it through ctypes; measured
on 2M random float32 inputs per function and on odd sizes, strides and 0-d tensors, every bit
matches PyTorch's.

Without the wheel (or on a machine where it does not load) `compute` returns None and the
caller keeps its numpy formula; `unavailable()` says why. The library is loaded at the first
call and pinned to one thread: VML is elementwise, so threads would change nothing but the
cost, and a sandboxed child may not start any.
"""

from __future__ import annotations

import ctypes
import importlib.metadata
from pathlib import Path

import numpy as np

# the mode vml.h passes: high accuracy, denormals kept, no errno or callbacks
VML_HA = 0x2
VML_FTZDAZ_OFF = 0x140000
VML_ERRMODE_IGNORE = 0x100
MODE = VML_HA | VML_FTZDAZ_OFF | VML_ERRMODE_IGNORE

MKL_THREADING_SEQUENTIAL = 1
MKL_INTERFACE_LP64 = 0  # MKL_INT is a 32-bit int, as PyTorch assumes
MAX_RUN = 2**31 - 1  # the most one call takes (an MKL_INT)

# numpy's function -> VML's name, only for what PyTorch hands to VML (not log1p, expm1, sinh,
# cosh, the inverse hyperbolics, rsqrt or sigmoid: those run on PyTorch's own vector code)
NAMES = {
    np.sin: "Sin",
    np.cos: "Cos",
    np.tan: "Tan",
    np.exp: "Exp",
    np.log: "Ln",
    np.log2: "Log2",
    np.log10: "Log10",
    np.sqrt: "Sqrt",
    np.tanh: "Tanh",
    np.arctan: "Atan",
    np.arcsin: "Asin",
    np.arccos: "Acos",
}
_PREFIX = {np.dtype(np.float32): "vms", np.dtype(np.float64): "vmd"}

_library: ctypes.CDLL | None = None
_reason: str | None = None  # why the library is not there, once a load has failed
_loaded = False


def compute(function, array: np.ndarray) -> np.ndarray | None:
    """function(array) as PyTorch's CPU kernel computes it, or None where PyTorch does not call
    VML for it (another function or dtype) or the library is not available.

    The result is a new array laid out as numpy's ufuncs lay theirs out (a transposed input
    gives a transposed result); elementwise, so the order VML walks in changes no value.
    """
    name = NAMES.get(function)
    prefix = _PREFIX.get(array.dtype)
    if name is None or prefix is None or _load() is None:
        return None
    out = np.empty_like(array)
    if out.size:
        source = array if array.flags.c_contiguous else np.ascontiguousarray(array)
        result = out if out.flags.c_contiguous else np.empty(array.shape, array.dtype)
        _call(getattr(_library, prefix + name), source.reshape(-1), result.reshape(-1))
        if result is not out:
            out[...] = result
    return out


def unavailable() -> str | None:
    """Why VML cannot be used here (None once it has loaded); tries to load it first."""
    _load()
    return _reason


def warm() -> None:
    """Load the library and run every function once, so MKL opens its CPU-specific libraries
    now (a process that cannot open files later, as a sandboxed child, still has them)."""
    for function in NAMES:
        for dtype in _PREFIX:
            compute(function, np.full(17, 0.5, dtype))


def _call(vml_function, source: np.ndarray, result: np.ndarray) -> None:
    for start in range(0, source.size, MAX_RUN):
        n = min(MAX_RUN, source.size - start)
        vml_function(
            ctypes.c_int(n),
            ctypes.c_void_p(source.ctypes.data + start * source.itemsize),
            ctypes.c_void_p(result.ctypes.data + start * result.itemsize),
            ctypes.c_int64(MODE),
        )


def _load() -> ctypes.CDLL | None:
    global _library, _reason, _loaded
    if not _loaded:
        _loaded = True
        try:
            _library = _open(_find())
        except (OSError, LookupError) as error:
            _reason = f"MKL's vector math library could not be loaded: {error}"
    return _library


def _find() -> Path:
    """libmkl_rt from the installed `mkl` wheel (its files sit under the environment's lib/)."""
    try:
        distribution = importlib.metadata.distribution("mkl")
    except importlib.metadata.PackageNotFoundError:
        raise LookupError("the mkl package is not installed") from None
    for file in distribution.files or ():
        if file.name.startswith("libmkl_rt.so"):
            return Path(distribution.locate_file(file)).resolve()
    raise LookupError("the mkl package has no libmkl_rt")


def _open(path: Path) -> ctypes.CDLL:
    library = ctypes.CDLL(str(path))
    # before any other call: these choose which of MKL's libraries it opens next
    library.MKL_Set_Interface_Layer(MKL_INTERFACE_LP64)
    library.MKL_Set_Threading_Layer(MKL_THREADING_SEQUENTIAL)
    for name in NAMES.values():
        for prefix in _PREFIX.values():
            getattr(library, prefix + name).restype = None
    return library
