"""PyTorch's names for the engine's classes and functions, as type(), repr() and errors print them.

`type(model)` prints `<class 'torch.nn.modules.container.Sequential'>` in PyTorch, and
`F.relu.__module__` is 'torch.nn.functional'. tools/record_torch_names.py records where PyTorch
defines each public name (torch_names.json); `name_all()` gives every engine class and function
that a snippet reaches under such a name the same `__module__` and `__qualname__`, once, when
the engine is imported. Classes no public name reaches are named below by hand.
"""

from __future__ import annotations

import functools
import json
import pathlib
import sys
from types import FunctionType, ModuleType

from engine.unsupported import _surface

# Classes only reached through another (a base in an MRO, what a method returns), by the name
# PyTorch prints them with. A grad_fn's class is a C++ class in PyTorch, in no module.
BY_HAND = {
    "engine.graph:Node": ("torch.autograd.graph", "Node"),
    "engine.nn.losses:_Loss": ("torch.nn.modules.loss", "_Loss"),
    "engine.nn.losses:_WeightedLoss": ("torch.nn.modules.loss", "_WeightedLoss"),
    "engine.nn.rnn:_RNNBase": ("torch.nn.modules.rnn", "RNNBase"),
    "engine.nn.rnn:_CellBase": ("torch.nn.modules.rnn", "RNNCellBase"),
    "engine.nn.modules:_IncompatibleKeys": ("torch.nn.modules.module", "_IncompatibleKeys"),
    "engine.nn.modules:_IncompatibleKeys.__base__": ("torch.nn.modules.module", "IncompatibleKeys"),
    "engine.function:FunctionMeta": ("torch.autograd.function", "FunctionMeta"),
    "engine.grad_mode:_GradMode": ("torch.utils._contextlib", "_DecoratorContextManager"),
    # bases PyTorch's classes lack, named where they would be
    "engine.nn.modules:_Activation": ("torch.nn.modules.activation", "_Activation"),
    "engine.random:Generator": ("torch._C", "_Generator"),
}
GRAD_FN_MODULE = "builtins"  # type(y.grad_fn) is <class 'MulBackward0'>
# Tensor's methods that PyTorch writes in Python (torch/_tensor.py; recorded from vars(Tensor)):
# their errors name them `Tensor.norm()`. The others are C methods of TensorBase, whose argument
# parser names them bare: `mul() got an unexpected keyword argument 'out'`.
PYTHON_TENSOR_METHODS = frozenset(
    [
        "__array__",
        "__array_wrap__",
        "__contains__",
        "__deepcopy__",
        "__dir__",
        "__dlpack__",
        "__dlpack_device__",
        "__floordiv__",
        "__format__",
        "__hash__",
        "__ipow__",
        "__iter__",
        "__len__",
        "__pow__",
        "__rdiv__",
        "__reduce_ex__",
        "__repr__",
        "__reversed__",
        "__rfloordiv__",
        "__rlshift__",
        "__rmatmul__",
        "__rmod__",
        "__rpow__",
        "__rrshift__",
        "__rsub__",
        "__rtruediv__",
        "__setstate__",
        "backward",
        "dim_order",
        "eig",
        "index",
        "is_shared",
        "istft",
        "lstsq",
        "lu",
        "module_load",
        "norm",
        "register_hook",
        "register_post_accumulate_grad_hook",
        "reinforce",
        "resize",
        "resize_as",
        "share_memory_",
        "solve",
        "split",
        "stft",
        "storage",
        "storage_type",
        "symeig",
        "to_sparse_coo",
        "unflatten",
        "unique",
        "unique_consecutive",
    ]
)


@functools.cache
def recorded() -> dict:
    """torch_names.json: "modules" (name -> file inside site-packages) and "names"
    (torch.nn.Linear -> [kind, __module__, __qualname__])."""
    return json.loads(pathlib.Path(__file__).with_name("torch_names.json").read_text())


