"""Elementwise functions: exp, log, the trigonometry, rounding, the activations, clamp, softmax,
lerp and addcmul; their in-place forms; clone."""

from __future__ import annotations

import numpy as np

from engine import dtypes, tracing
from engine import functions as fn
from engine.numpy_names import numpy_names
from engine.ops.inplace import inplace
from engine.ops.scalars import checked
from engine.promotion import binary, check_number, floating, result_dtype
from engine.record import apply, apply_inplace
from engine.saved import remember_written
from engine.shape import broadcast_shapes, wrap_dim
from engine.tensor import Tensor, tensor_methods


@tensor_methods
class Pointwise:
    """One output element per input element (softmax: per row along dim)."""

    def exp(self):
        return apply(fn.ExpBackward0, (self,), arrays=floating(self))

    def log(self):
        return apply(fn.LogBackward0, (self,), arrays=floating(self))

    def sin(self):
        return apply(fn.SinBackward0, (self,), arrays=floating(self))

    def cos(self):
        return apply(fn.CosBackward0, (self,), arrays=floating(self))

    def tanh(self):
        return apply(fn.TanhBackward0, (self,), arrays=floating(self))

    def sigmoid(self):
        return apply(fn.SigmoidBackward0, (self,), arrays=floating(self))

    def sqrt(self):
        return apply(fn.SqrtBackward0, (self,), arrays=floating(self))

    def reciprocal(self):
        return apply(fn.ReciprocalBackward0, (self,), arrays=floating(self))

    def relu(self):
        return apply(fn.ReluBackward0, (self,))

    # ***** more of one tensor: float results (integers become the default float) *****

    def rsqrt(self):
        return apply(fn.RsqrtBackward0, (self,), arrays=floating(self))

    def tan(self):
        return apply(fn.TanBackward0, (self,), arrays=floating(self))

    def asin(self):
        return apply(fn.AsinBackward0, (self,), arrays=floating(self))

    def acos(self):
        return apply(fn.AcosBackward0, (self,), arrays=floating(self))

    def atan(self):
        return apply(fn.AtanBackward0, (self,), arrays=floating(self))

    def sinh(self):
        return apply(fn.SinhBackward0, (self,), arrays=floating(self))

    def cosh(self):
        return apply(fn.CoshBackward0, (self,), arrays=floating(self))

    def asinh(self):
        return apply(fn.AsinhBackward0, (self,), arrays=floating(self))

    def acosh(self):
        return apply(fn.AcoshBackward0, (self,), arrays=floating(self))

    def atanh(self):
        return apply(fn.AtanhBackward0, (self,), arrays=floating(self))

    def erf(self):
        return apply(fn.ErfBackward0, (self,), arrays=floating(self))

    def erfc(self):
        return apply(fn.ErfcBackward0, (self,), arrays=floating(self))

    def exp2(self):
        return apply(fn.Exp2Backward0, (self,), arrays=floating(self))

    def expm1(self):
        return apply(fn.Expm1Backward0, (self,), arrays=floating(self))

    def log2(self):
        return apply(fn.Log2Backward0, (self,), arrays=floating(self))

    def log10(self):
        return apply(fn.Log10Backward0, (self,), arrays=floating(self))

    def log1p(self):
        return apply(fn.Log1PBackward0, (self,), arrays=floating(self))

    # ***** rounding and signs: an integer tensor stays integer *****

    def round(self, *, decimals=0):
        if decimals == 0:
            return apply(fn.RoundBackward0, (self,))
        _refuse_integers(self, "round")
        return apply(fn.RoundBackward1, (self,), decimals=decimals)

    def floor(self):
        return apply(fn.FloorBackward0, (self,))

    def ceil(self):
        return apply(fn.CeilBackward0, (self,))

    def trunc(self):
        return apply(fn.TruncBackward0, (self,))

    fix = trunc

    def frac(self):
        _refuse_integers(self, "frac")
        return apply(fn.FracBackward0, (self,))

    def sign(self):
        return apply(fn.SignBackward0, (self,))

    def sgn(self):
        return apply(fn.SgnBackward0, (self,))

    def square(self):
        # PyTorch records square as pow(self, 2); a bool tensor squares to int64
        return (self.long() if self._array.dtype == np.bool_ else self) ** 2

    # ***** of two or three tensors *****

    def atan2(self, other):
        _tensor_argument(other, "atan2", "other")
        return binary(fn.Atan2Backward0, self, other, floating=True)

    arctan2 = atan2

    def fmax(self, other):
        _tensor_argument(other, "fmax", "other")
        return binary(fn.FmaxBackward0, self, other)

    def fmin(self, other):
        _tensor_argument(other, "fmin", "other")
        return binary(fn.FminBackward0, self, other)

    def maximum(self, other):
        _tensor_argument(other, "maximum", "other")
        return binary(fn.MaximumBackward0, self, other)

    def minimum(self, other):
        _tensor_argument(other, "minimum", "other")
        return binary(fn.MinimumBackward0, self, other)

    def where(self, condition, other):
        from engine.creation import where  # creation builds on the ops

        return where(condition, self, other)

    def lerp(self, end, weight):
        node, inputs, arrays, weight = _lerp_operands(self, end, weight)
        return apply(node, inputs, arrays=arrays, **weight)

    def addcmul(self, tensor1, tensor2, *, value=1):
        inputs, arrays = _addc_operands(self, tensor1, tensor2, "addcmul")
        return apply(fn.AddcmulBackward0, inputs, arrays=arrays, value=value)

    def addcdiv(self, tensor1, tensor2, *, value=1):
        inputs, arrays = _addc_operands(self, tensor1, tensor2, "addcdiv")
        return apply(fn.AddcdivBackward0, inputs, arrays=arrays, value=value)

    def clamp(self, min=None, max=None):
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        array = _promoted(self, min, max)
        min, max = checked(array, min), checked(array, max)
        return apply(fn.ClampBackward1, (self,), arrays=(array,), min=min, max=max)

    clip = clamp

    def clamp_min(self, min):
        array = _promoted(self, min)
        return apply(fn.ClampMinBackward0, (self,), arrays=(array,), min=checked(array, min))

    def clamp_max(self, max):
        array = _promoted(self, max)
        return apply(fn.ClampMaxBackward0, (self,), arrays=(array,), max=checked(array, max))

    @numpy_names
    def softmax(self, dim):
        dim = wrap_dim(dim, self.ndim)
        _floating_softmax(self, dim, "softmax")
        return apply(fn.SoftmaxBackward0, (self,), arrays=floating(self), dim=dim)

    @numpy_names
    def log_softmax(self, dim):
        dim = wrap_dim(dim, self.ndim)
        _floating_softmax(self, dim, "log_softmax")
        return apply(fn.LogSoftmaxBackward0, (self,), arrays=floating(self), dim=dim)

    def clone(self):
        return apply(fn.CloneBackward0, (self,))

    def detach(self) -> Tensor:
        """Same storage and version counter, no history: gradients stop here."""
        out = Tensor._wrap(self._array)
        out._version_counter = self._version_counter
        if tracing.current is not None:
            tracing.current.on_tensor(out, "detach", (self,))
        return out

    def detach_(self) -> Tensor:
        self.grad_fn = None
        self._requires_grad = False
        return self


