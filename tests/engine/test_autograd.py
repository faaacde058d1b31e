"""Autograd itself: hooks, custom Functions, create_graph, inference_mode, saved tensors.

The goldens (tools/goldens/autograd.py) hold the engine to PyTorch's printed behaviour; here are
the properties behind them: second derivatives against finite differences of first derivatives,
the order hooks run in, what a traced backward that runs the program's own code records, and
the full 2000 steps of the tutorial's custom Function.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import engine as torch
from app.render import render
from engine.nn import functional as F
from engine.tracer import trace_snippet
from engine.unsupported import UnsupportedByGradtrace
from tests.engine.goldens import BY_SLUG

EPS = 1e-6
SETTINGS = settings(max_examples=20, deadline=None)
VALUES = st.floats(0.3, 2.5, allow_nan=False, allow_infinity=False)
SHAPES = hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=3)


def leaf(array) -> torch.Tensor:
    return torch.tensor(np.asarray(array, dtype=np.float64), requires_grad=True)


def first_derivative(f, array: np.ndarray) -> np.ndarray:
    """d f(x).sum() / dx by autograd, with no graph kept."""
    x = leaf(array)
    (g,) = torch.autograd.grad(f(x).sum(), x)
    return g.numpy()


# ***** second derivatives, against finite differences of the first *****

FUNCTIONS = {
    "cube": lambda x: x**3,
    "sin": lambda x: x.sin(),
    "cos": lambda x: x.cos(),
    "exp": lambda x: x.exp(),
    "log": lambda x: x.log(),
    "tanh": lambda x: x.tanh(),
    "sigmoid": lambda x: x.sigmoid(),
    "sqrt": lambda x: x.sqrt(),
    "reciprocal": lambda x: x.reciprocal(),
    "product": lambda x: x * x.sin() * 3,
    "division": lambda x: (x + 1) / (x * x + 2),
    "sum-mean": lambda x: (x**2).mean() * x.sum(),
    "chain": lambda x: (x.tanh() * x.exp()).sigmoid(),
    "relu-square": lambda x: (x - 3).relu() ** 2 + (x - 0.1).relu() ** 2,  # both sides, no kink
    # the picks below never meet a tie: x² + 3 > x and sin x < x + 1 for every x, and
    # _apart(x)'s elements differ by about 1 each, so its max is its last and its min its first
    "maximum-minimum": lambda x: (
        torch.maximum(x * x + 3, x) ** 2 + torch.minimum(x.sin(), x + 1) * x
    ),
    "fmax-fmin": lambda x: torch.fmax(x, x * x + 3) ** 2 + torch.fmin(x + 1, x.sin()) * x,
    "max-min": lambda x: _apart(x).max() * x.sin() + _apart(x).min() ** 2 * x,
    "amax-amin": lambda x: (
        _rows(x).amax(0) ** 2 * x.reshape(-1)
        + _rows(x).amin(0, keepdim=True).exp()
        + _apart(x).amax() * x.reshape(-1)
    ),
    "bmm": lambda x: (
        torch.bmm(_batch(x).unsqueeze(1), _batch(x * x).cos().unsqueeze(2)) ** 2
        + (_batch(x).exp().unsqueeze(1) @ _batch(x).unsqueeze(2)).sin()
    ),
    "lerp": lambda x: (
        torch.lerp(x, x.exp(), 0.3) ** 2
        + torch.lerp(x.sin(), x * x, 0.8) * x
        + torch.lerp(x.sin(), x * x, x.cos()) * x
    ),
    "addcmul-addcdiv": lambda x: (
        torch.addcmul(x, x.sin(), x.exp(), value=0.5) ** 2
        + torch.addcdiv(x * x, x.cos(), x + 1, value=-0.7) ** 2
        + torch.addcmul(x.sin(), x, x)
    ),
    # the masks and bounds below hold for every value drawn, so no kink is crossed
    "where": lambda x: torch.where(x > 0, x**3, x) + torch.where(x > 100, x, x.exp()),
    "clamp": lambda x: x.clamp(-5, 5) ** 3 + x.clamp(max=0.0) ** 2 + x.clamp(min=0.1).sin(),
    "abs": lambda x: (x.abs() * x) ** 2,
    "cat-stack": lambda x: torch.cat([x, x**2]).pow(3).sum() + torch.stack([x, x.exp()]).pow(2),
    "views": lambda x: (x.reshape(-1).unsqueeze(1) * x.reshape(-1)).t().pow(2).sum(0).tanh(),
    "softmax": lambda x: x.softmax(-1) * x.log_softmax(0).exp() * (x + 1),
    "mse-loss": lambda x: F.mse_loss(x.sin(), x * 0.5) + F.mse_loss(x, x.cos(), reduction="sum"),
    "cross-entropy": lambda x: F.cross_entropy((x * x).reshape(1, -1), torch.tensor([0])),
    # |x - target| stays under beta / delta for one loss and beyond it for the other
    "smooth-l1-huber": lambda x: (
        F.smooth_l1_loss(x, x.sin() * 0.1, beta=3.0)
        + F.smooth_l1_loss(x * 4, x.cos() - 4, reduction="sum", beta=0.5)
        + F.huber_loss(x, x * x * 0.1, reduction="none", delta=3.0) * x
        + F.huber_loss(x * 4, x.sin() - 4, delta=0.5)
    ),
    # x from 0.3 to 2.5: 2x - 2.5 stays on the curved piece, x + 3 on the straight one
    "hardswish": lambda x: F.hardswish(x * 2 - 2.5) ** 2 + F.hardswish(x + 3) * x,
    # probabilities from 0.4 to 0.7 and targets from 0.26 to 0.79 for every x drawn
    "bce": lambda x: (
        F.binary_cross_entropy(x.sin() * 0.4 + 0.3, x.cos() * 0.3 + 0.5)
        + F.binary_cross_entropy(
            x.sin() * 0.4 + 0.3, x.cos() * 0.3 + 0.5, weight=x * 0 + 0.7, reduction="none"
        )
    ),
    "glu": lambda x: F.glu(torch.cat([x * x, x.sin()]), 0) * F.glu(torch.stack([x.cos(), x]), 0),
    # the input stays negative (x - 3) or positive (x), the slope is a function of x
    "prelu": lambda x: F.prelu(x - 3, (x.sum() * 0.1).reshape(1)) ** 2 + F.prelu(x, x[:1]) * x,
    "bce-with-logits": lambda x: (
        F.binary_cross_entropy_with_logits(x, x.sin() * 0.5)
        + F.binary_cross_entropy_with_logits(
            x * 2 - 2, x.cos(), weight=x * 0 + 0.7, pos_weight=x * 0 + 1.5, reduction="sum"
        )
    ),
}


def _apart(x):
    """x's elements, spread about 1 apart so that no two are equal."""
    return x.reshape(-1) * 0.1 + torch.arange(x.numel(), dtype=torch.float64)


