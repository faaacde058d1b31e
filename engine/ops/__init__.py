"""What a tensor can do, by kind: each module adds its group of methods to Tensor on import.

arithmetic (+ - * / ** @), comparison (== < & ~), pointwise (exp, relu, clamp, softmax),
reductions (sum, mean, max, argmax), views (view, reshape, permute, expand), indexing (t[k]),
inplace (add_, zero_, copy_), conversion (to, float, long), linalg (matmul, mm, mv, dot) and
autograd (backward), sampling (uniform_, normal_, bernoulli_),
factories (new_zeros, new_tensor).
"""

from engine.ops import (  # noqa: F401 - imported for the methods they attach
    arithmetic,
    autograd,
    comparison,
    conversion,
    factories,
    indexing,
    inplace,
    linalg,
    pointwise,
    reductions,
    sampling,
    views,
)
