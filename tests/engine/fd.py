"""The finite-difference check that tests/engine/test_gradients.py runs on every op.

It builds float64 leaves, reduces the op's output to a scalar with fixed random weights, runs
backward and compares each leaf's .grad with central differences. Every grad_fn class it sees in
a checked graph is noted in CHECKED, so tests/engine/test_op_coverage.py can require a check for
every op the engine has.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

import engine as torch
from engine import nn

CHECKED: set[str] = set()  # grad_fn class names some finite-difference check has covered

# CHECKED is whole only once every check of CHECKS_FILE ran and passed in this process
# (tests/engine/conftest.py notes them); a child pytest writes its CHECKED to the file named
# by the REPORT variable (tests/engine/test_op_coverage.py)
CHECKS_FILE = "test_gradients.py"
COVERAGE_TEST = "test_every_op_has_a_finite_difference_check"
REPORT = "GRADTRACE_FD_CHECKED"
COLLECTED: set[str] = set()  # node ids of the checks collected in this process
PASSED: set[str] = set()  # and of those that passed
SOME_LEFT_OUT = False  # some check was deselected (-k, -m)


def every_check_ran() -> bool:
    """Whether each finite-difference check was collected, run and passed in this process."""
    return bool(COLLECTED) and not SOME_LEFT_OUT and PASSED == COLLECTED


EPS, RTOL, ATOL = 1e-6, 1e-4, 1e-6

Leaf = Callable[[np.ndarray, bool], torch.Tensor]


# ***** the check *****


def plain_leaf(array: np.ndarray, requires_grad: bool) -> torch.Tensor:
    return torch.tensor(array, dtype=torch.float64, requires_grad=requires_grad)


def param_leaf(array: np.ndarray, requires_grad: bool) -> torch.Tensor:
    return nn.Parameter(torch.tensor(array, dtype=torch.float64), requires_grad=requires_grad)


def weights(shape: tuple) -> np.ndarray:
    """The same weights for every evaluation of one op: all that matters is the shape."""
    return np.random.default_rng(20240613).uniform(-2.0, 2.0, size=shape)


def weighted_loss(op: Callable, leaves: list) -> torch.Tensor:
    out = op(*leaves)
    assert isinstance(out, torch.Tensor), f"op must return one tensor, got {type(out).__name__}"
    return (out * torch.tensor(weights(tuple(out.shape)), dtype=out.dtype)).sum()


def numeric_gradient(op: Callable, arrays: list[np.ndarray], i: int, leaf: Leaf) -> np.ndarray:
    def loss_at(shifted: np.ndarray) -> float:
        leaves = [leaf(shifted if j == i else a, False) for j, a in enumerate(arrays)]
        return weighted_loss(op, leaves).item()

    grad = np.zeros_like(arrays[i])
    for index in np.ndindex(arrays[i].shape):
        plus, minus = arrays[i].copy(), arrays[i].copy()
        plus[index] += EPS
        minus[index] -= EPS
        grad[index] = (loss_at(plus) - loss_at(minus)) / (2 * EPS)
    return grad


def check_gradients(
    op: Callable, *arrays, leaf: Leaf = plain_leaf, requires: Sequence[bool] | None = None
) -> None:
    """Assert that backward through `op` matches central finite differences for every input.

    `requires` says which inputs are leaves that require grad (all of them by default); the
    others are constants, which must get no .grad.
    """
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    requires = [True] * len(arrays) if requires is None else list(requires)
    leaves = [leaf(a, r) for a, r in zip(arrays, requires, strict=True)]
    loss = weighted_loss(op, leaves)
    assert loss.dtype == torch.float64
    note_checked(loss)
    loss.backward()
    for i, (a, x) in enumerate(zip(arrays, leaves, strict=True)):
        if not requires[i]:
            assert x.grad is None, f"input {i} does not require grad but got one"
            continue
        assert x.grad is not None, f"input {i} got no gradient"
        assert x.grad.dtype == torch.float64, f"input {i}: grad is {x.grad.dtype}"
        assert tuple(x.grad.shape) == a.shape, f"input {i}: grad shape {tuple(x.grad.shape)}"
        expected = numeric_gradient(op, arrays, i, leaf)
        np.testing.assert_allclose(
            x.grad.detach().numpy(), expected, rtol=RTOL, atol=ATOL, err_msg=f"input {i}"
        )


def note_checked(root) -> None:
    """Add every grad_fn class in the graph behind `root` to CHECKED."""
    stack, seen = [root.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        CHECKED.add(type(node).__name__)
        inner = getattr(node, "fn", None)  # CopySlices runs the in-place op's own node
        if inner is not None:
            CHECKED.add(type(inner).__name__)
        stack.extend(child for child, _ in node.next_functions)
