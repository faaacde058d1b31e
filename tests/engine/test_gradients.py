"""Every differentiable op's backward, checked against central finite differences.

Each check builds float64 leaves, reduces the op's output to a scalar with a fixed random weight
(`(op(x) * w).sum()`, so every output element matters), runs backward, and compares each leaf's
.grad with (L(x + eps) - L(x - eps)) / 2eps, where every evaluation rebuilds fresh leaves from the
perturbed numpy arrays. Hypothesis draws the shapes (0-3 dims, sizes 1-4) and the values, kept
away from kinks (relu, abs, clamp, max) so that the finite difference is meaningful there.
A float32 smoke test per op family checks that gradients come back float32 and the right shape.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import engine as torch
from engine import nn
from engine.nn import functional as F
from tests.engine.fd import (
    check_gradients,
    note_checked,
    param_leaf,
    weights,
)

# the example count is the profile's (tests/conftest.py): `--hypothesis-profile=thorough` for more
SETTINGS = settings(deadline=None)


# ***** strategies *****


def floats(low: float, high: float) -> st.SearchStrategy[float]:
    return st.floats(low, high, allow_nan=False, allow_infinity=False, allow_subnormal=False)


ANY = floats(-3, 3)
WIDE = floats(-5, 5)
POSITIVE = floats(0.2, 3)
# magnitudes in [0.2, 3] with either sign: far from the kink at 0
NONZERO = st.tuples(POSITIVE, st.booleans()).map(lambda p: p[0] if p[1] else -p[0])
# hundredths: two different values are at least 0.01 apart, so ties can't appear under eps
GRID = st.integers(-300, 300).map(lambda k: k / 100)
EVEN_GRID = st.integers(-150, 150).map(lambda k: k / 50)
ODD_GRID = st.integers(-150, 149).map(lambda k: (2 * k + 1) / 100)

SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4)
SHAPES_1D_UP = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)


def arrays(shape, elements=ANY, unique: bool = False) -> st.SearchStrategy[np.ndarray]:
    return hnp.arrays(np.float64, shape, elements=elements, unique=unique)


def away_from(*points: float) -> st.SearchStrategy[float]:
    return ANY.filter(lambda v: all(abs(v - p) > 1e-3 for p in points))


@st.composite
def shapes_broadcasting_to(draw, shape: tuple) -> tuple:
    """A shape that broadcasts to `shape` without growing it: a suffix, some sizes made 1."""
    suffix = shape[draw(st.integers(0, len(shape))) :]
    return tuple(n if draw(st.booleans()) else 1 for n in suffix)


# ***** pointwise, one input *****

UNARY = {
    "neg": (lambda x: -x, ANY),
    "neg_method": (lambda x: x.neg(), ANY),
    "pos": (lambda x: +x * 1.5, ANY),
    "exp": (lambda x: x.exp(), ANY),
    "torch.exp": (lambda x: torch.exp(x), ANY),
    "log": (lambda x: x.log(), POSITIVE),
    "sin": (lambda x: x.sin(), WIDE),
    "cos": (lambda x: x.cos(), WIDE),
    "tanh": (lambda x: x.tanh(), WIDE),
    "sigmoid": (lambda x: x.sigmoid(), WIDE),
    "F.sigmoid": (lambda x: F.sigmoid(x), WIDE),
    "relu": (lambda x: x.relu(), NONZERO),
    "F.relu": (lambda x: F.relu(x), NONZERO),
    "nn.ReLU": (lambda x: nn.ReLU()(x), NONZERO),
    "sqrt": (lambda x: x.sqrt(), POSITIVE),
    "abs": (lambda x: x.abs(), NONZERO),
    "builtin_abs": (lambda x: abs(x), NONZERO),
    "clamp_min": (lambda x: x.clamp(min=-0.5), away_from(-0.5)),
    "clamp_max": (lambda x: x.clamp(max=0.7), away_from(0.7)),
    "clamp_both": (lambda x: x.clamp(-0.5, 0.7), away_from(-0.5, 0.7)),
    "clip": (lambda x: x.clip(-1.25, 0.5), away_from(-1.25, 0.5)),
    "clamp_min_method": (lambda x: x.clamp_min(0.25), away_from(0.25)),
    "clamp_max_method": (lambda x: x.clamp_max(-0.25), away_from(-0.25)),
    "reciprocal": (lambda x: x.reciprocal(), NONZERO),
    "rtruediv": (lambda x: 2 / x, NONZERO),
    "rsub": (lambda x: 2 - x, ANY),
    "radd": (lambda x: 2 + x, ANY),
    "rmul": (lambda x: 3 * x, ANY),
    "add_number": (lambda x: x + 0.5, ANY),
    "sub_number": (lambda x: x - 0.5, ANY),
    "mul_number": (lambda x: x * -1.5, ANY),
    "div_number": (lambda x: x / 4, ANY),
    "pow_int": (lambda x: x**3, ANY),
    "pow_square": (lambda x: x**2, ANY),
    "pow_half": (lambda x: x**0.5, POSITIVE),
    "pow_negative": (lambda x: x**-1.5, POSITIVE),
    "pow_zero": (lambda x: x**0, ANY),
    "pow_method": (lambda x: x.pow(2.5), POSITIVE),
    "number_pow": (lambda x: 2**x, ANY),
    "number_pow_fraction": (lambda x: 0.5**x, ANY),
    "number_pow_float": (lambda x: 2.5**x, ANY),
    "self_mul": (lambda x: x * x, ANY),
    "self_add": (lambda x: x + x, ANY),
    "self_div": (lambda x: (x + 4) / (x * x + 1), ANY),
    "clone": (lambda x: x.clone(), ANY),
    "composite": (lambda x: (x.sin() * x.exp() + 1).tanh() - x.sigmoid() * 3, ANY),
}


@pytest.mark.parametrize("name", UNARY)
@SETTINGS
@given(data=st.data())
def test_unary(name, data):
    op, elements = UNARY[name]
    x = data.draw(arrays(SHAPES, elements), label="x")
    check_gradients(op, x)


def test_to_float64_sends_a_float32_grad_back():
    x32 = np.random.default_rng(0).uniform(-2, 2, size=(2, 3)).astype(np.float32)
    x = torch.tensor(x32, requires_grad=True)
    y = x.to(torch.float64)
    assert y.grad_fn.name() == "ToCopyBackward0" and y.dtype == torch.float64
    note_checked(y)  # against the exact derivative below: float32 rounding defeats differences
    w = weights((2, 3))
    (y.exp() * torch.tensor(w, dtype=torch.float64)).sum().backward()
    assert x.grad.dtype == torch.float32 and tuple(x.grad.shape) == (2, 3)
    expected = (w * np.exp(x32.astype(np.float64))).astype(np.float32)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)


@SETTINGS
@given(x=arrays(SHAPES))
def test_to_float64_is_the_identity_for_gradients(x):
    # a float64 leaf through .to(float64) is a no-op; .double() and .to(dtype=) must agree
    check_gradients(lambda t: t.to(torch.float64) * 2, x)
    check_gradients(lambda t: t.double().exp(), x)
    check_gradients(lambda t: t.to(dtype=torch.float64).sin(), x)


@SETTINGS
@given(x=arrays(SHAPES))
def test_float32_round_trip_through_to(x):
    # float64 leaf -> float32 -> float64: the float32 grad is cast back, values match w exactly
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    y = t.to(torch.float32).to(torch.float64)
    w = weights(tuple(y.shape))
    (y * torch.tensor(w, dtype=torch.float64)).sum().backward()
    assert t.grad.dtype == torch.float64
    np.testing.assert_allclose(t.grad.numpy(), w.astype(np.float32), rtol=0, atol=0)


# ***** pointwise, two inputs, with broadcasting *****

BINARY = {
    "add": (lambda a, b: a + b, ANY, ANY),
    "add_alpha": (lambda a, b: a.add(b, alpha=2.5), ANY, ANY),
    "torch.add": (lambda a, b: torch.add(a, b), ANY, ANY),
    "sub": (lambda a, b: a - b, ANY, ANY),
    "sub_alpha": (lambda a, b: a.sub(b, alpha=-0.5), ANY, ANY),
    "mul": (lambda a, b: a * b, ANY, ANY),
    "torch.mul": (lambda a, b: torch.mul(a, b), ANY, ANY),
    "div": (lambda a, b: a / b, ANY, NONZERO),
    "div_method": (lambda a, b: a.div(b), ANY, NONZERO),
    "pow_tensor": (lambda a, b: a**b, floats(0.5, 2.5), ANY),
    "pow_tensor_method": (lambda a, b: a.pow(b), floats(0.5, 2.5), ANY),
    "maximum": (lambda a, b: torch.maximum(a, b), EVEN_GRID, ODD_GRID),
    "minimum": (lambda a, b: torch.minimum(a, b), EVEN_GRID, ODD_GRID),
    "max_of_two": (lambda a, b: a.max(b), EVEN_GRID, ODD_GRID),
    "min_of_two": (lambda a, b: a.min(b), EVEN_GRID, ODD_GRID),
    "where": (lambda a, b: torch.where(a > b, a, b * 2), EVEN_GRID, ODD_GRID),
}

BROADCAST_PAIRS = [
    ((3, 1), (1, 4)),
    ((2, 3), (3,)),
    ((3,), (2, 3)),
    ((), (2, 3)),
    ((2, 3), ()),
    ((4, 1, 3), (2, 1)),
    ((1,), (3, 3)),
    ((2, 1, 4), (3, 1)),
]


@pytest.mark.parametrize("name", BINARY)
@SETTINGS
@given(data=st.data())
def test_binary(name, data):
    op, a_elements, b_elements = BINARY[name]
    shapes = data.draw(
        hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4),
        label="shapes",
    ).input_shapes
    a = data.draw(arrays(shapes[0], a_elements), label="a")
    b = data.draw(arrays(shapes[1], b_elements), label="b")
    check_gradients(op, a, b)
    # and with only one side requiring grad: nodes save (and send back) only what is needed
    check_gradients(op, a, b, requires=(True, False))
    check_gradients(op, a, b, requires=(False, True))


@pytest.mark.parametrize("shapes", BROADCAST_PAIRS, ids=str)
@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "pow_tensor", "maximum", "where"])
def test_binary_broadcasting_is_undone(name, shapes):
    op, _, _ = BINARY[name]
    rng = np.random.default_rng(7)
    a = rng.uniform(0.5, 2.5, size=shapes[0])
    b = rng.uniform(0.5, 2.5, size=shapes[1]) * rng.choice([-1, 1], size=shapes[1])
    if name in ("maximum", "where"):
        a, b = np.round(a, 1), np.round(b, 1) + 0.05  # never equal
    check_gradients(op, a, b)


@SETTINGS
@given(data=st.data())
def test_broadcast_with_one_operand_not_requiring_grad(data):
    shapes = data.draw(
        hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4)
    ).input_shapes
    b = torch.tensor(data.draw(arrays(shapes[1], NONZERO)), dtype=torch.float64)
    check_gradients(lambda a: a * b + a / b - b, data.draw(arrays(shapes[0])))


# remainder is piecewise linear in both inputs: keep a / b away from whole numbers, where it jumps
QUOTIENT = st.tuples(st.integers(-3, 3), floats(0.05, 0.95)).map(lambda p: p[0] + p[1])


@SETTINGS
@given(data=st.data())
def test_remainder(data):
    shape = data.draw(SHAPES, label="shape")
    b_shape = data.draw(shapes_broadcasting_to(shape), label="b_shape")
    b = data.draw(arrays(b_shape, NONZERO), label="b")
    a = data.draw(arrays(shape, QUOTIENT), label="a / b") * b
    check_gradients(lambda x, y: x % y, a, b)
    check_gradients(lambda x, y: x.remainder(y), a, b, requires=(False, True))
    number = data.draw(st.sampled_from([1.5, -0.75, 2]), label="number")
    a = data.draw(arrays(shape, QUOTIENT), label="a / number") * number
    check_gradients(lambda x: x % number, a)


# ***** reductions *****


def dims(shape) -> st.SearchStrategy[int]:
    return st.integers(-len(shape), len(shape) - 1)


@SETTINGS
@given(x=arrays(SHAPES))
def test_sum_whole(x):
    check_gradients(lambda t: t.sum(), x)
    check_gradients(lambda t: torch.sum(t) * t, x)


@SETTINGS
@given(x=arrays(SHAPES))
def test_mean_whole(x):
    check_gradients(lambda t: t.mean(), x)
    check_gradients(lambda t: torch.mean(t) * t, x)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("reduce", ["sum", "mean"])
@SETTINGS
@given(data=st.data())
def test_sum_and_mean_along_a_dim(reduce, keepdim, data):
    x = data.draw(arrays(SHAPES_1D_UP), label="x")
    dim = data.draw(dims(x.shape), label="dim")
    check_gradients(lambda t: getattr(t, reduce)(dim, keepdim=keepdim), x)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("reduce", ["sum", "mean"])
@SETTINGS
@given(data=st.data())
def test_sum_and_mean_along_several_dims(reduce, keepdim, data):
    x = data.draw(arrays(SHAPES_1D_UP), label="x")
    picked = data.draw(st.sets(dims(x.shape), min_size=1), label="dims")
    picked = tuple({d % x.ndim: d for d in picked}.values())  # no dim twice
    check_gradients(lambda t: getattr(t, reduce)(picked, keepdim=keepdim), x)


@pytest.mark.parametrize("reduce", ["max", "min"])
@SETTINGS
@given(x=arrays(SHAPES, GRID, unique=True))
def test_max_min_whole(reduce, x):
    check_gradients(lambda t: getattr(t, reduce)(), x)
    check_gradients(lambda t: getattr(torch, reduce)(t) - t, x)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("reduce", ["max", "min"])
@SETTINGS
@given(data=st.data())
def test_max_min_along_a_dim(reduce, keepdim, data):
    x = data.draw(arrays(SHAPES_1D_UP, GRID, unique=True), label="x")
    dim = data.draw(dims(x.shape), label="dim")
    check_gradients(lambda t: getattr(t, reduce)(dim, keepdim=keepdim).values, x)
    check_gradients(lambda t: getattr(t, reduce)(dim=dim, keepdim=keepdim)[0], x)
    check_gradients(lambda t: getattr(torch, reduce)(t, dim, keepdim).values, x)


def test_max_whole_shares_the_grad_among_ties():
    x = torch.tensor([1.0, 3.0, 3.0, 2.0], dtype=torch.float64, requires_grad=True)
    x.max().backward()
    assert x.grad.tolist() == [0.0, 0.5, 0.5, 0.0]


# ***** matrix products *****

MATMUL_SHAPES = {
    "dot": ((4,), (4,)),
    "mv": ((3, 4), (4,)),
    "vecmat": ((4,), (4, 2)),
    "mm": ((3, 4), (4, 2)),
}


@pytest.mark.parametrize("case", MATMUL_SHAPES)
@SETTINGS
@given(data=st.data())
def test_matmul(case, data):
    (a_shape, b_shape) = MATMUL_SHAPES[case]
    n, k, m = (data.draw(st.integers(1, 4), label=s) for s in "nkm")
    size = {3: n, 4: k, 2: m}
    a = data.draw(arrays(tuple(size[s] for s in a_shape)), label="a")
    b = data.draw(arrays(tuple(size[s] for s in b_shape)), label="b")
    check_gradients(lambda x, y: x @ y, a, b)
    check_gradients(lambda x, y: x @ y, a, b, requires=(True, False))
    check_gradients(lambda x, y: x @ y, a, b, requires=(False, True))
    check_gradients(lambda x, y: torch.matmul(x, y), a, b)
    named = {"dot": "dot", "mv": "mv", "mm": "mm"}.get(case)
    if named is not None:
        check_gradients(lambda x, y: getattr(x, named)(y), a, b)
        check_gradients(lambda x, y: getattr(torch, named)(x, y), a, b)
    if case == "dot":  # vdot: dot with the first vector conjugated, a no-op for real numbers
        check_gradients(lambda x, y: torch.vdot(x, y), a, b)
        check_gradients(lambda x, y: x.vdot(y), a, b, requires=(False, True))


# ***** shapes and views *****


@SETTINGS
@given(x=arrays(hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=4)))
def test_t(x):
    check_gradients(lambda a: a.t(), x)
    check_gradients(lambda a: a.t() * a.t().sum(), x)


@SETTINGS
@given(x=arrays(SHAPES))
def test_T(x):  # noqa: N802 - torch's name
    check_gradients(lambda a: a.T, x)


@SETTINGS
@given(data=st.data())
def test_transpose(data):
    x = data.draw(arrays(SHAPES_1D_UP), label="x")
    d0, d1 = data.draw(dims(x.shape), label="dim0"), data.draw(dims(x.shape), label="dim1")
    check_gradients(lambda a: a.transpose(d0, d1), x)


@SETTINGS
@given(data=st.data())
def test_permute(data):
    x = data.draw(arrays(SHAPES), label="x")
    order = data.draw(st.permutations(range(x.ndim)), label="dims")
    check_gradients(lambda a: a.permute(*order), x)
    check_gradients(lambda a: a.permute(order), x)


@SETTINGS
@given(data=st.data())
def test_reshape_and_view(data):
    x = data.draw(arrays(SHAPES), label="x")
    shape = tuple(data.draw(st.permutations(x.shape), label="shape"))
    check_gradients(lambda a: a.reshape(shape), x)
    check_gradients(lambda a: a.reshape(-1), x)
    check_gradients(lambda a: a.view(shape), x)
    check_gradients(lambda a: a.view(*shape, 1), x)
    check_gradients(lambda a: a.view(-1).exp(), x)


@SETTINGS
@given(x=arrays(hnp.array_shapes(min_dims=2, max_dims=3, min_side=2, max_side=4)))
def test_reshape_of_a_non_contiguous_tensor_copies(x):
    # transpose makes the layout non-contiguous: reshape goes through clone + _unsafe_view
    check_gradients(lambda a: a.transpose(0, 1).reshape(-1), x)
    check_gradients(lambda a: a.T.flatten() * 2, x)


@SETTINGS
@given(data=st.data())
def test_flatten(data):
    x = data.draw(arrays(SHAPES), label="x")
    check_gradients(lambda a: a.flatten(), x)
    if x.ndim:
        start = data.draw(st.integers(0, x.ndim - 1), label="start")
        end = data.draw(st.integers(start, x.ndim - 1), label="end")
        check_gradients(lambda a: a.flatten(start, end), x)
        check_gradients(lambda a: torch.flatten(a, start_dim=start - x.ndim), x)


SHAPES_WITH_ONES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=2)


@SETTINGS
@given(data=st.data())
def test_squeeze(data):
    x = data.draw(arrays(SHAPES_WITH_ONES), label="x")
    check_gradients(lambda a: a.squeeze(), x)
    if x.ndim:
        dim = data.draw(dims(x.shape), label="dim")
        check_gradients(lambda a: a.squeeze(dim), x)
        several = data.draw(st.sets(st.integers(0, x.ndim - 1), min_size=1), label="dims")
        check_gradients(lambda a: a.squeeze(tuple(sorted(several))), x)


@SETTINGS
@given(data=st.data())
def test_unsqueeze(data):
    x = data.draw(arrays(SHAPES), label="x")
    dim = data.draw(st.integers(-x.ndim - 1, x.ndim), label="dim")
    check_gradients(lambda a: a.unsqueeze(dim), x)
    check_gradients(lambda a: torch.unsqueeze(a, dim).squeeze(dim), x)


@SETTINGS
@given(data=st.data())
def test_expand(data):
    x = data.draw(arrays(SHAPES_WITH_ONES), label="x")
    lead = data.draw(st.lists(st.integers(1, 3), max_size=2), label="leading")
    sizes = [
        data.draw(st.integers(1, 3)) if n == 1 else data.draw(st.sampled_from([n, -1]))
        for n in x.shape
    ]
    target = tuple(lead) + tuple(sizes)
    check_gradients(lambda a: a.expand(*target), x)
    check_gradients(lambda a: a.expand(target) * 1.5, x)
    shape = tuple(lead) + tuple(x.shape)
    other = torch.zeros(shape, dtype=torch.float64)
    check_gradients(lambda a: a.expand_as(other), x)


# ***** indexing *****


@SETTINGS
@given(data=st.data())
def test_index_int(data):
    x = data.draw(arrays(SHAPES_1D_UP), label="x")
    i = data.draw(st.integers(-x.shape[0], x.shape[0] - 1), label="i")
    check_gradients(lambda a: a[i], x)
    if x.ndim >= 2:
        j = data.draw(st.integers(0, x.shape[1] - 1), label="j")
        check_gradients(lambda a: a[i, j], x)
        check_gradients(lambda a: a[:, j], x)


@SETTINGS
@given(data=st.data())
def test_index_slice_with_step(data):
    x = data.draw(arrays(SHAPES_1D_UP), label="x")
    n = x.shape[0]
    start = data.draw(st.none() | st.integers(-n - 1, n + 1), label="start")
    stop = data.draw(st.none() | st.integers(-n - 1, n + 1), label="stop")
    step = data.draw(st.none() | st.integers(1, 3), label="step")
    check_gradients(lambda a: a[start:stop:step], x)
    if x.ndim >= 2:
        check_gradients(lambda a: a[:, ::2], x)
        check_gradients(lambda a: a[start:stop:step, 1:], x)


@SETTINGS
@given(x=arrays(SHAPES))
def test_index_none_and_ellipsis(x):
    check_gradients(lambda a: a[None], x)
    check_gradients(lambda a: a[...], x)
    check_gradients(lambda a: a[..., None], x)
    if x.ndim:
        check_gradients(lambda a: a[..., 0], x)
        check_gradients(lambda a: a[None, ..., -1], x)
        check_gradients(lambda a: a[:, None], x)
        check_gradients(lambda a: a[:], x)
        check_gradients(lambda a: a[:, ...] * a[..., :], x)


@SETTINGS
@given(data=st.data())
def test_index_list_with_repeats(data):
    x = data.draw(arrays(SHAPES_1D_UP), label="x")
    n = x.shape[0]
    rows = data.draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=6), label="rows")
    check_gradients(lambda a: a[rows], x)
    check_gradients(lambda a: a[torch.tensor(rows)], x)
    if x.ndim >= 2:
        cols = data.draw(
            st.lists(st.integers(0, x.shape[1] - 1), min_size=len(rows), max_size=len(rows))
        )
        check_gradients(lambda a: a[rows, cols], x)
        check_gradients(lambda a: a[1:, cols], x)
        last = [c % x.shape[-1] for c in cols]
        check_gradients(lambda a: a[..., last], x)
        check_gradients(lambda a: a[None, rows], x)


@SETTINGS
@given(data=st.data())
def test_index_with_range_idioms(data):
    """`logprobs[range(n), y]` and its writes (`x[range(n), y] -= v`): repeated picks add up."""
    x = data.draw(arrays(hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=4)))
    n = x.shape[0]
    y = data.draw(st.lists(st.integers(0, x.shape[1] - 1), min_size=n, max_size=n), label="y")
    check_gradients(lambda a: a[range(n), y], x)
    check_gradients(lambda a: a[range(n), torch.tensor(y)], x)
    check_gradients(lambda a: a.log_softmax(dim=1)[range(n), y].mean(), x)
    rows = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=5), label="rows")
    check_gradients(lambda a: a[rows, [0] * len(rows)], x)  # repeats of one element add up
    value = data.draw(arrays(x[range(n), y].shape), label="value")

    def written(a, v):
        b = a * 2
        b[range(n), y] -= v * 3
        return b

    check_gradients(written, x, value)


@SETTINGS
@given(data=st.data())
def test_index_bool_mask(data):
    x = data.draw(arrays(SHAPES_1D_UP, NONZERO), label="x")  # a > 0 must not flip under eps
    mask = data.draw(hnp.arrays(np.bool_, x.shape), label="mask")
    check_gradients(lambda a: a[torch.tensor(mask)], x)
    check_gradients(lambda a: a[a > 0], x)
    rows = data.draw(hnp.arrays(np.bool_, x.shape[:1]), label="rows")
    check_gradients(lambda a: a[torch.tensor(rows)], x)


# ***** shapes, indexing and batched matmul (more): pieces, gathers, masks, bmm, CopySlices *****


def _pieces_rejoined(pieces, dim: int):
    """Every piece weighted differently, then joined: each piece's gradient is checked."""
    return torch.cat([p * (i + 1) for i, p in enumerate(pieces)], dim)


