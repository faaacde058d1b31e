"""torch.nn.functional: the stateless forms of layers, activations and losses.

Each function records the graph PyTorch 2.13 records: a fused node where PyTorch has one
(BinaryCrossEntropyBackward0, GeluBackward0, ...) and, where PyTorch composes its loss from
smaller ops (l1_loss, cross_entropy with label smoothing or class probabilities), the same
small ops in the same order, so the learner sees the same grad_fn chain.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from engine import dtypes, moments, numerics
from engine import functions as fn
from engine import random as rng
from engine.creation import where
from engine.grad_mode import no_grad
from engine.promotion import raw
from engine.record import apply, apply_inplace, plain, rewritten
from engine.shape import broadcast_shapes, wrap_dim
from engine.tensor import Tensor
from engine.unsupported import UnsupportedByGradtrace, missing_attribute

__all__ = [
    "relu",
    "sigmoid",
    "tanh",
    "softmax",
    "log_softmax",
    "softmin",
    "leaky_relu",
    "gelu",
    "elu",
    "selu",
    "silu",
    "softplus",
    "hardtanh",
    "relu6",
    "logsigmoid",
    "celu",
    "threshold",
    "softshrink",
    "hardshrink",
    "tanhshrink",
    "softsign",
    "mish",
    "hardswish",
    "hardsigmoid",
    "glu",
    "prelu",
    "dropout",
    "linear",
    "embedding",
    "one_hot",
    "pad",
    "scaled_dot_product_attention",
    "normalize",
    "cosine_similarity",
    "pairwise_distance",
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "nll_loss",
    "cross_entropy",
    "kl_div",
    "margin_ranking_loss",
    "hinge_embedding_loss",
    "soft_margin_loss",
    "cosine_embedding_loss",
    "poisson_nll_loss",
    "gaussian_nll_loss",
    "multilabel_soft_margin_loss",
    "relu_",
    "leaky_relu_",
    "elu_",
    "selu_",
    "celu_",
    "hardtanh_",
    "threshold_",
]


# ***** activations *****


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return input.relu_() if inplace else input.relu()


def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    return input.tanh()


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    return _cast(input, dtype).softmax(_implicit_dim("softmax", input, dim))


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    return _cast(input, dtype).log_softmax(_implicit_dim("log_softmax", input, dim))


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    return _cast(-input, dtype).softmax(_implicit_dim("softmin", input, dim))


def _implicit_dim(name: str, input: Tensor, dim: int | None) -> int:
    # PyTorch's legacy rule, with its warning, when dim is left out
    if dim is not None:
        return dim
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
        "dim=X as an argument.",
        UserWarning,
        stacklevel=3,
    )
    return 0 if input.ndim in (0, 1, 3) else 1


def _cast(input: Tensor, dtype) -> Tensor:
    return input if dtype is None else input.to(dtype)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    _floating_kernel(input, "leaky_relu_cpu")
    if inplace:
        return _in_place(fn.LeakyReluBackward1, input, negative_slope=negative_slope)
    return apply(fn.LeakyReluBackward0, (input,), negative_slope=negative_slope)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _floating_kernel(input, "GeluKernelImpl")
    return apply(fn.GeluBackward0, (input,), approximate=approximate)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _elu(input, inplace, alpha=alpha)


# selu is elu with these two constants (Klambauer et al., 2017), as PyTorch writes them
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    return _elu(input, inplace, alpha=_SELU_ALPHA, scale=_SELU_SCALE)


def _elu(input: Tensor, inplace: bool, **coefficients) -> Tensor:
    _floating_kernel(input, "elu_cpu")
    if inplace:
        return _in_place(fn.EluBackward1, input, **coefficients)
    return apply(fn.EluBackward0, (input,), **coefficients)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    _floating_kernel(input, "silu_cpu")
    if inplace:
        return _in_place(fn.SiluBackward0, input)
    return apply(fn.SiluBackward0, (input,))


def softplus(input: Tensor, beta: float = 1, threshold: float = 20) -> Tensor:
    _floating_kernel(input, "softplus_cpu")
    return apply(fn.SoftplusBackward0, (input,), beta=beta, threshold=threshold)


def hardtanh(
    input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace:
        return _in_place(fn.HardtanhBackward0, input, min_val=min_val, max_val=max_val)
    return apply(fn.HardtanhBackward0, (input,), min_val=min_val, max_val=max_val)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return hardtanh(input, 0, 6, inplace)  # PyTorch's relu6 is hardtanh(0, 6), node and all


def logsigmoid(input: Tensor) -> Tensor:
    _floating_kernel(input, "log_sigmoid_cpu")
    return apply(fn.LogSigmoidBackward0, (input,))


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    _floating_kernel(input, "elu_cpu")
    if inplace:
        return _in_place(fn.CeluBackward1, input, alpha=alpha)
    return apply(fn.CeluBackward0, (input,), alpha=alpha)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """input where it is above threshold, else value."""
    if inplace:
        return _in_place(fn.ThresholdBackward1, input, threshold=threshold, value=value)
    return apply(fn.ThresholdBackward0, (input,), threshold=threshold, value=value)


_threshold = threshold  # for threshold_, whose first setting shadows the function's name


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    _floating_kernel(input, "softshrink_check")
    largest = np.finfo(input._array.dtype).max
    if not 0 <= lambd <= largest:
        raise RuntimeError(
            f"lambda must be in range [0, {largest:g}] for input dtype "
            f"{dtypes.type_word(input.dtype)}, but found {lambd:g}"
        )
    return apply(fn.SoftshrinkBackward0, (input,), lambd=lambd)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    return apply(fn.HardshrinkBackward0, (input,), lambd=lambd)


def tanhshrink(input: Tensor) -> Tensor:
    return input - input.tanh()  # PyTorch writes these two in Python, from plain ops


def softsign(input: Tensor) -> Tensor:
    return input / (input.abs() + 1)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    _floating_kernel(input, "mish_cpu")
    return _in_place(fn.MishBackward0, input) if inplace else apply(fn.MishBackward0, (input,))


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    _floating_kernel(input, "hardswish_cpu")
    if inplace:
        return _in_place(fn.HardswishBackward0, input)
    return apply(fn.HardswishBackward0, (input,))


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    _floating_kernel(input, "hardsigmoid_cpu")
    if inplace:
        return _in_place(fn.HardsigmoidBackward0, input)
    return apply(fn.HardsigmoidBackward0, (input,))


def glu(input: Tensor, dim: int = -1) -> Tensor:
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    dim = wrap_dim(dim, input.ndim)
    if input.shape[dim] % 2:
        raise RuntimeError(
            f"Halving dimension must be even, but dimension {dim} is size {input.shape[dim]}"
        )
    return apply(fn.GluBackward0, (input,), dim=dim)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """max(0, x) + weight * min(0, x), one weight per channel (dim 1) or one for all."""
    if weight.numel() != 1:
        channels = input.shape[1] if input.ndim >= 2 else 1
        if channels != weight.numel():
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found parameter numbers "
                f"= {weight.numel()} and channel size = {channels}."
            )
    if input.ndim != 1:
        # PyTorch reshapes the weight to broadcast along dim 1: (1, C, 1, ...)
        shape = [1] * input.ndim
        if input.ndim >= 2:
            shape[1] = weight.numel()
        weight = weight.reshape(shape)
    return apply(fn.PreluKernelBackward0, (input, weight))


# the trailing-underscore twins PyTorch has: the same op with inplace=True


def relu_(input: Tensor) -> Tensor:
    return relu(input, inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return leaky_relu(input, negative_slope, inplace=True)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return elu(input, alpha, inplace=True)


def selu_(input: Tensor) -> Tensor:
    return selu(input, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return celu(input, alpha, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh(input, min_val, max_val, inplace=True)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return _threshold(input, threshold, value, inplace=True)


def _floating_kernel(input: Tensor, kernel: str) -> None:
    # PyTorch compiles these kernels for floating dtypes only, and says so
    if not input.is_floating_point():
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{dtypes.type_word(input.dtype)}'"
        )


def _floating_array(array: np.ndarray, kernel: str) -> None:
    # a loss whose operands promote to an integer dtype reaches a kernel built for floats only
    if array.dtype.kind != "f":
        word = dtypes.type_word(dtypes.from_numpy(array.dtype))
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{word}'")


def _in_place(node_cls, input: Tensor, **kwargs) -> Tensor:
    return apply_inplace(node_cls, input, (input,), (input._array,), **kwargs)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1/(1-p), in training only.

    PyTorch's CPU dropout multiplies by a noise tensor: a bernoulli_(1 - p) mask drawn from the
    default generator (one 53-bit uniform per element), divided by 1 - p. The same draw here
    gives the same mask after the same manual_seed.
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not training or input.numel() == 0:
        return input  # the very tensor, as PyTorch returns it
    if p == 1:
        noise = plain(np.zeros((), input._array.dtype), "zeros")
    else:
        mask = rng.default_generator.bernoulli_scalar(input.shape, 1 - p)
        if not input.is_floating_point():
            raise RuntimeError(
                "result type Float can't be cast to the desired output type "
                f"{dtypes.type_word(input.dtype)}"
            )
        kind = input._array.dtype.type
        noise = plain(mask.astype(kind) / kind(1 - p), "bernoulli")
    return input.mul_(noise) if inplace else input * noise


# ***** layers *****


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input @ weightᵀ + bias, recorded as PyTorch records it (AddmmBackward0 for a batch)."""
    if input.ndim == 2 and bias is not None:
        _check_inner(input, weight)
        return apply(fn.AddmmBackward0, (bias, input, weight.t()))
    if input.ndim == 0 or weight.ndim == 0:
        raise RuntimeError(
            "both arguments to linear need to be at least 1D, but they are "
            f"{input.ndim}D and {weight.ndim}D"
        )
    if bias is not None and input.is_contiguous():
        # PyTorch flattens a contiguous input of any other rank to a batch of rows
        # (ViewBackward0), runs addmm on it and views the rows back in the input's shape
        lead = input.shape[:-1]
        rows = input.reshape(math.prod(lead), input.shape[-1])
        _check_inner(rows, weight)
        out = apply(fn.AddmmBackward0, (bias, rows, weight.t()))
        return out.view(*lead, out.shape[1])
    out = input @ weight.t()  # a strided input: matmul, then the bias added in place
    return out if bias is None else out.add_(bias)


