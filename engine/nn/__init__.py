"""torch.nn: Module, Parameter, containers, and the layers and losses tutorials use."""

from engine.nn import functional, init, utils
from engine.nn.modules import (
    CrossEntropyLoss,
    Flatten,
    Identity,
    Linear,
    Module,
    ModuleDict,
    ModuleList,
    MSELoss,
    Parameter,
    ReLU,
    Sequential,
    Sigmoid,
    Softmax,
    Tanh,
    Unflatten,
)
from engine.unsupported import missing_attribute

__all__ = [
    "Module",
    "Parameter",
    "Linear",
    "Sequential",
    "ModuleList",
    "ModuleDict",
    "Flatten",
    "Unflatten",
    "ReLU",
    "Tanh",
    "Sigmoid",
    "Softmax",
    "Identity",
    "MSELoss",
    "CrossEntropyLoss",
    "functional",
    "init",
    "utils",
]


def __getattr__(name: str):
    raise missing_attribute("torch.nn", name, __all__)
