"""torch.autograd: backward, grad, Function, functional, gradcheck, and the grad-mode switches."""

from engine import autograd_functional as functional
from engine import function
from engine.backward import backward, grad
from engine.function import Function
from engine.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from engine.gradcheck import gradcheck, gradgradcheck
from engine.unsupported import missing_attribute

__all__ = [
    "backward",
    "grad",
    "Function",
    "function",
    "functional",
    "gradcheck",
    "gradgradcheck",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "is_grad_enabled",
    "inference_mode",
]


def __getattr__(name: str):
    raise missing_attribute("torch.autograd", name, __all__)
