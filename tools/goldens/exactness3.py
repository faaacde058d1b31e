"""Exactness, continued (issue 22): matrix products as PyTorch's two threads split them, and
layer_norm and batch_norm to the last bit.

Training loops whose every step goes through the fixed kernels: an MLP whose layers have fewer
outputs than inputs (MKL splits their weight gradients between threads), makemore's MLP with
BatchNorm1d, a LayerNorm network; and the kernels on their own. Each prints full-precision values
(repr) so a one-ulp difference anywhere fails the golden.
"""

from __future__ import annotations

from tools.goldens import collect

SNIPPETS: list[dict] = []
S = collect(SNIPPETS)

# ***** matrix products *****

S(
    "exactness3-matmul-thread-split",
    """
import torch
torch.manual_seed(0)
A = torch.randn(10, 32)
B = torch.randn(32, 64)
print(repr((A @ B)[8, 0].item()))
print(repr((A @ B).sum().item()), repr((A @ B.t().contiguous().t()).sum().item()))
for m in (5, 6, 7, 9, 11):
    a, b = torch.randn(m, 40), torch.randn(40, 20)
    print(m, [repr(v) for v in (a @ b)[-1, :3].tolist()], repr(torch.mm(a, b).sum().item()))
x = torch.randn(1, 6, 27)
print(repr(torch.bmm(x, torch.randn(1, 27, 18)).sum().item()))
print(repr((x @ torch.randn(27, 18)).sum().item()))
v = torch.randn(10000)
print(repr(torch.dot(v, torch.randn(10000)).item()))
""",
)

S(
    "exactness3-linear-fewer-outputs",
    """
import torch
import torch.nn as nn

torch.manual_seed(0)
X = torch.randn(64, 40)
y = torch.randint(0, 10, (64,))
model = nn.Sequential(nn.Linear(40, 24), nn.ReLU(), nn.Linear(24, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for step in range(200):
    batch = torch.randint(0, 64, (10,))
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(X[batch]), y[batch])
    loss.backward()
    opt.step()
    if step % 20 == 19:
        print(step, repr(loss.item()))
print(repr(model[2].weight.sum().item()), repr(model[0].weight.grad.sum().item()))
""",
    long=True,
)

# ***** layer_norm and batch_norm *****

S(
    "exactness3-makemore-batchnorm",
    """
import torch
import torch.nn.functional as F

g = torch.Generator().manual_seed(2147483647)
words = ["emma", "olivia", "ava", "isabella", "sophia", "charlotte", "mia", "amelia", "harper"]
chars = sorted(set("".join(words)))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi["."] = 0
X, Y = [], []
for w in words:
    context = [0] * 3
    for ch in w + ".":
        X.append(context)
        Y.append(stoi[ch])
        context = context[1:] + [stoi[ch]]
X, Y = torch.tensor(X), torch.tensor(Y)
vocab = len(stoi)
C = torch.randn((vocab, 10), generator=g)
W1 = torch.randn((30, 100), generator=g) * (5 / 3) / 30**0.5
W2 = torch.randn((100, vocab), generator=g) * 0.01
b2 = torch.randn(vocab, generator=g) * 0
bngain, bnbias = torch.ones(100), torch.zeros(100)
bnmean_running, bnvar_running = torch.zeros(100), torch.ones(100)
parameters = [C, W1, W2, b2, bngain, bnbias]
for p in parameters:
    p.requires_grad = True
for i in range(200):
    ix = torch.randint(0, X.shape[0], (32,), generator=g)
    emb = C[X[ix]]
    hpreact = emb.view(emb.shape[0], -1) @ W1
    hpreact = F.batch_norm(
        hpreact, bnmean_running, bnvar_running, bngain, bnbias, training=True, momentum=0.001
    )
    h = torch.tanh(hpreact)
    loss = F.cross_entropy(h @ W2 + b2, Y[ix])
    for p in parameters:
        p.grad = None
    loss.backward()
    for p in parameters:
        p.data += -0.1 * p.grad
    if i % 20 == 19:
        print(i, repr(loss.item()))
print(repr(bnmean_running.sum().item()), repr(bnvar_running.sum().item()))
with torch.no_grad():
    h = torch.tanh(F.batch_norm(C[X].view(len(X), -1) @ W1, bnmean_running, bnvar_running,
                                bngain, bnbias))
    print(repr(F.cross_entropy(h @ W2 + b2, Y).item()))
""",
    long=True,
)

S(
    "exactness3-batchnorm1d-mlp",
    """
import torch
import torch.nn as nn

torch.manual_seed(0)
X = torch.randn(200, 12)
y = torch.randint(0, 5, (200,))
model = nn.Sequential(
    nn.Linear(12, 64, bias=False), nn.BatchNorm1d(64), nn.Tanh(), nn.Linear(64, 5)
)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(200):
    ix = torch.randint(0, 200, (32,))
    loss = nn.functional.cross_entropy(model(X[ix]), y[ix])
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 20 == 19:
        print(step, repr(loss.item()))
bn = model[1]
print(repr(bn.running_mean.sum().item()), repr(bn.running_var.sum().item()))
print(repr(bn.weight.grad.sum().item()), repr(bn.bias.grad.sum().item()))
model.eval()
with torch.no_grad():
    print(repr(nn.functional.cross_entropy(model(X), y).item()))
""",
    long=True,
)