def _check_inner(input: Tensor, weight: Tensor) -> None:
    if input.dtype is not weight.dtype:
        raise RuntimeError(
            f"mat1 and mat2 must have the same dtype, but got {dtypes.type_word(input.dtype)} and "
            f"{dtypes.type_word(weight.dtype)}"
        )
    if input.shape[1] != weight.shape[1]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({input.shape[0]}x{input.shape[1]} and "
            f"{weight.shape[1]}x{weight.shape[0]})"
        )


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """weight[input]: one row of the table per index (EmbeddingBackward0)."""
    rows = weight.shape[0]
    if padding_idx is None:
        padding_idx = -1
    elif padding_idx > 0 and padding_idx >= rows or padding_idx < -rows:
        raise AssertionError("Padding_idx must be within num_embeddings")
    elif padding_idx < 0:
        padding_idx += rows
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise UnsupportedByGradtrace(
            "embedding's max_norm, scale_grad_by_freq and sparse are not supported by "
            "gradtrace's engine"
        )
    if input.dtype.name not in ("int64", "int32"):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {input.type()} instead (while checking arguments for "
            "embedding)"
        )
    indices = input._array
    if indices.size and (indices.min() < 0 or indices.max() >= rows):
        raise IndexError("index out of range in self")
    return apply(
        fn.EmbeddingBackward0, (weight,), indices=indices.astype(np.int64), padding_idx=padding_idx
    )


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """A long tensor with one more dim, 1 at each index and 0 elsewhere (never in the graph)."""
    if tensor.dtype.name != "int64":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    indices = tensor._array
    if num_classes == -1:
        if indices.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(indices.max()) + 1
    if indices.size and indices.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if indices.size and indices.max() >= num_classes or num_classes < 0:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return plain((indices[..., None] == np.arange(num_classes)).astype(np.int64), "one_hot")


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """A border around the last len(pad)/2 dims: pad = (left, right, top, bottom, ...)."""
    if mode != "constant":
        raise UnsupportedByGradtrace(
            f"F.pad(mode={mode!r}) is not supported by gradtrace's engine; mode='constant' is"
        )
    for i, width in enumerate(pad):
        if not isinstance(width, int) or isinstance(width, bool):
            raise TypeError(
                "pad(): argument 'pad' (position 2) must be tuple of ints, but found element of "
                f"type {type(width).__name__} at pos {i}"
            )
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * input.ndim:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but "
            f"got padding length {len(pad)} and input of dimension {input.ndim}"
        )
    widths = [(0, 0)] * input.ndim
    for i in range(len(pad) // 2):  # the pairs run from the last dim backwards
        widths[input.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    for (low, high), size in zip(widths, input.shape, strict=True):
        if size + min(low, 0) + min(high, 0) < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
    return apply(fn.ConstantPadNdBackward0, (input,), widths=widths, value=value or 0)


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """softmax(query @ keyᵀ / √E + mask) @ value.

    PyTorch's CPU picks its fused flash kernel for 4-d inputs (one node) and its math
    composite for the others (scaled matmuls and a safe softmax); both are recorded as it does.
    """
    if dropout_p > 0.0 or enable_gqa:
        raise UnsupportedByGradtrace(
            "scaled_dot_product_attention with dropout_p > 0 or enable_gqa is not supported by "
            "gradtrace's engine"
        )
    if is_causal and attn_mask is not None and query.ndim != 4:
        raise RuntimeError(
            "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
            "is_causal=True"
        )
    scale = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    dt = query._array.dtype
    masks = []  # additive: 0 where attention is allowed, -inf where a boolean mask says no
    if is_causal:
        masks.append(np.tril(np.ones((query.shape[-2], key.shape[-2]), bool)))
    if attn_mask is not None:
        masks.append(attn_mask._array)  # with is_causal, the fused kernel applies both
    masks = [
        np.where(m, np.zeros((), dt), dt.type(-np.inf)) if m.dtype == np.bool_ else m for m in masks
    ]
    mask = sum(masks[1:], masks[0]) if masks else None
    if query.ndim == 4:
        return apply(
            fn.ScaledDotProductFlashAttentionForCpuBackward0,
            (query, key, value),
            scale=scale,
            mask=None if mask is None else mask.astype(dt, copy=False),
        )
    root = math.sqrt(scale)  # the math path scales query and key by √scale each
    scores = apply(fn.MulBackward1, (query,), other=root) @ apply(
        fn.MulBackward1, (key.transpose(-2, -1),), other=root
    )
    if mask is not None:
        scores.add_(plain(mask.astype(dt, copy=False), "attn_mask"))
    weights = apply(fn.SafeSoftmaxBackward0, (scores,), dim=scores.ndim - 1)
    return weights @ value


def normalize(
    input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None
) -> Tensor:
    """input / max(‖input‖ₚ along dim, eps), as PyTorch composes it."""
    if out is not None:
        raise UnsupportedByGradtrace("normalize(out=...) is not supported by gradtrace's engine")
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return input / denom


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """Σ (x1/‖x1‖)·(x2/‖x2‖) along dim; each norm is clamped at eps outside the graph."""
    shape = broadcast_shapes(x1._array.shape, x2._array.shape)
    x1 = x1 if x1.shape == shape else x1.expand(shape)
    x2 = x2 if x2.shape == shape else x2.expand(shape)
    norms = []
    for x in (x1, x2):
        norm = x.norm(2, dim, keepdim=True).clone()
        with no_grad():
            norm.clamp_(min=eps)  # in place and outside the graph, as PyTorch clamps it
        norms.append(norm)
    return ((x1 / norms[0]) * (x2 / norms[1])).sum(dim)


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """‖x1 - x2 + eps‖ₚ along the last dim (the eps keeps the gradient finite at x1 = x2)."""
    last = max(x1.ndim, x2.ndim) - 1
    shifted = apply(fn.AddBackward1, (x1 - x2,), other=eps)
    return apply(fn.NormBackward1, (shifted,), ord=p, dims=(last,), keepdim=keepdim)


# ***** losses *****


def _reduction(
    reduction: str, size_average: bool | None = None, reduce: bool | None = None, check=True
) -> str:
    """The reduction to use, from the legacy size_average/reduce flags when either is given."""
    if size_average is not None or reduce is not None:
        warnings.warn(
            "size_average and reduce args will be deprecated, please use reduction='"
            + _legacy_reduction(size_average, reduce)
            + "' instead.",
            UserWarning,
            stacklevel=3,
        )
        return _legacy_reduction(size_average, reduce)
    if check and reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _legacy_reduction(size_average: bool | None, reduce: bool | None) -> str:
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        return "mean"
    return "sum" if reduce else "none"


def _broadcast_pair(input: Tensor, target: Tensor) -> tuple:
    """Both operands stretched to a common shape, with PyTorch's warning when they differ."""
    if input.shape != target.shape:
        warnings.warn(
            f"Using a target size ({target.shape!r}) that is different to the input size "
            f"({input.shape!r}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            UserWarning,
            stacklevel=3,
        )
    # PyTorch broadcasts both first, so a stretched input shows an ExpandBackward0
    shape = broadcast_shapes(input._array.shape, target._array.shape)
    input = input if input.shape == shape else input.expand(shape)
    target = target if target.shape == shape else target.expand(shape)
    return input, target


def _promoted(input: Tensor, target: Tensor) -> tuple:
    """Both arrays in the dtype the loss is computed in (an integer target counts as float)."""
    dt = dtypes.result_type([(input.dtype, input.ndim), (target.dtype, target.ndim)], []).np
    return input._array.astype(dt, copy=False), target._array.astype(dt, copy=False)


def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    reduction = _reduction(reduction, size_average, reduce, check=False)
    input, target = _broadcast_pair(input, target)
    if weight is not None:
        return _weighted((input - target) ** 2, weight, input, reduction)
    _reduction(reduction)
    arrays = _promoted(input, target)
    _floating_array(arrays[0], "mse_cpu")
    return apply(fn.MseLossBackward0, (input, target), arrays=arrays, reduction=reduction)


def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """mean |input - target|: PyTorch builds it from sub, abs and mean (no fused node)."""
    reduction = _reduction(reduction, size_average, reduce, check=False)
    input, target = _broadcast_pair(input, target)
    if weight is not None:
        return _weighted((input - target).abs(), weight, input, reduction)
    errors = (input - target).abs()
    if _reduction(reduction) == "none":
        return errors
    return errors.mean() if reduction == "mean" else errors.sum()


def _weighted(errors: Tensor, weight: Tensor, input: Tensor, reduction: str) -> Tensor:
    # the weight= form PyTorch 2.13 writes in Python: a weighted mean divides by Σ weight
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    weighted = errors * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return weighted.sum()
    if reduction == "mean":
        return weighted.sum() / weight.sum()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """Squared error inside ±beta (halved, over beta), absolute error outside."""
    reduction = _reduction(reduction, size_average, reduce)
    input, target = _broadcast_pair(input, target)
    if beta == 0.0:
        return l1_loss(input, target, reduction=reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    arrays = _promoted(input, target)
    _floating_array(arrays[0], "smooth_l1_cpu")
    return apply(
        fn.SmoothL1LossBackward0,
        (input, target),
        arrays=arrays,
        beta=beta,
        reduction=reduction,
    )


def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Tensor | None = None,
) -> Tensor:
    """Squared error inside ±delta (halved), delta-scaled absolute error outside."""
    input, target = _broadcast_pair(input, target)
    if weight is None:
        _reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    arrays = _promoted(input, target)
    _floating_array(arrays[0], "huber_cpu")
    if weight is not None:
        if weight.shape != input.shape:
            raise ValueError("Weights and input must have the same size.")
        loss = apply(
            fn.HuberLossBackward0, (input, target), arrays=arrays, delta=delta, reduction="none"
        )
        weighted = loss * weight
        if reduction == "none":
            return weighted
        if reduction == "sum":
            return weighted.sum()
        if reduction == "mean":
            return weighted.mean()
        raise ValueError(
            f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'."
        )
    return apply(
        fn.HuberLossBackward0, (input, target), arrays=arrays, delta=delta, reduction=reduction
    )


def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """-(target·log(input) + (1 - target)·log(1 - input)), each log clamped at -100."""
    reduction = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(
            f"Using a target size ({target.shape!r}) that is different to the input size "
            f"({input.shape!r}) is deprecated. Please ensure they have the same size."
        )
    if weight is not None:
        weight = weight.expand(broadcast_shapes(target.shape, weight.shape))
    for other in (target, weight):
        if other is not None and other.dtype is not input.dtype:
            raise RuntimeError(
                f"Found dtype {dtypes.type_word(other.dtype)} but expected "
                f"{dtypes.type_word(input.dtype)}"
            )
    _floating_kernel(input, "binary_cross_entropy")
    _check_probabilities(input._array, target._array)
    return apply(
        fn.BinaryCrossEntropyBackward0, (input, target), weight=raw(weight), reduction=reduction
    )


def _check_probabilities(input: np.ndarray, target: np.ndarray) -> None:
    # PyTorch's kernel checks element by element, the input before the target
    bad_input = ~((input >= 0) & (input <= 1))
    bad_target = ~((target >= 0) & (target <= 1))
    bad = np.flatnonzero((bad_input | bad_target).ravel())
    if bad.size:
        which = "input" if bad_input.ravel()[bad[0]] else "target"
        raise RuntimeError(f"all elements of {which} should be between 0 and 1")


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """BCE of sigmoid(input), computed from the logits without overflow; pos_weight scales the
    positive term (target·log σ(input))."""
    reduction = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(
            f"Target size ({target.shape!r}) must be the same as input size ({input.shape!r})"
        )
    _floating_kernel(input, "log_sigmoid_cpu")  # its first step is log_sigmoid(input)
    a, t = _promoted(input, target)
    if not target.is_floating_point():
        # PyTorch computes (1 - target) in place in the target's dtype, which cannot hold it
        raise RuntimeError(
            f"result type {dtypes.type_word(dtypes.from_numpy(a.dtype))} can't be cast to the "
            f"desired output type {dtypes.type_word(target.dtype)}"
        )
    return apply(
        fn.BinaryCrossEntropyWithLogitsBackward0,
        (input, target),
        arrays=(a, t),
        weight=raw(weight),
        pos_weight=raw(pos_weight),
        reduction=reduction,
    )


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    ignore_index: int = -100,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """-input[i, target[i]] (times weight[target[i]]), over the targets not ignored."""
    reduction = _reduction(reduction, size_average, reduce)
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim != 1 and target.ndim >= 1 and input.shape[0] != target.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
            f"({target.shape[0]})."
        )
    if input.ndim > 2:
        raise UnsupportedByGradtrace(
            "nll_loss and cross_entropy over extra dimensions (N, C, d1, ...) are not supported "
            "by gradtrace's engine; flatten them into the batch first"
        )
    if target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input.ndim == 1 and target.ndim == 1 and target.shape[0] != 1:
        raise RuntimeError(
            f"size mismatch (got input: {list(input.shape)}, target: {list(target.shape)})"
        )
    classes = input.shape[-1]
    _check_class_weight(weight, classes, "")
    if target.dtype.name not in ("int64", "uint8"):
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {dtypes.type_word(target.dtype)}"
        )
    _floating_kernel(input, "nll_loss_out_frame")
    if weight is not None and weight.dtype is not input.dtype:
        raise RuntimeError(
            f"expected scalar type {dtypes.type_word(input.dtype)} but found "
            f"{dtypes.type_word(weight.dtype)}"
        )
    targets = target._array.astype(np.int64)
    bad = targets[(targets != ignore_index) & ((targets < 0) | (targets >= classes))]
    if bad.size:
        raise IndexError(f"Target {int(bad.flat[0])} is out of bounds.")
    return apply(
        fn.NllLossBackward0,
        (input,),
        target=targets,
        reduction=reduction,
        weight=raw(weight),
        ignore_index=ignore_index,
    )


