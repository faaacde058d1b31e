"""Matrix products: matmul and its cases (dot, mv, mm), as torch.matmul dispatches them."""

from __future__ import annotations

from engine import functions as fn
from engine.record import apply
from engine.tensor import Tensor
from engine.unsupported import UnsupportedByGradtrace


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
