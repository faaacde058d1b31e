"""nn.Module, its containers, and the layers built on it."""

from __future__ import annotations

import math
import operator
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from engine import devices, dtypes, tracing
from engine import random as rng
from engine.grad_mode import no_grad
from engine.graph import RemovableHandle
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

    def __deepcopy__(self, memo: dict) -> Parameter:
        """A new Parameter with a copy of the values (not the grad), as PyTorch's."""
        if id(self) in memo:
            return memo[id(self)]
        copied = type(self)(Tensor._wrap(self._array.copy()), self._requires_grad)
        memo[id(self)] = copied
        return copied


def typename(value) -> str:
    """How PyTorch's messages name a value (torch.typename): torch.FloatTensor, int,
    torch.nn.modules.linear.Linear, __main__.Net, and a class, function or module by its name."""
    if isinstance(value, Tensor):
        return value.type()
    module = getattr(value, "__module__", None)
    prefix = "" if module in (None, "builtins", "__builtin__") else f"{module}."
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    return prefix + (name or type(value).__name__)


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What load_state_dict returns: the keys it could not match, both ways."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _indent(text: str, spaces: int) -> str:
    """Indent every line but the first (a child's repr inside its parent's)."""
    first, *rest = text.split("\n")
    return "\n".join([first] + [" " * spaces + line if line.strip() else "" for line in rest])


def _backward_hooks_refused(name: str) -> UnsupportedByGradtrace:
    # PyTorch wraps a module's inputs and outputs in BackwardHookFunction nodes for these
    return UnsupportedByGradtrace(
        f"Module.{name} is not supported by gradtrace's engine: register a hook on the "
        "output tensor instead (output.register_hook(hook) sees the gradient of the output)"
    )


