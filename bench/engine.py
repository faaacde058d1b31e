"""How fast is the engine? Untraced and traced, next to real PyTorch eager, in one run.

Runs two workloads as snippets, each several times, and prints medians and the ratios measured
in this one run (machines here are shared and noisy, so only ratios mean anything):

- mlp: a 16→64→1 MLP, batch 32, trained for a few hundred SGD steps;
- scalar: the seed article's `dynamic_model`, a data-dependent `if` per element, then backward.

    .venv/bin/python bench/engine.py

The PyTorch column comes from `.venv-torch/bin/python` (see `make goldens`), run on the same
snippets in a child process, one run at a time in turn with the engine's (never at once), so
both see the same load. Both sides run on one thread, as the sandbox runs snippets
(OPENBLAS_NUM_THREADS=1 and friends): on a small shared machine a thread pool spins against the
other processes and makes times noise (a 2-thread PyTorch MLP run varies 5x from one run to the
next). Times are CPU seconds of the process (time.process_time), so waiting for a busy CPU does
not count. Without that venv the PyTorch column reads n/a.

Targets (re-set by issue 22: exactness to PyTorch's bits comes first, and there is no compiled
core): untraced mlp and scalar <= 1.5x PyTorch eager; traced <= 3x untraced on the mlp and
<= 3.5x on the scalar loop.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TORCH_PYTHON = ROOT / ".venv-torch" / "bin" / "python"

# one thread, as app/sandbox/client.py gives a snippet; set before numpy or torch is imported
SINGLE_THREADED = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
os.environ.update(SINGLE_THREADED)

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


def seconds(fn, code: str) -> float:
    # each run starts from a collected heap, as a sandboxed run (a fresh child) does: a
    # snippet that defines a function leaves a cycle (its globals) holding its whole graph,
    # whose collection would otherwise be billed to the next run, of whichever kind
    gc.collect()
    start = time.process_time()
    fn(code)
    return time.process_time() - start


# ***** the PyTorch side: a child process under .venv-torch *****


def run_with_torch(code: str) -> None:
    namespace = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "<bench>", "exec"), namespace)


def torch_worker() -> None:
    """Under real PyTorch: read one snippet per line (JSON), answer with its run time in seconds."""
    import torch

    torch.set_num_threads(1)
    print(json.dumps(torch.__version__), flush=True)
    for line in sys.stdin:
        print(json.dumps(seconds(run_with_torch, json.loads(line))), flush=True)


class TorchRunner:
    """Times snippets under PyTorch in a child process, one run per call, so that its runs can
    be interleaved with the engine's and both see the same load on the machine."""

    def __init__(self) -> None:
        self.child = None
        if not TORCH_PYTHON.exists():
            self.note = f"no PyTorch baseline: {TORCH_PYTHON} is missing (make goldens installs it)"
            return
        self.child = subprocess.Popen(
            [str(TORCH_PYTHON), __file__, "--torch-worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        version = self.child.stdout.readline()
        if not version:
            self.child = None
            self.note = "no PyTorch baseline: the torch worker failed (its error is above)"
            return
        self.note = f"PyTorch {json.loads(version)}, one thread, in {TORCH_PYTHON}"

    def seconds(self, code: str) -> float | None:
        if self.child is None:
            return None
        self.child.stdin.write(json.dumps(code) + "\n")
        self.child.stdin.flush()
        return json.loads(self.child.stdout.readline())

    def close(self) -> None:
        if self.child is not None:
            self.child.stdin.close()
            self.child.wait()


# ***** the engine side *****


def run_untraced(code: str) -> None:
    from engine.snippet import run_snippet

    with contextlib.redirect_stdout(io.StringIO()):
        run_snippet(code)


def run_traced(code: str) -> None:
    from engine.tracer import trace_snippet

    trace = trace_snippet(code, max_events=10_000_000)
    assert trace["outcome"]["status"] == "ok", trace["outcome"]


def medians(code: str, repeats: int, torch: TorchRunner) -> tuple[float, float, float | None]:
    """Median untraced, traced and PyTorch times, the three taken in turn within each repeat."""
    runs = []
    for repeat in range(repeats + 1):  # the first is a warm-up: imports and caches
        run = (seconds(run_untraced, code), seconds(run_traced, code), torch.seconds(code))
        if repeat:
            runs.append(run)
    untraced, traced, eager = zip(*runs, strict=True)
    baseline = statistics.median(eager) if eager[0] is not None else None
    return statistics.median(untraced), statistics.median(traced), baseline


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
        torch_worker()
        return

    sys.path.insert(0, str(ROOT))
    workloads = {
        "mlp": MLP.format(steps=args.steps),
        "scalar": SCALAR.format(elements=args.elements),
    }
    torch = TorchRunner()
    print(
        f"{'workload':<8} {'engine':>10} {'traced':>10} {'torch':>10} "
        f"{'engine/torch':>13} {'traced/engine':>14}"
    )
    try:
        for name, code in workloads.items():
            untraced, traced, baseline = medians(code, args.repeats, torch)
            baseline_text = f"{baseline * 1e3:8.1f}ms" if baseline else f"{'n/a':>10}"
            print(
                f"{name:<8} {untraced * 1e3:8.1f}ms {traced * 1e3:8.1f}ms {baseline_text} "
                f"{ratio(untraced, baseline):>13} {ratio(traced, untraced):>14}"
            )
    finally:
        torch.close()
    print(f"({torch.note})")


if __name__ == "__main__":
    main()
