"""What a node saved, as Tensors: `grad_fn._saved_self`, `_saved_result`, `_saved_exponent`, and
the values a backward recorded as a graph (create_graph=True) computes with.

A node keeps numpy arrays (engine/graph.py's SavedTensor). As a Tensor, a saved input is linked
into the graph where the input was: a leaf is the leaf itself (as in PyTorch, `_saved_self is x`),
anything else a tensor on the input's grad_fn; the result hangs off the node that made it. So a
derivative computed from them can be differentiated again.
"""

from __future__ import annotations

import math

import numpy as np

from engine.graph import AccumulateGrad, Node
from engine.tensor import Tensor

# PyTorch's names for a grad_fn's inputs where they are not (self, other): what its saved
# tensors are called (`grad_fn._saved_mat2`). The inspector names saved tensors by this table.
INPUT_NAMES = {
    "AddmmBackward0": ("self", "mat1", "mat2"),
    "MmBackward0": ("self", "mat2"),
    "BmmBackward0": ("self", "mat2"),
    "MvBackward0": ("self", "vec"),
    "DotBackward0": ("self", "tensor"),
    "MseLossBackward0": ("self", "target"),
    "NllLossBackward0": ("self", "target", "weight"),
    "PowBackward1": ("self", "exponent"),
    "PowBackward2": ("exponent",),
    "WhereBackward0": ("condition", "self", "other"),
    "TanhBackwardBackward0": ("grad_output", "output"),
    "SigmoidBackwardBackward0": ("grad_output", "output"),
    "ThresholdBackwardBackward0": ("grad_output", "self"),
    "AddcmulBackward0": ("self", "tensor1", "tensor2"),
    "AddcdivBackward0": ("self", "tensor1", "tensor2"),
    "LerpBackward0": ("self", "end"),
    "LerpBackward1": ("self", "end", "weight"),
    "BinaryCrossEntropyBackward0": ("self", "target", "weight"),
    "BinaryCrossEntropyWithLogitsBackward0": ("self", "target", "weight", "pos_weight"),
    "SmoothL1LossBackward0": ("self", "target"),
    "HuberLossBackward0": ("self", "target"),
    "PreluKernelBackward0": ("self", "weight"),
    "NativeLayerNormBackward0": ("input", "weight", "bias"),
    "NativeBatchNormBackward0": ("input", "weight", "bias"),
    "ScaledDotProductFlashAttentionForCpuBackward0": ("query", "key", "value"),
    "LogSoftmaxBackwardDataBackward0": ("grad_output", "output"),
    "SoftmaxBackwardDataBackward0": ("grad_output", "output"),
    "MseLossBackwardBackward0": ("grad_output", "self", "target"),
    "LeakyReluBackwardBackward0": ("grad_output", "self"),
    "SmoothL1LossBackwardBackward0": ("grad_output", "self", "target"),
    "HuberLossBackwardBackward0": ("grad_output", "self", "target"),
    "BinaryCrossEntropyBackwardBackward0": ("grad_output", "self", "target"),
    "GluBackwardBackward0": ("grad_output", "self"),
    "HardswishBackwardBackward0": ("grad_output", "self"),
    "PreluKernelBackwardBackward0": ("grad_output", "self", "weight"),
    "HardtanhBackwardBackward0": ("grad_output", "self"),
    "EluBackwardBackward0": ("grad_output", "self_or_result"),
    "GeluBackwardBackward0": ("grad_output", "self"),
    "SoftplusBackwardBackward0": ("grad_output", "self"),
    "IndexPutImplBackward0": ("self", "values"),
    "SoftshrinkBackwardBackward0": ("grad_output", "self"),
    "HardshrinkBackwardBackward0": ("grad_output", "self"),
}

# PyTorch's name for a saved result where it is not `_saved_result`.
RESULT_NAMES = {"ScaledDotProductFlashAttentionForCpuBackward0": "output"}

# Numbers a node keeps as attributes, under PyTorch's names for them.
NUMBERS = {"_saved_alpha": "alpha", "_saved_exponent": "exponent", "_saved_keepdim": "keepdim"}