@SETTINGS
@given(data=st.data())
def test_split_chunk_tensor_split_narrow(data):
    x = data.draw(arrays(SHAPES_1D_UP), label="x")
    dim = data.draw(st.integers(0, x.ndim - 1), label="dim")
    size = x.shape[dim]
    step = data.draw(st.integers(1, size), label="step")
    cut = data.draw(st.integers(0, size), label="cut")
    check_gradients(lambda a: _pieces_rejoined(a.split(step, dim), dim), x)
    check_gradients(lambda a: _pieces_rejoined(a.split([cut, size - cut], dim), dim), x)
    check_gradients(lambda a: _pieces_rejoined(a.chunk(step, dim), dim), x)
    check_gradients(lambda a: _pieces_rejoined(a.tensor_split(step, dim), dim), x)
    check_gradients(lambda a: a.chunk(2, dim)[0] * 3, x)  # the unused pieces send zeros
    check_gradients(lambda a: a.narrow(dim, min(cut, size - 1), size - min(cut, size - 1)), x)


@SETTINGS
@given(data=st.data())
def test_reorder_and_reshape_views(data):
    x = data.draw(arrays(hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=4)))
    check_gradients(lambda a: a.movedim(0, -1), x)
    check_gradients(lambda a: a.swapaxes(0, 1), x)
    check_gradients(lambda a: a.unflatten(-1, (1, x.shape[-1])), x)
    check_gradients(lambda a: a[:, : max(x.shape[1] - 1, 1)].reshape(-1), x)  # an alias or a copy
    check_gradients(lambda a: a.flip(0), x)
    check_gradients(lambda a: a.flip(-1, 0), x)
    check_gradients(lambda a: a.roll(1, 0), x)
    check_gradients(lambda a: a.roll(-2), x)
    check_gradients(lambda a: a.roll((1, 2), (0, 1)), x)
    check_gradients(lambda a: a.repeat(2, *([1] * (x.ndim - 1)), 3), x)
    diagonal = data.draw(st.integers(-2, 2), label="diagonal")
    check_gradients(lambda a: a.tril(diagonal), x)
    check_gradients(lambda a: a.triu(diagonal), x)


