"""Golden snippets for bit-exact numerics: what a lesson prints with .item() must be PyTorch's bits.

Float32 sums, a + alpha * b, linspace and optimizer steps round exactly as PyTorch 2.13's CPU
kernels do (engine/numerics.py); these snippets print full-precision numbers so any difference
in the last bit shows.
"""

from __future__ import annotations

from tools.goldens import collect

SNIPPETS: list = []
S = collect(SNIPPETS)

# PyTorch's tutorial "Learning PyTorch with Examples": a cubic fit of sin(x), tensors and autograd
# (its device=torch.device("cpu") arguments left out: they change nothing on the CPU); the
# faithful version is in tests/engine/test_numerics.py
S(
    "numerics-tutorial-cubic-fit",
    """
import math
import torch

dtype = torch.float
x = torch.linspace(-math.pi, math.pi, 2000, dtype=dtype)
y = torch.sin(x)
# PyTorch's float32 sin comes from MKL's vector library, whose last bit the engine cannot
# reproduce (about 5% of these 2000 values differ); on a 2^-12 grid the difference is gone
y = torch.round(y * 4096) / 4096
a = torch.randn((), dtype=dtype, requires_grad=True)
b = torch.randn((), dtype=dtype, requires_grad=True)
c = torch.randn((), dtype=dtype, requires_grad=True)
d = torch.randn((), dtype=dtype, requires_grad=True)
learning_rate = 1e-6
for t in range(2000):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3
    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, loss.item())
    loss.backward()
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None
print(f"Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3")
""",
    long=True,
)

S(
    "numerics-sum-randn-2000",
    """
import torch
torch.manual_seed(0)
x = torch.randn(2000)
print(x.sum().item(), x.mean().item())
print(x.view(40, 50).sum(0)[:3].tolist(), x.view(40, 50).sum(1)[:3].tolist())
""",
)

S(
    "numerics-linspace-mean",
    """
import math
import torch
x = torch.linspace(-math.pi, math.pi, 2000)
print(x.mean().item(), x[999].item(), x[1000].item())
""",
)

S(
    "numerics-sgd-steps",
    """
import torch
torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
target = torch.randn(3)
opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
for step in range(10):
    opt.zero_grad()
    loss = ((w - target) ** 2).sum()
    loss.backward()
    opt.step()
    print(step, loss.item(), w.tolist())
""",
)

S(
    "numerics-add-alpha",
    """
import torch
torch.manual_seed(0)
a = torch.randn(5)
b = torch.randn(5)
print(a.add(b, alpha=0.1).tolist())
print(a.sub(b, alpha=0.3).tolist())
a.add_(b, alpha=-0.01)
print(a.tolist())
""",
)
