"""torch.nn: Module, Parameter and the layers and losses tutorials use."""

from engine.nn import functional
from engine.nn.modules import (
    CrossEntropyLoss,
    Identity,
    Linear,
    Module,
    MSELoss,
    Parameter,
    ReLU,
    Sequential,
    Sigmoid,
    Softmax,
    Tanh,
)
from engine.unsupported import missing_attribute

__all__ = [
    "Module",
    "Parameter",
    "Linear",
    "Sequential",
    "ReLU",
    "Tanh",
    "Sigmoid",
    "Softmax",
    "Identity",
    "MSELoss",
    "CrossEntropyLoss",
    "functional",
]


def __getattr__(name: str):
    raise missing_attribute("torch.nn", name, __all__)
