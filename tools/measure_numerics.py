"""How often does the engine print different numbers from PyTorch? Run under the torch venv:

    .venv-torch/bin/python tools/measure_numerics.py                # this tree's engine
    .venv-torch/bin/python tools/measure_numerics.py --engine DIR   # another checkout's engine

Two measures, printed as a table:

- goldens: every recorded golden snippet (tests/engine/goldens.py) runs on the engine; counted
  are snippets whose stdout is not PyTorch's byte for byte, and the share of probed float values
  (every tensor a snippet leaves behind) whose bits differ;
- targeted: random inputs through both libraries (sums, means, matmuls, add with alpha,
  linspace, and float32 sin/exp/log/tanh/sigmoid/sqrt/pow against numpy in float32 and numpy
  in float64 rounded to float32), as the share of results whose bits differ.

Only ratios on the same inputs mean anything; the numbers are deterministic.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def _bits(values) -> list:
    """Every float in a (nested) list or a single value, as its bit pattern."""
    if not isinstance(values, list):
        values = [values]
    out = []
    for v in values:
        if isinstance(v, list):
            out += _bits(v)
        elif isinstance(v, float):
            out.append(struct.pack("<d", v).hex())
        else:
            out.append(v)
    return out


def numpy_order() -> None:
    """Put numpy's own arithmetic back behind engine/numerics.py: the engine before it existed."""
    from engine import numerics

    def sum_to_shape(grad, shape):
        extra = grad.ndim - len(shape)
        stretched = [
            extra + i for i, n in enumerate(shape) if n == 1 and grad.shape[extra + i] != 1
        ]
        return grad.sum(axis=tuple(range(extra)) + tuple(stretched)).reshape(shape)

    def linspace(start, end, steps, dtype):
        kind, i = dtype.type, np.arange(steps).astype(dtype)
        step = kind((end - start) / (steps - 1))
        back = kind(end) - step * (steps - 1 - i)
        return np.where(i < steps // 2, kind(start) + step * i, back).astype(dtype)

    plain = {
        "sum_like_torch": lambda a, axis=None, keepdims=False: a.sum(axis=axis, keepdims=keepdims),
        "mean_like_torch": lambda a, axis=None, keepdims=False: a.mean(
            axis=axis, keepdims=keepdims, dtype=a.dtype
        ),
        "fma_add": lambda a, b, alpha: a + alpha * b,
        "fused_multiply_add": lambda x, y, z: x * y + z,
        "lerp": lambda start, end, weight: start + (end - start) * weight,
        "matmul_like_torch": lambda a, b: a @ b,
        "unary_like_torch": lambda function, a: function(a),
        "sum_to_shape": sum_to_shape,
        "power_like_torch": lambda a, exponent: a**exponent,
        "linspace_like_torch": linspace,
    }
    for name, function in plain.items():
        setattr(numerics, name, function)
    import engine.optim

    for name in ("fma_add", "fused_multiply_add", "lerp"):
        setattr(engine.optim, name, plain[name])


def measure_goldens() -> dict:
    from tests.engine.goldens import SNIPPETS
    from tests.engine.test_goldens import run

    ran = stdout_same = values = values_same = 0
    differing = []
    per_snippet = {}  # slug: [stdout the same, floats probed, floats the same]
    for snippet in SNIPPETS:
        if snippet.get("unsupported"):
            continue
        with contextlib.redirect_stderr(io.StringIO()):
            try:
                stdout, error, probes = run(snippet["source"])
            except Exception:  # noqa: BLE001 - a snippet the engine cannot run is not measured
                continue
        if error is not None and snippet["error"] is None:
            continue
        ran += 1
        before = (values, values_same)
        if stdout == snippet["stdout"]:
            stdout_same += 1
        else:
            differing.append(snippet["slug"])
        for name, want in snippet["probes"].items():
            got = probes.get(name)
            if got is None:
                continue
            for field in ("values", "grad"):
                if want[field] is None or got[field] is None:
                    continue
                w, g = _bits(want[field]), _bits(got[field])
                if len(w) != len(g):
                    continue
                values += len(w)
                values_same += sum(a == b for a, b in zip(w, g, strict=True))
        same_stdout = stdout == snippet["stdout"]
        per_snippet[snippet["slug"]] = [same_stdout, values - before[0], values_same - before[1]]
    return {
        "snippets run": ran,
        "stdout differs": ran - stdout_same,
        "probed floats": values,
        "probed floats differ": values - values_same,
        "differing": differing,
        "per snippet": per_snippet,
    }


def measure_targeted(engine) -> list[tuple[str, int, int]]:
    """(what, results compared, results whose bits differ) for random inputs."""
    import torch

    rows = []
    rng = np.random.default_rng(0)

    def compare(what, torch_result, engine_result):
        w = np.asarray(torch_result.detach().numpy(), np.float64).ravel()
        g = np.asarray(engine_result.detach().numpy(), np.float64).ravel()
        rows.append((what, w.size, int(np.sum(w.view(np.uint64) != g.view(np.uint64)))))

    def both(seed, *shape):
        torch.manual_seed(seed)
        engine.manual_seed(seed)
        return torch.randn(*shape), engine.randn(*shape)

    sizes = sorted({int(n) for n in rng.integers(1, 70000, 200)} | {2000})
    totals_t, totals_e = [], []
    for n in sizes:
        t, e = both(n, n)
        totals_t.append(t.sum())
        totals_e.append(e.sum())
    compare("sum of randn(n), 200 sizes", torch.stack(totals_t), engine.stack(totals_e))
    dims_t, dims_e = [], []
    for i in range(100):
        shape = tuple(int(s) for s in rng.integers(1, 40, int(rng.integers(2, 4))))
        dim = int(rng.integers(0, len(shape)))
        t, e = both(1000 + i, *shape)
        dims_t.append(t.sum(dim).reshape(-1))
        dims_e.append(e.sum(dim).reshape(-1))
    compare("sum over one dim, 100 shapes", torch.cat(dims_t), engine.cat(dims_e))
    means_t, means_e = [], []
    for i, n in enumerate(sizes[:50]):
        t, e = both(2000 + i, n)
        means_t.append(t.mean())
        means_e.append(e.mean())
    compare("mean of randn(n), 50 sizes", torch.stack(means_t), engine.stack(means_e))
    for label, shapes in (
        (
            "mm, m,k,n in 1..16",
            [(m, k, n) for m in (1, 3, 4, 8, 13) for k in (1, 4, 16) for n in (1, 2, 5, 8, 12, 16)],
        ),
        (
            "mm, nn.Linear-like (batch 32-64)",
            [(32, 16, 64), (64, 3, 1), (32, 64, 1), (64, 1, 16), (32, 8, 4)],
        ),
    ):
        got_t, got_e = [], []
        for i, (m, k, n) in enumerate(shapes):
            (a_t, a_e), (b_t, b_e) = both(3000 + i, m, k), both(4000 + i, k, n)
            got_t.append((a_t @ b_t).reshape(-1))
            got_e.append((a_e @ b_e).reshape(-1))
        compare(label, torch.cat(got_t), engine.cat(got_e))
    mv_t, mv_e, dot_t, dot_e = [], [], [], []
    for i, (m, k) in enumerate([(3, 4), (5, 64), (16, 16), (2, 200), (7, 100)]):
        (a_t, a_e), (v_t, v_e) = both(5000 + i, m, k), both(6000 + i, k)
        mv_t.append(a_t @ v_t)
        mv_e.append(a_e @ v_e)
        dot_t.append(a_t[0] @ v_t)
        dot_e.append(a_e[0] @ v_e)
    compare("mv (matrix @ vector)", torch.cat(mv_t), engine.cat(mv_e))
    compare("dot", torch.stack(dot_t), engine.stack(dot_e))
    (a_t, a_e), (b_t, b_e) = both(7000, 10000), both(7001, 10000)
    compare("add(alpha=0.1)", a_t.add(b_t, alpha=0.1), a_e.add(b_e, alpha=0.1))
    lin_t = [
        torch.linspace(s, e, n)
        for s, e, n in ((-math.pi, math.pi, 2000), (-3, 5, 100), (0, 1, 1001))
    ]
    lin_e = [
        engine.linspace(s, e, n)
        for s, e, n in ((-math.pi, math.pi, 2000), (-3, 5, 100), (0, 1, 1001))
    ]
    compare("linspace", torch.cat(lin_t), engine.cat(lin_e))

    # float32 functions: the engine's numpy float32 against numpy in float64, rounded
    x = (rng.standard_normal(100000) * 3).astype(np.float32)
    positive = np.abs(x) + np.float32(1e-3)
    functions = {
        "sin": (torch.sin, np.sin, x),
        "cos": (torch.cos, np.cos, x),
        "exp": (torch.exp, np.exp, x),
        "log": (torch.log, np.log, positive),
        "tanh": (torch.tanh, np.tanh, x),
        "sqrt": (torch.sqrt, np.sqrt, positive),
        "sigmoid": (torch.sigmoid, lambda v: 1 / (1 + np.exp(-v)), x),
        "pow 2.5": (lambda t: t**2.5, lambda v: v**2.5, positive),
    }
    for name, (torch_fn, numpy_fn, inputs) in functions.items():
        want = torch_fn(torch.from_numpy(inputs)).numpy()
        in_engine = getattr(engine, name, None)
        if name == "pow 2.5":
            ours = (engine.tensor(inputs) ** 2.5).numpy()
        else:
            ours = in_engine(engine.tensor(inputs)).numpy()
        wide = np.asarray(numpy_fn(inputs.astype(np.float64))).astype(np.float32)
        rows.append((f"float32 {name}: engine", want.size, int(np.sum(want != ours))))
        rows.append((f"float32 {name}: float64 rounded", want.size, int(np.sum(want != wide))))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", type=Path, default=ROOT, help="checkout whose engine/ to use")
    parser.add_argument("--skip-goldens", action="store_true")
    parser.add_argument("--dump", type=Path, help="write each golden's counts to this JSON file")
    parser.add_argument(
        "--numpy-order", action="store_true", help="measure with numpy's arithmetic (the before)"
    )
    parser.add_argument(
        "--goldens-only", action="store_true", help="(run by the script itself under .venv)"
    )
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))  # tests/ and tools/ from this tree
    sys.path.insert(0, str(args.engine.resolve()))  # engine/ from the one measured
    if args.numpy_order:
        numpy_order()
    if args.goldens_only:
        # the recorded goldens need no torch, but the project venv's pytest (test_goldens.run)
        result = measure_goldens()
        if args.dump:
            args.dump.write_text(json.dumps(result["per snippet"]))
        for key, value in result.items():
            if key not in ("differing", "per snippet"):
                print(f"goldens: {key:<28} {value}")
        print("goldens whose stdout differs:", ", ".join(result["differing"]) or "none")
        return
    import torch

    torch.set_num_threads(2)  # as the goldens were recorded
    import engine

    print(f"engine from {Path(engine.__file__).parent}")
    for what, n, differ in measure_targeted(engine):
        print(f"{what:<40} {differ:>7} of {n:>7} differ ({differ / max(n, 1):7.2%})")
    sys.stdout.flush()
    if not args.skip_goldens:
        command = [str(ROOT / ".venv" / "bin" / "python"), __file__, "--goldens-only"]
        dump = ["--dump", str(args.dump)] if args.dump else []
        dump += ["--numpy-order"] if args.numpy_order else []
        subprocess.run([*command, "--engine", str(args.engine), *dump], check=True)


if __name__ == "__main__":
    main()
