"""The constructors older tutorials write: `torch.Tensor([1, 2])`, `torch.FloatTensor(2, 3)`, ...

`torch.Tensor(data)` copies data into a float tensor (the default dtype), `torch.Tensor(2, 3)`
makes one of that shape (PyTorch leaves its memory uninitialised; here it is zeros, so traces stay
deterministic) and `torch.Tensor(t)` is a view of t. The typed ones (`torch.LongTensor`, ...) do the
same with their dtype, and `isinstance(x, torch.FloatTensor)` asks about x's dtype, as in PyTorch.
"""

from __future__ import annotations

import numpy as np

from engine import devices, dtypes, tracing
from engine.creation import array_from_data
from engine.grad_mode import state as grad_state
from engine.record import leaf
from engine.shape import Size
from engine.tensor import Tensor
from engine.unsupported import UnsupportedByGradtrace

_SIGNATURES = (
    " * (*, torch.device device = None)\n"
    " * (torch.Storage storage)\n"
    " * (Tensor other)\n"
    " * (tuple of ints size, *, torch.device device = None)\n"
    " * (object data, *, torch.device device = None)\n"
)


def new(dt: dtypes.dtype, *args, **kwargs) -> Tensor:
    """What `torch.Tensor(*args)` (dt the default float) or `torch.LongTensor(*args)` makes."""
    unknown = [k for k in kwargs if k != "device"]
    if unknown:
        raise _no_signature(args, kwargs, f"some of the keywords were incorrect: {unknown[0]}")
    devices.check(kwargs.get("device"))
    dtypes.check_storable(dt)
    if not args:
        return leaf(np.zeros(0, dt.np), False, "Tensor")
    if all(_is_size(a) for a in args):
        return leaf(np.zeros(_size(args), dt.np), False, "Tensor")
    if len(args) > 1:
        marked = ", ".join(f"!{_type_name(a)}!" for a in args)
        raise _no_signature(args, kwargs, f"some of the arguments have invalid types: ({marked})")
    data = args[0]
    if isinstance(data, Tensor):
        if data.dtype is not dt:
            want, got = _options(dt), _options(data.dtype)
            raise TypeError(f"expected TensorOptions({want}) (got TensorOptions({got}))")
        return _alias(data)
    if isinstance(data, Size):
        return leaf(np.zeros(tuple(data), dt.np), False, "Tensor")
    if isinstance(data, str):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if not isinstance(data, list | tuple | np.ndarray):
        raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
    return leaf(array_from_data(data, dt), False, "Tensor")


def _alias(t: Tensor) -> Tensor:
    """PyTorch's Tensor(other): a new tensor on other's memory, sharing its version counter."""
    if t._requires_grad and grad_state.enabled:
        raise UnsupportedByGradtrace(
            "torch.Tensor(t) of a tensor that requires grad (PyTorch's AliasBackward0) is not "
            "supported by gradtrace's engine; use t.view_as(t), or t.detach() to leave the graph"
        )
    out = Tensor._wrap(t._array)
    out._version_counter = t._version_counter
    out._base = t if t._base is None else t._base
    if tracing.current is not None:
        tracing.current.on_tensor(out, "Tensor", (t,))
    return out


def _is_size(arg) -> bool:
    return isinstance(arg, int | np.integer) and not isinstance(arg, bool)


def _size(args: tuple) -> tuple[int, ...]:
    shape = tuple(int(a) for a in args)
    for n in shape:
        if n < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {n}: {list(shape)}"
            )
    return shape


def _options(dt: dtypes.dtype) -> str:
    return (
        f"dtype={dtypes.CPP_NAMES[dt.name]}, device=cpu, layout=Strided, "
        "requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt)"
    )


def _type_name(value) -> str:
    # PyTorch's argument parser names its own types by their Python path
    if isinstance(value, dtypes.dtype | devices.device):
        return f"torch.{type(value).__name__}"
    return "Tensor" if isinstance(value, Tensor) else type(value).__name__


def _no_signature(args: tuple, kwargs: dict, why: str) -> TypeError:
    got = [_type_name(a) for a in args] + [f"{k}={_type_name(v)}" for k, v in kwargs.items()]
    first, *rest = _SIGNATURES.splitlines(keepends=True)
    return TypeError(
        f"new() received an invalid combination of arguments - got ({', '.join(got)}), but "
        f"expected one of:\n{first}      didn't match because {why}\n{''.join(rest)}"
    )


class tensortype(type):  # noqa: N801 - the name PyTorch gives these classes' type
    """The type of torch.FloatTensor and friends: calling one makes a tensor of its dtype."""

    dtype: dtypes.dtype

    def __call__(cls, *args, **kwargs) -> Tensor:
        return new(cls.dtype, *args, **kwargs)

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype


tensortype.__module__ = "torch"


def _legacy(name: str, dt: dtypes.dtype) -> tensortype:
    return tensortype(name, (), {"dtype": dt, "__module__": "torch"})


FloatTensor = _legacy("FloatTensor", dtypes.float32)
DoubleTensor = _legacy("DoubleTensor", dtypes.float64)
HalfTensor = _legacy("HalfTensor", dtypes.float16)
BFloat16Tensor = _legacy("BFloat16Tensor", dtypes.bfloat16)
ByteTensor = _legacy("ByteTensor", dtypes.uint8)
CharTensor = _legacy("CharTensor", dtypes.int8)
ShortTensor = _legacy("ShortTensor", dtypes.int16)
IntTensor = _legacy("IntTensor", dtypes.int32)
LongTensor = _legacy("LongTensor", dtypes.int64)
BoolTensor = _legacy("BoolTensor", dtypes.bool_)
