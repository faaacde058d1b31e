"""The backward pass: walk the recorded graph from the output back to the leaves.

Nodes run in PyTorch's order (a node runs once every gradient for it has arrived; among ready
nodes the one made last runs first, AccumulateGrad at once). The walk is iterative, so a chain of
100,000 operations needs no recursion.
"""

from __future__ import annotations

import heapq
import itertools

import numpy as np

from engine import record, tracing
from engine.graph import AccumulateGrad, Node
from engine.shape import unbroadcast
from engine.tensor import Tensor
from engine.unsupported import UnsupportedByGradtrace


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """torch.autograd.backward: accumulate d(tensors)/d(leaf) into every leaf's .grad."""
    _refuse_unsupported(create_graph, inputs)
    tensors = (tensors,) if isinstance(tensors, Tensor) else tuple(tensors)
    roots = _root_gradients(tensors, grad_tensors)
    _run(tensors, roots, keep_graph=bool(retain_graph), capture=None)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    allow_unused=None,
    materialize_grads=False,
):
    """torch.autograd.grad: return d(outputs)/d(inputs) without touching any .grad."""
    _refuse_unsupported(create_graph, None)
    outputs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
    single = isinstance(inputs, Tensor)
    inputs = (inputs,) if single else tuple(inputs)
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    roots = _root_gradients(outputs, grad_outputs)
    targets = {}
    for i, t in enumerate(inputs):
        targets.setdefault(record.edge(t), []).append(i)
    captured = _run(outputs, roots, keep_graph=bool(retain_graph), capture=targets)
    results = []
    for i, t in enumerate(inputs):
        g = captured.get(i)
        if g is None:
            if not (allow_unused or materialize_grads):
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior."
                )
            results.append(Tensor._wrap(np.zeros_like(t._array)) if materialize_grads else None)
        else:
            results.append(Tensor._wrap(g))
    return tuple(results)


def _refuse_unsupported(create_graph, inputs) -> None:
    if create_graph:
        raise UnsupportedByGradtrace(
            "create_graph=True (higher-order gradients) is not supported by gradtrace's engine"
        )
    if inputs is not None:
        raise UnsupportedByGradtrace(
            "backward(inputs=...) is not supported by gradtrace's engine; use torch.autograd.grad"
        )


def _root_gradients(tensors, grads) -> list[np.ndarray]:
    if grads is None or isinstance(grads, Tensor):
        grads = (grads,) * len(tensors) if grads is None else (grads,)
    grads = tuple(grads)
    if len(grads) != len(tensors):
        raise RuntimeError(
            "grad can be implicitly created only for scalar outputs"
            if not grads
            else f"got {len(grads)} tensors and {len(tensors)} gradients"
        )
    out = []
    for i, (t, g) in enumerate(zip(tensors, grads, strict=True)):
        if not t.requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        if g is None:
            if t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            out.append(np.ones_like(t._array))
            continue
        g_array = g._array if isinstance(g, Tensor) else np.asarray(g)
        if g_array.shape != t._array.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape!r} and "
                f"output[{i}] has a shape of {t.shape!r}."
            )
        out.append(g_array.astype(t._array.dtype, copy=False))
    return out


