"""Losses and torch.nn.functional: the fused loss nodes, PyTorch's composite losses (l1,
cross_entropy with label smoothing or class probabilities), activations, dropout's random mask,
embedding, one_hot, normalize; their nn.Module classes and reprs; their error messages."""

from __future__ import annotations

from tools.goldens import collect

SNIPPETS: list[dict] = []
S = collect(SNIPPETS)

# ***** binary cross entropy *****

S(
    "loss-bce-reductions",
    """
import torch
import torch.nn.functional as F
def nexts(node):
    return [(f.name() if f else None, i) for f, i in node.next_functions]
x = torch.tensor([[-1.0, 0.5, 2.0], [0.3, -0.2, 1.5]], requires_grad=True)
p = torch.sigmoid(x)
t = torch.tensor([[0.0, 1.0, 1.0], [1.0, 0.0, 0.25]])
mean = F.binary_cross_entropy(p, t)
total = F.binary_cross_entropy(p, t, reduction="sum")
each = F.binary_cross_entropy(p, t, reduction="none")
print(mean, total, each, sep="\\n")
print(nexts(mean.grad_fn))
mean.backward()
print(x.grad)
""",
)
S(
    "loss-bce-weight-and-target-grad",
    """
import torch
import torch.nn.functional as F
p = torch.tensor([0.2, 0.7, 0.9, 0.4], requires_grad=True)
t = torch.tensor([0.0, 1.0, 0.5, 1.0], requires_grad=True)
w = torch.tensor([1.0, 2.0, 0.5, 3.0])
loss = F.binary_cross_entropy(p, t, weight=w)
loss.backward()
print(loss, p.grad, t.grad)
""",
)
S(
    "loss-bce-log-clamp",
    """
import torch
import torch.nn.functional as F
p = torch.tensor([0.0, 1.0, 1.0, 0.0], requires_grad=True)
t = torch.tensor([1.0, 0.0, 1.0, 0.0])
each = F.binary_cross_entropy(p, t, reduction="none")
print(each)
each.sum().backward()
print(p.grad)
""",
)
S(
    "loss-bce-errors",
    """
import torch
import torch.nn.functional as F
p = torch.tensor([0.2, 0.7, 0.4])
for args in [
    (torch.tensor([0.2, 1.5, 0.4]), p),
    (p, torch.tensor([0.2, 0.5, -1.0])),
    (torch.tensor([0.2, 0.5, -1.0]), torch.tensor([2.0, 0.5, 0.5])),
    (p, p.double()),
    (p, p[:2]),
]:
    try:
        F.binary_cross_entropy(*args)
    except Exception as e:
        print(type(e).__name__, e)
try:
    F.binary_cross_entropy(p, p, reduction="avg")
except ValueError as e:
    print(e)
""",
)
S(
    "loss-bce-module",
    """
import torch
import torch.nn as nn
loss_fn = nn.BCELoss()
print(loss_fn, nn.BCELoss(weight=torch.tensor([1.0, 2.0]), reduction="sum"))
p = torch.tensor([[0.1, 0.8], [0.6, 0.3]], requires_grad=True)
t = torch.tensor([[0.0, 1.0], [1.0, 0.0]])
loss = loss_fn(p, t)
loss.backward()
weighted = nn.BCELoss(weight=torch.tensor([1.0, 2.0]), reduction="sum")(p, t)
print(loss, weighted, p.grad)
""",
)

# ***** binary cross entropy with logits *****

S(
    "loss-bce-logits",
    """
import torch
import torch.nn.functional as F
def nexts(node):
    return [(f.name() if f else None, i) for f, i in node.next_functions]
x = torch.tensor([[-30.0, 0.5, 2.0], [0.3, -0.2, 40.0]], requires_grad=True)
t = torch.tensor([[0.0, 1.0, 1.0], [1.0, 0.0, 0.5]])
mean = F.binary_cross_entropy_with_logits(x, t)
each = F.binary_cross_entropy_with_logits(x, t, reduction="none")
print(mean, each, sep="\\n")
print(mean.grad_fn.name(), nexts(mean.grad_fn))
mean.backward()
print(x.grad)
""",
)
S(
    "loss-bce-logits-pos-weight",
    """
import torch
import torch.nn.functional as F
x = torch.tensor([[-1.0, 0.5, 2.0], [0.3, -0.2, 1.5]], requires_grad=True)
t = torch.tensor([[0.0, 1.0, 1.0], [1.0, 0.0, 0.5]], requires_grad=True)
pw = torch.tensor([1.0, 3.0, 0.5])
w = torch.tensor([2.0, 1.0, 1.0])
loss = F.binary_cross_entropy_with_logits(x, t, weight=w, pos_weight=pw, reduction="sum")
loss.backward()
print(loss, x.grad, t.grad, sep="\\n")
""",
)
S(
    "loss-bce-logits-module-and-errors",
    """
import torch
import torch.nn as nn
import torch.nn.functional as F
loss_fn = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0]))
print(loss_fn)
x = torch.tensor([0.5, -1.0, 3.0], requires_grad=True)
t = torch.tensor([1.0, 0.0, 1.0])
loss = loss_fn(x, t)
loss.backward()
print(loss, x.grad)
for target in (t[:2], torch.tensor([1, 0, 1])):
    try:
        F.binary_cross_entropy_with_logits(x, target)
    except Exception as e:
        print(type(e).__name__, e)
print(F.binary_cross_entropy_with_logits(x, t.double()))
""",
)

# ***** l1, smooth l1, huber, mse *****

