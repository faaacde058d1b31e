"""HTTP hygiene: Host and Origin checks, the same headers on every answer, a body cap enforced
while the body arrives, and a server that times out slow headers and bodies and caps its
connections, in all and for each address.

The first tests go through FastAPI's TestClient. The rest run a real server on a free loopback
port, started through app.http_server.server_config exactly as `gradtrace serve` starts it, with
small limits so that they run in seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import socket
import sys
import time
from pathlib import Path

import httpx
import pytest
import uvicorn
from fastapi.testclient import TestClient
from uvicorn.server import ServerState

from app import cli
from app.config import LimitsSettings, Names, Networks, Settings, StoreSettings
from app.http_server import GuardedH11Protocol
from app.main import create_app
from app.security import SECURITY_HEADERS
from tests.live_server import free_port, serving

ROOT = Path(__file__).resolve().parents[2]
MIB = 1024 * 1024


@pytest.fixture
def settings(tmp_path):
    return Settings(store=StoreSettings(path=tmp_path / "traces.db"))


@pytest.fixture
def client(settings):
    return TestClient(create_app(settings), base_url="http://localhost")


def _has_security_headers(answer) -> bool:
    return all(answer.headers.get(name) == value for name, value in SECURITY_HEADERS.items())


# ***** Host and Origin *****


def test_a_foreign_host_is_refused(client):
    answer = client.get("/", headers={"host": "evil.example"})
    assert answer.status_code == 400
    assert _has_security_headers(answer)


@pytest.mark.parametrize("host", ["localhost:8000", "127.0.0.1:8000", "[::1]:8000"])
def test_the_local_names_are_served(client, host):
    assert client.get("/", headers={"host": host}).status_code == 200


def test_other_hosts_are_allowed_as_a_comma_separated_list(tmp_path):
    # how GRADTRACE_ALLOWED_HOSTS is read
    settings = Settings(
        store=StoreSettings(path=tmp_path / "t.db"), allowed_hosts=Names("a.example, b")
    )
    assert settings.allowed_hosts == ("a.example", "b")
    client = TestClient(create_app(settings), base_url="http://a.example")
    assert client.get("/").status_code == 200
    assert client.get("/", headers={"host": "localhost"}).status_code == 400


# an empty object is a 422 from the route: getting one means the request went through
def _post(client, **headers):
    return client.post("/api/traces", json={}, headers=headers)


def test_the_exact_same_origin_passes(client):
    assert _post(client, host="localhost:8000", origin="http://localhost:8000").status_code == 422


@pytest.mark.parametrize(
    "origin",
    [
        "https://localhost:8000",  # the scheme differs
        "http://localhost:8001",  # the port
        "http://localhost",  # the port, implied
        "http://evil.example:8000",  # the host
        "http://localhost.evil.example:8000",
        "null",
        "garbage",
    ],
)
def test_any_other_origin_is_refused(client, origin):
    answer = _post(client, host="localhost:8000", origin=origin)
    assert answer.status_code == 403
    assert _has_security_headers(answer)


def test_a_default_port_is_the_same_origin_written_or_not(client):
    assert _post(client, host="localhost", origin="http://localhost:80").status_code == 422


@pytest.mark.parametrize("site", ["cross-site", "same-site"])
def test_no_origin_but_a_browser_saying_another_site_is_refused(client, site):
    assert _post(client, **{"sec-fetch-site": site}).status_code == 403


def test_no_origin_and_no_browser_hints_passes(client):
    assert _post(client).status_code == 422


def test_behind_a_trusted_proxy_that_ends_tls_the_https_origin_is_ours(tmp_path):
    proxied = Settings(
        store=StoreSettings(path=tmp_path / "t.db"), trusted_proxies=Networks("127.0.0.1")
    )
    behind = TestClient(create_app(proxied), base_url="http://localhost", client=("127.0.0.1", 9))
    https = {"origin": "https://localhost", "x-forwarded-proto": "https"}
    assert _post(behind, **https).status_code == 422
    assert _post(behind, origin="https://localhost").status_code == 403
    # from anyone else the header counts for nothing
    elsewhere = TestClient(
        create_app(proxied), base_url="http://localhost", client=("198.51.100.7", 9)
    )
    assert _post(elsewhere, **https).status_code == 403


# ***** the same headers on every answer *****


def test_a_500_has_the_security_headers_and_nothing_of_the_exception(settings):
    app = create_app(settings)

    @app.get("/fails")
    def fails():
        raise RuntimeError("the secret at /etc/gradtrace")

    answer = TestClient(app, base_url="http://localhost", raise_server_exceptions=False).get(
        "/fails"
    )
    assert answer.status_code == 500
    assert answer.text == "Internal Server Error"
    assert _has_security_headers(answer)


# ***** the body cap, in process *****


def test_the_body_cap_leaves_room_for_the_largest_snippet_encoded(settings, client):
    # the worst encoding of a snippet within the limit: JSON's \u00XX for each control byte
    code = "\x01" * settings.sandbox.max_source_bytes
    answer = client.post("/api/traces", json={"code": code + "\x01"})
    assert answer.status_code == 413
    # the route's own 413
    assert (
        f"{settings.sandbox.max_source_bytes:,}" in answer.json()["detail"]
    )  # the route's own 413


def test_a_declared_length_over_the_cap_is_a_413_with_a_json_reason(settings, client):
    answer = client.post(
        "/api/traces",
        content=b"x" * (settings.max_body_bytes + 1),
        headers={"content-type": "application/json"},
    )
    assert answer.status_code == 413
    assert f"{settings.max_body_bytes:,} bytes" in answer.json()["detail"]
    assert answer.headers["connection"] == "close"
    assert _has_security_headers(answer)


def _chunks(total: int, size: int = 64 * 1024, sent: list | None = None):
    while total > 0:
        chunk = b"x" * min(size, total)
        total -= len(chunk)
        if sent is not None:
            sent.append(len(chunk))
        yield chunk


def test_a_chunked_body_over_the_cap_is_a_413_for_a_page_too(settings, client):
    form = {"content-type": "application/x-www-form-urlencoded"}
    answer = client.post("/run", content=_chunks(settings.max_body_bytes + 1), headers=form)
    assert answer.status_code == 413
    assert f"{settings.max_body_bytes:,} bytes" in answer.text
    assert _has_security_headers(answer)


def test_a_chunked_body_within_the_cap_is_read_whole(client):
    body = b'{"code": "print(1)"}'
    answer = client.post(
        "/api/traces",
        content=iter([body[:5], body[5:]]),
        headers={"content-type": "application/json"},
    )
    assert answer.status_code == 200


# ***** a real server, as `gradtrace serve` runs it *****

HEADER_TIMEOUT = 3.0
MAX_CONNECTIONS = 6
BODY_IDLE = HEADER_TIMEOUT + 3  # a pause in a body longer than the header timeout is fine
SERVER = """
import sys
from pathlib import Path

