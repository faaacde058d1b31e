"""Where the forward and backward passes live: one node class per PyTorch grad_fn.

Each class computes its result on numpy arrays in `forward` (asking to `save` what its
derivative needs, exactly what PyTorch saves) and, right beside it, sends the output's gradient
back to its inputs in `backward`. Broadcasting is undone by the backward engine, not here.
"""

from __future__ import annotations

import numpy as np

from engine.graph import Node

# ***** pointwise, two inputs *****


class AddBackward0(Node):
    formula = "grad_self = grad; grad_other = alpha * grad"

    def forward(self, a, b, alpha=1):
        self.alpha = alpha
        return a + b if alpha == 1 else a + alpha * b

    def backward(self, grad):
        return grad, grad if self.alpha == 1 else grad * self.alpha


class SubBackward0(Node):
    formula = "grad_self = grad; grad_other = -alpha * grad"

    def forward(self, a, b, alpha=1):
        self.alpha = alpha
        return a - b if alpha == 1 else a - alpha * b

    def backward(self, grad):
        return grad, -grad if self.alpha == 1 else -grad * self.alpha


class RsubBackward1(Node):
    formula = "grad_self = -grad  (other - self)"

    def forward(self, a, other):
        return other - a

    def backward(self, grad):
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
        grad_b = -grad * saved[0] / (b * b) if self.needs_input_grad[1] else None
        return grad_a, grad_b


class PowBackward0(Node):
    """tensor ** number."""

    formula = "grad_self = grad * exponent * self^(exponent - 1)"

    def forward(self, a, exponent):
        self.exponent = exponent
        self.save(0)
        return a**exponent

    def backward(self, grad):
        (a,) = self.saved_values()
        if self.exponent == 0:
            return (np.zeros_like(grad),)
        return (grad * self.exponent * a ** (self.exponent - 1),)


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
        return a**b

    def backward(self, grad):
        a, b, *result = self.saved_values()
        grad_a = grad * b * a ** (b - 1) if self.needs_input_grad[0] else None
        grad_b = None
        if self.needs_input_grad[1]:
            with np.errstate(divide="ignore", invalid="ignore"):
                grad_b = grad * np.where((a == 0) & (b >= 0), 0, result[0] * np.log(a))
        return grad_a, grad_b


class PowBackward2(Node):
    """number ** tensor."""

    formula = "grad_exponent = grad * result * log(self)"

    def forward(self, exponent, base):
        self.base = base
        self.save("result")
        return base**exponent

    def backward(self, grad):
        (result,) = self.saved_values()
        if self.base == 0:
            return (np.zeros_like(grad),)
        return (grad * result * np.log(self.base).astype(result.dtype),)


class RemainderBackward0(Node):
    """tensor % number."""

    formula = "grad_self = grad"

    def forward(self, a, other):
        return np.mod(a, other)  # the result takes the divisor's sign, as torch.remainder's does

    def backward(self, grad):
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


class MinimumBackward0(Node):
    formula = "grad goes to the smaller input (split in half on ties)"

    def forward(self, a, b):
        self.save(0, 1)
        return np.minimum(a, b)

    def backward(self, grad):
        a, b = self.saved_values()
        return _pick_larger(grad, -a, -b), _pick_larger(grad, -b, -a)


def _pick_larger(grad, mine, theirs):
    # where(), not a multiply by the mask: PyTorch's zeros are +0, even under a negative grad
    return np.where(mine == theirs, grad / 2, np.where(mine > theirs, grad, 0))


# ***** pointwise, one input *****


class NegBackward0(Node):
    formula = "grad_self = -grad"

    def forward(self, a):
        return -a

    def backward(self, grad):
        return (-grad,)


class ExpBackward0(Node):
    formula = "grad_self = grad * result  (d/dx eˣ = eˣ)"

    def forward(self, a):
        self.save("result")
        return np.exp(a)

    def backward(self, grad):
        (result,) = self.saved_values()
        return (grad * result,)


class LogBackward0(Node):
    formula = "grad_self = grad / self"

    def forward(self, a):
        self.save(0)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(a)

    def backward(self, grad):
        (a,) = self.saved_values()
        with np.errstate(divide="ignore", invalid="ignore"):
            return (grad / a,)


class SinBackward0(Node):
    formula = "grad_self = grad * cos(self)"

    def forward(self, a):
        self.save(0)
        return np.sin(a)

    def backward(self, grad):
        (a,) = self.saved_values()
        return (grad * np.cos(a),)


