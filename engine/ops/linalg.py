"""Matrix products: matmul and its cases (dot, mv, mm, bmm), as torch.matmul dispatches them,
and outer.

Batched matmul records what PyTorch's does: a batch against a matrix or vector is folded into one
mm or mv (reshape, then an _unsafe_view back); two batches are expanded to a common batch,
flattened to three dims and multiplied with bmm.
"""

from __future__ import annotations

import math

from engine import dtypes
from engine import functions as fn
from engine.record import apply
from engine.shape import broadcast_shapes
from engine.tensor import Tensor, tensor_methods


@tensor_methods
class MatrixProducts:
    """bmm and outer (matmul, mm, mv and dot are in arithmetic beside the @ operator)."""

    def bmm(self, mat2):
        return bmm(self, mat2)

    def outer(self, vec2):
        return outer(self, vec2)


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
        return apply(fn.SqueezeBackward4, (mm(a.unsqueeze(0), b),), dims=(0,))
    if a.ndim == 2 and b.ndim == 2:
        return mm(a, b)
    if a.ndim == 3 and b.ndim == 3 and (a.shape[0] == 1) != (b.shape[0] == 1):
        # PyTorch drops a lone size-1 batch, so that the other batch folds into one mm
        _check_batches(a, b)
        return matmul(a.squeeze(0), b) if a.shape[0] == 1 else matmul(a, b.squeeze(0))
    if _should_fold(a, b):
        return _folded(a, b)
    return _batched(a, b)


def _should_fold(a: Tensor, b: Tensor) -> bool:
    """PyTorch's choice between one mm (fold the batch into rows) and a bmm over the batch."""
    larger = a if a.ndim >= b.ndim else b.mT
    smaller = b if a.ndim >= b.ndim else a
    if larger.ndim < 3 or smaller.ndim > 2:
        return False
    if smaller._requires_grad:
        return True  # folding keeps the backward from making a batch-sized gradient for it
    if a.ndim == 2:
        return False  # the result would need a transposed copy
    if larger.numel() == 0:
        return True
    # fold only when the batch dims can be read as rows without a copy
    shape, strides = larger._array.shape, larger._array.strides
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(larger.ndim - 2))


def _folded(a: Tensor, b: Tensor) -> Tensor:
    """A batch of matrices times one matrix or vector (or the other way round): one mm or mv."""
    transpose = b.ndim > a.ndim  # then compute (bᵀ @ aᵀ)ᵀ, so the batch is on the left
    t1 = b.mT if transpose else a
    t2 = (a.t() if a.ndim == 2 else a) if transpose else b
    rows = t1.shape[:-1]
    folded = t1.reshape(math.prod(rows), t1.shape[-1])
    if t2.ndim == 1:
        return _unsafe_view(mv(folded, t2), rows)
    out = _unsafe_view(mm(folded, t2), (*rows, t2.shape[1]))
    return out.mT.contiguous() if transpose else out


def _batched(a: Tensor, b: Tensor) -> Tensor:
    """Batches expanded to their common batch, flattened to 3 dims and multiplied by bmm."""
    n, m = (a.shape[-2] if a.ndim > 1 else 1), a.shape[-1]
    k, p = (b.shape[-2], b.shape[-1]) if b.ndim > 1 else (b.shape[0], 1)
    batch = broadcast_shapes(tuple(a.shape[: max(a.ndim - 2, 0)]), tuple(b.shape[:-2]))
    count = math.prod(batch)
    a3 = a.expand(*batch, n, m).reshape(count, n, m)
    column = b.unsqueeze(-1) if b.ndim == 1 else b
    b3 = column.expand(*batch, k, p).reshape(count, k, p)
    out = bmm(a3, b3)
    if b.ndim == 1:
        return _unsafe_view(out.squeeze(-1), (*batch, n))
    return _unsafe_view(out, (*batch, *((n,) if a.ndim > 1 else ()), p))


def _check_batches(a: Tensor, b: Tensor) -> None:
    """bmm's size check, on the batches as they would be expanded."""
    count = math.prod(broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2])))
    if b.shape[-2] != a.shape[-1]:
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{count}, {a.shape[-1]}] but got: [{count}, {b.shape[-2]}]."
        )


def _unsafe_view(t: Tensor, shape: tuple) -> Tensor:
    return apply(fn.UnsafeViewBackward0, (t,), shape=tuple(shape))


def bmm(a: Tensor, b: Tensor) -> Tensor:
    for name, t in (("batch1", a), ("batch2", b)):
        if t.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if b.shape[0] != a.shape[0] or b.shape[1] != a.shape[2]:
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}]."
        )
    if a._array.dtype != b._array.dtype:
        raise RuntimeError(
            f"expected scalar type {dtypes.type_word(a.dtype)} but found "
            f"{dtypes.type_word(b.dtype)}"
        )
    return apply(fn.BmmBackward0, (a, b))


def outer(a: Tensor, b: Tensor) -> Tensor:
    """The outer product, recorded as PyTorch computes it: a as a column, times b."""
    for name, t in (("self", a), ("vec2", b)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    return a.reshape(a.shape[0], 1) * b


def _matrix_operands(a: Tensor, b: Tensor) -> tuple:
    if a._array.dtype != b._array.dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {c_name(a)} != {c_name(b)}"
        )
    return a._array, b._array


def c_name(t: Tensor) -> str:
    """The dtype as PyTorch's C++ messages name it: float, double, long int."""
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
    return apply(fn.MmBackward0, (a, b), arrays=_matrix_operands(a, b))


def mv(a: Tensor, v: Tensor) -> Tensor:
    if a.ndim != 2 or v.ndim != 1 or a.shape[1] != v.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({a.shape[0] if a.ndim else 0}), mat "
            f"({'x'.join(str(n) for n in a.shape)}), vec ({v.shape[0] if v.ndim else 0})"
        )
    return apply(fn.MvBackward0, (a, v), arrays=_matrix_operands(a, v))


def dot(a: Tensor, b: Tensor) -> Tensor:
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(
            "inconsistent tensor size, expected tensor "
            f"[{a.shape[0]}] and src [{b.shape[0]}] to have the same number of elements, but got "
            f"{a.shape[0]} and {b.shape[0]} elements respectively"
        )
    return apply(fn.DotBackward0, (a, b), arrays=_matrix_operands(a, b))
