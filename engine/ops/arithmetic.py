"""Arithmetic operators (+ - * / % // ** @, unary -, abs), after PyTorch's type promotion."""

from __future__ import annotations

import numpy as np

from engine import functions as fn
from engine.grad_mode import state as grad_state
from engine.ops.linalg import dot, matmul, mm, mv
from engine.ops.scalars import check_alpha, checked, wrapped
from engine.promotion import binary, cast_scalar, check_number, result_dtype
from engine.record import apply
from engine.saved import remember_written
from engine.tensor import Tensor, tensor_methods
from engine.unsupported import UnsupportedByGradtrace

# What the operators decline, as PyTorch's do (`t + [1, 2]`, `t / None`): Python then tries the
# other operand's reflected operator, or raises its own "unsupported operand type(s)".
DECLINED = (list, tuple, str, dict, set, type(None))


@tensor_methods
class Arithmetic:
    """The operators, and their named twins (add, mul, pow, ...)."""

    def __add__(self, other):
        if isinstance(other, DECLINED):
            return NotImplemented
        return binary(fn.AddBackward0, self, wrapped(self._array, other))

    __radd__ = __add__

    def add(self, other, *, alpha=1):
        checked(self._array, alpha)
        check_alpha(result_dtype(self, other).np, alpha)
        return binary(fn.AddBackward0, self, wrapped(self._array, other), alpha=alpha)

    def __sub__(self, other):
        if isinstance(other, DECLINED):
            return NotImplemented
        refuse_bool_subtraction(self, other)
        return binary(fn.SubBackward0, self, wrapped(self._array, other))

    def sub(self, other, *, alpha=1):
        refuse_bool_subtraction(self, other)
        checked(self._array, alpha)
        check_alpha(result_dtype(self, other).np, alpha)
        return binary(fn.SubBackward0, self, wrapped(self._array, other), alpha=alpha)

    def __rsub__(self, other):
        if isinstance(other, DECLINED):
            return NotImplemented
        refuse_bool_subtraction(self, other)
        array, other = cast_scalar(self, wrapped(self._array, other))
        return apply(fn.RsubBackward1, (self,), arrays=(array,), other=other)

    def mul(self, other):
        out = binary(fn.MulBackward0, self, wrapped(self._array, other))
        return _as_written(out, other=other)

    def __mul__(self, other):
        if isinstance(other, DECLINED):
            return NotImplemented
        out = binary(fn.MulBackward0, self, wrapped(self._array, other))
        return _as_written(out, other=other)

    __rmul__ = __mul__

    def div(self, other):
        return _as_written(binary(fn.DivBackward0, self, other, floating=True), other=other)

    def __truediv__(self, other):
        if isinstance(other, DECLINED):
            return NotImplemented
        return _as_written(binary(fn.DivBackward0, self, other, floating=True), other=other)

    def __rtruediv__(self, other):
        if isinstance(other, DECLINED):
            return NotImplemented
        return self.reciprocal() * other

    def __mod__(self, other):
        if isinstance(other, DECLINED):
            return NotImplemented
        return self.remainder(other)

    def remainder(self, other):
        _no_integer_division_by_zero(self, other)
        if isinstance(other, Tensor):
            return binary(fn.RemainderBackward1, self, other)
        check_number(other, "%")
        array, other = cast_scalar(self, wrapped(self._array, other))
        return apply(fn.RemainderBackward0, (self,), arrays=(array,), other=other)

    def __floordiv__(self, other):
        if isinstance(other, DECLINED):
            return NotImplemented
        return self.floor_divide(other)

    def floor_divide(self, other):
        if grad_state.enabled and (self._requires_grad or getattr(other, "_requires_grad", False)):
            raise UnsupportedByGradtrace(
                "floor division (//) of a tensor that requires grad is not supported by "
                "gradtrace's engine (PyTorch has no derivative for it either)"
            )
        _no_integer_division_by_zero(self, other)
        return binary(fn.FloorDivide, self, wrapped(self._array, other))

    def __pow__(self, exponent):
        if isinstance(exponent, DECLINED):
            return NotImplemented
        return self.pow(exponent)

    def pow(self, exponent):
        if isinstance(exponent, Tensor):
            return binary(fn.PowBackward1, self, exponent)
        check_number(exponent, "** or pow()")
        written = exponent
        array, exponent = cast_scalar(self, checked(self._array, exponent))
        if array.dtype.kind in "iu" and exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        if array.dtype.kind == "f" and type(written) in (int, float):
            exponent = written  # Pow.cpp computes with the double (exponent - 1 too), not a float
        out = apply(fn.PowBackward0, (self,), arrays=(array,), exponent=exponent)
        return remember_written(out, exponent=written)

    def __rpow__(self, base):
        if isinstance(base, DECLINED):
            return NotImplemented
        check_number(base, "pow")
        written = base
        array, base = cast_scalar(self, wrapped(self._array, base))
        out = apply(fn.PowBackward2, (self,), arrays=(array,), base=base)
        return remember_written(out, self=written)

    def __neg__(self):
        return apply(fn.NegBackward0, (self,))

    neg = __neg__

    def __pos__(self):
        return self

    def __abs__(self):
        return apply(fn.AbsBackward0, (self,))

    abs = __abs__

    def __matmul__(self, other):
        if isinstance(other, DECLINED):
            return NotImplemented
        return matmul(self, other)

    def matmul(self, other):
        return matmul(self, other)

    def __rmatmul__(self, other):
        if isinstance(other, DECLINED):
            return NotImplemented
        return matmul(other, self)

    def mm(self, other):
        return mm(self, other)

    def mv(self, vec):
        return mv(self, vec)

    def dot(self, other):
        return dot(self, other)


def _as_written(out: Tensor, other) -> Tensor:
    """x * 3: the node keeps 3 as written, for grad_fn._saved_other (a tensor operand needs not)."""
    return out if isinstance(other, Tensor) else remember_written(out, other=other)


def refuse_bool_subtraction(a: Tensor, b) -> None:
    b_is_bool = type(b) is bool or (isinstance(b, Tensor) and b._array.dtype.kind == "b")
    if a._array.dtype.kind == "b" and b_is_bool:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. "
            "Use the `^` or `logical_xor()` operator instead."
        )
    if a._array.dtype.kind == "b" or b_is_bool:
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )


def _no_integer_division_by_zero(a: Tensor, b) -> None:
    """Integer // and % by zero fail in PyTorch (a float one gives inf or nan)."""
    divisor = np.asarray(b._array if isinstance(b, Tensor) else b)
    integers = a._array.dtype.kind in "iu" and divisor.dtype.kind in "iub"
    if integers and np.any(divisor == 0):
        raise RuntimeError("ZeroDivisionError")


def maximum(a: Tensor, b: Tensor) -> Tensor:
    return binary(fn.MaximumBackward0, a, b)


def minimum(a: Tensor, b: Tensor) -> Tensor:
    return binary(fn.MinimumBackward0, a, b)
