"""torch.f(..., out=t): the result written into an existing tensor, as PyTorch's out= forms do.

The "Tensors" tutorial writes `torch.matmul(tensor, tensor.T, out=y3)`. PyTorch computes the
result, casts it to out's dtype (never down a category) and writes it in place, so out's version
goes up by one. Autograd has no derivative for such a write: out= with an argument that requires
grad fails (unless grad mode is off). Only the module-level functions take out=, as in PyTorch.
"""

from __future__ import annotations

import functools

from engine import dtypes
from engine.grad_mode import state as grad_state
from engine.tensor import Tensor
from engine.unsupported import UnsupportedByGradtrace


def with_out(function):
    """`function` taking an out= tensor too."""
    name = function.__name__

    @functools.wraps(function)
    def wrapper(*args, out=None, **kwargs):
        if out is None:
            return function(*args, **kwargs)
        tensors = [a for a in (*args, *kwargs.values(), out) if isinstance(a, Tensor)]
        if grad_state.enabled and any(t.requires_grad for t in tensors):
            raise RuntimeError(
                f"{name}(): functions with out=... arguments don't support automatic "
                "differentiation, but one of the arguments requires grad."
            )
        result = function(*args, **kwargs)
        if result.dtype.category > out.dtype.category:
            raise RuntimeError(
                f"result type {dtypes.type_word(result.dtype)} can't be cast to the desired "
                f"output type {dtypes.type_word(out.dtype)}"
            )
        if result.shape != out.shape:
            # PyTorch resizes out (with a deprecation warning unless it was empty)
            raise UnsupportedByGradtrace(
                f"torch.{name}(..., out=t) with t of another shape than the result "
                f"({list(out.shape)}, not {list(result.shape)}) is not supported by gradtrace's "
                "engine: make t the result's shape, or use the returned tensor"
            )
        # nothing here needs grad (or grad mode is off), so this copy records no history
        return out.copy_(result)

    return wrapper
