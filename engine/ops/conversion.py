"""Conversions: dtype casts (to, float, long, ...), the type name, and the device."""

from __future__ import annotations

from engine import dtypes
from engine import functions as fn
from engine.record import apply, plain
from engine.tensor import Tensor, tensor_methods
from engine.unsupported import UnsupportedByGradtrace


@tensor_methods
class Conversion:
    """Casting to another dtype: a ToCopyBackward0 node when the result can carry gradients."""

    def to(self, *args, **kwargs) -> Tensor:
        target = kwargs.get("dtype")
        for arg in args:
            if isinstance(arg, dtypes.dtype):
                target = arg
            elif isinstance(arg, Tensor):
                target = arg.dtype
            elif arg not in ("cpu",):
                raise UnsupportedByGradtrace(
                    f"Tensor.to({arg!r}) is not supported by gradtrace's engine: "
                    "everything runs on the CPU"
                )
        if target is None or target.np == self._array.dtype:
            return self
        if self._requires_grad and not target.is_floating_point:
            # integers and bools cannot carry gradients, so PyTorch records no grad_fn
            return plain(self._array.astype(target.np), "to")
        return apply(fn.ToCopyBackward0, (self,), dtype=target.np)

    def float(self) -> Tensor:
        return self.to(dtypes.float32)

    def double(self) -> Tensor:
        return self.to(dtypes.float64)

    def long(self) -> Tensor:
        return self.to(dtypes.int64)

    def int(self) -> Tensor:
        return self.to(dtypes.int32)

    def bool(self) -> Tensor:
        return self.to(dtypes.bool_)

    def type(self, dtype=None):
        if dtype is None:
            return {
                "float32": "torch.FloatTensor",
                "float64": "torch.DoubleTensor",
                "int64": "torch.LongTensor",
                "int32": "torch.IntTensor",
                "bool": "torch.BoolTensor",
            }[self.dtype.name]
        return self.to(dtype)

    def cpu(self) -> Tensor:
        return self
