"""Making tensors: the legacy constructors (torch.Tensor, torch.FloatTensor, ...), numpy interop,
the *_like factories, ranges bit for bit, dtypes (float16, int8, ...), random draws on PyTorch's
CPU stream, devices (CUDA fails clearly) and micrograd's own test file."""

from __future__ import annotations

from tools.goldens import collect

SNIPPETS: list[dict] = []
S = collect(SNIPPETS)

# ***** torch.Tensor(...) and the typed legacy constructors *****

S(
    "create-legacy-tensor-from-data",
    """
import numpy as np
import torch
a = torch.Tensor([1, 2, 3])
b = torch.Tensor([[1, 2], [3, 4.5]])
c = torch.Tensor((1, 2))
d = torch.Tensor(np.array([1.0, 2.0]))
e = torch.Tensor()
print(a, a.dtype, a.requires_grad, a.is_leaf, a.grad_fn)
print(b)
print(c, d, d.dtype)
print(e, e.shape, e.dtype)
""",
)
S(
    "create-legacy-tensor-sizes",
    """
import torch
# PyTorch leaves this memory uninitialised: only its shape and dtype can be compared
_u = torch.Tensor(2, 3)
print(_u.shape, _u.dtype, _u.requires_grad)
_f = torch.FloatTensor(4)
_l = torch.LongTensor(2, 2)
print(_f.shape, _f.dtype, _l.shape, _l.dtype)
print(torch.Tensor(torch.Size([2, 1])).shape)
""",
)
S(
    "create-legacy-typed",
    """
import torch
f = torch.FloatTensor([1, 0, 2])
l = torch.LongTensor([1, 0, 2])
d = torch.DoubleTensor([1, 0, 2])
i = torch.IntTensor([1, 0, 2])
b = torch.BoolTensor([1, 0, 2])
u = torch.ByteTensor([1, 0, 2])
h = torch.HalfTensor([1.5, 0, 2])
t = torch.LongTensor([1.7, -1.7])
print(f, l, d, i, b, u, h, t)
print(torch.FloatTensor, torch.LongTensor, type(torch.FloatTensor))
print(isinstance(f, torch.FloatTensor), isinstance(f, torch.LongTensor))
print(isinstance(l, torch.LongTensor), isinstance(torch.zeros(2), torch.FloatTensor))
print(isinstance(torch.zeros(2, dtype=torch.float64), torch.DoubleTensor))
print(isinstance(f, torch.Tensor), f.type(), l.type(), d.type(), u.type(), h.type())
""",
)
S(
    "create-legacy-errors",
    """
import torch
attempts = [
    lambda: torch.Tensor(2.5),
    lambda: torch.Tensor(2.5, 3),
    lambda: torch.Tensor("abc"),
    lambda: torch.Tensor([1.0], requires_grad=True),
    lambda: torch.Tensor(2, dtype=torch.float64),
    lambda: torch.Tensor(-1),
    lambda: torch.FloatTensor(torch.tensor([1, 2])),
]
for attempt in attempts:
    try:
        attempt()
    except Exception as e:
        print(type(e).__name__, e)
""",
)
S(
    "create-legacy-tensor-of-tensor-is-it",
    """
import torch
x = torch.tensor([1.0, 2.0])
y = torch.Tensor(x)
z = torch.LongTensor(torch.tensor([3, 4]))
print(y is x, y, z)
y[0] = 5.0
print(x, x._version, y._version)
""",
)
S(
    "create-legacy-tensor-of-graph-tensor",
    """
import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
v = torch.Tensor(w)
""",
    unsupported=True,
)
S(
    "create-legacy-micrograd-idiom",
    """
import torch
x = torch.Tensor([-4.0]).double()
x.requires_grad = True
print(x, x.data, x.dtype, x.is_leaf)
y = torch.Tensor.tanh(x) * 3
s = torch.Tensor.sum(y)
torch.Tensor.backward(s)
print(y, s)
print(x.grad)
w = torch.Tensor([0.5, -1.0])
w.requires_grad = True
w.data.mul_(2)
print(w, w.requires_grad)
""",
)

