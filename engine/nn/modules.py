"""nn.Module and the layers built on it."""

from __future__ import annotations

import math
from collections import OrderedDict

from engine import random as rng
from engine import tracing
from engine.nn import functional as F
from engine.record import bump
from engine.tensor import Tensor
from engine.unsupported import UnsupportedByGradtrace


class Parameter(Tensor):
    """A tensor that a Module owns and an optimizer updates: a leaf that requires grad."""

    __slots__ = ()

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        from engine.creation import empty

        data = empty(0) if data is None else data
        p = cls._wrap(data._array)
        p.requires_grad = requires_grad
        if tracing.current is not None:
            tracing.current.on_tensor(p, "parameter", ())
        return p

    def __init__(self, data=None, requires_grad: bool = True) -> None:
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


class Module:
    """A layer or a model: holds Parameters and sub-Modules, and maps inputs to outputs."""

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    def __setattr__(self, name: str, value) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(
                "cannot assign module before Module.__init__() call"
                if isinstance(value, Module)
                else "cannot assign parameters before Module.__init__() call"
            )
        self._parameters.pop(name, None)
        self._modules.pop(name, None)
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        object.__setattr__(self, name, value)

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise UnsupportedByGradtrace(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def named_parameters(self, prefix: str = "", recurse: bool = True):
        seen = set()
        for module_prefix, module in self.named_modules(prefix) if recurse else [(prefix, self)]:
            for name, p in module._parameters.items():
                if id(p) not in seen:
                    seen.add(id(p))
                    yield (f"{module_prefix}.{name}" if module_prefix else name), p

    def parameters(self, recurse: bool = True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_modules(self, prefix: str = ""):
        stack = [(prefix, self)]
        while stack:
            name, module = stack.pop(0)
            yield name, module
            stack[:0] = [
                (f"{name}.{child_name}" if name else child_name, child)
                for child_name, child in module._modules.items()
            ]

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def children(self):
        yield from self._modules.values()

    def named_children(self):
        yield from self._modules.items()

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            if p._grad is not None:
                if set_to_none:
                    p.grad = None  # through the setter, so a trace records it
                else:
                    p._grad._array[...] = 0
                    bump(p._grad, "zero_grad", None)  # an in-place change, as zero_() is

    def train(self, mode: bool = True) -> Module:
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        children = [
            f"({name}): " + repr(child).replace("\n", "\n  ")
            for name, child in self._modules.items()
        ]
        extra = self.extra_repr()
        if not children:
            return f"{type(self).__name__}({extra})"
        lines = ([extra] if extra else []) + children
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"


def _uniform(shape: tuple, bound: float) -> Tensor:
    # PyTorch's init draws uniform(-bound, bound) from the CPU generator, weight first
    return Tensor._wrap(rng.default_generator.uniform(shape, -bound, bound, "float32"))


class Linear(Module):
    """y = x @ weightᵀ + bias, with PyTorch's default initialisation."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        # kaiming_uniform_(a=√5) works out to uniform(±1/√in_features)
        gain = math.sqrt(2.0 / (1 + 5))
        bound = math.sqrt(3.0) * (gain / math.sqrt(in_features)) if in_features else 0.0
        self.weight = Parameter(_uniform((out_features, in_features), bound))
        if bias:
            bias_bound = 1 / math.sqrt(in_features) if in_features > 0 else 0
            self.bias = Parameter(_uniform((out_features,), bias_bound))
        else:
            self.bias = None

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Sequential(Module):
    def __init__(self, *modules: Module) -> None:
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            modules = modules[0].items()
        else:
            modules = ((str(i), m) for i, m in enumerate(modules))
        for name, module in modules:
            setattr(self, name, module)

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input

    def __getitem__(self, index: int) -> Module:
        return list(self._modules.values())[index]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())


class _Activation(Module):
    def forward(self, input: Tensor) -> Tensor:
        return self.function(input)


class ReLU(_Activation):
    function = staticmethod(F.relu)

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()


class Tanh(_Activation):
    function = staticmethod(F.tanh)


class Sigmoid(_Activation):
    function = staticmethod(F.sigmoid)


class Identity(Module):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input):
        return input


class Softmax(Module):
    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class MSELoss(Module):
    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = reduction

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, self.reduction)


class CrossEntropyLoss(Module):
    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = reduction

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(input, target, self.reduction)
