"""Run every engine op once in the zygote, before any child is forked.

numpy and the engine import some modules and read some files only the first time a function
runs (numpy.ma, the engine's torch_surface.json, the timezone, the source lines warnings
quote, and MKL's vector math library with the CPU-specific parts it opens at its first call).
In a child those first times would meet Landlock and fail, so the zygote gets them done here:
a sweep calls every public function and Tensor method, and every function of the numpy face,
with a handful of argument shapes, differentiates what comes out and prints it; then a few
ordinary snippets go through the same path a child's run takes.
tests/app/sandbox/test_engine_ops.py checks in hardened children that nothing was missed.
"""

from __future__ import annotations

import contextlib
import functools
import io
import linecache
import sys
import time
import warnings
from collections.abc import Callable

import numpy as np

import engine
from engine import locations, vml
from engine.nn import functional
from engine.snippet import Importer, reset_engine_state

SNIPPETS = (
    """
import torch
a = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(4.0, requires_grad=True)
d = a*b + a
d.backward()
print(a.grad.item(), b.grad.item(), d, d.grad_fn, d.grad_fn.next_functions)
""",
    """
import torch, torch.nn as nn, torch.nn.functional as F
from torch import optim
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3), nn.Softmax(dim=1))
for opt in (optim.SGD(model.parameters(), lr=0.1, momentum=0.9), optim.Adam(model.parameters())):
    x, y = torch.randn(5, 4), torch.randint(0, 3, (5,))
    loss = nn.CrossEntropyLoss()(model(x), y) + F.mse_loss(model(x), torch.rand(5, 3))
    opt.zero_grad(); loss.backward(); opt.step()
print(model, list(model.parameters())[0].grad, loss)
with torch.no_grad():
    print(model(torch.randn(2, 4)).argmax(dim=1))
""",
    """
import math, random, itertools, functools, operator, collections, dataclasses, typing
import statistics, warnings, time
import numpy as np
from collections import abc, Counter, defaultdict, namedtuple, deque, OrderedDict
print(statistics.mean([1, 2, 3]), statistics.stdev([1.0, 2.0, 4.0]), statistics.median([3, 1]))
print(time.strftime("%Y", time.localtime()), time.perf_counter() > 0, random.random())
warnings.warn("warm")
P = namedtuple("P", "x y")
@dataclasses.dataclass
class D:
    x: int = 1
print(D(), P(1, 2), Counter("aab"), np.linalg.norm(np.ones(3)), np.random.randn(2).shape)
print(f"{1.5:.3f} {10**30} {'é'} {[1.0, float('nan')]}")
""",
    "import torch\ntorch.fft\n",
    "import torch\ntorch.ones(3) + torch.ones(2)\n",
    "import os\n",
    "x = (\n",
    "def f(n):\n    return f(n + 1)\nf(0)\n",
)


def warm(importer: Importer, run: Callable[[str], object]) -> None:
    """Sweep the engine and the numpy face, then run SNIPPETS with `run(code)`."""
    vml.warm()  # every function and dtype, whether or not the sweep's inputs reach it
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            _sweep_engine()
            _sweep_numpy(importer("numpy", fromlist=("array",)))
        time.localtime()
    _cache_engine_sources()
    for code in SNIPPETS:
        run(code)


def _cache_engine_sources() -> None:
    """Warnings quote the engine line they come from; children cannot read the files. The
    engine's code names its files as engine.locations does (engine/nn/modules.py)."""
    for name, module in list(sys.modules.items()):
        if name == "engine" or name.startswith("engine."):
            linecache.getlines(locations.code_filename(module), vars(module))


def _tensors() -> list:
    t = engine.tensor
    return [
        t(1.5, requires_grad=True),
        t([1.0, -2.0, 3.0], requires_grad=True),
        t([[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]], requires_grad=True),
        t([1, 2, 3]),
        engine.randn(40, 40, dtype=engine.float64),  # printed in summary
    ]


def _arguments(tensors: list) -> list[tuple]:
    scalar, vector, matrix, integers = tensors[:4]
    return [
        (),
        (scalar,),
        (vector,),
        (matrix,),
        (integers,),
        (0,),
        (1,),
        (-1,),
        (0.5,),
        (2, 3),
        (0, 1),
        ([1.0, 2.0],),
        (engine.float64,),
        (matrix, matrix),
        (vector, 0),
    ]