# ***** micrograd's test/test_engine.py, torch's half of each test (same computations) *****

S(
    "create-micrograd-sanity-check",
    """
import torch
x = torch.Tensor([-4.0]).double()
x.requires_grad = True
z = 2 * x + 2 + x
q = z.relu() + z * x
h = (z * z).relu()
y = h + q + q * x
y.backward()
xpt, ypt = x, y
print(ypt.data.item(), xpt.grad.item())
print(y, x.grad)
""",
)
S(
    "create-micrograd-more-ops",
    """
import torch
a = torch.Tensor([-4.0]).double()
b = torch.Tensor([2.0]).double()
a.requires_grad = True
b.requires_grad = True
c = a + b
d = a * b + b**3
c = c + c + 1
c = c + 1 + c + (-a)
d = d + d * 2 + (b + a).relu()
d = d + 3 * d + (b - a).relu()
e = c - d
f = e**2
g = f / 2.0
g = g + 10.0 / f
g.backward()
apt, bpt, gpt = a, b, g
print(gpt.data.item(), apt.grad.item(), bpt.grad.item())
print(g, g.grad_fn.name())
""",
)

# ***** numpy interop *****

S(
    "create-from-numpy-shares-memory",
    """
import numpy as np
import torch
a = np.array([1.0, 2.0, 3.0])
t = torch.from_numpy(a)
a[0] = 9.0
print(t, t.dtype)
t.add_(1)
print(a, t._version)
i = torch.from_numpy(np.array([1, 2], dtype=np.int32))
f = torch.from_numpy(np.array([1.5], dtype=np.float32))
h = torch.from_numpy(np.array([0.5, 2.0], dtype=np.float16))
b = torch.from_numpy(np.array([True, False]))
l = torch.from_numpy(np.arange(3))
print(i, f, h, b, l)
""",
)
S(
    "create-from-numpy-errors",
    """
import numpy as np
import torch
for bad in ([1, 2], np.array(["a"]), np.arange(4.0)[::-1]):
    try:
        torch.from_numpy(bad)
    except Exception as e:
        print(type(e).__name__, e)
""",
)
S(
    "create-as-tensor",
    """
import numpy as np
import torch
a = np.array([1.0, 2.0])
shared = torch.as_tensor(a)
copied = torch.as_tensor(a, dtype=torch.float32)
a[1] = 7.0
print(shared, copied)
x = torch.tensor([1.0, 2.0])
print(torch.as_tensor(x) is x, torch.as_tensor(x, dtype=torch.float64))
print(torch.as_tensor([1, 2]), torch.as_tensor(3.0), torch.as_tensor((1.5, 2)))
""",
)
S(
    "create-tensor-keeps-numpy-dtypes",
    """
import numpy as np
import torch
print(torch.tensor(np.array([1.0, 2.0])), torch.tensor(np.array([1, 2], dtype=np.int32)))
print(torch.tensor(np.float64(1.5)), torch.tensor(np.float32(1.5)), torch.tensor(np.int32(3)))
print(torch.tensor(np.array(True)), torch.tensor(np.array(1.0)))
print(torch.tensor(np.array([1.5], dtype=np.float16)))
print(torch.tensor([np.float64(1.0), 2.0]).dtype, torch.tensor([np.int32(1), 2]).dtype)
print(torch.tensor([np.float32(1.0), 2]).dtype, torch.tensor(np.array([[1, 2], [3, 4]])).dtype)
""",
)
S(
    "create-tensor-nested-and-mixed",
    """
import torch
print(torch.tensor(((1, 2), (3, 4))), torch.tensor([True, 1]), torch.tensor([True, 1.5]))
print(torch.tensor([1, 2.0]), torch.tensor([[1], [2.5]]), torch.tensor([True, False]).dtype)
print(torch.tensor([]), torch.tensor([[]]), torch.tensor([]).dtype, torch.tensor([[], []]).shape)
print(torch.tensor([torch.tensor(1.5), 2]), torch.tensor((0.1, 0.2, 0.3)).tolist())
""",
)
S(
    "create-numpy-shares-memory",
    """
import torch
t = torch.zeros(3)
n = t.numpy()
n[0] = 5.0
print(t)
t[1] = 2.0
print(n)
w = torch.ones(2, requires_grad=True)
m = w.detach().numpy()
m[0] = 4.0
print(w)
try:
    w.numpy()
except Exception as e:
    print(type(e).__name__, e)
""",
)

