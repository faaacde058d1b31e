"""A killed server loses nothing it acknowledged.

A real uvicorn is started on a free loopback port, sent a batch of distinct snippets from a few
threads, and SIGKILLed (its whole process group) the moment the last answer is in. A second
server on the same database must then answer every acknowledged id with the very same trace,
whether the store is a SQLite file or PostgreSQL.
The sandbox's zygote runs in a session of its own, so the kill does not reach it: it must notice
that the server is gone and leave by itself, taking its children with it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.live_server import free_port, uvicorn_command, wait_until_healthy

ROOT = Path(__file__).resolve().parents[2]
SNIPPETS = 20
CLIENT_THREADS = 4
EXIT_TIMEOUT = 15.0  # seconds for the zygote and its children to follow a killed server

SNIPPET = """import torch
a = torch.tensor({a}.0, requires_grad=True)
b = torch.tensor({b}.5, requires_grad=True)
loss = (a * b + a) * {n}
loss.backward()
print({n}, a.grad.item(), b.grad.item())
"""


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent pid, start time) of a process, or None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # the name, in parentheses, may hold spaces
    return fields[0], int(fields[1]), int(fields[19])


def _descendants(pid: int) -> dict[int, int]:
    """Every process below `pid`, as {pid: start time} (the start time tells a reused pid)."""
    parents: dict[int, list[tuple[int, int]]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (stat := _stat(int(entry))) is not None:
            parents.setdefault(stat[1], []).append((int(entry), stat[2]))
    found: dict[int, int] = {}
    todo = [pid]
    while todo:
        for child, started in parents.get(todo.pop(), []):
            if child not in found:
                found[child] = started
                todo.append(child)
    return found


def _alive(processes: dict[int, int]) -> list[int]:
    """Those of `processes` still running (a zombie has already ended)."""
    alive = []
    for pid, started in processes.items():
        stat = _stat(pid)
        if stat is not None and stat[2] == started and stat[0] not in ("Z", "X"):
            alive.append(pid)
    return alive


class Server:
    """`uvicorn --factory app.main:create_app` in its own process group, on a given database."""

    def __init__(self, db: Path, log: Path, store: dict[str, str]) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log.open("ab")
        self.process = subprocess.Popen(
            uvicorn_command(self.port),
            cwd=ROOT,
            env=dict(os.environ, GRADTRACE_DB=str(db), **store),
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=self.log,
            start_new_session=True,
        )
        self.children: dict[int, int] = {}

    def wait_ready(self) -> None:
        try:
            wait_until_healthy(self.url, self.process)
        except RuntimeError as error:
            self.kill()
            pytest.fail(f"{error}; see {self.log.name}")
        self.children = _descendants(self.process.pid)  # the zygote, warm by now

    def kill(self) -> None:
        """SIGKILL the server's whole process group and reap it."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()

    def strays(self) -> list[int]:
        """The server's children (seen at start and at the last look) that outlived it."""
        deadline = time.monotonic() + EXIT_TIMEOUT
        while (alive := _alive(self.children)) and time.monotonic() < deadline:
            time.sleep(0.05)
        return alive

    def close(self) -> None:
        """Whatever happened in the test: nothing of this server is left running."""
        if self.process.poll() is None:
            self.kill()
        for pid in _alive(self.children):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.log.close()


@pytest.fixture(params=["sqlite", "postgres"])
def store(request) -> dict[str, str]:
    """The store's settings beyond GRADTRACE_DB: none for SQLite, a database for PostgreSQL."""
    if request.param == "sqlite":
        return {}
    return {"GRADTRACE_DATABASE_URL": request.getfixturevalue("postgres").new_database()}


@pytest.mark.alone
def test_every_acknowledged_trace_survives_a_sigkill(tmp_path, store):
    db = tmp_path / "traces.db"
    log = tmp_path / "server.log"
    codes = [SNIPPET.format(a=n % 7 + 1, b=n % 5, n=n) for n in range(SNIPPETS)]
    assert len(set(codes)) == SNIPPETS

    first = Server(db, log, store)
    try:
        first.wait_ready()
        assert first.children, "the server started no sandbox zygote"

        with httpx.Client(base_url=first.url, timeout=30) as client:

            def post(code: str) -> httpx.Response:
                return client.post("/api/traces", json={"code": code})

            with ThreadPoolExecutor(CLIENT_THREADS) as pool:
                answers = list(pool.map(post, codes))
            # the acknowledged ones, and not a moment's grace before the kill
            children = first.children | _descendants(first.process.pid)
            first.kill()

        acknowledged = {a.json()["id"]: a.json()["trace"] for a in answers if a.status_code == 200}
        first.children = children
        strays = first.strays()
    finally:
        first.close()

    assert len(acknowledged) == SNIPPETS, [a.status_code for a in answers]
    assert strays == [], f"processes outlived the killed server: {strays}"

    second = Server(db, log, store)
    try:
        second.wait_ready()
        with httpx.Client(base_url=second.url, timeout=30) as client:
            for ident, trace in acknowledged.items():
                answer = client.get(f"/api/traces/{ident}")
                assert answer.status_code == 200, f"{ident} was acknowledged, then lost"
                assert answer.json() == trace
            # the same code finds its stored trace again, under the id it was answered with
            again = client.post("/api/traces", json={"code": codes[0]})
            assert again.json()["id"] == answers[0].json()["id"]
        second.stop()
        assert second.strays() == [], "processes outlived the stopped server"
    finally:
        second.close()
    assert db.exists() == (not store), "the servers did not use the store they were given"
