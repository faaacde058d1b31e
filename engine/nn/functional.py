"""torch.nn.functional: the stateless forms of layers and losses."""

from __future__ import annotations

from engine import dtypes
from engine import functions as fn
from engine.record import apply
from engine.shape import broadcast_shapes
from engine.tensor import Tensor
from engine.unsupported import UnsupportedByGradtrace, missing_attribute

__all__ = [
    "relu",
    "sigmoid",
    "tanh",
    "softmax",
    "log_softmax",
    "linear",
    "mse_loss",
    "cross_entropy",
    "nll_loss",
]


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return input.relu()


def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    return input.tanh()


def softmax(input: Tensor, dim: int | None = None) -> Tensor:
    return input.softmax(_implicit_dim(input, dim))


def log_softmax(input: Tensor, dim: int | None = None) -> Tensor:
    return input.log_softmax(_implicit_dim(input, dim))


def _implicit_dim(input: Tensor, dim: int | None) -> int:
    # PyTorch's legacy rule (with a warning) when dim is left out
    if dim is not None:
        return dim
    return 0 if input.ndim in (0, 1, 3) else 1


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input @ weightᵀ + bias, recorded as PyTorch records it (AddmmBackward0 for a batch)."""
    if input.ndim == 2 and bias is not None:
        _check_inner(input, weight)
        return apply(fn.AddmmBackward0, (bias, input, weight.t()))
    if input.ndim == 1 and bias is not None:
        _check_inner(input.unsqueeze(0), weight)
        return linear(input.unsqueeze(0), weight, bias).view(weight.shape[0])
    out = input @ weight.t() if input.ndim <= 2 else None
    if out is None:
        raise UnsupportedByGradtrace(
            "nn.Linear on inputs with more than 2 dimensions is not supported by gradtrace's "
            "engine yet"
        )
    return out if bias is None else out + bias


def _check_inner(input: Tensor, weight: Tensor) -> None:
    if input.dtype is not weight.dtype:
        raise RuntimeError(
            f"mat1 and mat2 must have the same dtype, but got {dtypes.type_word(input.dtype)} and "
            f"{dtypes.type_word(weight.dtype)}"
        )
    if input.shape[1] != weight.shape[1]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({input.shape[0]}x{input.shape[1]} and "
            f"{weight.shape[1]}x{weight.shape[0]})"
        )


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    _check_reduction(reduction)
    if input.shape != target.shape:
        import warnings

        warnings.warn(
            f"Using a target size ({target.shape!r}) that is different to the input size "
            f"({input.shape!r}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            UserWarning,
            stacklevel=2,
        )
    # PyTorch broadcasts both first, so a stretched input shows an ExpandBackward0
    shape = broadcast_shapes(input._array.shape, target._array.shape)
    input = input if input.shape == shape else input.expand(shape)
    target = target if target.shape == shape else target.expand(shape)
    # computed in the promoted dtype (an integer target counts as float32's, float64 wins)
    dt = dtypes.result_type([(input.dtype, input.ndim), (target.dtype, target.ndim)], []).np
    arrays = (input._array.astype(dt, copy=False), target._array.astype(dt, copy=False))
    return apply(fn.MseLossBackward0, (input, target), arrays=arrays, reduction=reduction)


def nll_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    _check_reduction(reduction)
    if target.dtype.name not in ("int64",):
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {dtypes.type_word(target.dtype)}"
        )
    classes = input.shape[-1]
    bad = target._array[(target._array < 0) | (target._array >= classes)]
    if bad.size:
        raise IndexError(f"Target {int(bad.flat[0])} is out of bounds.")
    return apply(fn.NllLossBackward0, (input,), target=target._array, reduction=reduction)


def cross_entropy(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    if target.is_floating_point():
        raise UnsupportedByGradtrace(
            "cross_entropy with class-probability (float) targets is not supported by "
            "gradtrace's engine; pass class indices as a long tensor"
        )
    dim = 0 if input.ndim == 1 else 1
    return nll_loss(log_softmax(input, dim), target, reduction)


def _check_reduction(reduction: str) -> None:
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def __getattr__(name: str):
    raise missing_attribute("torch.nn.functional", name, __all__)
