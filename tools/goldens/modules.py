"""Modules and training plumbing: Module's tree and state_dict, containers, layers (Embedding,
LayerNorm, BatchNorm1d, the RNN cells), nn.init, gradient clipping, optimizers and their
state, learning-rate schedulers."""

from __future__ import annotations

from tools.goldens import collect

SNIPPETS: list[dict] = []
S = collect(SNIPPETS)

# ***** the module tree *****

S(
    "mod-state-dict-sequential",
    """
import torch
import torch.nn as nn
model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
sd = model.state_dict()
print(type(sd).__name__, list(sd.keys()))
print(sd)
print(sd["0.weight"].requires_grad, sd["0.weight"].grad_fn)
w = sd["2.bias"]
""",
)
S(
    "mod-state-dict-named",
    """
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 2)
        self.fc2 = nn.Linear(2, 1, bias=False)
    def forward(self, x):
        return self.fc2(self.fc1(x).relu())
net = Net()
print(list(net.state_dict()))
print(net.state_dict(prefix="net."))
print(list(net.state_dict(keep_vars=True).values())[0].requires_grad)
""",
)
S(
    "mod-load-state-dict",
    """
import torch
import torch.nn as nn
a = nn.Linear(2, 2)
b = nn.Linear(2, 2)
result = b.load_state_dict(a.state_dict())
print(result)
print(b.weight)
print(torch.equal(a.weight, b.weight), b.weight._version, b.weight.requires_grad)
print(type(result).__name__, result.missing_keys, result.unexpected_keys)
""",
)
S(
    "mod-load-state-dict-missing-unexpected",
    """
import torch
import torch.nn as nn
m = nn.Linear(2, 1)
sd = {"weight": torch.zeros(1, 2), "extra": torch.ones(1)}
print(m.load_state_dict(sd, strict=False))
print(m.weight)
m.load_state_dict(sd)
""",
)
S(
    "mod-load-state-dict-nested-errors",
    """
import torch
import torch.nn as nn
model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
sd = model.state_dict()
del sd["1.bias"]
sd["2.weight"] = torch.ones(1)
sd["0.weight"] = torch.ones(3, 3)
model.load_state_dict(sd)
""",
)
S(
    "mod-load-state-dict-size-mismatch",
    """
import torch
import torch.nn as nn
m = nn.Linear(2, 1)
m.load_state_dict({"weight": torch.ones(2, 2), "bias": torch.ones(1)})
""",
)
S(
    "mod-named-modules-children",
    """
import torch
import torch.nn as nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.act = nn.Tanh()
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.head = nn.Sequential(nn.Linear(2, 1), nn.Sigmoid())
net = Net()
print([name for name, _ in net.named_modules()])
print([type(m).__name__ for m in net.modules()])
print([name for name, _ in net.named_children()])
print([type(m).__name__ for m in net.children()])
print([name for name, _ in net.named_parameters()])
print([name for name, _ in net.named_parameters(recurse=False)])
print([name for name, _ in net.block.named_parameters(prefix="block")])
print(net.get_submodule("head.0"))
""",
)
S(
    "mod-shared-layer-counted-once",
    """
import torch
import torch.nn as nn
shared = nn.Linear(2, 2)
model = nn.Sequential(shared, nn.ReLU(), shared)
print([n for n, _ in model.named_parameters()])
print(len(list(model.modules())), list(model.state_dict()))
print(sum(p.numel() for p in model.parameters()))
""",
)
S(
    "mod-parameter-counting",
    """
import torch
import torch.nn as nn
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
print(sum(p.numel() for p in model.parameters()))
model[0].weight.requires_grad_(False)
print(sum(p.numel() for p in model.parameters() if p.requires_grad))
print([n for n, p in model.named_parameters() if not p.requires_grad])
print(model.requires_grad_(False) is model, [p.requires_grad for p in model.parameters()])
""",
)
S(
    "mod-train-eval",
    """
import torch
import torch.nn as nn
model = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.ReLU(), nn.Linear(2, 1)))
print(model.training, model[1][1].training)
print(model.eval() is model, model.training, model[1].training, model[1][1].training)
model[1].train()
print(model.training, model[1].training, model[1][0].training)
model.train(False)
print([m.training for m in model.modules()])
model.train("yes")
""",
)
S(
    "mod-apply-init",
    """
import torch
import torch.nn as nn
def init(m):
    print("visit", type(m).__name__)
    if isinstance(m, nn.Linear):
        with torch.no_grad():
            m.weight.fill_(0.5)
            m.bias.zero_()
model = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Sequential(nn.Linear(2, 1)))
print(model.apply(init) is model)
print(model[0].weight, model[2][0].bias)
""",
)
S(
    "mod-add-module-register",
    """
import torch
import torch.nn as nn
m = nn.Module()
m.add_module("fc", nn.Linear(1, 2))
m.register_module("act", nn.ReLU())
m.register_parameter("scale", nn.Parameter(torch.ones(2)))
print(m)
print([n for n, _ in m.named_parameters()])
print(m.fc, m.scale)
m.add_module("a.b", nn.ReLU())
""",
)
S(
    "mod-add-module-errors",
    """
import torch
import torch.nn as nn
m = nn.Linear(1, 1)
for bad in [lambda: m.add_module(3, nn.ReLU()), lambda: m.add_module("", nn.ReLU()),
            lambda: m.add_module("weight", nn.ReLU()), lambda: m.add_module("x", 5)]:
    try:
        bad()
    except Exception as e:
        print(type(e).__name__, e)
""",
)
S(
    "mod-register-buffer",
    """
import torch
import torch.nn as nn
class Scaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.tensor([1.0, 2.0]))
        self.register_buffer("scratch", torch.zeros(2), persistent=False)
        self.w = nn.Parameter(torch.ones(2))
    def forward(self, x):
        return (x - self.mean) * self.w
s = Scaler()
print([n for n, _ in s.named_buffers()], list(s.buffers()))
print(s.state_dict())
print([n for n, _ in s.named_parameters()])
y = s(torch.tensor([3.0, 5.0]))
y.sum().backward()
print(y, s.w.grad, s.mean.requires_grad)
s.mean = torch.tensor([0.0, 0.0])
print(s.mean, list(s.buffers()))
s.mean = 3
""",
)
S(
    "mod-register-buffer-errors",
    """
import torch
import torch.nn as nn
m = nn.Linear(1, 1)
for bad in [lambda: m.register_buffer("weight", torch.ones(1)),
            lambda: m.register_buffer("a.b", torch.ones(1)),
            lambda: m.register_buffer("b", [1.0])]:
    try:
        bad()
    except Exception as e:
        print(type(e).__name__, e)
""",
)
S(
    "mod-assign-errors",
    """
import torch
import torch.nn as nn
m = nn.Linear(2, 1)
for bad in [lambda: setattr(m, "weight", torch.ones(1, 2)), lambda: setattr(m, "bias", 1.5)]:
    try:
        bad()
    except TypeError as e:
        print(e)
m.bias = None
print(m, [n for n, _ in m.named_parameters()], list(m.state_dict()))
seq = nn.Sequential(nn.ReLU())
try:
    seq[0] = "relu"
except TypeError as e:
    print(e)
print(m.nope)
""",
)
S(
    "mod-delattr-and-plain-attributes",
    """
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        self.note = "set before init"
        super().__init__()
        self.fc = nn.Linear(1, 1)
        self.k = 3
net = Net()
print(net.note, net.k, net)
del net.fc
print(net, list(net.parameters()))
""",
)
S(
    "mod-forward-missing",
    """
import torch
import torch.nn as nn
class NoForward(nn.Module):
    pass
NoForward()(torch.ones(1))
""",
)
S(
    "mod-repr-nested",
    """
import torch
import torch.nn as nn
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
        self.out = nn.Linear(2, 2, bias=False)
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = Encoder()
        self.heads = nn.ModuleDict({"a": nn.Linear(2, 1), "b": nn.Identity()})
print(Model())
print(nn.Module(), nn.Sequential(), nn.ModuleList())
""",
)

