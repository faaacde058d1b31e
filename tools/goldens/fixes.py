"""The engine's last fidelity fixes (issue 9): Python integers past a small integer dtype's
range, in-place activations, sort's and topk's signatures, saved attributes as PyTorch prints
them, writes into views of graph tensors, and double backward."""

from __future__ import annotations

from tools.goldens import collect

SNIPPETS: list[dict] = []
S = collect(SNIPPETS)

# ***** 1. Python integers that do not fit a small integer dtype *****

S(
    "fixes-int8-wraps-operand",
    """
import torch
a = torch.tensor([1, 100, -100], dtype=torch.int8)
print(a + 300, a - 300, a * 300, 300 + a, 300 - a, 300 * a, sep="\\n")
print(a // 300, a % 300, a & 300, a | 300, a ^ 300, sep="\\n")
print(torch.tensor([44], dtype=torch.int8) == 300, torch.tensor([44], dtype=torch.int8) < 300)
u = torch.tensor([1, 200], dtype=torch.uint8)
print(u + 300, u + (-1), u - 2, u + 256, sep="\\n")
s = torch.tensor([1], dtype=torch.int16)
print(s + 70000, s + 2**40, torch.tensor([1]) + 2**63, torch.tensor([1], dtype=torch.int8) + 2**63)
print(torch.tensor([1], dtype=torch.int8) + 300.0, torch.tensor([1], dtype=torch.bool) + 300)
for big in (2**64, -(2**63) - 1):
    try:
        a + big
    except OverflowError as err:
        print("OverflowError:", err)
""",
)
S(
    "fixes-int8-wraps-in-place",
    """
import torch
for dtype in (torch.int8, torch.uint8, torch.int16):
    t = torch.tensor([1, 2], dtype=dtype)
    t += 300
    print(t, t._version)
    t -= 300
    t *= 300
    print(t)
    t.add_(300)
    t.sub_(700)
    t.mul_(300)
    print(t, t._version)
    try:
        t /= 300
    except RuntimeError as err:
        print(err)
""",
)
S(
    "fixes-int8-settings-must-fit",
    """
import torch
a = torch.tensor([1, 2], dtype=torch.int8)
attempts = {
    "pow": lambda: a ** 128,
    "pow_": lambda: a.clone().pow_(300),
    "alpha": lambda: a.add(1, alpha=300),
    "sub alpha": lambda: a.sub(1, alpha=300),
    "fill_": lambda: a.clone().fill_(-129),
    "clamp": lambda: a.clamp(max=300),
    "clamp min": lambda: a.clamp(min=-300),
    "clamp_": lambda: a.clone().clamp_(max=300),
    "masked_fill": lambda: a.masked_fill(torch.tensor([True, False]), 300),
    "uint8 fill_": lambda: torch.tensor([1], dtype=torch.uint8).fill_(256),
    "int16 fill_": lambda: torch.tensor([1], dtype=torch.int16).fill_(2**15),
    "int32 fill_": lambda: torch.tensor([1], dtype=torch.int32).fill_(2**40),
}
for name, attempt in attempts.items():
    try:
        print(name, attempt())
    except RuntimeError as err:
        print(name, "RuntimeError:", err)
print(a ** 127, 300 ** torch.tensor([1], dtype=torch.int8), a.clamp(0, 127))
print(torch.tensor([1], dtype=torch.uint8).fill_(-255), a.clone().fill_(-128))
b = a.clone()
try:
    b[0] = 300
except RuntimeError as err:
    print("setitem RuntimeError:", err)
b[1] = -128
print(b)
""",
)
S(
    "fixes-integer-division-by-zero-and-bool-subtraction",
    """
import torch
attempts = {
    "// 0": lambda: torch.tensor([1]) // 0,
    "% 0": lambda: torch.tensor([1]) % 0,
    "// tensor 0": lambda: torch.tensor([1]) // torch.tensor([0]),
    "- True": lambda: torch.tensor([1.0]) - True,
    "sub(True)": lambda: torch.tensor([1]).sub(True),
    "True -": lambda: True - torch.tensor([1]),
    "- bool tensor": lambda: torch.tensor([1]) - torch.tensor([True]),
    "bool - bool": lambda: torch.tensor([True]) - torch.tensor([True]),
}
for name, attempt in attempts.items():
    try:
        print(name, attempt())
    except RuntimeError as err:
        print(name, "RuntimeError:", err)
print(torch.tensor([1.0]) // 0, torch.tensor([1]) // 0.0, torch.tensor([1]) + True)
""",
)

# ***** 2. activations with inplace=True *****

