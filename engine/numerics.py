"""Float arithmetic in the order PyTorch 2.13's CPU kernels use, so results match bit for bit.

numpy and PyTorch round differently in a few places a lesson prints: a float32 sum (numpy adds
pairwise in blocks of 128, PyTorch in 8-lane vectors with a cascade of partial sums), `a + alpha *
b`, lerp and linspace (PyTorch fuses the multiply-add into one rounding) and matrix products
(MKL's BLAS, called through engine/blas.py). Each function here reproduces one PyTorch kernel
on numpy arrays; everything else in the engine stays plain numpy. Where PyTorch calls MKL's
vector math library (sin, exp, log, tanh, sqrt, erf, ... of float32 and float64), whose last
bit no formula reproduces, unary_like_torch calls the same library (engine/vml.py), or without
it gets as near as a formula can; tools/measure_numerics.py counts what differs.

The constants describe the machine the goldens were recorded on: PyTorch runs its sum kernel
with AVX2 vectors even where AVX512 is available, and uses as many threads as there are cores."""

from __future__ import annotations

import math

import numpy as np

from engine import blas, vml

# numpy has neither: VML's, as PyTorch's CPU kernels call it (engine/vml.py)
erf, erfc = vml.erf, vml.erfc

VECTOR_BYTES = 32  # Vectorized<float> in PyTorch's AVX2 kernels: 8 floats, 4 doubles
THREADS = 2  # torch.get_num_threads() on a 2-core machine: sums this long are split in two
GRAIN_SIZE = 32768  # at::internal::GRAIN_SIZE: shorter reductions run on one thread
LEVELS = 4  # multi_row_sum's cascade depth
ILP = 4  # row_sum's independent accumulators


# ***** sums: aten/src/ATen/native/cpu/SumKernel.cpp *****


def sum_like_torch(array: np.ndarray, axis=None, keepdims: bool = False) -> np.ndarray:
    """torch.sum of a float array, over every dim (axis=None) or over the dims in `axis`.

    Reproduces cascade_sum: TensorIterator orders the dims (reduced ones first, then by stride)
    and merges the ones it can, then the first two dims go to one of four kernels (vectorised
    along the reduced dim or across the kept one, or their scalar twins), each adding in float32
    through a few levels of partial sums; further reduced dims add row results in turn.
    """
    if array.dtype.kind != "f":
        raise TypeError("sum_like_torch adds floating-point arrays only")
    if axis is None and not keepdims and array.flags.c_contiguous and array.size < GRAIN_SIZE:
        # the common case, kept short: a loss over a batch (the iterator merges every dim)
        if array.size <= 1:  # the output starts at +0: an empty sum is 0, and -0 becomes +0
            return (array.reshape(-1)[:1] + array.dtype.type(0)).sum(dtype=array.dtype)
        return np.asarray(_contiguous_sum(array.reshape(-1)), array.dtype)
    ndim = array.ndim
    axes = tuple(range(ndim)) if axis is None else _positive_axes(axis, ndim)
    shape = array.shape
    out_shape = tuple(
        1 if d in axes else n for d, n in enumerate(shape) if keepdims or d not in axes
    )
    if array.size <= 1 or not any(shape[d] > 1 for d in axes):
        # nothing to add up: the output starts at +0 and takes each value once (so -0 becomes +0)
        if array.size == 0:
            return np.zeros(out_shape, array.dtype)
        return (array + array.dtype.type(0)).reshape(out_shape)
    if array.flags.c_contiguous and array.size < GRAIN_SIZE:
        # the iterator drops size-1 dims; what is left is often a row or a matrix
        kept = [d for d in range(ndim) if shape[d] != 1]
        summed = tuple(i for i, d in enumerate(kept) if d in axes)
        if len(summed) == len(kept):
            return np.asarray(_contiguous_sum(array.reshape(-1)), array.dtype).reshape(out_shape)
        if len(kept) == 2:
            # a matrix's rows or columns (a batch's bias gradient): the loop without the layout
            rows, columns = (shape[d] for d in kept)
            matrix = array.reshape(rows, columns)
            if summed == (0,):
                return _loop2d(matrix.T, rows, columns, columns, 1).reshape(out_shape)
            return _loop2d(matrix, columns, 1, rows, columns).reshape(out_shape)
    return _iterator_sum(array, axes).reshape(out_shape)


