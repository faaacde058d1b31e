"""Tutorial idioms and small API pieces (issue 22): `logprobs[range(n), y]` and its writes,
numpy's `axis`/`keepdims` spellings, torch.randint's forms, nn.Linear on 3-d inputs, strides and
storage, torch.Size arithmetic, and the errors PyTorch raises around them."""

from __future__ import annotations

from tools.goldens import collect

SNIPPETS: list[dict] = []
S = collect(SNIPPETS)

# ***** 1. advanced indexing with a range, lists and tensors together *****

S(
    "idioms-range-index-nll",
    """
import torch
torch.manual_seed(0)
logits = torch.randn(4, 3, requires_grad=True)
logprobs = logits.log_softmax(dim=1)
y = torch.tensor([2, 0, 1, 2])
n = logits.shape[0]
picked = logprobs[range(n), y]
print(picked)
loss = -picked.mean()
loss.backward()
print(loss)
print(logits.grad)
""",
)
S(
    "idioms-range-arange-list-agree",
    """
import torch
torch.manual_seed(0)
probs = torch.randn(5, 4).softmax(dim=1)
y = torch.tensor([3, 0, 0, 2, 1])
a = probs[range(5), y]
b = probs[torch.arange(5), y]
c = probs[list(range(5)), y]
d = probs[range(5), y.tolist()]
print(a)
print(torch.equal(a, b), torch.equal(a, c), torch.equal(a, d))
print(probs[range(2)])
print(probs[range(1, 5, 2), 1], probs[:, range(2)].shape, probs[range(4)[::-1], 0])
print(probs[range(0)], probs[range(3), 1:3])
""",
)
S(
    "idioms-range-index-repeats-accumulate",
    """
import torch
w = torch.ones(3, requires_grad=True)
z = w[[0, 0, 2, 0]]
print(z)
(z * torch.tensor([1., 2., 3., 4.])).sum().backward()
print(w.grad)
p = torch.arange(12.).reshape(3, 4).requires_grad_()
q = p[range(3), [1, 1, 1]]
q2 = p[[0, 0], [1, 1]]
(q.sum() + 2 * q2.sum()).backward()
print(p.grad)
""",
)
S(
    "idioms-range-index-errors",
    """
import torch
x = torch.arange(24.).reshape(2, 3, 4)
y = torch.tensor([2, 0, 1, 2])
keys = [
    (range(5), y),
    (range(4), range(3)),
    ([[0], [1]], [0, 1, 2], [0, 1]),
    (range(2), slice(None), [0, 1, 2]),
    ([5, 1], [0, 1, 2]),
    (slice(None), [0, 7]),
    ([0], slice(None), [9]),
    (torch.tensor([True, False]), [0, 1]),
]
for key in keys:
    try:
        print(x[key].shape)
    except IndexError as err:
        print("IndexError:", err)
""",
)
S(
    "idioms-range-setitem",
    """
import torch
x = torch.zeros(3, 3)
x[range(3), [0, 2, 1]] = 1
print(x)
x[range(3), [0, 2, 1]] -= 0.5
print(x)
x[range(3), torch.tensor([0, 0, 0])] += 2
print(x)
x[range(3), :2] = 0
print(x)
x[torch.tensor([0, 0]), 1] += torch.tensor([5., 7.])
print(x)
counts = torch.zeros(3, 3, dtype=torch.int32)
for a, b in zip([0, 1, 0, 0], [1, 2, 1, 1]):
    counts[a, b] += 1
print(counts)
N = torch.zeros(3, 3)
N[[0, 1, 0, 0], [1, 2, 1, 1]] += 1
print(N)
""",
)
S(
    "idioms-range-setitem-graph",
    """
import torch
torch.manual_seed(0)
W = torch.randn(5, 3, requires_grad=True)
h = W * 2
h[range(3), [0, 0, 1]] -= 1.5
b = torch.tensor([10., 20.], requires_grad=True)
h[[1, 1], [2, 2]] += b
print(h)
h.sum().backward()
print(W.grad, b.grad)
m = torch.zeros(2, 3, requires_grad=True) * 1
m[range(2), [2, 0]] = torch.tensor([1.5, -2.5], requires_grad=True)
print(m)
""",
)
S(
    "idioms-range-setitem-errors",
    """
import torch
x = torch.zeros(3, 3)
cases = [
    ((range(4), [0, 2, 1]), 1.0),
    ((range(3), [0, 2, 5]), 1.0),
    ((range(3), [0, 2]), 1.0),
    ((range(3), [0, 2, 1]), torch.ones(2)),
    ((range(3), [0, 2, 1]), torch.ones(3, 1)),
    ((range(3), [0, 2, 1]), torch.ones(1, 3)),
    ((range(3), [0, 2, 1]), [1.0, 2.0, 3.0]),
    ((range(3), [0, 2, 1]), torch.ones(3, dtype=torch.float64)),
    ((range(3), [0, 2, 1]), torch.tensor(5)),
    ((range(3), [0, 2, 1]), None),
    (0, [1.0, 2.0, 3.0]),
    (0, torch.ones(2)),
    (5, 1.0),
    ((0, 7), 1.0),
    ((None, 4), 1.0),
]
for requires_grad in (False, True):
    for key, value in cases:
        y = torch.zeros(3, 3, requires_grad=requires_grad) * 1
        try:
            y[key] = value
            print("ok", y.sum().item())
        except (IndexError, RuntimeError, TypeError) as err:
            print(type(err).__name__ + ":", err)
""",
)