# ***** containers *****

S(
    "mod-sequential-indexing",
    """
import torch
import torch.nn as nn
model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
print(len(model), model[0], model[-1])
print(model[1:])
print([type(m).__name__ for m in model])
model.append(nn.Sigmoid())
print(model)
model.insert(1, nn.Tanh())
print(model)
del model[1]
print(model, len(model))
print(model.pop(-1), len(model))
model[1] = nn.Tanh()
print(model)
model[7]
""",
)
S(
    "mod-sequential-ordereddict",
    """
import torch
import torch.nn as nn
from collections import OrderedDict
layers = [("hidden", nn.Linear(2, 2)), ("act", nn.ReLU()), ("out", nn.Linear(2, 1))]
model = nn.Sequential(OrderedDict(layers))
print(model)
print(model.hidden, model[2])
print(list(model.state_dict()))
x = torch.tensor([[1.0, -1.0]])
y = model(x)
""",
)
S(
    "mod-sequential-extend",
    """
import torch
import torch.nn as nn
a = nn.Sequential(nn.Linear(1, 2))
a.extend(nn.Sequential(nn.ReLU(), nn.Linear(2, 1)))
print(a)
""",
)
S(
    "mod-modulelist",
    """
import torch
import torch.nn as nn
layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
print(layers)
print(len(layers), layers[0], layers[-1] is layers[2])
layers.append(nn.ReLU())
layers.extend([nn.Linear(2, 1)])
print(layers)
print([n for n, _ in layers.named_parameters()])
print(layers[1:3])
x = torch.tensor([[1.0, 2.0]])
for layer in layers:
    x = layer(x)
print(x)
layers.insert(0, nn.Tanh())
print([type(m).__name__ for m in layers])
del layers[0]
print([type(m).__name__ for m in layers])
layers[10]
""",
)
S(
    "mod-modulelist-in-module",
    """
import torch
import torch.nn as nn
class Stack(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(2, 2) for _ in range(n))
    def forward(self, x):
        for block in self.blocks:
            x = block(x).tanh()
        return x
net = Stack(2)
print(net)
y = net(torch.tensor([[0.5, -0.5]]))
y.sum().backward()
print(y)
print(net.blocks[0].weight.grad)
""",
)
S(
    "mod-moduledict",
    """
import torch
import torch.nn as nn
d = nn.ModuleDict({"lin": nn.Linear(2, 2), "act": nn.ReLU()})
d["out"] = nn.Linear(2, 1)
print(d)
print(list(d.keys()), len(d), "act" in d, "x" in d)
print([type(v).__name__ for v in d.values()], [k for k, _ in d.items()])
print([n for n, _ in d.named_parameters()])
print(d.pop("act"), list(d))
print(d["missing"])
""",
)
S(
    "mod-flatten-unflatten",
    """
import torch
import torch.nn as nn
x = torch.arange(24.0).reshape(2, 3, 4).requires_grad_()
f = nn.Flatten()
y = f(x)
print(f, y.shape, y.grad_fn.name())
z = nn.Flatten(0, 1)(x)
print(z.shape)
u = nn.Unflatten(1, (2, 6))(y)
print(nn.Unflatten(1, (2, 6)), u.shape, u.grad_fn.name())
u.sum().backward()
print(x.grad.shape)
i = nn.Identity(54, unused="x")
print(i, i(x) is x)
""",
)