@SETTINGS
@given(data=st.data())
def test_hstack_vstack_outer(data):
    n, m = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    a, b = data.draw(arrays((n,)), label="a"), data.draw(arrays((m,)), label="b")
    check_gradients(lambda x, y: torch.hstack([x, y * 2]), a, b)
    check_gradients(lambda x, y: torch.vstack([x, x * y.sum()]), a, b)
    check_gradients(lambda x, y: torch.outer(x, y), a, b)
    check_gradients(lambda x, y: x.outer(y), a, b, requires=(False, True))


@st.composite
def index_along(draw, shape: tuple, dim: int, sizes: tuple | None = None):
    """An index tensor for gather/scatter: no bigger than `shape`, values < shape[dim]."""
    sizes = sizes or tuple(draw(st.integers(1, n)) for n in shape)
    return draw(hnp.arrays(np.int64, sizes, elements=st.integers(0, shape[dim] - 1)))


@SETTINGS
@given(data=st.data())
def test_gather_and_index_select(data):
    x = data.draw(arrays(SHAPES_1D_UP), label="x")
    dim = data.draw(st.integers(0, x.ndim - 1), label="dim")
    index = data.draw(index_along(x.shape, dim), label="index")
    check_gradients(lambda a: a.gather(dim, torch.tensor(index)), x)  # repeats add up
    picks = data.draw(st.lists(st.integers(0, x.shape[dim] - 1), min_size=1, max_size=5))
    check_gradients(lambda a: a.index_select(dim, torch.tensor(picks)), x)
    check_gradients(lambda a: torch.index_select(a, dim, torch.tensor(picks)), x)


@SETTINGS
@given(data=st.data())
def test_scatter_and_scatter_add(data):
    x = data.draw(arrays(SHAPES_1D_UP), label="x")
    dim = data.draw(st.integers(0, x.ndim - 1), label="dim")
    # scatter needs distinct targets along dim, or the value that wins is undefined
    positions = data.draw(st.permutations(range(x.shape[dim])), label="positions")
    count = data.draw(st.integers(1, x.shape[dim]), label="count")
    shape = tuple(count if d == dim else x.shape[d] for d in range(x.ndim))
    index = np.broadcast_to(
        np.asarray(positions[:count]).reshape([-1 if d == dim else 1 for d in range(x.ndim)]),
        shape,
    ).copy()
    src = data.draw(arrays(shape), label="src")
    check_gradients(lambda a, s: a.scatter(dim, torch.tensor(index), s), x, src)
    check_gradients(lambda a: a.scatter(dim, torch.tensor(index), 2.5), x)
    repeats = data.draw(index_along(x.shape, dim, shape), label="repeats")
    check_gradients(lambda a, s: a.scatter_add(dim, torch.tensor(repeats), s), x, src)
    check_gradients(lambda a, s: (a * 1).scatter_add_(dim, torch.tensor(repeats), s), x, src)
    check_gradients(lambda a, s: (a * 1).scatter_(dim, torch.tensor(index), s * 2), x, src)


@SETTINGS
@given(data=st.data())
def test_masked_fill_and_masked_select(data):
    x = data.draw(arrays(SHAPES_1D_UP), label="x")
    mask = torch.tensor(data.draw(hnp.arrays(np.bool_, x.shape[1:]), label="mask"))
    check_gradients(lambda a: a.masked_fill(mask, -1.0), x)
    check_gradients(lambda a, v: a.masked_fill(mask, v), x, np.array(0.5))
    check_gradients(lambda a, v: (a * 1).masked_fill_(mask, v * 2), x, np.array(0.5))
    check_gradients(lambda a: torch.cat([a.masked_select(mask), a.sum().reshape(1)]), x)


BATCHED_MATMUL_SHAPES = {
    "batch@matrix": ((2, 3, 4), (4, 2)),
    "batch@vector": ((2, 3, 4), (4,)),
    "matrix@batch": ((3, 4), (2, 4, 2)),
    "vector@batch": ((4,), (2, 4, 2)),
    "batch@batch": ((2, 3, 4), (2, 4, 2)),
    "broadcast batches": ((2, 1, 3, 4), (3, 4, 2)),
    "lone size-1 batch": ((1, 3, 4), (2, 4, 2)),
    "4-d@matrix": ((2, 2, 3, 4), (4, 2)),
}


@pytest.mark.parametrize("case", BATCHED_MATMUL_SHAPES)
@SETTINGS
@given(data=st.data())
def test_batched_matmul(case, data):
    a_shape, b_shape = BATCHED_MATMUL_SHAPES[case]
    a, b = data.draw(arrays(a_shape), label="a"), data.draw(arrays(b_shape), label="b")
    check_gradients(lambda x, y: x @ y, a, b)
    check_gradients(lambda x, y: torch.matmul(x, y), a, b, requires=(True, False))
    check_gradients(lambda x, y: x @ y, a, b, requires=(False, True))
    if len(a_shape) == len(b_shape) == 3 and a_shape[0] == b_shape[0]:
        check_gradients(lambda x, y: torch.bmm(x, y), a, b)
        check_gradients(lambda x, y: x.bmm(y), a, b, requires=(False, True))


EINSUM_CASES = {
    "ij,jk->ik": ((2, 3), (3, 4)),
    "bij,bjk->bik": ((2, 2, 3), (2, 3, 4)),
    "i,i->": ((3,), (3,)),
    "ij,j->i": ((2, 3), (3,)),
    "i,j->ij": ((2,), (3,)),
    "ij,ij->i": ((2, 3), (2, 3)),
    "ij,jk": ((2, 3), (3, 1)),
    "ij,jk->ki": ((2, 3), (3, 4)),
    "...ij,...jk->...ik": ((2, 2, 3), (2, 3, 4)),
    "...i,...i->...": ((2, 1, 3), (1, 2, 3)),
    "...ij,jk->ik": ((2, 2, 3), (3, 2)),
}


@pytest.mark.parametrize("equation", EINSUM_CASES)
@SETTINGS
@given(data=st.data())
def test_einsum(equation, data):
    a_shape, b_shape = EINSUM_CASES[equation]
    a, b = data.draw(arrays(a_shape), label="a"), data.draw(arrays(b_shape), label="b")
    check_gradients(lambda x, y: torch.einsum(equation, x, y), a, b)
    check_gradients(lambda x, y: torch.einsum(equation, [x, y]), a, b, requires=(False, True))


@SETTINGS
@given(data=st.data())
def test_einsum_three_operands(data):
    a = data.draw(arrays((2, 3)), label="a")
    b = data.draw(arrays((3, 4)), label="b")
    c = data.draw(arrays((4, 2)), label="c")
    check_gradients(lambda x, y, z: torch.einsum("ij,jk,kl->il", x, y, z), a, b, c)
    check_gradients(lambda x, y, z: torch.einsum("ab,bc,ca->", x, y, z).reshape(1), a, b, c)


@SETTINGS
@given(data=st.data())
def test_diagonal(data):
    x = data.draw(arrays(hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=4)))
    offset = data.draw(st.integers(-2, 2), label="offset")
    check_gradients(lambda a: a.diagonal(offset), x)
    check_gradients(lambda a: torch.diagonal(a, offset, -1, 0), x)
    n = min(x.shape[:2])
    square = x[:n, :n]
    check_gradients(lambda a: torch.einsum("ii...->i...", a), square)
    check_gradients(lambda a: _view_changed_diagonal(a * 1), x)


def _view_changed_diagonal(y):
    y.diagonal().mul_(3)
    return y


@SETTINGS
@given(x=arrays(hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=4)))
def test_einsum_one_operand(x):
    check_gradients(lambda a: torch.einsum("ij->ji", a), x)
    check_gradients(lambda a: torch.einsum("ij->j", a), x)
    check_gradients(lambda a: torch.einsum("ij->", a).reshape(1), x)


def _written(y, key, value):
    y[key] = value
    return y


def _view_changed(y, method: str, *args):
    """Change a row of y in place through a view of it; y (the base) is what comes out."""
    getattr(y[0], method)(*args)
    return y


@SETTINGS
@given(data=st.data())
def test_in_place_writes_into_views(data):
    x = data.draw(arrays(hnp.array_shapes(min_dims=2, max_dims=3, min_side=2, max_side=4)))
    row = data.draw(arrays(x.shape[1:]), label="row")
    check_gradients(lambda a, r: _written(a * 2, 0, r), x, row)
    check_gradients(lambda a, r: _written(a * 2, (slice(None), 1), r[0]), x, row)
    check_gradients(lambda a, r: _written(a * 2, 1, r.sum()), x, row)  # a 0-dim value fills
    check_gradients(lambda a: _written(a * 2, 0, 5.0), x)
    check_gradients(lambda a, r: _written(a * 1, [1, 0], r), x, row)  # index_put_
    check_gradients(lambda a, r: _written(a * 1, (0, [1, 0]), r[:2]), x, row)  # on a view
    mask = torch.tensor(x > 0)  # fixed, so that a nudge of x cannot move it
    check_gradients(lambda a, r: _written(a * 1, mask, r.sum()), x, row)
    check_gradients(lambda a, r: _view_changed(a * 1, "mul_", r), x, row)
    check_gradients(lambda a, r: _view_changed(a * 3, "add_", r), x, row)
    check_gradients(lambda a: _view_changed(a.sin(), "exp_"), x)  # saves its result


def _iadd_slice(y, r):
    y[:, 1:] += r
    return y


def _view_used_after(y, r):
    v = y.view(-1)[1:]
    v.mul_(r.sum())
    return v * y.sum()  # the view reads the new base; the base is read too


@SETTINGS
@given(data=st.data())
def test_in_place_writes_into_views_then_used(data):
    x = data.draw(arrays(hnp.array_shapes(min_dims=2, max_dims=2, min_side=2, max_side=4)))
    r = data.draw(arrays(x.shape[1:]), label="r")
    check_gradients(lambda a, b: _iadd_slice(a * 1, b[1:]), x, r)
    check_gradients(lambda a, b: _view_used_after(a * 1, b), x, r)
    check_gradients(lambda a, b: _view_used_after(a.t().contiguous(), b[:1]), x, r)


# ***** several outputs or several inputs *****


@SETTINGS
@given(data=st.data())
def test_unbind_and_iteration(data):
    x = data.draw(arrays(SHAPES_1D_UP), label="x")
    dim = data.draw(dims(x.shape), label="dim")
    check_gradients(lambda a: torch.stack([p * (i + 1) for i, p in enumerate(a)]), x)
    check_gradients(lambda a: torch.stack([p.exp() * i for i, p in enumerate(a.unbind(dim))]), x)
    check_gradients(lambda a: a.unbind(dim)[-1], x)  # the other outputs get zeros
    check_gradients(lambda a: torch.unbind(a)[0] * 2, x)


@SETTINGS
@given(data=st.data())
def test_stack(data):
    shape = data.draw(SHAPES, label="shape")
    count = data.draw(st.integers(1, 3), label="count")
    parts = [data.draw(arrays(shape), label=f"x{i}") for i in range(count)]
    dim = data.draw(st.integers(-len(shape) - 1, len(shape)), label="dim")
    check_gradients(lambda *ts: torch.stack(ts, dim), *parts)
    check_gradients(
        lambda *ts: torch.stack([t * (i + 1) for i, t in enumerate(ts)], dim=dim), *parts
    )


@SETTINGS
@given(data=st.data())
def test_cat(data):
    shape = data.draw(SHAPES_1D_UP, label="shape")
    dim = data.draw(dims(shape), label="dim")
    count = data.draw(st.integers(1, 3), label="count")
    parts = []
    for i in range(count):
        size = list(shape)
        size[dim] = data.draw(st.integers(1, 3), label=f"size{i}")
        parts.append(data.draw(arrays(tuple(size)), label=f"x{i}"))
    check_gradients(lambda *ts: torch.cat(ts, dim), *parts)
    check_gradients(lambda *ts: torch.cat([t.exp() for t in ts], dim=dim), *parts)


@SETTINGS
@given(data=st.data())
def test_where(data):
    shapes = data.draw(
        hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, max_side=4),
        label="shapes",
    ).input_shapes
    condition = torch.tensor(data.draw(hnp.arrays(np.bool_, shapes[0]), label="condition"))
    a = data.draw(arrays(shapes[1]), label="a")
    b = data.draw(arrays(shapes[2]), label="b")
    check_gradients(lambda x, y: torch.where(condition, x, y), a, b)
    check_gradients(lambda x: torch.where(condition, x, 0.0), a)
    check_gradients(lambda y: torch.where(condition, 1.5, y), b)


# ***** softmax and losses *****


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@SETTINGS
@given(data=st.data())
def test_softmax_and_log_softmax(name, data):
    x = data.draw(arrays(SHAPES, WIDE), label="x")
    dim = data.draw(st.integers(-max(x.ndim, 1), max(x.ndim, 1) - 1), label="dim")
    check_gradients(lambda a: getattr(a, name)(dim), x)
    check_gradients(lambda a: getattr(F, name)(a, dim=dim), x)
    check_gradients(lambda a: getattr(torch, name)(a, dim), x)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@SETTINGS