def _check_class_weight(weight: Tensor | None, classes: int, prefix: str) -> None:
    if weight is not None and (weight.ndim != 1 or weight.numel() != classes):
        raise RuntimeError(
            f"{prefix}weight tensor should be defined either for all {classes} classes or no "
            f"classes but got weight tensor of shape: {list(weight.shape)}"
        )


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    ignore_index: int = -100,
    reduce=None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """log_softmax over the classes, then the negative log-likelihood of the targets.

    A target of the input's shape holds class probabilities; otherwise class indices.
    """
    reduction = _reduction(reduction, size_average, reduce)
    class_dim = 0 if input.ndim == 1 else 1
    if input.shape == target.shape:
        if not target.is_floating_point():
            raise RuntimeError(
                "Expected floating point type for target with class probabilities, got "
                f"{dtypes.type_word(target.dtype)}"
            )
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_probabilities(input, target, weight, reduction, label_smoothing)
    if label_smoothing > 0.0:
        _check_smoothing(label_smoothing)
        return _cross_entropy_smoothed(
            input, target, weight, ignore_index, reduction, label_smoothing
        )
    return nll_loss(
        input.log_softmax(class_dim), target, weight, None, ignore_index, None, reduction
    )


def _check_smoothing(label_smoothing: float) -> None:
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")


