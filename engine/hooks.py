"""Hooks: code of the program's own that runs inside a backward pass.

`Tensor.register_hook(hook)` hangs hook(grad) on the node the tensor's gradient arrives at (its
grad_fn, or a leaf's AccumulateGrad), so it runs once that gradient is complete: what it returns
replaces the gradient, before a leaf's .grad adds it up, before retain_grad() keeps it and before
it flows on. A node's own hooks (grad_fn.register_prehook / register_hook) run around its backward.
The walk (engine/backward.py) calls `tensor_hooks`, `pre_hooks` and `post_hooks` below.
"""

from __future__ import annotations

from engine import record
from engine.graph import Node, RemovableHandle
from engine.tensor import Tensor, tensor_methods


@tensor_methods
class Hooks:
    def register_hook(self, hook) -> RemovableHandle:
        """Call hook(grad) whenever this tensor's gradient is computed; a Tensor it returns is
        used instead of grad. `handle.remove()` takes the hook out."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is None:  # a leaf: its hooks live on its AccumulateGrad, kept for them
            return record.accumulator(self, keep=True).add_tensor_hook(0, hook)
        node, output_nr = record.edge(self)
        return node.add_tensor_hook(output_nr, hook)


def tensor_hooks(node: Node, grads: list, as_tensor, as_grad) -> list:
    """Run the tensor hooks of each of the node's outputs, in the order they were registered."""
    for output_nr, hooks in node.tensor_hooks.items():
        grad = grads[output_nr]
        for hook in list(hooks.values()):
            if grad is None:
                continue
            before = as_tensor(grad)
            result = hook(before)
            if result is not None:
                _check_replacement(before, result, hook)
                grad = as_grad(result)
        grads[output_nr] = grad
    return grads


def pre_hooks(node: Node, grads: list, as_tensor, as_grad) -> list:
    for hook in list(node.pre_hooks.values()):
        result = hook(tuple(_maybe(as_tensor, g) for g in grads))
        if result is not None:
            grads = [_maybe(as_grad, g) for g in result]
    return grads


def post_hooks(node: Node, grad_inputs: list, grads: list, as_tensor, as_grad) -> list:
    outputs = tuple(_maybe(as_tensor, g) for g in grads)
    for hook in list(node.post_hooks.values()):
        result = hook(tuple(_maybe(as_tensor, g) for g in grad_inputs), outputs)
        if result is not None:
            grad_inputs = [_maybe(as_grad, g) for g in result]
    return grad_inputs


def _maybe(convert, g):
    return None if g is None else convert(g)


def _check_replacement(original: Tensor, result, hook) -> None:
    """PyTorch's checks on what a hook returned: a Tensor of the same dtype and shape."""
    if not isinstance(result, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
    name = getattr(hook, "__name__", type(hook).__name__)
    if result.dtype != original.dtype:
        raise RuntimeError(
            f"hook '{name}' has changed the type of value (was {original.type()} got "
            f"{result.type()})"
        )
    if result.shape != original.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")
