"""How fast is the whole server? Round trips through a real uvicorn, next to /healthz.

    .venv/bin/python bench/server.py [--requests 200] [--seconds 10]

Starts `uvicorn --factory app.main:create_app` on a free loopback port with a fresh database,
and measures in that one run (machines here are shared and noisy, so compare figures from the
same run only, and read the ratios against /healthz rather than the milliseconds):

- `GET /healthz`, the floor: HTTP, routing, middleware, no sandbox;
- `POST /api/traces` with new code each time (sandbox, trace, store: the API stores by content
  hash, so each request appends its own `# run N` line to the seed snippet) and with the same
  code (the stored trace, answered without a run);
- the seed snippet's full round trip: `POST /run` as htmx sends it, new code each time
  (sandbox, trace, store, layout, steps, HTML);
- each with 1 client and with 16 concurrent clients. The sandbox queues runs fairly per client
  address, so each of the 16 clients sends from an address of its own (127.0.0.2, .3, …), as 16
  people would; one more row sends all 16 from a single address, where the per-client limits
  (docs/sandbox.md) turn the surplus away with 429 by design;
- the page of a stored ~500-node trace (`GET /t/{id}`), next to `app.render.render(trace)` of
  the same trace in this process.

Target: the seed snippet's full round trip under 50 ms median on a warm server, and no errors
under 16 concurrent clients. Every loop is bounded by a count and by `--seconds`.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SEED = """import torch

a = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(4.0, requires_grad=True)
c = a * b
d = c + a
d.backward()
print(a.grad.item(), b.grad.item())
"""

# As in bench/render.py: each pass adds 6 elements to the tensors view, so 82 passes draw ~500.
RECURRENCE = """import torch
w = torch.tensor(0.9, requires_grad=True)
b = torch.tensor(0.1, requires_grad=True)
h = torch.tensor(0.5)
for step in range({passes}):
    h = torch.tanh(h * w + b)
h.backward()
"""
BIG_NODES = 500

ROUND_TRIP_TARGET_MS = 50.0
START_TIMEOUT = 60.0
WARMUP = 10
CONCURRENT = 16


@dataclass
class Row:
    name: str
    clients: int
    times: list[float] = field(default_factory=list)  # seconds, successful requests only
    errors: dict[str, int] = field(default_factory=dict)  # status code or exception → count
    note: str = ""

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times) * 1000 if self.times else float("nan")

    @property
    def p99_ms(self) -> float:
        if not self.times:
            return float("nan")
        ordered = sorted(self.times)
        return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))] * 1000


class Server:
    """A uvicorn in a process group of its own (the sandbox's zygote leaves when it does)."""

    def __init__(self, db: Path, log: Path) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log.open("wb")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "--factory",
                "app.main:create_app",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
            ],
            cwd=ROOT,
            env=dict(os.environ, GRADTRACE_STORE_PATH=str(db)),
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=self.log,
            start_new_session=True,
        )
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/healthz", timeout=5).status_code == 200:
                    return
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise SystemExit(f"the server did not start; see {log}")
            time.sleep(0.1)

    def stop(self) -> None:
        for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=wait)
                break
        self.log.close()


