"""Autograd itself: hooks, custom Functions, create_graph and higher-order gradients,
inference_mode, saved tensors on nodes."""

from __future__ import annotations

from tools.goldens import collect

SNIPPETS: list[dict] = []
S = collect(SNIPPETS)

# ***** hooks on tensors *****

S(
    "autograd-hook-leaf-sees-grad",
    """
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
h = x.register_hook(lambda g: print("hook got", g))
y = (x * x).sum()
y.backward()
print(x.grad)
print(type(h))
""",
)
S(
    "autograd-hook-leaf-replaces-grad",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
x.register_hook(lambda g: g * 10)
(x * 3).sum().backward()
print(x.grad)
(x * 3).sum().backward()
print(x.grad)
""",
)
S(
    "autograd-hook-nonleaf",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 2
y.register_hook(lambda g: print("y's grad", g))
y.register_hook(lambda g: g * 3)
z = (y ** 2).sum()
z.backward()
print(x.grad)
""",
)
S(
    "autograd-hook-order",
    """
import torch
x = torch.tensor(2.0, requires_grad=True)
y = x * x
def first(g):
    print("first", g)
    return g + 1
def second(g):
    print("second", g)
    return g * 2
y.register_hook(first)
y.register_hook(second)
x.register_hook(lambda g: print("leaf", g))
y.backward()
print(x.grad)
""",
)
S(
    "autograd-hook-retain-grad-runs-last",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 3
y.retain_grad()
y.register_hook(lambda g: g * 100)
y.sum().backward()
print(y.grad)
print(x.grad)
w = x * 3
w.register_hook(lambda g: g * 100)
w.retain_grad()
w.sum().backward()
print(w.grad)
""",
)
S(
    "autograd-hook-remove",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
h = x.register_hook(lambda g: g * 0)
h.remove()
h.remove()
(x * 2).sum().backward()
print(x.grad)
y = x * 2
k = y.register_hook(lambda g: print("never"))
k.remove()
y.sum().backward()
print(x.grad)
""",
)
S(
    "autograd-hook-needs-requires-grad",
    """
import torch
x = torch.tensor([1.0, 2.0])
x.register_hook(lambda g: g)
""",
)
S(
    "autograd-hook-changed-size",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
def bad(g):
    return g.sum()
x.register_hook(bad)
(x * 2).sum().backward()
""",
)
S(
    "autograd-hook-changed-type",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
x.register_hook(lambda g: g.double())
(x * 2).sum().backward()
""",
)
S(
    "autograd-hook-returns-number",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
x.register_hook(lambda g: 3)
(x * 2).sum().backward()
""",
)
S(
    "autograd-hook-in-grad",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
x.register_hook(lambda g: g * 10)
y = x * 2
y.register_hook(lambda g: g + 1)
(gx,) = torch.autograd.grad((y * y).sum(), x)
print(gx, x.grad)
(gy,) = torch.autograd.grad((x * y).sum(), y)
print(gy)
""",
)
S(
    "autograd-hook-shared-by-two-uses",
    """
import torch
x = torch.tensor(3.0, requires_grad=True)
calls = []
x.register_hook(lambda g: calls.append(g.item()))
y = x * x + x
y.backward()
print(calls, x.grad)
""",
)
S(
    "autograd-node-hooks",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * x
y.grad_fn.register_prehook(lambda grad_outputs: print("pre", grad_outputs))
y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: print("post", grad_inputs, grad_outputs))
y.sum().backward()
print(x.grad)
z = x.exp()
z.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0] * 0,))
z.sum().backward()
print(x.grad)
""",
)

# ***** custom autograd Functions *****

S(
    "autograd-function-saved-output",
    """
import torch

class Exp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        ctx.y = y
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        print("unpacked is the output:", y is ctx.y, y.grad_fn is ctx, y.requires_grad)
        return grad * y

