"""Two servers on one database behind Debian's nginx, configured as docs/deploying.md says.

What a course's deployment must hold to: a trace posted through the proxy is served by either
server; and when one server is killed (SIGKILL, its whole process group) while clients are
posting, every trace a client was answered for is still served, and new runs go on succeeding
through the survivor, with no client seeing an error (nginx sends a request whose server died
to the other one, which is safe because a run is content-addressed).
"""

from __future__ import annotations

import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.live_server import ProcessGroupServer, free_port
from tests.nginx import nginx_in_front

CLIENTS = 3
BEFORE_KILL = 8  # runs answered before a server is killed
AFTER_KILL = 12  # and after it, through the survivor alone
LOAD_TIMEOUT = 120.0

SNIPPET = """import torch
w = torch.tensor({w}.0, requires_grad=True)
loss = (w * {x} - 1) ** 2
loss.backward()
print("client {client} run {n}", w.grad.item())
"""


class Load:
    """Clients posting distinct snippets through the proxy until told to stop; what each was
    answered, kept: the acknowledged traces, and anything that was not a trace."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.acknowledged: dict[str, dict] = {}
        self.failures: list[str] = []

    def client(self, client: int) -> None:
        with httpx.Client(base_url=self.url, timeout=60) as http:
            n = 0
            while not self.stopping.is_set():
                code = SNIPPET.format(w=n % 5 + 1, x=client + 2, client=client, n=n)
                n += 1
                try:
                    answer = http.post("/api/traces", json={"code": code})
                except httpx.HTTPError as error:
                    failure = f"{type(error).__name__}: {error}"
                else:
                    if answer.status_code == 200:
                        with self.lock:
                            self.acknowledged[answer.json()["id"]] = answer.json()["trace"]
                        continue
                    failure = f"{answer.status_code}: {answer.text[:200]}"
                with self.lock:
                    self.failures.append(failure)

    def wait_for(self, count: int) -> None:
        deadline = time.monotonic() + LOAD_TIMEOUT
        while len(self.acknowledged) < count and not self.failures:
            assert time.monotonic() < deadline, f"only {len(self.acknowledged)} runs answered"
            time.sleep(0.05)


def serve_command(port: int) -> list[str]:
    return [sys.executable, "-m", "app.cli", "serve", "--host", "127.0.0.1", "--port", str(port)]


@pytest.mark.alone
def test_two_servers_behind_nginx_share_traces_and_survive_losing_one(tmp_path, shared_database):
    env = {
        **shared_database,
        "GRADTRACE_DATA_DIR": str(tmp_path / "data"),
        # nginx, on this machine's loopback, is the proxy the servers believe
        "GRADTRACE_TRUSTED_PROXIES": "127.0.0.1",
        "GRADTRACE_ALLOWED_HOSTS": "127.0.0.1",
    }
    ports = [free_port(), free_port()]
    servers = [
        ProcessGroupServer(serve_command(port), port, tmp_path / f"server-{i}.log", env)
        for i, port in enumerate(ports)
    ]
    try:
        for server in servers:
            server.wait_ready()
        with nginx_in_front(tmp_path / "nginx", free_port(), ports) as proxy:
            # a trace posted through the proxy is served by each server
            first = httpx.post(f"{proxy}/api/traces", json={"code": "print(1)"}, timeout=60)
            assert first.status_code == 200, first.text
            for server in servers:
                served = httpx.get(f"{server.url}/api/traces/{first.json()['id']}", timeout=30)
                assert served.status_code == 200
                assert served.json() == first.json()["trace"]

            load = Load(proxy)
            with ThreadPoolExecutor(CLIENTS) as pool:
                clients = [pool.submit(load.client, c) for c in range(CLIENTS)]
                load.wait_for(BEFORE_KILL)
                servers[0].kill()
                killed_at = len(load.acknowledged)
                load.wait_for(killed_at + AFTER_KILL)
                load.stopping.set()
                for client in clients:
                    client.result()
            assert load.failures == [], "a client saw the server die"
            assert servers[0].strays() == [], "processes outlived the killed server"

            # every acknowledged trace, from the survivor and through the proxy
            with httpx.Client(timeout=30) as http:
                for ident, trace in load.acknowledged.items():
                    for url in (servers[1].url, proxy):
                        served = http.get(f"{url}/api/traces/{ident}")
                        assert served.status_code == 200, f"{ident} was acknowledged, then lost"
                        assert served.json() == trace
    finally:
        for server in servers:
            server.close()
