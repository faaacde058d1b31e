"""Making new tensors: zeros, ones, ranges, random numbers, and joining tensors together."""

from __future__ import annotations

import numpy as np

from engine import dtypes
from engine import functions as fn
from engine import random as rng
from engine.shape import broadcast_shapes, parse_shape, wrap_dim
from engine.tensor import Tensor, _apply, _leaf, _resolve_dtype, _type_word
from engine.unsupported import UnsupportedByGradtrace


def _dtype(dtype, default: dtypes.dtype | None = None) -> np.dtype:
    if dtype is None:
        return (default or dtypes.default_float()).np
    return _resolve_dtype(dtype).np


def zeros(*size, dtype=None, requires_grad=False, device=None) -> Tensor:
    return _leaf(np.zeros(parse_shape(size), _dtype(dtype)), requires_grad, "zeros")


def ones(*size, dtype=None, requires_grad=False, device=None) -> Tensor:
    return _leaf(np.ones(parse_shape(size), _dtype(dtype)), requires_grad, "ones")


def empty(*size, dtype=None, requires_grad=False, device=None) -> Tensor:
    # PyTorch leaves the memory uninitialised; zeros keep traces deterministic
    return _leaf(np.zeros(parse_shape(size), _dtype(dtype)), requires_grad, "empty")


def full(size, fill_value, dtype=None, requires_grad=False, device=None) -> Tensor:
    default = dtypes.of_scalar(fill_value)
    return _leaf(
        np.full(parse_shape((size,)), fill_value, _dtype(dtype, default)), requires_grad, "full"
    )


def _like(t: Tensor, dtype) -> tuple:
    return t._array.shape, (t._array.dtype if dtype is None else _dtype(dtype))


def zeros_like(t: Tensor, dtype=None, requires_grad=False, device=None) -> Tensor:
    shape, dt = _like(t, dtype)
    return _leaf(np.zeros(shape, dt), requires_grad, "zeros_like")


def ones_like(t: Tensor, dtype=None, requires_grad=False, device=None) -> Tensor:
    shape, dt = _like(t, dtype)
    return _leaf(np.ones(shape, dt), requires_grad, "ones_like")


def full_like(t: Tensor, fill_value, dtype=None, requires_grad=False, device=None) -> Tensor:
    shape, dt = _like(t, dtype)
    return _leaf(np.full(shape, fill_value, dt), requires_grad, "full_like")


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
    return _leaf(values.astype(dt), requires_grad, "arange")


def linspace(start, end, steps, dtype=None, requires_grad=False, device=None) -> Tensor:
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = _dtype(dtype)
    values = _linspace_like_torch(float(start), float(end), int(steps), dt)
    return _leaf(values, requires_grad, "linspace")


def _linspace_like_torch(start: float, end: float, steps: int, dt: np.dtype) -> np.ndarray:
    """PyTorch fills the first half from `start` and the second half back from `end`."""
    if steps == 1:
        return np.array([start], dt)
    step = (end - start) / (steps - 1)
    i = np.arange(steps)
    halfway = steps // 2
    if dt.kind == "f":
        start, end, step = dt.type(start), dt.type(end), dt.type(step)
        i = i.astype(dt)
    values = np.where(i < halfway, start + step * i, end - step * (steps - 1 - i))
    return values.astype(dt)


def eye(n, m=None, dtype=None, requires_grad=False, device=None) -> Tensor:
    return _leaf(np.eye(n, m, dtype=_dtype(dtype)), requires_grad, "eye")


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
    return _leaf(gen.rand(parse_shape(size), dt.name), requires_grad, "rand")


def randn(*size, dtype=None, requires_grad=False, generator=None, device=None) -> Tensor:
    gen = generator or rng.default_generator
    dt = _random_dtype(dtype)
    return _leaf(gen.randn(parse_shape(size), dt.name), requires_grad, "randn")


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
    return _leaf(values.astype(_dtype(dtype, dtypes.int64)), requires_grad, "randint")


def randperm(n, dtype=None, requires_grad=False, generator=None, device=None) -> Tensor:
    gen = generator or rng.default_generator
    return _leaf(
        gen.randperm(int(n)).astype(_dtype(dtype, dtypes.int64)), requires_grad, "randperm"
    )


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
    return _apply(fn.StackBackward0, tuple(tensors), arrays=tuple(_same_dtype(tensors)), dim=dim)


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
    return _apply(fn.CatBackward0, tuple(tensors), arrays=tuple(_same_dtype(tensors)), dim=dim)


def where(condition: Tensor, input, other) -> Tensor:
    from engine.tensor import tensor

    a = input if isinstance(input, Tensor) else tensor(input)
    b = other if isinstance(other, Tensor) else tensor(other)
    if condition._array.dtype != np.bool_:
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{_type_word(condition.dtype)}"
        )
    broadcast_shapes(broadcast_shapes(condition._array.shape, a._array.shape), b._array.shape)
    arrays = _same_dtype([a, b])
    return _apply(fn.WhereBackward0, (a, b), arrays=tuple(arrays), condition=condition._array)
