"""Elementwise ops: rounding, signs, the trigonometric and hyperbolic functions, erf, exp2,
log2/log10/log1p, square, isnan/isclose, atan2, fmax/fmin, lerp, addcmul/addcdiv, dtype questions,
and the in-place forms (relu_, exp_, pow_, addcmul_, lerp_, ...)."""

from __future__ import annotations

from tools.goldens import collect

SNIPPETS: list[dict] = []
S = collect(SNIPPETS)

# ***** rounding and signs *****

S(
    "elem-round-half-even",
    """
import torch
x = torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6], requires_grad=True)
r = x.round()
print(r, r.grad_fn.name())
r.sum().backward()
print(x.grad)
print(torch.tensor([3, -2]).round(), torch.round(torch.tensor(2.5)))
""",
)
S(
    "elem-round-decimals",
    """
import torch
x = torch.tensor([1.2345, -0.125, 125.5, 0.0049], requires_grad=True)
a = x.round(decimals=2)
b = torch.round(x, decimals=-1)
print(a, b, a.grad_fn.name())
(a + b).sum().backward()
print(x.grad)
""",
)
S(
    "elem-floor-ceil-trunc-frac",
    """
import torch
x = torch.tensor([1.7, -1.7, 2.0, -0.2], requires_grad=True)
f = x.floor()
c = torch.ceil(x)
t = x.trunc()
r = x.frac()
print(f, c, t, r)
(f + c + t + r * 2).sum().backward()
print(x.grad)
i = torch.tensor([3, -4])
print(i.floor(), i.ceil(), i.trunc())
""",
)
S(
    "elem-frac-int-error",
    """
import torch
torch.tensor([1, 2]).frac()
""",
)
S(
    "elem-sign-sgn",
    """
import torch
x = torch.tensor([-2.0, 0.0, 3.5], requires_grad=True)
s = x.sign()
g = torch.sgn(x)
print(s, g, s.grad_fn.name(), g.grad_fn.name())
(s + g).sum().backward()
print(x.grad)
print(torch.tensor([-3, 0, 2]).sign(), torch.tensor([True, False]).sign())
""",
)

# ***** float functions of one tensor *****

S(
    "elem-trig",
    """
import torch
x = torch.tensor([0.3, -0.7, 0.9], requires_grad=True)
ys = [x.tan(), x.asin(), x.acos(), x.atan(), torch.tan(x)]
for y in ys:
    print(y, y.grad_fn.name())
sum(y.sum() for y in ys).backward()
print(x.grad)
""",
)
S(
    "elem-hyperbolic",
    """
import torch
x = torch.tensor([0.3, -0.7, 0.9], requires_grad=True)
ys = [x.sinh(), x.cosh(), x.asinh(), x.atanh(), torch.sinh(x)]
for y in ys:
    print(y, y.grad_fn.name())
sum(y.sum() for y in ys).backward()
print(x.grad)
z = torch.tensor([1.5, 2.0, 4.0], requires_grad=True)
a = z.acosh()
a.sum().backward()
print(a, z.grad)
""",
)
S(
    "elem-erf-exp2-expm1",
    """
import torch
x = torch.tensor([0.3, -1.2, 2.0, 0.0], requires_grad=True)
ys = [x.erf(), torch.erfc(x), x.exp2(), x.expm1(), x.abs().rsqrt()]
for y in ys:
    print(y, y.grad_fn.name())
sum(y.sum() for y in ys).backward()
print(x.grad)
""",
)
S(
    "elem-logs",
    """
import torch
x = torch.tensor([0.5, 2.0, 8.0], requires_grad=True)
ys = [x.log2(), torch.log10(x), x.log1p()]
for y in ys:
    print(y, y.grad_fn.name())
sum(y.sum() for y in ys).backward()
print(x.grad)
print(torch.tensor([1, 4]).log2(), torch.tensor([0, 3]).expm1(), torch.tensor([4]).rsqrt())
""",
)
S(
    "elem-domain-edges",
    """
import torch
x = torch.tensor([-1.0, 0.0, 1.0, 2.0])
print(x.asin(), x.acosh(), x.atanh(), x.log2(), x.log1p(), x.rsqrt())
""",
)
S(
    "elem-square",
    """
import torch
x = torch.tensor([1.5, -2.0], requires_grad=True)
y = x.square()
print(y, y.grad_fn.name())
y.sum().backward()
print(x.grad)
print(torch.square(torch.tensor([3, -4])), torch.tensor([True, False]).square())
""",
)

# ***** tests of values *****

