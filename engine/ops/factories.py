"""`x.new_zeros(2, 3)` and friends: new tensors with x's dtype unless told otherwise."""

from __future__ import annotations

import warnings

from engine import creation
from engine.tensor import Tensor, tensor_methods


@tensor_methods
class Factories:
    def new_tensor(self, data, dtype=None, device=None, requires_grad=False) -> Tensor:
        if isinstance(data, Tensor):
            warnings.warn(
                "To copy construct from a tensor, it is recommended to use "
                "sourceTensor.detach().clone() or "
                "sourceTensor.detach().clone().requires_grad_(True), rather than "
                "tensor.new_tensor(sourceTensor).",
                UserWarning,
                stacklevel=2,
            )
            data = data._array  # copied below, with no history
        made = creation.tensor(data, dtype=dtype or self.dtype, device=device)
        return made.requires_grad_(requires_grad) if requires_grad else made

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
        return creation.zeros(
            *size, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad
        )

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
        return creation.ones(
            *size, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad
        )

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
        return creation.empty(
            *size, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad
        )

    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
        return creation.full(
            size, fill_value, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad
        )
