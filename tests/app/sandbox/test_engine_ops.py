"""Every engine op once inside a hardened child, and the numpy and time faces.

A module numpy or the engine loads lazily, or a file read the first time a function runs, works
in-process and fails only in a child (Landlock, seccomp). The zygote's warm-up must have done
all of them. The golden snippets (recorded from PyTorch, tests/engine/golden) between them use
every op the engine has; each must give, through the sandbox, the very trace it gives in-process.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from app.sandbox import frontdoor
from engine.tracer import trace_snippet
from tests import corpus
from tests.corpus import STEPWISE as SNIPPETS

LAZY_FAILURES = ("ModuleNotFoundError", "ImportError", "SystemError", "PermissionError", "OSError")

FACES = """
import math, random, statistics, time, itertools, functools, operator, collections, typing
import dataclasses, warnings
import numpy as np
from collections import abc
a = np.arange(6.0).reshape(2, 3) + 1
print(np.linalg.norm(a), np.linalg.inv(a @ a.T).round(3), np.linalg.det(a @ a.T).round(3))
print(np.linalg.svd(a)[1].round(3), np.linalg.eigh(a @ a.T)[0].round(3), np.linalg.solve(
    a @ a.T, np.ones(2)).round(3), np.linalg.qr(a)[1].round(3))
print(np.median(a), np.percentile(a, 30), np.quantile(a, 0.5), np.std(a), np.var(a))
print(np.einsum("ij,kj->ik", a, a), np.histogram(a, bins=3)[0], np.unique(a % 2))
print(np.sort(a, axis=0), np.argsort(a.ravel()), np.cumsum(a), np.clip(a, 2, 4))
print(np.concatenate([a, a]).shape, np.stack([a, a]).shape, np.tile(a, 2).shape)
print(np.random.default_rng(0).normal(size=2).shape, np.random.rand(2).shape)
np.random.seed(0)
print(np.random.randint(0, 10, 3), np.random.choice(5, 2), np.random.permutation(4))
print(statistics.mean([1, 2, 3]), statistics.median([3, 1, 2]), statistics.pstdev([1.0, 3.0]))
print(time.strftime("%Y", time.gmtime(0)), time.sleep(0.5), round(math.pi, 3))
print(collections.Counter("hello").most_common(1), functools.reduce(operator.add, [1, 2]))
print(list(itertools.permutations([1, 2])), random.random() < 1, f"{1e300 * 10}")
"""


# Every golden but the `long` ones, which reach the event cap: there the sandbox stops the run
# (event_limit) and an in-process trace just stops recording. In batches, each run through the
# sandbox eight at a time, so that the xdist workers share them out.
BATCHES = 8


def test_there_are_golden_snippets():
    assert len(SNIPPETS) > 300


@pytest.mark.parametrize(
    "batch", corpus.spread(range(BATCHES), lambda b: f"batch-{b + 1}-of-{BATCHES}")
)
def test_a_golden_snippet_traces_the_same_in_a_hardened_child(batch, users_sandbox, layers):
    # the heaviest goldens take a third of a second in-process, more in a cold child on a busy
    # machine: they run with a user's CPU budget, not the suite's short one for bombs
    snippets = SNIPPETS[batch::BATCHES]

    def run(numbered):
        i, snippet = numbered
        return users_sandbox.run_blocking(snippet["source"], client=f"golden-{i % 8}")

    with ThreadPoolExecutor(8) as pool:
        sandboxed = list(pool.map(run, enumerate(snippets)))
    wrong = {}
    for snippet, trace in zip(snippets, sandboxed, strict=True):
        outcome = trace["outcome"]
        if outcome.get("type") in LAZY_FAILURES or outcome["status"] not in ("ok", "error"):
            wrong[snippet["slug"]] = outcome
        elif json.dumps(trace, sort_keys=True) != json.dumps(
            corpus.traced(snippet["source"]),  # in-process, with the front door's importer
            sort_keys=True,
        ):
            wrong[snippet["slug"]] = "a different trace from the in-process one"
    assert wrong == {}


def test_the_faces_work_in_a_hardened_child(sandbox, layers):
    sandboxed = sandbox.run_blocking(FACES)
    in_process = trace_snippet(FACES, importer=frontdoor.make_importer())
    assert sandboxed["outcome"] == {"status": "ok"}, sandboxed["outcome"]
    assert sandboxed["stdout"] == in_process["stdout"]
    assert "None" in sandboxed["stdout"]  # time.sleep returned at once


def test_the_allowlist_says_what_can_be_imported(sandbox, layers):
    trace = sandbox.run_blocking("import torch\nimport os\n")
    assert trace["outcome"]["type"] == "ImportError"
    assert trace["outcome"]["message"] == (
        "gradtrace snippets can import torch, math, random, itertools, functools, operator, "
        "collections, dataclasses, typing, contextlib, re, statistics, warnings, time, numpy, "
        "copy (not 'os')"
    )
    assert trace["outcome"]["span"] == [2, 0, 2, 9]


@pytest.mark.parametrize(
    ("code", "problem"),
    [
        ("import numpy as np\nnp.save('x', np.ones(1))\n", "'save' is not available"),
        ("import numpy.lib\n", "(not 'numpy.lib')"),
        ("from numpy import ctypeslib\n", "cannot import name 'ctypeslib'"),
        ("from time import sleep\nsleep(-1)\n", "sleep length must be non-negative"),
    ],
)
def test_the_faces_leave_out_files_pickles_and_ctypes(sandbox, layers, code, problem):
    trace = sandbox.run_blocking(code)
    assert trace["outcome"]["status"] == "error"
    assert problem in trace["outcome"]["message"]


EDGES = [
    "import torch\ntorch.fft\n",
    "import torch\ntorch.ones(1).no_such_method()\n",
    "import torch.nn as nn\nnn.Conv2d(1, 1, 3)\n",
    "import torch.nn.functional as F\nF.gelu\n",
    "import torch\nprint(torch.randn(50, 50))\n",
    "import torch\nx = torch.tensor([1., 2.], requires_grad=True)\ny = x * 2\n"
    "print(y.grad_fn.next_functions, y)\n",
    "π = 3.14\nprint(π * 2)\n",
    "import warnings\nwarnings.warn('careful')\n",
    "import torch\ntorch.manual_seed(1)\n"
    "print(torch.rand(3), torch.randint(0, 5, (3,)), torch.randperm(4), torch.initial_seed())\n",
    "print(2 ** 20000)\n",
    "print('a')\nexit(0)\nprint('b')\n",
    "import torch\nwith torch.no_grad():\n    y = torch.ones(2) * 3\nprint(y.requires_grad)\n",
    "x = [1, 2\n",
]


@pytest.mark.parametrize("code", EDGES)
def test_engine_edges_trace_the_same_in_a_hardened_child(sandbox, layers, code):
    sandboxed = sandbox.run_blocking(code)
    assert sandboxed["outcome"].get("type") not in LAZY_FAILURES, sandboxed["outcome"]
    in_process = trace_snippet(code, importer=frontdoor.make_importer())
    assert json.dumps(sandboxed, sort_keys=True) == json.dumps(in_process, sort_keys=True)
