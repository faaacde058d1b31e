"""Exactness, continued (issue 22): sigmoid, the activations and their losses to PyTorch's bits.

Logistic regression on BCEWithLogitsLoss and on Sigmoid + BCELoss, makemore's tanh MLP, small
networks on each activation, every activation (and sinh, cosh, expm1, log1p, tensor ** tensor)
on sizes around the 16-element vector pairs PyTorch's kernels take, and binary cross-entropy's
options. Each prints full-precision values (repr, float64 sums) so a one-ulp difference
anywhere fails the golden.
"""

from __future__ import annotations

from tools.goldens import collect

SNIPPETS: list[dict] = []
S = collect(SNIPPETS)

_LOGISTIC = """
import torch
import torch.nn as nn

torch.manual_seed(0)
X = torch.randn(200, 5)
true_w = torch.randn(5)
y = (X @ true_w + 0.3 * torch.randn(200) > 0).float()
{model}
opt = torch.optim.SGD(model.parameters(), lr=0.5)
for step in range(300):
    opt.zero_grad()
    loss = loss_fn({prediction}, {target})
    loss.backward()
    opt.step()
    if step % 20 == 19:
        print(step, repr(loss.item()))
print([repr(v) for v in model[0].weight[0].tolist()], repr(model[0].bias.item()))
"""

S(
    "exactness2-logistic-bce-with-logits",
    _LOGISTIC.replace("{model}", "model = nn.Sequential(nn.Linear(5, 1))")
    .replace("{prediction}", "model(X).squeeze(1)")
    .replace("{target}", "y")
    .replace("opt = ", "loss_fn = nn.BCEWithLogitsLoss()\nopt = "),
    long=True,
)
S(
    "exactness2-logistic-sigmoid-bce",
    _LOGISTIC.replace("{model}", "model = nn.Sequential(nn.Linear(5, 1), nn.Sigmoid())")
    .replace("{prediction}", "model(X)")
    .replace("{target}", "y.unsqueeze(1)")
    .replace("opt = ", "loss_fn = nn.BCELoss()\nopt = "),
    long=True,
)

# makemore part 2/3's MLP on random data of its sizes (no names dataset): tanh everywhere
S(
    "exactness2-makemore-tanh-mlp",
    """
import torch
import torch.nn.functional as F

g = torch.Generator().manual_seed(2147483647)
vocab_size, block_size, n_embd, n_hidden = 27, 3, 10, 200
Xtr = torch.randint(0, vocab_size, (1000, block_size), generator=g)
Ytr = torch.randint(0, vocab_size, (1000,), generator=g)
C = torch.randn((vocab_size, n_embd), generator=g)
W1 = torch.randn((n_embd * block_size, n_hidden), generator=g) * (5/3) / (n_embd * block_size)**0.5
b1 = torch.randn(n_hidden, generator=g) * 0.01
W2 = torch.randn((n_hidden, vocab_size), generator=g) * 0.01
b2 = torch.randn(vocab_size, generator=g) * 0
parameters = [C, W1, b1, W2, b2]
for p in parameters:
    p.requires_grad = True
lossi = []
for i in range(100):
    ix = torch.randint(0, Xtr.shape[0], (32,), generator=g)
    Xb, Yb = Xtr[ix], Ytr[ix]
    emb = C[Xb]
    hpreact = emb.view(emb.shape[0], -1) @ W1 + b1
    h = torch.tanh(hpreact)
    logits = h @ W2 + b2
    loss = F.cross_entropy(logits, Yb)
    for p in parameters:
        p.grad = None
    loss.backward()
    lr = 0.1 if i < 50 else 0.01
    for p in parameters:
        p.data += -lr * p.grad
    lossi.append(loss.log10().item())
    if i % 10 == 9:
        print(i, repr(loss.item()))
print(repr(sum(lossi)), repr(h.double().abs().sum().item()))
print([repr(p.double().sum().item()) for p in parameters])
""",
    long=True,
)

_NETWORK = """
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
x = torch.randn(64, 4)
y = torch.randint(0, 3, (64,))
for name, activation in [
    ("GELU", nn.GELU()),
    ("GELU tanh", nn.GELU(approximate="tanh")),
    ("SiLU", nn.SiLU()),
    ("Softplus", nn.Softplus()),
    ("Softplus beta 2", nn.Softplus(beta=2.0, threshold=5.0)),
    ("ELU", nn.ELU()),
    ("SELU", nn.SELU()),
    ("CELU", nn.CELU(alpha=1.5)),
    ("Mish", nn.Mish()),
    ("Sigmoid", nn.Sigmoid()),
    ("LogSigmoid", nn.LogSigmoid()),
    ("Tanh", nn.Tanh()),
]:
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(4, 32), activation, nn.Linear(32, 3))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    for step in range(100):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    print(f"{name:16s}", repr(loss.item()), repr(model[0].weight.double().sum().item()))
"""
S("exactness2-activation-networks", _NETWORK, long=True)

