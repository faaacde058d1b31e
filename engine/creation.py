"""Making new tensors: from data (torch.tensor), filled, ranges, random, and by joining tensors."""

from __future__ import annotations

import warnings

import numpy as np

from engine import dtypes, numerics
from engine import functions as fn
from engine import random as rng
from engine.record import apply, leaf
from engine.shape import broadcast_shapes, parse_shape, wrap_dim
from engine.tensor import Tensor
from engine.unsupported import UnsupportedByGradtrace


def _dtype(dtype, default: dtypes.dtype | None = None) -> np.dtype:
    if dtype is None:
        return (default or dtypes.default_float()).np
    return dtypes.resolve(dtype).np


# ***** from data *****


def tensor(data, dtype: dtypes.dtype | None = None, requires_grad: bool = False, device=None):
    """torch.tensor: copy Python numbers, nested lists or arrays into a new leaf tensor."""
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach()."
            "clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "torch.tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
        data = data._array
    array = _to_array(data, dtype)
    return leaf(array, requires_grad, "tensor")


def _to_array(data, dtype: dtypes.dtype | None) -> np.ndarray:
    values = _unwrap(data)
    try:
        array = np.array(values, dtype=None if dtype is None else dtypes.resolve(dtype).np)
    except ValueError:
        _check_ragged(values, _first_sizes(values), 0)  # PyTorch's message for uneven lists
        raise
    if dtype is not None:
        return array
    if array.dtype.kind == "f":
        return array.astype(dtypes.default_float().np)
    if array.dtype.kind in "iu":
        return array.astype(np.int64)
    if array.dtype.kind == "b":
        return array
    if array.dtype.kind == "c":
        raise UnsupportedByGradtrace("complex tensors are not supported by gradtrace's engine")
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def _first_sizes(values) -> list[int]:
    """The shape PyTorch expects: the lengths of the first element at every depth."""
    sizes = []
    while isinstance(values, list | tuple):
        sizes.append(len(values))
        if not values:
            break
        values = values[0]
    return sizes


def _check_ragged(values, sizes: list[int], dim: int) -> None:
    if dim == len(sizes) or not isinstance(values, list | tuple):
        return
    if len(values) != sizes[dim]:
        raise ValueError(
            f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(values)})"
        )
    for item in values:
        _check_ragged(item, sizes, dim + 1)


def _unwrap(data):
    if isinstance(data, Tensor):
        return data._array
    if isinstance(data, list | tuple):
        return [_unwrap(d) for d in data]
    return data


# ***** filled with a value *****


def zeros(*size, dtype=None, requires_grad=False, device=None) -> Tensor:
    return leaf(np.zeros(parse_shape(size), _dtype(dtype)), requires_grad, "zeros")


def ones(*size, dtype=None, requires_grad=False, device=None) -> Tensor:
    return leaf(np.ones(parse_shape(size), _dtype(dtype)), requires_grad, "ones")


def empty(*size, dtype=None, requires_grad=False, device=None) -> Tensor:
    # PyTorch leaves the memory uninitialised; zeros keep traces deterministic
    return leaf(np.zeros(parse_shape(size), _dtype(dtype)), requires_grad, "empty")


def full(size, fill_value, dtype=None, requires_grad=False, device=None) -> Tensor:
    default = dtypes.of_scalar(fill_value)
    return leaf(
        np.full(parse_shape((size,)), fill_value, _dtype(dtype, default)), requires_grad, "full"
    )


def _like(t: Tensor, dtype) -> tuple:
    return t._array.shape, (t._array.dtype if dtype is None else _dtype(dtype))


def zeros_like(t: Tensor, dtype=None, requires_grad=False, device=None) -> Tensor:
    shape, dt = _like(t, dtype)
    return leaf(np.zeros(shape, dt), requires_grad, "zeros_like")


def ones_like(t: Tensor, dtype=None, requires_grad=False, device=None) -> Tensor:
    shape, dt = _like(t, dtype)
    return leaf(np.ones(shape, dt), requires_grad, "ones_like")


def full_like(t: Tensor, fill_value, dtype=None, requires_grad=False, device=None) -> Tensor:
    shape, dt = _like(t, dtype)
    return leaf(np.full(shape, fill_value, dt), requires_grad, "full_like")


def arange(start, end=None, step=1, dtype=None, requires_grad=False, device=None) -> Tensor:
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    is_float = any(isinstance(n, float) for n in (start, end, step))
    default = dtypes.default_float() if is_float else dtypes.int64
    dt = _dtype(dtype, default)
    count = int(np.ceil((float(end) - float(start)) / float(step)))
    # PyTorch computes start + i * step in double, then casts
    values = float(start) + np.arange(count, dtype=np.float64) * float(step)
    return leaf(values.astype(dt), requires_grad, "arange")


