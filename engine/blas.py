"""Matrix products through MKL's BLAS, called with the arguments PyTorch 2.13's CPU build passes.

PyTorch hands float32 and float64 mm, addmm (nn.Linear), matmul, mv, dot and bmm to MKL
(aten/src/ATen/native/LinearAlgebra.cpp addmm_impl_cpu_ and addmv, CPUBlas.cpp gemm, Blas.cpp
dot). MKL picks its kernel from the shapes and the transpose flags, and its kernels add in
orders no formula here could follow, so the engine calls the same library (the one engine/vml.py
loads, pinned to one thread) with the same flags: on every shape from 1 to 70 in each dim,
transposed or not, and on larger random ones, each bit matches PyTorch's.

How PyTorch chooses the flags: a row-major result C = A @ B is computed as the column-major
Cᵀ = Bᵀ Aᵀ; each operand whose rows or columns are contiguous is passed as it lies, with a
transpose flag where its layout needs one, and only an operand with neither is copied. The
leading dimensions of size-1 sides are normalised as CPUBlas.cpp does. bmm of products with 400
multiply-adds or more is one row-major strided batch call (below that PyTorch uses its own
loop: engine/numerics.py).

PyTorch runs MKL on two threads (engine/numerics.THREADS), and MKL then hands some float32
products out in two blocks of rows, each computed as a product of its own, whose kernel adds in
another order than the whole product's (`_first_thread_rows` says which), and splits dots of
32 KiB vectors or more in two halves. Measured against PyTorch on two threads: grids of float32
shapes up to 140 rows and columns and thousands of random ones up to 1000, each layout, with
and without a bias, and dots up to 50000 elements, with strides. float64
products stay one-thread MKL's: MKL splits them too (along the columns, in multiples of 12), by
a rule not worked out yet, so some 5-15 row float64 products differ in their last bits.

Some of MKL's kernels also add in an order that depends on where each row starts modulo 16
bytes, so an operand keeps its address: only arrays that start where their memory does (as
numpy's and PyTorch's allocations do, at a 16-byte boundary) are copied into the buffers.

Every function returns None where PyTorch would not call MKL (other dtypes, empty sides) or the
library cannot load; the caller keeps its numpy product then.
"""

from __future__ import annotations

import ctypes
import threading

import numpy as np

from engine import vml

ROW_MAJOR, COLUMN_MAJOR, NO_TRANSPOSE, TRANSPOSE = 101, 102, 111, 112
THREADS = 2  # torch.get_num_threads() on the 2-core machine the goldens are recorded on
SPLIT_ROWS = {5: 4, 6: 4, 7: 4, 9: 8, 10: 8, 11: 8}  # rows: the first thread's share of them
SPLIT_DOT_BYTES = 32768  # dot of vectors this long (8192 float32, 4096 float64) is split
SCRATCH = 16384  # products whose operands and result are this small go through buffers
MAX_PLANS = 256
_INT, _POINTER = ctypes.c_int, ctypes.c_void_p
_SCALARS = {
    np.dtype(np.float32): ("s", ctypes.c_float),
    np.dtype(np.float64): ("d", ctypes.c_double),
}


class _Functions:
    """cblas_?gemm, cblas_?gemv and cblas_?dot of one dtype, and gemm's scratch buffers."""

    def __init__(self, library: ctypes.CDLL, dtype: np.dtype, prefix: str, scalar):
        self.gemm = getattr(library, f"cblas_{prefix}gemm")
        self.gemm.restype = None  # called with ready-made C arguments only (see mm)
        self.gemv = getattr(library, f"cblas_{prefix}gemv")
        self.gemv.argtypes = [_INT] * 4 + [scalar, _POINTER, _INT, _POINTER, _INT, scalar]
        self.gemv.argtypes += [_POINTER, _INT]
        self.gemv.restype = None
        self.gemm_batch = getattr(library, f"cblas_{prefix}gemm_batch_strided")
        self.gemm_batch.restype = None
        self.dot = getattr(library, f"cblas_{prefix}dot")
        self.dot.argtypes = [_INT, _POINTER, _INT, _POINTER, _INT]
        self.dot.restype = scalar
        self.one, self.zero = scalar(1.0), scalar(0.0)
        # small products go through buffers whose addresses are known: asking numpy for an
        # array's address costs more than multiplying a 32x16 batch by a 16x64 weight
        self.buffers = [np.empty(SCRATCH, dtype) for _ in range(3)]
        self.addresses = [ctypes.c_void_p(buffer.ctypes.data) for buffer in self.buffers]
        self.plans = {}  # (shapes, layouts, bias?) -> views of the buffers and gemm's arguments
        self.lock = threading.Lock()


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
    return {
        dtype: _Functions(library, dtype, prefix, scalar)
        for dtype, (prefix, scalar) in _SCALARS.items()
    }