S(
    "loss-l1-graph",
    """
import torch
import torch.nn.functional as F
def nexts(node):
    return [(f.name() if f else None, i) for f, i in node.next_functions]
x = torch.tensor([[0.5, -1.0, 2.0], [1.0, 0.25, -3.0]], requires_grad=True)
t = torch.tensor([[0.0, 1.0, 2.5], [1.5, 0.0, -1.0]])
mean = F.l1_loss(x, t)
total = F.l1_loss(x, t, reduction="sum")
each = F.l1_loss(x, t, reduction="none")
print(mean, total, each, sep="\\n")
print(mean.grad_fn.name(), nexts(mean.grad_fn.next_functions[0][0]))
mean.backward()
print(x.grad)
""",
)
S(
    "loss-l1-broadcast-and-weight",
    """
import torch
import torch.nn.functional as F
def nexts(node):
    return [(f.name() if f else None, i) for f, i in node.next_functions]
x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
t = torch.tensor([[0.0, 1.0, 2.5], [1.5, 0.0, -1.0]])
stretched = F.l1_loss(x, t)
print(stretched, nexts(stretched.grad_fn.next_functions[0][0].next_functions[0][0]))
w = torch.tensor([1.0, 2.0, 3.0])
weighted = F.l1_loss(x, t[0], weight=w)
print(weighted)
(stretched + weighted).backward()
print(x.grad)
print(F.l1_loss(x, torch.tensor([1, 2, 3])))
try:
    F.l1_loss(x, t[0], weight=w, reduction="avg")
except ValueError as e:
    print(e)
""",
)
S(
    "loss-smooth-l1",
    """
import torch
import torch.nn.functional as F
def nexts(node):
    return [(f.name() if f else None, i) for f, i in node.next_functions]
x = torch.tensor([[0.5, -1.0, 2.0], [1.0, 0.25, -3.0]], requires_grad=True)
t = torch.tensor([[0.0, 1.0, 2.5], [1.5, 0.0, -1.0]], requires_grad=True)
a = F.smooth_l1_loss(x, t)
b = F.smooth_l1_loss(x, t, beta=0.5, reduction="none")
c = F.smooth_l1_loss(x, t, beta=2.0, reduction="sum")
print(a, b, c, sep="\\n")
print(a.grad_fn.name(), nexts(a.grad_fn))
(a + b.sum() + c).backward()
print(x.grad, t.grad, sep="\\n")
zero = F.smooth_l1_loss(x, t, beta=0.0)
print(zero, zero.grad_fn.name())
try:
    F.smooth_l1_loss(x, t, beta=-1.0)
except RuntimeError as e:
    print(e)
""",
)
S(
    "loss-huber",
    """
import torch
import torch.nn.functional as F
def nexts(node):
    return [(f.name() if f else None, i) for f, i in node.next_functions]
x = torch.tensor([[0.5, -1.0, 2.0], [1.0, 0.25, -3.0]], requires_grad=True)
t = torch.tensor([[0.0, 1.0, 2.5], [1.5, 0.0, -1.0]])
a = F.huber_loss(x, t)
b = F.huber_loss(x, t, delta=0.5, reduction="none")
c = F.huber_loss(x, t, delta=2.0, reduction="sum")
w = torch.tensor([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]])
d = F.huber_loss(x, t, weight=w)
print(a, b, c, d, sep="\\n")
print(a.grad_fn.name(), d.grad_fn.name(), nexts(d.grad_fn))
(a + b.sum() + c + d).backward()
print(x.grad)
try:
    F.huber_loss(x, t, delta=0.0)
except RuntimeError as e:
    print(e)
""",
)
S(
    "loss-mse-reductions-and-weight",
    """
import torch
import torch.nn.functional as F
x = torch.tensor([[0.5, -1.0], [1.0, 0.25]], requires_grad=True)
t = torch.tensor([[0.0, 1.0], [1.5, 0.0]])
each = F.mse_loss(x, t, reduction="none")
w = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
weighted = F.mse_loss(x, t, weight=w)
print(each, weighted, weighted.grad_fn.name(), sep="\\n")
(each.sum() + weighted).backward()
print(x.grad)
print(F.mse_loss(x, torch.tensor([[0, 1], [2, 0]])))
""",
)
S(
    "loss-regression-modules",
    """
import torch
import torch.nn as nn
mods = [nn.L1Loss(), nn.MSELoss(reduction="sum"), nn.SmoothL1Loss(beta=0.5)]
mods.append(nn.HuberLoss(delta=2.0))
print(mods)
x = torch.tensor([0.5, -1.0, 2.0, 4.0], requires_grad=True)
t = torch.tensor([0.0, 1.0, 2.5, 0.0])
losses = [m(x, t) for m in mods]
print(losses)
sum(losses).backward()
print(x.grad)
print(nn.L1Loss(size_average=False).reduction, nn.MSELoss(reduce=False).reduction)
""",
)

# ***** nll and cross entropy *****

