"""torch.nn.init: filling a tensor in place with PyTorch's initialisation schemes.

Each draws from the engine's copy of PyTorch's CPU generator exactly as `tensor.uniform_` and
`tensor.normal_` do, so `manual_seed(0)` then `xavier_uniform_(w)` gives PyTorch's numbers.
Like PyTorch's, they run without recording (no_grad) and bump the tensor's version.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from engine import random as rng
from engine.record import bump
from engine.tensor import Tensor
from engine.unsupported import UnsupportedByGradtrace, missing_attribute

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "constant_",
    "ones_",
    "zeros_",
    "eye_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
]

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d")
_LINEAR += ("conv_transpose1d", "conv_transpose2d", "conv_transpose3d")


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The factor that keeps activations' variance steady through this nonlinearity."""
    if nonlinearity in _LINEAR or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif (isinstance(param, int) and not isinstance(param, bool)) or isinstance(param, float):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _write(tensor: Tensor, values, op: str) -> Tensor:
    tensor._array[...] = values
    bump(tensor, op, None)
    return tensor


def _no_generator(generator) -> None:
    if generator is not None:
        raise UnsupportedByGradtrace(
            "nn.init with a generator= is not supported by gradtrace's engine; it draws from "
            "the default generator (seed it with torch.manual_seed)"
        )


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    _no_generator(generator)
    draw = rng.default_generator.uniform(tensor.shape, a, b, tensor._array.dtype)
    return _write(tensor, draw, "uniform_")


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    _no_generator(generator)
    draw = rng.default_generator.normal(tensor.shape, mean, std, tensor._array.dtype)
    return _write(tensor, draw, "normal_")


def constant_(tensor: Tensor, val: float) -> Tensor:
    return _write(tensor, val, "fill_")


def ones_(tensor: Tensor) -> Tensor:
    return _write(tensor, 1.0, "fill_")


def zeros_(tensor: Tensor) -> Tensor:
    return _write(tensor, 0.0, "zero_")


def eye_(tensor: Tensor) -> Tensor:
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _write(tensor, np.eye(*tensor.shape), "eye_")


def _fans(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out): inputs and outputs per unit, counting a kernel's receptive field."""
    if tensor.ndim < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    fan_in, fan_out = _fans(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    fan_in, fan_out = _fans(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor: Tensor, a, mode: str, nonlinearity: str) -> float:
    mode = mode.lower()
    modes = ["fan_in", "fan_out"]
    if mode not in modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {modes}")
    fan_in, fan_out = _fans(tensor)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan_in if mode == "fan_in" else fan_out)


def kaiming_uniform_(
    tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity="leaky_relu", generator=None
) -> Tensor:
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity="leaky_relu", generator=None
) -> Tensor:
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    return normal_(tensor, 0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def __getattr__(name: str):
    raise missing_attribute("torch.nn.init", name, __all__)
