"""torch.autograd.gradcheck and gradgradcheck: a backward checked against finite differences.

PyTorch's slow mode, step for step, so a failure prints PyTorch's numbers:

* numerical: each element of each input that requires grad is moved by -eps, then +eps, in
  place (through the memory `.data` shares, so no version bump), `func` runs at both points
  and (f(x + eps) - f(x - eps)) / 2eps, in the output's dtype, is one row of the Jacobian;
* analytical: autograd.grad of each output with one-hot grad_outputs, one row per output
  element, twice (the two runs must agree: a backward must be reentrant);
* then the backward of zero grad_outputs must be zero, and must stay so when they are undefined.

The two Jacobians are laid out (input elements) x (output elements) and compared with allclose.
gradgradcheck runs gradcheck on the function from (inputs, grad_outputs) to the gradient of
func, computed with create_graph=True.

A trace shows the call, not its inside: gradcheck's own forwards and backwards (two forward
passes per input element, two backward passes per output element) are not the program's steps,
and a 20x20 input alone would pass the tracer's event cap. What `func` prints still shows.
"""

from __future__ import annotations

import collections.abc
import contextlib
import warnings

import numpy as np

from engine import backward, dtypes, record, tracing
from engine import random as rng
from engine.shape import Size
from engine.tensor import Tensor
from engine.unsupported import UnsupportedByGradtrace, missing_attribute

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Error raised by gradcheck and gradgradcheck."""


GradcheckError.__module__ = "torch.autograd.gradcheck"  # as PyTorch prints its type

DOUBLE_WARNING = (
    "Input #{} requires gradient and is not a double precision floating point or complex. "
    "This check will likely fail if all the inputs are not of double precision floating point "
    "or complex. "
)
UNDEFINED_GRAD_WARNING = (
    "Backwards compatibility: New undefined gradient support checking feature is enabled by "
    "default, but it may break existing callers of this function. If this is true for you, you "
    'can call this function with "check_undefined_grad=False" to disable the feature'
)
UNDEFINED_GRAD_NOTES = (
    'Please look at "Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"'
)
FAILED_NONDET_MSG = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""


def gradcheck(
    func,
    inputs,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """True if func's backward matches finite differences at `inputs` (tensors that require
    grad, best in float64); otherwise GradcheckError, or False with raise_exception=False."""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError(
            "Expected at least one of check_forward_ad or check_backward_ad to be True"
        )
    if check_batched_grad and not check_backward_ad:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_backward_ad to be True"
        )
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError(
            "Setting check_batched_forward_grad=True requires check_forward_ad to be True"
        )
    _refuse(
        "gradcheck",
        fast_mode=fast_mode,
        check_forward_ad=check_forward_ad,
        check_batched_grad=check_batched_grad,
        check_batched_forward_grad=check_batched_forward_grad,
    )
    try:
        with _untraced():
            return _check(
                func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes
            )
    except GradcheckError:
        if raise_exception:
            raise
        return False


def gradgradcheck(
    func,
    inputs,
    grad_outputs=None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """gradcheck of func's gradient: (inputs, grad_outputs) -> autograd.grad(func(inputs),
    inputs, grad_outputs, create_graph=True). grad_outputs default to uniform draws in [-1, 1)
    from the default generator, as torch.testing.make_tensor makes them."""
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError(
            "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True"
        )
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_undefined_grad=True requires check_rev_over_rev to be True"
        )
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_rev_over_rev to be True"
        )
    _refuse(
        "gradgradcheck",
        fast_mode=fast_mode,
        check_fwd_over_rev=check_fwd_over_rev,
        check_batched_grad=check_batched_grad,
    )
    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        with _untraced():
            outputs = _differentiable_outputs(func(*tupled_inputs))
            tupled_grad_outputs = tuple(
                _random_like(o, gen_non_contig_grad_outputs) for o in outputs
            )
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    count = len(tupled_grad_outputs)
    # which arguments require grad: new_func sets it again on what it is handed, as PyTorch's
    # does (its forward-mode path hands it detached copies)
    diff_inputs = {i for i, x in enumerate(tupled_inputs) if _is_tensor(x) and x.requires_grad}
    diff_grad_outputs = {i for i, g in enumerate(tupled_grad_outputs) if g.requires_grad}

    def new_func(*args):
        # args[:-0] is empty: with no grad_outputs, func gets no inputs, as in PyTorch
        input_args = tuple(
            x.requires_grad_() if i in diff_inputs else x for i, x in enumerate(args[:-count])
        )
        outputs = _differentiable_outputs(func(*input_args))
        grads = tuple(
            g.requires_grad_() if i in diff_grad_outputs else g for i, g in enumerate(args[-count:])
        )
        wrt = tuple(x for i, x in enumerate(input_args) if i in diff_inputs)
        grad_inputs = backward.grad(outputs, wrt, grads, create_graph=True, allow_unused=True)
        return tuple(g for g in grad_inputs if g is not None)

    return gradcheck(
        new_func,
        tupled_inputs + tupled_grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad,
        check_grad_dtypes=check_grad_dtypes,
        check_batched_grad=check_batched_grad,
        fast_mode=fast_mode,
        check_forward_ad=check_fwd_over_rev,
        check_backward_ad=check_rev_over_rev,
        masked=masked,
    )


def __getattr__(name: str):
    # the deprecated get_numerical_jacobian and friends are PyTorch's, not gradtrace's
    raise missing_attribute("torch.autograd.gradcheck", name, __all__)


def _refuse(function: str, **flags: bool) -> None:
    asked = ", ".join(f"{name}=True" for name, value in flags.items() if value)
    if asked:
        raise UnsupportedByGradtrace(
            f"{function} with {asked} is not supported by gradtrace's engine (it has no "
            "forward-mode AD, vmap or fast mode); the default slow mode is"
        )


@contextlib.contextmanager
def _untraced():
    """gradcheck's own work runs with no tracer (see the module's docstring)."""
    tracer, tracing.current = tracing.current, None
    try:
        yield
    finally:
        tracing.current = tracer


# ***** the check *****


def _check(func, inputs, eps, atol, rtol, nondet_tol, undefined_grad, grad_dtypes) -> bool:
    """PyTorch's _gradcheck_helper for real inputs and outputs, in its order."""
    tupled_inputs = _as_tuple(inputs)
    _check_inputs(tupled_inputs)
    func_out = func(*tupled_inputs)
    outputs = _differentiable_outputs(func_out)
    _compare_jacobians(
        func, func_out, tupled_inputs, outputs, eps, rtol, atol, nondet_tol, grad_dtypes
    )
    _check_backward_multiplies_grad_output(outputs, tupled_inputs)
    if undefined_grad:
        _check_undefined_output_grads(func, outputs, tupled_inputs)
    return True


