"""Shapes and indexing: splitting and joining, gathers and scatters, masks, batched matmul,
einsum, and in-place writes into views of graph tensors (CopySlices)."""

from __future__ import annotations

from tools.goldens import collect

SNIPPETS: list[dict] = []
S = collect(SNIPPETS)

# ***** splitting: chunk, split, tensor_split, narrow, unbind *****

S(
    "shape-chunk",
    """
import torch
x = torch.arange(12.0).reshape(3, 4).requires_grad_()
y = x * 1
a, b = y.chunk(2, dim=1)
parts = y.chunk(3)
uneven = torch.arange(5.0).chunk(2)
print(a, b, sep="\\n")
print(a._base is y, a._version, len(parts), uneven)
(a * 2 + b.sum()).sum().backward()
print(x.grad)
""",
)
S(
    "shape-chunk-more-than-size",
    """
import torch
parts = torch.arange(3.0).chunk(5)
print(len(parts), parts)
e = torch.zeros(0).chunk(2)
print(len(e), e)
try:
    torch.arange(3.0).chunk(0)
except RuntimeError as err:
    print(err)
""",
)
S(
    "shape-split-int-and-list",
    """
import torch
x = torch.arange(10.0, requires_grad=True)
y = x * 2
s = y.split(3)
t = torch.split(y, [2, 3, 5])
print(s)
print(t)
(s[0].sum() + t[2].sum() * 3).backward()
print(x.grad)
m = torch.arange(12.0).reshape(3, 4)
cols = m.split([1, 3], dim=1)
print(cols)
try:
    y.split([2, 3])
except RuntimeError as err:
    print(err)
""",
)
S(
    "shape-split-views-refuse-inplace",
    """
import torch
x = torch.arange(4.0, requires_grad=True)
y = x * 2
a, b = y.split(2)
a.mul_(2)
""",
)
S(
    "shape-tensor-split",
    """
import torch
x = torch.arange(7.0, requires_grad=True)
y = x + 0
a = y.tensor_split(3)
b = torch.tensor_split(y, [1, 5])
print(a)
print(b)
(a[1].sum() * 2 + b[2].sum()).backward()
print(x.grad)
""",
)
S(
    "shape-narrow",
    """
import torch
x = torch.arange(12.0).reshape(3, 4).requires_grad_()
y = x.narrow(1, 1, 2)
z = torch.narrow(x, 0, -2, 2)
print(y, y._base is x)
print(z)
(y * 3).sum().backward()
print(x.grad)
try:
    x.narrow(1, 3, 2)
except RuntimeError as err:
    print(err)
""",
)
S(
    "shape-unbind-views",
    """
import torch
x = torch.arange(6.0).reshape(2, 3).requires_grad_()
y = x * 1
rows = y.unbind()
cols = torch.unbind(y, dim=1)
print(rows, cols[2], rows[0]._base is y)
(rows[1] * cols[0].sum()).sum().backward()
print(x.grad)
""",
)

# ***** reordering: permute, movedim, swapaxes, flip, roll *****

S(
    "shape-permute-rank3",
    """
import torch
x = torch.arange(24.0).reshape(2, 3, 4).requires_grad_()
p = x.permute(2, 0, 1)
q = torch.permute(x, (1, 2, 0))
r = x.permute(-1, 1, 0)
print(p.shape, q.shape, r.shape, p.is_contiguous(), p._base is x)
print(p[1])
(p * torch.arange(24.0).reshape(4, 2, 3)).sum().backward()
print(x.grad)
try:
    x.permute(0, 1)
except RuntimeError as err:
    print(err)
try:
    x.permute(0, 1, 1)
except RuntimeError as err:
    print(err)
""",
)
S(
    "shape-movedim-swapaxes",
    """
import torch
x = torch.arange(24.0).reshape(2, 3, 4).requires_grad_()
m = x.movedim(0, -1)
n = torch.movedim(x, (0, 1), (2, 0))
s = x.swapaxes(0, 2)
d = torch.swapdims(x, 1, 2)
print(m.shape, n.shape, s.shape, d.shape)
print(m[0])
(m.sum(0) * 2).sum().backward()
print(x.grad[0])
""",
)
S(
    "shape-flip-roll",
    """
import torch
x = torch.arange(6.0).reshape(2, 3).requires_grad_()
f = x.flip(1)
g = torch.flip(x, [0, 1])
r = x.roll(1, 1)
q = torch.roll(x, 2)
w = x.roll((1, -1), (0, 1))
print(f, g, r, q, w, sep="\\n")
(f * torch.tensor([1.0, 2.0, 3.0]) + r * 10).sum().backward()
print(x.grad)
""",
)

