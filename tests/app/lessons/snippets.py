"""Small snippets the lesson tests trace, each named for what it shows."""

from tests.app.lessons.seed import SEED_SNIPPET

LOOP = """\
import torch
x = torch.tensor(2.0, requires_grad=True)
y = torch.tensor(1.0)
for i in range(3):
    y = y * x
y.backward()
"""

LINEAR = """\
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(2, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.tensor([[1.0, 2.0], [3.0, -1.0]])
t = torch.tensor([[1.0], [0.0]])
opt.zero_grad()
loss = ((model(x) - t) ** 2).mean()
loss.backward()
opt.step()
"""

RETAIN = """\
import torch
a = torch.tensor(3.0, requires_grad=True)
d = a * a
d.backward(retain_graph=True)
"""

TWO_STEPS = """\
import torch
w = torch.tensor(2.0, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for _ in range(2):
    opt.zero_grad()
    loss = (w * 3) ** 2
    loss.backward()
    opt.step()
"""

NO_GRAD = """\
import torch
a = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(4.0, requires_grad=True)
with torch.no_grad():
    c = a * 2
d = a * b + c
d.backward()
"""

ADD_ONLY = """\
import torch
a = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(4.0, requires_grad=True)
d = a + b
d.backward()
"""

RETAINED_NON_LEAF = """\
import torch
a = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(4.0, requires_grad=True)
c = a * b
c.retain_grad()
d = c * a
d.backward()
"""

SNIPPETS = {
    "seed": SEED_SNIPPET,
    "loop": LOOP,
    "linear": LINEAR,
    "retain": RETAIN,
    "two-steps": TWO_STEPS,
    "no-grad": NO_GRAD,
    "add-only": ADD_ONLY,
    "retained-non-leaf": RETAINED_NON_LEAF,
}
