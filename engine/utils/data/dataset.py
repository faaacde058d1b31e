"""torch.utils.data's datasets: Dataset to subclass, TensorDataset, Subset, ConcatDataset,
IterableDataset and ChainDataset, and random_split drawing PyTorch's permutation.

A dataset is anything with `__getitem__` (and `__len__` for a sampler to count it); these classes
hold tensors or other datasets and index them, so the tensors they hand out are the ones indexing
makes (`x[i]`, a view), recorded as any other snippet indexing would be.
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from typing import Generic, TypeVar

from engine import random as rng
from engine.creation import _generator

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map from keys to samples: subclasses give `__getitem__` (and usually `__len__`)."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """A stream of samples: subclasses give `__iter__`; a DataLoader batches what it yields."""

    def __add__(self, other):
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """Iterable datasets one after another."""

    def __init__(self, datasets) -> None:
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class TensorDataset(Dataset):
    """Sample i is `(t[i] for t in tensors)`: tensors of one length along their first dim."""

    def __init__(self, *tensors) -> None:
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class ConcatDataset(Dataset):
    """Datasets one after another: index i finds its dataset by the running lengths."""

    def __init__(self, datasets) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        if any(isinstance(d, IterableDataset) for d in self.datasets):
            raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset, indices) -> None:
        self.dataset = dataset
        self.indices = indices
        # PyTorch's DataLoader fetches a Subset's batch through __getitems__, so a subclass that
        # changes only __getitem__ would be bypassed: PyTorch refuses it, and so does this
        mine = type(self)
        if mine.__getitem__ is not Subset.__getitem__ and mine.__getitems__ is Subset.__getitems__:
            raise NotImplementedError(
                f"{mine.__name__} overrides __getitem__ but not __getitems__. When subclassing "
                "Subset and overriding __getitem__, you must also override __getitems__ to "
                "ensure DataLoader works correctly with your custom logic. A simple "
                "implementation:\n\ndef __getitems__(self, indices):\n"
                "    return [self.__getitem__(idx) for idx in indices]"
            )

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list) -> list:
        inner = [self.indices[i] for i in indices]
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__(inner)
        return [self.dataset[i] for i in inner]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset, lengths, generator=rng.default_generator) -> list[Subset]:
    """Split `dataset` into Subsets of the given lengths (or fractions of its length, the
    remainder dealt one by one from the first), on one randperm of the whole."""
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = []
        for i, fraction in enumerate(lengths):
            if fraction < 0 or fraction > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            counts.append(math.floor(len(dataset) * fraction))
        for i in range(len(dataset) - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(
                    f"Length of split at index {i} is 0. This might result in an empty dataset.",
                    stacklevel=2,
                )
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    # drawn straight from the generator: torch.randperm's tensor is internal to PyTorch here
    indices = _generator(generator).randperm(sum(lengths)).tolist()
    ends = itertools.accumulate(lengths)
    return [Subset(dataset, indices[end - n : end]) for end, n in zip(ends, lengths, strict=True)]


for _class in (Dataset, IterableDataset, ChainDataset, TensorDataset, ConcatDataset, Subset):
    _class.__module__ = "torch.utils.data.dataset"  # type(ds) and repr(ds) read as PyTorch's
del _class
