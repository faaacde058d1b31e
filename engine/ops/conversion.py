"""Conversions: dtype casts (to, float, long, ...), the type name, and the device."""

from __future__ import annotations

from engine import devices, dtypes
from engine import functions as fn
from engine.record import apply, plain
from engine.tensor import Tensor, tensor_methods

# Tensor.type()'s names, and the legacy type names it accepts back
TYPE_NAMES = {
    "float16": "torch.HalfTensor",
    "bfloat16": "torch.BFloat16Tensor",
    "float32": "torch.FloatTensor",
    "float64": "torch.DoubleTensor",
    "int8": "torch.CharTensor",
    "uint8": "torch.ByteTensor",
    "int16": "torch.ShortTensor",
    "int32": "torch.IntTensor",
    "int64": "torch.LongTensor",
    "bool": "torch.BoolTensor",
}
BY_TYPE_NAME = {
    name: getattr(dtypes, dt if dt != "bool" else "bool_") for dt, name in TYPE_NAMES.items()
}

_TO_SIGNATURES = (
    " * (torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, "
    "bool copy = False, *, torch.memory_format memory_format = None)\n"
    " * (torch.dtype dtype, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)\n"
    " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)\n"
)


@tensor_methods
class Conversion:
    """Casting to another dtype: a ToCopyBackward0 node when the result can carry gradients."""

    def to(self, *args, dtype=None, device=None, copy=False, non_blocking=False, **kwargs):
        target, where = dtype, device
        for i, arg in enumerate(args):
            if isinstance(arg, dtypes.dtype):
                target = arg
            elif isinstance(arg, Tensor):
                target = arg.dtype
            elif (arg is None or devices.is_device(arg)) and i == 0:
                where = arg
            elif isinstance(arg, int) and not isinstance(arg, bool) and i == 0:
                devices.device(arg)  # an accelerator index: PyTorch's "none is available"
            else:
                got = ", ".join(type(a).__name__ for a in args)
                raise TypeError(
                    f"to() received an invalid combination of arguments - got ({got}), but "
                    f"expected one of:\n{_TO_SIGNATURES}"
                )
        devices.check(where)
        if target is not None:
            target = dtypes.check_storable(dtypes.resolve(target))
        if target is None or target.np == self._array.dtype:
            if not copy:
                return self
            target = self.dtype
        if self._requires_grad and not target.is_floating_point:
            # integers and bools cannot carry gradients, so PyTorch records no grad_fn
            return plain(self._array.astype(target.np), "to")
        return apply(fn.ToCopyBackward0, (self,), dtype=target.np)

    def float(self) -> Tensor:
        return self.to(dtypes.float32)

    def double(self) -> Tensor:
        return self.to(dtypes.float64)

    def half(self) -> Tensor:
        return self.to(dtypes.float16)

    def bfloat16(self) -> Tensor:
        return self.to(dtypes.bfloat16)

    def long(self) -> Tensor:
        return self.to(dtypes.int64)

    def int(self) -> Tensor:
        return self.to(dtypes.int32)

    def short(self) -> Tensor:
        return self.to(dtypes.int16)

    def char(self) -> Tensor:
        return self.to(dtypes.int8)

    def byte(self) -> Tensor:
        return self.to(dtypes.uint8)

    def bool(self) -> Tensor:
        return self.to(dtypes.bool_)

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            return TYPE_NAMES[self.dtype.name]
        if isinstance(dtype, str):
            if dtype not in BY_TYPE_NAME:
                raise ValueError(f"invalid type: '{dtype}'")
            return self.to(BY_TYPE_NAME[dtype])
        return self.to(getattr(dtype, "dtype", dtype))  # torch.LongTensor carries its dtype

    # ***** the device: always the CPU *****

    def cpu(self) -> Tensor:
        return self

    def cuda(self, device=None, non_blocking=False) -> Tensor:
        raise devices.not_available("cuda" if device is None else device)

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def is_cpu(self) -> bool:
        return True

    def get_device(self) -> int:
        return -1  # PyTorch's answer for a CPU tensor
