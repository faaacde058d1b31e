"""Running a user's snippet with `import torch` resolving to the engine.

The tracer runs snippets through here, and so do the benchmarks (untraced), so both see the same
globals, the same imports and the same starting state.
"""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Callable
from types import CodeType, ModuleType

import numpy as np

from engine import dtypes, grad_mode, locations, printing, torch_modules
from engine import random as rng

SNIPPET_FILENAME = "<snippet>"

# An unseeded PyTorch process starts from a random seed, so no choice matches it; 0 is what
# tools/record_goldens.py seeds real PyTorch with, so an unseeded snippet draws the same numbers
# here as in the recorded goldens.
SEED = 0

# What `import torch...` means inside a snippet.
TORCH_MODULES = {
    "torch": "engine",
    "torch.nn": "engine.nn",
    "torch.nn.functional": "engine.nn.functional",
    "torch.optim": "engine.optim",
    "torch.autograd": "engine.autograd",
    # torch.autograd.gradcheck is a function, and the module it comes from: `from
    # torch.autograd.gradcheck import GradcheckError` imports from the module
    "torch.autograd.gradcheck": "engine.gradcheck",
}

Importer = Callable[..., ModuleType]


def compile_snippet(code: str) -> CodeType:
    """Compile with the filename the tracer looks for on the stack."""
    return compile(code, SNIPPET_FILENAME, "exec", dont_inherit=True)


def make_import(importer: Importer | None = None) -> Importer:
    """An `__import__` that gives torch's modules (engine/torch_modules.py: the engine's, under
    PyTorch's names and files) and hands every other name to `importer`. The engine itself is
    not to be had under its own name, which would show where it is: as on a machine with
    PyTorch, there is no module named engine."""
    fallback = importer or builtins.__import__
    modules = torch_modules.for_snippet(TORCH_MODULES)
    locations.relocate("engine")  # nor does its code name the folder (at the first run)

    def __import__(name, globals=None, locals=None, fromlist=(), level=0):  # noqa: A002
        if level == 0 and (name == "torch" or name.startswith("torch.")):
            module = modules.get(name) or _submodule(modules["torch"], name)
            # `import torch.nn` binds the top package; `from torch.nn import X` wants torch.nn
            return module if fromlist else modules["torch"]
        if level == 0 and type(name) is str and name.partition(".")[0] == "engine":
            raise ModuleNotFoundError(f"No module named '{name}'", name=name)
        return fallback(name, globals, locals, fromlist, level)

    return __import__


def _submodule(torch: ModuleType, name: str) -> ModuleType:
    """torch.fft and friends: the engine's own error says whether PyTorch has it at all."""
    found = torch
    try:
        for part in name.split(".")[1:]:
            found = getattr(found, part)
    except AttributeError:
        found = None  # PyTorch has no such name either
    if not isinstance(found, ModuleType):
        raise ModuleNotFoundError(f"No module named '{name}'", name=name)
    return found


def snippet_globals(
    importer: Importer | None = None, print_function: Callable | None = None
) -> dict:
    """Fresh globals for one run: `__main__`, our import, and optionally a replaced print."""
    namespace = dict(vars(builtins))
    namespace["__import__"] = make_import(importer)
    if print_function is not None:
        namespace["print"] = print_function
    return {"__name__": "__main__", "__builtins__": namespace}


def reset_engine_state() -> None:
    """Start every run alike: grad mode on, float32 the default dtype, PyTorch's default print
    options, the default generator seeded with SEED in place of PyTorch's random seed (its draws
    count as unseeded)."""
    grad_mode.state.enabled = True
    dtypes.set_default_float(dtypes.float32)
    printing.reset_printoptions()
    rng.default_generator.start_unseeded(SEED)
    rng.default_generator.drew_unseeded = False  # this run has drawn nothing yet
    # numpy's floating-point warnings ("divide by zero", "Mean of empty slice") are not
    # PyTorch's, which returns inf and nan silently: a learner's stderr must not show them
    np.seterr(all="ignore")
    warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"(numpy|engine)(\.|$)")


def run_snippet(
    code: str, *, importer: Importer | None = None, print_function: Callable | None = None
) -> dict:
    """Run `code` untraced and return its globals. Exceptions propagate."""
    compiled = compile_snippet(code)
    namespace = snippet_globals(importer, print_function)
    reset_engine_state()
    try:
        exec(compiled, namespace)
    finally:
        grad_mode.state.enabled = True
    return namespace
