"""layer_norm and batch_norm as PyTorch 2.13's CPU kernels compute them, to the last bit.

The kernels (aten/src/ATen/native/cpu/layer_norm_kernel.cpp, batch_norm_kernel.cpp and the
Welford moments of moments_utils.h) work in the input's dtype with AVX2 vectors (8 float32 or 4
float64 lanes), split rows between PyTorch's two threads, and let the compiler fuse some of their
`a * b + c` into one rounding and not others. Each function here follows one kernel step by
step on numpy arrays; where an operation is fused is not readable from the source, so each
`_fma` below is where measurement against PyTorch (tools/measure_numerics.py) found one.

All arrays are C-contiguous rows, as the kernels read them: layer_norm's (M, N) are the samples
and the normalised elements; batch_norm's (N, C) are the batch and the channels, or (N, C, L)
with a length dim.
"""

from __future__ import annotations

import numpy as np

from engine import numerics

THREADS = numerics.THREADS
VECTOR_BYTES = numerics.VECTOR_BYTES
CHUNK = 16  # moments_utils.h kChunkSize: vectors per Welford chunk
_fma = numerics.fused_multiply_add


def _lanes(dtype: np.dtype) -> int:
    return VECTOR_BYTES // dtype.itemsize


def _thread_rows(count: int) -> list[tuple[int, int]]:
    """at::parallel_for(0, count, 1)'s shares: consecutive blocks of ceil(count / threads)."""
    tasks = max(1, min(THREADS, count))
    chunk = -(-count // tasks)
    return [(t * chunk, min(count, (t + 1) * chunk)) for t in range(tasks) if t * chunk < count]


def _ceil_log2(n: int) -> int:
    return 1 if n <= 2 else (n - 1).bit_length()


# ***** RowwiseMoments: the mean and (biased) variance of each row *****


def rowwise_moments(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's mean and variance (divided by N), as moments_utils.h's RowwiseMoments: Welford
    updates vector by vector within chunks of 16 vectors, chunks merged in a cascade, the
    elements after the last whole vector by a scalar Welford, then the lanes merged into it."""
    rows, n_elements = x.shape
    kind = x.dtype.type
    lanes = _lanes(x.dtype)
    vectors = n_elements // lanes
    chunks = -(-vectors // CHUNK)
    depth = _ceil_log2(chunks)
    zero = np.zeros((rows, lanes), x.dtype)
    counts, means, squares = [0] * depth, [zero] * depth, [zero] * depth
    chunk_means, chunk_squares = _chunk_moments(x[:, : vectors * lanes], lanes)
    for i in range(chunks):
        size = min(CHUNK, vectors - i * CHUNK)
        merged = _add_moments(
            size, chunk_means[i], chunk_squares[i], counts[0], means[0], squares[0]
        )
        counts[0], means[0], squares[0] = merged
        mask = i + 1
        level = 1
        while level < depth and mask & 1 == 0:
            below = counts[level - 1], means[level - 1], squares[level - 1]
            counts[level], means[level], squares[level] = _add_moments(
                *below, counts[level], means[level], squares[level]
            )
            counts[level - 1], means[level - 1], squares[level - 1] = 0, zero, zero
            mask >>= 1
            level += 1
    for level in range(1, depth):
        counts[0], means[0], squares[0] = _add_moments(
            counts[level], means[level], squares[level], counts[0], means[0], squares[0]
        )
    # the leftover elements one by one, then each lane's moments merged in (scalar code)
    count, mean, square = 0, np.zeros(rows, x.dtype), np.zeros(rows, x.dtype)
    for j in range(vectors * lanes, n_elements):
        value = x[:, j]
        delta = value - mean
        count += 1
        mean = mean + delta / kind(count)
        square = square + delta * (value - mean)
    for lane in range(lanes):
        total = count + vectors
        c = kind(0) if total == 0 else kind(vectors) / kind(total)
        delta = means[0][:, lane] - mean
        mean = _fma(c, delta, mean)
        square = square + _fma(delta * delta * c, kind(count), squares[0][:, lane])
        count = total
    return mean, square / kind(n_elements)


def _chunk_moments(x: np.ndarray, lanes: int) -> tuple[list, list]:
    """UpdateMomentsVec of every chunk: each lane's Welford mean and sum of squares over the
    chunk's vectors (fused: m1 += delta / (j + 1), m2 += delta * (x - m1)). The whole chunks
    go together; the last, shorter one on its own."""
    rows, n_elements = x.shape
    kind = x.dtype.type
    vectors = n_elements // lanes
    whole = vectors // CHUNK
    parts = []
    if whole:
        parts.append(x[:, : whole * CHUNK * lanes].reshape(rows, whole, CHUNK, lanes))
    if vectors > whole * CHUNK:
        parts.append(x[:, whole * CHUNK * lanes :].reshape(rows, 1, vectors - whole * CHUNK, lanes))
    means, squares = [], []
    for part in parts:
        mean = np.zeros((rows, part.shape[1], lanes), x.dtype)
        square = np.zeros_like(mean)
        for j in range(part.shape[2]):
            value = part[:, :, j]
            delta = value - mean
            mean = _fma(delta, kind(1) / kind(j + 1), mean)
            square = _fma(delta, value - mean, square)
        means += [mean[:, i] for i in range(part.shape[1])]
        squares += [square[:, i] for i in range(part.shape[1])]
    return means, squares


def _add_moments(count_add: int, mean_add, square_add, count: int, mean, square) -> tuple:
    """AddMomentsVec: one set of lane moments merged into another (m1 += c * delta unfused;
    m2 + m2_add, then (delta * c) * (delta * m0) fused onto it)."""
    kind = mean.dtype.type
    total = count + count_add
    c = kind(0) if total == 0 else kind(count_add) / kind(total)
    delta = mean_add - mean
    mean = mean + c * delta
    square = _fma(delta * c, delta * kind(count), square + square_add)
    return total, mean, square


# ***** layer_norm *****


def layer_norm(x: np.ndarray, weight, bias, eps: float) -> tuple:
    """LayerNormKernelImplInternal: (y, mean, rstd) of each row of x (M, N)."""
    kind = x.dtype.type
    mean, variance = rowwise_moments(x)
    rstd = kind(1) / np.sqrt(variance + kind(eps))
    centred = x - mean[:, None]
    if weight is not None and bias is not None:  # the vector loop: (x - mean) * rstd, fused on
        y = _fma(centred * rstd[:, None], weight, bias)
    elif bias is not None:  # the scalar loop without a weight: one fused multiply-add
        y = _fma(centred, rstd[:, None], bias)
    else:
        y = centred * rstd[:, None]
        if weight is not None:
            y = y * weight
    return y.astype(x.dtype, copy=False), mean, rstd


def layer_norm_backward(grad, x, mean, rstd, weight, needs: tuple[bool, bool, bool]) -> tuple:
    """LayerNormBackwardKernelImplInternal: the gradients of x, weight and bias (None where not
    needed). Each thread sums the weight's and the bias's gradient over its rows into a buffer of
    its own; the buffers are added at the end."""
    rows, n_elements = x.shape
    kind = x.dtype.type
    a = rstd[:, None]
    grad_weight = grad_bias = grad_input = None
    if needs[1] or needs[2]:
        shift = -a * mean[:, None]
        normalised = _fma(a, x, shift) if needs[1] else None
        weight_buffers, bias_buffers = [], []
        for start, stop in _thread_rows(rows):
            if needs[1]:
                buffer = np.zeros(n_elements, x.dtype)
                for i in range(start, stop):
                    buffer = _fma(grad[i], normalised[i], buffer)
                weight_buffers.append(buffer)
            if needs[2]:
                bias_buffers.append(numerics._running_sum(grad[start:stop]))
        if needs[1]:
            grad_weight = _add_in_turn(weight_buffers, kind)
        if needs[2]:
            grad_bias = _add_in_turn(bias_buffers, kind)
    if needs[0]:
        if weight is None:
            ds = _reduce_all(grad * x, grad, x)
            db = _reduce_all(grad)
            scaled = a * grad
        else:
            product = grad * x
            ds = _reduce_all(product * weight, product, weight)
            db = _reduce_all(grad * weight, grad, weight)
            scaled = a * grad * weight
        scale = kind(1) / kind(n_elements)
        b = _fma(db, mean, -ds) * rstd * rstd * rstd * scale
        c = _fma(-b, mean, -(db * rstd * scale))
        grad_input = _fma(b[:, None], x, scaled) + c[:, None]
    return grad_input, grad_weight, grad_bias


def _add_in_turn(buffers: list, kind) -> np.ndarray:
    """The threads' buffers added into a zero, first thread first."""
    total = kind(0) + buffers[0]
    for buffer in buffers[1:]:
        total = total + buffer
    return total


def _reduce_all(values: np.ndarray, factor=None, other=None) -> np.ndarray:
    """vec::reduce_all / map2_reduce_all / map3_reduce_all of x + y along each row of `values`
    (the mapped values, each rounded). Whole vectors add lane by lane; the tail of a row longer
    than a vector is added with its last product fused (factor * other + accumulator); then the
    lanes meet pairwise. A row shorter than a vector adds left to right."""
    rows, n = values.shape
    lanes = _lanes(values.dtype)
    if n < lanes:
        total = values[:, 0]
        for k in range(1, n):
            total = total + values[:, k]
        return total
    whole = n // lanes
    accumulator = numerics._running_sum(values[:, : whole * lanes].reshape(rows, whole, lanes), 1)
    if n > whole * lanes:
        tail = slice(whole * lanes, n)
        head = accumulator[:, : n - whole * lanes]
        if factor is None:
            accumulator[:, : n - whole * lanes] = head + values[:, tail]
        else:
            factor = np.broadcast_to(factor, values.shape)[:, tail]
            other = np.broadcast_to(other, values.shape)[:, tail]
            accumulator[:, : n - whole * lanes] = _fma(factor, other, head)
    while accumulator.shape[1] > 1:
        half = accumulator.shape[1] // 2
        accumulator = accumulator[:, :half] + accumulator[:, half:]
    return accumulator[:, 0]


# ***** batch_norm: the channels are dim 1; (N, C) rows take the channels-last kernels *****


def batch_norm_stats(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """batch_norm_cpu_collect_stats: each channel's mean and sum of squared deviations (in the
    input's dtype), as the training forward takes them."""
    if x.ndim == 3 and x.shape[2] != 1:
        return _contiguous_stats(x)
    rows = x.reshape(x.shape[0], x.shape[1])
    count, channels = rows.shape
    kind = x.dtype.type
    if count > THREADS:  # each thread adds its rows into a buffer; the buffers add in double
        sums = [numerics._running_sum(rows[a:b]) for a, b in _thread_rows(count)]
        mean = (_double_sum(sums) / count).astype(x.dtype)
        squares = []
        for start, stop in _thread_rows(count):
            buffer = np.zeros(channels, x.dtype)
            for i in range(start, stop):
                deviation = rows[i] - mean
                buffer = _fma(deviation, deviation, buffer)
            squares.append(buffer)
        return mean, _double_sum(squares).astype(x.dtype)
    if channels <= 16 or channels > 2048:  # tiles of channels, one vector loop in the dtype
        mean = kind(0) + rows[0]
        for row in rows[1:]:
            mean = row + mean
        mean = mean / kind(count)
        square = np.zeros(channels, x.dtype)
        for row in rows:
            deviation = row - mean
            square = _fma(deviation, deviation, square)
        return mean, square
    # a loop per channel, adding in double
    mean = (_double_sum(list(rows)) / count).astype(x.dtype)
    deviations = rows - mean
    return mean, _double_sum(list(deviations * deviations)).astype(x.dtype)


def _double_sum(parts: list) -> np.ndarray:
    """0.0 + each part in turn, in double (an accscalar_t loop)."""
    total = np.float64(0) + parts[0].astype(np.float64)
    for part in parts[1:]:
        total = total + part
    return total


def _contiguous_stats(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (N, C, L) kernel: each channel's elements added one by one in double, batch by batch."""
    count = x.shape[0] * x.shape[2]
    values = np.moveaxis(x, 1, 0).reshape(x.shape[1], count)
    total = np.add.accumulate(values.astype(np.float64), axis=1)[:, -1]
    mean = (total / count).astype(x.dtype)
    deviations = values - mean[:, None]
    squares = (deviations * deviations).astype(np.float64)
    return mean, np.add.accumulate(squares, axis=1)[:, -1].astype(x.dtype)


def training_invstd(var_sum: np.ndarray, count: int, eps: float) -> np.ndarray:
    """InvStd in double of the biased variance (var_sum / count, in the dtype)."""
    variance = (var_sum / var_sum.dtype.type(count)).astype(np.float64)
    with np.errstate(divide="ignore"):
        invstd = np.where((variance != 0) | (eps != 0), 1 / np.sqrt(variance + eps), 0)
    return invstd.astype(var_sum.dtype)


def running_stats(running_mean, running_var, mean, var_sum, count: int, momentum) -> tuple:
    """batch_norm_cpu_update_stats_template's fold of the batch into the running statistics: the
    mean in the dtype, the unbiased variance (var_sum / (count - 1) in the dtype) in double."""
    kind = running_mean.dtype.type
    m = kind(momentum)
    new_mean = m * mean.astype(running_mean.dtype) + (kind(1) - m) * running_mean
    unbiased = (var_sum / var_sum.dtype.type(count - 1)).astype(np.float64)
    decayed = ((kind(1) - m) * running_var).astype(np.float64)
    new_var = (np.float64(m) * unbiased + decayed).astype(running_var.dtype)
    return new_mean, new_var


def batch_norm(x: np.ndarray, weight, bias, mean, invstd) -> np.ndarray:
    """batch_norm_cpu_kernel: x * alpha + beta (one fused multiply-add) with alpha = invstd * w
    and beta = b - mean * alpha (fused too), per channel."""
    kind = x.dtype.type
    alpha = invstd if weight is None else invstd * weight
    beta = _fma(-mean, alpha, kind(0) if bias is None else bias)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return _fma(x, alpha.reshape(shape), beta.reshape(shape)).astype(x.dtype, copy=False)


def eval_invstd(running_var: np.ndarray, eps: float, backward: bool) -> np.ndarray:
    """1 / sqrt(running_var + eps) in evaluation mode: the forward adds eps in the dtype, the
    backward in double."""
    if backward:
        return (1 / np.sqrt(running_var.astype(np.float64) + eps)).astype(running_var.dtype)
    kind = running_var.dtype.type
    return kind(1) / np.sqrt(running_var + kind(eps))


def batch_norm_backward(grad, x, weight, mean, invstd, training: bool) -> tuple:
    """batch_norm_cpu_backward_kernel: (grad_input, grad_weight, grad_bias); mean and invstd are
    the saved batch statistics in training, the running ones (eval_invstd) otherwise."""
    if x.ndim == 3 and x.shape[2] != 1:
        return _contiguous_backward(grad, x, weight, mean, invstd, training)
    shape = x.shape
    rows, grads = x.reshape(shape[0], shape[1]), grad.reshape(shape[0], shape[1])
    count, channels = rows.shape
    kind = x.dtype.type
    sums, dots = [], []
    for start, stop in _thread_rows(count):
        sums.append(numerics._running_sum(grads[start:stop]))
        dot = np.zeros(channels, x.dtype)
        for i in range(start, stop):
            dot = _fma(rows[i] - mean, grads[i], dot)
        dots.append(dot)
    total, dot = _double_sum(sums).astype(x.dtype), _double_sum(dots).astype(x.dtype)
    w = np.ones(channels, x.dtype) if weight is None else weight
    if training:
        k = dot * invstd * invstd / kind(count)
        grad_mean = total / kind(count)
        deviation = rows - mean
        centred = grads - grad_mean
        # whole vectors of channels fuse (dy - grad_mean) - (x - mean) * k; the tail does not
        inner = _fma(-deviation, k, centred)
        whole = channels // _lanes(x.dtype) * _lanes(x.dtype)
        inner[:, whole:] = centred[:, whole:] - deviation[:, whole:] * k[whole:]
        grad_input = inner * invstd * w
    else:
        grad_input = grads * invstd * w
    return grad_input.reshape(shape), dot * invstd, total


def _contiguous_backward(grad, x, weight, mean, invstd, training: bool) -> tuple:
    """The (N, C, L) kernel: per channel, each batch's row of L reduced in the dtype (as LayerNorm's
    reductions) and added in double."""
    batch, channels, length = x.shape
    kind = x.dtype.type
    count = batch * length
    total = np.zeros(channels, np.float64)
    dot = np.zeros(channels, np.float64)
    deviation = x - mean[:, None]
    for n in range(batch):
        total = total + _reduce_all(grad[n])
        product = deviation[n] * grad[n]
        dot = dot + _reduce_all(product, deviation[n], grad[n])
    w = np.ones(channels, x.dtype) if weight is None else weight
    if training:
        k = (dot.astype(x.dtype) * invstd * invstd / kind(count))[:, None]
        grad_mean = (total / count).astype(x.dtype)[:, None]
        grad_input = _fma(-deviation, k, grad - grad_mean) * invstd[:, None] * w[:, None]
    else:
        grad_input = grad * invstd[:, None] * w[:, None]
    grad_weight = (dot * invstd).astype(x.dtype)
    return grad_input, grad_weight, total.astype(x.dtype)
