"""Tensor.backward: the method that starts a backward pass (the walk is engine/backward.py)."""

from __future__ import annotations

from engine import backward as walk
from engine.tensor import tensor_methods


@tensor_methods
class Autograd:
    """Starting backward from a tensor."""

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Send d(self)/d(self) (or `gradient`) back through the graph into the leaves' .grad."""
        walk.backward(
            (self,), None if gradient is None else (gradient,), retain_graph, create_graph, inputs
        )
