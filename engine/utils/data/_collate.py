"""How a DataLoader turns a list of samples into one batch, as PyTorch's default_collate does.

Tensors are stacked along a new first dimension (torch.stack: the batch is a new tensor,
recorded like any stack); Python floats become a float64 tensor and ints an int64 one; numpy
arrays and scalars become tensors; strings stay a list; a dict, tuple or list of fields is
collated field by field (a tuple comes back as a list, as in PyTorch).
"""

from __future__ import annotations

import collections.abc
import copy
import re

import numpy as np

from engine.creation import as_tensor, stack, tensor
from engine.dtypes import float64
from engine.tensor import Tensor

_NOT_NUMBERS = re.compile(r"[SaUO]")  # numpy dtype codes of strings and objects
_ERROR = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def default_convert(data):
    """A sample as is, its numpy arrays made tensors (DataLoader with batch_size=None)."""
    kind = type(data)
    if isinstance(data, Tensor):
        return data
    if kind.__module__ == "numpy" and kind.__name__ not in ("str_", "string_"):
        if isinstance(data, np.ndarray) and _NOT_NUMBERS.search(data.dtype.str):
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # a namedtuple
        return kind(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, str | bytes):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def default_collate(batch):
    """One batch from a list of samples of one structure."""
    elem = batch[0]
    kind = type(elem)
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    if isinstance(elem, np.ndarray):
        if _NOT_NUMBERS.search(elem.dtype.str):
            raise TypeError(_ERROR.format(elem.dtype))
        return default_collate([as_tensor(b) for b in batch])
    if isinstance(elem, np.bool_ | np.number | np.object_):
        return as_tensor(batch)
    if isinstance(elem, float):
        return tensor(batch, dtype=float64)
    if isinstance(elem, int):  # bools too: a bool tensor
        return tensor(batch)
    if isinstance(elem, str | bytes):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        fields = {key: default_collate([d[key] for d in batch]) for key in elem}
        return _rebuild_mapping(elem, fields)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a namedtuple
        return kind(*(default_collate(field) for field in zip(*batch, strict=False)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(sample) != size for sample in batch[1:]):
            raise RuntimeError("each element in list of batch should be of equal size")
        fields = [default_collate(field) for field in zip(*batch, strict=False)]
        if isinstance(elem, tuple):
            return fields
        return _rebuild_sequence(elem, fields)
    raise TypeError(_ERROR.format(kind))


def _rebuild_mapping(elem, values: dict):
    """The collated fields in a mapping of elem's own type where it can be made."""
    try:
        if isinstance(elem, collections.abc.MutableMapping):
            clone = copy.copy(elem)
            clone.update(values)
            return clone
        return type(elem)(values)
    except TypeError:
        return values


def _rebuild_sequence(elem, values: list):
    try:
        if isinstance(elem, collections.abc.MutableSequence):
            clone = copy.copy(elem)
            for i, value in enumerate(values):
                clone[i] = value
            return clone
        return type(elem)(values)
    except TypeError:
        return values
