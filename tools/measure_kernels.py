"""How many of the engine's float results differ from PyTorch's, kernel by kernel, on random shapes.

    .venv/bin/python tools/measure_kernels.py                    # every family
    .venv/bin/python tools/measure_kernels.py products layer_norm --count 300

PyTorch runs in its own venv (.venv-torch, two threads as the goldens are recorded) on inputs
drawn here with numpy, and pickles its results; then the engine (this venv, with MKL) runs the
same cases through its torch-like API, and each family prints: cases, elements, elements whose
bits differ, and cases that match entirely. Families cover learners' sizes: matrices up to 128
by 128 in every layout, with and without a bias, batches up to 64.

Only the counts mean anything; the cases are deterministic for a given --seed and --count.
"""

from __future__ import annotations

import argparse
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
TORCH_PYTHON = ROOT / ".venv-torch" / "bin" / "python"


# ***** the cases: inputs drawn with numpy, run by either library *****


def _matrix(rng, rows: int, columns: int, transposed: bool, dtype) -> dict:
    """A rows x columns matrix, stored transposed (read through .t()) if asked."""
    data = rng.standard_normal((columns, rows) if transposed else (rows, columns)).astype(dtype)
    return {"data": data, "t": transposed}


def _products(rng, count: int) -> list[dict]:
    cases = []
    for _ in range(count):
        m, k, n = (int(v) for v in rng.integers(1, 129, 3))
        if rng.random() < 0.4:  # the sizes MKL shares between threads
            m = int(rng.choice([5, 6, 7, 9, 10, 11]))
        dtype = np.float32 if rng.random() < 0.8 else np.float64
        a = _matrix(rng, m, k, bool(rng.random() < 0.5), dtype)
        b = _matrix(rng, k, n, bool(rng.random() < 0.5), dtype)
        bias = rng.standard_normal(n).astype(dtype) if rng.random() < 0.5 else None
        label = f"mm {np.dtype(dtype).name}" + (" +bias" if bias is not None else "")
        cases.append({"family": "products", "label": label, "a": a, "b": b, "bias": bias})
    for _ in range(count // 4):
        batch, m, k, n = (int(v) for v in rng.integers(1, 33, 4))
        a = rng.standard_normal((batch, m, k)).astype(np.float32)
        b = rng.standard_normal((batch, k, n)).astype(np.float32)
        cases.append({"family": "products", "label": "bmm float32", "x": a, "y": b})
    for _ in range(count // 4):
        m, k = (int(v) for v in rng.integers(1, 129, 2))
        a = _matrix(rng, m, k, bool(rng.random() < 0.5), np.float32)
        v = rng.standard_normal(k).astype(np.float32)
        cases.append({"family": "products", "label": "mv float32", "a": a, "v": v})
    return cases


def _linear(rng, count: int) -> list[dict]:
    cases = []
    for _ in range(count):
        batch = int(rng.integers(1, 65))
        inputs, outputs = (int(v) for v in rng.integers(1, 129, 2))
        if rng.random() < 0.4:
            outputs = int(rng.choice([5, 6, 7, 9, 10, 11]))
        cases.append(
            {
                "family": "linear",
                "label": "nn.Linear step",
                "x": rng.standard_normal((batch, inputs)).astype(np.float32),
                "w": (rng.standard_normal((outputs, inputs)) / 8).astype(np.float32),
                "b": rng.standard_normal(outputs).astype(np.float32),
                "g": rng.standard_normal((batch, outputs)).astype(np.float32),
            }
        )
    return cases


def _layer_norm(rng, count: int) -> list[dict]:
    cases = []
    for _ in range(count):
        rows = int(rng.integers(1, 65))
        size = int(rng.choice([rng.integers(1, 129), rng.integers(129, 1025)]))
        affine = str(rng.choice(["both", "none", "weight", "bias"]))
        x = rng.standard_normal((rows, size)) * rng.choice([0.1, 1, 3]) + rng.choice([0, 1, -5])
        cases.append(
            {
                "family": "layer_norm",
                "label": f"layer_norm {affine}",
                "x": x.astype(np.float32),
                "w": (rng.standard_normal(size) * 0.5 + 1).astype(np.float32),
                "b": (rng.standard_normal(size) * 0.5).astype(np.float32),
                "affine": affine,
                "g": rng.standard_normal((rows, size)).astype(np.float32),
            }
        )
    return cases


def _batch_norm(rng, count: int) -> list[dict]:
    cases = []
    for _ in range(count):
        batch, channels = int(rng.integers(2, 65)), int(rng.integers(1, 129))
        shape = (
            (batch, channels) if rng.random() < 0.7 else (batch, channels, int(rng.integers(1, 20)))
        )
        training = bool(rng.random() < 0.7)
        x = rng.standard_normal(shape) * rng.choice([0.1, 1, 3]) + rng.choice([0, 1, -5])
        cases.append(
            {
                "family": "batch_norm",
                "label": f"batch_norm {len(shape)}-d {'train' if training else 'eval'}",
                "x": x.astype(np.float32),
                "w": (rng.standard_normal(channels) * 0.5 + 1).astype(np.float32),
                "b": (rng.standard_normal(channels) * 0.5).astype(np.float32),
                "mean": (rng.standard_normal(channels) * 0.3).astype(np.float32),
                "var": (rng.random(channels) + 0.5).astype(np.float32),
                "training": training,
                "g": rng.standard_normal(shape).astype(np.float32),
            }
        )
    return cases


def _norms(rng, count: int) -> list[dict]:
    cases = []
    for _ in range(count):
        shape = tuple(int(v) for v in rng.integers(1, 70, int(rng.integers(1, 4))))
        dim = int(rng.integers(0, len(shape)))
        x = (rng.standard_normal(shape) * rng.choice([0.5, 1, 3])).astype(np.float32)
        g = rng.standard_normal(shape).astype(np.float32)
        for kind in ("norm", "normalize", "cosine_similarity"):
            p = float(rng.choice([2, 1, 3])) if kind != "cosine_similarity" else 2.0
            other = rng.standard_normal(shape).astype(np.float32)
            cases.append(
                {"family": "norms", "label": f"{kind} p={p:g}", "kind": kind, "x": x, "y": other}
                | {"dim": dim, "p": p, "g": g}
            )
    return cases


def _atan2(rng, count: int) -> list[dict]:
    cases = []
    for _ in range(count):
        n = int(rng.integers(1, 3000))
        y, x = (rng.standard_normal((2, n)) * rng.choice([0.01, 1, 100])).astype(np.float32)
        cases.append({"family": "atan2", "label": "atan2", "x": x, "y": y})
    return cases


def _losses(rng, count: int) -> list[dict]:
    cases = []
    for _ in range(count):
        shape = tuple(int(v) for v in rng.integers(1, 50, int(rng.integers(1, 3))))
        reduction = str(rng.choice(["mean", "sum", "none"]))
        names = ("binary_cross_entropy", "binary_cross_entropy_with_logits", "smooth_l1_loss")
        for name in (*names, "huber_loss"):
            if True:
                x = rng.standard_normal(shape).astype(np.float32) * 2
                if name == "binary_cross_entropy":
                    x = 1 / (1 + np.exp(-x))
                target = rng.random(shape).astype(np.float32)
                if name in ("smooth_l1_loss", "huber_loss"):
                    target = (rng.standard_normal(shape) * 2).astype(np.float32)
                case = {"family": "losses", "label": f"{name} {reduction}", "name": name}
                case |= {"x": x, "y": target, "reduction": reduction}
                case["beta"] = float(rng.choice([1.0, 0.5, 2.0]))
                cases.append(case)
    return cases


FAMILIES = {
    "products": _products,
    "linear": _linear,
    "layer_norm": _layer_norm,
    "batch_norm": _batch_norm,
    "norms": _norms,
    "atan2": _atan2,
    "losses": _losses,
}


def run(torch, case: dict) -> dict:
    """The case's results as numpy arrays, computed by `torch` (PyTorch or the engine)."""

    def tensor(array, grad: bool = False):
        t = torch.tensor(array)
        return t.requires_grad_() if grad else t

    def matrix(spec):
        t = tensor(spec["data"])
        return t.t() if spec["t"] else t

    family = case["family"]
    if family == "products":
        if "x" in case:
            return {"out": torch.bmm(tensor(case["x"]), tensor(case["y"]))}
        if "v" in case:
            return {"out": matrix(case["a"]) @ tensor(case["v"])}
        a, b = matrix(case["a"]), matrix(case["b"])
        if case["bias"] is None:
            return {"out": a @ b}
        # addmm(bias, a, b), as F.linear calls it with b as its weight's transpose
        return {"out": torch.nn.functional.linear(a, b.t(), tensor(case["bias"]))}
    if family == "linear":
        layer = torch.nn.Linear(*reversed(case["w"].shape))
        with torch.no_grad():
            layer.weight.copy_(tensor(case["w"]))
            layer.bias.copy_(tensor(case["b"]))
        x = tensor(case["x"], grad=True)
        y = layer(x)
        y.backward(tensor(case["g"]))
        return {"out": y, "x.grad": x.grad, "w.grad": layer.weight.grad, "b.grad": layer.bias.grad}
    if family == "layer_norm":
        x = tensor(case["x"], grad=True)
        w = tensor(case["w"], grad=True) if case["affine"] in ("both", "weight") else None
        b = tensor(case["b"], grad=True) if case["affine"] in ("both", "bias") else None
        y = torch.nn.functional.layer_norm(x, case["x"].shape[1:], w, b)
        y.backward(tensor(case["g"]))
        grads = {"w.grad": None if w is None else w.grad, "b.grad": None if b is None else b.grad}
        return {"out": y, "x.grad": x.grad, **grads}
    if family == "batch_norm":
        x = tensor(case["x"], grad=True)
        w, b = tensor(case["w"], grad=True), tensor(case["b"], grad=True)
        mean, var = tensor(case["mean"]), tensor(case["var"])
        y = torch.nn.functional.batch_norm(x, mean, var, w, b, training=case["training"])
        y.backward(tensor(case["g"]))
        return {
            "out": y,
            "x.grad": x.grad,
            "w.grad": w.grad,
            "b.grad": b.grad,
            "running_mean": mean,
            "running_var": var,
        }
    if family == "norms":
        F = torch.nn.functional
        x = tensor(case["x"], grad=True)
        dim, p = case["dim"], case["p"]
        if case["kind"] == "norm":
            y = x.norm(p=p, dim=dim)
        elif case["kind"] == "normalize":
            y = F.normalize(x, p=p, dim=dim)
        else:
            y = F.cosine_similarity(x, tensor(case["y"]), dim=dim)
        y.backward(torch.ones_like(y) if y.shape != x.shape else tensor(case["g"]))
        return {"out": y, "x.grad": x.grad}
    if family == "atan2":
        y, x = tensor(case["y"], grad=True), tensor(case["x"], grad=True)
        out = torch.atan2(y, x)
        out.sum().backward()
        return {"out": out, "y.grad": y.grad, "x.grad": x.grad}
    if family == "losses":
        F = torch.nn.functional
        x = tensor(case["x"], grad=True)
        options = {"reduction": case["reduction"]}
        if case["name"] in ("smooth_l1_loss", "huber_loss"):
            options["beta" if case["name"] == "smooth_l1_loss" else "delta"] = case["beta"]
        loss = getattr(F, case["name"])(x, tensor(case["y"]), **options)
        loss.backward(torch.ones_like(loss))
        return {"out": loss, "x.grad": x.grad}
    raise ValueError(family)


def _numpy(results: dict) -> dict:
    return {k: None if v is None else v.detach().numpy().copy() for k, v in results.items()}


# ***** the two sides *****


def record(path: Path, families: list[str], count: int, seed: int) -> None:
    """Under .venv-torch: every case's inputs and PyTorch's results, pickled."""
    import torch

    torch.set_num_threads(2)
    rng = np.random.default_rng(seed)
    recorded = []
    for family in families:
        for case in FAMILIES[family](rng, count):
            recorded.append((case, _numpy(run(torch, case))))
    path.write_bytes(pickle.dumps(recorded))


def compare(recorded: list) -> list[tuple]:
    """Under .venv: the engine's results against PyTorch's, as table rows per label."""
    sys.path.insert(0, str(ROOT))
    import engine

    rows: dict[str, list[int]] = {}
    for case, want in recorded:
        got = _numpy(run(engine, case))
        row = rows.setdefault(case["label"], [0, 0, 0, 0])  # cases, elements, differ, exact
        row[0] += 1
        differ = 0
        for name, expected in want.items():
            if expected is None:
                continue
            actual = got[name]
            row[1] += expected.size
            if actual is None or actual.shape != expected.shape or actual.dtype != expected.dtype:
                differ += expected.size
                continue
            bits = np.dtype(f"u{expected.itemsize}")
            differ += int(np.sum(actual.view(bits) != expected.view(bits)))
        row[2] += differ
        row[3] += differ == 0
    return sorted((label, *counts) for label, counts in rows.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("families", nargs="*", help=f"some of: {', '.join(FAMILIES)} (all)")
    parser.add_argument("--count", type=int, default=200, help="cases per family (and kind)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--record", type=Path, help=argparse.SUPPRESS)  # the torch side
    args = parser.parse_args()
    unknown = set(args.families) - set(FAMILIES)
    if unknown:
        parser.error(f"unknown families: {', '.join(sorted(unknown))}")
    args.families = args.families or list(FAMILIES)
    if args.record:
        record(args.record, args.families, args.count, args.seed)
        return
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "recorded.pickle"
        command = [str(TORCH_PYTHON), __file__, *args.families, "--record", str(path)]
        command += ["--count", str(args.count), "--seed", str(args.seed)]
        subprocess.run(command, check=True)
        recorded = pickle.loads(path.read_bytes())
    print(f"{'kernel':<36} {'cases':>6} {'elements':>9} {'differ':>8} {'exact cases':>12}")
    for label, cases, elements, differ, exact in compare(recorded):
        share = differ / max(elements, 1)
        print(f"{label:<36} {cases:>6} {elements:>9} {differ:>8} {exact:>6} ({share:6.2%} differ)")


if __name__ == "__main__":
    main()
