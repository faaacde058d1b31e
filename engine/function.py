"""torch.autograd.Function: an operation whose forward and backward the program writes itself.

    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x ** 2

    y = Cube.apply(x)   # y.grad_fn is a CubeBackward

As in PyTorch, every subclass gets a node class of its own named `<Name>Backward`, and the ctx
that forward and backward receive *is* that node (so `y.grad_fn.saved_tensors` and attributes
set on ctx can be read from the grad_fn). Forward runs with grad mode off; its tensor outputs get
the node as grad_fn. The backward walk calls the node like any other: it hands the program's
backward Tensors and checks what comes back (one gradient per forward argument).
"""

from __future__ import annotations

import inspect

import numpy as np

from engine import record, tracing
from engine.grad_mode import quietly
from engine.grad_mode import state as grad_state
from engine.graph import FREED_MESSAGE, Node, SavedTensor
from engine.tensor import Tensor


class FunctionCtx:
    """What forward can tell backward: tensors to save, and which outputs are special."""

    def save_for_backward(self, *tensors) -> None:
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    "save_for_backward can only save variables, but argument "
                    f"{i} is of type {type(t).__name__}"
                )
        self.to_save = tensors  # PyTorch's attribute, until apply() packs them

    def mark_dirty(self, *tensors) -> None:
        """These inputs were changed in place by forward (and are returned)."""
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """These outputs get no gradient (indices, masks): they come out not requiring grad."""
        self.non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = bool(value)

    @property
    def saved_tensors(self) -> tuple:
        if self.released:
            raise RuntimeError(FREED_MESSAGE)
        return tuple(None if s is None else s.unpack_for(self) for s in self.packed)


class BackwardCFunction(FunctionCtx, Node):
    """The grad_fn of a custom Function's outputs (subclassed per Function as <Name>Backward)."""

    _forward_cls: type = None  # the Function subclass this node belongs to
    packed: tuple = ()  # SavedTensors of what forward saved (None where it saved None)
    dirty_tensors: tuple = ()
    non_differentiable: tuple = ()
    materialize_grads = True
    tensor_positions: tuple = ()  # which forward arguments were tensors (they have edges)

    def __repr__(self) -> str:
        return f"<torch.autograd.function.{type(self).__name__} object at {id(self):#x}>"

    @property
    def has_saved(self) -> bool:
        return True  # freed after backward even with nothing saved: saved_tensors then fails

    def release(self) -> None:
        self.released = True
        self.packed = ()

    # ***** the backward walk calls these *****

    def backward(self, *grads):
        """The numpy face of the node: the program's backward, on Tensors, without a graph."""
        results = self.backward_graph(*(None if g is None else Tensor._wrap(g) for g in grads))
        return [None if g is None else g._array for g in results]

    def backward_graph(self, *grads):
        """The program's backward, handed Tensors; one gradient back per tensor input."""
        results = self._forward_cls.backward(self, *grads)
        results = results if isinstance(results, tuple) else (results,)
        return self._checked(list(results))

    def _checked(self, results: list) -> list:
        """PyTorch's checks on what backward returned; the gradients of the tensor inputs."""
        expected = len(self.needs_input_grad)
        if len(results) > expected and all(r is None for r in results[expected:]):
            results = results[:expected]  # extra Nones are allowed
        if len(results) != expected:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients "
                f"(expected {expected}, got {len(results)})"
            )
        grads = []
        for position, g in enumerate(results):
            if position not in self.tensor_positions:
                if g is not None:
                    raise RuntimeError(
                        f"function {self.name()} returned a gradient different than None at "
                        f"position {position + 1}, but the corresponding forward input was not a "
                        "Variable"
                    )
                continue
            if g is not None and not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            grads.append(g)
        for i, g in enumerate(grads):
            shape = self.input_shapes[i]
            if g is not None and not _reducible(g._array.shape, shape):
                raise RuntimeError(
                    f"Function {self.name()} returned an invalid gradient at index {i} - got "
                    f"{list(g.shape)} but expected shape compatible with {list(shape)}"
                )
        return grads


def _reducible(shape: tuple, target: tuple) -> bool:
    """Whether a gradient of `shape` sums back to `target` (the input broadcast to it)."""
    try:
        return np.broadcast_shapes(shape, target) == tuple(shape)
    except ValueError:
        return False


# PyTorch's module for these classes, as their reprs and types print
FunctionCtx.__module__ = BackwardCFunction.__module__ = "torch.autograd.function"


class FunctionMeta(type):
    """Gives every Function subclass its node class, <Name>Backward, as PyTorch does."""

    def __init__(cls, name, bases, attrs) -> None:
        formula = f"grads = {name}.backward(ctx, grad)"
        node_cls = type(
            name + "Backward", (BackwardCFunction,), {"_forward_cls": cls, "formula": formula}
        )
        node_cls.__module__ = "torch.autograd.function"
        cls._backward_cls = node_cls
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Subclass with @staticmethod forward(ctx, *args) and backward(ctx, *grads); call apply."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @classmethod
    def apply(cls, *args, **kwargs):
        if kwargs:  # keyword arguments become positional ones, bound to forward's parameters
            ctx = () if _separate_setup(cls) else (None,)
            bound = inspect.signature(cls.forward).bind(*ctx, *args, **kwargs)
            bound.apply_defaults()
            args = bound.args[len(ctx) :]
        return _apply(cls, args)