@tensor_methods
class PointwiseInPlace:
    """The trailing-underscore forms: same storage, version bumped, PyTorch's grad_fn names."""

    def relu_(self):
        return inplace(fn.ReluBackward0, self)

    def abs_(self):
        return inplace(fn.AbsBackward0, self)

    def floor_(self):
        return inplace(fn.FloorBackward0, self)

    def round_(self, *, decimals=0):
        if decimals == 0:
            return inplace(fn.RoundBackward0, self)
        _refuse_integers(self, "round")
        return inplace(fn.RoundBackward1, self, decimals=decimals)

    def sigmoid_(self):
        return _float_inplace(fn.SigmoidBackward0, self)

    def tanh_(self):
        return _float_inplace(fn.TanhBackward0, self)

    def exp_(self):
        return _float_inplace(fn.ExpBackward0, self)

    def log_(self):
        return _float_inplace(fn.LogBackward0, self)

    def sqrt_(self):
        return _float_inplace(fn.SqrtBackward0, self)

    def sin_(self):
        return _float_inplace(fn.SinBackward0, self)

    def cos_(self):
        return _float_inplace(fn.CosBackward0, self)

    def pow_(self, exponent):
        if isinstance(exponent, Tensor):
            return inplace(fn.PowBackward1, self, exponent)
        check_number(exponent, "pow_")
        if isinstance(exponent, float) and not self.is_floating_point():
            _float_result(self)
        number = self._array.dtype.type(checked(self._array, exponent))
        if number.dtype.kind == "f" and type(exponent) in (int, float):
            number = exponent  # as in __pow__: the double, as Pow.cpp computes with
        out = apply_inplace(fn.PowBackward0, self, (self,), (self._array,), exponent=number)
        return remember_written(out, exponent=exponent)

    def lerp_(self, end, weight):
        node, inputs, arrays, weight = _lerp_operands(self, end, weight)
        return apply_inplace(node, self, inputs, arrays, **weight)

    def addcmul_(self, tensor1, tensor2, *, value=1):
        inputs, arrays = _addc_operands(self, tensor1, tensor2, "addcmul", into=self)
        return apply_inplace(fn.AddcmulBackward0, self, inputs, arrays, value=value)

    def addcdiv_(self, tensor1, tensor2, *, value=1):
        inputs, arrays = _addc_operands(self, tensor1, tensor2, "addcdiv", into=self)
        return apply_inplace(fn.AddcdivBackward0, self, inputs, arrays, value=value)


def _float_result(t: Tensor) -> None:
    raise RuntimeError(
        f"result type Float can't be cast to the desired output type {dtypes.type_word(t.dtype)}"
    )


