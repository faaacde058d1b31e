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

    def vdot(self, other):
        return vdot(self, other)


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
    if a._array.dtype != v._array.dtype:
        # mv runs as addmv into a result of the vector's dtype, which its message names first
        words = [dtypes.type_word(t.dtype) for t in (v, a, v)]
        raise RuntimeError(
            f"addmv input tensors must have the same dtype, but got {words[0]}, {words[1]}, "
            f"and {words[2]}"
        )
    return apply(fn.MvBackward0, (a, v), arrays=_matrix_operands(a, v))


def dot(a: Tensor, b: Tensor) -> Tensor:
    return apply(fn.DotBackward0, (a, b), arrays=_vector_operands(a, b))


def vdot(a: Tensor, b: Tensor) -> Tensor:
    """The dot product conjugating a: for real tensors dot's numbers, under its own node."""
    return apply(fn.VdotBackward0, (a, b), arrays=_vector_operands(a, b))


def _vector_operands(a: Tensor, b: Tensor) -> tuple:
    """dot's and vdot's checks, in PyTorch's order: 1-d, one dtype, one length."""
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a._array.dtype != b._array.dtype:
        raise RuntimeError(
            "dot : expected both vectors to have same dtype, but found "
            f"{dtypes.type_word(a.dtype)} and {dtypes.type_word(b.dtype)}"
        )
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(
            "inconsistent tensor size, expected tensor "
            f"[{a.shape[0]}] and src [{b.shape[0]}] to have the same number of elements, but got "
            f"{a.shape[0]} and {b.shape[0]} elements respectively"
        )
    return a._array, b._array


# ***** einsum, the way PyTorch computes it: align, then multiply pairs with bmm *****

_LABELS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"  # PyTorch's label order


def einsum(equation: str, *operands) -> Tensor:
    """torch.einsum, recorded as PyTorch records it (without opt_einsum: pairs left to right).

    Each operand is unsqueezed and permuted so that all share one order of dims (the output's
    labels, then the summed ones in label order); a pair is multiplied by `_sum_product` (mul,
    or permute + reshape + bmm + view + permute); summed dims are viewed away at the end.
    """
    if len(operands) == 1 and isinstance(operands[0], list | tuple):
        operands = tuple(operands[0])
    inputs, output = _parse(equation, operands)
    # the output's dims, then an ellipsis left out of it, then the other summed labels
    summed = {c for labels in inputs for c in labels if c not in output}
    order = [
        *output,
        *sorted((c for c in summed if c.startswith("...")), key=lambda c: int(c[3:])),
        *sorted((c for c in summed if not c.startswith("...")), key=_LABELS.index),
    ]
    aligned, sizes = [], {}
    counts = dict.fromkeys(order, 0)  # how many operands have each label at a size other than 1
    for i, (labels, t) in enumerate(zip(inputs, operands, strict=True)):
        t, labels = _diagonals(t, labels, i)
        for c, n in zip(labels, t.shape, strict=True):
            if sizes.get(c, 1) != 1 and n != 1 and n != sizes[c]:
                raise RuntimeError(
                    f"einsum(): subscript {c} has size {n} for operand {i} which does not "
                    f"broadcast with previously seen size {sizes[c]}"
                )
            sizes[c] = n if sizes.get(c, 1) == 1 else sizes[c]
            counts[c] += n != 1
        for _ in range(len(order) - len(labels)):
            t = t.unsqueeze(t.ndim)  # a dim for each label this operand lacks, at the end
        missing = iter(range(len(labels), len(order)))
        aligned.append(
            t.permute(*[labels.index(c) if c in labels else next(missing) for c in order])
        )
    kept = len(output)
    if len(aligned) == 1:
        summed = tuple(range(kept, len(order)))
        return aligned[0].sum(summed) if summed else aligned[0]
    while len(aligned) > 1:
        a, b = aligned[:2]
        # a summed dim is summed in the product that is its last use; or at once, if only
        # one of the two still has it
        together, a_alone, b_alone = [], [], []
        for d in range(kept, len(order)):
            if a.shape[d] != 1 and b.shape[d] != 1:
                counts[order[d]] -= 1
                if counts[order[d]] == 1:
                    together.append(d)
                    counts[order[d]] = 0
            elif counts[order[d]] == 1:
                (a_alone if a.shape[d] != 1 else b_alone).append(d)
                counts[order[d]] = 0
        if a_alone:
            a = a.sum(a_alone, keepdim=True)
        if b_alone:
            b = b.sum(b_alone, keepdim=True)
        aligned[:2] = [_sum_product(a, b, together)]
    out = aligned[0]
    if kept == len(order):
        return out
    return out.view(out.shape[:kept])