S(
    "loss-nll-weight-ignore",
    """
import torch
import torch.nn.functional as F
x = torch.tensor([[0.2, -1.0, 0.5], [1.5, 0.3, -0.7], [0.0, 0.4, 2.0], [0.9, -0.2, 0.1]])
x.requires_grad_()
lp = F.log_softmax(x, dim=1)
y = torch.tensor([2, -100, 1, 0])
w = torch.tensor([1.0, 2.0, 0.5])
mean = F.nll_loss(lp, y, weight=w)
total = F.nll_loss(lp, y, weight=w, reduction="sum")
each = F.nll_loss(lp, y, weight=w, reduction="none")
other = F.nll_loss(lp, torch.tensor([2, 0, 1, 0]), ignore_index=0)
print(mean, total, each, other, sep="\\n")
(mean + total + each.sum() + other).backward()
print(x.grad)
""",
)
S(
    "loss-nll-single-and-all-ignored",
    """
import torch
import torch.nn.functional as F
x = torch.tensor([0.2, -1.0, 0.5], requires_grad=True)
one = F.nll_loss(x, torch.tensor(1))
none = F.nll_loss(x, torch.tensor(2), reduction="none")
print(one, none, none.shape)
(one + none).backward()
print(x.grad)
b = torch.tensor([[0.2, -1.0], [0.5, 0.1]], requires_grad=True)
nan = F.nll_loss(b, torch.tensor([-100, -100]))
nan.backward()
print(nan, b.grad)
""",
)
S(
    "loss-nll-errors",
    """
import torch
import torch.nn.functional as F
x = torch.tensor([[0.2, -1.0, 0.5], [1.5, 0.3, -0.7]])
y = torch.tensor([1, 0])
for kwargs in [
    dict(target=y.float()),
    dict(target=y.int()),
    dict(target=torch.tensor([3, 0])),
    dict(target=torch.tensor([-1, 0])),
    dict(target=torch.tensor([1, 0, 1])),
    dict(target=y, weight=torch.ones(2)),
    dict(target=y, weight=torch.ones(3, dtype=torch.long)),
    dict(target=y, reduction="avg"),
]:
    try:
        F.nll_loss(x, **kwargs)
    except Exception as e:
        print(type(e).__name__, e)
""",
)
S(
    "loss-cross-entropy-weight-ignore",
    """
import torch
import torch.nn.functional as F
def nexts(node):
    return [(f.name() if f else None, i) for f, i in node.next_functions]
x = torch.tensor([[0.2, -1.0, 0.5], [1.5, 0.3, -0.7], [0.0, 0.4, 2.0]], requires_grad=True)
y = torch.tensor([2, 1, -100])
w = torch.tensor([1.0, 2.0, 0.5])
a = F.cross_entropy(x, y, weight=w)
b = F.cross_entropy(x, y, reduction="none")
c = F.cross_entropy(x, torch.tensor([2, 1, 0]), ignore_index=1, reduction="sum")
print(a, b, c, sep="\\n")
print(a.grad_fn.name(), nexts(a.grad_fn))
(a + b.sum() + c).backward()
print(x.grad)
""",
)
S(
    "loss-cross-entropy-label-smoothing",
    """
import torch
import torch.nn.functional as F
def nexts(node):
    return [(f.name() if f else None, i) for f, i in node.next_functions]
x = torch.tensor([[0.2, -1.0, 0.5], [1.5, 0.3, -0.7], [0.0, 0.4, 2.0]], requires_grad=True)
y = torch.tensor([2, 1, 0])
mean = F.cross_entropy(x, y, label_smoothing=0.1)
print(mean)
add = mean.grad_fn
print(add.name(), nexts(add))
print(nexts(add.next_functions[0][0]), nexts(add.next_functions[1][0]))
div = add.next_functions[1][0].next_functions[0][0]
print(nexts(div), nexts(div.next_functions[0][0]))
mean.backward()
print(x.grad)
""",
)
S(
    "loss-cross-entropy-label-smoothing-reductions",
    """
import torch
import torch.nn.functional as F
def nexts(node):
    return [(f.name() if f else None, i) for f, i in node.next_functions]
x = torch.tensor([[0.2, -1.0, 0.5], [1.5, 0.3, -0.7], [0.0, 0.4, 2.0]], requires_grad=True)
y = torch.tensor([2, -100, 0])
w = torch.tensor([1.0, 2.0, 0.5])
a = F.cross_entropy(x, y, label_smoothing=0.2, reduction="sum")
b = F.cross_entropy(x, y, label_smoothing=0.2, reduction="none")
c = F.cross_entropy(x, y, weight=w, label_smoothing=0.3)
print(a, b, c, sep="\\n")
print(nexts(b.grad_fn.next_functions[1][0]))
(a + b.sum() + c).backward()
print(x.grad)
""",
)
S(
    "loss-cross-entropy-probabilities",
    """
import torch
import torch.nn.functional as F
def nexts(node):
    return [(f.name() if f else None, i) for f, i in node.next_functions]
x = torch.tensor([[0.2, -1.0, 0.5], [1.5, 0.3, -0.7]], requires_grad=True)
p = torch.tensor([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]])
mean = F.cross_entropy(x, p)
total = F.cross_entropy(x, p, reduction="sum")
each = F.cross_entropy(x, p, reduction="none")
print(mean, total, each, sep="\\n")
print(mean.grad_fn.name(), nexts(mean.grad_fn), nexts(mean.grad_fn.next_functions[0][0]))
(mean + total + each.sum()).backward()
print(x.grad)
""",
)
S(
    "loss-cross-entropy-probabilities-smoothing-weight",
    """
import torch
import torch.nn.functional as F
def nexts(node):
    return [(f.name() if f else None, i) for f, i in node.next_functions]
x = torch.tensor([[0.2, -1.0, 0.5], [1.5, 0.3, -0.7]], requires_grad=True)
p = torch.tensor([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]])
w = torch.tensor([1.0, 2.0, 0.5])
a = F.cross_entropy(x, p, label_smoothing=0.2)
b = F.cross_entropy(x, p, weight=w)
c = F.cross_entropy(x[0], p[0], weight=w)
print(a, b, c, sep="\\n")
print(nexts(b.grad_fn.next_functions[0][0].next_functions[0][0]))
(a + b + c).backward()
print(x.grad)
""",
)
S(
    "loss-cross-entropy-errors",
    """
import torch
import torch.nn.functional as F
x = torch.tensor([[0.2, -1.0, 0.5], [1.5, 0.3, -0.7]])
p = torch.tensor([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]])
y = torch.tensor([1, 0])
for args, kwargs in [
    ((x, torch.ones(2, 3, dtype=torch.long)), {}),
    ((x, p), dict(ignore_index=1)),
    ((x, y), dict(label_smoothing=1.5)),
    ((x, p), dict(label_smoothing=1.5)),
    ((x, torch.tensor([1.0, 0.0])), {}),
    ((x, p), dict(weight=torch.ones(2))),
    ((x, y), dict(weight=torch.ones(2), label_smoothing=0.1)),
    ((x, y), dict(reduction="max")),
]:
    try:
        F.cross_entropy(*args, **kwargs)
    except Exception as e:
        print(type(e).__name__, e)
print(F.cross_entropy(x, y, label_smoothing=-0.5))
""",
)
S(
    "loss-classification-modules",
    """
import torch
import torch.nn as nn
ce = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 0.5]), ignore_index=0, label_smoothing=0.1)
nll = nn.NLLLoss(reduction="sum")
print(ce, nll, ce.ignore_index, ce.label_smoothing, ce.reduction, ce.weight)
x = torch.tensor([[0.2, -1.0, 0.5], [1.5, 0.3, -0.7], [0.0, 0.4, 2.0]], requires_grad=True)
y = torch.tensor([2, 1, 0])
a = ce(x, y)
b = nll(torch.log_softmax(x, dim=1), y)
(a + b).backward()
print(a, b, x.grad)
""",
)

# ***** activations *****

