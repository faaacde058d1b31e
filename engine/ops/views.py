"""Shapes and views: view, reshape, transpose, permute, squeeze, expand, unbind.

A view shares its base's memory and version counter (Node.is_view), so in-place changes through
either are seen by both, as in PyTorch.
"""

from __future__ import annotations

from engine import functions as fn
from engine.record import apply
from engine.shape import expanded_shape, infer_shape, parse_shape, viewable, wrap_dim
from engine.tensor import Tensor, tensor_methods


@tensor_methods
class Views:
    """Methods that give the same numbers in another shape."""

    def view(self, *shape):
        shape = infer_shape(parse_shape(shape), self.numel())
        try:
            return apply(fn.ViewBackward0, (self,), shape=shape)
        except AttributeError:
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
            ) from None

    def is_contiguous(self) -> bool:
        return bool(self._array.flags.c_contiguous)

    def contiguous(self) -> Tensor:
        # a clone in row-major order (clone() itself keeps the layout, as PyTorch's does)
        return self if self.is_contiguous() else apply(fn.CloneBackward0, (self,), order="C")

    def view_as(self, other):
        return self.view(other.shape)

    def reshape(self, *shape):
        shape = infer_shape(parse_shape(shape), self.numel())
        if viewable(self._array, shape):
            return apply(fn.ViewBackward0, (self,), shape=shape)
        # PyTorch copies to a contiguous clone first when a view is impossible
        return apply(fn.UnsafeViewBackward0, (self.clone(),), shape=shape)

    def reshape_as(self, other):
        return self.reshape(other.shape)

    def flatten(self, start_dim=0, end_dim=-1):
        if self.ndim == 0:
            return self.reshape(1)
        start, end = wrap_dim(start_dim, self.ndim), wrap_dim(end_dim, self.ndim)
        if start == end:
            return self
        shape = self.shape[:start] + (-1,) + self.shape[end + 1 :]
        return self.reshape(shape)

    def t(self):
        if self.ndim > 2:
            raise RuntimeError(
                f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D"
            )
        return apply(fn.TBackward0, (self,))

    def transpose(self, dim0, dim1):
        dim0, dim1 = wrap_dim(dim0, self.ndim), wrap_dim(dim1, self.ndim)
        return apply(fn.TransposeBackward0, (self,), dim0=dim0, dim1=dim1)

    def permute(self, *dims):
        dims = tuple(wrap_dim(d, self.ndim) for d in parse_shape(dims))
        if sorted(dims) != list(range(self.ndim)):
            raise RuntimeError(
                "permute(sparse_coo): number of dimensions in the tensor input does not match "
                "the length of the desired ordering of dimensions i.e. input.dim() = "
                f"{self.ndim} is not equal to len(dims) = {len(dims)}"
            )
        return apply(fn.PermuteBackward0, (self,), dims=dims)

    def squeeze(self, dim=None):
        if dim is None:
            return apply(fn.SqueezeBackward0, (self,))
        dims = tuple(wrap_dim(d, self.ndim) for d in (dim if isinstance(dim, tuple) else (dim,)))
        dims = tuple(d for d in dims if self.ndim and self._array.shape[d] == 1)
        node = fn.SqueezeBackward1 if not isinstance(dim, tuple) else fn.SqueezeBackward4
        return apply(node, (self,), dims=dims)

    def unsqueeze(self, dim):
        dim = wrap_dim(dim, self.ndim + 1)
        return apply(fn.UnsqueezeBackward0, (self,), dim=dim)

    def expand(self, *sizes):
        sizes = parse_shape(sizes)
        shape = expanded_shape(self.shape, sizes)
        return apply(fn.ExpandBackward0, (self,), shape=shape)

    def expand_as(self, other):
        return self.expand(other.shape)

    def unbind(self, dim=0):
        dim = wrap_dim(dim, self.ndim)
        return apply(fn.UnbindBackward0, (self,), dim=dim)