S(
    "shape-diagonal",
    """
import torch
x = torch.arange(12.0).reshape(3, 4).requires_grad_()
d = x.diagonal()
up = torch.diagonal(x, 1)
low = x.diagonal(-1)
batch = torch.arange(24.0).reshape(2, 3, 4).diagonal(1, -1, 0)
print(d, up, low, batch, d._base is x._base, sep="\\n")
(d * 2 + up.sum()).sum().backward()
print(x.grad)
z = x * 1
z.diagonal().mul_(10)
print(z)
try:
    x.diagonal(0, 1, 1)
except RuntimeError as err:
    print(err)
""",
)
S(
    "shape-einsum-diagonal-and-trace",
    """
import torch
a = torch.arange(9.0).reshape(3, 3).requires_grad_()
b = torch.arange(18.0).reshape(2, 3, 3).requires_grad_()
diag = torch.einsum("ii->i", a)
trace = torch.einsum("ii", a)
per_batch = torch.einsum("bii->bi", b)
print(diag, trace, per_batch, sep="\\n")
(diag.sum() + trace + (per_batch * per_batch).sum()).backward()
print(a.grad, b.grad, sep="\\n")
try:
    torch.einsum("ii->i", torch.zeros(2, 3))
except RuntimeError as err:
    print(err)
""",
)

# ***** triangles, repeats, expands *****

S(
    "shape-tril-triu",
    """
import torch
x = torch.arange(1.0, 13.0).reshape(3, 4).requires_grad_()
lo = x.tril()
up = torch.triu(x, diagonal=1)
lo2 = x.tril(-1)
print(lo, up, lo2, sep="\\n")
(lo * 2 + up).sum().backward()
print(x.grad)
try:
    torch.tensor([1.0, 2.0]).tril()
except RuntimeError as err:
    print(err)
""",
)
S(
    "shape-repeat",
    """
import torch
x = torch.tensor([[1.0, 2.0]], requires_grad=True)
r = x.repeat(2, 3)
r3 = x.repeat(2, 1, 2)
print(r, r3.shape)
(r * torch.arange(12.0).reshape(2, 6)).sum().backward()
print(x.grad)
try:
    x.repeat(2)
except RuntimeError as err:
    print(err)
""",
)
S(
    "shape-expand-expand-as",
    """
import torch
x = torch.tensor([[1.0], [2.0]], requires_grad=True)
e = x.expand(2, 3)
f = x.expand(4, -1, 3)
g = x.expand_as(torch.zeros(2, 2))
print(e, f.shape, g, e._base is x, e.is_contiguous())
(e * torch.arange(6.0).reshape(2, 3)).sum().backward()
print(x.grad)
""",
)
S(
    "shape-view-as-unflatten",
    """
import torch
x = torch.arange(12.0, requires_grad=True)
v = x.view_as(torch.zeros(3, 4))
u = x.unflatten(0, (2, -1))
w = v.unflatten(1, (2, 2))
print(v.shape, u.shape, w.shape, u._base is x)
(w * 2).sum().backward()
print(x.grad)
try:
    x.unflatten(0, (5, 2))
except RuntimeError as err:
    print(err)
""",
)
S(
    "shape-reshape-alias",
    """
import torch
x = torch.arange(12.0).reshape(3, 4).requires_grad_()
a = x[:, :2].reshape(3, 2, 1)
b = x.t().reshape(12)
c = x.reshape(4, 3)
print(a.grad_fn.name(), b.grad_fn.name(), c.grad_fn.name(), a._base is x)
(a.sum() + b[0]).backward()
print(x.grad)
""",
)

# ***** joining: stack, cat, hstack, vstack *****

