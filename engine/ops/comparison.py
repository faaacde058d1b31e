"""Comparisons and logic: results are bool or index tensors, never part of the graph."""

from __future__ import annotations

import numpy as np

from engine.promotion import raw
from engine.record import plain
from engine.shape import broadcast_shapes
from engine.tensor import Tensor, tensor_methods


@tensor_methods
class Comparison:
    """==, <, &, ~, equal(), allclose(), any(), all()."""

    def _compare(self, other, ufunc) -> Tensor:
        other_array = other._array if isinstance(other, Tensor) else other
        broadcast_shapes(self._array.shape, np.shape(other_array))
        return plain(ufunc(self._array, other_array), "compare")

    def __eq__(self, other):
        return self._compare(other, np.equal)

    def __ne__(self, other):
        return self._compare(other, np.not_equal)

    def __lt__(self, other):
        return self._compare(other, np.less)

    def __le__(self, other):
        return self._compare(other, np.less_equal)

    def __gt__(self, other):
        return self._compare(other, np.greater)

    def __ge__(self, other):
        return self._compare(other, np.greater_equal)

    eq, ne, lt, le, gt, ge = __eq__, __ne__, __lt__, __le__, __gt__, __ge__

    def __invert__(self):
        if self._array.dtype != np.bool_:
            return plain(~self._array, "bitwise_not")
        return plain(~self._array, "logical_not")

    def __and__(self, other):
        return plain(self._array & raw(other), "bitwise_and")

    def __or__(self, other):
        return plain(self._array | raw(other), "bitwise_or")

    def equal(self, other) -> bool:
        return self.shape == other.shape and bool(np.array_equal(self._array, other._array))

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
        return bool(np.allclose(self._array, other._array, rtol, atol, equal_nan))

    def all(self):
        return plain(np.all(self._array), "all")

    def any(self):
        return plain(np.any(self._array), "any")