class CosBackward0(Node):
    formula = "grad_self = grad * -sin(self)"

    def forward(self, a):
        self.save(0)
        return np.cos(a)

    def backward(self, grad):
        (a,) = self.saved_values()
        return (grad * -np.sin(a),)


class TanhBackward0(Node):
    formula = "grad_self = grad * (1 - result²)"

    def forward(self, a):
        self.save("result")
        return np.tanh(a)

    def backward(self, grad):
        (result,) = self.saved_values()
        return (grad * (1 - result * result),)


class SigmoidBackward0(Node):
    formula = "grad_self = grad * result * (1 - result)"

    def forward(self, a):
        self.save("result")
        return sigmoid(a)

    def backward(self, grad):
        (result,) = self.saved_values()
        return (grad * (1 - result) * result,)


def sigmoid(a: np.ndarray) -> np.ndarray:
    # PyTorch's formula as it stands: for very negative x, e^-x overflows to inf and the result
    # is exactly 0 (not the tiny number a "stable" formula would give), as in PyTorch
    with np.errstate(over="ignore"):
        return (1 / (1 + np.exp(-a))).astype(a.dtype, copy=False)


class ReluBackward0(Node):
    formula = "grad_self = grad where result > 0, else 0"

    def forward(self, a):
        self.save("result")
        return np.maximum(a, 0).astype(a.dtype, copy=False)

    def backward(self, grad):
        (result,) = self.saved_values()
        return (np.where(result > 0, grad, 0),)  # +0 where cut off, as PyTorch's where()


class SqrtBackward0(Node):
    formula = "grad_self = grad / (2 * result)"

    def forward(self, a):
        self.save("result")
        with np.errstate(invalid="ignore"):
            return np.sqrt(a)

    def backward(self, grad):
        (result,) = self.saved_values()
        with np.errstate(divide="ignore", invalid="ignore"):
            return (grad / (2 * result),)


class AbsBackward0(Node):
    formula = "grad_self = grad * sign(self)"

    def forward(self, a):
        self.save(0)
        return np.abs(a)

    def backward(self, grad):
        (a,) = self.saved_values()
        return (grad * np.sign(a),)


class ReciprocalBackward0(Node):
    formula = "grad_self = -grad * result²"

    def forward(self, a):
        self.save("result")
        with np.errstate(divide="ignore"):
            return 1 / a

    def backward(self, grad):
        (result,) = self.saved_values()
        return (-grad * result * result,)


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


class ToCopyBackward0(Node):
    formula = "grad_self = grad, converted back to self's dtype"

    def forward(self, a, dtype):
        return a.astype(dtype)

    def backward(self, grad):
        return (grad,)


class WhereBackward0(Node):
    formula = "grad_self = grad where condition, else 0; grad_other = grad elsewhere"

    def forward(self, a, b, condition):
        self.condition = condition
        return np.where(condition, a, b)

    def backward(self, grad):
        zero = np.zeros((), grad.dtype)
        return np.where(self.condition, grad, zero), np.where(self.condition, zero, grad)


# ***** reductions *****


class SumBackward0(Node):
    formula = "grad_self = grad, copied to every element"

    def forward(self, a):
        self.shape = a.shape
        return a.sum(dtype=_sum_dtype(a))

    def backward(self, grad):
        return (np.broadcast_to(grad, self.shape),)


class SumBackward1(Node):
    formula = "grad_self = grad, copied along the summed dims"

    def forward(self, a, dim, keepdim):
        self.shape, self.dim, self.keepdim = a.shape, dim, keepdim
        return a.sum(axis=dim, keepdims=keepdim, dtype=_sum_dtype(a))

    def backward(self, grad):
        if not self.keepdim:
            grad = np.expand_dims(grad, self.dim)
        return (np.broadcast_to(grad, self.shape),)


def _sum_dtype(a):
    # integer and bool sums are int64 in PyTorch
    return np.int64 if a.dtype.kind in "biu" else a.dtype


class MeanBackward0(Node):
    formula = "grad_self = grad / n, for each of the n elements"

    def forward(self, a):
        self.shape = a.shape
        return a.mean(dtype=a.dtype)

    def backward(self, grad):
        return (np.broadcast_to(grad / max(np.prod(self.shape), 1), self.shape),)


class MeanBackward1(Node):
    formula = "grad_self = grad / n, copied along the averaged dims"

    def forward(self, a, dim, keepdim):
        self.shape, self.dim, self.keepdim = a.shape, dim, keepdim
        return a.mean(axis=dim, keepdims=keepdim, dtype=a.dtype)

    def backward(self, grad):
        count = np.prod([self.shape[d] for d in self.dim])
        if not self.keepdim:
            grad = np.expand_dims(grad, self.dim)
        return (np.broadcast_to(grad / count, self.shape),)


class MaxBackward1(Node):
    """max() of the whole tensor."""

    formula = "grad_self = grad shared evenly among the elements equal to the max"

    reduce = staticmethod(np.max)

    def forward(self, a):
        self.save(0, "result")
        return self.reduce(a)

    def backward(self, grad):
        a, result = self.saved_values()
        hits = a == result
        return (np.where(hits, grad / hits.sum(), 0).astype(grad.dtype),)


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


class AliasBackward0(Node):
    """x[...] and x[:, :]: a new tensor on the same memory, recorded though nothing changed."""

    formula = "grad_self = grad"
    is_view = True

    def forward(self, a):
        return a.view()

    def backward(self, grad):
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


class PermuteBackward0(Node):
    formula = "grad_self = grad with its dims put back"
    is_view = True

    def forward(self, a, dims):
        self.dims = dims
        return a.transpose(dims)

    def backward(self, grad):
        return (grad.transpose(np.argsort(self.dims)),)


class TransposeBackward0(Node):
    formula = "grad_self = grad with the two dims swapped back"
    is_view = True

    def forward(self, a, dim0, dim1):
        self.dim0, self.dim1 = dim0, dim1
        return np.swapaxes(a, dim0, dim1) if a.ndim else a.view()

    def backward(self, grad):
        return (np.swapaxes(grad, self.dim0, self.dim1) if grad.ndim else grad,)


class SqueezeBackward0(Node):
    """squeeze() of every size-1 dim."""

    formula = "grad_self = grad with the size-1 dims put back"
    is_view = True

    def forward(self, a, dims=None):
        self.shape = a.shape
        return a.squeeze() if dims is None else a.squeeze(dims)

    def backward(self, grad):
        return (grad.reshape(self.shape),)


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


class ExpandBackward0(Node):
    formula = "grad_self = grad summed over the expanded dims"
    is_view = True

    def forward(self, a, shape):
        self.shape = a.shape
        return np.broadcast_to(a, shape)

    def backward(self, grad):
        return (grad,)  # the engine sums it back to self's shape


class SelectBackward0(Node):
    formula = "grad_self = zeros, with grad at the selected index"
    is_view = True

    def forward(self, a, dim, index):
        self.shape, self.key = a.shape, (slice(None),) * dim + (index, Ellipsis)
        return a[self.key]

    def backward(self, grad):
        out = np.zeros(self.shape, grad.dtype)
        out[self.key] = grad
        return (out,)


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


class UnbindBackward0(Node):
    """One node, one output per slice: what iterating over a tensor records."""

    formula = "grad_self = the output grads stacked back together"

    def forward(self, a, dim):
        self.dim = dim
        return tuple(np.moveaxis(a, dim, 0))

    def backward(self, *grads):
        return (np.stack(grads, axis=self.dim),)


class StackBackward0(Node):
    formula = "grad_i = slice i of grad"

    def forward(self, *arrays, dim):
        self.dim = dim
        return np.stack(arrays, axis=dim)

    def backward(self, grad):
        return tuple(np.moveaxis(grad, self.dim, 0))


class CatBackward0(Node):
    formula = "grad_i = the part of grad that came from input i"

    def forward(self, *arrays, dim):
        self.dim = dim
        self.splits = np.cumsum([a.shape[dim] for a in arrays])[:-1]
        return np.concatenate(arrays, axis=dim)

    def backward(self, grad):
        return tuple(np.split(grad, self.splits, axis=self.dim))


# ***** linear algebra *****


class MmBackward0(Node):
    formula = "grad_self = grad @ mat2ᵀ; grad_mat2 = selfᵀ @ grad"

    def forward(self, a, b):
        if self.needs_input_grad[0]:
            self.save(1)
        if self.needs_input_grad[1]:
            self.save(0)
        return a @ b

    def backward(self, grad):
        saved = iter(self.saved_values())
        b = next(saved) if self.needs_input_grad[0] else None
        a = next(saved) if self.needs_input_grad[1] else None
        return (
            grad @ b.T if b is not None else None,
            a.T @ grad if a is not None else None,
        )


