"""Checking gradients (issue 22): torch.autograd.gradcheck and gradgradcheck as the "Extending
PyTorch" tutorial and course notebooks use them on custom Functions, with the messages a wrong
backward gets; and torch.autograd.functional's vjp, jvp, vhp and hvp with their shapes,
create_graph, strict and their errors for a bad v."""

from __future__ import annotations

from tools.goldens import collect

SNIPPETS: list[dict] = []
S = collect(SNIPPETS)

# The docs' LinearFunction, shared by several snippets
_LINEAR = """
import torch
from torch.autograd import Function, gradcheck

class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias

linear = LinearFunction.apply
"""

# A square whose backward forgot the 2: the classic mistake gradcheck is there to catch
_BAD_SQUARE = """
import torch
from torch.autograd import gradcheck

class MySquare(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * x  # should be 2 * x
"""

# ***** gradcheck on custom Functions, as the tutorials run it *****

S(
    "gradchecks-extending-linear",
    _LINEAR
    + """
# gradcheck takes a tuple of tensors as input, check if your gradient
# evaluated with these tensors are close enough to numerical
# approximations and returns True if they all verify this condition.
input = (torch.randn(20, 20, dtype=torch.double, requires_grad=True),
         torch.randn(30, 20, dtype=torch.double, requires_grad=True))
test = gradcheck(linear, input, eps=1e-6, atol=1e-4)
print(test)
""",
)
S(
    "gradchecks-extending-linear-bias",
    _LINEAR
    + """
x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
w = torch.randn(2, 4, dtype=torch.float64, requires_grad=True)
b = torch.randn(2, dtype=torch.float64, requires_grad=True)
print(gradcheck(linear, (x, w, b)))
print(gradcheck(linear, (x, w)))
print(gradcheck(linear, (x, w.detach(), b)))
print(x.grad, w.grad, b.grad, x._version)
""",
)
S(
    "gradchecks-myrelu",
    """
import torch

class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input

x = torch.randn(5, dtype=torch.double, requires_grad=True)
print(torch.autograd.gradcheck(MyReLU.apply, (x,)))
""",
)
S(
    "gradchecks-exp-saves-result",
    """
import torch
from torch.autograd import gradcheck

class Exp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, i):
        result = i.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result

x = torch.tensor([[0.5, -1.0], [2.0, 0.0]], dtype=torch.float64, requires_grad=True)
print(gradcheck(Exp.apply, x))
print(gradcheck(Exp.apply, [x]))
""",
)
S(
    "gradchecks-calls-forward-and-backward",
    """
import torch
from torch.autograd import gradcheck

class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        print("forward at", x.tolist())
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        print("backward with", grad.tolist())
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2

x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
print(gradcheck(Cube.apply, (x,)))
print(x, x.grad, x._version)
""",
)

# ***** what a wrong backward gets *****