x = torch.tensor([0.0, 1.0], requires_grad=True)
out = Exp.apply(x)
saved = out.grad_fn.saved_tensors[0]
print(saved is out, saved.grad_fn is out.grad_fn, saved._version, torch.equal(saved, out))
out.sum().backward()
print(x.grad)
again = Exp.apply(x)
node = again.grad_fn
again.mul_(2)
try:
    node.saved_tensors
except RuntimeError as e:
    print(e)
""",
)

S(
    "autograd-saved-input-is-the-input",
    """
import torch
x = torch.tensor([0.5, 2.0], requires_grad=True)
p = x.sigmoid()
q = p.exp()
y = p * q
print(y.grad_fn._saved_self is p, y.grad_fn._saved_other is q, (x * p).grad_fn._saved_self is x)
z = (p * 3).sum()
print(z.grad_fn.next_functions[0][0]._saved_self is p)
(g,) = torch.autograd.grad((p * p).sum(), x, create_graph=True)
print(g, g.grad_fn.name())
p.mul_(2)
try:
    y.grad_fn._saved_self
except RuntimeError as e:
    print(e)
""",
)

# The tutorial's LegendrePolynomial3 runs as written, 2000 steps, in tools/goldens/tutorials.py.
# Here: the same Function for a few steps on a small grid, the graph it makes inside a training
# step and its saved input; short, so the app's step-by-step oracles walk it (they skip the
# long tutorial).
S(
    "autograd-function-legendre-steps",
    """
import torch

class P3(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        ctx.save_for_backward(t)
        return 0.5 * (5 * t ** 3 - 3 * t)

    @staticmethod
    def backward(ctx, grad):
        return grad * 1.5 * (5 * ctx.saved_tensors[0] ** 2 - 1)

x = torch.linspace(-1.0, 1.0, 9)
target = x ** 3 - 0.5 * x
params = [torch.tensor(v, requires_grad=True) for v in (0.0, -1.0, 0.0, 0.3)]
for step in range(3):
    a, b, c, d = params
    inner = c + d * x
    y_pred = a + b * P3.apply(inner)
    if step == 0:
        p3 = y_pred.grad_fn.next_functions[1][0].next_functions[1][0]
        print(p3.name(), [f.name() for f, _ in p3.next_functions])
        print(torch.equal(p3.saved_tensors[0], inner))
    loss = (y_pred - target).pow(2).sum()
    loss.backward()
    print(step, loss.item(), [p.grad.item() for p in params])
    with torch.no_grad():
        for p in params:
            p -= 0.05 * p.grad
            p.grad = None
print([p.item() for p in params])
""",
)
S(
    "autograd-function-node",
    """
import torch

class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        print("forward sees grad mode", torch.is_grad_enabled())
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        print("backward sees grad mode", torch.is_grad_enabled(), type(grad).__name__)
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2

x = torch.tensor([1.0, 2.0], requires_grad=True)
y = Cube.apply(x)
print(y)
print(y.grad_fn.name(), type(y.grad_fn).__name__, type(y.grad_fn).__module__)
print(repr(y.grad_fn).split(" object at")[0])
print(y.grad_fn.next_functions[0][0].name(), y.is_leaf, y.requires_grad)
print(isinstance(y.grad_fn, torch.autograd.function.BackwardCFunction))
y.sum().backward()
print(x.grad)
""",
)
S(
    "autograd-function-non-tensor-args",
    """
import torch

class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, factor, y):
        ctx.factor = factor
        print("needs", ctx.needs_input_grad)
        return x * factor + y

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.factor, None, grad

x = torch.tensor([1.0, 2.0], requires_grad=True)
w = torch.tensor([5.0, 6.0])
out = Scale.apply(x, 3.0, w)
print(out, len(out.grad_fn.next_functions), out.grad_fn.factor)
print([f if f is None else f.name() for f, _ in out.grad_fn.next_functions])
out.sum().backward()
print(x.grad)
""",
)
S(
    "autograd-function-wrong-number-of-grads",
    """