def _call_all(functions: list, arguments: list[tuple], used: set | None = None) -> None:
    for function in functions:
        for args in arguments:
            args = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
            try:
                out = function(*args)
            except Exception:
                continue
            _use(out, used)


def _use(out, used: set | None) -> None:
    """Print a result, and send a gradient back through it; with `used`, once per kind of
    tensor result (its dtype, rank, and the node that made it). The call itself always runs;
    what printing and backward then reach depends on the kind, and repeating a kind was most
    of the engine sweep's time (tests/app/sandbox/test_engine_ops.py runs every op in hardened
    children)."""
    for item in out if isinstance(out, tuple | list) else (out,):
        if used is not None and isinstance(item, engine.Tensor):
            kind = _kind(item)
            if kind in used:
                continue
            used.add(kind)
        with contextlib.suppress(Exception):
            repr(item)
            if isinstance(item, engine.Tensor):
                item.tolist()
                if item.requires_grad and item.dtype.is_floating_point:
                    item.sum().backward(retain_graph=True)


def _kind(item) -> tuple:
    try:
        dtype, rank, empty = str(item.dtype), item.dim(), item.numel() == 0
    except Exception:  # a broken result is its own kind: printing it is what fails
        return (engine.Tensor, id(item))
    return (engine.Tensor, dtype, rank, empty, type(item.grad_fn), item.is_leaf)


def _attribute(obj, name: str):
    """obj.name (a property runs here, which is the point), or None if that fails."""
    try:
        return getattr(obj, name)
    except Exception:
        return None


def _sweep_engine() -> None:
    engine.manual_seed(0)
    tensors = _tensors()
    arguments = _arguments(tensors)
    functions = [getattr(engine, name) for name in engine.__all__]
    functions += [getattr(functional, name) for name in dir(functional) if name[0] != "_"]
    used: set = set()
    _call_all([f for f in functions if callable(f)], arguments, used)
    for t in _tensors():
        names = [name for name in dir(engine.Tensor) if name not in ("__init__", "__new__")]
        methods = [m for m in map(functools.partial(_attribute, t), names) if callable(m)]
        _call_all(methods, arguments, used)
    for missing in ("fft", "hub", "load", "save", "no_such_thing"):
        with contextlib.suppress(Exception):
            getattr(engine, missing)
    with contextlib.suppress(Exception):
        engine.tensor([1.0]).no_such_method  # noqa: B018
    reset_engine_state()  # the sweep called set_default_dtype(float64), set_grad_enabled, ...
    _sweep_modules()


def _sweep_modules() -> None:
    nn, optim = engine.nn, engine.optim
    x = engine.randn(5, 4)
    targets = (engine.rand(5, 3), engine.tensor([0, 1, 2, 0, 1]))
    layers = [nn.Linear(4, 3), nn.ReLU(), nn.Tanh(), nn.Sigmoid(), nn.Identity(), nn.Softmax(1)]
    model = nn.Sequential(*layers)
    params = list(model.parameters())
    for opt in (optim.SGD(params, lr=0.1, momentum=0.9), optim.Adam(params)):
        opt.zero_grad()
        out = model(x)
        for loss in (nn.MSELoss()(out, targets[0]), nn.CrossEntropyLoss()(out, targets[1])):
            loss.backward(retain_graph=True)
        opt.step()
    repr(model)
    list(model.named_parameters())
    with engine.no_grad():
        model(x)
    engine.autograd.grad(model(x).sum(), list(model.parameters()))


def _sweep_numpy(face) -> None:
    a = np.arange(6.0).reshape(2, 3) + 1.0
    arguments = [(a,), (a, a), (a, 1), (a.T,), (a, a.T), (a.ravel(),), (3,), ((2, 3),), ([1.0],)]
    for name in dir(face):
        if name[0] != "_":
            function = getattr(face, name)
            if callable(function):
                _call_all([function], arguments)
    for sub in (face.random, face.linalg):
        for name in dir(sub):
            if name[0] != "_" and callable(getattr(sub, name)):
                _call_all([getattr(sub, name)], arguments + [(a[:, :2],), (np.eye(3),)])
