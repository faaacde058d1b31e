"""Tensor: a numpy array plus the autograd bookkeeping PyTorch keeps beside it.

This module holds what a tensor *is* (its array, dtype, shape, .grad, version, printing). What
you can *do* with one lives by kind in engine/ops/ (arithmetic, reductions, views, ...), each a
class of methods that `tensor_methods` copies onto Tensor, so no op module imports a cycle.
"""

from __future__ import annotations

import numbers
import warnings
import weakref

import numpy as np

from engine import devices, dtypes, tracing
from engine.grad_mode import inference_state
from engine.graph import Version
from engine.numpy_names import numpy_names
from engine.printing import tensor_repr
from engine.shape import Size, wrap_dim

Number = numbers.Number


class Tensor:
    """A multi-dimensional array that can record how it was made, so gradients can flow back."""

    __slots__ = (
        "_array",
        "_requires_grad",
        "_grad",
        "_grad_fn",
        "_output_nr",
        "_version_counter",
        "_base",
        "_retains_grad",
        "_accumulator",
        "_trace_id",
        "__weakref__",
    )

    def __new__(cls, *args, **kwargs) -> Tensor:
        """`torch.Tensor([1, 2])`, `torch.Tensor(2, 3)`: PyTorch's legacy constructor.

        The engine itself makes tensors with `_wrap`; this is for snippets (engine/legacy.py).
        """
        from engine import legacy  # legacy builds on creation, which imports this module

        return legacy.new(dtypes.default_float(), *args, **kwargs)

    @classmethod
    def _wrap(cls, array, requires_grad: bool = False, base: Tensor | None = None) -> Tensor:
        """A tensor over `array`; with `base`, a view of it (one version counter, one _base)."""
        t = object.__new__(cls)
        t._array = array if type(array) is np.ndarray else np.asarray(array)
        t._requires_grad = requires_grad
        t._grad = None
        t._grad_fn = None
        t._output_nr = 0
        if base is None:
            t._version_counter = Version()
            t._base = None
        else:
            t._version_counter = base._version_counter
            t._base = base if base._base is None else base._base
        t._retains_grad = False
        t._accumulator = None
        t._trace_id = None
        return t

    @property
    def grad_fn(self):
        """The node that made this tensor (None for a leaf). A view whose base was changed in
        place since (through any view) reads its part of the base's new history, as in PyTorch."""
        base = self._base
        if base is not None and base._grad_fn is not None and self._grad_fn is not None:
            from engine.record import refresh_view  # record builds on this module

            refresh_view(self)
        return self._grad_fn

    @grad_fn.setter
    def grad_fn(self, node) -> None:
        self._grad_fn = node

    # ***** what a tensor is *****

    @property
    def dtype(self) -> dtypes.dtype:
        return dtypes.from_numpy(self._array.dtype)

    @property
    def shape(self) -> Size:
        return Size(self._array.shape)

    @numpy_names
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
    def device(self) -> devices.device:
        return devices.CPU

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
        if flag and self._version_counter.inference and not inference_state.enabled:
            raise RuntimeError(
                "Setting requires_grad=True on inference tensor outside InferenceMode is not "
                "allowed."
            )
        self._requires_grad = bool(flag)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if requires_grad and not self.is_floating_point():
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if requires_grad and self.grad_fn is not None:
            return self  # a result in the graph requires grad already: PyTorch lets it be
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
        return self.permute(*reversed(range(self.ndim)))

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
        return self._array.item()

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
        return bool(self._array.item())  # (item() takes any one-element shape: no reshape)

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

    def __deepcopy__(self, memo: dict) -> Tensor:
        """copy.deepcopy of a leaf: new memory, the same requires_grad, a copy of .grad."""
        if self.grad_fn is not None:
            raise RuntimeError(DEEPCOPY_NON_LEAF)
        if id(self) in memo:
            return memo[id(self)]
        copied = Tensor._wrap(self._array.copy(), self._requires_grad)
        copied._version_counter.value = 1  # PyTorch's copy is filled in place
        memo[id(self)] = copied
        if tracing.current is not None:
            tracing.current.on_tensor(copied, "deepcopy", (self,))
        if self._grad is not None:  # the trace meets the copy as c.grad (a grad_set event)
            copied.grad = Tensor._wrap(self._grad._array.copy())
        return copied

    def __array__(self, dtype=None, copy=None):
        if self._requires_grad:
            return self.numpy()  # raises PyTorch's message
        return self._array if dtype is None else self._array.astype(dtype)

    # ***** autograd (backward is attached by engine/ops/autograd.py, register_hook by
    # engine/hooks.py) *****

    def is_inference(self) -> bool:
        """Made inside torch.inference_mode(): autograd can never save it for backward."""
        return self._version_counter.inference


DEEPCOPY_NON_LEAF = (
    "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at "
    "the moment.  If you were attempting to deepcopy a module, this may be because of a "
    "torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001"
)
NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more information. "
    # TORCH_WARN in C++ appends where it fired; PyTorch's wheel says so in the message itself
    "(Triggered internally at /__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)"
)


Tensor.__module__ = "torch"  # type(x) prints <class 'torch.Tensor'>, as in PyTorch


def tensor_methods(group: type) -> type:
    """Copy a class's methods onto Tensor: `@tensor_methods class Reductions: def sum(self)...`.

    The ops modules are written as such classes so each reads like part of Tensor's body, and a
    name defined twice fails at import instead of one definition silently winning.
    """
    for name, value in vars(group).items():
        if name in ("__module__", "__qualname__", "__doc__", "__dict__", "__weakref__"):
            continue
        if name == "__hash__" and value is None:
            continue  # Python's stand-in for a class defining __eq__: Tensor keeps its own
        if name in vars(Tensor):
            raise TypeError(f"Tensor.{name} is defined twice ({group.__name__})")
        setattr(Tensor, name, value)
    return group
