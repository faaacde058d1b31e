"""Record PyTorch's exact float results for the arithmetic engine/numerics.py reproduces.

Run under the torch venv (the test suite never imports torch):

    .venv-torch/bin/python tools/record_numerics.py

Writes tests/engine/golden/numerics.json. Each case is a small spec (seed, shape, op) that
`run_case` turns into numbers with either library: PyTorch here, gradtrace's engine in
tests/engine/test_numerics.py. Inputs come from torch.manual_seed + randn, which the engine
reproduces exactly, so only the results are stored. PyTorch runs with two threads, as it does
by default on the 2-core machines the goldens are recorded on (sums of 32768 or more numbers
are split between threads, which changes their rounding).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "tests" / "engine" / "golden" / "numerics.json"
THREADS = 2

# sizes around the sum kernel's boundaries: vectors of 8, rows of 4 vectors, chunks of 16 rows
# (512 floats) and of 16 chunks, the 32768-element threshold for splitting between threads
SUM_SIZES = sorted(
    set(range(1, 70))
    | {n + d for n in (128, 256, 511, 512, 1024, 2000, 4096, 8192, 8193) for d in (-1, 0, 1)}
    | {16384, 32767, 32768, 32769, 40000, 65535, 65536, 65537, 70000, 100000}
)
DIM_SHAPES = [
    ((3, 4), (0,)),
    ((3, 4), (1,)),
    ((7, 33), (0,)),
    ((7, 33), (1,)),
    ((33, 7), (0,)),
    ((64, 40), (0,)),
    ((64, 40), (1,)),
    ((2000, 3), (0,)),
    ((3, 2000), (1,)),
    ((5, 6, 7), (1,)),
    ((5, 6, 7), (0, 2)),
    ((4, 17, 9), (0, 1)),
    ((32, 1), (0,)),
    ((1, 50), (1,)),
]
MATMUL_SHAPES = [
    (2, 3, 4),
    (3, 4, 2),
    (4, 4, 4),
    (8, 8, 8),
    (32, 16, 64),
    (16, 32, 64),
    (4, 4, 12),
    (12, 16, 16),
    (3, 100, 2),
    (1, 10, 1),
]
# MKL's kernel changes with the shape and the transpose flags: output widths 5 to 11 (where
# its small kernel and its vector one meet), single columns and rows, long sums
PRODUCT_SHAPES = [
    (3, 7, 5),
    (16, 9, 6),
    (20, 33, 7),
    (4, 64, 8),
    (7, 5, 9),
    (33, 12, 10),
    (2, 70, 11),
    (9, 17, 33),
    (65, 3, 1),
    (1, 40, 17),
    (70, 70, 70),
    # 5-7 and 9-11 rows by enough columns: PyTorch's MKL shares them between its two threads
    (10, 32, 64),
    (5, 79, 34),
    (9, 22, 105),
    (6, 5, 17),
    (11, 2, 101),
    (7, 17, 12),
    (1, 55, 1),  # a transposed column: its strides give the transpose flag
]
# a slice of rows whose start is not 16-byte aligned: some kernels add in another order then
SLICED_PRODUCTS = [(3, 7, 22, 105), (1, 9, 22, 105), (2, 5, 50, 3), (1, 12, 64, 1)]  # skip, m, k, n
LAYOUTS = ("ab", "aTb", "abT", "aTbT")  # which operands are transposed views of a copy
VECTOR_SHAPES = [(1, 1), (5, 3), (7, 64), (33, 9), (64, 70), (2, 300)]
DOT_SIZES = [1, 2, 7, 8, 9, 31, 64, 100, 1000, 4095, 4096, 8191, 8192, 10001]
# bmm: below 400 multiply-adds per product PyTorch's own loop, above it one MKL batch call
BATCH_SHAPES = [
    (3, 2, 3, 4),
    (2, 7, 7, 8),
    (4, 9, 5, 16),
    (2, 33, 17, 9),
    (3, 8, 64, 12),
    (1, 6, 27, 18),
]
# batch, in, out; fewer outputs than inputs: the weight's gradient is a 5-11 row product
LINEAR_SHAPES = [(32, 16, 64), (32, 64, 1), (8, 3, 5), (10, 7, 12), (6, 40, 20), (32, 64, 10)]
VML_FUNCTIONS = ("erf", "erfc")  # exact through VML (sinh, cosh, ... are not: engine/numerics)
# the engine follows how PyTorch's MKL shares float32 products and long dots between two
# threads; float64 products it computes as one thread does (engine/blas.py)
PRODUCT_THREADS = {"float32": THREADS, "float64": 1}
OPTIMIZERS = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "dampening": 0.1, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.1, "weight_decay": 0.1, "maximize": True}),
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.05, "betas": (0.8, 0.99), "weight_decay": 0.01}),
    ("Adam", {"lr": 0.01, "amsgrad": True}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.01}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True}),
    ("Adagrad", {"lr": 0.1}),
]
OPTIMIZER_STEPS = 50
# softmax's last-dim kernel: rows shorter than a vector, whole vectors, tails (over any other
# dim PyTorch runs another kernel, with libm's scalar exp where a vector does not fit)
SOFTMAX_SHAPES = [(16, 3), (32, 27), (64, 10), (4, 5), (100, 2), (7, 8), (3, 17), (2, 1000)]
CROSS_ENTROPY_OPTIONS = [
    {},
    {"weight": True},
    {"label_smoothing": 0.1},
    {"ignore_index": 1},
    {"reduction": "sum"},
    {"reduction": "none"},
    {"weight": True, "label_smoothing": 0.2, "ignore_index": 0},
]
# tensor ** number: the kernels Pow.cpp picks (rsqrt, reciprocal, squares) and Sleef's pow
POWERS = (-0.5, -1, -2, 0.5, 2, 3, -1.5, 1.5, 2.5)
# elementwise kernels (engine/elementwise.py): Sleef over whole pairs of 8-float vectors, glibc
# over the rest, oneDNN's gelu; sizes around the pairs, a layout of several runs (a transposed
# view: one run in memory order; a slice: one run per row), and both threads' halves (digested)
ACTIVATIONS = (
    "sigmoid",
    "silu",
    "softplus",
    "softplus-beta",
    "gelu",
    "gelu-tanh",
    "elu",
    "selu",
    "celu",
    "logsigmoid",
    "mish",
    "sinh",
    "cosh",
    "expm1",
    "log1p",
    "tanh",
    "exp",
)
ACTIVATION_SHAPES = [[1], [7], [16], [17], [33], [300], [24, 40]]
ACTIVATION_LAYOUTS = ("T", "slice")  # of the [24, 40] tensor
DIGESTED = 40_000  # two threads' shares
DIGEST_ABOVE = 64  # elements: past this, exact sums of the values stand in for the values
BCE_OPTIONS = [
    {},
    {"reduction": "sum"},
    {"reduction": "none"},
    {"weight": True},
    {"pos_weight": True},
    {"weight": True, "pos_weight": True, "reduction": "sum"},
]

# layer_norm (shape, trailing dims normalised): rows shorter than a vector, tails, several
# 16-vector Welford chunks, a sample of two dims; each affine form takes its own loop
LAYER_NORM_SHAPES = [([6, 5], 1), ([10, 37], 1), ([33, 64], 1), ([4, 300], 1), ([3, 1000], 1)]
LAYER_NORM_SHAPES += [([2, 3, 4, 10], 2)]
LAYER_NORM_AFFINE = ("both", "none", "weight", "bias")
# batch_norm: (N, C) rows take the channels-last kernels (two threads' buffers past 2 rows, a
# loop per channel for 2 rows of 17-2048 channels), (N, C, L) the contiguous ones
BATCH_NORM_SHAPES = [[32, 13], [5, 8], [2, 5], [2, 20], [64, 100], [4, 5, 9], [8, 3, 16], [3, 4, 1]]
# atan2: Sleef's vector atan2 over 16-float pairs, glibc's atan2f for the rest, a broadcast
ATAN2_SHAPES = [([7], [7]), ([16], [16]), ([37], [37]), ([5, 1], [1, 7]), ([40000], [40000])]
# vector norms: (shape, dim, p); the last contiguous dims take the vectorised 2-norm (leftovers
# of 1-7 elements), any other reduction one element at a time, long ones in two threads' halves
NORM_CASES = [
    ([5, 37], [1], 2),
    ([5, 31], [1], 2),
    ([9, 5], [1], 2),
    ([33, 8], [0], 2),
    ([3, 4, 20], [1, 2], 2),
    ([64, 7], [0], 1),
    ([6, 30], [1], 3),
    ([10, 9], [0], "inf"),
    ([1, 50], [0], 3),
    ([40000], [0], 1),
    ([40000], [0], 2),
]


def cases() -> list[dict[str, Any]]:
    """Every case, as a spec both libraries can run."""
    out: list[dict[str, Any]] = []
    for n in SUM_SIZES:
        out.append({"kind": "sum", "seed": n, "shape": [n], "dim": None, "dtype": "float32"})
    for n in (1, 3, 10, 17, 100, 2000, 40000):
        out.append({"kind": "sum", "seed": n, "shape": [n], "dim": None, "dtype": "float64"})
    for n in (5, 100, 2000, 33000):
        out.append({"kind": "mean", "seed": n, "shape": [n], "dim": None, "dtype": "float32"})
    for i, (shape, dim) in enumerate(DIM_SHAPES):
        for op in ("sum", "mean"):
            for keepdim in (False, True):
                spec = {"kind": op, "seed": 100 + i, "shape": list(shape), "dim": list(dim)}
                out.append(dict(spec, keepdim=keepdim, dtype="float32"))
        # the same data seen transposed: the sum follows memory order, not the index order
        if len(shape) == 2:
            spec = {"kind": "sum", "seed": 100 + i, "shape": list(shape), "dim": list(dim)}
            out.append(dict(spec, transpose=True, dtype="float32"))
    for i, alpha in enumerate((0.1, -0.01, 3.7, 1e-3)):
        out.append({"kind": "add", "seed": 300 + i, "shape": [257], "alpha": alpha})
        out.append({"kind": "sub", "seed": 310 + i, "shape": [257], "alpha": alpha})
        out.append({"kind": "add_", "seed": 320 + i, "shape": [3, 5], "alpha": alpha})
    for start, end, steps in ((-math.pi, math.pi, 2000), (0, 1, 11), (-1, 1, 7), (0, 10, 3)):
        out.append({"kind": "linspace", "start": start, "end": end, "steps": steps})
        out.append({"kind": "linspace-mean", "start": start, "end": end, "steps": steps})
    for i, (m, k, n) in enumerate(MATMUL_SHAPES):
        out.append({"kind": "mm", "seed": 400 + i, "shape": [m, k, n]})
    # through MKL's BLAS, which splits some products (5 to 11 rows by 12 or more columns) and
    # long dots between PyTorch's two threads and adds in another order
    for i, (m, k, n) in enumerate(PRODUCT_SHAPES):
        for layout in LAYOUTS:
            for dtype in ("float32", "float64"):
                spec = {"kind": "mm", "seed": 600 + i, "shape": [m, k, n], "layout": layout}
                out.append(dict(spec, dtype=dtype, threads=PRODUCT_THREADS[dtype]))
    for i, (skip, m, k, n) in enumerate(SLICED_PRODUCTS):
        for layout in ("ab", "abT"):
            spec = {"kind": "mm", "seed": 650 + i, "shape": [m, k, n], "layout": layout}
            out.append(dict(spec, skip=skip, dtype="float32", threads=THREADS))
    for i, (m, k) in enumerate(VECTOR_SHAPES):
        for layout in ("ab", "aTb"):
            for dtype in ("float32", "float64"):
                spec = {"kind": "mv", "seed": 700 + i, "shape": [m, k], "layout": layout}
                out.append(dict(spec, dtype=dtype, threads=THREADS))
    for n in DOT_SIZES:
        for dtype in ("float32", "float64"):
            spec = {"kind": "dot", "seed": 800 + n, "shape": [n], "dtype": dtype}
            out.append(dict(spec, threads=THREADS))
    for i, shape in enumerate(BATCH_SHAPES):
        for layout in ("ab", "abT"):
            for dtype in ("float32", "float64"):
                spec = {"kind": "bmm", "seed": 850 + i, "shape": list(shape), "layout": layout}
                out.append(dict(spec, dtype=dtype, threads=PRODUCT_THREADS[dtype]))
    for i, shape in enumerate(LINEAR_SHAPES):
        spec = {"kind": "linear", "seed": 900 + i, "shape": list(shape)}
        out.append(dict(spec, threads=THREADS))
    for i, name in enumerate(VML_FUNCTIONS):
        for dtype in ("float32", "float64"):
            out.append({"kind": "unary", "seed": 950 + i, "name": name, "dtype": dtype})
    for i, (name, kwargs) in enumerate(OPTIMIZERS):
        out.append({"kind": "optim", "seed": 500 + i, "name": name, "kwargs": kwargs})
    out.append({"kind": "cubic-fit", "seed": 0})
    for i, shape in enumerate(SOFTMAX_SHAPES):
        for name in ("softmax", "log_softmax"):
            spec = {"kind": "softmax", "seed": 1000 + i, "shape": list(shape), "dim": [-1]}
            out.append(dict(spec, name=name))
    for i, shape in enumerate(SOFTMAX_SHAPES[:5]):
        for j, options in enumerate(CROSS_ENTROPY_OPTIONS):
            spec = {"kind": "cross-entropy", "seed": 1100 + 10 * i + j, "shape": list(shape)}
            out.append(dict(spec, options=options))
    for i, exponent in enumerate(POWERS):
        spec = {"kind": "pow", "seed": 1200 + i, "shape": [37], "name": f"pow{exponent}"}
        out.append(dict(spec, exponent=exponent))
    for i, name in enumerate(ACTIVATIONS):
        for j, shape in enumerate(ACTIVATION_SHAPES):
            spec = {"kind": "activation", "seed": 1300 + 10 * i + j, "shape": shape}
            out.append(dict(spec, name=name))
        for layout in ACTIVATION_LAYOUTS:
            spec = {"kind": "activation", "seed": 1307 + 10 * i, "shape": [24, 40], "name": name}
            out.append(dict(spec, layout=layout))
        out.append({"kind": "activation", "seed": 1308 + 10 * i, "shape": [DIGESTED], "name": name})
    for i, shape in enumerate(([1], [7], [17], [100], [3, 40])):
        out.append({"kind": "pow-tensor", "seed": 1500 + i, "shape": shape, "name": "tensor"})
        out.append({"kind": "pow-tensor", "seed": 1510 + i, "shape": shape, "name": "number"})
    out.append({"kind": "pow-tensor", "seed": 1520, "shape": [32, 4], "name": "row"})
    for i, options in enumerate(BCE_OPTIONS):
        for name in ("binary_cross_entropy_with_logits", "binary_cross_entropy"):
            if name == "binary_cross_entropy" and "pos_weight" in options:
                continue
            spec = {"kind": "bce", "seed": 1600 + i, "shape": [37, 3], "name": name}
            out.append(dict(spec, options=options))
    for i, (shape, dims) in enumerate(LAYER_NORM_SHAPES):
        for affine in LAYER_NORM_AFFINE:
            spec = {"kind": "layer-norm", "seed": 1700 + i, "shape": shape, "dim": [dims]}
            out.append(dict(spec, name=affine))
    for i, shape in enumerate(BATCH_NORM_SHAPES):
        for training in (True, False):
            for affine in (True, False):
                spec = {"kind": "batch-norm", "seed": 1800 + i, "shape": shape, "affine": affine}
                out.append(dict(spec, training=training, name="train" if training else "eval"))
    for i, (first, second) in enumerate(ATAN2_SHAPES):
        out.append({"kind": "atan2", "seed": 1900 + i, "shape": [first, second]})
    for i, (shape, dim, p) in enumerate(NORM_CASES):
        for name in ("norm", "normalize", "cosine_similarity"):
            if name != "norm" and (p != 2 and name == "cosine_similarity" or len(dim) > 1):
                continue  # cosine_similarity is a 2-norm; both take one dim
            spec = {"kind": "vector-norm", "seed": 1950 + i, "shape": shape, "dim": dim}
            out.append(dict(spec, name=name, p=p))
    return out


def run_case(torch, spec: dict[str, Any]) -> list[float]:
    """The case's result as a flat list of floats, computed by `torch` (PyTorch or the engine)."""
    kind = spec["kind"]
    if kind.startswith("linspace"):
        x = torch.linspace(spec["start"], spec["end"], spec["steps"])
        return _flat(x.mean() if kind == "linspace-mean" else x)
    torch.manual_seed(spec["seed"])
    if kind in ("sum", "mean"):
        x = torch.randn(*spec["shape"], dtype=getattr(torch, spec["dtype"]))
        if spec.get("transpose"):
            x = torch.randn(*reversed(spec["shape"])).t()
        if spec["dim"] is None:
            return _flat(getattr(x, kind)())
        return _flat(getattr(x, kind)(dim=spec["dim"], keepdim=spec.get("keepdim", False)))
    if kind in ("add", "sub", "add_"):
        a, b = torch.randn(*spec["shape"]), torch.randn(*spec["shape"])
        if kind == "add_":
            a.add_(b, alpha=spec["alpha"])
            return _flat(a)
        return _flat(getattr(a, kind)(b, alpha=spec["alpha"]))
    if kind == "mm" and "layout" in spec:
        m, k, n = spec["shape"]
        skip = spec.get("skip", 0)  # rows of a bigger matrix: a view that starts inside it
        a, b = _matrix(torch, m + skip, k, spec, "aT")[skip:], _matrix(torch, k, n, spec, "bT")
        return _flat(a @ b)
    if kind == "mm":
        m, k, n = spec["shape"]
        return _flat(torch.randn(m, k) @ torch.randn(k, n))
    if kind == "mv":
        m, k = spec["shape"]
        a = _matrix(torch, m, k, spec, "aT")
        return _flat(a @ torch.randn(k, dtype=getattr(torch, spec["dtype"])))
    if kind == "dot":
        dtype = getattr(torch, spec["dtype"])
        return _flat(
            torch.dot(
                torch.randn(*spec["shape"], dtype=dtype), torch.randn(*spec["shape"], dtype=dtype)
            )
        )
    if kind == "bmm":
        count, m, k, n = spec["shape"]
        dtype = getattr(torch, spec["dtype"])
        a = torch.randn(count, m, k, dtype=dtype, requires_grad=True)
        if "bT" in spec["layout"]:
            b = torch.randn(count, n, k, dtype=dtype).transpose(1, 2).requires_grad_()
        else:
            b = torch.randn(count, k, n, dtype=dtype, requires_grad=True)
        out = torch.bmm(a, b)
        (out * torch.randn(count, m, n, dtype=dtype)).sum().backward()
        return _flat(out) + _flat(a.grad) + _flat(b.grad)
    if kind == "unary":
        x = torch.randn(3000, dtype=getattr(torch, spec["dtype"])) * 2
        x.requires_grad_()
        y = getattr(torch, spec["name"])(x)
        y.sum().backward()
        return _flat(y) + _flat(x.grad)
    if kind == "linear":
        return _linear_step(torch, *spec["shape"])
    if kind == "optim":
        return _optimizer_run(torch, spec)
    if kind == "cubic-fit":
        return _cubic_fit(torch)
    if kind == "softmax":
        x = torch.randn(*spec["shape"], requires_grad=True) * 3
        x.retain_grad()
        y = getattr(torch, spec["name"])(x, spec["dim"][0])
        (y * torch.randn(*spec["shape"])).sum().backward()
        return _flat(y) + _flat(x.grad)
    if kind == "cross-entropy":
        return _cross_entropy(torch, spec)
    if kind == "pow":
        x = (torch.randn(*spec["shape"]).abs() + 0.1).requires_grad_()
        y = x ** spec["exponent"]
        y.sum().backward()
        return _flat(y) + _flat(x.grad)
    if kind == "activation":
        return _activation(torch, spec)
    if kind == "pow-tensor":
        return _power_of_tensor(torch, spec)
    if kind == "bce":
        return _binary_cross_entropy(torch, spec)
    if kind == "layer-norm":
        return _layer_norm(torch, spec)
    if kind == "batch-norm":
        return _batch_norm(torch, spec)
    if kind == "atan2":
        y = torch.randn(*spec["shape"][0], requires_grad=True)
        x = (torch.randn(*spec["shape"][1]) * 3).requires_grad_()
        out = torch.atan2(y, x)
        (out * torch.randn(*out.shape)).sum().backward()
        return [v for t in (out, y.grad, x.grad) for v in _flat_or_digest(t)]
    if kind == "vector-norm":
        return _vector_norm(torch, spec)
    raise ValueError(f"unknown case kind {kind!r}")


