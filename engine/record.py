"""Recording: running an operation and, when autograd needs it, keeping its grad_fn.

Every op of the engine goes through here. `apply` runs a node's forward on numpy arrays and links
the result into the graph; `apply_inplace` does the same for the trailing-underscore ops, writing
into the target and bumping its version counter; `leaf` makes a new tensor with no history;
`plain` a result that never joins the graph (comparisons, argmax); `bump` records a change made
without a node (optimizer steps, zero_grad). Each also tells the active tracer, if any.
"""

from __future__ import annotations

import numpy as np

from engine import tracing
from engine.grad_mode import state as grad_state
from engine.graph import AccumulateGrad, Node, SavedTensor
from engine.tensor import Tensor
from engine.unsupported import UnsupportedByGradtrace


def apply(node_cls: type[Node], inputs: tuple, arrays: tuple | None = None, **kwargs):
    """Run one operation and, when grad mode and an input call for it, record its grad_fn.

    `inputs` are the operation's differentiable slots: Tensors, or Python numbers that still
    take a slot (they show up as (None, 0) in next_functions, as in PyTorch).
    """
    node = node_cls()
    record = False
    if grad_state.enabled:
        needs = [isinstance(t, Tensor) and t._requires_grad for t in inputs]
        if True in needs:
            record = True
            node.needs_input_grad = tuple(needs)
    if arrays is None:
        arrays = [t._array if isinstance(t, Tensor) else t for t in inputs]
    result = node.forward(*arrays, **kwargs)

    if type(result) is tuple:  # several outputs (unbind)
        outs = tuple(Tensor._wrap(r, record) for r in result)
        for nr, out in enumerate(outs):
            out._output_nr = nr
        node.output_shapes = tuple((r.shape, r.dtype) for r in result)
    else:
        outs = (Tensor._wrap(result, record),)
    if record:
        edges, shapes, kinds = [], [], []
        for t, a in zip(inputs, arrays, strict=True):
            edges.append(edge(t))
            shapes.append(getattr(a, "shape", ()))
            kinds.append(t._array.dtype if isinstance(t, Tensor) else None)
        node.next_functions, node.input_shapes, node.input_dtypes = (
            tuple(edges),
            tuple(shapes),
            tuple(kinds),
        )
        if node.to_save:
            node.saved = [_saved(node, what, inputs, arrays, outs[0]) for what in node.to_save]
        for out in outs:
            out.grad_fn = node
    if node_cls.is_view:
        base = inputs[0]
        for out in outs:
            out._version_counter = base._version_counter
            out._base = base._base if base._base is not None else base
    if tracing.current is not None:
        tracing.current.on_op(node, outs, inputs, record)
    return outs if type(result) is tuple else outs[0]


def edge(t) -> tuple:
    """Where a gradient for this input goes: its grad_fn, its AccumulateGrad, or nowhere."""
    if not isinstance(t, Tensor):
        return (None, 0)
    if t.grad_fn is not None:
        return (t.grad_fn, t._output_nr)
    if t._requires_grad:
        if t._accumulator is None:
            t._accumulator = AccumulateGrad(t)
        return (t._accumulator, 0)
    return (None, 0)


def _saved(node: Node, what, inputs, arrays, out: Tensor) -> SavedTensor:
    if what == "result":
        name = node.name()
        return SavedTensor(out._array, out._version_counter, lambda: _describe(out, _short(name)))
    t = inputs[what]
    if not isinstance(t, Tensor):
        return SavedTensor(arrays[what], None, None)
    return SavedTensor(arrays[what], t._version_counter, lambda: _describe_input(t))


def _describe_input(t: Tensor) -> str:
    return _describe(t, _short(t.grad_fn.name()) if t.grad_fn is not None else None)


def _describe(t: Tensor, producer: str | None) -> str:
    kind = t.type()
    text = f"[{kind} [{', '.join(str(n) for n in t.shape)}]]"
    return text if producer is None else f"{text}, which is output {t._output_nr} of {producer},"


def _short(node_name: str) -> str:
    # PyTorch names the producer without its "Backward0" suffix in this message
    head, sep, _ = node_name.rpartition("Backward")
    return head if sep else node_name


def plain(array, op: str) -> Tensor:
    """A result that never joins the graph (comparisons, argmax, ...)."""
    out = Tensor._wrap(np.asarray(array))
    if tracing.current is not None:
        tracing.current.on_tensor(out, op, ())
    return out


# ***** in-place: same storage, version counter bumped *****


def apply_inplace(node_cls, target: Tensor, inputs: tuple, arrays: tuple, **kwargs) -> Tensor:
    """Run an op and write its result into `target` (inputs[0]), as PyTorch's `x.op_()` does.

    `arrays` are the inputs as the node computes on them (already cast to the target's dtype).
    """
    recording = grad_state.enabled and any(
        isinstance(t, Tensor) and t._requires_grad for t in inputs
    )
    if recording:
        if target.is_leaf and target._requires_grad:
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation."
            )
        if target._base is not None:
            if target._base.is_leaf and target._base._requires_grad:
                raise RuntimeError(
                    "a view of a leaf Variable that requires grad is being used in an in-place "
                    "operation."
                )
            raise UnsupportedByGradtrace(
                "in-place changes to a view of a tensor in the autograd graph are not supported "
                "by gradtrace's engine (PyTorch rewrites the base's history with CopySlices); "
                "use the out-of-place op instead"
            )

    before = (target.grad_fn, target._output_nr)
    node = node_cls()
    if recording:
        node.needs_input_grad = tuple(isinstance(t, Tensor) and t._requires_grad for t in inputs)
    result = node.forward(*arrays, **kwargs)
    if getattr(result, "shape", ()) != target._array.shape:
        raise RuntimeError(
            f"output with shape {list(target.shape)} doesn't match the broadcast shape "
            f"{list(np.broadcast_shapes(target._array.shape, np.shape(result)))}"
        )
    if recording and 0 in node.to_save:
        # backward needs the old value, which the write below replaces: keep a copy
        arrays = (target._array.copy(), *arrays[1:])
    try:
        target._array[...] = result
    except ValueError:
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation."
        ) from None
    target._version_counter.value += 1
    if recording:
        edges = [edge(t) for t in inputs]
        edges[0] = before if before[0] is not None else (None, 0)
        node.next_functions = tuple(edges)
        node.input_shapes = tuple(getattr(a, "shape", ()) for a in arrays)
        node.input_dtypes = tuple(t._array.dtype if isinstance(t, Tensor) else None for t in inputs)
        node.saved = [
            SavedTensor(arrays[w], None, None)
            if w != "result"
            else _saved(node, "result", inputs, arrays, target)
            for w in node.to_save
        ]
        target.grad_fn = node
        target._output_nr = 0
        target._requires_grad = True
    if tracing.current is not None:
        tracing.current.on_inplace(target, node, inputs, recording)
    return target


def bump(t: Tensor, op: str, node) -> None:
    """A change to t's values made without a node of its own (optimizer.step, zero_grad)."""
    t._version_counter.value += 1
    if tracing.current is not None:
        tracing.current.on_inplace(t, node, (t,), False, op=op)


# ***** leaves *****


def leaf(array: np.ndarray, requires_grad: bool, op: str) -> Tensor:
    """A new tensor with no history, made by factory `op` (tensor, zeros, randn, ...)."""
    out = Tensor._wrap(array)
    if requires_grad:
        if not out.is_floating_point():
            # the factories' message starts with a capital, the setter's does not
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients"
            )
        out.requires_grad = True
    if tracing.current is not None:
        tracing.current.on_tensor(out, op, ())
    return out