# ***** filled and *_like factories *****

S(
    "create-like-factories",
    """
import torch
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
z = torch.zeros_like(x, dtype=torch.int64)
o = torch.ones_like(x, requires_grad=True)
f = torch.full_like(x, 7)
g = torch.full_like(torch.tensor([1, 2]), 2.7)
_e = torch.empty_like(x)
print(z, o, f, g)
print(_e.shape, _e.dtype, _e.requires_grad, torch.empty_like(x, dtype=torch.int32).dtype)
torch.manual_seed(0)
r = torch.rand_like(x)
n = torch.randn_like(x, dtype=torch.float64)
i = torch.randint_like(x, 10)
j = torch.randint_like(x, 3, 10)
k = torch.randint_like(torch.tensor([1, 2, 3]), 5)
print(r, n, i, j, k)
""",
)
S(
    "create-empty-and-full-dtypes",
    """
import torch
_e = torch.empty(2, 3)
_d = torch.empty((2,), dtype=torch.int64)
print(_e.shape, _e.dtype, _d.shape, _d.dtype)
a = torch.full((2,), True)
b = torch.full((2,), 3)
c = torch.full((2,), 3.0)
d = torch.full((2,), 2, dtype=torch.float32)
e = torch.full([2, 2], 1.5, requires_grad=True)
print(a, b, c, d, e)
print(torch.zeros(2, 0).shape, torch.ones(0))
try:
    torch.zeros(2, -1)
except Exception as e:
    print(type(e).__name__, e)
""",
)
S(
    "create-new-factories-and-size-keyword",
    """
import torch
x = torch.tensor([1, 2], dtype=torch.int32)
f = torch.tensor([1.5], dtype=torch.float64, requires_grad=True)
a = x.new_zeros(2, 3)
b = x.new_ones((2,))
c = f.new_full((2,), 7)
d = f.new_tensor([1, 2])
e = x.new_tensor([1.5])
g = f.new_ones(1, dtype=torch.float32, requires_grad=True)
h = f.new_tensor(f)
_u = f.new_empty(2)
print(a, b, c, d, e, g, h, _u.shape, _u.dtype, f.new_zeros(2).requires_grad)
z = torch.zeros(size=(2, 3))
o = torch.ones(size=[1])
torch.manual_seed(0)
r = torch.randn(size=(2,))
q = torch.rand(size=(1, 2))
print(z.shape, o, r, q, torch.empty(size=(1,)).shape)
""",
)
S(
    "create-eye-logspace",
    """
import torch
print(torch.eye(2, dtype=torch.int64), torch.eye(3, 2), torch.eye(1, 3, dtype=torch.bool))
print(torch.logspace(0, 2, 3), torch.logspace(-1, 1, 5, base=2))
print(torch.logspace(0, 1, 4, dtype=torch.float64).tolist(), torch.logspace(0, 1, 7).tolist())
print(torch.logspace(0, 1, 1), torch.logspace(1, 3, 3, dtype=torch.int64))
try:
    torch.eye(-1)
except Exception as e:
    print(type(e).__name__, e)
""",
)

# ***** ranges: PyTorch's length rule and every bit of every value *****

