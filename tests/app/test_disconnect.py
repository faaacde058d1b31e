"""A request whose client hangs up is stopped: the work it waits for is not done for nobody."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
import time
from collections.abc import Iterator

import uvicorn

from app.config import Settings, StoreSettings
from app.main import create_app
from engine.tracer import trace_snippet
from tests.live_server import free_port


@contextlib.contextmanager
def served(app) -> Iterator[int]:
    """The app served by uvicorn in a thread of this process (so a test can reach into it)."""
    port = free_port()
    # log_config=None: uvicorn leaves logging alone, so its errors reach the tests (caplog)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, lifespan="off", log_config=None)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        yield port
    finally:
        server.should_exit = True
        thread.join(10)


def test_a_page_whose_client_hangs_up_is_cancelled(tmp_path, caplog):
    app = create_app(Settings(store=StoreSettings(path=tmp_path / "traces.db"), session_secret="s"))
    ident, _ = app.state.store.put("print(1)", trace_snippet("print(1)"))
    started, cancelled = threading.Event(), threading.Event()

    async def page(ident, requester, expand=(), *, trace=None):
        started.set()
        try:
            await asyncio.sleep(60)  # a drawing that takes its whole budget
        except asyncio.CancelledError:
            cancelled.set()
            raise

    app.state.traces.page = page
    with served(app) as port:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as client:
            client.sendall(f"GET /t/{ident} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
            assert started.wait(5), "the page was never asked for"
        # the client has gone, with no answer sent
        assert cancelled.wait(5), "the page went on drawing for a client that had gone"
        time.sleep(0.3)
    # and quietly: a flood of hang-ups must not be a flood of logged tracebacks
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text[-2000:]


def test_a_page_whose_client_waits_is_answered(tmp_path):
    """The listener only cancels on a disconnect: a client that waits gets its page."""
    app = create_app(Settings(store=StoreSettings(path=tmp_path / "traces.db"), session_secret="s"))
    ident, _ = app.state.store.put("print(1)", trace_snippet("print(1)"))
    shown = {"code": "print(1)", "outcome": {"status": "ok"}, "stdout": "1\n", "stderr": ""}

    async def page(ident, requester, expand=(), *, trace=None):
        await asyncio.sleep(0.5)
        undrawn = {"reason": "-", "steps": ["a step"]}
        return {"ident": ident, "trace": shown, "digest": "d", "undrawn": undrawn}

    app.state.traces.page = page
    with served(app) as port:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as client:
            client.sendall(
                f"GET /t/{ident} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode()
            )
            answer = b""
            while chunk := client.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 200") and b"a step" in answer


def test_a_post_without_a_body_is_answered(tmp_path):
    """A bodiless request is listened to at once; the app still reads its empty body."""
    app = create_app(Settings(store=StoreSettings(path=tmp_path / "traces.db"), session_secret="s"))
    with served(app) as port, socket.create_connection(("127.0.0.1", port), timeout=5) as client:
        request = "POST /api/traces HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
        client.sendall(request.encode())
        answer = b""
        while chunk := client.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 422")