S(
    "loss-act-leaky-relu",
    """
import torch
import torch.nn as nn
import torch.nn.functional as F
def nexts(node):
    return [(f.name() if f else None, i) for f, i in node.next_functions]
x = torch.tensor([-2.0, -0.5, 0.0, 0.5, 3.0], requires_grad=True)
a = F.leaky_relu(x)
b = F.leaky_relu(x, 0.2)
c = nn.LeakyReLU(0.3)(x)
print(a, b, c, sep="\\n")
print(a.grad_fn.name(), nexts(a.grad_fn))
(a + b + c).sum().backward()
print(x.grad)
print(nn.LeakyReLU(), nn.LeakyReLU(0.2, inplace=True))
""",
)
S(
    "loss-act-leaky-relu-inplace",
    """
import torch
import torch.nn.functional as F
def nexts(node):
    return [(f.name() if f else None, i) for f, i in node.next_functions]
x = torch.tensor([-2.0, -0.5, 0.5, 3.0], requires_grad=True)
h = x * 2
out = F.leaky_relu(h, 0.1, inplace=True)
print(out is h, h, h.grad_fn.name(), nexts(h.grad_fn), h._version)
h.sum().backward()
print(x.grad)
try:
    F.leaky_relu(x, inplace=True)
except RuntimeError as e:
    print(e)
""",
)
S(
    "loss-act-gelu",
    """
import torch
import torch.nn as nn
import torch.nn.functional as F
def nexts(node):
    return [(f.name() if f else None, i) for f, i in node.next_functions]
x = torch.tensor([-2.5, -1.0, -0.1, 0.0, 0.7, 2.5], requires_grad=True)
a = F.gelu(x)
b = F.gelu(x, approximate="tanh")
c = nn.GELU()(x)
print(a, b, c, sep="\\n")
print(a.grad_fn.name(), nexts(a.grad_fn))
(a * 2 + b).sum().backward()
print(x.grad)
print(nn.GELU(), nn.GELU("tanh"))
try:
    F.gelu(x, approximate="fast")
except RuntimeError as e:
    print(e)
""",
)
S(
    "loss-act-elu-selu",
    """
import torch
import torch.nn as nn
import torch.nn.functional as F
def nexts(node):
    return [(f.name() if f else None, i) for f, i in node.next_functions]
x = torch.tensor([-3.0, -1.0, -0.1, 0.0, 0.7, 2.5], requires_grad=True)
a = F.elu(x)
b = F.elu(x, alpha=2.0)
c = F.selu(x)
d = nn.SELU()(x)
print(a, b, c, d, sep="\\n")
print(a.grad_fn.name(), c.grad_fn.name(), nexts(c.grad_fn))
(a + b + c * d).sum().backward()
print(x.grad)
print(nn.ELU(), nn.ELU(alpha=0.5, inplace=True), nn.SELU(), nn.SELU(inplace=True))
""",
)
S(
    "loss-act-elu-inplace",
    """
import torch
import torch.nn.functional as F
def nexts(node):
    return [(f.name() if f else None, i) for f, i in node.next_functions]
x = torch.tensor([-3.0, -1.0, 0.7, 2.5], requires_grad=True)
h = x * 1.5
F.elu(h, alpha=2.0, inplace=True)
g = x * 1.0
F.selu(g, inplace=True)
print(h, h.grad_fn.name(), g, g.grad_fn.name(), nexts(g.grad_fn))
(h + g).sum().backward()
print(x.grad)
""",
)
S(
    "loss-act-silu-softplus",
    """
import torch
import torch.nn as nn
import torch.nn.functional as F
def nexts(node):
    return [(f.name() if f else None, i) for f, i in node.next_functions]
x = torch.tensor([-30.0, -1.0, -0.1, 0.0, 0.7, 2.5, 15.0], requires_grad=True)
a = F.silu(x)
b = F.softplus(x)
c = F.softplus(x, beta=2.0, threshold=3.0)
d = nn.Softplus(beta=0.5)(x)
print(a, b, c, d, sep="\\n")
print(a.grad_fn.name(), b.grad_fn.name(), nexts(b.grad_fn))
(a + b + c + d).sum().backward()
print(x.grad)
print(nn.SiLU(), nn.SiLU(inplace=True), nn.Softplus(), nn.Softplus(beta=2, threshold=10))
h = x * 1
F.silu(h, inplace=True)
print(h.grad_fn.name(), nexts(h.grad_fn))
""",
)
S(
    "loss-act-hardtanh-relu6",
    """
import torch
import torch.nn as nn
import torch.nn.functional as F
def nexts(node):
    return [(f.name() if f else None, i) for f, i in node.next_functions]
x = torch.tensor([-3.0, -1.0, -0.5, 0.0, 0.7, 2.5, 7.0], requires_grad=True)
a = F.hardtanh(x)
b = F.hardtanh(x, -2.0, 2.0)
c = F.relu6(x)
d = nn.ReLU6()(x)
print(a, b, c, d, sep="\\n")
print(a.grad_fn.name(), c.grad_fn.name(), nexts(c.grad_fn))
(a + b + c + d).sum().backward()
print(x.grad)
print(nn.Hardtanh(), nn.Hardtanh(-2.0, 2.0, inplace=True), nn.ReLU6(), nn.ReLU6(inplace=True))
print(F.relu6(torch.tensor([-1, 3, 9])), F.hardtanh(torch.tensor([-2, 0, 2])))
try:
    F.hardtanh(x, 2.0, 1.0)
except ValueError as e:
    print(e)
""",
)
S(
    "loss-act-logsigmoid-softmin",
    """
import torch
import torch.nn as nn
import torch.nn.functional as F
def nexts(node):
    return [(f.name() if f else None, i) for f, i in node.next_functions]
x = torch.tensor([[-30.0, -1.0, 0.5], [0.0, 2.0, 40.0]], requires_grad=True)
a = F.logsigmoid(x)
b = F.softmin(x, dim=1)
c = nn.Softmin(dim=0)(x)
d = nn.LogSigmoid()(x)
print(a, b, c, d, sep="\\n")
print(a.grad_fn.name(), b.grad_fn.name(), nexts(b.grad_fn))
(a.sum() + (b * torch.tensor([1.0, 2.0, 3.0])).sum() + c[0].sum() + d.sum()).backward()
print(x.grad)
print(nn.LogSigmoid(), nn.Softmin(), nn.Softmin(dim=1))
""",
)
S(
    "loss-act-integer-inputs",
    """
import torch
import torch.nn.functional as F
i = torch.tensor([1, -2])
for f in (F.leaky_relu, F.gelu, F.elu, F.selu, F.silu, F.softplus, F.logsigmoid):
    try:
        f(i)
    except Exception as e:
        print(type(e).__name__, e)
""",
)
S(
    "loss-act-float64",
    """
import torch
import torch.nn.functional as F
x = torch.tensor([-1.5, -0.2, 0.3, 2.0], dtype=torch.float64, requires_grad=True)
outs = [F.leaky_relu(x), F.gelu(x), F.gelu(x, approximate="tanh"), F.elu(x), F.silu(x),
        F.softplus(x), F.hardtanh(x), F.logsigmoid(x)]
print(outs)
sum(o.sum() for o in outs).backward()
print(x.grad)
""",
)

# ***** dropout *****

