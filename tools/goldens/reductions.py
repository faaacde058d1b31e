"""Reductions and scans: prod, var, std, norm, linalg.vector_norm, cumsum, cumprod, logsumexp,
topk, sort, amax/amin, any/all along dims, sum/mean with dtype=."""

from __future__ import annotations

from tools.goldens import collect

SNIPPETS: list[dict] = []
S = collect(SNIPPETS)

# ***** prod *****

S(
    "red-prod-all",
    """
import torch
x = torch.tensor([[1.5, 2.0, -0.5], [3.0, 0.25, 4.0]], requires_grad=True)
y = x.prod()
print(y, y.grad_fn.name())
y.backward()
print(x.grad)
""",
)
S(
    "red-prod-dim-keepdim",
    """
import torch
x = torch.tensor([[1.5, 2.0, -0.5], [3.0, 0.25, 4.0]], requires_grad=True)
a = x.prod(1)
b = torch.prod(x, 0, keepdim=True)
print(a, b)
(a.sum() + (b * torch.tensor([[1.0, 2.0, 3.0]])).sum()).backward()
print(x.grad)
""",
)
S(
    "red-prod-one-zero",
    """
import torch
x = torch.tensor([2.0, 0.0, 3.0, -1.0], requires_grad=True)
y = x.prod()
y.backward()
print(y, x.grad)
""",
)
S(
    "red-prod-two-zeros",
    """
import torch
x = torch.tensor([[2.0, 0.0, 0.0], [0.0, 3.0, 5.0]], requires_grad=True)
y = x.prod()
y.backward()
print(y, x.grad)
z = torch.tensor([[2.0, 0.0, 0.0], [0.0, 3.0, 5.0]], requires_grad=True)
w = z.prod(dim=1)
w.sum().backward()
print(w, z.grad)
""",
)
S(
    "red-prod-ints",
    """
import torch
x = torch.tensor([[1, 2, 3], [4, 5, 6]])
print(x.prod(), x.prod(1), x.prod(0, dtype=torch.float64))
print(torch.tensor([True, True]).prod())
""",
)

# ***** var and std *****

S(
    "red-var-std-all",
    """
import torch
x = torch.tensor([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]], requires_grad=True)
v = x.var()
s = x.std()
print(v, s)
(v + s).backward()
print(x.grad)
""",
)
S(
    "red-var-dim-correction",
    """
import torch
x = torch.tensor([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]], requires_grad=True)
a = x.var(1)
b = x.var(0, correction=0)
c = torch.var(x, dim=1, unbiased=False, keepdim=True)
d = x.var(False)
print(a, b, c, d)
(a.sum() + b.sum() * 2 + c.sum() * 3 + d).backward()
print(x.grad)
""",
)
S(
    "red-std-dim-keepdim",
    """
import torch
x = torch.tensor([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]], requires_grad=True)
a = x.std(dim=1, keepdim=True)
b = torch.std(x, 0, True)
c = x.std(dim=(0, 1), correction=2)
print(a, b, c)
(a.sum() + b.sum() + c).backward()
print(x.grad)
""",
)
S(
    "red-var-too-few",
    """
import torch
x = torch.tensor([3.0], requires_grad=True)
v = x.var()
s = x.std()
print(v, s)
(v + s).backward()
print(x.grad)
y = torch.tensor([1.0, 2.0])
print(y.var(correction=2), y.std(correction=3), torch.tensor(1.0).var())
""",
)
S(
    "red-std-of-constant",
    """
import torch
x = torch.tensor([2.0, 2.0, 2.0], requires_grad=True)
s = x.std()
s.backward()
print(s, x.grad)
""",
)
S(
    "red-var-int-error",
    """
import torch
x = torch.tensor([1, 2, 3])
x.var()
""",
)

# ***** norm *****

