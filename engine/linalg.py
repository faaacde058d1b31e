"""torch.linalg: only vector_norm so far; the other names PyTorch has there fail clearly."""

from __future__ import annotations

from engine.ops.reductions import vector_norm
from engine.unsupported import missing_attribute

__all__ = ["vector_norm"]


def __getattr__(name: str):
    raise missing_attribute("torch.linalg", name, __all__)
