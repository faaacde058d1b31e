"""torch.nn: Module, Parameter, containers, and the layers and losses tutorials use."""

from engine.nn import activations, functional, init, losses, utils
from engine.nn.activations import *  # noqa: F403 - each listed in activations.__all__
from engine.nn.losses import *  # noqa: F403 - each listed in losses.__all__
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
    *activations.__all__,
    *losses.__all__,
    "functional",
    "init",
    "utils",
]


def __getattr__(name: str):
    raise missing_attribute("torch.nn", name, __all__)