class Module:
    """A layer or a model: holds Parameters, buffers and sub-Modules, and maps inputs to outputs.

    As in PyTorch, parameters, buffers and children live only in their three dicts (not in the
    instance's __dict__), and attribute lookup falls back to them.
    """

    def __init__(self, *args, **kwargs) -> None:
        if args or kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but "
                f"{len(args) + 1} were given"
            )
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", {})

    # ***** attributes: parameters, buffers and children *****

    def __getattr__(self, name: str):
        state = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            if table in state and name in state[table]:
                return state[table][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value) -> None:
        state = self.__dict__
        params, modules, buffers = (state.get(k) for k in ("_parameters", "_modules", "_buffers"))
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, keep=params)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{typename(value)}' as parameter '{name}' "
                    "(torch.nn.Parameter or None expected)"
                )
            params[name] = None
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, keep=modules)
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{typename(value)}' as child module '{name}' "
                    "(torch.nn.Module or None expected)"
                )
            modules[name] = None
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{typename(value)}' as buffer '{name}' "
                    "(torch.nn.Buffer, torch.Tensor or None expected)"
                )
            buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str, keep: dict) -> None:
        """Drop `name` from the other tables before it is registered in `keep` (where a name
        already there keeps its place)."""
        self.__dict__.pop(name, None)
        for table in (self._parameters, self._buffers, self._modules):
            if table is not keep:
                table.pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def _check_name(self, kind: str, name, table: dict) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in table:
            raise KeyError(f"attribute '{name}' already exists")

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{typename(param)}' object to parameter '{name}' "
                "(torch.nn.Parameter or None required)"
            )
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """A tensor the module keeps but does not train (BatchNorm's running statistics)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{typename(tensor)}' object to buffer '{name}' "
                "(torch Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{typename(module)} is not a Module subclass")
        self._check_name("module", name, self._modules)
        self._modules[name] = module

    def register_module(self, name: str, module: Module | None) -> None:
        self.add_module(name, module)

    def get_submodule(self, target: str) -> Module:
        module = self
        for item in target.split(".") if target else ():
            if not hasattr(module, item):
                raise AttributeError(f"{module._get_name()} has no attribute `{item}`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return module

    # ***** running *****

    def __call__(self, *args, **kwargs):
        tracer = tracing.current
        run = self._hooked if "_forward_hooks" in self.__dict__ else self.forward
        if tracer is None:
            return run(*args, **kwargs)
        # the trace says which call each event happened in; the call ends even if forward fails
        tracer.enter_module(self)
        try:
            return run(*args, **kwargs)
        finally:
            tracer.exit_module(self)

    def _hooked(self, *args, **kwargs):
        """forward between its hooks, as Module._call_impl runs them: each pre-hook may replace
        the arguments, each hook the result."""
        for hook, with_kwargs in list(self._forward_pre_hooks.values()):
            if with_kwargs:
                replaced = hook(self, args, kwargs)
                if replaced is not None:
                    if not (isinstance(replaced, tuple) and len(replaced) == 2):
                        raise RuntimeError(
                            "forward pre-hook must return None or a tuple of (new_args, "
                            f"new_kwargs), but got {replaced}."
                        )
                    args, kwargs = replaced
            else:
                replaced = hook(self, args)
                if replaced is not None:
                    args = replaced if isinstance(replaced, tuple) else (replaced,)
        result = self.forward(*args, **kwargs)
        for hook, with_kwargs in list(self._forward_hooks.values()):
            replaced = hook(self, args, kwargs, result) if with_kwargs else hook(self, args, result)
            if replaced is not None:
                result = replaced
        return result

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """hook(module, args) runs before each forward; what it returns (not None) becomes the
        arguments. With with_kwargs=True: hook(module, args, kwargs) -> None or (args, kwargs)."""
        return self._add_forward_hook("_forward_pre_hooks", hook, prepend, with_kwargs)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """hook(module, args, output) runs after each forward; what it returns (not None)
        becomes the output. With with_kwargs=True: hook(module, args, kwargs, output)."""
        return self._add_forward_hook("_forward_hooks", hook, prepend, with_kwargs)

    def _add_forward_hook(self, table: str, hook, prepend: bool, with_kwargs: bool):
        # made on the first registration, so a module without hooks calls forward directly
        if "_forward_hooks" not in self.__dict__:
            object.__setattr__(self, "_forward_pre_hooks", {})
            object.__setattr__(self, "_forward_hooks", {})
        hooks = self.__dict__[table]
        handle = RemovableHandle.add(hooks, (hook, with_kwargs))
        if prepend:
            entries = list(hooks.items())
            hooks.clear()
            hooks.update(entries[-1:] + entries[:-1])
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        raise _backward_hooks_refused("register_full_backward_hook")

    def register_full_backward_pre_hook(self, hook, prepend=False):
        raise _backward_hooks_refused("register_full_backward_pre_hook")

    def register_backward_hook(self, hook):
        raise _backward_hooks_refused("register_backward_hook")

    def forward(self, *args, **kwargs):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    # ***** walking the tree *****

    def _named_members(self, members, prefix: str, recurse: bool, remove_duplicate: bool):
        seen: set[int] = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
        for module_prefix, module in modules if recurse else [(prefix, self)]:
            for name, value in members(module):
                if value is None or id(value) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield (f"{module_prefix}.{name}" if module_prefix else name), value

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate=True):
        members = lambda m: m._parameters.items()  # noqa: E731
        yield from self._named_members(members, prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate=True):
        members = lambda m: m._buffers.items()  # noqa: E731
        yield from self._named_members(members, prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_modules(self, memo: set | None = None, prefix: str = "", remove_duplicate=True):
        """Every module in the tree, depth first, each once (a shared layer is not repeated)."""
        memo = set() if memo is None else memo
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                child = f"{prefix}.{name}" if prefix else name
                yield from module.named_modules(memo, child, remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self):
        for _, m in self.named_children():
            yield m

    def apply(self, fn) -> Module:
        """Call fn on every child (recursively), then on this module: the usual way to init."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ***** modes and gradients *****

    def train(self, mode: bool = True) -> Module:
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            if p._grad is not None:
                if set_to_none:
                    p.grad = None  # through the setter, so a trace records it
                else:
                    p._grad._array[...] = 0
                    bump(p._grad, "zero_grad", None)  # an in-place change, as zero_() is

    # ***** dtype and device *****

    def to(self, *args, **kwargs) -> Module:
        """The CPU is the only device; a floating dtype converts every floating parameter,
        gradient and buffer in place (the same Parameter objects, as in PyTorch)."""
        target = kwargs.get("dtype")
        devices.check(kwargs.get("device"))
        for arg in args:
            if isinstance(arg, dtypes.dtype):
                target = arg
            elif isinstance(arg, Tensor):
                devices.check(arg.device)
                target = arg.dtype
            else:
                devices.check(arg)
        if target is None:
            return self
        if not target.is_floating_point:
            raise TypeError(
                "nn.Module.to only accepts floating point or complex dtypes, but got desired "
                f"dtype={target}"
            )
        return self._cast(dtypes.check_storable(target))

    def _cast(self, target) -> Module:
        # as PyTorch's _apply: `param.data = converted` (the same objects, a data_set in a
        # trace), and the same for each gradient, which goes first: a trace then never shows a
        # converted parameter beside a gradient of the old dtype
        for t in [*self.parameters(), *self.buffers()]:
            for held in (t._grad, t):
                if held is not None and held._array.dtype.kind == "f":
                    held.data = Tensor._wrap(held._array.astype(target.np))
        return self

    def cpu(self) -> Module:
        return self

    def float(self) -> Module:
        return self._cast(dtypes.float32)

    def double(self) -> Module:
        return self._cast(dtypes.float64)

    def half(self) -> Module:
        return self._cast(dtypes.float16)

    # ***** saving and loading *****

    def state_dict(self, *, destination=None, prefix: str = "", keep_vars: bool = False):
        """Every parameter and persistent buffer by its dotted name, detached unless keep_vars."""
        if destination is None:
            destination = OrderedDict()
        for name, value in [*self._parameters.items(), *self._buffers.items()]:
            if value is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = value if keep_vars else value.detach()
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(
                    destination=destination, prefix=f"{prefix}{name}.", keep_vars=keep_vars
                )
        return destination

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copy values in from a state_dict, in place; strict: every key must match."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        if assign:
            raise UnsupportedByGradtrace(
                "load_state_dict(assign=True) is not supported by gradtrace's engine"
            )
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []
        self._load(dict(state_dict), "", missing, unexpected, errors)
        if strict:
            if unexpected:
                keys = ", ".join(f'"{k}"' for k in unexpected)
                errors.insert(0, f"Unexpected key(s) in state_dict: {keys}. ")
            if missing:
                keys = ", ".join(f'"{k}"' for k in missing)
                errors.insert(0, f"Missing key(s) in state_dict: {keys}. ")
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + "\n\t".join(errors)
            )
        return _IncompatibleKeys(missing, unexpected)

    def _load(self, state: dict, prefix: str, missing: list, unexpected: list, errors: list):
        own = {
            name: value
            for name, value in [*self._parameters.items(), *self._buffers.items()]
            if value is not None and name not in self._non_persistent_buffers_set
        }
        for name, target in own.items():
            key = prefix + name
            if key not in state:
                missing.append(key)
                continue
            value = state[key]
            if not isinstance(value, Tensor):
                errors.append(
                    f'While copying the parameter named "{key}", expected torch.Tensor or '
                    f"Tensor-like object from checkpoint but received {type(value)}"
                )
                continue
            if target.ndim == 0 and value.shape == (1,):
                value = value[0]
            if value.shape != target.shape:
                errors.append(
                    f"size mismatch for {key}: copying a param with shape {value.shape} from "
                    f"checkpoint, the shape in current model is {target.shape}."
                )
                continue
            with no_grad():
                target.copy_(value)
        for key in state:
            if key.startswith(prefix):
                head, dot, _ = key[len(prefix) :].partition(".")
                if (dot and head not in self._modules) or (not dot and head not in own):
                    unexpected.append(key)
        for name, child in self._modules.items():
            if child is not None:
                inner = f"{prefix}{name}."
                child._load(
                    {k: v for k, v in state.items() if k.startswith(inner)},
                    inner,
                    missing,
                    unexpected,
                    errors,
                )

    # ***** printing *****

    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [
            f"({name}): " + _indent(repr(module), 2) for name, module in self._modules.items()
        ]
        lines = extra_lines + child_lines
        if not lines:
            return f"{self._get_name()}()"
        if len(extra_lines) == 1 and not child_lines:
            return f"{self._get_name()}({extra_lines[0]})"
        return f"{self._get_name()}(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self):
        return sorted({*super().__dir__(), *self._parameters, *self._buffers, *self._modules})