def _check_inputs(inputs: tuple) -> None:
    """A warning for each input that is not float64; an error for overlapping memory (the
    finite differences would move several elements at once) and for no input requiring grad."""
    any_requiring_grad = False
    for i, x in enumerate(inputs):
        if not (_is_tensor(x) and x.requires_grad):
            continue
        if x._array.dtype != np.float64:
            warnings.warn(DOUBLE_WARNING.format(i), UserWarning, stacklevel=2)
        if not all(
            st != 0 or n <= 1 for st, n in zip(x._array.strides, x._array.shape, strict=True)
        ):
            raise RuntimeError(
                f"The {i}th input has a dimension with stride 0. gradcheck only supports inputs "
                "that are non-overlapping to be able to compute the numerical gradients "
                "correctly. You should call .contiguous on the input before passing it to "
                "gradcheck."
            )
        any_requiring_grad = True
    if not any_requiring_grad:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of them "
            "have requires_grad=True."
        )


def _compare_jacobians(func, func_out, inputs, outputs, eps, rtol, atol, nondet_tol, grad_dtypes):
    """PyTorch's _slow_gradcheck: every numerical Jacobian first, then the analytical ones of
    each output in turn, each compared as it is made."""
    func_out = _as_tuple(func_out)
    if not outputs:
        for per_input in _numerical_jacobians(func, inputs, func_out, eps):
            if any(np.count_nonzero(j) for j in per_input):
                raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    numerical = list(zip(*_numerical_jacobians(func, inputs, func_out, eps), strict=True))
    # one list per output of func, kept for those that require grad (PyTorch pairs them by
    # position, so an output before them that cannot require grad shifts them)
    numerical = [n for o, n in zip(func_out, numerical, strict=False) if o.requires_grad]
    for i, o in enumerate(outputs):
        analytical = _analytical_jacobians(inputs, o, nondet_tol, grad_dtypes)
        for j, (a, n) in enumerate(zip(analytical, numerical[i], strict=False)):
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(
                    f"Jacobian mismatch for output {i:d} with respect to input {j:d},\n"
                    f"numerical:{_show(n)}\nanalytical:{_show(a)}\n"
                )


