"""Recording: running an operation and, when autograd needs it, keeping its grad_fn.

Every op of the engine goes through here. `apply` runs a node's forward on numpy arrays and links
the result into the graph; `apply_inplace` does the same for the trailing-underscore ops, writing
into the target and bumping its version counter; `leaf` makes a new tensor with no history;
`plain` a result that never joins the graph (comparisons, argmax); `bump` records a change made
without a node (optimizer steps, zero_grad). Each also tells the active tracer, if any.
"""

from __future__ import annotations

import weakref

import numpy as np

from engine import tracing
from engine.grad_mode import state as grad_state
from engine.graph import AccumulateGrad, Node, SavedTensor, check_writable
from engine.tensor import Tensor
from engine.unsupported import UnsupportedByGradtrace


def apply(node_cls: type[Node], inputs: tuple, arrays: tuple | None = None, **kwargs):
    """Run one operation and, when grad mode and an input call for it, record its grad_fn.

    `inputs` are the operation's differentiable slots: Tensors, or Python numbers that still
    take a slot (they show up as (None, 0) in next_functions, as in PyTorch).
    """
    # every op of every snippet passes here, so it is kept lean: no work for a node that is
    # not recorded beyond running it, no attribute a node does not need
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
    base = inputs[0] if node_cls.is_view else None

    if type(result) is tuple:  # several outputs (unbind)
        wrap = Tensor._wrap
        outs = tuple([wrap(r, record, base) for r in result])
        for nr, out in enumerate(outs):
            out._output_nr = nr
        node.output_shapes = tuple([(r.shape, r.dtype) for r in result])
    else:
        outs = (Tensor._wrap(result, record, base),)
    if record:
        _link(node, inputs, arrays, outs)
    if tracing.current is not None:
        tracing.current.on_op(node, outs, inputs, record)
    return outs if type(result) is tuple else outs[0]


def _link(node: Node, inputs: tuple, arrays, outs: tuple) -> None:
    """Make `node` the grad_fn of `outs`: its edges to the inputs' nodes, and what it keeps."""
    edges, shapes, kinds = [], [], []
    for t, a in zip(inputs, arrays, strict=True):
        if isinstance(t, Tensor):
            edges.append(edge(t))
            kinds.append(t._array.dtype)
        else:
            edges.append(NO_EDGE)
            kinds.append(None)
        shapes.append(a.shape if type(a) is np.ndarray else getattr(a, "shape", ()))
    node.next_functions = tuple(edges)
    node.input_shapes = tuple(shapes)
    node.input_dtypes = tuple(kinds)
    if node.to_save:
        node.saved = [_saved(node, what, inputs, arrays, outs[0]) for what in node.to_save]
    for out in outs:
        out._grad_fn = node


NO_EDGE = (None, 0)  # an input no gradient flows to: a number, or a tensor with no history


def edge(t) -> tuple:
    """Where a gradient for this input goes: its grad_fn, its AccumulateGrad, or nowhere."""
    if not isinstance(t, Tensor):
        return NO_EDGE
    grad_fn = t.grad_fn  # a view's is refreshed if its base has changed in place since
    if grad_fn is not None:
        return (grad_fn, t._output_nr)
    if t._requires_grad:
        return (accumulator(t), 0)
    return NO_EDGE


def accumulator(leaf: Tensor, keep: bool = False) -> AccumulateGrad:
    """The leaf's AccumulateGrad: the one a live graph still holds, or a new one.

    As in PyTorch, a leaf holds its node weakly (the graph holds the node, the node the leaf), so
    a leaf dropped with its graph is freed at once instead of when the collector finds a cycle: a
    loop making a fresh 1000x1000 leaf per step peaked at 589 MiB with the cycle, 117 without.
    With `keep` (a hook of the leaf, which lives on the node) the leaf holds it for good.
    """
    held = leaf._accumulator
    node = held() if type(held) is weakref.ref else held
    if node is None:
        node = AccumulateGrad(leaf)
    leaf._accumulator = node if keep or held is node else weakref.ref(node)
    return node


