"""Indexing: `t[key]` as views (select, slice) or a gather, and `t[key] = value` writes; gather,
scatter, index_select and the masked ops, which pick or place values by index or mask."""

from __future__ import annotations

import numbers

import numpy as np

from engine import functions as fn
from engine import tracing
from engine.dtypes import type_word
from engine.grad_mode import state as grad_state
from engine.numpy_names import numpy_names
from engine.ops.linalg import c_name
from engine.ops.scalars import checked
from engine.promotion import check_number
from engine.record import apply, apply_inplace, bump, plain
from engine.shape import broadcast_shapes, wrap_dim
from engine.tensor import Tensor, tensor_methods


@tensor_methods
class Indexing:
    """t[key] and t[key] = value."""

    def __getitem__(self, key):
        return index(self, key)

    def __setitem__(self, key, value):
        assign(self, key, value)

    # ***** by an index tensor along one dim *****

    @numpy_names
    def gather(self, dim, index):
        dim = wrap_dim(dim, self.ndim)
        where = _index_along(self, dim, index, "gather")
        return apply(fn.GatherBackward0, (self,), dim=dim, index=where)

    @numpy_names
    def scatter(self, dim, index, src=None, *, value=None):
        return _scatter(self, dim, index, src if value is None else value, inplace=False)

    @numpy_names
    def scatter_(self, dim, index, src=None, *, value=None):
        return _scatter(self, dim, index, src if value is None else value, inplace=True)

    @numpy_names
    def scatter_add(self, dim, index, src):
        return _scatter(self, dim, index, src, inplace=False, add=True)

    @numpy_names
    def scatter_add_(self, dim, index, src):
        return _scatter(self, dim, index, src, inplace=True, add=True)

    @numpy_names
    def index_select(self, dim, index):
        dim = wrap_dim(dim, self.ndim)
        if index.ndim > 1:
            raise IndexError("index_select(): Index is supposed to be a vector")
        if index._array.dtype.kind not in "iu":
            raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
        picks = np.atleast_1d(index._array)
        size = self._array.shape[dim] if self.ndim else 1
        bad = picks[(picks < 0) | (picks >= size)]
        if bad.size:
            raise RuntimeError(
                f"INDICES element is out of DATA bounds, id={bad[0]} axis_dim={size}"
            )
        return apply(fn.IndexSelectBackward0, (self,), dim=dim, index=picks)

    # ***** by a boolean mask *****

    def masked_fill(self, mask, value):
        return _masked_fill(self, mask, value, inplace=False)

    def masked_fill_(self, mask, value):
        return _masked_fill(self, mask, value, inplace=True)

    def masked_select(self, mask):
        if mask._array.dtype != np.bool_:
            raise RuntimeError("masked_select: expected BoolTensor for mask")
        broadcast_shapes(self._array.shape, mask._array.shape)
        return apply(fn.MaskedSelectBackward0, (self,), mask=mask._array)

    def nonzero(self, *, as_tuple=False):
        # a 0-d input is one hit or none: a (1, 0) or (0, 0) table, or one dim's indices as_tuple
        if as_tuple:
            return tuple(plain(i, "indices") for i in np.nonzero(np.atleast_1d(self._array)))
        # numpy builds the table column by column, so its strides are (1, ndim) as PyTorch's are
        return plain(np.argwhere(self._array), "indices")

    def argwhere(self):
        return self.nonzero()


def _index_along(t: Tensor, dim: int, index: Tensor, op: str) -> np.ndarray:
    """Check an index tensor for gather/scatter as PyTorch does; return its array."""
    if index._array.dtype.kind not in "iu":
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index")
    if index.ndim != t.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    where = index._array
    size = t._array.shape[dim]
    bad = where[(where < 0) | (where >= size)]
    if bad.size:
        raise RuntimeError(
            f"index {bad.flat[0]} is out of bounds for dimension {dim} with size {size}"
        )
    return where


def _scatter(t: Tensor, dim, index: Tensor, src, inplace: bool, add: bool = False) -> Tensor:
    """scatter and scatter_add, out of place or in place: src (or a number) written at index."""
    dim = wrap_dim(dim, t.ndim)
    where = _index_along(t, dim, index, "scatter_add" if add else "scatter")
    if isinstance(src, Tensor):
        if src._array.dtype != t._array.dtype:
            raise RuntimeError(
                f"{'scatter_add' if add else 'scatter'}(): Expected self.dtype to be equal to "
                "src.dtype"
            )
        node = fn.ScatterAddBackward0 if add else fn.ScatterBackward0
        inputs, arrays, kwargs = (t, src), (t._array, src._array), {"dim": dim, "index": where}
    else:
        node = fn.ScatterBackward1
        kwargs = {"dim": dim, "index": where, "value": src}
        inputs, arrays = (t,), (t._array,)
    if inplace:
        return apply_inplace(node, t, inputs, arrays, **kwargs)
    return apply(node, inputs, arrays, **kwargs)