def _activation(torch, spec: dict[str, Any]) -> list[float]:
    """An elementwise function and its input's gradient under a random upstream gradient."""
    F = torch.nn.functional
    functions = {
        "sigmoid": torch.sigmoid,
        "silu": F.silu,
        "softplus": F.softplus,
        "softplus-beta": lambda t: F.softplus(t, beta=0.5, threshold=4.0),
        "gelu": F.gelu,
        "gelu-tanh": lambda t: F.gelu(t, approximate="tanh"),
        "elu": F.elu,
        "selu": F.selu,
        "celu": lambda t: F.celu(t, alpha=2.0),
        "logsigmoid": F.logsigmoid,
        "mish": F.mish,
        "sinh": torch.sinh,
        "cosh": torch.cosh,
        "expm1": torch.expm1,
        "log1p": lambda t: torch.log1p(t.abs() * 0.5 - 0.9),
        "tanh": torch.tanh,
        "exp": torch.exp,
    }
    leaf = (torch.randn(*spec["shape"]) * 3).requires_grad_()
    layout = spec.get("layout")
    x = leaf.t() if layout == "T" else leaf[:, 3:21] if layout == "slice" else leaf
    y = functions[spec["name"]](x)
    (y * torch.randn(*y.shape)).sum().backward()
    values = _flat(y) + _flat(leaf.grad)
    return _digest(values) if leaf.numel() > DIGEST_ABOVE else values


