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

# ***** optimizers *****

_TRAIN = """
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
x, y = torch.randn(6, 3), torch.randn(6, 1)
opt = {make}
for step in range(4):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).sum()
    loss.backward()
    opt.step()
print(model[0].weight)
print(model[2].weight, model[2].bias)
print(list(opt.state_dict()["state"][3].keys()), opt.state_dict()["param_groups"])
params = list(model.parameters())
"""
for slug, name, options in [
    ("mod-optim-sgd-momentum-dampening", "SGD", "lr=0.05, momentum=0.9, dampening=0.1"),
    (
        "mod-optim-sgd-nesterov-decay",
        "SGD",
        "lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1",
    ),
    ("mod-optim-sgd-maximize", "SGD", "lr=0.01, maximize=True"),
    ("mod-optim-adam-amsgrad", "Adam", "lr=0.05, amsgrad=True, weight_decay=0.01"),
    ("mod-optim-adamw", "AdamW", "lr=0.05"),
    (
        "mod-optim-adamw-amsgrad",
        "AdamW",
        "lr=0.02, betas=(0.8, 0.9), weight_decay=0.3, amsgrad=True",
    ),
    ("mod-optim-adam-decoupled", "Adam", "lr=0.05, weight_decay=0.1, decoupled_weight_decay=True"),
    ("mod-optim-rmsprop", "RMSprop", "lr=0.01"),
    (
        "mod-optim-rmsprop-centered-momentum",
        "RMSprop",
        "lr=0.01, alpha=0.9, momentum=0.5, centered=True, weight_decay=0.01",
    ),
    ("mod-optim-adagrad", "Adagrad", "lr=0.1"),
    (
        "mod-optim-adagrad-decay",
        "Adagrad",
        "lr=0.1, lr_decay=0.01, weight_decay=0.05, initial_accumulator_value=0.1",
    ),
]:
    S(slug, _TRAIN.replace("{make}", f"torch.optim.{name}(model.parameters(), {options})"))

S(
    "mod-optim-param-groups",
    """
import torch
import torch.nn as nn
model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
opt = torch.optim.SGD([
    {"params": model[0].parameters()},
    {"params": model[1].parameters(), "lr": 0.5},
], lr=0.1, momentum=0.9)
print(len(opt.param_groups), [list(g.keys()) for g in opt.param_groups])
print([g["lr"] for g in opt.param_groups], opt.defaults)
print(opt)
for name in ["RMSprop", "Adagrad", "AdamW", "Adam"]:
    o = getattr(torch.optim, name)(model.parameters())
    print(name, {k: v for k, v in o.param_groups[0].items() if k != "params"})
""",
)
S(
    "mod-optim-add-param-group",
    """
import torch
import torch.nn as nn
a, b = nn.Linear(2, 2), nn.Linear(2, 1)
opt = torch.optim.Adam(a.parameters(), lr=0.01)
opt.add_param_group({"params": b.parameters(), "lr": 0.1})
print([g["lr"] for g in opt.param_groups], [len(g["params"]) for g in opt.param_groups])
print(list(opt.param_groups[1].keys()))
for bad in [lambda: opt.add_param_group({"params": a.weight}),
            lambda: opt.add_param_group({"params": {b.bias}}),
            lambda: torch.optim.SGD(a.weight, lr=0.1),
            lambda: torch.optim.SGD([a.weight * 2], lr=0.1),
            lambda: torch.optim.SGD([a.weight], lr=-1),
            lambda: torch.optim.SGD([a.weight], nesterov=True),
            lambda: torch.optim.Adam([a.weight], betas=(1.0, 0.9)),
            lambda: torch.optim.Adam([a.weight], eps=-1),
            lambda: torch.optim.RMSprop([a.weight], alpha=-0.5),
            lambda: torch.optim.Adagrad([a.weight], lr_decay=-1)]:
    try:
        bad()
    except (ValueError, TypeError) as e:
        print(type(e).__name__, e)
""",
)
S(
    "mod-optim-state-dict",
    """
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Linear(2, 1)
opt = torch.optim.Adam(model.parameters(), lr=0.1)
print(opt.state_dict())
model(torch.ones(3, 2)).sum().backward()
opt.step()
sd = opt.state_dict()
print(sd)
print(sd["state"][0]["exp_avg"] is opt.state[model.weight]["exp_avg"])
sgd = torch.optim.SGD(model.parameters(), lr=0.1)
sgd.step()
print(sgd.state_dict())
mom = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
mom.step()
print(mom.state_dict()["state"])
print(torch.optim.Adagrad(model.parameters()).state_dict()["state"])
""",
)
S(
    "mod-optim-load-state-dict",
    """
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Linear(2, 1)
opt = torch.optim.Adam(model.parameters(), lr=0.1)
x = torch.tensor([[1.0, 2.0], [0.5, -1.0]])
model(x).sum().backward()
opt.step()
saved = opt.state_dict()
fresh = torch.optim.Adam(model.parameters(), lr=0.5)
fresh.load_state_dict(saved)
print(fresh.param_groups[0]["lr"], list(fresh.param_groups[0].keys())[-1])
print(fresh.state[model.weight])
print(fresh.state[model.weight]["exp_avg"] is opt.state[model.weight]["exp_avg"])
fresh.step()
print(model.weight, model.bias)
try:
    torch.optim.Adam([model.weight]).load_state_dict(saved)
except ValueError as e:
    print(e)
two = torch.optim.Adam([{"params": [model.weight]}, {"params": [model.bias]}])
try:
    two.load_state_dict(saved)
except ValueError as e:
    print(e)
""",
)
S(
    "mod-optim-train-classifier-steps",
    """
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 3))
x = torch.randn(12, 2)
labels = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2])
opt = torch.optim.AdamW(model.parameters(), lr=0.05)
loss_fn = nn.CrossEntropyLoss()
for epoch in range(5):
    opt.zero_grad()
    loss = loss_fn(model(x), labels)
    loss.backward()
    opt.step()
    print(epoch, f"{loss.item():.4f}")
for name, p in model.named_parameters():
    print(name, p)
""",
)

