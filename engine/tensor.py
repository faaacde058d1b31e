"""Tensor: a numpy array plus the autograd bookkeeping PyTorch keeps beside it."""

from __future__ import annotations

import numbers
import warnings
import weakref

import numpy as np

from engine import dtypes, tracing
from engine import functions as fn
from engine.grad_mode import state as grad_state
from engine.graph import AccumulateGrad, Node, SavedTensor, Version
from engine.printing import tensor_repr
from engine.return_types import ReturnTypes
from engine.shape import Size, broadcast_shapes, parse_shape, wrap_dim
from engine.unsupported import UnsupportedByGradtrace, missing_attribute

Number = numbers.Number


class Tensor:
    """A multi-dimensional array that can record how it was made, so gradients can flow back."""

    __slots__ = (
        "_array",
        "_requires_grad",
        "_grad",
        "grad_fn",
        "_output_nr",
        "_version_counter",
        "_base",
        "_retains_grad",
        "_accumulator",
        "_trace_id",
        "__weakref__",
    )

    def __init__(self, *args, **kwargs) -> None:
        raise TypeError("create tensors with torch.tensor(...), torch.zeros(...) and friends")

    @classmethod
    def _wrap(cls, array, requires_grad: bool = False) -> Tensor:
        t = object.__new__(cls)
        t._array = array if type(array) is np.ndarray else np.asarray(array)
        t._requires_grad = requires_grad
        t._grad = None
        t.grad_fn = None
        t._output_nr = 0
        t._version_counter = Version()
        t._base = None
        t._retains_grad = False
        t._accumulator = None
        t._trace_id = None
        return t

    # ***** what a tensor is *****

    @property
    def dtype(self) -> dtypes.dtype:
        return dtypes.from_numpy(self._array.dtype)

    @property
    def shape(self) -> Size:
        return Size(self._array.shape)

    def size(self, dim: int | None = None):
        if dim is None:
            return Size(self._array.shape)
        return self._array.shape[wrap_dim(dim, self._array.ndim)]

    def dim(self) -> int:
        return self._array.ndim

    ndim = property(dim)

    def numel(self) -> int:
        return int(self._array.size)

    nelement = numel

    def is_floating_point(self) -> bool:
        return self._array.dtype.kind == "f"

    @property
    def device(self) -> str:
        return "cpu"

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def _version(self) -> int:
        return self._version_counter.value

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        if self.grad_fn is not None:
            hint = (
                ""
                if flag
                else " If you want to use a computed variable in a subgraph that doesn't require "
                "differentiation use var_no_grad = var.detach()."
            )
            raise RuntimeError(f"you can only change requires_grad flags of leaf variables.{hint}")
        if flag and not self.is_floating_point():
            raise RuntimeError(
                "only Tensors of floating point and complex dtype can require gradients"
            )
        self._requires_grad = bool(flag)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if requires_grad and not self.is_floating_point():
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self.requires_grad = requires_grad
        return self

    @property
    def grad(self) -> Tensor | None:
        if self.grad_fn is not None and not self._retains_grad:
            warnings.warn(NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None and value.shape != self.shape:
            raise RuntimeError(
                f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of "
                f"size '{list(self.shape)}'. Please ensure that the gradient and the tensor are "
                "the same size"
            )
        changed = value is not self._grad
        self._grad = value
        if changed and tracing.current is not None:
            tracing.current.on_grad_set(self)

    @grad.deleter
    def grad(self) -> None:
        # as in PyTorch, `del x.grad` leaves .grad as None
        self.grad = None

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in .grad when backward passes through it."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return
        self._retains_grad = True
        self.grad_fn.retained = [*self.grad_fn.retained, weakref.ref(self)]
        if tracing.current is not None:
            tracing.current.on_retain_grad(self)

    @property
    def data(self) -> Tensor:
        """The same storage, cut off from the graph and from in-place checks."""
        out = Tensor._wrap(self._array)
        if tracing.current is not None:
            tracing.current.on_tensor(out, "data", (self,))
        return out

    @data.setter
    def data(self, value: Tensor) -> None:
        swapped = value._array is not self._array  # `w.data -= g` stores back the same memory
        self._array = value._array
        if swapped and tracing.current is not None:
            tracing.current.on_data_set(self, value)

    @property
    def T(self) -> Tensor:  # noqa: N802 - torch's name
        return _apply(fn.PermuteBackward0, (self,), dims=tuple(reversed(range(self.ndim))))

    @property
    def mT(self) -> Tensor:  # noqa: N802
        return self.transpose(-2, -1)

    # ***** printing and conversion *****

    def __repr__(self) -> str:
        # the class name, as PyTorch prints it: name() differs for C++ nodes (CopyBackwards)
        grad_fn = type(self.grad_fn).__name__ if self.grad_fn is not None else None
        return tensor_repr(
            self._array,
            self.dtype.name,
            requires_grad=self._requires_grad and grad_fn is None,
            grad_fn=grad_fn,
        )

    def __format__(self, spec: str) -> str:
        if self._array.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def item(self):
        if self._array.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._array.size} elements cannot be converted to Scalar"
            )
        return self._array.reshape(()).item()

    def tolist(self):
        return self._array.tolist()

    def numpy(self) -> np.ndarray:
        if self._requires_grad:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. "
                "Use tensor.detach().numpy() instead."
            )
        if tracing.current is not None:
            tracing.current.on_numpy(self)  # writes into the array change this tensor
        return self._array

    def __float__(self) -> float:
        return float(self._scalar_for("float"))

    def __int__(self) -> int:
        return int(self._scalar_for("int"))

    def __index__(self) -> int:
        if self._array.dtype.kind not in "iub" or self._array.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._array.reshape(()).item())

    def __bool__(self) -> bool:
        if self._array.size != 1:
            raise RuntimeError(
                "Boolean value of Tensor with more than one value is ambiguous"
                if self._array.size
                else "Boolean value of Tensor with no values is ambiguous"
            )
        return bool(self._array.reshape(()).item())

    def _scalar_for(self, kind: str):
        if self._array.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self._array.reshape(()).item()

    def __len__(self) -> int:
        if self._array.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._array.shape[0]

    def __iter__(self):
        if self._array.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self) -> int:
        return id(self)

    def __array__(self, dtype=None, copy=None):
        if self._requires_grad:
            return self.numpy()  # raises PyTorch's message
        return self._array if dtype is None else self._array.astype(dtype)

    def __getattr__(self, name: str):
        raise missing_attribute("Tensor", name)

    # ***** conversions between dtypes *****

    def to(self, *args, **kwargs) -> Tensor:
        target = kwargs.get("dtype")
        for arg in args:
            if isinstance(arg, dtypes.dtype):
                target = arg
            elif isinstance(arg, Tensor):
                target = arg.dtype
            elif arg not in ("cpu",):
                raise UnsupportedByGradtrace(
                    f"Tensor.to({arg!r}) is not supported by gradtrace's engine: "
                    "everything runs on the CPU"
                )
        if target is None or target.np == self._array.dtype:
            return self
        if self._requires_grad and not target.is_floating_point:
            # integers and bools cannot carry gradients, so PyTorch records no grad_fn
            return _record_plain(self._array.astype(target.np), "to")
        return _apply(fn.ToCopyBackward0, (self,), dtype=target.np)

    def float(self) -> Tensor:
        return self.to(dtypes.float32)

    def double(self) -> Tensor:
        return self.to(dtypes.float64)

    def long(self) -> Tensor:
        return self.to(dtypes.int64)

    def int(self) -> Tensor:
        return self.to(dtypes.int32)

    def bool(self) -> Tensor:
        return self.to(dtypes.bool_)

    def type(self, dtype=None):
        if dtype is None:
            return {
                "float32": "torch.FloatTensor",
                "float64": "torch.DoubleTensor",
                "int64": "torch.LongTensor",
                "int32": "torch.IntTensor",
                "bool": "torch.BoolTensor",
            }[self.dtype.name]
        return self.to(dtype)

    def cpu(self) -> Tensor:
        return self

    # ***** arithmetic *****

    def __add__(self, other):
        return _binary(fn.AddBackward0, self, other)

    __radd__ = __add__

    def add(self, other, *, alpha=1):
        return _binary(fn.AddBackward0, self, other, alpha=alpha)

    def __sub__(self, other):
        return _binary(fn.SubBackward0, self, other)

    def sub(self, other, *, alpha=1):
        return _binary(fn.SubBackward0, self, other, alpha=alpha)

    def __rsub__(self, other):
        array, other = _cast_scalar(self, other)
        return _apply(fn.RsubBackward1, (self,), arrays=(array,), other=other)

    def __mul__(self, other):
        return _binary(fn.MulBackward0, self, other)

    __rmul__ = mul = __mul__

    def __truediv__(self, other):
        return _binary(fn.DivBackward0, self, other, floating=True)

    div = __truediv__

    def __rtruediv__(self, other):
        return self.reciprocal() * other

    def __mod__(self, other):
        if isinstance(other, Tensor):
            return _binary(fn.RemainderBackward1, self, other)
        _check_number(other, "%")
        array, other = _cast_scalar(self, other)
        return _apply(fn.RemainderBackward0, (self,), arrays=(array,), other=other)

    remainder = __mod__

    def __floordiv__(self, other):
        if grad_state.enabled and (self._requires_grad or getattr(other, "_requires_grad", False)):
            raise UnsupportedByGradtrace(
                "floor division (//) of a tensor that requires grad is not supported by "
                "gradtrace's engine (PyTorch has no derivative for it either)"
            )
        return _binary(fn.FloorDivide, self, other)

    floor_divide = __floordiv__

    def __pow__(self, exponent):
        if isinstance(exponent, Tensor):
            return _binary(fn.PowBackward1, self, exponent)
        _check_number(exponent, "** or pow()")
        array, exponent = _cast_scalar(self, exponent)
        if array.dtype.kind in "iu" and exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return _apply(fn.PowBackward0, (self,), arrays=(array,), exponent=exponent)

    pow = __pow__

    def __rpow__(self, base):
        _check_number(base, "pow")
        array, base = _cast_scalar(self, base)
        return _apply(fn.PowBackward2, (self,), arrays=(array,), base=base)

    def __neg__(self):
        return _apply(fn.NegBackward0, (self,))

    neg = __neg__

    def __pos__(self):
        return self

    def __abs__(self):
        return _apply(fn.AbsBackward0, (self,))

    abs = __abs__

    def __matmul__(self, other):
        return matmul(self, other)

    matmul = __matmul__

    def __rmatmul__(self, other):
        return matmul(other, self)

    def mm(self, other):
        return mm(self, other)

    def mv(self, vec):
        return mv(self, vec)

    def dot(self, other):
        return dot(self, other)

    # ***** comparisons: bool results, never part of the graph *****

    def _compare(self, other, ufunc) -> Tensor:
        other_array = other._array if isinstance(other, Tensor) else other
        broadcast_shapes(self._array.shape, np.shape(other_array))
        return _record_plain(ufunc(self._array, other_array), "compare")

    def __eq__(self, other):
        return self._compare(other, np.equal)

    def __ne__(self, other):
        return self._compare(other, np.not_equal)

    def __lt__(self, other):
        return self._compare(other, np.less)

    def __le__(self, other):
        return self._compare(other, np.less_equal)

    def __gt__(self, other):
        return self._compare(other, np.greater)

    def __ge__(self, other):
        return self._compare(other, np.greater_equal)

    eq, ne, lt, le, gt, ge = __eq__, __ne__, __lt__, __le__, __gt__, __ge__

    def __invert__(self):
        if self._array.dtype != np.bool_:
            return _record_plain(~self._array, "bitwise_not")
        return _record_plain(~self._array, "logical_not")

    def __and__(self, other):
        return _record_plain(self._array & _raw(other), "bitwise_and")

    def __or__(self, other):
        return _record_plain(self._array | _raw(other), "bitwise_or")

    def equal(self, other) -> bool:
        return self.shape == other.shape and bool(np.array_equal(self._array, other._array))

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
        return bool(np.allclose(self._array, other._array, rtol, atol, equal_nan))

    def all(self):
        return _record_plain(np.all(self._array), "all")

    def any(self):
        return _record_plain(np.any(self._array), "any")

    def argmax(self, dim=None, keepdim=False):
        return _arg_reduce(np.argmax, self, dim, keepdim)

    def argmin(self, dim=None, keepdim=False):
        return _arg_reduce(np.argmin, self, dim, keepdim)

    # ***** elementwise functions *****

    def exp(self):
        return _apply(fn.ExpBackward0, (self,), arrays=_floating(self))

    def log(self):
        return _apply(fn.LogBackward0, (self,), arrays=_floating(self))

    def sin(self):
        return _apply(fn.SinBackward0, (self,), arrays=_floating(self))

    def cos(self):
        return _apply(fn.CosBackward0, (self,), arrays=_floating(self))

    def tanh(self):
        return _apply(fn.TanhBackward0, (self,), arrays=_floating(self))

    def sigmoid(self):
        return _apply(fn.SigmoidBackward0, (self,), arrays=_floating(self))

    def sqrt(self):
        return _apply(fn.SqrtBackward0, (self,), arrays=_floating(self))

    def reciprocal(self):
        return _apply(fn.ReciprocalBackward0, (self,), arrays=_floating(self))

    def relu(self):
        return _apply(fn.ReluBackward0, (self,))

    def clamp(self, min=None, max=None):
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        return _apply(fn.ClampBackward1, (self,), min=min, max=max)

    clip = clamp

    def clamp_min(self, min):
        return _apply(fn.ClampMinBackward0, (self,), min=min)

    def clamp_max(self, max):
        return _apply(fn.ClampMaxBackward0, (self,), max=max)

    def softmax(self, dim):
        dim = wrap_dim(dim, self.ndim)
        return _apply(fn.SoftmaxBackward0, (self,), arrays=_floating(self), dim=dim)

    def log_softmax(self, dim):
        dim = wrap_dim(dim, self.ndim)
        return _apply(fn.LogSoftmaxBackward0, (self,), arrays=_floating(self), dim=dim)

    def clone(self):
        return _apply(fn.CloneBackward0, (self,))

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

    # ***** reductions *****

    def sum(self, dim=None, keepdim=False):
        if dim is None:
            return _apply(fn.SumBackward0, (self,))
        return _apply(fn.SumBackward1, (self,), dim=_dims(dim, self.ndim), keepdim=keepdim)

    def mean(self, dim=None, keepdim=False):
        if not self.is_floating_point():
            raise RuntimeError(
                "mean(): could not infer output dtype. Input dtype must be either a floating "
                f"point or complex dtype. Got: {_type_word(self.dtype)}"
            )
        if dim is None:
            return _apply(fn.MeanBackward0, (self,))
        return _apply(fn.MeanBackward1, (self,), dim=_dims(dim, self.ndim), keepdim=keepdim)

    def max(self, dim=None, keepdim=False):
        if isinstance(dim, Tensor):
            return maximum(self, dim)
        return _extreme(self, dim, keepdim, fn.MaxBackward1, fn.MaxBackward0, "max")

    def min(self, dim=None, keepdim=False):
        if isinstance(dim, Tensor):
            return minimum(self, dim)
        return _extreme(self, dim, keepdim, fn.MinBackward1, fn.MinBackward0, "min")

    # ***** shapes and views *****

    def view(self, *shape):
        shape = _infer_shape(parse_shape(shape), self.numel())
        try:
            return _apply(fn.ViewBackward0, (self,), shape=shape)
        except AttributeError:
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
            ) from None

    def is_contiguous(self) -> bool:
        return bool(self._array.flags.c_contiguous)

    def contiguous(self) -> Tensor:
        # a clone in row-major order (clone() itself keeps the layout, as PyTorch's does)
        return self if self.is_contiguous() else _apply(fn.CloneBackward0, (self,), order="C")

    def view_as(self, other):
        return self.view(other.shape)

    def reshape(self, *shape):
        shape = _infer_shape(parse_shape(shape), self.numel())
        if _viewable(self._array, shape):
            return _apply(fn.ViewBackward0, (self,), shape=shape)
        # PyTorch copies to a contiguous clone first when a view is impossible
        return _apply(fn.UnsafeViewBackward0, (self.clone(),), shape=shape)

    def reshape_as(self, other):
        return self.reshape(other.shape)

    def flatten(self, start_dim=0, end_dim=-1):
        if self.ndim == 0:
            return self.reshape(1)
        start, end = wrap_dim(start_dim, self.ndim), wrap_dim(end_dim, self.ndim)
        if start == end:
            return self
        shape = self.shape[:start] + (-1,) + self.shape[end + 1 :]
        return self.reshape(shape)

    def t(self):
        if self.ndim > 2:
            raise RuntimeError(
                f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D"
            )
        return _apply(fn.TBackward0, (self,))

    def transpose(self, dim0, dim1):
        dim0, dim1 = wrap_dim(dim0, self.ndim), wrap_dim(dim1, self.ndim)
        return _apply(fn.TransposeBackward0, (self,), dim0=dim0, dim1=dim1)

    def permute(self, *dims):
        dims = tuple(wrap_dim(d, self.ndim) for d in parse_shape(dims))
        if sorted(dims) != list(range(self.ndim)):
            raise RuntimeError(
                "permute(sparse_coo): number of dimensions in the tensor input does not match "
                "the length of the desired ordering of dimensions i.e. input.dim() = "
                f"{self.ndim} is not equal to len(dims) = {len(dims)}"
            )
        return _apply(fn.PermuteBackward0, (self,), dims=dims)

    def squeeze(self, dim=None):
        if dim is None:
            return _apply(fn.SqueezeBackward0, (self,))
        dims = tuple(wrap_dim(d, self.ndim) for d in (dim if isinstance(dim, tuple) else (dim,)))
        dims = tuple(d for d in dims if self.ndim and self._array.shape[d] == 1)
        node = fn.SqueezeBackward1 if not isinstance(dim, tuple) else fn.SqueezeBackward4
        return _apply(node, (self,), dims=dims)

    def unsqueeze(self, dim):
        dim = wrap_dim(dim, self.ndim + 1)
        return _apply(fn.UnsqueezeBackward0, (self,), dim=dim)

    def expand(self, *sizes):
        sizes = parse_shape(sizes)
        shape = _expanded_shape(self.shape, sizes)
        return _apply(fn.ExpandBackward0, (self,), shape=shape)

    def expand_as(self, other):
        return self.expand(other.shape)

    def unbind(self, dim=0):
        dim = wrap_dim(dim, self.ndim)
        return _apply(fn.UnbindBackward0, (self,), dim=dim)

    def __getitem__(self, key):
        return _index(self, key)

    def __setitem__(self, key, value):
        _assign(self, key, value)

    # ***** in-place: same storage, version counter bumped *****

    def add_(self, other, *, alpha=1):
        return _inplace(fn.AddBackward0, self, other, alpha=alpha)

    def sub_(self, other, *, alpha=1):
        return _inplace(fn.SubBackward0, self, other, alpha=alpha)

    def mul_(self, other):
        return _inplace(fn.MulBackward0, self, other)

    def div_(self, other):
        return _inplace(fn.DivBackward0, self, other)

    __iadd__ = add_
    __isub__ = sub_
    __imul__ = mul_
    __itruediv__ = div_

    def zero_(self):
        return _inplace(fn.ZeroBackward0, self)

    def fill_(self, value):
        return _inplace(fn.FillBackward2, self, value=_raw(value))

    def copy_(self, src):
        return _inplace(fn.CopyBackwards, self, src)

    def clamp_(self, min=None, max=None):
        return _inplace(fn.ClampBackward1, self, min=min, max=max)

    def neg_(self):
        return _inplace(fn.NegBackward0, self)

    # ***** autograd *****

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Send d(self)/d(self) (or `gradient`) back through the graph into the leaves' .grad."""
        from engine.backward import backward

        backward(
            (self,), None if gradient is None else (gradient,), retain_graph, create_graph, inputs
        )

    def register_hook(self, hook):
        raise UnsupportedByGradtrace(
            "Tensor.register_hook is not supported by gradtrace's engine; "
            "use retain_grad() to see an intermediate gradient"
        )


NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more information."
)


# ***** recording an operation *****


def _apply(node_cls: type[Node], inputs: tuple, arrays: tuple | None = None, **kwargs):
    """Run one operation and, when grad mode and an input call for it, record its grad_fn.

    `inputs` are the operation's differentiable slots: Tensors, or Python numbers that still
    take a slot (they show up as (None, 0) in next_functions, as in PyTorch).
    """
    node = node_cls()
    record = False
    if grad_state.enabled:
        needs = [isinstance(t, Tensor) and t._requires_grad for t in inputs]
        if True in needs:
            record = True
            node.needs_input_grad = tuple(needs)
    if arrays is None:
        arrays = [t._array if isinstance(t, Tensor) else t for t in inputs]
    result = node.forward(*arrays, **kwargs)

    if type(result) is tuple:  # several outputs (unbind)
        outs = tuple(Tensor._wrap(r, record) for r in result)
        for nr, out in enumerate(outs):
            out._output_nr = nr
        node.output_shapes = tuple((r.shape, r.dtype) for r in result)
    else:
        outs = (Tensor._wrap(result, record),)
    if record:
        edges, shapes, kinds = [], [], []
        for t, a in zip(inputs, arrays, strict=True):
            edges.append(_edge(t))
            shapes.append(getattr(a, "shape", ()))
            kinds.append(t._array.dtype if isinstance(t, Tensor) else None)
        node.next_functions, node.input_shapes, node.input_dtypes = (
            tuple(edges),
            tuple(shapes),
            tuple(kinds),
        )
        if node.to_save:
            node.saved = [_saved(node, what, inputs, arrays, outs[0]) for what in node.to_save]
        for out in outs:
            out.grad_fn = node
    if node_cls.is_view:
        base = inputs[0]
        for out in outs:
            out._version_counter = base._version_counter
            out._base = base._base if base._base is not None else base
    if tracing.current is not None:
        tracing.current.on_op(node, outs, inputs, record)
    return outs if type(result) is tuple else outs[0]


