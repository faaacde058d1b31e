"""Normalisation layers: nn.LayerNorm and nn.BatchNorm1d, and their functional forms.

Both record one node each (NativeLayerNormBackward0, NativeBatchNormBackward0, as PyTorch's
native kernels do), whose arithmetic follows PyTorch's CPU kernels step by step
(engine/moments.py): float32 values, gradients and running statistics match to the last bit.
"""

from __future__ import annotations

import numbers

import numpy as np

from engine.nn import functional as F
from engine.nn.modules import Module, _initialised
from engine.record import leaf
from engine.tensor import Tensor


class LayerNorm(Module):
    """Normalises each sample over its last dims (normalized_shape), then scales and shifts."""

    def __init__(
        self,
        normalized_shape,
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = _initialised(np.ones(self.normalized_shape, np.float32))
            if bias:
                self.bias = _initialised(np.zeros(self.normalized_shape, np.float32))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}"
        )


class BatchNorm1d(Module):
    """Normalises each feature over the batch; keeps running statistics for eval()."""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = _initialised(np.ones(num_features, np.float32))
            if bias:
                self.bias = _initialised(np.zeros(num_features, np.float32))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            # filled in place by PyTorch (zero_, fill_), hence version 1
            for name, start in [
                ("running_mean", np.zeros(num_features, np.float32)),
                ("running_var", np.ones(num_features, np.float32)),
                ("num_batches_tracked", np.array(0, np.int64)),
            ]:
                buffer = leaf(start, False, "buffer")  # the trace sees it made here
                buffer._version_counter.value = 1
                self.register_buffer(name, buffer)
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # a plain average of every batch so far
                factor = 1.0 / float(self.num_batches_tracked)
        # the batch's own statistics in training, and in eval when there are no running ones
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if keep else None,
            self.running_var if keep else None,
            self.weight,
            self.bias,
            use_batch,
            factor,
            self.eps,
        )

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )
