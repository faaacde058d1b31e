"""Elementwise functions of one tensor: exp, log, the activations, clamp, softmax; clone."""

from __future__ import annotations

from engine import functions as fn
from engine import tracing
from engine.promotion import floating
from engine.record import apply
from engine.shape import wrap_dim
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

    def clamp(self, min=None, max=None):
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        return apply(fn.ClampBackward1, (self,), min=min, max=max)

    clip = clamp

    def clamp_min(self, min):
        return apply(fn.ClampMinBackward0, (self,), min=min)

    def clamp_max(self, max):
        return apply(fn.ClampMaxBackward0, (self,), max=max)

    def softmax(self, dim):
        dim = wrap_dim(dim, self.ndim)
        return apply(fn.SoftmaxBackward0, (self,), arrays=floating(self), dim=dim)

    def log_softmax(self, dim):
        dim = wrap_dim(dim, self.ndim)
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