S(
    "create-arange-float-bits",
    """
import torch
print(torch.arange(0, 1, 0.1).tolist())
print(torch.arange(0, 1, 0.1, dtype=torch.float64).tolist())
print(torch.arange(1.0, 0.0, -0.3).tolist(), torch.arange(-1, 1, 0.3).tolist())
print(torch.arange(10, -3, -0.11, dtype=torch.float64).tolist())
print(torch.arange(3, 17.5, 0.013).tolist()[500:530])
print(torch.arange(0, 100, 0.1, dtype=torch.float64).tolist()[25:45])
print(torch.arange(0, 100, 0.1, dtype=torch.float16).tolist()[990:])
print(torch.arange(0, 1, 1 / 3), torch.arange(0.5, 3), torch.arange(2.5))
""",
)
S(
    "create-arange-long-ranges",
    """
import torch
# longer than PyTorch's grain size: split between two threads, each chunk vectorised afresh
_a = torch.arange(0, 5000, 0.07)
_b = torch.arange(0, 80000, 0.37, dtype=torch.float64)
print(len(_a), _a.tolist()[35700:35730])
print(_a.tolist()[-20:])
print(len(_b), _b.tolist()[108090:108120])
""",
)
S(
    "create-arange-int-rules",
    """
import torch
print(torch.arange(0, 5, 1.5, dtype=torch.int64), torch.arange(0, 5, 1.5, dtype=torch.int32))
print(torch.arange(5, 0, -1.5, dtype=torch.int64), torch.arange(0.5, 4, dtype=torch.int64))
print(torch.arange(0, 5.5, 1.5, dtype=torch.int64), torch.arange(7, dtype=torch.int8))
attempts = [((0, 5, 0), None), ((0, 5, 0.5), torch.int64), ((5, 0, 1), None), ((0, 1, -0.1), None)]
for args, dtype in attempts:
    try:
        torch.arange(*args, dtype=dtype)
    except Exception as e:
        print(type(e).__name__, e)
""",
)

# ***** dtypes *****

S(
    "create-dtype-half",
    """
import torch
x = torch.tensor([1.0, 2.0], dtype=torch.float16)
y = torch.tensor([0.1, 1 / 3]).half()
z = torch.tensor([1.0, 2.0]).to(torch.float16)
big = torch.tensor([1e-3, 1e5]).half()
print(x, x.dtype, y, z, big)
print(torch.half, torch.float16 is torch.half, x.type(), y.tolist())
print((x * 2.5).dtype, x + torch.tensor([1.0]), torch.tensor([1, 2]).half())
w = torch.tensor([1.0, 2.0], requires_grad=True)
h = w.half()
print(h, h.grad_fn.name())
h.float().sum().backward()
print(w.grad)
""",
)
S(
    "create-dtype-small-ints",
    """
import torch
a = torch.tensor([1, 2], dtype=torch.int8)
u = torch.tensor([250], dtype=torch.uint8)
s = torch.tensor([1, 2], dtype=torch.int16)
print(a, u, s, u + 10, torch.short, torch.uint8)
print(a + torch.tensor([1], dtype=torch.uint8), (u * 1.5).dtype, a.float(), s.type(), u.type())
print(torch.tensor([1.7, -1.2]).byte(), torch.tensor([3.9]).char(), torch.tensor([1.5]).short())
print(torch.promote_types(torch.int8, torch.uint8), torch.promote_types(torch.uint8, torch.int16))
print(torch.int8.is_signed, torch.uint8.is_signed, torch.bool.is_signed)
print(torch.float16.is_floating_point, torch.int8.is_floating_point)
""",
)
S(
    "create-dtype-overflow",
    """
import torch
a = torch.tensor([1e5, -7e4], dtype=torch.float16)
b = torch.HalfTensor([1e5])
c = torch.full((1,), 1e5, dtype=torch.float16)
d = torch.tensor([300, -1]).to(torch.uint8)
e = torch.tensor([-1, -255], dtype=torch.uint8)
f = torch.full((2,), -1, dtype=torch.uint8)
print(a, b, c, d, e, f)
attempts = [
    lambda: torch.tensor([300], dtype=torch.uint8),
    lambda: torch.tensor([[1, 200]], dtype=torch.int8),
    lambda: torch.tensor([2.5, -1.5], dtype=torch.uint8),
    lambda: torch.full((2,), 1e5, dtype=torch.float16),
    lambda: torch.full((1,), 300, dtype=torch.uint8),
    lambda: torch.full((3,), 2**40, dtype=torch.int32),
    lambda: torch.full((1,), 1e39, dtype=torch.float32),
]
for attempt in attempts:
    try:
        attempt()
    except Exception as err:
        print(type(err).__name__, err)
""",
)
S(
    "create-finfo-iinfo",
    """
import torch
for d in (torch.float16, torch.float32, torch.float64, torch.bfloat16):
    f = torch.finfo(d)
    print(f, f.bits, f.eps, f.max, f.min, f.tiny, f.resolution, f.dtype)
print(torch.finfo().eps)
for d in (torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64):
    i = torch.iinfo(d)
    print(i, i.bits, i.min, i.max)
for bad in (lambda: torch.finfo(torch.int32), lambda: torch.iinfo(torch.bool)):
    try:
        bad()
    except Exception as e:
        print(type(e).__name__, e)
""",
)
S(
    "create-set-default-dtype",
    """
import torch
torch.set_default_dtype(torch.float64)
a = torch.tensor(1.0)
b = torch.zeros(2)
c = torch.arange(0.0, 2.0)
d = torch.tensor([1.5], dtype=torch.float32)
e = torch.Tensor([1, 2])
print(a, b, c, d, e, torch.tensor([]), torch.tensor([], dtype=torch.float32))
print(torch.get_default_dtype(), torch.tensor([1, 2]).dtype, torch.rand(1).dtype)
print((torch.tensor([1, 2]) / 2).dtype, torch.full((1,), 2.0).dtype)
try:
    torch.set_default_dtype(torch.int64)
except Exception as err:
    print(type(err).__name__, err)
torch.set_default_dtype(torch.float32)
f = torch.tensor(1.0)
print(f, torch.get_default_dtype())
""",
)
S(
    "create-set-default-tensor-type",
    """
import torch
torch.set_default_tensor_type(torch.DoubleTensor)
a = torch.tensor([1.5])
torch.set_default_tensor_type("torch.FloatTensor")
b = torch.tensor([1.5])
print(a, b, torch.get_default_dtype())
try:
    torch.set_default_tensor_type(torch.LongTensor)
except Exception as e:
    print(type(e).__name__, e)
""",
)
S(
    "create-bfloat16",
    """
import torch
b = torch.tensor([1.0, 0.1], dtype=torch.bfloat16)
""",
    unsupported=True,
)

