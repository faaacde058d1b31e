"""Indexing: `t[key]` as views (select, slice) or a gather, and `t[key] = value` writes."""

from __future__ import annotations

import numpy as np

from engine import functions as fn
from engine.grad_mode import state as grad_state
from engine.record import apply, bump
from engine.tensor import Tensor, tensor_methods
from engine.unsupported import UnsupportedByGradtrace


@tensor_methods
class Indexing:
    """t[key] and t[key] = value."""

    def __getitem__(self, key):
        return index(self, key)

    def __setitem__(self, key, value):
        assign(self, key, value)


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
    parts, dim = [], 0
    for ordinal, (at, k) in enumerate(sorted(gathers.items())):
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
        else:
            size = t.shape[at]
            bad = k[(k < -size) | (k >= size)]
            if bad.size:
                # PyTorch counts the index tensors, not the dims, in this message
                raise IndexError(
                    f"index {bad.flat[0]} is out of bounds for dimension {ordinal} with size {size}"
                )
        parts.append(k)
        dim = at + (k.ndim if k.dtype == np.bool_ else 1)
    try:
        t._array[tuple(parts)]
    except IndexError as error:
        raise IndexError(str(error).replace("axis", "dimension")) from None
    return apply(fn.IndexBackward0, (t,), key=tuple(parts))


def assign(t: Tensor, key, value) -> None:
    """t[key] = value: an in-place write, allowed while no graph is involved."""
    value_array = value._array if isinstance(value, Tensor) else value
    involved = grad_state.enabled and (
        t._requires_grad or (isinstance(value, Tensor) and value._requires_grad)
    )
    if involved:
        if t.is_leaf and t._requires_grad:
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation."
            )
        raise UnsupportedByGradtrace(
            "assigning into part of a tensor that is in the autograd graph is not supported by "
            "gradtrace's engine (PyTorch records it as CopySlices); build a new tensor instead, "
            "for example with torch.where or torch.cat"
        )
    if isinstance(key, Tensor):
        key = key._array
    elif isinstance(key, tuple):
        key = tuple(k._array if isinstance(k, Tensor) else k for k in key)
    t._array[key] = value_array
    bump(t, "setitem", None)
