"""Filling a tensor in place with random draws: uniform_, normal_, exponential_, bernoulli_,
random_ (and bernoulli, multinomial).

They draw from PyTorch's CPU stream (engine/random.py) exactly as PyTorch does, write into the
tensor's memory and bump its version, recording no grad_fn: the values are new, not computed
from anything a gradient could flow back to.
"""

from __future__ import annotations

import numpy as np

from engine import creation
from engine.grad_mode import state as grad_state
from engine.record import bump
from engine.tensor import Tensor, tensor_methods
from engine.unsupported import UnsupportedByGradtrace


@tensor_methods
class Sampling:
    def uniform_(self, a=0.0, b=1.0, *, generator=None) -> Tensor:
        dt = _float_target(self, "uniform_")
        drawn = creation._generator(generator).uniform(self._array.shape, a, b, dt.name)
        return _fill(self, drawn, "uniform_")

    def normal_(self, mean=0.0, std=1.0, *, generator=None) -> Tensor:
        dt = _float_target(self, "normal_")
        drawn = creation._generator(generator).normal(self._array.shape, mean, std, dt.name)
        return _fill(self, drawn, "normal_")

    def exponential_(self, lambd=1.0, *, generator=None) -> Tensor:
        dt = _float_target(self, "exponential_")
        drawn = creation._generator(generator).exponential(self._array.shape, lambd, dt.name)
        return _fill(self, drawn, "exponential_")

    def multinomial(self, num_samples, replacement=False, *, generator=None) -> Tensor:
        return creation.multinomial(self, num_samples, replacement, generator=generator)

    def bernoulli_(self, p=0.5, *, generator=None) -> Tensor:
        gen = creation._generator(generator)
        if isinstance(p, Tensor):
            drawn = gen.bernoulli(np.broadcast_to(p._array, self._array.shape))
        else:
            if not 0 <= p <= 1:
                raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
            drawn = gen.bernoulli_scalar(self._array.shape, p)
        return _fill(self, drawn.astype(self._array.dtype), "bernoulli_")

    def bernoulli(self, p=None, *, generator=None) -> Tensor:
        return creation.bernoulli(self, p, generator=generator)

    def random_(self, *bounds, generator=None, **named) -> Tensor:
        """random_() over the dtype's whole numbers from 0, random_(to) or random_(from, to):
        the draws torch.randint makes for the same range."""
        low, high = _random_bounds(bounds, named)
        gen = creation._generator(generator)
        dt = self._array.dtype
        if high is None:
            drawn = gen.random(self._array.shape, dt)
        else:
            creation.check_random_bounds(low, high, dt)
            drawn = gen.randint(low, high, self._array.shape).astype(dt)
        return _fill(self, drawn, "random_")


def _random_bounds(bounds: tuple, named: dict) -> tuple[int, int | None]:
    if set(named) - {"from", "to"} or len(bounds) + len(named) > 2:
        raise TypeError("random_() received an invalid combination of arguments")
    if len(bounds) == 1 and not named:
        return 0, int(bounds[0])  # random_(to)
    given = dict(zip(("from", "to"), bounds, strict=False)) | named
    low, high = int(given.get("from", 0)), given.get("to")
    if high is None and low != 0:
        raise UnsupportedByGradtrace(
            "Tensor.random_(from) with no `to` is not supported by gradtrace's engine; "
            "give both bounds"
        )
    return low, None if high is None else int(high)


def _float_target(t: Tensor, op: str):
    if t._array.dtype.kind != "f" or t._array.dtype == np.float16:
        raise UnsupportedByGradtrace(
            f"Tensor.{op} of dtype {t.dtype} is not supported by gradtrace's engine"
        )
    return t.dtype


def _fill(t: Tensor, values: np.ndarray, op: str) -> Tensor:
    if grad_state.enabled and t._requires_grad:
        if t.is_leaf:
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation."
            )
        raise UnsupportedByGradtrace(
            f"Tensor.{op} on a tensor in the autograd graph is not supported by gradtrace's "
            "engine; draw a fresh tensor instead"
        )
    t._array[...] = values
    bump(t, op, None)
    return t