S(
    "red-norm-default",
    """
import torch
x = torch.tensor([[3.0, -4.0], [1.0, 2.0]], requires_grad=True)
n = x.norm()
print(n, n.grad_fn.name())
n.backward()
print(x.grad)
""",
)
S(
    "red-norm-p",
    """
import torch
x = torch.tensor([[3.0, -4.0, 0.5], [1.0, 2.0, -2.0]], requires_grad=True)
a = x.norm(1)
b = x.norm(p=float("inf"))
c = torch.norm(x, p="fro", dim=1)
d = x.norm(3, dim=0, keepdim=True)
e = x.norm(dim=(0, 1))
print(a, b, c, d, e)
(a + b + c.sum() + d.sum() + e).backward()
print(x.grad)
""",
)
S(
    "red-norm-inf-ties",
    """
import torch
x = torch.tensor([3.0, -3.0, 1.0], requires_grad=True)
n = x.norm(float("inf"))
n.backward()
print(n, x.grad)
y = torch.tensor([[1.0, -2.0], [0.5, 0.0]], requires_grad=True)
m = torch.linalg.vector_norm(y, ord=float("-inf"), dim=1)
m.sum().backward()
print(m, y.grad)
""",
)
S(
    "red-norm-zero-vector",
    """
import torch
x = torch.zeros(3, requires_grad=True)
n = x.norm()
n.backward()
print(n, x.grad)
""",
)
S(
    "red-vector-norm",
    """
import torch
x = torch.tensor([[1.0, -2.0, 2.0], [0.0, 3.0, -4.0]], requires_grad=True)
a = torch.linalg.vector_norm(x)
b = torch.linalg.vector_norm(x, ord=1, dim=0)
c = torch.linalg.vector_norm(x, 0.5, dim=1, keepdim=True)
d = torch.linalg.vector_norm(x, ord=0)
print(a, b, c, d)
print(a.grad_fn.name(), d.grad_fn.name())
(a + b.sum() + c.sum()).backward()
print(x.grad)
""",
)
S(
    "red-norm-int-error",
    """
import torch
torch.tensor([3, 4]).norm()
""",
)
S(
    "red-linalg-other-unsupported",
    """
import torch
torch.linalg.inv(torch.eye(2))
""",
    unsupported=True,
)

# ***** cumsum, cumprod *****

S(
    "red-cumsum",
    """
import torch
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, -5.0, 6.0]], requires_grad=True)
a = x.cumsum(1)
b = torch.cumsum(x, dim=0)
print(a, b, a.grad_fn.name())
(a * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
print(x.grad)
print(torch.tensor([1, 2, 3]).cumsum(0), torch.tensor([True, True]).cumsum(0))
""",
)
S(
    "red-cumprod",
    """
import torch
x = torch.tensor([[1.5, 2.0, -3.0], [0.5, 4.0, 2.0]], requires_grad=True)
a = x.cumprod(1)
print(a)
(a * torch.tensor([1.0, -2.0, 3.0])).sum().backward()
print(x.grad)
""",
)
S(
    "red-cumprod-zeros",
    """
import torch
x = torch.tensor([2.0, 0.0, 3.0, 0.0, 5.0], requires_grad=True)
a = torch.cumprod(x, 0)
a.sum().backward()
print(a, x.grad)
""",
)

# ***** logsumexp *****

S(
    "red-logsumexp",
    """
import torch
x = torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.0, 100.0]], requires_grad=True)
a = x.logsumexp(1)
b = torch.logsumexp(x, dim=(0, 1), keepdim=True)
print(a, b, a.grad_fn.name())
(a.sum() + b.sum()).backward()
print(x.grad)
print(torch.tensor([1, 2]).logsumexp(0))
print(torch.tensor([float("-inf"), float("-inf")]).logsumexp(0))
""",
)

# ***** topk and sort *****

