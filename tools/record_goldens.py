"""Record what real PyTorch does for a broad set of small programs ("snippets").

Run under the torch venv (the test suite itself never imports torch):

    .venv-torch/bin/python tools/record_goldens.py

Writes tests/engine/golden/snippets.json. Every snippet is Python source that says `import torch`
(or `torch.nn`, `torch.nn.functional`, `torch.optim`, `torch.autograd`); it runs with those names
bound to real PyTorch here and to gradtrace's engine in tests/engine/test_goldens.py. For each
snippet the file keeps:

* stdout: everything it printed (up to the error, if it raised);
* error: [type name, message] of the exception it raised, or null;
* probes: for every tensor left in its namespace (and every tuple/list of tensors, as name[i]):
  repr, shape, dtype, requires_grad, is_leaf, grad_fn name, next_functions one level deep,
  values and grad values (nan/inf spelled as strings, so the file is strict JSON).

Flags on a snippet: "unsupported" (the engine must raise NotImplementedError; nothing is recorded
from torch) and "skip" (probe fields, "name.field", the test leaves unchecked, with the reason).
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import io
import json
import math
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tools.goldens
from tools.goldens import collect  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "tests" / "engine" / "golden" / "snippets.json"
AREA_MODULES = Path(__file__).resolve().parent / "goldens"
SEED = 0  # the generator is seeded before every snippet, so any random draw is reproducible

SNIPPETS: list[dict[str, Any]] = []


S = collect(SNIPPETS)


# ======================================================================================
# creation and dtypes
# ======================================================================================

S(
    "tensor-float",
    """
import torch
x = torch.tensor([1.0, 2.0, 3.0])
print(x)
print(x.dtype, x.shape, x.requires_grad, x.is_leaf, x.grad_fn)
""",
)
S(
    "tensor-requires-grad",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
print(x)
print(x.requires_grad, x.is_leaf, x.grad, x.grad_fn)
""",
)
S(
    "tensor-float64",
    """
import torch
x = torch.tensor([1, 2], dtype=torch.float64)
y = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
print(x)
print(y)
print(x.dtype, y.dtype)
""",
)
S(
    "tensor-int64",
    """
import torch
x = torch.tensor([1, 2, 3])
print(x, x.dtype)
s = torch.tensor(7)
print(s, s.dtype, s.shape)
""",
)
S(
    "tensor-bool",
    """
import torch
m = torch.tensor([True, False, True])
print(m, m.dtype)
""",
)
S(
    "tensor-scalar-0dim",
    """
import torch
x = torch.tensor(3.5)
print(x, x.shape, x.dim(), x.numel())
""",
)
S(
    "tensor-matrix",
    """
import torch
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
print(x)
print(x.shape, x.size(), x.size(0), x.size(-1), x.dim(), x.numel())
""",
)
S(
    "tensor-mixed-int-float-list",
    """
import torch
x = torch.tensor([1, 2.5, 3])
print(x, x.dtype)
""",
)
S(
    "zeros-ones",
    """
import torch
a = torch.zeros(2, 3)
b = torch.ones(3)
c = torch.zeros((2, 2), dtype=torch.int64)
d = torch.ones(2, dtype=torch.float64, requires_grad=True)
print(a)
print(b)
print(c)
print(d)
""",
)
S(
    "zeros-like-ones-like",
    """
import torch
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
z = torch.zeros_like(x)
o = torch.ones_like(x)
i = torch.ones_like(torch.tensor([1, 2, 3]))
print(z, z.requires_grad)
print(o)
print(i)
""",
)
S(
    "full",
    """
import torch
a = torch.full((2, 2), 7.0)
b = torch.full((3,), 3)
c = torch.full((2,), 1.5, dtype=torch.float64)
print(a)
print(b, b.dtype)
print(c)
""",
)
S(
    "arange-int",
    """
import torch
a = torch.arange(5)
b = torch.arange(1, 10, 3)
c = torch.arange(5, 0, -2)
print(a, a.dtype)
print(b)
print(c)
""",
)
S(
    "arange-float",
    """
import torch
a = torch.arange(0, 1, 0.25)
b = torch.arange(0.0, 3.0)
c = torch.arange(3, dtype=torch.float32)
print(a, a.dtype)
print(b)
print(c)
""",
)
S(
    "linspace",
    """
import torch
a = torch.linspace(0, 1, 5)
b = torch.linspace(-1, 1, steps=4)
c = torch.linspace(0, 10, 11)
print(a)
print(b)
print(c)
""",
)
S(
    "eye",
    """
import torch
a = torch.eye(3)
b = torch.eye(2, 3)
print(a)
print(b)
""",
)
S(
    "stack-grad",
    """
import torch
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, 4.0], requires_grad=True)
s = torch.stack([a, b])
s1 = torch.stack((a, b), dim=1)
print(s)
print(s1)
(s * torch.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
print(a.grad, b.grad)
""",
)
S(
    "cat-grad",
    """
import torch
a = torch.tensor([[1.0, 2.0]], requires_grad=True)
b = torch.tensor([[3.0, 4.0], [5.0, 6.0]], requires_grad=True)
c = torch.cat([a, b])
d = torch.cat([b, b], dim=1)
print(c)
print(d.shape)
(c * c).sum().backward()
print(a.grad)
print(b.grad)
""",
)
S(
    "where-grad",
    """
import torch
x = torch.tensor([-1.0, 2.0, -3.0, 4.0], requires_grad=True)
y = torch.where(x > 0, x, torch.zeros_like(x))
print(y)
y.sum().backward()
print(x.grad)
""",
)
S(
    "where-two-inputs",
    """
import torch
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = torch.tensor([10.0, 20.0, 30.0], requires_grad=True)
c = torch.where(torch.tensor([True, False, True]), a * 2, b)
c.sum().backward()
print(c)
print(a.grad, b.grad)
""",
)
S(
    "promote-int-times-float",
    """
import torch
i = torch.tensor([1, 2, 3])
f = torch.tensor([0.5, 0.5, 0.5])
a = i * f
b = i * 1.5
c = i / 2
d = i + 1
print(a, a.dtype)
print(b, b.dtype)
print(c, c.dtype)
print(d, d.dtype)
""",
)
S(
    "promote-float32-float64-0dim",
    """
import torch
x = torch.tensor([1.0, 2.0])
s = torch.tensor(2.0, dtype=torch.float64)
y = x * s
z = s * torch.tensor(3.0)
w = x * torch.tensor([2.0, 2.0], dtype=torch.float64)
print(y, y.dtype)
print(z, z.dtype)
print(w, w.dtype)
""",
)
S(
    "promote-int-tensor-with-0dim",
    """
import torch
a = torch.tensor([1, 2], dtype=torch.int32)
b = a + torch.tensor(5)
c = a + torch.tensor(0.5)
d = torch.tensor([1.0], dtype=torch.float64) * 2.5
print(b, b.dtype)
print(c, c.dtype)
print(d, d.dtype)
""",
)
S(
    "promote-grad-float64",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
w = torch.tensor([3.0, 4.0], dtype=torch.float64, requires_grad=True)
y = (x * w).sum()
y.backward()
print(y)
print(x.grad, x.grad.dtype)
print(w.grad, w.grad.dtype)
""",
)
S(
    "bool-arith",
    """
import torch
m = torch.tensor([True, False, True])
n = m.sum()
f = m * 1.5
print(n, n.dtype)
print(f)
""",
)

# ======================================================================================
# operators
# ======================================================================================

S(
    "op-add",
    """
import torch
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = torch.tensor([4.0, 5.0, 6.0], requires_grad=True)
c = a + b
c.sum().backward()
print(c)
print(a.grad, b.grad)
""",
)
S(
    "op-sub",
    """
import torch
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = torch.tensor([4.0, 5.0, 6.0], requires_grad=True)
c = a - b
c.sum().backward()
print(c)
print(a.grad, b.grad)
""",
)
S(
    "op-mul",
    """
import torch
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = torch.tensor([4.0, 5.0, 6.0], requires_grad=True)
c = a * b
c.sum().backward()
print(c)
print(a.grad, b.grad)
""",
)
S(
    "op-div",
    """
import torch
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = torch.tensor([4.0, 5.0, 8.0], requires_grad=True)
c = a / b
c.sum().backward()
print(c)
print(a.grad, b.grad)
""",
)
S(
    "op-pow-scalar",
    """
import torch
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
c = a ** 2
c.sum().backward()
print(c)
print(a.grad)
""",
)
S(
    "op-pow-half",
    """
import torch
a = torch.tensor([1.0, 4.0, 9.0], requires_grad=True)
c = a ** 0.5
c.sum().backward()
print(c)
print(a.grad)
""",
)
S(
    "op-pow-tensor",
    """
import torch
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = torch.tensor([2.0, 3.0, 0.5], requires_grad=True)
c = a ** b
c.sum().backward()
print(c)
print(a.grad)
print(b.grad)
""",
)
S(
    "op-matmul",
    """
import torch
a = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
b = torch.tensor([[5.0, 6.0], [7.0, 8.0]], requires_grad=True)
c = a @ b
c.sum().backward()
print(c)
print(a.grad)
print(b.grad)
""",
)
S(
    "op-neg",
    """
import torch
a = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
c = -a
c.sum().backward()
print(c)
print(a.grad)
""",
)
S(
    "op-rsub",
    """
import torch
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
c = 2 - a
c.sum().backward()
print(c)
print(a.grad)
""",
)
S(
    "op-rdiv",
    """
import torch
a = torch.tensor([1.0, 2.0, 4.0], requires_grad=True)
c = 2 / a
c.sum().backward()
print(c)
print(a.grad)
""",
)
S(
    "op-rpow",
    """
import torch
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
c = 2 ** a
c.sum().backward()
print(c)
print(a.grad)
""",
)
S(
    "op-radd-rmul",
    """
import torch
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
c = 2 + a
d = 3 * a
(c + d).sum().backward()
print(c)
print(d)
print(a.grad)
""",
)
S(
    "op-scalar-right",
    """
import torch
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = a + 2
c = a - 1
d = a * 3
e = a / 2
(b + c + d + e).sum().backward()
print(b, c, d, e)
print(a.grad)
""",
)
S(
    "op-broadcast-grad",
    """
import torch
m = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
v = torch.tensor([10.0, 20.0, 30.0], requires_grad=True)
c = torch.tensor([[2.0], [3.0]], requires_grad=True)
y = m * v + c
y.sum().backward()
print(y)
print(m.grad)
print(v.grad)
print(c.grad)
""",
)
S(
    "op-broadcast-scalar-tensor",
    """
import torch
s = torch.tensor(2.0, requires_grad=True)
v = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = s * v
y.sum().backward()
print(y)
print(s.grad, v.grad)
""",
)
S(
    "op-comparisons",
    """
import torch
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = torch.tensor([3.0, 2.0, 1.0])
gt = a > b
lt = a < 2
ge = a >= b
le = a <= 2.0
eq = a == b
ne = a != b
print(gt, lt, ge, le, eq, ne)
print(gt.dtype, gt.requires_grad, gt.grad_fn)
""",
)
S(
    "op-comparison-int",
    """
import torch
x = torch.arange(6)
m = x % 2 == 0
print(m)
print(x[m])
""",
)
S(
    "op-same-tensor-twice",
    """
import torch
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
c = a * a
c.sum().backward()
print(a.grad)
""",
)
S(
    "op-int-division",
    """
import torch
a = torch.tensor([1, 2, 3])
b = a / a
c = a // 2
print(b, b.dtype)
print(c, c.dtype)
""",
)

# ======================================================================================
# pointwise functions
# ======================================================================================

for _name, _values in [
    ("exp", "[0.0, 1.0, -1.0]"),
    ("log", "[1.0, 2.0, 0.5]"),
    ("sin", "[0.0, 1.0, 2.0]"),
    ("cos", "[0.0, 1.0, 2.0]"),
    ("tanh", "[0.0, 0.5, -2.0]"),
    ("sigmoid", "[0.0, 2.0, -2.0]"),
    ("relu", "[-1.0, 0.0, 2.0]"),
    ("sqrt", "[1.0, 4.0, 2.0]"),
    ("abs", "[-1.5, 0.0, 2.0]"),
]:
    S(
        f"fn-{_name}",
        f"""
    import torch
    x = torch.tensor({_values}, requires_grad=True)
    y = x.{_name}()
    z = torch.{_name}(x)
    y.sum().backward()
    print(y)
    print(z)
    print(x.grad)
    """,
    )

S(
    "fn-pow-function",
    """
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = torch.pow(x, 3)
z = x.pow(2)
(y + z).sum().backward()
print(y, z)
print(x.grad)
""",
)
S(
    "fn-clamp-min",
    """
import torch
x = torch.tensor([-2.0, -0.5, 0.5, 2.0], requires_grad=True)
y = x.clamp(min=0.0)
y.sum().backward()
print(y)
print(x.grad)
""",
)
S(
    "fn-clamp-max",
    """
import torch
x = torch.tensor([-2.0, -0.5, 0.5, 2.0], requires_grad=True)
y = torch.clamp(x, max=1.0)
y.sum().backward()
print(y)
print(x.grad)
""",
)
S(
    "fn-clamp-both",
    """
import torch
x = torch.tensor([-2.0, -0.5, 0.5, 2.0], requires_grad=True)
y = x.clamp(-1.0, 1.0)
y.sum().backward()
print(y)
print(x.grad)
""",
)
S(
    "fn-clamp-int",
    """
import torch
x = torch.tensor([-3, 0, 5])
print(x.clamp(min=-1, max=2))
""",
)
S(
    "fn-exp-int-input",
    """
import torch
x = torch.tensor([0, 1, 2])
y = torch.exp(x)
print(y.dtype)
print(y)
""",
)
S(
    "fn-chain",
    """
import torch
x = torch.tensor([0.5, 1.0, 1.5], requires_grad=True)
y = torch.sigmoid(x * 2).log().tanh()
y.sum().backward()
print(y)
print(x.grad)
""",
)
S(
    "fn-float64-chain",
    """
import torch
x = torch.tensor([0.5, 1.0], dtype=torch.float64, requires_grad=True)
y = (x.exp() + x.sin() * x.cos()).sqrt()
y.sum().backward()
print(y)
print(x.grad)
""",
)

# ======================================================================================
# reductions
# ======================================================================================

S(
    "zero-dim-reductions",
    """
    import torch
    t = torch.tensor(3., requires_grad=True)
    print(t.sum(0), t.mean(0), t.squeeze(0), t.transpose(0, 0))
    print(t.max(0), t.min(0, keepdim=True), t.sum(0, keepdim=True))
    s = t.sum(0) + t.mean(0) + t.squeeze(0) + t.transpose(0, 0) + t.max(0)[0]
    s.backward()
    print(t.grad)
""",
)
S(
    "sum-whole",
    """
import torch
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
s = x.sum()
s.backward()
print(s)
print(x.grad)
""",
)
S(
    "sum-dim",
    """
import torch
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
s0 = x.sum(0)
s1 = x.sum(dim=1, keepdim=True)
s2 = torch.sum(x, -1)
(s0.sum() + (s1 * 2).sum() + s2.sum()).backward()
print(s0)
print(s1)
print(s2)
print(x.grad)
""",
)
S(
    "sum-int",
    """
import torch
x = torch.tensor([[1, 2], [3, 4]])
print(x.sum(), x.sum(0), x.sum().dtype)
""",
)
S(
    "mean-whole",
    """
import torch
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
m = x.mean()
m.backward()
print(m)
print(x.grad)
""",
)
S(
    "mean-dim",
    """
import torch
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
m0 = x.mean(0)
m1 = x.mean(dim=1, keepdim=True)
(m0.sum() + m1.sum()).backward()
print(m0)
print(m1)
print(x.grad)
""",
)
S(
    "max-whole",
    """
import torch
x = torch.tensor([[1.0, 5.0], [3.0, 2.0]], requires_grad=True)
m = x.max()
m.backward()
print(m)
print(x.grad)
""",
)
S(
    "max-ties",
    """
import torch
x = torch.tensor([1.0, 3.0, 3.0], requires_grad=True)
m = x.max()
m.backward()
print(x.grad)
""",
)
S(
    "max-dim",
    """
import torch
x = torch.tensor([[1.0, 5.0, 2.0], [7.0, 3.0, 4.0]], requires_grad=True)
values, indices = x.max(dim=1)
print(values)
print(indices)
values.sum().backward()
print(x.grad)
""",
)
S(
    "max-dim-keepdim",
    """
import torch
x = torch.tensor([[1.0, 5.0, 2.0], [7.0, 3.0, 4.0]], requires_grad=True)
r = torch.max(x, 0, keepdim=True)
print(r)
print(r.values.shape, r.indices.shape)
r.values.sum().backward()
print(x.grad)
""",
)
S(
    "min-whole-and-dim",
    """
import torch
x = torch.tensor([[4.0, 1.0], [2.0, 8.0]], requires_grad=True)
m = x.min()
v, i = x.min(0)
print(m, v, i)
(m + v.sum()).backward()
print(x.grad)
""",
)
S(
    "max-print-namedtuple",
    """
import torch
x = torch.tensor([[1.0, 2.0], [4.0, 3.0]])
print(x.max(1))
print(torch.min(x, dim=0))
""",
)
S(
    "argmax",
    """
import torch
x = torch.tensor([[1.0, 5.0, 2.0], [7.0, 3.0, 4.0]])
print(x.argmax(), x.argmax(dim=1), torch.argmin(x, dim=0))
""",
)

# ======================================================================================
# linear algebra and shapes
# ======================================================================================

S(
    "mm",
    """
import torch
a = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
b = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], requires_grad=True)
c = torch.mm(a, b)
c.sum().backward()
print(c)
print(a.grad)
print(b.grad)
""",
)
S(
    "mv",
    """