def _edge(t) -> tuple:
    """Where a gradient for this input goes: its grad_fn, its AccumulateGrad, or nowhere."""
    if not isinstance(t, Tensor):
        return (None, 0)
    if t.grad_fn is not None:
        return (t.grad_fn, t._output_nr)
    if t._requires_grad:
        if t._accumulator is None:
            t._accumulator = AccumulateGrad(t)
        return (t._accumulator, 0)
    return (None, 0)


def _saved(node: Node, what, inputs, arrays, out: Tensor) -> SavedTensor:
    if what == "result":
        name = node.name()
        return SavedTensor(out._array, out._version_counter, lambda: _describe(out, _short(name)))
    t = inputs[what]
    if not isinstance(t, Tensor):
        return SavedTensor(arrays[what], None, None)
    return SavedTensor(arrays[what], t._version_counter, lambda: _describe_input(t))


def _describe_input(t: Tensor) -> str:
    return _describe(t, _short(t.grad_fn.name()) if t.grad_fn is not None else None)


def _describe(t: Tensor, producer: str | None) -> str:
    kind = t.type()
    text = f"[{kind} [{', '.join(str(n) for n in t.shape)}]]"
    return text if producer is None else f"{text}, which is output {t._output_nr} of {producer},"


def _short(node_name: str) -> str:
    # PyTorch names the producer without its "Backward0" suffix in this message
    head, sep, _ = node_name.rpartition("Backward")
    return head if sep else node_name


