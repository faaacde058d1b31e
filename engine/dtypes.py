"""Data types, named and promoted as PyTorch does (float32 is the default for floats)."""

from __future__ import annotations

import numpy as np

from engine.unsupported import UnsupportedByGradtrace

BOOL, INT, FLOAT = 0, 1, 2  # categories: promotion never moves down this ladder


class dtype:  # noqa: N801 - spelled as torch spells it
    """A tensor element type: `torch.float32` and friends."""

    __slots__ = ("name", "np", "category", "itemsize", "is_signed")

    def __init__(self, name: str, np_type: type, category: int, *, signed: bool = True) -> None:
        self.name = name
        self.np = np.dtype(np_type)
        self.category = category
        self.itemsize = self.np.itemsize
        self.is_signed = signed

    @property
    def is_floating_point(self) -> bool:
        return self.category == FLOAT

    @property
    def is_complex(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self) -> str:
        return self.name


float16 = dtype("float16", np.float16, FLOAT)
float32 = dtype("float32", np.float32, FLOAT)
float64 = dtype("float64", np.float64, FLOAT)
int8 = dtype("int8", np.int8, INT)
uint8 = dtype("uint8", np.uint8, INT, signed=False)
int16 = dtype("int16", np.int16, INT)
int32 = dtype("int32", np.int32, INT)
int64 = dtype("int64", np.int64, INT)
bool_ = dtype("bool", np.bool_, BOOL, signed=False)
# numpy has no bfloat16, so no array can hold one: the dtype exists (torch.finfo, messages), and
# making a tensor of it fails clearly (see docs/engine.md, "bfloat16")
bfloat16 = dtype("bfloat16", np.float32, FLOAT)
bfloat16.itemsize = 2  # PyTorch's size, not its numpy stand-in's

ALL = (float16, float32, float64, int8, uint8, int16, int32, int64, bool_)
FROM_NUMPY = {d.np: d for d in ALL}

# torch.set_default_dtype: the dtype Python floats (and float factories) become
_default_float = [float32]


# how PyTorch's C++ spells each dtype in its messages ("from is out of bounds for signed char",
# "expected dtype float ... but got dtype double", TensorOptions' "dtype=long int")
CPP_NAMES = {
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "float32": "float",
    "float64": "double",
    "int8": "signed char",
    "uint8": "unsigned char",
    "int16": "short int",
    "int32": "int",
    "int64": "long int",
    "bool": "bool",
}


def default_float() -> dtype:
    return _default_float[0]


def set_default_float(dt: dtype) -> None:
    """torch.set_default_dtype: only float32 and float64 make sense as the default."""
    dt = resolve(dt)
    if not dt.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    check_storable(dt)
    _default_float[0] = dt


def check_storable(dt: dtype) -> dtype:
    """The dtype, if a tensor can hold it; bfloat16 has no numpy array type to live in."""
    if dt is bfloat16:
        raise UnsupportedByGradtrace(
            "bfloat16 tensors are not supported by gradtrace's engine (numpy has no bfloat16 to "
            "compute in); use torch.float16 or torch.float32"
        )
    return dt


def from_numpy(np_dtype: np.dtype) -> dtype:
    """The engine dtype for a numpy dtype; numpy types the engine lacks raise clearly."""
    try:
        return FROM_NUMPY[np.dtype(np_dtype)]
    except KeyError:
        raise UnsupportedByGradtrace(
            f"dtype {np.dtype(np_dtype)} is not supported by gradtrace's engine "
            "(supported: float16, float32, float64, int8, uint8, int16, int32, int64, bool)"
        ) from None


def promote(a: dtype, b: dtype) -> dtype:
    """torch.promote_types: the higher category wins; within one, the wider type."""
    if a is b:
        return a
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.is_signed != b.is_signed and a.category == INT:
        # uint8 with a signed integer: the signed type must also hold 255
        signed = a if a.is_signed else b
        return signed if signed.itemsize > 1 else int16
    return a if a.itemsize >= b.itemsize else b


