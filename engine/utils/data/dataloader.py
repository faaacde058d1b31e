"""torch.utils.data.DataLoader: batches of a dataset, shuffled as PyTorch shuffles them.

Each `iter(loader)` (each epoch's `for x, y in loader`) first draws one int64 from the loader's
generator (or the default one), the seed PyTorch hands its workers whether or not it has any;
then the batch sampler asks the sampler for indices, and each batch is fetched and collated.
So the numbers drawn, and when, are PyTorch's, and a snippet that draws after a loop sees the
values it would see in PyTorch.

Workers (num_workers > 0) are processes in PyTorch; here the batches are fetched in-process, in
the order PyTorch's in-order loader returns them, after taking the indices ahead as its workers'
prefetching does. That gives the same batches unless the dataset draws random numbers while
fetching (each worker has its own generator in PyTorch): that is refused, as are iterable
datasets with workers (each worker iterates its own copy, so PyTorch repeats samples).
"""

from __future__ import annotations

import collections
import dataclasses
import warnings

from engine import random as rng
from engine.creation import _generator
from engine.unsupported import UnsupportedByGradtrace
from engine.utils.data._collate import default_collate, default_convert
from engine.utils.data.dataset import IterableDataset
from engine.utils.data.sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

_START_METHODS = ("fork", "spawn", "forkserver")  # what Linux's multiprocessing offers


@dataclasses.dataclass
class WorkerInfo:
    """What get_worker_info() says inside a worker: which one, of how many, and its seed."""

    id: int
    num_workers: int
    seed: int
    dataset: object


_worker: WorkerInfo | None = None  # set while a batch is fetched for an emulated worker


def get_worker_info() -> WorkerInfo | None:
    """None in the main process; inside a (here emulated) worker, that worker's info."""
    return _worker