def _power_of_tensor(torch, spec: dict[str, Any]) -> list[float]:
    """tensor ** tensor, number ** tensor, and a row of exponents over a matrix, with gradients."""
    base = (torch.rand(*spec["shape"]) * 3 + 0.1).requires_grad_()
    exponent = (torch.randn(*spec["shape"]) * 2).requires_grad_()
    if spec["name"] == "number":
        y = 2.5**exponent
    elif spec["name"] == "row":
        y = base ** exponent[0]
    else:
        y = base**exponent
    (y * torch.randn(*y.shape)).sum().backward()
    grads = [_flat(t.grad) for t in (base, exponent) if t.grad is not None]
    return _flat(y) + [v for grad in grads for v in grad]


def _binary_cross_entropy(torch, spec: dict[str, Any]) -> list[float]:
    """BCE on logits or on probabilities (through sigmoid), and the logits' gradient."""
    rows, classes = spec["shape"]
    logits = (torch.randn(rows, classes) * 2).requires_grad_()
    target = torch.rand(rows, classes)
    options = dict(spec["options"])
    if options.pop("weight", False):
        options["weight"] = torch.rand(classes)
    if options.pop("pos_weight", False):
        options["pos_weight"] = torch.rand(classes) * 3
    if spec["name"] == "binary_cross_entropy":
        loss = torch.nn.functional.binary_cross_entropy(torch.sigmoid(logits), target, **options)
    else:
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, target, **options)
    loss.sum().backward()
    return _flat(loss) + _flat(logits.grad)