S(
    "exactness2-activations-by-size",
    """
import torch
import torch.nn.functional as F

functions = {
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "exp": torch.exp,
    "silu": F.silu,
    "softplus": F.softplus,
    "softplus beta": lambda t: F.softplus(t, beta=0.5, threshold=4),
    "gelu": F.gelu,
    "gelu tanh": lambda t: F.gelu(t, approximate="tanh"),
    "elu": F.elu,
    "selu": F.selu,
    "celu": lambda t: F.celu(t, alpha=2.0),
    "mish": F.mish,
    "logsigmoid": F.logsigmoid,
    "sinh": torch.sinh,
    "cosh": torch.cosh,
    "expm1": torch.expm1,
    "log1p": lambda t: torch.log1p(t.abs() - 0.5),
    "glu": lambda t: F.glu(torch.cat([t, t.flip(-1)], dim=-1), dim=-1),
}
for name, f in functions.items():
    sums = []
    for shape in [(1,), (7,), (16,), (17,), (34,), (100,), (8, 40)]:
        torch.manual_seed(len(sums))
        x = (torch.randn(*shape) * 3).requires_grad_()
        y = f(x)
        (y * torch.linspace(-1, 1, y.numel()).reshape(y.shape)).sum().backward()
        sums.append(y.double().sum().item() + x.grad.double().abs().sum().item())
    print(f"{name:14s}", [repr(s) for s in sums])
# transposed and sliced inputs: other splits between vectors and leftovers
torch.manual_seed(0)
base = (torch.randn(40, 24) * 3).requires_grad_()
for name in ["sigmoid", "silu", "gelu", "gelu tanh", "softplus", "mish", "elu"]:
    base.grad = None
    f = functions[name]
    y = f(base.t()) + f(base[:, 3:21]).sum() + f(base[:, ::2]).sum()
    y.sum().backward()
    print(f"{name:14s}", repr(y.double().sum().item()), repr(base.grad.double().sum().item()))
""",
)

S(
    "exactness2-powers",
    """
import torch

torch.manual_seed(0)
for n in (1, 7, 16, 17, 100):
    a = (torch.rand(n) * 3 + 0.1).requires_grad_()
    b = (torch.randn(n) * 2).requires_grad_()
    c = a ** b
    c.backward(torch.linspace(-1, 1, n))
    grads = [repr(t.grad.double().sum().item()) for t in (a, b)]
    print(n, repr(c.double().sum().item()), grads)
    x = torch.randn(n, requires_grad=True)
    z = 2.5 ** x + a ** torch.tensor(1.3) + a.pow(b.detach())
    z.sum().backward()
    print(" ", repr(z.double().sum().item()), repr(x.grad.double().sum().item()))
w = (torch.rand(32, 4) + 0.5) ** torch.randn(4)  # a row of exponents: runs of 4
print(repr(w.double().sum().item()))
""",
)

S(
    "exactness2-binary-cross-entropy",
    """
import torch
import torch.nn.functional as F

torch.manual_seed(0)
logits = (torch.randn(37, 3) * 2).requires_grad_()
target = torch.rand(37, 3)
weight = torch.rand(3)
pos_weight = torch.rand(3) * 3
for options in [
    {},
    {"reduction": "sum"},
    {"reduction": "none"},
    {"weight": weight},
    {"pos_weight": pos_weight},
    {"weight": weight, "pos_weight": pos_weight, "reduction": "sum"},
]:
    logits.grad = None
    loss = F.binary_cross_entropy_with_logits(logits, target, **options)
    loss.sum().backward()
    total = repr(loss.double().sum().item())
    print(sorted(options), total, repr(logits.grad.double().abs().sum().item()))
    logits.grad = None
    options.pop("pos_weight", None)
    loss = F.binary_cross_entropy(torch.sigmoid(logits), target, **options)
    loss.sum().backward()
    print(" ", repr(loss.double().sum().item()), repr(logits.grad.double().abs().sum().item()))
""",
)