S(
    "shape-hstack-vstack",
    """
import torch
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, 4.0, 5.0], requires_grad=True)
h = torch.hstack([a, b])
v = torch.vstack([a, a * 2])
m = torch.ones(2, 2, requires_grad=True)
hm = torch.hstack((m, m * 3))
vm = torch.vstack((m, torch.zeros(1, 2)))
print(h, v, hm, vm, sep="\\n")
(h.sum() + v[1].sum() + hm.sum() + vm.sum()).backward()
print(a.grad, b.grad, m.grad)
""",
)
S(
    "shape-stack-cat-dims",
    """
import torch
a = torch.arange(6.0).reshape(2, 3).requires_grad_()
s = torch.stack([a, a * 2], dim=-1)
c = torch.cat([a, a], dim=1)
print(s.shape, c.shape)
print(s[..., 1])
(s[:, :, 1].sum() + c.sum()).backward()
print(a.grad)
""",
)

# ***** gathers and scatters *****

S(
    "shape-gather",
    """
import torch
x = torch.arange(12.0).reshape(3, 4).requires_grad_()
idx = torch.tensor([[0, 0], [3, 1], [2, 2]])
g = x.gather(1, idx)
h = torch.gather(x, 0, torch.tensor([[2, 1, 0, 0]]))
print(g, h, sep="\\n")
(g * 2).sum().backward()
h.sum().backward()
print(x.grad)
try:
    x.gather(1, torch.tensor([[4]]))
except RuntimeError as err:
    print(err)
try:
    x.gather(1, torch.tensor([[0.0]]))
except RuntimeError as err:
    print(err)
""",
)
S(
    "shape-scatter",
    """
import torch
x = torch.zeros(3, 4, requires_grad=True)
src = torch.arange(1.0, 7.0).reshape(3, 2).requires_grad_()
idx = torch.tensor([[0, 1], [2, 3], [1, 0]])
y = x * 1
s = y.scatter(1, idx, src)
v = torch.scatter(y, 0, torch.tensor([[2, 0, 1, 0]]), 9.0)
print(s, v, sep="\\n")
(s * torch.arange(12.0).reshape(3, 4)).sum().backward()
print(x.grad)
print(src.grad)
""",
)
S(
    "shape-scatter-add",
    """
import torch
x = torch.ones(2, 3, requires_grad=True)
src = torch.arange(1.0, 5.0).reshape(2, 2).requires_grad_()
idx = torch.tensor([[0, 0], [2, 1]])
s = (x * 1).scatter_add(1, idx, src)
t = torch.scatter_add(x, 0, torch.tensor([[1, 1, 0]]), torch.ones(1, 3))
print(s, t, sep="\\n")
(s * torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
print(x.grad)
print(src.grad)
""",
)
S(
    "shape-scatter-inplace",
    """
import torch
z = torch.zeros(2, 4)
z.scatter_(1, torch.tensor([[1, 3], [0, 0]]), torch.tensor([[5.0, 6.0], [7.0, 8.0]]))
print(z, z._version)
z.scatter_add_(1, torch.tensor([[0, 0]]), torch.tensor([[1.0, 1.0]]))
print(z, z._version)
w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = w * 2
y.scatter_(0, torch.tensor([1]), 0.0)
print(y, y._version)
y.scatter_add_(0, torch.tensor([0, 0]), w[:2] * 1)
print(y)
y.sum().backward()
print(w.grad)
""",
)
S(
    "shape-index-select",
    """
import torch
x = torch.arange(12.0).reshape(3, 4).requires_grad_()
a = x.index_select(1, torch.tensor([3, 0, 3]))
b = torch.index_select(x, 0, torch.tensor([2]))
print(a, b, sep="\\n")
(a.sum() + b.sum() * 10).backward()
print(x.grad)
try:
    x.index_select(0, torch.tensor([[0]]))
except (RuntimeError, IndexError) as err:
    print(type(err).__name__, err)
""",
)

# ***** masks *****

