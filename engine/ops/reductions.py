"""Reductions and scans: sum, mean, prod, var, std, norm, max, amax, logsumexp, cumsum, sort..."""

from __future__ import annotations

import math
import warnings

import numpy as np

from engine import dtypes
from engine import functions as fn
from engine.numpy_names import numpy_names
from engine.ops.arithmetic import maximum, minimum
from engine.ops.overloads import Overloads
from engine.promotion import floating
from engine.record import apply, plain
from engine.return_types import ReturnTypes
from engine.shape import reduced_dims, wrap_dim
from engine.tensor import Tensor, tensor_methods
from engine.unsupported import UnsupportedByGradtrace


@tensor_methods
class Reductions:
    """Methods that reduce a tensor over some or all of its dims, or scan along one."""

    @numpy_names
    def sum(self, dim=None, keepdim=False, *, dtype=None):
        arrays = _cast(self, dtype)
        if dtype is not None and arrays[0].dtype.kind in "biu" and arrays[0].dtype != np.int64:
            # SumBackward's forward widens integers to int64, and an integer sum has no grad_fn
            axis = None if dim is None else reduced_dims(dim, self.ndim)
            return plain(
                np.sum(arrays[0], axis=axis, keepdims=keepdim, dtype=arrays[0].dtype), "sum"
            )
        if dim is None:
            return apply(fn.SumBackward0, (self,), arrays=arrays)
        dims = reduced_dims(dim, self.ndim)
        return apply(fn.SumBackward1, (self,), arrays=arrays, dim=dims, keepdim=keepdim)

    @numpy_names
    def mean(self, dim=None, keepdim=False, *, dtype=None):
        arrays = _cast(self, dtype)
        if arrays[0].dtype.kind != "f":
            word = dtypes.type_word(dtypes.from_numpy(arrays[0].dtype))
            raise RuntimeError(
                "mean(): could not infer output dtype. "
                + ("Input" if dtype is None else "Optional")
                + f" dtype must be either a floating point or complex dtype. Got: {word}"
            )
        if dim is None:
            return apply(fn.MeanBackward0, (self,), arrays=arrays)
        dims = reduced_dims(dim, self.ndim)
        return apply(fn.MeanBackward1, (self,), arrays=arrays, dim=dims, keepdim=keepdim)

    @numpy_names
    def prod(self, dim=None, keepdim=False, *, dtype=None):
        arrays = _cast(self, dtype)
        if dim is None:
            return apply(fn.ProdBackward0, (self,), arrays=arrays)
        dim = wrap_dim(dim, self.ndim)
        return apply(fn.ProdBackward1, (self,), arrays=arrays, dim=dim, keepdim=keepdim)

    @numpy_names
    def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        return _spread(fn.VarBackward0, self, dim, unbiased, keepdim, correction)

    @numpy_names
    def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        return _spread(fn.StdBackward0, self, dim, unbiased, keepdim, correction)

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        if isinstance(p, str):
            if p == "nuc":
                raise UnsupportedByGradtrace(
                    "the nuclear norm (p='nuc') is not supported by gradtrace's engine"
                )
            if p != "fro":
                raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
            p = 2
        return vector_norm(self, 2 if p is None else p, dim, keepdim, dtype=dtype)

    @numpy_names
    def logsumexp(self, dim, keepdim=False):
        dims = reduced_dims(dim, self.ndim)
        return apply(
            fn.LogsumexpBackward0, (self,), arrays=floating(self), dims=dims, keepdim=keepdim
        )

    @numpy_names
    def cumsum(self, dim, *, dtype=None):
        dim = wrap_dim(dim, self.ndim)
        return apply(fn.CumsumBackward0, (self,), arrays=_cast(self, dtype), dim=dim)

    @numpy_names
    def cumprod(self, dim, *, dtype=None):
        dim = wrap_dim(dim, self.ndim)
        return apply(fn.CumprodBackward0, (self,), arrays=_cast(self, dtype), dim=dim)

    def max(self, *args, **kwargs):
        return _max_or_min("max", self, *_TENSOR_MAX.bind(args, kwargs))

    def min(self, *args, **kwargs):
        return _max_or_min("min", self, *_TENSOR_MIN.bind(args, kwargs))

    @numpy_names
    def amax(self, dim=(), keepdim=False):
        return _amax_amin(fn.AmaxBackward0, self, dim, keepdim)

    @numpy_names
    def amin(self, dim=(), keepdim=False):
        return _amax_amin(fn.AminBackward0, self, dim, keepdim)

    @numpy_names
    def argmax(self, dim=None, keepdim=False):
        return _arg_reduce(np.argmax, self, dim, keepdim)

    @numpy_names
    def argmin(self, dim=None, keepdim=False):
        return _arg_reduce(np.argmin, self, dim, keepdim)

    def sort(self, *args, **kwargs):
        overload, bound = _TENSOR_SORT.bind(args, kwargs)
        return _sort(self, overload, **bound)

    def argsort(self, *args, **kwargs):
        _, bound = _TENSOR_ARGSORT.bind(args, kwargs)
        return _argsort(self, bound["dim"], bound["descending"])

    def topk(self, *args, **kwargs):
        _, bound = _TENSOR_TOPK.bind(args, kwargs)
        return _topk(self, **bound)


