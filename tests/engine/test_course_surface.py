"""Every name issue 9 lists as what an autograd course uses either works or is left out on purpose.

COURSE holds the names, grouped as the issue groups them, each with a tiny program that uses it
through `import engine as torch`. A name docs/engine.md lists as left out must fail
with UnsupportedByGradtrace, saying it is gradtrace's limit; every other one must run. The list
is read from the doc, so the doc and the engine cannot drift apart. Whether a name gives
PyTorch's exact values is the goldens' job (tests/engine/test_goldens.py); this is the map.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import numpy as np
import pytest

import engine as torch
from engine.unsupported import UnsupportedByGradtrace

DOC = Path(__file__).resolve().parents[2] / "docs" / "engine.md"
LEFT_OUT_HEADING = "### Course names left out"

# The preamble every program starts from: leaves to differentiate, a batch, a tiny model.
PRELUDE = """
x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
m = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
"""

CUSTOM = """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        ctx.flags = ctx.needs_input_grad
        return a * a

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return 2 * a * grad
"""

COURSE: dict[str, dict[str, str]] = {
    "autograd itself": {
        "Tensor.register_hook": "x.register_hook(lambda g: g * 2); (x * x).sum().backward()",
        "Tensor.retain_grad": "y = x * 2; y.retain_grad(); y.sum().backward(); y.grad.sum()",
        "autograd.Function": CUSTOM + "Square.apply(x).sum().backward()",
        "ctx.save_for_backward": CUSTOM + "Square.apply(x).sum().backward()",
        "ctx.saved_tensors": CUSTOM + "Square.apply(x).sum().backward()",
        "ctx.needs_input_grad": CUSTOM + "Square.apply(x).grad_fn.flags",
        "ctx.mark_dirty": """
class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.mark_dirty(a)
        return a.mul_(2)

    @staticmethod
    def backward(ctx, grad):
        return grad * 2

Double.apply(x * 1).sum().backward()
""",
        "ctx.mark_non_differentiable": """
class Argmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        index = a.argmax()
        ctx.mark_non_differentiable(index)
        return a * 1, index

    @staticmethod
    def backward(ctx, grad, _):
        return grad