import torch
m = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
v = torch.tensor([1.0, -1.0], requires_grad=True)
y = torch.mv(m, v)
y.sum().backward()
print(y)
print(m.grad)
print(v.grad)
""",
)
S(
    "dot",
    """
import torch
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = torch.tensor([4.0, 5.0, 6.0], requires_grad=True)
d = torch.dot(a, b)
d.backward()
print(d)
print(a.grad, b.grad)
""",
)
S(
    "matmul-vector-vector",
    """
import torch
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, 4.0], requires_grad=True)
c = a @ b
c.backward()
print(c)
print(a.grad, b.grad)
""",
)
S(
    "matmul-matrix-vector",
    """
import torch
m = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
v = torch.tensor([1.0, 1.0], requires_grad=True)
y = m @ v
y.sum().backward()
print(y)
print(m.grad, v.grad)
""",
)
S(
    "matmul-vector-matrix",
    """
import torch
m = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
v = torch.tensor([1.0, 2.0], requires_grad=True)
y = torch.matmul(v, m)
y.sum().backward()
print(y)
print(m.grad, v.grad)
""",
)
S(
    "matmul-linear-layer",
    """
import torch
x = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
w = torch.tensor([[0.1, 0.2], [0.3, 0.4]], requires_grad=True)
b = torch.tensor([0.5, -0.5], requires_grad=True)
y = x @ w + b
loss = (y ** 2).mean()
loss.backward()
print(y)
print(loss)
print(w.grad)
print(b.grad)
""",
)
S(
    "t-and-T",
    """
import torch
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
a = x.t()
b = x.T
(a * torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).sum().backward()
print(a)
print(b.shape)
print(x.grad)
""",
)
S(
    "transpose",
    """
import torch
x = torch.tensor([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]], requires_grad=True)
y = x.transpose(0, 2)
z = torch.transpose(x, 1, -1)
(y[0] * 2).sum().backward()
print(y)
print(z.shape)
print(x.grad)
""",
)
S(
    "permute",
    """
import torch
x = torch.arange(6.0).reshape(1, 2, 3).requires_grad_()
y = x.permute(2, 0, 1)
print(y.shape)
print(y)
(y * torch.arange(6.0).reshape(3, 1, 2)).sum().backward()
print(x.grad)
""",
)
S(
    "reshape-viewable",
    """
import torch
x = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], requires_grad=True)
y = x.reshape(2, 3)
z = x.reshape(-1, 2)
(y.sum(0).sum() + z[0].sum()).backward()
print(y)
print(z)
print(x.grad)
""",
)
S(
    "reshape-not-viewable",
    """
import torch
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
y = x.t().reshape(6)
(y * torch.arange(6.0)).sum().backward()
print(y)
print(x.grad)
""",
)
S(
    "view",
    """
import torch
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
y = x.view(4)
z = x.view(-1)
w = x.view(1, -1)
(y * torch.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
print(y, z, w)
print(x.grad)
""",
)
S(
    "view-shares-memory",
    """
import torch
x = torch.zeros(4)
y = x.view(2, 2)
y.add_(1)
print(x)
""",
)
S(
    "view-noncontiguous-error",
    """
import torch
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
y = x.t()
print(y.is_contiguous())
z = y.view(6)
""",
)
S(
    "view-size-error",
    """
import torch
x = torch.arange(6.0)
y = x.view(4, 2)
""",
)
S(
    "view-infer-error",
    """
import torch
x = torch.arange(6.0)
y = x.view(-1, 4)
""",
)
S(
    "view-two-minus-one",
    """
import torch
x = torch.arange(6.0)
y = x.view(-1, -1)
""",
)
S(
    "reshape-size-error",
    """
import torch
x = torch.arange(6.0)
y = x.reshape(5)
""",
)
S(
    "flatten",
    """
import torch
x = torch.arange(24.0).reshape(2, 3, 4).requires_grad_()
a = x.flatten()
b = x.flatten(1)
c = torch.flatten(x, 0, 1)
a.sum().backward()
print(a.shape, b.shape, c.shape)
print(x.grad.shape, x.grad.sum())
""",
)
S(
    "squeeze-unsqueeze",
    """
import torch
x = torch.tensor([[[1.0], [2.0]]], requires_grad=True)
a = x.squeeze()
b = x.squeeze(0)
c = a.unsqueeze(0)
d = a.unsqueeze(-1)
(c.sum() + d.sum() + b.sum()).backward()
print(x.shape, a.shape, b.shape, c.shape, d.shape)
print(x.grad)
""",
)
S(
    "squeeze-noop",
    """
import torch
x = torch.tensor([[1.0, 2.0]], requires_grad=True)
y = x.squeeze(1)
print(y.shape)
print(y)
""",
)
S(
    "expand",
    """
import torch
x = torch.tensor([[1.0], [2.0]], requires_grad=True)
y = x.expand(2, 3)
z = x.expand(-1, 4)
(y * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
print(y)
print(z.shape)
print(x.grad)
""",
)
S(
    "expand-error",
    """
import torch
x = torch.tensor([1.0, 2.0, 3.0])
y = x.expand(2, 4)
""",
)

# ======================================================================================
# indexing and iteration
# ======================================================================================

S(
    "index-int",
    """
import torch
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
y = x[1]
z = x[0, 2]
(y.sum() + z).backward()
print(y, z)
print(x.grad)
""",
)
S(
    "index-slice",
    """
import torch
x = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0], requires_grad=True)
y = x[1:4]
z = x[::2]
(y.sum() + z.sum()).backward()
print(y, z)
print(x.grad)
""",
)
S(
    "index-column",
    """