S(
    "gradchecks-wrong-backward-message",
    _BAD_SQUARE
    + """
x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
try:
    gradcheck(MySquare.apply, (x,))
except RuntimeError as e:
    print(type(e).__name__)
    print(e)
print(gradcheck(MySquare.apply, (x,), raise_exception=False))
""",
)
S(
    "gradchecks-wrong-backward-uncaught",
    _BAD_SQUARE
    + """
x = torch.randn(2, 2, dtype=torch.float64, requires_grad=True)
gradcheck(MySquare.apply, x)
""",
)
S(
    "gradchecks-wrong-second-input",
    """
import torch
from torch.autograd import gradcheck

class MyMul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * b, grad * b  # the second should be grad * a

a = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
b = torch.tensor([3.0, -4.0], dtype=torch.float64, requires_grad=True)
try:
    gradcheck(MyMul.apply, (a, b))
except RuntimeError as e:
    print(e)
print(gradcheck(MyMul.apply, (a, b.detach())))
""",
)
S(
    "gradchecks-wrong-second-output",
    """
import torch
from torch.autograd import gradcheck

class SinCos(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin(), x.cos()

    @staticmethod
    def backward(ctx, grad_sin, grad_cos):
        (x,) = ctx.saved_tensors
        return grad_sin * x.cos() + grad_cos * x.sin()  # d cos / dx is -sin

x = torch.tensor([0.5, 1.0], dtype=torch.float64, requires_grad=True)
try:
    try:
        gradcheck(SinCos.apply, (x,))
    except torch.autograd.gradcheck.GradcheckError as e:  # the function has no such attribute
        print("never", e)
except AttributeError as e:
    print("AttributeError:", e)
from torch.autograd.gradcheck import GradcheckError
try:
    gradcheck(SinCos.apply, (x,))
except GradcheckError as e:
    print(type(e), isinstance(e, RuntimeError))
    print(e)
""",
)
S(
    "gradchecks-backward-not-multiplied",
    """
import torch
from torch.autograd import gradcheck

class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (x ** 2).sum()

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return 2 * x  # forgot grad_output

x = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
try:
    gradcheck(Square.apply, (x,))
except RuntimeError as e:
    print(type(e).__name__, e)
print(gradcheck(Square.apply, (x,), raise_exception=False))
""",
)
S(
    "gradchecks-backward-not-reentrant",
    """
import torch
from torch.autograd import gradcheck

class Noisy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * (2 + torch.rand(grad.shape, dtype=grad.dtype) * 1e-9)

x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
try:
    gradcheck(Noisy.apply, (x,))
except RuntimeError as e:
    print(e)
print(gradcheck(Noisy.apply, (x,), nondet_tol=1e-6))
print(torch.rand(2))
""",
)
S(
    "gradchecks-tolerances",
    """
import torch
from torch.autograd import gradcheck

class AlmostSquare(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 2.01 * x

x = torch.tensor([1.0, 10.0], dtype=torch.float64, requires_grad=True)
print(gradcheck(AlmostSquare.apply, (x,), raise_exception=False))
print(gradcheck(AlmostSquare.apply, (x,), rtol=1e-2, raise_exception=False))
print(gradcheck(AlmostSquare.apply, (x,), atol=0.05, raise_exception=False))
print(gradcheck(AlmostSquare.apply, (x,), eps=1e-3, atol=1e-2, rtol=1e-2))
""",
)

# ***** float32 inputs: PyTorch warns, and the finite differences are poor *****

S(
    "gradchecks-float32-warns",
    """
import torch
import warnings
from torch.autograd import gradcheck

x = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    ok = gradcheck(torch.sin, (x,), raise_exception=False)
print(ok)
for w in caught:
    print(w.category.__name__, repr(str(w.message)))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    gradcheck(lambda a, b: a * b, (x.double(), x), eps=1e-3, atol=1e-2, raise_exception=False)
print([str(w.message)[:28] for w in caught])
""",
)
S(
    "gradchecks-float32-message",
    """
import torch
import warnings
warnings.simplefilter("ignore")
x = torch.tensor([[0.25, -1.5], [3.0, 0.5]], requires_grad=True)
try:
    torch.autograd.gradcheck(lambda t: t * t * t, x)
except RuntimeError as e:
    print(e)
print(torch.autograd.gradcheck(lambda t: t * t, x, eps=1e-2, atol=1e-2))
""",
)

# ***** built-in ops, several inputs and outputs, non-tensor arguments *****

S(
    "gradchecks-builtin-ops",
    """
import torch
from torch.autograd import gradcheck

x = torch.randn(3, dtype=torch.double, requires_grad=True)
W = torch.randn(2, 3, dtype=torch.double, requires_grad=True)
print(gradcheck(torch.sigmoid, (x,)))
print(gradcheck(torch.tanh, x))
print(gradcheck(lambda w, v: (w @ v).relu(), (W, x)))
print(gradcheck(lambda v, k: v * k, (x, 3)))
print(gradcheck(lambda v: (v.exp(), v.sum() ** 2), [x]))
print(gradcheck(lambda v: v.softmax(dim=0), (x,)))
print(gradcheck(torch.nn.functional.mse_loss, (x, torch.zeros(3, dtype=torch.double))))
print(x._version, W._version, x.grad)
""",
)
S(
    "gradchecks-module",
    """
import torch
import torch.nn as nn
from torch.autograd import gradcheck

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).double()
x = torch.randn(2, 3, dtype=torch.double, requires_grad=True)
print(gradcheck(model, (x,)))
params = tuple(model.parameters())
print(gradcheck(lambda inp, *ps: model(inp).sum(), (x, *params)))
""",
)
S(
    "gradchecks-outputs-without-gradient",
    """
import torch
from torch.autograd import gradcheck

x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
print(gradcheck(lambda t: t.argmax(), (x,)))
print(gradcheck(lambda t: (t * 2, t.argmax()), (x,)))
try:
    gradcheck(lambda t: t.detach() * 2, (x,))
except RuntimeError as e:
    print(type(e).__name__, e)
""",
)

