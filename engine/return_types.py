"""torch.return_types: the (values, indices) pairs that max(dim), min(dim), sort and topk return."""

from typing import NamedTuple


def _pair(name: str) -> type:
    class Pair(NamedTuple):
        values: object
        indices: object

        def __repr__(self) -> str:
            return f"torch.return_types.{name}(\nvalues={self.values!r},\nindices={self.indices!r})"

    Pair.__name__ = Pair.__qualname__ = name
    Pair.__module__ = "torch.return_types"  # <class 'torch.return_types.max'>
    return Pair


ReturnTypes = {name: _pair(name) for name in ("max", "min", "sort", "topk")}
