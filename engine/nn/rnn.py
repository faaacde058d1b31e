"""Recurrent layers: RNNCell, GRUCell, LSTMCell and the sequence layers RNN, GRU and LSTM.

PyTorch's CPU kernels for these are compositions of ordinary ops (linear, add, sigmoid, tanh,
mul), so the engine builds the same graph from its own ops: values and gradients match, and so
do most grad_fn names (a few middle nodes differ: PyTorch slices the gates with unsafe_chunk and
updates them in place, the engine slices and computes anew). Parameters are named and drawn as
PyTorch's: weight_ih, weight_hh, bias_ih, bias_hh, each uniform(±1/√hidden_size) in that order.
"""

from __future__ import annotations

import math

from engine import functions as fn
from engine import random as rng
from engine.creation import stack, zeros
from engine.nn import functional as F
from engine.nn.modules import Module, _initialised
from engine.record import apply
from engine.tensor import Tensor
from engine.unsupported import UnsupportedByGradtrace

# ***** one step of each cell, on a batch: (batch, features) in, (batch, hidden) out *****


def _linear(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    return F.linear(x, weight, bias)


def _gates(gates: Tensor, count: int) -> list[Tensor]:
    """The `count` equal blocks of the gates' last dim (PyTorch's unsafe_chunk)."""
    size = gates.shape[-1] // count
    return [gates[:, i * size : (i + 1) * size] for i in range(count)]


def _simple_step(x_part: Tensor, h: Tensor, params: tuple, nonlinearity: str) -> Tensor:
    _, w_hh, _, b_hh = params
    pre = _linear(h, w_hh, b_hh) + x_part  # PyTorch: linear_hh(h).add_(linear_ih(x))
    return pre.tanh() if nonlinearity == "tanh" else pre.relu()


def _gru_step(x_part: Tensor, h: Tensor, params: tuple) -> Tensor:
    _, w_hh, _, b_hh = params
    i_r, i_z, i_n = _gates(x_part, 3)
    h_r, h_z, h_n = _gates(_linear(h, w_hh, b_hh), 3)
    reset = (h_r + i_r).sigmoid()
    update = (h_z + i_z).sigmoid()
    new = (i_n + h_n * reset).tanh()
    return (h - new) * update + new


def _lstm_step(x_part: Tensor, state: tuple, params: tuple) -> tuple[Tensor, Tensor]:
    h, c = state
    _, w_hh, _, b_hh = params
    gates = _linear(h, w_hh, b_hh) + x_part
    i, f, g, o = _gates(gates, 4)
    c_next = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c_next.tanh(), c_next


# ***** the cells *****


class _CellBase(Module):
    chunks = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, **_) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        rows = self.chunks * hidden_size
        shapes = [("weight_ih", (rows, input_size)), ("weight_hh", (rows, hidden_size))]
        if bias:
            shapes += [("bias_ih", (rows,)), ("bias_hh", (rows,))]
        for name, shape in _drawn(shapes, hidden_size):
            setattr(self, name, shape)
        if not bias:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        if nonlinearity != "tanh":
            text += f", nonlinearity={nonlinearity}"
        return text

    def _params(self) -> tuple:
        return (self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)

    def _check(self, input: Tensor, name: str) -> bool:
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(
                f"input has inconsistent input_size: got {input.shape[-1]} expected "
                f"{self.input_size}"
            )
        return input.ndim == 2

    def _zeros(self, input: Tensor) -> Tensor:
        return zeros(input.shape[0], self.hidden_size, dtype=input.dtype)

    def _x_part(self, input: Tensor) -> Tensor:
        return _linear(input, self.weight_ih, self.bias_ih)


def _drawn(shapes: list, hidden_size: int):
    """Each parameter in turn, uniform(±1/√hidden_size), as PyTorch's reset_parameters draws."""
    bound = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0
    for name, shape in shapes:
        yield name, _initialised(rng.default_generator.uniform(shape, -bound, bound, "float32"))


