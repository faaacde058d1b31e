"""Vector norms (torch.linalg.vector_norm, Tensor.norm, and through them F.normalize and
F.cosine_similarity) as PyTorch 2.13's CPU kernel adds them up, to the last bit.

aten/src/ATen/native/cpu/ReduceOpsKernel.cpp (norm_kernel_tensor_iterator_impl) takes one of
two paths. A 2-norm over the elements that lie last and contiguous in memory goes through a loop
over each output's row: whole vectors of squares added lane by lane, the lanes then added left to
right, and the elements after the last whole vector one by one. Every other norm goes through
binary_kernel_reduce: each output's elements taken in memory order, one at a time, into an
accumulator in the dtype (split between the two threads past 32768 elements), then projected
(a square root, or a 1/p-th power by glibc's powf). Which steps fuse a * b + c was measured:
the lanes do not, the leftover elements do, past a first group of four that GCC's vectorised loop
takes unfused. A norm over dims of size 1 is the absolute value itself.
"""

from __future__ import annotations

import math

import numpy as np

from engine import libm, numerics

GRAIN_SIZE = numerics.GRAIN_SIZE
_fma = numerics.fused_multiply_add


def vector_norm(a: np.ndarray, ord, dims: tuple | None, keepdim: bool) -> np.ndarray | None:
    """The p-norm of a float32 or float64 array over `dims` (None: every dim), or None for
    what this module does not follow (other dtypes, empty arrays)."""
    if a.dtype not in (np.float32, np.float64) or a.size == 0:
        return None
    axes = tuple(range(a.ndim)) if dims is None else tuple(d % max(a.ndim, 1) for d in dims)
    shape = tuple(1 if d in axes else n for d, n in enumerate(a.shape))
    out_shape = shape if keepdim else tuple(n for d, n in enumerate(a.shape) if d not in axes)
    count = math.prod(a.shape[d] for d in axes)
    if count == 1:  # nothing to add: the size of the one element
        result = (a != 0).astype(a.dtype) if ord == 0 else np.abs(a)
        return result.reshape(out_shape)
    rows, contiguous = _rows(a, axes)
    result = _last_dim_two_norm(rows) if ord == 2 and contiguous else _reduced(rows, ord)
    return result.reshape(out_shape)


def _rows(a: np.ndarray, axes: tuple) -> tuple[np.ndarray, bool]:
    """(outputs, elements) with each output's elements in the order TensorIterator walks them
    (the reduced dims slowest-stride first), and whether they merge into one run of unit stride
    (the kernel's `is_reduce_lastdim`)."""
    reduced = sorted((d for d in axes if a.shape[d] > 1), key=lambda d: -abs(a.strides[d]))
    kept = [d for d in range(a.ndim) if d not in axes]
    run = a.itemsize
    contiguous = True
    for d in reversed(reduced):  # fastest first: each must continue the run
        contiguous &= a.strides[d] == run
        run *= a.shape[d]
    order = kept + reduced + [d for d in axes if a.shape[d] == 1]
    rows = np.transpose(a, order).reshape(math.prod(a.shape[d] for d in kept), -1)
    return rows, contiguous


def _last_dim_two_norm(rows: np.ndarray) -> np.ndarray:
    """The vectorised 2-norm of each row: squares added lane by lane over whole vectors, the lanes
    left to right, then the leftover elements (fused, but for the first four of five or more)."""
    count, n = rows.shape
    lanes = numerics.VECTOR_BYTES // rows.dtype.itemsize
    whole = n // lanes * lanes
    vectors = rows[:, :whole].reshape(count, -1, lanes)
    total = numerics._running_sum(vectors * vectors, axis=1) if whole else None
    if total is None:
        total = np.zeros(count, rows.dtype)
    else:
        first = total[:, 0]
        for lane in range(1, lanes):
            first = first + total[:, lane]
        total = first
    plain = (n - whole) // 4 * 4  # GCC's vector loop over the leftovers: unfused, in order
    for j in range(whole, n):
        value = rows[:, j]
        total = total + value * value if j < whole + plain else _fma(value, value, total)
    return np.sqrt(total)


def _reduced(rows: np.ndarray, ord) -> np.ndarray:
    """binary_kernel_reduce with NormOps: each row's elements in turn, in two threads' halves
    past the grain size, combined by adding (or max/min)."""
    n = rows.shape[1]
    if n <= GRAIN_SIZE or numerics.THREADS == 1:
        return _project(_accumulate(rows, ord), ord)
    half = -(-n // min(numerics.THREADS, -(-n // GRAIN_SIZE)))
    parts = [_accumulate(rows[:, start : start + half], ord) for start in range(0, n, half)]
    if ord == math.inf:
        total = np.maximum.reduce(parts)
    elif ord == -math.inf:
        total = np.minimum.reduce(parts)
    else:
        total = rows.dtype.type(0) + parts[0]
        for part in parts[1:]:
            total = total + part
    return _project(total, ord)


def _accumulate(rows: np.ndarray, ord) -> np.ndarray:
    size = np.abs(rows)
    if ord == math.inf:
        return size.max(axis=1)  # nan propagates, as max_impl does
    if ord == -math.inf:
        return size.min(axis=1)
    if ord == 0:
        terms = (rows != 0).astype(rows.dtype)
    elif ord == 1:
        terms = size
    elif ord == 2:
        terms = rows * rows
    else:
        terms = _pow(size, ord)
    return numerics._running_sum(terms, axis=1)


def _pow(x: np.ndarray, exponent) -> np.ndarray:
    """std::pow in the dtype: glibc's powf or pow (numpy's ** takes shortcuts, sqrt for 0.5)."""
    if x.dtype == np.float32:
        return libm.pow(x, np.float32(exponent))
    return _c_pow(x, np.float64(exponent)).astype(np.float64)


def _pow_of_floats(x: float, y: float) -> float:
    """The C library's pow (Python's math.pow calls it), inf where Python raises instead."""
    try:
        return math.pow(x, y)
    except (ValueError, OverflowError):
        with np.errstate(all="ignore"):
            return float(np.power(np.float64(x), np.float64(y)))


_c_pow = np.frompyfunc(_pow_of_floats, 2, 1)


def _project(total: np.ndarray, ord) -> np.ndarray:
    if ord in (0, 1) or math.isinf(ord):
        return total
    if ord == 2:
        return np.sqrt(total)
    kind = total.dtype.type
    return _pow(total, kind(1) / kind(ord))