# ***** random draws on PyTorch's CPU stream *****

S(
    "create-random-uniform-normal-inplace",
    """
import torch
torch.manual_seed(0)
for n in (5, 16, 17, 40):
    print(torch.empty(n).uniform_(-1, 2).tolist())
    print(torch.empty(n, dtype=torch.float64).uniform_().tolist())
torch.manual_seed(1)
for n in (3, 15, 16, 17, 40):
    print(torch.empty(n).normal_(1, 2).tolist())
    print(torch.empty(n, dtype=torch.float64).normal_().tolist())
x = torch.zeros(3)
x.uniform_()
print(x._version, x.normal_(0, 0.5)._version)
w = torch.zeros(2, requires_grad=True)
with torch.no_grad():
    w.uniform_(-0.1, 0.1)
print(w)
try:
    w.normal_()
except Exception as e:
    print(type(e).__name__, e)
""",
)
S(
    "create-random-normal-forms",
    """
import torch
torch.manual_seed(0)
a = torch.normal(0.0, 1.0, size=(3,))
b = torch.normal(2, 3, (2, 2))
c = torch.normal(torch.tensor([0.0, 10.0]), torch.tensor([1.0, 2.0]))
d = torch.normal(torch.zeros(20), 1.0)
e = torch.normal(0.0, torch.ones(3))
f = torch.normal(torch.zeros(3), torch.ones(3) * 2)
g = torch.normal(torch.zeros(2, 1), torch.ones(3))
h = torch.normal(torch.zeros(17, dtype=torch.float64), 0.5)
print(a.tolist(), b.tolist(), c.tolist())
print(d.tolist(), e.tolist(), f.tolist(), g.shape, h.dtype)
print(h.tolist())
try:
    torch.normal(0.0, 1.0)
except Exception as err:
    print(type(err).__name__, err)
""",
)
S(
    "create-random-normal-sizes",
    """
import torch
# 16 and more elements switch PyTorch's normal kernel to its vectorised Box-Muller
torch.manual_seed(4)
print(torch.normal(torch.zeros(20), torch.ones(20) * 3).tolist())
print(torch.normal(torch.arange(17.0).reshape(1, 17), torch.full((2, 1), 0.5)).tolist())
print(torch.normal(1.5, torch.linspace(0, 2, 33)).tolist())
print(torch.normal(torch.zeros(16, dtype=torch.float64), 2.0).tolist())
print(torch.empty(33, dtype=torch.float64).normal_(3, 0.1).tolist())
print(torch.randint(-5, 5, (7,)).tolist(), torch.randint(0, 2**40, (3,)).tolist())
""",
)
S(
    "create-random-generator",
    """
import torch
g = torch.Generator().manual_seed(42)
print(type(g), g.initial_seed())
a = torch.rand(3, generator=g)
torch.manual_seed(0)
b = torch.rand(2)
c = torch.randn(20, generator=g)
d = torch.randint(0, 10, (4,), generator=g)
e = torch.randperm(6, generator=g)
f = torch.normal(0.0, 1.0, (3,), generator=g)
h = torch.empty(4).uniform_(0, 1, generator=g)
i = torch.empty(5).normal_(generator=g)
j = torch.rand(2)
print(a.tolist(), b.tolist(), j.tolist())
print(c.tolist(), d.tolist(), e.tolist())
print(f.tolist(), h.tolist(), i.tolist())
g2 = torch.Generator()
g2.manual_seed(3)
print(torch.randn(3, generator=g2).tolist(), torch.Generator().initial_seed())
print(torch.default_generator.initial_seed(), isinstance(torch.default_generator, torch.Generator))
""",
)
S(
    "create-random-rng-state",
    """
import torch
torch.manual_seed(5)
fresh = torch.get_rng_state()
print(fresh.dtype, fresh.shape, fresh[:24])
a = torch.rand(3)
b = torch.randn(3)
state = torch.get_rng_state()
print(state[8:24], state[-24:])
c = torch.rand(4)
torch.set_rng_state(state)
d = torch.rand(4)
print(torch.equal(c, d))
torch.set_rng_state(fresh)
print(torch.equal(torch.rand(3), a))
""",
)
S(
    "create-random-generator-state",
    """
import torch
g = torch.Generator().manual_seed(3)
s = g.get_state()
a = torch.rand(2, generator=g)
g.set_state(s)
b = torch.rand(2, generator=g)
print(s.dtype, s.shape, s[:12], torch.equal(a, b), g.device)
""",
)
S(
    "create-random-bernoulli",
    """
import torch
torch.manual_seed(0)
p = torch.tensor([0.1, 0.5, 0.9, 0.3] * 5)
a = torch.bernoulli(p)
b = torch.bernoulli(torch.tensor([0.2, 0.7], dtype=torch.float64))
c = torch.bernoulli(torch.zeros(20), 0.7)
d = torch.empty(6).bernoulli_(0.3)
e = torch.empty(5).bernoulli_(torch.tensor([0.1, 0.9, 0.5, 0.5, 0.5]))
f = torch.empty(3, dtype=torch.int64).bernoulli_(0.5)
g = torch.full((4,), 0.5).bernoulli()
print(a.tolist(), b.tolist(), c.tolist())
print(d.tolist(), e.tolist(), f.tolist(), g.tolist())
""",
)