class RNNCell(_CellBase):
    """h' = tanh(x @ W_ihᵀ + b_ih + h @ W_hhᵀ + b_hh) (or relu)."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", **kw) -> None:
        super().__init__(input_size, hidden_size, bias)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        if hx is not None and hx.ndim not in (1, 2):
            raise ValueError(f"RNNCell: Expected hidden to be 1D or 2D, got {hx.ndim}D instead")
        batched = self._check(input, "RNNCell")
        if not batched:
            input = input.unsqueeze(0)
        hx = self._zeros(input) if hx is None else (hx if batched else hx.unsqueeze(0))
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        h = _simple_step(self._x_part(input), hx, self._params(), self.nonlinearity)
        return h if batched else h.squeeze(0)


class GRUCell(_CellBase):
    """Gated: a reset gate, an update gate z and a candidate n; h' = (1 - z)·n + z·h."""

    chunks = 3

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        if hx is not None and hx.ndim not in (1, 2):
            raise ValueError(f"GRUCell: Expected hidden to be 1D or 2D, got {hx.ndim}D instead")
        batched = self._check(input, "GRUCell")
        if not batched:
            input = input.unsqueeze(0)
        hx = self._zeros(input) if hx is None else (hx if batched else hx.unsqueeze(0))
        h = _gru_step(self._x_part(input), hx, self._params())
        return h if batched else h.squeeze(0)


class LSTMCell(_CellBase):
    """Input, forget, cell and output gates; returns (h', c')."""

    chunks = 4

    def forward(self, input: Tensor, hx: tuple | None = None) -> tuple[Tensor, Tensor]:
        if hx is not None:
            for i, value in enumerate(hx):
                if value.ndim not in (1, 2):
                    raise ValueError(
                        f"LSTMCell: Expected hx[{i}] to be 1D or 2D, got {value.ndim}D instead"
                    )
        batched = self._check(input, "LSTMCell")
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = (self._zeros(input), self._zeros(input))
        elif not batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        h, c = _lstm_step(self._x_part(input), hx, self._params())
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


# ***** the sequence layers *****


class _RNNBase(Module):
    chunks = 1
    name = "RNN"

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if bidirectional or proj_size:
            raise UnsupportedByGradtrace(
                f"nn.{self.name} with bidirectional=True or proj_size is not supported by "
                "gradtrace's engine"
            )
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        rows = self.chunks * hidden_size
        shapes = []
        for layer in range(num_layers):
            inputs = input_size if layer == 0 else hidden_size
            shapes += [(f"weight_ih_l{layer}", (rows, inputs))]
            shapes += [(f"weight_hh_l{layer}", (rows, hidden_size))]
            if bias:
                shapes += [(f"bias_ih_l{layer}", (rows,)), (f"bias_hh_l{layer}", (rows,))]
        for name, parameter in _drawn(shapes, hidden_size):
            setattr(self, name, parameter)

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        if self.batch_first is not False:
            text += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            text += f", dropout={self.dropout}"
        return text

    def _layer_params(self, layer: int) -> tuple:
        get = self._parameters.get
        return tuple(
            get(f"{kind}_l{layer}") for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
        )

    def _sequence(self, input: Tensor, hx):
        """(output, final state) of every layer in turn, time running along dim 0."""
        if self.dropout and self.training and self.num_layers > 1:
            raise UnsupportedByGradtrace(
                f"nn.{self.name}'s dropout between layers is not supported by gradtrace's engine"
            )
        finals = []
        for layer in range(self.num_layers):
            params = self._layer_params(layer)
            steps, features = input.shape[0], input.shape[-1]
            # PyTorch projects the whole sequence's inputs at once, then steps through time
            projected = _linear(input.reshape(-1, features), params[0], params[2])
            projected = projected.view(steps, input.shape[1], -1)
            state = self._layer_state(hx, layer)
            outputs = []
            for x_part in projected.unbind(0):
                state = self._step(x_part, state, params)
                outputs.append(state[0] if isinstance(state, tuple) else state)
            input = stack(outputs, 0)
            finals.append(state)
        return input, finals

    def _prepare(self, input: Tensor):
        if input.ndim not in (2, 3):
            raise ValueError(
                f"{self.name}: Expected input to be 2D or 3D, got {input.ndim}D tensor instead"
            )
        batched = input.ndim == 3
        batch_dim = 0 if self.batch_first else 1
        if not batched:
            input = input.unsqueeze(batch_dim)
        if input.dtype is not self.weight_ih_l0.dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype "
                f"({self.weight_ih_l0.dtype}). Convert input: input.to({self.weight_ih_l0.dtype}),"
                f" or convert model: model.to({input.dtype})"
            )
        if input.shape[-1] != self.input_size:
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                f"{input.shape[-1]}"
            )
        if self.batch_first:
            input = input.transpose(0, 1)
        return input, batched, batch_dim

    def _zeros(self, input: Tensor) -> Tensor:
        return zeros(self.num_layers, input.shape[1], self.hidden_size, dtype=input.dtype)

    def _check_hidden(self, hx: Tensor, input: Tensor, what: str = "hidden size") -> None:
        expected = (self.num_layers, input.shape[1], self.hidden_size)
        if tuple(hx.shape) != expected:
            raise RuntimeError(f"Expected {what} {expected}, got {list(hx.shape)}")

    def _output(self, output: Tensor, batched: bool, batch_dim: int) -> Tensor:
        if self.batch_first:
            # PyTorch's kernel turns its fresh output back with transpose_(0, 1)
            output = apply(fn.TransposeBackward1, (output,), dim0=0, dim1=1)
        return output if batched else output.squeeze(batch_dim)


