"""MKL's vector math library (VML), called the way PyTorch 2.13's CPU kernels call it.

PyTorch computes sin, cos, tan, exp, log, log2, log10, sqrt, tanh, atan, asin, acos, erf and
erfc of contiguous float32 and float64 runs with MKL's vms*/vmd* functions in high-accuracy mode
(aten/src/ATen/cpu/vml.h, reached from UnaryOpsKernel.cpp for every size and stride: strided
inputs are copied into a buffer first). VML is not correctly rounded: its last bit differs from
numpy's in 4-30% of float32 inputs, which is enough to change the digits a lesson prints. The
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
import math
import threading
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
SCRATCH = 4096  # arrays up to this size go through buffers whose addresses are known
# void vmsSin(const MKL_INT n, const float* a, float* r, MKL_INT64 mode), and so on
SIGNATURE = (ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)

# numpy has no erf or erfc: these are the C library's, in float64, where VML is not loaded
erf = np.vectorize(math.erf, otypes=[np.float64])
erfc = np.vectorize(math.erfc, otypes=[np.float64])

# numpy's function -> VML's name, only for what PyTorch hands to VML (not log1p, expm1, sinh,
# cosh, the inverse hyperbolics, rsqrt, sigmoid or pow: those run on PyTorch's own vector
# code). PyTorch's erfinv is VML's too; the engine has no erfinv.
NAMES = {
    erf: "Erf",
    erfc: "Erfc",
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


class _Library:
    """The loaded library: each function with its C signature, and the scratch buffers."""

    def __init__(self, path: Path):
        library = ctypes.CDLL(str(path))
        self.cdll = library  # engine/blas.py takes MKL's matrix products from the same handle
        # before any other call: these choose which of MKL's libraries it opens next
        library.MKL_Set_Interface_Layer(MKL_INTERFACE_LP64)
        library.MKL_Set_Threading_Layer(MKL_THREADING_SEQUENTIAL)
        self.functions = {}
        for function, name in NAMES.items():
            for dtype, prefix in _PREFIX.items():
                c_function = getattr(library, prefix + name)
                c_function.argtypes, c_function.restype = SIGNATURE, None
                self.functions[function, dtype] = c_function
        # asking numpy for an array's address costs more than a short call itself
        self.scratch = {}
        for dtype in _PREFIX:
            source, result = np.empty(SCRATCH, dtype), np.empty(SCRATCH, dtype)
            self.scratch[dtype] = source, result, source.ctypes.data, result.ctypes.data
        self.scratch_lock = threading.Lock()


_library: _Library | None = None
_reason: str | None = None  # why the library is not there, once a load has failed
_loaded = False


def compute(function, array: np.ndarray) -> np.ndarray | None:
    """function(array) as PyTorch's CPU kernel computes it, or None where PyTorch does not call
    VML for it (another function or dtype) or the library is not available.

    The result is a new array laid out as numpy's ufuncs lay theirs out (a transposed input
    gives a transposed result); elementwise, so the order VML walks in changes no value.
    """
    library = _library if _loaded else _load()
    c_function = library and library.functions.get((function, array.dtype))
    if c_function is None:
        return None
    out = np.empty_like(array)
    n = array.size
    if n <= SCRATCH:
        source, result, source_address, result_address = library.scratch[array.dtype]
        with library.scratch_lock:
            np.copyto(source[:n].reshape(array.shape), array)
            c_function(n, source_address, result_address, MODE)
            np.copyto(out, result[:n].reshape(array.shape))
        return out
    source = array if array.flags.c_contiguous else np.ascontiguousarray(array)
    result = out if out.flags.c_contiguous else np.empty(array.shape, array.dtype)
    for start in range(0, n, MAX_RUN):
        offset = start * array.itemsize
        run = min(MAX_RUN, n - start)
        c_function(run, source.ctypes.data + offset, result.ctypes.data + offset, MODE)
    if result is not out:
        out[...] = result
    return out


def library() -> ctypes.CDLL | None:
    """The loaded libmkl_rt (pinned to one thread), or None where it cannot load."""
    loaded = _library if _loaded else _load()
    return loaded and loaded.cdll


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
            compute(function, np.full(SCRATCH + 1, 0.5, dtype))


def _load() -> _Library | None:
    global _library, _reason, _loaded
    if not _loaded:
        _loaded = True
        try:
            _library = _Library(_find())
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
