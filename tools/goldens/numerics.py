"""Golden snippets for bit-exact numerics: what a lesson prints with .item() must be PyTorch's bits.

Float32 sums, a + alpha * b, linspace and optimizer steps round exactly as PyTorch 2.13's CPU
kernels do (engine/numerics.py); these snippets print full-precision numbers so any difference
in the last bit shows.
"""

from __future__ import annotations

from tools.goldens import collect

SNIPPETS: list = []
S = collect(SNIPPETS)

# The cubic fit of sin(x) from PyTorch's tutorial "Learning PyTorch with Examples" runs as
# written (float32) in tools/goldens/tutorials.py. Here the same fit in float64, which no
# tutorial covers: its sums, linspace, sin and in-place steps must agree to the last bit over
# all 2000 steps, and the gradients too.
S(
    "numerics-cubic-fit-float64",
    """
import math
import torch

x = torch.linspace(-math.pi, math.pi, 2000, dtype=torch.float64)
target = torch.sin(x)
coefficients = [torch.randn((), dtype=torch.float64, requires_grad=True) for _ in range(4)]
for step in range(2000):
    a, b, c, d = coefficients
    loss = (a + b * x + c * x ** 2 + d * x ** 3 - target).pow(2).sum()
    loss.backward()
    if step % 250 == 0 or step == 1999:
        print(step, loss.item(), [p.grad.item() for p in coefficients])
    with torch.no_grad():
        for p in coefficients:
            p -= 1e-6 * p.grad
            p.grad = None
print([p.item() for p in coefficients])
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
S(
    "numerics-sigmoid-short-tensors",
    """
import torch
# PyTorch's CPU sigmoid: 1 / (1 + exp(-x)) in float32, with libm's exp below 16 elements
torch.manual_seed(0)
print(torch.sigmoid(torch.tensor(0.2)).item())
for n in (1, 3, 6, 15):
    x = torch.randn(n) * 4
    print(torch.sigmoid(x).tolist())
    print(x.sigmoid().sum().item())
print(torch.sigmoid(torch.tensor([-200.0, -88.0, 0.0, 88.0, 200.0])).tolist())
""",
)
