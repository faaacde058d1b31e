"""engine.random must draw exactly what PyTorch 2.13's CPU generator draws.

The expected numbers were recorded from real PyTorch by tools/record_random_goldens.py;
this test never imports torch. Every float32 and float64 value is compared bit for bit.
"""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import engine.random as er
from engine.random import DEFAULT_SEED, Generator

GOLDEN = Path(__file__).parent / "golden" / "random.json"
DATA: dict[str, Any] = json.loads(GOLDEN.read_text())
CASES: list[dict[str, Any]] = DATA["cases"]
BY_NAME = {c["name"]: c for c in CASES}
REPO = Path(__file__).resolve().parents[2]


def replay(gen: Generator, call: list[Any]) -> np.ndarray | None:
    """Make one recorded call on our generator (see the recorder for the call format)."""
    op, *args = call
    if op == "manual_seed":
        gen.manual_seed(args[0])
        return None
    if op == "rand":
        return gen.rand(tuple(args[0]), args[1])
    if op == "randn":
        return gen.randn(tuple(args[0]), args[1])
    if op == "uniform":
        shape, low, high, dtype = args
        return gen.uniform(tuple(shape), low, high, dtype)
    if op == "normal":
        shape, mean, std, dtype = args
        return gen.normal(tuple(shape), mean, std, dtype)
    if op == "randint":
        low, high, shape = args
        return gen.randint(low, high, tuple(shape))
    if op == "randperm":
        return gen.randperm(args[0])
    raise ValueError(f"unknown op {op}")


def expected_array(result: dict[str, Any]) -> np.ndarray:
    # Python floats hold float32 values exactly, so this cast loses nothing.
    return np.array(result["values"], dtype=result["dtype"]).reshape(result["shape"])


def assert_identical(got: np.ndarray, want: np.ndarray, where: str) -> None:
    assert got.dtype == want.dtype, f"{where}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{where}: shape {got.shape} != {want.shape}"
    flat_got, flat_want = got.reshape(-1), want.reshape(-1)
    if flat_got.tobytes() != flat_want.tobytes():  # bits: tells -0.0 from 0.0, no tolerance
        bits = f"u{got.itemsize}"
        differ = np.flatnonzero(flat_got.view(bits) != flat_want.view(bits))
        first = differ[0]
        pytest.fail(
            f"{where}: {differ.size} of {got.size} differ; first at {first}: "
            f"{flat_got[first]!r} != {flat_want[first]!r}"
        )


def test_golden_file_is_broad() -> None:
    assert DATA["torch_version"].startswith("2.13.0")
    assert len(CASES) >= 40
    ops = {call[0] for c in CASES for call in c["calls"]}
    assert {"rand", "randn", "randint", "randperm", "uniform", "normal", "manual_seed"} <= ops
    sizes = {
        call[1][0]
        for c in CASES
        for call in c["calls"]
        if call[0] in ("rand", "randn") and len(call[1]) == 1
    }
    assert {0, 1, 2, 3, 15, 16, 17, 31, 32, 100} <= sizes
    assert {c["capability"] for c in CASES} == {"avx2", "default"}


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_draws_match_pytorch(case: dict[str, Any]) -> None:
    # The case names PyTorch's kernel family, so this holds on any host CPU.
    if case["seed"] is None:
        gen = Generator(capability=case["capability"])
    else:
        gen = Generator(capability=case["capability"]).manual_seed(case["seed"])
    assert gen.initial_seed() == case["initial_seed"]
    for i, (call, result) in enumerate(zip(case["calls"], case["results"], strict=True)):
        got = replay(gen, call)
        if result is None:
            assert got is None
            continue
        assert_identical(got, expected_array(result), f"call {i} {call}")


def test_module_functions_use_the_default_generator() -> None:
    case = BY_NAME["interleaved-brief"]
    gen = er.manual_seed(0)
    assert gen is er.default_generator
    gen.capability = "avx2"  # the recorded kernels, whatever this host's CPU
    assert er.initial_seed() == 0
    outputs = [er.randn((3,)), er.randn((20,)), er.rand((5,))]
    for got, result in zip(outputs, case["results"], strict=True):
        assert_identical(got, expected_array(result), "module function")
    assert er.randint(0, 10, (4,)).dtype == np.int64
    assert er.randperm(5).dtype == np.int64


def test_fresh_process_starts_from_torch_generator_default_seed() -> None:
    """An unseeded process draws what a fresh torch.Generator() draws."""
    code = (
        "import json, engine.random as r\n"
        "r.default_generator.capability = 'avx2'\n"
        "out = [r.initial_seed(), r.rand((5,)).tolist(), r.randn((20,)).tolist(),"
        " r.randn((3,), 'float64').tolist(), r.randperm(8).tolist()]\n"
        "print(json.dumps(out))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, check=True, capture_output=True, text=True
    )
    seed, *values = json.loads(proc.stdout)
    assert seed == DEFAULT_SEED == DATA["default_seed"]
    case = BY_NAME["fresh-generator"]
    for got, result in zip(values, case["results"], strict=True):
        assert_identical(np.array(got, dtype=result["dtype"]), expected_array(result), "fresh")