import uvicorn

from app.config import Settings, StoreSettings
from app.http_server import server_config
from app.main import create_app

port, db, header_timeout, max_connections, body_idle = sys.argv[1:]
# any other setting from the environment the fixture passes
settings = Settings.from_environment()
limits = settings.limits.model_copy(
    update={
        "header_timeout_seconds": float(header_timeout),
        "max_connections": int(max_connections),
        "keep_alive_timeout_seconds": 1,
        "body_idle_seconds": float(body_idle),
    }
)
settings = settings.model_copy(update={"store": StoreSettings(path=Path(db)), "limits": limits})
config = server_config(create_app(settings), settings, host="127.0.0.1", port=int(port))
uvicorn.Server(config).run()
"""


@contextlib.contextmanager
def _real_server(tmp_path_factory, limits: tuple, **environment: str):
    """The SERVER script on a free port: header timeout, connection cap and body idle limit as
    arguments, any other setting as GRADTRACE_ variables (none from our own environment)."""
    port = free_port()
    db = tmp_path_factory.mktemp("db") / "traces.db"
    command = [sys.executable, "-c", SERVER, str(port), str(db), *map(str, limits)]
    env = {name: value for name, value in os.environ.items() if not name.startswith("GRADTRACE_")}
    env.update(environment, PYTHONPATH=str(ROOT))
    with serving(command, port, cwd=ROOT, env=env) as (process, url):
        process.url, process.port = url, port
        yield process


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with _real_server(tmp_path_factory, (HEADER_TIMEOUT, MAX_CONNECTIONS, BODY_IDLE)) as process:
        yield process


# A second server, for the limits that stop a client who keeps to every pace limit of the
# first: a share of the connections for each address, and a deadline for the whole body. Its
# header timeout is long enough that connections held by a test stay open while it runs.
PER_ADDRESS = 5
BODY_DEADLINE = 3.0
STRICT_BODY_IDLE = 2.0  # a byte a second keeps well inside it


@pytest.fixture(scope="module")
def strict_server(tmp_path_factory):
    limits = (HEADER_TIMEOUT + 10, 10 * PER_ADDRESS, STRICT_BODY_IDLE)
    with _real_server(
        tmp_path_factory,
        limits,
        GRADTRACE_LIMITS_MAX_CONNECTIONS_PER_ADDRESS=str(PER_ADDRESS),
        GRADTRACE_LIMITS_BODY_DEADLINE_SECONDS=str(BODY_DEADLINE),
    ) as process:
        yield process


def _rss_bytes(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    line = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
    return int(line.split()[1]) * 1024


def _connect(server, source: str = "127.0.0.1") -> socket.socket:
    """A connection to the server from `source`: on Linux all of 127.0.0.0/8 is this host."""
    return socket.create_connection(
        ("127.0.0.1", server.port), timeout=HEADER_TIMEOUT + 10, source_address=(source, 0)
    )


def _read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends before it closes; the socket's timeout bounds each wait."""
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except ConnectionResetError:
        pass
    return received


