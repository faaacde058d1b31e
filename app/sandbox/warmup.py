"""Load in the zygote, before any child is forked, everything a child would load on first use.

A child can open no file (Landlock), and the zygote forgets every path before it forks
(paths.py), so whatever numpy and the engine load lazily must be loaded here: a submodule numpy
imports on first touch (numpy.ma), the engine's table of PyTorch's names (torch_surface.json,
read the first time a snippet names something the engine lacks), the timezone, the engine
source lines warnings quote, and MKL's vector math library with the CPU-specific parts it
opens at its first call. Then a few ordinary snippets go through the same path a child's run
takes.

It once called every engine function and numpy function with a handful of arguments, to be
sure; that sweep loaded nothing more than the list above (an strace of it opens those files
only) and took two thirds of the zygote's start. tests/app/sandbox/test_engine_ops.py is the
check instead: every golden snippet, between them every op, runs in hardened children and
must trace as it does in-process.
"""

from __future__ import annotations

import contextlib
import importlib
import linecache
import sys
import time
from collections.abc import Callable

import engine
from engine import locations, vml

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


def warm(run: Callable[[str], object]) -> None:
    """Load what children would load lazily, then run SNIPPETS with `run(code)`."""
    vml.warm()  # every function and dtype, whatever a snippet calls first
    importlib.import_module("numpy.ma")  # numpy imports it on first touch of np.ma
    _meet_missing_names()
    time.localtime()
    _cache_engine_sources()
    for code in SNIPPETS:
        run(code)


def _meet_missing_names() -> None:
    """Ask for names the engine lacks: the first such question reads its table of PyTorch's
    names, which tells a name PyTorch has (unsupported) from a typo (AttributeError)."""
    for missing in ("fft", "hub", "load", "save", "no_such_thing"):
        with contextlib.suppress(Exception):
            getattr(engine, missing)
    with contextlib.suppress(Exception):
        engine.tensor([1.0]).no_such_method  # noqa: B018


def _cache_engine_sources() -> None:
    """Warnings quote the engine line they come from; children cannot read the files. The
    engine's code names its files as engine.locations does (engine/nn/modules.py)."""
    for name, module in list(sys.modules.items()):
        if name == "engine" or name.startswith("engine."):
            linecache.getlines(locations.code_filename(module), vars(module))