S(
    "create-random-exponential-multinomial",
    """
import torch
torch.manual_seed(0)
a = torch.empty(6).exponential_()
b = torch.empty(5, dtype=torch.float64).exponential_(2.5)
c = torch.multinomial(torch.tensor([0.1, 0.2, 0.7]), 5, replacement=True)
d = torch.multinomial(torch.tensor([1.0, 2.0, 3.0, 4.0]), 2)
P = torch.rand(3, 5)
e = torch.multinomial(P, 3)
f = torch.multinomial(P, 4, True)
h = torch.multinomial(P.double(), 1)
i = torch.multinomial(torch.tensor([0.0, 5.0, 1.0, 0.0]), 6, replacement=True)
print(a.tolist(), b.tolist(), c, d)
print(e, f, h, i)
attempts = [
    lambda: torch.multinomial(torch.tensor([1.0, 2.0]), 3),
    lambda: torch.multinomial(torch.tensor([0.0, 0.0]), 1),
    lambda: torch.multinomial(torch.tensor([-1.0, 2.0]), 1),
    lambda: torch.multinomial(torch.tensor(1.0), 1),
    lambda: torch.multinomial(torch.tensor([1.0, 2.0]), 0),
]
for attempt in attempts:
    try:
        attempt()
    except Exception as err:
        print(type(err).__name__, err)
""",
)
S(
    "create-random-makemore-sampling",
    """
import torch
# sampling names from bigram counts, as in makemore: one multinomial draw per character
g = torch.Generator().manual_seed(2147483647)
N = torch.randint(0, 20, (27, 27), generator=g).float() + 1
P = N / N.sum(1, keepdim=True)
itos = {i: ch for i, ch in enumerate(".abcdefghijklmnopqrstuvwxyz")}
for _ in range(5):
    out = []
    ix = 0
    while True:
        ix = torch.multinomial(P[ix], num_samples=1, replacement=True, generator=g).item()
        out.append(itos[ix])
        if ix == 0 or len(out) > 12:
            break
    print("".join(out))
""",
)