def mean_like_torch(array: np.ndarray, axis=None, keepdims: bool = False) -> np.ndarray:
    """torch.mean on the CPU: the sum above, then one division by the count in the array's dtype."""
    axes = tuple(range(array.ndim)) if axis is None else _positive_axes(axis, array.ndim)
    count = math.prod(array.shape[d] for d in axes)
    total = sum_like_torch(array, axes, keepdims)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (total / array.dtype.type(count)).astype(array.dtype, copy=False)


def _positive_axes(axis, ndim: int) -> tuple[int, ...]:
    axes = (axis,) if isinstance(axis, int | np.integer) else tuple(axis)
    return tuple(sorted({int(d) % max(ndim, 1) for d in axes}))


def _lanes(dtype: np.dtype) -> int:
    return VECTOR_BYTES // dtype.itemsize


def _contiguous_sum(row: np.ndarray):
    """vectorized_inner_sum of one contiguous row: whole vectors through row_sum, then the tail.

    Python floats finish the job (the tail and the lanes): numpy calls on tiny arrays cost more
    than the adds themselves.
    """
    lanes = _lanes(row.dtype)
    n = row.shape[0]
    if n < lanes:
        return _scalar_row_sum(row.tolist(), row.dtype.type)
    kind = row.dtype.type
    whole = n // lanes
    rounds = whole // ILP  # row_sum's rows: 4 vectors side by side, one per accumulator
    accumulators = _multi_row_sum(row[: rounds * ILP * lanes].reshape(rounds, ILP * lanes))
    accumulators = accumulators.reshape(ILP, lanes)
    first = accumulators[0]
    for i in range(rounds * ILP, whole):
        first = first + row[i * lanes : (i + 1) * lanes]
    for k in range(1, ILP):
        first = first + accumulators[k]
    total = kind(0)
    for v in row[whole * lanes :].tolist() + first.tolist():
        total = kind(total + v)
    return total


def _scalar_row_sum(values: list, kind):
    """row_sum of a short row of Python floats: 4 interleaved accumulators, then combined."""
    partial = [kind(0)] * ILP
    whole = len(values) // ILP * ILP
    for i in range(whole):
        partial[i % ILP] = kind(partial[i % ILP] + values[i])
    total = partial[0]
    for v in values[whole:]:
        total = kind(total + v)
    for p in partial[1:]:
        total = kind(total + p)
    return total