def _rows(x):
    """Two rows: x, and e^x + 2 above it everywhere."""
    return torch.stack([x.reshape(-1), x.reshape(-1).exp() + 2])


def _batch(x):
    """A batch of two rows made from x, for batched matrix products."""
    return torch.stack([x.reshape(-1), x.reshape(-1).sin() + x.reshape(-1)])


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@SETTINGS
@given(data=st.data())
def test_second_derivative_matches_finite_differences(name, data):
    f = FUNCTIONS[name]
    array = data.draw(hnp.arrays(np.float64, data.draw(SHAPES), elements=VALUES))
    x = leaf(array)
    (g,) = torch.autograd.grad(f(x).sum(), x, create_graph=True)
    weights = np.linspace(-1.0, 1.5, g.numel()).reshape(g.shape)
    (h,) = torch.autograd.grad((g * torch.tensor(weights)).sum(), x)
    # the same weighted sum of first derivatives, differentiated numerically
    expected = np.zeros_like(array)
    for index in np.ndindex(array.shape):
        up, down = array.copy(), array.copy()
        up[index] += EPS
        down[index] -= EPS
        expected[index] = (
            (first_derivative(f, up) * weights).sum() - (first_derivative(f, down) * weights).sum()
        ) / (2 * EPS)
    np.testing.assert_allclose(h.numpy(), expected, rtol=1e-4, atol=1e-5)


@SETTINGS
@given(
    a=hnp.arrays(np.float64, (2, 3), elements=VALUES),
    b=hnp.arrays(np.float64, (3, 2), elements=VALUES),
)
def test_mixed_second_derivative_of_a_matrix_product(a, b):
    def grad_a(b_array):
        ta, tb = leaf(a), leaf(b_array)
        (g,) = torch.autograd.grad((ta.mm(tb) ** 2).sum(), ta)
        return g.numpy()

    ta, tb = leaf(a), leaf(b)
    (ga,) = torch.autograd.grad((ta.mm(tb) ** 2).sum(), ta, create_graph=True)
    (h,) = torch.autograd.grad(ga.sum(), tb)
    expected = np.zeros_like(b)
    for index in np.ndindex(b.shape):
        up, down = b.copy(), b.copy()
        up[index] += EPS
        down[index] -= EPS
        expected[index] = (grad_a(up).sum() - grad_a(down).sum()) / (2 * EPS)
    np.testing.assert_allclose(h.numpy(), expected, rtol=1e-4, atol=1e-5)


def test_hessian_is_symmetric_and_matches_the_formula():
    x = np.array([0.5, -1.0, 2.0])
    h = torch.autograd.functional.hessian(lambda t: (t**2).sum() * t.sin().sum(), torch.tensor(x))
    s, q = np.sin(x).sum(), (x**2).sum()
    expected = 2 * np.outer(x, np.cos(x)) + 2 * np.outer(np.cos(x), x)
    expected += np.diag(2 * s - q * np.sin(x))
    np.testing.assert_allclose(h.numpy(), expected, rtol=1e-5)
    assert not h.requires_grad


