"""torch.linalg: only vector_norm so far; the other names PyTorch has there fail clearly."""

from __future__ import annotations

from engine.ops.reductions import vector_norm
from engine.unsupported import UnsupportedByGradtrace, missing_attribute

__all__ = ["vector_norm"]

# dir(torch.linalg) under PyTorch 2.13, until tools/record_surface.py records this namespace too
PYTORCH_NAMES = frozenset(
    [
        "LinAlgError",
        "cholesky",
        "cholesky_ex",
        "cond",
        "cross",
        "det",
        "diagonal",
        "eig",
        "eigh",
        "eigvals",
        "eigvalsh",
        "householder_product",
        "inv",
        "inv_ex",
        "ldl_factor",
        "ldl_factor_ex",
        "ldl_solve",
        "lstsq",
        "lu",
        "lu_factor",
        "lu_factor_ex",
        "lu_solve",
        "matmul",
        "matrix_exp",
        "matrix_norm",
        "matrix_power",
        "matrix_rank",
        "multi_dot",
        "norm",
        "pinv",
        "qr",
        "slogdet",
        "solve",
        "solve_ex",
        "solve_triangular",
        "svd",
        "svdvals",
        "tensorinv",
        "tensorsolve",
        "vander",
        "vecdot",
        "vector_norm",
    ]
)


def __getattr__(name: str):
    if name in PYTORCH_NAMES:
        raise UnsupportedByGradtrace(
            f"torch.linalg.{name} is not supported by gradtrace's engine (supported: vector_norm)"
        )
    raise missing_attribute("torch.linalg", name, __all__)