def _digest(values: list) -> list[float]:
    """Exact sums of many values, plain and position-weighted: a one-ulp change anywhere shows."""
    return [math.fsum(values), math.fsum(v * (i % 97 + 1) for i, v in enumerate(values))]


def _matrix(torch, rows: int, columns: int, spec: dict[str, Any], transposed: str):
    """A rows x columns matrix, as a transposed view of a columns x rows one if the layout asks."""
    dtype = getattr(torch, spec["dtype"])
    if transposed in spec["layout"]:
        return torch.randn(columns, rows, dtype=dtype).t()
    return torch.randn(rows, columns, dtype=dtype)


def _linear_step(torch, batch: int, inputs: int, outputs: int) -> list[float]:
    """nn.Linear's forward (addmm) and every gradient of a loss on it (its mm backward)."""
    layer = torch.nn.Linear(inputs, outputs)
    x = torch.randn(batch, inputs, requires_grad=True)
    y = layer(x)
    (y * torch.randn(batch, outputs)).sum().backward()
    return _flat(y) + _flat(x.grad) + _flat(layer.weight.grad) + _flat(layer.bias.grad)


def _optimizer_run(torch, spec: dict[str, Any]) -> list[float]:
    """Every parameter's values after each step, on a loss made of elementwise ops and sums only
    (so the gradients are exact in both libraries and the optimizer's arithmetic is what differs).
    """
    w = torch.randn(5, requires_grad=True)
    m = torch.randn(2, 3, requires_grad=True)
    c = torch.randn((), requires_grad=True)
    target, scale = torch.randn(5), torch.randn(2, 3).abs()
    kwargs = dict(spec["kwargs"])
    if "betas" in kwargs:
        kwargs["betas"] = tuple(kwargs["betas"])
    opt = getattr(torch.optim, spec["name"])([w, m, c], **kwargs)
    trajectory: list[float] = []
    for _ in range(OPTIMIZER_STEPS):
        opt.zero_grad()
        loss = ((w - target) ** 2).sum() + (scale * m * m).sum() * 0.5 + (c - 0.3) ** 2 * 3
        loss.backward()
        opt.step()
        for p in (w, m, c):
            trajectory += _flat(p.detach())
    return trajectory