def _iterator_sum(array: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """The sum as TensorIterator lays it out; returns the kept dims in the array's order."""
    if any(stride < 0 for stride in array.strides):
        array = np.ascontiguousarray(array)  # PyTorch's tensors never step backwards: a copy
    itemsize = array.dtype.itemsize
    # PyTorch's iterator: size-1 dims dropped, reduced dims first, then by stride (fastest first)
    order = sorted(
        (d for d in range(array.ndim) if array.shape[d] > 1),
        key=lambda d: (d not in axes, abs(array.strides[d])),
    )
    dims = []  # merged dims, fastest first: [size, element stride, reduced, original dims]
    for d in order:
        size, stride, reduced = array.shape[d], array.strides[d] // itemsize, d in axes
        if dims:
            last = dims[-1]
            if last[2] == reduced and last[0] * last[1] == stride:
                last[0] *= size
                last[3].append(d)
                continue
        dims.append([size, stride, reduced, [d]])
    if len(dims) == 1:
        if dims[0][2] and array.size >= GRAIN_SIZE and THREADS > 1:
            size, stride = dims[0][0], dims[0][1] * itemsize
            flat = np.lib.stride_tricks.as_strided(array, (size,), (stride,), writeable=False)
            return _two_pass_sum(flat)
        dims.append([1, 0, False, []])
    # a view of the data with the merged dims, slowest first: (outer..., size1, size0)
    view = np.lib.stride_tricks.as_strided(
        array,
        shape=tuple(d[0] for d in reversed(dims)),
        strides=tuple(d[1] * itemsize for d in reversed(dims)),
        writeable=False,
    )
    (n0, s0, _, _), (n1, s1, _, _) = dims[0], dims[1]
    rows = _loop2d(view, n0, s0, n1, s1)  # shape (outer..., size1)
    # each row result is added into its output cell; cells shared by several rows add in turn
    slow_to_fast = list(reversed(dims))
    reduced_axes = [i for i, d in enumerate(slow_to_fast) if d[2] and d is not dims[0]]
    kept = [d for d in slow_to_fast if not d[2]]
    rows = np.moveaxis(rows, reduced_axes, range(len(reduced_axes)))
    rows = rows.reshape((-1,) + rows.shape[len(reduced_axes) :])
    total = _running_sum(rows)
    # undo the merging and the iterator's order of the kept dims
    kept_dims = [orig for d in kept for orig in reversed(d[3])]
    total = total.reshape([array.shape[d] for d in kept_dims])
    total = np.transpose(total, np.argsort(kept_dims)) if kept_dims else total
    return total + array.dtype.type(0)


def _two_pass_sum(flat: np.ndarray) -> np.ndarray:
    """parallel_reduce's two_pass_reduction: each thread sums its share, then the shares add up."""
    n = flat.shape[0]
    tasks = min(THREADS, -(-n // GRAIN_SIZE))
    chunk = -(-n // tasks)
    shares = np.zeros(THREADS, flat.dtype)
    for t in range(tasks):
        part = flat[t * chunk : min(n, (t + 1) * chunk)]
        shares[t] = _loop2d(part[None, :], part.shape[0], 1, 1, 0)[0]
    return _scalar_row_sum(shares.tolist(), flat.dtype.type) + flat.dtype.type(0)


def _loop2d(view: np.ndarray, n0: int, s0: int, n1: int, s1: int) -> np.ndarray:
    """cascade_sum's 2-d loop: sums along the last axis of view (outer..., n1, n0)."""
    lanes = _lanes(view.dtype)
    columns = np.moveaxis(view, -1, 0)  # (n0, outer..., n1): the summed axis first
    if s0 == 1 and n0 >= lanes:
        return _vectorized_inner_sum(columns, lanes)
    if s1 == 1 and n1 >= lanes:
        # vectorised across the kept dim: groups of 4 vectors take the cascade directly, the
        # remaining columns (vectors, then single ones) go through row_sum's 4 accumulators
        return _outer_sum(columns, n1 // (ILP * lanes) * (ILP * lanes))
    if s0 < s1:
        return _row_sum(columns)
    return _outer_sum(columns, n1 // ILP * ILP)  # scalar_outer_sum: 4 columns at a time


def _outer_sum(columns: np.ndarray, grouped: int) -> np.ndarray:
    """The first `grouped` columns through multi_row_sum, the rest through row_sum."""
    if grouped == columns.shape[-1]:
        return _multi_row_sum(columns)
    if grouped == 0:
        return _row_sum(columns)
    return np.concatenate(
        [_multi_row_sum(columns[..., :grouped]), _row_sum(columns[..., grouped:])], axis=-1
    )


def _vectorized_inner_sum(columns: np.ndarray, lanes: int) -> np.ndarray:
    """vectorized_inner_sum: row_sum over whole vectors, then the tail, then the lanes in order."""
    n = columns.shape[0]
    whole = n // lanes
    vectors = columns[: whole * lanes].reshape((whole, lanes) + columns.shape[1:])
    lane_sums = _row_sum(vectors)  # (lanes, ...)
    total = _running_sum(columns[whole * lanes :])
    for k in range(lanes):
        total = total + lane_sums[k]
    return total


def _row_sum(rows: np.ndarray) -> np.ndarray:
    """row_sum: the rows seen as (-1, 4), each column summed by multi_row_sum, then combined."""
    n = rows.shape[0]
    whole = n // ILP
    if whole == 0:  # fewer rows than accumulators: each takes one row, in order
        return _running_sum(rows)
    partial = _multi_row_sum(rows[: whole * ILP].reshape((whole, ILP) + rows.shape[1:]))
    first = partial[0]
    for i in range(whole * ILP, n):
        first = first + rows[i]
    for k in range(1, ILP):
        first = first + partial[k]
    return first


def _multi_row_sum(rows: np.ndarray) -> np.ndarray:
    """multi_row_sum: rows add up in chunks of 2^p, chunk sums in chunks of 2^p, and so on.

    Level 0 sums each chunk from zero; when a chunk ends, its sum is added into level 1, and
    every 2^p of those into level 2, and level 3 keeps the rest; the last partial chunk and the
    unfinished levels are added at the end, lowest level first.
    """
    n = rows.shape[0]
    power = max(4, _ceil_log2(n) // LEVELS)
    step = 1 << power
    lanes = rows.shape[1:]
    chunks = n // step
    if chunks == 0:
        return _running_sum(rows)
    level = _running_sum(rows[: chunks * step].reshape((chunks, step) + lanes), axis=1)
    total = _running_sum(rows[chunks * step :])
    for _ in range(LEVELS - 2):
        if level.shape[0] < step:
            break  # the higher levels stay zero
        groups = level.shape[0] // step
        total = total + _running_sum(level[groups * step :])
        level = _running_sum(level[: groups * step].reshape((groups, step) + lanes), axis=1)
    return total + _running_sum(level)


def _ceil_log2(n: int) -> int:
    return 1 if n <= 2 else (n - 1).bit_length()


def _running_sum(values: np.ndarray, axis: int = 0) -> np.ndarray:
    """Add along one axis strictly in order, starting from zero."""
    if values.shape[axis] == 0:
        return np.zeros(values.shape[:axis] + values.shape[axis + 1 :], values.dtype)
    if _outer_axis(values, axis):
        # numpy adds pairwise only along its inner loop, the axis of smallest stride; along
        # any other it adds row after row, and reduce is several times faster than accumulate
        return np.add.reduce(values, axis=axis, dtype=values.dtype)
    return np.add.accumulate(values, axis=axis, dtype=values.dtype).take(-1, axis=axis)


def _outer_axis(values: np.ndarray, axis: int) -> bool:
    """Whether some other dim (of more than one element) steps through memory faster."""
    stride = abs(values.strides[axis])
    return any(
        abs(s) < stride
        for d, (n, s) in enumerate(zip(values.shape, values.strides, strict=True))
        if d != axis and n > 1
    )


def lane_sum(rows: np.ndarray) -> np.ndarray:
    """vec::reduce_all of x + y along each row of a float32 matrix (softmax's sums).

    Shorter than a vector, a row adds left to right. Otherwise each of the 8 lanes adds its
    column of whole vectors in turn, the tail adds into the first lanes, and the lanes meet
    pairwise across halves: ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)).
    """
    n = rows.shape[-1]
    lanes = _lanes(rows.dtype)
    if n < lanes:
        total = rows[..., 0]
        for k in range(1, n):
            total = total + rows[..., k]
        return total
    whole = n // lanes
    vectors = rows[..., : whole * lanes].reshape(rows.shape[:-1] + (whole, lanes))
    acc = _running_sum(vectors, vectors.ndim - 2)
    tail = n - whole * lanes
    if tail:
        acc[..., :tail] += rows[..., whole * lanes :]
    while acc.shape[-1] > 1:
        half = acc.shape[-1] // 2
        acc = acc[..., :half] + acc[..., half:]
    return acc[..., 0]


# ***** a + alpha * b: aten/src/ATen/native/cpu/BinaryOpsKernel.cpp (add_kernel) *****


def fma_add(a: np.ndarray, b: np.ndarray, alpha) -> np.ndarray:
    """torch.add(a, b, alpha=alpha) for floats: alpha in a's dtype, then one fused multiply-add.

    PyTorch's kernel is vec::fmadd(b, alpha, a): the product is never rounded on its own.
    """
    dtype = np.result_type(a, b)
    if dtype == np.bool_:  # C++'s bool arithmetic: alpha becomes true or false, sums saturate
        return a | (b & bool(alpha))
    if dtype.kind != "f":
        return a + alpha * b
    return fused_multiply_add(np.asarray(b, dtype), dtype.type(alpha), np.asarray(a, dtype))


def fused_multiply_add(x: np.ndarray, y, z: np.ndarray) -> np.ndarray:
    """x * y + z rounded once (IEEE fma), broadcasting; float32 or float64.

    float32: the product is exact in float64 and so is the sum's error (two-sum); the float64
    sum rounds to the right float32 except when it lands exactly halfway between two, where the
    error says which way the exact value lies. float64: the product and sum errors are carried
    (Dekker, two-sum) and added back, which rounds correctly but for rare near-ties.
    """
    dtype = np.result_type(x, y, z)
    if np.ndim(y) == 0 and _power_of_two(y):
        return x * dtype.type(y) + z  # the product is exact: nothing to fuse (momentum's 1)
    if dtype == np.float32:
        return _fma32(x, y, z)
    x, y, z = (np.asarray(v, np.float64) for v in (x, y, z))
    if dtype != np.float64:  # float16: its products and sums fit a float64 exactly
        return (x * y + z).astype(dtype)
    with np.errstate(all="ignore"):
        product = x * y
        product_error = _two_product_error(x, y, product)
        total = product + z
        total_error = _two_sum_error(product, z, total)
        result = total + (product_error + total_error)
    return np.where(np.isfinite(result), result, x * y + z)


def _power_of_two(value) -> bool:
    mantissa, _ = math.frexp(float(value))
    return abs(mantissa) == 0.5


_LOW_BITS = np.uint64(0x1FFFFFFF)  # a float64's 29 bits below float32's precision
_HALFWAY = np.uint64(0x10000000)  # ... reading 1000...0: halfway between two float32s
_MAGNITUDE = np.uint64(0x7FFFFFFFFFFFFFFF)
_TINY = np.uint64(0x3820000000000000)  # 2^-125 as a float64's bits: float32 is subnormal below


def _fma32(x, y, z) -> np.ndarray:
    with np.errstate(all="ignore"):
        total = np.multiply(x, y, dtype=np.float64)  # exact: 24 + 24 bits fit in 53
        total = np.add(total, z, dtype=np.float64)
        rounded = total.astype(np.float32)
        # only a float64 sum exactly halfway between two float32s can round the wrong way, and a
        # result among float32's subnormals (whose halfway points sit higher); a zero is exact
        bits = total.view(np.uint64)
        suspect = (bits & _LOW_BITS) == _HALFWAY
        suspect |= (bits & _MAGNITUDE) - np.uint64(1) < _TINY - np.uint64(1)
        if suspect.any():
            rounded = np.array(rounded, ndmin=1)  # writable, even for a 0-d result
            suspect = np.atleast_1d(suspect)
            rounded[suspect] = _fma32_ties(
                *(
                    np.broadcast_to(np.asarray(v, np.float64), total.shape).reshape(suspect.shape)[
                        suspect
                    ]
                    for v in (x, y, z)
                )
            )
            rounded = rounded.reshape(total.shape)
    return rounded


def _fma32_ties(x64, y64, z64) -> np.ndarray:
    """The careful path: the sum's exact error decides a tie the float64 sum cannot see."""
    product = x64 * y64
    total = product + z64
    error = _two_sum_error(product, z64, total)
    rounded = total.astype(np.float32)
    away = np.where(total > rounded, np.inf, -np.inf).astype(np.float32)
    neighbour = np.nextafter(rounded, away)
    halfway = (rounded.astype(np.float64) + neighbour.astype(np.float64)) * 0.5 == total
    nudge = halfway & (error != 0)
    nudged = np.nextafter(total, np.where(error > 0, np.inf, -np.inf)).astype(np.float32)
    return np.where(nudge, nudged, rounded)


def _two_sum_error(a, b, total):
    """The exact rounding error of total = a + b (Knuth's two-sum)."""
    b_virtual = total - a
    return (a - (total - b_virtual)) + (b - b_virtual)


def _two_product_error(a, b, product):
    """The exact rounding error of product = a * b (Dekker's split, no fma needed)."""
    a_hi, a_lo = _split(a)
    b_hi, b_lo = _split(b)
    return ((a_hi * b_hi - product) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo


def _split(a):
    c = 134217729.0 * a  # 2^27 + 1
    hi = c - (c - a)
    return hi, a - hi


def lerp(start: np.ndarray, end: np.ndarray, weight) -> np.ndarray:
    """torch.lerp with a number weight (aten/src/ATen/native/Lerp.h): one fused multiply-add.

    A small weight (|w| < 0.5) steps from start, a large one back from end, as lerp_vec does.
    """
    dtype = start.dtype
    weight = dtype.type(weight)
    difference = end - start
    if abs(weight) < 0.5:
        return fused_multiply_add(weight, difference, start)
    return fused_multiply_add(weight - dtype.type(1), difference, end)


# ***** linspace: aten/src/ATen/native/cpu/RangeFactoriesKernel.cpp *****


def linspace_like_torch(start: float, end: float, steps: int, dtype: np.dtype) -> np.ndarray:
    """torch.linspace for a float dtype (steps >= 2): everything in that dtype, step included.

    The first half counts up from start, the second half down from end, each value one fused
    multiply-add (start + step * i), so both ends come out exact.
    """
    kind = dtype.type
    first, last = kind(start), kind(end)
    step = kind(kind(last - first) / kind(steps - 1))
    i = np.arange(steps, dtype=dtype)
    from_start = fused_multiply_add(step, i, first)
    from_end = fused_multiply_add(-step, kind(steps - 1) - i, last)
    return np.where(np.arange(steps) < steps // 2, from_start, from_end).astype(dtype, copy=False)


# ***** the other places a float sum or power hides *****


def sum_to_shape(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """at::sum_to: a broadcast gradient summed back to its input's shape, with torch's sum."""
    extra = grad.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(
        extra + i for i, n in enumerate(shape) if n == 1 and grad.shape[extra + i] != 1
    )
    if not axes:
        return grad.reshape(shape)
    if grad.dtype.kind == "f":
        return sum_like_torch(grad, axes).reshape(shape)
    return grad.sum(axis=axes).reshape(shape)


def power_like_torch(base: np.ndarray, exponent):
    """tensor ** number: PyTorch multiplies out the cubes and inverse squares (Pow.cpp's
    pow_tensor_scalar_optimized_kernel) where numpy would call pow(), takes ** 0.5 to its
    sqrt kernel (MKL's, through unary_like_torch) and ** -0.5 to rsqrt's. Any other power of a
    float32 is Sleef's vector pow over whole pairs of vectors and libm's (a float64 pow rounded
    once) over what is left (vectorized_loop); the rest is numpy's.
    """
    if base.dtype.kind == "f":
        if exponent == 1:
            return base.copy()
        if exponent == 0.5:
            return unary_like_torch(np.sqrt, base)
        if exponent == -0.5:  # Pow.cpp sends it to rsqrt: a division by the rounded root
            with np.errstate(divide="ignore", invalid="ignore"):
                return base.dtype.type(1) / np.sqrt(base)
        if exponent == 3:
            return base * base * base
        if exponent == -2:
            with np.errstate(divide="ignore"):
                return base.dtype.type(1) / (base * base)
        if base.dtype == np.float32 and exponent not in (0, 2, -1):
            from engine import sleef  # here: sleef computes with this module's fma

            return vectorized_loop(
                lambda run: sleef.pow(run, base.dtype.type(exponent)),
                lambda run: unary_like_torch(lambda wide: wide**exponent, run),
                base,
            )
    return base**exponent


def vectorized_loop(vector, scalar, array: np.ndarray, *others: np.ndarray) -> np.ndarray:
    """An elementwise kernel as cpu_kernel_vec runs it: in memory order, split between the
    threads past the grain size, each share's whole pairs of vectors through `vector` and the
    elements left over through `scalar`. Both take 1-d runs of `array` and of each of `others`
    (the kernel's inputs in PyTorch's order: a backward's gradient comes first) and give a 1-d
    run back.

    TensorIterator walks a layout it cannot flatten into one run (a slice, a broadcast, inputs
    laid out differently) dim by dim: its innermost run is the unit of vectors and leftovers,
    and it takes no vectors at all where an input steps through memory along that run (one
    input may stand still: a broadcast number).
    """
    shape = array.shape
    if any(other.shape != shape for other in others):
        shape = np.broadcast_shapes(shape, *(other.shape for other in others))
        others = tuple(np.broadcast_to(other, shape) for other in others)
        return _runs_loop(vector, scalar, np.broadcast_to(array, shape), others)
    order = "C" if array.flags.c_contiguous else "F" if array.flags.f_contiguous else None
    if order is None or any(not other.flags[order + "_CONTIGUOUS"] for other in others):
        return _runs_loop(vector, scalar, array, others)
    flat = [operand.ravel(order=order) for operand in (array, *others)]
    return _one_run(vector, scalar, flat, vectors=True).reshape(shape, order=order)


def _one_run(vector, scalar, flat: list, vectors: bool) -> np.ndarray:
    """cpu_kernel_vec over one run of n elements: two threads' halves past the grain size."""
    n = flat[0].shape[0]
    tasks = 1 if n < GRAIN_SIZE else min(THREADS, -(-n // GRAIN_SIZE))
    chunk = -(-n // tasks) if n else 0
    step = 2 * _lanes(flat[0].dtype) if vectors else n + 1
    out = np.empty(n, flat[0].dtype)
    for start in range(0, n, max(chunk, 1)):
        end = min(n, start + chunk)
        split = start + (end - start) // step * step
        if split > start:
            out[start:split] = vector(*(f[start:split] for f in flat))
        if end > split:
            out[split:end] = scalar(*(f[split:end] for f in flat))
    return out


def _runs_loop(vector, scalar, array: np.ndarray, others: tuple) -> np.ndarray:
    """vectorized_loop over a layout of several runs. The dims go in TensorIterator's order
    (by the strides of the first input not broadcast along them, innermost first), merge while
    every operand steps through them evenly, and each run of that length takes its own vectors
    and leftovers, where every operand is contiguous along it (but one may stand still)."""
    operands = (array, *others)
    if array.size == 0:
        return np.empty(array.shape, array.dtype)
    order = _iteration_order(array.shape, operands)  # innermost first
    dims = [d for d in order if array.shape[d] != 1]
    if not dims:
        flat = [operand.reshape(-1) for operand in operands]
        return _one_run(vector, scalar, flat, vectors=False).reshape(array.shape)
    run, inner = array.shape[dims[0]], dims[0]
    for outer in dims[1:]:
        if any(o.strides[outer] != o.strides[inner] * o.shape[inner] for o in operands):
            break
        run, inner = run * array.shape[outer], outer
    strides = [o.strides[dims[0]] for o in operands]
    still = strides.count(0)
    # every operand contiguous along the run, but one that may stand still (a broadcast number)
    vectors = all(s in (0, array.itemsize) for s in strides) and still <= 1 and still < len(strides)
    outer_first = order[::-1]
    laid = [np.transpose(o, outer_first) for o in operands]  # the iteration order as C order
    if run == array.size:
        flat = [operand.reshape(-1) for operand in laid]
        out = _one_run(vector, scalar, flat, vectors).reshape(laid[0].shape)
        return np.transpose(out, np.argsort(outer_first))
    step = 2 * _lanes(array.dtype)
    split = run // step * step if vectors else 0
    rows = [np.reshape(o, (-1, run)) for o in laid]
    out = np.empty((rows[0].shape[0], run), array.dtype)
    if split:
        out[:, :split] = vector(*(r[:, :split].reshape(-1) for r in rows)).reshape(-1, split)
    if split < run:
        out[:, split:] = scalar(*(r[:, split:].reshape(-1) for r in rows)).reshape(-1, run - split)
    return np.transpose(out.reshape(laid[0].shape), np.argsort(outer_first))


def _iteration_order(shape: tuple, operands) -> list[int]:
    """TensorIterator's reorder_dimensions: the dims innermost first, sorted by the strides of
    the first operand that is not broadcast along the two compared (equal strides: the smaller
    dim inside), an insertion sort from the C order."""

    def swap(d0: int, d1: int) -> int:
        for o in operands:
            s0, s1 = o.strides[d0], o.strides[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    order = list(range(len(shape)))[::-1]
    for i in range(1, len(order)):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            comparison = swap(order[d0], order[d1])
            if comparison > 0:
                order[d0], order[d1] = order[d1], order[d0]
                d1 = d0
            elif comparison < 0:
                break
    return order


def unary_like_torch(function, array: np.ndarray) -> np.ndarray:
    """A numpy function (np.sin, np.exp, np.sqrt, ...) of a float array, as PyTorch computes it.

    Where PyTorch calls MKL's vector library (VML, see engine/vml.py), this calls it too and the
    bits match. Otherwise, and wherever the library is missing, a float32 function runs in
    float64 and is rounded once, which is what VML's high-accuracy mode is nearest to:
    tools/measure_numerics.py counts the difference (numpy's float32 functions differ from
    VML's in 13-40% of random inputs, these in 0.1-8%). Other dtypes go straight to numpy.
    """
    computed = vml.compute(function, array)
    if computed is not None:
        return computed
    if array.dtype != np.float32:
        return function(array)
    with np.errstate(all="ignore"):
        return function(array.astype(np.float64)).astype(np.float32)


def _rounded_once(function):
    """function for float32 arrays computed in float64 and rounded once, numpy's own otherwise.

    For the functions PyTorch computes with its own vector code rather than VML's and that
    engine/elementwise.py does not follow step by step (sinh, cosh, expm1 and log1p are there):
    on 400k random float32 inputs this misses PyTorch's bits in 0.1-0.2% (atanh), numpy's
    float32 functions in 2-40%. float64 stays numpy's (0.04-4% off; asinh and acosh, 18% off
    either way, are left as they were)."""

    def rounded(array: np.ndarray) -> np.ndarray:
        if array.dtype != np.float32:
            return function(array)
        return function(array.astype(np.float64)).astype(np.float32)

    rounded.__name__ = function.__name__
    return rounded


arctanh = _rounded_once(np.arctanh)


def vml_or_numpy(function, array: np.ndarray) -> np.ndarray:
    """function(array) through VML where PyTorch calls it (unary_like_torch), numpy's own
    elsewhere: for functions whose numpy result is already what PyTorch's own code gives."""
    computed = vml.compute(function, array)
    return function(array) if computed is None else computed


# ***** matrix products: MKL's BLAS, as PyTorch's CPU build calls it *****

NARROW = 12  # without MKL: outputs narrower than this are summed with every product rounded


def matmul_like_torch(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b for 1-d or 2-d float arrays as PyTorch computes it: dot, mv or mm through MKL's
    cblas with PyTorch's transpose flags (engine/blas.py), which matches every bit.

    Without the library: MKL's order as measured, each output a running sum over k, products
    rounded before the add for fewer than 12 output columns and fused above (numpy's own);
    not exact for some 5 to 11 column shapes, mv and dot. Other dtypes are numpy's.
    """
    computed = None
    if a.ndim == 2:
        computed = blas.mm(a, b) if b.ndim == 2 else blas.mv(a, b)
    elif b.ndim == 1:
        computed = blas.dot(a, b)
    if computed is not None:
        return computed
    if a.dtype != np.float32 or b.dtype != np.float32 or a.ndim != 2 or a.shape[1] == 0:
        return a @ b
    columns = b if b.ndim == 2 else b[:, None]
    if columns.shape[1] >= NARROW:
        return a @ b
    products = a[:, :, None] * columns[None, :, :]  # (m, k, n), each rounded to float32
    total = np.add.accumulate(products, axis=1)[:, -1, :]
    return total if b.ndim == 2 else total[:, 0]


SMALL_BMM = 400  # LinearAlgebra.cpp: bmm of smaller products runs PyTorch's own loop


def bmm_like_torch(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a[i] @ b[i] for 3-d arrays as torch.bmm computes them: below 400 multiply-adds per
    product its own loop (each product rounded, added in order from +0), above one MKL batch
    call (engine/blas.py); numpy's product for other dtypes or without the library."""
    count, m, k = a.shape
    n = b.shape[2]
    if a.dtype.kind == "f" and a.dtype == b.dtype and 0 < m * k * n < SMALL_BMM and count:
        products = a[:, :, :, None] * b[:, None, :, :]  # (count, m, k, n), each rounded
        return np.add.accumulate(products, axis=2)[:, :, -1, :] + a.dtype.type(0)
    computed = blas.bmm(a, b)
    return a @ b if computed is None else computed


def addmm_like_torch(bias: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """bias + a @ b as addmm computes it: MKL adds the bias inside the product (beta = 1);
    without the library, after it."""
    computed = blas.mm(a, b, bias) if bias.dtype == a.dtype else None
    return matmul_like_torch(a, b) + bias if computed is None else computed


def column_major(matrix: np.ndarray) -> bool:
    """Whether a matrix lies column by column, as PyTorch's mm backward asks of its inputs."""
    return matrix.ndim == 2 and matrix.strides == (matrix.itemsize, matrix.itemsize * len(matrix))


def mm_mat1_backward(grad: np.ndarray, mat2: np.ndarray, mat1_column_major: bool) -> np.ndarray:
    """grad @ mat2ᵀ as FunctionsManual.cpp's mm_mat1_backward computes it: for a column-major
    mat1 as (mat2 @ gradᵀ)ᵀ, so the gradient takes mat1's layout (MKL's bits differ)."""
    if mat1_column_major:
        return matmul_like_torch(mat2, grad.T).T
    return matmul_like_torch(grad, mat2.T)


def mm_mat2_backward(grad: np.ndarray, mat1: np.ndarray, mat2_column_major: bool) -> np.ndarray:
    """mat1ᵀ @ grad, or (gradᵀ @ mat1)ᵀ for a column-major mat2 (nn.Linear's weight.t())."""
    if mat2_column_major:
        return matmul_like_torch(grad.T, mat1).T
    return matmul_like_torch(mat1.T, grad)
