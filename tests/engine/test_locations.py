"""No path of the server shows through torch (issue 22), and torch's names are PyTorch's.

Each probe is a snippet a curious (or hostile) learner might write to find where the engine
lives: torch's module attributes, import errors, code objects, tracebacks, warnings, help().
The test knows the checkout's path (the snippet never sees it) and looks for it in everything
the run gives back. tests/app/sandbox/test_locations.py runs the same probes in the sandbox.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import FunctionType, ModuleType

import pytest

import engine
from engine import locations, snippet, torch_modules
from engine.snippet import run_snippet
from engine.tracer import trace_snippet
from engine.unsupported import UnsupportedByGradtrace

CHECKOUT = str(Path(engine.__file__).parents[1])

WALK_FRAMES = """
    tb = error.__traceback__
    while tb is not None:
        print(tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
"""

# name: (snippet, something the run must show, so that the probe is known to have looked)
PROBES = {
    "module-files": (
        "import torch, torch.nn.functional as F\n"
        "print(torch.__file__, torch.nn.__file__, F.__file__, torch.optim.__file__)\n"
        "print(torch.autograd.__file__, torch.nn.init.__file__, torch.__cached__)",
        "site-packages/torch/nn/functional.py",
    ),
    "module-reprs": (
        "import torch, torch.nn as nn\n"
        "print(torch, nn, nn.functional, torch.optim, torch.autograd, torch.linalg, torch.cuda)\n"
        "print(torch.nn.init, torch.nn.utils, torch.optim.lr_scheduler, torch.nn.modules.linear)",
        "<module 'torch' from",
    ),
    "module-specs": (
        "import torch\n"
        "print(torch.__spec__, torch.__loader__, torch.__path__, torch.nn.__spec__)\n"
        "print(torch.nn.functional.__spec__, torch.__spec__.submodule_search_locations)",
        "ModuleSpec(name='torch'",
    ),
    "module-dicts": (
        "import torch\nfor m in (torch, torch.nn, torch.nn.functional, torch.optim):\n"
        "    print(vars(m))\n    print(dir(m))",
        "'__name__': 'torch'",
    ),
    "import-error": ("from torch import nosuchname", "cannot import name 'nosuchname'"),
    "import-error-nn": ("from torch.nn import nosuchname", "from 'torch.nn'"),
    "import-error-functional": (
        "from torch.nn.functional import nosuchname",
        "from 'torch.nn.functional'",
    ),
    "import-error-optim": ("from torch.optim import nosuchname", "from 'torch.optim'"),
    "import-error-caught": (
        "try:\n    from torch import nosuchname\nexcept ImportError as error:\n"
        "    print(error, error.name, error.path, error.args)",
        "site-packages/torch/__init__.py",
    ),
    "import-submodule": ("import torch.nosuch", "No module named 'torch.nosuch'"),
    "import-engine": ("import engine", "No module named 'engine'"),
    "dunder-import-engine": ("print(__import__('engine.nn'))", "No module named 'engine.nn'"),
    "code-filenames": (
        "import torch\nprint(torch.nn.Linear.__init__.__code__.co_filename)\n"
        "print(torch.nn.functional.relu.__code__.co_filename)\n"
        "print(torch.add.func.__code__.co_filename, torch.manual_seed.__code__)\n"
        "print(torch.Tensor.backward.__code__.co_filename)",
        "modules.py",
    ),
    "grad-fn-code": (
        "import torch\ny = torch.ones(2, requires_grad=True) * 2\n"
        "print(type(y.grad_fn).__mro__, y.grad_fn.name.__code__.co_filename)",
        "MulBackward0",
    ),
    "traceback-frames": (
        "import torch\ntry:\n    torch.ones(2) + torch.ones(3)\nexcept RuntimeError as error:\n"
        + WALK_FRAMES,
        "<snippet>",
    ),
    "traceback-frames-module": (
        "import torch\ntry:\n    torch.nn.Linear(2, 3)(torch.ones(4))\n"
        "except RuntimeError as error:\n" + WALK_FRAMES,
        "<snippet>",
    ),
    "warnings": (
        "import torch, torch.nn as nn\nx = torch.randn(2, 3)\nnn.Softmax()(x)\n"
        "torch.nn.functional.softmax(x)\n(x * 2).grad\n"
        "torch.nn.utils.clip_grad_norm_(iter([]), 1.0)",
        "Implicit dimension choice",
    ),
    "help-torch": ("import torch\nhelp(torch)", "torch"),
    "help-class": ("import torch\nhelp(torch.nn.Linear)\nhelp(torch.add)", "Linear"),
    "version-and-names": (
        "import torch\nprint(torch.__version__, torch.__name__, torch.nn.__name__, torch.__doc__)",
        "2.13.0",
    ),
    "unsupported-import": ("from torch import fft", "torch.fft is not supported"),
}


def _shown(trace: dict) -> str:
    return json.dumps([trace["stdout"], trace["stderr"], trace["outcome"]])


@pytest.mark.parametrize("name", PROBES)
def test_no_probe_shows_where_the_engine_is(name: str) -> None:
    code, expected = PROBES[name]
    shown = _shown(trace_snippet(code))
    assert expected in shown, shown  # the probe looked
    assert CHECKOUT not in shown


def test_torch_modules_name_no_engine_module() -> None:
    """Every class a snippet can name prints a torch module, down its MRO; every function too."""
    left = set()
    for name, module in torch_modules.for_snippet(snippet.TORCH_MODULES).items():
        for attribute, value in vars(module).items():
            if attribute.startswith("__"):
                continue
            if isinstance(value, type):
                left |= {f"{name}.{attribute}: {c}" for c in value.__mro__ if _engines(c)}
            elif callable(value) and _engines(value):
                left.add(f"{name}.{attribute}: {value.__module__}")
            elif isinstance(value, ModuleType):
                assert value.__name__.startswith("torch"), f"{name}.{attribute} is {value}"
    assert not left, sorted(left)


def _engines(value) -> bool:
    return str(getattr(value, "__module__", "")).startswith("engine")


def test_a_run_changes_its_own_torch_only() -> None:
    run_snippet("import torch\ntorch.ones = None\ntorch.nn.Linear = None")
    namespace = run_snippet("import torch\nx = torch.ones(2)\nL = torch.nn.Linear")
    assert namespace["L"] is engine.nn.Linear
    assert engine.ones is not None


def test_imports_as_pytorch_answers_them() -> None:
    for code, error, message in [
        ("import torch.nosuch", ModuleNotFoundError, "No module named 'torch.nosuch'"),
        ("import torch.nn.nosuch", ModuleNotFoundError, "No module named 'torch.nn.nosuch'"),
        ("import torch.Tensor", ModuleNotFoundError, "No module named 'torch.Tensor'"),
        ("from torch import fft", UnsupportedByGradtrace, "torch.fft is not supported"),
        ("from torch.nn import Conv2d", UnsupportedByGradtrace, "torch.nn.Conv2d is not"),
        ("import engine.nn", ModuleNotFoundError, "No module named 'engine.nn'"),
    ]:
        with pytest.raises(error, match=message):
            run_snippet(code)
    namespace = run_snippet(
        "import torch.optim.sgd\nfrom torch.optim.sgd import SGD\n"
        "from torch.nn.modules.linear import Linear\nimport torch.nn.modules.loss as loss\n"
        "from torch.autograd.graph import Node\nfrom torch import *"
    )
    assert namespace["SGD"] is engine.optim.SGD and namespace["Linear"] is engine.nn.Linear
    assert namespace["loss"].MSELoss is engine.nn.MSELoss and "tensor" in namespace


def test_builtins_print_as_pytorch_and_call_through() -> None:
    namespace = run_snippet("import torch\nadd, zeros, f64 = torch.add, torch.zeros, torch.float64")
    add = namespace["add"]
    assert repr(add).startswith("<built-in method add of type object at 0x")
    assert str(type(add)) == "<class 'builtin_function_or_method'>"
    assert add(engine.ones(2), 1).tolist() == [2.0, 2.0]
    assert namespace["zeros"](2, dtype=namespace["f64"]).dtype is engine.float64


def test_the_engines_code_names_its_files_from_the_package_root() -> None:
    run_snippet("import torch")  # the first run renames what is loaded
    assert engine.nn.Linear.__init__.__code__.co_filename == "engine/nn/modules.py"
    assert locations.code_filename(engine.nn.functional) == "engine/nn/functional.py"
    for function in (engine.nn.functional.relu, engine.Tensor.backward):
        assert isinstance(function, FunctionType)
        assert not function.__code__.co_filename.startswith("/")
