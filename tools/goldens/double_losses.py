"""Double backward (create_graph=True) through the losses and the activations that pair
with them: each snippet prints the first gradient, its grad_fn tree three levels deep, and
the second derivatives (mixed ones too where a node has two differentiable inputs)."""

from __future__ import annotations

from tools.goldens import collect

SNIPPETS: list = []
S = collect(SNIPPETS)

# the tree helper and the printing loop every snippet below shares
_HELPERS = """
import torch
import torch.nn.functional as F


def tree(node, depth=0):
    if node is None:
        return "None"
    if depth == 3 or not node.next_functions:
        return node.name()
    return node.name() + "(" + ", ".join(tree(f, depth + 1) for f, _ in node.next_functions) + ")"


def show(name, loss, inputs):
    grads = torch.autograd.grad(loss, inputs, create_graph=True)
    for i, g in enumerate(grads):
        print(name, i, g.grad_fn.name(), tree(g.grad_fn))
        print(g)
        seconds = torch.autograd.grad(g.sum(), inputs, retain_graph=True, allow_unused=True)
        for j, second in enumerate(seconds):
            print(name, i, j, second)
"""


def double(slug: str, body: str) -> None:
    S(slug, _HELPERS + body)


double(
    "double-losses-l1",
    """
x = torch.tensor([0.2, 0.9, -0.4], dtype=torch.float64, requires_grad=True)
t = torch.tensor([0.5, 0.1, -0.4], dtype=torch.float64, requires_grad=True)  # one tie: sgn(0)
for reduction in ("mean", "sum", "none"):
    show("l1 " + reduction, F.l1_loss(x, t, reduction=reduction).sum(), [x, t])
""",
)
double(
    "double-losses-bce-with-logits",
    """
x = torch.tensor([[0.3, -1.2, 2.0], [-0.5, 0.8, 1.1]], requires_grad=True)
t = torch.tensor([[0.0, 1.0, 0.3], [0.9, 0.2, 1.0]], requires_grad=True)
w = torch.tensor([0.5, 2.0, 1.5])
pw = torch.tensor([1.5, 0.7, 3.0])
for reduction in ("mean", "sum", "none"):
    def loss(**kw):
        return F.binary_cross_entropy_with_logits(x, t, reduction=reduction, **kw).sum()
    show("plain " + reduction, loss(), [x, t])
    show("weight " + reduction, loss(weight=w), [x, t])
    show("pos_weight " + reduction, loss(pos_weight=pw), [x, t])
    show("both " + reduction, loss(weight=w, pos_weight=pw), [x, t])
""",
)
double(
    "double-losses-bce",
    """
x = torch.tensor([[0.3, 0.15, 0.8], [0.55, 0.9, 0.05]], requires_grad=True)
t = torch.tensor([[0.0, 1.0, 0.3], [0.9, 0.2, 1.0]], requires_grad=True)
w = torch.tensor([0.5, 2.0, 1.5])
for reduction in ("mean", "sum", "none"):
    def loss(**kw):
        return F.binary_cross_entropy(x, t, reduction=reduction, **kw).sum()
    show("plain " + reduction, loss(), [x, t])
    show("weight " + reduction, loss(weight=w), [x, t])

# the target's gradient, node by node down its first inputs: -logit(x) * grad / n
(_, g) = torch.autograd.grad(F.binary_cross_entropy(x, t), [x, t], create_graph=True)
chain, node = [], g.grad_fn
while node is not None:
    chain.append(node.name())
    node = node.next_functions[0][0] if node.next_functions else None
print(" ".join(chain))
""",
)
double(
    "double-losses-smooth-l1-huber",
    """
x = torch.tensor([[0.3, -1.2, 2.0], [-0.5, 0.8, 1.1]], requires_grad=True)
t = torch.tensor([[0.0, 1.0, 0.3], [-0.2, 0.8, 1.0]], requires_grad=True)  # one tie: diff 0
for reduction in ("mean", "sum", "none"):
    for beta in (1.0, 0.5):
        show(f"smooth_l1 {reduction} {beta}",
             F.smooth_l1_loss(x, t, reduction=reduction, beta=beta).sum(), [x, t])
        show(f"huber {reduction} {beta}",
             F.huber_loss(x, t, reduction=reduction, delta=beta).sum(), [x, t])
""",
)
double(
    "double-losses-hardswish",
    """
x = torch.tensor([[-4.0, -2.5, -0.7], [0.4, 2.9, 3.5]], requires_grad=True)
show("hardswish", (F.hardswish(x) ** 2).sum(), [x])
edge = torch.tensor([-3.0, 3.0, 0.0], requires_grad=True)  # the kinks themselves
show("hardswish kinks", (F.hardswish(edge) ** 2).sum(), [edge])
show("hardswish_", (F.hardswish(x * 1, inplace=True) ** 2).sum(), [x])
""",
)
double(
    "double-losses-glu",
    """
x = torch.tensor([[0.3, -1.2, 2.0, 0.5], [-0.5, 0.8, 1.1, -2.0]], requires_grad=True)
show("glu last", (F.glu(x) ** 2).sum(), [x])
show("glu 0", (F.glu(x, 0) ** 2).sum(), [x])
""",
)
double(
    "double-losses-prelu",
    """
x = torch.tensor([[0.3, -1.2, 2.0], [-0.5, 0.8, -1.1]], requires_grad=True)
w = torch.tensor([0.25], requires_grad=True)
show("prelu one", (F.prelu(x, w) ** 2).sum(), [x, w])
wc = torch.tensor([0.25, 0.1, 0.6], requires_grad=True)
x = torch.tensor([[0.3, 0.0, 2.0], [-0.5, 0.8, -1.1]], requires_grad=True)  # one tie: self = 0
show("prelu channels", (F.prelu(x, wc) ** 2).sum(), [x, wc])
""",
)

