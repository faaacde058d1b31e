"""The backward pass: walk the recorded graph from the output back to the leaves.

Nodes run in PyTorch's order (a node runs once every gradient for it has arrived; among ready
nodes the one made last runs first, AccumulateGrad at once). The walk is iterative, so a chain of
100,000 operations needs no recursion.

At each node, as in PyTorch: the tensor hooks of its outputs (Tensor.register_hook) run on the
arrived gradients, then retain_grad() keeps them, then the node's pre-hooks, its backward, its
post-hooks. Gradients are numpy arrays; with create_graph=True they are Tensors instead, and
every node's backward is itself recorded (`backward_graph` in engine/functions.py), so a
gradient can be differentiated again.
"""

from __future__ import annotations

import heapq
import itertools

import numpy as np

from engine import dtypes, hooks, record, tracing
from engine.grad_mode import state as grad_state
from engine.graph import AccumulateGrad, Node
from engine.shape import unbroadcast
from engine.tensor import Tensor
from engine.unsupported import UnsupportedByGradtrace


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """torch.autograd.backward: accumulate d(tensors)/d(leaf) into every leaf's .grad."""
    if inputs is not None:
        raise UnsupportedByGradtrace(
            "backward(inputs=...) is not supported by gradtrace's engine; use torch.autograd.grad"
        )
    tensors = (tensors,) if isinstance(tensors, Tensor) else tuple(tensors)
    flow = _Graph() if create_graph else _Arrays()
    roots = _root_gradients(tensors, grad_tensors, flow)
    keep = create_graph if retain_graph is None else bool(retain_graph)
    _run(tensors, roots, keep, None, flow)


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
    outputs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
    single = isinstance(inputs, Tensor)
    inputs = (inputs,) if single else tuple(inputs)
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    flow = _Graph() if create_graph else _Arrays()
    roots = _root_gradients(outputs, grad_outputs, flow)
    targets = {}
    for i, t in enumerate(inputs):
        targets.setdefault(record.edge(t), []).append(i)
    keep = create_graph if retain_graph is None else bool(retain_graph)
    captured = _run(outputs, roots, keep, targets, flow)
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
            results.append(flow.wrap(g))
    return tuple(results)


def _root_gradients(tensors, grads, flow) -> list:
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
            out.append(flow.root(np.ones_like(t._array)))
            continue
        g = g if isinstance(g, Tensor) else Tensor._wrap(np.asarray(g))
        if g._array.shape != t._array.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape!r} and "
                f"output[{i}] has a shape of {t.shape!r}."
            )
        out.append(flow.given(g, t._array.dtype))
    return out


def _run(tensors, root_grads, keep_graph: bool, capture: dict | None, flow) -> dict:
    """Execute the graph behind `tensors`; with `capture`, collect grads instead of accumulating."""
    tracer = tracing.current
    if tracer is not None:
        tracer.on_backward_begin(tensors, [flow.array(g) for g in root_grads], keep_graph)

    root_edges = [record.edge(t) for t in tensors]
    dependencies = _count_dependencies([node for node, _ in root_edges])
    receives, executes = (None, None) if capture is None else _needed_nodes(dependencies, capture)

    buffers: dict[Node, list] = {}
    arrivals: dict[Node, list] = {}  # who sent what, for the tracer's narration
    ready: list = []
    order = itertools.count()
    captured: dict[int, object] = {}

    def send(edge, g, source) -> None:
        node, nr = edge
        if node is None or (receives is not None and node not in receives):
            return
        slots = buffers.get(node)
        if slots is None:
            slots = buffers[node] = [None] * _output_count(node)
        if g is None:
            return  # no gradient, but the node now runs (and passes None on)
        slots[nr] = g if slots[nr] is None else flow.add(slots[nr], g)
        if tracer is not None:
            arrivals.setdefault(node, []).append((source, flow.array(g)))

    for edge, g in zip(root_edges, root_grads, strict=True):
        send(edge, g, None)
    for node in buffers:
        if dependencies[node] == 0:
            heapq.heappush(ready, (-node.sequence_nr, next(order), node))

    freed = []
    # the engine's own work, not the program's: grad mode on only to record a graph of it
    # (set directly, not with no_grad(): the tracer is told only of the program's switches)
    grad_was = grad_state.enabled
    grad_state.enabled = flow.records
    try:
        while ready:
            node = heapq.heappop(ready)[2]
            grads = buffers.pop(node)
            sources = arrivals.pop(node, None)
            grad_inputs = _step(node, grads, sources, capture, captured, executes, flow, tracer)
            if grad_inputs is None:
                continue  # a leaf's gradient, accumulated or captured
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
    finally:
        grad_state.enabled = grad_was

    if tracer is not None:
        tracer.on_backward_end(freed, keep_graph)
    return captured