# ***** containers *****


class Sequential(Module):
    """Modules run one after another, each on the previous one's output."""

    def __init__(self, *args) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def _key_at(self, index) -> str:
        size = len(self)
        index = operator.index(index)
        if not -size <= index < size:
            raise IndexError(f"index {index} is out of range")
        return list(self._modules)[index % size]

    def __getitem__(self, index):
        if isinstance(index, slice):
            return type(self)(OrderedDict(list(self._modules.items())[index]))
        return self._modules[self._key_at(index)]

    def __setitem__(self, index: int, module: Module) -> None:
        setattr(self, self._key_at(index), module)

    def __delitem__(self, index) -> None:
        keys = list(self._modules)[index] if isinstance(index, slice) else [self._key_at(index)]
        for key in keys:
            delattr(self, key)
        # what is left is numbered afresh, as in PyTorch
        object.__setattr__(
            self, "_modules", {str(i): m for i, m in enumerate(self._modules.values())}
        )

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules) -> Sequential:
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        index = index + n if index < 0 else index
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def pop(self, index) -> Module:
        module = self[index]
        del self[index]
        return module

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class ModuleList(Module):
    """A list of modules, registered so that parameters() and the rest see them."""

    def __init__(self, modules=None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _key_at(self, index) -> str:
        index = operator.index(index)
        if not -len(self) <= index < len(self):
            raise IndexError(f"index {index} is out of range")
        return str(index + len(self) if index < 0 else index)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return type(self)(list(self._modules.values())[index])
        return self._modules[self._key_at(index)]

    def __setitem__(self, index: int, module: Module) -> None:
        setattr(self, self._key_at(index), module)

    def __delitem__(self, index) -> None:
        if isinstance(index, slice):
            for k in range(len(self._modules))[index]:
                delattr(self, str(k))
        else:
            delattr(self, self._key_at(index))
        object.__setattr__(
            self, "_modules", {str(i): m for i, m in enumerate(self._modules.values())}
        )

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other) -> ModuleList:
        return ModuleList([*self, *other])

    def append(self, module: Module) -> ModuleList:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules) -> ModuleList:
        if not hasattr(modules, "__iter__"):
            raise TypeError(
                "ModuleList.extend should be called with an iterable, but got "
                + type(modules).__name__
            )
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self

    def insert(self, index: int, module: Module) -> None:
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def pop(self, index) -> Module:
        module = self[index]
        del self[index]
        return module

    def __repr__(self) -> str:
        # runs of identical children print once: "(0-2): 3 x Linear(...)"
        reprs = [repr(m) for m in self]
        if not reprs:
            return f"{self._get_name()}()"
        runs: list[list] = []  # [first, last, repr]
        for i, text in enumerate(reprs):
            if runs and runs[-1][2] == text:
                runs[-1][1] = i
            else:
                runs.append([i, i, text])
        lines = [
            _indent(
                f"({first}): {text}"
                if first == last
                else f"({first}-{last}): {last - first + 1} x {text}",
                2,
            )
            for first, last, text in runs
        ]
        return f"{self._get_name()}(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """A dict of modules, registered under their keys (in insertion order)."""

    def __init__(self, modules=None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str) -> Module:
        module = self[key]
        del self[key]
        return module

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules) -> None:
        pairs = modules.items() if isinstance(modules, Mapping) else modules
        for key, module in pairs:
            self[key] = module


# ***** layers *****


def _initialised(values) -> Parameter:
    """A layer's new parameter, holding `values` (a numpy array drawn for it).

    PyTorch fills an empty Parameter in place (uniform_, normal_, fill_), so a fresh layer's
    parameters are at version 1; set here without telling the tracer, as construction is not an
    edit a learner made.
    """
    p = Parameter(Tensor._wrap(values))
    p._version_counter.value = 1
    return p


def _uniform(shape: tuple, bound: float) -> Parameter:
    # PyTorch's init draws uniform(-bound, bound) from the CPU generator, weight first
    return _initialised(rng.default_generator.uniform(shape, -bound, bound, "float32"))


class Linear(Module):
    """y = x @ weightᵀ + bias, with PyTorch's default initialisation."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        # kaiming_uniform_(a=√5) works out to uniform(±1/√in_features)
        gain = math.sqrt(2.0 / (1 + 5))
        bound = math.sqrt(3.0) * (gain / math.sqrt(in_features)) if in_features else 0.0
        self.weight = _uniform((out_features, in_features), bound)
        if bias:
            bias_bound = 1 / math.sqrt(in_features) if in_features > 0 else 0
            self.bias = _uniform((out_features,), bias_bound)
        else:
            self.register_parameter("bias", None)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Identity(Module):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input):
        return input