@given(data=st.data())
def test_mse_loss(reduction, data):
    shape = data.draw(SHAPES, label="shape")
    x, y = data.draw(arrays(shape), label="input"), data.draw(arrays(shape), label="target")
    check_gradients(lambda a, b: F.mse_loss(a, b, reduction=reduction), x, y)
    target = torch.tensor(y, dtype=torch.float64)
    check_gradients(lambda a: nn.MSELoss(reduction=reduction)(a, target), x)


@pytest.mark.filterwarnings("ignore:Using a target size")
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@SETTINGS
@given(data=st.data())
def test_mse_loss_with_a_broadcast_target(reduction, data):
    shapes = data.draw(
        hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4),
        label="shapes",
    ).input_shapes
    x, y = data.draw(arrays(shapes[0]), label="input"), data.draw(arrays(shapes[1]))
    check_gradients(lambda a, b: F.mse_loss(a, b, reduction=reduction), x, y)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@SETTINGS
@given(data=st.data())
def test_cross_entropy(reduction, data):
    batch = data.draw(st.integers(1, 4), label="batch")
    classes = data.draw(st.integers(1, 4), label="classes")
    logits = data.draw(arrays((batch, classes), WIDE), label="logits")
    labels = data.draw(st.lists(st.integers(0, classes - 1), min_size=batch, max_size=batch))
    target = torch.tensor(labels, dtype=torch.int64)
    check_gradients(lambda a: F.cross_entropy(a, target, reduction=reduction), logits)
    check_gradients(lambda a: nn.CrossEntropyLoss(reduction=reduction)(a, target), logits)
    check_gradients(
        lambda a: F.nll_loss(F.log_softmax(a, dim=1), target, reduction=reduction), logits
    )
    # one unbatched sample: (C,) logits and a 0-dim target
    single = torch.tensor(labels[0], dtype=torch.int64)
    check_gradients(lambda a: F.cross_entropy(a, single, reduction=reduction), logits[0])


@pytest.mark.parametrize("bias", [True, False])
@SETTINGS
@given(data=st.data())
def test_linear_on_a_sequence(bias, data):
    """(batch, seq, features) as after Embedding or LSTM: flattened rows through addmm when
    contiguous, matmul when strided (a transposed sequence), viewed back either way."""
    n_in, n_out = data.draw(st.integers(1, 4), label="in"), data.draw(st.integers(1, 4))
    lead = data.draw(st.lists(st.integers(1, 3), min_size=2, max_size=3), label="lead")
    x = data.draw(arrays((*lead, n_in)), label="input")
    weight = data.draw(arrays((n_out, n_in)), label="weight")
    bias_values = data.draw(arrays((n_out,)), label="bias")
    params = (x, weight, bias_values) if bias else (x, weight)
    check_gradients(lambda a, w, v=None: F.linear(a, w, v), *params)
    check_gradients(lambda a, w, v=None: F.linear(a.transpose(0, 1), w, v), *params)


@pytest.mark.parametrize("batched", [False, True])
@pytest.mark.parametrize("bias", [True, False])
@SETTINGS
@given(data=st.data())
def test_linear(batched, bias, data):
    n_in, n_out = data.draw(st.integers(1, 4), label="in"), data.draw(st.integers(1, 4))
    shape = (data.draw(st.integers(1, 4), label="batch"), n_in) if batched else (n_in,)
    x = data.draw(arrays(shape), label="input")
    weight = data.draw(arrays((n_out, n_in)), label="weight")
    bias_values = data.draw(arrays((n_out,)), label="bias")

    def layer(inp, w, b=None):
        module = nn.Linear(n_in, n_out, bias=bias)
        module.weight = w
        if bias:
            module.bias = b
        return module(inp)

    params = (x, weight, bias_values) if bias else (x, weight)
    check_gradients(layer, *params, leaf=param_leaf)
    # the usual case: a data batch that doesn't require grad, and frozen weights
    check_gradients(layer, *params, leaf=param_leaf, requires=(False, *[True] * len(params[1:])))
    check_gradients(layer, *params, leaf=param_leaf, requires=(True, *[False] * len(params[1:])))


# ***** in-place ops on a non-leaf *****


def _in_place(method: str, *args, **kwargs) -> Callable:
    def op(a, b=None):
        y = a * 1  # a non-leaf copy to write into
        other = () if b is None else (b,)
        getattr(y, method)(*other, *args, **kwargs)
        return y

    return op


IN_PLACE_WITH_TENSOR = {
    "add_": (_in_place("add_"), ANY),
    "add_alpha": (_in_place("add_", alpha=-2), ANY),
    "sub_": (_in_place("sub_"), ANY),
    "mul_": (_in_place("mul_"), ANY),
    "div_": (_in_place("div_"), NONZERO),
    "copy_": (_in_place("copy_"), ANY),
}

IN_PLACE_ALONE = {
    "add_number": (_in_place("add_", 2.5), ANY),
    "mul_number": (_in_place("mul_", -3), ANY),
    "div_number": (_in_place("div_", 4), ANY),
    "neg_": (_in_place("neg_"), ANY),
    "clamp_": (_in_place("clamp_", -0.5, 0.7), away_from(-0.5, 0.7)),
    "zero_": (_in_place("zero_"), ANY),
    "fill_": (_in_place("fill_", 1.5), ANY),
}


@pytest.mark.parametrize("name", IN_PLACE_WITH_TENSOR)
@SETTINGS
@given(data=st.data())
def test_in_place_with_a_tensor(name, data):
    op, b_elements = IN_PLACE_WITH_TENSOR[name]
    shape = data.draw(SHAPES, label="shape")
    # the operand may be broadcast, the tensor written into may not
    b_shape = data.draw(shapes_broadcasting_to(shape), label="b_shape")
    a = data.draw(arrays(shape), label="a")
    b = data.draw(arrays(b_shape, b_elements), label="b")
    check_gradients(op, a, b)
    check_gradients(op, a, b, requires=(True, False))
    check_gradients(op, a, b, requires=(False, True))


@pytest.mark.parametrize("name", IN_PLACE_ALONE)
@SETTINGS
@given(data=st.data())
def test_in_place(name, data):
    op, elements = IN_PLACE_ALONE[name]
    check_gradients(op, data.draw(arrays(SHAPES, elements), label="x"))


@SETTINGS
@given(x=arrays(SHAPES))
def test_augmented_assignment(x):
    def op(a):
        y = a.sin()  # sin saves its input, not its result: writing into y is allowed
        y += 1
        y *= a
        y -= 2
        y /= 3
        return y

    check_gradients(op, x)


# ***** float32: one smoke test per family *****


def _smoke_binary(a, b):
    return (a + b) * (a - b) / (b * b + 1) + a.abs() ** 1.5 + torch.maximum(a, b)


def _smoke_unary(a):
    return (
        a.exp()
        + a.sin() * a.cos()
        + a.tanh()
        + a.sigmoid()
        + (a * a + 1).log().sqrt()
        - 2 / (a.abs() + 1)
    )


def _smoke_kinks(a):
    return a.relu() + a.clamp(-0.5, 0.5) + a.clamp(min=0.1) + a.abs()


def _smoke_reductions(a):
    return a.sum(0) + a.mean(1, keepdim=True) + a.max() + a.min(0).values + a.sum() * a.mean()


def _smoke_shapes(a):
    return (
        a.t()
        .reshape(4, 3)
        .T.flatten()
        .view(2, 6)
        .unsqueeze(0)
        .squeeze()
        .transpose(0, 1)
        .permute(1, 0)
        .expand(2, 2, 6)
    )


def _smoke_indexing(a):
    return torch.cat(
        [a[1], a[:, ::2].flatten(), a[None, ..., 0].flatten(), a[[0, 0, 2]].flatten(), a[a > 0]]
    )


def _smoke_joining(a):
    parts = [p * (i + 1) for i, p in enumerate(a)]
    return torch.stack(parts, 1) + torch.where(a > 0, a, a * 2).T.sum()


def _smoke_matmul(a):
    v = a[:, 0]
    return torch.cat([(a @ a.t()).flatten(), a.t() @ v, v @ a, (v @ v).unsqueeze(0)])


def _smoke_softmax(a):
    return a.softmax(1) + a.log_softmax(0)


def _smoke_losses(a):
    target = torch.tensor([0, 2, 1], dtype=torch.int64)
    return torch.stack(
        [
            F.cross_entropy(a, target),
            F.mse_loss(a, a.detach() * 0.5),
            F.cross_entropy(a, target, reduction="sum"),
        ]
    )


SMOKE = {
    "binary": _smoke_binary,
    "unary": _smoke_unary,
    "kinks": _smoke_kinks,
    "reductions": _smoke_reductions,
    "shapes": _smoke_shapes,
    "indexing": _smoke_indexing,
    "joining": _smoke_joining,
    "matmul": _smoke_matmul,
    "softmax": _smoke_softmax,
    "losses": _smoke_losses,
}


@pytest.mark.parametrize("family", SMOKE)
def test_float32_grads_stay_float32(family):
    op = SMOKE[family]
    values = np.random.default_rng(3).uniform(-2, 2, size=(3, 4))
    if family == "binary":
        b32 = torch.tensor(values[0] + 0.05, dtype=torch.float32, requires_grad=True)
        leaves = [torch.tensor(values, dtype=torch.float32, requires_grad=True), b32]
    else:
        leaves = [torch.tensor(values, dtype=torch.float32, requires_grad=True)]
    out = op(*leaves)
    assert out.dtype == torch.float32
    (out * torch.tensor(weights(tuple(out.shape)), dtype=torch.float32)).sum().backward()
    for leaf in leaves:
        assert leaf.grad.dtype == torch.float32
        assert leaf.grad.shape == leaf.shape
        assert np.isfinite(leaf.grad.numpy()).all()

    # and they agree with the same computation in float64
    leaves64 = [
        torch.tensor(t.detach().numpy(), dtype=torch.float64, requires_grad=True) for t in leaves
    ]
    with_64 = op(*leaves64)
    (with_64 * torch.tensor(weights(tuple(with_64.shape)), dtype=torch.float64)).sum().backward()
    for leaf, leaf64 in zip(leaves, leaves64, strict=True):
        np.testing.assert_allclose(leaf.grad.numpy(), leaf64.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_float32_linear():
    torch.manual_seed(0)
    layer = nn.Linear(4, 2)
    x = torch.tensor(np.random.default_rng(5).uniform(-2, 2, (3, 4)), dtype=torch.float32)
    x.requires_grad_()
    out = layer(x) + layer(x[0])  # batched (addmm) and one sample (1-D input)
    assert out.dtype == torch.float32
    (out * torch.tensor(weights((3, 2)), dtype=torch.float32)).sum().backward()
    for leaf in (x, layer.weight, layer.bias):
        assert leaf.grad.dtype == torch.float32 and leaf.grad.shape == leaf.shape
    w = weights((3, 2)).astype(np.float32)
    np.testing.assert_allclose(layer.bias.grad.numpy(), w.sum(0) + w.sum(0), rtol=1e-5)
    inputs = x.detach().numpy()
    expected_weight = w.T @ inputs + np.outer(w.sum(0), inputs[0])
    np.testing.assert_allclose(layer.weight.grad.numpy(), expected_weight, rtol=1e-4, atol=1e-5)


def test_float32_mixed_with_float64_sends_each_leaf_its_own_dtype():
    a = torch.tensor([[1.0, 2.0, 3.0]], dtype=torch.float32, requires_grad=True)
    b = torch.tensor([[0.5], [2.0]], dtype=torch.float64, requires_grad=True)
    out = a * b
    assert out.dtype == torch.float64
    out.sum().backward()
    assert a.grad.dtype == torch.float32 and tuple(a.grad.shape) == (1, 3)
    assert b.grad.dtype == torch.float64 and tuple(b.grad.shape) == (2, 1)
    np.testing.assert_allclose(a.grad.numpy(), [[2.5, 2.5, 2.5]])
    np.testing.assert_allclose(b.grad.numpy(), [[6.0], [6.0]])


def test_float32_zero_dim_with_matrix():
    s = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)  # 0-dim doesn't promote
    m = torch.ones(2, 3, requires_grad=True)
    out = m * s
    assert out.dtype == torch.float32
    out.sum().backward()
    assert m.grad.dtype == torch.float32 and s.grad.dtype == torch.float64
    assert tuple(s.grad.shape) == () and s.grad.item() == 6.0


# ***** the backward engine itself *****


def test_a_100000_op_chain_backpropagates_without_recursion():
    limit = sys.getrecursionlimit()
    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y + x
    y.sum().backward()
    assert sys.getrecursionlimit() == limit  # no cheating by raising it
    assert x.grad.tolist() == [100_001.0, 100_001.0]
    del y  # dropping the deep graph must not recurse either


def test_a_100000_op_mul_chain_backpropagates():
    x = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    y = x
    for _ in range(50_000):  # two ops a step
        y = y * 1.0000001 + 0
    y.backward()
    np.testing.assert_allclose(x.grad.item(), 1.0000001**50_000, rtol=1e-9)
    del y


def test_grads_accumulate_over_two_backward_calls():
    w = weights((2, 3))
    x = torch.tensor(np.arange(6.0).reshape(2, 3) / 3, dtype=torch.float64, requires_grad=True)
    y = (x.exp() * torch.tensor(w, dtype=torch.float64)).sum()
    y.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    np.testing.assert_allclose(first, w * np.exp(x.detach().numpy()))
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_grads_accumulate_over_separate_graphs():
    x = torch.tensor([1.0, -2.0], dtype=torch.float64, requires_grad=True)
    (x * 3).sum().backward()
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3 + 2.0, 3 - 4.0])


