"""The example picker's snippets: the seed articles' examples and a few more that each show one
idea (control flow, loops, retain_graph, accumulation, no_grad, an in-place error, training)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Example:
    slug: str
    title: str
    code: str


EXAMPLES = [
    Example(
        "two-paths",
        "Two paths into a: d = a*b + a",
        """import torch

a = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(4.0, requires_grad=True)
c = a * b
d = c + a
d.backward()
print(a.grad.item(), b.grad.item())
""",
    ),
    Example(
        "elementwise",
        "Element-wise product, then sum",
        """import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = torch.tensor([4.0, 5.0, 6.0], requires_grad=True)
z = x * y
loss = z.sum()
loss.backward()
print(x.grad)
print(y.grad)
""",
    ),
    Example(
        "control-flow",
        "An if that depends on the data",
        """import torch

weights = torch.randn(5, requires_grad=True)

def dynamic_model(x, threshold=0.5):
    result = 0
    for val in x:
        if val > threshold:
            result += val * weights[0]
        else:
            result += val * weights[1]
    return result

input_data = torch.tensor([0.1, 0.8, 0.2, 0.9])
loss = dynamic_model(input_data)
loss.backward()
print(f"Gradients for weights: {weights.grad}")
""",
    ),
    Example(
        "variable-loop",
        "A loop whose length depends on the data",
        """import torch

x = torch.tensor(1.5, requires_grad=True)
y = x
steps = 0
while y < 10:
    y = y * x
    steps += 1
y.backward()
print(steps, y.item(), x.grad.item())
""",
    ),
    Example(
        "retain-graph",
        "backward twice with retain_graph",
        """import torch

w = torch.tensor(2.0, requires_grad=True)
loss = w ** 3
loss.backward(retain_graph=True)
print(w.grad)
loss.backward()
print(w.grad)
""",
    ),
    Example(
        "accumulation",
        "Gradients add up until zeroed",
        """import torch

w = torch.tensor(1.0, requires_grad=True)
for step in range(3):
    loss = 2 * w
    loss.backward()
    print(step, w.grad.item())
w.grad.zero_()
print(w.grad.item())
""",
    ),
    Example(
        "no-grad",
        "no_grad records nothing",
        """import torch

w = torch.tensor([1.0, 2.0], requires_grad=True)
with torch.no_grad():
    prediction = w * 3
print(prediction.requires_grad, prediction.grad_fn)
y = (w * 3).sum()
print(y.requires_grad, y.grad_fn)
""",
    ),
    Example(
        "inplace-error",
        "An in-place change breaks backward",
        """import torch

a = torch.tensor([1.0, 2.0], requires_grad=True)
b = a.exp()
b.add_(1)
b.sum().backward()
""",
    ),
    Example(
        "linear-step",
        "One training step of nn.Linear",
        """import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
target = torch.tensor([[1.0], [0.0]])

optimizer.zero_grad()
loss = nn.MSELoss()(model(x), target)
loss.backward()
optimizer.step()
print(loss.item())
print(model.weight.grad)
""",
    ),
    Example(
        "retain-grad",
        "Only leaves keep .grad, unless you retain_grad()",
        """import torch

a = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(4.0, requires_grad=True)
c = a * b
c.retain_grad()
d = c + a
d.backward()
print(a.grad, b.grad)
print(c.grad)
print(d.grad)
""",
    ),
    Example(
        "mlp-training",
        "Twenty training steps of a small MLP",
        """import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.tensor([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
y = torch.tensor([[1.0], [1.0], [0.0], [0.0]])

for step in range(20):
    optimizer.zero_grad()
    loss = nn.MSELoss()(model(x), y)
    loss.backward()
    optimizer.step()
print(loss.item())
""",
    ),
]

BY_SLUG = {example.slug: example for example in EXAMPLES}
DEFAULT = EXAMPLES[0]
_CODES = frozenset(example.code for example in EXAMPLES)


def is_example(code: str) -> bool:
    """Whether `code` is one of the examples, run as it is or as a browser sends a textarea
    (lines ending in CRLF): the site's own snippet, whose trace is pinned (app/service.py)."""
    return code.replace("\r\n", "\n") in _CODES