class Flatten(Module):
    """Flattens dims start_dim..end_dim into one (by default all but the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dim `dim` into the sizes `unflattened_size`: Flatten's inverse."""

    def __init__(self, dim: int, unflattened_size) -> None:
        super().__init__()
        if not isinstance(dim, int):
            raise TypeError("invalid argument type for dim parameter")
        if not isinstance(unflattened_size, tuple | list) or not all(
            isinstance(n, int) for n in unflattened_size
        ):
            raise TypeError(
                "unflattened_size must be tuple of ints, but found type "
                + type(unflattened_size).__name__
            )
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input: Tensor) -> Tensor:
        dim = self.dim + input.ndim if self.dim < 0 else self.dim
        shape = (*input.shape[:dim], *self.unflattened_size, *input.shape[dim + 1 :])
        return input.view(shape)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Embedding(Module):
    """A lookup table: row i of `weight` is the vector for index i (normal(0, 1) at first)."""

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight: Tensor | None = None,
        _freeze: bool = False,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        if padding_idx is not None:
            if padding_idx >= num_embeddings or padding_idx < -num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            if padding_idx < 0:
                padding_idx += num_embeddings
        self.padding_idx, self.max_norm, self.norm_type = padding_idx, max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            values = rng.default_generator.normal((num_embeddings, embedding_dim), 0.0, 1.0)
            self.weight = _initialised(values)
            if padding_idx is not None:
                # PyTorch zeroes the padding row in place afterwards: a second version
                self.weight._array[padding_idx] = 0
                self.weight._version_counter.value += 1
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError(
                    "Shape of weight does not match num_embeddings and embedding_dim"
                )
            self.weight = Parameter(_weight)
        self.weight.requires_grad_(not _freeze)

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, padding_idx=None, **kw):
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx, _weight=embeddings, _freeze=freeze, **kw)

    def forward(self, input: Tensor) -> Tensor:
        return F.embedding(
            input,
            self.weight,
            self.padding_idx,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.sparse,
        )

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            text += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            text += ", sparse=True"
        return text


class _Activation(Module):
    def forward(self, input: Tensor) -> Tensor:
        return self.function(input)


class ReLU(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(_Activation):
    function = staticmethod(F.tanh)


class Sigmoid(_Activation):
    function = staticmethod(F.sigmoid)


class Softmax(Module):
    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"