# ***** learning-rate schedulers *****

S(
    "mod-sched-steplr",
    """
import torch
w = torch.nn.Parameter(torch.ones(1))
opt = torch.optim.SGD([w], lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
print(sched.get_last_lr(), opt.param_groups[0]["initial_lr"], sched.last_epoch)
for epoch in range(6):
    w.sum().backward()
    opt.step()
    sched.step()
    print(epoch, sched.get_last_lr(), opt.param_groups[0]["lr"])
print(w)
print(sorted(sched.state_dict()))
print(list(opt.param_groups[0].keys()))
""",
)
S(
    "mod-sched-exponential-multistep",
    """
import torch
w = torch.nn.Parameter(torch.ones(1))
opt = torch.optim.SGD([w], lr=1.0)
exp = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
lrs = []
for _ in range(5):
    opt.step()
    exp.step()
    lrs.append(exp.get_last_lr()[0])
print(lrs)
opt2 = torch.optim.Adam([w], lr=0.3)
multi = torch.optim.lr_scheduler.MultiStepLR(opt2, milestones=[2, 4, 4], gamma=0.1)
out = []
for _ in range(6):
    opt2.step()
    multi.step()
    out.append(multi.get_last_lr())
print(out, multi.milestones)
""",
)
S(
    "mod-sched-lambdalr-groups",
    """
import torch
a = torch.nn.Parameter(torch.ones(1))
b = torch.nn.Parameter(torch.ones(1))
opt = torch.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.2}], lr=0.1)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda=lambda epoch: 0.95 ** epoch)
for _ in range(3):
    opt.step()
    sched.step()
print(sched.get_last_lr(), sched.base_lrs)
both = torch.optim.lr_scheduler.LambdaLR(opt, [lambda e: 1 / (e + 1), lambda e: e])
print(both.get_last_lr())
print(both.state_dict()["lr_lambdas"])
try:
    torch.optim.lr_scheduler.LambdaLR(opt, [lambda e: 1.0])
except ValueError as e:
    print(e)
try:
    torch.optim.lr_scheduler.StepLR("opt", 1)
except TypeError as e:
    print(e)
""",
)
S(
    "mod-sched-cosine",
    """
import torch
w = torch.nn.Parameter(torch.ones(1))
opt = torch.optim.SGD([w], lr=0.1)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4, eta_min=0.01)
lrs = [sched.get_last_lr()[0]]
for _ in range(10):
    opt.step()
    sched.step()
    lrs.append(sched.get_last_lr()[0])
print(lrs)
""",
)
S(
    "mod-sched-step-order-warning",
    """
import torch
import warnings
w = torch.nn.Parameter(torch.ones(1))
opt = torch.optim.SGD([w], lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    sched.step()
    opt.step()
    sched.step()
    sched.get_lr()
for w_ in caught:
    print(w_.category.__name__, w_.message)
print(sched.get_last_lr())
""",
)
S(
    "mod-sched-train-loop",
    """
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Linear(3, 1)
x, y = torch.randn(10, 3), torch.randn(10, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
for epoch in range(5):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).sum()
    loss.backward()
    opt.step()
    sched.step()
    print(epoch, f"{loss.item():.4f}", sched.get_last_lr())
print(model.weight, model.bias)
""",
)

