"""torch.nn.utils: clipping gradients before an optimizer step.

clip_grad_norm_ follows PyTorch's CPU path: one float32 2-norm per gradient (`_foreach_norm`),
the norm of those norms, then every gradient multiplied in place by
min(max_norm / (total + 1e-6), 1), computed as PyTorch computes it.
"""

from __future__ import annotations

import math
import types
import warnings

import numpy as np

from engine.numerics import fused_multiply_add
from engine.record import bump, leaf
from engine.tensor import Tensor
from engine.unsupported import UnsupportedByGradtrace, missing_attribute

__all__ = ["clip_grad_norm_", "clip_grad_value_"]

LANES = 8  # PyTorch's AVX2 norm kernel squares and adds eight floats at a time


def _two_norm(values: np.ndarray):
    """PyTorch's float32 2-norm of a contiguous vector (ReduceOpsKernel's last-dim fast path):
    squares added into 8 lanes (multiply, then add), the lanes folded left to right, the last
    few elements added one by one with a fused multiply-add, then the square root.

    (This reproduces the kernel on nearly every input; about one vector in 150 still comes out
    one bit away: an order of adding not found yet.)
    """
    if values.dtype != np.float32:
        return values.dtype.type(np.sqrt(np.sum(values.astype(np.float64) ** 2)))
    whole = values.size - values.size % LANES
    lanes = np.zeros(LANES, np.float32)
    for start in range(0, whole, LANES):
        block = values[start : start + LANES]
        lanes = lanes + block * block
    total = lanes[0]
    for lane in lanes[1:]:
        total = total + lane
    for value in values[whole:]:
        total = np.float32(fused_multiply_add(value, value, total))
    return np.sqrt(total)


def _norm(values: np.ndarray, norm_type: float):
    flat = np.ascontiguousarray(values).ravel()
    if norm_type == 2.0:
        return _two_norm(flat)
    if norm_type == math.inf:
        return np.abs(flat).max(initial=0).astype(flat.dtype)
    raise UnsupportedByGradtrace(
        f"clip_grad_norm_ with norm_type={norm_type} is not supported by gradtrace's engine "
        "(2.0 and inf are)"
    )


def _parameters(parameters) -> list[Tensor]:
    if isinstance(parameters, Tensor):
        return [parameters]
    is_generator = isinstance(parameters, types.GeneratorType)
    parameters = list(parameters)
    if is_generator and not parameters:
        warnings.warn(
            "`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=3
        )
    return parameters


def clip_grad_norm_(
    parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite=False, foreach=None
) -> Tensor:
    """Scale all gradients together so their combined norm is at most max_norm; return it."""
    grads = [p._grad for p in _parameters(parameters) if p._grad is not None]
    norm_type = float(norm_type)
    if not grads:
        return leaf(np.array(0.0, np.float32), False, "clip_grad_norm_")
    if len({g._array.dtype for g in grads}) > 1:
        raise UnsupportedByGradtrace(
            "clip_grad_norm_ over gradients of different dtypes is not supported by gradtrace's "
            "engine"
        )
    norms = np.array([_norm(g._array, norm_type) for g in grads])
    total = _norm(norms, norm_type)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
            "by the non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    dtype = total.dtype.type
    # max_norm / (total + 1e-6) is reciprocal(total + 1e-6) * max_norm in PyTorch
    coefficient = np.reciprocal(total + dtype(1e-6)) * dtype(float(max_norm))
    coefficient = np.minimum(coefficient, dtype(1.0))
    for g in grads:
        g._array *= coefficient
        bump(g, "clip_grad_norm_", None)
    return leaf(np.asarray(total), False, "clip_grad_norm_")


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient element into [-clip_value, clip_value], in place."""
    clip_value = float(clip_value)
    for p in _parameters(parameters):
        if p._grad is not None:
            # PyTorch clamps from below, then from above: two in-place changes
            np.maximum(p._grad._array, -clip_value, out=p._grad._array)
            bump(p._grad, "clip_grad_value_", None)
            np.minimum(p._grad._array, clip_value, out=p._grad._array)
            bump(p._grad, "clip_grad_value_", None)


def __getattr__(name: str):
    raise missing_attribute("torch.nn.utils", name, __all__)
