"""engine.printing must print tensors exactly as PyTorch 2.13 does.

The expected strings were recorded from real PyTorch by tools/record_printing_goldens.py;
this test never imports torch.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine.printing import NUMPY_DTYPES, tensor_repr

GOLDEN = Path(__file__).parent / "golden" / "printing.json"
CASES: list[dict[str, Any]] = json.loads(GOLDEN.read_text())

NONFINITE = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}


def decode(value: Any) -> Any:
    """Undo the recorder's spelling of nan/inf as strings."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, str):
        return NONFINITE[value]
    return value


def rebuild(case: dict[str, Any]) -> np.ndarray:
    # The nested list alone loses shapes like (0, 3), hence the reshape.
    values = np.array(decode(case["values"]), dtype=NUMPY_DTYPES[case["dtype"]])
    return values.reshape(case["shape"])


def test_golden_file_is_broad() -> None:
    assert len(CASES) >= 80


@pytest.mark.parametrize("case", CASES, ids=[c["expr"] for c in CASES])
def test_matches_pytorch(case: dict[str, Any]) -> None:
    got = tensor_repr(
        rebuild(case),
        case["dtype"],
        requires_grad=case["requires_grad"],
        grad_fn=case["grad_fn"],
    )
    assert got == case["repr"]


def test_rebuild_keeps_float32_bits() -> None:
    # 0.1 stored as float32 must print as float32 data does, not as the double 0.1.
    case = next(c for c in CASES if c["expr"] == "torch.tensor([0.1, 0.8])")
    assert rebuild(case).dtype == np.float32
    assert tensor_repr(rebuild(case), "float32") == "tensor([0.1000, 0.8000])"


def test_float32_threshold_differs_from_float64() -> None:
    # float32(1e-4) is just below 1e-4, which alone switches to scientific notation.
    assert tensor_repr(np.array([1e-4, 1.0], dtype=np.float32), "float32") == (
        "tensor([1.0000e-04, 1.0000e+00])"
    )
    assert tensor_repr(np.array([1e-4, 1.0]), "float64") == (
        "tensor([1.0000e-04, 1.0000e+00], dtype=torch.float64)"
    )


def test_requires_grad_hidden_by_grad_fn() -> None:
    text = tensor_repr(np.array(12.0, dtype=np.float32), "float32", requires_grad=True)
    assert text == "tensor(12., requires_grad=True)"
    text = tensor_repr(
        np.array(12.0, dtype=np.float32), "float32", requires_grad=True, grad_fn="MulBackward0"
    )
    assert text == "tensor(12., grad_fn=<MulBackward0>)"


def test_unknown_dtype_rejected() -> None:
    with pytest.raises(ValueError):
        tensor_repr(np.array([1.0]), "complex64")