S(
    "shape-masked-fill",
    """
import torch
x = torch.arange(6.0).reshape(2, 3).requires_grad_()
mask = x > 2
a = x.masked_fill(mask, -1.0)
b = torch.masked_fill(x, torch.tensor([True, False, True]), torch.tensor(5.0))
print(a, b, sep="\\n")
(a * 3 + b).sum().backward()
print(x.grad)
c = x * 1
c.masked_fill_(mask, 0.0)
print(c, c._version)
try:
    x.masked_fill(torch.tensor([1, 0, 1]), 0.0)
except RuntimeError as err:
    print(err)
""",
)
S(
    "shape-masked-fill-scores",
    """
import torch
scores = torch.tensor([[0.5, 1.0, 2.0], [1.5, -1.0, 0.0]], requires_grad=True)
causal = torch.ones(3, 3).tril()[:2] == 0
masked = scores.masked_fill(causal, float("-inf"))
weights = masked.softmax(dim=-1)
print(masked)
print(weights)
(weights[:, 0]).sum().backward()
print(scores.grad)
""",
)
S(
    "shape-masked-select",
    """
import torch
x = torch.arange(6.0).reshape(2, 3).requires_grad_()
picked = x.masked_select(x > 1.5)
row = torch.masked_select(x, torch.tensor([True, False, True]))
print(picked, row)
(picked * torch.arange(4.0)).sum().backward()
row.sum().backward()
print(x.grad)
""",
)

# ***** in-place writes into views of graph tensors: CopySlices *****

S(
    "shape-setitem-copyslices",
    """
import torch
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
y = x * 2
y[0] = 5.0
print(y, y._version)
print(y.grad_fn.name(), y.grad_fn.next_functions[0][0].name())
y.sum().backward()
print(x.grad)
""",
)
S(
    "shape-setitem-tensor-value",
    """
import torch
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
t = torch.tensor(3.0, requires_grad=True)
r = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
z = x * 1
z[0, 1] = t
z[1] = r * 2
(z * torch.arange(6.0).reshape(2, 3)).sum().backward()
print(z)
print(x.grad, t.grad, r.grad)
""",
)
S(
    "shape-setitem-augmented-slice",
    """
import torch
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
y = x * 2
y[:, 1] += torch.tensor([1.0, 1.0])
y[1:, :2] *= 3
print(y, y._version)
(y ** 2).sum().backward()
print(x.grad)
""",
)
S(
    "shape-setitem-broadcast-and-whole",
    """
import torch
x = torch.ones(2, 3, requires_grad=True)
r = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
m = x * 1
m[:] = r
a = x * 1
a[...] = 2.0
b = x * 1
b[0] = torch.tensor([[7.0, 8.0, 9.0]], requires_grad=True)
print(m, a, b, sep="\\n")
(m.sum() + a.sum() + b.sum()).backward()
print(x.grad, r.grad)
""",
)
S(
    "shape-setitem-index-put",
    """
import torch
x = torch.arange(6.0, requires_grad=True)
t = torch.tensor(9.0, requires_grad=True)
y = x * 1
y[[0, 2]] = 1.0
z = x * 1
z[z > 3] = t
w = x * 1
w[torch.tensor([1, 3])] = torch.tensor([10.0, 20.0], requires_grad=True)
print(y, z, w, sep="\\n")
(y.sum() + z.sum() + w.sum()).backward()
print(x.grad, t.grad)
""",
)
S(
    "shape-setitem-index-put-after-view",
    """
import torch
x = torch.arange(12.0, requires_grad=True)
t = torch.tensor([7.0, 8.0], requires_grad=True)
z = x.reshape(3, 4) * 1
z[0, [1, 2]] = t
w = x.reshape(3, 4) * 1
w[1:, [0, 3]] = 0.5
m = x.reshape(3, 4) * 1
m[None, 1, torch.tensor([True, False, True, False])] = t
print(z, w, m, sep="\\n")
(z.sum() + (w * w).sum() + (m * 2).sum()).backward()
print(x.grad, t.grad)
""",
)
S(
    "shape-setitem-into-plain-tensor",
    """
import torch
t = torch.tensor(3.0, requires_grad=True)
x = torch.tensor([1.0, 2.0], requires_grad=True)
p = torch.zeros(3)
p[1] = t
q = torch.zeros(4)
q[0:2] = x * 10
print(p, q, p.is_leaf, q.requires_grad)
(p.sum() + q.sum()).backward()
print(t.grad, x.grad)
""",
)
S(
    "shape-inplace-on-view-rebases",
    """
import torch
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
b = x * 2
v = b[0]
v.mul_(2)
print(v, b, sep="\\n")
print(v._version, b._version, v._base is b)
b.sum().backward()
print(x.grad)
""",
)
S(
    "shape-inplace-on-flat-view",
    """
import torch
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
c = x * 2
w = c.view(-1)[0]
w.mul_(2)
c.t()[1].add_(torch.tensor([10.0, 20.0]))
print(c)
(c * c).sum().backward()
print(x.grad)
""",
)
S(
    "shape-inplace-view-then-use-view",
    """
import torch
x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
d = x * 2
f = d[1:]
f.exp_()
g = f * 3
g.sum().backward()
print(d, g, sep="\\n")
print(x.grad)
""",
)
S(
    "shape-inplace-other-views-see-it",
    """
import torch
x = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], requires_grad=True)
d = x * 2
e = d[1:4]
f = e[1:]
f.mul_(10)
b = x * 2
v = b[1:3]
b.mul_(3)
(e.sum() + v.sum()).backward()
print(e, v, sep="\\n")
print(x.grad)
""",
    skip=("e.repr", "e.grad_fn", "e.next_functions", "v.repr", "v.grad_fn", "v.next_functions"),
    why="a view other than the one written keeps its old grad_fn until the lead makes "
    "Tensor.grad_fn call record.refresh_view (its gradients are already right)",
)
S(
    "shape-multi-output-views-after-base-change",
    """
import torch
x = torch.arange(4.0, requires_grad=True)
y = x * 2
_a, _b = y.split(2)  # underscored: reading their grad_fn now raises, so they are not probed
y.mul_(2)
try:
    (_a * 1).sum().backward()
except RuntimeError as err:
    print(err)
z = x * 2
_rows = z.unbind()
_rows[1].detach().zero_()
print(z, _rows[1].detach(), _rows[1]._version)
z.add_(1)
try:
    (_rows[0] * 1).backward()
except RuntimeError as err:
    print(err)
""",
)
S(
    "shape-inplace-view-errors",
    """
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
for attempt in (lambda: x.view(-1)[0].mul_(2), lambda: x[0].add_(1)):
    try:
        attempt()
    except RuntimeError as err:
        print(err)
try:
    x[0] = 5.0
except RuntimeError as err:
    print(err)
try:
    x[[0]] = 5.0
except RuntimeError as err:
    print(err)
y = x * 1
with torch.no_grad():
    v = y[0]
try:
    v.mul_(2)
except RuntimeError as err:
    print(err)
with torch.no_grad():
    x[0] = 10.0
print(x)
""",
    skip=("v.repr", "v.requires_grad"),
    why="PyTorch's view made under no_grad of a tensor that requires grad requires grad itself "
    "(with no grad_fn); the engine's apply() gives it requires_grad=False",
)
S(
    "shape-inplace-view-saved-value-check",
    """
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 1
e = y.exp()
y[0] = 0.0
z = (y * e).sum()
z.backward()
print(x.grad)
s = x.sigmoid()
s[1:].mul_(2)
s.sum().backward()
""",
)

