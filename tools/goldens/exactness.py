"""Exactness (issue 22): where gradtrace must print PyTorch's bits, not only its digits.

A hand-derived backward compared with autograd's by `==` (Karpathy's "becoming a backprop
ninja"), F.cross_entropy over several shapes and options, softmax, tensor ** number, and
optimizers over 300 steps: each prints full-precision values (repr, sums of every gradient)
so a one-ulp difference anywhere fails the golden.
"""

from __future__ import annotations

from tools.goldens import collect

SNIPPETS: list[dict] = []
S = collect(SNIPPETS)

# makemore part 4's manual backprop, on random data of its sizes (no names dataset)
S(
    "exactness-backprop-ninja",
    """
import torch
import torch.nn.functional as F


def cmp(s, dt, t):
    ex = torch.all(dt == t.grad).item()
    app = torch.allclose(dt, t.grad)
    maxdiff = (dt - t.grad).abs().max().item()
    print(f"{s:15s} | exact: {str(ex):5s} | approximate: {str(app):5s} | maxdiff: {maxdiff}")
    # the gradient itself, to the bit: a change anywhere upstream shows here
    print(f"{'':15s} | {t.grad.double().abs().sum().item()!r}")

vocab_size, n_embd, block_size, n_hidden, batch_size = 27, 10, 3, 64, 32
g = torch.Generator().manual_seed(2147483647)
C = torch.randn((vocab_size, n_embd), generator=g)
W1 = torch.randn((n_embd * block_size, n_hidden), generator=g) * (5/3)/((n_embd * block_size)**0.5)
b1 = torch.randn(n_hidden, generator=g) * 0.1
W2 = torch.randn((n_hidden, vocab_size), generator=g) * 0.1
b2 = torch.randn(vocab_size, generator=g) * 0.1
bngain = torch.randn((1, n_hidden), generator=g) * 0.1 + 1.0
bnbias = torch.randn((1, n_hidden), generator=g) * 0.1
parameters = [C, W1, b1, W2, b2, bngain, bnbias]
for p in parameters:
    p.requires_grad = True
Xb = torch.randint(0, vocab_size, (batch_size, block_size), generator=g)
Yb = torch.randint(0, vocab_size, (batch_size,), generator=g)
n = batch_size

emb = C[Xb]
embcat = emb.view(emb.shape[0], -1)
hprebn = embcat @ W1 + b1
bnmeani = 1/n*hprebn.sum(0, keepdim=True)
bndiff = hprebn - bnmeani
bndiff2 = bndiff**2
bnvar = 1/(n-1)*(bndiff2).sum(0, keepdim=True)
bnvar_inv = (bnvar + 1e-5)**-0.5
bnraw = bndiff * bnvar_inv
hpreact = bngain * bnraw + bnbias
h = torch.tanh(hpreact)
logits = h @ W2 + b2
logit_maxes = logits.max(1, keepdim=True).values
norm_logits = logits - logit_maxes
counts = norm_logits.exp()
counts_sum = counts.sum(1, keepdim=True)
counts_sum_inv = counts_sum**-1
probs = counts * counts_sum_inv
logprobs = probs.log()
loss = -logprobs[torch.arange(n), Yb].mean()

for p in parameters:
    p.grad = None
for t in [logprobs, probs, counts, counts_sum, counts_sum_inv,
          norm_logits, logit_maxes, logits, h, hpreact, bnraw,
          bnvar_inv, bnvar, bndiff2, bndiff, hprebn, bnmeani,
          embcat, emb]:
    t.retain_grad()
loss.backward()
print(repr(loss.item()))

dlogprobs = torch.zeros_like(logprobs)
dlogprobs[torch.arange(n), Yb] = -1.0/n
dprobs = (1.0 / probs) * dlogprobs
dcounts_sum_inv = (counts * dprobs).sum(1, keepdim=True)
dcounts = counts_sum_inv * dprobs
dcounts_sum = (-counts_sum**-2) * dcounts_sum_inv
dcounts += torch.ones_like(counts) * dcounts_sum
dnorm_logits = counts * dcounts
dlogits = dnorm_logits.clone()
dlogit_maxes = (-dnorm_logits).sum(1, keepdim=True)
dlogits += F.one_hot(logits.max(1).indices, num_classes=logits.shape[1]) * dlogit_maxes
dh = dlogits @ W2.T
dW2 = h.T @ dlogits
db2 = dlogits.sum(0)
dhpreact = (1.0 - h**2) * dh
dbngain = (bnraw * dhpreact).sum(0, keepdim=True)
dbnraw = bngain * dhpreact
dbnbias = dhpreact.sum(0, keepdim=True)
dbndiff = bnvar_inv * dbnraw
dbnvar_inv = (bndiff * dbnraw).sum(0, keepdim=True)
dbnvar = (-0.5*(bnvar + 1e-5)**-1.5) * dbnvar_inv
dbndiff2 = (1.0/(n-1))*torch.ones_like(bndiff2) * dbnvar
dbndiff += (2*bndiff) * dbndiff2
dhprebn = dbndiff.clone()
dbnmeani = (-dbndiff).sum(0)
dhprebn += 1.0/n * (torch.ones_like(hprebn) * dbnmeani)
dembcat = dhprebn @ W1.T
dW1 = embcat.T @ dhprebn
db1 = dhprebn.sum(0)
demb = dembcat.view(emb.shape)
dC = torch.zeros_like(C)
for k in range(Xb.shape[0]):
    for j in range(Xb.shape[1]):
        ix = Xb[k, j]
        dC[ix] += demb[k, j]

cmp('logprobs', dlogprobs, logprobs)
cmp('probs', dprobs, probs)
cmp('counts_sum_inv', dcounts_sum_inv, counts_sum_inv)
cmp('counts_sum', dcounts_sum, counts_sum)
cmp('counts', dcounts, counts)
cmp('norm_logits', dnorm_logits, norm_logits)
cmp('logit_maxes', dlogit_maxes, logit_maxes)
cmp('logits', dlogits, logits)
cmp('h', dh, h)
cmp('W2', dW2, W2)
cmp('b2', db2, b2)
cmp('hpreact', dhpreact, hpreact)
cmp('bngain', dbngain, bngain)
cmp('bnbias', dbnbias, bnbias)
cmp('bnraw', dbnraw, bnraw)
cmp('bnvar_inv', dbnvar_inv, bnvar_inv)
cmp('bnvar', dbnvar, bnvar)
cmp('bndiff2', dbndiff2, bndiff2)
cmp('bndiff', dbndiff, bndiff)
cmp('bnmeani', dbnmeani, bnmeani)
cmp('hprebn', dhprebn, hprebn)
cmp('embcat', dembcat, embcat)
cmp('W1', dW1, W1)
cmp('b1', db1, b1)
cmp('emb', demb, emb)
cmp('C', dC, C)

# the lines above are what this golden checks, to the bit: the big intermediates go, so the
# recorded probes stay small
for name in [k for k, v in list(globals().items()) if isinstance(v, torch.Tensor)]:
    if name not in ("loss", "Xb", "Yb"):
        del globals()[name]
""",
)
S(
    "exactness-cross-entropy-shapes",
    """
import torch
import torch.nn.functional as F

for rows, classes in [(16, 3), (32, 27), (64, 10), (4, 5), (100, 2), (1, 7)]:
    torch.manual_seed(0)
    x = torch.randn(rows, classes, requires_grad=True)
    y = torch.randint(0, classes, (rows,))
    loss = F.cross_entropy(x, y)
    loss.backward()
    print(rows, classes, repr(loss.item()))
    print(" ", [repr(v) for v in x.grad[0].tolist()])
    print(" ", repr(x.grad.double().abs().sum().item()), repr(x.grad.sum().item()))
    log_probs = F.log_softmax(x, dim=1)
    print(" ", repr(log_probs.double().sum().item()), repr(F.nll_loss(log_probs, y).item()))
    print(" ", torch.equal(F.cross_entropy(x, y), F.nll_loss(log_probs, y)))
""",
)
S(
    "exactness-cross-entropy-options",
    """
import torch
import torch.nn.functional as F

torch.manual_seed(0)
x = torch.randn(16, 3, requires_grad=True)
y = torch.randint(0, 3, (16,))
w = torch.rand(3)
options = [
    dict(weight=w),
    dict(label_smoothing=0.1),
    dict(ignore_index=1),
    dict(reduction="sum"),
    dict(weight=w, label_smoothing=0.2, ignore_index=0),
    dict(weight=w, reduction="sum"),
]
for kwargs in options:
    x.grad = None
    loss = F.cross_entropy(x, y, **kwargs)
    loss.backward()
    print(sorted(kwargs), repr(loss.item()))
    print(" ", repr(x.grad.double().abs().sum().item()), [repr(v) for v in x.grad[1].tolist()])
x.grad = None
per_row = F.cross_entropy(x, y, reduction="none")
per_row.sum().backward()
print([repr(v) for v in per_row.tolist()[:4]], repr(x.grad.double().abs().sum().item()))
""",
)
S(
    "exactness-softmax-and-pow",
    """
import torch

torch.manual_seed(0)
for shape in [(5, 3), (7, 8), (3, 17), (2, 100)]:
    x = (torch.randn(*shape) * 3).requires_grad_()
    probs = torch.softmax(x, dim=-1)
    log_probs = torch.log_softmax(x, dim=-1)
    upstream = torch.randn(*shape)
    (probs * upstream).sum().backward()
    print(shape, repr(probs.double().sum().item()), repr(x.grad.double().abs().sum().item()))
    x.grad = None
    (log_probs * upstream).sum().backward()
    print(" ", repr(log_probs.double().sum().item()), repr(x.grad.double().abs().sum().item()))

for exponent in (-0.5, -1, -2, 0.5, 1.5, -1.5, 2.5, 1 / 3):
    x = (torch.rand(37) * 4 + 0.1).requires_grad_()
    y = x ** exponent
    y.sum().backward()
    print(exponent, repr(y.double().sum().item()), repr(x.grad.double().sum().item()))
    print(" ", repr(y[-1].item()), repr(x.grad[0].item()))
""",
)

_TRAINING = """
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
x = torch.randn(32, 4)
y = torch.randint(0, 3, (32,))
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
opt = {optimizer}
for step in range(300):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    if step % 50 == 49:
        print(step, repr(loss.item()))
print([repr(v) for v in model[2].weight[0].tolist()])
print(repr(model[0].bias.double().sum().item()))
"""

for slug, optimizer in [
    ("sgd-momentum", "torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)"),
    ("sgd-nesterov", "torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, nesterov=True)"),
    (
        "sgd-dampening-decay",
        "torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, dampening=0.1, "
        "weight_decay=1e-3)",
    ),
    ("adam", "torch.optim.Adam(model.parameters(), lr=0.01)"),
    ("adamw", "torch.optim.AdamW(model.parameters(), lr=0.01)"),
    ("rmsprop", "torch.optim.RMSprop(model.parameters(), lr=0.01, momentum=0.9, centered=True)"),
]:
    S(f"exactness-train-{slug}", _TRAINING.replace("{optimizer}", optimizer), long=True)