# ***** numerical: central differences *****


def _numerical_jacobians(func, inputs: tuple, func_out: tuple, eps: float) -> list[tuple]:
    """For each input that requires grad, one Jacobian per floating output of func."""
    positions = [i for i, x in enumerate(inputs) if _is_tensor(x) and x.requires_grad]
    return [
        _numerical_jacobian(func, inputs, func_out, x, eps)
        for x, _ in zip(_iter_tensors(inputs, True), positions, strict=False)
    ]


def _numerical_jacobian(func, inputs: tuple, func_out: tuple, x: Tensor, eps: float) -> tuple:
    """Perturb x one element at a time (in C order): each element gives a row per output."""
    if not x.requires_grad:
        raise AssertionError("Expected input to have requires_grad=True")
    data = x._array  # the memory x.data shares: written here, with no version bump
    rows = {}
    for flat, index in enumerate(np.ndindex(data.shape)):
        original = data[index]
        step = data.dtype.type(eps)
        data[index] = original - step
        before = _run(func, inputs)
        data[index] = original + step
        after = _run(func, inputs)
        data[index] = original
        rows[flat] = [
            _central_difference(a, b, eps, index) for a, b in zip(before, after, strict=False)
        ]
    jacobians = [np.zeros((x.numel(), o.numel()), o._array.dtype) for o in func_out if _floating(o)]
    for k, jacobian in enumerate(jacobians):
        for flat, row in rows.items():
            jacobian[flat] = row[k]  # by position among the floating outputs, as PyTorch
    return tuple(jacobians)


def _run(func, inputs: tuple) -> tuple:
    """func's outputs at the perturbed point, copied before the next perturbation."""
    return tuple(_snapshot(out) for out in _as_tuple(func(*inputs)))


def _snapshot(out) -> np.ndarray:
    if not isinstance(out, Tensor):
        raise AttributeError(f"'{type(out).__name__}' object has no attribute 'clone'")
    return out._array.copy()


def _central_difference(a: np.ndarray, b: np.ndarray, eps: float, index: tuple) -> np.ndarray:
    """(b - a) / (2 eps) in the output's dtype, eps rounded to it first, as a Tensor op with a
    Python number computes it."""
    if a.shape != b.shape:
        raise AssertionError(
            "Expected `func` to return outputs with the same shape when inputs are perturbed "
            f"on index {index} by {eps}, but got: shapes {Size(a.shape)} and {Size(b.shape)}."
        )
    if a.dtype != b.dtype:
        raise AssertionError(
            "Expected `func` to return outputs with the same dtype when inputs are perturbed "
            f"on index {index} by {eps}, but got: dtypes {dtypes.from_numpy(a.dtype)} and "
            f"{dtypes.from_numpy(b.dtype)}."
        )
    if a.dtype == np.bool_:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
            "or `logical_xor()` operator instead."
        )
    difference = b - a
    if difference.dtype.kind != "f":  # an integer output divides as the default float dtype
        difference = difference.astype(dtypes.default_float().np)
    return (difference / difference.dtype.type(2 * eps)).reshape(-1)