# PyTorch has no derivative for hardsigmoid_backward: its first gradient records a
# NotImplemented node that fails when differentiated; the engine refuses at once
S(
    "double-losses-hardsigmoid-unsupported",
    """
import torch
import torch.nn.functional as F

x = torch.tensor([-2.0, 1.0, 4.0], requires_grad=True)
(g,) = torch.autograd.grad((F.hardsigmoid(x) ** 2).sum(), x, create_graph=True)
print(torch.autograd.grad(g.sum(), x))
""",
    unsupported=True,
)
S(
    "double-losses-saved-attributes",
    """
import torch
import torch.nn.functional as F
x = torch.tensor([0.5, 2.0, -1.0], requires_grad=True)
t = torch.tensor([0.1, 0.5, 0.3])
w = torch.tensor([0.25], requires_grad=True)
(g,) = torch.autograd.grad(F.huber_loss(x, t, delta=0.7), x, create_graph=True)
n = g.grad_fn
print(n.name(), n._saved_self is x, n._saved_target, n._saved_grad_output)
print(n._saved_delta, n._saved_reduction)
(g,) = torch.autograd.grad(F.smooth_l1_loss(x, t, beta=0.7, reduction="sum"), x, create_graph=True)
n = g.grad_fn
print(n.name(), n._saved_self is x, n._saved_beta, n._saved_reduction)
p = x.sigmoid()
(g,) = torch.autograd.grad(F.binary_cross_entropy(p, t), p, create_graph=True)
n = g.grad_fn
print(n.name(), torch.equal(n._saved_self, p), n._saved_target, n._saved_grad_output)
(g,) = torch.autograd.grad(F.hardswish(x).sum(), x, create_graph=True)
print(g.grad_fn.name(), g.grad_fn._saved_self is x, g.grad_fn._saved_grad_output)
(g,) = torch.autograd.grad(F.prelu(x, w).sum(), x, create_graph=True)
print(g.grad_fn.name(), g.grad_fn._saved_self is x, g.grad_fn._saved_weight is w)
""",
)