Argmax.apply(x)[0].sum().backward()
""",
        "Function.apply": CUSTOM + "Square.apply(x).grad_fn.name()",
        "create_graph": "(g,) = torch.autograd.grad((x ** 3).sum(), x, create_graph=True)\n"
        "g.sum().backward()",
        "autograd.grad": "torch.autograd.grad((x * x).sum(), x)",
        "autograd.functional.jacobian": "torch.autograd.functional.jacobian(torch.exp, m)",
        "autograd.functional.hessian": "torch.autograd.functional.hessian("
        "lambda a: (a ** 3).sum(), m)",
        "inference_mode": "with torch.inference_mode():\n    (x * 2).is_inference()",
        "_saved_self": "(x * x[:1]).grad_fn._saved_self",
        "_saved_other": "(x * x[:1]).grad_fn._saved_other",
        "_saved_result": "x.exp().grad_fn._saved_result",
    },
    "reductions": {
        "prod": "x.prod().backward()",
        "var": "x.var(correction=0); x.var(unbiased=False)",
        "std": "x.std(correction=1); x.std(unbiased=True)",
        "norm": "x.norm(); x.norm(p=1)",
        "linalg.vector_norm": "torch.linalg.vector_norm(x, ord=2)",
        "cumsum": "x.cumsum(0)",
        "cumprod": "x.cumprod(dim=0)",
        "logsumexp": "x.logsumexp(0)",
        "topk": "x.topk(2)",
        "sort": "x.sort(descending=True)",
        "amax": "m.amax(dim=1)",
        "amin": "m.amin(dim=0)",
        "any": "(m > 2).any()",
        "all": "(m > 2).all(dim=1)",
    },
    "shape and indexing": {
        "chunk": "x.chunk(3)",
        "split": "x.split([1, 2])",
        "gather": "m.gather(1, torch.tensor([[0], [1]]))",
        "scatter": "torch.zeros(2, 2).scatter(1, torch.tensor([[1], [0]]), m)",
        "scatter_add": "torch.zeros(3).scatter_add(0, torch.tensor([0, 0, 2]), x)",
        "index_select": "m.index_select(0, torch.tensor([1, 0]))",
        "masked_fill": "x.masked_fill(x < 0, 0.0)",
        "masked_select": "x.masked_select(x > 0)",
        "repeat": "x.repeat(2, 1)",
        "expand": "m[:, :1].expand(2, 5)",
        "expand_as": "x[:1].expand_as(x)",
        "roll": "x.roll(1)",
        "flip": "m.flip(0)",
        "tril": "m.tril()",
        "triu": "m.triu(1)",
        "narrow": "x.narrow(0, 1, 2)",
        "unbind": "m.unbind(1)",
        "permute": "torch.ones(2, 3, 4, 5).permute(3, 1, 0, 2)",
        "batched matmul": "torch.ones(4, 2, 3) @ torch.ones(3, 5); torch.ones(2, 1, 2, 3) @ "
        "torch.ones(3, 3, 4)",
        "bmm": "torch.ones(4, 2, 3).bmm(torch.ones(4, 3, 5))",
        "matmul": "torch.matmul(torch.ones(4, 2, 3), torch.ones(4, 3, 5))",
        "einsum": "torch.einsum('ij,jk->ik', m, m); torch.einsum('bi,bi->b', m, m)",
        "CopySlices": "y = x * 1; y[0] = 5.0; y.sum().backward()",
    },
    "elementwise and checks": {
        "round": "x.round(decimals=1)",
        "floor": "x.floor()",
        "ceil": "x.ceil()",
        "sign": "x.sign()",
        "reciprocal": "x.reciprocal()",
        "rsqrt": "m.rsqrt()",
        "sin": "x.sin()",
        "cos": "x.cos()",
        "tan": "x.tan()",
        "asin": "(x / 4).asin()",
        "acos": "(x / 4).acos()",
        "atan": "x.atan()",
        "sinh": "x.sinh()",
        "cosh": "x.cosh()",
        "tanh": "x.tanh()",
        "erf": "x.erf()",
        "isnan": "x.isnan()",
        "isinf": "torch.isinf(x)",
        "isfinite": "torch.isfinite(x)",
        "isclose": "torch.isclose(x, x + 1e-9)",
        "allclose": "torch.allclose(m, m)",
        "equal": "torch.equal(m, m)",
        "maximum": "torch.maximum(x, torch.zeros(3))",
        "minimum": "torch.minimum(x, torch.zeros(3))",
        "lerp": "x.lerp(torch.zeros(3), 0.5)",
        "addcmul": "x.addcmul(x, x, value=0.5)",
        "result_type": "torch.result_type(m, 1)",
        "promote_types": "torch.promote_types(torch.int32, torch.float32)",
        "relu_": "torch.relu_(m.clone()); F.relu_(m.clone()); m.clone().relu_()",
        "sigmoid_": "m.clone().sigmoid_()",
        "tanh_": "m.clone().tanh_()",
    },
    "losses and functional": {
        "BCELoss": "nn.BCELoss()(torch.sigmoid(x), torch.tensor([1.0, 0.0, 1.0]))",
        "binary_cross_entropy": "F.binary_cross_entropy(torch.sigmoid(x), torch.ones(3))",
        "BCEWithLogitsLoss": "nn.BCEWithLogitsLoss()(x, torch.ones(3))",
        "L1Loss": "nn.L1Loss()(x, torch.zeros(3))",
        "SmoothL1Loss": "nn.SmoothL1Loss(beta=0.5)(x, torch.zeros(3))",
        "HuberLoss": "nn.HuberLoss(delta=2.0)(x, torch.zeros(3))",
        "NLLLoss": "nn.NLLLoss()(F.log_softmax(m, 1), torch.tensor([0, 1]))",
        "cross_entropy probability targets": "F.cross_entropy(m, torch.tensor([[0.5, 0.5], "
        "[1.0, 0.0]]))",
        "label_smoothing": "F.cross_entropy(m, torch.tensor([0, 1]), label_smoothing=0.1)",
        "ignore_index": "F.cross_entropy(m, torch.tensor([0, -100]), ignore_index=-100)",
        "reduction": "F.mse_loss(x, x, reduction='sum'); F.l1_loss(x, x, reduction='none')",
        "one_hot": "F.one_hot(torch.tensor([0, 2]), num_classes=3)",
        "leaky_relu": "F.leaky_relu(x, 0.1)",
        "gelu": "F.gelu(x); F.gelu(x, approximate='tanh')",
        "elu": "F.elu(x)",
        "silu": "F.silu(x)",
        "softplus": "F.softplus(x, beta=2.0)",
        "dropout": "torch.manual_seed(0); F.dropout(x, 0.5, training=True)",
        "normalize": "F.normalize(m, dim=1)",
        "embedding": "F.embedding(torch.tensor([1, 0]), m)",
    },
    "modules and training plumbing": {
        "state_dict": "model.state_dict()['0.weight']",
        "load_state_dict": "model.load_state_dict(model.state_dict())",
        "named_modules": "[name for name, _ in model.named_modules()]",
        "children": "list(model.children())",
        "train/eval": "model.eval(); model.train(); model.training",
        "Dropout": "nn.Dropout(0.5).eval()(x)",
        "ModuleList": "nn.ModuleList([nn.Linear(2, 2)])[0](m)",
        "ModuleDict": "nn.ModuleDict({'f': nn.Linear(2, 2)})['f'](m)",
        "Embedding": "nn.Embedding(4, 2)(torch.tensor([3, 0]))",
        "LayerNorm": "nn.LayerNorm(2)(m)",
        "BatchNorm1d": "nn.BatchNorm1d(2)(m)",
        "RNNCell": "nn.RNNCell(2, 3)(m)",
        "RNN": "nn.RNN(2, 3, batch_first=True)(m.unsqueeze(0))",
        "GRUCell": "nn.GRUCell(2, 3)(m)",
        "LSTMCell": "nn.LSTMCell(2, 3)(m)",
        "Flatten": "nn.Flatten()(torch.ones(2, 3, 4))",
        "Identity": "nn.Identity()(m)",
        "parameter counting": "sum(p.numel() for p in model.parameters() if p.requires_grad)",
        "nn.init": "w = torch.empty(3, 2)\nnn.init.xavier_uniform_(w); nn.init.kaiming_normal_(w)\n"
        "nn.init.zeros_(w); nn.init.normal_(w, 0, 1); nn.init.constant_(w, 0.5)",
        "clip_grad_norm_": "model(m).sum().backward()\n"
        "nn.utils.clip_grad_norm_(model.parameters(), 1.0)",
        "StepLR": "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "scheduler = torch.optim.lr_scheduler.StepLR(opt, step_size=2)\n"
        "opt.step(); scheduler.step()",
        "ExponentialLR": "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "scheduler = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)\n"
        "opt.step(); scheduler.step()",
        "LambdaLR": "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "scheduler = torch.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 0.5 ** epoch)\n"
        "opt.step(); scheduler.step()",
        "RMSprop": "torch.optim.RMSprop(model.parameters()).step()",
        "AdamW": "torch.optim.AdamW(model.parameters()).step()",
        "Adagrad": "torch.optim.Adagrad(model.parameters()).step()",
        "param_groups": "torch.optim.SGD(model.parameters(), lr=0.1).param_groups[0]['lr']",
        "optimizer state_dict": "opt = torch.optim.Adam(model.parameters())\n"
        "opt.load_state_dict(opt.state_dict())",
    },
    "what older tutorials write": {
        "Tensor([...])": "torch.Tensor([-4.0]).double()",
        "Tensor(2, 3)": "torch.Tensor(2, 3)",
        "FloatTensor": "torch.FloatTensor([1, 2])",
        "LongTensor": "torch.LongTensor([1, 2])",
        "DoubleTensor": "torch.DoubleTensor([1, 2])",
        "Tensor.data": "x.data.mul_(1)",
        "requires_grad assignment": "w = torch.ones(2)\nw.requires_grad = True",
        "unbound methods": "torch.Tensor.tanh(x)",
    },
    "creation, dtypes, numpy interop": {
        "from_numpy": "torch.from_numpy(np.ones(2))",
        "as_tensor": "torch.as_tensor(np.ones(2))",
        "tensor(ndarray)": "assert torch.tensor(np.ones(2)).dtype == torch.float64",
        "numpy": "m.numpy()[0, 0] = 7.0",
        "half": "repr(m.half())",
        "bfloat16": "repr(m.bfloat16())",
        "uniform_": "torch.empty(3).uniform_(-1, 1)",
        "normal_": "torch.empty(3).normal_()",
        "normal": "torch.normal(0.0, 1.0, size=(3,))",
        "Generator": "torch.randn(3, generator=torch.Generator().manual_seed(1))",
        "zeros_like": "torch.zeros_like(m); torch.ones_like(m); torch.rand_like(m)",
        "full_like": "torch.full_like(m, 7.0)",
    },
    "devices": {
        "cuda.is_available": "assert not torch.cuda.is_available()",
        "device=cuda": "torch.zeros(2, device='cuda')",
        "to(cuda)": "m.to('cuda')",
        "Tensor.cuda": "m.cuda()",
    },
}
# The imports (contextlib, re, functools, ...) are the sandbox's allowlist, not the
# engine's: tests/app/sandbox/test_imports.py checks them.


def left_out() -> dict[str, str]:
    """The names docs/engine.md's "Left out" section lists (`- `name`: why`), with the why."""
    text = DOC.read_text()
    assert LEFT_OUT_HEADING in text, f"docs/engine.md has no {LEFT_OUT_HEADING!r} section"
    section = text.split(LEFT_OUT_HEADING, 1)[1].split("\n#", 1)[0]
    return dict(re.findall(r"^- `([^`]+)`: (.+)$", section, flags=re.MULTILINE))


NAMES = [(group, name) for group, names in COURSE.items() for name in names]


def run(code: str) -> None:
    namespace = {"torch": torch, "nn": torch.nn, "F": torch.nn.functional, "np": np}
    exec(textwrap.dedent(PRELUDE), namespace)
    exec(textwrap.dedent(code), namespace)


@pytest.mark.parametrize("group, name", NAMES, ids=[f"{g}: {n}" for g, n in NAMES])
def test_a_course_name_works_or_is_left_out_with_a_reason(group: str, name: str) -> None:
    code = COURSE[group][name]
    if name not in left_out():
        run(code)
        return
    with pytest.raises(UnsupportedByGradtrace, match="gradtrace"):
        run(code)


def test_the_docs_leave_out_only_names_of_the_table_each_with_a_reason() -> None:
    listed = left_out()
    assert listed, "the Left out section lists no names"
    unknown = set(listed) - {name for _, name in NAMES}
    assert not unknown, f"docs/engine.md leaves out names the table does not have: {unknown}"
    assert all(len(why.split()) >= 4 for why in listed.values()), "a reason of a few words each"