# the signatures PyTorch parses these with: a Tensor method's, then torch.<name>'s
_TENSOR_SORT, _SORT = (
    Overloads(
        "sort",
        f"({first}*, bool? stable, int dim = -1, bool descending = False{out})",
        f"({first}int dim = -1, bool descending = False{star_out})",
    )
    for first, out, star_out in (
        ("", "", ""),
        ("Tensor input, ", ", tuple of Tensors out = None", ", *, tuple of Tensors out = None"),
    )
)
_TENSOR_ARGSORT, _ARGSORT = (
    Overloads(
        "argsort",
        f"({first}*, bool? stable, int dim = -1, bool descending = False{out})",
        f"({first}int dim = -1, bool descending = False)",
    )
    for first, out in (("", ""), ("Tensor input, ", ", Tensor out = None"))
)
_TENSOR_TOPK = Overloads("topk", "(int k, int dim = -1, bool largest = True, bool sorted = True)")
_TOPK = Overloads(
    "topk",
    "(Tensor input, int k, int dim = -1, bool largest = True, bool sorted = True, *, "
    "tuple of Tensors out = None)",
)
_TENSOR_MAX, _TENSOR_MIN = (
    Overloads(name, "()", "(Tensor other)", "(int dim, bool keepdim = False)")
    for name in ("max", "min")
)
_MAX, _MIN = (
    Overloads(
        name,
        "(Tensor input, *, Tensor out = None)",
        "(Tensor input, Tensor other, *, Tensor out = None)",
        "(Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)",
    )
    for name in ("max", "min")
)


# torch.sort(x, ...) and friends parse their own signatures (an input first, and out=), so
# engine/__init__.py takes these instead of the method twins


def _torch_sort(*args, **kwargs):
    overload, bound = _SORT.bind(args, kwargs)
    return _sort(_input(bound, "sort"), overload, **bound)


def _torch_argsort(*args, **kwargs):
    _, bound = _ARGSORT.bind(args, kwargs)
    return _argsort(_input(bound, "argsort"), bound["dim"], bound["descending"])


def _torch_topk(*args, **kwargs):
    _, bound = _TOPK.bind(args, kwargs)
    return _topk(_input(bound, "topk"), **bound)


def _torch_max(*args, **kwargs):
    overload, bound = _MAX.bind(args, kwargs)
    return _max_or_min("max", _input(bound, "max"), overload, bound)


def _torch_min(*args, **kwargs):
    overload, bound = _MIN.bind(args, kwargs)
    return _max_or_min("min", _input(bound, "min"), overload, bound)


FUNCTIONS = {
    "sort": _torch_sort,
    "argsort": _torch_argsort,
    "topk": _torch_topk,
    "max": _torch_max,
    "min": _torch_min,
}
for _name, _function in FUNCTIONS.items():
    _function.__name__ = _function.__qualname__ = _name


def _input(bound: dict, name: str) -> Tensor:
    """Take the input (and an out=, which the engine does not fill) from bound arguments."""
    if bound.pop("out", None) is not None:
        raise UnsupportedByGradtrace(
            f"torch.{name}(..., out=...) is not supported by gradtrace's engine: "
            "use the returned tensors"
        )
    return bound.pop("input")


def _sort(t: Tensor, overload: int, dim=-1, descending=False, stable=None):
    dim = wrap_dim(dim, t.ndim)
    # always stable: equal values keep their order, which PyTorch's CPU sort also does
    order = _order(t._array, dim, descending)
    node = fn.SortBackward1 if overload == 0 else fn.SortBackward0  # the stable= overload is 1
    values = apply(node, (t,), indices=order, dim=dim)
    return ReturnTypes["sort"](values, plain(order, "indices"))


def _argsort(t: Tensor, dim: int, descending: bool) -> Tensor:
    return plain(_order(t._array, wrap_dim(dim, t.ndim), descending), "argsort")


def _topk(t: Tensor, k, dim=-1, largest=True, sorted=True):
    dim = wrap_dim(dim, t.ndim)
    size = t._array.shape[dim] if t.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    order = _order(t._array, dim, largest)
    order = np.take(order, range(k), axis=dim) if t.ndim else order
    values = apply(fn.TopkBackward0, (t,), indices=order, dim=dim)
    return ReturnTypes["topk"](values, plain(order, "indices"))


