"""Where the forward and backward passes live: one node class per PyTorch grad_fn.

Each class computes its result on numpy arrays in `forward` (asking to `save` what its
derivative needs, exactly what PyTorch saves) and, right beside it, sends the output's gradient
back to its inputs in `backward`. Broadcasting is undone by the backward engine, not here.
"""

from __future__ import annotations

import math

import numpy as np

from engine import elementwise, libm, moments, norms, numerics, record, saved, sleef
from engine.graph import Node
from engine.unsupported import UnsupportedByGradtrace

# ***** pointwise, two inputs *****


class AddBackward0(Node):
    formula = "grad_self = grad; grad_other = alpha * grad"

    def forward(self, a, b, alpha=1):
        self.alpha = alpha
        return a + b if alpha == 1 else numerics.fma_add(a, b, alpha)

    def backward(self, grad):
        return grad, grad if self.alpha == 1 else grad * self.alpha

    def backward_graph(self, grad):
        return grad, grad if self.alpha == 1 else _scaled(grad, self.alpha)


class SubBackward0(Node):
    formula = "grad_self = grad; grad_other = -alpha * grad"

    def forward(self, a, b, alpha=1):
        self.alpha = alpha
        return a - b if alpha == 1 else numerics.fma_add(a, b, -alpha)

    def backward(self, grad):
        return grad, -grad if self.alpha == 1 else -grad * self.alpha

    def backward_graph(self, grad):
        return grad, -grad if self.alpha == 1 else _scaled(-grad, self.alpha)


class RsubBackward1(Node):
    formula = "grad_self = -grad  (other - self)"

    def forward(self, a, other):
        return other - a

    def backward(self, grad):
        return (-grad,)

    def backward_graph(self, grad):
        return (-grad,)


class MulBackward0(Node):
    formula = "grad_self = grad * other; grad_other = grad * self"

    def forward(self, a, b):
        # each input's derivative is the other input, so keep only the ones that are needed
        if self.needs_input_grad[0]:
            self.save(1)
        if self.needs_input_grad[1]:
            self.save(0)
        return a * b

    def backward(self, grad):
        saved = iter(self.saved_values())
        b = next(saved) if self.needs_input_grad[0] else None
        a = next(saved) if self.needs_input_grad[1] else None
        return (
            grad * b if b is not None else None,
            grad * a if a is not None else None,
        )

    def backward_graph(self, grad):
        saved = _linked(self)
        return (
            grad * saved[1] if 1 in saved else None,
            grad * saved[0] if 0 in saved else None,
        )


class DivBackward0(Node):
    formula = "grad_self = grad / other; grad_other = -grad * self / other²"

    def forward(self, a, b):
        if self.needs_input_grad[1]:
            self.save(0)
        self.save(1)
        return a / b

    def backward(self, grad):
        saved = self.saved_values()
        b = saved[-1]
        grad_a = grad / b if self.needs_input_grad[0] else None
        # PyTorch's div_tensor_other_backward, in its order: -grad * ((self / other) / other)
        grad_b = -grad * ((saved[0] / b) / b) if self.needs_input_grad[1] else None
        return grad_a, grad_b

    def backward_graph(self, grad):
        saved = _linked(self)
        b = saved[1]
        grad_a = grad / b if self.needs_input_grad[0] else None
        grad_b = -grad * ((saved[0] / b) / b) if self.needs_input_grad[1] else None
        return grad_a, grad_b


class PowBackward0(Node):
    """tensor ** number."""

    formula = "grad_self = grad * exponent * self^(exponent - 1)"

    def forward(self, a, exponent):
        self.exponent = exponent
        self.save(0)
        return numerics.power_like_torch(a, exponent)

    def backward(self, grad):
        (a,) = self.saved_values()
        if self.exponent == 0:
            return (np.zeros_like(grad),)
        # pow_backward's order: the exponent scales the power, then the gradient multiplies
        power = numerics.power_like_torch(a, self.exponent - 1)
        return (grad * (self.exponent * power),)

    def backward_graph(self, grad):
        a = _linked(self)[0]
        if self.exponent == 0:
            return (_zeros_like(a),)
        return (grad * _scaled(a ** (self.exponent - 1), self.exponent),)


class PowBackward1(Node):
    """tensor ** tensor."""

    formula = (
        "grad_self = grad * exponent * self^(exponent - 1); "
        "grad_exponent = grad * result * log(self)"
    )

    def forward(self, a, b):
        self.save(0, 1)
        if self.needs_input_grad[1]:
            self.save("result")
        return _power(a, b)

    def backward(self, grad):
        a, b, *result = self.saved_values()
        grad_a = grad_b = None
        if self.needs_input_grad[0]:
            # pow_backward_self's order: the exponent scales the power, then the gradient
            with np.errstate(divide="ignore", invalid="ignore"):
                grad_a = np.where(b == 0, 0, grad * (b * _power(a, b - b.dtype.type(1))))
        if self.needs_input_grad[1]:
            with np.errstate(divide="ignore", invalid="ignore"):
                log = numerics.unary_like_torch(np.log, a) if a.dtype.kind == "f" else np.log(a)
                grad_b = grad * np.where((a == 0) & (b >= 0), 0, result[0] * log)
        return grad_a, grad_b

    def backward_graph(self, grad):
        saved = _linked(self)
        a, b = saved[0], saved[1]
        grad_a = grad_b = None
        if self.needs_input_grad[0]:
            power = a ** _apply(SubBackward1, (b,), other=1)
            grad_a = _where(b._array == 0, 0, grad * (b * power))
        if self.needs_input_grad[1]:
            at_zero = (a._array == 0) & (b._array >= 0)
            grad_b = grad * _where(at_zero, 0, saved["result"] * a.log())
        return grad_a, grad_b