# The settings PyTorch's nodes keep (grad_fn._saved_min, ...), by node; each is the node's
# attribute of that name unless RENAMED says otherwise.
SETTINGS = {
    "PowBackward2": ("self",),
    "RsubBackward1": ("alpha",),
    "ClampBackward1": ("min", "max"),
    "ClampMinBackward0": ("min",),
    "ClampMaxBackward0": ("max",),
    "LeakyReluBackward0": ("negative_slope",),
    "LeakyReluBackward1": ("negative_slope",),
    "EluBackward0": ("alpha", "scale", "input_scale"),
    "EluBackward1": ("alpha", "scale", "input_scale"),
    "CeluBackward0": ("alpha",),
    "CeluBackward1": ("alpha",),
    "HardtanhBackward0": ("min_val", "max_val"),
    "SoftplusBackward0": ("beta", "threshold"),
    "GeluBackward0": ("approximate",),
    "ThresholdBackward0": ("threshold",),
    "ThresholdBackward1": ("threshold",),
    "SoftshrinkBackward0": ("lambd",),
    "HardshrinkBackward0": ("lambd",),
    "MseLossBackward0": ("reduction",),
    "SmoothL1LossBackward0": ("beta", "reduction"),
    "HuberLossBackward0": ("delta", "reduction"),
    "SmoothL1LossBackwardBackward0": ("beta", "reduction"),
    "HuberLossBackwardBackward0": ("delta", "reduction"),
    "AddcmulBackward0": ("value",),
    "AddcdivBackward0": ("value",),
    # an activation's backward recorded as an op keeps the activation's settings
    "LeakyReluBackwardBackward0": ("negative_slope",),
    "HardtanhBackwardBackward0": ("min_val", "max_val"),
    "EluBackwardBackward0": ("alpha", "scale", "input_scale", "is_result"),
    "GeluBackwardBackward0": ("approximate",),
    "SoftplusBackwardBackward0": ("beta", "threshold"),
    "IndexPutImplBackward0": ("accumulate",),
    "SoftshrinkBackwardBackward0": ("lambd",),
    "ThresholdBackwardBackward0": ("threshold",),
    "HardshrinkBackwardBackward0": ("lambd",),
}
RENAMED = {
    ("PowBackward2", "self"): "base",
    ("ClampBackward1", "min"): "low",
    ("ClampBackward1", "max"): "high",
    ("ClampMinBackward0", "min"): "low",
    ("ClampMaxBackward0", "max"): "high",
}
_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}  # PyTorch keeps the enum's number

# Nodes whose input sizes PyTorch keeps (`_saved_self_sym_sizes`), and the mean's count
_SIZES = {
    "SumBackward0", "SumBackward1", "MeanBackward0", "MeanBackward1", "ViewBackward0",
    "ExpandBackward0", "SqueezeBackward0", "SelectBackward0", "SliceBackward0",
    "IndexBackward0", "MaxBackward0", "MinBackward0", "TopkBackward0", "SortBackward0",
    "SortBackward1", "RepeatBackward0", "SplitBackward0", "IndexSelectBackward0",
}  # fmt: skip

# Nodes that save an input only when the other needs a gradient: the one left unsaved reads
# as None, as in PyTorch (`(x * 3).grad_fn._saved_self`)
_SAVED_WHEN_NEEDED = {"MulBackward0", "DivBackward0"}


def input_names(node_name: str) -> tuple[str, ...]:
    return INPUT_NAMES.get(node_name, ("self", "other"))


def remember_written(out: Tensor, **numbers) -> Tensor:
    """Keep on out's node the Python numbers as the learner wrote them (3, not float32(3.0)):
    PyTorch shows a Scalar setting as written (`(x ** 3).grad_fn._saved_exponent` is 3)."""
    if out.grad_fn is not None:
        out.grad_fn.written = numbers
    return out