class MvBackward0(MmBackward0):
    formula = "grad_self = outer(grad, vec); grad_vec = selfᵀ @ grad"

    def backward(self, grad):
        saved = iter(self.saved_values())
        v = next(saved) if self.needs_input_grad[0] else None
        m = next(saved) if self.needs_input_grad[1] else None
        return (
            np.outer(grad, v) if v is not None else None,
            m.T @ grad if m is not None else None,
        )


class DotBackward0(MmBackward0):
    formula = "grad_self = grad * tensor; grad_tensor = grad * self"

    def backward(self, grad):
        saved = iter(self.saved_values())
        b = next(saved) if self.needs_input_grad[0] else None
        a = next(saved) if self.needs_input_grad[1] else None
        return (grad * b if b is not None else None, grad * a if a is not None else None)


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
        return bias + a @ b

    def backward(self, grad):
        saved = iter(self.saved_values())
        b = next(saved) if self.needs_input_grad[1] else None
        a = next(saved) if self.needs_input_grad[2] else None
        return (
            grad,
            grad @ b.T if b is not None else None,
            a.T @ grad if a is not None else None,
        )


# ***** softmax and losses *****


class SoftmaxBackward0(Node):
    formula = "grad_self = result * (grad - sum(grad * result))"

    def forward(self, a, dim):
        self.dim = dim
        self.save("result")
        shifted = np.exp(a - a.max(axis=dim, keepdims=True))
        total = shifted.sum(axis=dim, keepdims=True)
        # PyTorch's CPU kernel multiplies by 1/sum along the last dim (divides along others);
        # matching it keeps cancellations in the backward exact, as PyTorch's are
        return shifted * (1 / total) if dim == a.ndim - 1 else shifted / total

    def backward(self, grad):
        (result,) = self.saved_values()
        return (result * (grad - (grad * result).sum(axis=self.dim, keepdims=True)),)


class LogSoftmaxBackward0(Node):
    formula = "grad_self = grad - softmax(self) * sum(grad)"

    def forward(self, a, dim):
        self.dim = dim
        self.save("result")
        return log_softmax(a, dim)

    def backward(self, grad):
        (result,) = self.saved_values()
        return (grad - np.exp(result) * grad.sum(axis=self.dim, keepdims=True),)


def log_softmax(a: np.ndarray, dim: int) -> np.ndarray:
    shifted = a - a.max(axis=dim, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))


class MseLossBackward0(Node):
    formula = "grad_self = grad * 2 * (self - target) / n  (n only for reduction='mean')"

    def forward(self, a, target, reduction):
        self.reduction = reduction
        self.save(0, 1)
        squared = (a - target) ** 2
        if reduction == "mean":
            return squared.mean(dtype=squared.dtype)
        return squared.sum() if reduction == "sum" else squared

    def backward(self, grad):
        a, target = self.saved_values()
        diff = 2 * (a - target)
        if self.reduction == "mean":
            diff = diff / max(diff.size, 1)
        return grad * diff, -grad * diff


class NllLossBackward0(Node):
    """-log_probs[target], averaged; cross_entropy is log_softmax followed by this."""

    formula = "grad_self = -grad / n at each target class, 0 elsewhere"

    def forward(self, log_probs, target, reduction):
        self.reduction, self.target = reduction, target
        self.save(0)  # PyTorch keeps the input, the targets and the total weight
        self.shape = log_probs.shape
        batched = log_probs if log_probs.ndim == 2 else log_probs[None]
        targets = np.atleast_1d(target)
        picked = -batched[np.arange(len(targets)), targets]
        if reduction == "mean":
            return picked.mean(dtype=picked.dtype)
        if reduction == "sum":
            return picked.sum()
        return picked if log_probs.ndim == 2 else picked[0]

    def backward(self, grad):
        self.saved_values()  # fails as PyTorch does once the graph is freed
        targets = np.atleast_1d(self.target)
        out = np.zeros((len(targets), self.shape[-1]), grad.dtype)
        scale = grad / len(targets) if self.reduction == "mean" else grad
        out[np.arange(len(targets)), targets] = -np.broadcast_to(scale, (len(targets),))
        return (out.reshape(self.shape),)


# ***** in-place only *****


class ZeroBackward0(Node):
    formula = "grad_self = 0 (the old values no longer matter)"

    def forward(self, a):
        return np.zeros_like(a)

    def backward(self, grad):
        return (np.zeros_like(grad),)


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


# ***** reductions and scans (more) *****


# ***** shapes and indexing (more) *****


# ***** elementwise (more) *****


# ***** losses and nn.functional (more) *****


# ***** matrix products (more) *****