def _record_plain(array, op: str) -> Tensor:
    """A result that never joins the graph (comparisons, argmax, ...)."""
    out = Tensor._wrap(np.asarray(array))
    if tracing.current is not None:
        tracing.current.on_tensor(out, op, ())
    return out


# ***** dtype promotion *****


def _raw(value):
    return value._array if isinstance(value, Tensor) else value


# Python names the operator when `t + "a"` fails, and so does PyTorch's message
_SYMBOLS = {
    fn.AddBackward0: "+",
    fn.SubBackward0: "-",
    fn.MulBackward0: "*",
    fn.DivBackward0: "/",
    fn.FloorDivide: "//",
}


def _check_number(value, op: str) -> None:
    if not isinstance(value, Number | np.number | np.bool_):
        raise TypeError(
            f"unsupported operand type(s) for {op}: 'Tensor' and '{type(value).__name__}'"
        )


def _binary(node_cls, a: Tensor, b, floating: bool = False, **kwargs):
    """An elementwise op on two operands, after PyTorch's type promotion and broadcasting."""
    if isinstance(b, Tensor):
        if a._array.dtype == b._array.dtype and (not floating or a._array.dtype.kind == "f"):
            # the common case: same dtype, so nothing to promote or cast
            broadcast_shapes(a._array.shape, b._array.shape)
            return _apply(node_cls, (a, b), arrays=(a._array, b._array), **kwargs)
        result = (
            a._array.dtype
            if a._array.dtype == b._array.dtype
            else dtypes.result_type([(a.dtype, a.ndim), (b.dtype, b.ndim)], []).np
        )
        broadcast_shapes(a._array.shape, b._array.shape)
        arrays = (_as(a._array, result, floating), _as(b._array, result, floating))
        return _apply(node_cls, (a, b), arrays=arrays, **kwargs)
    if isinstance(b, list | tuple | np.ndarray):
        return _binary(node_cls, a, tensor(b), floating, **kwargs)
    _check_number(b, _SYMBOLS.get(node_cls, node_cls.__name__))
    arrays = _cast_scalar(a, b, floating)
    return _apply(node_cls, (a, b), arrays=arrays, **kwargs)