# ***** the checker must itself catch a wrong backward *****


def test_the_checker_catches_a_wrong_gradient(monkeypatch):
    from engine import functions as fn

    monkeypatch.setattr(fn.SinBackward0, "backward", lambda self, grad: (grad,))
    with pytest.raises(AssertionError):
        check_gradients(lambda a: a.sin(), np.array([0.3, 1.2, -0.7]))


# ======================================================================================
# reductions, scans and more elementwise ops (issue 9, section 1)
# ======================================================================================

INSIDE_ONE = floats(-0.9, 0.9)  # asin, acos, atanh: away from the poles at ±1
# away from the whole numbers and the halves, where rounding steps
BETWEEN_STEPS = st.tuples(st.integers(-3, 2), floats(0.05, 0.45)).map(lambda p: p[0] + p[1])
# hundredths and a bit: ten times one is never within 0.03 of a half, where round(decimals=1) steps
BETWEEN_TENTHS = st.integers(-300, 300).map(lambda k: k / 100 + 0.003)

MORE_UNARY = {
    "tan": (lambda x: x.tan(), floats(-1.2, 1.2)),
    "asin": (lambda x: x.asin(), INSIDE_ONE),
    "acos": (lambda x: torch.acos(x), INSIDE_ONE),
    "atan": (lambda x: x.atan(), WIDE),
    "sinh": (lambda x: x.sinh(), ANY),
    "cosh": (lambda x: torch.cosh(x), ANY),
    "asinh": (lambda x: x.asinh(), WIDE),
    "acosh": (lambda x: x.acosh(), floats(1.2, 4)),
    "atanh": (lambda x: x.atanh(), INSIDE_ONE),
    "erf": (lambda x: x.erf(), ANY),
    "erfc": (lambda x: torch.erfc(x), ANY),
    "exp2": (lambda x: x.exp2(), ANY),
    "expm1": (lambda x: x.expm1(), ANY),
    "log2": (lambda x: x.log2(), POSITIVE),
    "log10": (lambda x: torch.log10(x), POSITIVE),
    "log1p": (lambda x: x.log1p(), floats(-0.8, 3)),
    "rsqrt": (lambda x: x.rsqrt(), POSITIVE),
    "square": (lambda x: x.square(), ANY),
    "frac": (lambda x: x.frac(), BETWEEN_STEPS),
    "round": (lambda x: x.round() * x, BETWEEN_STEPS),
    "round_decimals": (lambda x: x.round(decimals=1) + x, BETWEEN_TENTHS),
    "floor": (lambda x: x.floor() * x, BETWEEN_STEPS),
    "ceil": (lambda x: torch.ceil(x) + x, BETWEEN_STEPS),
    "trunc": (lambda x: x.trunc() * x, BETWEEN_STEPS),
    "sign": (lambda x: x.sign() * x, NONZERO),
    "sgn": (lambda x: x.sgn() * x, NONZERO),
    # in-place forms on a non-leaf: the same grad_fns, written into the tensor
    "relu_": (lambda x: (x * 1).relu_(), NONZERO),
    "torch.relu_": (lambda x: torch.relu_(x * 2), NONZERO),
    "sigmoid_": (lambda x: (x * 1).sigmoid_(), WIDE),
    "tanh_": (lambda x: torch.tanh_(x * 1), WIDE),
    "exp_": (lambda x: (x * 1).exp_(), ANY),
    "log_": (lambda x: (x * 1).log_(), POSITIVE),
    "sqrt_": (lambda x: (x + 0).sqrt_(), POSITIVE),
    "abs_": (lambda x: (x * 1).abs_(), NONZERO),
    "sin_": (lambda x: (x * 1).sin_(), WIDE),
    "cos_": (lambda x: (x * 1).cos_(), WIDE),
    "floor_": (lambda x: (x * 1).floor_() * x, BETWEEN_STEPS),
    "round_": (lambda x: (x * 1).round_() + x, BETWEEN_STEPS),
    "pow_": (lambda x: (x * 1).pow_(3), ANY),
}


@pytest.mark.parametrize("name", MORE_UNARY)
@SETTINGS
@given(data=st.data())
def test_more_unary(name, data):
    op, elements = MORE_UNARY[name]
    check_gradients(op, data.draw(arrays(SHAPES, elements), label="x"))


MORE_BINARY = {
    "atan2": (lambda a, b: torch.atan2(a, b), NONZERO, NONZERO),
    "fmax": (lambda a, b: torch.fmax(a, b), EVEN_GRID, ODD_GRID),
    "fmin": (lambda a, b: a.fmin(b), EVEN_GRID, ODD_GRID),
    "lerp_number": (lambda a, b: a.lerp(b, 0.3), ANY, ANY),
    "lerp_number_far": (lambda a, b: torch.lerp(a, b, 0.8), ANY, ANY),
    "pow__tensor": (lambda a, b: (a * 1).pow_(b), floats(0.5, 2.5), ANY),
}


@pytest.mark.parametrize("name", MORE_BINARY)
@SETTINGS
@given(data=st.data())
def test_more_binary(name, data):
    op, a_elements, b_elements = MORE_BINARY[name]
    shapes = data.draw(
        hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4),
        label="shapes",
    ).input_shapes
    if name == "pow__tensor":  # written in place: the exponent must not grow the base
        shapes = (shapes[0], data.draw(shapes_broadcasting_to(shapes[0]), label="b_shape"))
    a = data.draw(arrays(shapes[0], a_elements), label="a")
    b = data.draw(arrays(shapes[1], b_elements), label="b")
    check_gradients(op, a, b)
    check_gradients(op, a, b, requires=(True, False))
    check_gradients(op, a, b, requires=(False, True))


def test_fmax_gives_a_tie_to_self_and_ignores_nan():
    a = torch.tensor([1.0, 2.0, float("nan")], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([1.0, float("nan"), 3.0], dtype=torch.float64, requires_grad=True)
    torch.fmax(a, b).sum().backward()
    assert a.grad.tolist() == [1.0, 1.0, 0.0] and b.grad.tolist() == [0.0, 0.0, 1.0]


# three inputs that broadcast together: self, and two more (end and weight, or tensor1/2)
THREE_WAY = {
    "lerp_tensor": (lambda a, b, w: torch.lerp(a, b, w), ANY, ANY, floats(-0.5, 1.5)),
    "addcmul": (lambda a, b, c: a.addcmul(b, c, value=-1.5), ANY, ANY, ANY),
    "addcdiv": (lambda a, b, c: torch.addcdiv(a, b, c, value=0.5), ANY, ANY, NONZERO),
}


@pytest.mark.parametrize("name", THREE_WAY)
@SETTINGS
@given(data=st.data())
def test_three_way(name, data):
    op, *elements = THREE_WAY[name]
    shapes = data.draw(
        hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, max_side=3),
        label="shapes",
    ).input_shapes
    leaves = [
        data.draw(arrays(s, e), label=f"x{i}")
        for i, (s, e) in enumerate(zip(shapes, elements, strict=True))
    ]
    check_gradients(op, *leaves)
    for alone in range(3):
        check_gradients(op, *leaves, requires=[i == alone for i in range(3)])


IN_PLACE_THREE_WAY = {
    "addcmul_": lambda s, t1, t2: (s * 1).addcmul_(t1, t2, value=2),
    "addcdiv_": lambda s, t1, t2: (s * 1).addcdiv_(t1, t2),
    "lerp_tensor_": lambda s, end, w: (s * 1).lerp_(end, w),
}


@pytest.mark.parametrize("name", IN_PLACE_THREE_WAY)
@SETTINGS
@given(data=st.data())
def test_three_way_in_place(name, data):
    # the others broadcast to self's shape, never beyond it: the result is written into self
    shape = data.draw(SHAPES, label="shape")
    others = [data.draw(shapes_broadcasting_to(shape), label=f"shape{i}") for i in (1, 2)]
    x = data.draw(arrays(shape), label="x")
    b = data.draw(arrays(others[0]), label="b")
    c = data.draw(arrays(others[1], NONZERO), label="c")
    check_gradients(IN_PLACE_THREE_WAY[name], x, b, c)


@SETTINGS
@given(data=st.data())
def test_lerp_in_place_with_a_number(data):
    shape = data.draw(SHAPES, label="shape")
    x = data.draw(arrays(shape), label="x")
    end = data.draw(arrays(data.draw(shapes_broadcasting_to(shape), label="end_shape")))
    check_gradients(lambda s, e: (s * 1).lerp_(e, 0.25), x, end)
    check_gradients(lambda s, e: (s * 1).lerp_(e, 0.75), x, end)


@SETTINGS
@given(x=arrays(SHAPES))
def test_prod_whole(x):
    check_gradients(lambda t: t.prod(), x)
    check_gradients(lambda t: torch.prod(t) * t, x)


@pytest.mark.parametrize("keepdim", [False, True])
@SETTINGS
@given(data=st.data())
def test_prod_along_a_dim(keepdim, data):
    x = data.draw(arrays(SHAPES_1D_UP), label="x")
    dim = data.draw(dims(x.shape), label="dim")
    check_gradients(lambda t: t.prod(dim, keepdim=keepdim), x)


@pytest.mark.parametrize("zeros", [1, 2])
def test_prod_with_zeros(zeros):
    # the product of the others, not result / self: exact at one zero, and 0 past two
    x = np.array([[2.0, 0.0, 3.0, -1.5], [0.5, 4.0, 0.0, 2.0]])
    if zeros == 2:
        x[0, 3] = 0.0
    check_gradients(lambda t: t.prod(), x)
    check_gradients(lambda t: t.prod(1), x)
    check_gradients(lambda t: t.prod(0, keepdim=True), x)


@pytest.mark.parametrize("reduce", ["var", "std"])
@SETTINGS
@given(data=st.data())
def test_var_and_std(reduce, data):
    x = data.draw(arrays(SHAPES_1D_UP.filter(lambda s: np.prod(s) > 2)), label="x")
    # spread out: any two elements at least 4 apart, so std stays far from 0 (where its
    # derivative blows up) and from the finite difference's step
    x = x + 10 * np.arange(x.size).reshape(x.shape)
    dim = data.draw(dims(x.shape), label="dim")
    keepdim = data.draw(st.booleans(), label="keepdim")
    correction = data.draw(st.sampled_from([0, 1]), label="correction")
    check_gradients(lambda t: getattr(t, reduce)(), x)
    check_gradients(lambda t: getattr(t, reduce)(unbiased=False), x)
    if x.shape[dim] > correction:
        check_gradients(
            lambda t: getattr(torch, reduce)(t, dim, keepdim=keepdim, correction=correction), x
        )


# nonzero elements: a norm over a slice of zeros has no derivative
NORM_ORDERS = {1: NONZERO, 2: NONZERO, 3: NONZERO, 0.5: NONZERO, 1.5: NONZERO, float("inf"): GRID}


@pytest.mark.parametrize("p", NORM_ORDERS, ids=str)
@SETTINGS
@given(data=st.data())
def test_norm(p, data):
    x = data.draw(arrays(SHAPES_1D_UP, NORM_ORDERS[p], unique=p == float("inf")), label="x")
    if p == float("inf"):
        x = x + 0.001 * np.sign(x)  # so that no |x| is shared by two elements of opposite sign
    dim = data.draw(dims(x.shape), label="dim")
    check_gradients(lambda t: t.norm(p), x)
    check_gradients(lambda t: torch.norm(t, p, dim=dim, keepdim=True), x)
    check_gradients(lambda t: torch.linalg.vector_norm(t, ord=p, dim=dim), x)


def test_norm_inf_shares_the_grad_among_ties():
    x = torch.tensor([3.0, -3.0, 1.0], dtype=torch.float64, requires_grad=True)
    x.norm(float("inf")).backward()
    assert x.grad.tolist() == [0.5, -0.5, 0.0]


def test_norm_of_zeros_has_a_zero_grad():
    x = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    x.norm().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("scan", ["cumsum", "cumprod"])
@SETTINGS
@given(data=st.data())
def test_scans(scan, data):
    x = data.draw(arrays(SHAPES), label="x")
    dim = data.draw(dims(x.shape) if x.ndim else st.just(0), label="dim")
    check_gradients(lambda t: getattr(t, scan)(dim), x)


def test_cumprod_through_zeros():
    check_gradients(lambda t: t.cumprod(0), np.array([2.0, 0.0, 3.0, 0.0, 1.5]))
    check_gradients(lambda t: t.cumprod(1), np.array([[0.0, 2.0, -1.0], [1.5, 0.0, 2.0]]))


@SETTINGS
@given(data=st.data())
def test_logsumexp(data):
    x = data.draw(arrays(SHAPES_1D_UP, WIDE), label="x")
    dim = data.draw(dims(x.shape), label="dim")
    check_gradients(lambda t: t.logsumexp(dim), x)
    if dim % x.ndim:
        check_gradients(lambda t: torch.logsumexp(t, (0, dim), keepdim=True), x)