S(
    "elem-isnan-isinf-isfinite",
    """
import torch
x = torch.tensor([1.0, float("nan"), float("inf"), -float("inf"), 0.0])
print(x.isnan(), torch.isinf(x), x.isfinite())
print(torch.tensor([1, 2]).isnan(), torch.isfinite(torch.tensor([3])))
""",
)
S(
    "elem-isclose-allclose-equal",
    """
import torch
a = torch.tensor([1.0, 2.0, float("nan"), float("inf")])
b = torch.tensor([1.0 + 1e-6, 2.1, float("nan"), float("inf")])
print(a.isclose(b), torch.isclose(a, b, equal_nan=True), a.isclose(b, rtol=0.1))
print(torch.allclose(a[:2], b[:2]), a[:1].allclose(b[:1]), torch.allclose(a, b, equal_nan=True))
print(torch.equal(a[:2], a[:2].clone()))
print(torch.equal(torch.tensor([1.0, 2.0]), torch.tensor([1, 2])))
print(torch.equal(torch.tensor([1.0]), torch.tensor([1.0, 1.0])))
""",
)
S(
    "elem-isclose-dtype-error",
    """
import torch
torch.tensor([1.0]).isclose(torch.tensor([1], dtype=torch.float64))
""",
)

# ***** two or three tensors *****

S(
    "elem-atan2",
    """
import torch
y = torch.tensor([1.0, -1.0, 0.5], requires_grad=True)
x = torch.tensor([[2.0], [-3.0]], requires_grad=True)
a = torch.atan2(y, x)
print(a, a.grad_fn.name())
a.sum().backward()
print(y.grad, x.grad)
print(torch.tensor([1, 2]).atan2(torch.tensor([2, 1])))
""",
)
S(
    "elem-fmax-fmin",
    """
import torch
a = torch.tensor([1.0, float("nan"), 3.0, 2.0], requires_grad=True)
b = torch.tensor([2.0, 1.0, float("nan"), 2.0], requires_grad=True)
hi = torch.fmax(a, b)
lo = a.fmin(b)
print(hi, lo, hi.grad_fn.name())
(hi * 2 + lo).sum().backward()
print(a.grad, b.grad)
""",
)
S(
    "elem-fmax-number-error",
    """
import torch
torch.tensor([1.0]).fmax(2)
""",
)
S(
    "elem-lerp",
    """
import torch
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = torch.tensor([5.0, -2.0, 3.5], requires_grad=True)
w = torch.tensor([0.25, 0.75, 1.0], requires_grad=True)
y = a.lerp(b, 0.3)
z = torch.lerp(a, b, w)
print(y, z, y.grad_fn.name(), z.grad_fn.name())
(y.sum() + (z * torch.tensor([1.0, 2.0, 3.0])).sum()).backward()
print(a.grad, b.grad, w.grad)
""",
)
S(
    "elem-lerp-dtype-error",
    """
import torch
torch.tensor([1.0]).lerp(torch.tensor([2.0], dtype=torch.float64), 0.5)
""",
)
S(
    "elem-addcmul-addcdiv",
    """
import torch
s = torch.tensor([1.0, 2.0], requires_grad=True)
t1 = torch.tensor([[3.0, -1.0], [0.5, 2.0]], requires_grad=True)
t2 = torch.tensor([2.0, 4.0], requires_grad=True)
m = s.addcmul(t1, t2, value=0.5)
d = torch.addcdiv(s, t1, t2, value=-2)
print(m, d, m.grad_fn.name(), d.grad_fn.name())
(m.sum() + d.sum() * 3).backward()
print(s.grad, t1.grad, t2.grad)
""",
)
S(
    "elem-addcmul-one-needs-grad",
    """
import torch
s = torch.tensor([1.0, 2.0])
t1 = torch.tensor([3.0, -1.0], requires_grad=True)
t2 = torch.tensor([2.0, 4.0])
m = torch.addcmul(s, t1, t2)
d = torch.addcdiv(s, t2, t1)
(m + d).sum().backward()
print(m, d, t1.grad)
""",
)
S(
    "elem-addcdiv-int-error",
    """
import torch
i = torch.tensor([1, 2])
i.addcdiv(i, i)
""",
)
S(
    "elem-dtype-questions",
    """
import torch
i = torch.tensor([1, 2])
f = torch.tensor([1.0])
print(torch.result_type(i, 1.0), torch.result_type(i, f), torch.result_type(f, 2))
print(torch.result_type(torch.tensor(1.0, dtype=torch.float64), i))
print(torch.promote_types(torch.int64, torch.float32))
print(torch.promote_types(torch.int32, torch.int64))
print(torch.promote_types(torch.bool, torch.int32))
print(torch.promote_types(torch.float64, torch.float32))
print(torch.can_cast(torch.float32, torch.int64), torch.can_cast(torch.int64, torch.float32))
print(torch.can_cast(torch.float64, torch.float32), torch.can_cast(torch.int32, torch.bool))
""",
)

# ***** in place *****