def _cubic_fit(torch) -> list[float]:
    """PyTorch's tutorial "Learning PyTorch with Examples" (tensors and autograd), as written:
    the loss every 100 steps, then the fitted coefficients.
    """
    x = torch.linspace(-math.pi, math.pi, 2000, dtype=torch.float)
    y = torch.sin(x)
    a, b, c, d = (torch.randn((), dtype=torch.float, requires_grad=True) for _ in range(4))
    learning_rate = 1e-6
    losses = []
    for t in range(2000):
        y_pred = a + b * x + c * x**2 + d * x**3
        loss = (y_pred - y).pow(2).sum()
        if t % 100 == 99:
            losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            for p in (a, b, c, d):
                p -= learning_rate * p.grad
                p.grad = None
    return losses + [p.item() for p in (a, b, c, d)]


def _cross_entropy(torch, spec: dict[str, Any]) -> list[float]:
    """F.cross_entropy on class indices: the loss and the logits' gradient."""
    rows, classes = spec["shape"]
    x = torch.randn(rows, classes, requires_grad=True)
    target = torch.randint(0, classes, (rows,))
    options = dict(spec["options"])
    if options.pop("weight", False):
        options["weight"] = torch.rand(classes)
    loss = torch.nn.functional.cross_entropy(x, target, **options)
    loss.sum().backward()
    return _flat(loss) + _flat(x.grad)