def name_all(namespaces: dict[str, ModuleType]) -> None:
    """Rename what `namespaces` (torch name -> engine module) offer, then the classes by hand,
    grad_fn classes, and Tensor's methods. Outer namespaces first, so that `torch.nn.functional`
    has the last word on a function `torch` shares with it."""
    names = recorded()["names"]
    for namespace, module in sorted(namespaces.items()):
        for name in offered(namespace, module):
            value = vars(module).get(name)
            if not _is_engines(value):
                continue
            # a name PyTorch's module lacks is named as if it had it
            kind, module_name, qualname = names.get(f"{namespace}.{name}", ("", namespace, name))
            _rename(value, module_name, qualname if kind != "method" else value.__qualname__)
    for cls, (module_name, qualname) in zip(by_hand(), BY_HAND.values(), strict=True):
        _rename(cls, module_name, qualname)
    node = _module("engine.graph").Node
    for cls in _subclasses(node):
        if _is_engines(cls):
            cls.__module__ = GRAD_FN_MODULE
    for namespace, module in namespaces.items():
        if "__getattr__" in vars(module):  # refusals: torch.__getattr__, as in PyTorch
            module.__getattr__.__module__ = namespace
    tensor = _module("engine.tensor").Tensor
    names_of: dict[FunctionType, list[str]] = {}
    for name, value in vars(tensor).items():
        if isinstance(value, FunctionType) and _is_engines(value):
            names_of.setdefault(value, []).append(name)
    for value, names in names_of.items():
        # one function under several names (mul and __mul__) takes the one a snippet calls
        name = next((n for n in names if not n.startswith("__")), names[0])
        value.__module__ = "torch._tensor"  # where PyTorch's Python methods are
        value.__qualname__ = f"Tensor.{name}" if name in PYTHON_TENSOR_METHODS else name


def offered(namespace: str, module: ModuleType) -> list[str]:
    """The names a torch module offers: its engine module's `__all__`, and the names of
    PyTorch's module that the engine module has, though it does not list them (F.layer_norm)."""
    pytorch = _surface().get(namespace, frozenset()) | _recorded_names().get(namespace, set())
    listed = list(getattr(module, "__all__", ()))
    return listed + sorted(n for n in pytorch & vars(module).keys() if n not in listed)


@functools.cache
def _recorded_names() -> dict[str, set[str]]:
    """torch_names.json's names by module: {"torch.nn": {"Linear", ...}, ...}."""
    found: dict[str, set[str]] = {}
    for path in recorded()["names"]:
        module, _, name = path.rpartition(".")
        found.setdefault(module, set()).add(name)
    return found


def by_hand() -> list[type]:
    """The classes BY_HAND names ("module:attribute.path")."""
    found = []
    for path in BY_HAND:
        module, _, attributes = path.partition(":")
        value = _module(module)
        for attribute in attributes.split("."):
            value = getattr(value, attribute)
        found.append(value)
    return found


def _module(name: str) -> ModuleType:
    return sys.modules[name]


def _is_engines(value) -> bool:
    """A class or function the engine defined (not numpy's, not a builtin it re-exports)."""
    module = getattr(value, "__module__", None) or ""
    return (isinstance(value, type | FunctionType)) and (
        module == "engine" or module.startswith("engine.")
    )


def _rename(value, module: str, qualname: str) -> None:
    old = value.__qualname__
    value.__module__, value.__qualname__ = module, qualname
    if isinstance(value, type):
        for member in vars(value).values():  # RNNBase.forward, not _RNNBase.forward
            function = getattr(member, "__func__", member)
            if isinstance(function, FunctionType) and function.__qualname__.startswith(old + "."):
                function.__qualname__ = qualname + function.__qualname__[len(old) :]
                function.__module__ = module


def _subclasses(cls: type) -> list[type]:
    found, todo = [], [cls]
    while todo:
        for sub in todo.pop().__subclasses__():
            found.append(sub)
            todo.append(sub)
    return found
