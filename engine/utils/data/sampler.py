"""torch.utils.data's samplers: which indices a DataLoader reads, in which order, in batches.

RandomSampler draws exactly as PyTorch's does, lazily, so an epoch consumes the same numbers
from the same generator at the same moment: with no generator it first draws a seed from the
default one (`random_()` of an int64) and shuffles with a fresh generator seeded with it; with
one, it shuffles with that. The samplers are Python generators, like PyTorch's, because when a
draw happens is part of what must match: an epoch that runs to its end makes one more randperm
whose slice is empty (PyTorch's tail for num_samples % n), and a loop left early does not.
The draws go to the generator directly: PyTorch's intermediate tensors are its own business,
not the learner's, and are left out of the trace.
"""

from __future__ import annotations

import itertools
from typing import Generic, TypeVar

from engine import random as rng
from engine.creation import _generator, as_tensor, multinomial
from engine.dtypes import float64

T_co = TypeVar("T_co", covariant=True)


class Sampler(Generic[T_co]):
    """The base of every sampler: subclasses give `__iter__` (and `__len__`)."""

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _seeded_from_default() -> rng.Generator:
    """PyTorch's RandomSampler without a generator: one int64 from the default generator
    seeds a fresh one."""
    seed = int(rng.default_generator.random((), "int64"))
    return rng.TorchGenerator().manual_seed(seed)


class RandomSampler(Sampler[int]):
    def __init__(
        self, data_source, replacement: bool = False, num_samples=None, generator=None
    ) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(
                "num_samples should be a positive integer value, but got "
                f"num_samples={self.num_samples}"
            )

    @property
    def num_samples(self) -> int:
        # the dataset may grow or shrink between epochs
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        gen = _seeded_from_default() if self.generator is None else _generator(self.generator)
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from gen.randint(0, n, (32,)).tolist()
            yield from gen.randint(0, n, (self.num_samples % 32,)).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from gen.randperm(n).tolist()
            yield from gen.randperm(n).tolist()[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    def __init__(self, indices, generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in _generator(self.generator).randperm(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    def __init__(self, weights, num_samples: int, replacement: bool = True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got num_samples={num_samples}"
            )
        if not isinstance(replacement, bool):
            raise ValueError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        weights = as_tensor(weights, dtype=float64)
        if weights.dim() != 1:
            raise ValueError(
                f"weights should be a 1d sequence but given weights have shape "
                f"{tuple(weights.shape)}"
            )
        self.weights = weights
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        gen = self.generator
        drawn = multinomial(self.weights, self.num_samples, self.replacement, generator=gen)
        yield from drawn.tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list]):
    """Lists of batch_size indices from `sampler`; the last one shorter unless drop_last."""

    def __init__(self, sampler, batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        indices = iter(self.sampler)
        if self.drop_last:
            # zip over one iterator batch_size times: it stops at the first short batch, after
            # asking the sampler once more than the last full batch took (as PyTorch's does)
            for batch in zip(*[indices] * self.batch_size, strict=False):
                yield [*batch]
        else:
            batch = [*itertools.islice(indices, self.batch_size)]
            while batch:
                yield batch
                batch = [*itertools.islice(indices, self.batch_size)]

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


for _class in (
    Sampler,
    SequentialSampler,
    RandomSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
    BatchSampler,
):
    _class.__module__ = "torch.utils.data.sampler"
del _class