def _power(base: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """tensor ** tensor: PyTorch's pow kernel for float32 (engine/elementwise.py), numpy's for
    other dtypes."""
    if base.dtype == exponent.dtype == np.float32:
        return elementwise.power(base, exponent)
    with np.errstate(divide="ignore", invalid="ignore"):
        return base**exponent


class PowBackward2(Node):
    """number ** tensor."""

    formula = "grad_exponent = grad * result * log(self)"

    def forward(self, exponent, base):
        self.base = base
        self.save(0, "result")  # PyTorch keeps the exponent too (for a base of 0)
        if exponent.dtype == np.float32:  # the number is a float32 that stands still in the loop
            return _power(np.asarray(base, exponent.dtype), exponent)
        return base**exponent

    def backward(self, grad):
        _, result = self.saved_values()
        if self.base == 0:
            return (np.zeros_like(grad),)
        # pow_backward_exponent's order: the result times log(base) (a double, then the dtype's)
        return (grad * (result * np.log(self.base).astype(result.dtype)),)

    def backward_graph(self, grad):
        if self.base == 0:
            raise UnsupportedByGradtrace(
                "double backward through PowBackward2 of 0 ** tensor is not supported by "
                "gradtrace's engine"
            )
        return (grad * _scaled(_linked(self)["result"], math.log(self.base)),)


class RemainderBackward0(Node):
    """tensor % number."""

    formula = "grad_self = grad"

    def forward(self, a, other):
        return np.mod(a, other)  # the result takes the divisor's sign, as torch.remainder's does

    def backward(self, grad):
        return (grad,)

    def backward_graph(self, grad):
        return (grad,)


class RemainderBackward1(Node):
    """tensor % tensor."""

    formula = "grad_self = grad; grad_other = -grad * floor(self / other)"

    def forward(self, a, b):
        if self.needs_input_grad[1]:
            self.save(0, 1)
        return np.mod(a, b)

    def backward(self, grad):
        grad_b = None
        if self.needs_input_grad[1]:
            a, b = self.saved_values()
            grad_b = -grad * np.floor_divide(a, b)
        return grad, grad_b


class FloorDivide(Node):
    """a // b, never recorded: PyTorch has no derivative for it (its grad_fn is NotImplemented)."""

    def forward(self, a, b):
        return np.floor_divide(a, b)


class MaximumBackward0(Node):
    formula = "grad goes to the larger input (split in half on ties)"

    def forward(self, a, b):
        self.save(0, 1)
        return np.maximum(a, b)

    def backward(self, grad):
        a, b = self.saved_values()
        return _pick_larger(grad, a, b), _pick_larger(grad, b, a)

    def backward_graph(self, grad):
        a, b = self.saved_values()
        return _picked_graph(grad, a, b), _picked_graph(grad, b, a)


class MinimumBackward0(Node):
    formula = "grad goes to the smaller input (split in half on ties)"

    def forward(self, a, b):
        self.save(0, 1)
        return np.minimum(a, b)

    def backward(self, grad):
        a, b = self.saved_values()
        return _pick_larger(grad, -a, -b), _pick_larger(grad, -b, -a)

    def backward_graph(self, grad):
        a, b = self.saved_values()
        return _picked_graph(grad, -a, -b), _picked_graph(grad, -b, -a)


def _pick_larger(grad, mine, theirs):
    # where(), not a multiply by the mask: PyTorch's zeros are +0, even under a negative grad
    return np.where(mine == theirs, grad / 2, np.where(mine > theirs, grad, 0))


def _picked_graph(grad, mine, theirs):
    """_pick_larger as PyTorch's formula records it:
    where(self == other, grad / 2, grad).masked_fill_(self < other, 0)."""
    halved = _apply(DivBackward1, (grad,), other=2)
    split = _where(mine == theirs, halved, grad)
    return _apply(MaskedFillBackward0, (split,), mask=mine < theirs, value=0)


# ***** pointwise, one input *****


class NegBackward0(Node):
    formula = "grad_self = -grad"

    def forward(self, a):
        return -a

    def backward(self, grad):
        return (-grad,)

    def backward_graph(self, grad):
        return (-grad,)


class ExpBackward0(Node):
    formula = "grad_self = grad * result  (d/dx eˣ = eˣ)"

    def forward(self, a):
        self.save("result")
        return numerics.unary_like_torch(np.exp, a)

    def backward(self, grad):
        (result,) = self.saved_values()
        return (grad * result,)

    def backward_graph(self, grad):
        return (grad * _linked(self)["result"],)


class LogBackward0(Node):
    formula = "grad_self = grad / self"

    def forward(self, a):
        self.save(0)
        with np.errstate(divide="ignore", invalid="ignore"):
            return numerics.unary_like_torch(np.log, a)

    def backward(self, grad):
        (a,) = self.saved_values()
        with np.errstate(divide="ignore", invalid="ignore"):
            return (grad / a,)

    def backward_graph(self, grad):
        return (grad / _linked(self)[0],)


class SinBackward0(Node):
    formula = "grad_self = grad * cos(self)"

    def forward(self, a):
        self.save(0)
        return numerics.unary_like_torch(np.sin, a)

    def backward(self, grad):
        (a,) = self.saved_values()
        return (grad * numerics.unary_like_torch(np.cos, a),)

    def backward_graph(self, grad):
        return (grad * _linked(self)[0].cos(),)


class CosBackward0(Node):
    formula = "grad_self = grad * -sin(self)"

    def forward(self, a):
        self.save(0)
        return numerics.unary_like_torch(np.cos, a)

    def backward(self, grad):
        (a,) = self.saved_values()
        return (grad * -numerics.unary_like_torch(np.sin, a),)

    def backward_graph(self, grad):
        return (grad * -_linked(self)[0].sin(),)


class TanhBackward0(Node):
    formula = "grad_self = grad * (1 - result²)"

    def forward(self, a):
        self.save("result")
        return numerics.unary_like_torch(np.tanh, a)

    def backward(self, grad):
        (result,) = self.saved_values()
        # PyTorch's tanh_backward: 1 - result² is one fused multiply-add
        one = result.dtype.type(1)
        return (grad * numerics.fused_multiply_add(-result, result, one),)

    def backward_graph(self, grad):
        return (_apply(TanhBackwardBackward0, (grad, _linked(self)["result"])),)


class SigmoidBackward0(Node):
    formula = "grad_self = grad * result * (1 - result)"

    def forward(self, a):
        self.save("result")
        return sigmoid(a)

    def backward(self, grad):
        (result,) = self.saved_values()
        return (grad * (1 - result) * result,)

    def backward_graph(self, grad):
        return (_apply(SigmoidBackwardBackward0, (grad, _linked(self)["result"])),)


# PyTorch's formula as it stands, 1 / (1 + e^-x), its float32 bits included (Sleef's exp over
# vectors, glibc's over the rest): for very negative x, e^-x overflows and the result is exactly
# 0, not the tiny number a "stable" formula would give
sigmoid = elementwise.sigmoid


class ReluBackward0(Node):
    formula = "grad_self = grad where result > 0, else 0"

    def forward(self, a):
        self.save("result")
        # a negative value becomes 0 and everything else stays, -0.0 too (as PyTorch's relu)
        return np.where(a < 0, a.dtype.type(0), a)

    def backward(self, grad):
        (result,) = self.saved_values()
        return (np.where(result > 0, grad, 0),)  # +0 where cut off, as PyTorch's where()

    def backward_graph(self, grad):
        return (_apply(ThresholdBackwardBackward0, (grad, _linked(self)["result"]), threshold=0),)


class SqrtBackward0(Node):
    formula = "grad_self = grad / (2 * result)"

    def forward(self, a):
        self.save("result")
        with np.errstate(invalid="ignore"):
            return numerics.unary_like_torch(np.sqrt, a)

    def backward(self, grad):
        (result,) = self.saved_values()
        with np.errstate(divide="ignore", invalid="ignore"):
            return (grad / (2 * result),)

    def backward_graph(self, grad):
        return (grad / _scaled(_linked(self)["result"], 2),)


class AbsBackward0(Node):
    formula = "grad_self = grad * sign(self)"

    def forward(self, a):
        self.save(0)
        return np.abs(a)

    def backward(self, grad):
        (a,) = self.saved_values()
        return (grad * np.sign(a),)

    def backward_graph(self, grad):
        return (grad * _linked(self)[0].sgn(),)


class ReciprocalBackward0(Node):
    formula = "grad_self = -grad * result²"

    def forward(self, a):
        self.save("result")
        with np.errstate(divide="ignore"):
            return 1 / a

    def backward(self, grad):
        (result,) = self.saved_values()
        return (-grad * (result * result),)  # PyTorch squares the result first

    def backward_graph(self, grad):
        result = _linked(self)["result"]
        return (-grad * (result * result),)


class ClampBackward1(Node):
    formula = "grad_self = grad where min ≤ self ≤ max, else 0"

    def forward(self, a, min=None, max=None):
        self.save(0)
        self.low, self.high = min, max
        return np.clip(a, min, max).astype(a.dtype, copy=False)

    def backward(self, grad):
        (a,) = self.saved_values()
        inside = np.ones(a.shape, dtype=bool)
        if self.low is not None:
            inside &= a >= self.low
        if self.high is not None:
            inside &= a <= self.high
        return (np.where(inside, grad, 0),)  # +0 outside, as PyTorch's where()

    def backward_graph(self, grad):
        a = _linked(self)[0]._array
        inside = np.ones(a.shape, dtype=bool)
        if self.low is not None:
            inside &= a >= self.low
        if self.high is not None:
            inside &= a <= self.high
        return (_where(inside, grad, 0),)


class ClampMinBackward0(ClampBackward1):
    def forward(self, a, min):
        return super().forward(a, min=min)


class ClampMaxBackward0(ClampBackward1):
    def forward(self, a, max):
        return super().forward(a, max=max)


class CloneBackward0(Node):
    formula = "grad_self = grad"

    def forward(self, a, order="K"):
        return np.array(a, copy=True, order=order)

    def backward(self, grad):
        return (grad,)

    def backward_graph(self, grad):
        return (grad,)


class ToCopyBackward0(Node):
    formula = "grad_self = grad, converted back to self's dtype"

    def forward(self, a, dtype):
        return a.astype(dtype)

    def backward(self, grad):
        return (grad,)

    def backward_graph(self, grad):
        return (grad,)  # the walk converts it back to the input's dtype (ToCopyBackward0)


class WhereBackward0(Node):
    formula = "grad_self = grad where condition, else 0; grad_other = grad elsewhere"

    def forward(self, a, b, condition):
        self.condition = condition
        return np.where(condition, a, b)

    def backward(self, grad):
        zero = np.zeros((), grad.dtype)
        return np.where(self.condition, grad, zero), np.where(self.condition, zero, grad)

    def backward_graph(self, grad):
        return _where(self.condition, grad, 0), _where(self.condition, 0, grad)


# ***** reductions *****


class SumBackward0(Node):
    formula = "grad_self = grad, copied to every element"

    def forward(self, a):
        self.shape = a.shape
        if a.dtype.kind == "f":
            return numerics.sum_like_torch(a)
        return a.sum(dtype=_sum_dtype(a))

    def backward(self, grad):
        return (np.broadcast_to(grad, self.shape),)

    def backward_graph(self, grad):
        return (grad.expand(self.shape),)


class SumBackward1(Node):
    formula = "grad_self = grad, copied along the summed dims"

    def forward(self, a, dim, keepdim):
        self.shape, self.dim, self.keepdim = a.shape, dim, keepdim
        if a.dtype.kind == "f":
            return numerics.sum_like_torch(a, dim, keepdim)
        return a.sum(axis=dim, keepdims=keepdim, dtype=_sum_dtype(a))

    def backward(self, grad):
        if not self.keepdim:
            grad = np.expand_dims(grad, self.dim)
        return (np.broadcast_to(grad, self.shape),)

    def backward_graph(self, grad):
        return (_unsqueezed(grad, self.dim, self.keepdim).expand(self.shape),)


def _sum_dtype(a):
    # integer and bool sums are int64 in PyTorch
    return np.int64 if a.dtype.kind in "biu" else a.dtype


class MeanBackward0(Node):
    formula = "grad_self = grad / n, for each of the n elements"

    def forward(self, a):
        self.shape = a.shape
        if a.dtype.kind == "f":
            return numerics.mean_like_torch(a)
        return a.mean(dtype=a.dtype)

    def backward(self, grad):
        return (np.broadcast_to(grad / max(np.prod(self.shape), 1), self.shape),)

    def backward_graph(self, grad):
        count = max(math.prod(self.shape), 1)
        return (_apply(DivBackward1, (grad.expand(self.shape),), other=count),)


class MeanBackward1(Node):
    formula = "grad_self = grad / n, copied along the averaged dims"

    def forward(self, a, dim, keepdim):
        self.shape, self.dim, self.keepdim = a.shape, dim, keepdim
        if a.dtype.kind == "f":
            return numerics.mean_like_torch(a, dim, keepdim)
        return a.mean(axis=dim, keepdims=keepdim, dtype=a.dtype)

    def backward(self, grad):
        count = np.prod([self.shape[d] for d in self.dim])
        if not self.keepdim:
            grad = np.expand_dims(grad, self.dim)
        return (np.broadcast_to(grad / count, self.shape),)

    def backward_graph(self, grad):
        count = math.prod(self.shape[d] for d in self.dim)
        spread = _unsqueezed(grad, self.dim, self.keepdim).expand(self.shape)
        return (_apply(DivBackward1, (spread,), other=count),)


class MaxBackward1(Node):
    """max() of the whole tensor."""

    formula = "grad_self = grad shared evenly among the elements equal to the max"

    reduce = staticmethod(np.max)

    def forward(self, a):
        self.save(0, "result")
        return self.reduce(a)

    def backward(self, grad):
        a, result = self.saved_values()
        hits = _hits(a, result)
        return (np.where(hits, grad / hits.sum(), 0).astype(grad.dtype),)

    def backward_graph(self, grad):
        # PyTorch's evenly_distribute_backward (CPU):
        # new_zeros(input's shape).masked_fill_(mask, grad / mask.sum())
        a, result = self.saved_values()
        hits = _hits(a, result)
        share = grad / record.leaf(np.asarray(hits.sum(), np.int64), False, "sum")
        zeros = record.leaf(np.zeros(a.shape, grad._array.dtype), False, "new_zeros")
        return (_apply(MaskedFillBackward1, (zeros, share), mask=hits),)


def _hits(a, result):
    """The elements equal to a max or min; when it is nan, the nans (nan == nan is False)."""
    return np.isnan(a) if np.isnan(result).any() else a == result


class MinBackward1(MaxBackward1):
    reduce = staticmethod(np.min)
    formula = "grad_self = grad shared evenly among the elements equal to the min"


class MaxBackward0(Node):
    """max(dim): values and the indices they came from."""

    formula = "grad_self = grad placed at the index of each max"

    pick = staticmethod(np.argmax)

    def forward(self, a, dim, keepdim):
        self.shape = a.shape
        if a.ndim == 0:  # a 0-dim tensor is its own max: treat it as one element
            a, keepdim = a.reshape(1), False
        self.dim, self.keepdim, self.work_shape = dim, keepdim, a.shape
        self.indices = np.expand_dims(self.pick(a, axis=dim), dim)
        values = np.take_along_axis(a, self.indices, axis=dim)
        return values if keepdim else values.squeeze(dim)

    def backward(self, grad):
        if not self.keepdim:
            grad = np.expand_dims(grad, self.dim)
        out = np.zeros(self.work_shape, grad.dtype)
        np.put_along_axis(out, self.indices, grad, axis=self.dim)
        return (out.reshape(self.shape),)

    def backward_graph(self, grad):
        if not self.shape:
            raise UnsupportedByGradtrace(
                f"double backward through {self.name()} of a 0-dim tensor is not supported by "
                "gradtrace's engine"
            )
        if not self.keepdim:
            grad = grad.unsqueeze(self.dim)
        return (_scattered_into_zeros(grad, self.shape, self.dim, self.indices),)


class MinBackward0(MaxBackward0):
    pick = staticmethod(np.argmin)
    formula = "grad_self = grad placed at the index of each min"


# ***** shape and views: results share memory with their input *****


class ViewBackward0(Node):
    formula = "grad_self = grad reshaped back"
    is_view = True

    def forward(self, a, shape):
        self.shape = a.shape
        view = a.view()
        view.shape = shape  # raises AttributeError when this would need a copy
        return view

    def backward(self, grad):
        return (grad.reshape(self.shape),)

    def backward_graph(self, grad):
        return (grad.reshape(self.shape),)


class AliasBackward0(Node):
    """x[...] and x[:, :]: a new tensor on the same memory, recorded though nothing changed."""

    formula = "grad_self = grad"
    is_view = True

    def forward(self, a):
        return a.view()

    def backward(self, grad):
        return (grad,)

    def backward_graph(self, grad):
        return (grad,)


class UnsafeViewBackward0(ViewBackward0):
    is_view = False

    def forward(self, a, shape):
        self.shape = a.shape
        return a.reshape(shape)


class TBackward0(Node):
    formula = "grad_self = grad transposed back"
    is_view = True

    def forward(self, a):
        return a.T

    def backward(self, grad):
        return (grad.T,)

    def backward_graph(self, grad):
        return (grad.t(),)


class PermuteBackward0(Node):
    formula = "grad_self = grad with its dims put back"
    is_view = True

    def forward(self, a, dims):
        self.dims = dims
        return a.transpose(dims)

    def backward(self, grad):
        return (grad.transpose(np.argsort(self.dims)),)

    def backward_graph(self, grad):
        return (grad.permute(*(int(d) for d in np.argsort(self.dims))),)


class TransposeBackward0(Node):
    formula = "grad_self = grad with the two dims swapped back"
    is_view = True

    def forward(self, a, dim0, dim1):
        self.dim0, self.dim1 = dim0, dim1
        return np.swapaxes(a, dim0, dim1) if a.ndim else a.view()

    def backward(self, grad):
        return (np.swapaxes(grad, self.dim0, self.dim1) if grad.ndim else grad,)

    def backward_graph(self, grad):
        return (grad.transpose(self.dim0, self.dim1) if grad.ndim else grad,)


class TransposeBackward1(TransposeBackward0):
    """transpose_(): the swap made in place, as RNN kernels turn a batch_first output back."""

    formula = "grad_self = grad with the two dims swapped back"
    is_view = False  # the tensor itself now has the swapped layout


class SqueezeBackward0(Node):
    """squeeze() of every size-1 dim."""

    formula = "grad_self = grad with the size-1 dims put back"
    is_view = True

    def forward(self, a, dims=None):
        self.shape = a.shape
        return a.squeeze() if dims is None else a.squeeze(dims)

    def backward(self, grad):
        return (grad.reshape(self.shape),)

    def backward_graph(self, grad):
        # put back each size-1 dim the squeeze removed, as PyTorch's unsqueeze_to does
        for d, n in enumerate(self.shape):
            if grad.ndim < len(self.shape) and n == 1 and grad.shape[d : d + 1] != (1,):
                grad = grad.unsqueeze(d)
        return (grad,)


class SqueezeBackward1(SqueezeBackward0):
    """squeeze(dim)."""


class SqueezeBackward4(SqueezeBackward0):
    """squeeze of several dims, as matmul uses it."""


class UnsqueezeBackward0(Node):
    formula = "grad_self = grad with the new dim removed"
    is_view = True

    def forward(self, a, dim):
        self.dim = dim
        return np.expand_dims(a, dim)

    def backward(self, grad):
        return (grad.squeeze(self.dim),)

    def backward_graph(self, grad):
        return (grad.squeeze(self.dim),)


class ExpandBackward0(Node):
    formula = "grad_self = grad summed over the expanded dims"
    is_view = True

    def forward(self, a, shape):
        self.shape = a.shape
        return np.broadcast_to(a, shape)

    def backward(self, grad):
        return (grad,)  # the engine sums it back to self's shape

    def backward_graph(self, grad):
        return (grad,)  # the walk sums it back to self's shape


class SelectBackward0(Node):
    formula = "grad_self = zeros, with grad at the selected index"
    is_view = True
    backward_op = None  # SelectBackwardBackward0, once defined below

    def forward(self, a, dim, index):
        self.shape, self.key = a.shape, (slice(None),) * dim + (index, Ellipsis)
        return a[self.key]

    def backward(self, grad):
        out = np.zeros(self.shape, grad.dtype)
        out[self.key] = grad
        return (out,)

    def backward_graph(self, grad):
        return (_apply(self.backward_op, (grad,), shape=self.shape, key=self.key),)


class SliceBackward0(SelectBackward0):
    formula = "grad_self = zeros, with grad in the sliced range"

    def forward(self, a, dim, start, stop, step):
        return super().forward(a, dim, slice(start, stop, step))


class IndexBackward0(Node):
    formula = "grad_self = zeros, with grad added at the indexed positions"

    def forward(self, a, key):
        self.shape, self.key = a.shape, key
        return a[key]

    def backward(self, grad):
        out = np.zeros(self.shape, grad.dtype)
        np.add.at(out, self.key, grad)  # repeated indices add up
        return (out,)

    def backward_graph(self, grad):
        zeros = record.leaf(np.zeros(self.shape, grad._array.dtype), False, "zeros")
        return (_apply(IndexPutImplBackward0, (zeros, grad), key=self.key),)


class UnbindBackward0(Node):
    """One node, one output per slice: what iterating over a tensor records."""

    formula = "grad_self = the output grads stacked back together"
    is_view = True
    multi_view = True  # its outputs refuse in-place changes, as PyTorch's do

    def forward(self, a, dim):
        self.dim = dim
        moved = np.moveaxis(a, dim, 0)
        # moved[i, ...] is a view even when 0-dim (iterating a 1-d array gives copies)
        return tuple(moved[i, ...] for i in range(moved.shape[0]))

    def backward(self, *grads):
        return (np.stack(grads, axis=self.dim),)

    def backward_graph(self, *grads):
        from engine.creation import stack  # creation builds its tensors with these nodes

        return (stack(grads, self.dim),)


class StackBackward0(Node):
    formula = "grad_i = slice i of grad"

    def forward(self, *arrays, dim):
        self.dim = dim
        return np.stack(arrays, axis=dim)

    def backward(self, grad):
        return tuple(np.moveaxis(grad, self.dim, 0))

    def backward_graph(self, grad):
        count = grad.shape[self.dim]
        return tuple(_apply(SelectBackward0, (grad,), dim=self.dim, index=i) for i in range(count))


class CatBackward0(Node):
    formula = "grad_i = the part of grad that came from input i"

    def forward(self, *arrays, dim):
        self.dim = dim
        self.splits = np.cumsum([a.shape[dim] for a in arrays])[:-1]
        return np.concatenate(arrays, axis=dim)

    def backward(self, grad):
        return tuple(np.split(grad, self.splits, axis=self.dim))

    def backward_graph(self, grad):
        bounds = zip([0, *self.splits], [*self.splits, grad.shape[self.dim]], strict=True)
        return tuple(
            _apply(SliceBackward0, (grad,), dim=self.dim, start=int(lo), stop=int(hi), step=1)
            for lo, hi in bounds
        )


# ***** linear algebra *****


class MmBackward0(Node):
    formula = "grad_self = grad @ mat2ᵀ; grad_mat2 = selfᵀ @ grad"

    def forward(self, a, b):
        if self.needs_input_grad[0]:
            self.save(1)
        if self.needs_input_grad[1]:
            self.save(0)
        self.layouts = numerics.column_major(a), numerics.column_major(b)  # for the backward
        return numerics.matmul_like_torch(a, b)

    def backward(self, grad):
        saved = iter(self.saved_values())
        b = next(saved) if self.needs_input_grad[0] else None
        a = next(saved) if self.needs_input_grad[1] else None
        # PyTorch's backward runs the same mm kernel as its forward
        return (
            numerics.mm_mat1_backward(grad, b, self.layouts[0]) if b is not None else None,
            numerics.mm_mat2_backward(grad, a, self.layouts[1]) if a is not None else None,
        )

    def backward_graph(self, grad):
        saved = _linked(self)
        return (
            grad.mm(saved[1].t()) if 1 in saved else None,
            saved[0].t().mm(grad) if 0 in saved else None,
        )


class MvBackward0(MmBackward0):
    formula = "grad_self = outer(grad, vec); grad_vec = selfᵀ @ grad"

    def backward(self, grad):
        saved = iter(self.saved_values())
        v = next(saved) if self.needs_input_grad[0] else None
        m = next(saved) if self.needs_input_grad[1] else None
        return (
            np.outer(grad, v) if v is not None else None,
            numerics.matmul_like_torch(m.T, grad) if m is not None else None,
        )

    def backward_graph(self, grad):
        saved = _linked(self)
        return (
            grad.reshape(grad.shape[0], 1) * saved[1] if 1 in saved else None,
            saved[0].t().mv(grad) if 0 in saved else None,
        )


class DotBackward0(MmBackward0):
    formula = "grad_self = grad * tensor; grad_tensor = grad * self"

    def backward(self, grad):
        saved = iter(self.saved_values())
        b = next(saved) if self.needs_input_grad[0] else None
        a = next(saved) if self.needs_input_grad[1] else None
        return (grad * b if b is not None else None, grad * a if a is not None else None)

    def backward_graph(self, grad):
        saved = _linked(self)
        return (
            grad * saved[1] if 1 in saved else None,
            grad * saved[0] if 0 in saved else None,
        )


class VdotBackward0(DotBackward0):
    """torch.vdot: dot with its first vector conjugated, so for real vectors dot itself."""

    formula = "grad_self = grad * other; grad_other = grad * self"


class AddmmBackward0(Node):
    """bias + input @ weightᵀ, as nn.Linear records it."""

    formula = (
        "grad_bias = grad (summed over the batch); grad_mat1 = grad @ mat2ᵀ; "
        "grad_mat2 = mat1ᵀ @ grad"
    )

    def forward(self, bias, a, b):
        if self.needs_input_grad[1]:
            self.save(2)
        if self.needs_input_grad[2]:
            self.save(1)
        self.layouts = numerics.column_major(a), numerics.column_major(b)  # for the backward
        return numerics.addmm_like_torch(bias, a, b)  # MKL adds the bias inside the product

    def backward(self, grad):
        saved = iter(self.saved_values())
        b = next(saved) if self.needs_input_grad[1] else None
        a = next(saved) if self.needs_input_grad[2] else None
        return (
            grad,
            numerics.mm_mat1_backward(grad, b, self.layouts[0]) if b is not None else None,
            numerics.mm_mat2_backward(grad, a, self.layouts[1]) if a is not None else None,
        )

    def backward_graph(self, grad):
        saved = _linked(self)
        return (
            grad,
            grad.mm(saved[2].t()) if 2 in saved else None,
            saved[1].t().mm(grad) if 1 in saved else None,
        )


# ***** softmax and losses *****


class SoftmaxBackward0(Node):
    formula = "grad_self = result * (grad - sum(grad * result))"

    def forward(self, a, dim):
        self.dim = dim
        self.save("result")
        rows = _softmax_rows(a, dim)
        if rows is not None:
            # SoftMaxKernel.cpp's last-dim kernel: Sleef's exp, the lanes' sum, times 1/sum
            shifted = sleef.exp(rows - rows.max(axis=1, keepdims=True))
            inverse = rows.dtype.type(1) / numerics.lane_sum(shifted)
            return (shifted * inverse[:, None]).reshape(a.shape)
        shifted = np.exp(a - a.max(axis=dim, keepdims=True))
        total = shifted.sum(axis=dim, keepdims=True)
        # PyTorch's CPU kernel multiplies by 1/sum along the last dim (divides along others);
        # matching it keeps cancellations in the backward exact, as PyTorch's are
        return shifted * (1 / total) if dim == a.ndim - 1 else shifted / total

    def backward(self, grad):
        (result,) = self.saved_values()
        rows = _softmax_rows(result, self.dim)
        if rows is not None:
            grads = _softmax_rows(grad, self.dim)
            total = numerics.lane_sum(grads * rows)
            return (((grads - total[:, None]) * rows).reshape(result.shape),)
        return (result * (grad - (grad * result).sum(axis=self.dim, keepdims=True)),)

    def backward_graph(self, grad):
        result = _linked(self)["result"]
        return (_apply(SoftmaxBackwardDataBackward0, (grad, result), dim=self.dim),)


class LogSoftmaxBackward0(Node):
    formula = "grad_self = grad - softmax(self) * sum(grad)"

    def forward(self, a, dim):
        self.dim = dim
        self.save("result")
        return log_softmax(a, dim)

    def backward(self, grad):
        (result,) = self.saved_values()
        rows = _softmax_rows(result, self.dim)
        if rows is not None:
            grads = _softmax_rows(grad, self.dim)
            total = numerics.lane_sum(grads)
            # GCC contracts the vector multiply and subtract into one fused multiply-add
            fused = numerics.fused_multiply_add(-sleef.exp(rows), total[:, None], grads)
            return (fused.reshape(result.shape),)
        return (grad - np.exp(result) * grad.sum(axis=self.dim, keepdims=True),)

    def backward_graph(self, grad):
        result = _linked(self)["result"]
        return (_apply(LogSoftmaxBackwardDataBackward0, (grad, result), dim=self.dim),)


def log_softmax(a: np.ndarray, dim: int) -> np.ndarray:
    rows = _softmax_rows(a, dim)
    if rows is not None:
        # SoftMaxKernel.cpp's last-dim kernel: x - max - log(sum of exp(x - max)), with
        # Sleef's exp and log and the lanes' sum
        shifted = rows - rows.max(axis=1, keepdims=True)
        log_total = sleef.log(numerics.lane_sum(sleef.exp(shifted)))
        return (shifted - log_total[:, None]).reshape(a.shape)
    shifted = a - a.max(axis=dim, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))


def _softmax_rows(a: np.ndarray, dim: int) -> np.ndarray | None:
    """a as the rows PyTorch's last-dim softmax kernels run over, or None where another kernel
    runs (any other dim, float64's own vector math), which numpy's formula stands in for."""
    if a.dtype != np.float32 or a.size == 0 or dim % max(a.ndim, 1) != max(a.ndim - 1, 0):
        return None
    return np.ascontiguousarray(a).reshape(-1, a.shape[-1] if a.ndim else 1)