# ***** 2. numpy's spellings: axis for dim, keepdims for keepdim *****

S(
    "idioms-numpy-axis-keepdims",
    """
import torch
x = torch.tensor([[1., 5., 2.], [4., 3., 6.]], requires_grad=True)
print(x.sum(axis=0), x.sum(1, keepdims=True), torch.sum(x, axis=1, keepdims=True))
print(x.mean(axis=0), torch.mean(x, axis=1, keepdims=True), x.sum(axis=(0, 1)))
print(x.argmax(axis=1), torch.argmax(x, axis=1, keepdims=True), x.argmin(axis=0))
print(x.max(axis=1), torch.max(x, axis=1, keepdims=True))
print(x.min(axis=0).values, x.amax(axis=0), torch.amin(x, axis=0, keepdims=True))
print(x.prod(axis=0), x.std(axis=0), x.var(axis=1, keepdims=True))
print(x.logsumexp(axis=1), x.logsumexp(1, keepdims=True))
print(x.softmax(axis=1), torch.log_softmax(x, axis=1), x.cumsum(axis=1))
print((x > 2).all(axis=1), (x > 2).any(axis=1, keepdims=True))
print(torch.cat([x, x], axis=1).shape, torch.stack([x, x], axis=0).shape)
print(x[None].squeeze(axis=0).shape, x.unsqueeze(axis=0).shape, x.size(axis=1))
print(x.sort(axis=1).indices, x.topk(1, axis=1).values, x.argsort(axis=0))
print(x.gather(axis=1, index=torch.tensor([[0], [2]])), x.unbind(axis=1)[0])
print(x.sum(axis=0, dtype=torch.float64))
probs = x.softmax(axis=1)
loss = -probs.log().mean(axis=0, keepdims=True).sum()
loss.backward()
print(loss, x.grad)
""",
)
S(
    "idioms-numpy-names-both-given",
    """
import torch
import torch.nn.functional as F
x = torch.tensor([[1., 5., 2.], [4., 3., 6.]])
calls = {
    "sum": lambda: x.sum(dim=0, axis=0),
    "sum keepdims": lambda: x.sum(0, keepdim=True, keepdims=True),
    "torch.sum": lambda: torch.sum(x, dim=1, axis=1),
    "mean": lambda: x.mean(dim=1, axis=1),
    "argmax": lambda: x.argmax(dim=1, axis=1),
    "torch.argmax": lambda: torch.argmax(x, 1, keepdim=True, keepdims=True),
    "max": lambda: x.max(dim=1, axis=1),
    "max keepdims": lambda: x.max(1, keepdim=True, keepdims=True),
    "softmax": lambda: x.softmax(dim=1, axis=1),
    "cumsum keepdims": lambda: x.cumsum(1, keepdims=True),
    "cat": lambda: torch.cat([x, x], dim=0, axis=0),
    "sort": lambda: x.sort(dim=1, axis=1),
    "topk": lambda: x.topk(1, dim=1, axis=1),
    "F.softmax": lambda: F.softmax(x, axis=1),
}
for name, call in calls.items():
    try:
        print(name, call())
    except TypeError as err:
        print(name, "TypeError:", err)
""",
)