def _separate_setup(cls) -> bool:
    """The newer style: forward(*args) without ctx, and setup_context(ctx, inputs, output)."""
    return cls.setup_context is not Function.setup_context


def _apply(cls, args: tuple):
    ctx = cls._backward_cls()
    inputs = [a for a in args if isinstance(a, Tensor)]
    ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
    ctx.tensor_positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
    recording = grad_state.enabled and any(t._requires_grad for t in inputs)

    with quietly(False):  # forward runs with grad mode off, as in PyTorch
        if _separate_setup(cls):
            output = cls.forward(*args)
            cls.setup_context(ctx, args, output)
        else:
            output = cls.forward(ctx, *args)

    several = isinstance(output, tuple)
    outputs = list(output) if several else [output]
    if recording:
        ctx.next_functions = tuple(record.edge(t) for t in inputs)
        ctx.input_shapes = tuple(t._array.shape for t in inputs)
        ctx.input_dtypes = tuple(t._array.dtype for t in inputs)
    made = []
    for i, out in enumerate(outputs):
        if isinstance(out, Tensor):
            outputs[i] = _connect(ctx, out, len(made), inputs, recording)
            made.append(outputs[i])
    ctx.output_shapes = tuple((t._array.shape, t._array.dtype) for t in made)
    _pack_saved(ctx, inputs, made)
    if tracing.current is not None:
        tracing.current.on_op(ctx, tuple(made), tuple(inputs), recording)
    return tuple(outputs) if several else outputs[0]


def _connect(ctx: BackwardCFunction, out: Tensor, output_nr: int, inputs, recording: bool):
    """An output of forward, linked to the node (or left alone, as PyTorch decides)."""
    is_input = any(out is t for t in inputs)
    dirty = any(out is t for t in ctx.dirty_tensors)
    if not recording or any(out is t for t in ctx.non_differentiable):
        return _alias(out) if is_input and not dirty else out
    if dirty:
        if out.is_leaf and out._requires_grad:
            raise RuntimeError(
                "a leaf Variable that requires grad has been used in an in-place operation."
            )
        out._version_counter.value += 1  # its history is rewritten: a change of its own
    elif is_input:
        out = _alias(out)  # an input returned as it is: a new tensor, for the new grad_fn
    out.grad_fn, out._output_nr, out._requires_grad = ctx, output_nr, True
    return out


def _alias(t: Tensor) -> Tensor:
    """The same memory and version counter as t, with no history."""
    out = Tensor._wrap(t._array)
    out._version_counter = t._version_counter
    out._base = t._base if t._base is not None else t
    return out


class _SavedInput(SavedTensor):
    """A tensor forward saved that is not one of its outputs: unpacked, it is that tensor."""

    __slots__ = ()

    def unpack_for(self, ctx: BackwardCFunction) -> Tensor:
        return self.unpack()


class _SavedOutput(SavedTensor):
    """An output forward saved, kept as its memory rather than as the tensor: the output holds
    the node (its grad_fn), so holding the output would be a cycle only the collector frees.
    Unpacked, it is a new tensor over that memory on the node, as in PyTorch (not the output)."""

    __slots__ = ("output_nr", "base")

    def __init__(self, t: Tensor, output_nr: int) -> None:
        array, name = t._array, type(t._grad_fn).__name__
        describe = lambda: record.describe_saved_output(array, output_nr, name)  # noqa: E731
        super().__init__(array, t._version_counter, describe)
        self.output_nr, self.base = output_nr, t._base

    def unpack_for(self, ctx: BackwardCFunction) -> Tensor:
        out = Tensor._wrap(self.unpack(), True)
        out._version_counter, out._base = self.counter, self.base
        out._grad_fn, out._output_nr = ctx, self.output_nr
        return out


def _pack_saved(ctx: BackwardCFunction, inputs: list, outputs: list) -> None:
    """Keep what forward saved, each with its version now; tell the tracer which were inputs."""
    chosen = vars(ctx).pop("to_save", ())
    packed, kinds = [], []
    for t in chosen:
        if t is None:
            packed.append(None)
            continue
        output_nr = next((i for i, x in enumerate(outputs) if x is t), None)
        if output_nr is not None and t._grad_fn is ctx:
            packed.append(_SavedOutput(t, output_nr))
        else:
            packed.append(_SavedInput(t, t._version_counter, lambda t=t: record.describe_saved(t)))
        position = next((i for i, x in enumerate(inputs) if x is t), None)
        if position is not None:
            kinds.append(position)
        elif outputs and t is outputs[0]:
            kinds.append("result")
    ctx.packed = tuple(packed)
    ctx.to_save = kinds  # what the tracer shows as saved: inputs by position, and the result
