"""MKL's vector math library (engine/vml.py) inside a hardened child.

MKL opens its CPU-specific libraries at its first call; a child may open no file, so the
zygote's warm-up must have made that call. If it had not, the child would fall back to the
formula (or fail), and its float32 sin, exp, sqrt, ... would not have PyTorch's last bit.
"""

from __future__ import annotations

import json

import numpy as np

from app.sandbox import frontdoor
from engine import vml
from engine.tracer import trace_snippet

FUNCTIONS = {"sin": np.sin, "cos": np.cos, "exp": np.exp, "log": np.log, "tanh": np.tanh,
             "sqrt": np.sqrt, "atan": np.arctan, "tan": np.tan}  # fmt: skip

CODE = f"""
import torch
x = torch.linspace(0.01, 3.2, 151)  # printed in hex, under the 64 KiB output limit
print("x", *[v.hex() for v in x.tolist()])
for name in {list(FUNCTIONS)!r}:
    for t in (x, x[::37].double(), x[::9], x[5]):
        print(name, t.dtype, *[v.hex() for v in getattr(torch, name)(t).reshape(-1).tolist()])
w = torch.nn.Parameter(x.clone())
opt = torch.optim.Adam([w], lr=0.1)
w.grad = torch.sin(x * 7)
opt.step()
print("adam", *[v.hex() for v in w.tolist()])
"""


def _first_line(stdout: str, *start: str) -> np.ndarray:
    """The float32 values of the first printed line that starts with these words."""
    for line in stdout.splitlines():
        words = line.split()
        if words[: len(start)] == list(start):
            return np.array([float.fromhex(v) for v in words[len(start) :]], np.float32)
    raise AssertionError(f"nothing printed for {start}")


def test_a_hardened_child_computes_with_vml_as_the_process_does(sandbox, layers):
    assert vml.unavailable() is None
    sandboxed = sandbox.run_blocking(CODE)
    assert sandboxed["outcome"] == {"status": "ok"}, sandboxed["outcome"]
    in_process = trace_snippet(CODE, importer=frontdoor.make_importer())
    assert json.dumps(sandboxed, sort_keys=True) == json.dumps(in_process, sort_keys=True)

    # and the values are VML's, not the fallback formula's (which differs in some of them)
    x = _first_line(sandboxed["stdout"], "x")
    differ = set()
    for name, function in FUNCTIONS.items():
        got = _first_line(sandboxed["stdout"], name, "torch.float32")
        assert np.array_equal(got, vml.compute(function, x)), name
        if not np.array_equal(got, function(x.astype(np.float64)).astype(np.float32)):
            differ.add(name)
    assert "sqrt" in differ and len(differ) > 2, differ