S(
    "loss-dropout-mask",
    """
import torch
import torch.nn.functional as F
def nexts(node):
    return [(f.name() if f else None, i) for f, i in node.next_functions]
x = torch.arange(1.0, 13.0).reshape(3, 4).requires_grad_()
y = F.dropout(x)
print(y)
print(y.grad_fn.name(), nexts(y.grad_fn))
y.sum().backward()
print(x.grad)
print(torch.rand(2))
""",
)
S(
    "loss-dropout-shapes-and-p",
    """
import torch
import torch.nn.functional as F
a = F.dropout(torch.ones(40), p=0.2)
b = F.dropout(torch.ones(3, 5, dtype=torch.float64), p=0.7)
c = F.dropout(torch.randn(2, 3, 4), p=1 / 3)
print(a, b, c, sep="\\n")
x = torch.ones(3, requires_grad=True)
print(F.dropout(x, 1.0), F.dropout(x, training=False) is x, F.dropout(x, 0.0) is x)
try:
    F.dropout(x, 1.5)
except ValueError as e:
    print(e)
try:
    F.dropout(torch.tensor([1, 2]))
except RuntimeError as e:
    print(e)
""",
)
S(
    "loss-dropout-module-train-eval",
    """
import torch
import torch.nn as nn
drop = nn.Dropout(0.25)
print(drop, nn.Dropout(p=0.3, inplace=True), drop.training)
x = torch.ones(2, 8, requires_grad=True)
y = drop(x)
drop.eval()
z = drop(x)
print(y, z is x, drop.training)
model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
out = model(torch.ones(2, 4))
print(out)
print(model.eval()(torch.ones(2, 4)))
""",
)
S(
    "loss-dropout-inplace",
    """
import torch
import torch.nn.functional as F
def nexts(node):
    return [(f.name() if f else None, i) for f, i in node.next_functions]
x = torch.arange(1.0, 9.0, requires_grad=True)
h = x * 1
out = F.dropout(h, 0.5, inplace=True)
print(out is h, h, h.grad_fn.name(), nexts(h.grad_fn), h._version)
h.sum().backward()
print(x.grad)
""",
)

# ***** embedding, one_hot, normalize, cosine_similarity *****

S(
    "loss-embedding",
    """
import torch
import torch.nn.functional as F
def nexts(node):
    return [(f.name() if f else None, i) for f, i in node.next_functions]
w = torch.randn(5, 3, requires_grad=True)
idx = torch.tensor([[0, 2, 2], [4, 3, 0]])
e = F.embedding(idx, w)
print(e)
print(e.grad_fn.name(), nexts(e.grad_fn))
(e * torch.arange(18.0).reshape(2, 3, 3)).sum().backward()
print(w.grad)
""",
)
S(
    "loss-embedding-padding-and-errors",
    """
import torch
import torch.nn.functional as F
w = torch.randn(4, 2, requires_grad=True)
e = F.embedding(torch.tensor([0, 3, 1, 3]), w, padding_idx=3)
f = F.embedding(torch.tensor([1, 2], dtype=torch.int32), w, padding_idx=-3)
(e.sum() + f.sum()).backward()
print(e, f, w.grad, sep="\\n")
for idx, pad in [(torch.tensor([0.0]), None), (torch.tensor([4]), None),
                 (torch.tensor([-1]), None), (torch.tensor([0]), 4)]:
    try:
        F.embedding(idx, w, padding_idx=pad)
    except Exception as ex:
        print(type(ex).__name__, ex)
""",
)
S(
    "loss-embedding-backward-twice",
    """
import torch
import torch.nn.functional as F
w = torch.ones(3, 2, requires_grad=True)
e = F.embedding(torch.tensor([1, 1]), w).sum()
e.backward()
try:
    e.backward()
except RuntimeError as ex:
    print(ex)
""",
)
S(
    "loss-one-hot",
    """
import torch
import torch.nn.functional as F
a = F.one_hot(torch.tensor([2, 0, 1]))
b = F.one_hot(torch.tensor([[1, 0], [3, 1]]), num_classes=5)
c = F.one_hot(torch.tensor(2))
d = F.one_hot(torch.tensor([], dtype=torch.long), 3)
print(a, b, c, d, a.dtype, sep="\\n")
for args in [(torch.tensor([1.0, 2.0]),), (torch.tensor([-1, 2]),), (torch.tensor([1, 5]), 3),
             (torch.tensor([], dtype=torch.long),), (torch.tensor([1], dtype=torch.int32),)]:
    try:
        F.one_hot(*args)
    except RuntimeError as e:
        print(e)
""",
)
S(
    "loss-normalize",
    """
import torch
import torch.nn.functional as F
def nexts(node):
    return [(f.name() if f else None, i) for f, i in node.next_functions]
x = torch.tensor([[3.0, 4.0, 0.0], [1.0, -2.0, 2.0]], requires_grad=True)
a = F.normalize(x)
b = F.normalize(x, p=1.0, dim=0)
z = F.normalize(torch.zeros(2, 2))
print(a, b, z, sep="\\n")
print(a.grad_fn.name(), nexts(a.grad_fn), nexts(a.grad_fn.next_functions[1][0]))
(a * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
print(x.grad)
""",
)
S(
    "loss-cosine-similarity",
    """
import torch
import torch.nn.functional as F
def nexts(node):
    return [(f.name() if f else None, i) for f, i in node.next_functions]
a = torch.tensor([[3.0, 4.0, 0.0], [1.0, -2.0, 2.0]], requires_grad=True)
b = torch.tensor([[1.0, 0.0, 0.0], [0.5, 0.5, -1.0]], requires_grad=True)
s = F.cosine_similarity(a, b)
t = F.cosine_similarity(a, b[0], dim=-1)
print(s, t)
print(s.grad_fn.name(), nexts(s.grad_fn))
(s.sum() + t.sum()).backward()
print(a.grad, b.grad, sep="\\n")
""",
)
S(
    "loss-cross-entropy-probabilities-target-grad",
    """
import torch
import torch.nn.functional as F
x = torch.tensor([[0.2, -1.0, 0.5], [1.5, 0.3, -0.7]], requires_grad=True)
p = torch.tensor([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]], requires_grad=True)
loss = F.cross_entropy(x, p, label_smoothing=0.2)
mul = loss.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0]
smoothed = mul.next_functions[1][0]
print(mul.name(), smoothed.name(), smoothed.next_functions[0][0].name())
loss.backward()
print(loss, x.grad, p.grad, sep="\\n")
""",
)
S(
    "loss-pairwise-distance",
    """
import torch
import torch.nn.functional as F
a = torch.tensor([[3.0, 4.0, 0.0], [1.0, -2.0, 2.0]], requires_grad=True)
b = torch.tensor([[1.0, 0.0, 0.0], [1.0, -2.0, 2.0]], requires_grad=True)
d = F.pairwise_distance(a, b)
e = F.pairwise_distance(a, b[0], p=1.0, keepdim=True)
f = F.pairwise_distance(a[0], b[0], p=3.0)
print(d, e, f, sep="\\n")
norm = d.grad_fn
add = norm.next_functions[0][0]
print(norm.name(), add.name(), add.next_functions[0][0].name())
(d.sum() + e.sum() + f).backward()
print(a.grad, b.grad, sep="\\n")
""",
)
S(
    "loss-softmax-dtype-and-implicit-dim",
    """
import torch
import torch.nn.functional as F
x = torch.tensor([[0.2, 0.7, -0.3], [0.9, 0.1, 0.4]], requires_grad=True)
a = F.softmax(x, 1, dtype=torch.float64)
b = F.log_softmax(x, dim=0, dtype=torch.float64)
c = F.softmin(x, 1, dtype=torch.float64)
d = F.softmax(x)
print(a, b, c, d, sep="\\n")
print(a.grad_fn.name(), a.grad_fn.next_functions[0][0].name())
print(c.grad_fn.next_functions[0][0].next_functions[0][0].name())
(a.sum() + b[0].sum() + c[:, 0].sum()).backward()
print(x.grad)
""",
)