# ***** devices: everything runs on the CPU *****

S(
    "create-device-cpu",
    """
import torch
x = torch.tensor([1.0, 2.0])
cpu = torch.device("cpu")
print(x.device, repr(x.device), cpu, repr(cpu), cpu == x.device, cpu.type, cpu.index)
print(torch.device("cuda:0"), repr(torch.device("cuda:0")), torch.device("cuda", 1))
print(repr(torch.device("cpu", 0)), torch.device(cpu), hash(cpu) == hash(torch.device("cpu")))
print(x.to("cpu") is x, x.cpu() is x, x.to(cpu) is x, x.to(device="cpu") is x)
print(x.is_cuda, x.get_device())
print(torch.cuda.is_available(), torch.cuda.device_count(), torch.backends.mps.is_available())
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
y = x.to(device) * 2
z = torch.zeros(2, device="cpu") + torch.ones(2, device=cpu)
print(device, y, z, y.device)
torch.cuda.manual_seed_all(0)
torch.set_default_device("cpu")
try:
    torch.device("gpu")
except Exception as e:
    print(type(e).__name__, e)
""",
)
S(
    "create-to-variants",
    """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
a = x.to(torch.float64)
b = x.to("cpu", torch.float64)
c = x.to(dtype=torch.float32, copy=True)
d = x.to(torch.tensor([1], dtype=torch.int32))
e = x.type(torch.float64)
f = x.detach().type("torch.DoubleTensor")
g = x.detach().type(torch.LongTensor)
print(a, b, c, d, e, f, g)
try:
    x.to("cpu", "cuda")
except Exception as err:
    print(type(err).__name__, err)
""",
)
for _slug, _source in [
    ("create-cuda-factory", 'torch.zeros(2, device="cuda")'),
    ("create-cuda-to-string", 'torch.zeros(2).to("cuda")'),
    ("create-cuda-to-device", 'torch.zeros(2).to(torch.device("cuda"))'),
    ("create-cuda-method", "torch.zeros(2).cuda()"),
    ("create-cuda-tensor", 'torch.tensor([1.0], device="cuda:0")'),
    ("create-cuda-randn", 'torch.randn(2, device=torch.device("cuda"))'),
    ("create-cuda-namespace", "torch.cuda.current_device()"),
]:
    S(_slug, f"import torch\n{_source}\n", unsupported=True)

S(
    "create-deepcopy-and-type",
    """
import copy
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
c = copy.deepcopy(x)
print(c, c.grad, c.is_leaf, c._version, type(c))
print(c is x)
y = x * 2
try:
    copy.deepcopy(y)
except RuntimeError as e:
    print(e)
""",
)
