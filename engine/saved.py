"""What a node saved, as Tensors: `grad_fn._saved_self`, `_saved_result`, `_saved_exponent`, and
the values a backward recorded as a graph (create_graph=True) computes with.

A node keeps numpy arrays (engine/graph.py's SavedTensor). As a Tensor, a saved input is linked
into the graph where the input was: a leaf is the leaf itself (as in PyTorch, `_saved_self is x`),
anything else a tensor on the input's grad_fn; the result hangs off the node that made it. So a
derivative computed from them can be differentiated again.
"""

from __future__ import annotations

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
}

# PyTorch's name for a saved result where it is not `_saved_result`.
RESULT_NAMES = {"ScaledDotProductFlashAttentionForCpuBackward0": "output"}

# Numbers a node keeps as attributes, under PyTorch's names for them.
NUMBERS = {"_saved_alpha": "alpha", "_saved_exponent": "exponent", "_saved_keepdim": "keepdim"}


def input_names(node_name: str) -> tuple[str, ...]:
    return INPUT_NAMES.get(node_name, ("self", "other"))


def attribute(node: Node, name: str):
    """node._saved_<name>: a saved tensor (freed after backward), or a number the node keeps."""
    if name in NUMBERS and NUMBERS[name] in vars(node):
        value = vars(node)[NUMBERS[name]]
        return value.item() if hasattr(value, "item") else value
    wanted = name.removeprefix("_saved_")
    what = "result" if wanted == RESULT_NAMES.get(node.name(), "result") else None
    if what is None and wanted in input_names(node.name()):
        what = input_names(node.name()).index(wanted)
    if what is not None and what in node.to_save:
        return as_tensors(node)[what]
    raise AttributeError(f"'{type(node).__name__}' object has no attribute '{name}'")


def as_tensors(node: Node) -> dict:
    """What the node saved, by what forward asked for (an input's position, or "result")."""
    values = node.saved_values()  # raises once freed, or when changed in place since
    return {what: _linked(node, what, v) for what, v in zip(node.to_save, values, strict=True)}


def _linked(node: Node, what, value):
    if what == "result":
        out = Tensor._wrap(value, requires_grad=True)
        out.grad_fn = node
        return out
    if node.input_dtypes[what] is None:
        return value  # a Python number took this slot: it stays a number
    child, nr = node.next_functions[what]
    if isinstance(child, AccumulateGrad):
        return child.variable
    out = Tensor._wrap(value, requires_grad=child is not None)
    out.grad_fn, out._output_nr = child, nr
    return out
