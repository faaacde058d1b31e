"""torch.nn: Module, Parameter, containers, and the layers and losses tutorials use."""

from engine.nn import functional, init, utils
from engine.nn.activations import (
    ELU,
    GELU,
    SELU,
    Dropout,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    ReLU6,
    SiLU,
    Softmin,
    Softplus,
)
from engine.nn.losses import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from engine.nn.modules import (
    Embedding,
    Flatten,
    Identity,
    Linear,
    Module,
    ModuleDict,
    ModuleList,
    Parameter,
    ReLU,
    Sequential,
    Sigmoid,
    Softmax,
    Tanh,
    Unflatten,
)
from engine.nn.normalization import BatchNorm1d, LayerNorm
from engine.nn.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell
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
    "Embedding",
    "LayerNorm",
    "BatchNorm1d",
    "RNNCell",
    "GRUCell",
    "LSTMCell",
    "RNN",
    "GRU",
    "LSTM",
    "LeakyReLU",
    "GELU",
    "ELU",
    "SELU",
    "SiLU",
    "Softplus",
    "Hardtanh",
    "ReLU6",
    "LogSigmoid",
    "Softmin",
    "Dropout",
    "L1Loss",
    "MSELoss",
    "SmoothL1Loss",
    "HuberLoss",
    "BCELoss",
    "BCEWithLogitsLoss",
    "NLLLoss",
    "CrossEntropyLoss",
    "functional",
    "init",
    "utils",
]


def __getattr__(name: str):
    raise missing_attribute("torch.nn", name, __all__)