@pytest.mark.parametrize("largest", [True, False])
@SETTINGS
@given(data=st.data())
def test_topk_and_sort(largest, data):
    x = data.draw(arrays(SHAPES_1D_UP, GRID, unique=True), label="x")
    dim = data.draw(dims(x.shape), label="dim")
    k = data.draw(st.integers(1, x.shape[dim]), label="k")
    check_gradients(lambda t: t.topk(k, dim, largest=largest).values, x)
    check_gradients(lambda t: t.sort(dim, descending=largest).values, x)
    check_gradients(lambda t: torch.sort(t, dim=dim, stable=True)[0], x)


@pytest.mark.parametrize("reduce", ["amax", "amin"])
@SETTINGS
@given(data=st.data())
def test_amax_amin(reduce, data):
    x = data.draw(arrays(SHAPES, GRID, unique=True), label="x")
    check_gradients(lambda t: getattr(t, reduce)(), x)
    if x.ndim:
        picked = data.draw(st.sets(dims(x.shape), min_size=1), label="dims")
        picked = tuple({d % x.ndim: d for d in picked}.values())
        keepdim = data.draw(st.booleans(), label="keepdim")
        check_gradients(lambda t: getattr(torch, reduce)(t, picked, keepdim), x)


def test_amax_splits_the_grad_among_ties_unlike_max():
    x = torch.tensor([[2.0, 2.0, 1.0], [0.0, 3.0, 3.0]], dtype=torch.float64, requires_grad=True)
    x.amax(1).sum().backward()
    assert x.grad.tolist() == [[0.5, 0.5, 0.0], [0.0, 0.5, 0.5]]


def test_sum_and_mean_with_dtype_send_the_input_dtype_back():
    x = torch.tensor([[1.0, 2.0], [3.0, 4.5]], requires_grad=True)
    total = x.sum(dtype=torch.float64) + x.mean(1, dtype=torch.float64).sum()
    assert total.dtype == torch.float64
    total.backward()
    assert x.grad.dtype == torch.float32
    np.testing.assert_allclose(x.grad.numpy(), np.full((2, 2), 1.5))


# ***** backwards recorded as ops of their own (create_graph=True) *****


@pytest.mark.parametrize(
    "node", ["TanhBackwardBackward0", "SigmoidBackwardBackward0", "ThresholdBackwardBackward0"]
)
@SETTINGS
@given(data=st.data())
def test_backward_ops_that_create_graph_records(node, data):
    from engine import functions, record

    shape = data.draw(SHAPES, label="shape")
    grad_output = data.draw(arrays(shape), label="grad_output")
    output = data.draw(arrays(shape, NONZERO), label="output")
    node_cls = getattr(functions, node)
    extra = {"threshold": 0} if node == "ThresholdBackwardBackward0" else {}
    check_gradients(lambda g, y: record.apply(node_cls, (g, y), **extra), grad_output, output)


# ***** losses and nn.functional (more) *****

REDUCTIONS = ["mean", "sum", "none"]
INSIDE_UNIT = floats(0.05, 0.95)  # probabilities, with room for the finite difference


@pytest.mark.parametrize("reduction", REDUCTIONS)
@SETTINGS
@given(data=st.data())
def test_binary_cross_entropy(reduction, data):
    shape = data.draw(SHAPES, label="shape")
    p, t = (data.draw(arrays(shape, INSIDE_UNIT), label=name) for name in ("input", "target"))
    weight = torch.tensor(data.draw(arrays(shape, POSITIVE), label="weight"))
    check_gradients(lambda a, b: F.binary_cross_entropy(a, b, reduction=reduction), p, t)
    check_gradients(lambda a, b: F.binary_cross_entropy(a, b, weight, reduction=reduction), p, t)
    check_gradients(lambda a: nn.BCELoss(reduction=reduction)(torch.sigmoid(a), weight / 9), p)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@SETTINGS
@given(data=st.data())
def test_binary_cross_entropy_with_logits(reduction, data):
    shape = data.draw(SHAPES_1D_UP, label="shape")
    x = data.draw(arrays(shape, WIDE), label="logits")
    t = data.draw(arrays(shape, INSIDE_UNIT), label="target")
    weight = torch.tensor(data.draw(arrays(shape[-1:], POSITIVE), label="weight"))
    pos_weight = torch.tensor(data.draw(arrays(shape[-1:], POSITIVE), label="pos_weight"))

    def loss(a, b, **kwargs):
        return F.binary_cross_entropy_with_logits(a, b, reduction=reduction, **kwargs)

    check_gradients(loss, x, t)
    check_gradients(lambda a, b: loss(a, b, weight=weight, pos_weight=pos_weight), x, t)
    check_gradients(lambda a, b: loss(a, b, pos_weight=pos_weight), x, t, requires=(True, False))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@SETTINGS
@given(data=st.data())
def test_regression_losses(reduction, data):
    # the inputs sit on even hundredths and the targets on odd ones, so no difference is 0 (l1's
    # kink) or ±0.505 (the smooth losses' switch from squared to linear)
    shape = data.draw(SHAPES, label="shape")
    x = data.draw(arrays(shape, EVEN_GRID), label="input")
    y = data.draw(arrays(shape, ODD_GRID), label="target")
    weight = torch.tensor(data.draw(arrays(shape, POSITIVE), label="weight"))
    check_gradients(lambda a, b: F.l1_loss(a, b, reduction=reduction), x, y)
    check_gradients(lambda a, b: F.l1_loss(a, b, reduction=reduction, weight=weight), x, y)
    check_gradients(lambda a, b: F.mse_loss(a, b, reduction=reduction, weight=weight), x, y)
    for beta in (0.505, 1.0, 2.005):

        def smooth(a, b, beta=beta):
            return F.smooth_l1_loss(a, b, reduction=reduction, beta=beta)

        def huber(a, b, delta=beta):
            return F.huber_loss(a, b, reduction=reduction, delta=delta)

        check_gradients(smooth, x, y)
        check_gradients(huber, x, y)
    check_gradients(lambda a, b: F.huber_loss(a, b, reduction=reduction, weight=weight), x, y)


@st.composite
def classification(draw):
    """Logits (batch, classes), class-index targets and per-class weights."""
    batch, classes = draw(st.integers(1, 4), label="batch"), draw(st.integers(2, 4))
    logits = draw(arrays((batch, classes), WIDE), label="logits")
    labels = draw(st.lists(st.integers(0, classes - 1), min_size=batch, max_size=batch))
    weight = draw(arrays((classes,), POSITIVE), label="weight")
    return logits, torch.tensor(labels), torch.tensor(weight)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@SETTINGS
@given(case=classification())
def test_nll_loss_and_cross_entropy_with_weight_and_ignore_index(reduction, case):
    logits, target, weight = case
    ignored = target[0].item()  # some targets, or all of them, are ignored

    def nll(a):
        return F.nll_loss(F.log_softmax(a, dim=1), target, weight, reduction=reduction)

    check_gradients(nll, logits)
    check_gradients(lambda a: F.cross_entropy(a, target, weight, reduction=reduction), logits)
    if reduction != "mean" or (target != ignored).any():  # a mean of nothing is nan
        check_gradients(
            lambda a: F.cross_entropy(a, target, weight, ignore_index=ignored, reduction=reduction),
            logits,
        )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@SETTINGS
@given(case=classification(), smoothing=floats(0.05, 1.0))
def test_cross_entropy_with_label_smoothing(reduction, case, smoothing):
    logits, target, weight = case
    ignored = target[-1].item()

    def loss(a, **kwargs):
        return F.cross_entropy(a, target, reduction=reduction, label_smoothing=smoothing, **kwargs)

    check_gradients(loss, logits)
    check_gradients(lambda a: loss(a, weight=weight), logits)
    if reduction != "mean" or (target != ignored).any():
        check_gradients(lambda a: loss(a, ignore_index=ignored), logits)
        check_gradients(lambda a: loss(a, weight=weight, ignore_index=ignored), logits)
    check_gradients(lambda a: nn.CrossEntropyLoss(label_smoothing=smoothing)(a, target), logits)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@SETTINGS
@given(case=classification(), smoothing=st.sampled_from([0.0, 0.3]))
def test_cross_entropy_with_class_probabilities(reduction, case, smoothing):
    logits, _, weight = case
    probabilities = np.random.default_rng(7).dirichlet(np.ones(logits.shape[1]), logits.shape[0])

    def loss(a, p, **kwargs):
        return F.cross_entropy(a, p, reduction=reduction, label_smoothing=smoothing, **kwargs)

    check_gradients(loss, logits, probabilities)
    check_gradients(lambda a, p: loss(a, p, weight=weight), logits, probabilities)
    check_gradients(lambda a, p: loss(a, p, weight=weight), logits[0], probabilities[0])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@SETTINGS
@given(data=st.data())
def test_margin_and_embedding_losses(reduction, data):
    # grid values: the hinges' kinks (a margin term exactly 0) cannot be hit
    shape = data.draw(SHAPES_1D_UP, label="shape")
    a, b = (data.draw(arrays(shape, EVEN_GRID), label=name) for name in ("a", "b"))
    signs = torch.tensor(data.draw(arrays(shape, st.sampled_from([-1.0, 1.0])), label="signs"))

    def ranking(x, y):
        return F.margin_ranking_loss(x, y, signs, margin=0.005, reduction=reduction)

    check_gradients(ranking, a, b)
    check_gradients(lambda x: F.hinge_embedding_loss(x, signs, 1.005, reduction=reduction), a)
    check_gradients(lambda x: F.soft_margin_loss(x, signs, reduction=reduction), a)
    if len(shape) >= 2:  # cosine_embedding_loss compares rows: one ±1 target per row
        rows = signs.reshape(-1)[: int(np.prod(shape[:-1]))].reshape(shape[:-1])
        x, y = (data.draw(arrays(shape, NONZERO), label=name) for name in ("x", "y"))

        def cosine(p, q):
            return F.cosine_embedding_loss(p, q, rows, margin=-2.0, reduction=reduction)

        check_gradients(cosine, x, y)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@SETTINGS
@given(data=st.data())
def test_likelihood_losses(reduction, data):
    shape = data.draw(SHAPES_1D_UP, label="shape")
    x = data.draw(arrays(shape, ANY), label="x")
    counts = torch.tensor(data.draw(arrays(shape, st.sampled_from([0.0, 1.0, 2.0, 5.0]))))
    var = data.draw(arrays(shape, POSITIVE), label="var")
    labels = torch.tensor(data.draw(arrays(shape, st.sampled_from([0.0, 1.0])), label="labels"))

    def poisson(a, **kwargs):
        return F.poisson_nll_loss(a, counts, reduction=reduction, **kwargs)

    check_gradients(poisson, x)
    check_gradients(lambda a: poisson(a.exp(), log_input=False, full=True), x)
    check_gradients(lambda a, v: F.gaussian_nll_loss(a, counts, v, reduction=reduction), x, var)
    check_gradients(lambda a: F.multilabel_soft_margin_loss(a, labels, reduction=reduction), x)


ACTIVATIONS = {
    "leaky_relu": (lambda x: F.leaky_relu(x), NONZERO),
    "leaky_relu_slope": (lambda x: F.leaky_relu(x, 0.3), NONZERO),
    "leaky_relu_": (lambda x: F.leaky_relu(x * 1, 0.2, inplace=True), NONZERO),
    "LeakyReLU": (lambda x: nn.LeakyReLU(0.1)(x), NONZERO),
    "gelu": (lambda x: F.gelu(x), ANY),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), ANY),
    "GELU": (lambda x: nn.GELU()(x), ANY),
    "elu": (lambda x: F.elu(x), NONZERO),
    "elu_alpha": (lambda x: F.elu(x, alpha=2.5), NONZERO),
    "elu_": (lambda x: F.elu(x * 1, alpha=0.5, inplace=True), NONZERO),
    "ELU": (lambda x: nn.ELU(alpha=1.5)(x), NONZERO),
    "selu": (lambda x: F.selu(x), NONZERO),
    "selu_": (lambda x: F.selu(x * 1, inplace=True), NONZERO),
    "SELU": (lambda x: nn.SELU()(x), NONZERO),
    "silu": (lambda x: F.silu(x), WIDE),
    "silu_": (lambda x: F.silu(x * 1, inplace=True), WIDE),
    "SiLU": (lambda x: nn.SiLU()(x), WIDE),
    "softplus": (lambda x: F.softplus(x), WIDE),
    # beta * x crosses the threshold at x = 1.5, where softplus switches to x itself
    "softplus_threshold": (lambda x: F.softplus(x, beta=2.0, threshold=3.0), away_from(1.5)),
    "Softplus": (lambda x: nn.Softplus(beta=0.5)(x), WIDE),
    "hardtanh": (lambda x: F.hardtanh(x), away_from(-1.0, 1.0)),
    "hardtanh_range": (lambda x: F.hardtanh(x, -2.0, 0.5), away_from(-2.0, 0.5)),
    "hardtanh_": (lambda x: F.hardtanh(x * 1, inplace=True), away_from(-1.0, 1.0)),
    "Hardtanh": (lambda x: nn.Hardtanh(-0.5, 2.0)(x), away_from(-0.5, 2.0)),
    "relu6": (lambda x: F.relu6(x * 3), away_from(0.0, 2.0)),
    "ReLU6": (lambda x: nn.ReLU6()(x * 3), away_from(0.0, 2.0)),
    "logsigmoid": (lambda x: F.logsigmoid(x), WIDE),
    "LogSigmoid": (lambda x: nn.LogSigmoid()(x), WIDE),
    "celu": (lambda x: F.celu(x, alpha=1.5), NONZERO),
    "celu_": (lambda x: F.celu(x * 1, alpha=0.5, inplace=True), NONZERO),
    "CELU": (lambda x: nn.CELU()(x), NONZERO),
    "threshold": (lambda x: F.threshold(x, 0.5, -2.0), away_from(0.5)),
    "threshold_": (lambda x: F.threshold(x * 1, -0.5, 3.0, inplace=True), away_from(-0.5)),
    "Threshold": (lambda x: nn.Threshold(0.0, 1.0)(x), away_from(0.0)),
    "softshrink": (lambda x: F.softshrink(x), away_from(-0.5, 0.5)),
    "Softshrink": (lambda x: nn.Softshrink(1.0)(x), away_from(-1.0, 1.0)),
    "hardshrink": (lambda x: F.hardshrink(x, 0.25), away_from(-0.25, 0.25)),
    "Hardshrink": (lambda x: nn.Hardshrink()(x), away_from(-0.5, 0.5)),
    "tanhshrink": (lambda x: F.tanhshrink(x), ANY),
    "softsign": (lambda x: F.softsign(x), NONZERO),
    "Softsign": (lambda x: nn.Softsign()(x), NONZERO),
    "mish": (lambda x: F.mish(x), WIDE),
    "mish_": (lambda x: F.mish(x * 1, inplace=True), WIDE),
    "Mish": (lambda x: nn.Mish()(x), WIDE),
    "hardswish": (lambda x: F.hardswish(x * 2), away_from(-1.5, 1.5)),
    "hardswish_": (lambda x: F.hardswish(x * 2, inplace=True), away_from(-1.5, 1.5)),
    "hardsigmoid": (lambda x: F.hardsigmoid(x * 2), away_from(-1.5, 1.5)),
    "hardsigmoid_": (lambda x: F.hardsigmoid(x * 2, inplace=True), away_from(-1.5, 1.5)),
    "Hardswish": (lambda x: nn.Hardswish()(x * 2), away_from(-1.5, 1.5)),
    "dropout": (lambda x: _seeded(F.dropout, x, 0.4), ANY),
    "dropout_": (lambda x: _seeded(F.dropout, x * 1, 0.3, inplace=True), ANY),
    "Dropout": (lambda x: _seeded(nn.Dropout(0.6), x), ANY),
}