# ***** what gradcheck refuses *****

S(
    "gradchecks-no-input-requires-grad",
    """
import torch
from torch.autograd import gradcheck
x = torch.tensor([1.0, 2.0], dtype=torch.float64)
gradcheck(torch.sin, (x,))
""",
)
S(
    "gradchecks-refusals",
    """
import torch
from torch.autograd import gradcheck, gradgradcheck

x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
attempts = {
    "expanded": lambda: gradcheck(lambda t: t * 2, (x.expand(3, 2),)),
    "no backward": lambda: gradcheck(torch.sin, x, check_backward_ad=False),
    "batched": lambda: gradcheck(
        torch.sin, x, check_batched_grad=True, check_backward_ad=False, check_forward_ad=True
    ),
    "gradgrad flags": lambda: gradgradcheck(torch.sin, x, check_rev_over_rev=False),
    "undefined": lambda: gradgradcheck(
        torch.sin, x, check_undefined_grad=True, check_rev_over_rev=False, check_fwd_over_rev=True
    ),
    "returns a number": lambda: gradcheck(lambda t: 3.0, (x,)),
    "positional eps": lambda: gradcheck(torch.sin, (x,), 1e-6),
}
for name, attempt in attempts.items():
    try:
        attempt()
    except (RuntimeError, ValueError, AssertionError, AttributeError, TypeError) as e:
        print(name, type(e).__name__, e)
""",
)
S(
    "gradchecks-fast-mode",
    """
import torch
x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
torch.autograd.gradcheck(torch.sin, (x,), fast_mode=True)
""",
    unsupported=True,
)
S(
    "gradchecks-forward-ad",
    """
import torch
x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
torch.autograd.gradcheck(torch.sin, (x,), check_forward_ad=True)
""",
    unsupported=True,
)
S(
    "gradchecks-deprecated-helpers",
    """
import torch
from torch.autograd.gradcheck import get_numerical_jacobian
""",
    unsupported=True,
)

# ***** the names: a function, and the module it comes from *****

S(
    "gradchecks-names",
    """
import torch
import torch.autograd.gradcheck as gc
from torch.autograd import gradcheck, gradgradcheck
from torch.autograd.gradcheck import GradcheckError
from torch.autograd.gradcheck import gradcheck as gradcheck2

print(gc is torch.autograd.gradcheck, gradcheck is gradcheck2, callable(gc))
print(gradcheck.__name__, gradgradcheck.__name__)
print(GradcheckError.__name__, GradcheckError.__mro__[1].__name__)
print(GradcheckError)
try:
    torch.autograd.GradcheckError
except AttributeError as e:
    print(e)
try:
    torch.autograd.gradcheck.gradcheck
except AttributeError as e:
    print(e)
""",
)

# ***** gradgradcheck: the gradient of the gradient *****

