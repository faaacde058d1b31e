"""Record where PyTorch defines each name it offers, so the engine's print as PyTorch's do.

`type(model)` prints `<class 'torch.nn.modules.container.Sequential'>` in PyTorch, `torch.add`
is `<built-in method add of type object at 0x...>`, and each torch module has a file inside
the torch package. engine/torch_names.py and engine/torch_modules.py read what this writes.

Run with a Python that has torch 2.13.0: .venv-torch/bin/python tools/record_torch_names.py
"""

import importlib
import inspect
import json
import pathlib
import sys

import torch

# The modules a snippet can reach by name (engine/torch_modules.py builds one for each the
# engine has); the modules the classes below are defined in are recorded as well.
NAMESPACES = (
    "torch",
    "torch.nn",
    "torch.nn.functional",
    "torch.nn.init",
    "torch.nn.utils",
    "torch.nn.modules",
    "torch.optim",
    "torch.optim.lr_scheduler",
    "torch.autograd",
    "torch.autograd.functional",
    "torch.autograd.gradcheck",
    "torch.linalg",
    "torch.cuda",
    "torch.backends",
    "torch.random",
    "torch.return_types",
    "torch.utils",
    "torch.utils.data",
    "torch.accelerator",
)


def kind(value) -> str | None:
    """How PyTorch's object prints: a class, a Python function, or one of two built-ins."""
    if isinstance(value, type):
        return "class"
    if inspect.isfunction(value):
        return "function"
    if inspect.isbuiltin(value):
        # torch.add: <built-in method add of type object at 0x...>; torch.get_default_dtype:
        # <built-in function get_default_dtype>
        return "method" if repr(value).startswith("<built-in method ") else "builtin"
    return None


def main() -> None:
    root = pathlib.Path(torch.__file__).parent.parent
    names, modules = {}, {}
    for namespace in NAMESPACES:
        module = importlib.import_module(namespace)
        modules[namespace] = pathlib.Path(module.__file__).relative_to(root).as_posix()
        for name in sorted(n for n in dir(module) if not n.startswith("_")):
            value = getattr(module, name)
            found = kind(value)
            if found is None or getattr(value, "__module__", None) is None:
                continue
            names[f"{namespace}.{name}"] = [found, value.__module__, value.__qualname__]
            defined_in = sys.modules.get(value.__module__)
            if (
                found == "class"
                and value.__module__.startswith("torch.")
                and value.__module__ not in modules
                and getattr(defined_in, "__file__", None)
            ):
                path = pathlib.Path(defined_in.__file__).relative_to(root).as_posix()
                modules[value.__module__] = path
    out = pathlib.Path(__file__).parent.parent / "engine" / "torch_names.json"
    out.write_text(
        f'{{"torch_version": {json.dumps(torch.__version__)},\n'
        f'"modules": {_lines(modules)},\n"names": {_lines(names)}}}\n'
    )
    print(f"wrote {out} ({len(names)} names, {len(modules)} modules)")


def _lines(table: dict) -> str:
    """One entry a line, sorted: a diff after a new PyTorch shows what moved."""
    entries = (f"{json.dumps(key)}: {json.dumps(table[key])}" for key in sorted(table))
    return "{\n" + ",\n".join(entries) + "\n}"


if __name__ == "__main__":
    main()