def _unbatched_hidden(hx: Tensor, batched: bool) -> Tensor:
    if batched:
        if hx.ndim != 3:
            raise RuntimeError(
                f"For batched 3-D input, hx should also be 3-D but got {hx.ndim}-D tensor"
            )
        return hx
    if hx.ndim != 2:
        raise RuntimeError(
            f"For unbatched 2-D input, hx should also be 2-D but got {hx.ndim}-D tensor"
        )
    return hx.unsqueeze(1)


class RNN(_RNNBase):
    """An Elman RNN over a sequence: returns (every step's output, the final hidden state)."""

    def __init__(self, *args, nonlinearity: str = "tanh", **kwargs) -> None:
        if len(args) > 3:  # RNN(input, hidden, num_layers, nonlinearity, ...) positionally
            nonlinearity, args = args[3], args[:3] + args[4:]
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(
                f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__(*args, **kwargs)
        self.nonlinearity = nonlinearity

    def _layer_state(self, hx, layer):
        return hx[layer]

    def _step(self, x_part, h, params):
        return _simple_step(x_part, h, params, self.nonlinearity)

    def forward(self, input: Tensor, hx: Tensor | None = None):
        if hx is not None:
            hx = _unbatched_hidden(hx, input.ndim == 3)
        input, batched, batch_dim = self._prepare(input)
        hx = self._zeros(input) if hx is None else hx
        self._check_hidden(hx, input)
        output, finals = self._sequence(input, hx)
        hidden = stack(finals, 0)
        return self._output(output, batched, batch_dim), hidden if batched else hidden.squeeze(1)


class GRU(RNN):
    chunks = 3
    name = "GRU"

    def __init__(self, *args, **kwargs) -> None:
        _RNNBase.__init__(self, *args, **kwargs)

    def _step(self, x_part, h, params):
        return _gru_step(x_part, h, params)


class LSTM(_RNNBase):
    chunks = 4
    name = "LSTM"

    def _layer_state(self, hx, layer):
        return (hx[0][layer], hx[1][layer])

    def _step(self, x_part, state, params):
        return _lstm_step(x_part, state, params)

    def forward(self, input: Tensor, hx: tuple | None = None):
        batched = input.ndim == 3
        if hx is not None:
            hx = tuple(_unbatched_hidden(h, batched) for h in hx)
        input, batched, batch_dim = self._prepare(input)
        if hx is None:
            hx = (self._zeros(input), self._zeros(input))
        self._check_hidden(hx[0], input, "hidden[0] size")
        self._check_hidden(hx[1], input, "hidden[1] size")
        output, finals = self._sequence(input, hx)
        h_n = stack([h for h, _ in finals], 0)
        c_n = stack([c for _, c in finals], 0)
        if not batched:
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return self._output(output, batched, batch_dim), (h_n, c_n)