# ***** layers: Embedding, LayerNorm, BatchNorm1d *****

S(
    "mod-embedding",
    """
import torch
import torch.nn as nn
emb = nn.Embedding(5, 3)
print(emb, emb.weight, emb.weight._version)
idx = torch.tensor([[0, 2, 2], [4, 1, 0]])
out = emb(idx)
print(out.shape, out.grad_fn.name())
(out * torch.arange(18.0).reshape(2, 3, 3)).sum().backward()
print(emb.weight.grad)
""",
)
S(
    "mod-embedding-padding",
    """
import torch
import torch.nn as nn
emb = nn.Embedding(4, 2, padding_idx=-1)
print(emb, emb.padding_idx, emb.weight, emb.weight._version)
out = emb(torch.tensor([3, 1, 3]))
out.sum().backward()
print(emb.weight.grad)
print(list(emb.state_dict()), emb.weight.requires_grad)
frozen = nn.Embedding.from_pretrained(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
print(frozen, frozen.weight.requires_grad, frozen(torch.tensor([1])))
nn.Embedding(3, 2, padding_idx=3)
""",
)
S(
    "mod-layernorm",
    """
import torch
import torch.nn as nn
ln = nn.LayerNorm(4)
print(ln, [n for n, _ in ln.named_parameters()], ln.weight, ln.bias, ln.weight._version)
x = torch.randn(3, 4, requires_grad=True)
y = ln(x)
(y * torch.arange(12.0).reshape(3, 4)).sum().backward()
w_grad, b_grad = ln.weight.grad, ln.bias.grad
""",
)
S(
    "mod-layernorm-shapes",
    """
import torch
import torch.nn as nn
x = torch.randn(2, 3, 4, requires_grad=True)
ln2 = nn.LayerNorm((3, 4), eps=1e-3)
y = ln2(x)
plain = nn.LayerNorm(4, elementwise_affine=False)
z = plain(x)
nobias = nn.LayerNorm(4, bias=False)
u = nobias(x)
(y.sum() + (z * z).sum() + (u ** 3).sum()).backward()
print(ln2, plain, nobias, list(plain.parameters()), list(nobias.state_dict()))
ln2(torch.ones(2, 4))
""",
)
S(
    "mod-batchnorm-train-eval",
    """
import torch
import torch.nn as nn
bn = nn.BatchNorm1d(3)
print(bn, bn.running_mean, bn.running_var, bn.num_batches_tracked)
print(list(bn.state_dict()), [n for n, _ in bn.named_buffers()])
print(bn.running_mean._version, bn.num_batches_tracked._version)
x = torch.randn(5, 3, requires_grad=True)
y = bn(x)
(y * torch.arange(15.0).reshape(5, 3)).sum().backward()
print(bn.running_mean, bn.running_var, bn.num_batches_tracked)
print(bn.running_mean._version, bn.num_batches_tracked._version)
y2 = bn(x * 2)
print(bn.running_mean, bn.running_var, bn.num_batches_tracked)
bn.eval()
z = bn(x)
z.sum().backward()
print(bn.running_mean, bn.num_batches_tracked)
w_grad = bn.weight.grad
""",
)
S(
    "mod-batchnorm-options",
    """
import torch
import torch.nn as nn
x = torch.randn(4, 2, 3, requires_grad=True)
bn = nn.BatchNorm1d(2, momentum=None, affine=False)
y = bn(x)
bn(x + 1)
print(bn, bn.running_mean, bn.running_var, list(bn.state_dict()))
free = nn.BatchNorm1d(2, track_running_stats=False)
free.eval()
z = free(x)
(y.sum() + (z * z).sum()).backward()
print(free, free.running_mean, list(free.state_dict()))
try:
    nn.BatchNorm1d(3)(torch.ones(1, 3))
except ValueError as e:
    print(e)
nn.BatchNorm1d(3)(torch.ones(2, 3, 4, 5))
""",
)
S(
    "mod-batchnorm-training-loop",
    """
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 1))
print(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, t = torch.randn(8, 3), torch.randn(8, 1)
for _ in range(3):
    opt.zero_grad()
    loss = ((model(x) - t) ** 2).mean()
    loss.backward()
    opt.step()
print(model[1].running_mean, model[1].running_var, model[1].weight)
model.eval()
pred = model(x[:2])
print(list(model.state_dict()))
""",
)

