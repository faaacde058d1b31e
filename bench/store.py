"""How much does the store take per run, in SQLite and in PostgreSQL? (docs/scaling.md)

    .venv/bin/python bench/store.py [--seconds 5]

A run that is not already stored costs the store a quota check (`usage`), a `put` and, when its
page is first opened, a `get_json` and a `viewed`; a page of a stored trace costs a `get_json`
when the page cache does not have it (docs/caching.md). This times the sequence, and the read
alone, with traces of the
seed snippet's size (new code each time, so every put is a real insert), from 1 and from 8
threads at once (8 servers' worth of writers on one database), on a SQLite file and on a
throwaway PostgreSQL cluster (tests/postgres.py: local, over a Unix socket, fsync on). It prints
runs' worth of store work per second; the sandbox's runs per second (bench/sandbox.py) is what
to hold them against. Machines here are shared and noisy: compare figures from the same run.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.examples import DEFAULT  # noqa: E402
from app.store import Store  # noqa: E402
from engine.tracer import trace_snippet  # noqa: E402
from tests.postgres import Cluster  # noqa: E402


def one_run(store: Store, code: str, trace: dict) -> None:
    owner = store.owner("session", "address")
    store.usage(owner, time.time() - 3600)
    ident, _ = store.put(code, trace, owner=owner)
    store.get_json(ident)
    store.viewed(ident, store.owner("viewer", "elsewhere"))


def per_second(work, threads: int, seconds: float) -> float:
    """How many times a second `threads` threads together do `work(thread, n)`."""
    done = [0] * threads
    deadline = time.monotonic() + seconds

    def worker(k: int) -> None:
        n = 0
        while time.monotonic() < deadline:
            work(k, n)
            n += 1
        done[k] = n

    start = time.monotonic()
    workers = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return sum(done) / (time.monotonic() - start)


def measure(name: str, store: Store, trace: dict, seconds: float) -> None:
    for threads in (1, 8):

        def run(k: int, n: int, tag: str = f"{name} {threads}") -> None:
            one_run(store, f"{DEFAULT.code}\n# {tag} {k} {n}", trace)

        rate = per_second(run, threads, seconds)
        print(f"{name:10s} {threads} thread(s): {rate:7.0f} new runs' store work/s")
    known, _ = store.put(DEFAULT.code, trace)
    for threads in (1, 8):
        rate = per_second(lambda k, n: store.get_json(known), threads, seconds)
        print(f"{name:10s} {threads} thread(s): {rate:7.0f} stored traces read/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    trace = trace_snippet(DEFAULT.code)
    cluster = Cluster(fsync=True)
    try:
        with tempfile.TemporaryDirectory() as folder:
            for name, location in (
                ("SQLite", Path(folder) / "bench.db"),
                ("PostgreSQL", cluster.new_database()),
            ):
                store = Store(location)
                measure(name, store, trace, args.seconds)
                store.close()
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