# ***** 3. torch.randint in its forms *****

S(
    "idioms-randint-forms",
    """
import torch
torch.manual_seed(42)
print(torch.randint(10, (5,)))
print(torch.randint(3, 10, (2, 3)))
print(torch.randint(0, 27, (4,), dtype=torch.int32))
print(torch.randint(10, size=(3,)), torch.randint(low=2, high=5, size=(3,)))
print(torch.randint(5, (2,), dtype=torch.float32), torch.randint(1, 7, (2, 2), dtype=torch.float64))
g = torch.Generator().manual_seed(2147483647)
print(torch.randint(0, 27, (10,), generator=g))
print(torch.randint(100, (3,), generator=g, dtype=torch.uint8))
print(torch.randint(-5, 5, (6,)), torch.randint(2**40, (3,)))
print(torch.randint(10, torch.Size([2])), torch.randint(10, [2, 2]), torch.randint(10, ()))
print(torch.randint(10, (0,)), torch.randint(2, (4,), dtype=torch.bool))
print(torch.randint(10, (2,), generator=None), torch.randint(10, (2,), dtype=torch.int8))
print(torch.randint(10, (2,), dtype=torch.float32, requires_grad=True))
ix = torch.randint(0, 1000, (32,))
print(ix[:5], ix.dtype, ix.shape)
""",
)
S(
    "idioms-randint-makemore-batch",
    """
import torch
g = torch.Generator().manual_seed(2147483647)
X = torch.arange(200).reshape(100, 2) % 27
C = torch.randn((27, 2), generator=g)
ix = torch.randint(0, X.shape[0], (8,), generator=g)
print(ix)
print(X[ix])
print(C[X[ix]].shape)
""",
)
S(
    "idioms-randint-errors",
    """
import torch
calls = [
    lambda: torch.randint(0, (3,)),
    lambda: torch.randint(5, 2, (3,)),
    lambda: torch.randint(3.5, (2,)),
    lambda: torch.randint(10, 3),
    lambda: torch.randint(10),
    lambda: torch.randint(0, 10, 3),
    lambda: torch.randint(10, dtype=torch.int32),
    lambda: torch.randint(10, (2,), requires_grad=True),
    lambda: torch.randint(10, (2,), dtype=torch.bool),
    lambda: torch.randint(300, (2,), dtype=torch.int8),
    lambda: torch.randint(-300, 3, (2,), dtype=torch.int8),
    lambda: torch.randint(0, 2**33, (2,), dtype=torch.int32),
    lambda: torch.randint(10, (2,), foo=1),
]
for call in calls:
    try:
        print(call())
    except (RuntimeError, TypeError) as err:
        print(type(err).__name__ + ":", err)
""",
)

# ***** 4. nn.Linear on (batch, seq, features) *****

S(
    "idioms-linear-on-sequence",
    """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
emb = nn.Embedding(10, 4)
lin = nn.Linear(4, 3)
tokens = torch.tensor([[1, 2, 3], [4, 5, 6]])
h = lin(emb(tokens))
print(h)
print(h.grad_fn.name(), [f.name() for f, _ in h.grad_fn.next_functions])
addmm = h.grad_fn.next_functions[0][0]
print([f.name() if f is not None else None for f, _ in addmm.next_functions])
h.pow(2).mean().backward()
print(lin.weight.grad, lin.bias.grad)
print(emb.weight.grad[1:7])
""",
)
S(
    "idioms-linear-ranks-and-layouts",
    """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
lin = nn.Linear(4, 3)
x = torch.randn(2, 5, 4, requires_grad=True)
for inp in (x, x[0, 0], torch.randn(2, 2, 2, 4), torch.randn(0, 5, 4), x.transpose(0, 1)):
    out = lin(inp)
    chain = [out.grad_fn.name()] + [f.name() for f, _ in out.grad_fn.next_functions if f]
    print(tuple(out.shape), chain, out.is_contiguous())
print(lin(x.transpose(0, 1))[1, 0], lin(x)[0, 1])
y = F.linear(x, lin.weight)
print(y.grad_fn.name(), y.grad_fn.next_functions[0][0].name())
seq = torch.randn(5, 2, 4).permute(1, 0, 2)
print(lin(seq).grad_fn.name(), torch.equal(lin(seq), lin(seq.contiguous())))
nobias = nn.Linear(4, 2, bias=False)
print(nobias(x).grad_fn.name(), nobias(x[0, 0]).grad_fn.name())
lin(x).sum().backward()
print(x.grad[0], lin.weight.grad)
for bad in (torch.randn(2, 5, 3), torch.tensor(1.0), torch.randn(2, 5, 4, dtype=torch.float64)):
    try:
        lin(bad)
    except RuntimeError as err:
        print("RuntimeError:", err)
""",
)

