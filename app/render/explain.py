"""One-line explanations of the errors learners meet most, and of the limits a run can hit.

The message itself is PyTorch's, word for word (the engine raises what PyTorch raises); the
explanation says what it means and what to do, in a line.
"""

from __future__ import annotations

import re
from collections.abc import Callable


def _transpose_fix(rows: int, cols: int, rows_b: int, cols_b: int) -> str:
    """What would make (rows×cols) @ (rows_b×cols_b) work, if a transpose would."""
    if cols == cols_b:
        return "B.T has the rows A needs: A @ B.T."
    if rows == rows_b:
        return "A.T has the columns B needs: A.T @ B."
    return "No transpose makes these fit: check which tensors are meant to be multiplied."


# (pattern in the message, explanation or a function of the pattern's groups that writes it);
# the first match wins, so specific ones come first.
_ERRORS: list[tuple[re.Pattern, str | Callable[..., str]]] = [
    (
        re.compile(r"backward through the graph a second time"),
        # (the narration has just said which node's saved tensors were freed: not again)
        "Each backward() needs a graph of its own: run the forward pass again before it, as a "
        "training loop does on every step, or pass retain_graph=True to the first backward() "
        "to go through this one twice.",
    ),
    (
        re.compile(r"grad can be implicitly created only for scalar outputs"),
        "backward() with no argument needs a single number, such as a loss. Reduce first "
        "(y.sum().backward()) or pass a gradient of y's shape (y.backward(torch.ones_like(y))).",
    ),
    (
        re.compile(r"modified by an inplace operation"),
        "A tensor that a node saved for backward was changed in place afterwards (its version "
        "went up), so its gradient would be wrong. Use the operation's out-of-place form (y = "
        "y + 1 for y += 1, y = y.add(1) for y.add_(1)), or change a .clone() of it.",
    ),
    (
        re.compile(r"leaf Variable that requires grad is being used in an in-place operation"),
        "Changing a leaf that requires grad in place would hide the change from autograd. Do it "
        "inside torch.no_grad(), as optimizers do, or change a copy.",
    ),
    (
        re.compile(r"does not require grad and does not have a grad_fn"),
        "Nothing in this tensor's history requires grad, so there is no graph to go back "
        "through. Create the leaves with requires_grad=True, and look for torch.no_grad() or "
        ".detach() on the way.",
    ),
    (
        re.compile(r"The size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\)"),
        "These shapes cannot be broadcast together: lined up from the right, each pair of "
        "sizes must be equal, or one of them 1.",
    ),
    (
        re.compile(r"shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)"),
        lambda rows, cols, rows_b, cols_b: (
            f"For A @ B, A's number of columns must equal B's number of rows ({cols} ≠ {rows_b} "
            "here). " + _transpose_fix(int(rows), int(cols), int(rows_b), int(cols_b))
        ),
    ),
    (
        re.compile(r"cannot be converted to Scalar|only one element tensors can be converted"),
        ".item() turns a one-element tensor into a Python number; this tensor has more. Use "
        ".tolist(), or pick one element first.",
    ),
    (
        re.compile(r"Only Tensors of floating point .* can require gradients"),
        "Gradients need floating-point tensors: write 3.0 rather than 3, or pass "
        "dtype=torch.float32.",
    ),
    (
        re.compile(r"[Cc]an't call numpy\(\) on Tensor that requires grad"),
        "numpy() would lose track of the graph; call .detach() first, as the message says.",
    ),
    (
        re.compile(r"expected (scalar type|.*dtype)|found dtype"),
        "The two tensors have different dtypes. Convert one to match (.float(), .double()).",
    ),
]

_BY_TYPE = {
    "UnsupportedByGradtrace": "gradtrace's engine covers the core of PyTorch's tensor and autograd "
    "API, and this is outside it. The same code runs in real PyTorch.",
    "SyntaxError": "Python could not read the snippet, so none of it ran. Fix the marked spot.",
    "IndentationError": "Python could not read the snippet, so none of it ran: the indentation "
    "at the marked spot does not line up.",
    "NameError": "That name has no value at this point: check its spelling, and that it is "
    "assigned before this line.",
    "AttributeError": "This object has no attribute by that name (or gradtrace's engine does not "
    "provide it).",
    "IndexError": "An index is outside the tensor's size along that dimension.",
    "TypeError": "An argument has a type this function does not accept.",
    "ValueError": "An argument has the right type but a value this function does not accept.",
    "ZeroDivisionError": "Python numbers cannot be divided by zero (tensors give inf instead).",
    "ImportError": "Inside a snippet, only torch and a few standard modules (math, random) can "
    "be imported.",
    "ModuleNotFoundError": "Inside a snippet, only torch and a few standard modules (math, "
    "random) can be imported.",
    "RecursionError": "A function called itself too deeply.",
    "AssertionError": "An assert in the snippet failed.",
}

# One sentence for every way a run can end other than ok/error (tests tie it to statuses.ALL)
STATUSES = {
    "cpu_limit": "The snippet used up the CPU time a run may take. A loop that runs much longer "
    "than intended is the usual cause.",
    "event_limit": "The snippet did more than a trace can record. A loop that runs much longer "
    "than intended is the usual cause.",
    "wall_limit": "The snippet took longer than a run may take, in real time.",
    "memory_limit": "The snippet needed more memory than a run may use. A very large tensor is "
    "the usual cause.",
    "output_limit": "The snippet printed more than a run may print.",
    "forbidden": "The snippet tried something the sandbox does not allow, such as opening files "
    "or the network; snippets run tensor code only.",
    "crashed": "The process running the snippet crashed. This is most likely a bug in gradtrace, "
    "not in the snippet.",
    "rejected": "The snippet was not run.",
}


def explain_error(kind: str, message: str) -> str:
    """One line on what an error means and what to do about it."""
    for pattern, text in _ERRORS:
        found = pattern.search(message)
        if found:
            return text(*found.groups()) if callable(text) else text
    if kind in _BY_TYPE:
        return _BY_TYPE[kind]
    return f"The snippet raised {kind} here and did not catch it, so it stopped."


def explain_status(status: str) -> str:
    """One line on a limit that stopped the run (cpu_limit, event_limit, wall_limit, …)."""
    return STATUSES.get(status, f"The run ended with status {status}.")
