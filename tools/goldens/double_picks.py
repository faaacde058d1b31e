"""Double backward (create_graph=True) through the nodes that pick or combine values: maximum
and minimum, max()/min() of a whole tensor, amax/amin, bmm, lerp, addcmul and addcdiv.

Each snippet prints the first gradient's grad_fn and its next_functions tree three levels deep,
the gradient itself and the second derivatives, mixed ones included; the tie cases check that
a split or shared gradient is differentiated as PyTorch's formula writes it.
"""

from __future__ import annotations

from tools.goldens import collect

SNIPPETS: list = []
S = collect(SNIPPETS)

TREE = """
import torch


def tree(node, depth=0):
    if node is None:
        return "None"
    if depth == 3 or not node.next_functions:
        return node.name()
    return node.name() + "(" + ", ".join(tree(f, depth + 1) for f, _ in node.next_functions) + ")"


def second(y, inputs):
    grads = torch.autograd.grad((y * y).sum(), inputs, create_graph=True)
    for g in grads:
        print(g.grad_fn.name(), tree(g.grad_fn))
        print(g)
    for g in grads:
        print(torch.autograd.grad(g.sum(), inputs, retain_graph=True, allow_unused=True))
"""

S(
    "double-picks-maximum-minimum",
    TREE
    + """
x = torch.tensor([[0.5, -1.2, 2.0], [-0.3, 1.5, -2.5]], requires_grad=True)
w = torch.tensor([[0.1, 0.7, -1.1], [0.9, -0.4, 1.3]], requires_grad=True)
second(torch.maximum(x, w * x), (x, w))
second(torch.minimum(x, w * x), (x, w))
second(torch.maximum(x * x, w), (x, w))
# a tie: maximum and minimum split the gradient in half
t = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
u = torch.tensor([1.0, 0.5, 3.0], requires_grad=True)
second(torch.maximum(t * t, u * t), (t, u))
second(torch.minimum(t * t, u * t), (t, u))
""",
)
S(
    "double-picks-fmax-fmin",
    TREE
    + """
x = torch.tensor([[0.5, -1.2, 2.0], [-0.3, 1.5, -2.5]], requires_grad=True)
w = torch.tensor([[0.1, 0.7, -1.1], [0.9, -0.4, 1.3]], requires_grad=True)
second(torch.fmax(x, w * x), (x, w))
second(torch.fmin(x * x, w), (x, w))
t = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
u = torch.tensor([1.0, 0.5, 3.0], requires_grad=True)
second(torch.fmax(t * t, u * t), (t, u))
second(torch.fmin(t * t, u * t), (t, u))
""",
)
S(
    "double-picks-max-min-all",
    TREE
    + """
x = torch.tensor([[0.5, -1.2, 2.0], [-0.3, 1.5, -2.5]], requires_grad=True)
second(x.max() * x, (x,))
second((x * x).min() * x, (x,))
second(x.max(), (x,))
# a tie: the gradient is shared evenly among the elements equal to the max
t = torch.tensor([1.0, 3.0, 3.0, -2.0], requires_grad=True)
second((t * t).max() * t, (t,))
second(t.min() * t, (t,))
""",
)
S(
    "double-picks-amax-amin",
    TREE
    + """
x = torch.tensor([[0.5, -1.2, 2.0], [-0.3, 1.5, -2.5]], requires_grad=True)
second(x.amax(1) * x.sum(1), (x,))
second((x * x).amin(0), (x,))
second(x.amax((0, 1)) * x, (x,))
second((x * x).amax(1, keepdim=True) * x, (x,))
second(x.amin(-1, keepdim=True) * x, (x,))
# a tie in each row: shared evenly
t = torch.tensor([[1.0, 3.0, 3.0], [2.0, -1.0, 2.0]], requires_grad=True)
second((t * t).amax(1) * t.sum(1), (t,))
second(t.amin(0) * t.sum(0), (t,))
""",
)
S(
    "double-picks-bmm",
    TREE
    + """
a = torch.tensor(
    [[[0.5, -1.2, 2.0], [-0.3, 1.5, -2.5]], [[1.1, 0.4, -0.7], [0.2, -0.9, 1.3]]],
    requires_grad=True,
)
b = torch.tensor(
    [[[0.3, 1.0], [-0.6, 0.8], [1.4, -0.2]], [[-1.0, 0.5], [0.7, 0.9], [0.1, -1.3]]],
    requires_grad=True,
)
second(torch.bmm(a, b), (a, b))
second(torch.bmm(a * a, b), (a, b))
y = a @ b
print(y.grad_fn.name(), tree(y.grad_fn))
second(y, (a, b))
""",
)
S(
    "double-picks-lerp",
    TREE
    + """
x = torch.tensor([[0.5, -1.2, 2.0], [-0.3, 1.5, -2.5]], requires_grad=True)
e = torch.tensor([[0.1, 0.7, -1.1], [0.9, -0.4, 1.3]], requires_grad=True)
w = torch.tensor([[0.2, 0.8, 0.35], [0.6, -0.3, 1.2]], requires_grad=True)
second(torch.lerp(x, e, 0.3), (x, e))
second(torch.lerp(x * x, e * x, 0.7), (x, e))
second(torch.lerp(x, e, w), (x, e, w))
second(torch.lerp(x * x, e, w * x), (x, e, w))
""",
)
S(
    "double-picks-addcmul-addcdiv",
    TREE
    + """
x = torch.tensor([[0.5, -1.2, 2.0], [-0.3, 1.5, -2.5]], requires_grad=True)
p = torch.tensor([[0.1, 0.7, -1.1], [0.9, -0.4, 1.3]], requires_grad=True)
q = torch.tensor([[0.2, 0.8, 0.35], [0.6, -0.3, 1.2]], requires_grad=True)
second(torch.addcmul(x, p, q), (x, p, q))
second(torch.addcmul(x * x, p * x, q, value=0.3), (x, p, q))
second(torch.addcdiv(x, p, q), (x, p, q))
second(torch.addcdiv(x * x, p, q * x, value=-0.7), (x, p, q))
second(torch.addcmul(x, p, q.detach(), value=1.7), (x, p))
second(torch.addcdiv(x, p.detach(), q, value=0.4), (x, q))
""",
)
S(
    "double-picks-nan",
    TREE
    + """
# max() of a tensor holding nan is nan, and its gradient goes to the nans; amax compares
# result == self, which no nan passes
x = torch.tensor([1.0, float("nan"), 2.0, float("nan")], requires_grad=True)
second(x.max() * x, (x,))
second(x.min(), (x,))
second(x.amax(0) * x, (x,))
""",
)
S(
    "double-picks-bits",
    """
import torch

# every digit: tolist() shows the float32 rounding a 4-digit repr hides (addcmul's fused
# multiply-add, lerp's, the order of each backward formula)
torch.manual_seed(0)
x = torch.randn(3, 4, requires_grad=True)
p = torch.randn(3, 4, requires_grad=True)
q = (torch.rand(3, 4) + 0.5).requires_grad_()
w = torch.rand(3, 4).requires_grad_()
a = torch.randn(2, 3, 4, requires_grad=True)
b = torch.randn(2, 4, 2, requires_grad=True)
cases = {
    "addcmul": lambda: (torch.addcmul(x, p, q, value=0.37), (x, p, q)),
    "addcdiv": lambda: (torch.addcdiv(x, p, q, value=-0.73), (x, p, q)),
    "lerp0": lambda: (torch.lerp(x, p, 0.23), (x, p)),
    "lerp0b": lambda: (torch.lerp(x, p, 0.81), (x, p)),
    "lerp1": lambda: (torch.lerp(x, p, w * 1.7 - 0.3), (x, p, w)),
    "maximum": lambda: (torch.maximum(x, p), (x, p)),
    "fmin": lambda: (torch.fmin(x, p), (x, p)),
    "max": lambda: (x.max() * p, (x, p)),
    "amin": lambda: (x.amin(1) * p.sum(1), (x, p)),
    "amax": lambda: (x.amax((0, 1), keepdim=True) * p, (x, p)),
    "bmm": lambda: (torch.bmm(a, b), (a, b)),
    "matmul": lambda: (a @ b, (a, b)),
}
for name, case in cases.items():
    y, inputs = case()
    gs = torch.autograd.grad((y * y * 1.3).sum(), inputs, create_graph=True)
    print(name, [g.tolist() for g in gs])
    for g in gs:
        hs = torch.autograd.grad((g * g).sum(), inputs, retain_graph=True, allow_unused=True)
        print(name, [None if h is None else h.tolist() for h in hs])
""",
)
S(
    "double-picks-broadcast-float64",
    """
import torch

# every digit again, with broadcast inputs (their gradients summed back) and in float64
torch.manual_seed(1)
x = torch.randn(3, 4, requires_grad=True)
p = torch.randn(4, requires_grad=True)
q = (torch.rand(3, 1) + 0.5).requires_grad_()
w = torch.tensor(0.3, requires_grad=True)
d = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
e = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
cases = {
    "addcmul": lambda: (torch.addcmul(x, p, q, value=0.37), (x, p, q)),
    "addcdiv": lambda: (torch.addcdiv(x, p, q, value=-0.73), (x, p, q)),
    "lerp1": lambda: (torch.lerp(x, p, w), (x, p, w)),
    "lerp0": lambda: (torch.lerp(p, x, 0.6), (x, p)),
    "maximum": lambda: (torch.maximum(x, p), (x, p)),
    "minimum": lambda: (torch.minimum(q, x), (x, q)),
    "fmax": lambda: (torch.fmax(p, x), (x, p)),
    "amax": lambda: (x.amax(-1) * p.sum(), (x, p)),
    "d-addcmul": lambda: (torch.addcmul(d, e, d, value=0.37), (d, e)),
    "d-lerp": lambda: (torch.lerp(d, e, 0.4), (d, e)),
    "d-lerp1": lambda: (torch.lerp(d, e, d.sigmoid()), (d, e)),
    "d-addcdiv": lambda: (torch.addcdiv(d, e, d.exp(), value=0.3), (d, e)),
    "d-bmm": lambda: (d.reshape(3, 2, 2) @ e.reshape(3, 2, 2), (d, e)),
}
for name, case in cases.items():
    y, inputs = case()
    print(name, y.grad_fn.name())
    gs = torch.autograd.grad((y * y * 1.3).sum(), inputs, create_graph=True)
    print(name, [g.tolist() for g in gs])
    for g in gs:
        hs = torch.autograd.grad((g * g).sum(), inputs, retain_graph=True, allow_unused=True)
        print(name, [None if h is None else h.tolist() for h in hs])
""",
)
S(
    "double-picks-masked-fill-tensor-value",
    """
import torch


def tree(node, depth=0):
    if node is None:
        return "None"
    if depth == 3 or not node.next_functions:
        return node.name()
    return node.name() + "(" + ", ".join(tree(f, depth + 1) for f, _ in node.next_functions) + ")"


# masked_fill with a 0-dim tensor value (MaskedFillBackward1), as max() of a whole tensor
# records it in its backward: the value's gradient is masked_select, then sum
t = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
m = torch.tensor([True, False, True])
y = (t * t).masked_fill(m, (t ** 3).sum())
(g,) = torch.autograd.grad((y * y).sum(), t, create_graph=True)
print(g, tree(g.grad_fn))
(h,) = torch.autograd.grad(g.sum(), t)
print(h)
# a third derivative through max(): its second one is a MaskedFillBackward1 of a tensor value
x = torch.tensor([1.0, 3.0, 2.0], requires_grad=True)
(g,) = torch.autograd.grad(x.max() ** 3, x, create_graph=True)
(h,) = torch.autograd.grad(g.sum(), x, create_graph=True)
print(g, h, tree(h.grad_fn))
print(torch.autograd.grad(h.sum(), x))
""",
)
