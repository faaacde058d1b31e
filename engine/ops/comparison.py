"""Comparisons and logic: results are bool or index tensors, never part of the graph."""

from __future__ import annotations

import numpy as np

from engine import dtypes
from engine.numpy_names import numpy_names
from engine.ops.arithmetic import DECLINED
from engine.ops.scalars import wrapped
from engine.promotion import raw
from engine.record import plain
from engine.shape import broadcast_shapes, reduced_dims
from engine.tensor import Tensor, tensor_methods


@tensor_methods
class Comparison:
    """==, <, &, ~, equal(), allclose(), isclose(), isnan(), any(), all()."""

    def _compare(self, other, ufunc) -> Tensor:
        other_array = other._array if isinstance(other, Tensor) else wrapped(self._array, other)
        if type(other_array) not in (int, float, bool):  # a number broadcasts against anything
            broadcast_shapes(self._array.shape, np.shape(other_array))
        return plain(ufunc(self._array, other_array), "compare")

    # `t == [1, 2]`, `t == None`, `logits.max(1) == y`: PyTorch's operators decline what is
    # neither a tensor nor a number, so Python compares identities (False) or refuses (`<`)
    def __eq__(self, other):
        if isinstance(other, DECLINED):
            return NotImplemented
        return self._compare(other, np.equal)

    def __ne__(self, other):
        if isinstance(other, DECLINED):
            return NotImplemented
        return self._compare(other, np.not_equal)

    def __lt__(self, other):
        if isinstance(other, DECLINED):
            return NotImplemented
        return self._compare(other, np.less)

    def __le__(self, other):
        if isinstance(other, DECLINED):
            return NotImplemented
        return self._compare(other, np.less_equal)

    def __gt__(self, other):
        if isinstance(other, DECLINED):
            return NotImplemented
        return self._compare(other, np.greater)

    def __ge__(self, other):
        if isinstance(other, DECLINED):
            return NotImplemented
        return self._compare(other, np.greater_equal)

    def eq(self, other):
        return self._compare(_checked_operand(other, "eq"), np.equal)

    def ne(self, other):
        return self._compare(_checked_operand(other, "ne"), np.not_equal)

    def lt(self, other):
        return self._compare(_checked_operand(other, "lt"), np.less)

    def le(self, other):
        return self._compare(_checked_operand(other, "le"), np.less_equal)

    def gt(self, other):
        return self._compare(_checked_operand(other, "gt"), np.greater)

    def ge(self, other):
        return self._compare(_checked_operand(other, "ge"), np.greater_equal)

    def __invert__(self):
        if self._array.dtype != np.bool_:
            return plain(~self._array, "bitwise_not")
        return plain(~self._array, "logical_not")

    def __and__(self, other):
        if isinstance(other, DECLINED):
            return NotImplemented
        return plain(self._array & wrapped(self._array, raw(other)), "bitwise_and")

    def __or__(self, other):
        if isinstance(other, DECLINED):
            return NotImplemented
        return plain(self._array | wrapped(self._array, raw(other)), "bitwise_or")

    def __xor__(self, other):
        if isinstance(other, DECLINED):
            return NotImplemented
        return plain(self._array ^ wrapped(self._array, raw(other)), "bitwise_xor")

    def equal(self, other) -> bool:
        return self.shape == other.shape and bool(np.array_equal(self._array, other._array))

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
        return bool(self.isclose(other, rtol, atol, equal_nan)._array.all())

    @numpy_names
    def all(self, dim=None, keepdim=False):
        return _logical_reduce(np.all, self, dim, keepdim)

    @numpy_names
    def any(self, dim=None, keepdim=False):
        return _logical_reduce(np.any, self, dim, keepdim)

    def isnan(self):
        return plain(np.isnan(self._array), "isnan")

    def isinf(self):
        return plain(np.isinf(self._array), "isinf")

    def isfinite(self):
        return plain(np.isfinite(self._array), "isfinite")

    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        if self._array.dtype != other._array.dtype:
            raise RuntimeError(
                f"{dtypes.type_word(self.dtype)} did not match {dtypes.type_word(other.dtype)}"
            )
        broadcast_shapes(self._array.shape, other._array.shape)
        return plain(np.isclose(self._array, other._array, rtol, atol, equal_nan), "isclose")


def _checked_operand(other, op: str):
    """The method forms (`t.eq(x)`) refuse the rest with PyTorch's argument error."""
    if not isinstance(other, DECLINED):
        return other
    got = _described(other)
    reason = f"      didn't match because some of the arguments have invalid types: (!{got}!)\n"
    raise TypeError(
        f"{op}() received an invalid combination of arguments - got ({type(other).__name__}), "
        f"but expected one of:\n * (Tensor other)\n{reason} * (Number other)\n{reason}"
    )


def _described(value) -> str:
    """A value's type as PyTorch's argument errors describe it: `list of [int, float]`."""
    if isinstance(value, list | tuple) and value:
        inner = ", ".join(type(v).__name__ for v in value)
        return f"list of [{inner}]" if isinstance(value, list) else f"tuple of ({inner})"
    return type(value).__name__


def _logical_reduce(reduce, t: Tensor, dim, keepdim) -> Tensor:
    """any()/all() of everything, or along dims (the result is bool, as for a bool input)."""
    if dim is None:
        return plain(reduce(t._array), reduce.__name__)
    dims = reduced_dims(dim, t.ndim)
    return plain(reduce(t._array, axis=dims, keepdims=keepdim), reduce.__name__)
