"""Golden snippets for the functions PyTorch computes with MKL's vector math library (VML).

float32 and float64 sin, cos, tan, exp, log, log2, log10, sqrt, tanh, atan, asin and acos are
not correctly rounded in PyTorch's CPU build: they are MKL's (engine/vml.py calls the same
library). Each snippet prints full-precision values, so a last bit that differs shows; the
backward passes use the same functions (sin's gradient is cos, sqrt's divides by the result).
"""

from __future__ import annotations

from tools.goldens import collect

SNIPPETS: list = []
S = collect(SNIPPETS)

S(
    "vml-forward-float32",
    """
import torch
x = torch.randn(40) * 3
positive = x.abs() + 0.01
unit = torch.rand(40) * 2 - 1
for name in ("sin", "cos", "tan", "exp", "tanh", "atan"):
    print(name, getattr(torch, name)(x).tolist())
for name in ("log", "log2", "log10", "sqrt"):
    print(name, getattr(torch, name)(positive).tolist())
for name in ("asin", "acos"):
    print(name, getattr(torch, name)(unit).tolist())
""",
)

S(
    "vml-forward-float64-strided-and-0d",
    """
import torch
m = torch.randn(6, 5, dtype=torch.float64)
print(torch.exp(m).tolist())
print(torch.sin(m.t()).tolist())
print(torch.sqrt(m.abs()[:, ::2]).tolist())
s = torch.tensor(0.7234567)
print(s.sin().item(), s.exp().item(), s.sqrt().item(), s.tanh().item())
""",
)

S(
    "vml-backward",
    """
import torch
x = (torch.randn(30) * 2).requires_grad_()
y = (x.sin() + x.cos() + x.exp() * 0.1 + x.tanh()).sum() + (x.abs() + 0.5).sqrt().sum()
y.backward()
print(y.item())
print(x.grad.tolist())
""",
)

S(
    "vml-methods-in-place-and-power",
    """
import torch
x = torch.rand(25) * 4
a = x.clone()
a.sqrt_()
b = x.clone()
b.sin_()
print(a.tolist(), b.tolist())
print((x ** 0.5).tolist())
print(x.pow(torch.arange(25) % 4).tolist())
""",
)

S(
    "vml-optimizers",
    """
import torch
for make in (torch.optim.Adam, torch.optim.AdamW, torch.optim.RMSprop, torch.optim.Adagrad):
    w = torch.nn.Parameter(torch.randn(20))
    opt = make([w], lr=0.05)
    for _ in range(5):
        opt.zero_grad()
        loss = ((w - 1.5) ** 2).sum()
        loss.backward()
        opt.step()
    print(make.__name__, loss.item(), w.tolist())
""",
)

S(
    "vml-erf-erfc",
    """
import torch
for dtype in (torch.float32, torch.float64):
    x = (torch.randn(40, dtype=dtype) * 2).requires_grad_()
    y = torch.erf(x)
    z = x.erfc()
    (y.sum() + z.sum() * 0.5).backward()
    print(y.tolist())
    print(z.tolist())
    print(x.grad.tolist())
""",
)

# products through MKL's BLAS (engine/blas.py): widths 5 to 11, transposed operands, vectors,
# batches on both sides of bmm's 400 threshold, and nn.Linear's forward and backward. The
# goldens run PyTorch on two threads, where MKL splits some 5-11-row products differently from
# the engine's single thread; these shapes are ones both agree on.
S(
    "vml-blas-products",
    """
import torch
a = torch.randn(4, 9)
b = torch.randn(9, 7)
print((a @ b).tolist())
print((torch.randn(9, 4).t() @ torch.randn(11, 9).t()).tolist())
print((torch.randn(16, 33) @ torch.randn(33, 6)).tolist())
print((torch.randn(3, 20) @ torch.randn(20)).tolist())
print(torch.randn(20, 3).t().mv(torch.randn(20)).tolist())
print(torch.dot(torch.randn(50), torch.randn(50)).item())
print(torch.randn(37, dtype=torch.float64).dot(torch.randn(37, dtype=torch.float64)).item())
small = torch.bmm(torch.randn(2, 3, 4), torch.randn(2, 4, 5))
large = torch.bmm(torch.randn(3, 4, 17), torch.randn(3, 8, 17).transpose(1, 2))
print(small.tolist(), large.tolist())
print((torch.randn(2, 3, 16) @ torch.randn(2, 16, 12)).tolist())
layer = torch.nn.Linear(16, 12)
x = torch.randn(32, 16, requires_grad=True)
out = layer(x)
(out * torch.randn(32, 12)).sum().backward()
print(out.tolist())
print(x.grad.tolist())
print(layer.weight.grad.tolist())
print(layer.bias.grad.tolist())
""",
)
