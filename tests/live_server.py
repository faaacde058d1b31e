"""A real server for the tests that need one: a free loopback port, and waiting for /healthz.

The browser, durability, HTTP-hygiene and `gradtrace serve` tests each start a server in a
process of its own (uvicorn, `gradtrace serve`, or a script), each its own way; what they share
is here.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
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


class ProcessGroupServer:
    """A server `command` in a process group of its own, logging to `log`, so that a test can
    SIGKILL all of it at once and then check that none of its children outlived it (the
    sandbox's zygote runs in a session of its own: it must notice and leave by itself)."""

    EXIT_TIMEOUT = 15.0  # seconds for the zygote and its children to follow a killed server

    def __init__(self, command: list[str], port: int, log: Path, env: dict[str, str]) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.log = log.open("ab")
        self.process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=dict(os.environ, **env),
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
            raise RuntimeError(f"{error}; see {self.log.name}") from None
        self.children = descendants(self.process.pid)  # the zygote, warm by now

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
        deadline = time.monotonic() + self.EXIT_TIMEOUT
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


def descendants(pid: int) -> dict[int, int]:
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


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent pid, start time) of a process, or None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # the name, in parentheses, may hold spaces
    return fields[0], int(fields[1]), int(fields[19])


def _alive(processes: dict[int, int]) -> list[int]:
    """Those of `processes` still running (a zombie has already ended)."""
    alive = []
    for pid, started in processes.items():
        stat = _stat(pid)
        if stat is not None and stat[2] == started and stat[0] not in ("Z", "X"):
            alive.append(pid)
    return alive
