"""Making tensors: what the goldens (tools/goldens/creation.py) cannot see from printed output.

Memory shared with numpy, the legacy constructors' types, generators and their state, the default
dtype coming back for the next run, and devices failing with UnsupportedByGradtrace.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine as torch
from engine import dtypes
from engine import random as rng
from engine.snippet import reset_engine_state, run_snippet
from engine.tracer import trace_snippet
from engine.unsupported import UnsupportedByGradtrace


@pytest.fixture(autouse=True)
def _fresh_engine():
    reset_engine_state()
    yield
    reset_engine_state()


# ***** legacy constructors *****


def test_torch_tensor_is_a_float_leaf_of_the_default_dtype():
    t = torch.Tensor([1, 2, 3])
    assert type(t) is torch.Tensor and t.dtype is torch.float32 and t.is_leaf
    torch.set_default_dtype(torch.float64)
    assert torch.Tensor([1]).dtype is torch.float64


def test_legacy_types_check_dtypes_not_classes():
    longs = torch.LongTensor([1, 2])
    assert isinstance(longs, torch.LongTensor) and isinstance(longs, torch.Tensor)
    assert not isinstance(longs, torch.FloatTensor)
    assert not isinstance([1, 2], torch.LongTensor)
    assert isinstance(torch.zeros(2).long(), torch.LongTensor)


def test_parameter_still_builds_on_tensor():
    p = torch.nn.Parameter(torch.ones(2))
    assert isinstance(p, torch.Tensor) and p.requires_grad and p.is_leaf
    assert repr(p).startswith("Parameter containing:")


def test_tensor_of_a_tensor_is_a_view_that_shares_versions():
    x = torch.tensor([1.0, 2.0])
    y = torch.Tensor(x)
    y.mul_(3)
    assert x.tolist() == [3.0, 6.0] and x._version == y._version == 1
    with pytest.raises(UnsupportedByGradtrace, match="not supported by gradtrace"):
        torch.Tensor(torch.ones(1, requires_grad=True))


def test_legacy_constructor_is_traced_as_a_leaf():
    trace = trace_snippet("import torch\nx = torch.Tensor([1, 2])\ny = x * 2\n")
    assert trace["outcome"] == {"status": "ok"}, trace["outcome"]
    assert "tensor([2., 4.])" not in trace["stdout"]  # nothing printed, but the trace holds x
    assert len(trace["tensors"]) >= 2


# ***** numpy *****


@pytest.mark.parametrize("kind", [np.float64, np.float32, np.float16, np.int32, np.int64, bool])
def test_from_numpy_shares_memory_and_keeps_the_dtype(kind):
    a = np.zeros(3, dtype=kind)
    t = torch.from_numpy(a)
    assert t.dtype.np == a.dtype
    a[1] = 1
    assert t.tolist()[1] == 1
    assert t.numpy() is a  # and back again, still the same memory


def test_as_tensor_copies_only_to_change_dtype():
    a = np.arange(3.0)
    assert np.shares_memory(torch.as_tensor(a).numpy(), a)
    assert not np.shares_memory(torch.as_tensor(a, dtype=torch.float32).numpy(), a)


@settings(max_examples=100)  # cheap: more than the suite profile's few
@given(st.lists(st.one_of(st.integers(-5, 5), st.floats(-5, 5), st.booleans()), min_size=1))
def test_tensor_of_python_numbers_infers_as_pytorch(values):
    t = torch.tensor(values)
    if any(type(v) is float for v in values):
        assert t.dtype is torch.float32
    elif any(type(v) is int for v in values):
        assert t.dtype is torch.int64
    else:
        assert t.dtype is torch.bool


# ***** ranges *****


@settings(max_examples=100)
@given(
    st.floats(-50, 50, allow_nan=False),
    st.floats(0.01, 5, allow_nan=False),
    st.integers(1, 3000),
    st.sampled_from([torch.float32, torch.float64]),
)
def test_arange_length_and_values_follow_start_plus_i_step(start, step, count, dtype):
    end = start + step * count
    t = torch.arange(start, end, step, dtype=dtype)
    assert len(t) == math.ceil((end - start) / step)
    # each value is start + i * step, rounded a few times on the way (at the scale of its
    # terms, which may cancel) to the dtype
    offsets = np.arange(len(t)) * step
    exact = start + offsets
    scale = (abs(start) + offsets).astype(dtype.np)
    assert (np.abs(t.numpy().astype(np.float64) - exact) <= 3 * np.spacing(scale)).all()


# ***** dtypes *****


def test_default_dtype_is_reset_for_the_next_run():
    run_snippet("import torch\ntorch.set_default_dtype(torch.float64)\n")
    assert dtypes.default_float() is dtypes.float64  # the snippet's setting holds until ...
    reset_engine_state()  # ... the next run starts
    assert torch.tensor(1.0).dtype is torch.float32


def test_only_floats_can_be_the_default_dtype():
    with pytest.raises(TypeError, match="only floating-point types"):
        torch.set_default_dtype(torch.int64)
    assert torch.get_default_dtype() is torch.float32


def test_bfloat16_fails_clearly_wherever_a_tensor_would_hold_it():
    attempts = [
        lambda: torch.tensor([1.0], dtype=torch.bfloat16),
        lambda: torch.zeros(2).bfloat16(),
        lambda: torch.zeros(2, dtype=torch.bfloat16),
        lambda: torch.BFloat16Tensor([1.0]),
        lambda: torch.set_default_dtype(torch.bfloat16),
    ]
    for attempt in attempts:
        with pytest.raises(UnsupportedByGradtrace, match="bfloat16 .* not supported by gradtrace"):
            attempt()


@pytest.mark.parametrize("dt", [torch.float16, torch.float32, torch.float64])
def test_finfo_agrees_with_the_bits(dt):
    info = torch.finfo(dt)
    one = np.array(1, dt.np)
    assert info.eps == float(np.nextafter(one, 2 * one) - one)
    assert info.max == float(np.finfo(dt.np).max) and info.min == -info.max


# ***** random numbers *****


def test_a_generator_draws_apart_from_the_default_stream():
    torch.manual_seed(0)
    expected = torch.rand(4).tolist()
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(7)
    torch.rand(3, generator=g)
    torch.empty(2).uniform_(generator=g)
    assert torch.rand(4).tolist() == expected


def test_rng_state_round_trips_through_bytes():
    torch.manual_seed(3)
    torch.randn(5)  # leaves a spare Box-Muller sample in the state
    state = torch.get_rng_state()
    assert state.dtype is torch.uint8 and state.shape == (5056,)
    after = torch.randn(7).tolist()
    torch.manual_seed(99)
    torch.set_rng_state(state)
    assert torch.randn(7).tolist() == after
    with pytest.raises(RuntimeError, match="RNG state size"):
        torch.set_rng_state(state[:100])


def test_bernoulli_frequency_follows_p():
    torch.manual_seed(0)
    drawn = torch.bernoulli(torch.full((20000,), 0.3))
    assert abs(drawn.numpy().mean() - 0.3) < 0.02
    assert set(np.unique(drawn.numpy())) <= {0.0, 1.0}


def test_random_fill_of_a_leaf_that_requires_grad_needs_no_grad():
    w = torch.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w.uniform_()
    with torch.no_grad():
        w.normal_()
    assert w._version == 1 and w.requires_grad


def test_torch_generator_holds_pytorchs_default_seed():
    assert torch.Generator().initial_seed() == rng.DEFAULT_SEED
    with pytest.raises(UnsupportedByGradtrace, match="CUDA is not available"):
        torch.Generator("cuda")


# ***** devices *****

CUDA_ATTEMPTS = [
    lambda: torch.zeros(2, device="cuda"),
    lambda: torch.ones(2, device=torch.device("cuda:0")),
    lambda: torch.randn(2, device="cuda"),
    lambda: torch.tensor([1.0], device="cuda"),
    lambda: torch.arange(3, device="cuda"),
    lambda: torch.zeros_like(torch.ones(1), device="cuda"),
    lambda: torch.ones(2).to("cuda"),
    lambda: torch.ones(2).to(torch.device("cuda")),
    lambda: torch.ones(2).to(device="cuda", dtype=torch.float64),
    lambda: torch.ones(2).cuda(),
    lambda: torch.cuda.current_device(),
    lambda: torch.cuda.synchronize(),
]


@pytest.mark.parametrize("attempt", CUDA_ATTEMPTS)
def test_cuda_fails_the_same_clear_way(attempt):
    with pytest.raises(UnsupportedByGradtrace) as failed:
        attempt()
    assert not isinstance(failed.value, RuntimeError)  # a learner's except RuntimeError misses it
    assert str(failed.value).startswith("CUDA is not available in gradtrace: everything runs on")
    assert "not supported by gradtrace" in str(failed.value)


def test_the_cpu_is_accepted_every_way_it_is_named():
    x = torch.ones(2)
    for where in ("cpu", torch.device("cpu"), None, torch.get_default_device()):
        assert torch.zeros(1, device=where).device == torch.device("cpu")
        assert x.to(where) is x
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    assert x.to(device) is x and str(device) == "cpu"
    assert torch.cuda.device_count() == 0 and not torch.backends.mps.is_available()


def test_deepcopy_of_a_leaf_copies_values_and_grad_and_refuses_non_leaves():
    import copy

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    x.grad = torch.ones(2)
    c = copy.deepcopy(x)
    assert c is not x and c.requires_grad and c.is_leaf and c._version == 1
    assert c.grad is not x.grad and c.grad.tolist() == [1.0, 1.0]
    c.detach().mul_(3)
    assert x.tolist() == [1.0, 2.0]  # new memory
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(x * 2)