def _element_strides(array: np.ndarray) -> tuple[int, ...]:
    return tuple(s // array.itemsize for s in array.strides)


def mm(a: np.ndarray, b: np.ndarray, bias: np.ndarray | None = None) -> np.ndarray | None:
    """a @ b (+ bias, broadcast over the result, as addmm adds it: inside the product, beta=1)."""
    functions = _for(a, b)
    if functions is None or (bias is not None and bias.dtype != a.dtype):
        return None
    m, n = a.shape[0], b.shape[1]
    if m in SPLIT_ROWS and THREADS > 1 and a.dtype == np.float32:
        first = _first_thread_rows(m, a.shape[1], n)
        if first:
            return _split_mm(functions, a, b, bias, first)
    return _one_thread_mm(functions, a, b, bias)


def _first_thread_rows(m: int, k: int, n: int) -> int:
    """How many of the result's m rows MKL's first thread computes (0: MKL does not split).

    Measured on PyTorch 2.13's MKL: only 5-7 and 9-11 rows are split, at half the rows rounded
    up to 4; a product of 4, 8 or 12 and more rows adds in the same order whoever computes
    which part. Short sums stay on one thread, the longer the narrower the result.
    """
    if (n >= 12 and k >= 17) or (n >= 17 and k >= 5) or (n >= 101 and k >= 2):
        return SPLIT_ROWS[m]
    return 0


def _split_mm(functions: _Functions, a, b, bias, first: int) -> np.ndarray:
    """mm as two threads compute it: the first `first` rows, then the rest, each one product.

    A last single row is computed with the row before it: MKL's product of one row by a
    transposed b would add as a vector product does, not as the thread's share does.
    """
    m, n = a.shape[0], b.shape[1]
    bias = None if bias is None else np.broadcast_to(bias, (m, n))
    out = np.empty((m, n), a.dtype)
    rest = first - 1 if m - first == 1 and _read_transposed(b) else first
    for start, stop, keep in ((0, first, 0), (rest, m, first - rest)):
        rows = None if bias is None else bias[start:stop]
        out[start + keep : stop] = _one_thread_mm(functions, a[start:stop], b, rows)[keep:]
    return out


def _read_transposed(b: np.ndarray) -> bool:
    """Whether gemm reads b (the first operand of Cᵀ = bᵀ aᵀ) with the transpose flag, as
    _operand decides: b lies column by column and not also row by row."""
    k, n = b.shape
    rows_stride, columns_stride = _element_strides(b)
    if columns_stride == 1 and rows_stride >= max(1, n):
        return False
    return rows_stride == 1 and columns_stride >= max(1, k)


def _one_thread_mm(functions: _Functions, a, b, bias) -> np.ndarray:
    """mm as one call of MKL's gemm."""
    m, n = a.shape[0], b.shape[1]
    if (
        a.size <= SCRATCH
        and b.size <= SCRATCH
        and m * n <= SCRATCH
        and _starts_its_memory(a)
        and _starts_its_memory(b)
    ):
        staged = _staged(functions, a, b, m, n, bias)
        if staged is not None:
            return staged
    out = np.empty((m, n), a.dtype)
    if bias is not None:
        out[...] = bias
    flags, sizes, lds, first, second = _gemm_arguments(a, b, out)
    functions.gemm(
        COLUMN_MAJOR,
        *flags,
        *sizes,
        functions.one,
        ctypes.c_void_p(first.ctypes.data),
        lds[0],
        ctypes.c_void_p(second.ctypes.data),
        lds[1],
        functions.zero if bias is None else functions.one,
        ctypes.c_void_p(out.ctypes.data),
        lds[2],
    )
    return out


def _starts_its_memory(x: np.ndarray) -> bool:
    """Whether x starts where its memory does, so at a 16-byte boundary as the scratch buffers
    do (numpy's allocations, and PyTorch's, all start at one).

    Some of MKL's kernels (a row-major a by a transposed b, single rows and columns) add in an
    order that depends on where each row starts modulo 16 bytes: a slice of rows copied into
    the buffers would lose the address the same slice of a PyTorch tensor keeps. A transposed
    or reshaped view of all its memory starts where the memory does (a view that is neither is
    not C- or F-contiguous: it never goes through the buffers).
    """
    base = x.base
    return base is None or (
        type(base) is np.ndarray and base.base is None and x.nbytes == base.nbytes
    )


def _staged(functions: _Functions, a, b, m: int, n: int, bias) -> np.ndarray | None:
    """mm through the scratch buffers, for operands that lie row by row or column by column:
    copied with their layout, the transpose flags are the ones their own strides give."""
    key = (a.shape, a.strides, b.shape, b.strides, bias is None)
    with functions.lock:
        plan = functions.plans.get(key, False)
        if plan is False:
            if len(functions.plans) >= MAX_PLANS:
                functions.plans.clear()  # a course uses a few shapes; a sweep should not pile up
            plan = functions.plans[key] = _plan(functions, a, b, m, n, bias is None)
        if plan is None:
            return None
        a_view, b_view, out, arguments = plan
        np.copyto(a_view, a)
        np.copyto(b_view, b)
        if bias is not None:
            np.copyto(out, bias)
        functions.gemm(*arguments)
        return out.copy()


def _plan(functions: _Functions, a, b, m: int, n: int, no_bias: bool) -> tuple | None:
    """Views of the buffers shaped and laid out as a, b and the result, and gemm's arguments
    (None unless both operands are C- or F-contiguous)."""
    if not all(x.flags.c_contiguous or x.flags.f_contiguous for x in (a, b)):
        return None
    a_buffer, b_buffer, out_buffer = functions.buffers
    a_view, b_view = _like(a, a_buffer), _like(b, b_buffer)
    out = out_buffer[: m * n].reshape(m, n)
    flags, sizes, lds, first, _ = _gemm_arguments(a_view, b_view, out)
    a_address, b_address, out_address = functions.addresses
    if first is not a_view:  # the result is read transposed: b comes first
        a_address, b_address = b_address, a_address
    beta = functions.zero if no_bias else functions.one
    arguments = (COLUMN_MAJOR, *flags, *sizes, functions.one, a_address, lds[0], b_address)
    arguments += (lds[1], beta, out_address, lds[2])
    return a_view, b_view, out, arguments


def _like(x: np.ndarray, buffer: np.ndarray) -> np.ndarray:
    """A view of the start of buffer with x's shape and strides (x is C- or F-contiguous).

    The strides of a side of length 1 are kept too: PyTorch reads its transpose flag from them
    (a (k, 1) column with strides (1, k) is read as it lies, with (1, 1) transposed).
    """
    return np.lib.stride_tricks.as_strided(buffer[: x.size], x.shape, x.strides)


def _gemm_arguments(m1: np.ndarray, m2: np.ndarray, out: np.ndarray) -> tuple:
    """addmm_impl_cpu_ for a C-contiguous `out`, read as Cᵀ (so the operands swap): the
    transpose flags, (m, n, k), the leading dimensions and the two operands in call order."""
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
    flags = (TRANSPOSE if transpose_a else NO_TRANSPOSE, TRANSPOSE if transpose_b else NO_TRANSPOSE)
    return flags, (m, n, k), (lda, ldb, ldc), a, b


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


def bmm(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """A batch of products a[i] @ b[i] as one row-major strided batch call (bmm's MKL path);
    the caller handles the small products PyTorch computes with its own loop."""
    functions = _for(a, b)
    if functions is None:
        return None
    count, m, k = a.shape
    n = b.shape[2]
    if count == 1 and m in SPLIT_ROWS and THREADS > 1 and a.dtype == np.float32:
        first = _first_thread_rows(m, k, n)
        if first:  # MKL shares a batch of one between the threads as it shares an mm
            return _split_mm(functions, a[0], b[0], None, first)[None]
    a_flag, a, lda = _batch_operand(a)
    b_flag, b, ldb = _batch_operand(b)
    out = np.empty((count, m, n), a.dtype)
    functions.gemm_batch(
        ROW_MAJOR,
        a_flag,
        b_flag,
        m,
        n,
        k,
        functions.one,
        ctypes.c_void_p(a.ctypes.data),
        lda,
        a.strides[0] // a.itemsize,
        ctypes.c_void_p(b.ctypes.data),
        ldb,
        b.strides[0] // b.itemsize,
        functions.zero,
        ctypes.c_void_p(out.ctypes.data),
        n,
        m * n,
        count,
    )
    return out


def _batch_operand(x: np.ndarray) -> tuple:
    """(flag, array, leading dimension) of a batch of row-major matrices: as they lie if their
    rows or their columns are contiguous, else a copy."""
    _, rows, columns = x.shape
    batch_stride, row_stride, column_stride = _element_strides(x)
    if batch_stride > 0:
        if column_stride == 1 and row_stride >= max(1, columns):
            return NO_TRANSPOSE, x, row_stride
        if row_stride == 1 and column_stride >= max(1, rows):
            return TRANSPOSE, x, column_stride
        if rows == 1 or columns == 1:  # a single row or column: any stride reads it in order
            x = np.ascontiguousarray(x)
            return NO_TRANSPOSE, x, max(1, columns)
    return NO_TRANSPOSE, np.ascontiguousarray(x), max(1, columns)


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
    n = x.shape[0]
    if THREADS > 1 and n * x.itemsize >= SPLIT_DOT_BYTES:
        # two threads: each takes a half (the first the larger), and their sums are added
        half = -(-n // 2)
        first = functions.dot(half, x.ctypes.data, x_stride, y.ctypes.data, y_stride)
        x_rest = x.ctypes.data + half * x_stride * x.itemsize
        y_rest = y.ctypes.data + half * y_stride * y.itemsize
        second = functions.dot(n - half, x_rest, x_stride, y_rest, y_stride)
        kind = x.dtype.type
        return np.asarray(kind(first) + kind(second), x.dtype)
    total = functions.dot(n, x.ctypes.data, x_stride, y.ctypes.data, y_stride)
    return np.asarray(total, x.dtype)