def _seeded(dropout, x, *args, **kwargs):
    # every evaluation of the check draws the same mask
    torch.manual_seed(0)
    return dropout(x, *args, **kwargs)


@pytest.mark.parametrize("name", ACTIVATIONS)
@SETTINGS
@given(data=st.data())
def test_activations(name, data):
    op, elements = ACTIVATIONS[name]
    check_gradients(op, data.draw(arrays(SHAPES, elements), label="x"))


@pytest.mark.parametrize("dim", [0, -1])
@SETTINGS
@given(data=st.data())
def test_glu(dim, data):
    shape = list(data.draw(SHAPES_1D_UP, label="shape"))
    shape[dim] *= 2  # glu halves dim
    check_gradients(lambda x: F.glu(x, dim), data.draw(arrays(tuple(shape)), label="x"))
    check_gradients(lambda x: nn.GLU(dim)(x), data.draw(arrays(tuple(shape)), label="x2"))


@pytest.mark.parametrize("per_channel", [False, True])
@SETTINGS
@given(data=st.data())
def test_prelu(per_channel, data):
    shape = data.draw(SHAPES, label="shape")
    channels = shape[1] if per_channel and len(shape) >= 2 else 1
    x = data.draw(arrays(shape, NONZERO), label="x")
    weight = data.draw(arrays((channels,), ANY), label="weight")
    check_gradients(F.prelu, x, weight)
    check_gradients(F.prelu, x, weight, requires=(False, True))


@pytest.mark.parametrize("reduction", ["batchmean", "sum", "mean", "none"])
@pytest.mark.filterwarnings("ignore:reduction")
@SETTINGS
@given(case=classification(), log_target=st.booleans())
def test_kl_div(reduction, case, log_target):
    logits, _, _ = case
    probabilities = np.random.default_rng(3).dirichlet(np.ones(logits.shape[1]), logits.shape[0])
    target = torch.tensor(np.log(probabilities) if log_target else probabilities)

    def loss(a):
        return F.kl_div(F.log_softmax(a, 1), target, reduction=reduction, log_target=log_target)

    check_gradients(loss, logits)
    check_gradients(
        lambda a: nn.KLDivLoss(reduction=reduction)(
            F.log_softmax(a, 1), target.exp() if log_target else target
        ),
        logits,
    )


@pytest.mark.parametrize("dim", [0, 1, -1])
@SETTINGS
@given(x=arrays(hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=4)))
def test_softmin(dim, x):
    check_gradients(lambda a: F.softmin(a, dim=dim), x)
    check_gradients(lambda a: nn.Softmin(dim=dim)(a), x)


@SETTINGS
@given(data=st.data())
def test_embedding(data):
    rows = data.draw(st.integers(2, 5), label="rows")
    weight = data.draw(arrays((rows, data.draw(st.integers(1, 3), label="dim"))), label="weight")
    index_shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=2, max_side=4), label="shape")
    picks = hnp.arrays(np.int64, index_shape, elements=st.integers(0, rows - 1))
    indices = torch.tensor(data.draw(picks, label="indices"))
    check_gradients(lambda w: F.embedding(indices, w), weight)
    # padding_idx's row is looked up like any other but, by design, never gets a gradient
    grads = []
    for padding_idx in (None, 1, -1):
        w = torch.tensor(weight, requires_grad=True)
        F.embedding(indices, w, padding_idx=padding_idx).sum().backward()
        grads.append(w.grad.numpy())
    for padding_row, grad in zip((1, rows - 1), grads[1:], strict=True):
        expected = grads[0].copy()
        expected[padding_row] = 0
        np.testing.assert_array_equal(grad, expected)


@pytest.mark.parametrize("batch_dims", [(), (2,), (2, 2)])
@pytest.mark.parametrize("mask", [None, "causal", "boolean", "additive"])
@SETTINGS
@given(data=st.data())
def test_scaled_dot_product_attention(batch_dims, mask, data):
    # 4-d inputs take PyTorch's fused node, the others its math composite
    length, source, width = (data.draw(st.integers(1, 4), label=n) for n in ("L", "S", "E"))
    q = data.draw(arrays((*batch_dims, length, width)), label="q")
    k, v = (data.draw(arrays((*batch_dims, source, width)), label=n) for n in ("k", "v"))
    keep = np.ones((length, source), bool)
    keep[:, 0] = True  # every row attends somewhere
    keep[:, 1:] = data.draw(hnp.arrays(bool, (length, source - 1)), label="keep")
    masks = {
        None: {},
        "causal": {"is_causal": True},
        "boolean": {"attn_mask": torch.tensor(keep)},
        "additive": {"attn_mask": torch.tensor(data.draw(arrays((length, source)), label="add"))},
    }

    def attention(a, b, c):
        return F.scaled_dot_product_attention(a, b, c, scale=0.7, **masks[mask])

    check_gradients(attention, q, k, v)