def _masked_fill(t: Tensor, mask: Tensor, value, inplace: bool) -> Tensor:
    if mask._array.dtype != np.bool_:
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype {c_name(mask)}"
        )
    broadcast_shapes(t._array.shape, mask._array.shape)
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value.ndim} dimension(s)."
            )
        node, inputs = fn.MaskedFillBackward1, (t, value)
        arrays = (t._array, value._array.astype(t._array.dtype))
        kwargs = {"mask": mask._array}
    elif isinstance(value, numbers.Number | np.number):
        node, inputs, arrays = fn.MaskedFillBackward0, (t,), (t._array,)
        kwargs = {"mask": mask._array, "value": checked(t._array, value)}
    else:
        raise TypeError(
            f"masked_fill() received an invalid combination of arguments - got (Tensor, "
            f"{type(value).__name__})"
        )
    if inplace:
        return apply_inplace(node, t, inputs, arrays, **kwargs)
    return apply(node, inputs, arrays, **kwargs)


def index(t: Tensor, key):
    """Basic indexing makes views (select, slice, unsqueeze); tensors or lists index by gather.

    As in PyTorch, a lone `x[:]` records a SliceBackward0, but inside a tuple a slice that keeps
    the whole dim records nothing, and an index that changes nothing (`x[...]`, `x[:, :]`)
    records an AliasBackward0. With tensors or lists in the key, the views are made first and
    one IndexBackward0 gathers from their result (`x[0, [2, 1]]` records SelectBackward0 first).
    """
    if type(key) is int and t._array.ndim and -t._array.shape[0] <= key < t._array.shape[0]:
        # the common case (`w[0]` in a loop) goes straight to its node
        return apply(fn.SelectBackward0, (t,), dim=0, index=key % t._array.shape[0])
    single = not isinstance(key, tuple)
    if single:
        key = (key,)
    key = tuple(_index_part(k) for k in key)
    used = sum(
        k.ndim if isinstance(k, np.ndarray) and k.dtype == np.bool_ else 1
        for k in key
        if k is not None and k is not Ellipsis
    )
    if used > t.ndim:
        raise IndexError(f"too many indices for tensor of dimension {t.ndim}")
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    out, dim, gathers = t, 0, {}
    for position, k in enumerate(key):
        if k is None:
            out = out.unsqueeze(dim)
            dim += 1
        elif k is Ellipsis:
            dim += t.ndim - used
        elif isinstance(k, np.ndarray):
            gathers[dim] = k  # gathered once the views are made
            dim += k.ndim if k.dtype == np.bool_ else 1
        elif isinstance(k, slice):
            out = _slice(out, dim, k, keep_whole=single)
            dim += 1
        elif isinstance(k, int | np.integer) and not isinstance(k, bool):
            size = out.shape[dim]
            if not -size <= k < size:
                # PyTorch names the index's position in the key, not the dim it lands on
                raise IndexError(
                    f"index {k} is out of bounds for dimension {position} with size {size}"
                )
            out = apply(fn.SelectBackward0, (out,), dim=dim, index=int(k) % size)
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                "are valid indices (got " + type(k).__name__ + ")"
            )
    if gathers:
        return _gather(out, gathers)
    return apply(fn.AliasBackward0, (t,)) if out is t else out


def _index_part(k):
    """Tensors and lists index as numpy arrays; a 0-dim integer tensor selects, like an int."""
    if isinstance(k, Tensor):
        if k.ndim == 0 and k._array.dtype.kind in "iu":
            return int(k._array)
        return k._array
    if isinstance(k, list):
        return np.asarray(k) if k else np.zeros(0, np.int64)
    if isinstance(k, range):
        # `x[range(n), y]`: PyTorch turns any sequence into a long tensor, as for a list
        return np.arange(k.start, k.stop, k.step, dtype=np.int64)
    return k


def _slice(t: Tensor, dim: int, k: slice, keep_whole: bool = True) -> Tensor:
    step = 1 if k.step is None else int(k.step)
    if step <= 0:
        raise ValueError("step must be greater than zero")
    if (
        not keep_whole
        and k.start in (None, 0)
        and step == 1
        and (k.stop is None or k.stop >= t.shape[dim])
    ):
        return t  # PyTorch skips a slice that keeps the whole dim (written from 0, step 1)
    start, stop, _ = k.indices(t.shape[dim])
    stop = max(stop, start)
    return apply(fn.SliceBackward0, (t,), dim=dim, start=start, stop=stop, step=step)


