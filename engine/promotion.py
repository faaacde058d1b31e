"""Type promotion: the dtype PyTorch computes a mixed operation in, and the operands cast to it.

`t + 1` keeps a float tensor's dtype, `int_tensor * 0.5` becomes float32, float32 with float64
becomes float64 (dtypes.result_type has the rules); numbers and lists become operands here.
"""

from __future__ import annotations

import numbers

import numpy as np

from engine import dtypes
from engine import functions as fn
from engine.creation import tensor
from engine.record import apply
from engine.shape import broadcast_shapes
from engine.tensor import Tensor

Number = numbers.Number


def raw(value):
    """A tensor's numpy array; anything else as it is."""
    return value._array if isinstance(value, Tensor) else value


# Python names the operator when `t + "a"` fails, and so does PyTorch's message
_SYMBOLS = {
    fn.AddBackward0: "+",
    fn.SubBackward0: "-",
    fn.MulBackward0: "*",
    fn.DivBackward0: "/",
    fn.FloorDivide: "//",
}


def check_number(value, op: str) -> None:
    if not isinstance(value, Number | np.number | np.bool_):
        raise TypeError(
            f"unsupported operand type(s) for {op}: 'Tensor' and '{type(value).__name__}'"
        )


def result_dtype(a: Tensor, other) -> dtypes.dtype:
    """The dtype `a <op> other` computes in, `other` a tensor, a list or a number."""
    if isinstance(other, list | tuple | np.ndarray):
        other = tensor(other)
    if isinstance(other, Tensor):
        return dtypes.result_type([(a.dtype, a.ndim), (other.dtype, other.ndim)], [])
    if not isinstance(other, Number | np.number | np.bool_):
        return a.dtype  # not an operand at all: the op's own check says so
    return dtypes.result_type([(a.dtype, a.ndim)], [other])


def binary(node_cls, a: Tensor, b, floating: bool = False, **kwargs):
    """An elementwise op on two operands, after PyTorch's type promotion and broadcasting."""
    if isinstance(b, Tensor):
        x, y = a._array, b._array
        if x.dtype == y.dtype and (not floating or x.dtype.kind == "f"):
            # the common case: same dtype, so nothing to promote or cast
            if x.shape != y.shape:
                broadcast_shapes(x.shape, y.shape)  # raises PyTorch's error when they clash
            return apply(node_cls, (a, b), (x, y), **kwargs)
        result = (
            a._array.dtype
            if a._array.dtype == b._array.dtype
            else dtypes.result_type([(a.dtype, a.ndim), (b.dtype, b.ndim)], []).np
        )
        broadcast_shapes(a._array.shape, b._array.shape)
        arrays = (_as(a._array, result, floating), _as(b._array, result, floating))
        return apply(node_cls, (a, b), arrays=arrays, **kwargs)
    if isinstance(b, list | tuple | np.ndarray):
        return binary(node_cls, a, tensor(b), floating, **kwargs)
    check_number(b, _SYMBOLS.get(node_cls, node_cls.__name__))
    arrays = cast_scalar(a, b, floating)
    return apply(node_cls, (a, b), arrays=arrays, **kwargs)


def _as(array: np.ndarray, dtype: np.dtype, floating: bool) -> np.ndarray:
    if floating and dtype.kind != "f":
        dtype = dtypes.default_float().np
    return array if array.dtype == dtype else array.astype(dtype)


def cast_scalar(a: Tensor, scalar, floating: bool = False) -> tuple:
    """The tensor's array and the number, both in the dtype PyTorch would compute in."""
    kind, number = a._array.dtype.kind, type(scalar)
    if kind == "f" and (number is float or number is int):
        return a._array, a._array.dtype.type(scalar)  # a float tensor keeps its dtype
    result = dtypes.result_type([(a.dtype, a.ndim)], [scalar]).np
    if floating and result.kind != "f":
        result = dtypes.default_float().np
    array = a._array if a._array.dtype == result else a._array.astype(result)
    return array, result.type(scalar)


def floating(t: Tensor) -> tuple:
    """The array a float-only op (exp, sqrt, ...) computes on: integers become the default float."""
    if t._array.dtype.kind == "f":
        return (t._array,)
    return (t._array.astype(dtypes.default_float().np),)