def _max_or_min(name: str, t: Tensor, overload: int, bound: dict):
    """max() of everything (overload 0), max(other) elementwise (1), max(dim, keepdim) (2)."""
    if overload == 1:
        return (maximum if name == "max" else minimum)(t, bound["other"])
    if name == "max":
        whole, along = fn.MaxBackward1, fn.MaxBackward0
    else:
        whole, along = fn.MinBackward1, fn.MinBackward0
    return _extreme(t, bound.get("dim"), bound.get("keepdim", False), whole, along, name)


def _cast(t: Tensor, dtype) -> tuple:
    """The array a reduction with dtype= computes on: cast first, as PyTorch does."""
    if dtype is None:
        return (t._array,)
    return (t._array.astype(dtypes.resolve(dtype).np, copy=False),)


def _spread(node, t: Tensor, dim, unbiased, keepdim, correction):
    """var() and std(): how far the values lie from their mean, over `dim` or everything."""
    if isinstance(dim, bool):  # var(False): the old (unbiased) overload
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(
            f"{node.__name__[:3].lower()}() received an invalid combination of arguments"
        )
    if not t.is_floating_point():
        raise RuntimeError("std and var only support floating point and complex dtypes")
    if correction is None:
        correction = 0 if unbiased is False else 1
    dims = None if dim is None else reduced_dims(dim, t.ndim)
    if fn.degrees_of_freedom(t._array.shape, dims, correction) <= 0:
        # PyTorch warns and carries on: dividing by 0 gives inf or nan
        warnings.warn(
            f"{node.__name__[:3].lower()}(): degrees of freedom is <= 0. Correction should be "
            "strictly less than the reduction factor (input numel divided by output numel).",
            UserWarning,
            stacklevel=3,
        )
    return apply(node, (t,), dims=dims, correction=correction, keepdim=keepdim)


def vector_norm(t: Tensor, ord=2, dim=None, keepdim=False, *, dtype=None) -> Tensor:
    """torch.linalg.vector_norm (and Tensor.norm): the p-norm over `dim` or everything."""
    if not t.is_floating_point():
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. "
            f"Got {dtypes.type_word(t.dtype)}"
        )
    if isinstance(ord, bool) or not isinstance(ord, int | float):
        raise TypeError(
            f"linalg_vector_norm(): argument 'ord' must be Number, not {type(ord).__name__}"
        )
    if ord < 0 and t.numel() == 0:
        raise RuntimeError(
            f"linalg.vector_norm cannot compute the {ord} norm on an empty tensor because the "
            "operation does not have an identity"
        )
    dims = None if dim is None else reduced_dims(dim, t.ndim)
    ord = float(ord) if math.isinf(ord) else ord
    return apply(
        fn.LinalgVectorNormBackward0,
        (t,),
        arrays=_cast(t, dtype),
        ord=ord,
        dims=dims,
        keepdim=keepdim,
    )


def _amax_amin(node, t: Tensor, dim, keepdim) -> Tensor:
    dims = reduced_dims(dim, t.ndim) if dim != () else tuple(range(t.ndim))
    if (
        t.numel() == 0
        and any(t._array.shape[d] == 0 for d in dims)
        or (t.numel() == 0 and not dims)
    ):
        name = node.__name__[:4].lower()
        raise IndexError(
            f"{name}(): Expected reduction dim {dims[0] if dims else 0} to have non-zero size."
        )
    return apply(node, (t,), dims=dims, keepdim=keepdim)


def _order(array: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    """Indices that sort `array` along `dim`, stably; nan counts as the largest value."""
    if array.ndim == 0:
        return np.zeros((), np.int64)
    keys = array.astype(np.int8) if array.dtype == np.bool_ else array
    if not descending:
        return np.argsort(keys, axis=dim, kind="stable").astype(np.int64)
    # descending and stable, without negating (the smallest integer has no negative): sort the
    # reversed values ascending, then read that order backwards, so equal values keep theirs
    n = keys.shape[dim]
    backwards = np.argsort(np.flip(keys, dim), axis=dim, kind="stable")
    return (n - 1 - np.flip(backwards, dim)).astype(np.int64)


def _extreme(t: Tensor, dim, keepdim, whole_node, dim_node, name: str):
    """max()/min() of everything, or (values, indices) along a dim."""
    if dim is None:
        if t.numel() == 0:
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        return apply(whole_node, (t,))
    dim = wrap_dim(dim, t.ndim)
    pick = np.argmax if name == "max" else np.argmin
    indices = pick(t._array.reshape(-1) if t.ndim == 0 else t._array, axis=dim)
    values = apply(dim_node, (t,), dim=dim, keepdim=keepdim)
    indices = np.expand_dims(indices, dim) if keepdim and t.ndim else indices
    return ReturnTypes[name](values, plain(indices.astype(np.int64), "indices"))


def _arg_reduce(pick, t: Tensor, dim, keepdim) -> Tensor:
    if dim is None:
        return plain(np.int64(pick(t._array)), pick.__name__)
    dim = wrap_dim(dim, t.ndim)
    out = pick(t._array, axis=dim)
    return plain(np.expand_dims(out, dim) if keepdim else out, pick.__name__)
