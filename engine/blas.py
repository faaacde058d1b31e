"""Matrix products through MKL's BLAS, called with the arguments PyTorch 2.13's CPU build passes.

PyTorch hands float32 and float64 mm, addmm (nn.Linear), matmul of matrices, mv and dot to MKL
(aten/src/ATen/native/LinearAlgebra.cpp addmm_impl_cpu_ and addmv, CPUBlas.cpp gemm, Blas.cpp
dot). MKL picks its kernel from the shapes and the transpose flags, and its kernels add in
orders no formula here could follow, so the engine calls the same library (the one engine/vml.py
loads, pinned to one thread) with the same flags: on every shape from 1 to 70 in each dim,
transposed or not, and on larger random ones, each bit matches PyTorch's.

How PyTorch chooses the flags: a row-major result C = A @ B is computed as the column-major
Cᵀ = Bᵀ Aᵀ; each operand whose rows or columns are contiguous is passed as it lies, with a
transpose flag where its layout needs one, and only an operand with neither is copied. The
leading dimensions of size-1 sides are normalised as CPUBlas.cpp does.

Every function returns None where PyTorch would not call MKL (other dtypes, empty sides) or the
library cannot load; the caller keeps its numpy product then.
"""

from __future__ import annotations

import ctypes

import numpy as np

from engine import vml

COLUMN_MAJOR, NO_TRANSPOSE, TRANSPOSE = 102, 111, 112
_INT, _POINTER = ctypes.c_int, ctypes.c_void_p
_SCALARS = {
    np.dtype(np.float32): ("s", ctypes.c_float),
    np.dtype(np.float64): ("d", ctypes.c_double),
}


class _Functions:
    """cblas_?gemm, cblas_?gemv and cblas_?dot of one dtype, with their C signatures."""

    def __init__(self, library: ctypes.CDLL, prefix: str, scalar):
        self.gemm = getattr(library, f"cblas_{prefix}gemm")
        self.gemm.argtypes = [_INT] * 6 + [scalar, _POINTER, _INT, _POINTER, _INT, scalar]
        self.gemm.argtypes += [_POINTER, _INT]
        self.gemm.restype = None
        self.gemv = getattr(library, f"cblas_{prefix}gemv")
        self.gemv.argtypes = [_INT] * 4 + [scalar, _POINTER, _INT, _POINTER, _INT, scalar]
        self.gemv.argtypes += [_POINTER, _INT]
        self.gemv.restype = None
        self.dot = getattr(library, f"cblas_{prefix}dot")
        self.dot.argtypes = [_INT, _POINTER, _INT, _POINTER, _INT]
        self.dot.restype = scalar


_functions: dict | None = None


def _for(a: np.ndarray, b: np.ndarray) -> _Functions | None:
    """The functions for the operands' dtype, if PyTorch would call MKL for them."""
    global _functions
    if _functions is None:
        _functions = _load()
    if a.dtype is not b.dtype and a.dtype != b.dtype or not a.size or not b.size:
        return None
    return _functions.get(a.dtype)


def _load() -> dict:
    library = vml.library()
    if library is None:
        return {}
    return {dtype: _Functions(library, *names) for dtype, names in _SCALARS.items()}