S(
    "gradchecks-gradgradcheck-function",
    """
import torch
from torch.autograd import gradcheck, gradgradcheck

class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 3 * x ** 2

x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
print(gradcheck(Cube.apply, (x,)))
print(gradgradcheck(Cube.apply, (x,)))
v = torch.tensor([1.0, 0.5, -2.0], dtype=torch.float64, requires_grad=True)
print(gradgradcheck(Cube.apply, (x,), (v,)))
print(gradgradcheck(Cube.apply, (x,), (v.detach(),)))
print(gradgradcheck(Cube.apply, x, gen_non_contig_grad_outputs=True))
print(torch.rand(3))
""",
)
S(
    "gradchecks-gradgradcheck-detached-backward",
    """
import torch
from torch.autograd import gradcheck, gradgradcheck

class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 2 * x.detach()  # right once, but not differentiable in x

x = torch.tensor([1.0, 3.0], dtype=torch.float64, requires_grad=True)
print(gradcheck(Square.apply, (x,)))
try:
    gradgradcheck(Square.apply, (x,))
except RuntimeError as e:
    print(e)
print(gradgradcheck(Square.apply, (x,), raise_exception=False))
""",
)
S(
    "gradchecks-gradgradcheck-builtin",
    """
import torch
from torch.autograd import gradgradcheck

torch.manual_seed(0)
x = torch.randn(2, 3, dtype=torch.double, requires_grad=True)
y = torch.randn(3, 2, dtype=torch.double, requires_grad=True)
print(gradgradcheck(lambda a, b: (a @ b).tanh(), (x, y)))
print(gradgradcheck(lambda a: (a.sin() * a).sum(dim=0), (x,)))
print(gradgradcheck(lambda a: a.pow(3).sum(), x))
print(gradgradcheck(lambda a, b: a * b, (x, y.t().detach())))
print(gradgradcheck(torch.sigmoid, x, torch.ones(2, 3, dtype=torch.double)))
""",
)

# ***** torch.autograd.functional: vjp, jvp, vhp, hvp *****

