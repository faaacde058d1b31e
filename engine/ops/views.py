"""Shapes and views: view, reshape, permute, squeeze, expand, split, narrow; flip, roll, repeat,
tril; hstack and vstack.

A view shares its base's memory and version counter (Node.is_view), so in-place changes through
either are seen by both, as in PyTorch. flip, roll, repeat and tril copy, as PyTorch's do.
"""

from __future__ import annotations

import numpy as np

from engine import functions as fn
from engine.creation import cat
from engine.numpy_names import numpy_names
from engine.record import apply
from engine.shape import (
    broadcast_shapes,
    expanded_shape,
    infer_shape,
    parse_shape,
    viewable,
    wrap_dim,
)
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

    # ***** the layout in memory: strides and offsets counted in elements, as PyTorch's *****

    @numpy_names
    def stride(self, dim=None):
        if self._array.size:
            itemsize = self._array.itemsize
            strides = tuple(step // itemsize for step in self._array.strides)
        else:  # no elements: PyTorch keeps the contiguous strides of the shape
            strides = _contiguous_strides(self._array.shape)
        return strides if dim is None else strides[wrap_dim(dim, self.ndim)]

    def storage_offset(self) -> int:
        return (self._array.ctypes.data - _storage(self._array).ctypes.data) // self._array.itemsize

    def element_size(self) -> int:
        return self._array.itemsize

    def data_ptr(self) -> int:
        # the address of the first element: a view shares its base's, moved by its offset;
        # PyTorch gives 0 for a tensor with no elements
        return self._array.ctypes.data if self._array.size else 0

    def contiguous(self) -> Tensor:
        # a clone in row-major order (clone() itself keeps the layout, as PyTorch's does)
        return self if self.is_contiguous() else apply(fn.CloneBackward0, (self,), order="C")

    def view_as(self, other):
        return self.view(other.shape)

    def reshape(self, *shape):
        shape = infer_shape(parse_shape(shape), self.numel())
        if self._array.flags.c_contiguous:
            return apply(fn.ViewBackward0, (self,), shape=shape)
        if viewable(self._array, shape):
            # PyTorch's reshape of a strided tensor that needs no copy is an "alias" of it
            return apply(fn.ReshapeAliasBackward0, (self,), shape=shape)
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
        dims = parse_shape(dims)
        if len(dims) != self.ndim:
            raise RuntimeError(
                "permute(sparse_coo): number of dimensions in the tensor input does not match "
                "the length of the desired ordering of dimensions i.e. input.dim() = "
                f"{self.ndim} is not equal to len(dims) = {len(dims)}"
            )
        dims = tuple(wrap_dim(d, self.ndim) for d in dims)
        if len(set(dims)) != len(dims):
            raise RuntimeError("permute(): duplicate dims are not allowed.")
        return apply(fn.PermuteBackward0, (self,), dims=dims)

    def movedim(self, source, destination):
        source = _dim_list(source, self.ndim)
        destination = _dim_list(destination, self.ndim)
        if len(source) != len(destination):
            raise RuntimeError(
                "movedim: Invalid source or destination dims: source "
                f"({list(source)} dims) should contain the same number of dims as destination "
                f"({list(destination)} dims)"
            )
        for name, dims in (("source", source), ("destination", destination)):
            if len(set(dims)) != len(dims):
                raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(dims)})")
        order = [d for d in range(self.ndim) if d not in source]
        for dest, src in sorted(zip(destination, source, strict=True)):
            order.insert(dest, src)
        return apply(fn.PermuteBackward0, (self,), dims=tuple(order))

    moveaxis = movedim

    def swapaxes(self, axis0, axis1):
        return self.transpose(axis0, axis1)

    swapdims = swapaxes

    @numpy_names
    def squeeze(self, dim=None):
        if dim is None:
            return apply(fn.SqueezeBackward0, (self,))
        dims = tuple(wrap_dim(d, self.ndim) for d in (dim if isinstance(dim, tuple) else (dim,)))
        dims = tuple(d for d in dims if self.ndim and self._array.shape[d] == 1)
        node = fn.SqueezeBackward1 if not isinstance(dim, tuple) else fn.SqueezeBackward4
        return apply(node, (self,), dims=dims)

    @numpy_names
    def unsqueeze(self, dim):
        dim = wrap_dim(dim, self.ndim + 1)
        return apply(fn.UnsqueezeBackward0, (self,), dim=dim)

    def expand(self, *sizes):
        sizes = parse_shape(sizes)
        shape = expanded_shape(self.shape, sizes)
        return apply(fn.ExpandBackward0, (self,), shape=shape)

    def expand_as(self, other):
        return self.expand(other.shape)

    @numpy_names
    def unbind(self, dim=0):
        dim = wrap_dim(dim, self.ndim)
        return apply(fn.UnbindBackward0, (self,), dim=dim)

    def unflatten(self, dim, sizes):
        dim = wrap_dim(dim, self.ndim)
        sizes = parse_shape((sizes,))
        size = self._array.shape[dim]
        known = int(np.prod([n for n in sizes if n != -1]))
        if (-1 in sizes and (known == 0 or size % known)) or (-1 not in sizes and known != size):
            raise RuntimeError(
                f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim "
                f"{dim} ({size}) in the input tensor"
            )
        sizes = infer_shape(sizes, size)
        return self.view(self.shape[:dim] + sizes + self.shape[dim + 1 :])

    # ***** pieces: each a view of one stretch along a dim *****

    def split(self, split_size, dim=0):
        dim = wrap_dim(dim, self.ndim)
        size = self._array.shape[dim]
        if isinstance(split_size, list | tuple):
            sizes = parse_shape((split_size,))
            if sum(sizes) != size:
                raise RuntimeError(
                    f"split_with_sizes expects split_sizes to sum exactly to {size} (input "
                    f"tensor's size at dimension {dim}), but got split_sizes={list(sizes)}"
                )
            return apply(fn.SplitWithSizesBackward0, (self,), dim=dim, sizes=sizes)
        if split_size == 0 and size != 0:
            raise RuntimeError(
                f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}"
            )
        pieces = max(-(-size // split_size), 1) if split_size else 1
        sizes = [split_size] * (pieces - 1) + [size - split_size * (pieces - 1)]
        return apply(fn.SplitBackward0, (self,), dim=dim, sizes=tuple(sizes))

    @numpy_names
    def chunk(self, chunks, dim=0):
        if chunks <= 0:
            raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
        size = self._array.shape[wrap_dim(dim, self.ndim)]
        if size == 0:  # PyTorch gives `chunks` empty pieces here
            return self.split([0] * chunks, dim)
        return self.split(-(-size // chunks), dim)

    @numpy_names
    def tensor_split(self, indices_or_sections, dim=0):
        dim = wrap_dim(dim, self.ndim)
        size = self._array.shape[dim]
        if isinstance(indices_or_sections, list | tuple):
            cuts = list(parse_shape((indices_or_sections,)))
        else:
            n = int(indices_or_sections)
            if n <= 0:
                raise RuntimeError(
                    f"number of sections must be larger than 0, got {indices_or_sections}"
                )
            # the first size % n pieces get one more element
            lengths = [size // n + (1 if i < size % n else 0) for i in range(n)]
            cuts = list(np.cumsum(lengths)[:-1])
        bounds = zip([0, *cuts], [*cuts, size], strict=True)
        return tuple(
            _stretch(self, dim, *slice(start, stop).indices(size)[:2]) for start, stop in bounds
        )

    @numpy_names
    def narrow(self, dim, start, length):
        dim = wrap_dim(dim, self.ndim)
        size = self._array.shape[dim]
        if not -size <= start <= size:
            raise IndexError(
                f"start out of range (expected to be in range of [{-size}, {size}], but got "
                f"{start})"
            )
        start = start + size if start < 0 else start
        if start + length > size:
            raise RuntimeError(
                f"start ({start}) + length ({length}) exceeds dimension size ({size})."
            )
        return _stretch(self, dim, start, start + length)

    def diagonal(self, offset=0, dim1=0, dim2=1):
        first, second = wrap_dim(dim1, self.ndim), wrap_dim(dim2, self.ndim)
        if first == second:
            raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
        return apply(fn.DiagonalBackward0, (self,), offset=int(offset), dim1=first, dim2=second)

    # ***** copies in another arrangement *****

    def flip(self, *dims):
        dims = _dim_list(dims[0] if len(dims) == 1 else dims, self.ndim)
        return apply(fn.FlipBackward0, (self,), dims=dims)

    def roll(self, shifts, dims=None):
        shifts = tuple(shifts) if isinstance(shifts, list | tuple) else (shifts,)
        if dims is not None:
            dims = _dim_list(dims, self.ndim)
            if len(shifts) != len(dims):
                raise RuntimeError(
                    f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}"
                )
        return apply(fn.RollBackward0, (self,), shifts=shifts, dims=dims)

    def repeat(self, *sizes):
        sizes = parse_shape(sizes)
        if len(sizes) < self.ndim:
            raise RuntimeError(
                "Number of dimensions of repeat dims can not be smaller than number of "
                "dimensions of tensor"
            )
        return apply(fn.RepeatBackward0, (self,), repeats=sizes)

    def tril(self, diagonal=0):
        return _triangle(fn.TrilBackward0, "tril", self, diagonal)

    def triu(self, diagonal=0):
        return _triangle(fn.TriuBackward0, "triu", self, diagonal)


def _dim_list(dims, ndim: int) -> tuple:
    """One dim or several, made positive."""
    dims = dims if isinstance(dims, list | tuple) else (dims,)
    return tuple(wrap_dim(int(d), ndim) for d in dims)


def _stretch(t: Tensor, dim: int, start: int, stop: int) -> Tensor:
    """t[..., start:stop] along `dim`: a SliceBackward0 view, as narrow and tensor_split make."""
    return apply(fn.SliceBackward0, (t,), dim=dim, start=start, stop=max(stop, start), step=1)


def _triangle(node_cls, name: str, t: Tensor, diagonal: int) -> Tensor:
    if t.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    return apply(node_cls, (t,), diagonal=int(diagonal))


# ***** torch.hstack and torch.vstack: cat after making every tensor wide enough *****


def hstack(tensors) -> Tensor:
    tensors = [t if t.ndim else t.reshape(1) for t in tensors]
    return cat(tensors, dim=0 if tensors and tensors[0].ndim == 1 else 1)


def vstack(tensors) -> Tensor:
    tensors = [
        t if t.ndim >= 2 else t.reshape(1, -1) if t.ndim == 0 else t.unsqueeze(0) for t in tensors
    ]
    return cat(tensors, dim=0)


# ***** torch.broadcast_tensors: each operand expanded to the shape they broadcast to *****


def broadcast_tensors(*tensors) -> tuple:
    """A tensor already of the common shape comes back itself; the others as expanded views."""
    shape = ()
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}"
            )
        shape = broadcast_shapes(shape, t._array.shape)
    return tuple(t if t._array.shape == shape else t.expand(shape) for t in tensors)


def _storage(array: np.ndarray) -> np.ndarray:
    """The array that owns the memory a view reads (the tensor's storage in PyTorch's words)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _contiguous_strides(shape: tuple) -> tuple:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))