S(
    "fixes-inplace-activation-modules",
    """
import torch
from torch import nn
torch.manual_seed(0)
layers = [
    nn.ReLU(inplace=True), nn.ReLU(), nn.LeakyReLU(0.1, inplace=True), nn.ELU(inplace=True),
    nn.Hardtanh(inplace=True), nn.ReLU6(inplace=True), nn.SELU(inplace=True),
    nn.Threshold(0.1, 20, inplace=True), nn.Dropout(0.5, inplace=True),
]
for layer in layers:
    x = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    y = x * 2
    z = layer(y)
    nexts = [(type(f).__name__, nr) for f, nr in y.grad_fn.next_functions]
    print(layer, z is y, y._version, y.grad_fn.name(), nexts)
    z.sum().backward()
    print(x.grad)
    try:
        layer(x)
    except RuntimeError as err:
        print(err)
    with torch.no_grad():
        w = torch.tensor([-1.0, 2.0], requires_grad=True)
        layer(w)
    print(w, w._version)
""",
)
S(
    "fixes-inplace-activation-functions",
    """
import torch
import torch.nn.functional as F
calls = {
    "F.relu(y, inplace=True)": lambda y: F.relu(y, inplace=True),
    "F.relu_": F.relu_,
    "torch.relu_": torch.relu_,
    "F.leaky_relu(y, 0.2, True)": lambda y: F.leaky_relu(y, 0.2, True),
    "F.leaky_relu_": lambda y: F.leaky_relu_(y, 0.2),
    "F.elu_": F.elu_,
    "F.selu_": F.selu_,
    "F.celu_": F.celu_,
    "F.hardtanh_": F.hardtanh_,
    "F.threshold_": lambda y: F.threshold_(y, 0.1, 20),
    "dropout p=0": lambda y: F.dropout(y, 0.0, True, True),
    "dropout eval": lambda y: F.dropout(y, 0.5, False, True),
}
for name, call in calls.items():
    x = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    y = x * 2
    z = call(y)
    nexts = [(type(f).__name__, nr) for f, nr in y.grad_fn.next_functions]
    print(name, z is y, y._version, y.grad_fn.name(), nexts, z)
x = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
try:
    F.relu(x[:2], inplace=True)
except RuntimeError as err:
    print(err)
y = x * 1
v = y[:2]
F.relu(v, inplace=True)
print(v.grad_fn.name(), y.grad_fn.name(), v._version, y._version)
y.sum().backward()
print(x.grad)
y = x.sigmoid()
F.relu(y, inplace=True)
try:
    y.sum().backward()
except RuntimeError as err:
    print(err)
""",
)

# ***** 3. sort, argsort, topk, max and min: PyTorch's signatures *****

S(
    "fixes-sort-signatures",
    """
import torch
x = torch.tensor([[3.0, 1.0, 2.0, 1.0], [0.0, 5.0, 4.0, 5.0]], requires_grad=True)
calls = [
    "x.sort(0, True)", "torch.sort(x, 0, True)", "x.sort(dim=0, descending=True)",
    "x.sort(stable=True)", "x.sort(stable=None)", "x.sort(stable=True, descending=True)",
    "torch.sort(x, stable=True, dim=0)", "torch.sort(input=x)", "x.sort(1, True, stable=True)",
    "x.argsort(0, True)", "torch.argsort(x, 0, True)", "x.argsort(stable=True)",
    "torch.argsort(x, stable=True, descending=True)", "x.argsort(dim=0, descending=True)",
    # mistakes: descending given where dim goes, stable given by position
    "torch.sort(x, True)", "x.sort(True)", "x.sort(1, True, True)", "x.sort(-1, True, stable=True)",
    "torch.sort(x, -1, False, True)", "x.sort(1, stable=False)", "x.sort(0, 1)",
    "x.sort(dim=1, dim2=0)", "x.sort(stable=True, foo=1)", "x.sort(0, True, False, False)",
    "torch.argsort(x, True)", "x.argsort(True)", "x.argsort(0, True, True)", "x.argsort(1, 2)",
    "torch.argsort(x, 1, 2)", "torch.sort(x, 1, True, True, True, True)",
]
for call in calls:
    try:
        result = eval(call)
        if isinstance(result, tuple):
            print(call, result.values, result.indices, result.values.grad_fn.name())
        else:
            print(call, result)
    except TypeError as err:
        print(call, "TypeError:", err)
""",
)
S(
    "fixes-topk-max-min-signatures",
    """
import torch
x = torch.tensor([[3.0, 1.0, 2.0, 1.0], [0.0, 5.0, 4.0, 5.0]], requires_grad=True)
calls = [
    "torch.topk(x, 2)", "torch.topk(x, 2, 0, False)", "torch.topk(x, 2, 1, True, False)",
    "x.topk(2, 0, False)", "x.topk(2, largest=False)", "x.topk(k=2, dim=0)",
    "torch.max(x, 1)", "torch.max(x, 1, True)", "x.max(1, True)", "x.max(dim=1, keepdim=True)",
    "x.min(0, True)", "torch.min(x, 0, True)", "torch.max(input=x, dim=0)", "x.max(other=x)",
    "torch.max(x, torch.zeros(4))", "x.max(torch.tensor(1))", "x.min()",
    # mistakes
    "x.topk(2, 0, 1)", "torch.topk(x, 2, 0, 1)", "x.topk(2, foo=1)", "x.topk(2.0)", "x.topk()",
    "x.topk(True)", "torch.topk(x, True)", "x.topk(2, 1, True, True, True)", "x.topk(2, sorted=1)",
    "x.max(True)", "x.max(1, 1)", "x.max(1.0)", "x.max(dim=1.0)", "x.max(1, True, True)",
    "torch.max(x, 1, 1)", "x.max(keepdim=True)", "torch.max(x, True)", "torch.min(x, 1.0)",
    "x.max(1, dim=1)", "x.sort(5)", "x.max(2)",
]
for call in calls:
    try:
        result = eval(call)
        if isinstance(result, tuple):
            print(call, result.values, result.indices, result.values.grad_fn.name())
        else:
            print(call, result)
    except (TypeError, IndexError, RuntimeError) as err:
        print(call, type(err).__name__, err)
""",
)