# ***** 5. broadcast_shapes, strides, storage offsets, data pointers, contiguity *****

S(
    "idioms-broadcast-shapes",
    """
import torch
print(torch.broadcast_shapes((2, 1), (3,)))
print(torch.broadcast_shapes((5, 1, 4), (3, 1), (1,)), torch.broadcast_shapes())
print(torch.broadcast_shapes(torch.Size([2, 1]), [1, 3]), torch.broadcast_shapes(3, (2, 1)))
print(torch.broadcast_shapes((0, 1), (1, 5)), type(torch.broadcast_shapes((1,), (2,))))
a, b = torch.zeros(4, 1), torch.zeros(3)
print(torch.broadcast_shapes(a.shape, b.shape) == (a + b).shape)
for shapes in [((2,), (3,)), ((2, 3), (4, 3), (1,)), ((1, 2), (2, 1), (3, 3))]:
    try:
        torch.broadcast_shapes(*shapes)
    except RuntimeError as err:
        print("RuntimeError:", err)
""",
)
S(
    "idioms-strides-and-contiguity",
    """
import torch
x = torch.arange(24.).reshape(2, 3, 4)
print(x.stride(), x.stride(1), x.stride(-1), x.stride(dim=0), x.storage_offset())
views = {
    "transpose": x.transpose(0, 2),
    "permute": x.permute(2, 0, 1),
    "step slice": x[:, ::2],
    "narrow": x[..., 1:3],
    "select": x[:, 1],
    "unsqueeze": x.unsqueeze(1),
    "expand": torch.ones(3, 1).expand(3, 4),
    "expand rows": torch.ones(1, 3).expand(4, 3),
    "view": x.view(6, 4),
    "flip": x.flip(0),
    "t contiguous": x[0].t().contiguous(),
    "t times 2": x[0].t() * 2,
    "matmul": x[0] @ x[0].t(),
    "sum": x.sum(0),
    "scalar": torch.tensor(1.0),
    "empty": torch.empty(0, 3),
}
for name, v in views.items():
    print(f"{name:13}", tuple(v.shape), v.stride(), v.storage_offset(), v.is_contiguous())
try:
    x.stride(3)
except IndexError as err:
    print("IndexError:", err)
try:
    x.transpose(0, 1).view(-1)
except RuntimeError as err:
    print("RuntimeError:", err)
print(x.transpose(0, 1).reshape(-1).is_contiguous(), x.element_size(), x.int().element_size())
""",
)
S(
    "idioms-data-ptr-shared-storage",
    """
import torch
x = torch.arange(24.).reshape(2, 3, 4)
p = x.data_ptr()
print(type(p), x[0].data_ptr() == p, x.view(-1).data_ptr() == p, x.detach().data_ptr() == p)
print(x[1].data_ptr() - p, x[:, 1].data_ptr() - p, x[..., 1:].data_ptr() - p)
print(x.transpose(0, 1).data_ptr() == p, x.reshape(6, 4).data_ptr() == p)
print(x.clone().data_ptr() == p, x.contiguous().data_ptr() == p)
print(x.transpose(0, 1).contiguous().data_ptr() == p)
d = torch.arange(6, dtype=torch.float64)
print(d[2:].data_ptr() - d.data_ptr(), d.float().data_ptr() == d.data_ptr())
print(d.to(torch.float64).data_ptr() == d.data_ptr())
i8 = torch.arange(6, dtype=torch.int8)
print(i8[3:].data_ptr() - i8.data_ptr(), torch.empty(0).data_ptr())
y = torch.zeros(3)
q = y.data_ptr()
y += 1
y.add_(1)
y[0] = 5
print(y.data_ptr() == q, y)
""",
)

