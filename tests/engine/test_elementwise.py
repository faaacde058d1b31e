"""The pieces of PyTorch's elementwise float32 kernels: Sleef's functions (engine/sleef.py),
glibc's (engine/libm.py), oneDNN's gelu (engine/onednn.py), and how cpu_kernel_vec splits a
tensor between them (numerics.vectorized_loop).

That their bits are PyTorch's is checked against recorded PyTorch results (test_numerics.py,
tests/engine/golden/areas/exactness2.json); here each piece is checked on its own terms.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine import elementwise, libm, numerics, onednn, sleef

F = np.float32
RNG = np.random.default_rng(22)
NAN, INF = float("nan"), float("inf")


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """How many float32 steps apart (the same sign assumed)."""
    return np.abs(got.view(np.int32).astype(np.int64) - want.view(np.int32).astype(np.int64))


# ***** Sleef *****

SLEEF = {
    "exp": (sleef.exp, np.exp, (-80, 80)),
    "log": (sleef.log, np.log, (1e-3, 1e3)),
    "expm1": (sleef.expm1, np.expm1, (-10, 80)),
    "log1p": (sleef.log1p, np.log1p, (-0.9, 1e3)),
    "tanh": (sleef.tanh, np.tanh, (-9, 9)),
    "sinh": (sleef.sinh, np.sinh, (-80, 80)),
    "cosh": (sleef.cosh, np.cosh, (-80, 80)),
}


@pytest.mark.parametrize("name", list(SLEEF))
def test_sleef_is_within_an_ulp_and_not_simply_rounded(name: str) -> None:
    function, reference, (low, high) = SLEEF[name]
    x = RNG.uniform(low, high, 50_000).astype(F)
    x[:20_000] = (RNG.standard_normal(20_000) * 2).astype(F).clip(low, high)
    got = function(x)
    rounded = reference(x.astype(np.float64)).astype(F)
    assert got.dtype == np.float32 and got.shape == x.shape
    assert _ulps(got, rounded).max() <= 1  # Sleef's u10: within one ulp
    # ... and not the correctly rounded value everywhere: that would not be Sleef's code
    assert (got != rounded).any()


@pytest.mark.parametrize(
    ("name", "inputs", "want"),
    [
        ("expm1", [0.0, -0.0, INF, -INF, NAN, 89.0, -17.0], [0.0, -0.0, INF, -1, NAN, INF, -1]),
        ("log1p", [0.0, -0.0, -1, -2, INF, NAN], [0.0, -0.0, -INF, NAN, INF, NAN]),
        ("tanh", [0.0, -0.0, INF, -INF, NAN, 9.0, -20.0], [0.0, -0.0, 1, -1, NAN, 1, -1]),
        ("sinh", [0.0, -0.0, INF, -INF, NAN, 90.0], [0.0, -0.0, INF, -INF, NAN, INF]),
        ("cosh", [0.0, -0.0, INF, -INF, NAN, -90.0], [1, 1, INF, INF, NAN, INF]),
        ("exp", [0.0, -INF, INF, NAN, -104.5, 100.5], [1, 0, INF, NAN, 0, INF]),
        ("log", [0.0, -1, INF, NAN, 1], [-INF, NAN, INF, NAN, 0]),
    ],
)
def test_sleef_edge_values(name: str, inputs: list, want: list) -> None:
    got = SLEEF[name][0](np.array(inputs, F))
    want = np.array(want, F)
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))  # -0 stays -0


def test_log1p_keeps_the_bits_of_a_tiny_x_and_takes_log_of_a_huge_one() -> None:
    tiny = np.array([1e-30, -1e-30, 3e-8], F)
    assert np.array_equal(sleef.log1p(tiny), tiny)  # log1p(x) = x below x²/2's reach
    huge = np.array([2e38, 3e38], F)
    assert np.array_equal(sleef.log1p(huge), sleef.log(huge))


def test_sleef_gives_each_element_the_same_bits_whatever_its_neighbours() -> None:
    # the edge-case masks and the ordinary-range shortcuts must not change a value
    x = (RNG.standard_normal(64) * 3).astype(F)
    for function, _, _ in SLEEF.values():
        arg = np.abs(x) if function is sleef.log else x
        alone = np.array([function(arg[i : i + 1])[0] for i in range(arg.size)], F)
        with_edges = function(np.concatenate([arg, np.array([NAN, INF, -INF, 0.0], F)]))
        assert np.array_equal(function(arg), alone, equal_nan=True)  # log1p below -1: nan
        assert np.array_equal(with_edges[: arg.size], alone, equal_nan=True)


# ***** fused multiply-adds checked at once *****


def _halfway_case() -> tuple:
    """x·y + z whose float64 sum lands halfway between two float32s although the exact value
    does not (so float64-then-float32 rounds the wrong way), and the fused result."""
    x = F(2**-12 * (1 + 2**-18))
    y = F(2**-12 * (1 - 2**-18))
    z = F(1 + 2**-23)
    return np.array([x, F(0.5)]), np.array([y, F(0.25)]), np.array([z, F(1)]), z


def test_fused_sums_flag_a_rounded_halfway_sum_but_not_a_true_tie() -> None:
    x, y, z, want = _halfway_case()
    fused = sleef._Fused(rows=2, shape=(2,))
    wrong = fused(x, y, z)
    assert wrong[0] != want  # the float64 sum rounded twice
    assert not fused.exact()
    tie = sleef._Fused(rows=1, shape=(1,))
    # 1 + 2^-24 is itself halfway between two float32s: exact in float64, a tie that rounds
    # to even whichever way it is computed
    assert tie(F(2**-12), F(2**-12), F(1)) == F(1)
    assert tie.exact()


def test_a_call_with_a_rounded_halfway_sum_runs_again_with_careful_steps() -> None:
    x, y, z, want = _halfway_case()

    @sleef._checked_once(rows=1)
    def multiply_add(x, y, z, fma=sleef._fma):
        return fma(x, y, z)

    got = multiply_add(x, y, z)
    assert got[0] == want
    assert np.array_equal(got, numerics.fused_multiply_add(x.astype(F), y.astype(F), z.astype(F)))


# ***** glibc *****


@pytest.mark.parametrize(
    ("name", "reference", "ulps"),
    [
        ("exp", np.exp, 1),
        ("log", np.log, 1),
        ("log1p", np.log1p, 1),
        ("tanh", np.tanh, 2),
        ("erf", None, 1),
    ],
)
def test_libm_is_glibcs_own_rounding(name: str, reference, ulps: int) -> None:
    if reference is None:
        reference = np.vectorize(math.erf)
    x = (RNG.standard_normal(20_000) * 2).astype(F)
    if name in ("log", "log1p"):
        x = np.abs(x)
    got = getattr(libm, name)(x)
    rounded = reference(x.astype(np.float64)).astype(F)
    assert libm.available()
    assert _ulps(got, rounded).max() <= ulps
    assert (got != rounded).any()  # not correctly rounded: the reason it is called at all


def test_libm_pow_broadcasts_and_keeps_shapes() -> None:
    base = np.abs(RNG.standard_normal((3, 4))).astype(F) + F(0.1)
    got = libm.pow(base, F(1.5))
    assert got.shape == (3, 4) and got.dtype == np.float32
    assert _ulps(got, (base.astype(np.float64) ** 1.5).astype(F)).max() <= 1
    assert libm.exp(np.array(0.5, F)).shape == ()


@pytest.mark.parametrize(("name", "algorithm"), [("log", libm._logf), ("log1p", libm._log1pf)])
def test_glibcs_logf_and_log1pf_in_numpy_are_glibcs_own(name: str, algorithm) -> None:
    # past a few elements these run in numpy (one call per element costs more): every bit must
    # be the library's, over the whole range, subnormals and edges included
    x = np.concatenate(
        [
            RNG.integers(0, 0x7F800000, 200_000, dtype=np.uint32).view(F),
            -RNG.integers(0, 0x3F800000, 50_000, dtype=np.uint32).view(F),
            RNG.uniform(-0.99, 3, 50_000).astype(F),
            np.array([0.0, -0.0, -1, -2, INF, -INF, NAN, 1e-40, 1.4e-45, 3.4e38], F),
        ]
    )
    call = libm._FUNCTIONS[name + "f"]
    want = np.array([call(v) for v in x.tolist()], F)
    with np.errstate(all="ignore"):
        got = algorithm(x)
    assert np.array_equal(got.view(np.int32), want.view(np.int32))  # nans' signs too
    assert np.array_equal(getattr(libm, name)(x[:10]), got[:10], equal_nan=True)  # the calls


def test_without_glibc_its_algorithms_or_the_rounded_float64_function(monkeypatch) -> None:
    monkeypatch.setattr(libm, "_FUNCTIONS", {})
    x = np.linspace(0.1, 3, 50, dtype=F)
    assert not libm.available()
    assert np.array_equal(libm.exp(x), np.exp(x.astype(np.float64)).astype(F))
    assert np.array_equal(libm.log(x[:3]), libm._logf(x[:3]))
    assert np.array_equal(libm.pow(x, F(2.5)), (x.astype(np.float64) ** np.float64(2.5)).astype(F))


# ***** how cpu_kernel_vec splits a tensor *****


def _paths(array: np.ndarray, *others: np.ndarray) -> np.ndarray:
    """1 where an element went through the vector lambda, 2 where through the scalar one."""
    return numerics.vectorized_loop(
        lambda x, *_: np.ones_like(x), lambda x, *_: np.full_like(x, 2), array, *others
    )


def test_a_contiguous_tensor_takes_whole_pairs_of_vectors_then_leftovers() -> None:
    paths = _paths(np.zeros(40, F))
    assert paths.tolist() == [1] * 32 + [2] * 8
    assert _paths(np.zeros(15, F)).tolist() == [2] * 15
    assert _paths(np.zeros((), F)).tolist() == 2


def test_past_the_grain_size_each_thread_has_its_own_leftovers() -> None:
    paths = _paths(np.zeros(40_002, F))  # two halves of 20001: 1250 pairs and 1 left each
    assert paths[20_000] == 2 and paths[-1] == 2
    assert (paths == 2).sum() == 2


def test_layouts_tensoriterator_cannot_flatten_go_run_by_run() -> None:
    base = np.zeros((6, 40), F)
    assert np.array_equal(_paths(base.T), _paths(base).T)  # transposed: still one run
    rows = _paths(base[:, :36])  # a slice: each row of 36 has its own leftovers
    assert (rows == np.array([1] * 32 + [2] * 4)).all()
    assert (_paths(base[:, ::2]) == 2).all()  # strided along the run: scalar throughout
    assert (_paths(base, base.T.copy().T) == 2).all()  # inputs laid out differently


def test_a_broadcast_number_keeps_the_vectors_a_broadcast_row_splits_them() -> None:
    base = np.zeros((32, 4), F)
    assert (_paths(base, np.float32(2)) == 1).all()
    assert (_paths(base, np.zeros(4, F)) == 2).all()  # runs of 4: too short for vectors
    wide = np.zeros((3, 40), F)
    assert (_paths(wide, np.zeros(40, F)) == np.array([1] * 32 + [2] * 8)).all()


# ***** oneDNN's gelu and the kernels *****


def test_onednn_gelu_is_near_the_erf_form_and_keeps_its_edges() -> None:
    x = np.linspace(-8, 8, 4001, dtype=F)
    exact = np.array([v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x.astype(float)])
    assert np.abs(onednn.gelu(x) - exact).max() < 2e-6
    slope = np.array([0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x.astype(float)]) + (
        x * np.exp(-0.5 * x.astype(float) ** 2) / math.sqrt(2 * math.pi)
    )
    assert np.abs(onednn.gelu_backward(np.ones_like(x), x) - slope).max() < 2e-6
    edges = onednn.gelu(np.array([0.0, 100.0, -100.0, NAN], F))
    assert edges[0] == 0 and edges[1] == 100 and edges[2] == 0 and np.isnan(edges[3])


def test_gelu_goes_to_onednn_only_where_pytorch_sends_it() -> None:
    x = (RNG.standard_normal((8, 6)) * 2).astype(F)
    assert np.array_equal(elementwise.gelu(x, "none"), onednn.gelu(x))
    transposed = elementwise.gelu(np.ascontiguousarray(x.T).T, "none")  # PyTorch's own kernel
    assert not np.array_equal(transposed, onednn.gelu(x))
    assert np.allclose(transposed, onednn.gelu(x), rtol=1e-6, atol=1e-6)
    one = x[:1, :1]
    assert elementwise.gelu(one, "none")[0, 0] == x[0, 0] * F(0.5) * (
        F(1) + libm.erf(x[0, 0] * F(math.sqrt(0.5)))
    )


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_other_dtypes_keep_numpys_formulas(dtype) -> None:
    x = np.linspace(-3, 3, 40).astype(dtype)
    with np.errstate(over="ignore"):
        assert elementwise.sigmoid(x).dtype == dtype
        assert np.allclose(elementwise.sigmoid(x), 1 / (1 + np.exp(-x)))
        assert elementwise.silu(x).dtype == dtype
        assert elementwise.softplus(x, 1, 20).dtype == dtype
        assert elementwise.mish(x).dtype == dtype
    assert elementwise.expm1(x).dtype == dtype and elementwise.sinh(x).dtype == dtype