def _saved(node: Node, what, inputs, arrays, out: Tensor) -> SavedTensor:
    if what == "result":
        # described from its array, not from `out`: `out` holds this node (its grad_fn), so
        # holding `out` here would be a cycle, the graph freed only when the collector runs
        array, nr, name = out._array, out._output_nr, node.name()
        return SavedTensor(
            array, out._version_counter, lambda: describe_saved_output(array, nr, name)
        )
    t = inputs[what]
    if not isinstance(t, Tensor):
        return SavedTensor(arrays[what], None, None)
    return SavedTensor(arrays[what], t._version_counter, lambda: describe_saved(t), t)


def describe_saved(t: Tensor) -> str:
    """How PyTorch names a saved tensor in its changed-in-place error."""
    producer = _short(t.grad_fn.name()) if t.grad_fn is not None else None
    return _describe(t, t._output_nr, producer)


def describe_saved_output(array: np.ndarray, output_nr: int, node_name: str) -> str:
    """describe_saved for output `output_nr` of node `node_name`, from its values alone."""
    return _describe(Tensor._wrap(array), output_nr, _short(node_name))


def _describe(t: Tensor, output_nr: int, producer: str | None) -> str:
    text = f"[{t.type()} [{', '.join(str(n) for n in t.shape)}]]"
    return text if producer is None else f"{text}, which is output {output_nr} of {producer},"


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
    When `target` is a view of a tensor in the graph, the base's history is rewritten as PyTorch
    does it: the base's grad_fn becomes a CopySlices wrapping the op, and the view's an
    AsStridedBackward0 reading its part of the new base.
    """
    needs = [isinstance(t, Tensor) and t._requires_grad for t in inputs]
    recording = grad_state.enabled and True in needs
    base = target._base
    if grad_state.enabled and base is not None:
        _check_view_write(target, base, recording)
    if recording and target.is_leaf and target._requires_grad:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )

    before = (target.grad_fn, target._output_nr)
    base_before = edge(base) if recording and base is not None else None
    node = node_cls()
    if recording:
        node.needs_input_grad = tuple(needs)
        if base is not None:
            # the view's old values count as needing a gradient whenever the base has history
            node.needs_input_grad = (base_before[0] is not None, *node.needs_input_grad[1:])
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
    if target._version_counter.inference:  # as PyTorch: refused once written, at the bump
        _check_written(target, node.name)
    target._version_counter.value += 1
    if recording:
        edges = [edge(t) for t in inputs]
        edges[0] = before if before[0] is not None else NO_EDGE
        node.next_functions = tuple(edges)
        node.input_shapes = tuple([getattr(a, "shape", ()) for a in arrays])
        node.input_dtypes = tuple(
            [t._array.dtype if isinstance(t, Tensor) else None for t in inputs]
        )
        node.saved = [
            SavedTensor(arrays[w], None, None)
            if w != "result"
            else _saved(node, "result", inputs, arrays, target)
            for w in node.to_save
        ]
        if base is not None:
            copy = _rewrite_base(node, target, base, base_before)
            if tracing.current is not None:
                # what the graph records is a change of the base; the view shares its memory
                tracing.current.on_inplace(base, copy, (base, *inputs[1:]), recording)
            return target
        target.grad_fn = node
        target._output_nr = 0
        target._requires_grad = True
    if tracing.current is not None:
        tracing.current.on_inplace(target, node, inputs, recording)
    return target


NO_GRAD_VIEW_MESSAGE = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
    "your code by moving both the view and the inplace either both inside the no_grad block (if "
    "you don't want the inplace to be tracked) or both outside (if you want the inplace to be "
    "tracked)."
)


def _check_view_write(view: Tensor, base: Tensor, recording: bool) -> None:
    """PyTorch's refusals of an in-place change through a view, with its messages."""
    if view.grad_fn is None and base._requires_grad:
        raise RuntimeError(NO_GRAD_VIEW_MESSAGE)
    if not recording:
        return
    if base.is_leaf and base._requires_grad:
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation."
        )
    if getattr(view.grad_fn, "multi_view", False):
        raise RuntimeError(
            f"Output {view._output_nr} of {_short(view.grad_fn.name())} is a view and is being "
            "modified inplace. This view is the output of a function that returns multiple "
            "views. Such functions do not allow the output views to be modified inplace. You "
            "should replace the inplace operation by an out-of-place one."
        )