def test_state_snapshot_includes_the_spare_normal() -> None:
    gen = Generator(3)
    gen.randn((1,), "float64")  # leaves Box-Muller's second sample waiting
    state = gen.get_state()
    first = [gen.randn((1,), "float64"), gen.rand((4,)), gen.randn((3,))]
    gen.set_state(state)
    again = [gen.randn((1,), "float64"), gen.rand((4,)), gen.randn((3,))]
    for a, b in zip(first, again, strict=True):
        assert_identical(a, b, "after set_state")


DRAWS = {
    "rand": lambda g: g.rand((2,)),
    "randn": lambda g: g.randn((1,), "float64"),
    "randn of 16 or more": lambda g: g.randn((17,)),
    "uniform": lambda g: g.uniform((2,), -1.0, 1.0),
    "normal": lambda g: g.normal((2,), 1.0, 2.0),
    "exponential": lambda g: g.exponential((2,)),
    "multinomial": lambda g: g.multinomial(np.array([0.5, 0.5]), 1, False),
    "bernoulli": lambda g: g.bernoulli(np.array([0.5, 0.5])),
    "bernoulli_scalar": lambda g: g.bernoulli_scalar((2,), 0.5),
    "randint": lambda g: g.randint(0, 5, (2,)),
    "randint of a 64-bit range": lambda g: g.randint(0, 2**40, (2,)),
    "randperm": lambda g: g.randperm(4),
}


@pytest.mark.parametrize("draw", DRAWS.values(), ids=DRAWS.keys())
def test_every_draw_before_a_manual_seed_is_marked_unseeded(draw) -> None:
    """What the tracer's unseeded_random reads: every kind of draw passes the one check."""
    unseeded = Generator(0).start_unseeded(0)
    assert not unseeded.drew_unseeded
    got = draw(unseeded)
    assert unseeded.drew_unseeded
    assert_identical(got, draw(Generator(0)), "a stand-in seed draws as that seed")
    seeded = Generator(0).start_unseeded(0).manual_seed(7)
    draw(seeded)
    assert not seeded.drew_unseeded


def test_an_unseeded_draw_stays_marked_after_a_seed_and_nothing_drawn_is_no_draw() -> None:
    gen = Generator(0).start_unseeded(0)
    gen.rand((0,))
    gen.randperm(1)  # a permutation of one takes no draw
    assert not gen.drew_unseeded
    gen.rand((1,))
    gen.manual_seed(0)
    gen.rand((1,))
    assert gen.drew_unseeded and gen.seeded


def test_only_the_default_generator_starts_unseeded() -> None:
    assert er.TorchGenerator().seeded  # torch.Generator() starts from a fixed seed in PyTorch
    fresh = subprocess.run(
        [sys.executable, "-c", "import engine.random as r; print(r.default_generator.seeded)"],
        cwd=REPO, check=True, capture_output=True, text=True,
    )  # fmt: skip
    assert fresh.stdout == "False\n"


def test_seed_range_and_wrapping() -> None:
    assert Generator(-1).initial_seed() == 2**64 - 1
    assert Generator(-(2**63)).initial_seed() == 2**63
    for bad in (2**64, -(2**63) - 1):
        with pytest.raises(ValueError):
            Generator(bad)


def test_argument_errors() -> None:
    gen = Generator(0)
    with pytest.raises(ValueError):
        gen.randint(5, 5, (2,))
    with pytest.raises(ValueError):
        gen.randperm(-1)
    with pytest.raises(TypeError):
        gen.rand((2,), "int64")
    with pytest.raises(ValueError):
        gen.normal((2,), 0.0, -1.0)
    assert gen.rand(3, "double").dtype == np.float64  # an int shape and torch's alias work


def test_capability_follows_aten_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "default")
    assert er.detect_capability() == "default"
    with pytest.raises(ValueError):
        Generator(capability="avx512")


def _exact(a: float, b: float, c: float) -> Fraction:
    return Fraction(a) * Fraction(b) + Fraction(c)


def test_fused_multiply_add_emulation_is_correctly_rounded() -> None:
    """The kernels' fused a * b + c, emulated without a hardware fma, against exact rationals."""
    rng = np.random.default_rng(5)
    n = 3000
    a = rng.standard_normal(n) * 2.0 ** rng.integers(-30, 30, n)
    b = rng.standard_normal(n) * 2.0 ** rng.integers(-30, 30, n)
    near = -(a * b) * (1 + rng.integers(-3, 4, n) * 2.0**-52)  # heavy cancellation
    c = np.where(rng.random(n) < 0.5, near, rng.standard_normal(n))
    got64 = er._fma64(a, b, c)
    want64 = [float(_exact(x, y, z)) for x, y, z in zip(a, b, c, strict=True)]
    assert got64.tolist() == want64
    a32, b32, c32 = (v.astype(np.float32) for v in (a, b, c))
    got32 = er._fma32(a32, b32, c32)
    for x, y, z, r in zip(a32.tolist(), b32.tolist(), c32.tolist(), got32, strict=True):
        exact = _exact(x, y, z)
        up, down = np.nextafter(r, np.float32(np.inf)), np.nextafter(r, np.float32(-np.inf))
        # No float32 neighbour of the result lies closer to the exact value.
        assert abs(Fraction(float(r)) - exact) <= abs(Fraction(float(up)) - exact)
        assert abs(Fraction(float(r)) - exact) <= abs(Fraction(float(down)) - exact)