def _gather(t: Tensor, gathers: dict) -> Tensor:
    """Advanced indexing: numpy's rules, which PyTorch follows; `gathers` maps dim -> index."""
    return apply(fn.IndexBackward0, (t,), key=_advanced_key(t, gathers))


def _advanced_key(t: Tensor, gathers: dict) -> tuple:
    """The numpy key that gathers from t at `gathers` (dim -> index), checked in PyTorch's order:
    dtypes and mask shapes, then that the indices broadcast together, then their bounds."""
    parts, dim, shapes = [], 0, []
    for at, k in sorted(gathers.items()):
        parts += [slice(None)] * (at - dim)
        if k.dtype.kind == "f":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if k.dtype == np.bool_:
            for i, n in enumerate(k.shape):
                if n != t.shape[at + i]:
                    raise IndexError(
                        f"The shape of the mask {list(k.shape)} at index {i} does not match the "
                        f"shape of the indexed tensor {list(t.shape)} at index {at + i}"
                    )
            shapes += [[int(k.sum())]] * k.ndim  # a mask indexes as its nonzero() columns
        else:
            shapes.append(list(k.shape))
        parts.append(k)
        dim = at + (k.ndim if k.dtype == np.bool_ else 1)
    try:
        np.broadcast_shapes(*map(tuple, shapes))
    except ValueError:
        raise IndexError(
            "shape mismatch: indexing tensors could not be broadcast together with shapes "
            + ", ".join(map(str, shapes))
        ) from None
    for ordinal, (at, k) in enumerate(sorted(gathers.items())):
        if k.dtype != np.bool_:
            size = t.shape[at]
            bad = k[(k < -size) | (k >= size)]
            if bad.size:
                # PyTorch counts the index tensors, not the dims, in this message
                raise IndexError(
                    f"index {bad.flat[0]} is out of bounds for dimension {ordinal} with size {size}"
                )
    return tuple(parts)


def assign(t: Tensor, key, value) -> None:
    """t[key] = value: an in-place write, recorded as PyTorch records it when autograd is involved.

    With no graph involved it is a plain write. Otherwise, as in PyTorch: the basic part of the
    key makes a view and the value is copied into it (copy_, or fill_ for a 0-dim value), so a
    view of a graph tensor rewrites the tensor's history (CopySlices); index tensors write with
    index_put_ (IndexPutBackward0).
    """
    if not isinstance(value, Tensor) and not isinstance(value, numbers.Number | np.number):
        # PyTorch writes only tensors and numbers: a list is not made into a tensor here
        raise TypeError(f"can't assign a {type(value).__name__} to a {t.type()}")
    involved = grad_state.enabled and (
        t._requires_grad or (isinstance(value, Tensor) and value._requires_grad)
    )
    if not involved:
        if isinstance(value, Tensor):
            value_array = value._array
            if value._array.dtype != t._array.dtype:
                _check_put_dtype(t, key, value)
        else:
            value_array = checked(t._array, value)
        if isinstance(key, Tensor):
            key = key._array
        elif isinstance(key, tuple):
            key = tuple(k._array if isinstance(k, Tensor) else k for k in key)
        try:
            t._array[key] = value_array
        except (IndexError, ValueError):
            _refuse(t, key, value)  # raises PyTorch's error for what numpy refused
            raise
        bump(t, "setitem", None)
        return
    parts = _parts(key)
    if any(isinstance(k, np.ndarray) for k in parts):
        target, at, values = _put_target(t, parts, value)
        apply_inplace(
            fn.IndexPutBackward0, target, (target, value), (target._array, values), key=at
        )
        return
    whole = all(k is Ellipsis or _whole(k) for k in parts)
    _copy_to(t if whole else _unseen(index, t, key), value)


def _parts(key) -> tuple:
    return tuple(_index_part(k) for k in (key if isinstance(key, tuple) else (key,)))


def _check_put_dtype(t: Tensor, key, value: Tensor) -> None:
    """index_put_ (a key with index tensors) writes no other dtype; copy_ converts."""
    if any(isinstance(k, np.ndarray) for k in _parts(key)):
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{type_word(t.dtype)} for the destination and {type_word(value.dtype)} for the source."
        )