# ***** recurrent cells and layers *****

S(
    "mod-rnncell",
    """
import torch
import torch.nn as nn
cell = nn.RNNCell(3, 2)
print(cell, [n for n, _ in cell.named_parameters()])
print(cell.weight_ih, cell.bias_hh)
x = torch.randn(4, 3)
h = cell(x)
h2 = cell(x, h)
h2.sum().backward()
grads = [p.grad for p in cell.parameters()]
single = cell(torch.randn(3))
print(nn.RNNCell(3, 2, bias=False, nonlinearity="relu"))
""",
)
S(
    "mod-rnncell-relu-no-bias",
    """
import torch
import torch.nn as nn
cell = nn.RNNCell(2, 3, bias=False, nonlinearity="relu")
x = torch.tensor([[1.0, -2.0], [0.5, 0.5]])
h0 = torch.tensor([[0.1, -0.2, 0.3], [0.0, 0.2, -0.1]], requires_grad=True)
h = cell(x, h0)
(h * h).sum().backward()
print([n for n, _ in cell.named_parameters()])
hgrad = h0.grad
cell(torch.ones(3, 4))
""",
)
S(
    "mod-grucell",
    """
import torch
import torch.nn as nn
cell = nn.GRUCell(3, 2)
print(cell, [(n, tuple(p.shape)) for n, p in cell.named_parameters()])
x = torch.randn(2, 3, requires_grad=True)
h = cell(x)
h = cell(x, h)
(h * torch.tensor([[1.0, -1.0], [2.0, 0.5]])).sum().backward()
grads = [p.grad for p in cell.parameters()]
xg = x.grad
""",
)
S(
    "mod-lstmcell",
    """
import torch
import torch.nn as nn
cell = nn.LSTMCell(3, 2)
print(cell, [(n, tuple(p.shape)) for n, p in cell.named_parameters()])
x = torch.randn(4, 3)
h, c = cell(x)
h, c = cell(x, (h, c))
(h.sum() + 0.5 * c.sum()).backward()
grads = [p.grad for p in cell.parameters()]
h1, c1 = cell(torch.randn(3))
print(h1.shape, c1.shape)
""",
)
S(
    "mod-rnn-layer",
    """
import torch
import torch.nn as nn
rnn = nn.RNN(3, 2)
print(rnn, [n for n, _ in rnn.named_parameters()])
x = torch.randn(5, 2, 3)
out, h_n = rnn(x)
print(out.shape, h_n.shape, torch.allclose(out[-1], h_n[0]))
(out.sum() + h_n.sum()).backward()
grads = [p.grad for p in rnn.parameters()]
""",
)
S(
    "mod-rnn-batch-first-two-layers",
    """
import torch
import torch.nn as nn
rnn = nn.RNN(2, 3, num_layers=2, batch_first=True, nonlinearity="relu")
print(rnn, [n for n, _ in rnn.named_parameters()])
x = torch.randn(2, 4, 2)
h0 = torch.zeros(2, 2, 3)
out, h_n = rnn(x, h0)
print(out.shape, h_n.shape)
out.pow(2).sum().backward()
grads = [p.grad for p in rnn.parameters()]
one, h_one = rnn(torch.randn(4, 2))
print(one.shape, h_one.shape)
""",
)
S(
    "mod-lstm-gru-layers",
    """
import torch
import torch.nn as nn
lstm = nn.LSTM(3, 2)
gru = nn.GRU(3, 2, batch_first=True)
print(lstm, gru)
print([n for n, _ in lstm.named_parameters()], [tuple(p.shape) for p in gru.parameters()])
x = torch.randn(4, 2, 3)
out, (h_n, c_n) = lstm(x)
g_out, g_h = gru(x)
(out.sum() + c_n.sum() + g_out.sum()).backward()
lstm_grads = [p.grad for p in lstm.parameters()]
gru_grads = [p.grad for p in gru.parameters()]
print(out.shape, h_n.shape, c_n.shape, g_out.shape, g_h.shape)
""",
    skip=(
        "out.repr",
        "out.grad_fn",
        "out.next_functions",
        "h_n.next_functions",
        "c_n.next_functions",
        *(f"lstm_grads[{i}].repr" for i in range(4)),
    ),
    why="PyTorch runs nn.LSTM on the CPU as one fused oneDNN kernel (MkldnnRnnLayerBackward0, "
    "whose outputs 0, 1, 2 are the sequence, h_n and c_n); the engine builds the same steps "
    "from elementary ops (values and gradients match to float32 rounding: the fused kernel adds "
    "in another order, so a printed gradient can differ in its last digit)",
)
S(
    "mod-rnn-errors",
    """
import torch
import torch.nn as nn
rnn = nn.RNN(3, 2)
for bad in [lambda: rnn(torch.ones(2, 2, 2)),
            lambda: rnn(torch.ones(4, 2, 3), torch.zeros(1, 3, 2)),
            lambda: rnn(torch.ones(2, 2, 2, 3)),
            lambda: nn.RNNCell(3, 2)(torch.ones(1, 1, 3)),
            lambda: nn.RNN(3, 2, nonlinearity="gelu"),
            lambda: rnn(torch.ones(4, 2, 3, dtype=torch.float64))]:
    try:
        bad()
    except (ValueError, RuntimeError) as e:
        print(type(e).__name__, e)
""",
)
S(
    "mod-rnn-sequence-training",
    """
import torch
import torch.nn as nn
torch.manual_seed(0)
class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(6, 3)
        self.rnn = nn.GRU(3, 4, batch_first=True)
        self.out = nn.Linear(4, 2)
    def forward(self, tokens):
        states, _ = self.rnn(self.emb(tokens))
        return self.out(states[:, -1])
model = Tagger()
print(model)
tokens = torch.tensor([[1, 2, 3], [4, 5, 0]])
labels = torch.tensor([0, 1])
opt = torch.optim.Adam(model.parameters(), lr=0.05)
for _ in range(3):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(tokens), labels)
    loss.backward()
    opt.step()
    print(f"{loss.item():.4f}")
print(sum(p.numel() for p in model.parameters()))
logits = model(tokens)
""",
)