def _float_inplace(node, t: Tensor) -> Tensor:
    """exp_() and friends: their result is a float, which an integer tensor cannot hold."""
    if not t.is_floating_point():
        _float_result(t)
    return inplace(node, t)


def _refuse_integers(t: Tensor, name: str) -> None:
    # PyTorch has no integer kernel for these, and says so with a NotImplementedError
    if not t.is_floating_point():
        raise NotImplementedError(
            f"\"{name}_cpu\" not implemented for '{dtypes.type_word(t.dtype)}'"
        )


def _tensor_argument(value, function: str, name: str, position: int = 1) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(
            f"{function}(): argument '{name}' (position {position}) must be Tensor, "
            f"not {type(value).__name__}"
        )


def _two_tensors(method: str):
    """torch.fmax(input, other) and friends: both arguments must be tensors, counted from 1."""

    def function(input, other):
        _tensor_argument(input, method, "input")
        _tensor_argument(other, method, "other", position=2)
        return getattr(input, method)(other)

    function.__name__ = method
    return function


# the torch.* forms, whose messages count `input` as position 1
FUNCTIONS = {name: _two_tensors(name) for name in ("fmax", "fmin", "maximum", "minimum")}


def _lerp_operands(start: Tensor, end, weight) -> tuple:
    """lerp's node, inputs and arrays: end (and a tensor weight) must have start's dtype."""
    _tensor_argument(end, "lerp", "end")
    operands = [("end", end)] + ([("weight", weight)] if isinstance(weight, Tensor) else [])
    for name, t in operands:
        if t._array.dtype != start._array.dtype:
            expected, got = (dtypes.CPP_NAMES[x.dtype.name] for x in (start, t))
            raise RuntimeError(f"expected dtype {expected} for `{name}` but got dtype {got}")
        broadcast_shapes(start._array.shape, t._array.shape)
    if isinstance(weight, Tensor):
        inputs = (start, end, weight)
        return fn.LerpBackward1, inputs, tuple(t._array for t in inputs), {}
    check_number(weight, "lerp")
    return fn.LerpBackward0, (start, end), (start._array, end._array), {"weight": weight}


def _addc_operands(t: Tensor, tensor1, tensor2, name: str, into: Tensor | None = None) -> tuple:
    """addcmul/addcdiv's three tensors, promoted together (or cast to `into`'s dtype)."""
    inputs = (t, tensor1, tensor2)
    for operand in (tensor1, tensor2):
        _tensor_argument(operand, name, "tensor1" if operand is tensor1 else "tensor2")
    if into is not None:
        result = into._array.dtype
    else:
        result = dtypes.result_type([(x.dtype, x.ndim) for x in inputs], []).np
    if name == "addcdiv" and tensor1._array.dtype.kind != "f" and tensor2._array.dtype.kind != "f":
        raise RuntimeError(ADDCDIV_INTEGER_MESSAGE)
    shape = broadcast_shapes(t._array.shape, tensor1._array.shape)
    broadcast_shapes(shape, tensor2._array.shape)
    return inputs, tuple(x._array.astype(result, copy=False) for x in inputs)


ADDCDIV_INTEGER_MESSAGE = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will "
    "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
    "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer "
    "inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv "
    "behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all "
    "dtypes."
)


# ***** questions about dtypes (torch.result_type, promote_types, can_cast) *****


def _floating_softmax(t: Tensor, dim: int, name: str) -> None:
    """PyTorch builds softmax's kernels (one for the last dim, one for the others) for floating
    dtypes only: an integer input is refused, not cast."""
    if t._array.dtype.kind != "f":
        kernel = (
            f"{name}_lastdim_kernel_impl" if dim == max(t.ndim - 1, 0) else f"{name}_kernel_impl"
        )
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dtypes.type_word(t.dtype)}'")


def result_type(tensor, other) -> dtypes.dtype:
    """The dtype an operation on these two operands (tensors or numbers) would compute in."""
    operands = [(x.dtype, x.ndim) for x in (tensor, other) if isinstance(x, Tensor)]
    numbers = [x for x in (tensor, other) if not isinstance(x, Tensor)]
    return dtypes.result_type(operands, numbers)


def promote_types(type1: dtypes.dtype, type2: dtypes.dtype) -> dtypes.dtype:
    return dtypes.promote(type1, type2)


def can_cast(from_: dtypes.dtype, to: dtypes.dtype) -> bool:
    """PyTorch's rule for in-place results: never down a category (float to int, int to bool)."""
    return from_.category <= to.category


def _promoted(t: Tensor, *bounds) -> np.ndarray:
    """t's array in the dtype clamp computes in: the bounds take part in type promotion (an int
    tensor clamped at 2.5 comes out float)."""
    result = t.dtype
    for bound in bounds:
        if bound is not None:
            result = dtypes.promote(result, result_dtype(t, bound))
    return t._array if result is t.dtype else t._array.astype(result.np)