def _parse(equation: str, operands) -> tuple:
    """The operands' labels and the output's, with PyTorch's checks and messages.

    Labels come back as lists; the dims an ellipsis covers become the labels "...0", "...1",
    ... counted from the right, so operands with fewer of them broadcast as PyTorch's do.
    """
    equation = equation.replace(" ", "")
    left, arrow, right = equation.partition("->")
    terms = left.split(",")
    for position, c in enumerate(equation):
        if c not in _LABELS and c not in ",->.":
            raise RuntimeError(
                f"einsum(): invalid subscript given at index {position} in the equation string, "
                "subscripts must be in [a-zA-Z]"
            )
    if len(terms) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    covered = []  # how many dims each operand's ellipsis covers
    for i, (term, t) in enumerate(zip(terms, operands, strict=True)):
        if "." in term.replace("...", "", 1):
            raise RuntimeError(
                f"einsum(): found '.' for operand {i} "
                + (
                    "for which an ellipsis was already found"
                    if "..." in term
                    else "that is not part of any ellipsis"
                )
            )
        named = len(term.replace("...", ""))
        if "..." in term:
            if named > t.ndim:
                raise RuntimeError(
                    f"einsum(): the number of subscripts in the equation ({named}) is more than "
                    f"the number of dimensions ({t.ndim}) for operand {i}"
                )
            covered.append(t.ndim - named)
        elif named != t.ndim:
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({named}) does not "
                f"match the number of dimensions ({t.ndim}) for operand {i} and no ellipsis was "
                "given"
            )
    widest = max(covered, default=0)
    ellipsis = [f"...{j}" for j in range(widest)]
    inputs = []
    for term, t in zip(terms, operands, strict=True):
        n = t.ndim - len(term.replace("...", ""))
        inputs.append(_labels(term, ellipsis[widest - n :] if "..." in term else []))
    if not arrow:
        every = "".join(terms).replace("...", "")
        single = sorted((c for c in set(every) if every.count(c) == 1), key=_LABELS.index)
        return inputs, ellipsis + single
    for c in right.replace("...", ""):
        if right.count(c) > 1:
            raise RuntimeError(
                f"einsum(): output subscript {c} appears more than once in the output"
            )
        if c not in left:
            raise RuntimeError(
                f"einsum(): output subscript {c} does not appear in the equation for any input "
                "operand"
            )
    return inputs, _labels(right, ellipsis)


def _diagonals(t: Tensor, labels: list, operand: int) -> tuple:
    """A label repeated in one operand takes the diagonal (ii->i), put where the label was first."""
    seen: dict = {}
    for c in labels:
        if c not in seen:
            seen[c] = len(seen)
            continue
        first, now = seen[c], len(seen)
        if t.shape[first] != t.shape[now]:
            raise RuntimeError(
                f"einsum(): subscript {c} is repeated for operand {operand} but the sizes don't "
                f"match, {t.shape[now]} != {t.shape[first]}"
            )
        t = t.diagonal(0, first, now).movedim(-1, first)
    return t, list(seen)


def _labels(term: str, ellipsis: list) -> list:
    """A term's labels, its ellipsis replaced by the labels of the dims it covers."""
    head, dots, tail = term.partition("...")
    return [*head, *ellipsis, *tail] if dots else list(term)


def _sum_product(a: Tensor, b: Tensor, summed: list) -> Tensor:
    """a * b summed over `summed` (dims kept as 1), as PyTorch's sumproduct_pair computes it."""
    if not summed:
        return a * b
    both, a_only, b_only = [], [], []  # the dims that stay, by where they are not 1
    sum_size = 1
    for d in range(a.ndim):
        in_a, in_b = a.shape[d] != 1, b.shape[d] != 1
        if d in summed:
            if in_a and in_b:
                sum_size *= a.shape[d]
            elif in_a:
                a = a.sum(d, keepdim=True)
            elif in_b:
                b = b.sum(d, keepdim=True)
        elif in_a and in_b:
            both.append(d)
        elif in_a:
            a_only.append(d)
        else:
            b_only.append(d)
    if a_only and b_only and b_only[-1] < a_only[0]:
        # PyTorch swaps the sides, so that bmm writes the output dims in their order
        a, b, a_only, b_only = b, a, b_only, a_only
    sizes = {"both": [a.shape[d] for d in both], "a": [a.shape[d] for d in a_only]}
    sizes["b"] = [b.shape[d] for d in b_only]
    rows, cols = math.prod(sizes["a"]), math.prod(sizes["b"])
    batch = math.prod(sizes["both"])
    left = a.permute(*both, *a_only, *summed, *b_only).reshape(batch, rows, sum_size)
    right = b.permute(*both, *summed, *b_only, *a_only).reshape(batch, sum_size, cols)
    out = bmm(left, right).view(*sizes["both"], *sizes["a"], *[1] * len(summed), *sizes["b"])
    back = [0] * a.ndim
    for i, d in enumerate([*both, *a_only, *summed, *b_only]):
        back[d] = i
    return out.permute(*back)
