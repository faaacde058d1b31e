"""torch.autograd.functional: products with a function's Jacobian and Hessian, and the matrices.

Each is made of autograd.grad calls on a fresh copy of the inputs (so the function's own graph
is separate from any the inputs already have):

* vjp(f, x, v) = v^T J is one backward pass, with v as the grad_outputs;
* jvp(f, x, v) = J v by the double-backward trick: the backward u -> u^T J is linear in its
  grad_outputs u, so differentiating it with respect to u, along v, gives J v;
* vhp(f, x, v) = v^T H is a backward pass through the gradient (made with create_graph=True);
  hvp(f, x, v) = H v is the same trick as jvp, on the gradient;
* jacobian(f, x) asks for the gradient of each output element in turn (the Jacobian's rows),
  and hessian(f, x) is the Jacobian of f's gradient.

Shapes are PyTorch's: a tuple comes back where a tuple went in (per output, then per input for
the Jacobian), a lone Tensor otherwise. Results are detached unless create_graph=True; with
strict=True, an output or input the result does not depend on is an error instead of zeros.
"""

from __future__ import annotations

import contextlib

from engine import backward, creation
from engine.grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from engine.tensor import Tensor
from engine.unsupported import UnsupportedByGradtrace, missing_attribute

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]

OUTPUTS = "outputs of the user-provided function"


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): v has the outputs' shapes, the product the inputs'."""
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _as_tuple(func(*inputs), OUTPUTS, "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        v = _prepared_v(v, outputs, outputs_tuple, create_graph, "vjp", V_NONE_OUTPUT)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        product = _fill_in_zeros(grads, inputs, strict, create_graph, "back")
    outputs = _grad_postprocess(outputs, create_graph)
    product = _grad_postprocess(product, create_graph)
    return _tuple_postprocess(outputs, outputs_tuple), _tuple_postprocess(product, inputs_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): v has the inputs' shapes, the product the outputs'."""
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph, need_graph=True)
        v = _prepared_v(v, inputs, inputs_tuple, create_graph, "jvp", V_NONE_INPUT)
        outputs_tuple, outputs = _as_tuple(func(*inputs), OUTPUTS, "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        # the backward is linear in these, so their value never reaches the result; zeros hold
        # no inf or nan that could
        grad_outputs = tuple(creation.zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with enable_grad() if create_graph else contextlib.nullcontext():
        grads = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        product = _fill_in_zeros(grads, outputs, strict, create_graph, "back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    product = _grad_postprocess(product, create_graph)
    return _tuple_postprocess(outputs, outputs_tuple), _tuple_postprocess(product, outputs_tuple)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a func returning one number: v and the product have the
    inputs' shapes."""
    with enable_grad():
        inputs_tuple, inputs, v, outputs, jac = _gradient(
            func, inputs, v, create_graph, strict, "vhp"
        )
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        product = _fill_in_zeros(grads, inputs, strict, create_graph, "double_back")
    outputs = _grad_postprocess(outputs, create_graph)
    product = _grad_postprocess(product, create_graph)
    return _tuple_postprocess(outputs, False), _tuple_postprocess(product, inputs_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a func returning one number, by the double-backward trick."""
    with enable_grad():
        inputs_tuple, inputs, v, outputs, jac = _gradient(
            func, inputs, v, create_graph, strict, "hvp"
        )
        grad_jac = tuple(creation.zeros_like(x, requires_grad=True) for x in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)  # PyTorch checks jac here, not double_back
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        product = _fill_in_zeros(grads, inputs, strict, create_graph, "double_back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    product = _grad_postprocess(product, create_graph)
    return _tuple_postprocess(outputs, False), _tuple_postprocess(product, inputs_tuple)


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
        inputs = _grad_preprocess(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _as_tuple(func(*inputs), OUTPUTS, "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        result = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]
            flat = out.reshape(-1)
            for j in range(out.numel()):
                row = _autograd_grad(
                    (flat[j],), inputs, retain_graph=True, create_graph=create_graph
                )
                for k, (g, x) in enumerate(zip(row, inputs, strict=True)):
                    if g is None and strict:
                        raise RuntimeError(
                            f"Output {i} of the user-provided function is independent of "
                            f"input {k}. This is not allowed in strict mode."
                        )
                    if g is not None and strict and create_graph and not g.requires_grad:
                        # PyTorch names the output's index here, not the input's
                        raise RuntimeError(
                            "The jacobian of the user-provided function is independent of "
                            f"input {i}. This is not allowed in strict mode when "
                            "create_graph=True."
                        )
                    rows[k].append(creation.zeros_like(x) if g is None else g)
            result.append(
                tuple(
                    creation.stack(r, dim=0).view(out.shape + x.shape)
                    for r, x in zip(rows, inputs, strict=True)
                )
            )
        result = _grad_postprocess(tuple(result), create_graph)
    return _tuple_postprocess(result, (outputs_tuple, inputs_tuple))


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
        out_tuple, outs = _as_tuple(out, OUTPUTS, "hessian")
        _check_requires_grad(outs, "outputs", strict)
        if out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should contain a single "
                "element"
            )
        return out.squeeze()

    def gradient(*args):
        jac = jacobian(one_number, args, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    result = jacobian(gradient, inputs, create_graph=create_graph, strict=strict)
    return _tuple_postprocess(result, (inputs_tuple, inputs_tuple))


def __getattr__(name: str):
    raise missing_attribute("torch.autograd.functional", name, __all__)


# ***** PyTorch's steps, shared by the functions above *****


def _refuse(vectorize: bool, strategy: str) -> None:
    if vectorize or strategy != "reverse-mode":
        raise UnsupportedByGradtrace(
            "vectorize=True and forward-mode strategies of torch.autograd.functional are not "
            "supported by gradtrace's engine"
        )


def _as_tuple(value, what: str, fn_name: str) -> tuple[bool, tuple]:
    """Whether `value` was a tuple, and its Tensors as one; TypeError for anything else."""
    is_tuple = isinstance(value, tuple)
    values = value if is_tuple else (value,)
    for i, v in enumerate(values):
        if not isinstance(v, Tensor):
            which = f"the value at index {i}" if is_tuple else f"the given {what}"
            raise TypeError(
                f"The {what} given to {fn_name} must be either a Tensor or a tuple of Tensors "
                f"but {which} has type {type(v)}."
            )
    return is_tuple, values


def _grad_preprocess(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """New tensor objects, so the function's graph starts from them: differentiable views
    where the caller wants a graph through the result, detached copies otherwise."""
    return tuple(
        x.view_as(x) if create_graph and x.requires_grad else x.detach().requires_grad_(need_graph)
        for x in inputs
    )


def _grad_postprocess(values: tuple, create_graph: bool) -> tuple:
    """Detach the results (one tuple level or two) unless the caller asked for their graph."""
    if isinstance(values[0], Tensor):
        return values if create_graph else tuple(t.detach() for t in values)
    return tuple(_grad_postprocess(v, create_graph) for v in values)


def _tuple_postprocess(result, to_unpack):
    """Drop the tuple levels the caller did not use: one flag, or (outer, inner) for a
    tuple of tuples."""
    if isinstance(to_unpack, tuple):
        outer, inner = to_unpack
        if not inner:
            result = tuple(r[0] for r in result)
        return result if outer else result[0]
    return result if to_unpack else result[0]


def _validate_v(v: tuple, other: tuple, other_tuple: bool) -> None:
    if len(other) != len(v):
        if other_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}."
            )
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (el_v, el_other) in enumerate(zip(v, other, strict=True)):
        if el_v.size() != el_other.size():
            prefix = f"Entry {i} in " if other_tuple else ""
            raise RuntimeError(
                f"{prefix}v has invalid size: should be {el_other.size()} but got {el_v.size()}."
            )


def _check_requires_grad(values: tuple, kind: str, strict: bool) -> None:
    """strict=True: each value must depend on the inputs (require grad)."""
    if not strict:
        return
    for i, value in enumerate(values):
        if value is None:  # only a gradient can be None
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}. This is "
                "not allowed in strict mode."
            )
        if value.requires_grad:
            continue
        if kind == "hessian":
            raise RuntimeError(
                f"The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should ensure "
                "that your function is thrice differentiable and that the hessian depends on the "
                "inputs."
            )
        if kind == "jacobian":
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example)."
            )
        if kind == "grad_inputs":
            raise RuntimeError(
                f"The gradient with respect to input {i} is independent of the inputs of the "
                "user-provided function. This is not allowed in strict mode."
            )
        raise RuntimeError(
            f"Output {i} of the user-provided function does not require gradients. The outputs "
            "must be computed in a differentiable manner from the input when running in strict "
            "mode."
        )


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """autograd.grad over the outputs that require grad (None for every input if none do)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    kept = [
        (o, g)
        for o, g in zip(outputs, grad_outputs, strict=True)
        if o is not None and o.requires_grad
    ]
    if not kept:
        return (None,) * len(inputs)
    return backward.grad(
        tuple(o for o, _ in kept),
        inputs,
        tuple(g for _, g in kept),
        retain_graph=retain_graph,
        create_graph=create_graph,
        allow_unused=True,
    )


STRICT_NONE = {
    "back": "The output of the user-provided function is independent of input {i}. This is not "
    "allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
    "grad_outputs when using the double backward trick to compute forward mode gradients. This "
    "is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This "
    "is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} "
    "in the grad_jacobian. This is not allowed in strict mode as it prevents from using the "
    "double backward trick to replace forward mode AD.",
}


def _fill_in_zeros(grads, refs, strict: bool, create_graph: bool, stage: str) -> tuple:
    """Zeros shaped like refs[i] where grads[i] is None; with strict, an error instead (and
    with create_graph too, for a gradient with no graph)."""
    filled = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(STRICT_NONE[stage].format(i=i))
            g = creation.zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input {i}. This is "
                "not allowed in strict mode when create_graph=True."
            )
        filled.append(g)
    return tuple(filled)


def _gradient(func, inputs, v, create_graph: bool, strict: bool, fn_name: str):
    """vhp's and hvp's first steps: the inputs and v, func's one number, and its gradient with
    a graph (so it can be differentiated again)."""
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _grad_preprocess(inputs, create_graph, need_graph=True)
    v = _prepared_v(v, inputs, inputs_tuple, create_graph, fn_name, V_NONE_INPUT)
    outputs_tuple, outputs = _as_tuple(func(*inputs), OUTPUTS, fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    if outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn_name} should contain a single "
            "element"
        )
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return inputs_tuple, inputs, v, outputs, jac


V_NONE_OUTPUT = (
    "The vector v can only be None if the user-provided function returns a single Tensor with a "
    "single element."
)
V_NONE_INPUT = (
    "The vector v can only be None if the input to the user-provided function is a single "
    "Tensor with a single element."
)


def _prepared_v(v, like: tuple, like_tuple: bool, create_graph: bool, fn_name: str, none: str):
    """v as a tuple of new tensors shaped like `like` (the outputs for vjp, else the inputs);
    None only where `like` is one number."""
    if v is None:
        if len(like) != 1 or like[0].nelement() != 1:
            raise RuntimeError(none)
        return None
    _, v = _as_tuple(v, "v", fn_name)
    v = _grad_preprocess(v, create_graph, need_graph=False)
    _validate_v(v, like, like_tuple)
    return v
