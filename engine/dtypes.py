"""Data types, named and promoted as PyTorch does (float32 is the default for floats)."""

from __future__ import annotations

import numpy as np

from engine.unsupported import UnsupportedByGradtrace

BOOL, INT, FLOAT = 0, 1, 2  # categories: promotion never moves down this ladder


class dtype:  # noqa: N801 - spelled as torch spells it
    """A tensor element type: `torch.float32` and friends."""

    __slots__ = ("name", "np", "category", "itemsize")

    def __init__(self, name: str, np_type: type, category: int) -> None:
        self.name = name
        self.np = np.dtype(np_type)
        self.category = category
        self.itemsize = self.np.itemsize

    @property
    def is_floating_point(self) -> bool:
        return self.category == FLOAT

    @property
    def is_complex(self) -> bool:
        return False

    @property
    def is_signed(self) -> bool:
        return self.category != BOOL

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self) -> str:
        return self.name


float32 = dtype("float32", np.float32, FLOAT)
float64 = dtype("float64", np.float64, FLOAT)
int32 = dtype("int32", np.int32, INT)
int64 = dtype("int64", np.int64, INT)
bool_ = dtype("bool", np.bool_, BOOL)

ALL = (float32, float64, int32, int64, bool_)
FROM_NUMPY = {d.np: d for d in ALL}


def default_float() -> dtype:
    return float32


def from_numpy(np_dtype: np.dtype) -> dtype:
    """The engine dtype for a numpy dtype; numpy types the engine lacks raise clearly."""
    try:
        return FROM_NUMPY[np.dtype(np_dtype)]
    except KeyError:
        raise UnsupportedByGradtrace(
            f"dtype {np.dtype(np_dtype)} is not supported by gradtrace's engine "
            "(supported: float32, float64, int32, int64, bool)"
        ) from None


def promote(a: dtype, b: dtype) -> dtype:
    """torch.promote_types: the higher category wins; within one, the wider type."""
    if a is b:
        return a
    if a.category != b.category:
        return a if a.category > b.category else b
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


def type_word(dt: dtype) -> str:
    """The scalar type's name in PyTorch's messages: Long, Int, Bool, Double, Float."""
    return {"int64": "Long", "int32": "Int", "bool": "Bool", "float64": "Double"}.get(
        dt.name, "Float"
    )