def _element_strides(array: np.ndarray) -> tuple[int, ...]:
    return tuple(s // array.itemsize for s in array.strides)


def mm(a: np.ndarray, b: np.ndarray, bias: np.ndarray | None = None) -> np.ndarray | None:
    """a @ b (+ bias, broadcast over the result, as addmm adds it: inside the product, beta=1)."""
    functions = _for(a, b)
    if functions is None or (bias is not None and bias.dtype != a.dtype):
        return None
    m, n = a.shape[0], b.shape[1]
    out = np.empty((m, n), a.dtype)
    if bias is not None:
        out[...] = bias
    _gemm(functions, a, b, out, 0.0 if bias is None else 1.0)
    return out


def _gemm(functions: _Functions, m1: np.ndarray, m2: np.ndarray, out: np.ndarray, beta: float):
    """addmm_impl_cpu_ for a C-contiguous `out`: it is read as Cᵀ, so the operands swap."""
    m, k = m1.shape
    n = m2.shape[1]
    transpose_out = n != 1  # a single column is column-major too: then it is read as it lies
    if transpose_out:
        m1, m2, m, n = m2, m1, n, m
    transpose_a, a = _operand(m1, m, k, transpose_out)
    transpose_b, b = _operand(m2, k, n, transpose_out)
    lda = _element_strides(a)[1 if transpose_a == transpose_out else 0]
    ldb = _element_strides(b)[1 if transpose_b == transpose_out else 0]
    ldc = _element_strides(out)[0 if transpose_out else 1]
    # CPUBlas.cpp's normalize_last_dims: a side of length 1 gets the smallest valid stride
    if n == 1:
        ldc = m
    if transpose_a:
        lda = k if m == 1 else lda
    elif k == 1:
        lda = m
    if transpose_b:
        ldb = n if k == 1 else ldb
    elif n == 1:
        ldb = k
    functions.gemm(
        COLUMN_MAJOR,
        TRANSPOSE if transpose_a else NO_TRANSPOSE,
        TRANSPOSE if transpose_b else NO_TRANSPOSE,
        m,
        n,
        k,
        1.0,
        a.ctypes.data,
        lda,
        b.ctypes.data,
        ldb,
        beta,
        out.ctypes.data,
        ldc,
    )


def _operand(x: np.ndarray, rows: int, columns: int, transposed_view: bool):
    """(transpose flag, array) for a rows x columns column-major operand held in x.

    With the result read transposed, x's dims are swapped relative to the operand's.
    """
    fast, slow = _element_strides(x)[::-1] if transposed_view else _element_strides(x)
    if fast == 1 and slow >= max(1, rows):
        return False, x
    if slow == 1 and fast >= max(1, columns):
        return True, x
    return not transposed_view, np.ascontiguousarray(x)


def mv(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray | None:
    """matrix @ vector as addmv calls gemv: as it lies if column-major, else transposed, else
    copied."""
    functions = _for(matrix, vector)
    if functions is None:
        return None
    m, k = matrix.shape
    rows_stride, columns_stride = _element_strides(matrix)
    if rows_stride == 1 and (k == 1 or columns_stride >= max(1, m)):
        transpose, rows, columns, ld = False, m, k, columns_stride
    elif columns_stride == 1 and (m == 1 or rows_stride >= max(1, k)):
        transpose, rows, columns, ld = True, k, m, rows_stride
    else:
        matrix = np.ascontiguousarray(matrix)
        transpose, rows, columns, ld = True, k, m, k
    if columns == 1:
        ld = rows
    vector_stride = _element_strides(vector)[0]
    if vector_stride <= 0:
        vector, vector_stride = np.ascontiguousarray(vector), 1
    out = np.empty(m, matrix.dtype)
    functions.gemv(
        COLUMN_MAJOR,
        TRANSPOSE if transpose else NO_TRANSPOSE,
        rows,
        columns,
        1.0,
        matrix.ctypes.data,
        max(ld, 1),
        vector.ctypes.data,
        vector_stride,
        0.0,
        out.ctypes.data,
        1,
    )
    return out


def dot(x: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """x · y of two vectors, as a 0-d array."""
    functions = _for(x, y)
    if functions is None:
        return None
    x_stride, y_stride = _element_strides(x)[0], _element_strides(y)[0]
    if x.shape[0] == 1:  # Blas.cpp: a single element is read with unit steps
        x_stride = y_stride = 1
    if x_stride <= 0:
        x, x_stride = np.ascontiguousarray(x), 1
    if y_stride <= 0:
        y, y_stride = np.ascontiguousarray(y), 1
    total = functions.dot(x.shape[0], x.ctypes.data, x_stride, y.ctypes.data, y_stride)
    return np.asarray(total, x.dtype)