def _as(array: np.ndarray, dtype: np.dtype, floating: bool) -> np.ndarray:
    if floating and dtype.kind != "f":
        dtype = dtypes.default_float().np
    return array if array.dtype == dtype else array.astype(dtype)


def _cast_scalar(a: Tensor, scalar, floating: bool = False) -> tuple:
    """The tensor's array and the number, both in the dtype PyTorch would compute in."""
    kind, number = a._array.dtype.kind, type(scalar)
    if kind == "f" and (number is float or number is int):
        return a._array, a._array.dtype.type(scalar)  # a float tensor keeps its dtype
    result = dtypes.result_type([(a.dtype, a.ndim)], [scalar]).np
    if floating and result.kind != "f":
        result = dtypes.default_float().np
    array = a._array if a._array.dtype == result else a._array.astype(result)
    return array, result.type(scalar)


def _same_kind(array: np.ndarray, value):
    return array.dtype.type(value) if array.dtype.kind == "f" else value


def _floating(t: Tensor) -> tuple:
    if t._array.dtype.kind == "f":
        return (t._array,)
    return (t._array.astype(dtypes.default_float().np),)


def _type_word(dt: dtypes.dtype) -> str:
    return {"int64": "Long", "int32": "Int", "bool": "Bool", "float64": "Double"}.get(
        dt.name, "Float"
    )


# ***** argument helpers *****


