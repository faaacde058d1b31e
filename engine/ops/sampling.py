"""Filling a tensor in place with random draws: uniform_, normal_, exponential_, bernoulli_
(and bernoulli, multinomial).

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
