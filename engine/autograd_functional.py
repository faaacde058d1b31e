"""torch.autograd.functional: the Jacobian and the Hessian of a Python function, row by row.

jacobian(f, x) runs f once on a fresh copy of x and asks autograd.grad for the gradient of each
output element in turn; those gradients are the Jacobian's rows. hessian(f, x) is the Jacobian
of f's gradient, which the inner jacobian computes with create_graph=True so that it can be
differentiated again. Shapes are PyTorch's: output dims first, then input dims, with tuples
where f takes or returns several tensors.
"""

from __future__ import annotations

from engine import backward, creation
from engine.grad_mode import enable_grad
from engine.tensor import Tensor
from engine.unsupported import UnsupportedByGradtrace


def jacobian(
    func,
    inputs,
    create_graph=False,
    strict=False,
    vectorize=False,
    strategy="reverse-mode",
):
    """d func(inputs) / d inputs: shaped output.shape + input.shape, per output and input."""
    _refuse(vectorize, strategy)
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _fresh(inputs, create_graph)
        outputs_tuple, outputs = _as_tuple(
            func(*inputs), "outputs of the user-provided function", "jacobian"
        )
        result = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]
            flat = out.reshape(-1)
            for j in range(out.numel()):
                row = _grads(flat[j], inputs, create_graph)
                for k, (g, x) in enumerate(zip(row, inputs, strict=True)):
                    if g is None and strict:
                        raise RuntimeError(
                            f"Output {i} of the user-provided function is independent of "
                            f"input {k}. This is not allowed in strict mode."
                        )
                    rows[k].append(creation.zeros_like(x) if g is None else g)
            result.append(
                tuple(
                    creation.stack(r, dim=0).view(out.shape + x.shape)
                    for r, x in zip(rows, inputs, strict=True)
                )
            )
        if not create_graph:
            result = [tuple(t.detach() for t in per_output) for per_output in result]
    return _shaped(result, outputs_tuple, inputs_tuple)


def hessian(
    func,
    inputs,
    create_graph=False,
    strict=False,
    vectorize=False,
    outer_jacobian_strategy="reverse-mode",
):
    """The second derivatives of a function returning one number: input.shape twice."""
    _refuse(vectorize, outer_jacobian_strategy)
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")

    def one_number(*args):
        out = func(*args)
        if isinstance(out, tuple) or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should contain a single "
                "element"
            )
        return out.squeeze()

    def gradient(*args):
        return jacobian(one_number, args, create_graph=True)

    result = jacobian(gradient, inputs, create_graph=create_graph, strict=strict)
    return _shaped_pair(result, inputs_tuple)


def _refuse(vectorize: bool, strategy: str) -> None:
    if vectorize or strategy != "reverse-mode":
        raise UnsupportedByGradtrace(
            "vectorize=True and forward-mode strategies of torch.autograd.functional are not "
            "supported by gradtrace's engine"
        )


def _as_tuple(value, what: str, fn_name: str) -> tuple[bool, tuple]:
    is_tuple = isinstance(value, tuple)
    values = value if is_tuple else (value,)
    for i, v in enumerate(values):
        if not isinstance(v, Tensor):
            kind = "either a Tensor or a tuple of Tensors" if is_tuple or i == 0 else "a Tensor"
            raise TypeError(
                f"The {what} given to {fn_name} must be {kind} but the value at index {i} has "
                f"type {type(v)}."
            )
    return is_tuple, values


def _fresh(inputs: tuple, create_graph: bool) -> tuple:
    """New tensor objects for the inputs: differentiable copies, or detached ones."""
    if create_graph:
        return tuple(x.view_as(x) if x.requires_grad else _detached(x) for x in inputs)
    return tuple(_detached(x) for x in inputs)


def _detached(x: Tensor) -> Tensor:
    return x.detach().requires_grad_(True)


def _grads(out: Tensor, inputs: tuple, create_graph: bool) -> tuple:
    if not out.requires_grad:
        return (None,) * len(inputs)
    return backward.grad(
        (out,), inputs, retain_graph=True, create_graph=create_graph, allow_unused=True
    )


def _shaped(result: list, outputs_tuple: bool, inputs_tuple: bool):
    """Drop the tuple levels the caller did not use: per output, then per input."""
    per_output = [r if inputs_tuple else r[0] for r in result]
    return tuple(per_output) if outputs_tuple else per_output[0]


def _shaped_pair(result: tuple, inputs_tuple: bool):
    """A Hessian's two levels are both per input: a lone input gives one tensor."""
    return result if inputs_tuple else result[0][0]
