"""In-place ops (add_, mul_, zero_, copy_, ...): same storage, version counter bumped."""

from __future__ import annotations

from engine import dtypes
from engine import functions as fn
from engine.creation import tensor
from engine.ops.arithmetic import refuse_bool_subtraction
from engine.ops.scalars import check_alpha, checked, wrapped
from engine.promotion import check_number, raw, result_dtype
from engine.record import apply_inplace
from engine.shape import broadcast_shapes
from engine.tensor import Tensor, tensor_methods


@tensor_methods
class InPlace:
    """Trailing-underscore methods, and the augmented operators (+=, ...) that call them."""

    def add_(self, other, *, alpha=1):
        if type(alpha) is not int or alpha != 1:  # (the default fits every dtype: no check)
            check_alpha(result_dtype(self, other).np, alpha)
        return inplace(fn.AddBackward0, self, other, alpha=checked(self._array, alpha))

    def sub_(self, other, *, alpha=1):
        refuse_bool_subtraction(self, other)
        if type(alpha) is not int or alpha != 1:
            check_alpha(result_dtype(self, other).np, alpha)
        return inplace(fn.SubBackward0, self, other, alpha=checked(self._array, alpha))

    def mul_(self, other):
        return inplace(fn.MulBackward0, self, other)

    def div_(self, other):
        return inplace(fn.DivBackward0, self, other)

    __iadd__ = add_
    __isub__ = sub_
    __imul__ = mul_
    __itruediv__ = div_

    def zero_(self):
        return inplace(fn.ZeroBackward0, self)

    def fill_(self, value):
        return inplace(fn.FillBackward2, self, value=checked(self._array, raw(value)))

    def copy_(self, src):
        return inplace(fn.CopyBackwards, self, src)

    def clamp_(self, min=None, max=None):
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        for bound in (min, max):
            if bound is not None:
                _check_clamp_castable(self, bound)
        min, max = checked(self._array, min), checked(self._array, max)
        return inplace(fn.ClampBackward1, self, min=min, max=max)

    def neg_(self):
        return inplace(fn.NegBackward0, self)


def inplace(node_cls, target: Tensor, *operands, **kwargs) -> Tensor:
    """`target.op_(other)`: the operand cast to the target's dtype (an in-place op keeps it)."""
    other = operands[0] if operands else None
    if isinstance(other, list | tuple):
        other = tensor(other)
    if node_cls is fn.DivBackward0 and target._array.dtype.kind != "f":
        raise RuntimeError(
            "result type Float can't be cast to the desired output type "
            + dtypes.type_word(target.dtype)
        )
    if node_cls in _ARITHMETIC and target._array.dtype.kind != "f":  # floats take any result
        _check_castable(target, other)
    if isinstance(other, Tensor):
        broadcast_shapes(target._array.shape, other._array.shape)
        arrays = (target._array, other._array.astype(target._array.dtype, copy=False))
    elif other is not None:
        check_number(other, node_cls.__name__)
        arrays = (target._array, target._array.dtype.type(wrapped(target._array, other)))
    else:
        arrays = (target._array,)
    inputs = (target, other) if operands else (target,)
    return apply_inplace(node_cls, target, inputs, arrays, **kwargs)


_ARITHMETIC = (fn.AddBackward0, fn.SubBackward0, fn.MulBackward0)


def _check_clamp_castable(target: Tensor, bound) -> None:
    """`int_tensor.clamp_(max=2.5)` clamps in float, which it cannot write back. The message
    names the target's dtype in C++ for a number bound (clamp's Scalar overload), as a scalar
    type for a tensor bound."""
    result = result_dtype(target, bound)
    if result.category > target.dtype.category:
        if isinstance(bound, Tensor):
            word = dtypes.type_word(target.dtype)
        else:
            word = dtypes.CPP_NAMES[target._array.dtype.name]
        raise RuntimeError(
            f"result type {dtypes.type_word(result)} can't be cast to the desired output "
            f"type {word}"
        )


def _check_castable(target: Tensor, other) -> None:
    """`int_tensor *= 0.5` computes in float, which an in-place op cannot write back."""
    result = result_dtype(target, other)
    if result.category > target.dtype.category:
        raise RuntimeError(
            f"result type {dtypes.type_word(result)} can't be cast to the desired output type "
            + dtypes.type_word(target.dtype)
        )
