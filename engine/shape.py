"""Shapes: torch.Size, broadcasting (and undoing it in backward), dimension arguments."""

from __future__ import annotations

import numbers

import numpy as np

from engine import numerics


class Size(tuple):
    """A tensor's shape, printed as PyTorch prints it: torch.Size([2, 3])."""

    def __repr__(self) -> str:
        return f"torch.Size([{', '.join(str(n) for n in self)}])"

    __str__ = __repr__

    def __getitem__(self, key):
        # a slice of a Size is a Size, as in PyTorch
        item = super().__getitem__(key)
        return Size(item) if isinstance(key, slice) else item

    # `x.shape + (1,)`, `(1,) + x.shape` and `x.shape * 2` stay a Size, as in PyTorch
    def __add__(self, other):
        if not isinstance(other, tuple):
            raise TypeError(
                f"can only concatenate tuple (not {type(other).__name__}) to torch.Size"
            )
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, times):
        if not hasattr(type(times), "__index__"):
            raise TypeError(f"can't multiply sequence by non-int of type '{type(times).__name__}'")
        return Size(tuple.__mul__(self, times))

    __rmul__ = __mul__

    def numel(self) -> int:
        return int(np.prod(self, dtype=np.int64))


Size.__module__ = "torch"  # type(x.shape) prints <class 'torch.Size'>, as in PyTorch


def broadcast_shapes_of(*shapes) -> Size:
    """torch.broadcast_shapes: the shape that all of `shapes` (ints or sequences) broadcast to,
    or PyTorch's error naming the first argument that does not fit the shape so far."""
    out: list[int] = []
    for index, shape in enumerate(shapes):
        shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
        if len(shape) > len(out):
            out = [1] * (len(shape) - len(out)) + out
        for i in range(1, len(shape) + 1):
            n = shape[-i]
            if n == out[-i] or n == 1:
                continue
            if out[-i] != 1:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {n} at -{i}! Mismatching "
                    f"argument at index {index} had {shape}; but expected shape should be "
                    f"broadcastable to {out}"
                )
            out[-i] = n
    return Size(out)


def broadcast_shapes(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The common shape of two operands, or PyTorch's error naming the first clash."""
    if a == b:
        return a
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        da = a[-i] if i <= len(a) else 1
        db = b[-i] if i <= len(b) else 1
        if da != db and da != 1 and db != 1:
            dim = max(len(a), len(b)) - i
            raise RuntimeError(
                f"The size of tensor a ({da}) must match the size of tensor b ({db}) "
                f"at non-singleton dimension {dim}"
            )
        out.append(da if db == 1 else db)
    return tuple(reversed(out))


def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum a gradient back down to the shape of the input that was broadcast to make it."""
    if grad.shape == shape:
        return grad
    return numerics.sum_to_shape(grad, shape)  # one sum over every stretched dim, as at::sum_to


def wrap_dim(dim: int, ndim: int) -> int:
    """A possibly negative dim made positive, with PyTorch's IndexError when out of range."""
    low, high = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    if not low <= dim <= high:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{low}, {high}], but got {dim})"
        )
    return dim % ndim if ndim else 0


def parse_shape(args: tuple) -> tuple[int, ...]:
    """Accept both f(2, 3) and f((2, 3)) / f([2, 3]) / f(torch.Size(...)), as PyTorch does."""
    if len(args) == 1 and isinstance(args[0], tuple | list):
        args = tuple(args[0])
    for n in args:
        if not isinstance(n, int | np.integer) or isinstance(n, bool):
            raise TypeError(
                f"expected a sequence of integers as the shape, but got {type(n).__name__}"
            )
    return tuple(int(n) for n in args)


def reduced_dims(dim, ndim: int) -> tuple[int, ...]:
    """The dims a reduction runs over (sum(dim=(0, -1))), made positive, each once."""
    dims = tuple(wrap_dim(d, ndim) for d in (dim if isinstance(dim, tuple | list) else (dim,)))
    for d in dims:
        if dims.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return dims if ndim else ()  # dim 0 of a 0-dim tensor is the tensor itself


def infer_shape(shape: tuple[int, ...], numel: int) -> tuple[int, ...]:
    """view/reshape's target shape with its one -1 filled in, or PyTorch's error."""
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = int(np.prod([n for n in shape if n != -1], dtype=np.int64))
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if n == -1 else n for n in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def viewable(array: np.ndarray, shape: tuple[int, ...]) -> bool:
    """Whether the array's memory can be read in `shape` without a copy."""
    view = array.view()
    try:
        view.shape = shape
    except AttributeError:
        return False
    return True


def expanded_shape(current: tuple, sizes: tuple) -> tuple:
    """expand()'s result shape (-1 keeps a size), or PyTorch's error."""
    if len(sizes) < len(current):
        raise RuntimeError(
            f"expand(torch.FloatTensor{{{list(current)}}}, size={list(sizes)}): the number of "
            "sizes provided "
            f"({len(sizes)}) must be greater or equal to the number of dimensions in the tensor "
            f"({len(current)})"
        )
    lead = len(sizes) - len(current)
    out = []
    for i, size in enumerate(sizes):
        have = current[i - lead] if i >= lead else 1
        if size == -1:
            if i < lead:
                raise RuntimeError(
                    f"The expanded size of the tensor (-1) isn't allowed in a leading, "
                    f"non-existing dimension {i}"
                )
            size = have
        elif have != 1 and have != size:
            raise RuntimeError(
                f"The expanded size of the tensor ({size}) must match the existing size ({have}) "
                f"at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  "
                f"Tensor sizes: {list(current)}"
            )
        out.append(size)
    return tuple(out)