def _step(node: Node, grads: list, sources, capture, captured, executes, flow, tracer):
    """One node's turn: hooks, capture or accumulation, then its backward.

    Returns the gradients for its inputs (None for a leaf's AccumulateGrad, which sends none).
    """
    if node.tensor_hooks:
        grads = hooks.tensor_hooks(node, grads, flow.wrap, flow.unwrap)
    if node.retained:
        _fill_retained(node, grads, flow, tracer)
    if capture is not None:
        for nr, g in enumerate(grads):
            for i in capture.get((node, nr), ()):
                captured[i] = g
    if isinstance(node, AccumulateGrad):
        if capture is None and grads[0] is not None:
            if node.pre_hooks:
                grads = hooks.pre_hooks(node, grads, flow.wrap, flow.unwrap)
            _accumulate(node, grads[0], sources, flow, tracer)
        return None
    if executes is not None and node not in executes:
        return [None] * len(node.next_functions)  # captured, and nothing beyond it is wanted
    for g in grads:
        if g is not None:
            break
    else:
        return [None] * len(node.next_functions)  # nothing arrived: nothing to send on
    if node.pre_hooks:
        grads = hooks.pre_hooks(node, grads, flow.wrap, flow.unwrap)
    if len(grads) > 1 and node.materialize_grads and any(g is None for g in grads):
        grads = _materialise(node, grads, flow)
    fit = flow.fit
    grad_inputs = [
        fit(g, shape, dtype) if g is not None else None
        for g, shape, dtype in zip(
            flow.backward(node, grads), node.input_shapes, node.input_dtypes, strict=True
        )
    ]
    if node.post_hooks:
        grad_inputs = hooks.post_hooks(node, grad_inputs, grads, flow.wrap, flow.unwrap)
    if tracer is not None:
        tracer.on_node_backward(
            node, [flow.array(g) for g in grads], [flow.array(g) for g in grad_inputs], sources
        )
    return grad_inputs


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


def _needed_nodes(dependencies: dict, capture: dict) -> tuple[set, set]:
    """For autograd.grad: the nodes a gradient must reach (those on a path to a requested
    input, and the inputs' own nodes), and those whose backward must run (all but the inputs'
    own nodes that lead to no other requested input)."""
    parents: dict = {}
    for node in dependencies:
        for child, _ in node.next_functions:
            if child is not None:
                parents.setdefault(child, []).append(node)
    targets = {node for node, _ in capture if node is not None}
    executes: set = set()
    stack = list(targets)
    while stack:
        for parent in parents.get(stack.pop(), ()):
            if parent not in executes:
                executes.add(parent)
                stack.append(parent)
    return targets | executes, executes


def _output_count(node: Node) -> int:
    return len(node.output_shapes) or 1


def _materialise(node: Node, grads: list, flow) -> list:
    """Outputs that received no gradient count as zeros (only multi-output nodes have those)."""
    return [
        flow.zeros(shape, dtype) if g is None else g
        for g, (shape, dtype) in zip(grads, node.output_shapes, strict=True)
    ]


def _fit(g: np.ndarray, shape: tuple, dtype) -> np.ndarray:
    g = unbroadcast(np.asarray(g), shape)
    return g if dtype is None or g.dtype == dtype else g.astype(dtype)


def _accumulate(node: AccumulateGrad, g, sources, flow, tracer) -> None:
    leaf = node.variable
    flow.accumulate(leaf, g)
    if tracer is not None:
        tracer.on_accumulate(node, leaf, flow.array(g), leaf._grad._array, sources)


def _fill_retained(node: Node, grads: list, flow, tracer) -> None:
    for ref in node.retained:
        t = ref()
        if t is None or t.grad_fn is not node or grads[t._output_nr] is None:
            continue
        g = grads[t._output_nr]
        flow.retain(t, g)
        if tracer is not None:
            tracer.on_retained_grad(t, flow.array(g))


# ***** what a gradient is during the walk *****