@SETTINGS
@given(data=st.data())
def test_constant_pad(data):
    shape = data.draw(SHAPES_1D_UP, label="shape")
    widths = []
    for size in reversed(shape[-data.draw(st.integers(1, len(shape)), label="dims") :]):
        # a negative width crops, but never more than the dim holds
        low = data.draw(st.integers(-(size // 2), 2), label="low")
        high = data.draw(st.integers(-(size - max(-low, 0)) // 2, 2), label="high")
        widths += [low, high]
    x = data.draw(arrays(shape), label="x")
    check_gradients(lambda a: F.pad(a, tuple(widths), value=0.5), x)


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
@SETTINGS
@given(data=st.data())
def test_normalize_and_cosine_similarity(p, data):
    shape = data.draw(hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=4))
    a, b = (data.draw(arrays(shape, NONZERO), label=name) for name in ("a", "b"))
    check_gradients(lambda x: F.normalize(x, p=p), a)
    check_gradients(lambda x: F.normalize(x, p=p, dim=0), a)
    check_gradients(lambda x, y: F.cosine_similarity(x, y), a, b)
    check_gradients(lambda x, y: F.cosine_similarity(x, y, dim=-1), a, b)


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
@pytest.mark.parametrize("keepdim", [False, True])
@SETTINGS
@given(data=st.data())
def test_pairwise_distance(p, keepdim, data):
    # even and odd hundredths: no difference is 0, where the 1-norm has its kink
    shape = data.draw(SHAPES_1D_UP, label="shape")
    a = data.draw(arrays(shape, EVEN_GRID), label="a")
    b = data.draw(arrays(data.draw(shapes_broadcasting_to(shape), label="b_shape"), ODD_GRID))
    check_gradients(lambda x, y: F.pairwise_distance(x, y, p=p, keepdim=keepdim), a, b)


# ***** normalisation layers and recurrent cells *****

# distinct hundredths: a sample (or a feature over the batch) never has zero spread, where the
# normalisation's 1/std would be as large as 1/√eps and the finite difference meaningless
SPREAD = st.integers(-300, 300).map(lambda k: k / 100)


@SETTINGS
@given(data=st.data())
def test_layer_norm(data):
    layer_norm = F.layer_norm

    batch = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3))
    normalized = data.draw(hnp.array_shapes(min_dims=1, max_dims=2, min_side=2, max_side=3))
    x = data.draw(arrays(batch + normalized, SPREAD, unique=True), label="x")
    w = data.draw(arrays(normalized, NONZERO), label="weight")
    b = data.draw(arrays(normalized), label="bias")
    check_gradients(lambda a, g, c: layer_norm(a, normalized, g, c), x, w, b)
    check_gradients(lambda a: layer_norm(a, normalized, eps=1e-3), x)
    check_gradients(lambda a, g: layer_norm(a, normalized, g), x, w, requires=(False, True))


@pytest.mark.parametrize("training", [True, False])
@SETTINGS
@given(data=st.data())
def test_batch_norm(training, data):
    batch_norm = F.batch_norm

    n, c = data.draw(st.integers(2, 4), label="batch"), data.draw(st.integers(1, 3))
    shape = (n, c) if data.draw(st.booleans(), label="2d") else (n, c, data.draw(st.integers(1, 3)))
    x = data.draw(arrays(shape, SPREAD, unique=True), label="x")
    w, b = data.draw(arrays((c,), NONZERO), label="weight"), data.draw(arrays((c,)))
    mean = torch.tensor(data.draw(arrays((c,)), label="running_mean"))
    var = torch.tensor(data.draw(arrays((c,), POSITIVE), label="running_var"))

    def norm(a, g=None, s=None):
        # running statistics are read in eval and updated (not differentiated) in training
        return batch_norm(a, mean.clone(), var.clone(), g, s, training=training, momentum=0.3)

    check_gradients(norm, x, w, b)
    check_gradients(norm, x)
    check_gradients(lambda a: batch_norm(a, None, None, training=True), x)


def _with_parameters(module: nn.Module, names: list[str]):
    """An op over (input, *parameters) that runs `module` with those leaves as its parameters."""

    def op(x, *params):
        for name, p in zip(names, params, strict=True):
            setattr(module, name, p)
        out = module(x)
        if isinstance(out, tuple):  # (h, c) or (output, h_n): both must carry the gradient
            out = out[0] + 2 * (out[1][0] if isinstance(out[1], tuple) else out[1]).sum()
        return out

    return op


@pytest.mark.parametrize(
    "kind", ["RNNCell", "GRUCell", "LSTMCell", "RNN", "GRU", "LSTM", "batch_first RNN"]
)
@settings(max_examples=5, deadline=None)
@given(data=st.data())
def test_recurrent(kind, data):
    n_in, hidden = data.draw(st.integers(1, 3), label="in"), data.draw(st.integers(1, 2))
    batch_first = kind.startswith("batch_first")  # its output goes back by transpose_
    module = getattr(nn, kind.split()[-1])(
        n_in, hidden, **({"batch_first": True} if batch_first else {})
    )
    shape = (2, n_in) if kind.endswith("Cell") else (2, 2, n_in)  # (time,) batch, features
    x = data.draw(arrays(shape), label="x")
    names = [name for name, _ in module.named_parameters()]
    params = [
        data.draw(arrays(tuple(p.shape)), label=name) for name, p in module.named_parameters()
    ]
    check_gradients(_with_parameters(module, names), x, *params, leaf=param_leaf)


@pytest.mark.parametrize("node", ["SelectBackwardBackward0", "SliceBackwardBackward0"])
@SETTINGS
@given(data=st.data())
def test_select_and_slice_backwards_that_create_graph_records(node, data):
    from engine import functions, record

    shape = data.draw(SHAPES_1D_UP, label="shape")
    dim = data.draw(st.integers(0, len(shape) - 1), label="dim")
    if node == "SelectBackwardBackward0":
        picked = data.draw(st.integers(0, shape[dim] - 1), label="index")
        grad_shape = shape[:dim] + shape[dim + 1 :]
    else:
        start = data.draw(st.integers(0, shape[dim] - 1), label="start")
        picked = slice(start, shape[dim], 2)
        grad_shape = shape[:dim] + (len(range(start, shape[dim], 2)),) + shape[dim + 1 :]
    key = (slice(None),) * dim + (picked, Ellipsis)
    grad_output = data.draw(arrays(grad_shape), label="grad_output")
    node_cls = getattr(functions, node)
    check_gradients(lambda g: record.apply(node_cls, (g,), shape=shape, key=key), grad_output)


@pytest.mark.parametrize(
    "node",
    ["SoftmaxBackwardDataBackward0", "LogSoftmaxBackwardDataBackward0", "MseLossBackwardBackward0"],
)
@SETTINGS
@given(data=st.data())
def test_softmax_and_loss_backwards_that_create_graph_records(node, data):
    from engine import functions, record

    shape = data.draw(SHAPES_1D_UP, label="shape")
    node_cls = getattr(functions, node)
    if node == "MseLossBackwardBackward0":
        reduction = data.draw(st.sampled_from(["mean", "sum", "none"]), label="reduction")
        go_shape = shape if reduction == "none" else ()
        grad_output, a, target = (data.draw(arrays(s)) for s in (go_shape, shape, shape))
        check_gradients(
            lambda g, x, t: record.apply(node_cls, (g, x, t), reduction=reduction),
            grad_output,
            a,
            target,
        )
        return
    dim = data.draw(st.integers(0, len(shape) - 1), label="dim")
    grad_output, output = data.draw(arrays(shape)), data.draw(arrays(shape))
    check_gradients(lambda g, y: record.apply(node_cls, (g, y), dim=dim), grad_output, output)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@SETTINGS
@given(data=st.data())
def test_nll_loss_backward_that_create_graph_records(reduction, data):
    n, classes = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    labels = hnp.arrays(np.int64, (n,), elements=st.integers(0, classes - 1))
    target = torch.tensor(data.draw(labels, label="target"))
    log_probs = data.draw(arrays((n, classes)), label="log_probs")
    grad_output = data.draw(arrays((n,) if reduction == "none" else ()), label="grad_output")

    def second(g, x):
        x = x if x.requires_grad else x.detach().requires_grad_()  # finite differences' leaves
        loss = F.nll_loss(x, target, reduction=reduction)
        (first,) = torch.autograd.grad(loss, x, grad_outputs=g, create_graph=True)
        return first

    check_gradients(second, grad_output, log_probs)


# the loss, its input's values and its target's offsets from the input: off the kinks at ±1
LOSS_BACKWARDS = {
    "SmoothL1LossBackwardBackward0": (F.smooth_l1_loss, ANY, away_from(-1, 1)),
    "HuberLossBackwardBackward0": (F.huber_loss, ANY, away_from(-1, 1)),
    # probabilities and targets inside (0, 1); the target's gradient goes through LogitBackward0
    "BinaryCrossEntropyBackwardBackward0": (F.binary_cross_entropy, floats(0.1, 0.9), None),
}


@pytest.mark.parametrize("node", sorted(LOSS_BACKWARDS))
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@SETTINGS
@given(data=st.data())
def test_loss_backwards_that_create_graph_records(node, reduction, data):
    loss_fn, values, offsets = LOSS_BACKWARDS[node]
    shape = data.draw(SHAPES, label="shape")
    a = data.draw(arrays(shape, values), label="input")
    if offsets is None:
        target = data.draw(arrays(shape, floats(0.05, 0.95)), label="target")
    else:
        target = a - data.draw(arrays(shape, offsets), label="offsets")
    grad_output = data.draw(arrays(shape if reduction == "none" else ()), label="grad_output")

    def firsts(g, x, t):
        x, t = (v if v.requires_grad else v.detach().requires_grad_() for v in (x, t))
        loss = loss_fn(x, t, reduction=reduction)
        first = torch.autograd.grad(loss, (x, t), grad_outputs=g, create_graph=True)
        assert first[0].grad_fn.name() == node
        return torch.stack(first)

    check_gradients(firsts, grad_output, a, target)


@SETTINGS
@given(data=st.data())
def test_hardswish_backward_that_create_graph_records(data):
    x = data.draw(arrays(SHAPES, away_from(-3, 3)), label="x")
    grad_output = data.draw(arrays(x.shape), label="grad_output")

    def first(g, a):
        a = a if a.requires_grad else a.detach().requires_grad_()
        (slope,) = torch.autograd.grad(F.hardswish(a), a, grad_outputs=g, create_graph=True)
        assert slope.grad_fn.name() == "HardswishBackwardBackward0"
        return slope

    check_gradients(first, grad_output, x)


@SETTINGS
@given(data=st.data())
def test_glu_backward_that_create_graph_records(data):
    shape = data.draw(SHAPES_1D_UP, label="shape")
    dim = data.draw(st.integers(0, len(shape) - 1), label="dim")
    x = data.draw(arrays(shape[:dim] + (2 * shape[dim],) + shape[dim + 1 :]), label="x")
    grad_output = data.draw(arrays(shape), label="grad_output")

    def first(g, a):
        a = a if a.requires_grad else a.detach().requires_grad_()
        (slope,) = torch.autograd.grad(F.glu(a, dim), a, grad_outputs=g, create_graph=True)
        assert slope.grad_fn.name() == "GluBackwardBackward0"
        return slope

    check_gradients(first, grad_output, x)


@SETTINGS
@given(data=st.data())
def test_prelu_backward_that_create_graph_records(data):
    x = data.draw(arrays(SHAPES_1D_UP, NONZERO), label="x")
    channels = x.shape[1] if x.ndim >= 2 else 1
    weight = data.draw(arrays((data.draw(st.sampled_from([1, channels])),)), label="weight")
    grad_output = data.draw(arrays(x.shape), label="grad_output")

    def firsts(g, a, w):
        a, w = (v if v.requires_grad else v.detach().requires_grad_() for v in (a, w))
        grads = torch.autograd.grad(F.prelu(a, w), (a, w), grad_outputs=g, create_graph=True)
        assert grads[0].grad_fn.name() == "PreluKernelBackwardBackward0"
        return torch.cat([grads[0].reshape(-1), grads[1].reshape(-1)])

    check_gradients(firsts, grad_output, x, weight)


@SETTINGS
@given(x=arrays(SHAPES_1D_UP), v=arrays(()))
def test_fill_with_a_tensor_sends_the_summed_grad_to_the_value(x, v):
    # FillBackward3: y[0] = v with a 0-dim tensor v fills a view of y, so v gets its gradient
    def op(x, v):
        y = x * 1
        y[0] = v
        return y

    check_gradients(op, x, v)


# ***** second derivatives: a backward recorded with create_graph=True, differentiated again *****


def _two_rows(t):
    """t's values in a row, and again shifted by 0.5: two or more values, never all equal."""
    return torch.stack([t.reshape(-1), t.reshape(-1) + 0.5])


def _first_index(t):
    """gather's index: the first element along the last dim, twice."""
    return torch.zeros(tuple(t.shape[:-1]) + (2,), dtype=torch.int64)


AWAY_FROM_ONE = NONZERO.filter(lambda v: abs(abs(v) - 1) > 0.05)  # hardtanh's corners at ±1

SECOND_ORDER = {
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), NONZERO),
    "elu": (F.elu, NONZERO),
    "selu": (F.selu, NONZERO),
    "celu": (lambda x: F.celu(x, 0.5), NONZERO),
    "gelu": (F.gelu, ANY),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), ANY),
    "softplus": (lambda x: F.softplus(x, 2, 10), ANY),
    "hardtanh": (F.hardtanh, AWAY_FROM_ONE),
    "silu": (F.silu, ANY),
    "mish": (F.mish, ANY),
    "relu6": (F.relu6, NONZERO),
    "threshold": (lambda x: F.threshold(x, 0.1, 2.0), NONZERO),
    "softshrink": (lambda x: F.softshrink(x, 0.1) * x, NONZERO),
    "hardshrink": (lambda x: F.hardshrink(x, 0.1) * x, NONZERO),
    "sinh": (torch.sinh, ANY),
    "cosh": (torch.cosh, ANY),
    "tan": (torch.tan, floats(-1.2, 1.2)),
    "exp2": (torch.exp2, ANY),
    "expm1": (torch.expm1, ANY),
    "atan": (torch.atan, ANY),
    "erf": (torch.erf, ANY),
    "cumsum": (lambda x: (x * x).cumsum(-1) if x.ndim else x * x, ANY),
    "prod": (lambda x: (x * x).prod(), NONZERO),
    "prod_dim": (lambda x: (x * x).prod(-1) if x.ndim else (x * x).prod(), NONZERO),
    "pow_tensor_tensor": (lambda x: x ** (x * 0.5), POSITIVE),
    "pow_number_tensor": (lambda x: 2.5**x, ANY),
    "logsumexp": (lambda x: x.logsumexp(-1) if x.ndim else x.exp(), ANY),
    "repeat": (lambda x: (x * x).repeat(2, *([3] * x.ndim)), ANY),
    "var": (lambda x: _two_rows(x * x).var(), ANY),
    "var_dim": (lambda x: _two_rows(x * x).var(0), ANY),
    "std": (lambda x: _two_rows(x * x).std(), ANY),
    "std_dim": (lambda x: _two_rows(x * x).std(0, correction=0), ANY),
    "norm": (lambda x: x.norm() * x.sum(), NONZERO),
    "norm_dim": (lambda x: x.norm(dim=-1) * x.sum() if x.ndim else x * x, NONZERO),
    "norm_l1": (lambda x: x.norm(1) * x.sum(), NONZERO),
    # picking values: ties would move under a finite difference, so the values are distinct
    "sort": (lambda x: x.exp().sort(-1)[0] if x.ndim else x * x, GRID),
    "topk": (lambda x: x.exp().topk(1)[0] if x.ndim else x * x, GRID),
    "max_dim": (lambda x: x.exp().max(-1)[0] if x.ndim else x * x, GRID),
    "gather": (lambda x: (x * x).gather(-1, _first_index(x)) if x.ndim else x * x, ANY),
    "masked_fill": (lambda x: (x * x).masked_fill(x > 0, 2.0), NONZERO),
    "split": (lambda x: torch.cat([p * p * i for i, p in enumerate(x.reshape(-1).split(1))]), ANY),
    "chunk_one_used": (lambda x: x.reshape(-1).chunk(2)[0] ** 3, ANY),
    "index": (lambda x: (x * x).reshape(-1)[torch.tensor([0, 0, -1])], ANY),
    "floor": (lambda x: x.floor() * x * x, floats(0.05, 0.95)),  # away from the steps
    "sign": (lambda x: x.sign() * x * x, NONZERO),
    "log1p": (lambda x: (x * x).log1p(), ANY),
    "log2": (lambda x: (x * x).log2(), NONZERO),
    "log10": (lambda x: (x * x).log10(), NONZERO),
    "rsqrt": (lambda x: (x * x).rsqrt(), NONZERO),
    "asin": (torch.asin, floats(-0.9, 0.9)),
    "acos": (torch.acos, floats(-0.9, 0.9)),
    "atanh": (torch.atanh, floats(-0.9, 0.9)),
    "asinh": (torch.asinh, ANY),
    "erfc": (torch.erfc, ANY),
    "index_mask": (lambda x: (x * x)[x > 0] if (x > 0).any() else x * x, NONZERO),
    "flip": (lambda x: (x * x).flip(0) if x.ndim else x * x, ANY),
    "roll": (lambda x: (x * x).roll(1, 0) if x.ndim else x * x, ANY),
    "tril": (lambda x: (x * x).tril() if x.ndim == 2 else x * x, ANY),
    "triu": (lambda x: (x * x).triu(1) if x.ndim == 2 else x * x, ANY),
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
@SETTINGS
@given(data=st.data())
def test_second_derivatives(name, data):
    op, elements = SECOND_ORDER[name]
    shape = data.draw(SHAPES, label="shape")
    x = data.draw(arrays(shape, elements, unique=elements is GRID), label="x")
    out_shape = tuple(op(torch.tensor(x)).shape)  # reductions and repeat change the shape
    grad_output = data.draw(arrays(out_shape), label="grad_output")

    def first_derivative(g, a):
        a = a if a.requires_grad else a.detach().requires_grad_()  # finite differences' leaves
        (first,) = torch.autograd.grad(op(a), a, grad_outputs=g, create_graph=True)
        return first

    check_gradients(first_derivative, grad_output, x)


@pytest.mark.parametrize("node", ["LeakyReluBackwardBackward0", "HardtanhBackwardBackward0"])
def test_piecewise_linear_backward_ops_record_again(node):
    """A third derivative through them: their backward is themselves (and zeros for self)."""
    x = torch.tensor([-1.5, 0.5, 2.0], dtype=torch.float64, requires_grad=True)
    op = F.leaky_relu if node == "LeakyReluBackwardBackward0" else F.hardtanh
    (first,) = torch.autograd.grad((op(x) ** 2).sum(), x, create_graph=True)
    assert first.grad_fn.name() == node
    (second,) = torch.autograd.grad(first.sum(), x, create_graph=True)
    third = torch.autograd.grad(second.sum(), x, allow_unused=True)[0]
    slope = np.where(x.detach().numpy() > 0, 1.0, 0.01 if node.startswith("Leaky") else 0.0)
    if node.startswith("Hardtanh"):
        slope = np.where(np.abs(x.detach().numpy()) < 1, 1.0, 0.0)
    np.testing.assert_allclose(second.detach().numpy(), 2 * slope**2)
    assert third is None or np.all(third.numpy() == 0)