class Bench:
    def __init__(self, url: str, requests: int, seconds: float) -> None:
        self.url = url
        self.requests = requests
        self.seconds = seconds
        self.runs = itertools.count()  # one `# run N` line per request that must really run

    def fresh_code(self) -> str:
        return f"{SEED}# run {next(self.runs)}\n"

    def client(self, address: str = "127.0.0.1") -> httpx.Client:
        transport = httpx.HTTPTransport(local_address=address)
        return httpx.Client(base_url=self.url, transport=transport, timeout=30)

    def measure(self, name: str, send, clients: int, *, shared_address: bool = False) -> Row:
        """`send(client)` from `clients` threads, each with its own connection (and, unless
        `shared_address`, its own source address); `--requests` in all, within `--seconds`."""
        row = Row(name, clients)
        lock = threading.Lock()
        per_client = max(1, self.requests // clients)
        start = threading.Barrier(clients)

        def one(k: int) -> None:
            address = "127.0.0.1" if shared_address else f"127.0.0.{k + 2}"
            with self.client(address) as http:
                for _ in range(WARMUP // clients + 1):
                    with contextlib.suppress(httpx.HTTPError):
                        send(http)
                start.wait()
                deadline = time.monotonic() + self.seconds
                for _ in range(per_client):
                    if time.monotonic() > deadline:
                        break
                    began = time.perf_counter()
                    try:
                        answer = send(http)
                        outcome = None if answer.status_code == 200 else str(answer.status_code)
                    except httpx.HTTPError as error:
                        outcome = type(error).__name__
                    took = time.perf_counter() - began
                    with lock:
                        if outcome is None:
                            row.times.append(took)
                        else:
                            row.errors[outcome] = row.errors.get(outcome, 0) + 1

        threads = [threading.Thread(target=one, args=(k,)) for k in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return row


def page_rows(bench: Bench, requests: int) -> list[Row]:
    """GET /t/{id} of a ~500-node trace, and render(trace) in-process (the page's main cost)."""
    from app.render import render

    code = RECURRENCE.format(passes=max(1, (BIG_NODES - 4) // 6))
    with bench.client() as http:
        answer = http.post("/api/traces", json={"code": code})
        answer.raise_for_status()
        ident, trace = answer.json()["id"], answer.json()["trace"]
        probe = http.get(f"/t/{ident}")
    rendered = render(trace)
    nodes = {name: view["nodes"] for name, view in rendered["views"].items()}
    label = ", ".join(f"{name} {count}" for name, count in nodes.items())
    in_process = Row(f"render() in-process ({label} nodes)", 1)
    for _ in range(min(requests, 20)):
        began = time.perf_counter()
        render(trace)
        in_process.times.append(time.perf_counter() - began)
    if probe.status_code != 200:
        in_process.note = f"GET /t/{{id}} answered {probe.status_code}: timed in-process instead"
        return [in_process]
    page = bench.measure(
        f"GET /t/{{id}} page, {BIG_NODES}-node trace", lambda h: h.get(f"/t/{ident}"), 1
    )
    page.note = f"{len(probe.content) / 1024:,.0f} KiB of HTML"
    return [page, in_process]


def full_round_trip(bench: Bench) -> tuple[object, str]:
    """The seed snippet through the page (`POST /run` as htmx sends it), or, if that route does
    not answer here, through the API and then its page."""

    def through_run(http: httpx.Client) -> httpx.Response:
        return http.post("/run", data={"code": bench.fresh_code()}, headers={"HX-Request": "true"})

    def through_api(http: httpx.Client) -> httpx.Response:
        answer = http.post("/api/traces", json={"code": bench.fresh_code()})
        return answer if answer.status_code != 200 else http.get(answer.json()["url"])

    with bench.client() as http:
        answer = through_run(http)
    if answer.status_code == 200 and "<" in answer.text:
        return through_run, "POST /run (htmx)"
    return through_api, f"POST /api/traces + GET /t/{{id}} (POST /run: {answer.status_code})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200, help="per row, all clients together")
    parser.add_argument("--seconds", type=float, default=10.0, help="at most, per row")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="gradtrace-bench-") as tmp:
        server = Server(Path(tmp) / "traces.db", Path(tmp) / "server.log")
        try:
            bench = Bench(server.url, args.requests, args.seconds)
            rows = run_rows(bench, args.requests)
        finally:
            server.stop()
    report(rows)


def run_rows(bench: Bench, requests: int) -> list[Row]:
    def health(http: httpx.Client) -> httpx.Response:
        return http.get("/healthz")

    def fresh(http: httpx.Client) -> httpx.Response:
        return http.post("/api/traces", json={"code": bench.fresh_code()})

    def cached(http: httpx.Client) -> httpx.Response:
        return http.post("/api/traces", json={"code": SEED})

    trip, trip_name = full_round_trip(bench)
    rows = []
    for clients in (1, CONCURRENT):
        rows += [
            bench.measure("GET /healthz", health, clients),
            bench.measure("POST /api/traces, new code", fresh, clients),
            bench.measure("POST /api/traces, same code (stored)", cached, clients),
            bench.measure(f"full round trip: {trip_name}", trip, clients),
        ]
    shared = bench.measure(
        "POST /api/traces, new code, one address", fresh, CONCURRENT, shared_address=True
    )
    shared.note = "a classroom: one address, a session cookie each; none should be refused"
    rows.append(shared)
    rows += page_rows(bench, requests)
    return rows


def report(rows: list[Row]) -> None:
    floors = {r.clients: r.median_ms for r in rows if r.name == "GET /healthz"}
    print(f"{'':<58} {'clients':>7} {'n':>5} {'median':>9} {'p99':>9} {'×healthz':>9}  errors")
    for r in rows:
        floor = floors.get(r.clients, floors[1])
        errors = ", ".join(f"{k}×{v}" for k, v in sorted(r.errors.items())) or "-"
        ratio = r.median_ms / floor
        print(
            f"{r.name:<58} {r.clients:>7} {len(r.times):>5} {r.median_ms:>7.1f}ms "
            f"{r.p99_ms:>7.1f}ms {ratio:>8.1f}×  {errors}{'  ' + r.note if r.note else ''}"
        )
    trip = next(r for r in rows if r.name.startswith("full round trip") and r.clients == 1)
    busy = [r for r in rows if r.clients == CONCURRENT and "one address" not in r.name]
    failed = sum(sum(r.errors.values()) for r in busy)
    met = trip.median_ms < ROUND_TRIP_TARGET_MS
    print(
        f"\ntarget: full round trip median < {ROUND_TRIP_TARGET_MS:.0f} ms on a warm server: "
        f"{trip.median_ms:.1f} ms, {'met' if met else 'MISSED'}"
    )
    print(
        f"target: no errors under {CONCURRENT} concurrent clients: "
        f"{failed} errors, {'met' if failed == 0 else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