def _layer_norm(torch, spec: dict[str, Any]) -> list[float]:
    """F.layer_norm of shifted, scaled data in one affine form: the output and every gradient."""
    shape, dims, affine = spec["shape"], spec["dim"][0], spec["name"]
    normalized = shape[len(shape) - dims :]
    x = (torch.randn(*shape) * 2 + 3).requires_grad_()
    weight = (torch.randn(*normalized) * 0.5 + 1).requires_grad_()
    bias = (torch.randn(*normalized) * 0.5).requires_grad_()
    weight = weight if affine in ("both", "weight") else None
    bias = bias if affine in ("both", "bias") else None
    y = torch.nn.functional.layer_norm(x, normalized, weight, bias)
    (y * torch.randn(*shape)).sum().backward()
    tensors = [y, x.grad] + [p.grad for p in (weight, bias) if p is not None]
    return [v for t in tensors for v in _flat_or_digest(t)]


def _batch_norm(torch, spec: dict[str, Any]) -> list[float]:
    """nn.BatchNorm1d after one training step, in training or eval mode: its output, every
    gradient and the running statistics."""
    shape = spec["shape"]
    layer = torch.nn.BatchNorm1d(shape[1], affine=spec["affine"])
    with torch.no_grad():
        layer(torch.randn(*shape) * 3 + 1)  # running statistics that are not the defaults
        if spec["affine"]:
            layer.weight.copy_(torch.randn(shape[1]) * 0.5 + 1)
            layer.bias.copy_(torch.randn(shape[1]))
    layer.train(spec["training"])
    x = (torch.randn(*shape) * 2 - 1).requires_grad_()
    y = layer(x)
    (y * torch.randn(*shape)).sum().backward()
    tensors = [y, x.grad, layer.running_mean, layer.running_var]
    tensors += [layer.weight.grad, layer.bias.grad] if spec["affine"] else []
    return [v for t in tensors for v in _flat_or_digest(t)]