def _refuse(t: Tensor, key, value) -> None:
    """numpy refused `t[key] = value`: find PyTorch's reason by checking as the recorded path
    does, without writing (untraced and with grad off, so nothing joins a graph)."""
    enabled, grad_state.enabled = grad_state.enabled, False
    try:
        parts = _parts(key)
        if any(isinstance(k, np.ndarray) for k in parts):
            _put_target(t, parts, value)
        else:
            dst = _unseen(index, t, key)
            if isinstance(value, Tensor) and value.shape != dst.shape and value.ndim:
                _unseen(_fitted, value, dst)
    finally:
        grad_state.enabled = enabled


def _unseen(op, *args):
    """Run `op` with no tracer: setitem's view of its target is internal to PyTorch (never a
    tensor of the program, and its node never joins the graph), so a trace does not show it."""
    tracer, tracing.current = tracing.current, None
    try:
        return op(*args)
    finally:
        tracing.current = tracer


def _whole(k) -> bool:
    """A slice that keeps a whole dim (`:` or `0:`): setitem writes into the tensor itself."""
    return isinstance(k, slice) and k.start in (None, 0) and k.stop is None and k.step in (None, 1)


def _copy_to(dst: Tensor, value) -> None:
    """PyTorch's setitem copy: fill_ for a 0-dim value, else copy_ of the value broadcast to dst."""
    if not isinstance(value, Tensor):
        check_number(value, "setitem")
        checked(dst._array, value)
        if dst.ndim == 0:
            apply_inplace(
                fn.CopyBackwards, dst, (dst, value), (dst._array, dst._array.dtype.type(value))
            )
        else:
            apply_inplace(fn.FillBackward3, dst, (dst, value), (dst._array, value))
        return
    if value.shape == dst.shape:
        dst.copy_(value)
    elif value.ndim == 0:
        apply_inplace(fn.FillBackward3, dst, (dst, value), (dst._array, value._array))
    else:
        dst.copy_(_fitted(value, dst))


def _fitted(value: Tensor, dst: Tensor) -> Tensor:
    """The value as setitem copies it: leading size-1 dims dropped, then expanded to dst."""
    lead = next((i for i, n in enumerate(value.shape) if n != 1), value.ndim)
    trimmed = value.view(value.shape[lead:])
    return trimmed if trimmed.shape == dst.shape else trimmed.expand(dst.shape)


def _put_target(t: Tensor, parts: tuple, value):
    """t[key with index tensors] = value: as PyTorch, the key's basic part (integers, slices,
    None) makes a view first, and index_put_ writes into that view at the index tensors.
    Returns that view, the numpy key into it, and the values to write, all checked."""
    basic, rest = [], []  # the view's key, then the key of index_put_ on the view
    for k in parts:
        if isinstance(k, np.ndarray):
            basic += [slice(None)] * (k.ndim if k.dtype == np.bool_ else 1)
            rest.append(k)
        elif isinstance(k, int | np.integer) and not isinstance(k, bool):
            basic.append(k)  # the dim is gone from the view
        elif k is Ellipsis:
            basic.append(k)
            rest.append(k)
        else:  # a slice, or None (a new dim)
            basic.append(k)
            rest.append(slice(None))
    if not all(k is Ellipsis or _whole(k) for k in basic):
        t = _unseen(index, t, tuple(basic))
    gathers, dim = {}, 0
    used = sum(k.ndim if k.dtype == np.bool_ else 1 for k in rest if isinstance(k, np.ndarray))
    for k in rest:
        if k is Ellipsis:
            dim = t.ndim - used - sum(1 for j in rest if isinstance(j, slice)) + dim
        elif isinstance(k, np.ndarray):
            gathers[dim] = k
            dim += k.ndim if k.dtype == np.bool_ else 1
        else:
            dim += 1
    key = _advanced_key(t, gathers)
    target_shape = t._array[key].shape
    if isinstance(value, Tensor):
        if value._array.dtype != t._array.dtype:
            _check_put_dtype(t, parts, value)
        # leading size-1 dims of the value are dropped, as setitem's copy drops them
        shape = value._array.shape
        shape = shape[next((i for i, n in enumerate(shape) if n != 1), len(shape)) :]
        try:
            fits = np.broadcast_shapes(shape, target_shape) == target_shape
        except ValueError:
            fits = False
        if not fits:
            raise RuntimeError(
                f"shape mismatch: value tensor of shape {list(value.shape)} cannot be broadcast "
                f"to indexing result of shape {list(target_shape)}"
            )
        values = value._array
    else:
        check_number(value, "setitem")
        values = t._array.dtype.type(checked(t._array, value))
    return t, key, values
