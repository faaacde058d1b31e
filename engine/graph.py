"""The recorded graph: backward nodes (grad_fn), AccumulateGrad for leaves, saved tensors, and
the hooks a program hangs on them."""

from __future__ import annotations

import itertools

import numpy as np

from engine.grad_mode import inference_state

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you "
    "call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling "
    "backward."
)
INFERENCE_SAVED_MESSAGE = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`."
)
INFERENCE_INPLACE_MESSAGE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details."
)
ANOMALY_HINT = (
    "Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
    "with torch.autograd.set_detect_anomaly(True, check_nan=False)."
)

# Every node gets the next number: backward runs later-made nodes first, as PyTorch does.
_sequence = itertools.count()


class Version:
    """An in-place counter shared by a tensor and every view of it.

    It also says whether the tensor was made in inference mode: such a tensor (and its views)
    can never be saved for a backward pass.
    """

    __slots__ = ("value", "inference")

    def __init__(self) -> None:
        self.value = 0
        self.inference = inference_state.enabled


def check_writable(counter: Version) -> None:
    """A tensor made in inference mode (or a view of one) is written only inside it."""
    if counter.inference and not inference_state.enabled:
        raise RuntimeError(INFERENCE_INPLACE_MESSAGE)


class SavedTensor:
    """A value a node keeps for its backward, with the version it had when saved."""

    __slots__ = ("value", "counter", "version", "describe", "tensor")

    def __init__(self, value, counter: Version | None, describe, tensor=None) -> None:
        if counter is not None and counter.inference:
            raise RuntimeError(INFERENCE_SAVED_MESSAGE)
        self.value = value
        self.counter = counter
        self.version = counter.value if counter is not None else 0
        self.describe = describe  # () -> "[torch.FloatTensor [3]], which is output 0 of Exp"
        self.tensor = tensor  # the input tensor it was saved from (never an output: a cycle)

    def unpack(self):
        if self.counter is not None and self.counter.value != self.version:
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: {self.describe()} is at version {self.counter.value}; "
                f"expected version {self.version} instead. {ANOMALY_HINT}"
            )
        return self.value


class Node:
    """A grad_fn: the record of one operation and the rule that sends a gradient back through it.

    Subclasses are named as PyTorch names them (MulBackward0, ...). `forward` computes the result
    on numpy arrays and says what to save; `backward` turns the gradient of the output into one
    gradient per input (None where an input needs none).
    """

    formula = ""  # the local derivative, in words a learner can check
    is_view = False  # True when the result shares memory (and a version counter) with input 0

    # Defaults live on the class: most nodes are made and dropped at once (no grad needed), so
    # an instance only gets the attributes its operation actually sets.
    next_functions: tuple = ()
    needs_input_grad: tuple[bool, ...] = (False,) * 8
    input_shapes: tuple = ()
    input_dtypes: tuple = ()
    output_shapes: tuple = ()  # ((shape, dtype), ...) of a node with several outputs (unbind)
    to_save: tuple | list = ()  # input indexes (or "result") that forward asked to keep
    saved: list[SavedTensor] | None = None
    released = False
    retained: tuple | list = ()  # weak refs of non-leaf tensors that asked to retain_grad()
    trace_id: str | None = None
    # hooks, each a dict (handle id -> hook) run in the order registered, or None when there are
    # none: tensor_hooks maps an output's number to its tensor's register_hook hooks
    tensor_hooks: dict[int, dict] | None = None
    pre_hooks: dict | None = None  # register_prehook: hook(grad_outputs)
    post_hooks: dict | None = None  # register_hook: hook(grad_inputs, grad_outputs)
    # an output no gradient reached counts as zeros (a custom Function's
    # ctx.set_materialize_grads(False) turns it off)
    materialize_grads = True

    def __init__(self) -> None:
        self.sequence_nr = next(_sequence)

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {id(self):#x}>"  # AccumulateGrad, not name()

    # PyTorch's view of what a node saved (y.grad_fn._saved_self, _saved_result, ...) is a set
    # of descriptors engine/saved.py puts on this class, not a __getattr__: CPython does not
    # specialise attribute reads on a class that has one, and the backward walk reads nodes'
    # attributes all the time

    def forward(self, *inputs, **kwargs) -> np.ndarray:
        raise NotImplementedError

    def backward(self, grad: np.ndarray) -> tuple:
        raise NotImplementedError

    # ***** saving for backward *****

    def save(self, *what) -> None:
        """Ask to keep inputs (by position) or "result" for backward, as PyTorch would."""
        self.to_save = [*self.to_save, *what]

    def saved_values(self) -> tuple:
        if self.released:
            raise RuntimeError(FREED_MESSAGE)
        return tuple([s.unpack() for s in self.saved or ()])

    def release(self) -> None:
        """Free the saved values after a backward that did not ask to retain the graph."""
        if self.to_save:
            self.released = True
            self.saved = None

    @property
    def has_saved(self) -> bool:
        return bool(self.to_save)

    # ***** hooks *****

    def register_prehook(self, hook) -> RemovableHandle:
        """hook(grad_outputs) runs before this node's backward; a tuple it returns replaces them."""
        if self.pre_hooks is None:
            self.pre_hooks = {}
        return RemovableHandle.add(self.pre_hooks, hook)

    def register_hook(self, hook) -> RemovableHandle:
        """hook(grad_inputs, grad_outputs) runs after this node's backward; a tuple it returns
        replaces the grad_inputs."""
        if self.post_hooks is None:
            self.post_hooks = {}
        return RemovableHandle.add(self.post_hooks, hook)

    def add_tensor_hook(self, output_nr: int, hook) -> RemovableHandle:
        """A hook of the tensor that is this node's output `output_nr` (Tensor.register_hook)."""
        if self.tensor_hooks is None:
            self.tensor_hooks = {}
        return RemovableHandle.add(self.tensor_hooks.setdefault(output_nr, {}), hook)


class AccumulateGrad(Node):
    """The node that adds an arriving gradient into a leaf tensor's .grad."""

    formula = "leaf.grad += grad"

    def __init__(self, variable) -> None:
        super().__init__()
        self.variable = variable
        self.sequence_nr = float("inf")  # runs as soon as it is ready, as in PyTorch

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"


class RemovableHandle:
    """What register_hook returns: `handle.remove()` takes the hook out again."""

    _next_id = itertools.count()

    def __init__(self, hooks: dict) -> None:
        self.hooks = hooks
        self.id = next(RemovableHandle._next_id)

    @classmethod
    def add(cls, hooks: dict, hook) -> RemovableHandle:
        handle = cls(hooks)
        hooks[handle.id] = hook
        return handle

    def remove(self) -> None:
        self.hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


RemovableHandle.__module__ = "torch.utils.hooks"  # as PyTorch prints its type