S(
    "red-topk",
    """
import torch
x = torch.tensor([[1.0, 5.0, 3.0, 2.0], [7.0, -1.0, 0.0, 4.0]], requires_grad=True)
top = x.topk(2)
print(top)
values, indices = torch.topk(x, 3, dim=1, largest=False)
print(values, indices)
print(type(top).__name__, top.values.grad_fn.name(), top.indices.dtype)
(top.values.sum() + values.sum() * 2).backward()
print(x.grad)
""",
)
S(
    "red-topk-dim0",
    """
import torch
x = torch.tensor([[1.0, 5.0], [7.0, -1.0], [3.0, 2.0]], requires_grad=True)
top = x.topk(1, dim=0)
print(top)
top.values.sum().backward()
print(x.grad)
""",
)
S(
    "red-topk-too-many",
    """
import torch
torch.tensor([1.0, 2.0]).topk(3)
""",
)
S(
    "red-sort",
    """
import torch
x = torch.tensor([[3.0, 1.0, 2.0], [-1.0, 5.0, 4.0]], requires_grad=True)
s = x.sort()
print(s)
d = torch.sort(x, dim=0, descending=True)
print(d.values, d.indices, d.values.grad_fn.name())
(s.values * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
print(x.grad)
""",
)
S(
    "red-sort-stable-ties",
    """
import torch
x = torch.tensor([2.0, 1.0, 2.0, 1.0, 3.0], requires_grad=True)
s = x.sort(stable=True)
d = x.sort(descending=True, stable=True)
print(s, d)
(s.values * torch.arange(5.0)).sum().backward()
print(x.grad)
print(torch.tensor([3, 1, 2]).sort(descending=True))
""",
)
S(
    "red-sort-nan",
    """
import torch
x = torch.tensor([2.0, float("nan"), -1.0, 0.5])
print(x.sort())
print(x.sort(descending=True))
""",
)

# ***** amax, amin *****

S(
    "red-amax-amin",
    """
import torch
x = torch.tensor([[1.0, 5.0, 5.0], [7.0, -1.0, -1.0]], requires_grad=True)
a = x.amax()
b = x.amin(1)
c = torch.amax(x, dim=(0, 1), keepdim=True)
print(a, b, c, a.grad_fn.name(), b.grad_fn.name())
(a + b.sum() + c.sum()).backward()
print(x.grad)
""",
)
S(
    "red-amax-ties-vs-max",
    """
import torch
x = torch.tensor([[2.0, 2.0, 1.0], [0.0, 3.0, 3.0]], requires_grad=True)
x.amax(1).sum().backward()
print(x.grad)
y = torch.tensor([[2.0, 2.0, 1.0], [0.0, 3.0, 3.0]], requires_grad=True)
y.max(1).values.sum().backward()
print(y.grad)
""",
)

# ***** any, all, sum and mean with dtype *****

S(
    "red-any-all-dim",
    """
import torch
x = torch.tensor([[True, False, True], [True, True, True]])
print(x.any(1), x.all(1), x.all(dim=0, keepdim=True), torch.any(x, 0), torch.all(x))
y = torch.tensor([[0.0, 1.0], [0.0, 0.0]])
print(y.any(1), y.all(0), torch.tensor([[1, 0], [2, 3]]).all(1))
""",
)
S(
    "red-sum-mean-dtype",
    """
import torch
x = torch.tensor([[1.0, 2.0], [3.0, 4.5]], requires_grad=True)
a = x.sum(dtype=torch.float64)
b = x.mean(1, dtype=torch.float64)
print(a, b, [type(f).__name__ for f, _ in a.grad_fn.next_functions])
(a + b.sum()).backward()
print(x.grad)
i = torch.tensor([1, 2, 4])
print(i.sum(dtype=torch.float32), i.mean(dtype=torch.float64), torch.sum(i, 0, dtype=torch.int32))
""",
)
S(
    "red-mean-int-dtype-error",
    """
import torch
torch.tensor([1.0, 2.0]).mean(dtype=torch.int64)
""",
)
S(
    "red-max-still-works",
    """
import torch
x = torch.tensor([[1.0, 5.0, 3.0], [7.0, -1.0, 0.0]], requires_grad=True)
m = x.max()
v, i = x.min(dim=1)
a = x.argmax(1)
print(m, v, i, a)
(m + v.sum()).backward()
print(x.grad)
""",
)

# ***** edges: 0-dim and empty tensors, dims given as lists, negative dims *****