# ***** analytical: one backward per output element *****


def _analytical_jacobians(inputs: tuple, output: Tensor, nondet_tol: float, grad_dtypes: bool):
    """d output / d input for each input that requires grad, row by row, computed twice."""
    wrt = list(_iter_tensors(inputs, True))

    def vjp(grad_output: Tensor) -> tuple:
        return backward.grad(output, wrt, grad_output, retain_graph=True, allow_unused=True)

    first, sizes_ok, types_ok = _stack_rows(_jacobian_rows(vjp, output), inputs, output.numel())
    second, _, _ = _stack_rows(_jacobian_rows(vjp, output), inputs, output.numel())
    reentrant = all(
        j1.size == 0 or not np.abs(j1 - j2).max() > nondet_tol
        for j1, j2 in zip(first, second, strict=True)
    )
    # PyTorch unpacks these two the other way round: a size mismatch is reported (as a dtype
    # mismatch) only with check_grad_dtypes, and a dtype mismatch as an incorrect size
    if not sizes_ok and grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not types_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if not reentrant:
        raise GradcheckError(
            "Backward is not reentrant, i.e., running backward with same input and grad_output "
            "multiple times gives different values, although analytical gradient matches "
            f"numerical gradient.The tolerance for nondeterminism was {nondet_tol}."
            + FAILED_NONDET_MSG
        )
    return first


def _jacobian_rows(vjp, output: Tensor) -> list[list]:
    """rows[i][j]: the gradient for input i of output element j (a one-hot grad_output)."""
    rows: list[list] = []
    for j in range(output.numel()):
        one_hot = np.zeros(output._array.shape, output._array.dtype)
        one_hot.reshape(-1)[j] = 1.0
        for i, g in enumerate(vjp(Tensor._wrap(one_hot))):
            if j == 0:
                rows.append([])
            rows[i].append(None if g is None else g._array.copy())
    return rows


def _stack_rows(rows: list[list], inputs: tuple, numel_output: int):
    """Each input's rows as the columns of an (input elements) x (output elements) matrix in
    the input's dtype; and whether every row had the input's size and dtype."""
    jacobians = [
        np.zeros((x.numel(), numel_output), x._array.dtype)
        for x in inputs
        if _floating(x) and x.requires_grad
    ]
    wrt = list(_iter_tensors(inputs, True))
    sizes_ok = types_ok = True
    for i, per_input in enumerate(rows):
        x, jacobian = wrt[i], jacobians[i]
        for j, g in enumerate(per_input):
            if g is not None and g.shape != x._array.shape:
                sizes_ok = False
            elif g is not None and g.dtype != x._array.dtype:
                types_ok = False
            if g is None:
                jacobian[:, j] = 0
                continue
            if jacobian[:, j].size != g.size:
                raise AssertionError(
                    f"Expected out_jacobian column to have {g.size} elements, but got "
                    f"{jacobian[:, j].size}"
                )
            jacobian[:, j] = g.reshape(-1)
    return jacobians, sizes_ok, types_ok


