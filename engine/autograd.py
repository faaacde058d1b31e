"""torch.autograd: backward, grad, and the grad-mode switches."""

from engine.backward import backward, grad
from engine.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from engine.unsupported import missing_attribute

__all__ = ["backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled"]


def __getattr__(name: str):
    raise missing_attribute("torch.autograd", name, __all__)