def _dims(dim, ndim: int) -> tuple[int, ...]:
    dims = tuple(wrap_dim(d, ndim) for d in (dim if isinstance(dim, tuple | list) else (dim,)))
    for d in dims:
        if dims.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return dims if ndim else ()  # dim 0 of a 0-dim tensor is the tensor itself


def _infer_shape(shape: tuple[int, ...], numel: int) -> tuple[int, ...]:
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = int(np.prod([n for n in shape if n != -1], dtype=np.int64))
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if n == -1 else n for n in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def _viewable(array: np.ndarray, shape: tuple[int, ...]) -> bool:
    view = array.view()
    try:
        view.shape = shape
    except AttributeError:
        return False
    return True


def _expanded_shape(current: tuple, sizes: tuple) -> tuple:
    if len(sizes) < len(current):
        raise RuntimeError(
            f"expand(torch.FloatTensor{{{list(current)}}}, size={list(sizes)}): the number of "
            "sizes provided "
            f"({len(sizes)}) must be greater or equal to the number of dimensions in the tensor "
            f"({len(current)})"
        )
    lead = len(sizes) - len(current)
    out = []
    for i, size in enumerate(sizes):
        have = current[i - lead] if i >= lead else 1
        if size == -1:
            if i < lead:
                raise RuntimeError(
                    f"The expanded size of the tensor (-1) isn't allowed in a leading, "
                    f"non-existing dimension {i}"
                )
            size = have
        elif have != 1 and have != size:
            raise RuntimeError(
                f"The expanded size of the tensor ({size}) must match the existing size ({have}) "
                f"at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  "
                f"Tensor sizes: {list(current)}"
            )
        out.append(size)
    return tuple(out)


def _extreme(t: Tensor, dim, keepdim, whole_node, dim_node, name: str):
    """max()/min() of everything, or (values, indices) along a dim."""
    if dim is None:
        if t.numel() == 0:
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        return _apply(whole_node, (t,))
    dim = wrap_dim(dim, t.ndim)
    pick = np.argmax if name == "max" else np.argmin
    indices = pick(t._array.reshape(-1) if t.ndim == 0 else t._array, axis=dim)
    values = _apply(dim_node, (t,), dim=dim, keepdim=keepdim)
    indices = np.expand_dims(indices, dim) if keepdim and t.ndim else indices
    return ReturnTypes[name](values, _record_plain(indices.astype(np.int64), "indices"))


def _arg_reduce(pick, t: Tensor, dim, keepdim) -> Tensor:
    if dim is None:
        return _record_plain(np.int64(pick(t._array)), pick.__name__)
    dim = wrap_dim(dim, t.ndim)
    out = pick(t._array, axis=dim)
    return _record_plain(np.expand_dims(out, dim) if keepdim else out, pick.__name__)


# ***** indexing *****


def _index(t: Tensor, key):
    """Basic indexing makes views (select, slice, unsqueeze); tensors or lists index by gather.

    As in PyTorch, a lone `x[:]` records a SliceBackward0, but inside a tuple a slice that keeps
    the whole dim records nothing, and an index that changes nothing (`x[...]`, `x[:, :]`)
    records an AliasBackward0. With tensors or lists in the key, the views are made first and
    one IndexBackward0 gathers from their result (`x[0, [2, 1]]` records SelectBackward0 first).
    """
    if type(key) is int and t._array.ndim and -t._array.shape[0] <= key < t._array.shape[0]:
        # the common case (`w[0]` in a loop) goes straight to its node
        return _apply(fn.SelectBackward0, (t,), dim=0, index=key % t._array.shape[0])
    single = not isinstance(key, tuple)
    if single:
        key = (key,)
    key = tuple(_index_part(k) for k in key)
    used = sum(
        k.ndim if isinstance(k, np.ndarray) and k.dtype == np.bool_ else 1
        for k in key
        if k is not None and k is not Ellipsis
    )
    if used > t.ndim:
        raise IndexError(f"too many indices for tensor of dimension {t.ndim}")
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    out, dim, gathers = t, 0, {}
    for position, k in enumerate(key):
        if k is None:
            out = out.unsqueeze(dim)
            dim += 1
        elif k is Ellipsis:
            dim += t.ndim - used
        elif isinstance(k, np.ndarray):
            gathers[dim] = k  # gathered once the views are made
            dim += k.ndim if k.dtype == np.bool_ else 1
        elif isinstance(k, slice):
            out = _slice(out, dim, k, keep_whole=single)
            dim += 1
        elif isinstance(k, int | np.integer) and not isinstance(k, bool):
            size = out.shape[dim]
            if not -size <= k < size:
                # PyTorch names the index's position in the key, not the dim it lands on
                raise IndexError(
                    f"index {k} is out of bounds for dimension {position} with size {size}"
                )
            out = _apply(fn.SelectBackward0, (out,), dim=dim, index=int(k) % size)
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                "are valid indices (got " + type(k).__name__ + ")"
            )
    if gathers:
        return _gather(out, gathers)
    return _apply(fn.AliasBackward0, (t,)) if out is t else out


def _index_part(k):
    """Tensors and lists index as numpy arrays; a 0-dim integer tensor selects, like an int."""
    if isinstance(k, Tensor):
        if k.ndim == 0 and k._array.dtype.kind in "iu":
            return int(k._array)
        return k._array
    if isinstance(k, list):
        return np.asarray(k) if k else np.zeros(0, np.int64)
    return k