class _InfiniteConstantSampler(Sampler):
    """An iterable dataset's sampler: `None` forever (the dataset decides when it ends)."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    __initialized = False

    def __init__(
        self,
        dataset,
        batch_size=1,
        shuffle=None,
        sampler=None,
        batch_sampler=None,
        num_workers: int = 0,
        collate_fn=None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn=None,
        multiprocessing_context=None,
        generator=None,
        *,
        prefetch_factor=None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 to disable "
                "multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing.let "
                "num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = "iterable"
            if shuffle not in {False, None}:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified shuffle option, but "
                    f"got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified sampler option, but "
                    f"got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                    f"but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = "map"

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with "
                "drop_last"
            )

        if sampler is None:
            if self._dataset_kind == "iterable":
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        self._iterator = None

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context) -> None:
        if context is not None:
            if self.num_workers == 0:
                raise ValueError(
                    "multiprocessing_context can only be used with multi-process loading "
                    f"(num_workers > 0), but got num_workers={self.num_workers}"
                )
            if not isinstance(context, str):
                raise UnsupportedByGradtrace(
                    "a multiprocessing context object is not supported by gradtrace's engine "
                    "(its DataLoader workers run in-process); name a start method or leave it out"
                )
            if context not in _START_METHODS:
                raise ValueError(
                    "multiprocessing_context option should specify a valid start method in "
                    f"{list(_START_METHODS)!r}, but got multiprocessing_context={context!r}"
                )
        self.__multiprocessing_context = context

    def __setattr__(self, attr, val) -> None:
        if self.__initialized and attr in (
            "batch_size",
            "batch_sampler",
            "sampler",
            "drop_last",
            "dataset",
            "persistent_workers",
        ):
            raise ValueError(
                f"{attr} attribute should not be set after {type(self).__name__} is initialized"
            )
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        if self.persistent_workers:
            raise UnsupportedByGradtrace(
                "DataLoader(persistent_workers=True) is not supported by gradtrace's engine "
                "(its workers run in-process); leave persistent_workers out"
            )
        return _MultiProcessingDataLoaderIter(self)

    def __len__(self) -> int:
        if self._dataset_kind == "iterable":
            length = len(self.dataset)
            if self.batch_size is not None:
                if self.drop_last:
                    return length // self.batch_size
                return -(-length // self.batch_size)
            return length
        return len(self._index_sampler)


class _BaseDataLoaderIter:
    def __init__(self, loader: DataLoader) -> None:
        self._dataset = loader.dataset
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._collate_fn = loader.collate_fn
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn(
                "pin_memory_device is deprecated, the current accelerator will be used as the "
                f"device,ignore pin_memory_device='{loader.pin_memory_device}'.",
                stacklevel=4,  # the snippet line that started the epoch
            )
        if loader.pin_memory:  # there is no accelerator to pin memory for
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, then device "
                "pinned memory won't be used.",
                stacklevel=4,  # the snippet line that started the epoch
            )
        self._sampler_iter = iter(self._index_sampler)
        # the workers' base seed, drawn every epoch whether or not there are workers
        self._base_seed = int(_generator(loader.generator).random((), "int64"))
        if loader._dataset_kind == "map":
            self._fetch = self._fetch_map
        else:
            self._dataset_iter = iter(self._dataset)
            self._ended = False
            self._fetch = self._fetch_iterable
        self._num_yielded = 0

    def __iter__(self):
        return self

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)

    def _fetch_map(self, index):
        if self._auto_collation:
            getitems = getattr(self._dataset, "__getitems__", None)  # a Subset has one
            data = getitems(index) if getitems else [self._dataset[i] for i in index]
        else:
            data = self._dataset[index]
        return self._collate_fn(data)

    def _fetch_iterable(self, index):
        if self._ended:
            raise StopIteration
        if not self._auto_collation:
            return self._collate_fn(next(self._dataset_iter))
        data = []
        for _ in index:
            try:
                data.append(next(self._dataset_iter))
            except StopIteration:
                self._ended = True
                break
        if not data or (self._drop_last and len(data) < len(index)):
            raise StopIteration
        return self._collate_fn(data)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        if loader.timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")

    def _next_data(self):
        return self._fetch(next(self._sampler_iter))


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """PyTorch's worker processes, emulated: indices taken ahead by prefetch_factor per worker,
    batch k fetched for worker k % num_workers, in order."""

    def __init__(self, loader: DataLoader) -> None:
        if loader._dataset_kind == "iterable":
            raise UnsupportedByGradtrace(
                "an IterableDataset with num_workers > 0 is not supported by gradtrace's engine: "
                "each of PyTorch's workers iterates its own copy of it; use num_workers=0"
            )
        super().__init__(loader)
        self._pending = collections.deque()
        self._sent = 0
        for _ in range(loader.prefetch_factor * self._num_workers):
            if not self._take_index():
                break

    def _take_index(self) -> bool:
        try:
            self._pending.append((self._sent % self._num_workers, next(self._sampler_iter)))
        except StopIteration:
            return False
        self._sent += 1
        return True

    def _next_data(self):
        if not self._pending:
            raise StopIteration
        worker, index = self._pending.popleft()
        self._take_index()
        global _worker
        seed = self._base_seed + worker
        _worker = WorkerInfo(worker, self._num_workers, seed, self._dataset)
        draws = rng.default_generator.draws
        try:
            data = self._fetch(index)
        finally:
            _worker = None
        if rng.default_generator.draws != draws:
            raise UnsupportedByGradtrace(
                "a dataset that draws random numbers while DataLoader workers fetch its samples "
                f"(num_workers={self._num_workers}) is not supported by gradtrace's engine: each "
                "of PyTorch's workers draws from its own generator; use num_workers=0"
            )
        return data


for _class in (
    DataLoader,
    _BaseDataLoaderIter,
    _SingleProcessDataLoaderIter,
    _MultiProcessingDataLoaderIter,
    _InfiniteConstantSampler,
):
    _class.__module__ = "torch.utils.data.dataloader"
WorkerInfo.__module__ = "torch.utils.data._utils.worker"
del _class
