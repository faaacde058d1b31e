"""gradcheck and gradgradcheck in a traced run: the call is one step of the program, not the
hundreds of forward and backward passes it makes.

What they compute, print and raise is checked against PyTorch by the goldens
(tools/goldens/gradchecks.py); here, what a trace keeps of them.
"""

from __future__ import annotations

from app.sandbox import validate
from engine import tracing
from engine.tracer import trace_snippet

CUBE = """\
import torch

class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        print("forward")
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2

"""


def traced(code: str) -> dict:
    trace = trace_snippet(code)
    validate.check(trace)
    assert tracing.current is None
    return trace


def kinds(trace: dict) -> list[str]:
    return [e["kind"] for e in trace["events"]]


def test_the_checks_own_passes_are_not_steps() -> None:
    # 20 elements: 40 forward passes of sin and 40 backward passes, none of them the program's
    trace = traced(
        "import torch\n"
        "x = torch.linspace(-1, 1, 20, dtype=torch.double, requires_grad=True)\n"
        "ok = torch.autograd.gradcheck(torch.sin, (x,))\n"
        "y = x * 2\n"
        "print(ok)\n"
    )
    assert kinds(trace) == ["tensor", "op", "print"]
    assert trace["stdout"] == "True\n"
    assert [n["name"] for n in trace["nodes"].values()] == ["MulBackward0", "AccumulateGrad"]


def test_recording_resumes_after_a_failed_check() -> None:
    trace = traced(
        "import torch\n"
        "x = torch.tensor([1.0, 2.0], dtype=torch.double, requires_grad=True)\n"
        "try:\n"
        "    torch.autograd.gradcheck(lambda t: t.detach() * 2, (x,))\n"
        "except RuntimeError as e:\n"
        "    print(e)\n"
        "(x * 3).sum().backward()\n"
    )
    assert trace["stdout"] == "Numerical gradient for function expected to be zero\n"
    assert kinds(trace)[:2] == ["tensor", "print"]
    assert "op" in kinds(trace) and "accumulate" in kinds(trace)


def test_what_the_function_prints_is_kept() -> None:
    # once for the check's own output, twice per element, once more for undefined gradients
    trace = traced(
        CUBE + "x = torch.tensor([1.0, 2.0], dtype=torch.double, requires_grad=True)\n"
        "print(torch.autograd.gradcheck(Cube.apply, (x,)))\n"
    )
    assert trace["stdout"] == "forward\n" * 6 + "True\n"
    assert kinds(trace) == ["tensor"] + ["print"] * 7


def test_gradgradcheck_is_one_step_too() -> None:
    trace = traced(
        CUBE + "x = torch.tensor([0.5, -1.0], dtype=torch.double, requires_grad=True)\n"
        "print(torch.autograd.gradgradcheck(Cube.apply, x))\n"
    )
    assert trace["stdout"].endswith("forward\nTrue\n")
    assert set(kinds(trace)) == {"tensor", "print"}
    assert len(trace["tensors"]) == 1


def test_a_float32_input_warns_on_stderr_as_pytorch_does() -> None:
    trace = traced(
        "import torch\n"
        "x = torch.tensor([0.5, 1.0], requires_grad=True)\n"
        "print(torch.autograd.gradcheck(torch.sin, (x,), raise_exception=False))\n"
    )
    assert trace["stdout"] == "False\n"
    warning = (
        "UserWarning: Input #0 requires gradient and is not a double precision floating point "
        "or complex. This check will likely fail if all the inputs are not of double precision "
        "floating point or complex. \n  _check_inputs(tupled_inputs)\n"
    )
    assert trace["stderr"].endswith(warning)
    assert trace["stderr"].count("UserWarning") == 1
