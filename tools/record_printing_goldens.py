"""Record what real PyTorch prints for a broad set of tensors.

Run under the torch venv (the test suite itself never imports torch):

    .venv-torch/bin/python tools/record_printing_goldens.py

Writes tests/engine/golden/printing.json: one entry per case with the tensor's raw values,
shape, dtype, autograd flags and the exact repr() PyTorch gives it.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import torch

OUT = Path(__file__).resolve().parent.parent / "tests" / "engine" / "golden" / "printing.json"

# Each case is a Python expression evaluated with `torch`, `nan` and `inf` in scope.
# The seed is reset before every case so random cases are reproducible.
CASES: list[str] = [
    # --- 0-d scalars -------------------------------------------------------------------
    "torch.tensor(12.)",
    "torch.tensor(0.)",
    "torch.tensor(-0.)",
    "torch.tensor(0.1)",
    "torch.tensor(1 / 3)",
    "torch.tensor(-2.5)",
    "torch.tensor(1e-5)",
    "torch.tensor(1e-4)",
    "torch.tensor(1e10)",
    "torch.tensor(1e8)",
    "torch.tensor(123456789.)",
    "torch.tensor(nan)",
    "torch.tensor(inf)",
    "torch.tensor(-inf)",
    "torch.tensor(3)",
    "torch.tensor(-7)",
    "torch.tensor(True)",
    "torch.tensor(False)",
    "torch.tensor(2.5, dtype=torch.float64)",
    "torch.tensor(5, dtype=torch.int32)",
    "torch.tensor(0.1, dtype=torch.float16)",
    "torch.tensor(3., requires_grad=True)",
    "torch.tensor(3., requires_grad=True) * 4",
    "torch.tensor([1., 2., 3.], requires_grad=True).sum()",
    "torch.tensor([1., 2., 4.], requires_grad=True).mean()",
    "(torch.tensor(2., dtype=torch.float64, requires_grad=True) ** 2)",
    # --- 1-d: fixed, integer-valued and scientific formatting ---------------------------
    "torch.tensor([4., 5., 6.])",
    "torch.tensor([1., 2., 3.])",
    "torch.tensor([0.1, 0.8])",
    "torch.tensor([1 / 3, 2 / 3, 1.])",
    "torch.tensor([-1.5, 2.25, 0.])",
    "torch.tensor([0.99995, 0.00015])",
    "torch.tensor([1e-5, 1e10])",
    "torch.tensor([-1e-5, 1e10])",
    "torch.tensor([1e-4, 1.])",
    "torch.tensor([1e-4, 1.], dtype=torch.float64)",
    "torch.tensor([1.01e-4, 1.])",
    "torch.tensor([1., 1000.])",
    "torch.tensor([1., 1001.])",
    "torch.tensor([0.5, 500.])",
    "torch.tensor([0.5, 501.])",
    "torch.tensor([1e8, 2e8])",
    "torch.tensor([1e8, 5.])",
    "torch.tensor([99999999., 1.])",
    "torch.tensor([1e8])",
    "torch.tensor([1e9])",
    "torch.tensor([1e9, -3.])",
    "torch.tensor([1e15, 2e15])",
    "torch.tensor([123456.7, 0.5])",
    "torch.tensor([1e38, 3e38])",
    "torch.tensor([1e-100, 1e100], dtype=torch.float64)",
    "torch.tensor([1e100, 1.], dtype=torch.float64)",
    "torch.tensor([-100., 1., 20.])",
    # --- nan / inf / zeros -------------------------------------------------------------
    "torch.tensor([1., nan, inf, -inf])",
    "torch.tensor([1.5, nan])",
    "torch.tensor([100., nan])",
    "torch.tensor([1e-5, nan, -inf])",
    "torch.tensor([nan])",
    "torch.tensor([nan, inf, -inf])",
    "torch.tensor([0., 0.])",
    "torch.tensor([-0.])",
    "torch.tensor([-0., 0.])",
    "torch.tensor([-0., 1.5])",
    "torch.tensor([-0., 10.])",
    "torch.tensor([-0., 1e-6])",
    "torch.tensor([0., nan, 2.5, -0.])",
    # --- line wrapping -----------------------------------------------------------------
    "torch.arange(30.)",
    "torch.arange(100.) * 1.5",
    "torch.linspace(0, 1, 50)",
    "torch.randn(40)",
    "torch.randn(25) * 1e-6",
    "torch.arange(1000.)",
    "torch.arange(40)",
    "torch.tensor([True, False] * 20)",
    "torch.linspace(0, 1, 7, dtype=torch.float64)",
    "torch.linspace(0, 1, 6, dtype=torch.float64)",
    "torch.arange(13., dtype=torch.float64)",
    "torch.arange(14., dtype=torch.float64)",
    "torch.linspace(-1, 1, 9, requires_grad=True)",
    "torch.linspace(-1, 1, 10, requires_grad=True) * 2",
    "torch.linspace(-1, 1, 9, dtype=torch.float64, requires_grad=True).exp()",
    # --- summarisation (more than 1000 elements) ---------------------------------------
    "torch.arange(2000.)",
    "torch.arange(1001.)",
    "torch.arange(1001)",
    "torch.arange(2000) * 1000003",
    "torch.zeros(2000, dtype=torch.bool)",
    "torch.linspace(0, 1, 1500)",
    "torch.arange(3000.).reshape(3, 1000)",
    "torch.arange(3000).reshape(1000, 3)",
    "torch.arange(2000.).reshape(40, 50)",
    "torch.arange(1002.).reshape(2, 501)",
    "torch.randn(40, 40)",
    "torch.arange(2000.).reshape(2, 10, 100)",
    "torch.arange(2000.).reshape(20, 10, 10)",
    "torch.zeros(10, 10, 11)",
    "torch.arange(1200.).reshape(2, 3, 2, 100)",
    "torch.randn(2000, dtype=torch.float64, requires_grad=True) * 2",
    # --- empty tensors -----------------------------------------------------------------
    "torch.tensor([])",
    "torch.zeros(0, 3)",
    "torch.zeros(2, 0)",
    "torch.zeros(3, 0, 2)",
    "torch.zeros(0, dtype=torch.int64)",
    "torch.zeros(0, 2, dtype=torch.int64)",
    "torch.zeros(0, dtype=torch.bool)",
    "torch.zeros(0, dtype=torch.float64)",
    "torch.zeros(0, dtype=torch.int32)",
    "torch.zeros(0, requires_grad=True)",
    "torch.zeros(0, 3, requires_grad=True) * 2",
    "torch.zeros(0, dtype=torch.float64, requires_grad=True) + 1",
    # --- integers and bools ------------------------------------------------------------
    "torch.tensor([1, 2])",
    "torch.tensor([1, -2, 300])",
    "torch.arange(-5, 5)",
    "torch.tensor([2**62, -(2**62)])",
    "torch.randint(-10**12, 10**12, (20,))",
    "torch.arange(6).reshape(2, 3)",
    "torch.arange(24).reshape(2, 3, 4)",
    "torch.arange(5, dtype=torch.int32)",
    "torch.arange(30, dtype=torch.int32).reshape(5, 6)",
    "torch.tensor([True, False])",
    "torch.tensor([[True, False], [False, True]])",
    "torch.tensor([1., 2., 3.]) > 1.5",
    # --- 2-d ---------------------------------------------------------------------------
    "torch.tensor([[1.5, -2.], [3., 4e-5]])",
    "torch.tensor([[1., 2.], [3., 4.]])",
    "torch.eye(3)",
    "torch.arange(12.).reshape(3, 4)",
    "torch.randn(4, 5)",
    "torch.randn(3, 30)",
    "torch.randn(1, 100)",
    "torch.randn(3, 3) * 1e5",
    "torch.tensor([[nan, 1.], [inf, -0.]])",
    "torch.tensor([[1., 2.], [3., 4.]], dtype=torch.float64)",
    "torch.tensor([[1., 2.], [3., 4.]], dtype=torch.float16)",
    "torch.tensor([[1e-3, 1e4], [65504., -2.]], dtype=torch.float16)",
    "torch.ones(2, 2, requires_grad=True)",
    "torch.randn(3, 3, dtype=torch.float64, requires_grad=True) * 2",
    "torch.randn(3, 30, dtype=torch.float64, requires_grad=True) * 2",
    "torch.randn(2, 8, dtype=torch.float64, requires_grad=True).relu()",
    "torch.randn(2, 3, requires_grad=True).tanh()",
    "torch.randn(2, 3, requires_grad=True).sigmoid()",
    "torch.randn(2, 3, requires_grad=True) @ torch.randn(3, 2)",
    "torch.randn(2, 3, requires_grad=True).t()",
    "torch.randn(2, 3, requires_grad=True) - 1",
    "torch.randn(2, 3, requires_grad=True) / 3",
    "-torch.randn(2, 3, requires_grad=True)",
    "torch.randn(2, 3, requires_grad=True).reshape(3, 2)",
    "torch.randn(2, 3, requires_grad=True)[0]",
    "torch.randn(2, 3, requires_grad=True).unsqueeze(0)",
    "torch.randn(6, requires_grad=True).view(2, 3) + torch.randn(2, 3)",
    # --- 3-d and higher ----------------------------------------------------------------
    "torch.arange(24.).reshape(2, 3, 4)",
    "torch.randn(2, 2, 2)",
    "torch.arange(16.).reshape(2, 2, 2, 2)",
    "torch.ones(1, 1, 1, 1, 1)",
    "torch.randn(2, 2, 20)",
    "torch.arange(8., dtype=torch.float64).reshape(2, 2, 2)",
    "torch.arange(8., requires_grad=True).reshape(2, 2, 2)",
    "torch.arange(8).reshape(2, 2, 2) == 3",
]


def encode(value: Any) -> Any:
    """JSON has no nan/inf, so spell them out as strings."""
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def grad_fn_name(t: torch.Tensor) -> str | None:
    if t.grad_fn is None:
        return None
    name = type(t.grad_fn).__name__
    if name == "CppFunction":
        name = t.grad_fn.name().rsplit("::", 1)[-1]
    return name


def record(expr: str) -> dict[str, Any]:
    torch.manual_seed(0)
    t = eval(expr, {"torch": torch, "nan": math.nan, "inf": math.inf})  # noqa: S307
    return {
        "expr": expr,
        "values": encode(t.detach().tolist()),
        "shape": list(t.shape),
        "dtype": str(t.dtype).removeprefix("torch."),
        "requires_grad": t.requires_grad,
        "grad_fn": grad_fn_name(t),
        "repr": repr(t),
    }


def main() -> None:
    assert torch.__version__.startswith("2.13.0"), torch.__version__
    torch.set_printoptions(profile="default")
    assert len(set(CASES)) == len(CASES), "duplicate case"
    cases = [record(expr) for expr in CASES]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(cases, sort_keys=True, indent=1) + "\n")
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    main()