S(
    "exactness3-layernorm-model",
    """
import torch
import torch.nn as nn

torch.manual_seed(0)
X = torch.randn(64, 20) * 2 + 1
y = torch.randn(64, 1)
model = nn.Sequential(nn.Linear(20, 48), nn.LayerNorm(48), nn.ReLU(), nn.Linear(48, 1))
opt = torch.optim.Adam(model.parameters(), lr=0.01)
for step in range(200):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(X), y)
    loss.backward()
    opt.step()
    if step % 20 == 19:
        print(step, repr(loss.item()))
ln = model[1]
print(repr(ln.weight.sum().item()), repr(ln.bias.sum().item()))
print(repr(ln.weight.grad.sum().item()), repr(ln.bias.grad.sum().item()))
""",
    long=True,
)

S(
    "exactness3-layer-norm-forms",
    """
import torch
import torch.nn.functional as F

torch.manual_seed(0)
for shape in ((4, 5), (3, 37), (2, 300), (2, 3, 4, 10)):
    x = (torch.randn(*shape) * 3 - 2).requires_grad_()
    normalized = shape[-1:] if len(shape) < 4 else shape[-2:]
    w = (torch.randn(*normalized) * 0.5 + 1).requires_grad_()
    b = torch.randn(*normalized).requires_grad_()
    for weight, bias in ((w, b), (None, None), (w, None), (None, b)):
        y = F.layer_norm(x, normalized, weight, bias)
        y.backward(torch.randn(*shape))
        print(shape, repr(y.sum().item()), repr(y.flatten()[-1].item()), repr(x.grad.sum().item()))
        x.grad = None
    print(repr(w.grad.sum().item()), repr(b.grad.sum().item()))
ln = torch.nn.LayerNorm(37, bias=False)
out = ln(torch.randn(6, 37))
print(repr(out.sum().item()), [repr(v) for v in out[0, :3].tolist()])
""",
)

S(
    "exactness3-batch-norm-forms",
    """
import torch
import torch.nn as nn

torch.manual_seed(0)
for shape in ((32, 13), (2, 20), (2, 5), (8, 3, 16), (4, 5, 1)):
    bn = nn.BatchNorm1d(shape[1])
    x = (torch.randn(*shape) * 2 + 1).requires_grad_()
    y = bn(x)
    y.backward(torch.randn(*shape))
    print(shape, repr(y.sum().item()), repr(x.grad.sum().item()))
    print(repr(bn.weight.grad.sum().item()), repr(bn.bias.grad.sum().item()))
    print(repr(bn.running_mean.sum().item()), repr(bn.running_var.sum().item()))
    bn.eval()
    z = torch.randn(*shape, requires_grad=True)
    out = bn(z)
    out.backward(torch.randn(*shape))
    print(repr(out.sum().item()), repr(z.grad.sum().item()))
bn = nn.BatchNorm1d(7, affine=False, momentum=None)
for _ in range(3):
    bn(torch.randn(16, 7))
print(bn.num_batches_tracked, repr(bn.running_var.sum().item()))
""",
)

# ***** norms, atan2 *****

S(
    "exactness3-norms",
    """
import torch
import torch.nn.functional as F

torch.manual_seed(0)
x = (torch.randn(6, 37) * 2).requires_grad_()
for p in (2, 1, 3, float("inf")):
    for dim in (1, 0):
        n = x.norm(p=p, dim=dim)
        n.backward(torch.randn(*n.shape))
        print(p, dim, repr(n.sum().item()), repr(n[-1].item()), repr(x.grad.sum().item()))
        x.grad = None
print(repr(x.norm().item()), repr(torch.linalg.vector_norm(x, 2, (0, 1)).item()))
print(torch.equal(x[:1].norm(p=3, dim=0), x[:1].abs()[0]))
y = F.normalize(x, dim=1)
z = F.cosine_similarity(x, torch.randn(6, 37), dim=1)
(y.sum() + z.sum()).backward()
print([repr(v) for v in z.tolist()], repr(y.sum().item()), repr(x.grad.sum().item()))
w = torch.randn(40000)
print(repr(w.norm().item()), repr(w.norm(p=1).item()))
""",
)

S(
    "exactness3-atan2",
    """
import torch

torch.manual_seed(0)
y = torch.randn(37, requires_grad=True)
x = (torch.randn(37) * 3).requires_grad_()
angle = torch.atan2(y, x)
angle.backward(torch.randn(37))
print([repr(v) for v in angle[:4].tolist()], repr(angle.sum().item()))
print(repr(y.grad.sum().item()), repr(x.grad.sum().item()))
edges = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), 1.0, -1.0])
print(torch.atan2(edges[:, None], edges[None, :]))
print(torch.atan2(torch.tensor(float("nan")), torch.tensor(1.0)))
""",
)

# ***** small edge cases *****

S(
    "exactness3-bool-alpha-and-inplace-casts",
    """
import torch

a = torch.tensor([True, False, True])
b = torch.tensor([True, True, False])
print(torch.add(a, b, alpha=2), a.add(b, alpha=0), a.add(b, alpha=True))
c = a.clone()
c.add_(b, alpha=3)
print(c)
for t, bounds in (
    (torch.tensor([1, 2, 3]), {"max": 2.5}),
    (torch.tensor([1, 2], dtype=torch.int8), {"min": 0.5}),
    (torch.tensor([True, False]), {"max": 1}),
    (torch.tensor([1, 2]), {"min": torch.tensor(0.5)}),
    (torch.tensor([1, 2]), {}),
):
    try:
        t.clamp_(**bounds)
    except RuntimeError as err:
        print("RuntimeError:", err)
print(torch.tensor([1, 2, 3]).clamp(max=2.5), torch.tensor([1, 5]).clamp_(1, 2))
t, o = torch.randn(3), torch.empty(3)
for name in ("mul", "add", "sub", "matmul"):
    try:
        getattr(t, name)(t, out=o)
    except TypeError as err:
        print("TypeError:", err)
""",
)