def linspace(start, end, steps, dtype=None, requires_grad=False, device=None) -> Tensor:
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = _dtype(dtype)
    values = _linspace_like_torch(float(start), float(end), int(steps), dt)
    return leaf(values, requires_grad, "linspace")


def _linspace_like_torch(start: float, end: float, steps: int, dt: np.dtype) -> np.ndarray:
    """PyTorch fills the first half from `start` and the second half back from `end`."""
    if steps == 1:
        return np.array([start], dt)
    step = (end - start) / (steps - 1)
    i = np.arange(steps)
    halfway = steps // 2
    if dt.kind == "f":
        return numerics.linspace_like_torch(start, end, steps, dt)
    values = np.where(i < halfway, start + step * i, end - step * (steps - 1 - i))
    return values.astype(dt)


def eye(n, m=None, dtype=None, requires_grad=False, device=None) -> Tensor:
    return leaf(np.eye(n, m, dtype=_dtype(dtype)), requires_grad, "eye")


# ***** random numbers, from the same generator PyTorch uses on the CPU *****


def manual_seed(seed: int):
    return rng.manual_seed(int(seed))


def seed() -> int:
    return rng.default_generator.initial_seed()


def initial_seed() -> int:
    return rng.default_generator.initial_seed()


def _random_dtype(dtype) -> np.dtype:
    dt = _dtype(dtype)
    if dt.kind != "f":
        raise UnsupportedByGradtrace(
            f"random floats of dtype {dt} are not supported by gradtrace's engine"
        )
    return dt


def rand(*size, dtype=None, requires_grad=False, generator=None, device=None) -> Tensor:
    gen = generator or rng.default_generator
    dt = _random_dtype(dtype)
    return leaf(gen.rand(parse_shape(size), dt.name), requires_grad, "rand")


def randn(*size, dtype=None, requires_grad=False, generator=None, device=None) -> Tensor:
    gen = generator or rng.default_generator
    dt = _random_dtype(dtype)
    return leaf(gen.randn(parse_shape(size), dt.name), requires_grad, "randn")


def rand_like(t: Tensor, dtype=None, requires_grad=False) -> Tensor:
    return rand(t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad)


def randn_like(t: Tensor, dtype=None, requires_grad=False) -> Tensor:
    return randn(t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad)


def randint(
    low, high=None, size=None, dtype=None, requires_grad=False, generator=None, device=None
) -> Tensor:
    if size is None:
        raise TypeError("randint() missing required argument 'size'")
    if high is None:
        low, high = 0, low
    gen = generator or rng.default_generator
    values = gen.randint(int(low), int(high), parse_shape((size,)))
    return leaf(values.astype(_dtype(dtype, dtypes.int64)), requires_grad, "randint")


def randperm(n, dtype=None, requires_grad=False, generator=None, device=None) -> Tensor:
    gen = generator or rng.default_generator
    return leaf(gen.randperm(int(n)).astype(_dtype(dtype, dtypes.int64)), requires_grad, "randperm")


# ***** joining and choosing *****


def _same_dtype(tensors: list[Tensor]) -> list[np.ndarray]:
    result = tensors[0].dtype
    for t in tensors[1:]:
        result = dtypes.promote(result, t.dtype)
    return [t._array.astype(result.np, copy=False) for t in tensors]


def stack(tensors, dim=0) -> Tensor:
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tensors[0].shape
    for i, t in enumerate(tensors[1:], start=1):
        if t.shape != first:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(first)} at entry 0 "
                f"and {list(t.shape)} at entry {i}"
            )
    dim = wrap_dim(dim, len(first) + 1)
    return apply(fn.StackBackward0, tuple(tensors), arrays=tuple(_same_dtype(tensors)), dim=dim)


def cat(tensors, dim=0) -> Tensor:
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    ndim = tensors[0].ndim
    if ndim == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    dim = wrap_dim(dim, ndim)
    for i, t in enumerate(tensors[1:], start=1):
        if t.ndim != ndim:
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {ndim} and {t.ndim}"
            )
        for d in range(ndim):
            if d != dim and t.shape[d] != tensors[0].shape[d]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {dim}. Expected size "
                    f"{tensors[0].shape[d]} but got size {t.shape[d]} for tensor number {i} in "
                    "the list."
                )
    return apply(fn.CatBackward0, tuple(tensors), arrays=tuple(_same_dtype(tensors)), dim=dim)


def where(condition: Tensor, input, other) -> Tensor:
    a = input if isinstance(input, Tensor) else tensor(input)
    b = other if isinstance(other, Tensor) else tensor(other)
    if condition._array.dtype != np.bool_:
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{dtypes.type_word(condition.dtype)}"
        )
    broadcast_shapes(broadcast_shapes(condition._array.shape, a._array.shape), b._array.shape)
    arrays = _same_dtype([a, b])
    return apply(fn.WhereBackward0, (a, b), arrays=tuple(arrays), condition=condition._array)