class MseLossBackward0(Node):
    formula = "grad_self = grad * 2 * (self - target) / n  (n only for reduction='mean')"

    def forward(self, a, target, reduction):
        self.reduction = reduction
        self.save(0, 1)
        squared = (a - target) ** 2
        if reduction == "mean":  # PyTorch's sum, then one division (engine/numerics.py)
            return numerics.mean_like_torch(squared)
        return numerics.sum_like_torch(squared) if reduction == "sum" else squared

    def backward(self, grad):
        a, target = self.saved_values()
        # PyTorch: norm * (self - target) * grad, norm = 2 / n (a double, then the dtype's) or 2
        norm = 2 / max(a.size, 1) if self.reduction == "mean" else 2
        diff = a.dtype.type(norm) * (a - target)
        return grad * diff, -grad * diff

    def backward_graph(self, grad):
        saved = _linked(self)
        a, target = saved[0], saved[1]
        reduction = {"reduction": self.reduction}
        return (
            _apply(MseLossBackwardBackward0, (grad, a, target), **reduction)
            if self.needs_input_grad[0]
            else None,
            _apply(MseLossBackwardBackward0, (grad, target, a), **reduction)
            if self.needs_input_grad[1]
            else None,
        )


class NllLossBackward0(Node):
    """-weight[target] * log_probs[target]; cross_entropy is log_softmax followed by this.

    A target equal to ignore_index adds nothing and gets no gradient; 'mean' divides by the
    total weight of the targets that count (their number, without weight=).
    """

    formula = "grad_self = -grad * weight[target] / total_weight at each target class, 0 elsewhere"

    def forward(self, log_probs, target, reduction, weight=None, ignore_index=-100):
        self.reduction, self.shape = reduction, log_probs.shape
        self.save(0)  # PyTorch keeps the input, the targets and the total weight
        batched = log_probs if log_probs.ndim == 2 else log_probs[None]
        targets = np.atleast_1d(target)
        counted = targets != ignore_index
        self.rows, self.classes = np.arange(len(targets))[counted], targets[counted]
        per_class = np.ones(self.shape[-1], log_probs.dtype) if weight is None else weight
        self.weights = per_class[self.classes]
        picked = batched[self.rows, self.classes]
        if reduction == "none":
            losses = np.zeros(len(targets), log_probs.dtype)  # ignored targets lose +0
            losses[self.rows] = -picked * self.weights
            return losses if log_probs.ndim == 2 else losses[0]
        # LossNLL.cpp's loop: each loss subtracted from a cascade of partial sums, the
        # weights added to another; without weight= the total is the count that counted
        kind = log_probs.dtype.type
        if weight is None:
            total = _nll_cascade(-picked, self.rows, len(targets))
            self.total_weight = kind(len(self.rows))
        else:
            total = _nll_cascade(-(picked * self.weights), self.rows, len(targets))
            self.total_weight = _nll_cascade(self.weights, self.rows, len(targets))
        if reduction == "sum":
            return np.asarray(total)
        with np.errstate(invalid="ignore", divide="ignore"):
            # nan when every target is ignored, as in PyTorch
            return np.asarray(total / self.total_weight)

    def backward(self, grad):
        self.saved_values()  # fails as PyTorch does once the graph is freed
        out = np.zeros((int(np.prod(self.shape[:-1])), self.shape[-1]), grad.dtype)
        if self.reduction == "none":
            grad = np.atleast_1d(grad)[self.rows]
        elif self.reduction == "mean":
            grad = grad / self.total_weight
        out[self.rows, self.classes] = -grad * self.weights
        return (out.reshape(self.shape),)

    def backward_graph(self, grad):
        log_probs = _linked(self)[0]
        return (_apply(NllLossBackwardBackward0, (grad, log_probs), loss=self),)