# ***** batched matmul, bmm, outer *****

S(
    "shape-matmul-batch-by-matrix",
    """
import torch
torch.manual_seed(0)
a = torch.randn(2, 3, 4, requires_grad=True)
w = torch.randn(4, 5, requires_grad=True)
y = a @ w
v = torch.matmul(a, torch.tensor([1.0, 0.0, -1.0, 2.0]))
print(y.shape, v.shape, y.grad_fn.name(), y.grad_fn.next_functions[0][0].name())
(y.sum() + v.sum()).backward()
print(a.grad)
print(w.grad)
""",
)
S(
    "shape-matmul-batch-by-batch",
    """
import torch
torch.manual_seed(0)
a = torch.randn(2, 3, 4, requires_grad=True)
b = torch.randn(2, 4, 2, requires_grad=True)
c = a @ b
print(c)
bm = torch.bmm(a, b)
print(torch.equal(c, bm), bm.grad_fn.name())
(c * torch.arange(12.0).reshape(2, 3, 2)).sum().backward()
print(a.grad)
print(b.grad)
""",
)
S(
    "shape-matmul-broadcast-batches",
    """
import torch
torch.manual_seed(0)
a = (torch.arange(24.0).reshape(2, 1, 3, 4) - 11).div(4).requires_grad_()
b = (torch.arange(40.0).reshape(5, 4, 2) % 7 - 3).requires_grad_()
c = a @ b
print(c.shape)
d = torch.randn(1, 3, 4, requires_grad=True) @ torch.randn(2, 4, 5, requires_grad=True)
e = torch.randn(2, 3, 4, requires_grad=True) @ torch.randn(1, 4, 5, requires_grad=True)
f = torch.randn(1, 1, 3, 4, requires_grad=True) @ b.detach()
c.sum().backward()
(d.sum() + e.sum() + f.sum()).backward()
print(a.grad.sum(dim=(2, 3)), b.grad.sum(dim=0))
""",
)
S(
    "shape-matmul-matrix-by-batch",
    """
import torch
torch.manual_seed(0)
m = torch.randn(3, 4, requires_grad=True)
b = torch.randn(2, 4, 5, requires_grad=True)
r = m @ b
u = torch.randn(4, requires_grad=True) @ b
print(r.shape, u.shape, r.is_contiguous())
(r.sum() + (u * u).sum()).backward()
print(m.grad)
print(b.grad[1])
""",
)
S(
    "shape-matmul-nograd-operands",
    """
import torch
torch.manual_seed(0)
m = torch.randn(3, 4)
b = torch.randn(2, 4, 5, requires_grad=True)
r = m @ b
t = torch.randn(4, 3, 2).transpose(0, 1).requires_grad_()
s = t @ torch.randn(2)
q = t @ torch.randn(2, 5)
(r.sum() + s.sum() + q.sum()).backward()
print(r.shape, s.shape, q.shape)
print(b.grad[0], t.grad[0])
""",
)
S(
    "shape-matmul-errors",
    """
import torch
pairs = [((2, 3, 4), (2, 3, 5)), ((2, 3, 4), (3, 4, 5)), ((2, 3, 4), (3, 5)), ((2, 3, 4), (3,))]
for a, b in pairs + [((1, 3, 4), (2, 3, 5))]:
    try:
        torch.zeros(*a) @ torch.zeros(*b)
    except RuntimeError as err:
        print(err)
for a, b in [((3, 4), (4, 5)), ((2, 3, 4), (2, 3, 5))]:
    try:
        torch.bmm(torch.zeros(*a), torch.zeros(*b))
    except RuntimeError as err:
        print(err)
try:
    torch.bmm(torch.zeros(2, 3, 4), torch.zeros(2, 4, 5, dtype=torch.float64))
except RuntimeError as err:
    print(err)
""",
)
S(
    "shape-matmul-attention",
    """
import torch
torch.manual_seed(0)
q = torch.randn(2, 3, 4, requires_grad=True)
k = torch.randn(2, 3, 4, requires_grad=True)
v = torch.randn(2, 3, 4, requires_grad=True)
scores = q @ k.transpose(-2, -1) / 2.0
weights = scores.softmax(dim=-1)
out = weights @ v
out.sum().backward()
print(out)
print(q.grad)
print(k.grad)
print(v.grad)
""",
)
S(
    "shape-outer",
    """
import torch
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = torch.tensor([4.0, 5.0], requires_grad=True)
o = torch.outer(a, b)
p = a.outer(b)
print(o, p.grad_fn.name())
(o * torch.arange(6.0).reshape(3, 2)).sum().backward()
print(a.grad, b.grad)
try:
    torch.outer(torch.zeros(2, 2), b)
except RuntimeError as err:
    print(err)
""",
)