def test_double_backward_through_an_unsupported_node_says_so():
    x = leaf([1.0, 2.0])
    y = torch.nn.functional.logsigmoid(x).sum()
    with pytest.raises(UnsupportedByGradtrace, match="double backward through LogSigmoidBackward0"):
        torch.autograd.grad(y, x, create_graph=True)
    (g,) = torch.autograd.grad(y, x)  # without create_graph it is an ordinary backward
    assert g.grad_fn is None


def test_create_graph_keeps_the_graph_by_default():
    x = leaf([1.0, 2.0])
    y = (x.exp() * x).sum()
    y.backward(create_graph=True)
    y.backward()  # no "backward through the graph a second time": retain_graph followed it
    assert x.grad.grad_fn is not None


# ***** hooks *****


def test_hooks_run_in_order_and_each_sees_the_last_ones_result():
    seen = []
    x = leaf([1.0])
    y = x * 2
    y.register_hook(lambda g: seen.append(("a", g.item())) or g + 1)
    y.register_hook(lambda g: seen.append(("b", g.item())) or g * 10)
    x.register_hook(lambda g: seen.append(("leaf", g.item())))
    y.sum().backward()
    assert seen == [("a", 1.0), ("b", 2.0), ("leaf", 40.0)]
    assert x.grad.item() == 40.0


def test_a_removed_hook_no_longer_runs_and_the_handle_is_a_context_manager():
    x = leaf([1.0])
    with x.register_hook(lambda g: g * 0):
        pass
    (x * 3).sum().backward()
    assert x.grad.item() == 3.0


def test_a_leafs_hook_outlives_the_graph_it_was_registered_through():
    # the leaf holds its AccumulateGrad weakly, except when the node carries the leaf's hooks
    x = leaf([1.0])
    x.register_hook(lambda g: g * 10)
    (x * 3).sum().backward()
    (x * 3).sum().backward()
    assert x.grad.item() == 60.0


# ***** a leaf and its AccumulateGrad *****


def test_a_leaf_dropped_with_its_graph_is_freed_without_the_collector():
    # PyTorch's leaf holds its AccumulateGrad through a weak pointer, so no cycle keeps a big
    # leaf alive until the collector runs (a loop of fresh leaves would fill the memory limit)
    gc.disable()
    try:
        x = leaf(np.zeros(1000))
        (x * 2).sum().backward()
        gone = weakref.ref(x)
        del x
        assert gone() is None
    finally:
        gc.enable()


def test_a_graph_that_saved_its_result_is_freed_without_the_collector():
    # exp saves its result; the saved value must not hold the result tensor (whose grad_fn is
    # the node): an evaluation loop that never calls backward would keep every graph alive
    w = leaf(np.zeros(1000))
    gc.disable()
    try:
        y = (w * 1.0).exp()
        gone = weakref.ref(y.grad_fn)
        del y
        assert gone() is None
    finally:
        gc.enable()


def test_a_leaf_keeps_one_accumulate_grad_while_a_graph_holds_it():
    x = leaf([1.0])
    y, z = x * 2, x * 3
    first = y.grad_fn.next_functions[0][0]
    assert z.grad_fn.next_functions[0][0] is first
    assert first.variable is x
    del y, z, first
    assert (x * 4).grad_fn.next_functions[0][0].variable is x  # a new one, for the same leaf


def test_a_traced_backward_that_runs_program_code_is_recorded():
    code = (
        "import torch\n"
        "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "y = x * x\n"
        "y.register_hook(lambda g: g * torch.tensor([2.0, 3.0]))\n"
        "y.sum().backward()\n"
        "print(x.grad)\n"
    )
    trace = trace_snippet(code)
    assert trace["outcome"] == {"status": "ok"}
    assert trace["stdout"] == "tensor([ 4., 12.])\n"
    kinds = [e["kind"] for e in trace["events"]]
    assert kinds.index("backward_begin") < kinds.index("accumulate")
    render(trace)  # the player copes with ops inside a backward


# ***** custom Functions *****


def test_a_custom_function_in_a_trace_is_narrated():
    golden = BY_SLUG["autograd-function-node"]
    trace = trace_snippet(golden["source"])
    assert trace["stdout"] == golden["stdout"]
    names = {n["name"] for n in trace["nodes"].values()}
    assert "CubeBackward" in names
    texts = " ".join(s["text"] for s in render(trace)["steps"])
    assert "runs the custom autograd Function Cube" in texts


# ***** inference mode *****


def test_inference_mode_is_a_decorator_too_and_restores_the_modes():
    @torch.inference_mode
    def bare(t):
        return t * 2, torch.is_inference_mode_enabled(), torch.is_grad_enabled()

    out, inference, grad = bare(leaf([1.0]))
    assert (inference, grad) == (True, False)
    assert out.is_inference() and not out.requires_grad
    assert not torch.is_inference_mode_enabled() and torch.is_grad_enabled()