def _vector_norm(torch, spec: dict[str, Any]) -> list[float]:
    """Tensor.norm, F.normalize or F.cosine_similarity over spec's dims, and the gradient."""
    F = torch.nn.functional
    p = float(spec["p"])
    x = (torch.randn(*spec["shape"]) * 2).requires_grad_()
    dim = spec["dim"] if len(spec["dim"]) > 1 else spec["dim"][0]
    if spec["name"] == "norm":
        y = x.norm(p=p, dim=dim)
    elif spec["name"] == "normalize":
        y = F.normalize(x, p=p, dim=dim)
    else:
        y = F.cosine_similarity(x, torch.randn(*spec["shape"]), dim=dim)
    (y * torch.randn(tuple(y.shape))).sum().backward()
    return [v for t in (y, x.grad) for v in _flat_or_digest(t)]


def _flat_or_digest(t) -> list[float]:
    values = _flat(t)
    return values if len(values) <= DIGEST_ABOVE else _digest(values)


def _flat(t) -> list[float]:
    values = t.detach().reshape(-1).tolist()
    return [v if math.isfinite(v) else repr(v) for v in values]


def main() -> None:
    import torch

    recorded = []
    for spec in cases():
        torch.set_num_threads(spec.get("threads", THREADS))
        recorded.append(dict(spec, values=run_case(torch, spec)))
    OUT.write_text(
        json.dumps({"torch": torch.__version__, "threads": THREADS, "cases": recorded}) + "\n"
    )
    print(f"wrote {len(recorded)} cases to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