class _SavedAttribute:
    """One `_saved_<name>` attribute of every node, read through `attribute` below."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, node: Node | None, owner=None):
        return self if node is None else attribute(node, self.name)


def _saved_attribute_names() -> set[str]:
    """Every `_saved_` name some node may answer to (each node answers only to its own)."""
    wanted = {"self", "other", "result", "self_sym_sizes", "self_sym_numel"}
    for table in (INPUT_NAMES, SETTINGS):
        wanted.update(*table.values())
    wanted.update(RESULT_NAMES.values())
    return {f"_saved_{w}" for w in wanted} | set(NUMBERS)


def attribute(node: Node, name: str):
    """node._saved_<name>: a saved tensor (freed after backward), or a number the node keeps."""
    own = vars(node)
    wanted = name.removeprefix("_saved_")
    written = own.get("written", {})
    if wanted in written and (name in NUMBERS or wanted in SETTINGS.get(node.name(), ())):
        return written[wanted]
    if name in NUMBERS and NUMBERS[name] in own:
        value = own[NUMBERS[name]]
        return value.item() if hasattr(value, "item") else value
    if wanted in SETTINGS.get(node.name(), ()):
        return _setting(node, wanted)
    if wanted == "self_sym_sizes" and node.name() in _SIZES:
        return tuple(node.input_shapes[0])
    if wanted == "self_sym_numel" and node.name() in ("MeanBackward0", "MeanBackward1"):
        return math.prod(node.input_shapes[0])
    what = "result" if wanted == RESULT_NAMES.get(node.name(), "result") else None
    if what is None and wanted in input_names(node.name()):
        what = input_names(node.name()).index(wanted)
    if what is not None and what in node.to_save:
        return _scalar_operand(node, what, as_tensors(node)[what])
    if what is not None and node.name() in _SAVED_WHEN_NEEDED:
        return None
    raise AttributeError(f"'{type(node).__name__}' object has no attribute '{name}'")


def _setting(node: Node, wanted: str):
    keeper = vars(node).get("first", node)  # a backward-as-op reads its activation's settings
    value = vars(keeper).get(RENAMED.get((node.name(), wanted), wanted), _DEFAULTS.get(wanted))
    if wanted == "reduction":
        return _REDUCTIONS[value]
    return value.item() if hasattr(value, "item") else value


# what a node that never stores a setting keeps for it (3 - x: RsubBackward1's alpha is 1)
_DEFAULTS = {"alpha": 1, "is_result": False, "accumulate": True}


def _scalar_operand(node: Node, what, value):
    """A Python number in a tensor's slot (x * 3): PyTorch saved it as a 0-dim tensor of the
    number as written (tensor(3), an int64), not in the other operand's dtype."""
    if what == "result" or node.input_dtypes[what] is not None:
        return value
    names = input_names(node.name())
    number = vars(node).get("written", {}).get(names[what], value)
    if hasattr(number, "item"):
        number = number.item()
    return Tensor._wrap(np.array(number))


def as_tensors(node: Node) -> dict:
    """What the node saved, by what forward asked for (an input's position, or "result")."""
    values = node.saved_values()  # raises once freed, or when changed in place since
    return {
        what: _linked(node, what, v, s.tensor)
        for what, v, s in zip(node.to_save, values, node.saved, strict=True)
    }


def _linked(node: Node, what, value, source: Tensor | None = None):
    if what == "result":
        out = Tensor._wrap(value, requires_grad=True)
        out.grad_fn = node
        return out
    if node.input_dtypes[what] is None:
        return value  # a Python number took this slot: it stays a number
    child, nr = node.next_functions[what]
    if isinstance(child, AccumulateGrad):
        return child.variable
    if source is not None and source._array is value and source._grad_fn is child:
        return source  # PyTorch keeps the input itself, so `_saved_self is y` holds
    out = Tensor._wrap(value, requires_grad=child is not None)
    out.grad_fn, out._output_nr = child, nr
    return out


# on Node's class rather than through a Node.__getattr__ (engine/graph.py says why); an
# instance's own attribute of the same name (a custom Function's ctx) still wins
for _name in _saved_attribute_names():
    setattr(Node, _name, _SavedAttribute(_name))