class _Arrays:
    """The usual walk: gradients are numpy arrays, nothing is recorded."""

    records = False

    def root(self, ones: np.ndarray) -> np.ndarray:
        return ones

    def given(self, g: Tensor, dtype) -> np.ndarray:
        return g._array.astype(dtype, copy=False)

    def array(self, g):
        return g

    def wrap(self, g: np.ndarray) -> Tensor:
        """For the program's hooks and autograd.grad's results: memory it may write to (a
        gradient spread by a sum is a read-only broadcast view)."""
        return Tensor._wrap(g if g.flags.writeable else g.copy())

    def unwrap(self, t: Tensor) -> np.ndarray:
        return t._array

    def add(self, a, b):
        return a + b

    def zeros(self, shape, dtype) -> np.ndarray:
        return np.zeros(shape, dtype)

    def fit(self, g, shape, dtype):
        if type(g) is np.ndarray and g.shape == shape and (dtype is None or g.dtype == dtype):
            return g  # the common case: nothing was broadcast or promoted
        return _fit(g, shape, dtype)

    def backward(self, node: Node, grads: list) -> list:
        return node.backward(*grads)

    def accumulate(self, leaf: Tensor, g: np.ndarray) -> None:
        if leaf._grad is None:
            leaf._grad = Tensor._wrap(np.array(g, dtype=leaf._array.dtype, copy=True))
        else:
            leaf._grad._array += g
            leaf._grad._version_counter.value += 1

    def retain(self, t: Tensor, g: np.ndarray) -> None:
        if t._grad is None:
            t._grad = Tensor._wrap(np.array(g, copy=True))
        else:
            t._grad = Tensor._wrap(t._grad._array + g)


class _Graph(_Arrays):
    """create_graph=True: gradients are Tensors and the backward pass records its own graph."""

    records = True

    def root(self, ones: np.ndarray) -> Tensor:
        return Tensor._wrap(ones)

    def given(self, g: Tensor, dtype) -> Tensor:
        return g if g._array.dtype == dtype else g.to(dtypes.from_numpy(dtype))

    def array(self, g):
        return None if g is None else g._array

    def wrap(self, g: Tensor) -> Tensor:
        return g

    def unwrap(self, t: Tensor) -> Tensor:
        return t

    def zeros(self, shape, dtype) -> Tensor:
        return record.leaf(np.zeros(shape, dtype), False, "zeros")

    def fit(self, g: Tensor, shape, dtype) -> Tensor:
        """PyTorch's sum_to: sum the broadcast dims (keeping them), then view to the shape."""
        if g._array.shape != tuple(shape):
            lead = g.ndim - len(shape)
            dims = tuple(range(lead)) + tuple(
                lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1
            )
            if not shape:
                g = g.sum()
            else:
                g = g.sum(dims, keepdim=True) if dims else g
                g = g.view(shape) if lead else g
        if dtype is not None and g._array.dtype != dtype:
            g = g.to(dtypes.from_numpy(dtype))
        return g

    def backward(self, node: Node, grads: list) -> list:
        recorded = getattr(node, "backward_graph", None)
        if recorded is not None:
            return recorded(*grads)
        if any(g._requires_grad for g in grads if g is not None) or _saves_a_graph(node):
            raise UnsupportedByGradtrace(
                f"double backward through {node.name()} is not supported by gradtrace's engine"
            )
        # constant in everything that requires grad: the plain backward's numbers will do
        arrays = node.backward(*(None if g is None else g._array for g in grads))
        return [None if g is None else Tensor._wrap(np.asarray(g)) for g in arrays]

    def accumulate(self, leaf: Tensor, g: Tensor) -> None:
        # PyTorch copies a first gradient into fresh memory (CopyBackwards, when g has a graph)
        # and adds later ones out of place (AddBackward0)
        if leaf._grad is None:
            fresh = record.leaf(np.zeros_like(leaf._array), False, "zeros")
            leaf._grad = fresh.copy_(g)
        else:
            leaf._grad = leaf._grad + g

    def retain(self, t: Tensor, g: Tensor) -> None:
        t._grad = g.clone() if t._grad is None else t._grad + g


def _saves_a_graph(node: Node) -> bool:
    """Whether the node kept a value that requires grad (so its derivative has a graph)."""
    return any(
        what == "result" or node.next_functions[what][0] is not None for what in node.to_save
    )