import torch
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
c = x[:, 1]
c.sum().backward()
print(c)
print(x.grad)
""",
)
S(
    "index-row-slice",
    """
import torch
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
r = x[0, 1:]
s = x[1:, :2]
(r.sum() + s.sum()).backward()
print(r, s)
print(x.grad)
""",
)
S(
    "index-negative",
    """
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x[-1]
w = x[-2:]
(y + w.sum()).backward()
print(y, w)
print(x.grad)
""",
)
S(
    "index-none",
    """
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x[None]
z = x[:, None]
(y.sum() + z.sum()).backward()
print(y.shape, z.shape)
print(x.grad)
""",
)
S(
    "index-ellipsis",
    """
import torch
x = torch.arange(8.0).reshape(2, 2, 2).requires_grad_()
y = x[..., 0]
z = x[0, ...]
(y.sum() + z.sum()).backward()
print(y)
print(z)
print(x.grad)
""",
)
S(
    "index-list",
    """
import torch
x = torch.tensor([10.0, 20.0, 30.0, 40.0], requires_grad=True)
y = x[[0, 2, 2]]
y.sum().backward()
print(y)
print(x.grad)
""",
)
S(
    "index-long-tensor",
    """
import torch
x = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
idx = torch.tensor([2, 0])
y = x[idx]
(y * 2).sum().backward()
print(y)
print(x.grad)
""",
)
S(
    "index-bool-mask",
    """
import torch
x = torch.tensor([1.0, -2.0, 3.0, -4.0], requires_grad=True)
mask = x > 0
y = x[mask]
y.sum().backward()
print(mask)
print(y)
print(x.grad)
""",
)
S(
    "index-bool-mask-2d",
    """
import torch
x = torch.tensor([[1.0, -2.0], [-3.0, 4.0]], requires_grad=True)
y = x[x < 0]
(y ** 2).sum().backward()
print(y)
print(x.grad)
""",
)
S(
    "index-out-of-range",
    """
import torch
x = torch.tensor([1.0, 2.0, 3.0])
print(x[1])
y = x[3]
""",
)
S(
    "index-out-of-range-dim1",
    """
import torch
x = torch.zeros(2, 3)
y = x[0, 5]
""",
)
S(
    "index-too-many",
    """
import torch
x = torch.zeros(2)
y = x[0, 0]
""",
)
S(
    "index-0dim-item",
    """
import torch
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
print(x[1, 0].item())
print(x[0][1])
""",
)
S(
    "iterate-unbind",
    """
import torch
x = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
rows = list(x)
print(rows[0])
print(rows[0].grad_fn.name(), rows[2].grad_fn is rows[0].grad_fn)
total = rows[0].sum() * 3 + rows[2].sum()
total.backward()
print(x.grad)
""",
)
S(
    "iterate-loop-grad",
    """
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
acc = 0
for v in x:
    acc = acc + v * v
acc.backward()
print(acc)
print(x.grad)
""",
)
S(
    "unbind-function",
    """
import torch
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
a, b = torch.unbind(x, dim=1)
(a * 2 + b).sum().backward()
print(a, b)
print(x.grad)
""",
)
S(
    "len-and-iter-0dim",
    """
import torch
x = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
print(len(x))
for r in torch.tensor(5.0):
    pass
""",
)

# ======================================================================================
# conversion and inspection
# ======================================================================================

S(
    "clone",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x.clone()
(y * 3).sum().backward()
print(y)
print(x.grad)
""",
)
S(
    "clone-plain-independent",
    """
import torch
x = torch.tensor([1.0, 2.0])
y = x.clone()
y.add_(5)
print(x, y)
""",
)
S(
    "detach",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 2
d = y.detach()
print(d, d.requires_grad, d.is_leaf, d.grad_fn)
z = d * x
z.sum().backward()
print(x.grad)
""",
)
S(
    "detach-shares-storage",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
d = x.detach()
d.zero_()
print(x)
""",
)
S(
    "item",
    """
import torch
x = torch.tensor([2.5], requires_grad=True)
y = (x * 2).sum()
print(y.item(), type(y.item()).__name__)
print(torch.tensor(3).item(), torch.tensor(True).item())
""",
)
S(
    "tolist",
    """
import torch
x = torch.tensor([[1.0, 2.5], [3.0, 4.0]])
print(x.tolist())
print(torch.tensor([1, 2]).tolist(), torch.tensor(1.5).tolist())
""",
)
S(
    "numpy",
    """
import torch
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
a = x.numpy()
print(type(a).__name__, a.dtype, a.shape)
print(a.tolist())
""",
)
S(
    "numpy-requires-grad-error",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
print(x.detach().numpy().tolist())
a = x.numpy()
""",
)
S(
    "shape-size-dim-numel",
    """
import torch
x = torch.zeros(2, 3, 4)
print(x.shape)
print(x.size())
print(x.size(1), x.shape[2], x.dim(), x.ndim, x.numel(), len(x.shape))
print(x.shape == (2, 3, 4), list(x.shape))
""",
)
S(
    "dtype-props",
    """
import torch
x = torch.tensor([1.0])
print(x.dtype, x.dtype == torch.float32, x.dtype is torch.float32)
print(torch.float64, torch.int64, torch.bool, torch.float, torch.long, torch.double)
print(x.is_floating_point(), torch.tensor([1]).is_floating_point())
""",
)
S(
    "to-dtype",
    """
import torch
x = torch.tensor([1.5, 2.5], requires_grad=True)
y = x.to(torch.float64)
z = x.double()
i = x.long()
y.sum().backward()
print(y, z, i)
print(x.grad, x.grad.dtype)
""",
)
S(
    "float-int-conversion",
    """
import torch
x = torch.tensor([1, 2, 3])
f = x.float()
print(f, f.dtype)
print(float(torch.tensor(2.5)), int(torch.tensor(7)))
""",
)
S(
    "is-tensor-numel-fn",
    """
import torch
x = torch.ones(2, 5)
print(torch.is_tensor(x), torch.is_tensor([1]), torch.numel(x))
""",
)
S(
    "size-dim-out-of-range",
    """
import torch
x = torch.zeros(2, 3)
print(x.size(-2))
n = x.size(2)
""",
)

# ======================================================================================
# softmax
# ======================================================================================

S(
    "softmax",
    """
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
p = torch.softmax(x, dim=0)
(p * torch.tensor([1.0, 0.0, 0.0])).sum().backward()
print(p)
print(x.grad)
""",
)
S(
    "softmax-2d",
    """
import torch
x = torch.tensor([[1.0, 2.0], [3.0, 5.0]], requires_grad=True)
p = x.softmax(dim=1)
q = x.softmax(-2)
(p[:, 0].sum() + q[0].sum()).backward()
print(p)
print(q)
print(x.grad)
""",
)
S(
    "log-softmax",
    """
import torch
x = torch.tensor([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]], requires_grad=True)
lp = torch.log_softmax(x, dim=1)
lp[:, 0].sum().backward()
print(lp)
print(x.grad)
""",
)

# ======================================================================================
# autograd
# ======================================================================================

S(
    "grad-fn-names",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 2
z = y + 1
w = z.mean()
print(y.grad_fn.name(), z.grad_fn.name(), w.grad_fn.name())
print(x.grad_fn, y.is_leaf, x.is_leaf)
""",
)
S(
    "next-functions",
    """
import torch
a = torch.tensor(2.0, requires_grad=True)
b = torch.tensor(3.0)
c = a * b
d = c + a
print([(f.name() if f is not None else None, i) for f, i in d.grad_fn.next_functions])
print([(f.name() if f is not None else None, i) for f, i in c.grad_fn.next_functions])
""",
)
S(
    "accumulate-grad-variable",
    """
import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
y = (w * 3).sum()
acc = y.grad_fn.next_functions[0][0].next_functions[0][0]
print(acc.name())
print(acc.variable is w)
print(acc.variable)
""",
)
S(
    "requires-grad-flag",
    """
import torch
x = torch.tensor([1.0, 2.0])
print(x.requires_grad)
x.requires_grad = True
y = x * 2
print(y.requires_grad, y.grad_fn.name())
""",
)
S(
    "requires-grad-underscore",
    """
import torch
x = torch.tensor([1.0, 2.0]).requires_grad_()
y = torch.tensor([3.0]).requires_grad_(True)
z = x.requires_grad_(False)
print(x.requires_grad, y.requires_grad, z is x)
""",
)
S(
    "requires-grad-mixed",
    """
import torch
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, 4.0])
c = a * b
d = b * 2
print(c.requires_grad, d.requires_grad, d.grad_fn)
c.sum().backward()
print(a.grad, b.grad)
""",
)
S(
    "requires-grad-nonleaf-error",
    """
import torch
x = torch.tensor([1.0], requires_grad=True)
y = x * 2
y.requires_grad = False
""",
)
S(
    "grad-none-before-backward",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
print(x.grad)
(x * x).sum().backward()
print(x.grad)
""",
)
S(
    "retain-grad",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 3
y.retain_grad()
z = (y ** 2).sum()
print(y.retains_grad, x.retains_grad, z.retains_grad)
z.backward()
print(y.grad)
print(x.grad)
""",
)
S(
    "nonleaf-grad-is-none",
    """
import torch
import warnings
warnings.simplefilter("ignore")
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 3
y.sum().backward()
print(y.grad, y.is_leaf, y.retains_grad)
""",
)
S(
    "backward-gradient-arg",
    """
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 2
y.backward(gradient=torch.tensor([1.0, 0.1, 0.01]))
print(x.grad)
""",
)
S(
    "backward-gradient-matrix",
    """
import torch
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
y = x ** 2
y.backward(torch.ones_like(y))
print(x.grad)
""",
)
S(
    "backward-retain-graph-twice",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = (x ** 2).sum()
y.backward(retain_graph=True)
print(x.grad)
y.backward()
print(x.grad)
""",
)
S(
    "grads-accumulate",
    """
import torch
x = torch.tensor(3.0, requires_grad=True)
for _ in range(3):
    y = x * x
    y.backward()
print(x.grad)
x.grad = None
(x * 2).backward()
print(x.grad)
""",
)
S(
    "grad-zero-inplace",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
(x * 5).sum().backward()
x.grad.zero_()
print(x.grad)
(x * 2).sum().backward()
print(x.grad)
""",
)
S(
    "autograd-grad",
    """
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = (x ** 3).sum()
(g,) = torch.autograd.grad(y, x)
print(g)
print(x.grad)
""",
)
S(
    "autograd-grad-two-inputs",
    """
import torch
a = torch.tensor(2.0, requires_grad=True)
b = torch.tensor(5.0, requires_grad=True)
c = a * b + a
ga, gb = torch.autograd.grad(c, [a, b])
print(ga, gb)
""",
)
S(
    "autograd-grad-nonleaf-input",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
h = x * 2
y = (h ** 2).sum()
g = torch.autograd.grad(y, h)
print(g)
""",
)
S(
    "autograd-grad-grad-outputs",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * x
g = torch.autograd.grad(y, x, grad_outputs=torch.tensor([1.0, 10.0]))
print(g)
""",
)
S(
    "autograd-grad-unused-error",
    """
import torch
x = torch.tensor(1.0, requires_grad=True)
u = torch.tensor(2.0, requires_grad=True)
y = x * 2
g = torch.autograd.grad(y, [x, u])
""",
)
S(
    "autograd-grad-allow-unused",
    """
import torch
x = torch.tensor(1.0, requires_grad=True)
u = torch.tensor(2.0, requires_grad=True)
y = x * 2
g = torch.autograd.grad(y, [x, u], allow_unused=True)
print(g)
""",
)
S(
    "autograd-backward-function",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = (x * 4).sum()
torch.autograd.backward(y)
print(x.grad)
""",
)
S(
    "no-grad-context",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
with torch.no_grad():
    y = x * 2
    print(torch.is_grad_enabled())
print(y.requires_grad, y.grad_fn, y.is_leaf)
print(torch.is_grad_enabled())
z = x * 2
print(z.requires_grad)
""",
)
S(
    "no-grad-decorator",
    """
import torch

@torch.no_grad()
def double(t):
    return t * 2

x = torch.tensor([1.0, 2.0], requires_grad=True)
y = double(x)
print(y, y.requires_grad)
print(torch.is_grad_enabled())
""",
)
S(
    "enable-grad-inside-no-grad",
    """
import torch
x = torch.tensor([1.0], requires_grad=True)
with torch.no_grad():
    with torch.enable_grad():
        y = x * 2
    z = x * 2
print(y.requires_grad, z.requires_grad)
""",
)
S(
    "set-grad-enabled",
    """
import torch
x = torch.tensor([1.0], requires_grad=True)
with torch.set_grad_enabled(False):
    y = x * 2
print(y.requires_grad)
torch.set_grad_enabled(False)
z = x * 2
print(torch.is_grad_enabled(), z.requires_grad)
torch.set_grad_enabled(True)
w = x * 2
print(torch.is_grad_enabled(), w.requires_grad)
""",
)
S(
    "no-grad-inplace-leaf",
    """
import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
(w * w).sum().backward()
with torch.no_grad():
    w -= 0.1 * w.grad
print(w)
print(w.is_leaf, w.requires_grad, w.grad_fn)
""",
)
S(
    "data-attribute",
    """
import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
d = w.data
print(d, d.requires_grad, d.is_leaf)
w.data.mul_(3)
print(w)
w.data = torch.tensor([5.0, 6.0])
print(w)
""",
)
S(
    "data-update-after-backward",
    """
import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
loss = (w ** 2).sum()
loss.backward()
w.data -= 0.5 * w.grad
print(w)
print(w.grad)
""",
)