def _nll_cascade(values: np.ndarray, rows: np.ndarray, batch: int):
    """The sum nll_loss_out_frame makes of the counted rows' values: each goes into level 0,
    and after row b, while b is a multiple of 2^(power·(j+1)), level j moves up into j+1;
    the eight levels are then added from the lowest, starting at 0."""
    kind = values.dtype.type
    power = max(4, _ceil_log2(batch) // 8)
    levels = [kind(0)] * 8
    for value, b in zip(values.tolist(), rows.tolist(), strict=True):
        levels[0] = kind(levels[0] + value)
        for j in range(7):
            if b & (((1 << power) - 1) << (j * power)):
                break
            levels[j + 1] = kind(levels[j + 1] + levels[j])
            levels[j] = kind(0)
    total = kind(0)
    for level in levels:
        total = kind(total + level)
    return total


def _ceil_log2(n: int) -> int:
    """c10's CeilLog2: 0 for 1 and below, else the bits of n - 1."""
    return 0 if n <= 1 else (n - 1).bit_length()


# ***** in-place only *****


class ZeroBackward0(Node):
    formula = "grad_self = 0 (the old values no longer matter)"

    def forward(self, a):
        return np.zeros_like(a)

    def backward(self, grad):
        return (np.zeros_like(grad),)

    def backward_graph(self, grad):
        return (_zeros_like(grad),)


class FillBackward2(ZeroBackward0):
    """fill_(value): PyTorch numbers the in-place overload's node 2."""

    def forward(self, a, value):
        return np.full_like(a, value)


class CopyBackwards(Node):
    formula = "grad_self = 0; grad_src = grad"

    def name(self) -> str:
        return "torch::autograd::CopyBackwards"  # a hand-written C++ node, named like one

    def forward(self, a, src):
        return np.broadcast_to(src, a.shape).astype(a.dtype)

    def backward(self, grad):
        return np.zeros_like(grad), grad

    def backward_graph(self, grad):
        return _zeros_like(grad), grad


# ***** what a backward recorded as a graph needs (create_graph=True) *****


def _linked(node: Node) -> dict:
    """What the node saved, as Tensors linked into the graph (engine/saved.py)."""
    return saved.as_tensors(node)


def _apply(node_cls, inputs: tuple, **kwargs):
    return record.apply(node_cls, inputs, **kwargs)


def _scaled(t, number):
    """t times a number, as PyTorch's own formulas multiply (mul.Scalar: MulBackward1)."""
    return record.apply(MulBackward1, (t,), other=number)


def _scattered_into_zeros(grad, shape, dim, indices):
    """PyTorch's value_selecting_reduction_backward: zeros of the input's shape, with the
    gradient scattered back to where each picked value came from (ScatterBackward0)."""
    zeros = record.leaf(np.zeros(shape, grad._array.dtype), False, "zeros")
    return _apply(ScatterBackward0, (zeros, grad), dim=dim, index=indices)


def _one_minus(t):
    """1 - t as PyTorch's C++ formulas write it: a subtraction from a number (SubBackward0)."""
    return record.apply(SubBackward0, (1.0, t), arrays=(t._array.dtype.type(1.0), t._array))


def _zeros_like(t):
    return record.leaf(np.zeros_like(t._array), False, "zeros_like")


def _where(condition: np.ndarray, a, b):
    """torch.where with a Python number on one side, as PyTorch's formulas call it."""
    arrays = [x._array if not isinstance(x, int) else None for x in (a, b)]
    dtype = next(x.dtype for x in arrays if x is not None)
    arrays = [np.zeros((), dtype) if x is None else x for x in arrays]
    return record.apply(WhereBackward0, (a, b), arrays=tuple(arrays), condition=condition)


def _unsqueezed(grad, dims: tuple, keepdim: bool):
    """A reduction's gradient with its reduced dims back (size 1), ready to expand."""
    if not keepdim:
        for d in sorted(dims):
            grad = grad.unsqueeze(d)
    return grad


# ***** backwards recorded as ops of their own (create_graph=True) *****


class TanhBackwardBackward0(Node):
    """tanh's backward as an op: grad_output * (1 - output²), recorded by a create_graph pass."""

    formula = (
        "grad_grad_output = grad * (1 - output²); grad_output = -2 * grad * grad_output * output"
    )

    def forward(self, grad_output, output):
        self.save(0, 1)
        return grad_output * (1 - output * output)

    def backward(self, grad):
        grad_output, output = self.saved_values()
        return grad * (1 - output * output), grad * (-2 * output * grad_output)

    def backward_graph(self, grad):
        saved = _linked(self)
        grad_output, output = saved[0], saved[1]
        return (
            _apply(TanhBackwardBackward0, (grad, output)) if self.needs_input_grad[0] else None,
            grad * (_scaled(output, -2) * grad_output) if self.needs_input_grad[1] else None,
        )


class SigmoidBackwardBackward0(Node):
    """sigmoid's backward as an op: grad_output * (1 - output) * output."""

    formula = (
        "grad_grad_output = grad * (1 - output) * output; "
        "grad_output = grad * grad_output * (1 - 2 * output)"
    )

    def forward(self, grad_output, output):
        self.save(0, 1)
        return grad_output * (1 - output) * output

    def backward(self, grad):
        grad_output, output = self.saved_values()
        return grad * (1 - output) * output, grad * grad_output * (-2 * output + 1)

    def backward_graph(self, grad):
        saved = _linked(self)
        grad_output, output = saved[0], saved[1]
        return (
            _apply(SigmoidBackwardBackward0, (grad, output)) if self.needs_input_grad[0] else None,
            grad * grad_output * (_scaled(output, -2) + 1) if self.needs_input_grad[1] else None,
        )


class ThresholdBackwardBackward0(Node):
    """relu's backward as an op: grad_output where self > threshold, else 0."""

    formula = "grad_grad_output = grad where self > threshold, else 0; grad_self = 0"

    def forward(self, grad_output, a, threshold):
        self.threshold = threshold
        self.save(1)
        return np.where(a <= threshold, 0, grad_output).astype(grad_output.dtype, copy=False)

    def backward(self, grad):
        (a,) = self.saved_values()
        return np.where(a <= self.threshold, 0, grad), np.zeros_like(grad)

    def backward_graph(self, grad):
        a = _linked(self)[1]
        kept = _apply(ThresholdBackwardBackward0, (grad, a), threshold=self.threshold)
        return kept, _zeros_like(grad)


class SelectBackwardBackward0(Node):
    """select's backward as an op: zeros the input's shape, with grad_output at the index."""

    formula = "grad_grad_output = grad at the selected index"

    def forward(self, grad_output, shape, key):
        self.key = key
        out = np.zeros(shape, grad_output.dtype)
        out[key] = grad_output
        return out

    def backward(self, grad):
        return (grad[self.key],)

    def backward_graph(self, grad):
        dim, picked = len(self.key) - 2, self.key[-2]
        if isinstance(picked, slice):
            bounds = {"start": picked.start, "stop": picked.stop, "step": picked.step}
            return (_apply(SliceBackward0, (grad,), dim=dim, **bounds),)
        return (_apply(SelectBackward0, (grad,), dim=dim, index=picked),)


class SliceBackwardBackward0(SelectBackwardBackward0):
    """slice's backward as an op: zeros the input's shape, with grad_output in the range."""

    formula = "grad_grad_output = grad in the sliced range"


SelectBackward0.backward_op = SelectBackwardBackward0
SliceBackward0.backward_op = SliceBackwardBackward0


class SoftmaxBackwardDataBackward0(Node):
    """softmax's backward as an op: output * (grad_output - sum(grad_output * output))."""

    formula = (
        "grad_grad_output = softmax's backward of grad; grad_output = grad_output * grad - "
        "sum(output * grad_output) * grad - grad_output * sum(output * grad)"
    )

    def forward(self, grad_output, output, dim):
        self.dim = dim
        self.save(0, 1)
        return output * (grad_output - (grad_output * output).sum(axis=dim, keepdims=True))

    def backward(self, grad):
        grad_output, output = self.saved_values()
        total = (grad * output).sum(axis=self.dim, keepdims=True)
        weighted = (output * grad_output).sum(axis=self.dim, keepdims=True)
        return output * (grad - total), grad_output * grad - weighted * grad - grad_output * total


class LogSoftmaxBackwardDataBackward0(Node):
    """log_softmax's backward as an op: grad_output - exp(output) * sum(grad_output)."""

    formula = (
        "grad_grad_output = grad - sum(grad * exp(output)); "
        "grad_output = -sum(grad_output) * exp(output) * grad"
    )

    def forward(self, grad_output, output, dim):
        self.dim = dim
        self.save(0, 1)
        return grad_output - np.exp(output) * grad_output.sum(axis=dim, keepdims=True)

    def backward(self, grad):
        grad_output, output = self.saved_values()
        probs = np.exp(output)
        return (
            grad - (grad * probs).sum(axis=self.dim, keepdims=True),
            -grad_output.sum(axis=self.dim, keepdims=True) * probs * grad,
        )


class MseLossBackwardBackward0(Node):
    """mse_loss's backward as an op: 2 * (self - target) * grad_output (/ n for 'mean')."""

    formula = (
        "grad_grad_output = grad * 2 * (self - target) / n; grad_self = 2 * grad * grad_output / n;"
        " grad_target = -grad_self"
    )

    def forward(self, grad_output, a, target, reduction):
        self.scale = 2 / max(a.size, 1) if reduction == "mean" else 2
        self.save(0, 1, 2)
        return (self.scale * (a - target) * grad_output).astype(a.dtype, copy=False)

    def backward(self, grad):
        grad_output, a, target = self.saved_values()
        spread = self.scale * grad * grad_output
        return self.scale * (a - target) * grad, spread, -spread


class NllLossBackwardBackward0(Node):
    """nll_loss's backward as an op: -grad_output * weight / total at each target."""

    formula = "grad_grad_output = nll_loss(grad, target); grad_self = 0"

    def forward(self, grad_output, log_probs, loss):
        # the map from grad_output is linear: its value at grad_output = 1 gives the adjoint
        self.unit = loss.backward(np.ones_like(grad_output))[0]
        self.reduction = loss.reduction
        return loss.backward(grad_output)[0]

    def backward(self, grad):
        picked = grad * self.unit
        if self.reduction == "none":
            count = self.unit.shape[0] if self.unit.ndim == 2 else 1
            per_row = picked.reshape(count, -1).sum(axis=1)
            return (per_row if self.unit.ndim == 2 else per_row[0]), np.zeros_like(grad)
        return picked.sum(dtype=grad.dtype), np.zeros_like(grad)


class SmoothL1LossBackwardBackward0(Node):
    """smooth_l1_loss's backward as an op: grad_output·clamp((self - target)/beta, -1, 1)."""

    formula = (
        "grad_grad_output = smooth_l1_loss's backward of grad; grad_self = grad * grad_output / "
        "beta inside ±beta, else 0 (/ n for 'mean'); grad_target = -grad_self"
    )

    def forward(self, grad_output, a, target, reduction, beta):
        self.reduction, self.beta = reduction, beta
        self.save(0, 1, 2)
        return smooth_l1_loss_backward(grad_output, a, target, reduction, beta)

    def backward(self, grad):
        grad_output, a, target = self.saved_values()
        # the slope's own slope: 1/beta on the squared piece, 0 on the straight ones
        inside = (np.abs(a - target) < self.beta).astype(grad.dtype)
        curvature = grad * grad_output * inside / grad.dtype.type(self.beta)
        if self.reduction == "mean":
            curvature = curvature / a.size
        return (
            smooth_l1_loss_backward(grad, a, target, self.reduction, self.beta),
            curvature,
            -curvature,
        )


class HuberLossBackwardBackward0(Node):
    """huber_loss's backward as an op: grad_output·clamp(self - target, -delta, delta)."""

    formula = (
        "grad_grad_output = huber_loss's backward of grad; grad_self = grad * grad_output "
        "inside ±delta, else 0 (/ n for 'mean'); grad_target = -grad_self"
    )

    def forward(self, grad_output, a, target, reduction, delta):
        self.reduction, self.delta = reduction, delta
        self.save(0, 1, 2)
        return huber_loss_backward(grad_output, a, target, reduction, delta)

    def backward(self, grad):
        grad_output, a, target = self.saved_values()
        inside = (np.abs(a - target) < self.delta).astype(grad.dtype)
        curvature = grad * grad_output * inside
        if self.reduction == "mean":
            curvature = curvature / a.size
        return (
            huber_loss_backward(grad, a, target, self.reduction, self.delta),
            curvature,
            -curvature,
        )


class BinaryCrossEntropyBackwardBackward0(Node):
    """binary_cross_entropy's backward as an op: grad_output·(self - target) / (self·(1 - self))."""

    formula = (
        "grad_grad_output = grad * (self - target) / ((self + ε)(1 - self + ε)); grad_self = grad"
        " * grad_output * (self² - 2·self·target + target) / ((self + ε)²(1 - self + ε)²); "
        "grad_target = -grad * grad_output / max(self(1 - self), ε)  (weighted, / n for 'mean')"
    )

    def forward(self, grad_output, a, target, weight, reduction):
        self.weight, self.reduction = weight, reduction
        self.save(0, 1, 2)
        return binary_cross_entropy_backward(grad_output, a, target, weight, reduction)

    def backward(self, grad):
        grad_output, a, target = self.saved_values()
        eps = 1e-12  # a Python float: float32 stays float32, as PyTorch's double scalar does
        # PyTorch's binary_cross_entropy_double_backward, _grad_output and _target, in its order
        grad_a = (a * a - 2 * a * target + target) / ((a + eps) ** 2 * (1 - a + eps) ** 2)
        grad_a = grad_a * (grad * grad_output)
        grad_grad_output = (a - target) / ((a + eps) * (1 - a + eps)) * grad
        grad_target = -grad * grad_output
        if self.weight is not None:
            grad_a, grad_grad_output = grad_a * self.weight, grad_grad_output * self.weight
            grad_target = grad_target * self.weight
        grad_target = grad_target / np.maximum((1 - a) * a, a.dtype.type(eps))
        if self.reduction == "mean":
            grad_a, grad_grad_output = grad_a / a.size, grad_grad_output / a.size
            grad_target = grad_target / target.size
        return grad_grad_output, grad_a, grad_target


# ***** reductions and scans (more) *****


def _keep(grad, dims, keepdim):
    """A reduction's gradient with the reduced dims put back as size 1, ready to broadcast."""
    return grad if keepdim else np.expand_dims(grad, dims)


def _products_of_the_others(a, axis):
    """For each element, the product of all the others along `axis`, without dividing.

    Dividing the whole product by the element fails at zeros; multiplying the products before
    and after it does not, which is how PyTorch's prod backward copes with zeros too.
    """
    ones = np.ones_like(np.take(a, [0], axis=axis))
    before = np.cumprod(np.concatenate([ones, a], axis=axis), axis=axis)
    after = np.flip(
        np.cumprod(np.concatenate([ones, np.flip(a, axis)], axis=axis), axis=axis), axis
    )
    n = a.shape[axis]
    return np.take(before, range(n), axis=axis) * np.take(after, range(1, n + 1), axis=axis)


class ProdBackward0(Node):
    """prod() of the whole tensor."""

    formula = "grad_self = grad * result / self (the product of the others, where self is 0)"

    def forward(self, a):
        self.save(0, "result")
        return np.prod(a, dtype=_sum_dtype(a))

    def backward(self, grad):
        a, result = self.saved_values()
        if a.ndim == 0:
            return (grad,)
        zeros = np.count_nonzero(a == 0)
        if zeros == 0:
            return (_divided_out(grad, result, a),)
        if zeros > 1:
            return (np.zeros(a.shape, grad.dtype),)
        return (grad * _products_of_the_others(a.reshape(-1), 0).reshape(a.shape),)

    def backward_graph(self, grad):
        saved = _linked(self)
        a, result = saved[0], saved["result"]
        if a.ndim == 0:
            return (grad,)
        _no_zeros(self, a)
        return (grad * (result / a),)


class ProdBackward1(Node):
    """prod(dim)."""

    formula = "grad_self = grad * (the product of the other elements along dim)"

    def forward(self, a, dim, keepdim):
        self.dim, self.keepdim = dim, keepdim
        self.save(0, "result")
        return np.prod(a, axis=dim, keepdims=keepdim, dtype=_sum_dtype(a))

    def backward(self, grad):
        a, result = self.saved_values()
        if a.ndim == 0:
            return (grad,)
        if a.size == 0:
            return (np.zeros(a.shape, grad.dtype),)
        grad, result = _keep(grad, self.dim, self.keepdim), _keep(result, self.dim, self.keepdim)
        if not (a == 0).any():
            return (_divided_out(grad, result, a),)
        return (grad * _products_of_the_others(a, self.dim),)

    def backward_graph(self, grad):
        saved = _linked(self)
        a, result = saved[0], saved["result"]
        if a.ndim == 0:
            return (grad,)
        _no_zeros(self, a)
        if not self.keepdim:
            grad, result = grad.unsqueeze(self.dim), result.unsqueeze(self.dim)
        return (grad * (result / a),)


def _no_zeros(node: Node, a) -> None:
    """PyTorch differentiates a product with a zero in it through cumprods: not recorded here."""
    if (a._array == 0).any():
        raise UnsupportedByGradtrace(
            f"double backward through {node.name()} of a tensor with a zero in it is not "
            "supported by gradtrace's engine"
        )


def _divided_out(grad, result, a):
    # PyTorch's way when no element is 0: the whole product over each element
    with np.errstate(divide="ignore", invalid="ignore"):
        return grad * (result / a)


def degrees_of_freedom(shape, dims, correction) -> float:
    """n - correction, never below 0: PyTorch divides by it (and warns when it is 0)."""
    n = math.prod(shape[d] for d in dims) if dims is not None else math.prod(shape)
    return max(0, n - correction)


class VarBackward0(Node):
    formula = "grad_self = grad * 2 * (self - mean) / (n - correction)"

    def forward(self, a, dims, correction, keepdim):
        self.dims, self.correction, self.keepdim = dims, correction, keepdim
        self.save(0)
        return variance(a, dims, correction, keepdim)

    def backward(self, grad):
        (a,) = self.saved_values()
        return (_var_backward(grad, a, self.dims, self.correction, self.keepdim),)

    def backward_graph(self, grad):
        return (_var_backward_graph(grad, _linked(self)[0], self),)


def variance(a, dims, correction, keepdim, root=False):
    """var (or, with root, std) accumulated in float64, as PyTorch's CPU kernel does."""
    wide = a.astype(np.float64, copy=False)
    centred = wide - wide.mean(axis=dims, keepdims=True)
    squares = (centred * centred).sum(axis=dims, keepdims=keepdim)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = squares / degrees_of_freedom(a.shape, dims, correction)
    return (np.sqrt(out) if root else out).astype(a.dtype, copy=False)


def _var_backward(grad, a, dims, correction, keepdim):
    axis = dims if dims is not None else tuple(range(a.ndim))
    grad = _keep(grad, axis, keepdim)
    dof = degrees_of_freedom(a.shape, dims, correction)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.asarray(2.0 / dof if dof else np.inf, a.dtype)
        # the mean as torch.mean adds it up (numpy's pairwise mean differs in the last bit)
        return scale * grad * (a - numerics.mean_like_torch(a, axis, keepdims=True))


def _var_backward_graph(grad, a, node):
    """PyTorch's var_backward, from ops that record themselves: 2/(n - correction) * grad *
    (self - mean), the gradient's reduced dims put back first (only for 2 dims and more)."""
    if a.ndim == 0 or node.dims is None:
        dof = degrees_of_freedom(a.shape, None, node.correction)
        if dof <= 0:
            raise UnsupportedByGradtrace(
                f"double backward through {node.name()} with no degrees of freedom is not "
                "supported by gradtrace's engine"
            )
        return _scaled(grad, 2.0 / dof) * (a - a.mean())
    dims = (node.dims,) if isinstance(node.dims, int) else tuple(node.dims)
    if not node.keepdim and a.ndim > 1:
        grad = _unsqueezed(grad, dims, False)
    dof = degrees_of_freedom(a.shape, dims, node.correction)
    return _scaled(grad, 2.0 / dof if dof else math.inf) * (a - a.mean(dims, keepdim=True))


class StdBackward0(Node):
    formula = "grad_self = grad * (self - mean) / ((n - correction) * result)"

    def forward(self, a, dims, correction, keepdim):
        self.dims, self.correction, self.keepdim = dims, correction, keepdim
        self.save(0, "result")
        return variance(a, dims, correction, keepdim, root=True)

    def backward(self, grad):
        a, result = self.saved_values()
        with np.errstate(divide="ignore", invalid="ignore"):
            # where the std is 0 PyTorch sends 0, not the nan that 0/0 would give
            grad = np.where(result == 0, 0, grad / (2 * result)).astype(result.dtype)
        return (_var_backward(grad, a, self.dims, self.correction, self.keepdim),)

    def backward_graph(self, grad):
        saved = _linked(self)
        result = saved["result"]
        grad = (grad / _scaled(result, 2)).masked_fill(result == 0, 0)
        return (_var_backward_graph(grad, saved[0], self),)


class LinalgVectorNormBackward0(Node):
    """linalg.vector_norm, which Tensor.norm and torch.norm also record."""

    formula = "grad_self = grad * d‖self‖ₚ/dself (self / norm for p = 2)"

    def forward(self, a, ord, dims, keepdim):
        self.ord, self.dims, self.keepdim = ord, dims, keepdim
        self.save(0, "result")
        return vector_norm(a, ord, dims, keepdim)

    def backward(self, grad):
        a, norm = self.saved_values()
        axis = self.dims if self.dims is not None else tuple(range(a.ndim))
        grad, norm = _keep(grad, axis, self.keepdim), _keep(norm, axis, self.keepdim)
        p = self.ord
        with np.errstate(divide="ignore", invalid="ignore"):
            if p == 0:
                return (None,)  # PyTorch sends nothing back: the input gets no .grad
            if p == 1:
                out = sign(a) * grad
            elif p == 2:
                out = grad * np.where(norm == 0, 0, a / norm)  # norm_backward's order
            elif math.isinf(p):
                # every element whose size is the norm shares the gradient evenly
                hits = (np.abs(a) == norm) | np.isnan(a)
                out = sign(a) * (grad / hits.sum(axis=axis, keepdims=True)) * hits
            elif p < 1:
                scaled = np.where(a == 0, 0, sign(a) * np.abs(a) ** (p - 1))
                out = scaled * grad * norm ** (1 - p)
            elif p < 2:
                out = (
                    sign(a) * np.abs(a) ** (p - 1) * np.where(norm == 0, 0, grad / norm ** (p - 1))
                )
            else:
                out = a * np.abs(a) ** (p - 2) * np.where(norm == 0, 0, grad / norm ** (p - 1))
        return (out.astype(a.dtype, copy=False),)

    def backward_graph(self, grad):
        if self.ord not in (1, 2):
            raise UnsupportedByGradtrace(
                f"double backward through {self.name()} with ord={self.ord} is not supported "
                "by gradtrace's engine (ord=1 and ord=2 are)"
            )
        saved = _linked(self)
        a, norm = saved[0], saved["result"]
        if self.dims is not None and not self.keepdim and a.ndim:
            dims = (self.dims,) if isinstance(self.dims, int) else tuple(self.dims)
            grad, norm = _unsqueezed(grad, dims, False), _unsqueezed(norm, dims, False)
        if self.ord == 1:
            return (a.sgn() * grad,)
        return (grad * (a / norm).masked_fill(norm == 0, 0),)


def vector_norm(a, ord, dims, keepdim):
    computed = norms.vector_norm(a, ord, dims, keepdim)  # PyTorch's kernel, float32 and float64
    if computed is not None:
        return computed
    axis = dims if dims is not None else None
    size = np.abs(a)
    if ord == 2:
        return np.sqrt((a * a).sum(axis=axis, keepdims=keepdim, dtype=a.dtype))
    if ord == 1:
        return size.sum(axis=axis, keepdims=keepdim, dtype=a.dtype)
    if ord == math.inf:
        return size.max(axis=axis, keepdims=keepdim)
    if ord == -math.inf:
        return size.min(axis=axis, keepdims=keepdim)
    if ord == 0:
        return (a != 0).sum(axis=axis, keepdims=keepdim, dtype=a.dtype)
    with np.errstate(divide="ignore", over="ignore"):
        power = a.dtype.type(ord)
        return ((size**power).sum(axis=axis, keepdims=keepdim, dtype=a.dtype)) ** (1 / power)


def _scan(function, a: np.ndarray, axis: int) -> np.ndarray:
    """np.cumsum or np.cumprod as cpu_cum_base_kernel runs them: the running value in the
    dtype's acc_type (double for float, float for half), each step rounded to the dtype."""
    wide = {np.dtype(np.float32): np.float64, np.dtype(np.float16): np.float32}.get(a.dtype)
    if wide is None:
        return function(a, axis=axis, dtype=_sum_dtype(a))
    return function(a.astype(wide), axis=axis).astype(a.dtype)


class CumsumBackward0(Node):
    formula = "grad_self = grad summed from the end back to each position (a reversed cumsum)"

    def forward(self, a, dim):
        self.dim = dim
        return _scan(np.cumsum, a, dim) if a.ndim else a.astype(_sum_dtype(a))

    def backward(self, grad):
        if grad.ndim == 0:
            return (grad,)
        return (np.flip(_scan(np.cumsum, np.flip(grad, self.dim), self.dim), self.dim),)

    def backward_graph(self, grad):
        if grad.ndim == 0:
            return (grad,)
        return (grad.flip(self.dim).cumsum(self.dim).flip(self.dim),)  # PyTorch's reversed cumsum


class CumprodBackward0(Node):
    formula = (
        "grad_self[i] = sum over j ≥ i of grad[j] * (the product of self[..j] without self[i])"
    )

    def forward(self, a, dim):
        self.dim = dim
        self.save(0, "result")
        return _scan(np.cumprod, a, dim) if a.ndim else a.astype(_sum_dtype(a))

    def backward(self, grad):
        a, result = self.saved_values()
        if a.ndim == 0:
            return (grad,)
        if not (a == 0).any():
            # PyTorch's way without zeros: sum(grad * result) from the end back, over self
            w = np.flip(grad * result, self.dim)
            with np.errstate(divide="ignore", invalid="ignore"):
                return (np.flip(_scan(np.cumsum, w, self.dim), self.dim) / a,)
        # out[j] = a[0] ... a[j]: d out[j] / d a[i] = (product before i) * (a[i+1] ... a[j]),
        # multiplied out rather than divided, so zeros in the input are handled exactly
        a, grad = np.moveaxis(a, self.dim, -1), np.moveaxis(grad, self.dim, -1)
        n = a.shape[-1]
        out = np.zeros(a.shape, grad.dtype)
        for i in range(n):
            before = np.prod(a[..., :i], axis=-1)
            running = np.ones(a.shape[:-1], a.dtype)
            total = grad[..., i].copy()
            for j in range(i + 1, n):
                running = running * a[..., j]
                total = total + grad[..., j] * running
            past_a_zero = (a[..., :i] == 0).any(axis=-1)
            out[..., i] = np.where(past_a_zero, 0, before * total)  # +0 there, as PyTorch's
        return (np.moveaxis(out, -1, self.dim),)


class LogsumexpBackward0(Node):
    formula = "grad_self = grad * exp(self - result)  (the softmax of self)"

    def forward(self, a, dims, keepdim):
        self.dims, self.keepdim = dims, keepdim
        self.save(0, "result")
        return logsumexp(a, dims, keepdim)

    def backward(self, grad):
        a, result = self.saved_values()
        grad, result = _keep(grad, self.dims, self.keepdim), _keep(result, self.dims, self.keepdim)
        with np.errstate(over="ignore", invalid="ignore"):
            return (grad * _exp(a - result),)

    def backward_graph(self, grad):
        saved = _linked(self)
        a, result = saved[0], saved["result"]
        if a.ndim:
            dims = (self.dims,) if isinstance(self.dims, int) else tuple(self.dims)
            grad = _unsqueezed(grad, dims, self.keepdim)
            result = _unsqueezed(result, dims, self.keepdim)
        return (grad * (a - result).exp(),)


def logsumexp(a, dims, keepdim):
    if a.size == 0:
        return np.log(np.exp(a).sum(axis=dims, keepdims=keepdim))
    top = a.max(axis=dims, keepdims=True)
    top = np.where(np.isinf(top), 0, top)  # all -inf (or an inf) must not turn into nan
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        if a.dtype.kind != "f":
            total = np.log(np.exp(a - top).sum(axis=dims, keepdims=True)) + top
        else:  # ReduceOps.cpp: exp_ and log_ (VML's), torch's own sum
            exps = _exp(a - top)
            total = _log(numerics.sum_like_torch(exps, dims, keepdims=True)) + top
    return total if keepdim else total.squeeze(dims)


def _exp(a: np.ndarray) -> np.ndarray:
    return numerics.unary_like_torch(np.exp, a) if a.dtype.kind == "f" else np.exp(a)


def _log(a: np.ndarray) -> np.ndarray:
    return numerics.unary_like_torch(np.log, a)


class TopkBackward0(Node):
    """topk and sort: the values picked, and the indices they came from."""

    formula = "grad_self = zeros, with grad put back where each value came from"

    def forward(self, a, indices, dim):
        self.shape, self.dim = a.shape, dim
        self.indices = indices
        if a.ndim == 0:
            return a.copy()
        return np.take_along_axis(a, indices, axis=dim)

    def backward(self, grad):
        if grad.ndim == 0:
            return (grad,)
        out = np.zeros(self.shape, grad.dtype)
        np.put_along_axis(out, self.indices, grad, axis=self.dim)
        return (out,)

    def backward_graph(self, grad):
        if grad.ndim == 0:
            return (grad,)
        return (_scattered_into_zeros(grad, self.shape, self.dim, self.indices),)


class SortBackward0(TopkBackward0):
    formula = "grad_self = grad put back where each sorted value came from"


class SortBackward1(SortBackward0):
    """sort(stable=...): the overload that takes `stable` is numbered 1."""


class AmaxBackward0(Node):
    formula = "grad_self = grad shared evenly among the elements equal to the max"

    reduce = staticmethod(np.max)

    def forward(self, a, dims, keepdim):
        self.dims, self.keepdim = dims, keepdim
        self.save(0, "result")
        return self.reduce(a, axis=dims, keepdims=keepdim)

    def backward(self, grad):
        a, result = self.saved_values()
        grad, result = _keep(grad, self.dims, self.keepdim), _keep(result, self.dims, self.keepdim)
        hits = a == result
        return ((grad / hits.sum(axis=self.dims, keepdims=True) * hits).astype(grad.dtype),)

    def backward_graph(self, grad):
        # PyTorch's scale_grad_by_count(restore_reduced_dims(grad), mask):
        # (grad / mask.sum(dims, keepdim=True)) * mask
        a, result = self.saved_values()
        hits = a == _keep(result, self.dims, self.keepdim)
        if not self.keepdim:
            grad = grad.reshape(_keep(grad._array, self.dims, False).shape)
        counts = record.leaf(hits.sum(axis=self.dims, keepdims=True), False, "sum")
        return (grad / counts * record.leaf(hits, False, "eq"),)


class AminBackward0(AmaxBackward0):
    formula = "grad_self = grad shared evenly among the elements equal to the min"

    reduce = staticmethod(np.min)


# ***** shapes and indexing (more) *****


class SplitBackward0(Node):
    """split(int) and chunk: one node, one view per piece."""

    formula = "grad_self = the pieces' grads put back side by side"
    is_view = True
    multi_view = True  # its outputs refuse in-place changes, as PyTorch's do

    def forward(self, a, dim, sizes):
        self.dim = dim
        bounds = np.cumsum(sizes)[:-1]
        return tuple(np.split(a, bounds, axis=dim))

    def backward(self, *grads):
        return (np.concatenate(grads, axis=self.dim),)

    def backward_graph(self, *grads):
        from engine.creation import cat  # creation builds its tensors with these nodes

        return (cat(grads, self.dim),)  # PyTorch's split_backward: the pieces' grads, joined


class SplitWithSizesBackward0(SplitBackward0):
    """split([sizes])."""


class GatherBackward0(Node):
    formula = "grad_self = zeros, with grad added back where each value was gathered from"

    def forward(self, a, dim, index):
        self.shape, self.where = a.shape, _along(index, dim)
        self.dim, self.index = dim, index
        return a[self.where]

    def backward(self, grad):
        out = np.zeros(self.shape, grad.dtype)
        np.add.at(out, self.where, grad)  # a position gathered twice gets both grads
        return (out,)

    def backward_graph(self, grad):
        zeros = record.leaf(np.zeros(self.shape, grad._array.dtype), False, "zeros")
        return (_apply(ScatterAddBackward0, (zeros, grad), dim=self.dim, index=self.index),)


def _along(index: np.ndarray, dim: int) -> tuple:
    """Positions for gather/scatter: index's own coordinates, with `dim` taken from index."""
    grid = list(np.indices(index.shape, sparse=True))
    grid[dim] = index
    return tuple(grid)


class ScatterBackward0(Node):
    """scatter(dim, index, src): src's values written at index."""

    formula = "grad_self = grad, zeroed where src was written; grad_src = grad gathered at index"

    def forward(self, a, src, dim, index):
        self.where, self.src_shape = _along(index, dim), np.shape(src)
        out = a.copy()
        out[self.where] = src[tuple(slice(0, n) for n in index.shape)]
        return out

    def backward(self, grad):
        grad_self = grad.copy()
        grad_self[self.where] = 0
        grad_src = np.zeros(self.src_shape, grad.dtype)
        grad_src[tuple(slice(0, n) for n in grad[self.where].shape)] = grad[self.where]
        return grad_self, grad_src


class ScatterBackward1(Node):
    """scatter(dim, index, value): a number written at index."""

    formula = "grad_self = grad, zeroed where the value was written"

    def forward(self, a, dim, index, value):
        self.where = _along(index, dim)
        out = a.copy()
        out[self.where] = value
        return out

    def backward(self, grad):
        grad_self = grad.copy()
        grad_self[self.where] = 0
        return (grad_self,)


class ScatterAddBackward0(ScatterBackward0):
    formula = "grad_self = grad; grad_src = grad gathered at index"

    def forward(self, a, src, dim, index):
        self.where, self.src_shape = _along(index, dim), np.shape(src)
        out = a.copy()
        np.add.at(out, self.where, src[tuple(slice(0, n) for n in index.shape)])
        return out

    def backward(self, grad):
        grad_src = np.zeros(self.src_shape, grad.dtype)
        grad_src[tuple(slice(0, n) for n in grad[self.where].shape)] = grad[self.where]
        return grad, grad_src


class IndexSelectBackward0(Node):
    formula = "grad_self = zeros, with grad added back at each selected index"

    def forward(self, a, dim, index):
        self.shape, self.dim, self.index = a.shape, dim, index
        return np.take(a, index, axis=dim)

    def backward(self, grad):
        out = np.zeros(self.shape, grad.dtype)
        np.add.at(np.moveaxis(out, self.dim, 0), self.index, np.moveaxis(grad, self.dim, 0))
        return (out,)


class MaskedFillBackward0(Node):
    """masked_fill(mask, number)."""

    formula = "grad_self = grad where the mask is False, 0 where it was filled"

    def forward(self, a, mask, value):
        self.mask = mask
        return np.where(mask, a.dtype.type(value), a)

    def backward(self, grad):
        return (np.where(self.mask, np.zeros((), grad.dtype), grad),)

    def backward_graph(self, grad):
        return (_apply(MaskedFillBackward0, (grad,), mask=self.mask, value=0),)


class MaskedFillBackward1(MaskedFillBackward0):
    """masked_fill(mask, 0-dim tensor): the value gets the filled places' grads, summed."""

    formula = "grad_self = grad where the mask is False; grad_value = sum of grad where True"

    def forward(self, a, value, mask):
        return super().forward(a, mask, value)

    def backward(self, grad):
        (grad_self,) = super().backward(grad)
        mask = np.broadcast_to(self.mask, grad.shape)
        return grad_self, grad[mask].sum(dtype=grad.dtype)

    def backward_graph(self, grad):
        # PyTorch's grad.masked_fill(mask, 0) and masked_fill_backward: masked_select, then sum
        (grad_self,) = super().backward_graph(grad)
        if not self.needs_input_grad[1]:
            return grad_self, None
        return grad_self, _apply(MaskedSelectBackward0, (grad,), mask=self.mask).sum()


class MaskedSelectBackward0(Node):
    formula = "grad_self = zeros, with grad put back where the mask is True"

    def forward(self, a, mask):
        self.shape = np.broadcast_shapes(a.shape, mask.shape)
        self.mask = np.broadcast_to(mask, self.shape)
        return np.broadcast_to(a, self.shape)[self.mask]

    def backward(self, grad):
        out = np.zeros(self.shape, grad.dtype)
        out[self.mask] = grad
        return (out,)  # summed back over any broadcast dims by the engine


class RepeatBackward0(Node):
    formula = "grad_self = grad summed over the copies"

    def forward(self, a, repeats):
        self.shape, self.repeats = a.shape, tuple(repeats)
        lead = len(repeats) - a.ndim
        return np.tile(a.reshape((1,) * lead + a.shape), repeats)

    def backward(self, grad):
        # view each dim n*k as (n copies, k), then sum the copies away
        padded = (1,) * (grad.ndim - len(self.shape)) + self.shape
        split = []
        for size, total in zip(padded, grad.shape, strict=True):
            split += [total // size if size else 0, size]
        summed = grad.reshape(split).sum(axis=tuple(range(0, 2 * grad.ndim, 2)))
        return (summed.reshape(self.shape),)

    def backward_graph(self, grad):
        # PyTorch's repeat_backward: sum the new leading dims away, view each repeated dim as
        # (copies, size) and sum the copies
        lead = grad.ndim - len(self.shape)
        for _ in range(lead):
            grad = grad.sum(0)
        split, copies = [], []
        for d, size in enumerate(self.shape):
            if self.repeats[lead + d] != 1:
                split.append(self.repeats[lead + d])
                copies.append(len(split) - 1)
            split.append(size)
        if tuple(split) != tuple(grad.shape):
            grad = grad.reshape(split)
        return (grad.sum(tuple(copies)) if copies else grad,)


class RollBackward0(Node):
    formula = "grad_self = grad rolled back the other way"

    def forward(self, a, shifts, dims):
        # with no dims, the tensor rolls as if flattened (numpy's axis=None does the same)
        self.shifts, self.dims = shifts, dims
        return np.roll(a, shifts if dims is not None else shifts[0], axis=dims)

    def backward(self, grad):
        back = tuple(-s for s in self.shifts)
        return (np.roll(grad, back if self.dims is not None else back[0], axis=self.dims),)

    def backward_graph(self, grad):
        back = tuple(-s for s in self.shifts)
        return (_apply(RollBackward0, (grad,), shifts=back, dims=self.dims),)


class FlipBackward0(Node):
    formula = "grad_self = grad flipped back"

    def forward(self, a, dims):
        self.dims = dims
        return np.flip(a, dims).copy()

    def backward(self, grad):
        return (np.flip(grad, self.dims),)

    def backward_graph(self, grad):
        return (_apply(FlipBackward0, (grad,), dims=self.dims),)


class TrilBackward0(Node):
    formula = "grad_self = grad on and below the diagonal, 0 above"

    keep = staticmethod(np.tril)

    def forward(self, a, diagonal):
        self.diagonal = diagonal
        return self.keep(a, diagonal)

    def backward(self, grad):
        return (self.keep(grad, self.diagonal),)

    def backward_graph(self, grad):
        return (_apply(type(self), (grad,), diagonal=self.diagonal),)


class TriuBackward0(TrilBackward0):
    formula = "grad_self = grad on and above the diagonal, 0 below"

    keep = staticmethod(np.triu)


class ReshapeAliasBackward0(ViewBackward0):
    """reshape() of a non-contiguous tensor whose memory can still be read in the new shape."""


class DiagonalBackward0(Node):
    formula = "grad_self = zeros, with grad on the diagonal"
    is_view = True

    def forward(self, a, offset, dim1, dim2):
        self.shape, self.where = a.shape, (offset, dim1, dim2)
        return diagonal_view(a, offset, dim1, dim2)

    def backward(self, grad):
        out = np.zeros(self.shape, grad.dtype)
        diagonal_view(out, *self.where)[...] = grad
        return (out,)


def diagonal_view(a: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
    """A view of a diagonal: the other dims, then the diagonal last (numpy's own is read-only,
    and an in-place change through a view must reach the base)."""
    key = [slice(None)] * a.ndim
    key[dim1], key[dim2] = slice(max(-offset, 0), None), slice(max(offset, 0), None)
    corner = a[tuple(key)]  # the diagonal starts at its first element
    others = [d for d in range(a.ndim) if d not in (dim1, dim2)]
    shape = [a.shape[d] for d in others] + [min(corner.shape[dim1], corner.shape[dim2])]
    strides = [a.strides[d] for d in others] + [a.strides[dim1] + a.strides[dim2]]
    root = corner
    while isinstance(root.base, np.ndarray):
        root = root.base
    if root.flags.c_contiguous:
        # built on the array that owns the memory, so the view's .base leads to it, as numpy's
        # own views do (the tracer finds the tensors sharing memory that way)
        start = corner.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        return np.ndarray(shape, a.dtype, buffer=root, offset=start, strides=strides)
    return np.lib.stride_tricks.as_strided(corner, shape, strides, writeable=a.flags.writeable)


class IndexPutBackward0(Node):
    """t[index tensors] = values, in place."""

    formula = "grad_self = grad, zeroed where values were written; grad_values = grad there"

    def forward(self, a, values, key):
        self.key = key
        out = a.copy()
        out[key] = values
        return out

    def backward(self, grad):
        grad_self = grad.copy()
        grad_self[self.key] = 0
        return grad_self, grad[self.key]  # summed back to the values' shape by the engine


class FillBackward3(Node):
    """fill_(0-dim tensor), as `t[...] = 2.0` records it."""

    formula = "grad_self = 0 (the old values no longer matter); grad_value = sum of grad"

    def forward(self, a, value):
        return np.full_like(a, value)

    def backward(self, grad):
        return np.zeros_like(grad), grad.sum(dtype=grad.dtype)


# ***** in-place changes through a view: the base's history is rewritten *****


class CopySlices(Node):
    """The base's grad_fn after an in-place op `fn` changed part of it through a view.

    Backward hands the view's part of the gradient to `fn` and puts what `fn` returns for its
    first input back in that part; the rest of the gradient passes through to the old base.
    """

    formula = "grad_base = grad, with the view's part replaced by what the in-place op sends it"

    def __init__(self, fn: Node, where: np.ndarray) -> None:
        super().__init__()
        self.fn, self.where = fn, where  # where: each view element's flat index in the base

    def name(self) -> str:
        return "torch::autograd::CopySlices"  # a hand-written C++ node, named like one

    def backward(self, grad):
        grad_base = np.array(grad, copy=True)
        flat = grad_base.reshape(-1)
        sent = self.fn.backward(flat[self.where])
        part = sent[0]
        flat[self.where] = 0 if part is None else np.broadcast_to(part, self.where.shape)
        return (grad_base, *sent[1:])

    @property
    def has_saved(self) -> bool:
        return self.fn.has_saved

    def release(self) -> None:
        self.fn.release()


class AsStridedBackward0(Node):
    """A view's grad_fn once its base was changed in place: it reads its part of the base."""

    formula = "grad_base = zeros, with grad added at the view's elements"

    def __init__(self, where: np.ndarray, base_shape: tuple) -> None:
        super().__init__()
        self.where, self.base_shape = where, base_shape

    def backward(self, grad):
        out = np.zeros(int(np.prod(self.base_shape)), grad.dtype)
        np.add.at(out, self.where, grad)
        return (out.reshape(self.base_shape),)


# ***** elementwise (more) *****


class _Flat(Node):
    """A step function (round, floor, sign, ...): flat almost everywhere, so its gradient is 0."""

    formula = "grad_self = 0 (the result does not change as self moves a little)"

    def backward(self, grad):
        return (np.zeros_like(grad),)

    def backward_graph(self, grad):
        return (_zeros_like(grad),)


class RoundBackward0(_Flat):
    def forward(self, a):
        return np.rint(a) if a.dtype.kind == "f" else a.copy()  # halves go to the even neighbour


class RoundBackward1(_Flat):
    """round(decimals=d): scaled by 10^d in the tensor's own dtype, as PyTorch's kernel does."""

    def forward(self, a, decimals):
        scale = a.dtype.type(10.0 ** abs(decimals))
        if decimals < 0:
            return np.rint(a / scale) * scale
        return np.rint(a * scale) / scale


class FloorBackward0(_Flat):
    def forward(self, a):
        return np.floor(a) if a.dtype.kind == "f" else a.copy()


class CeilBackward0(_Flat):
    def forward(self, a):
        return np.ceil(a) if a.dtype.kind == "f" else a.copy()


class TruncBackward0(_Flat):
    def forward(self, a):
        return np.trunc(a) if a.dtype.kind == "f" else a.copy()


class SignBackward0(_Flat):
    def forward(self, a):
        return sign(a) if a.dtype.kind != "b" else a.copy()


def sign(a):
    """-1, 0 or 1, and 0 for nan (numpy's sign gives nan there; PyTorch's gives 0)."""
    out = np.sign(a)
    return (
        np.where(np.isnan(out), 0, out).astype(a.dtype, copy=False) if a.dtype.kind == "f" else out
    )


class SgnBackward0(SignBackward0):
    """sgn: sign, extended to complex numbers; for real ones PyTorch still saves both."""

    def forward(self, a):
        self.save(0, "result")
        return super().forward(a)


class FracBackward0(Node):
    formula = "grad_self = grad  (self - trunc(self) moves exactly as self does)"

    def forward(self, a):
        return a - np.trunc(a)

    def backward(self, grad):
        return (grad,)


class _OfSelf(Node):
    """f(self), whose derivative PyTorch writes with self: `derivative(a)` times the gradient."""

    function = None  # each subclass names its numpy function

    def forward(self, a):
        self.save(0)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return numerics.vml_or_numpy(self.function, a).astype(a.dtype, copy=False)

    def backward(self, grad):
        (a,) = self.saved_values()
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return ((grad * self.derivative(a)).astype(grad.dtype, copy=False),)

    def derivative(self, a):
        raise NotImplementedError


class _OfResult(_OfSelf):
    """f(self), whose derivative PyTorch writes with the result (so it saves that instead)."""

    def forward(self, a):
        self.save("result")
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return numerics.vml_or_numpy(self.function, a).astype(a.dtype, copy=False)


def _rsqrt(a):
    return 1 / np.sqrt(a)


class RsqrtBackward0(_OfResult):
    formula = "grad_self = grad * -0.5 * result³"
    function = staticmethod(_rsqrt)

    def backward(self, grad):
        (result,) = self.saved_values()
        with np.errstate(over="ignore", invalid="ignore"):
            # in PyTorch's order, so tiny values round alike; pow(3) multiplies out (Pow.cpp)
            return ((-0.5 * grad) * (result * result * result),)

    def backward_graph(self, grad):
        return (_scaled(grad, -0.5) * _linked(self)["result"] ** 3,)


class TanBackward0(_OfResult):
    formula = "grad_self = grad * (1 + result²)"
    function = staticmethod(np.tan)

    def derivative(self, result):
        return 1 + result * result

    def backward_graph(self, grad):
        result = _linked(self)["result"]
        return (grad * _apply(AddBackward1, (result**2,), other=1),)


class Exp2Backward0(_OfResult):
    formula = "grad_self = grad * result * ln 2"
    function = staticmethod(np.exp2)

    def derivative(self, result):
        return result * result.dtype.type(math.log(2.0))

    def backward(self, grad):
        (result,) = self.saved_values()
        with np.errstate(over="ignore", invalid="ignore"):
            return (grad * result * result.dtype.type(math.log(2.0)),)  # PyTorch's order

    def backward_graph(self, grad):
        return (_scaled(grad * _linked(self)["result"], math.log(2.0)),)


class Expm1Backward0(_OfResult):
    formula = "grad_self = grad * (result + 1)"
    function = staticmethod(elementwise.expm1)

    def derivative(self, result):
        return result + 1

    def backward_graph(self, grad):
        return (grad * _apply(AddBackward1, (_linked(self)["result"],), other=1),)


class AsinBackward0(_OfSelf):
    formula = "grad_self = grad / √(1 - self²)"
    function = staticmethod(np.arcsin)

    def derivative(self, a):
        return 1 / np.sqrt(1 - a * a)

    def backward_graph(self, grad):
        a = _linked(self)[0]
        return (grad * _apply(AddBackward1, (-a * a,), other=1).rsqrt(),)


class AcosBackward0(_OfSelf):
    formula = "grad_self = -grad / √(1 - self²)"
    function = staticmethod(np.arccos)

    def derivative(self, a):
        return -1 / np.sqrt(1 - a * a)

    def backward_graph(self, grad):
        a = _linked(self)[0]
        return (grad * -_apply(AddBackward1, (-a * a,), other=1).rsqrt(),)


class AtanBackward0(_OfSelf):
    formula = "grad_self = grad / (1 + self²)"
    function = staticmethod(np.arctan)

    def derivative(self, a):
        return 1 / (1 + a * a)

    def backward(self, grad):
        (a,) = self.saved_values()
        with np.errstate(over="ignore", invalid="ignore"):
            return (grad / (a * a + 1),)  # one division, as PyTorch's

    def backward_graph(self, grad):
        a = _linked(self)[0]
        return (grad / _apply(AddBackward1, (a * a,), other=1),)


class SinhBackward0(_OfSelf):
    formula = "grad_self = grad * cosh(self)"
    function = staticmethod(elementwise.sinh)

    def derivative(self, a):
        return elementwise.cosh(a)

    def backward_graph(self, grad):
        return (grad * _linked(self)[0].cosh(),)


class CoshBackward0(_OfSelf):
    formula = "grad_self = grad * sinh(self)"
    function = staticmethod(elementwise.cosh)

    def derivative(self, a):
        return elementwise.sinh(a)

    def backward_graph(self, grad):
        return (grad * _linked(self)[0].sinh(),)


class AsinhBackward0(_OfSelf):
    formula = "grad_self = grad / √(self² + 1)"
    function = staticmethod(np.arcsinh)

    def derivative(self, a):
        return 1 / np.sqrt(a * a + 1)

    def backward_graph(self, grad):
        return (grad * _apply(AddBackward1, (_linked(self)[0] ** 2,), other=1).rsqrt(),)


class AcoshBackward0(_OfSelf):
    formula = "grad_self = grad / √(self² - 1)"
    function = staticmethod(np.arccosh)

    def derivative(self, a):
        return 1 / np.sqrt(a * a - 1)


class AtanhBackward0(_OfSelf):
    formula = "grad_self = grad / (1 - self²)"
    function = staticmethod(numerics.arctanh)

    def derivative(self, a):
        return 1 / (1 - a * a)

    def backward(self, grad):
        (a,) = self.saved_values()
        with np.errstate(divide="ignore", invalid="ignore"):
            return (grad / (1 - a * a),)  # one division, as PyTorch's

    def backward_graph(self, grad):
        return (_scaled(grad, 1) / _one_minus(_linked(self)[0] ** 2),)


_erf = numerics.erf  # MKL's VML, as PyTorch's
_erfc = numerics.erfc


class ErfBackward0(_OfSelf):
    formula = "grad_self = grad * 2/√π * exp(-self²)"
    function = staticmethod(_erf)

    def derivative(self, a):
        return a.dtype.type(2 / math.sqrt(math.pi)) * numerics.unary_like_torch(np.exp, -a * a)

    def backward_graph(self, grad):
        a = _linked(self)[0]
        return (_scaled((-(a**2)).exp(), 2.0 / math.sqrt(math.pi)) * grad,)


class ErfcBackward0(_OfSelf):
    formula = "grad_self = -grad * 2/√π * exp(-self²)"
    function = staticmethod(_erfc)

    def derivative(self, a):
        return a.dtype.type(-2 / math.sqrt(math.pi)) * numerics.unary_like_torch(np.exp, -a * a)

    def backward_graph(self, grad):
        a = _linked(self)[0]
        return (_scaled((-(a**2)).exp(), -2.0 / math.sqrt(math.pi)) * grad,)


class Log2Backward0(_OfSelf):
    formula = "grad_self = grad / (self * ln 2)"
    function = staticmethod(np.log2)

    def derivative(self, a):
        return 1 / (a * a.dtype.type(math.log(2.0)))

    def backward(self, grad):
        (a,) = self.saved_values()
        with np.errstate(divide="ignore", invalid="ignore"):
            return (grad / (a * a.dtype.type(math.log(2.0))),)  # one division, as PyTorch's

    def backward_graph(self, grad):
        return (grad / _scaled(_linked(self)[0], math.log(2.0)),)


class Log10Backward0(_OfSelf):
    formula = "grad_self = grad / (self * ln 10)"
    function = staticmethod(np.log10)

    def derivative(self, a):
        return 1 / (a * a.dtype.type(math.log(10.0)))

    def backward(self, grad):
        (a,) = self.saved_values()
        with np.errstate(divide="ignore", invalid="ignore"):
            return (grad / (a * a.dtype.type(math.log(10.0))),)

    def backward_graph(self, grad):
        return (grad / _scaled(_linked(self)[0], math.log(10.0)),)


class Log1PBackward0(_OfSelf):
    formula = "grad_self = grad / (self + 1)"
    function = staticmethod(elementwise.log1p)

    def derivative(self, a):
        return 1 / (a + 1)

    def backward(self, grad):
        (a,) = self.saved_values()
        with np.errstate(divide="ignore", invalid="ignore"):
            return (grad / (a + 1),)  # one division, as PyTorch's

    def backward_graph(self, grad):
        return (grad / _apply(AddBackward1, (_linked(self)[0],), other=1),)


class Atan2Backward0(Node):
    formula = (
        "grad_self = grad * other / (self² + other²); grad_other = -grad * self / (self² + other²)"
    )

    def forward(self, a, b):
        self.save(0, 1)
        if a.dtype == b.dtype == np.float32:
            # PyTorch's kernel: Sleef's vector atan2, glibc's atan2f for the leftovers
            return numerics.vectorized_loop(sleef.atan2, libm.atan2, a, b)
        return np.arctan2(a, b)

    def backward(self, grad):
        a, b = self.saved_values()
        squares = a * a + b * b
        with np.errstate(divide="ignore", invalid="ignore"):
            # at the origin, where atan2 has no derivative, PyTorch sends 0
            recip = np.where(squares == 0, squares.dtype.type(0), 1 / squares)
        return grad * b * recip, grad * -a * recip


class FmaxBackward0(Node):
    """fmax: max that ignores a nan; on a tie the whole gradient goes to self (unlike maximum)."""

    formula = "grad_self = grad where self ≥ other (or other is nan); grad_other = grad elsewhere"

    def forward(self, a, b):
        self.save(0, 1)
        return np.fmax(a, b)

    def backward(self, grad):
        a, b = self.saved_values()
        mine = self.mine(a, b) | np.isnan(b)
        return np.where(mine, grad, 0), np.where(mine, 0, grad)

    def backward_graph(self, grad):
        # PyTorch's grad.masked_fill(mask, 0) on each side
        a, b = self.saved_values()
        mine = self.mine(a, b) | np.isnan(b)
        return (
            _apply(MaskedFillBackward0, (grad,), mask=~mine, value=0),
            _apply(MaskedFillBackward0, (grad,), mask=mine, value=0),
        )

    @staticmethod
    def mine(a, b):
        return a >= b


class FminBackward0(FmaxBackward0):
    formula = "grad_self = grad where self ≤ other (or other is nan); grad_other = grad elsewhere"

    def forward(self, a, b):
        self.save(0, 1)
        return np.fmin(a, b)

    @staticmethod
    def mine(a, b):
        return a <= b


def lerp(start, end, weight):
    # PyTorch's formula: from whichever end is nearer, so lerp(a, b, 1) is exactly b
    dtype = np.result_type(start, end)
    with np.errstate(invalid="ignore", over="ignore"):
        if dtype in (np.float32, np.float64):
            # lerp_vec's one fused multiply-add: fma(w or w - 1, end - start, start or end)
            weight = np.asarray(weight, dtype)
            small = np.abs(weight) < 0.5
            coefficient = np.where(small, weight, weight - dtype.type(1))
            base = np.where(small, start, end)
            return numerics.fused_multiply_add(coefficient, end - start, base).astype(dtype)
        return np.where(
            np.abs(weight) < 0.5, start + weight * (end - start), end - (end - start) * (1 - weight)
        ).astype(dtype, copy=False)


class LerpBackward0(Node):
    """lerp with a number for the weight."""

    formula = "grad_self = grad * (1 - weight); grad_end = grad * weight"

    def forward(self, a, end, weight):
        self.weight = weight
        return lerp(a, end, weight)

    def backward(self, grad):
        # PyTorch takes 1 - weight as a double, then multiplies in grad's dtype
        return grad * grad.dtype.type(1 - self.weight), grad * grad.dtype.type(self.weight)

    def backward_graph(self, grad):
        return _scaled(grad, 1 - self.weight), _scaled(grad, self.weight)


class LerpBackward1(Node):
    """lerp with a tensor for the weight."""

    formula = (
        "grad_self = grad * (1 - weight); grad_end = grad * weight; "
        "grad_weight = grad * (end - self)"
    )

    def forward(self, a, end, weight):
        self.save(0, 1, 2)
        return lerp(a, end, weight)

    def backward(self, grad):
        a, end, weight = self.saved_values()
        return grad * (1 - weight), grad * weight, grad * (end - a)

    def backward_graph(self, grad):
        a, end, weight = (_linked(self)[i] for i in range(3))
        needs = self.needs_input_grad
        return (
            grad * _one_minus(weight) if needs[0] else None,
            grad * weight if needs[1] else None,
            grad * (end - a) if needs[2] else None,
        )


class AddcmulBackward0(Node):
    formula = (
        "grad_self = grad; grad_tensor1 = grad * tensor2 * value; "
        "grad_tensor2 = grad * tensor1 * value"
    )

    def forward(self, a, t1, t2, value=1):
        self.value = value
        # like mul, each factor's derivative is the other factor: keep only what is needed
        if self.needs_input_grad[2]:
            self.save(1)
        if self.needs_input_grad[1]:
            self.save(2)
        if np.result_type(a, t1, t2) in (np.float32, np.float64):
            # PyTorch's kernel fuses the last step: fma(value * tensor1, tensor2, self)
            return numerics.fused_multiply_add(value * t1, t2, a)
        return a + value * t1 * t2

    def backward(self, grad):
        saved = iter(self.saved_values())
        t1 = next(saved) if self.needs_input_grad[2] else None
        t2 = next(saved) if self.needs_input_grad[1] else None
        value = grad.dtype.type(self.value)
        return (
            grad,
            grad * (t2 * value) if t2 is not None else None,
            grad * (t1 * value) if t1 is not None else None,
        )

    def backward_graph(self, grad):
        saved = _linked(self)
        return (
            grad,
            grad * _scaled(saved[2], self.value) if 2 in saved else None,
            grad * _scaled(saved[1], self.value) if 1 in saved else None,
        )


class AddcdivBackward0(Node):
    formula = (
        "grad_self = grad; grad_tensor1 = grad * value / tensor2; "
        "grad_tensor2 = -grad * value * tensor1 / tensor2²"
    )

    def forward(self, a, t1, t2, value=1):
        self.value = value
        if self.needs_input_grad[2]:
            self.save(1)
        if self.needs_input_grad[1] or self.needs_input_grad[2]:
            self.save(2)
        return a + value * t1 / t2

    def backward(self, grad):
        saved = iter(self.saved_values())
        t1 = next(saved) if self.needs_input_grad[2] else None
        t2 = next(saved, None)
        value = grad.dtype.type(self.value)
        # in PyTorch's order: grad * (value / tensor2), -grad * (value * tensor1 / tensor2²)
        return (
            grad,
            grad * (value / t2) if self.needs_input_grad[1] else None,
            -grad * (value * t1 / (t2 * t2)) if t1 is not None else None,
        )

    def backward_graph(self, grad):
        saved = _linked(self)
        t2 = saved[2]
        grad_t1 = grad_t2 = None
        if self.needs_input_grad[1]:
            # value / tensor2 in C++ is empty_like(tensor2).fill_(value).div_(tensor2)
            filled = record.leaf(np.full_like(t2._array, self.value), False, "full_like")
            grad_t1 = grad * (filled / t2)
        if self.needs_input_grad[2]:
            grad_t2 = -grad * (_scaled(saved[1], self.value) / (t2 * t2))
        return grad, grad_t1, grad_t2


# ***** losses and nn.functional (more) *****

# The elementwise losses reduce as PyTorch's apply_loss_reduction does: 'none' keeps one loss
# per element, 'sum' adds them, 'mean' divides the sum by their count; their backward first
# spreads the incoming gradient back over the elements (divided by n for 'mean').


def reduce_loss(loss, reduction):
    """apply_loss_reduction: torch's own mean or sum of the elementwise losses."""
    if reduction == "none":
        return loss
    if loss.dtype.kind != "f":
        return loss.mean(dtype=loss.dtype) if reduction == "mean" else loss.sum(dtype=loss.dtype)
    return numerics.mean_like_torch(loss) if reduction == "mean" else numerics.sum_like_torch(loss)


def spread_loss_grad(grad, reduction, shape):
    if reduction == "none":
        return grad
    if reduction == "mean":
        grad = grad / math.prod(shape)  # a Python int keeps grad's dtype
    return np.broadcast_to(grad, shape)


class BinaryCrossEntropyBackward0(Node):
    formula = (
        "grad_self = grad * weight * (self - target) / max(self * (1 - self), 1e-12) / n; "
        "grad_target = grad * weight * (log(1 - self) - log(self)) / n"
    )

    def forward(self, a, target, weight, reduction):
        self.weight, self.reduction = weight, reduction
        self.save(0, 1)
        # each log is clamped at -100, so a probability of exactly 0 or 1 costs 100, not inf;
        # PyTorch's kernel is scalar throughout: glibc's logf and log1pf for every element
        log, log1p = (libm.log, libm.log1p) if a.dtype == np.float32 else (np.log, np.log1p)
        with np.errstate(divide="ignore"):
            log_p = np.maximum(log(a), a.dtype.type(-100))
            log_not_p = np.maximum(log1p(-a), a.dtype.type(-100))
        loss = (target - 1) * log_not_p - target * log_p
        return reduce_loss(loss if weight is None else loss * weight, reduction)

    def backward(self, grad):
        a, target = self.saved_values()
        grad_a = grad_target = None
        if self.needs_input_grad[0]:
            grad_a = binary_cross_entropy_backward(grad, a, target, self.weight, self.reduction)
        if self.needs_input_grad[1]:
            grad = spread_loss_grad(grad, self.reduction, a.shape)
            if self.weight is not None:
                grad = grad * self.weight
            with np.errstate(divide="ignore"):
                grad_target = grad * (np.log1p(-a) - np.log(a))
        return grad_a, grad_target

    def backward_graph(self, grad):
        saved = _linked(self)
        a, target = saved[0], saved[1]
        grad_a = grad_target = None
        if self.needs_input_grad[0]:
            inputs, settings = (
                (grad, a, target),
                {"weight": self.weight, "reduction": self.reduction},
            )
            grad_a = _apply(BinaryCrossEntropyBackwardBackward0, inputs, **settings)
        if self.needs_input_grad[1]:
            # PyTorch's binary_cross_entropy_target_backward: -logit(self) * grad (* weight) / n
            grad_target = -_apply(LogitBackward0, (a,)) * grad
            if self.weight is not None:
                grad_target = grad_target * record.leaf(self.weight, False, "weight")
            if self.reduction == "mean":
                grad_target = _apply(DivBackward1, (grad_target,), other=target.numel())
        return grad_a, grad_target


def binary_cross_entropy_backward(grad, a, target, weight, reduction):
    """PyTorch's order: the slope times the incoming gradient, then the weight, then / n."""
    if reduction != "none":
        grad = np.broadcast_to(grad, a.shape)
    out = grad * (a - target) / np.maximum((1 - a) * a, a.dtype.type(1e-12))
    return _weighted_mean(out, weight, reduction)


def _weighted_mean(grad, weight, reduction):
    """A loss's gradient, weighted and, for 'mean', divided by the element count last."""
    if weight is not None:
        grad = grad * weight
    if reduction == "mean":
        grad = grad / math.prod(np.shape(grad))  # a Python int keeps grad's dtype
    return grad


class LogitBackward0(Node):
    """log(p / (1 - p)), here only inside binary_cross_entropy's recorded backward."""

    formula = "grad_self = grad / (self * (1 - self)), nan outside [0, 1]"

    def forward(self, a):
        self.save(0)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(a / (1 - a))

    def backward(self, grad):
        (a,) = self.saved_values()
        with np.errstate(divide="ignore", invalid="ignore"):
            slope = grad / (a * (1 - a))
        return (np.where((a < 0) | (a > 1), np.asarray(np.nan, slope.dtype), slope),)


class BinaryCrossEntropyWithLogitsBackward0(Node):
    """BCE on logits: log σ(x) is computed stably, never as log(sigmoid(x))."""

    formula = (
        "grad_self = grad * weight * ((pos_weight·target + 1 - target)·σ(self) - "
        "pos_weight·target) / n; grad_target = grad * weight * (log σ(-self) - "
        "pos_weight·log σ(self)) / n"
    )

    def forward(self, a, target, weight, pos_weight, reduction):
        self.weight, self.pos_weight, self.reduction = weight, pos_weight, reduction
        self.save(0, 1)
        log_sigmoid = elementwise.log_sigmoid(a)[0]
        if pos_weight is not None:
            log_sigmoid = log_sigmoid * ((pos_weight - 1) * target + 1)
        loss = (1 - target) * a - log_sigmoid
        return reduce_loss(loss if weight is None else loss * weight, reduction)

    def backward(self, grad):
        # PyTorch's order: the slope times the incoming gradient, then the weight, then / n
        a, target = self.saved_values()
        if self.reduction != "none":
            grad = np.broadcast_to(grad, np.broadcast_shapes(a.shape, target.shape))
        grad_a = grad_target = None
        if self.needs_input_grad[0]:
            if self.pos_weight is None:
                grad_a = (sigmoid(a) - target) * grad
            else:
                scaled = self.pos_weight * target
                grad_a = ((scaled + 1 - target) * sigmoid(a) - scaled) * grad
            grad_a = _weighted_mean(grad_a, self.weight, self.reduction)
        if self.needs_input_grad[1]:
            if self.pos_weight is None:
                grad_target = -a * grad
            else:
                log_sigmoids = (elementwise.log_sigmoid(x)[0] for x in (-a, a))
                grad_target = (next(log_sigmoids) - next(log_sigmoids) * self.pos_weight) * grad
            grad_target = _weighted_mean(grad_target, self.weight, self.reduction)
        return grad_a, grad_target

    def backward_graph(self, grad):
        # PyTorch's binary_cross_entropy_with_logits_backward and _target_backward, op for op
        saved = _linked(self)
        a, target = saved[0], saved[1]
        weight, pos_weight = (
            None if w is None else record.leaf(np.asarray(w), False, "weight")
            for w in (self.weight, self.pos_weight)
        )
        grad_a = grad_target = None
        if self.needs_input_grad[0]:
            if pos_weight is None:
                grad_a = a.sigmoid() - target
            else:
                scaled = pos_weight * target
                grad_a = (_apply(AddBackward1, (scaled,), other=1) - target) * a.sigmoid() - scaled
            grad_a = self._weighted_mean(grad_a * grad, weight, target)
        if self.needs_input_grad[1]:
            if pos_weight is None:
                grad_target = -a * grad
            else:
                log_sigmoids = _apply(LogSigmoidBackward0, (-a,)), _apply(LogSigmoidBackward0, (a,))
                grad_target = (log_sigmoids[0] - log_sigmoids[1] * pos_weight) * grad
            grad_target = self._weighted_mean(grad_target, weight, target)
        return grad_a, grad_target

    def _weighted_mean(self, grad, weight, target):
        if weight is not None:
            grad = grad * weight
        if self.reduction == "mean":
            return _apply(DivBackward1, (grad,), other=target.numel())
        return grad


class SmoothL1LossBackward0(Node):
    formula = (
        "grad_self = grad * (self - target) / beta inside ±beta, else grad * sign(self - target)"
        " (/ n for 'mean'); grad_target = -grad_self"
    )

    def forward(self, a, target, beta, reduction):
        self.beta, self.reduction = beta, reduction
        self.save(0, 1)
        diff = np.abs(a - target)
        loss = np.where(diff < beta, 0.5 * diff * diff / beta, diff - 0.5 * beta)
        return reduce_loss(loss.astype(diff.dtype, copy=False), reduction)

    def backward(self, grad):
        a, target = self.saved_values()
        grad = smooth_l1_loss_backward(grad, a, target, self.reduction, self.beta)
        return grad, -grad

    def backward_graph(self, grad):
        # PyTorch's formula for the target is the input's with the two swapped
        saved = _linked(self)
        settings = {"reduction": self.reduction, "beta": self.beta}
        return (
            _apply(SmoothL1LossBackwardBackward0, (grad, saved[0], saved[1]), **settings)
            if self.needs_input_grad[0]
            else None,
            _apply(SmoothL1LossBackwardBackward0, (grad, saved[1], saved[0]), **settings)
            if self.needs_input_grad[1]
            else None,
        )


def smooth_l1_loss_backward(grad, a, target, reduction, beta):
    diff = a - target
    slope = np.where(np.abs(diff) < beta, diff / beta, np.sign(diff))
    return spread_loss_grad(grad, reduction, diff.shape) * slope.astype(diff.dtype)


class HuberLossBackward0(Node):
    formula = (
        "grad_self = grad * (self - target) inside ±delta, else grad * delta * "
        "sign(self - target) (/ n for 'mean'); grad_target = -grad_self"
    )

    def forward(self, a, target, delta, reduction):
        self.delta, self.reduction = delta, reduction
        self.save(0, 1)
        diff = np.abs(a - target)
        loss = np.where(diff < delta, 0.5 * diff * diff, delta * (diff - 0.5 * delta))
        return reduce_loss(loss.astype(diff.dtype, copy=False), reduction)

    def backward(self, grad):
        a, target = self.saved_values()
        grad = huber_loss_backward(grad, a, target, self.reduction, self.delta)
        return grad, -grad

    def backward_graph(self, grad):
        saved = _linked(self)
        settings = {"reduction": self.reduction, "delta": self.delta}
        return (
            _apply(HuberLossBackwardBackward0, (grad, saved[0], saved[1]), **settings)
            if self.needs_input_grad[0]
            else None,
            _apply(HuberLossBackwardBackward0, (grad, saved[1], saved[0]), **settings)
            if self.needs_input_grad[1]
            else None,
        )


def huber_loss_backward(grad, a, target, reduction, delta):
    diff = a - target
    slope = np.clip(diff, -delta, delta)
    return spread_loss_grad(grad, reduction, diff.shape) * slope.astype(diff.dtype)


class SoftMarginLossBackward0(Node):
    formula = "grad_self = -grad * target * σ(-target * self) / n"

    def forward(self, a, target, reduction):
        self.target, self.reduction = target, reduction
        self.save(0)  # PyTorch keeps the target too
        return reduce_loss(np.logaddexp(0, -target * a).astype(a.dtype, copy=False), reduction)

    def backward(self, grad):
        (a,) = self.saved_values()
        grad = spread_loss_grad(grad, self.reduction, a.shape)
        return (grad * -self.target * sigmoid(-self.target * a),)


# ***** activations *****


class LeakyReluBackward0(Node):
    formula = "grad_self = grad where self > 0, else grad * negative_slope"

    def forward(self, a, negative_slope):
        self.negative_slope = negative_slope
        self.save(0)
        return np.where(a > 0, a, a * a.dtype.type(negative_slope))

    def backward(self, grad):
        (a,) = self.saved_values()
        return (self.first_derivative(a, grad),)

    def first_derivative(self, a, grad):
        return np.where(a > 0, grad, grad * grad.dtype.type(self.negative_slope))

    second_derivative = None  # piecewise linear: PyTorch sends self zeros

    def backward_graph(self, grad):
        return (_apply(LeakyReluBackwardBackward0, (grad, _linked(self)[0]), first=self),)


class LeakyReluBackward1(LeakyReluBackward0):
    """leaky_relu_ (in place): the old values are gone, so it reads the sign from the result."""

    formula = "grad_self = grad where result > 0, else grad * negative_slope"

    def forward(self, a, negative_slope):
        self.negative_slope = negative_slope
        self.save("result")
        return np.where(a > 0, a, a * a.dtype.type(negative_slope))

    backward_graph = None  # in place, the sign is read from the result: not recorded yet


class EluBackward0(Node):
    """elu, and selu (elu with PyTorch's fixed alpha and scale)."""

    formula = "grad_self = grad * scale where self > 0, else grad * scale * alpha * exp(self)"

    def forward(self, a, alpha, scale=1, input_scale=1):
        self.alpha, self.scale, self.input_scale = alpha, scale, input_scale
        self.save(0)
        return self.elu(a)

    def elu(self, a):
        return elementwise.elu(a, self.alpha, self.scale, self.input_scale)

    def backward(self, grad):
        (a,) = self.saved_values()
        return (self.first_derivative(a, grad),)

    def first_derivative(self, a, grad):
        return elementwise.elu_backward(grad, a, self.alpha, self.scale, self.input_scale)

    def second_derivative(self, a):
        kind = a.dtype.type
        coefficient = kind(self.input_scale * self.input_scale * self.alpha * self.scale)
        curve = np.exp(np.minimum(a, 0) * kind(self.input_scale)) * coefficient
        return np.where(a > 0, kind(0), curve)

    def backward_graph(self, grad):
        return (_apply(EluBackwardBackward0, (grad, _linked(self)[0]), first=self),)


class EluBackward1(EluBackward0):
    """elu_ (in place): the derivative is rebuilt from the result."""

    formula = "grad_self = grad * scale where result > 0, else grad * (result + alpha * scale)"

    def forward(self, a, alpha, scale=1, input_scale=1):
        self.alpha, self.scale, self.input_scale = alpha, scale, input_scale
        self.save("result")
        return self.elu(a)

    def backward(self, grad):
        (result,) = self.saved_values()
        return (
            elementwise.elu_backward_of_result(
                grad, result, self.alpha, self.scale, self.input_scale
            ),
        )

    backward_graph = None  # from the result: not recorded yet


class GeluBackward0(Node):
    formula = "grad_self = grad * (Φ(self) + self * φ(self)) (Φ, φ: the normal's cdf and pdf)"

    def forward(self, a, approximate):
        self.approximate = approximate
        self.save(0)
        return elementwise.gelu(a, approximate)

    def backward(self, grad):
        (a,) = self.saved_values()
        return (self.first_derivative(a, grad),)

    def first_derivative(self, a, grad):
        return elementwise.gelu_backward(grad, a, self.approximate)

    def second_derivative(self, a):
        if self.approximate == "tanh":
            # with u = β(x + κx³) and t = tanh(u): (1 - t²)(u′ - x·t·u′² + x·u″/2)
            inner = np.tanh(_GELU_BETA * (a + _GELU_KAPPA * a**3))
            du = _GELU_BETA * (1 + 3 * _GELU_KAPPA * a * a)
            ddu = _GELU_BETA * 6 * _GELU_KAPPA * a
            curve = (1 - inner * inner) * (du - a * inner * du * du + 0.5 * a * ddu)
        else:
            curve = np.exp(-0.5 * a * a) / math.sqrt(2 * math.pi) * (2 - a * a)  # φ(x)(2 - x²)
        return curve.astype(a.dtype)

    def backward_graph(self, grad):
        return (_apply(GeluBackwardBackward0, (grad, _linked(self)[0]), first=self),)


_GELU_BETA = math.sqrt(2 / math.pi)  # Python floats: they keep a float32 array float32
_GELU_KAPPA = 0.044715


class SiluBackward0(Node):
    formula = "grad_self = grad * σ(self) * (1 + self * (1 - σ(self)))"

    def forward(self, a):
        self.save(0)
        return elementwise.silu(a)

    def backward(self, grad):
        (a,) = self.saved_values()
        return (elementwise.silu_backward(grad, a),)

    def backward_graph(self, grad):
        # PyTorch's infinitely differentiable form, from ops that record themselves
        a = _linked(self)[0]
        s = a.sigmoid()
        return (grad * s * _apply(AddBackward1, (a * _one_minus(s),), other=1.0),)


class SoftplusBackward0(Node):
    formula = "grad_self = grad * σ(beta * self), or grad where beta * self > threshold"

    def forward(self, a, beta, threshold):
        self.beta, self.threshold = beta, threshold
        self.save(0)
        # above the threshold softplus is x itself, to float precision
        return elementwise.softplus(a, beta, threshold)

    def backward(self, grad):
        (a,) = self.saved_values()
        return (self.first_derivative(a, grad),)

    def first_derivative(self, a, grad):
        return elementwise.softplus_backward(grad, a, self.beta, self.threshold)

    def second_derivative(self, a):
        # PyTorch's softplus_double_backward: σ′(beta·x)·beta where beta·x < threshold (so at
        # the threshold itself the curve is already gone, though the slope is still σ)
        scaled = a * a.dtype.type(self.beta)
        s = sigmoid(scaled)
        curve = (1 - s) * s * a.dtype.type(self.beta)
        return np.where(scaled < self.threshold, curve, a.dtype.type(0))

    def backward_graph(self, grad):
        return (_apply(SoftplusBackwardBackward0, (grad, _linked(self)[0]), first=self),)


class HardtanhBackward0(Node):
    """hardtanh and relu6 (hardtanh from 0 to 6)."""

    formula = "grad_self = grad where min_val < self < max_val, else 0"

    def forward(self, a, min_val, max_val):
        self.min_val, self.max_val = min_val, max_val
        self.save(0)
        kind = a.dtype.type  # an integer tensor clips at integer bounds
        return np.clip(a, kind(min_val), kind(max_val))

    def backward(self, grad):
        (a,) = self.saved_values()
        return (self.first_derivative(a, grad),)

    def first_derivative(self, a, grad):
        inside = (a > self.min_val) & (a < self.max_val)
        return np.where(inside, grad, np.zeros((), grad.dtype))

    second_derivative = None  # piecewise linear: PyTorch sends self zeros

    def backward_graph(self, grad):
        return (_apply(HardtanhBackwardBackward0, (grad, _linked(self)[0]), first=self),)


class LogSigmoidBackward0(Node):
    formula = "grad_self = grad * σ(-self) = grad * (1 - σ(self))"

    def forward(self, a):
        self.save(0)  # PyTorch also keeps the buffer e^-|x|: the backward computes it again
        return elementwise.log_sigmoid(a)[0]

    def backward(self, grad):
        (a,) = self.saved_values()
        return (elementwise.log_sigmoid_backward(grad, a, elementwise.log_sigmoid(a)[1]),)


class CeluBackward0(EluBackward0):
    """celu: elu with its exponent scaled by 1/alpha, so the curve stays continuous in slope."""

    formula = "grad_self = grad where self > 0, else grad * exp(self / alpha)"

    def forward(self, a, alpha):
        return super().forward(a, alpha, 1, 1.0 / alpha)


class CeluBackward1(EluBackward1):
    """celu_ (in place): the derivative is rebuilt from the result."""

    formula = "grad_self = grad where result > 0, else grad * (result / alpha + 1)"

    def forward(self, a, alpha):
        return super().forward(a, alpha, 1, 1.0 / alpha)


class ThresholdBackward0(Node):
    formula = "grad_self = grad where self > threshold, else 0"

    def forward(self, a, threshold, value):
        self.threshold = threshold
        self.save(0)
        return np.where(a > threshold, a, a.dtype.type(value))

    def backward(self, grad):
        (a,) = self.saved_values()
        return (np.where(a > self.threshold, grad, np.zeros((), grad.dtype)),)

    def backward_graph(self, grad):
        a = _linked(self)[0]
        return (_apply(ThresholdBackwardBackward0, (grad, a), threshold=self.threshold),)


class ThresholdBackward1(ThresholdBackward0):
    """threshold_ (in place): PyTorch keeps a copy of the old values for the backward."""

    backward_graph = None  # the copy is not linked into the graph: not recorded yet


class SoftshrinkBackward0(Node):
    formula = "grad_self = grad where |self| > lambd, else 0"

    def forward(self, a, lambd):
        self.lambd = lambd
        self.save(0)
        kind = a.dtype.type
        # inside the band the result is x * 0: a signed zero, as PyTorch's kernel writes it
        return np.where(a > lambd, a - kind(lambd), np.where(a < -lambd, a + kind(lambd), a * 0))

    def backward(self, grad):
        (a,) = self.saved_values()
        return (self.first_derivative(a, grad),)

    def first_derivative(self, a, grad):
        return np.where(np.abs(a) > self.lambd, grad, np.zeros((), grad.dtype))

    second_derivative = None  # piecewise linear: PyTorch sends self zeros
    backward_op = None  # set below, once the class exists

    def backward_graph(self, grad):
        return (_apply(self.backward_op, (grad, _linked(self)[0]), first=self),)


class HardshrinkBackward0(SoftshrinkBackward0):
    formula = "grad_self = grad where |self| > lambd, else 0"

    def forward(self, a, lambd):
        self.lambd = lambd
        self.save(0)
        return np.where(np.abs(a) > lambd, a, np.zeros((), a.dtype))


class MishBackward0(Node):
    formula = "grad_self = grad * (t + self * σ(self) * (1 - t²)), t = tanh(softplus(self))"

    def forward(self, a):
        self.save(0)
        return elementwise.mish(a)

    def backward(self, grad):
        (a,) = self.saved_values()
        return (elementwise.mish_backward(grad, a),)

    def backward_graph(self, grad):
        # PyTorch's infinitely differentiable form, from ops that record themselves
        a = _linked(self)[0]
        s = a.sigmoid()
        t = a.exp().log1p().tanh()
        return (grad * (t + a * s * _one_minus(t * t)),)


class HardswishBackward0(Node):
    formula = "grad_self = 0 up to -3, grad * (self / 3 + 1/2) between -3 and 3, grad from 3 on"

    def forward(self, a):
        self.save(0)
        kind = a.dtype.type
        return a * np.clip(a + kind(3), 0, 6) / kind(6)

    def backward(self, grad):
        (a,) = self.saved_values()
        return (self.first_derivative(a, grad),)

    def first_derivative(self, a, grad):
        kind = a.dtype.type
        # a plain 0 up to -3, as PyTorch's kernel writes it (grad · 0 could be -0)
        curved = grad * (a / kind(3) + kind(0.5))
        return np.where(a <= -3, np.zeros((), grad.dtype), np.where(a < 3, curved, grad))

    def second_derivative(self, a):
        kind = a.dtype.type
        return np.where((a > -3) & (a < 3), kind(1 / 3), kind(0))  # 1/3 on the curved piece

    def backward_graph(self, grad):
        a = _linked(self)[0]
        if self.saved[0].counter is None:
            # hardswish_ kept a copy of the old values (engine/record.py apply_inplace); PyTorch
            # keeps a clone of them, so its graph has a CloneBackward0 there
            a = _apply(CloneBackward0, (a,))
        return (_apply(HardswishBackwardBackward0, (grad, a), first=self),)


class HardsigmoidBackward0(Node):
    formula = "grad_self = grad / 6 where -3 < self < 3, else 0"

    def forward(self, a):
        self.save(0)
        kind = a.dtype.type
        return np.clip(a + kind(3), 0, 6) / kind(6)

    def backward(self, grad):
        (a,) = self.saved_values()
        inside = (a > -3) & (a < 3)
        return (np.where(inside, grad / grad.dtype.type(6), np.zeros((), grad.dtype)),)


class GluBackward0(Node):
    """glu: the first half of dim, gated by the sigmoid of the second half."""

    formula = "grad_first = grad * σ(second); grad_second = grad * first * σ(second) * (1 - σ(…))"

    def forward(self, a, dim):
        self.dim = dim
        self.save(0)
        first, second = np.split(a, 2, axis=dim)
        return first * sigmoid(second)

    def backward(self, grad):
        (a,) = self.saved_values()
        return (glu_backward(grad, a, self.dim),)

    def backward_graph(self, grad):
        return (_apply(GluBackwardBackward0, (grad, _linked(self)[0]), dim=self.dim),)


def glu_backward(grad, a, dim):
    first, second = np.split(a, 2, axis=dim)
    gate = sigmoid(second)
    # in the order of PyTorch's kernel: (1 - σ)·σ·a·grad, so float32 rounds as it does
    return np.concatenate([gate * grad, (1 - gate) * gate * first * grad], axis=dim)


class GluBackwardBackward0(Node):
    """glu's backward as an op: [grad_output·σ(b), grad_output·a·σ(b)(1 - σ(b))] for halves a, b."""

    formula = (
        "grad_grad_output = glu's backward of grad, its two halves added; grad_self = "
        "[grad_b·grad_output·σ′(b), grad_b·a·grad_output·σ″(b) + grad_a·grad_output·σ′(b)]"
    )

    def forward(self, grad_output, a, dim):
        self.dim = dim
        self.save(0, 1)
        return glu_backward(grad_output, a, dim)

    def backward(self, grad):
        grad_output, a = self.saved_values()
        # PyTorch's glu_double_backward_grad_output and glu_double_backward, in their order
        spread = grad * glu_backward(np.ones_like(grad_output), a, self.dim)
        spread_first, spread_second = np.split(spread, 2, axis=self.dim)
        first, second = np.split(a, 2, axis=self.dim)
        grad_first, grad_second = np.split(grad, 2, axis=self.dim)
        gate = sigmoid(second)
        closed = 1 - gate
        gate_slope = gate * closed
        gate_curve = gate_slope * closed - gate * gate_slope
        to_first = grad_second * grad_output * gate_slope
        to_second = (grad_second * first) * grad_output * gate_curve
        to_second = to_second + grad_first * grad_output * gate_slope
        return spread_first + spread_second, np.concatenate([to_first, to_second], axis=self.dim)


class PreluKernelBackward0(Node):
    """prelu: a leaky ReLU whose negative slope is a learned weight (one per channel)."""

    formula = (
        "grad_self = grad where self > 0, else grad * weight; "
        "grad_weight = grad * self where self <= 0"
    )

    def forward(self, a, weight):
        self.save(0, 1)
        return np.where(a > 0, a, a * weight)

    def backward(self, grad):
        a, weight = self.saved_values()
        positive = a > 0
        zero = np.zeros((), grad.dtype)
        grad_a = np.where(positive, grad, grad * weight) if self.needs_input_grad[0] else None
        grad_w = np.where(positive, zero, grad * a) if self.needs_input_grad[1] else None
        return grad_a, grad_w  # the engine sums grad_w back to the weight's shape

    def backward_graph(self, grad):
        saved = _linked(self)
        grad_a, grad_w = _apply(PreluKernelBackwardBackward0, (grad, saved[0], saved[1]))
        return (
            grad_a if self.needs_input_grad[0] else None,
            grad_w if self.needs_input_grad[1] else None,
        )


class PreluKernelBackwardBackward0(Node):
    """prelu's backward as an op of two outputs: the gradients of self and of the weight."""

    formula = (
        "grad_grad_output = grad_self where self >= 0, else grad_self * weight + grad_weight * "
        "self; grad_self = grad_output * grad_weight where self < 0; grad_weight = "
        "grad_output * grad_self where self < 0"
    )

    def forward(self, grad_output, a, weight):
        self.save(0, 1, 2)
        positive = a > 0
        grad_a = np.where(positive, grad_output, grad_output * weight)
        grad_w = np.where(positive, np.zeros((), grad_output.dtype), grad_output * a)
        return grad_a, grad_w

    def backward(self, grad_a, grad_w):
        grad_output, a, weight = self.saved_values()
        # PyTorch's formulas pick with self >= 0, where the forward picked with self > 0: at 0
        # the second derivatives take the positive side
        straight = a >= 0
        zero = np.zeros((), grad_a.dtype)
        to_grad_output = np.where(straight, grad_a, grad_a * weight + grad_w * a)
        to_a = np.where(straight, zero, grad_output * grad_w)
        to_weight = np.where(straight, zero, grad_output * grad_a)
        return to_grad_output, to_a, to_weight


# ***** layers *****


class ConstantPadNdBackward0(Node):
    """F.pad(mode="constant"): a border of `value` around the last dims; negative pads crop."""

    formula = "grad_self = the middle of grad (zeros where the padding cropped self)"

    def forward(self, a, widths, value):
        self.widths, self.shape = widths, a.shape
        crop = tuple(
            slice(max(-low, 0), size - max(-high, 0))
            for (low, high), size in zip(widths, a.shape, strict=True)
        )
        border = [(max(low, 0), max(high, 0)) for low, high in widths]
        return np.pad(a[crop], border, constant_values=a.dtype.type(value))

    def backward(self, grad):
        middle = tuple(
            slice(max(low, 0), grad.shape[d] - max(high, 0))
            for d, (low, high) in enumerate(self.widths)
        )
        cropped = [(max(-low, 0), max(-high, 0)) for low, high in self.widths]
        return (np.pad(grad[middle], cropped),)


class EmbeddingBackward0(Node):
    """weight[indices]: rows picked from a table; the gradient adds up in the picked rows."""

    formula = "grad_weight = zeros, with grad added to each picked row (padding_idx's row stays 0)"

    def forward(self, weight, indices, padding_idx):
        self.indices, self.padding_idx, self.rows = indices, padding_idx, weight.shape
        return weight[indices]

    # PyTorch keeps the indices, so a second backward through the freed graph fails
    has_saved = True

    def release(self) -> None:
        self.released = True

    def backward(self, grad):
        self.saved_values()
        out = np.zeros(self.rows, grad.dtype)
        np.add.at(out, self.indices, grad)  # a row picked twice gets both gradients
        if self.padding_idx >= 0:
            out[self.padding_idx] = 0
        return (out,)


class NormBackward1(LinalgVectorNormBackward0):
    """at::norm(self, p, dim, keepdim), as pairwise_distance calls it from C++; the same
    derivative as linalg.vector_norm, under the older op's name."""


# ***** attention *****


class SafeSoftmaxBackward0(SoftmaxBackward0):
    """softmax that gives 0, not nan, on a row masked out entirely (-inf everywhere)."""

    def forward(self, a, dim):
        with np.errstate(invalid="ignore"):
            result = super().forward(a, dim)
        return np.where(np.isnan(result), np.zeros((), result.dtype), result)


class ScaledDotProductFlashAttentionForCpuBackward0(Node):
    """softmax(query @ keyᵀ · scale + mask) @ value, as one fused node (4-d inputs on a CPU)."""

    formula = (
        "with P = softmax(q kᵀ·scale): grad_value = Pᵀ grad; grad_query = dS k·scale; "
        "grad_key = dSᵀ q·scale, where dS = P·(grad vᵀ - rowsum(grad vᵀ·P))"
    )

    def forward(self, q, k, v, scale, mask):
        self.scale, self.mask = scale, mask
        self.save(0, 1, 2, "result")
        return self.weights(q, k) @ v

    def weights(self, q, k):
        scores = (q @ np.swapaxes(k, -1, -2)) * q.dtype.type(self.scale)
        if self.mask is not None:
            scores = scores + self.mask
        with np.errstate(invalid="ignore"):
            shifted = np.exp(scores - scores.max(axis=-1, keepdims=True))
            p = shifted / shifted.sum(axis=-1, keepdims=True)
        return np.where(np.isnan(p), np.zeros((), p.dtype), p)

    def backward(self, grad):
        q, k, v, _ = self.saved_values()
        p = self.weights(q, k)
        grad_p = grad @ np.swapaxes(v, -1, -2)
        grad_scores = p * (grad_p - (grad_p * p).sum(axis=-1, keepdims=True))
        scale = q.dtype.type(self.scale)
        return (
            grad_scores @ k * scale,
            np.swapaxes(grad_scores, -1, -2) @ q * scale,
            np.swapaxes(p, -1, -2) @ grad,
        )


# ***** ops with a Python number, as PyTorch's composite losses record them *****


class MulBackward1(Node):
    """tensor * number inside a composite (cross_entropy's label smoothing): mul.Scalar."""

    formula = "grad_self = grad * other"

    def forward(self, a, other):
        self.other = other
        return a * a.dtype.type(other)

    def backward(self, grad):
        return (grad * grad.dtype.type(self.other),)

    def backward_graph(self, grad):
        return (_scaled(grad, self.other),)


class AddBackward1(Node):
    """tensor + number inside a composite (smoothed probability targets): add.Scalar."""

    formula = "grad_self = grad"

    def forward(self, a, other):
        return a + a.dtype.type(other)

    def backward(self, grad):
        return (grad,)

    def backward_graph(self, grad):
        return (grad,)


class SubBackward1(Node):
    """tensor - number inside a composite (cosine_embedding_loss's margin): sub.Scalar."""

    formula = "grad_self = grad"

    def forward(self, a, other):
        return a - a.dtype.type(other)

    def backward(self, grad):
        return (grad,)

    def backward_graph(self, grad):
        return (grad,)


class DivBackward1(Node):
    """tensor / number inside a composite (cross_entropy's mean): div.Scalar."""

    formula = "grad_self = grad / other"

    def forward(self, a, other):
        self.other = other
        return a / a.dtype.type(other)

    def backward(self, grad):
        return (grad / grad.dtype.type(self.other),)

    def backward_graph(self, grad):
        return (_apply(DivBackward1, (grad,), other=self.other),)


# ***** matrix products (more) *****


class BmmBackward0(Node):
    """A batch of matrix products: out[i] = self[i] @ mat2[i]."""

    formula = "grad_self = grad @ mat2ᵀ; grad_mat2 = selfᵀ @ grad (batch by batch)"

    def forward(self, a, b):
        if self.needs_input_grad[0]:
            self.save(1)
        if self.needs_input_grad[1]:
            self.save(0)
        return numerics.bmm_like_torch(a, b)

    def backward(self, grad):
        saved = iter(self.saved_values())
        b = next(saved) if self.needs_input_grad[0] else None
        a = next(saved) if self.needs_input_grad[1] else None
        return (
            numerics.bmm_like_torch(grad, b.swapaxes(1, 2)) if b is not None else None,
            numerics.bmm_like_torch(a.swapaxes(1, 2), grad) if a is not None else None,
        )

    def backward_graph(self, grad):
        saved = _linked(self)
        return (
            _apply(BmmBackward0, (grad, saved[1].transpose(1, 2))) if 1 in saved else None,
            _apply(BmmBackward0, (saved[0].transpose(1, 2), grad)) if 0 in saved else None,
        )


# ***** normalisation layers *****


class NativeLayerNormBackward0(Node):
    """nn.LayerNorm: each sample normalised over its last dims, then scaled and shifted."""

    formula = (
        "grad_input = rstd·(g - mean(g) - x̂·mean(g·x̂)) with g = grad·weight over the normalised "
        "dims; grad_weight = sum(grad·x̂); grad_bias = sum(grad)"
    )

    def forward(self, x, weight, bias, normalized_shape: tuple, eps: float):
        self.save(0, 1, 2)  # PyTorch also keeps the mean and 1/std it worked out
        self.normalized_shape = normalized_shape
        # the kernel reads the samples as rows of the normalised elements (engine/moments.py)
        rows = _sample_rows(x, normalized_shape)
        weight, bias = (None if p is None else p.reshape(-1) for p in (weight, bias))
        if not rows.size:
            self.mean = self.rstd = np.zeros(len(rows), x.dtype)
            return x.copy()
        out, self.mean, self.rstd = moments.layer_norm(rows, weight, bias, eps)
        return out.reshape(x.shape)

    def backward(self, grad):
        x, weight, _ = self.saved_values()
        shape = self.normalized_shape
        rows = _sample_rows(x, shape)
        if not rows.size:
            return (
                x * 0,
                None if weight is None else np.zeros(shape, x.dtype),
                np.zeros(shape, x.dtype),
            )
        grads = _sample_rows(grad.astype(x.dtype, copy=False), shape)
        flat = None if weight is None else weight.reshape(-1)
        needs = tuple(self.needs_input_grad)
        grad_x, grad_w, grad_b = moments.layer_norm_backward(
            grads, rows, self.mean, self.rstd, flat, needs
        )
        return (
            None if grad_x is None else grad_x.reshape(x.shape),
            None if grad_w is None else grad_w.reshape(shape),
            None if grad_b is None else grad_b.reshape(shape),
        )


def _sample_rows(x: np.ndarray, normalized_shape: tuple) -> np.ndarray:
    """x as C-contiguous rows of the normalised elements, one per sample."""
    return np.ascontiguousarray(x).reshape(-1, math.prod(normalized_shape))


class NativeBatchNormBackward0(Node):
    """nn.BatchNorm1d: each channel normalised over the batch (training: the batch's own
    statistics, which it also folds into the running ones; eval: the running statistics)."""

    formula = (
        "training: grad_input = invstd·(g - mean(g) - x̂·mean(g·x̂)) with g = grad·weight over "
        "the batch; eval: grad_input = grad·weight·invstd; grad_weight = sum(grad·x̂); "
        "grad_bias = sum(grad)"
    )

    def forward(self, x, weight, bias, running_mean, running_var, training, eps, batch_stats):
        self.save(0, 1)  # and the batch's mean and 1/std, as PyTorch does
        x = np.ascontiguousarray(x)
        if training:
            mean, var_sum = moments.batch_norm_stats(x)
            count = x.size // x.shape[1]
            invstd = moments.training_invstd(var_sum, count, eps)
            batch_stats.append((mean, var_sum, count))  # F.batch_norm folds them in afterwards
            self.mean, self.invstd = mean, invstd
        else:
            mean = running_mean
            invstd = moments.eval_invstd(running_var, eps, backward=False)
            # the backward works 1/std out again, adding eps in double
            self.mean, self.invstd = mean, moments.eval_invstd(running_var, eps, backward=True)
        self.training = training
        return moments.batch_norm(x, weight, bias, mean, invstd)

    def backward(self, grad):
        x, weight = self.saved_values()
        grads = np.ascontiguousarray(grad, dtype=x.dtype)
        grad_x, grad_w, grad_b = moments.batch_norm_backward(
            grads, np.ascontiguousarray(x), weight, self.mean, self.invstd, self.training
        )
        needs = self.needs_input_grad
        return (
            grad_x if needs[0] else None,
            grad_w if needs[1] else None,
            grad_b if needs[2] else None,
        )


# ***** activations' backwards recorded as ops (create_graph=True) *****


class _ActivationBackwardBackward(Node):
    """An activation's backward as an op: grad_output * f′(self), recorded by a create_graph
    pass. `first` is the activation's node, which knows f′ and f″ (and its settings)."""

    def forward(self, grad_output, a, first):
        self.first = first
        if first.second_derivative is None:
            self.save(1)  # linear in grad_output: only self's pieces are needed
        else:
            self.save(0, 1)
        return first.first_derivative(a, grad_output)

    def backward(self, grad):
        saved = self.saved_values()
        a = saved[-1]
        if self.first.second_derivative is None:
            return self.first.first_derivative(a, grad), np.zeros_like(grad)
        curvature = grad * saved[0] * self.first.second_derivative(a)
        return self.first.first_derivative(a, grad), curvature.astype(grad.dtype, copy=False)


class _LinearPiecesBackwardBackward(_ActivationBackwardBackward):
    """For a piecewise-linear activation: its backward is linear in grad_output, and self
    only picks the pieces, so it can be recorded again (a third derivative is zero)."""

    def backward_graph(self, grad):
        a = _linked(self)[1]
        return _apply(type(self), (grad, a), first=self.first), _zeros_like(grad)


class LeakyReluBackwardBackward0(_LinearPiecesBackwardBackward):
    formula = "grad_grad_output = grad where self > 0, else grad * negative_slope; grad_self = 0"


class HardtanhBackwardBackward0(_LinearPiecesBackwardBackward):
    formula = "grad_grad_output = grad where min_val < self < max_val, else 0; grad_self = 0"


class EluBackwardBackward0(_ActivationBackwardBackward):
    formula = (
        "grad_grad_output = elu's backward of grad; grad_self = grad * grad_output * elu″(self)"
    )


class GeluBackwardBackward0(_ActivationBackwardBackward):
    formula = (
        "grad_grad_output = gelu's backward of grad; grad_self = grad * grad_output * gelu″(self)"
    )


class SoftplusBackwardBackward0(_ActivationBackwardBackward):
    formula = (
        "grad_grad_output = softplus's backward of grad; "
        "grad_self = grad * grad_output * β·σ(βx)(1 - σ(βx))"
    )


class HardswishBackwardBackward0(_ActivationBackwardBackward):
    formula = (
        "grad_grad_output = hardswish's backward of grad; "
        "grad_self = grad * grad_output / 3 where -3 < self < 3, else 0"
    )

    def backward(self, grad):
        grad_output, a = self.saved_values()
        # PyTorch divides by 3 rather than multiplying by a third: the same bits only that way
        curved = (a > -3) & (a < 3)
        curvature = np.where(curved, grad * grad_output / grad.dtype.type(3), grad.dtype.type(0))
        return self.first.first_derivative(a, grad), curvature


# ***** indexing's backward recorded as an op (create_graph=True) *****


class IndexPutImplBackward0(Node):
    """t[index tensors]'s backward as an op: zeros, with the gradient added at the indices
    (PyTorch's _index_put_impl_ with accumulate=True)."""

    formula = "grad_self = grad; grad_values = grad at the indices"

    def forward(self, a, values, key):
        self.key = key
        out = a.copy()
        np.add.at(out, key, values)  # repeated indices add up
        return out

    def backward(self, grad):
        return grad, grad[self.key]  # summed back to the values' shape by the engine

    def backward_graph(self, grad):
        return grad, _apply(IndexBackward0, (grad,), key=self.key)


class SoftshrinkBackwardBackward0(_LinearPiecesBackwardBackward):
    formula = "grad_grad_output = grad where |self| > lambd, else 0; grad_self = 0"


class HardshrinkBackwardBackward0(_LinearPiecesBackwardBackward):
    formula = "grad_grad_output = grad where |self| > lambd, else 0; grad_self = 0"


SoftshrinkBackward0.backward_op = SoftshrinkBackwardBackward0
HardshrinkBackward0.backward_op = HardshrinkBackwardBackward0