# ***** 6. torch.Size arithmetic *****

S(
    "idioms-size-arithmetic",
    """
import torch
s = torch.zeros(2, 3).shape
for name, value in [
    ("s + (4,)", s + (4,)),
    ("(1,) + s", (1,) + s),
    ("s + s", s + s),
    ("s * 2", s * 2),
    ("2 * s", 2 * s),
    ("s * 0", s * 0),
    ("s[1:]", s[1:]),
    ("s[::-1]", s[::-1]),
    ("s[0]", s[0]),
    ("s[-1]", s[-1]),
]:
    print(name, type(value).__name__, value)
u = s
u += (7,)
v = s
v *= 2
print(u, v, s, type(s))
print(s == (2, 3), s == [2, 3], hash(s) == hash((2, 3)), s.numel(), len(s), 3 in s)
print(torch.Size([]), torch.Size([5]), torch.Size(), torch.Size((1, 2)), [s, s[1:]])
print(torch.zeros(s + (1,)).shape, torch.zeros(6).view(*s, 1).shape, tuple(reversed(s)))
batch, *rest = torch.zeros(4, 3, 2).shape
print(batch, rest, torch.zeros(4, 3, 2).shape[:-1] + (5,))
for bad in (lambda: s + [4], lambda: s + 1, lambda: s * 1.5, lambda: s[5]):
    try:
        bad()
    except (TypeError, IndexError) as err:
        print(type(err).__name__ + ":", err)
""",
)

# ***** 7. errors (and no-errors) around requires_grad_, inference tensors and dot *****

S(
    "idioms-requires-grad-on-results",
    """
import torch
x = torch.ones(3, requires_grad=True)
y = x * 2
print(y.requires_grad_(True).grad_fn.name(), y.requires_grad_() is y, y.is_leaf)
attempts = [
    ("requires_grad_(False)", lambda: y.requires_grad_(False)),
    ("requires_grad = False", lambda: setattr(y, "requires_grad", False)),
    ("requires_grad = True", lambda: setattr(y, "requires_grad", True)),
    ("long requires_grad_", lambda: torch.ones(3, dtype=torch.long).requires_grad_()),
]
for name, attempt in attempts:
    try:
        attempt()
    except RuntimeError as err:
        print(name, "RuntimeError:", err)
z = torch.ones(3) * 2
print(z.requires_grad_(True).is_leaf, z.requires_grad)
y.sum().backward()
print(x.grad)
""",
)
S(
    "idioms-inference-tensor-writes",
    """
import torch
with torch.inference_mode():
    inf = torch.ones(3)
    doubled = inf * 2
print(inf.is_inference(), doubled.is_inference(), torch.is_inference_mode_enabled())
writes = {
    "add_": lambda: inf.add_(1),
    "+=": lambda: inf.__iadd__(1),
    "setitem": lambda: inf.__setitem__(0, 5.0),
    "zero_": lambda: inf.zero_(),
    "copy_": lambda: inf.copy_(torch.full((3,), 7.0)),
    "fill_": lambda: inf.fill_(3),
    "uniform_": lambda: inf.uniform_(),
    "view add_": lambda: inf.view(3).add_(1),
    "requires_grad_": lambda: inf.requires_grad_(),
}
for name, write in writes.items():
    try:
        write()
        print(name, "ok")
    except RuntimeError as err:
        print(name, "RuntimeError:", err)
with torch.no_grad():
    try:
        doubled.mul_(2)
    except RuntimeError as err:
        print("under no_grad:", err)
print(inf)
safe = inf.clone()
safe.add_(1)
print(safe, safe.is_inference(), inf + 1)
with torch.inference_mode():
    inf.add_(1)
print(inf)
w = torch.ones(3, requires_grad=True)
try:
    (inf * w).sum()
except RuntimeError as err:
    print("RuntimeError:", err)
""",
)
S(
    "idioms-dot-vdot-dtype-errors",
    """
import torch
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, 4.0], requires_grad=True)
v = torch.vdot(a, b)
print(v, a.dot(b), a.vdot(b.detach() * 2))
v.backward()
print(a.grad, b.grad)
print(torch.vdot(torch.tensor([1, 2]), torch.tensor([3, 4])))
f64 = torch.tensor([1.0, 2.0], dtype=torch.float64)
m = torch.ones(2, 2)
calls = {
    "dot": lambda: torch.dot(a, f64),
    "dot swapped": lambda: torch.dot(f64, a),
    "dot long": lambda: torch.dot(a, torch.tensor([1, 2])),
    "Tensor.dot": lambda: a.dot(f64),
    "vdot": lambda: torch.vdot(a, f64),
    "Tensor.vdot": lambda: a.vdot(f64),
    "dot sizes": lambda: torch.dot(a, torch.ones(3)),
    "dot 2d": lambda: torch.dot(m, a),
    "vdot 0d": lambda: torch.vdot(torch.tensor(1.0), torch.tensor(1.0)),
    "dot dtype and size": lambda: torch.dot(a, torch.ones(3, dtype=torch.float64)),
    "mv": lambda: torch.mv(m, f64),
    "mv swapped": lambda: torch.mv(m.double(), a),
    "mv long": lambda: torch.mv(m.long(), a),
    "mv size": lambda: torch.mv(m, torch.ones(3, dtype=torch.float64)),
    "mm": lambda: torch.mm(m, m.double()),
    "matmul 2d @ 1d": lambda: m @ f64,
    "matmul 1d @ 1d": lambda: a @ f64,
    "matmul 1d @ 2d": lambda: a @ m.double(),
    "matmul 3d @ 1d": lambda: torch.ones(2, 2, 2) @ f64,
    "bmm": lambda: torch.bmm(m[None], m[None].double()),
}
for name, call in calls.items():
    try:
        call()
    except RuntimeError as err:
        print(f"{name}:", err)
""",
)