# ======================================================================================
# in-place operations
# ======================================================================================

S(
    "inplace-plain",
    """
import torch
x = torch.tensor([1.0, 2.0, 3.0])
x.add_(1)
print(x)
x.mul_(2)
print(x)
x.sub_(torch.tensor([1.0, 1.0, 1.0]))
print(x)
x += 10
print(x)
x -= 1
x *= 0.5
print(x)
x /= 2
print(x)
""",
)
S(
    "inplace-zero-fill-copy",
    """
import torch
x = torch.tensor([1.0, 2.0, 3.0])
x.zero_()
print(x)
x.fill_(7)
print(x)
x.copy_(torch.tensor([4.0, 5.0, 6.0]))
print(x)
""",
)
S(
    "inplace-returns-self",
    """
import torch
x = torch.tensor([1.0, 2.0])
y = x.add_(1)
print(y is x, x)
""",
)
S(
    "inplace-version-counter",
    """
import torch
x = torch.tensor([1.0, 2.0])
print(x._version)
x.add_(1)
x.mul_(2)
print(x._version)
""",
)
S(
    "inplace-nonleaf-add",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 2
y.add_(1)
print(y)
print([(f.name() if f is not None else None, i) for f, i in y.grad_fn.next_functions])
y.sum().backward()
print(x.grad)
""",
)
S(
    "inplace-nonleaf-mul",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x + 1
y.mul_(3)
y.sum().backward()
print(y)
print(x.grad)
""",
)
S(
    "inplace-nonleaf-sub",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 1
y.sub_(torch.tensor([0.5, 0.5]))
y.sum().backward()
print(y)
print(x.grad)
""",
)
S(
    "inplace-nonleaf-iadd",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 2
y += 1
y *= 2
y.sum().backward()
print(y)
print(x.grad)
""",
)
S(
    "inplace-nonleaf-zero",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 2
y.zero_()
z = (y + x).sum()
z.backward()
print(y)
print(x.grad)
""",
)
S(
    "inplace-nonleaf-fill",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 2
y.fill_(3.0)
(y * x).sum().backward()
print(y)
print(x.grad)
""",
)
S(
    "inplace-nonleaf-copy",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
s = torch.tensor([5.0, 6.0], requires_grad=True)
y = x * 2
y.copy_(s * 3)
y.sum().backward()
print(y)
print(x.grad, s.grad)
""",
)
S(
    "inplace-plain-with-grad-operand",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = torch.zeros(2)
y.add_(x)
print(y)
y.sum().backward()
print(x.grad, y.is_leaf)
""",
)
S(
    "inplace-leaf-error",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
x.add_(1)
""",
)
S(
    "inplace-leaf-iadd-error",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
x += 1
""",
)
S(
    "inplace-leaf-mul-error",
    """
import torch
w = torch.tensor([[1.0]], requires_grad=True)
w.mul_(2)
""",
)
S(
    "inplace-saved-exp-error",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x.exp()
y.add_(1)
y.sum().backward()
""",
)
S(
    "inplace-saved-tanh-error",
    """
import torch
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
y = torch.tanh(x)
z = y * 2
y.mul_(2)
z.sum().backward()
""",
)
S(
    "inplace-saved-input-error",
    """
import torch
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, 4.0])
c = a * b
b.add_(1)
c.sum().backward()
""",
)
S(
    "inplace-saved-nonleaf-input-error",
    """
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
h = x + 1
y = h ** 2
h.mul_(2)
y.sum().backward()
""",
)
S(
    "inplace-sigmoid-saved-error",
    """
import torch
x = torch.tensor(0.5, requires_grad=True)
y = torch.sigmoid(x)
y.sub_(0.1)
y.backward()
""",
)
S(
    "inplace-not-saved-ok",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x + 1
z = y * 2
y.add_(5)
z.sum().backward()
print(x.grad, y)
""",
)
S(
    "inplace-int-div-error",
    """
import torch
x = torch.tensor([1, 2])
x /= 2
""",
)

# ======================================================================================
# nn
# ======================================================================================

S(
    "nn-module-subclass",
    """
import torch
import torch.nn as nn

class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.tensor([1.0, 2.0]))
        self.b = nn.Parameter(torch.tensor(0.5))

    def forward(self, x):
        return x * self.w + self.b

m = Scale()
x = torch.tensor([3.0, 4.0])
y = m(x)
print(y)
print([n for n, _ in m.named_parameters()])
print(len(list(m.parameters())))
y.sum().backward()
print(m.w.grad, m.b.grad)
w, b = m.w, m.b
m.zero_grad()
print(m.w.grad, m.b.grad)
""",
)
S(
    "nn-parameter-repr",
    """
import torch
import torch.nn as nn
p = nn.Parameter(torch.tensor([1.0, 2.0]))
print(p)
print(p.requires_grad, p.is_leaf)
q = p * 2
print(q)
""",
)
S(
    "nn-linear-seeded",
    """
import torch
import torch.nn as nn
torch.manual_seed(0)
layer = nn.Linear(3, 2)
print(layer)
w, b = layer.weight, layer.bias
print(w.shape, b.shape)
x = torch.tensor([[1.0, 2.0, 3.0]])
y = layer(x)
print(y.grad_fn.name())
y.sum().backward()
print(w.grad)
print(b.grad)
""",
)
S(
    "nn-linear-print-weights",
    """
import torch
import torch.nn as nn
torch.manual_seed(42)
layer = nn.Linear(2, 2)
print(layer.weight)
print(layer.bias)
""",
)
S(
    "nn-linear-fixed-weights",
    """
import torch
import torch.nn as nn
layer = nn.Linear(2, 1)
with torch.no_grad():
    layer.weight.copy_(torch.tensor([[0.5, -1.0]]))
    layer.bias.fill_(0.25)
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
y = layer(x)
loss = y.pow(2).mean()
loss.backward()
w, b = layer.weight, layer.bias
print(y)
print(w.grad, b.grad)
""",
)
S(
    "nn-linear-1d-input",
    """
import torch
import torch.nn as nn
layer = nn.Linear(2, 2)
with torch.no_grad():
    layer.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 2.0]]))
    layer.bias.zero_()
y = layer(torch.tensor([3.0, 4.0]))
print(y)
""",
)
S(
    "nn-sequential",
    """
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1), nn.Sigmoid())
print(model)
print([n for n, _ in model.named_parameters()])
print(len(model), type(model[1]).__name__)
""",
)
S(
    "nn-sequential-fixed-forward",
    """
import torch
import torch.nn as nn
model = nn.Sequential(nn.Linear(2, 2), nn.Tanh(), nn.Linear(2, 1))
with torch.no_grad():
    model[0].weight.copy_(torch.tensor([[0.1, 0.2], [-0.3, 0.4]]))
    model[0].bias.copy_(torch.tensor([0.0, 0.1]))
    model[2].weight.copy_(torch.tensor([[1.0, -1.0]]))
    model[2].bias.fill_(0.5)
x = torch.tensor([[1.0, 2.0]])
out = model(x)
out.sum().backward()
print(out)
print(model[0].weight.grad)
print(model[2].bias.grad)
""",
)
S(
    "nn-activations",
    """
import torch
import torch.nn as nn
x = torch.tensor([-1.0, 0.0, 2.0], requires_grad=True)
a = nn.ReLU()(x)
b = nn.Tanh()(x)
c = nn.Sigmoid()(x)
(a + b + c).sum().backward()
print(a)
print(b)
print(c)
print(x.grad)
print(nn.ReLU(), nn.Tanh(), nn.Sigmoid())
""",
)
S(
    "nn-mseloss",
    """
import torch
import torch.nn as nn
pred = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
target = torch.tensor([1.5, 2.0, 2.0])
loss = nn.MSELoss()(pred, target)
loss.backward()
print(loss)
print(pred.grad)
""",
)
S(
    "nn-mseloss-sum",
    """
import torch
import torch.nn as nn
pred = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
target = torch.zeros(2, 2)
loss = nn.MSELoss(reduction="sum")(pred, target)
loss.backward()
print(loss)
print(pred.grad)
""",
)
S(
    "nn-crossentropy",
    """
import torch
import torch.nn as nn
logits = torch.tensor([[2.0, 1.0, 0.1], [0.5, 2.5, 0.3]], requires_grad=True)
target = torch.tensor([0, 1])
loss = nn.CrossEntropyLoss()(logits, target)
loss.backward()
print(loss)
print(logits.grad)
""",
)
S(
    "nn-crossentropy-sum",
    """
import torch
import torch.nn as nn
logits = torch.tensor([[1.0, 2.0], [3.0, 1.0], [0.0, 0.0]], requires_grad=True)
target = torch.tensor([1, 0, 1])
loss = nn.CrossEntropyLoss(reduction="sum")(logits, target)
loss.backward()
print(loss)
print(logits.grad)
""",
)
S(
    "F-activations",
    """
import torch
import torch.nn.functional as F
x = torch.tensor([-2.0, 0.5, 3.0], requires_grad=True)
a = F.relu(x)
b = F.sigmoid(x)
c = F.tanh(x)
(a * b * c).sum().backward()
print(a, b, c)
print(x.grad)
""",
)
S(
    "F-mse-loss",
    """
import torch
import torch.nn.functional as F
a = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
t = torch.tensor([1.0, 1.0, 1.0])
loss = F.mse_loss(a, t)
loss.backward()
print(loss)
print(a.grad)
""",
)
S(
    "F-cross-entropy",
    """
import torch
import torch.nn.functional as F
logits = torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
loss = F.cross_entropy(logits, torch.tensor([2]))
loss.backward()
print(loss)
print(logits.grad)
""",
)
S(
    "F-softmax-log-softmax",
    """
import torch
import torch.nn.functional as F
x = torch.tensor([[0.0, 1.0], [2.0, 4.0]], requires_grad=True)
p = F.softmax(x, dim=1)
lp = F.log_softmax(x, dim=1)
(p[:, 1].sum() - lp[:, 0].sum()).backward()
print(p)
print(lp)
print(x.grad)
""",
)
S(
    "F-import-from",
    """
from torch import nn
from torch.nn import functional as F
import torch
x = torch.tensor([-1.0, 1.0])
print(F.relu(x), nn.ReLU()(x))
""",
)