def _class_view(weight: Tensor, ndim: int, class_dim: int) -> Tensor:
    """weight shaped to broadcast along the class dim: [1, C, 1, ...]."""
    if ndim == 1:
        return weight
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return weight.view(shape)


def _cross_entropy_probabilities(input, target, weight, reduction, label_smoothing) -> Tensor:
    class_dim = 0 if input.ndim == 1 else 1
    classes = input.shape[class_dim]
    _check_class_weight(weight, classes, "cross_entropy: ")
    log_probs = input.log_softmax(class_dim)
    if label_smoothing > 0.0:
        _check_smoothing(label_smoothing)
        kept = apply(fn.MulBackward1, (target,), other=1 - label_smoothing)
        target = apply(fn.AddBackward1, (kept,), other=label_smoothing / classes)
    products = log_probs * target
    if weight is not None:
        products = products * _class_view(weight, input.ndim, class_dim)
    if reduction == "none":
        return -products.sum(class_dim)
    total = -products.sum()
    if reduction == "sum":
        return total
    return apply(fn.DivBackward1, (total,), other=input.numel() // classes)


def _cross_entropy_smoothed(input, target, weight, ignore_index, reduction, label_smoothing):
    """(1 - ε)·nll + ε/C·Σ -log p over the classes: PyTorch's composite, op for op."""
    class_dim = 0 if input.ndim == 1 else 1
    classes = input.shape[class_dim]
    log_probs = input.log_softmax(class_dim)
    nll = nll_loss(log_probs, target, weight, None, ignore_index, None, reduction)
    ignored = target == ignore_index
    if weight is not None:
        smooth = -(log_probs * _class_view(weight, input.ndim, class_dim)).sum(class_dim)
    else:
        smooth = -log_probs.sum(class_dim)
    smooth.masked_fill_(ignored, 0.0)
    if reduction == "mean":
        counted = ~ignored._array
        if weight is not None:
            # Σ of the counted targets' weights, as nll_loss's mean divides by
            total = numerics.sum_like_torch(weight._array[target._array[counted]])
            smooth = smooth.sum() / plain(total, "sum")
        else:
            smooth = smooth.sum() / plain(np.int64(counted.sum()), "sum")
    elif reduction == "sum":
        smooth = smooth.sum()
    return apply(fn.MulBackward1, (nll,), other=1 - label_smoothing) + apply(
        fn.MulBackward1, (smooth,), other=label_smoothing / classes
    )


def kl_div(
    input: Tensor,
    target: Tensor,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """Σ target·(log target - input), input being log-probabilities; PyTorch composes it too."""
    if size_average is not None or reduce is not None:
        reduction = _reduction(reduction, size_average, reduce)
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the support "
                "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
                "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
                "major release.",
                UserWarning,
                stacklevel=2,
            )
        if reduction != "batchmean":
            _reduction(reduction)
    if not (input.is_floating_point() and target.is_floating_point()):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        pointwise = target.exp() * (target - input)
    else:
        # target·log(target), with 0·log 0 = 0; the target needs no gradient here
        t = target._array
        with np.errstate(divide="ignore", invalid="ignore"):
            entropy = np.where(t == 0, np.zeros((), t.dtype), t * np.log(t))
        if target.requires_grad:
            raise UnsupportedByGradtrace(
                "kl_div with a target that requires grad (PyTorch's XlogyBackward0) is not "
                "supported by gradtrace's engine"
            )
        pointwise = plain(entropy, "xlogy") - target * input
    if reduction in ("none",):
        return pointwise
    if reduction == "mean":
        return pointwise.mean()
    total = pointwise.sum()
    return total / input.shape[0] if reduction == "batchmean" and input.ndim else total


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    # apply_loss_reduction, for the losses PyTorch composes from plain ops
    if reduction == "none":
        return loss
    return loss.mean() if reduction == "mean" else loss.sum()


def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """max(0, -target·(input1 - input2) + margin): target 1 wants input1 ranked higher."""
    reduction = _reduction(reduction, size_average, reduce)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.shape!r}, input2: {input2.shape!r}, target: {target.shape!r} "
        )
    hinge = apply(fn.AddBackward1, (-target * (input1 - input2),), other=margin)
    return _reduce(_in_place(fn.ClampMinBackward0, hinge, min=0), reduction)