# ***** more plumbing: dtype and device, step(closure) *****

S(
    "mod-to-double-cpu",
    """
import torch
import torch.nn as nn
model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
print(model.to("cpu") is model, model.cpu() is model, model.to(torch.device("cpu")) is model)
model[0].weight.sum().backward()
grad = model[0].weight.grad
print(model.double() is model, model[0].weight.dtype, model[1].running_mean.dtype)
print(model[1].num_batches_tracked.dtype, model[0].weight.grad.dtype, model[0].weight.grad is grad)
y = model(torch.tensor([[1.0, 2.0], [3.0, 5.0], [0.0, -1.0]], dtype=torch.float64))
print(y.dtype, model.float()[0].bias.dtype, model.to(torch.float64)[0].bias.dtype)
model.to(torch.int64)
""",
)
S(
    "mod-to-cuda-unsupported",
    """
import torch
import torch.nn as nn
nn.Linear(2, 2).to("cuda")
""",
    unsupported=True,
)
S(
    "mod-optim-step-closure",
    """
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Linear(2, 1)
x, y = torch.randn(4, 2), torch.randn(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
def closure():
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    return loss
with torch.no_grad():
    first = opt.step(closure)
second = opt.step(closure)
print(first.requires_grad, first.grad_fn is not None, f"{first.item():.4f} {second.item():.4f}")
print(opt.step(), model.weight)
""",
)
S(
    "mod-deepcopy-best-weights",
    """
import copy
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))
twin = copy.deepcopy(model)
print(twin, twin[0].weight is model[0].weight, torch.equal(twin[0].weight, model[0].weight))
print(type(twin[0].weight).__name__, twin[0].weight.requires_grad, twin[0].weight.is_leaf)
best = {k: v.clone() for k, v in model.state_dict().items()}
with torch.no_grad():
    model[0].weight.add_(1.0)
print(model[0].weight)
print(model.load_state_dict(best), model[0].weight)
""",
)