import torch

class Add(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, grad):
        return grad

a = torch.tensor([1.0], requires_grad=True)
b = torch.tensor([2.0], requires_grad=True)
Add.apply(a, b).sum().backward()
""",
)
S(
    "autograd-function-extra-none-grads-ok",
    """
import torch

class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2, None, None

a = torch.tensor([1.0, 4.0], requires_grad=True)
Double.apply(a).sum().backward()
print(a.grad)
""",
)
S(
    "autograd-function-grad-for-non-tensor",
    """
import torch

class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, k):
        return a * k

    @staticmethod
    def backward(ctx, grad):
        return grad, grad

a = torch.tensor([1.0], requires_grad=True)
Scale.apply(a, 2.0).sum().backward()
""",
)
S(
    "autograd-function-wrong-grad-shape",
    """
import torch

class Bad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a.sum()

    @staticmethod
    def backward(ctx, grad):
        return torch.ones(3)

a = torch.tensor([1.0, 2.0], requires_grad=True)
Bad.apply(a).backward()
""",
)
S(
    "autograd-function-broadcast-grad-reduced",
    """
import torch

class Spread(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 1

    @staticmethod
    def backward(ctx, grad):
        return grad.expand(4, 2)

a = torch.tensor([1.0, 2.0], requires_grad=True)
Spread.apply(a).sum().backward()
print(a.grad)
""",
)
S(
    "autograd-function-saved-freed",
    """
import torch

class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad

x = torch.tensor([3.0], requires_grad=True)
y = Square.apply(x)
print(len(y.grad_fn.saved_tensors), y.grad_fn.saved_tensors[0] is x)
y.backward(retain_graph=True)
y.backward()
print(x.grad)
y.grad_fn.saved_tensors
""",
)
S(
    "autograd-function-backward-twice",
    """
import torch

class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad

x = torch.tensor([3.0], requires_grad=True)
y = Square.apply(x)
y.backward()
y.backward()
""",
)
S(
    "autograd-function-saved-version-check",
    """
import torch

class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad

a = torch.tensor([3.0, 1.0], requires_grad=True)
x = a * 1
y = Square.apply(x)
x.add_(1)
y.sum().backward()
""",
)
S(
    "autograd-function-saves-output",
    """
import torch

class Exp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        result = x.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return grad * result

x = torch.tensor([0.0, 1.0], requires_grad=True)
y = Exp.apply(x)
y.sum().backward()
print(y, x.grad)
""",
)
S(
    "autograd-function-mark-dirty",
    """
import torch

class AddOneInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad

a = torch.tensor([1.0, 2.0], requires_grad=True)
x = a * 2
y = AddOneInPlace.apply(x)
print(y is x, x, x._version)
(y * y).sum().backward()
print(a.grad)
""",
)
S(
    "autograd-function-mark-dirty-leaf",
    """
import torch

class AddOneInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad

a = torch.tensor([1.0, 2.0], requires_grad=True)
AddOneInPlace.apply(a)
""",
)
S(
    "autograd-function-non-differentiable",
    """
import torch

class SortValues(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        values = x * 1
        flags = x > 1
        ctx.mark_non_differentiable(flags)
        return values, flags

    @staticmethod
    def backward(ctx, grad_values, grad_flags):
        print("grad for flags", grad_flags)
        return grad_values * 2

x = torch.tensor([1.0, 2.0], requires_grad=True)
values, flags = SortValues.apply(x)
print(values, flags, flags.requires_grad, flags.grad_fn)
values.sum().backward()
print(x.grad)
""",
)
S(
    "autograd-function-two-outputs",
    """
import torch

class SplitSigns(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, g1, g2):
        print("grads", g1, g2)
        return g1 * 2 + g2 * 3

x = torch.tensor([1.0, -1.0], requires_grad=True)
p, q = SplitSigns.apply(x)
print(p.grad_fn is q.grad_fn, p.grad_fn.name())
q.sum().backward()
print(x.grad)
""",
)
S(
    "autograd-function-no-grad-needed",
    """
import torch

class Twice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2

x = torch.tensor([1.0, 2.0])
y = Twice.apply(x)
print(y, y.grad_fn, y.requires_grad)
with torch.no_grad():
    z = Twice.apply(torch.tensor([1.0], requires_grad=True))
print(z, z.grad_fn)
""",
)
S(
    "autograd-function-returns-input",
    """
import torch

class Identity(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 5

x = torch.tensor([1.0, 2.0], requires_grad=True)
y = Identity.apply(x)
print(y is x, y, x.is_leaf)
y.sum().backward()
print(x.grad)
""",
)
S(
    "autograd-function-returns-none-grad",
    """
import torch

class Stop(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        return x * y

    @staticmethod
    def backward(ctx, grad):
        return None, grad

x = torch.tensor([1.0, 2.0], requires_grad=True)
y = torch.tensor([3.0, 4.0], requires_grad=True)
Stop.apply(x, y).sum().backward()
print(x.grad, y.grad)
""",
)
S(
    "autograd-function-backward-gets-tensor-in-chain",
    """
import torch

class Relu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        g = grad.clone()
        g[x < 0] = 0
        return g

x = torch.tensor([-1.0, 2.0, -3.0, 4.0], requires_grad=True)
h = Relu.apply(x * 2)
loss = (h * h).mean()
loss.backward()
print(h, loss, x.grad)
print(h.grad_fn.next_functions[0][0].name())
""",
)

# ***** create_graph and higher-order gradients *****

S(
    "autograd-create-graph-cube",
    """
import torch
x = torch.tensor(3.0, requires_grad=True)
y = x ** 3
y.backward(create_graph=True)
print(x.grad)
print(x.grad.grad_fn.name(), x.grad.is_leaf, x.grad.requires_grad)
g = x.grad
x.grad = None
g.backward()
print(x.grad)
""",
)
S(
    "autograd-create-graph-accumulates",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
(x ** 2).sum().backward(create_graph=True)
print(x.grad)
(x ** 3).sum().backward(create_graph=True)
print(x.grad)
first = x.grad
""",
)
S(
    "autograd-grad-of-grad-cube",
    """
import torch
x = torch.tensor([1.0, 2.0, -0.5], requires_grad=True)
y = (x ** 3).sum()
(dx,) = torch.autograd.grad(y, x, create_graph=True)
print(dx)
print(dx.grad_fn.name(), [None if f is None else f.name() for f, _ in dx.grad_fn.next_functions])
(d2x,) = torch.autograd.grad(dx.sum(), x, create_graph=True)
print(d2x)
(d3x,) = torch.autograd.grad(d2x.sum(), x)
print(d3x)
""",
)
for _name in ("sin", "cos", "exp", "tanh", "sigmoid", "log", "sqrt", "reciprocal", "neg"):
    S(
        f"autograd-second-derivative-{_name}",
        f"""
import torch
x = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
y = x.{_name}()
(dx,) = torch.autograd.grad(y.sum(), x, create_graph=True)
print(dx)
print(dx.grad_fn.name())
(d2x,) = torch.autograd.grad(dx.sum(), x)
print(d2x)
""",
    )
S(
    "autograd-second-derivative-relu",
    """
import torch
x = torch.tensor([-0.5, 1.0, 2.0], requires_grad=True)
(dx,) = torch.autograd.grad(x.relu().pow(2).sum(), x, create_graph=True)
print(dx, dx.grad_fn.name())
(d2x,) = torch.autograd.grad(dx.sum(), x)
print(d2x)
""",
)
S(
    "autograd-second-derivative-product",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = torch.tensor([3.0, -1.0], requires_grad=True)
f = (x * x * y).sum()
gx, gy = torch.autograd.grad(f, (x, y), create_graph=True)
print(gx, gy)
print(gx.grad_fn.name(), gy.grad_fn.name())
(gxy,) = torch.autograd.grad(gx.sum(), y, retain_graph=True)
gxx, = torch.autograd.grad(gx.sum(), x)
print(gxy, gxx)
""",
)
S(
    "autograd-second-derivative-division",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = torch.tensor([4.0, -2.0], requires_grad=True)
f = (x / y).sum()
gx, gy = torch.autograd.grad(f, (x, y), create_graph=True)
print(gx, gy)
print(gx.grad_fn.name(), gy.grad_fn.name())
hy, hx = torch.autograd.grad(gy.sum(), (y, x))
print(hy, hx)
""",
)
S(
    "autograd-second-derivative-sum-mean",
    """
import torch
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
f = (x ** 2).mean() + x.sum(dim=0).pow(2).sum()
(g,) = torch.autograd.grad(f, x, create_graph=True)
print(g, g.grad_fn.name())
(h,) = torch.autograd.grad((g * g).sum(), x)
print(h)
""",
)
S(
    "autograd-second-derivative-matmul",
    """
import torch
a = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
b = torch.tensor([[0.5, -1.0], [2.0, 1.0]], requires_grad=True)
f = (a @ b).pow(2).sum()
ga, gb = torch.autograd.grad(f, (a, b), create_graph=True)
print(ga, gb)
print(ga.grad_fn.name(), gb.grad_fn.name())
(h,) = torch.autograd.grad(ga.sum(), b)
print(h)
""",
)
S(
    "autograd-second-derivative-mm-vector",
    """
import torch
w = torch.tensor([[1.0, -1.0], [0.5, 2.0]], requires_grad=True)
v = torch.tensor([1.0, 3.0], requires_grad=True)
f = (w @ v).tanh().sum() + v.dot(v)
gw, gv = torch.autograd.grad(f, (w, v), create_graph=True)
print(gw, gv)
(h,) = torch.autograd.grad(gv.sum(), v)
print(h)
""",
)
S(
    "autograd-create-graph-loss",
    """
import torch
torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
x = torch.randn(4, 3)
loss = ((x @ w).sigmoid() - 0.5).pow(2).mean()
(g,) = torch.autograd.grad(loss, w, create_graph=True)
penalty = g.pow(2).sum()
penalty.backward()
print(loss, g, penalty)
print(w.grad)
""",
)
S(
    "autograd-create-graph-grad-no-grad-needed",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
(g,) = torch.autograd.grad((x * 3).sum(), x, create_graph=True)
print(g, g.requires_grad, g.grad_fn)
""",
)
S(
    "autograd-create-graph-nonleaf-retain",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * x
y.retain_grad()
(y * y).sum().backward(create_graph=True)
print(y.grad, x.grad)
""",
)
S(
    "autograd-create-graph-custom-function",
    """
import torch

class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2

x = torch.tensor([1.0, 2.0], requires_grad=True)
(g,) = torch.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
print(g, g.grad_fn.name())
(h,) = torch.autograd.grad(g.sum(), x)
print(h)
""",
)
S(
    "autograd-jacobian",
    """
import torch
from torch.autograd.functional import jacobian, hessian
x = torch.tensor([1.0, 2.0, 3.0])
j = jacobian(lambda t: t ** 2, x)
print(j)
j2 = jacobian(lambda a, b: a * b, (x, torch.tensor([4.0, 5.0, 6.0])))
print(j2)
j3 = jacobian(lambda t: (t.sum(), t * 2), x)
print(j3)
j4 = jacobian(lambda t: t.exp().sum(), x)
print(j4)
""",
)
S(
    "autograd-hessian",
    """
import torch
from torch.autograd.functional import hessian
x = torch.tensor([1.0, 2.0])
h = hessian(lambda t: (t ** 3).sum() + t.sum() * t.sum(), x)
print(h)
h2 = hessian(lambda a, b: (a * b).sum(), (torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])))
print(h2)
h3 = torch.autograd.functional.hessian(lambda t: t.sin().sum(), torch.tensor(0.5))
print(h3)
""",
)

# ***** inference mode *****

S(
    "autograd-inference-mode",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
print(torch.is_inference_mode_enabled())
with torch.inference_mode():
    print(torch.is_inference_mode_enabled(), torch.is_grad_enabled())
    y = x * 2
print(y, y.requires_grad, y.is_inference(), x.is_inference())
print(torch.is_inference_mode_enabled(), torch.is_grad_enabled())
z = y.clone()
print(z.is_inference())
w = x * z
print(w)
""",
)
S(
    "autograd-inference-tensor-saved",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
with torch.inference_mode():
    y = torch.tensor([3.0, 4.0])
print(y.is_inference())
z = x * y
""",
)
S(
    "autograd-inference-mode-decorator",
    """
import torch

@torch.inference_mode()
def predict(w, x):
    return w * x

w = torch.tensor([1.0, 2.0], requires_grad=True)
out = predict(w, torch.tensor([3.0, 4.0]))
print(out, out.requires_grad, out.is_inference())
with torch.inference_mode(False):
    print(torch.is_inference_mode_enabled())
    v = w * 2
print(v)
""",
)

# ***** saved tensors on nodes *****

S(
    "autograd-saved-attributes",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
w = torch.tensor([3.0, 4.0], requires_grad=True)
y = x ** 3.0
print(y.grad_fn._saved_self, y.grad_fn._saved_self is x, y.grad_fn._saved_exponent)
e = x.exp()
print(e.grad_fn._saved_result)
m = x * w
print(m.grad_fn._saved_self, m.grad_fn._saved_other)
d = x / w
print(d.grad_fn._saved_self, d.grad_fn._saved_other)
s = x.sin()
print(s.grad_fn._saved_self)
t = x.tanh()
print(t.grad_fn._saved_result)
a = x.add(w, alpha=2)
print(a.grad_fn._saved_alpha)
y.sum().backward()
print(y.grad_fn._saved_exponent)
y.grad_fn._saved_self
""",
)
S(
    "autograd-saved-result-freed",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x.exp()
y.sum().backward()
y.grad_fn._saved_result
""",
)
S(
    "autograd-saved-mm",
    """
import torch
a = torch.tensor([[1.0, 2.0]], requires_grad=True)
b = torch.tensor([[3.0], [4.0]], requires_grad=True)
c = a.mm(b)
print(c.grad_fn._saved_self, c.grad_fn._saved_mat2)
""",
)
S(
    "autograd-hessian-through-indexing",
    """
import torch
from torch.autograd.functional import hessian
h = hessian(lambda t: t[0] * t[1] + t[1:].pow(3).sum(), torch.tensor([1.0, 2.0, 0.5]))
print(h)
""",
)
S(
    "autograd-second-derivative-select-slice",
    """
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
(g,) = torch.autograd.grad(x[0] * x[2] ** 2 + x[:2].exp().sum(), x, create_graph=True)
print(g, [None if f is None else f.name() for f, _ in g.grad_fn.next_functions])
parts = [f.next_functions[0][0] for f, _ in g.grad_fn.next_functions if f is not None]
print([p.name() if p is not None else None for p in parts])
(h,) = torch.autograd.grad(g[2], x, create_graph=True)
print(h, h.grad_fn.name())
(k,) = torch.autograd.grad(g[:2].sum(), x)
print(k)
""",
)
S(
    "autograd-second-derivative-where-clamp-abs-cat-stack",
    """
import torch
x = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
parts = {
    "where": lambda: torch.where(x > 0, x ** 2, x ** 3).sum(),
    "clamp": lambda: x.clamp(-0.5, 1.0).pow(2).sum(),
    "clamp_min": lambda: x.clamp(min=0.0).pow(2).sum(),
    "abs": lambda: (x.abs() ** 3).sum(),
    "cat": lambda: torch.cat([x, x ** 2]).pow(2).sum(),
    "stack": lambda: torch.stack([x, x.sin()]).pow(2).sum(),
}
for name, f in parts.items():
    (g,) = torch.autograd.grad(f(), x, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), x)
    names = [None if n is None else n.name() for n, _ in g.grad_fn.next_functions]
    print(name, g, g.grad_fn.name(), names, h)
""",
)
S(
    "autograd-second-derivative-mse-loss",
    """
import torch
import torch.nn.functional as F
w = torch.tensor([1.0, -2.0], requires_grad=True)
t = torch.tensor([0.5, 0.5], requires_grad=True)
for reduction in ("mean", "sum", "none"):
    loss = F.mse_loss(w * 3, t, reduction=reduction).sum()
    gw, gt = torch.autograd.grad(loss, (w, t), create_graph=True)
    names = [None if f is None else f.name() for f, _ in gw.grad_fn.next_functions]
    hw, ht = torch.autograd.grad((gw * gt).sum(), (w, t))
    print(reduction, gw, gt, names, hw, ht)
""",
)
S(
    "autograd-second-derivative-cross-entropy",
    """
import torch
import torch.nn.functional as F
w = torch.tensor([[1.0, -2.0, 0.5], [0.3, 0.2, 0.1]], requires_grad=True)
t = torch.tensor([0, 2])
(g,) = torch.autograd.grad(F.cross_entropy(w * 2, t), w, create_graph=True)
print(g, g.grad_fn.name(), [None if f is None else f.name() for f, _ in g.grad_fn.next_functions])
inner = g.grad_fn.next_functions[0][0]
print([None if f is None else f.name() for f, _ in inner.next_functions])
(h,) = torch.autograd.grad(g.pow(2).sum(), w)
print(h)
(g2,) = torch.autograd.grad(F.cross_entropy(w, t, reduction="none").sum(), w, create_graph=True)
(h2,) = torch.autograd.grad(g2.pow(2).sum(), w)
print(g2, h2)
""",
)
S(
    "autograd-second-derivative-softmax",
    """
import torch
w = torch.tensor([[1.0, -2.0, 0.5], [0.0, 1.0, 2.0]], requires_grad=True)
c = torch.tensor([1.0, 2.0, 3.0])
for dim in (0, 1):
    (g,) = torch.autograd.grad((w.softmax(dim) * c).sum(), w, create_graph=True)
    names = [None if f is None else f.name() for f, _ in g.grad_fn.next_functions]
    (h,) = torch.autograd.grad(g.pow(2).sum(), w)
    print(dim, g, g.grad_fn.name(), names, h)
    (g,) = torch.autograd.grad((w.log_softmax(dim) * c).sum(), w, create_graph=True)
    (h,) = torch.autograd.grad(g.pow(2).sum(), w)
    print(dim, g, g.grad_fn.name(), h)
""",
)
S(
    "autograd-physics-informed-second-derivative",
    """
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.linspace(0, 1, 5).reshape(5, 1).requires_grad_()
for step in range(3):
    u = model(x)
    (du,) = torch.autograd.grad(u, x, torch.ones_like(u), create_graph=True)
    (d2u,) = torch.autograd.grad(du, x, torch.ones_like(du), create_graph=True)
    loss = ((d2u + u) ** 2).mean() + (u[0] - 1) ** 2
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, round(loss.item(), 6), du.grad_fn.name(), d2u.grad_fn.name())
print(model[0].weight.grad.shape, model[2].bias.grad)
""",
)
S(
    "autograd-accumulate-grad-prehook",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 3
acc = y.grad_fn.next_functions[0][0]
print(acc.name())
acc.register_prehook(lambda grads: (grads[0] * 0 + 1,))
y.sum().backward()
print(x.grad)
""",
)
S(
    "autograd-saved-missing-attribute",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 2
y.grad_fn._saved_nothing
""",
)