S(
    "idioms-compare-with-what-is-not-a-tensor",
    """
import torch
logits = torch.tensor([[0.1, 2.0, 0.3], [1.5, 0.2, 0.1]])
labels = torch.tensor([1, 0])
print(logits.max(1) == labels)  # the learner forgot .indices: a pair is not a tensor
print((logits.argmax(1) == labels).float().mean())
t = torch.tensor([1, 2])
print(t == [1, 2], t == (1, 2), t == "a", t != [1, 2], t == None, t != None)
for compare in (lambda: t < [1, 2], lambda: t >= (1,), lambda: t & [1, 2], lambda: t | None):
    try:
        print(compare())
    except TypeError as err:
        print("TypeError:", err)
for method in (lambda: t.eq([1, 2]), lambda: t.lt((1, 2.5)), lambda: t.ge("a")):
    try:
        method()
    except TypeError as err:
        print("TypeError:", err)
print(t == 2, t > 1.5, t.eq(torch.tensor(2)))
""",
)

S(
    "idioms-operators-decline-what-is-not-a-tensor",
    """
import torch
t = torch.tensor([1, 2])
f = torch.tensor([1.5, -2.0], requires_grad=True)
attempts = {
    "t + list": lambda: t + [1, 2],
    "list + t": lambda: [1, 2] + t,
    "t - tuple": lambda: t - (1, 2),
    "tuple - t": lambda: (1, 2) - t,
    "t * str": lambda: t * "a",
    "t * list": lambda: t * [2],
    "one * list": lambda: torch.tensor(2) * [7],
    "f / None": lambda: f / None,
    "None / f": lambda: None / f,
    "t // list": lambda: t // [1],
    "t % list": lambda: t % [1],
    "f ** list": lambda: f ** [1],
    "list ** f": lambda: [1] ** f,
    "f @ list": lambda: f @ [1.0, 2.0],
    "list @ f": lambda: [1.0, 2.0] @ f,
    "f + dict": lambda: f + {},
}
for name, attempt in attempts.items():
    try:
        print(name, attempt())
    except TypeError as err:
        print(name, "TypeError:", err)
print(f * 2, 2 - f, f / 4, 2 ** f, f @ torch.ones(2))
""",
)
