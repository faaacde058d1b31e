"""How fast is the engine? Untraced and traced, next to real PyTorch eager, in one run.

Runs two workloads as snippets, each several times, and prints medians and the ratios measured
in this one run (machines here are shared and noisy, so only ratios mean anything):

- mlp: a 16→64→1 MLP, batch 32, trained for a few hundred SGD steps;
- scalar: the seed article's `dynamic_model`, a data-dependent `if` per element, then backward.

    .venv/bin/python bench/engine.py

The PyTorch column comes from `.venv-torch/bin/python` (see `make goldens`), run on the same
snippets in a child process, before the engine is timed, so the two never share the CPU. PyTorch
runs on one thread there: the engine uses one, and on a small shared machine PyTorch's
intra-op thread pool spins against the other processes and makes its times noise (a 2-thread
MLP run varies 5x from one run to the next). Without that venv the column reads n/a.

Targets (issue 9): scalar <= 1.0x PyTorch, mlp <= 0.8x PyTorch, traced <= 2x untraced.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TORCH_PYTHON = ROOT / ".venv-torch" / "bin" / "python"

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


def median_seconds(fn, code: str, repeats: int) -> float:
    fn(code)  # warm up: first-call imports and caches
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(code)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


# ***** the PyTorch side: a child process under .venv-torch *****


def run_with_torch(code: str) -> None:
    namespace = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "<bench>", "exec"), namespace)


def torch_worker(workloads: dict[str, str], repeats: int) -> None:
    """Time each workload under real PyTorch and print {name: median seconds} as JSON."""
    import torch

    torch.set_num_threads(1)
    medians = {
        name: median_seconds(run_with_torch, code, repeats) for name, code in workloads.items()
    }
    print(json.dumps({"version": torch.__version__, "medians": medians}))


def torch_medians(workloads: dict[str, str], repeats: int) -> tuple[dict | None, str]:
    """PyTorch's median per workload, or None and the reason there is no PyTorch column."""
    if not TORCH_PYTHON.exists():
        return None, f"no PyTorch baseline: {TORCH_PYTHON} is missing (make goldens installs it)"
    request = json.dumps({"workloads": workloads, "repeats": repeats})
    done = subprocess.run(
        [str(TORCH_PYTHON), __file__, "--torch-worker"],
        input=request,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        return None, f"no PyTorch baseline: the torch worker failed:\n{done.stderr.strip()}"
    answer = json.loads(done.stdout.splitlines()[-1])
    return answer["medians"], f"PyTorch {answer['version']}, one thread, in {TORCH_PYTHON}"


# ***** the engine side *****


def run_untraced(code: str) -> None:
    from engine.snippet import run_snippet

    with contextlib.redirect_stdout(io.StringIO()):
        run_snippet(code)


def run_traced(code: str) -> None:
    from engine.tracer import trace_snippet

    trace = trace_snippet(code, max_events=10_000_000)
    assert trace["outcome"]["status"] == "ok", trace["outcome"]


def ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}x" if a and b else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300, help="SGD steps in the MLP workload")
    parser.add_argument("--elements", type=int, default=400, help="elements in the scalar loop")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--torch-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.torch_worker:
        request = json.load(sys.stdin)
        torch_worker(request["workloads"], request["repeats"])
        return

    sys.path.insert(0, str(ROOT))
    workloads = {
        "mlp": MLP.format(steps=args.steps),
        "scalar": SCALAR.format(elements=args.elements),
    }
    eager, note = torch_medians(workloads, args.repeats)
    print(
        f"{'workload':<8} {'engine':>10} {'traced':>10} {'torch':>10} "
        f"{'engine/torch':>13} {'traced/engine':>14}"
    )
    for name, code in workloads.items():
        untraced = median_seconds(run_untraced, code, args.repeats)
        traced = median_seconds(run_traced, code, args.repeats)
        baseline = eager[name] if eager else None
        baseline_text = f"{baseline * 1e3:8.1f}ms" if baseline else f"{'n/a':>10}"
        print(
            f"{name:<8} {untraced * 1e3:8.1f}ms {traced * 1e3:8.1f}ms {baseline_text} "
            f"{ratio(untraced, baseline):>13} {ratio(traced, untraced):>14}"
        )
    print(f"({note})")


if __name__ == "__main__":
    main()