def _slice(t: Tensor, dim: int, k: slice, keep_whole: bool = True) -> Tensor:
    step = 1 if k.step is None else int(k.step)
    if step <= 0:
        raise ValueError("step must be greater than zero")
    if (
        not keep_whole
        and k.start in (None, 0)
        and step == 1
        and (k.stop is None or k.stop >= t.shape[dim])
    ):
        return t  # PyTorch skips a slice that keeps the whole dim (written from 0, step 1)
    start, stop, _ = k.indices(t.shape[dim])
    stop = max(stop, start)
    return _apply(fn.SliceBackward0, (t,), dim=dim, start=start, stop=stop, step=step)


def _gather(t: Tensor, gathers: dict) -> Tensor:
    """Advanced indexing: numpy's rules, which PyTorch follows; `gathers` maps dim -> index."""
    parts, dim = [], 0
    for ordinal, (at, k) in enumerate(sorted(gathers.items())):
        parts += [slice(None)] * (at - dim)
        if k.dtype.kind == "f":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if k.dtype == np.bool_:
            for i, n in enumerate(k.shape):
                if n != t.shape[at + i]:
                    raise IndexError(
                        f"The shape of the mask {list(k.shape)} at index {i} does not match the "
                        f"shape of the indexed tensor {list(t.shape)} at index {at + i}"
                    )
        else:
            size = t.shape[at]
            bad = k[(k < -size) | (k >= size)]
            if bad.size:
                # PyTorch counts the index tensors, not the dims, in this message
                raise IndexError(
                    f"index {bad.flat[0]} is out of bounds for dimension {ordinal} with size {size}"
                )
        parts.append(k)
        dim = at + (k.ndim if k.dtype == np.bool_ else 1)
    try:
        t._array[tuple(parts)]
    except IndexError as error:
        raise IndexError(str(error).replace("axis", "dimension")) from None
    return _apply(fn.IndexBackward0, (t,), key=tuple(parts))


def _assign(t: Tensor, key, value) -> None:
    """t[key] = value: an in-place write, allowed while no graph is involved."""
    value_array = value._array if isinstance(value, Tensor) else value
    involved = grad_state.enabled and (
        t._requires_grad or (isinstance(value, Tensor) and value._requires_grad)
    )
    if involved:
        if t.is_leaf and t._requires_grad:
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation."
            )
        raise UnsupportedByGradtrace(
            "assigning into part of a tensor that is in the autograd graph is not supported by "
            "gradtrace's engine (PyTorch records it as CopySlices); build a new tensor instead, "
            "for example with torch.where or torch.cat"
        )
    if isinstance(key, Tensor):
        key = key._array
    elif isinstance(key, tuple):
        key = tuple(k._array if isinstance(k, Tensor) else k for k in key)
    t._array[key] = value_array
    _bump(t, "setitem", None)


def _inplace(node_cls, target: Tensor, *operands, **kwargs) -> Tensor:
    """Run an op and write its result into `target`, as PyTorch's trailing-underscore ops do."""
    other = operands[0] if operands else None
    recording = grad_state.enabled and (
        target._requires_grad or (isinstance(other, Tensor) and other._requires_grad)
    )
    if recording:
        if target.is_leaf and target._requires_grad:
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation."
            )
        if target._base is not None:
            if target._base.is_leaf and target._base._requires_grad:
                raise RuntimeError(
                    "a view of a leaf Variable that requires grad is being used in an in-place "
                    "operation."
                )
            raise UnsupportedByGradtrace(
                "in-place changes to a view of a tensor in the autograd graph are not supported "
                "by gradtrace's engine (PyTorch rewrites the base's history with CopySlices); "
                "use the out-of-place op instead"
            )
    if isinstance(other, list | tuple):
        other = tensor(other)
    if node_cls is fn.DivBackward0 and target._array.dtype.kind != "f":
        raise RuntimeError("result type Float can't be cast to the desired output type Long")
    inputs = (target, *operands)
    if isinstance(other, Tensor):
        broadcast_shapes(target._array.shape, other._array.shape)
        arrays = (target._array, other._array.astype(target._array.dtype, copy=False))
    elif other is not None:
        _check_number(other, node_cls.__name__)
        arrays = (target._array, target._array.dtype.type(other))
    else:
        arrays = (target._array,)

    before = (target.grad_fn, target._output_nr)
    node = node_cls()
    if recording:
        node.needs_input_grad = tuple(isinstance(t, Tensor) and t._requires_grad for t in inputs)
    result = node.forward(*arrays, **kwargs)
    if getattr(result, "shape", ()) != target._array.shape:
        raise RuntimeError(
            f"output with shape {list(target.shape)} doesn't match the broadcast shape "
            f"{list(np.broadcast_shapes(target._array.shape, np.shape(result)))}"
        )
    if recording and 0 in node.to_save:
        # backward needs the old value, which the write below replaces: keep a copy
        arrays = (target._array.copy(), *arrays[1:])
    try:
        target._array[...] = result
    except ValueError:
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation."
        ) from None
    target._version_counter.value += 1
    if recording:
        edges = [_edge(t) for t in inputs]
        edges[0] = before if before[0] is not None else (None, 0)
        node.next_functions = tuple(edges)
        node.input_shapes = tuple(getattr(a, "shape", ()) for a in arrays)
        node.input_dtypes = tuple(t._array.dtype if isinstance(t, Tensor) else None for t in inputs)
        node.saved = [
            SavedTensor(arrays[w], None, None)
            if w != "result"
            else _saved(node, "result", inputs, arrays, target)
            for w in node.to_save
        ]
        target.grad_fn = node
        target._output_nr = 0
        target._requires_grad = True
    if tracing.current is not None:
        tracing.current.on_inplace(target, node, inputs, recording)
    return target


