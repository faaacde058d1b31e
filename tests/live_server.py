"""A real server for the tests that need one: a free loopback port, and waiting for /healthz.

The browser, durability, HTTP-hygiene and `gradtrace serve` tests each start a server in a
process of its own (uvicorn, `gradtrace serve`, or a script), each its own way; what they share
is here.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx

START_TIMEOUT = 60.0  # seconds: a server warms its sandbox and render workers before it answers


@contextlib.contextmanager
def serving(command: list[str], port: int, **popen) -> Iterator[tuple[subprocess.Popen, str]]:
    """Run `command` (a server on `port`) until the block ends; yields it and its URL. If it
    never gets healthy, it is killed and the error carries what it wrote to stderr."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **popen)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(url, process)
    except RuntimeError as error:
        process.kill()
        raise RuntimeError(f"{error}: {process.stderr.read().decode()}") from None
    try:
        yield process, url
    finally:
        process.terminate()
        process.wait(timeout=10)


def uvicorn_command(port: int) -> list[str]:
    """The app as `uvicorn` serves it on a loopback port (a factory: importing opens nothing)."""
    return [sys.executable, "-m", "uvicorn", "--factory", "app.main:create_app",
            "--host", "127.0.0.1", "--port", str(port)]  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_healthy(url: str, process: subprocess.Popen, timeout: float = START_TIMEOUT) -> None:
    """Return once `url`/healthz answers 200; raise RuntimeError if the process ends first or
    `timeout` passes (the caller kills it and says where its log is)."""
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{url}/healthz", timeout=5).status_code == 200:
                return
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with status {process.returncode}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"the server did not answer /healthz within {timeout:g} s")
        time.sleep(0.1)
