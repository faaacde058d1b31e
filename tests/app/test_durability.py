"""A killed server loses nothing it acknowledged.

A real uvicorn is started on a free loopback port, sent a batch of distinct snippets from a few
threads, and SIGKILLed (its whole process group) the moment the last answer is in. A second
server on the same database must then answer every acknowledged id with the very same trace,
whether the store is a SQLite file or PostgreSQL.
The sandbox's zygote runs in a session of its own, so the kill does not reach it: it must notice
that the server is gone and leave by itself, taking its children with it.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.live_server import ProcessGroupServer, descendants, free_port, uvicorn_command

SNIPPETS = 20
CLIENT_THREADS = 4

SNIPPET = """import torch
a = torch.tensor({a}.0, requires_grad=True)
b = torch.tensor({b}.5, requires_grad=True)
loss = (a * b + a) * {n}
loss.backward()
print({n}, a.grad.item(), b.grad.item())
"""


def server_on(db: Path, log: Path, store: dict[str, str]) -> ProcessGroupServer:
    """uvicorn serving the app on `db` (and `store`'s settings), in a process group of its own."""
    port = free_port()
    env = {"GRADTRACE_STORE_PATH": str(db), **store}
    return ProcessGroupServer(uvicorn_command(port), port, log, env)


@pytest.fixture(params=["sqlite", "postgres"])
def store(request) -> dict[str, str]:
    """The store's settings beyond its path: none for SQLite, a database for PostgreSQL."""
    if request.param == "sqlite":
        return {}
    return {"GRADTRACE_STORE_DATABASE_URL": request.getfixturevalue("postgres").new_database()}


@pytest.mark.alone
def test_every_acknowledged_trace_survives_a_sigkill(tmp_path, store):
    db = tmp_path / "traces.db"
    log = tmp_path / "server.log"
    codes = [SNIPPET.format(a=n % 7 + 1, b=n % 5, n=n) for n in range(SNIPPETS)]
    assert len(set(codes)) == SNIPPETS

    first = server_on(db, log, store)
    try:
        first.wait_ready()
        assert first.children, "the server started no sandbox zygote"

        with httpx.Client(base_url=first.url, timeout=30) as client:

            def post(code: str) -> httpx.Response:
                return client.post("/api/traces", json={"code": code})

            with ThreadPoolExecutor(CLIENT_THREADS) as pool:
                answers = list(pool.map(post, codes))
            # the acknowledged ones, and not a moment's grace before the kill
            children = first.children | descendants(first.process.pid)
            first.kill()

        acknowledged = {a.json()["id"]: a.json()["trace"] for a in answers if a.status_code == 200}
        first.children = children
        strays = first.strays()
    finally:
        first.close()

    assert len(acknowledged) == SNIPPETS, [a.status_code for a in answers]
    assert strays == [], f"processes outlived the killed server: {strays}"

    second = server_on(db, log, store)
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