# ***** einsum *****

S(
    "shape-einsum-matrix-products",
    """
import torch
a = (torch.arange(6.0).reshape(2, 3) - 2).requires_grad_()
b = (torch.arange(12.0).reshape(3, 4) / 4).requires_grad_()
v = torch.tensor([1.0, -1.0, 2.0], requires_grad=True)
mm = torch.einsum("ij,jk->ik", a, b)
mv = torch.einsum("ij,j->i", a, v)
implicit = torch.einsum("ij,jk", a, b)
listed = torch.einsum("ij,jk->ik", [a, b])
print(mm, mv, torch.equal(mm, implicit), torch.equal(mm, listed), sep="\\n")
print(mm.grad_fn.name(), mv.grad_fn.next_functions[0][0].name())
(mm * torch.arange(8.0).reshape(2, 4)).sum().backward()
mv.sum().backward()
print(a.grad, b.grad, v.grad, sep="\\n")
""",
)
S(
    "shape-einsum-batched-and-vectors",
    """
import torch
p = (torch.arange(12.0).reshape(2, 2, 3) - 5).requires_grad_()
q = (torch.arange(24.0).reshape(2, 3, 4) % 5).requires_grad_()
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = torch.tensor([4.0, -5.0], requires_grad=True)
bmm = torch.einsum("bij,bjk->bik", p, q)
dot = torch.einsum("i,i->", x, x)
outer = torch.einsum("i,j->ij", x, y)
print(bmm, dot, outer, sep="\\n")
print(dot.shape, outer.grad_fn.name())
(bmm.sum() + dot + (outer * outer).sum()).backward()
print(p.grad, q.grad, x.grad, y.grad, sep="\\n")
""",
)
S(
    "shape-einsum-swapped-sides-and-heads",
    """
import torch
a = (torch.arange(6.0).reshape(2, 3) - 2).requires_grad_()
b = (torch.arange(12.0).reshape(3, 4) % 5).requires_grad_()
ki = torch.einsum("ij,jk->ki", a, b)
q = (torch.arange(48.0).reshape(2, 2, 3, 4) % 7 - 3).requires_grad_()
k = (torch.arange(80.0).reshape(2, 2, 5, 4) % 5 - 2).requires_grad_()
scores = torch.einsum("bhqd,bhkd->bhqk", q, k)
print(ki, scores.shape, scores[1, 0], sep="\\n")
print(ki.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0].name())
(ki * ki).sum().backward()
scores.softmax(-1)[..., 0].sum().backward()
print(a.grad, b.grad, q.grad[0, 1], k.grad[1, 1], sep="\\n")
""",
)
S(
    "shape-einsum-ellipsis",
    """
import torch
x = (torch.arange(24.0).reshape(2, 3, 4) % 5 - 2).requires_grad_()
y = (torch.arange(40.0).reshape(2, 4, 5) % 3 - 1).requires_grad_()
m = torch.einsum("...ij,...jk->...ik", x, y)
d = torch.einsum("...i,...i->...", torch.ones(2, 1, 3), torch.arange(12.0).reshape(1, 4, 3))
t = torch.einsum("...ij->...ji", x)
s = torch.einsum("...ij,...jk->ik", x, y)
print(m.shape, d, t.shape, s, sep="\\n")
(m.sum() + s.sum() + (t * t).sum()).backward()
print(x.grad[1], y.grad[0], sep="\\n")
for bad in ["...ij,jk.->ik", "......ij,jk->ik"]:
    try:
        torch.einsum(bad, x, y)
    except RuntimeError as err:
        print(err)
""",
)
S(
    "shape-einsum-three-operands",
    """
import torch
a = (torch.arange(6.0).reshape(2, 3) - 2).requires_grad_()
b = (torch.arange(12.0).reshape(3, 4) % 3).requires_grad_()
c = (torch.arange(20.0).reshape(4, 5) % 4 - 1).requires_grad_()
chain = torch.einsum("ij,jk,kl->il", a, b, c)
trace = torch.einsum("ab,bc,ca->", a, b, c[:, :2])
print(chain, trace, sep="\\n")
(chain.sum() + trace).backward()
print(a.grad, b.grad, c.grad, sep="\\n")
""",
)
S(
    "shape-einsum-one-operand",
    """
import torch
a = torch.arange(6.0).reshape(2, 3).requires_grad_()
t = torch.einsum("ij->ji", a)
s = torch.einsum("ij->", a)
c = torch.einsum("ij->j", a)
print(t, s, c, t._base is a, sep="\\n")
(t * torch.arange(6.0).reshape(3, 2)).sum().backward()
(s + c.sum()).backward()
print(a.grad)
""",
)
S(
    "shape-einsum-errors",
    """
import torch
a, b = torch.zeros(2, 3), torch.zeros(4, 4)
for args in [("ij,jk->ik", a, b), ("ij,jk->ik", a), ("ij->ik", a), ("ijk->i", a), ("ij->ii", a)]:
    try:
        torch.einsum(*args)
    except RuntimeError as err:
        print(err)
""",
)