# ======================================================================================
# optim
# ======================================================================================

S(
    "optim-sgd",
    """
import torch
w = torch.tensor([1.0, -2.0], requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for _ in range(3):
    opt.zero_grad()
    loss = (w ** 2).sum()
    loss.backward()
    opt.step()
    print(loss.item(), w)
print(w.grad)
""",
)
S(
    "optim-sgd-momentum",
    """
import torch
w = torch.tensor([1.0, -2.0], requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
for _ in range(4):
    opt.zero_grad()
    loss = ((w - torch.tensor([0.5, 0.5])) ** 2).sum()
    loss.backward()
    opt.step()
print(w)
print(loss)
""",
)
S(
    "optim-adam",
    """
import torch
w = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
opt = torch.optim.Adam([w], lr=0.1)
for _ in range(5):
    opt.zero_grad()
    loss = (w ** 2).sum()
    loss.backward()
    opt.step()
print(w)
print(loss)
""",
)
S(
    "optim-zero-grad-none",
    """
import torch
w = torch.tensor([1.0], requires_grad=True)
opt = torch.optim.SGD([w], lr=0.5)
(w * 3).sum().backward()
print(w.grad)
opt.step()
opt.zero_grad()
print(w.grad)
print(w)
""",
)
S(
    "optim-train-linear-model",
    """
import torch
import torch.nn as nn
model = nn.Linear(1, 1)
with torch.no_grad():
    model.weight.fill_(0.0)
    model.bias.fill_(0.0)
x = torch.tensor([[1.0], [2.0], [3.0], [4.0]])
y = torch.tensor([[3.0], [5.0], [7.0], [9.0]])
opt = torch.optim.SGD(model.parameters(), lr=0.05)
loss_fn = nn.MSELoss()
for step in range(20):
    opt.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    if step % 5 == 0:
        print(step, round(loss.item(), 4))
w, b = model.weight, model.bias
print(w, b)
""",
)
S(
    "optim-adam-model",
    """
import torch
import torch.nn as nn
model = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))
with torch.no_grad():
    model[0].weight.copy_(torch.tensor([[0.5, -0.5], [0.3, 0.8]]))
    model[0].bias.zero_()
    model[2].weight.copy_(torch.tensor([[1.0, 0.5]]))
    model[2].bias.fill_(0.1)
opt = torch.optim.Adam(model.parameters(), lr=0.01)
x = torch.tensor([[1.0, 2.0], [0.5, -1.0]])
t = torch.tensor([[1.0], [0.0]])
for _ in range(3):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), t)
    loss.backward()
    opt.step()
w0, b0, w2, b2 = model[0].weight, model[0].bias, model[2].weight, model[2].bias
print(loss)
""",
)
S(
    "optim-classifier-ce",
    """
import torch
import torch.nn as nn
import torch.nn.functional as F
w = torch.tensor([[0.1, -0.2], [0.3, 0.1], [-0.1, 0.2]], requires_grad=True)
b = torch.zeros(3, requires_grad=True)
x = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
target = torch.tensor([0, 2, 1])
opt = torch.optim.SGD([w, b], lr=0.5, momentum=0.5)
for _ in range(3):
    opt.zero_grad()
    loss = F.cross_entropy(x @ w.t() + b, target)
    loss.backward()
    opt.step()
print(loss)
print(w)
print(b)
""",
)

# ======================================================================================
# printing
# ======================================================================================

S(
    "print-scalars",
    """
import torch
print(torch.tensor(1.0))
print(torch.tensor(0.1))
print(torch.tensor(-2.5))
print(torch.tensor(12345.678))
print(torch.tensor(3))
print(torch.tensor(True))
""",
)
S(
    "print-vectors",
    """
import torch
print(torch.tensor([1.0, 2.0, 3.0]))
print(torch.tensor([0.1, 0.25, 1.0 / 3]))
print(torch.tensor([1e-5, 1.0]))
print(torch.tensor([1, -20, 300]))
print(torch.arange(20.0))
""",
)
S(
    "print-matrices",
    """
import torch
print(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
print(torch.tensor([[0.5, -1.25], [100.0, 3.0]]))
print(torch.arange(12).reshape(3, 4))
print(torch.zeros(2, 2, 2))
""",
)
S(
    "print-grad-fn",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
print(x)
print(x * 2)
print((x * 2).sum())
print(x.mean())
print(x[0])
""",
)
S(
    "print-float64",
    """
import torch
print(torch.tensor([1.0, 2.0], dtype=torch.float64))
print(torch.tensor(0.5, dtype=torch.float64, requires_grad=True))
print(torch.tensor([1.0], dtype=torch.float64, requires_grad=True) * 2)
print(torch.tensor([1, 2], dtype=torch.int32))
""",
)
S(
    "print-size-dtype",
    """
import torch
x = torch.zeros(2, 3)
print(x.shape)
print(x.size())
print(torch.tensor(1.0).shape)
print(x.dtype, torch.float32, torch.float64, torch.int64, torch.bool)
print(repr(x.shape), str(x.dtype))
""",
)
S(
    "print-fstring-0dim",
    """
import torch
loss = torch.tensor(0.123456, requires_grad=True) * 2
print(f"loss: {loss:.4f}")
print(f"{loss.item():.3f}")
print(f"{torch.tensor(3.5)}")
print(f"{torch.tensor(7)}")
print("value", torch.tensor(2.0))
print(f"{torch.tensor([1.0, 2.0])}")
""",
)
S(
    "print-str-repr",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
print(str(x))
print(repr(x * 1))
print([torch.tensor(1.0), torch.tensor(2)])
""",
)
S(
    "print-long-tensor",
    """
import torch
print(torch.arange(2000.0))
print(torch.linspace(0, 1, 30))
""",
)
S(
    "print-nan-inf",
    """
import torch
x = torch.tensor([1.0, 0.0, -1.0])
print(x / 0)
print(torch.tensor([float("nan"), 1.5]))
""",
)
S(
    "print-empty",
    """
import torch
print(torch.zeros(0))
print(torch.zeros(2, 0))
""",
)

# ======================================================================================
# errors
# ======================================================================================