def _run(tensors, root_grads, keep_graph: bool, capture: dict | None) -> dict:
    """Execute the graph behind `tensors`; with `capture`, collect grads instead of accumulating."""
    tracer = tracing.current
    if tracer is not None:
        tracer.on_backward_begin(tensors, root_grads, keep_graph)

    root_edges = [record.edge(t) for t in tensors]
    dependencies = _count_dependencies([node for node, _ in root_edges])
    needed = _needed_nodes(dependencies, capture) if capture is not None else None

    buffers: dict[Node, list] = {}
    arrivals: dict[Node, list] = {}  # who sent what, for the tracer's narration
    ready: list = []
    order = itertools.count()
    captured: dict[int, np.ndarray] = {}

    def send(edge, g, source) -> None:
        node, nr = edge
        if node is None or g is None or (needed is not None and node not in needed):
            return
        slots = buffers.get(node)
        if slots is None:
            slots = buffers[node] = [None] * _output_count(node)
        slots[nr] = g if slots[nr] is None else slots[nr] + g
        if tracer is not None:
            arrivals.setdefault(node, []).append((source, g))

    for edge, g in zip(root_edges, root_grads, strict=True):
        send(edge, g, None)
    for node in buffers:
        if dependencies[node] == 0:
            heapq.heappush(ready, (-node.sequence_nr, next(order), node))

    freed = []
    while ready:
        node = heapq.heappop(ready)[2]
        grads = buffers.pop(node)
        sources = arrivals.pop(node, None)
        if capture is not None and (node, 0) in capture and isinstance(node, AccumulateGrad):
            for i in capture[(node, 0)]:
                captured[i] = grads[0]
            continue
        if isinstance(node, AccumulateGrad):
            _accumulate(node, grads[0], sources, tracer)
            continue
        if capture is not None:
            for nr, g in enumerate(grads):
                for i in capture.get((node, nr), ()):
                    captured[i] = g
        _fill_retained(node, grads, tracer)

        grads = _materialise(node, grads)
        grad_inputs = node.backward(*grads)
        grad_inputs = [
            _fit(g, node.input_shapes[i], node.input_dtypes[i]) if g is not None else None
            for i, g in enumerate(grad_inputs)
        ]
        if tracer is not None:
            tracer.on_node_backward(node, grads, grad_inputs, sources)
        if not keep_graph and node.has_saved:
            node.release()
            freed.append(node)

        for edge, g in zip(node.next_functions, grad_inputs, strict=True):
            send(edge, g, node)
            child = edge[0]
            if child is not None and child in dependencies:
                dependencies[child] -= 1
                if dependencies[child] == 0 and child in buffers:
                    heapq.heappush(ready, (-child.sequence_nr, next(order), child))

    if tracer is not None:
        tracer.on_backward_end(freed, keep_graph)
    return captured


def _count_dependencies(roots: list) -> dict:
    """How many edges lead into each node reachable from the roots."""
    dependencies: dict = {}
    stack = [node for node in roots if node is not None]
    for node in stack:
        dependencies.setdefault(node, 0)
    seen = set(stack)
    while stack:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is None:
                continue
            dependencies[child] = dependencies.get(child, 0) + 1
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return dependencies


def _needed_nodes(dependencies: dict, capture: dict) -> set:
    """For autograd.grad: only the nodes that lie on a path to a requested input."""
    parents: dict = {}
    for node in dependencies:
        for child, _ in node.next_functions:
            if child is not None:
                parents.setdefault(child, []).append(node)
    targets = [node for node, _ in capture if node is not None]
    needed = set(targets)
    stack = list(targets)
    while stack:
        for parent in parents.get(stack.pop(), ()):
            if parent not in needed:
                needed.add(parent)
                stack.append(parent)
    return needed


def _output_count(node: Node) -> int:
    return len(getattr(node, "output_shapes", ())) or 1


def _materialise(node: Node, grads: list) -> list:
    """Outputs that received no gradient count as zeros (only multi-output nodes have those)."""
    if all(g is not None for g in grads):
        return grads
    return [
        np.zeros(shape, dtype) if g is None else g
        for g, (shape, dtype) in zip(grads, node.output_shapes, strict=True)
    ]


def _fit(g: np.ndarray, shape: tuple, dtype) -> np.ndarray:
    g = unbroadcast(np.asarray(g), shape)
    return g if dtype is None or g.dtype == dtype else g.astype(dtype)


def _accumulate(node: AccumulateGrad, g: np.ndarray, sources, tracer) -> None:
    leaf = node.variable
    if leaf._grad is None:
        leaf._grad = Tensor._wrap(np.array(g, dtype=leaf._array.dtype, copy=True))
    else:
        leaf._grad._array += g
        leaf._grad._version_counter.value += 1
    if tracer is not None:
        tracer.on_accumulate(leaf, g, leaf._grad._array, sources)


def _fill_retained(node: Node, grads: list, tracer) -> None:
    for ref in node.retained:
        t = ref()
        if t is None or t.grad_fn is not node:
            continue
        g = grads[t._output_nr]
        if t._grad is None:
            t._grad = Tensor._wrap(np.array(g, copy=True))
        else:
            t._grad = Tensor._wrap(t._grad._array + g)
        if tracer is not None:
            tracer.on_retained_grad(t, g)
