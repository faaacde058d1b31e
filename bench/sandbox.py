"""What does the sandbox cost? One run of the seed snippet, and runs per second under load.

Prints, from one run of this script (machines here are shared and noisy, so compare figures
from the same run only):

- the median time of the seed snippet in-process untraced, in-process traced, and through the
  sandbox (fork of the warm zygote, every layer, trace back as JSON, parsed and checked);
- throughput with 1, 4 and 16 clients each running the seed snippet back to back.

Targets (docs/sandbox.md): the sandbox adds at most 10 ms over in-process tracing, and 16
concurrent clients get at least 150 runs/s on 2 cores.

    .venv/bin/python bench/sandbox.py [--runs 200] [--seconds 5]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.config import Settings  # noqa: E402
from app.sandbox import SandboxClient, probe  # noqa: E402
from engine.snippet import run_snippet  # noqa: E402
from engine.tracer import trace_snippet  # noqa: E402

SEED = """import torch

a = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(4.0, requires_grad=True)
c = a * b
d = c + a
d.backward()
print(a.grad.item(), b.grad.item())
"""

OVERHEAD_TARGET_MS = 10.0
THROUGHPUT_TARGET = 150.0


def median_ms(run, runs: int) -> float:
    for _ in range(10):  # warm
        run()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def throughput(client: SandboxClient, clients: int, seconds: float) -> tuple[float, float]:
    """Runs per second with `clients` threads running back to back, and their p99 latency."""
    stop = time.monotonic() + seconds
    latencies: list[float] = []
    lock = threading.Lock()

    def learner(n: int) -> None:
        while time.monotonic() < stop:
            start = time.perf_counter()
            trace = client.run_blocking(SEED, client=f"bench-{n}")
            elapsed = time.perf_counter() - start
            assert trace["outcome"] == {"status": "ok"}, trace["outcome"]
            with lock:
                latencies.append(elapsed)

    began = time.monotonic()
    threads = [threading.Thread(target=learner, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    took = time.monotonic() - began
    latencies.sort()
    return len(latencies) / took, latencies[int(len(latencies) * 0.99) - 1] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()

    client = SandboxClient(Settings.from_environment().sandbox)
    client.start()
    report = probe.check(client)
    layers = [n for n, layer in report["layers"].items() if layer["state"] == "active"]
    print(
        f"machine: {len(os.sched_getaffinity(0))} cores; sandbox layers active: "
        f"{len(layers)}/{len(report['layers'])} ({'strong' if report['strong'] else 'WEAK'})"
    )

    with contextlib.redirect_stdout(io.StringIO()):
        untraced = median_ms(lambda: run_snippet(SEED), args.runs)
        traced = median_ms(lambda: trace_snippet(SEED), args.runs)
    sandboxed = median_ms(lambda: client.run_blocking(SEED), args.runs)
    overhead = sandboxed - traced
    print(f"seed snippet, median of {args.runs}:")
    print(f"  in-process, untraced  {untraced:7.2f} ms")
    print(f"  in-process, traced    {traced:7.2f} ms")
    met = "met" if overhead <= OVERHEAD_TARGET_MS else "MISSED"
    print(
        f"  sandboxed, traced     {sandboxed:7.2f} ms  (sandbox adds {overhead:.2f} ms; "
        f"target <= {OVERHEAD_TARGET_MS:g} ms: {met})"
    )
    print(f"throughput, {args.seconds:g} s each:")
    for clients in (1, 4, 16):
        rate, p99 = throughput(client, clients, args.seconds)
        note = ""
        if clients == 16:
            met = "met" if rate >= THROUGHPUT_TARGET else "MISSED"
            note = f"  (target >= {THROUGHPUT_TARGET:g} runs/s: {met})"
        print(f"  {clients:2d} concurrent clients  {rate:6.1f} runs/s  p99 {p99:6.1f} ms{note}")
    client.close()


if __name__ == "__main__":
    main()
