"""The module objects a snippet imports as torch, torch.nn, torch.nn.functional, ...

Each has PyTorch's module name and a file inside a torch package, and holds the names its engine
module offers (its `__all__`), so that nothing a snippet prints, raises or inspects through
torch shows where the server keeps the engine: `torch.__file__`, `print(torch.nn)`,
`torch.__spec__`, `from torch import nosuch` (whose ImportError quotes the module's file). A name
a module lacks goes to the engine module's `__getattr__`, which refuses what PyTorch has with
UnsupportedByGradtrace. The modules PyTorch defines the engine's classes in
(torch.nn.modules.linear, torch.optim.sgd, ...) are there too, holding those classes.

A run gets modules of its own (`for_snippet`), so a snippet that sets `torch.x = ...` changes
nothing for the next run; they hold the engine's own functions and classes, so reading a name
costs what it costs on the engine module.
"""

from __future__ import annotations

import functools
import importlib
import operator
import re
import sys
from importlib.machinery import ModuleSpec, SourceFileLoader
from types import FunctionType, ModuleType

from engine.torch_names import by_hand, offered, recorded
from engine.unsupported import _surface

# Where a pip-installed PyTorch lives on a Linux machine: the files a snippet is shown
SITE_PACKAGES = "/usr/local/lib/python{}.{}/site-packages".format(*sys.version_info[:2])

# torch modules that hold part of an engine module, by the names they offer
RANDOM_NAMES = ("manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state")
RANDOM_NAMES += ("default_generator",)


class _VariableFunctionsClass:
    """Stands for the type PyTorch's built-in functions are methods of (its address shows)."""


class BuiltinMethod(functools.partial):
    """torch.add as PyTorch prints it: <built-in method add of type object at 0x...>.

    A partial calls through in C: the name costs next to nothing per call."""

    __slots__ = ()

    def __repr__(self) -> str:
        owner = id(_VariableFunctionsClass)
        return f"<built-in method {self.__name__} of type object at {owner:#x}>"