def _allclose(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> bool:
    """torch.allclose(a, b, rtol, atol) after promoting both to one dtype: |a - b| <= atol +
    |rtol * b|, in that dtype (the tolerances rounded to it)."""
    dt = np.promote_types(a.dtype, b.dtype)
    a, b = a.astype(dt), b.astype(dt)
    allowed = dt.type(atol) + np.abs(dt.type(rtol) * b)
    actual = np.abs(a - b)
    return bool(np.all((a == b) | (np.isfinite(actual) & (actual <= allowed))))


def _show(jacobian: np.ndarray) -> str:
    return repr(Tensor._wrap(jacobian))


# ***** what a backward must do with zero and undefined grad_outputs *****


def _check_backward_multiplies_grad_output(outputs: tuple, inputs: tuple) -> None:
    """Zero grad_outputs must give zero gradients (this backward frees the graph)."""
    wrt = list(_iter_tensors(inputs, True))
    if not wrt:
        raise GradcheckError("no Tensors requiring grad found in input")
    zeros = [Tensor._wrap(np.zeros_like(o._array)) for o in outputs]
    for g, x in zip(backward.grad(outputs, wrt, zeros, allow_unused=True), wrt, strict=True):
        if g is None:
            continue
        if not np.all(g._array == 0):
            raise GradcheckError("backward not multiplied by grad_output")
        if g._array.dtype != x._array.dtype:
            raise GradcheckError("grad is incorrect type")
        if g._array.shape != x._array.shape:
            raise GradcheckError("grad is incorrect size")


def _check_undefined_output_grads(func, outputs: tuple, inputs: tuple) -> None:
    """A backward must cope with undefined gradients for its outputs: all at once, then one
    output at a time. func runs afresh for each case, all before the first is checked.

    The engine has no undefined gradient: zeros stand in for one. That is what a custom
    Function's backward receives for it in PyTorch too (unless it set_materialize_grads(False)),
    and PyTorch's own nodes send nothing on for it, where here they send zeros; either way the
    input gradients must be zero or None.
    """
    wrt = list(_iter_tensors(inputs, True))
    if not wrt:
        raise GradcheckError("no Tensors requiring grad found in input")
    cases = [[o for o in _differentiable_outputs(func(*inputs)) if isinstance(o, Tensor)]]
    if len(cases[0]) > 1:
        for _ in range(len(outputs)):
            cases.append(list(_differentiable_outputs(func(*inputs))))
    for case in cases:
        zeros = [Tensor._wrap(np.zeros_like(o._array)) for o in case]
        try:
            grads = backward.grad(case, wrt, zeros, allow_unused=True)
        except RuntimeError as error:
            warnings.warn(UNDEFINED_GRAD_WARNING, UserWarning, stacklevel=2)
            raise GradcheckError(
                f"Expected backward function to handle undefined output grads. "
                f"{UNDEFINED_GRAD_NOTES}"
            ) from error
        for g in grads:
            if g is not None and not np.all(g._array == 0):
                warnings.warn(UNDEFINED_GRAD_WARNING, UserWarning, stacklevel=2)
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output grads are "
                    f"undefined or zero. {UNDEFINED_GRAD_NOTES}"
                )


# ***** small pieces *****


def _as_tuple(x) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _differentiable_outputs(x) -> tuple:
    return tuple(o for o in _as_tuple(x) if o.requires_grad)


def _is_tensor(x) -> bool:
    return isinstance(x, Tensor)


def _floating(x) -> bool:
    return isinstance(x, Tensor) and x._array.dtype.kind in "fc"


def _iter_tensors(x, only_requiring_grad: bool = False):
    """The tensors in x, however nested in lists and tuples, as PyTorch finds them."""
    if isinstance(x, Tensor):
        if x.requires_grad or not only_requiring_grad:
            yield x
    elif isinstance(x, collections.abc.Iterable) and not isinstance(x, str):
        for element in x:
            yield from _iter_tensors(element, only_requiring_grad)


def _random_like(output: Tensor, noncontiguous: bool) -> Tensor:
    """torch.testing.make_tensor(output.shape, low=-1, high=1, requires_grad=True): uniform
    draws from the default generator; non-contiguous, every other one of twice as many."""
    dt = output._array.dtype if _floating(output) else np.dtype(np.float64)
    shape = tuple(output.shape)
    noncontiguous = noncontiguous and output.numel() > 1
    if noncontiguous:
        shape = (*shape[:-1], 2 * shape[-1])
    values = rng.default_generator.uniform(shape, -1.0, 1.0, dt)
    if noncontiguous:
        values = values[..., 1::2]
    return record.leaf(values, True, "make_tensor")