def _bump(t: Tensor, op: str, node) -> None:
    t._version_counter.value += 1
    if tracing.current is not None:
        tracing.current.on_inplace(t, node, (t,), False, op=op)


# ***** matrix products, following torch.matmul's cases *****


def matmul(a: Tensor, b: Tensor) -> Tensor:
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and {b.ndim}D"
        )
    if a.ndim == 1 and b.ndim == 1:
        return dot(a, b)
    if a.ndim == 2 and b.ndim == 1:
        return mv(a, b)
    if a.ndim == 1 and b.ndim == 2:
        return _apply(fn.SqueezeBackward4, (mm(a.unsqueeze(0), b),), dims=(0,))
    if a.ndim == 2 and b.ndim == 2:
        return mm(a, b)
    raise UnsupportedByGradtrace(
        "batched matmul (tensors with more than 2 dimensions) is not supported by gradtrace's "
        "engine yet"
    )


def _matrix_operands(a: Tensor, b: Tensor) -> tuple:
    if a._array.dtype != b._array.dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {_c_name(a)} != {_c_name(b)}"
        )
    return a._array, b._array


def _c_name(t: Tensor) -> str:
    return {"float32": "float", "float64": "double", "int64": "long int", "int32": "int"}.get(
        t.dtype.name, t.dtype.name
    )


def mm(a: Tensor, b: Tensor) -> Tensor:
    if a.ndim != 2 or b.ndim != 2:
        raise RuntimeError(f"{'self' if a.ndim != 2 else 'mat2'} must be a matrix")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied "
            f"({a.shape[0]}x{a.shape[1]} and {b.shape[0]}x{b.shape[1]})"
        )
    return _apply(fn.MmBackward0, (a, b), arrays=_matrix_operands(a, b))


def mv(a: Tensor, v: Tensor) -> Tensor:
    if a.ndim != 2 or v.ndim != 1 or a.shape[1] != v.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({a.shape[0] if a.ndim else 0}), mat "
            f"({'x'.join(str(n) for n in a.shape)}), vec ({v.shape[0] if v.ndim else 0})"
        )
    return _apply(fn.MvBackward0, (a, v), arrays=_matrix_operands(a, v))


def dot(a: Tensor, b: Tensor) -> Tensor:
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(
            "inconsistent tensor size, expected tensor "
            f"[{a.shape[0]}] and src [{b.shape[0]}] to have the same number of elements, but got "
            f"{a.shape[0]} and {b.shape[0]} elements respectively"
        )
    return _apply(fn.DotBackward0, (a, b), arrays=_matrix_operands(a, b))


def maximum(a: Tensor, b: Tensor) -> Tensor:
    return _binary(fn.MaximumBackward0, a, b)


def minimum(a: Tensor, b: Tensor) -> Tensor:
    return _binary(fn.MinimumBackward0, a, b)


# ***** making tensors from data *****


def tensor(data, dtype: dtypes.dtype | None = None, requires_grad: bool = False, device=None):
    """torch.tensor: copy Python numbers, nested lists or arrays into a new leaf tensor."""
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach()."
            "clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "torch.tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
        data = data._array
    array = _to_array(data, dtype)
    return _leaf(array, requires_grad, "tensor")


def _to_array(data, dtype: dtypes.dtype | None) -> np.ndarray:
    values = _unwrap(data)
    try:
        array = np.array(values, dtype=None if dtype is None else _resolve_dtype(dtype).np)
    except ValueError:
        _check_ragged(values, _first_sizes(values), 0)  # PyTorch's message for uneven lists
        raise
    if dtype is not None:
        return array
    if array.dtype.kind == "f":
        return array.astype(dtypes.default_float().np)
    if array.dtype.kind in "iu":
        return array.astype(np.int64)
    if array.dtype.kind == "b":
        return array
    if array.dtype.kind == "c":
        raise UnsupportedByGradtrace("complex tensors are not supported by gradtrace's engine")
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def _first_sizes(values) -> list[int]:
    """The shape PyTorch expects: the lengths of the first element at every depth."""
    sizes = []
    while isinstance(values, list | tuple):
        sizes.append(len(values))
        if not values:
            break
        values = values[0]
    return sizes


def _check_ragged(values, sizes: list[int], dim: int) -> None:
    if dim == len(sizes) or not isinstance(values, list | tuple):
        return
    if len(values) != sizes[dim]:
        raise ValueError(
            f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(values)})"
        )
    for item in values:
        _check_ragged(item, sizes, dim + 1)


def _unwrap(data):
    if isinstance(data, Tensor):
        return data._array
    if isinstance(data, list | tuple):
        return [_unwrap(d) for d in data]
    return data


def _resolve_dtype(dtype) -> dtypes.dtype:
    if isinstance(dtype, dtypes.dtype):
        return dtype
    if dtype is float:
        return dtypes.float64
    if dtype is int:
        return dtypes.int64
    if dtype is bool:
        return dtypes.bool_
    raise TypeError(f"dtype must be a torch.dtype, not {type(dtype).__name__}")


def _leaf(array: np.ndarray, requires_grad: bool, op: str) -> Tensor:
    out = Tensor._wrap(array)
    if requires_grad:
        if not out.is_floating_point():
            # the factories' message starts with a capital, the setter's does not
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients"
            )
        out.requires_grad = True
    if tracing.current is not None:
        tracing.current.on_tensor(out, op, ())
    return out
