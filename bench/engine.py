"""How fast is the engine? Untraced and traced, next to real PyTorch eager when it is importable.

Runs two workloads as snippets, each several times, and prints medians and ratios measured in
this one run (machines here are shared and noisy, so only ratios mean anything):

- mlp: a 16→64→1 MLP, batch 32, trained for a few hundred SGD steps;
- scalar: the seed article's `dynamic_model`, a data-dependent `if` per element, then backward.

    .venv/bin/python bench/engine.py                          # engine only
    PYTHONPATH=. .venv-torch/bin/python bench/engine.py       # with PyTorch as the baseline
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.snippet import run_snippet  # noqa: E402
from engine.tracer import trace_snippet  # noqa: E402

MLP = """
import torch
torch.manual_seed(0)
X = torch.randn(32, 16)
Y = torch.randn(32, 1)
model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
loss_fn = torch.nn.MSELoss()
for step in range({steps}):
    opt.zero_grad()
    loss = loss_fn(model(X), Y)
    loss.backward()
    opt.step()
print(round(loss.item(), 4))
"""

SCALAR = """
import torch
torch.manual_seed(0)
weights = torch.randn(5, requires_grad=True)

def dynamic_model(x, threshold=0.5):
    result = 0
    for val in x:
        if val > threshold:
            result += val * weights[0]
        else:
            result += val * weights[1]
    return result

loss = dynamic_model(torch.randn({elements}))
loss.backward()
print(weights.grad[:2])
"""


def run_with_torch(code: str) -> None:
    namespace = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "<bench>", "exec"), namespace)


def run_untraced(code: str) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        run_snippet(code)


def run_traced(code: str) -> None:
    trace = trace_snippet(code, max_events=10_000_000)
    assert trace["outcome"]["status"] == "ok", trace["outcome"]


def median_seconds(fn, code: str, repeats: int) -> float:
    fn(code)  # warm up: first-call imports and caches
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(code)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300, help="SGD steps in the MLP workload")
    parser.add_argument("--elements", type=int, default=400, help="elements in the scalar loop")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    try:
        import torch  # noqa: F401

        have_torch = True
    except ImportError:
        have_torch = False

    workloads = {
        "mlp": MLP.format(steps=args.steps),
        "scalar": SCALAR.format(elements=args.elements),
    }
    print(
        f"{'workload':<8} {'engine':>10} {'traced':>10} {'torch':>10} "
        f"{'engine/torch':>13} {'traced/engine':>14}"
    )
    for name, code in workloads.items():
        untraced = median_seconds(run_untraced, code, args.repeats)
        traced = median_seconds(run_traced, code, args.repeats)
        eager = median_seconds(run_with_torch, code, args.repeats) if have_torch else None
        versus = f"{untraced / eager:13.2f}" if eager else f"{'n/a':>13}"
        eager_text = f"{eager * 1e3:8.1f}ms" if eager else f"{'n/a':>10}"
        print(
            f"{name:<8} {untraced * 1e3:8.1f}ms {traced * 1e3:8.1f}ms {eager_text} "
            f"{versus} {traced / untraced:14.2f}"
        )
    if not have_torch:
        print("(PyTorch is not importable here: run under .venv-torch for the baseline)")


if __name__ == "__main__":
    main()