# ***** edges: unbatched inputs, broadcast weights, float64, empty batches *****

S(
    "loss-edge-unbatched-cross-entropy",
    """
import torch
import torch.nn.functional as F
x = torch.tensor([0.2, -1.0, 0.5, 1.5], requires_grad=True)
y = torch.tensor(2)
w = torch.tensor([1.0, 2.0, 0.5, 3.0])
a = F.cross_entropy(x, y, label_smoothing=0.25)
b = F.cross_entropy(x, y, weight=w, label_smoothing=0.1, reduction="none")
c = F.cross_entropy(x, torch.tensor([0.1, 0.2, 0.3, 0.4]), reduction="none")
d = F.nll_loss(torch.log_softmax(x, 0), y, weight=w)
print(a, b, c, d, sep="\\n")
(a + b + c + d).backward()
print(x.grad)
""",
)
S(
    "loss-edge-broadcast-weights",
    """
import torch
import torch.nn.functional as F
p = torch.tensor([[0.2, 0.7, 0.9], [0.4, 0.5, 0.1]], requires_grad=True)
t = torch.tensor([[0.0, 1.0, 1.0], [1.0, 0.0, 1.0]])
a = F.binary_cross_entropy(p, t, weight=torch.tensor([1.0, 2.0, 3.0]))
b = F.binary_cross_entropy_with_logits(p, t, weight=torch.tensor([[2.0], [0.5]]), reduction="none")
c = F.binary_cross_entropy_with_logits(p, t, pos_weight=torch.tensor([3.0, 1.0, 0.5]))
print(a, b, c, sep="\\n")
(a + b.sum() + c).backward()
print(p.grad)
""",
)
S(
    "loss-edge-float64",
    """
import torch
import torch.nn.functional as F
x = torch.tensor([[0.2, -1.0, 0.5], [1.5, 0.3, -0.7]], dtype=torch.float64, requires_grad=True)
y = torch.tensor([1, 0])
p = torch.tensor([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]], dtype=torch.float64)
losses = [
    F.cross_entropy(x, y, label_smoothing=0.1),
    F.cross_entropy(x, p),
    F.binary_cross_entropy(torch.sigmoid(x), p),
    F.binary_cross_entropy_with_logits(x, p),
    F.smooth_l1_loss(x, p),
    F.huber_loss(x, p, delta=0.5),
    F.l1_loss(x, p),
]
print(losses)
sum(losses).backward()
print(x.grad)
print(F.binary_cross_entropy_with_logits(x.float(), p))
""",
)
S(
    "loss-edge-empty-batch",
    """
import torch
import torch.nn.functional as F
x = torch.zeros(0, 3, requires_grad=True)
y = torch.zeros(0, dtype=torch.long)
print(F.cross_entropy(x, y), F.cross_entropy(x, y, reduction="sum"))
print(F.cross_entropy(x, y, reduction="none"))
print(F.mse_loss(x, x.detach()), F.l1_loss(x, x.detach(), reduction="none"))
print(F.binary_cross_entropy_with_logits(x, x.detach()))
""",
)
S(
    "loss-edge-legacy-reduction-flags",
    """
import torch
import torch.nn as nn
import torch.nn.functional as F
x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
t = torch.tensor([0.0, 1.0, 2.5])
print(F.mse_loss(x, t, size_average=False), F.l1_loss(x, t, reduce=False))
print(F.smooth_l1_loss(x, t, size_average=True, reduce=True))
print(nn.MSELoss(size_average=False).reduction, nn.CrossEntropyLoss(reduce=False).reduction)
""",
)

# ***** more activations: celu, threshold, shrinks, softsign, mish, hardswish, glu, prelu *****