class BuiltinFunction(functools.partial):
    """torch.get_default_dtype as PyTorch prints it: <built-in function get_default_dtype>."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<built-in function {self.__name__}>"


# type(torch.add) prints <class 'builtin_function_or_method'>
for _kind in (BuiltinMethod, BuiltinFunction):
    _kind.__module__ = "builtins"
    _kind.__name__ = _kind.__qualname__ = "builtin_function_or_method"
_VariableFunctionsClass.__module__ = "torch._C"
BUILTINS = {"method": BuiltinMethod, "builtin": BuiltinFunction}


class TorchVersion(str):
    """torch.__version__: a str that compares as a version does, as PyTorch's
    (`torch.__version__ >= "2.2"`, `>= (2, 0)`; 2.13.0+cpu is past 2.13.0 and not equal to it)."""

    def _key(self, other) -> tuple | None:
        text = ".".join(map(str, other)) if isinstance(other, tuple) else other
        match = re.fullmatch(r"(\d+(?:\.\d+)*)(?:\+(.+))?", text) if isinstance(text, str) else None
        if match is None:
            return None
        release = [int(part) for part in match[1].split(".")]
        while len(release) > 1 and release[-1] == 0:
            release.pop()  # 2.0 is 2
        return tuple(release), match[2] is not None, match[2] or ""

    def _compare(self, other, test):
        mine, theirs = self._key(self), self._key(other)
        return NotImplemented if theirs is None else test(mine, theirs)

    def __eq__(self, other):
        return self._compare(other, operator.eq)

    def __lt__(self, other):
        return self._compare(other, operator.lt)

    def __le__(self, other):
        return self._compare(other, operator.le)

    def __gt__(self, other):
        return self._compare(other, operator.gt)

    def __ge__(self, other):
        return self._compare(other, operator.ge)

    __hash__ = str.__hash__


TorchVersion.__module__ = "torch.torch_version"


def engine_modules(imports: dict[str, str]) -> dict[str, ModuleType]:
    """Each engine module by the torch name it stands for: those `imports` maps (torch name to
    engine module name) and, recursively, the modules their `__all__` lists (engine.nn as
    torch.nn, engine.lr_scheduler as torch.optim.lr_scheduler)."""
    found = {name: importlib.import_module(target) for name, target in imports.items()}
    todo = list(found)
    while todo:
        name = todo.pop()
        for attribute in getattr(found[name], "__all__", ()):
            value = vars(found[name]).get(attribute)
            if isinstance(value, ModuleType) and _is_engines(value):
                found[f"{name}.{attribute}"] = value
                todo.append(f"{name}.{attribute}")
    return found


def _is_engines(module: ModuleType) -> bool:
    return module.__name__ == "engine" or module.__name__.startswith("engine.")


@functools.cache
def _contents(imports: tuple[tuple[str, str], ...]) -> dict[str, dict]:
    """What each torch module holds, before modules are put in for modules (once per process):
    the engine module's names, PyTorch's built-ins wrapped to print as built-ins."""
    names = recorded()["names"]
    engine = engine_modules(dict(imports))
    contents = {}
    for torch_name, module in engine.items():
        held = {}
        for name in offered(torch_name, module):
            try:
                value = getattr(module, name)
            except Exception:  # noqa: BLE001, S112 - listed but refused: its refusal stands
                continue
            if isinstance(value, ModuleType) and not value.__name__.startswith(("engine", "torch")):
                continue  # F.np is numpy in PyTorch too, and would show where numpy is here
            entry = names.get(f"{torch_name}.{name}")
            if entry and entry[0] in BUILTINS and isinstance(value, FunctionType):
                value = _builtin(BUILTINS[entry[0]], value, entry)
            held[name] = value
        for dunder in ("__doc__", "__version__", "__all__", "__getattr__"):
            if dunder in vars(module):
                held[dunder] = vars(module)[dunder]
        if "__version__" in held:
            held["__version__"] = TorchVersion(held["__version__"])
        contents[torch_name] = held
    top = contents["torch"]
    contents["torch.random"] = {n: top[n] for n in RANDOM_NAMES if n in top}
    returned = sys.modules["engine.return_types"].ReturnTypes
    contents["torch.return_types"] = dict(returned)
    # the modules PyTorch defines the engine's classes in (torch.nn.modules.linear.Linear), and
    # the packages around them, which hold their classes too (torch.nn.modules.Linear)
    for value in _classes_named_torch():
        parts = value.__module__.split(".")
        for end in range(len(parts), 1, -1):
            package = contents.setdefault(".".join(parts[:end]), {})
            if end == len(parts) or ".".join(parts[:end]) not in engine:
                package.setdefault(value.__qualname__, value)
    return contents


def _classes_named_torch() -> list[type]:
    """Every engine class that torch_names gave a torch module (torch.nn.modules.linear)."""
    found = {}
    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] == "engine":
            for value in vars(module).values():
                if isinstance(value, type) and value.__module__.startswith("torch."):
                    found[id(value)] = value
    return [*found.values(), *by_hand()]


def _builtin(kind: type, function: FunctionType, entry: list) -> functools.partial:
    wrapped = kind(function)
    wrapped.__module__, wrapped.__qualname__ = entry[1], entry[2]
    wrapped.__name__ = entry[2].rpartition(".")[2]
    wrapped.__doc__ = function.__doc__
    return wrapped


def for_snippet(imports: dict[str, str]) -> dict[str, ModuleType]:
    """A fresh set of torch modules, by name (torch.nn is the `nn` of torch, and so on), for
    `imports` and what they offer (see engine_modules)."""
    contents, links = _layout(tuple(imports.items()))
    modules = {}
    for name, held in contents.items():
        modules[name] = ModuleType(name)
        vars(modules[name]).update(held)
    for name, attribute, target in links:
        setattr(modules[name], attribute, modules[target])
    return modules


@functools.cache
def _layout(imports: tuple[tuple[str, str], ...]) -> tuple[dict[str, dict], list[tuple]]:
    """Each torch module's names, with the file PyTorch's has; and the modules in them, as
    (module, attribute, module it holds) (once per process: a run only copies them)."""
    files = recorded()["modules"]
    contents = {name: dict(held) for name, held in _contents(imports).items()}
    for name, held in contents.items():
        file = f"{SITE_PACKAGES}/{files.get(name) or name.replace('.', '/') + '.py'}"
        loader = SourceFileLoader(name, file)
        is_package = file.endswith("/__init__.py")
        spec = ModuleSpec(name, loader, origin=file, is_package=is_package)
        spec.has_location = True
        held.update(__spec__=spec, __loader__=loader, __file__=file, __cached__=spec.cached)
        held["__package__"] = name if is_package else name.rpartition(".")[0]
        if is_package:
            held["__path__"] = spec.submodule_search_locations = [file.rpartition("/")[0]]
    links = []
    for name, held in contents.items():
        for attribute, value in list(held.items()):
            if isinstance(value, ModuleType) and _is_engines(value):  # engine.ops is no torch.ops
                del held[attribute]
                if f"{name}.{attribute}" in contents:
                    links.append((name, attribute, f"{name}.{attribute}"))
        # torch.nn.modules is an attribute of torch.nn, torch.optim.sgd is none of torch.optim
        parent, _, attribute = name.rpartition(".")
        if parent in contents and attribute not in contents[parent]:
            listed = _surface().get(parent)
            if listed is None or attribute in listed or attribute.startswith("_"):
                links.append((parent, attribute, name))
    return contents, links