S(
    "elem-inplace-activations",
    """
import torch
x = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
a = x * 1
a.relu_()
b = x * 2
b.sigmoid_()
c = x * 3
torch.tanh_(c)
print(a, b, c, a._version, b.grad_fn.name(), c.grad_fn.name())
(a + b + c).sum().backward()
print(x.grad)
""",
)
S(
    "elem-inplace-exp-log-sqrt",
    """
import torch
x = torch.tensor([0.5, 1.0, 4.0], requires_grad=True)
a = x * 1
a.exp_()
b = x * 2
b.log_()
c = x + 1
torch.sqrt_(c)
d = x - 3
d.abs_()
print(a, b, c, d, b.grad_fn.name(), d._version)
(a + b + c + d).sum().backward()
print(x.grad)
""",
)
S(
    "elem-inplace-trig-round",
    """
import torch
x = torch.tensor([0.4, 1.6, -2.5], requires_grad=True)
a = x * 1
a.sin_()
b = x * 1
torch.cos_(b)
c = x * 1
c.floor_()
d = x * 1
d.round_()
e = x * 1
e.round_(decimals=1)
print(a, b, c, d, e, c.grad_fn.name(), e.grad_fn.name())
(a + b + c + d + e).sum().backward()
print(x.grad)
""",
)
S(
    "elem-inplace-pow",
    """
import torch
x = torch.tensor([1.5, -2.0, 3.0], requires_grad=True)
e = torch.tensor([2.0, 3.0, 0.5], requires_grad=True)
a = x * 1
a.pow_(2)
b = x.abs()
b.pow_(e)
print(a, b, a.grad_fn.name(), b.grad_fn.name())
(a + b).sum().backward()
print(x.grad, e.grad)
i = torch.tensor([2, 3])
i.pow_(2)
print(i)
""",
)
S(
    "elem-inplace-addcmul-lerp",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
t1 = torch.tensor([3.0, -1.0], requires_grad=True)
t2 = torch.tensor([2.0, 4.0], requires_grad=True)
a = x * 1
a.addcmul_(t1, t2, value=2)
b = x * 1
b.addcdiv_(t1, t2)
c = x * 1
c.lerp_(t1, 0.25)
print(a, b, c, a.grad_fn.name(), c.grad_fn.name(), a._version)
(a + b + c).sum().backward()
print(x.grad, t1.grad, t2.grad)
""",
)
S(
    "elem-inplace-int-errors",
    """
import torch
i = torch.tensor([1, 2])
print(i.relu_(), i.abs_(), i.floor_())
i.exp_()
""",
)
S(
    "elem-inplace-leaf-error",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
x.sigmoid_()
""",
)
S(
    "elem-inplace-saved-result-modified",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x.exp()
y.relu_()
y.sum().backward()
""",
)

# ***** edges *****

S(
    "elem-zero-dim-and-empty",
    """
import torch
x = torch.tensor(0.5, requires_grad=True)
e = torch.zeros(0, requires_grad=True)
ys = [x.tan(), x.erf(), x.round(), x.atan2(torch.tensor(2.0)), x.lerp(torch.tensor(1.0), 0.5)]
zs = [e.erf(), e.log1p(), e.addcmul(e, e), e.fmax(e)]
for y in ys + zs:
    print(y)
sum(ys).backward()
for z in zs:
    z.backward(torch.zeros_like(z))
print(x.grad, e.grad)
""",
)
S(
    "elem-inplace-on-view-of-leaf",
    """
import torch
x = torch.tensor([1.0, -2.0], requires_grad=True)
x[0].relu_()
""",
)
S(
    "elem-inplace-no-grad",
    """
import torch
x = torch.tensor([0.5, -2.0])
x.exp_()
x.round_(decimals=1)
x.addcmul_(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0]), value=0.5)
x.lerp_(torch.tensor([0.0, 0.0]), torch.tensor([0.5, 1.0]))
print(x, x._version)
""",
)
S(
    "elem-inplace-broadcast-error",
    """
import torch
x = torch.tensor([1.0, 2.0])
x.addcmul_(torch.ones(2, 2), torch.ones(2))
""",
)
S(
    "elem-lerp-weight-extremes",
    """
import torch
a = torch.tensor([1.0, -3.0, 0.1])
b = torch.tensor([2.0, 7.0, 0.3])
print(a.lerp(b, 0.0), a.lerp(b, 1.0), a.lerp(b, 0.5), a.lerp(b, 1.7), a.lerp(b, -0.4))
print(torch.lerp(a, b, torch.tensor([0.49, 0.51, 0.9])))
""",
)
S(
    "elem-sgn-sign-at-zero-grad",
    """
import torch
x = torch.tensor([0.0, -0.0, 1.0], requires_grad=True)
y = x.sgn() + x.sign() + x.round() + x.floor()
y.sum().backward()
print(y, x.grad)
""",
)
S(
    "elem-nan-and-origin",
    """
import torch
x = torch.tensor([float("nan"), -0.0, 0.0, -3.0], requires_grad=True)
s = x.sign()
g = x.sgn()
print(s, g)
a = torch.tensor([0.0, 1.0, 0.0], requires_grad=True)
b = torch.tensor([0.0, 0.0, -2.0], requires_grad=True)
t = torch.atan2(a, b)
t.sum().backward()
print(t, a.grad, b.grad)
r = torch.tensor([1e30, 4.0], requires_grad=True)
q = r.rsqrt()
q.sum().backward()
print(q, r.grad)
""",
)
S(
    "elem-functional-relu-inplace",
    """
import torch
import torch.nn.functional as F
x = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
h = x * 2
out = F.relu(h, inplace=True)
print(out is h, h, h._version)
(h * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
print(x.grad)
""",
)