def of_scalar(value: object) -> dtype:
    """The dtype a Python number becomes on its own: bool, int64 or the default float."""
    if isinstance(value, bool | np.bool_):
        return bool_
    if isinstance(value, int | np.integer):
        return int64
    return default_float()


def result_type(tensor_dtypes: list[tuple[dtype, int]], scalars: list[object]) -> dtype:
    """torch.result_type for (dtype, ndim) operands and Python scalars.

    Tensors with dimensions decide first; 0-dim tensors and then Python numbers only change the
    result when they belong to a higher category (so float32 * 2.5 stays float32).
    """
    dim_result = zero_result = None
    for dt, ndim in tensor_dtypes:
        if ndim:
            dim_result = dt if dim_result is None else promote(dim_result, dt)
        else:
            zero_result = dt if zero_result is None else promote(zero_result, dt)
    result = dim_result
    if zero_result is not None and (result is None or zero_result.category > result.category):
        result = zero_result
    for value in scalars:
        scalar_dt = of_scalar(value)
        if result is None or scalar_dt.category > result.category:
            result = scalar_dt
    return result if result is not None else default_float()


def resolve(value) -> dtype:
    """A torch dtype from what a snippet passes as dtype= (torch.float64, or Python's float)."""
    if isinstance(value, dtype):
        return value
    if value is float:
        return float64
    if value is int:
        return int64
    if value is bool:
        return bool_
    raise TypeError(f"dtype must be a torch.dtype, not {type(value).__name__}")


# the scalar type's name in PyTorch's messages ("expected scalar type Long")
_TYPE_WORDS = {
    "float16": "Half",
    "bfloat16": "BFloat16",
    "float32": "Float",
    "float64": "Double",
    "int8": "Char",
    "uint8": "Byte",
    "int16": "Short",
    "int32": "Int",
    "int64": "Long",
    "bool": "Bool",
}


def type_word(dt: dtype) -> str:
    """The scalar type's name in PyTorch's messages: Long, Int, Bool, Double, Float."""
    return _TYPE_WORDS[dt.name]


# ***** torch.finfo and torch.iinfo *****


def _g(value: float) -> str:
    # PyTorch prints finfo's fields with six significant digits, as C's %g does
    return f"{value:g}"


class finfo:  # noqa: N801 - torch's name
    """torch.finfo(dtype): the limits of a floating point type."""

    def __init__(self, type: dtype | None = None) -> None:  # noqa: A002 - torch's keyword
        dt = default_float() if type is None else resolve(type)
        if not dt.is_floating_point:
            raise TypeError(
                "torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                "'torch.finfo'"
            )
        if dt is bfloat16:  # float32's range with 8 bits of mantissa
            self.bits, self.eps, self.resolution = 16, 2.0**-7, 0.01
            self.max = float(np.float32(np.frombuffer(b"\x00\x00\x7f\x7f", np.float32)[0]))
            self.tiny = float(np.finfo(np.float32).tiny)
        else:
            info = np.finfo(dt.np)
            self.bits, self.eps, self.resolution = info.bits, float(info.eps), 10.0**-info.precision
            self.max, self.tiny = float(info.max), float(info.tiny)
        self.min = -self.max
        self.smallest_normal = self.tiny
        self.dtype = dt.name

    def __repr__(self) -> str:
        fields = ("resolution", "min", "max", "eps", "smallest_normal", "tiny")
        shown = ", ".join(f"{f}={_g(getattr(self, f))}" for f in fields)
        return f"finfo({shown}, dtype={self.dtype})"


class iinfo:  # noqa: N801 - torch's name
    """torch.iinfo(dtype): the limits of an integer type."""

    def __init__(self, type: dtype) -> None:  # noqa: A002 - torch's keyword
        dt = resolve(type)
        if dt.category != INT:
            raise TypeError(f"{dt!r} is not supported by torch.iinfo")
        info = np.iinfo(dt.np)
        self.bits, self.min, self.max, self.dtype = info.bits, int(info.min), int(info.max), dt.name

    def __repr__(self) -> str:
        return f"iinfo(min={_g(self.min)}, max={_g(self.max)}, dtype={self.dtype})"