# ***** nn.init and gradient clipping *****

S(
    "mod-init-uniform-normal-constant",
    """
import torch
import torch.nn as nn
w = torch.empty(2, 3)
print(nn.init.uniform_(w) is w, w)
print(nn.init.uniform_(w, -0.5, 0.5))
print(nn.init.normal_(w))
print(nn.init.normal_(torch.empty(20), mean=1.0, std=0.1))
print(nn.init.constant_(w, 0.3), nn.init.zeros_(w), nn.init.ones_(w), w._version)
d = nn.init.normal_(torch.empty(3, dtype=torch.float64), 0.0, 2.0)
""",
)
S(
    "mod-init-xavier-kaiming",
    """
import torch
import torch.nn as nn
w = torch.empty(3, 5)
print(nn.init.xavier_uniform_(w))
print(nn.init.xavier_uniform_(w, gain=nn.init.calculate_gain("relu")))
print(nn.init.xavier_normal_(w))
print(nn.init.kaiming_uniform_(w))
print(nn.init.kaiming_uniform_(w, a=0.1, mode="fan_out", nonlinearity="leaky_relu"))
print(nn.init.kaiming_normal_(w, nonlinearity="relu"))
print(nn.init.kaiming_normal_(torch.empty(4, 2, 3), mode="fan_out"))
print(nn.init.eye_(torch.empty(2, 3)))
""",
)
S(
    "mod-init-layer-weights",
    """
import torch
import torch.nn as nn
layer = nn.Linear(4, 3)
print(layer.weight._version, layer.bias._version)
nn.init.xavier_uniform_(layer.weight)
nn.init.zeros_(layer.bias)
print(layer.weight, layer.bias, layer.weight._version)
print(layer.weight.requires_grad, layer.weight.is_leaf, layer.weight.grad_fn)
y = layer(torch.ones(1, 4))
""",
)
S(
    "mod-init-calculate-gain",
    """
import torch
import torch.nn as nn
for name in ["linear", "conv2d", "sigmoid", "tanh", "relu", "leaky_relu", "selu"]:
    print(name, nn.init.calculate_gain(name))
print(nn.init.calculate_gain("leaky_relu", 0.2), nn.init.calculate_gain("leaky_relu", 1))
for bad in [lambda: nn.init.calculate_gain("gelu"),
            lambda: nn.init.calculate_gain("leaky_relu", True),
            lambda: nn.init.xavier_uniform_(torch.empty(3)), lambda: nn.init.eye_(torch.empty(3)),
            lambda: nn.init.kaiming_uniform_(torch.empty(2, 2), mode="fan_avg")]:
    try:
        bad()
    except ValueError as e:
        print(e)
""",
)
S(
    "mod-clip-grad-norm",
    """
import torch
import torch.nn as nn
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
x = torch.randn(5, 3)
loss = (model(x) ** 2).sum() * 10
loss.backward()
total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
print(total, total.dtype, total.requires_grad)
print([p.grad for p in model.parameters()])
again = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
print(again)
grads = [p.grad for p in model.parameters()]
""",
)
S(
    "mod-clip-grad-norm-small-and-inf",
    """
import torch
import torch.nn as nn
w = torch.tensor([0.3, -0.4], requires_grad=True)
(w * torch.tensor([0.1, 0.2])).sum().backward()
print(nn.utils.clip_grad_norm_([w], 5.0), w.grad)
print(nn.utils.clip_grad_norm_(w, 0.1, norm_type=float("inf")), w.grad)
v = torch.zeros(2, requires_grad=True)
print(nn.utils.clip_grad_norm_([v], 1.0))
print(nn.utils.clip_grad_norm_([], 1.0))
""",
)
S(
    "mod-clip-grad-value",
    """
import torch
import torch.nn as nn
w = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
(w * torch.tensor([0.5, -3.0, 0.05])).sum().backward()
print(nn.utils.clip_grad_value_([w], clip_value=0.4), w.grad, w.grad._version)
""",
)
S(
    "mod-clip-grad-norm-in-training",
    """
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 4), torch.randn(8, 1)
for step in range(3):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y) * 50
    loss.backward()
    norm = nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    opt.step()
    print(step, f"{loss.item():.3f} {norm.item():.3f}")
print(model.weight, model.bias)
""",
)