S(
    "red-zero-dim-inputs",
    """
import torch
x = torch.tensor(2.5, requires_grad=True)
ys = [x.prod(), x.prod(0), x.cumsum(0), x.cumprod(-1), x.logsumexp(0), x.amax(), x.amin(0),
      x.norm(), x.sort().values, x.topk(1).values, x.std(correction=0), x.var(0, correction=0)]
for y in ys:
    print(y)
sum(y for y in ys).backward()
print(x.grad)
print(x.sort().indices, x.topk(0))
""",
)
S(
    "red-empty-inputs",
    """
import torch
e = torch.zeros(0, 3, requires_grad=True)
ys = [e.prod(), e.prod(0), e.cumsum(0), e.cumprod(1), e.norm(), e.sum(0), e.logsumexp(0)]
for y in ys:
    print(y)
for y in ys:
    y.backward(torch.ones_like(y))
print(e.grad)
print(e.var(0), e.std(), e.amax(1), e.sort(0))
""",
)
S(
    "red-amax-empty-error",
    """
import torch
torch.zeros(0, 3).amax(0)
""",
)
S(
    "red-negative-and-list-dims",
    """
import torch
x = torch.tensor([[[1.0, 2.0], [3.0, -4.0]], [[0.5, 6.0], [-7.0, 8.0]]], requires_grad=True)
a = x.var([0, -1])
b = x.norm(dim=[-1, 0], keepdim=True)
c = x.logsumexp([-2])
d = x.amax([2, 0])
e = x.prod(-2)
f = x.cumsum(-1)
g = x.std(-3, keepdim=True)
print(a, b, c, d, e, f, g)
(a.sum() + b.sum() + c.sum() + d.sum() + e.sum() + f.sum() + g.sum()).backward()
print(x.grad)
""",
)
S(
    "red-dim-out-of-range",
    """
import torch
torch.tensor([1.0, 2.0]).prod(1)
""",
)
S(
    "red-sort-topk-no-grad",
    """
import torch
x = torch.tensor([[4, 1, 3], [2, 9, 0]])
print(x.sort(1), x.topk(2, 0), torch.sort(x, descending=True).indices)
with torch.no_grad():
    y = torch.tensor([3.0, 1.0], requires_grad=True).sort()
print(y.values.requires_grad, y.values.grad_fn)
""",
)
S(
    "red-linalg-missing-name",
    """
import torch
torch.linalg.no_such_function
""",
)
S(
    "red-norm-string-errors",
    """
import torch
torch.tensor([[1.0, 2.0]]).norm("abc")
""",
)
S(
    "red-cumsum-then-inplace",
    """
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x.cumprod(0)
y.add_(1)
y.sum().backward()
""",
)
S(
    "red-nan-inf-backwards",
    """
import torch
x = torch.tensor([[0.5, float("nan"), 1.0], [float("inf"), -1.0, 2.0]], requires_grad=True)
w = torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])
ys = [x.prod(1), x.prod(0), x.cumprod(1), x.norm(1, 1), x.norm(float("-inf"), 0)]
for y in ys:
    print(y)
    x.grad = None
    (y * w[: y.shape[0], : y.shape[-1]] if y.dim() == 2 else y).sum().backward()
    print(x.grad)
""",
)
S(
    "red-norm-zero-order-no-grad",
    """
import torch
x = torch.tensor([[1.0, 0.0], [-2.0, 3.0]], requires_grad=True)
n = x.norm(0)
n.backward()
print(n, x.grad)
""",
)
S(
    "red-sort-int-extremes",
    """
import torch
x = torch.tensor([[1, -9223372036854775807 - 1, 0], [2, 9223372036854775807, -1]])
print(x.sort(descending=True), x.topk(2), x.sort(1))
""",
)
S(
    "red-std-large-values",
    """
import torch
x = torch.tensor([[2.5, -1.5], [1e30, 1e-8]], requires_grad=True)
s = x.std(0)
v = x.var(1, correction=0)
print(s, v)
(s.sum() + v.sum()).backward()
print(x.grad)
""",
)
S(
    "red-cumprod-after-zero-signs",
    """
import torch
x = torch.tensor([[0.25, 0.25, -0.5], [0.0, -0.0, 1.0]], requires_grad=True)
y = x.cumprod(1)
(y * torch.tensor([-1.5, -0.5, 0.5])).sum().backward()
print(y, x.grad)
""",
)