def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """input where target is 1, max(0, margin - input) where it is -1."""
    reduction = _reduction(reduction, size_average, reduce)
    zeros = plain(np.zeros_like(input._array), "zeros_like")
    below = plain(np.full_like(input._array, margin), "full_like") - input
    below = _in_place(fn.ClampMinBackward0, below, min=0)
    loss = where(target != 1, below, zeros) + where(target != -1, input, zeros)
    return _reduce(loss, reduction)


def soft_margin_loss(
    input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean"
) -> Tensor:
    """log(1 + exp(-target·input)), a smooth hinge for targets ±1."""
    reduction = _reduction(reduction, size_average, reduce)
    a, t = _promoted(input, target)
    return apply(fn.SoftMarginLossBackward0, (input,), arrays=(a,), target=t, reduction=reduction)


def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """1 - cos where target is 1, max(0, cos - margin) where it is -1 (PyTorch's composite)."""
    reduction = _reduction(reduction, size_average, reduce)
    dim = input1.ndim - 1
    eps = 1e-12  # keeps the denominator above 0 for zero vectors
    dot = (input1 * input2).sum(dim)
    squares = [apply(fn.AddBackward1, ((x * x).sum(dim),), other=eps) for x in (input1, input2)]
    cos = dot / (squares[0] * squares[1]).sqrt_()
    zeros = plain(np.zeros_like(cos._array), "zeros_like")
    similar = plain(np.ones_like(cos._array), "ones_like") - cos
    apart = _in_place(fn.ClampMinBackward0, apply(fn.SubBackward1, (cos,), other=margin), min=0)
    loss = where(target == 1, similar, zeros) + where(target == -1, apart, zeros)
    return _reduce(loss, reduction)