S(
    "gradchecks-vjp-docs",
    """
import torch
from torch.autograd.functional import vjp

def exp_reducer(x):
    return x.exp().sum(dim=1)

inputs = torch.rand(4, 4)
v = torch.ones(4)
print(vjp(exp_reducer, inputs, v))
print(vjp(exp_reducer, inputs, v, create_graph=True))

def adder(x, y):
    return 2 * x + 3 * y

inputs = (torch.rand(2), torch.rand(2))
v = torch.ones(2)
out, (gx, gy) = vjp(adder, inputs, v)
print(out, gx, gy)
""",
)
S(
    "gradchecks-jvp-docs",
    """
import torch
from torch.autograd.functional import jvp

def exp_reducer(x):
    return x.exp().sum(dim=1)

inputs = torch.rand(4, 4)
v = torch.ones(4, 4)
print(jvp(exp_reducer, inputs, v))
out, product = jvp(exp_reducer, inputs, v, create_graph=True)
print(out, product)

def adder(x, y):
    return 2 * x + 3 * y

inputs = (torch.rand(2), torch.rand(2))
v = (torch.ones(2), torch.ones(2))
print(jvp(adder, inputs, v))
""",
)
S(
    "gradchecks-vhp-hvp-docs",
    """
import torch
from torch.autograd.functional import hvp, vhp

def pow_reducer(x):
    return x.pow(3).sum()

inputs = torch.rand(2, 2)
v = torch.ones(2, 2)
print(vhp(pow_reducer, inputs, v))
print(vhp(pow_reducer, inputs, v, create_graph=True))
print(hvp(pow_reducer, inputs, v))
out, product = hvp(pow_reducer, inputs, v, create_graph=True)
print(out, product)

def pow_adder_reducer(x, y):
    return (2 * x.pow(2) + 3 * y.pow(2)).sum()

inputs = (torch.rand(2), torch.rand(2))
v = (torch.zeros(2), torch.ones(2))
print(vhp(pow_adder_reducer, inputs, v))
print(hvp(pow_adder_reducer, inputs, v))
""",
)
S(
    "gradchecks-functional-shapes",
    """
import torch
import torch.autograd.functional as AF

x = torch.tensor([1.0, 2.0, 3.0])
s = torch.tensor(2.0)
out, g = AF.vjp(lambda t: (t ** 2).sum(), x)
print(out, g)
print(AF.vjp(lambda t: t ** 2, s), AF.jvp(lambda t: t ** 2, s))
print(AF.vhp(lambda t: t ** 3, s), AF.hvp(lambda t: t ** 3, s))
outs, g = AF.vjp(lambda t: (t.sum(), t * 2), x, (torch.tensor(1.0), torch.ones(3)))
print(outs, g)
outs, products = AF.jvp(lambda t: (t.sum(), t * 2), x, torch.tensor([1.0, 0.0, -1.0]))
print(outs, products)
out, grads = AF.vjp(lambda a, b: a * b, (x, x + 1), torch.ones(3))
print(out, grads)
out, products = AF.jvp(lambda a, b: a * b, (x, x + 1), (torch.ones(3), torch.zeros(3)))
print(out, products)
out, hv = AF.hvp(lambda a, b: (a * a * b).sum(), (x, x + 1), (torch.ones(3), torch.zeros(3)))
print(out, hv)
print(x.requires_grad, x.grad)
""",
)
S(
    "gradchecks-functional-create-graph",
    """
import torch
from torch.autograd.functional import vjp, jvp, vhp, hvp

w = torch.tensor([1.0, 2.0], requires_grad=True)
x = torch.tensor([3.0, 4.0])
out, g = vjp(lambda t: (t * w).sum(), x, create_graph=True)
print(out, g)
g.sum().backward()
print(w.grad)
out, g = vjp(lambda t: t * 2, w, torch.ones(2), create_graph=True)
print(out, g, out.requires_grad, g.requires_grad)
out, g = vjp(lambda t: t * 2, w, torch.ones(2))
print(out, g, out.requires_grad, g.requires_grad)
out, jv = jvp(lambda t: t.sin() * w, x, torch.ones(2), create_graph=True)
print(out, jv)
jv.sum().backward()
print(w.grad)
out, vh = vhp(lambda t: (t ** 3).sum(), w, torch.ones(2), create_graph=True)
print(out, vh)
vh.sum().backward()
print(w.grad)
out, hv = hvp(lambda t: (t ** 3).sum(), w, torch.ones(2))
print(out, hv, w.is_leaf)
with torch.no_grad():
    out, g = vjp(lambda t: t * 3, x, torch.ones(2), create_graph=True)
    print(out, g, torch.is_grad_enabled())
    print(jvp(lambda t: t * 3, x, torch.ones(2)), hvp(lambda t: (t ** 3).sum(), x, x))
""",
)
S(
    "gradchecks-functional-bad-v",
    """
import torch
from torch.autograd.functional import vjp, jvp, vhp, hvp

def exp_reducer(x):
    return x.exp().sum(dim=1)

def adder(x, y):
    return 2 * x + 3 * y

x = torch.ones(4, 4)
pair = (torch.ones(2), torch.ones(2))
attempts = {
    "vjp no v": lambda: vjp(exp_reducer, x),
    "vjp wrong size": lambda: vjp(exp_reducer, x, torch.ones(3)),
    "vjp tuple for one": lambda: vjp(exp_reducer, x, (torch.ones(4), torch.ones(4))),
    "vjp one for tuple": lambda: vjp(lambda t: (t, t), x, torch.ones(4, 4)),
    "vjp entry size": lambda: vjp(lambda t: (t, t), x, (torch.ones(4, 4), torch.ones(3))),
    "vjp list v": lambda: vjp(exp_reducer, x, [torch.ones(4)]),
    "vjp number in v": lambda: vjp(exp_reducer, x, (torch.ones(4), 3)),
    "vjp list inputs": lambda: vjp(exp_reducer, [x], torch.ones(4)),
    "vjp float output": lambda: vjp(lambda t: 3.0, x, torch.ones(4)),
    "vjp float in outputs": lambda: vjp(lambda t: (t.sum(), 3.0), x, torch.ones(4)),
    "jvp no v": lambda: jvp(exp_reducer, x),
    "jvp v like output": lambda: jvp(exp_reducer, x, torch.ones(4)),
    "jvp one for tuple": lambda: jvp(adder, pair, torch.ones(2)),
    "jvp entry size": lambda: jvp(adder, pair, (torch.ones(2), torch.ones(3))),
    "jvp short tuple": lambda: jvp(adder, pair, (torch.ones(2),)),
    "hvp no v": lambda: hvp(lambda t: t.pow(3).sum(), torch.ones(2, 2)),
    "hvp not one number": lambda: hvp(exp_reducer, torch.ones(2, 2), torch.ones(2, 2)),
    "vhp two outputs": lambda: vhp(lambda t: (t.sum(), t.sum()), x, x),
    "hvp two outputs": lambda: hvp(lambda t: (t.sum(), t.sum()), x, x),
    "vhp wrong size": lambda: vhp(lambda t: t.pow(3).sum(), torch.ones(2, 2), torch.ones(2)),
}
for name, attempt in attempts.items():
    try:
        attempt()
    except (RuntimeError, TypeError) as e:
        print(f"{name}: {type(e).__name__}: {e}")
""",
)
S(
    "gradchecks-functional-strict",
    """
import torch
from torch.autograd.functional import vjp, jvp, vhp, hvp, jacobian, hessian

one, two = torch.ones(2), (torch.ones(2), torch.ones(2))
attempts = {
    "vjp constant": lambda: vjp(lambda t: torch.ones(2), one, one, strict=True),
    "vjp unused input": lambda: vjp(lambda a, b: a * 2, two, one, strict=True),
    "jvp unused input": lambda: jvp(lambda a, b: a * 2, two, two, strict=True),
    "jvp constant": lambda: jvp(lambda t: torch.ones(2), one, one, strict=True),
    "vhp linear": lambda: vhp(lambda t: t.sum(), one, one, strict=True),
    "hvp linear": lambda: hvp(lambda t: t.sum(), one, one, strict=True),
    "vhp unused input": lambda: vhp(lambda a, b: (a ** 2).sum(), two, two, strict=True),
    "hvp unused input": lambda: hvp(lambda a, b: (a ** 2).sum(), two, two, strict=True),
    "vjp graph": lambda: vjp(lambda t: t * 2, one, one, create_graph=True, strict=True),
    "vhp graph": lambda: vhp(lambda t: (t ** 2).sum(), one, one, create_graph=True, strict=True),
    "vhp cubic": lambda: vhp(lambda t: (t ** 3).sum(), one, one, create_graph=True, strict=True),
    "hvp graph": lambda: hvp(lambda t: (t ** 2).sum(), one, one, create_graph=True, strict=True),
    "jacobian constant": lambda: jacobian(lambda t: torch.ones(2), one, strict=True),
    "jacobian graph": lambda: jacobian(lambda t: t * 2, one, strict=True, create_graph=True),
    "hessian quadratic": lambda: hessian(lambda t: (t ** 2).sum(), one, strict=True),
    "hessian linear": lambda: hessian(lambda t: t.sum(), one, strict=True),
    "hessian constant": lambda: hessian(lambda t: torch.ones(()), one, strict=True),
}
for name, attempt in attempts.items():
    try:
        print(name, attempt())
    except RuntimeError as e:
        print(f"{name}: {e}")
print(vjp(lambda t: torch.ones(2), one, one))
print(jvp(lambda t: (t * 2, t.detach()), one, one))
print(vhp(lambda t: t.sum(), one, one))
""",
)
S(
    "gradchecks-functional-type-errors",
    """
import torch
from torch.autograd.functional import jacobian, hessian

attempts = {
    "jacobian float input": lambda: jacobian(lambda t: t, 3.0),
    "jacobian float in tuple": lambda: jacobian(lambda t, u: t, (torch.ones(2), 3.0)),
    "jacobian float output": lambda: jacobian(lambda t: 3.0, torch.ones(2)),
    "hessian float output": lambda: hessian(lambda t: 3.0, torch.ones(2)),
    "hessian tuple output": lambda: hessian(lambda t: (t.sum(),), torch.ones(2)),
}
for name, attempt in attempts.items():
    try:
        attempt()
    except (RuntimeError, TypeError) as e:
        print(f"{name}: {type(e).__name__}: {e}")
""",
)
S(
    "gradchecks-functional-float64",
    """
import torch
from torch.autograd.functional import hvp, vhp, hessian

x = torch.tensor([0.5, 1.5], dtype=torch.float64)
v = torch.tensor([1.0, -1.0], dtype=torch.float64)
f = lambda t: t.sin().prod()
print(hvp(f, x, v))
print(vhp(f, x, v))
print(hessian(f, x) @ v)
""",
)
S(
    "gradchecks-vjp-unsupported-strategy",
    """
import torch
torch.autograd.functional.jacobian(lambda t: t * 2, torch.ones(2), vectorize=True)
""",
    unsupported=True,
)