S(
    "loss-act-celu-threshold",
    """
import torch
import torch.nn as nn
import torch.nn.functional as F
x = torch.tensor([-3.0, -1.0, -0.1, 0.0, 0.7, 2.5], requires_grad=True)
a = F.celu(x)
b = F.celu(x, alpha=2.0)
c = F.threshold(x, 0.5, -4.0)
d = nn.Threshold(0.0, 20.0)(x)
print(a, b, c, d, sep="\\n")
print(a.grad_fn.name(), c.grad_fn.name())
(a + b + c + d).sum().backward()
print(x.grad)
h = x * 2
F.celu(h, alpha=0.5, inplace=True)
g = x * 2
F.threshold(g, 1.0, 0.0, inplace=True)
print(h, h.grad_fn.name(), g, g.grad_fn.name())
print(nn.CELU(), nn.CELU(2.0, inplace=True), nn.Threshold(0.1, 20), nn.Threshold(0.1, 20, True))
""",
)
S(
    "loss-act-shrinks-softsign",
    """
import torch
import torch.nn as nn
import torch.nn.functional as F
x = torch.tensor([[-3.0, -0.3, 0.2], [0.6, -0.7, 2.5]], requires_grad=True)
a = F.softshrink(x)
b = F.hardshrink(x, 0.25)
c = F.tanhshrink(x)
d = F.softsign(x)
print(a, b, c, d, sep="\\n")
print(a.grad_fn.name(), b.grad_fn.name(), c.grad_fn.name(), d.grad_fn.name())
(a * 2 + b + c + d).sum().backward()
print(x.grad)
print(nn.Softshrink(), nn.Hardshrink(0.25), nn.Tanhshrink(), nn.Softsign())
try:
    F.softshrink(x, -1.0)
except RuntimeError as e:
    print(e)
""",
)
S(
    "loss-act-mish-hardswish-hardsigmoid",
    """
import torch
import torch.nn as nn
import torch.nn.functional as F
x = torch.tensor([-4.0, -3.0, -1.5, 0.0, 0.7, 2.5, 3.0, 5.0], requires_grad=True)
a = F.mish(x)
b = F.hardswish(x)
c = F.hardsigmoid(x)
print(a, b, c, sep="\\n")
print(a.grad_fn.name(), b.grad_fn.name(), c.grad_fn.name())
(a + b * 2 + c * 3).sum().backward()
print(x.grad)
h = x * 1
F.mish(h, inplace=True)
g = x * 1
F.hardswish(g, inplace=True)
k = x * 1
F.hardsigmoid(k, inplace=True)
print(h.grad_fn.name(), g.grad_fn.name(), k.grad_fn.name(), k._version)
print(nn.Mish(), nn.Mish(inplace=True), nn.Hardswish(True), nn.Hardsigmoid())
for f in (F.mish, F.hardswish, F.hardsigmoid):
    try:
        f(torch.tensor([1, 2]))
    except NotImplementedError as e:
        print(e)
""",
)
S(
    "loss-act-glu",
    """
import torch
import torch.nn as nn
import torch.nn.functional as F
x = torch.tensor([[0.2, -1.0, 0.5, 1.5], [0.3, -0.7, 2.0, -2.0]], requires_grad=True)
a = F.glu(x)
b = F.glu(x, dim=0)
c = nn.GLU(dim=1)(x)
print(a, b, c, sep="\\n")
print(a.grad_fn.name(), nn.GLU())
(a.sum() + b.sum() * 2 + c[0].sum()).backward()
print(x.grad)
for args in [(x[:, :3],), (torch.tensor(1.0),)]:
    try:
        F.glu(*args)
    except RuntimeError as e:
        print(e)
""",
)
S(
    "loss-act-prelu",
    """
import torch
import torch.nn as nn
import torch.nn.functional as F
x = torch.tensor([[-2.0, 0.5, -0.3], [1.0, -1.5, 2.0]], requires_grad=True)
one = nn.PReLU()
per_channel = nn.PReLU(3, init=0.1)
print(one, per_channel, one.weight, per_channel.weight._version)
a = one(x)
b = per_channel(x)
c = F.prelu(x[0], torch.tensor([0.2], requires_grad=True))
print(a, b, c, sep="\\n")
print(a.grad_fn.name(), [f.name() for f, _ in a.grad_fn.next_functions])
(a.sum() + (b * 2).sum() + c.sum()).backward()
print(x.grad, one.weight.grad, per_channel.weight.grad, sep="\\n")
try:
    F.prelu(x, torch.ones(2))
except RuntimeError as e:
    print(e)
""",
)
S(
    "loss-kl-div",
    """
import torch
import torch.nn as nn
import torch.nn.functional as F
x = torch.tensor([[0.2, -0.7, -0.3], [0.9, -2.1, 0.4]], requires_grad=True)
t = torch.tensor([[0.2, 0.5, 0.3], [0.6, 0.0, 0.4]])
lp = F.log_softmax(x, dim=1)
a = F.kl_div(lp, t, reduction="batchmean")
b = F.kl_div(lp, t, reduction="sum")
c = F.kl_div(lp, t, reduction="none")
d = F.kl_div(lp, t)
e = F.kl_div(lp, torch.log_softmax(t, 1), reduction="batchmean", log_target=True)
print(a, b, c, d, e, sep="\\n")
print(a.grad_fn.name(), c.grad_fn.name(), [f and f.name() for f, _ in c.grad_fn.next_functions])
(a + b + c.sum() + d + e).backward()
print(x.grad)
print(nn.KLDivLoss(), nn.KLDivLoss(reduction="batchmean", log_target=True)(lp, t.log()))
for target, kwargs in [(torch.tensor([[0, 1, 0], [1, 0, 0]]), {}), (t, dict(reduction="avg"))]:
    try:
        F.kl_div(lp, target, **kwargs)
    except Exception as ex:
        print(type(ex).__name__, ex)
""",
)

# ***** margin, embedding and likelihood losses *****