S(
    "err-backward-twice",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = (x * x).sum()
y.backward()
print(x.grad)
y.backward()
""",
)
S(
    "err-backward-twice-exp",
    """
import torch
x = torch.tensor(1.0, requires_grad=True)
y = x.exp()
y.backward()
y.backward()
""",
)
S(
    "err-backward-twice-no-saved",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = (x + 1).sum()
y.backward()
y.backward()
print(x.grad)
""",
)
S(
    "err-nonscalar-backward",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 2
y.backward()
""",
)
S(
    "err-backward-no-grad",
    """
import torch
x = torch.tensor([1.0, 2.0])
y = (x * 2).sum()
y.backward()
""",
)
S(
    "err-backward-under-no-grad",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
with torch.no_grad():
    y = (x * 2).sum()
y.backward()
""",
)
S(
    "err-backward-gradient-shape",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 2
y.backward(torch.tensor([1.0, 2.0, 3.0]))
""",
)
S(
    "err-item-multi",
    """
import torch
x = torch.tensor([1.0, 2.0])
v = x.item()
""",
)
S(
    "err-broadcast",
    """
import torch
a = torch.tensor([1.0, 2.0, 3.0])
b = torch.tensor([1.0, 2.0])
c = a + b
""",
)
S(
    "err-broadcast-2d",
    """
import torch
a = torch.zeros(2, 3)
b = torch.zeros(3, 2)
c = a * b
""",
)
S(
    "err-requires-grad-int",
    """
import torch
x = torch.tensor([1, 2, 3], requires_grad=True)
""",
)
S(
    "err-requires-grad-int-setter",
    """
import torch
x = torch.tensor([1, 2, 3])
x.requires_grad = True
""",
)
S(
    "err-requires-grad-int-underscore",
    """
import torch
x = torch.arange(3)
x.requires_grad_()
""",
)
S(
    "err-mm-shape",
    """
import torch
a = torch.zeros(2, 3)
b = torch.zeros(2, 3)
c = torch.mm(a, b)
""",
)
S(
    "err-matmul-shape",
    """
import torch
a = torch.zeros(2, 3)
b = torch.zeros(2, 3)
c = a @ b
""",
)
S(
    "err-mv-shape",
    """
import torch
m = torch.zeros(2, 3)
v = torch.zeros(2)
c = torch.mv(m, v)
""",
)
S(
    "err-dot-shape",
    """
import torch
c = torch.dot(torch.zeros(3), torch.zeros(2))
""",
)
S(
    "err-matmul-0dim",
    """
import torch
c = torch.tensor(2.0) @ torch.tensor(3.0)
""",
)
S(
    "err-dim-out-of-range-sum",
    """
import torch
x = torch.zeros(2, 3)
s = x.sum(2)
""",
)
S(
    "err-dim-out-of-range-softmax",
    """
import torch
x = torch.zeros(3)
s = torch.softmax(x, dim=1)
""",
)
S(
    "err-dim-out-of-range-transpose",
    """
import torch
x = torch.zeros(2, 3)
s = x.transpose(0, 3)
""",
)
S(
    "err-dim-out-of-range-unsqueeze",
    """
import torch
x = torch.zeros(2, 3)
s = x.unsqueeze(4)
""",
)
S(
    "err-dim-out-of-range-cat",
    """
import torch
x = torch.zeros(2, 3)
s = torch.cat([x, x], dim=2)
""",
)
S(
    "err-cat-size-mismatch",
    """
import torch
c = torch.cat([torch.zeros(2, 3), torch.zeros(2, 2)])
""",
)
S(
    "err-stack-size-mismatch",
    """
import torch
c = torch.stack([torch.zeros(3), torch.zeros(2)])
""",
)
S(
    "err-mean-int",
    """
import torch
m = torch.tensor([1, 2, 3]).mean()
""",
)
S(
    "err-bool-ambiguous",
    """
import torch
x = torch.tensor([1.0, 2.0])
if x > 0:
    print("yes")
""",
)
S(
    "err-grad-of-non-requiring",
    """
import torch
x = torch.tensor(1.0)
y = torch.tensor(2.0, requires_grad=True)
g = torch.autograd.grad(y * 2, x)
""",
)
S(
    "err-retain-grad-no-grad",
    """
import torch
x = torch.tensor([1.0])
x.retain_grad()
""",
)
S(
    "err-tensor-bad-dtype-arg",
    """
import torch
x = torch.tensor([1.0]) + "a"
""",
)
S(
    "err-where-non-bool",
    """
import torch
x = torch.where(torch.tensor([1, 0]), torch.zeros(2), torch.ones(2))
""",
)
S(
    "err-unknown-attribute",
    """
import torch
x = torch.tensor([1.0])
y = x.definitely_not_a_method()
""",
)
S(
    "err-unknown-module-name",
    """
import torch
y = torch.definitely_not_a_function(1)
""",
)
S(
    "err-linear-shape",
    """
import torch
import torch.nn as nn
layer = nn.Linear(3, 2)
y = layer(torch.zeros(4, 2))
""",
)
S(
    "err-nll-loss-float-target",
    """
import torch
import torch.nn.functional as F
loss = F.nll_loss(torch.zeros(2, 3), torch.tensor([0.0, 1.0]))
""",
)
S(
    "err-cross-entropy-target-range",
    """
import torch
import torch.nn.functional as F
loss = F.cross_entropy(torch.zeros(2, 3), torch.tensor([0, 3]))
""",
)
S(
    "err-permute-wrong-dims",
    """
import torch
x = torch.zeros(2, 3)
y = x.permute(0)
""",
)
S(
    "err-t-3d",
    """
import torch
y = torch.zeros(2, 3, 4).t()
""",
)
S(
    "err-optim-empty",
    """
import torch
opt = torch.optim.SGD([], lr=0.1)
""",
)

# ======================================================================================
# more corners: each of these once showed (or could show) the engine drifting from PyTorch
# ======================================================================================

S(
    "index-whole-slices-alias",
    """
import torch
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
a = x[:]
b = x[...]
c = x[:, 0:3]
d = x[:, -3:]
e = x[:, :10]
f = x[0:2, ::1]
(a.sum() + b.sum() + c.sum() + d.sum() + e.sum() + f.sum()).backward()
print(x.grad)
""",
)
S(
    "index-int-and-list",
    """
import torch
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
a = x[0, [0, 2]]
b = x[:, [2, 0]]
c = x[[1, 0], 1:]
(a.sum() + b.sum() * 2 + c.sum() * 3).backward()
print(a, b, c)
print(x.grad)
""",
)
S(
    "index-mask-shape-error",
    """
import torch
x = torch.zeros(3, 2)
y = x[torch.tensor([True, False])]
""",
)
S(
    "index-list-out-of-range",
    """
import torch
x = torch.zeros(2, 3)
a = x[[0, 1]]
b = x[:, [0, 5]]
""",
)
S(
    "index-two-lists",
    """
import torch
x = torch.arange(12.0).reshape(3, 4).requires_grad_()
y = x[[0, 2, 2], [1, 3, 3]]
z = x[torch.tensor([[0], [2]]), torch.tensor([1, 2])]
(y.sum() + z.sum()).backward()
print(y)
print(z)
print(x.grad)
""",
)
S(
    "index-0dim-tensor",
    """
import torch
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
i = torch.tensor(1)
y = x[i]
z = x[0, i]
(y.sum() + z).backward()
print(y, z)
print(x.grad)
""",
)
S(
    "index-empty-list",
    """
import torch
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
y = x[[]]
print(y)
""",
)
S(
    "index-float-error",
    """
import torch
x = torch.tensor([1.0, 2.0])
y = x[1.5]
""",
)
S(
    "index-ellipsis-out-of-range",
    """
import torch
x = torch.zeros(2, 3)
y = x[..., 7]
""",
)
S(
    "setitem-plain",
    """
import torch
x = torch.zeros(4)
x[1] = 5.0
x[2:] = torch.tensor([1.0, 2.0])
x[x > 1.5] = -1.0
print(x, x._version)
""",
)
S(
    "setitem-no-grad-leaf",
    """
import torch
w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
with torch.no_grad():
    w[0] = 0.0
print(w, w.is_leaf, w.grad_fn)
""",
)
S(
    "contiguous",
    """
import torch
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
t = x.t()
c = t.contiguous()
print(x.is_contiguous(), t.is_contiguous(), c.is_contiguous(), x.contiguous() is x)
v = c.view(4)
(v * torch.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
print(x.grad)
""",
)
S(
    "remainder-grad",
    """
import torch
a = torch.tensor([5.0, -3.0, 7.5], requires_grad=True)
b = torch.tensor([2.0, 2.0, -2.0], requires_grad=True)
r = a % 2
q = a % b
(r + q).sum().backward()
print(r, q)
print(a.grad, b.grad)
print(torch.tensor([5, -3]) % 2, torch.tensor([5, -3]) % 2.5)
""",
)
S(
    "floor-divide-plain",
    """
import torch
print(torch.tensor([5, -3]) // 2)
print(torch.tensor([5, -3]) // 2.5)
print(torch.tensor([5.0, -3.0]) // torch.tensor([2.0, 2.0]))
""",
)
S(
    "sum-mean-multi-dim",
    """
import torch
x = torch.arange(24.0).reshape(2, 3, 4).requires_grad_()
s = x.sum((0, 2))
m = x.mean(dim=[1, 2], keepdim=True)
(s.sum() + m.sum()).backward()
print(s)
print(m)
print(x.grad[0])
""",
)
S(
    "maximum-elementwise",
    """
import torch
a = torch.tensor([1.0, 5.0, 3.0], requires_grad=True)
b = torch.tensor([4.0, 2.0, 3.0], requires_grad=True)
m = torch.max(a, b)
n = torch.minimum(a, b)
(m + 2 * n).sum().backward()
print(m, n)
print(a.grad, b.grad)
""",
)
S(
    "min-ties",
    """
import torch
x = torch.tensor([[2.0, 1.0, 1.0], [3.0, 3.0, 4.0]], requires_grad=True)
v, i = x.min(1)
w = x.min()
(v.sum() + w).backward()
print(v, i, w)
print(x.grad)
""",
)
S(
    "diamond-graph",
    """
import torch
x = torch.tensor(2.0, requires_grad=True)
a = x * 3
b = x ** 2
c = a * b
d = c + a
a.retain_grad()
b.retain_grad()
c.retain_grad()
d.backward()
print(x.grad, a.grad, b.grad, c.grad)
""",
)
S(
    "next-functions-deep",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
w = torch.tensor([0.5, 0.5])
y = ((x * w).exp() + x).sum()
f = y.grad_fn
print(f.name(), [(g.name() if g is not None else None, i) for g, i in f.next_functions])
add = f.next_functions[0][0]
print(add.name(), [(g.name() if g is not None else None, i) for g, i in add.next_functions])
exp = add.next_functions[0][0]
print(exp.name(), [(g.name() if g is not None else None, i) for g, i in exp.next_functions])
""",
)
S(
    "leaf-scalar-backward",
    """
import torch
x = torch.tensor(2.0, requires_grad=True)
x.backward()
print(x.grad)
""",
)
S(
    "retain-grad-on-leaf",
    """
import torch
x = torch.tensor([1.0], requires_grad=True)
x.retain_grad()
(x * 2).sum().backward()
print(x.retains_grad, x.grad)
""",
)
S(
    "detach-underscore",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 2
y.detach_()
print(y, y.requires_grad, y.is_leaf, y.grad_fn)
""",
)
S(
    "detach-inplace-bumps-version",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x.exp()
y.detach().add_(1)
y.sum().backward()
""",
)
S(
    "data-inplace-no-version",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x.exp()
y.data.add_(1)
y.sum().backward()
print(x.grad)
""",
)
S(
    "no-grad-inplace-saved-leaf-error",
    """
import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
x = torch.tensor([3.0, 4.0])
y = (w * w * x).sum()
with torch.no_grad():
    w.add_(1)
print(w._version)
y.backward()
""",
)
S(
    "inplace-view-of-leaf-error",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
x[0].add_(1)
""",
)
S(
    "numpy-shares-memory",
    """
import torch
x = torch.zeros(3)
a = x.numpy()
a[0] = 7.0
print(x)
""",
)
S(
    "tensor-from-tensor",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = torch.tensor(x)
z = x.clone().detach()
print(y, y.requires_grad, z)
""",
)
S(
    "tensor-ragged-error",
    """
import torch
x = torch.tensor([[1, 2], [3]])
""",
)
S(
    "assign-grad-wrong-shape",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
x.grad = torch.zeros(2)
print(x.grad)
x.grad = torch.zeros(3)
""",
)
S(
    "int-of-multi-error",
    """
import torch
n = int(torch.tensor([1, 2]))
""",
)
S(
    "item-empty-error",
    """
import torch
v = torch.zeros(0).item()
""",
)
S(
    "len-0dim-error",
    """
import torch
n = len(torch.tensor(1.0))
""",
)
S(
    "arange-bad-step",
    """
import torch
x = torch.arange(0, 5, -1)
""",
)
S(
    "arange-float-step-count",
    """
import torch
a = torch.arange(0, 1, 0.1)
b = torch.arange(1, 2.5, 0.5)
print(a.shape, a)
print(b)
""",
)
S(
    "linspace-odd",
    """
import torch
a = torch.linspace(0, 1, 7)
b = torch.linspace(-3, 2, 6, dtype=torch.float64)
print(a)
print(b)
""",
)
S(
    "creation-dtypes",
    """
import torch
a = torch.full((2,), True)
b = torch.zeros(3, dtype=torch.bool)
c = torch.eye(2, dtype=torch.int64)
d = torch.ones(2, 2, dtype=torch.float64)
print(a, b, c, d, sep="\\n")
""",
)
S(
    "int-pow",
    """
import torch
a = torch.tensor([2, 3])
b = a ** 2
c = a ** 0.5
print(b, b.dtype)
print(c, c.dtype)
""",
)
S(
    "int-pow-negative-error",
    """
import torch
b = torch.tensor([2, 3]) ** -1
""",
)
S(
    "bool-ops",
    """
import torch
m = torch.tensor([True, False, True])
n = torch.tensor([True, True, False])
print(~m, m & n, m | n)
print(m.any(), m.all(), (~m).any())
""",
)
S(
    "promote-int-with-float64-0dim",
    """
import torch
a = torch.tensor([1, 2]) * torch.tensor(2.5, dtype=torch.float64)
b = torch.tensor([1, 2], dtype=torch.int32) * torch.tensor(2)
c = torch.tensor([True, False]) + 1
d = torch.tensor([1.0], dtype=torch.float64) + torch.tensor([1], dtype=torch.int32)
print(a, a.dtype)
print(b, b.dtype)
print(c, c.dtype)
print(d, d.dtype)
""",
)
S(
    "cat-promote",
    """
import torch
a = torch.cat([torch.tensor([1, 2]), torch.tensor([0.5])])
b = torch.stack([torch.tensor([1.0]), torch.tensor([2.0], dtype=torch.float64)], dim=-1)
print(a, a.dtype)
print(b, b.dtype, b.shape)
""",
)
S(
    "where-scalar",
    """
import torch
x = torch.tensor([-1.0, 2.0, -3.0], requires_grad=True)
y = torch.where(x > 0, x, 0.0)
z = torch.where(x > 0, 1.0, x * 2)
(y + z).sum().backward()
print(y, z)
print(x.grad)
""",
)
S(
    "fn-relu-int",
    """
import torch
x = torch.tensor([-1, 0, 2])
print(torch.relu(x), x.abs(), -x)
""",
)
S(
    "fn-clamp-boundary",
    """
import torch
x = torch.tensor([-1.0, 0.0, 1.0, 2.0], requires_grad=True)
y = x.clamp(0.0, 1.0)
y.sum().backward()
print(x.grad)
""",
)
S(
    "fn-sqrt-log-zero",
    """
import torch
x = torch.tensor([0.0, 1.0], requires_grad=True)
y = x.sqrt()
z = x.log()
y.sum().backward()
print(y, z)
print(x.grad)
""",
)
S(
    "fn-pow-zero-exponent",
    """
import torch
x = torch.tensor([0.0, 2.0], requires_grad=True)
y = x ** 0
z = x ** 1
(y + z).sum().backward()
print(y, z)
print(x.grad)
""",
)
S(
    "fn-pow-negative-base-nan",
    """
import torch
x = torch.tensor([-4.0, 4.0], requires_grad=True)
y = x ** 0.5
y.sum().backward()
print(y)
print(x.grad)
""",
)
S(
    "t-1d",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x.t()
print(y, y.shape)
""",
)
S(
    "squeeze-dim-out-of-range",
    """
import torch
x = torch.zeros(2, 1)
y = x.squeeze(5)
""",
)
S(
    "stack-empty-error",
    """
import torch
s = torch.stack([])
""",
)
S(
    "mm-dtype-mismatch",
    """
import torch
c = torch.mm(torch.ones(2, 2, dtype=torch.int64), torch.ones(2, 2))
""",
)
S(
    "linear-dtype-mismatch",
    """
import torch
import torch.nn as nn
layer = nn.Linear(2, 2)
y = layer(torch.ones(1, 2, dtype=torch.float64))
""",
)
S(
    "module-assign-before-init",
    """
import torch
import torch.nn as nn

class Broken(nn.Module):
    def __init__(self):
        self.w = nn.Parameter(torch.ones(1))
        super().__init__()

m = Broken()
""",
)
S(
    "module-children-repr",
    """
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 3)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(3, 1, bias=False)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))

net = Net()
print(net)
print([n for n, _ in net.named_parameters()])
print(net.fc2.bias)
print(net.training, net.eval().training, net.fc1.training)
""",
)
S(
    "module-freeze",
    """
import torch
import torch.nn as nn
layer = nn.Linear(2, 1)
layer.requires_grad_(False)
y = layer(torch.ones(1, 2))
print(y.requires_grad, y.grad_fn, layer.weight.requires_grad)
""",
)
S(
    "module-no-grad-forward",
    """
import torch
import torch.nn as nn
torch.manual_seed(1)
layer = nn.Linear(3, 2)
with torch.no_grad():
    y = layer(torch.ones(4, 3))
print(y.requires_grad, y.grad_fn, y.shape)
""",
)
S(
    "nn-softmax-module",
    """
import torch
import torch.nn as nn
x = torch.tensor([[1.0, 2.0], [0.0, 0.0]], requires_grad=True)
sm = nn.Softmax(dim=1)
p = sm(x)
p[:, 0].sum().backward()
print(sm)
print(p)
print(x.grad)
""",
)
S(
    "F-softmax-implicit-dim",
    """
import torch
import torch.nn.functional as F
p = F.softmax(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
print(p)
""",
)
S(
    "F-mse-loss-broadcast",
    """
import torch
import torch.nn.functional as F
a = torch.tensor([[1.0], [2.0]], requires_grad=True)
t = torch.tensor([1.0, 3.0])
loss = F.mse_loss(a, t)
loss.backward()
print(loss)
print(a.grad)
""",
)
S(
    "F-cross-entropy-none",
    """
import torch
import torch.nn.functional as F
logits = torch.tensor([[1.0, 2.0], [2.0, 1.0]], requires_grad=True)
loss = F.cross_entropy(logits, torch.tensor([0, 0]), reduction="none")
loss.sum().backward()
print(loss)
print(logits.grad)
""",
)
S(
    "F-cross-entropy-1d",
    """
import torch
import torch.nn.functional as F
logits = torch.tensor([1.0, 2.0, 0.5], requires_grad=True)
loss = F.cross_entropy(logits, torch.tensor(1))
loss.backward()
print(loss)
print(logits.grad)
""",
)
S(
    "optim-zero-grad-keep",
    """
import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
(w * w).sum().backward()
opt.zero_grad(set_to_none=False)
print(w.grad)
""",
)
S(
    "optim-step-without-grad",
    """
import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
opt = torch.optim.Adam([w], lr=0.1)
opt.step()
print(w)
""",
)
S(
    "optim-sgd-weight-decay-nesterov",
    """
import torch
w = torch.tensor([1.0, -1.0], requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)
for _ in range(3):
    opt.zero_grad()
    (w ** 2).sum().backward()
    opt.step()
print(w)
""",
)
S(
    "optim-adam-weight-decay",
    """
import torch
w = torch.tensor([0.5, -1.5], requires_grad=True)
opt = torch.optim.Adam([w], lr=0.05, betas=(0.8, 0.99), weight_decay=0.1)
for _ in range(4):
    opt.zero_grad()
    (w ** 2).sum().backward()
    opt.step()
print(w)
""",
)
S(
    "optim-param-groups-lr",
    """
import torch
w = torch.tensor([1.0], requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
print(opt.param_groups[0]["lr"])
opt.param_groups[0]["lr"] = 0.5
(w * 2).sum().backward()
opt.step()
print(w)
""",
)
S(
    "autograd-grad-twice-error",
    """
import torch
x = torch.tensor(2.0, requires_grad=True)
y = x.exp()
g = torch.autograd.grad(y, x)
g2 = torch.autograd.grad(y, x)
""",
)
S(
    "autograd-grad-retain-then-backward",
    """
import torch
x = torch.tensor(2.0, requires_grad=True)
y = x ** 3
(g,) = torch.autograd.grad(y, x, retain_graph=True)
y.backward()
print(g, x.grad)
""",
)
S(
    "backward-then-retain-error",
    """
import torch
x = torch.tensor(2.0, requires_grad=True)
y = x.sin()
y.backward()
y.backward(retain_graph=True)
""",
)
S(
    "bool-of-tensor",
    """
import torch
x = torch.tensor([3.0])
if x > 2:
    print("big")
print(bool(torch.tensor(0.0)), bool(torch.tensor([1])))
""",
)
S(
    "grad-mode-decorator-enable",
    """
import torch

@torch.enable_grad()
def f(t):
    return t * 2

x = torch.tensor([1.0], requires_grad=True)
with torch.no_grad():
    y = f(x)
print(y.requires_grad, y.grad_fn.name())
""",
)
S(
    "no-grad-decorator-bare",
    """
import torch

@torch.no_grad
def f(t):
    return t * 2

x = torch.tensor([1.0], requires_grad=True)
y = f(x)
print(y.requires_grad)
""",
)

S(
    "inplace-broadcast-error",
    """
import torch
x = torch.zeros(2)
x.add_(torch.ones(3, 2))
""",
)
S(
    "inplace-on-expanded-error",
    """
import torch
x = torch.zeros(1).expand(3)
x.add_(1)
""",
)
S(
    "view-version-shared",
    """
import torch
x = torch.zeros(2, 2)
v = x[0]
v.add_(1)
print(x._version, v._version)
print(x)
""",
)
S(
    "requires-grad-nonleaf-true",
    """
import torch
x = torch.tensor([1.0], requires_grad=True)
y = x * 2
y.requires_grad_()
y.requires_grad = True
print(y.requires_grad, y.is_leaf)
""",
)
S(
    "create-in-no-grad",
    """
import torch
with torch.no_grad():
    w = torch.ones(2, requires_grad=True)
    y = w * 2
print(w.requires_grad, w.is_leaf, y.requires_grad)
""",
)
S(
    "autograd-grad-nonscalar-error",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
g = torch.autograd.grad(x * 2, x)
""",
)
S(
    "autograd-grad-no-grad-output-error",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = torch.tensor(3.0)
g = torch.autograd.grad(y, x)
""",
)
S(
    "extreme-values",
    """
import torch
x = torch.tensor([100.0, -100.0, 0.0], requires_grad=True)
s = torch.sigmoid(x)
e = torch.exp(x)
t = torch.tanh(x)
(s + t).sum().backward()
print(s)
print(e)
print(t)
print(x.grad)
print(torch.log(torch.tensor([-1.0, 0.0])))
""",
)
S(
    "cross-entropy-large-logits",
    """
import torch
import torch.nn.functional as F
logits = torch.tensor([[1000.0, 0.0], [0.0, -1000.0]], requires_grad=True)
loss = F.cross_entropy(logits, torch.tensor([1, 1]))
loss.backward()
print(loss)
print(logits.grad)
""",
)
S(
    "cat-0dim-error",
    """
import torch
c = torch.cat([torch.tensor(1.0), torch.tensor(2.0)])
""",
)
S(
    "max-dim-on-1d",
    """
import torch
x = torch.tensor([3.0, 1.0, 4.0], requires_grad=True)
v, i = x.max(0)
v.backward()
print(v, i)
print(x.grad)
m = x.max(1)
""",
)
S(
    "size-object",
    """
import torch
s = torch.zeros(2, 3).shape
print(s[0], s[-1], len(s), s == torch.Size([2, 3]), s.numel())
print(torch.Size([4, 5]), tuple(s), s[1:])
""",
)
S(
    "random-seeded",
    """
import torch
torch.manual_seed(0)
a = torch.randn(3)
b = torch.rand(2, 2)
torch.manual_seed(0)
c = torch.randn(3)
print(a)
print(b)
print(torch.equal(a, c))
""",
)
S(
    "loss-module-repr",
    """
import torch
import torch.nn as nn
print(nn.MSELoss(), nn.CrossEntropyLoss(), nn.Softmax(dim=1))
print(nn.Sequential(nn.Linear(2, 2), nn.Sigmoid()))
""",
)
S(
    "optim-repr",
    """
import torch
w = torch.tensor([1.0], requires_grad=True)
print(torch.optim.SGD([w], lr=0.1, momentum=0.9))
print(torch.optim.Adam([w], lr=0.01))
""",
)
S(
    "optim-state-after-step",
    """
import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
(w * w).sum().backward()
opt.step()
buf = opt.state[w]["momentum_buffer"]
print(buf)
""",
)
S(
    "mse-loss-int-target-error",
    """
import torch
import torch.nn.functional as F
loss = F.mse_loss(torch.tensor([1.0, 2.0]), torch.tensor([1, 2]))
print(loss)
""",
)

S(
    "more-methods-grad",
    """
import torch
x = torch.tensor([[1.0, -2.0], [4.0, 0.5]], requires_grad=True)
a = x.neg()
b = x.reciprocal()
c = torch.clip(x, -1.0, 1.0)
d = x.clamp_min(0.0)
e = torch.clamp_max(x, 1.0)
f = x.add(torch.ones(2, 2), alpha=2)
g = x.sub(1.0, alpha=3)
h = x.view_as(torch.zeros(4, 1))
i = x.reshape_as(torch.zeros(1, 4))
j = x[0].expand_as(x)
k = x.mT
(a + b + c + d + e + f + g + h.view(2, 2) + i.view(2, 2) + j + k).sum().backward()
print(a, b, c, d, e, f, g, h, i, j, k, sep="\\n")
print(x.grad)
""",
)
S(
    "more-methods-plain",
    """
import torch
x = torch.tensor([[1.0, 5.0], [3.0, 2.0]])
print(x.argmin(), torch.argmin(x, 1, keepdim=True))
print(torch.allclose(x, x + 1e-9), torch.equal(x, x.clone()), x.equal(x * 2))
print((x > 1).all(), (x > 4).any())
print(x.nelement(), torch.numel(x), x.type(), torch.tensor([1]).type())
print(torch.get_default_dtype(), torch.is_tensor(x))
print(torch.full_like(x, 2.5), torch.empty(2).shape)
print(torch.maximum(x, x.t()), torch.minimum(x, torch.tensor(2.0)))
print([1, 2, 3][torch.tensor(1)], float(torch.tensor([2.5])), int(torch.tensor(3.9)))
""",
)
S(
    "more-inplace-ops",
    """
import torch
x = torch.tensor([4.0, -2.0, 9.0])
x.div_(2)
print(x)
x.clamp_(min=0.0)
print(x)
x.neg_()
print(x)
x.add_(torch.tensor([1.0, 1.0, 1.0]), alpha=10)
print(x, x._version)
""",
)
S(
    "more-inplace-nonleaf-div-clamp",
    """
import torch
x = torch.tensor([4.0, -2.0, 9.0], requires_grad=True)
y = x * 1
y.div_(2)
y.clamp_(min=0.0)
y.neg_()
y.sum().backward()
print(y, y.grad_fn.name())
print(x.grad)
""",
)
S(
    "nn-identity-linear-functional",
    """
import torch
import torch.nn as nn
import torch.nn.functional as F
x = torch.tensor([[1.0, 2.0]], requires_grad=True)
w = torch.tensor([[0.5, -1.0], [2.0, 0.0]], requires_grad=True)
b = torch.tensor([0.1, 0.2], requires_grad=True)
y = F.linear(x, w, b)
z = F.linear(x, w)
i = nn.Identity()(y)
(i.sum() + z.sum()).backward()
print(y, z, i is y)
print(w.grad, b.grad, x.grad)
""",
)
S(
    "nn-nll-loss",
    """
import torch
import torch.nn.functional as F
x = torch.tensor([[0.1, 0.7, 0.2], [0.3, 0.3, 0.4]], requires_grad=True)
lp = torch.log(x)
loss = F.nll_loss(lp, torch.tensor([1, 2]))
loss.backward()
print(loss)
print(x.grad)
""",
)
S(
    "random-ints",
    """
import torch
torch.manual_seed(3)
a = torch.randint(0, 10, (5,))
b = torch.randperm(5)
c = torch.rand_like(torch.zeros(2))
d = torch.randn(2, 2, requires_grad=True)
print(a, b, c, d, sep="\\n")
""",
)

# ======================================================================================
# once unsupported: each of these raised UnsupportedByGradtrace before issue 9
# ======================================================================================

S(
    "inplace-on-a-view-of-a-nonleaf",
    """
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 2
y[0].mul_(10)
print(y, type(y.grad_fn).__name__)
y.sum().backward()
print(x.grad)
""",
)
S(
    "setitem-into-a-graph-tensor",
    """
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 2
y[1] = 0.0
print(y)
y.sum().backward()
print(x.grad)
""",
)
S(
    "rmsprop-made",
    """
import torch
w = torch.tensor([1.0], requires_grad=True)
opt = torch.optim.RMSprop([w])
print(opt)
""",
)
S(
    "gelu-of-one",
    """
import torch
import torch.nn.functional as F
y = F.gelu(torch.tensor([1.0]))
print(y)
""",
)
S(
    "tensor-norm-of-three-four",
    """
import torch
n = torch.tensor([3.0, 4.0]).norm()
print(n)
""",
)
S(
    "batched-matmul-shapes",
    """
import torch
a = torch.zeros(2, 3, 4)
b = torch.zeros(2, 4, 5)
c = a @ b
print(c.shape)
""",
)

# ======================================================================================
# unsupported: the engine must say so clearly
# ======================================================================================

S(
    "unsupported-fft",
    """
import torch
y = torch.fft.fft(torch.tensor([1.0, 2.0]))
""",
    unsupported=True,
)
S(
    "unsupported-fft-import",
    """
import torch.fft
y = torch.fft.rfft(torch.tensor([1.0, 2.0]))
""",
    unsupported=True,
)
S(
    "unsupported-conv2d",
    """
import torch
import torch.nn as nn
conv = nn.Conv2d(1, 1, 3)
""",
    unsupported=True,
)
S(
    "unsupported-linalg",
    """
import torch
n = torch.linalg.norm(torch.tensor([3.0, 4.0]))
""",
    unsupported=True,
)

# ======================================================================================
# the seed articles' examples, verbatim (000 and 001 have no code)
# ======================================================================================

_SEED_002 = """
import torch

# Initialize weights with gradient tracking enabled
weights = torch.randn(5, requires_grad=True)

def dynamic_model(x, threshold=0.5):
    # The graph is built dynamically based on the values of x
    result = 0
    for val in x:
        if val > threshold:
            # This operation is added to the graph only if the condition is met
            result += val * weights[0]
        else:
            result += val * weights[1]
    return result

# Input tensor (can be any length)
input_data = torch.tensor([0.1, 0.8, 0.2, 0.9])

# Forward pass: The graph is constructed here
loss = dynamic_model(input_data)

# Backward pass: Traverses the specific graph created for this input
loss.backward()

print(f"Gradients for weights: {weights.grad}")
"""
_SEED_002_NO_GRAD = """
with torch.no_grad():
    # No graph is constructed here
    prediction = dynamic_model(input_data)
    # prediction.backward() would raise an error here
"""
# torch.randn draws the weights; the printed gradients do not depend on them, and since the
# engine's generator draws what PyTorch's does (both seeded before each snippet), the weights
# themselves are checked too
S("seed-002-dynamic-model", _SEED_002)
S("seed-002-no-grad", _SEED_002 + _SEED_002_NO_GRAD)
S(
    "seed-003-trace",
    """
import torch

a = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(4.0, requires_grad=True)
c = a * b
d = c + a
d.backward()
print(a.grad.item(), b.grad.item())
""",
)
S(
    "seed-004-chapter-10",
    """
import torch

# Define input tensors
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = torch.tensor([4.0, 5.0, 6.0], requires_grad=True)

# Perform operations
z = x * y  # Element-wise multiplication
loss = z.sum()  # Sum of elements

# Backpropagation
loss.backward()

# Display gradients
print(x.grad)  # Output: tensor([4., 5., 6.])
print(y.grad)  # Output: tensor([1., 2., 3.])
""",
)
# ... and the things those articles say happen, checked
S("seed-002-prediction-backward-error", _SEED_002 + _SEED_002_NO_GRAD + "prediction.backward()\n")
S(
    "seed-003-intermediate-grad",
    """
import torch
import warnings
warnings.simplefilter("ignore")
a = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(4.0, requires_grad=True)
c = a * b
d = c + a
d.backward()
print(c.grad, d.grad_fn.name(), c.grad_fn.name())
d.backward()
""",
)
S(
    "seed-004-second-backward",
    """
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = torch.tensor([4.0, 5.0, 6.0], requires_grad=True)
z = x * y
loss = z.sum()
loss.backward(retain_graph=True)
loss.backward()
print(x.grad)
print(y.grad)
""",
)


# ======================================================================================
# running a snippet
# ======================================================================================


def module_map(torch_module) -> dict[str, Any]:
    """`import torch...` names resolved to one implementation (real torch or the engine)."""
    return {
        "torch": torch_module,
        "torch.nn": torch_module.nn,
        "torch.nn.functional": torch_module.nn.functional,
        "torch.optim": torch_module.optim,
        "torch.autograd": torch_module.autograd,
        # the function's name is also its module's: `from torch.autograd.gradcheck import
        # GradcheckError` imports from the module
        "torch.autograd.gradcheck": importlib.import_module("torch.autograd.gradcheck"),
    }


def snippet_globals(modules: dict[str, Any]) -> dict[str, Any]:
    real_import = builtins.__import__

    def import_(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and (name == "torch" or name.startswith("torch.")):
            if fromlist:
                return modules[name] if name in modules else _attribute_path(modules, name)
            if name not in modules:
                _attribute_path(modules, name)  # torch.fft and friends: fail as the module does
            return modules["torch"]
        return real_import(name, globals, locals, fromlist, level)

    namespace_builtins = dict(vars(builtins), __import__=import_)
    return {"__builtins__": namespace_builtins, "__name__": "__snippet__"}


def _attribute_path(modules: dict[str, Any], name: str):
    obj = modules["torch"]
    for part in name.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def encode(value: Any) -> Any:
    """Nested lists of numbers with nan/inf spelled as strings (strict JSON)."""
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def probe(t) -> dict[str, Any]:
    """Everything the engine must match about one tensor."""
    grad_fn = t.grad_fn
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # .grad of a non-leaf warns; its value is still probed
        grad = t.grad
    return {
        "repr": repr(t),
        "shape": list(t.shape),
        "dtype": str(t.dtype),
        "requires_grad": t.requires_grad,
        "is_leaf": t.is_leaf,
        "grad_fn": grad_fn.name() if grad_fn is not None else None,
        "next_functions": None
        if grad_fn is None
        else [[f.name() if f is not None else None, i] for f, i in grad_fn.next_functions],
        "values": encode(t.detach().tolist()),
        "grad": None if grad is None else encode(grad.tolist()),
    }


def probe_namespace(namespace: dict[str, Any], tensor_type: type) -> dict[str, Any]:
    probes = {}
    for name, value in namespace.items():
        if name.startswith("_"):
            continue
        if isinstance(value, tensor_type):
            probes[name] = probe(value)
        elif (
            isinstance(value, tuple | list)
            and value
            and all(isinstance(v, tensor_type) for v in value)
        ):
            for i, v in enumerate(value):
                probes[f"{name}[{i}]"] = probe(v)
    return probes


def reset_state(torch_module) -> None:
    """Undo what a snippet may have set for the whole process (grad mode, default dtype and
    device, print options), so one snippet's settings never change another's record."""
    torch_module.set_grad_enabled(True)
    torch_module.set_default_dtype(torch_module.float32)
    torch_module.set_printoptions(profile="default")  # sci_mode too: every call resets it
    if hasattr(torch_module, "get_default_device"):
        torch_module.set_default_device(None)


def run(source: str, torch_module) -> dict[str, Any]:
    """Run one snippet; return its stdout, error and probes."""
    namespace = snippet_globals(module_map(torch_module))
    out = io.StringIO()
    error = None
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch_module.manual_seed(SEED)
        try:
            exec(compile(source, "<snippet>", "exec"), namespace)
        except Exception as e:  # noqa: BLE001 - every error is part of the record
            error = [type(e).__name__, str(e)]
        finally:
            reset_state(torch_module)
    return {
        "stdout": out.getvalue(),
        "error": error,
        "probes": probe_namespace(namespace, torch_module.Tensor),
    }


def record(snippets: list[dict[str, Any]], out: Path, torch) -> None:
    slugs = [s["slug"] for s in snippets]
    duplicates = {s for s in slugs if slugs.count(s) > 1}
    assert not duplicates, duplicates
    records = []
    for snippet in snippets:
        entry = dict(snippet)
        if not snippet.get("unsupported"):
            entry.update(run(snippet["source"], torch))
        records.append(entry)
    payload = {"torch_version": torch.__version__, "snippets": records}
    out.write_text(json.dumps(payload, indent=1, sort_keys=True, allow_nan=False) + "\n")
    errors = sum(1 for r in records if r.get("error"))
    print(f"wrote {out} ({len(records)} snippets, {errors} raising)")


def main(areas: list[str]) -> None:
    """With no arguments record the core list, then each area in a fresh process (a snippet
    that changes torch's global state must not change another area's record); otherwise just
    the named areas, here."""
    import torch  # only here: the test imports nothing from this file, but keep it cheap

    # float32 sums of 32,768+ elements split across threads; the engine reproduces two (its
    # numerics.THREADS), so record with two whatever this machine has
    torch.set_num_threads(2)
    if not areas:
        record(SNIPPETS, OUT, torch)
        for area in sorted(p.stem for p in AREA_MODULES.glob("*.py") if p.stem != "__init__"):
            subprocess.run([sys.executable, __file__, area], check=True)
        return
    for area in areas:
        module = importlib.import_module(f"tools.goldens.{area}")
        record(module.SNIPPETS, OUT.parent / "areas" / f"{area}.json", torch)


if __name__ == "__main__":
    main(sys.argv[1:])