def _nothing_received(sock: socket.socket) -> bool:
    """Open, and not answered (a refused connection has a 503 waiting, then the close)."""
    sock.setblocking(False)
    try:
        sock.recv(1)
    except BlockingIOError:
        return True
    finally:
        sock.setblocking(True)
    return False


def _still_open(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(1) != b""
    except BlockingIOError:
        return True
    finally:
        sock.setblocking(True)


@pytest.mark.slow
def test_a_100_mib_chunked_body_is_refused_without_the_server_growing(server):
    def post(total, sent=None):
        return httpx.post(
            f"{server.url}/api/traces",
            content=_chunks(total, sent=sent),
            headers={"content-type": "application/json"},
            timeout=30,
        )

    assert post(MIB).status_code == 413  # warms every code path on the way
    before = _rss_bytes(server.pid)
    sent: list[int] = []
    answer = post(100 * MIB, sent)
    grown = _rss_bytes(server.pid) - before
    assert answer.status_code == 413
    assert "larger than the limit" in answer.json()["detail"]
    assert sum(sent) < 50 * MIB, "the server kept reading the body after refusing it"
    assert grown < 4 * MIB, f"the server grew by {grown / MIB:.1f} MiB"


def test_a_declared_100_mib_is_refused_before_any_of_the_body_is_sent(server):
    with _connect(server) as sock:
        sock.sendall(
            b"POST /api/traces HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: 104857600\r\n\r\n"
        )
        answer = _read_until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 413 ")
    assert b"larger than the limit" in answer


@pytest.mark.slow
def test_a_client_that_stalls_in_its_headers_is_disconnected(server):
    with _connect(server) as stalled:
        stalled.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the blank line
        # meanwhile the server answers others
        assert httpx.get(f"{server.url}/", timeout=10).status_code == 200
        assert _read_until_closed(stalled) == b""  # closed by the server, not our timeout


@pytest.mark.slow
def test_a_connection_that_sends_nothing_is_disconnected(server):
    with _connect(server) as silent:
        assert _read_until_closed(silent) == b""


@pytest.mark.slow
def test_a_kept_alive_connection_that_stalls_in_its_next_request_is_disconnected(server):
    with _connect(server) as sock:
        sock.sendall(b"GET /api/traces/none HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        head = b""
        while b"\r\n\r\n" not in head:
            head += sock.recv(65536)
        assert head.startswith(b"HTTP/1.1 404 ")
        # the data cancels uvicorn's keep-alive timeout; the header timeout still holds
        sock.sendall(b"GET / HTTP/1.1\r\n")
        _read_until_closed(sock)  # the rest of the 404, then the close


@pytest.mark.slow
def test_a_slow_body_after_complete_headers_is_not_cut_off(server):
    with _connect(server) as sock:
        sock.sendall(
            b"POST /api/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
            b"Content-Type: application/json\r\nContent-Length: 11\r\n\r\n"
        )
        sock.sendall(b'{"code"')
        time.sleep(HEADER_TIMEOUT + 1)
        sock.sendall(b": 1}")
        assert _read_until_closed(sock).startswith(b"HTTP/1.1 422 ")


@pytest.mark.slow
def test_a_body_that_stops_arriving_is_answered_408_and_closed(server):
    with _connect(server) as sock:
        sock.sendall(
            b"POST /run HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 40\r\n\r\n"
        )
        sock.sendall(b"code=print")  # and never the rest
        answer = _read_until_closed(sock)
    # (a pause shorter than BODY_IDLE is not cut off: the test above)
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
    assert b"stopped arriving" in answer


@pytest.mark.alone
def test_connections_past_the_cap_are_answered_503_and_closed(server):
    time.sleep(0.5)  # lets the server see the earlier tests' connections close
    held = [_connect(server) for _ in range(MAX_CONNECTIONS)]
    try:
        extra = [_connect(server) for _ in range(3)]
        for sock in extra:
            with sock:
                answer = _read_until_closed(sock)
            assert answer.startswith(b"HTTP/1.1 503 ")
            assert b"x-content-type-options: nosniff" in answer.lower()
        assert all(_still_open(sock) for sock in held)
        # a place freed is a place taken
        held.pop().close()
        time.sleep(0.5)
        assert httpx.get(f"{server.url}/", timeout=10).status_code == 200
        # and the idle ones are reaped by the header timeout
        for sock in held:
            assert _read_until_closed(sock) == b""
    finally:
        for sock in held:
            sock.close()


@pytest.mark.slow
def test_a_body_that_trickles_is_answered_408_and_closed_at_the_deadline(strict_server):
    with _connect(strict_server) as sock:
        sock.sendall(
            b"POST /run HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\n"
        )
        # a byte a second, each within the idle limit: the body would take 100 s
        answered_while_sending = False
        for _ in range(int(BODY_DEADLINE) + 5):
            sock.sendall(b"x")
            if select.select([sock], [], [], 1.0)[0]:
                answered_while_sending = True
                break
        answer = _read_until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
    assert f"more than {BODY_DEADLINE:g} seconds in total".encode() in answer
    assert answered_while_sending, "the 408 came only once the body stopped arriving"


def _healthz_from(server, source: str) -> bytes:
    with _connect(server, source) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        return _read_until_closed(sock)


def test_one_address_holding_its_share_of_connections_cannot_open_more(strict_server):
    # twice: the second time, a full share again proves every connection of the first
    # (the refused one too) was taken off the count exactly once
    for _ in range(2):
        held = [_connect(strict_server) for _ in range(PER_ADDRESS)]
        try:
            with _connect(strict_server) as extra:
                answer = _read_until_closed(extra)
            assert answer.startswith(b"HTTP/1.1 503 "), answer[:200]
            assert b"x-content-type-options: nosniff" in answer.lower()
            # another address is served meanwhile
            assert _healthz_from(strict_server, "127.0.0.2").startswith(b"HTTP/1.1 200 ")
            assert all(_nothing_received(sock) for sock in held)
        finally:
            for sock in held:
                sock.close()
        time.sleep(0.5)  # lets the server see them close
    assert _healthz_from(strict_server, "127.0.0.1").startswith(b"HTTP/1.1 200 ")


class _Transport(asyncio.Transport):
    """Just enough of a socket's transport for the protocol to take a connection from `peer`."""

    def __init__(self, peer: str) -> None:
        super().__init__()
        self.peer, self.written, self.closed = peer, b"", False

    def get_extra_info(self, name, default=None):
        return (self.peer, 50000) if name == "peername" else default

    def write(self, data) -> None:
        self.written += data

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed


async def _never_called(scope, receive, send) -> None:
    raise AssertionError("no request is made")


def test_an_ipv6_client_counts_by_its_64_and_a_trusted_proxy_not_at_all(tmp_path):
    settings = Settings(
        store=StoreSettings(path=tmp_path / "t.db"),
        limits=LimitsSettings(max_connections_per_address=2),
        trusted_proxies=Networks("2001:db8:ffff::1"),
    )
    protocol = GuardedH11Protocol.with_limits(settings)
    config, state = uvicorn.Config(app=_never_called), ServerState()
    loop = asyncio.new_event_loop()

    def arrive(peer: str) -> tuple[GuardedH11Protocol, _Transport]:
        connection, transport = protocol(config, state, {}, _loop=loop), _Transport(peer)
        connection.connection_made(transport)
        return connection, transport

    try:
        first = [arrive("2001:db8:1:1::1"), arrive("2001:db8:1:1::2")]
        third = arrive("2001:db8:1:1::ffff")  # the same /64
        assert third[1].closed and third[1].written.startswith(b"HTTP/1.1 503 ")
        assert not arrive("2001:db8:1:2::1")[1].closed  # the next /64 is another client
        proxied = [arrive("2001:db8:ffff::1") for _ in range(3)]
        assert not any(transport.closed for _, transport in proxied)
        # the refused connection ends too: every end takes one off, once
        for connection, _ in [*first, third, *proxied]:
            connection.connection_lost(None)
        assert protocol.open_by_address == {"2001:db8:1:2::/64": 1}
        assert not arrive("2001:db8:1:1::3")[1].closed
    finally:
        loop.close()


def test_gradtrace_serve_runs_uvicorn_with_these_options(monkeypatch, tmp_path):
    configs = []

    class Server:
        def __init__(self, config):
            configs.append(config)

        def run(self):
            pass

    monkeypatch.setattr(uvicorn, "Server", Server)
    monkeypatch.setenv("GRADTRACE_STORE_PATH", str(tmp_path / "t.db"))
    assert cli.main(["serve", "--port", "8123"]) == 0
    [config] = configs
    assert issubclass(config.http, GuardedH11Protocol)
    assert config.http.header_timeout_seconds == LimitsSettings().header_timeout_seconds
    assert config.http.max_connections_per_address == LimitsSettings().max_connections_per_address
    assert config.proxy_headers is False
    assert (config.host, config.port, config.timeout_keep_alive) == ("127.0.0.1", 8123, 5)