def _rewrite_base(fn: Node, view: Tensor, base: Tensor, base_before: tuple) -> Node:
    """After `fn` changed `view` in place, give the base (and the view) their new history."""
    from engine.functions import AsStridedBackward0, CopySlices  # functions imports this module

    where = positions_in_base(base._array, view._array)
    copy = CopySlices(fn, where)
    copy.next_functions = (base_before, *fn.next_functions[1:])
    copy.input_shapes = (base._array.shape, *fn.input_shapes[1:])
    copy.input_dtypes = (base._array.dtype, *fn.input_dtypes[1:])
    base.grad_fn, base._output_nr, base._requires_grad = copy, 0, True

    reread = AsStridedBackward0(where, base._array.shape)
    reread.next_functions = ((copy, 0),)
    reread.input_shapes, reread.input_dtypes = (base._array.shape,), (base._array.dtype,)
    view.grad_fn, view._output_nr, view._requires_grad = reread, 0, True
    return copy


def refresh_view(view: Tensor) -> None:
    """Give a view whose base was changed in place since (through any view) its new history.

    As in PyTorch, the view's grad_fn becomes an AsStridedBackward0 reading its part of the
    base's new grad_fn. A view is stale when its base's grad_fn was made after its own.
    """
    from engine.functions import AsStridedBackward0  # functions imports this module

    base, own = view._base, view._grad_fn
    latest = base.grad_fn
    if latest is None or own is None or own.sequence_nr > latest.sequence_nr:
        return
    if getattr(own, "multi_view", False):
        raise RuntimeError(
            f"Output {view._output_nr} of {_short(own.name())} is a view and its base or another "
            "view of its base has been modified inplace. This view is the output of a function "
            "that returns multiple views. Such functions do not allow the output views to be "
            "modified inplace. You should replace the inplace operation by an out-of-place one."
        )
    reread = AsStridedBackward0(positions_in_base(base._array, view._array), base._array.shape)
    reread.next_functions = ((latest, base._output_nr),)
    reread.input_shapes, reread.input_dtypes = (base._array.shape,), (base._array.dtype,)
    view._grad_fn, view._output_nr = reread, 0


def positions_in_base(base: np.ndarray, view: np.ndarray) -> np.ndarray:
    """For each element of `view`, the flat (row-major) index of the element of `base` it is.

    Found from memory addresses, so it holds for any chain of views (slices, transposes,
    reshapes) without replaying them.
    """
    if view.size == 0:
        return np.zeros(view.shape, np.intp)
    base_at = _addresses(base).reshape(-1)
    order = np.argsort(base_at, kind="stable")
    sorted_at = base_at[order]
    view_at = _addresses(view)
    found = np.minimum(np.searchsorted(sorted_at, view_at), max(sorted_at.size - 1, 0))
    if sorted_at.size == 0 or not np.array_equal(sorted_at[found], view_at):
        raise UnsupportedByGradtrace(
            "this in-place change through a view is not supported by gradtrace's engine (the "
            "view's memory is not inside its base's); clone() the view first"
        )
    return order[found]


def _addresses(a: np.ndarray) -> np.ndarray:
    """The memory address of every element of `a`."""
    start = a.__array_interface__["data"][0]
    grid = np.indices(a.shape, sparse=True)
    return sum((g * s for g, s in zip(grid, a.strides, strict=True)), np.full(a.shape, start))


def rewritten(t: Tensor, op: str) -> None:
    """t's values were changed by `op`'s kernel with no version bump, as PyTorch's own kernel
    leaves it (BatchNorm's running statistics); only the tracer needs to hear of it."""
    if tracing.current is not None:
        tracing.current.on_rewrite(t, op)


def _check_written(t: Tensor, op_name) -> None:
    """Refuse a write into an inference tensor outside inference mode, as PyTorch does: after
    its kernel has written the values, which stay written; the trace shows them (as a write
    by the op `op_name()` names)."""
    try:
        check_writable(t._version_counter)
    except RuntimeError:
        rewritten(t, op_name())
        raise


def bump(t: Tensor, op: str, node, reads: tuple | None = None) -> None:
    """A change to t's values made without a node of its own (optimizer.step, zero_grad);
    `reads` are the tensors the new values were made from (t itself, unless said)."""
    if t._version_counter.inference:  # the values are written already, as in PyTorch
        _check_written(t, lambda: op)
    t._version_counter.value += 1
    if tracing.current is not None:
        tracing.current.on_inplace(t, node, reads or (t,), False, op=op)


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
