"""Reductions: sum, mean, max and min over everything or along dims."""

from __future__ import annotations

import numpy as np

from engine import dtypes
from engine import functions as fn
from engine.ops.arithmetic import maximum, minimum
from engine.record import apply, plain
from engine.return_types import ReturnTypes
from engine.shape import reduced_dims, wrap_dim
from engine.tensor import Tensor, tensor_methods


@tensor_methods
class Reductions:
    """Methods that reduce a tensor over some or all of its dims."""

    def sum(self, dim=None, keepdim=False):
        if dim is None:
            return apply(fn.SumBackward0, (self,))
        return apply(fn.SumBackward1, (self,), dim=reduced_dims(dim, self.ndim), keepdim=keepdim)

    def mean(self, dim=None, keepdim=False):
        if not self.is_floating_point():
            raise RuntimeError(
                "mean(): could not infer output dtype. Input dtype must be either a floating "
                f"point or complex dtype. Got: {dtypes.type_word(self.dtype)}"
            )
        if dim is None:
            return apply(fn.MeanBackward0, (self,))
        return apply(fn.MeanBackward1, (self,), dim=reduced_dims(dim, self.ndim), keepdim=keepdim)

    def max(self, dim=None, keepdim=False):
        if isinstance(dim, Tensor):
            return maximum(self, dim)
        return _extreme(self, dim, keepdim, fn.MaxBackward1, fn.MaxBackward0, "max")

    def min(self, dim=None, keepdim=False):
        if isinstance(dim, Tensor):
            return minimum(self, dim)
        return _extreme(self, dim, keepdim, fn.MinBackward1, fn.MinBackward0, "min")

    def argmax(self, dim=None, keepdim=False):
        return _arg_reduce(np.argmax, self, dim, keepdim)

    def argmin(self, dim=None, keepdim=False):
        return _arg_reduce(np.argmin, self, dim, keepdim)


def _extreme(t: Tensor, dim, keepdim, whole_node, dim_node, name: str):
    """max()/min() of everything, or (values, indices) along a dim."""
    if dim is None:
        if t.numel() == 0:
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        return apply(whole_node, (t,))
    dim = wrap_dim(dim, t.ndim)
    pick = np.argmax if name == "max" else np.argmin
    indices = pick(t._array.reshape(-1) if t.ndim == 0 else t._array, axis=dim)
    values = apply(dim_node, (t,), dim=dim, keepdim=keepdim)
    indices = np.expand_dims(indices, dim) if keepdim and t.ndim else indices
    return ReturnTypes[name](values, plain(indices.astype(np.int64), "indices"))


def _arg_reduce(pick, t: Tensor, dim, keepdim) -> Tensor:
    if dim is None:
        return plain(np.int64(pick(t._array)), pick.__name__)
    dim = wrap_dim(dim, t.ndim)
    out = pick(t._array, axis=dim)
    return plain(np.expand_dims(out, dim) if keepdim else out, pick.__name__)