def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average=None,
    eps: float = 1e-8,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """exp(input) - target·input for a log-rate input, else input - target·log(input + eps)."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * apply(fn.AddBackward1, (input,), other=eps).log()
    if full:
        t = target._array
        with np.errstate(divide="ignore", invalid="ignore"):
            stirling = t * np.log(t) - t + 0.5 * np.log(2 * np.pi * t)
        loss += plain(np.where(t <= 1, 0, stirling).astype(t.dtype), "stirling")
    return _reduce(loss, reduction)


def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """½(log var + (input - target)²/var), the variance clamped at eps outside the graph."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * plain(np.ones_like(input._array), "ones_like")
    elif (var._array < 0).any():
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif (
            input.ndim == var.ndim
            and sum(y for x, y in zip(input.shape, var.shape, strict=True) if x != y) == 1
        ):
            pass  # one dim of size 1: broadcast
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss += 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """One binary cross-entropy per class (on logits), averaged over the classes."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = loss.sum(dim=class_dim) / input.shape[class_dim]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, reduction)


# ***** normalisation (the layers are in engine/nn/normalization.py) *****


def _array_or_none(t: Tensor | None):
    return None if t is None else t._array


def layer_norm(input: Tensor, normalized_shape, weight=None, bias=None, eps: float = 1e-5):
    """F.layer_norm: normalise over the last len(normalized_shape) dims of each sample."""
    normalized_shape = tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(normalized_shape) :]) != normalized_shape or (
        len(normalized_shape) > input.ndim
    ):
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*, {', '.join(str(n) for n in normalized_shape)}], but got input of size"
            f"{list(input.shape)}"
        )
    arrays = (input._array, _array_or_none(weight), _array_or_none(bias))
    return apply(
        fn.NativeLayerNormBackward0,
        (input, weight, bias),
        arrays=arrays,
        normalized_shape=normalized_shape,
        eps=eps,
    )


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """F.batch_norm: normalise each channel (dim 1) over the batch and any length dim."""
    if training:
        size = input.shape
        if size[0] * math.prod(size[2:]) == 1:
            raise ValueError(
                f"Expected more than 1 value per channel when training, got input size {size}"
            )
    elif running_mean is None or running_var is None:
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
    if input.ndim not in (2, 3):
        raise UnsupportedByGradtrace(
            "batch_norm on inputs with more than 3 dimensions is not supported by gradtrace's "
            "engine (BatchNorm1d is)"
        )
    arrays = (input._array, _array_or_none(weight), _array_or_none(bias))
    out = apply(
        fn.NativeBatchNormBackward0,
        (input, weight, bias),
        arrays=arrays,
        running_mean=_array_or_none(running_mean),
        running_var=_array_or_none(running_var),
        training=training,
        eps=eps,
        batch_stats=(batch_stats := []),
    )
    if batch_stats and running_mean is not None:
        # PyTorch's kernel folds the batch's statistics into the running ones in place, with no
        # version bump; done here, after the op is recorded, so the trace shows the op first
        new = moments.running_stats(
            running_mean._array, running_var._array, *batch_stats[0], momentum
        )
        for stat, values in zip((running_mean, running_var), new, strict=True):
            stat._array[...] = values
            rewritten(stat, "batch_norm")
    return out


def __getattr__(name: str):
    raise missing_attribute("torch.nn.functional", name, __all__)