S(
    "loss-margin-ranking-and-hinge",
    """
import torch
import torch.nn as nn
import torch.nn.functional as F
x1 = torch.tensor([0.2, -0.7, 1.3, 0.5], requires_grad=True)
x2 = torch.tensor([0.5, -0.1, 0.3, 0.5], requires_grad=True)
y = torch.tensor([1.0, -1.0, 1.0, -1.0])
a = F.margin_ranking_loss(x1, x2, y, margin=0.1)
b = F.margin_ranking_loss(x1, x2, y, reduction="none")
c = F.hinge_embedding_loss(x1, y)
d = F.hinge_embedding_loss(x1, y, margin=0.5, reduction="sum")
print(a, b, c, d, sep="\\n")
print(a.grad_fn.name(), a.grad_fn.next_functions[0][0].name())
print(c.grad_fn.next_functions[0][0].name())
(a + b.sum() + c + d).backward()
print(x1.grad, x2.grad)
print(nn.MarginRankingLoss(margin=0.2)(x1, x2, y), nn.HingeEmbeddingLoss()(x1, y))
print(nn.MarginRankingLoss(), nn.HingeEmbeddingLoss(), nn.SoftMarginLoss())
try:
    F.margin_ranking_loss(x1, x2, y[None])
except RuntimeError as e:
    print(e)
""",
)
S(
    "loss-soft-margin-and-multilabel",
    """
import torch
import torch.nn as nn
import torch.nn.functional as F
x = torch.tensor([[0.2, -0.7, 1.3], [2.0, -1.5, 0.1]], requires_grad=True)
y = torch.tensor([[1.0, -1.0, 1.0], [-1.0, -1.0, 1.0]])
a = F.soft_margin_loss(x, y)
b = F.soft_margin_loss(x, y, reduction="none")
labels = torch.tensor([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
c = F.multilabel_soft_margin_loss(x, labels)
d = nn.MultiLabelSoftMarginLoss(weight=torch.tensor([1.0, 2.0, 0.5]), reduction="sum")(x, labels)
print(a, b, c, d, sep="\\n")
print(a.grad_fn.name(), c.grad_fn.name(), c.grad_fn.next_functions[0][0].name())
(a + b.sum() + c + d).backward()
print(x.grad)
""",
)
S(
    "loss-cosine-embedding",
    """
import torch
import torch.nn as nn
import torch.nn.functional as F
a = torch.tensor([[0.2, -0.7, 1.3], [1.0, 2.0, 3.0], [0.5, 0.5, 0.0]], requires_grad=True)
b = torch.tensor([[0.5, -0.1, 0.3], [0.0, 1.0, -1.0], [1.0, 1.0, 0.0]], requires_grad=True)
y = torch.tensor([1.0, -1.0, -1.0])
l1 = F.cosine_embedding_loss(a, b, y)
l2 = F.cosine_embedding_loss(a, b, y, margin=0.2, reduction="none")
print(l1, l2, sep="\\n")
add = l1.grad_fn.next_functions[0][0]
print(add.name(), [f.name() for f, _ in add.next_functions])
clamp = add.next_functions[1][0].next_functions[0][0]
print(clamp.name(), clamp.next_functions[0][0].name())
(l1 + l2.sum()).backward()
print(a.grad, b.grad, sep="\\n")
print(nn.CosineEmbeddingLoss(margin=0.1)(a, b, y), nn.CosineEmbeddingLoss())
""",
)
S(
    "loss-poisson-gaussian-nll",
    """
import torch
import torch.nn as nn
import torch.nn.functional as F
x = torch.tensor([0.2, -0.7, 1.3, 0.5], requires_grad=True)
t = torch.tensor([1.0, 0.0, 3.0, 2.0])
a = F.poisson_nll_loss(x, t)
b = F.poisson_nll_loss(x.exp(), t, log_input=False, reduction="sum")
c = F.poisson_nll_loss(x, t, full=True, reduction="none")
var = torch.tensor([0.5, 1.0, 2.0, 0.1], requires_grad=True)
d = F.gaussian_nll_loss(x, t, var)
e = F.gaussian_nll_loss(x, t, 0.5, full=True, reduction="sum")
print(a, b, c, d, e, sep="\\n")
print(a.grad_fn.name(), d.grad_fn.name(), d.grad_fn.next_functions[0][0].name())
(a + b + c.sum() + d + e).backward()
print(x.grad, var.grad)
print(nn.PoissonNLLLoss(), nn.GaussianNLLLoss(), nn.GaussianNLLLoss(full=True)(x, t, var))
for v in (-1.0, torch.tensor([1.0, -1.0, 1.0, 1.0]), torch.ones(3)):
    try:
        F.gaussian_nll_loss(x, t, v)
    except ValueError as ex:
        print(ex)
""",
)
S(
    "loss-act-log-softmax-module",
    """
import torch
import torch.nn as nn
x = torch.tensor([[1.0, 2.0, 0.5], [3.0, 5.0, -1.0]], requires_grad=True)
a = nn.LogSoftmax(dim=1)(x)
b = nn.LogSoftmax(dim=0)(x)
c = nn.Softmax2d()(x.reshape(3, 2, 1))
print(a, b, c, nn.LogSoftmax(), nn.LogSoftmax(dim=1), nn.Softmax2d(), sep="\\n")
loss = nn.NLLLoss()(a, torch.tensor([2, 0]))
(loss + b[0].sum() + c[0].sum()).backward()
print(loss, x.grad)
try:
    nn.Softmax2d()(x)
except ValueError as e:
    print(e)
""",
)
S(
    "loss-pad-constant",
    """
import torch
import torch.nn.functional as F
x = torch.arange(6.0).reshape(2, 3).requires_grad_()
a = F.pad(x, (1, 2))
b = F.pad(x, (1, 1, 2, 0), value=-1.5)
c = F.pad(x, (-1, 1))
d = F.pad(x, [0, 0, 1, 1])
print(a, b, c, d, sep="\\n")
print(a.grad_fn.name(), F.pad(torch.tensor([1, 2]), (1, 1), value=2.7))
(a.sum() + (b * b).sum() + (c * 3).sum() + d.sum()).backward()
print(x.grad)
for args in [((1,),), ((1, 1, 1, 1, 1, 1),), ((-4, 0),), ((1.5, 1),)]:
    try:
        F.pad(x, *args)
    except Exception as e:
        print(type(e).__name__, e)
""",
)
S(
    "loss-pad-other-modes",
    """
import torch
import torch.nn.functional as F
y = F.pad(torch.ones(1, 2, 3), (1, 1), mode="reflect")
""",
    unsupported=True,
)

# ***** attention *****

SDPA_REPR = (
    "the outputs hold values near 0, printed in scientific notation, where the matmuls' "
    "summation order shows in the 5th digit; their values are compared to tolerance"
)

S(
    "loss-sdpa-fused-4d",
    """
import torch
import torch.nn.functional as F
q = torch.randn(2, 2, 3, 4, requires_grad=True)
k = torch.randn(2, 2, 5, 4, requires_grad=True)
v = torch.randn(2, 2, 5, 4, requires_grad=True)
a = F.scaled_dot_product_attention(q, k, v)
b = F.scaled_dot_product_attention(q, k, v, scale=0.3)
print(a.shape, a.grad_fn.name(), [f.name() for f, _ in a.grad_fn.next_functions])
(a * torch.arange(16.0).reshape(4, 4)[:3]).sum().backward()
""",
    skip=(
        "a.repr",
        "b.repr",
    ),
    why=SDPA_REPR,
)
S(
    "loss-sdpa-fused-masks",
    """
import torch
import torch.nn.functional as F
q = torch.randn(1, 2, 4, 3, requires_grad=True)
k = torch.randn(1, 2, 4, 3, requires_grad=True)
v = torch.randn(1, 2, 4, 3, requires_grad=True)
causal = F.scaled_dot_product_attention(q, k, v, is_causal=True)
keep = torch.tensor([[True, False, True, True]] * 4)
masked = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
bias = F.scaled_dot_product_attention(q, k, v, attn_mask=torch.linspace(-1, 1, 16).reshape(4, 4))
both = F.scaled_dot_product_attention(q, k, v, attn_mask=keep, is_causal=True)
print(causal.grad_fn.name(), masked.shape)
(causal.sum() + (masked * 2).sum() + bias.sum() + both.sum()).backward()
try:
    F.scaled_dot_product_attention(q[0], k[0], v[0], attn_mask=keep, is_causal=True)
except RuntimeError as e:
    print(e)
""",
    skip=(
        "causal.repr",
        "masked.repr",
        "bias.repr",
        "both.repr",
    ),
    why=SDPA_REPR,
)
S(
    "loss-sdpa-math-3d",
    """
import torch
import torch.nn.functional as F
q = torch.randn(2, 3, 4, requires_grad=True)
k = torch.randn(2, 5, 4, requires_grad=True)
v = torch.randn(2, 5, 4, requires_grad=True)
a = F.scaled_dot_product_attention(q, k, v)
c = F.scaled_dot_product_attention(q, k, v, is_causal=True)
bmm = a.grad_fn.next_functions[0][0]
softmax = bmm.next_functions[0][0].next_functions[0][0].next_functions[0][0]
print(a.grad_fn.name(), bmm.name(), softmax.name())
(a.sum() + (c * c).sum()).backward()
two = F.scaled_dot_product_attention(q[0], k[0], v[0])
print(two.grad_fn.name())
""",
    skip=(
        "a.repr",
        "c.repr",
        "two.repr",
    ),
    why=SDPA_REPR,
)
