"""Python integers meeting an integer tensor (int8 ... int64), as PyTorch meets them.

PyTorch treats `t + 300` with an int8 `t` as C does: the number becomes a 64-bit integer, then
is cast to int8, keeping its low 8 bits (300 becomes 44, so the sum is 45). Where a number is a
setting of the op rather than an operand (fill_, clamp's bounds, pow's exponent, alpha), it is
checked instead: one that does not fit fails (a negative one for an unsigned type still wraps).
"""

from __future__ import annotations

import numpy as np

# the C type PyTorch's overflow message names
_C_NAMES = {"int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "int32": "int"}


def _small_int(array: np.ndarray, value) -> bool:
    return type(value) is int and array.dtype.kind in "iu" and array.dtype.name in _C_NAMES


def wrapped(array: np.ndarray, value):
    """An operand `value` as the integer PyTorch computes `array <op> value` with."""
    if type(value) is not int or array.dtype.kind not in "iu":
        return value
    if value >= 2**64:
        raise OverflowError("int too big to convert")
    if value < -(2**63):
        raise OverflowError("can't convert negative int to unsigned")
    return int(np.array(value % 2**64, np.uint64).astype(array.dtype))


def checked(array: np.ndarray, value):
    """A setting `value` for an op on `array`, failing as PyTorch does when it does not fit."""
    if _small_int(array, value):
        info = np.iinfo(array.dtype)
        # an unsigned type also takes negative numbers down to -max (they wrap), as c10's check
        low = -info.max if info.min == 0 else info.min
        if not low <= value <= info.max:
            raise RuntimeError(
                f"value cannot be converted to type {_C_NAMES[array.dtype.name]} without overflow"
            )
    return wrapped(array, value)


def check_alpha(result: np.dtype, alpha) -> None:
    """add's and sub's alpha as ATen's alpha_check takes it: a bool only for bool results, a
    float only for floating ones (the result's dtype is the operands' promoted one)."""
    if isinstance(alpha, bool | np.bool_):
        if result.kind != "b":
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif result.kind not in "fc" and not isinstance(alpha, int | np.integer):
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating point number."
        )
